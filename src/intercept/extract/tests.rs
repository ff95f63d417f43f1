use super::*;
use serde_json::json;

fn rung(text: &str) -> Option<&'static str> {
    find_in_text(text).map(|f| f.rung())
}

fn rows(text: &str) -> Vec<Map<String, Value>> {
    match find_in_text(text) {
        Some(Found::Records(r)) => r.records,
        _ => Vec::new(),
    }
}

#[test]
fn json_rows_at_depth_0_1_2_with_context() {
    let f = find_in_text(
        r#"{"total": 2, "next_cursor": null, "data": {"page": 1, "items": [{"a": 1}, {"a": 2}]}}"#,
    )
    .unwrap();
    assert_eq!(f.rows(), 2);
    assert_eq!(f.context()["total"], 2);
    assert_eq!(f.context()["data.page"], 1);
    assert!(f.context().contains_key("next_cursor"));
    // Two row arrays side by side are ambiguous.
    assert!(find_in_text(r#"{"users": [{"a": 1}], "orders": [{"b": 2}]}"#).is_none());
    // Every element is checked, not only the first.
    assert!(find_in_text(r#"[{"a": 1}, 2, {"a": 3}]"#).is_none());
}

#[test]
fn fenced_json_only_when_it_is_most_of_the_text() {
    let body = (0..20)
        .map(|i| format!("{{\"i\": {i}}}"))
        .collect::<Vec<_>>()
        .join(",");
    assert_eq!(
        rung(&format!("Here:\n```json\n[{body}]\n```\n")),
        Some("json_fenced")
    );
    let prose =
        "This paragraph explains at length what the data means and why it matters. ".repeat(10);
    assert_eq!(
        rung(&format!(
            "{prose}\n```json\n[{{\"i\":1}},{{\"i\":2}}]\n```\n"
        )),
        None
    );
}

#[test]
fn structured_content_and_blocks() {
    let s = json!({ "rows": [{ "x": 1 }, { "x": 2 }], "count": 2 });
    let f = find_rows(Some(&s), &["ignored"]).unwrap();
    assert_eq!(f.rung(), "structuredContent");
    assert_eq!(f.context()["count"], 2);
    let f = find_rows(None, &[r#"{"a":1}"#, r#"{"a":2,"b":3}"#]).unwrap();
    assert_eq!(f.rung(), "json_blocks");
    assert!(find_rows(None, &[r#"{"a":1}"#, "not json"]).is_none());
}

#[test]
fn ndjson_every_line() {
    assert_eq!(rung("{\"a\":1}\n{\"a\":2}\n\n{\"a\":3}\n"), Some("ndjson"));
    assert_eq!(rung("{\"a\":1}\n{\"a\":2}\noops\n"), None);
}

#[test]
fn csv_with_quotes_is_parsed_not_refused() {
    let text = "id,name,note\n1,\"Smith, Jane\",\"said \"\"hi\"\"\"\n2,Bob,\"multi\nline\"\n";
    let r = rows(text);
    assert_eq!(r.len(), 2);
    assert_eq!(r[0]["name"], "Smith, Jane");
    assert_eq!(r[0]["note"], "said \"hi\"");
    assert_eq!(r[1]["note"], "multi\nline");
    assert_eq!(rung("a\tb\n1\t2\n3\t4\n"), Some("tsv"));
    // Ragged rows are not a table.
    assert_eq!(rung("a,b\n1,2\n3\n"), None);
    // Prose with commas is not CSV.
    assert_eq!(
        rung("Well, this is prose.\nIt has commas, here and there.\nAnd more, again.\n"),
        None
    );
}

#[test]
fn markdown_tables_but_not_a_stray_pipe() {
    let t = "Results:\n\n| name | size |\n|------|-----:|\n| a.txt | 10 |\n| b \\| c | 20 |\n";
    let r = rows(t);
    assert_eq!(r.len(), 2);
    assert_eq!(r[1]["name"], "b | c");
    assert_eq!(
        rung("Use a | b to pipe output.\nThen read the result.\nAnd | again.\n"),
        None
    );
    // No delimiter row: not a table.
    assert_eq!(rung("| a | b |\n| 1 | 2 |\n| 3 | 4 |\n"), None);
}

#[test]
fn gfm_tables_with_alignment_escapes_and_no_outer_pipes() {
    let body: String = (0..30)
        .map(|i| format!("| item {i} | {i}.5 | a \\| b |\n"))
        .collect();
    for delim in [
        "|:---|---:|:-:|",
        "| :-- | --: | :---: |",
        "|-|-|-|",
        "| --- | ---: | :- |",
    ] {
        let t = format!(
            "Top items this week\n\n| name | score | note |\n{delim}\n{body}\nShowing 30 of 120.\n"
        );
        let f = find_in_text(&t).unwrap_or_else(|| panic!("{delim}: parked"));
        assert_eq!(f.rung(), "markdown");
        assert_eq!(f.rows(), 30);
        assert_eq!(f.context()["text_before"], "Top items this week");
        assert_eq!(f.context()["text_after"], "Showing 30 of 120.");
        let r = rows(&t);
        assert_eq!(r[3]["name"], "item 3");
        assert_eq!(r[3]["note"], "a | b");
    }
    // No leading or trailing pipes, and a title line that has a pipe of its own.
    let bare: String = (0..10).map(|i| format!("{i} | n{i} \\| x\n")).collect();
    let t = format!("Report | March\nid | name\n:-- | --:\n{bare}");
    let r = rows(&t);
    assert_eq!(r.len(), 10, "{t}");
    assert_eq!(r[2]["id"], "2");
    assert_eq!(r[2]["name"], "n2 | x");
    // A row with a different number of cells is no table.
    assert_eq!(
        rung("| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 | 5 |\n"),
        None
    );
    // Not a delimiter row: colons alone, or other characters.
    assert_eq!(rung("| a | b |\n|:|:|\n| 1 | 2 |\n| 3 | 4 |\n"), None);
    assert_eq!(rung("| a | b |\n|-x-|---|\n| 1 | 2 |\n| 3 | 4 |\n"), None);
    // A table lost in prose is not a table.
    let prose = "This paragraph explains the numbers below at length. ".repeat(20);
    assert_eq!(
        rung(&format!(
            "{prose}\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n"
        )),
        None
    );
}

#[test]
fn record_blocks_with_several_pairs_on_a_line() {
    let hits: String = (1..=12)
        .map(|i| format!("{i}. Title: Story number {i} | with a pipe\n   Points: {} | Comments: {}\n   URL: https://example.com/{i}\n", i * 10, i * 3))
        .collect();
    let f = find_in_text(&hits).expect("records");
    assert_eq!(f.rung(), "records");
    let r = rows(&hits);
    assert_eq!(r.len(), 12);
    assert_eq!(r[1]["Points"], "20");
    assert_eq!(r[1]["Comments"], "6");
    // `| with a pipe` is no pair, so the title keeps its separator.
    assert_eq!(r[1]["Title"], "Story number 2 | with a pipe");
    assert_eq!(r[1]["URL"], "https://example.com/2");
    let blank = "Name: web · Port: 80\nStatus: up\n\nName: db · Port: 5432\nStatus: down\n";
    assert_eq!(rows(blank)[1]["Port"], "5432");
    // Blocks that disagree (one reads as two pairs, another as one) pass through.
    let disagree = "Name: a | Port: 1\nStatus: up\n\nName: b | port one\nStatus: up\n";
    assert_eq!(rung(disagree), None);
    let disagree = "Name: a | Port: 1\n\nName: b | Owner: me\n";
    assert_eq!(rung(disagree), None);
}

#[test]
fn record_blocks() {
    let t = "Name: web\nStatus: running\n\nName: db\nStatus: stopped\n";
    assert_eq!(rows(t).len(), 2);
    let n = "1. Name: web\n   Port: 80\n2. Name: db\n   Port: 5432\n";
    assert_eq!(rung(n), Some("records"));
    // A numbered list that skips numbers is not records.
    assert_eq!(
        rung("1. Name: web\n   Port: 80\n3. Name: db\n   Port: 5432\n"),
        None
    );
    // Key sets must agree.
    assert_eq!(
        rung("Name: web\nStatus: running\n\nName: db\nOwner: me\n"),
        None
    );
}

#[test]
fn fixed_width_and_tags() {
    let docker = "CONTAINER ID   IMAGE          STATUS         PORTS     NAMES\n\
                  f2a1b3c4d5e6   nginx:1.27     Up 2 hours     80/tcp    web\n\
                  0a9b8c7d6e5f   postgres:16    Up 3 hours               db\n";
    let r = rows(docker);
    assert_eq!(r.len(), 2, "{docker:?}");
    assert_eq!(r[0]["CONTAINER ID"], "f2a1b3c4d5e6");
    assert_eq!(r[0]["STATUS"], "Up 2 hours");
    assert_eq!(r[1]["PORTS"], "");
    assert_eq!(r[1]["NAMES"], "db");
    let ps = "    PID TTY          TIME CMD\n   4242 pts/0    00:00:01 bash\n   4301 pts/0    00:00:00 ps -ef --forest\n";
    let r = rows(ps);
    assert_eq!(r.len(), 2);
    assert_eq!(r[1]["PID"], "4301");
    assert_eq!(r[1]["CMD"], "ps -ef --forest");
    let listing = "[DIR] src\n[FILE] Cargo.toml\n[FILE] README.md\n";
    let r = rows(listing);
    assert_eq!(r[1]["type"], "FILE");
    assert_eq!(r[1]["name"], "Cargo.toml");
    assert_eq!(rung("[DIR] src\nsomething else\n"), None);
}

#[test]
fn plain_prose_and_logs_are_not_tables() {
    let log = "2025-01-01T00:00:00Z INFO [api] GET /v1/orders 200 3ms\n2025-01-01T00:00:01Z WARN [db] slow query\n2025-01-01T00:00:02Z INFO [api] GET /v1/users 200 5ms\n";
    assert_eq!(rung(log), None);
    assert_eq!(
        rung("Just a sentence.\nAnother one here.\nAnd a third.\n"),
        None
    );
}
