//! Memories through the real `loom serve`: versions, optimistic concurrency, search, history,
//! the primer (initialize instructions, `loom://primer`, the `loom` prompt), and two loom
//! processes writing to one project's memories at once without losing a write.

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
    let r = c.call("loom_memory_set", json!({ "key": "db-rules", "content": "never touch the prod schema; staging is fine", "pinned": true, "if_version": 1 })).await;
    assert_eq!(st(&r)["version"], 2);
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
    assert!(
        primer["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("db-rules")
    );
    let prompt = c2.request("prompts/get", json!({ "name": "loom" })).await;
    assert!(
        prompt["result"]["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("never touch")
    );
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
    let shared = tempfile::tempdir().unwrap();
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
    assert_eq!(
        versions,
        (1..=n).collect::<Vec<_>>(),
        "every write kept, numbered without gaps or repeats"
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
