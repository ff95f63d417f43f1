use super::*;
use crate::config::Config;
use serde_json::json;

fn config(text: &str) -> Config {
    Config::parse(text, std::path::Path::new("/tmp"), "t.toml").expect("config")
}

fn served(server: &str, names: &[&str]) -> Vec<ServedTool> {
    names
        .iter()
        .map(|n| ServedTool {
            server: server.into(),
            original: (*n).into(),
            tool: json!({
                "name": format!("{server}_{n}"),
                "title": format!("The {n} tool"),
                "description": format!("Does {n}.\n\nLong details about {n} that nobody needs to call it."),
                "inputSchema": { "type": "object", "description": "args",
                    "properties": { "path": { "type": "string", "description": "where", "default": "." },
                        "mode": { "type": "string", "enum": ["a", "b"], "title": "Mode" },
                        "items": { "type": "array", "items": { "type": "object",
                            "properties": { "description": { "type": "string", "description": "a property named description stays" } } } } },
                    "required": ["path"] },
                "annotations": { "readOnlyHint": true },
                "execution": { "taskSupport": "optional" },
            }),
        })
        .collect()
}

const TWO: &str = "[[servers]]\nname = \"fs\"\ncommand = \"x\"\npin = [\"read\"]\n[[servers]]\nname = \"db\"\ncommand = \"x\"\n";

fn placed(text: &str, connection: Option<ListingMode>, state: &ListingState) -> Vec<Placed> {
    let c = config(text);
    let inputs = Inputs {
        config: &c,
        connection,
        state,
    };
    let mut tools = served("fs", &["read", "write"]);
    tools.extend(served("db", &["query", "drop"]));
    place(&inputs, tools)
}

fn listed_names(p: &[Placed]) -> Vec<&str> {
    p.iter()
        .filter(|p| p.listed.is_listed())
        .map(|p| p.exposed.as_str())
        .collect()
}

#[test]
fn compact_keeps_what_a_call_needs_and_drops_the_prose() {
    let t = &served("fs", &["read"])[0].tool;
    let c = compact(t);
    assert_eq!(c["name"], "fs_read");
    assert_eq!(c["description"], "Does read.");
    let schema = &c["inputSchema"];
    assert_eq!(schema["required"], json!(["path"]));
    assert_eq!(
        schema["properties"]["path"],
        json!({ "type": "string", "default": "." })
    );
    assert_eq!(
        schema["properties"]["mode"],
        json!({ "type": "string", "enum": ["a", "b"] })
    );
    assert!(schema.get("description").is_none());
    let nested = &schema["properties"]["items"]["items"]["properties"];
    assert_eq!(
        nested["description"],
        json!({ "type": "string" }),
        "{nested}"
    );
    for gone in ["title", "annotations", "execution"] {
        assert!(c.get(gone).is_none(), "{gone}");
    }
    let mut task = t.clone();
    task["execution"] = json!({ "taskSupport": "required" });
    assert_eq!(compact(&task)["execution"]["taskSupport"], "required");
    assert_eq!(first_paragraph("one\r\n\r\ntwo"), "one");
}

#[test]
fn full_lists_everything_and_no_finder() {
    let state = ListingState::default();
    let p = placed(TWO, None, &state);
    let names = listed_names(&p);
    assert!(names.contains(&"db_drop") && names.contains(&"loom_list_datasets"));
    assert!(!names.contains(&"loom_find_tools") && !names.contains(&"loom_call"));
    assert_eq!(
        p.iter().find(|p| p.exposed == "fs_read").unwrap().listed,
        Listed::Pinned
    );
}

#[test]
fn search_lists_pins_promotions_core_and_the_finder() {
    let state = ListingState::default();
    let text = format!("listing = \"search\"\n{TWO}");
    let p = placed(&text, None, &state);
    let names = listed_names(&p);
    assert_eq!(
        names,
        vec![
            "fs_read",
            "loom_query",
            "loom_describe",
            "loom_fetch",
            "loom_memory_set",
            "loom_memory_search",
            "loom_find_tools",
            "loom_call"
        ]
    );
    // Hidden tools keep their whole definition for the finder and for loom_call.
    let hidden = p.iter().find(|p| p.exposed == "db_drop").unwrap();
    assert_eq!(hidden.listed, Listed::Hidden);
    assert!(hidden.full["annotations"].is_object());
    state.promote("db_drop");
    state.toggle_pin("loom_export");
    let p = placed(&text, None, &state);
    let find = |n: &str| p.iter().find(|p| p.exposed == n).unwrap().listed;
    assert_eq!(find("db_drop"), Listed::Promoted);
    assert_eq!(find("loom_export"), Listed::PinnedByPerson);
    assert_eq!(find("db_query"), Listed::Hidden);
}

#[test]
fn a_server_or_a_connection_chooses_its_own_mode() {
    let state = ListingState::default();
    let text = TWO.replace("name = \"db\"\n", "name = \"db\"\nlisting = \"search\"\n");
    let p = placed(&text, None, &state);
    let names = listed_names(&p);
    assert!(names.contains(&"fs_write") && !names.contains(&"db_query"));
    assert!(
        names.contains(&"loom_find_tools"),
        "something is hidden: the finder is listed"
    );
    // The connection's mode is over the config's, for every server.
    let p = placed(&text, Some(ListingMode::Full), &state);
    assert!(listed_names(&p).contains(&"db_query"));
    let p = placed(TWO, Some(ListingMode::Compact), &state);
    let fs_write = p.iter().find(|p| p.exposed == "fs_write").unwrap();
    assert_eq!(fs_write.listed, Listed::ByMode);
    assert!(fs_write.tool.get("annotations").is_none(), "listed compact");
    assert!(fs_write.full.get("annotations").is_some());
    // Compact lists loom's core only, so the finder is listed to reach the rest.
    let names = listed_names(&p);
    assert!(!names.contains(&"loom_drop") && names.contains(&"loom_find_tools"));
}

#[test]
fn a_long_description_keeps_whole_sentences() {
    let long = "Read the complete contents of a file from the file system. Handles various text encodings and provides detailed error messages if the file cannot be read. Use this tool when you need to examine one file.";
    assert_eq!(
        compact_description(long),
        "Read the complete contents of a file from the file system."
    );
    assert_eq!(compact_description("Short. Two."), "Short.");
    let one = "x".repeat(300);
    assert_eq!(compact_description(&one).chars().count(), 161);
    assert_eq!(
        compact_description("v1.2 is out and 3.5 too"),
        "v1.2 is out and 3.5 too"
    );
}
