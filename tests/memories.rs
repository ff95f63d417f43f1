//! Memories through the real `loom serve`: versions, optimistic concurrency, search, history,
//! the primer (initialize instructions, `loom://primer`, the `loom` prompt), two loom
//! processes writing to one project's memories at once without losing a write (also when the
//! file ends in a torn line), a damaged memory file read and its damage reported, and the
//! files loom keeps for a project created private.

mod common;

use common::*;
use serde_json::{Value, json};

fn config(dir: &std::path::Path) -> String {
    format!(
        "memory_file = {:?}\n[[servers]]\nname = \"sample\"\ncommand = \"loom\"\nargs = [\"sample-server\"]\n",
        dir.join("memories.jsonl").display().to_string()
    )
}

fn st(r: &Value) -> &Value {
    &r["result"]["structuredContent"]
}

#[tokio::test]
async fn memories_versions_search_and_the_primer() {
    let shared = tempfile::tempdir().unwrap();
    let cfg = TempConfig::new(&config(shared.path()));
    let mut c = RawClient::spawn(&cfg.path);
    let init = c.initialize().await;
    assert!(
        init["result"]["instructions"]
            .as_str()
            .unwrap()
            .contains("Nothing pinned yet"),
        "{init}"
    );
    c.tool_names().await;
    let r = c.call("loom_memory_set", json!({ "key": "db-rules", "content": "never touch the prod schema", "tags": ["rules"], "pinned": true })).await;
    assert_eq!(st(&r)["version"], 1, "{r}");
    // A write that does not mention the pin or the tags keeps them.
    let r = c.call("loom_memory_set", json!({ "key": "db-rules", "content": "never touch the prod schema; staging is fine", "if_version": 1 })).await;
    assert_eq!(st(&r)["version"], 2);
    assert_eq!(st(&r)["pinned"], true, "{r}");
    assert_eq!(st(&r)["tags"], json!(["rules"]), "{r}");
    let stale = c
        .call(
            "loom_memory_set",
            json!({ "key": "db-rules", "content": "oops", "if_version": 1 }),
        )
        .await;
    assert!(
        is_error_result(&stale) && text_of(&stale).contains("is at version 2"),
        "{stale}"
    );
    c.call(
        "loom_memory_set",
        json!({ "key": "lunch", "content": "tacos on friday" }),
    )
    .await;
    let found = c
        .call("loom_memory_search", json!({ "query": "prod schema" }))
        .await;
    assert_eq!(
        st(&found)["results"][0]["memory"]["key"],
        "db-rules",
        "{found}"
    );
    let old = c
        .call(
            "loom_memory_get",
            json!({ "key": "db-rules", "version": 1 }),
        )
        .await;
    assert_eq!(st(&old)["content"], "never touch the prod schema");
    let h = c
        .call("loom_memory_history", json!({ "key": "db-rules" }))
        .await;
    assert_eq!(st(&h)["versions"].as_array().unwrap().len(), 2);
    let d = c
        .call("loom_memory_delete", json!({ "key": "lunch" }))
        .await;
    assert!(!is_error_result(&d));
    let gone = c.call("loom_memory_get", json!({ "key": "lunch" })).await;
    assert!(is_error_result(&gone));
    let bad = c
        .call(
            "loom_memory_set",
            json!({ "key": "x", "content": "y", "pinned": "yes" }),
        )
        .await;
    assert!(
        is_error_result(&bad) && text_of(&bad).contains("`pinned` must be true or false"),
        "{bad}"
    );

    // A new session on the same project starts with the pinned note.
    let mut c2 = RawClient::spawn(&cfg.path);
    let init = c2.initialize().await;
    let instructions = init["result"]["instructions"].as_str().unwrap();
    assert!(
        instructions.contains("db-rules") && instructions.contains("staging is fine"),
        "{instructions}"
    );
    let primer = c2
        .request("resources/read", json!({ "uri": "loom://primer" }))
        .await;
    let primer = primer["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(primer.contains("db-rules"), "{primer}");
    let prompt = c2.request("prompts/get", json!({ "name": "loom" })).await;
    let prompt = prompt["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(prompt.contains("never touch"), "{prompt}");
    // Every tool is listed (full mode, the default) once the servers run: nothing points the
    // model at a finder it was not given.
    for text in [instructions, primer, prompt] {
        assert!(!text.contains("Not every tool is listed"), "{text}");
    }
    let resources = c2.request("resources/list", json!({})).await;
    assert!(
        resources["result"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["uri"] == "loom://primer")
    );
}

#[tokio::test]
async fn two_processes_write_at_once_without_loss() {
    two_processes_write_at_once(b"", 0).await;
}

/// A crash left half a record at the end of the file; two processes then write at once: the
/// torn line is ended once, every write is its own line, and no version is handed out twice.
#[tokio::test]
async fn two_processes_write_at_once_after_a_torn_tail() {
    two_processes_write_at_once(
        b"{\"key\":\"shared\",\"version\":1,\"content\":\"half a rec",
        1,
    )
    .await;
}

/// `skipped`: how many lines of `initial` are damaged (and stay skipped, and reported).
async fn two_processes_write_at_once(initial: &[u8], skipped: u64) {
    let shared = tempfile::tempdir().unwrap();
    std::fs::write(shared.path().join("memories.jsonl"), initial).unwrap();
    let cfg = TempConfig::new(&config(shared.path()));
    let mut a = RawClient::spawn(&cfg.path);
    let mut b = RawClient::spawn(&cfg.path);
    a.initialize().await;
    b.initialize().await;
    a.tool_names().await;
    b.tool_names().await;
    // Fire requests from both without waiting, then collect the answers.
    let n = 40;
    for i in 0..n {
        for (c, who) in [(&mut a, "a"), (&mut b, "b")] {
            let id = 10_000 + i * 2 + u64::from(who == "b");
            let call = |key: String, content: String| {
                json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": "loom_memory_set", "arguments": { "key": key, "content": content } } }).to_string()
            };
            let line = if i % 2 == 0 {
                call(format!("{who}-{i}"), format!("note {i} from {who}"))
            } else {
                call("shared".into(), format!("{who} {i}"))
            };
            c.send_raw(&line).await;
        }
    }
    for i in 0..n {
        for (c, who) in [(&mut a, "a"), (&mut b, "b")] {
            let id = 10_000 + i * 2 + u64::from(who == "b");
            let l = c
                .wait_for(std::time::Duration::from_secs(30), |v| v["id"] == json!(id))
                .await;
            assert!(!l.contains("\"isError\":true"), "{l}");
        }
    }
    let h = a
        .call("loom_memory_history", json!({ "key": "shared" }))
        .await;
    let versions: Vec<u64> = st(&h)["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_u64().unwrap())
        .collect();
    // A torn record that already showed version 1 keeps it: the writes start above it.
    let first = 1 + skipped;
    assert_eq!(
        versions,
        (first..first + n).collect::<Vec<_>>(),
        "every write kept, numbered without gaps or repeats"
    );
    assert_eq!(
        st(&h)["skipped_lines"].as_u64().unwrap_or(0),
        skipped,
        "{h}"
    );
    for i in (0..n).step_by(2) {
        for who in ["a", "b"] {
            let r = b
                .call("loom_memory_get", json!({ "key": format!("{who}-{i}") }))
                .await;
            assert_eq!(
                st(&r)["content"],
                json!(format!("note {i} from {who}")),
                "{r}"
            );
        }
    }
}

#[tokio::test]
async fn parked_results_outlive_the_session_on_the_same_project() {
    let shared = tempfile::tempdir().unwrap();
    let cfg = TempConfig::new(&config(shared.path()));
    let key = {
        let mut a = RawClient::spawn(&cfg.path);
        a.initialize().await;
        a.tool_names().await;
        let parked = a.call("sample_tail_logs", json!({ "lines": 3000 })).await;
        let key = st(&parked)["blob_key"].as_str().expect("parked").to_owned();
        a.close_stdin();
        assert!(a.wait_exit(std::time::Duration::from_secs(15)).await);
        key
    };
    let mut b = RawClient::spawn(&cfg.path);
    b.initialize().await;
    b.tool_names().await;
    let f = b
        .call("loom_fetch", json!({ "blob_key": key, "limit": 30 }))
        .await;
    assert_eq!(st(&f)["found"], true, "{f}");
    assert_eq!(st(&f)["total_lines"], 3000);
}

/// One invalid byte, a line of another program and a torn last line: every memory operation
/// still works, the pinned note still reaches the primer, and every answer says how many lines
/// were skipped.
#[tokio::test]
async fn a_damaged_memory_file_is_read_and_its_damage_reported() {
    let shared = tempfile::tempdir().unwrap();
    let mut file = Vec::new();
    file.extend_from_slice(
        br#"{"key":"db-rules","version":1,"content":"never touch prod","tags":[],"pinned":true,"author":"human","at":"2026-11-30T00:00:00Z"}"#,
    );
    file.push(b'\n');
    file.extend_from_slice(br#"{"key":"lunch","version":1,"content":"tacos "#);
    file.extend_from_slice(&[0xff, 0xfe]);
    file.extend_from_slice(
        br#"","tags":[],"pinned":false,"author":"human","at":"2026-11-30T00:00:00Z"}"#,
    );
    file.push(b'\n');
    file.extend_from_slice(br#"{"schema":"someone-else","rows":[1,2,3]}"#);
    file.push(b'\n');
    file.extend_from_slice(br#"{"key":"db-rules","version":2,"content":"never to"#);
    std::fs::write(shared.path().join("memories.jsonl"), &file).unwrap();
    let cfg = TempConfig::new(&config(shared.path()));
    let mut c = RawClient::spawn(&cfg.path);
    let init = c.initialize().await;
    let instructions = init["result"]["instructions"].as_str().unwrap();
    assert!(
        instructions.contains("never touch prod") && !instructions.contains("Nothing pinned yet"),
        "{instructions}"
    );
    c.tool_names().await;
    let got = c
        .call("loom_memory_get", json!({ "key": "db-rules" }))
        .await;
    assert!(!is_error_result(&got), "{got}");
    assert_eq!(st(&got)["content"], "never touch prod");
    assert_eq!(st(&got)["skipped_lines"], 3, "{got}");
    let text = got["result"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        text.contains("3 damaged lines")
            && text.contains("line 2: invalid UTF-8")
            && text.contains("line 3: not a memory record")
            && text.contains("line 4: torn last line"),
        "{text}"
    );
    // The torn line showed version 2; the next write is 3 and stands on its own line.
    let set = c
        .call(
            "loom_memory_set",
            json!({ "key": "db-rules", "content": "never touch prod; staging is fine", "pinned": true }),
        )
        .await;
    assert_eq!(st(&set)["version"], 3, "{set}");
    let h = c
        .call("loom_memory_history", json!({ "key": "db-rules" }))
        .await;
    let versions: Vec<u64> = st(&h)["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_u64().unwrap())
        .collect();
    assert_eq!(versions, vec![1, 3], "{h}");
    // The lunch note's version 1 is taken by its damaged line: a new one gets 2.
    let lunch = c
        .call(
            "loom_memory_set",
            json!({ "key": "lunch", "content": "tacos on friday" }),
        )
        .await;
    assert_eq!(st(&lunch)["version"], 2, "{lunch}");
    let missing = c.call("loom_memory_get", json!({ "key": "nope" })).await;
    assert!(
        is_error_result(&missing) && text_of(&missing).contains("3 damaged lines"),
        "{missing}"
    );
    let search = c
        .call("loom_memory_search", json!({ "query": "prod" }))
        .await;
    assert_eq!(st(&search)["skipped_lines"], 3, "{search}");
    assert_eq!(st(&search)["results"][0]["memory"]["key"], "db-rules");
}

/// Memories, parked texts and the log are the user's alone, from the moment they exist.
#[tokio::test]
async fn project_files_and_the_log_are_created_private() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    // Folders loom must create itself (a fresh project), under a world-readable parent.
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let project = root.path().join("data/project");
    let cfg = TempConfig::new(&format!(
        "memory_file = {:?}\nlog_file = {:?}\n[[servers]]\nname = \"sample\"\ncommand = \"loom\"\nargs = [\"sample-server\"]\n",
        project.join("memories.jsonl").display().to_string(),
        root.path().join("loom.log").display().to_string(),
    ));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    let r = c
        .call("loom_memory_set", json!({ "key": "k", "content": "v" }))
        .await;
    assert!(!is_error_result(&r), "{r}");
    let parked = c.call("sample_tail_logs", json!({ "lines": 3000 })).await;
    let key = st(&parked)["blob_key"].as_str().expect("parked").to_owned();
    let name = key.trim_start_matches("blob/");
    let mode = |p: &std::path::Path| {
        std::fs::metadata(p)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(&root.path().join("data")), 0o700);
    assert_eq!(mode(&project), 0o700);
    assert_eq!(mode(&project.join("memories.jsonl")), 0o600);
    assert_eq!(mode(&project.join("blobs")), 0o700);
    assert_eq!(mode(&project.join(format!("blobs/{name}.txt"))), 0o600);
    assert_eq!(mode(&project.join(format!("blobs/{name}.json"))), 0o600);
    assert_eq!(mode(&root.path().join("loom.log")), 0o600);
    let leftovers: Vec<_> = std::fs::read_dir(project.join("blobs"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
