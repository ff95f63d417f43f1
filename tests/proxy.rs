//! The proxy core against the project's own misbehaving test server and the built-in sample
//! server, driven through the real `loom serve` binary over stdio.

mod common;

use common::*;
use serde_json::{Value, json};
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

fn sample_entry() -> String {
    "[[servers]]\nname = \"sample\"\ncommand = \"loom\"\nargs = [\"sample-server\"]\n".to_owned()
}

#[tokio::test]
async fn sample_server_is_listed_and_small_results_pass() {
    let cfg = TempConfig::new(&sample_entry());
    let mut c = RawClient::spawn(&cfg.path);
    let init = c.initialize().await;
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    let names = c.tool_names().await;
    for t in [
        "sample_get_weather",
        "sample_list_orders",
        "sample_list_customers",
        "sample_tail_logs",
        "sample_cancel_order",
        "sample_slow_count",
    ] {
        assert!(names.contains(&t.to_owned()), "{t} missing from {names:?}");
    }
    let r = c
        .call("sample_get_weather", json!({ "city": "Porto" }))
        .await;
    assert!(text_of(&r).starts_with("Porto: "), "{r}");
    let prompts = c.request("prompts/list", json!({})).await;
    assert_eq!(
        prompts["result"]["prompts"][0]["name"],
        "sample_triage_orders"
    );
    let p = c
        .request(
            "prompts/get",
            json!({ "name": "sample_triage_orders", "arguments": { "status": "paid" } }),
        )
        .await;
    assert!(
        p["result"]["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("status=paid")
    );
    let res = c
        .request("resources/read", json!({ "uri": "sample://docs/readme" }))
        .await;
    assert!(
        res["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("# Sample server")
    );
    // A URI that only a template covers routes by the template's prefix.
    let res = c
        .request("resources/read", json!({ "uri": "sample://orders/42" }))
        .await;
    assert!(
        res["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("\"42\""),
        "{res}"
    );
    let missing = c
        .request("resources/read", json!({ "uri": "nowhere://x" }))
        .await;
    assert_eq!(missing["error"]["code"], -32002);
}

#[tokio::test]
async fn results_pass_through_byte_identical() {
    let cfg = TempConfig::new(&testserver_entry("t", &[]));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    let id = c.next_request_id();
    let line = c
        .request_raw("tools/call", json!({ "name": "t_raw", "arguments": {} }), T)
        .await;
    let expected_result = r#"{"content":[{"type":"text","text":"caf\u00e9 \"exact\"","vendorField":1}],"structuredContent":{"z":1,  "a":[1.0,2e3]},"isError":false,"extra":{"k":null}}"#;
    assert_eq!(
        line,
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{expected_result}}}"#)
    );
}

#[tokio::test]
async fn a_tool_that_requires_tasks_is_left_out_rather_than_listed_and_uncallable() {
    let cfg = TempConfig::new(&testserver_entry("t", &["--task-tool"]));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    let r = c.request("tools/list", json!({})).await;
    let names: Vec<&str> = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"t_echo"), "{names:?}");
    assert!(!names.contains(&"t_task_only"), "{names:?}");
    let r = c
        .request(
            "tools/call",
            json!({ "name": "t_task_only", "arguments": {} }),
        )
        .await;
    let text = r.to_string();
    assert!(text.contains("t_task_only"), "{text}");
    assert!(
        r.get("error").is_some() || r["result"]["isError"] == true,
        "{r}"
    );
}

#[tokio::test]
async fn tool_definitions_keep_everything_but_output_schema() {
    let cfg = TempConfig::new(&testserver_entry("t", &[]));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    let r = c.request("tools/list", json!({})).await;
    let raw = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "t_raw")
        .cloned()
        .unwrap();
    assert!(raw.get("outputSchema").is_none(), "{raw}");
    assert_eq!(raw["execution"], json!({ "taskSupport": "optional" }));
    assert_eq!(raw["vendorExtra"], json!({ "z": 1, "a": 2 }));
    assert_eq!(raw["annotations"]["readOnlyHint"], true);
    // Key order as the server sent it.
    let text = serde_json::to_string(&raw).unwrap();
    assert!(
        text.find("\"z\"").unwrap() < text.find("\"a\"").unwrap(),
        "{text}"
    );
}

#[tokio::test]
async fn long_clashing_and_non_ascii_names() {
    let toml = format!(
        "{}{}",
        testserver_entry("a", &["--names", "--tools", "0"]),
        testserver_entry("a_b", &["--tools", "0"])
    );
    let cfg = TempConfig::new(&toml);
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    let names = c.tool_names().await;
    let unique: std::collections::HashSet<_> = names.iter().collect();
    assert_eq!(
        unique.len(),
        names.len(),
        "duplicate exposed names: {names:?}"
    );
    for n in &names {
        assert!(
            n.len() <= 64
                && n.chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-'),
            "bad name {n}"
        );
    }
    // Each exposed name routes to its own original, never by splitting on `_`.
    let check = async |c: &mut RawClient, exposed: &str, original: &str| {
        let r = c.call(exposed, json!({})).await;
        let v: Value =
            serde_json::from_str(&text_of(&r)).unwrap_or_else(|_| panic!("{exposed}: {r}"));
        assert_eq!(v["tool"], original, "{exposed}");
    };
    check(&mut c, "a_a_b", "a.b").await;
    check(&mut c, "a_a_b_2", "a_b").await;
    check(&mut c, "a_gr__e_pr_fen", "größe.prüfen").await;
    check(&mut c, "a___", "天気").await;
    // The clash between server `a` tool `b_echo`-style names and server `a_b`'s `echo`.
    let long: Vec<_> = names.iter().filter(|n| n.len() == 64).cloned().collect();
    assert_eq!(long.len(), 2, "{names:?}");
    let mut originals = Vec::new();
    for n in &long {
        let r = c.call(n, json!({})).await;
        let v: Value = serde_json::from_str(&text_of(&r)).unwrap();
        originals.push(v["tool"].as_str().unwrap().to_owned());
    }
    originals.sort();
    assert_eq!(
        originals,
        vec!["x".repeat(100), format!("{}y", "x".repeat(99))]
    );
    assert!(names.contains(&"a_b_echo".to_owned()));
    check(&mut c, "a_b_echo", "echo").await;
}

#[tokio::test]
async fn every_page_is_followed() {
    let cfg = TempConfig::new(&testserver_entry(
        "p",
        &["--tools", "25", "--page-size", "4"],
    ));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    let names = c.tool_names().await;
    assert_eq!(names.len(), 8 + 25, "{names:?}");
    assert!(names.contains(&"p_tool_024".to_owned()));
    let prompts = c.request("prompts/list", json!({})).await;
    // Five from the server, plus loom's own primer prompt and resource.
    assert_eq!(prompts["result"]["prompts"].as_array().unwrap().len(), 6);
    let resources = c.request("resources/list", json!({})).await;
    assert_eq!(
        resources["result"]["resources"].as_array().unwrap().len(),
        6
    );
    let r = c
        .request("resources/read", json!({ "uri": "test://r/04" }))
        .await;
    assert_eq!(r["result"]["contents"][0]["text"], "content of test://r/04");
}

#[tokio::test]
async fn list_changed_refreshes_that_server() {
    let cfg = TempConfig::new(&testserver_entry("t", &["--tools", "0"]));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    let before = c.tool_names().await;
    let r = c.call("t_add_tool", json!({})).await;
    assert_eq!(text_of(&r), "added");
    c.wait_for(T, |v| v["method"] == "notifications/tools/list_changed")
        .await;
    // The notification may be one from the server coming up: wait for the list itself.
    let after = wait_until("the added tool in tools/list", async || {
        let names = c.tool_names().await;
        names
            .iter()
            .any(|n| n.starts_with("t_added_"))
            .then_some(names)
    })
    .await;
    assert_eq!(after.len(), before.len() + 1, "{before:?} then {after:?}");
}

#[tokio::test]
async fn hanging_server_delays_neither_initialize_nor_others() {
    // The stuck server would hold a waiting loom for ten minutes, longer than any request of
    // this test may take: an answer at all shows that nothing waited for it.
    let hang = |grace: f64| {
        TempConfig::new(&format!(
            "startup_grace = {grace}\n{}handshake_timeout = 600\n{}",
            testserver_entry("stuck", &["--hang"]),
            sample_entry()
        ))
    };
    // initialize waits neither for the servers nor for startup_grace.
    let cfg = hang(600.0);
    let mut c = RawClient::spawn(&cfg.path);
    let init = c.initialize().await;
    assert!(init["result"]["protocolVersion"].is_string(), "{init}");
    // Others: past startup_grace, tools/list and calls go on without the stuck server.
    let cfg = hang(1.5);
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    let names = c.tool_names().await;
    assert!(names.iter().any(|n| n == "sample_get_weather"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("stuck")), "{names:?}");
    let r = c
        .call("sample_get_weather", json!({ "city": "Oslo" }))
        .await;
    assert!(text_of(&r).starts_with("Oslo"));
}

#[tokio::test]
async fn in_flight_call_on_a_dying_server_gets_an_error_result_then_restart() {
    let toml = format!("{}restart_backoff = 1.5\n", testserver_entry("t", &[]));
    let cfg = TempConfig::new(&toml);
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    let r = c.call("t_crash", json!({})).await;
    assert!(is_error_result(&r), "{r}");
    assert!(
        text_of(&r).contains("server `t`") && text_of(&r).contains("exited with code 9"),
        "{r}"
    );
    // While it restarts, its tools stay listed and a call names the server and the reason.
    let names = c.tool_names().await;
    assert!(names.contains(&"t_echo".to_owned()));
    let r = c.call("t_echo", json!({})).await;
    assert!(is_error_result(&r), "{r}");
    assert!(text_of(&r).contains("restarting"), "{r}");
    // After the backoff it is back.
    wait_until("the restarted server to answer t_echo", async || {
        let r = c.call("t_echo", json!({ "x": 1 })).await;
        (!is_error_result(&r)).then_some(())
    })
    .await;
}

#[tokio::test]
async fn crash_loop_ends_in_delisting() {
    let toml = format!(
        "{}max_restarts = 1\nrestart_backoff = 0.05\n",
        testserver_entry("t", &[])
    );
    let cfg = TempConfig::new(&toml);
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    assert!(!c.tool_names().await.is_empty());
    // Restarted once (within budget); crashed again to exceed the budget.
    crash_twice(&mut c).await;
    c.wait_for(T, |v| v["method"] == "notifications/tools/list_changed")
        .await;
    wait_until(
        "the delisted server's tools to leave tools/list",
        async || c.tool_names().await.is_empty().then_some(()),
    )
    .await;
    let r = c.call("t_echo", json!({})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[tokio::test]
async fn flaky_start_is_retried() {
    let dir = tempfile::tempdir().unwrap();
    let counter = dir.path().join("starts");
    let toml = format!(
        "{}restart_backoff = 0.05\n",
        testserver_entry("f", &["--flaky", counter.to_str().unwrap()])
    );
    let cfg = TempConfig::new(&toml);
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    // The first start fails, so the first list may be empty; the restart announces the tools.
    let mut names = c.tool_names().await;
    if names.is_empty() {
        c.wait_for(T, |v| v["method"] == "notifications/tools/list_changed")
            .await;
        names = c.tool_names().await;
    }
    assert!(names.contains(&"f_echo".to_owned()), "{names:?}");
    let r = c.call("f_echo", json!({})).await;
    assert!(!is_error_result(&r), "{r}");
    assert_eq!(std::fs::read_to_string(&counter).unwrap(), "2");
}

#[tokio::test]
async fn child_environment_is_default_deny() {
    let toml = format!(
        "{}env = {{ OWN_VAR = \"mine\" }}\nenv_passthrough = [\"PASS_ME\"]\n",
        testserver_entry("e", &[])
    );
    let cfg = TempConfig::new(&toml);
    let mut c = RawClient::spawn_with(
        &cfg.path,
        &[
            ("SUPER_SECRET_TOKEN", "hunter2"),
            ("PASS_ME", "yes"),
            ("LC_ALL", "C.UTF-8"),
        ],
    );
    c.initialize().await;
    c.tool_names().await;
    let r = c.call("e_env", json!({})).await;
    let env: Value = serde_json::from_str(&text_of(&r)).unwrap();
    assert_eq!(env["OWN_VAR"], "mine");
    assert_eq!(env["PASS_ME"], "yes");
    assert_eq!(env["LC_ALL"], "C.UTF-8");
    assert!(env.get("PATH").is_some());
    assert!(
        env.get("SUPER_SECRET_TOKEN").is_none(),
        "secret leaked: {env}"
    );
    assert!(!text_of(&r).contains("hunter2"));
}

async fn grandchild_setup() -> (TempConfig, RawClient, i32) {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("gc.pid");
    let cfg = TempConfig::new(&testserver_entry(
        "g",
        &["--grandchild", pidfile.to_str().unwrap()],
    ));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    assert!(eventually(T, || pidfile.exists()).await);
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(pid));
    std::mem::forget(dir);
    (cfg, c, pid)
}

#[tokio::test]
async fn no_orphan_after_sigkill() {
    let (_cfg, mut c, grandchild) = grandchild_setup().await;
    let loom_pid = c.child.id().unwrap() as i32;
    unsafe {
        libc::kill(loom_pid, libc::SIGKILL);
    }
    assert!(c.wait_exit(T).await);
    assert!(
        eventually(Duration::from_secs(10), || !alive(grandchild)).await,
        "grandchild {grandchild} outlived loom"
    );
}

#[tokio::test]
async fn stdin_eof_shuts_down_and_stops_children() {
    let (_cfg, mut c, grandchild) = grandchild_setup().await;
    c.close_stdin();
    assert!(
        c.wait_exit(Duration::from_secs(15)).await,
        "loom did not exit on stdin EOF"
    );
    assert!(eventually(Duration::from_secs(10), || !alive(grandchild)).await);
}

#[tokio::test]
async fn sigterm_shuts_down() {
    let (_cfg, mut c, grandchild) = grandchild_setup().await;
    unsafe {
        libc::kill(c.child.id().unwrap() as i32, libc::SIGTERM);
    }
    assert!(c.wait_exit(Duration::from_secs(15)).await);
    assert!(eventually(Duration::from_secs(10), || !alive(grandchild)).await);
}

#[tokio::test]
async fn malformed_client_input_gets_errors_and_loom_keeps_serving() {
    let cfg = TempConfig::new(&format!("max_message_bytes = 2048\n{}", sample_entry()));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.send_raw("this is not json").await;
    let l = c.wait_for(T, |v| v["error"]["code"] == -32700).await;
    assert!(l.contains("\"id\":null"));
    c.send_raw(r#"{"jsonrpc":"2.0","id":77}"#).await;
    c.wait_for(T, |v| v["id"] == 77 && v["error"]["code"] == -32600)
        .await;
    c.send_raw(r#"{"jsonrpc":"1.0","id":78,"method":"ping"}"#)
        .await;
    c.wait_for(T, |v| v["id"] == 78 && v["error"]["code"] == -32600)
        .await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":79,"method":"tools/call","params":{{"name":"x","arguments":{{"s":"{}"}}}}}}"#,
        "a".repeat(5000)
    );
    c.send_raw(&big).await;
    let l = c.wait_for(T, |v| v["id"] == 79).await;
    assert!(
        l.contains("-32600") && l.contains("max_message_bytes"),
        "{l}"
    );
    let r = c.request("no/such/method", json!({})).await;
    assert_eq!(r["error"]["code"], -32601);
    let r = c
        .request("tools/call", json!({ "name": "nope_nope" }))
        .await;
    assert_eq!(r["error"]["code"], -32602);
    let r = c
        .request("logging/setLevel", json!({ "level": "loud" }))
        .await;
    assert_eq!(r["error"]["code"], -32602);
    let r = c
        .request("logging/setLevel", json!({ "level": "info" }))
        .await;
    assert_eq!(r["result"], json!({}));
    let r = c.request("ping", json!({})).await;
    assert_eq!(r["result"], json!({}));
}

#[tokio::test]
async fn call_timeout_gives_an_error_result() {
    let toml = format!("{}call_timeout = 0.5\n", testserver_entry("s", &[]));
    let cfg = TempConfig::new(&toml);
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    let r = c.call("s_slow", json!({ "seconds": 3 })).await;
    assert!(is_error_result(&r), "{r}");
    assert!(text_of(&r).contains("call_timeout"), "{r}");
}

#[tokio::test]
async fn garbage_on_stdout_and_stderr_lines_are_tolerated() {
    let cfg = TempConfig::new(&testserver_entry("g", &["--garbage", "--stderr"]));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    let r = c.call("g_echo", json!({ "hello": "world" })).await;
    assert!(text_of(&r).contains("world"), "{r}");
    // The child's stderr reaches the server's log that the workbench shows, every line.
    let entry = session_entry(&cfg).await;
    let eng = loom::frontend::socket::RemoteEngine::connect(&entry)
        .await
        .expect("attach");
    use loom::frontend::engine::Engine;
    let Ok(loom::types::engine::Reply::ServerLog { lines }) = eng
        .request(loom::types::engine::Request::ServerLog { server: "g".into() })
        .await
    else {
        panic!("log")
    };
    assert!(
        lines
            .iter()
            .any(|l| l.kind == loom::types::events::LogKind::Stderr
                && l.text.contains("testserver got tools/call")),
        "{lines:?}"
    );
    // Every line loom wrote to stdout is JSON-RPC; the child's stderr is not in loom's own
    // log at info (its chatter is debug there).
    c.close_stdin();
    assert!(c.wait_exit(T).await);
    while let Some(line) = c.next_line(Duration::from_millis(200)).await {
        let v: Value =
            serde_json::from_str(&line).unwrap_or_else(|_| panic!("non-JSON on stdout: {line}"));
        assert_eq!(v["jsonrpc"], "2.0");
    }
    let log = c.stderr.lock().unwrap().clone();
    assert!(
        !log.contains("testserver got tools/call") && log.contains("server state"),
        "{log}"
    );
}

#[tokio::test]
async fn modern_era_client() {
    let cfg = TempConfig::new(&sample_entry());
    let mut c = RawClient::spawn(&cfg.path);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "modern", "version": "1" }
    });
    let d = c.request("server/discover", json!({ "_meta": meta })).await;
    assert!(
        d["result"]["supportedVersions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v == "2026-07-28"),
        "{d}"
    );
    assert_eq!(d["result"]["resultType"], "complete");
    let l = c.request("tools/list", json!({ "_meta": meta })).await;
    assert!(l["result"]["tools"].as_array().unwrap().len() >= 6);
    assert_eq!(l["result"]["cacheScope"], "private");
    let r = c
        .request(
            "tools/call",
            json!({ "name": "sample_get_weather", "arguments": { "city": "Rome" }, "_meta": meta }),
        )
        .await;
    assert!(text_of(&r).starts_with("Rome"));
    // Results name loom as the server; removed methods and a _meta without the client's
    // capabilities are refused with the revision's codes.
    assert_eq!(
        r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "loom",
        "{r}"
    );
    assert_eq!(
        l["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "loom"
    );
    for removed in ["ping", "logging/setLevel", "resources/subscribe"] {
        let r = c
            .request(
                removed,
                json!({ "_meta": meta, "uri": "x", "level": "info" }),
            )
            .await;
        assert_eq!(r["error"]["code"], -32601, "{removed}: {r}");
    }
    let mut no_caps = meta.clone();
    no_caps
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let r = c.request("tools/list", json!({ "_meta": no_caps })).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let mut bad = meta.clone();
    bad["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let r = c.request("tools/list", json!({ "_meta": bad })).await;
    assert_eq!(r["error"]["code"], -32022);
    assert_eq!(r["error"]["data"]["requested"], "2099-01-01");
    assert!(
        r["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v == "2026-07-28")
    );
}

#[tokio::test]
async fn legacy_versions_are_negotiated() {
    let cfg = TempConfig::new(&sample_entry());
    for (asked, answered) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-11-25", "2025-11-25"),
        ("2030-01-01", "2025-11-25"),
    ] {
        let mut c = RawClient::spawn(&cfg.path);
        let r = c.request("initialize", json!({ "protocolVersion": asked, "capabilities": {}, "clientInfo": { "name": "x", "version": "0" } })).await;
        assert_eq!(r["result"]["protocolVersion"], answered);
    }
}

#[tokio::test]
async fn downstream_sees_the_clients_capabilities() {
    let cfg = TempConfig::new(&testserver_entry("t", &[]));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize_with(json!({ "roots": { "listChanged": true }, "sampling": {} }))
        .await;
    c.tool_names().await;
    let r = c.call("t_caps", json!({})).await;
    let caps: Value = serde_json::from_str(&text_of(&r)).unwrap();
    assert_eq!(
        caps,
        json!({ "roots": { "listChanged": true }, "sampling": {} })
    );
}

#[tokio::test]
async fn server_requests_get_a_clean_error_when_the_client_cannot_answer() {
    let cfg = TempConfig::new(&testserver_entry("t", &[]));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    let r = c.call("t_ask_roots", json!({})).await;
    let reply: Value = serde_json::from_str(&text_of(&r)).unwrap();
    assert_eq!(reply["error"]["code"], -32601, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("supports roots")
    );
}

#[tokio::test]
async fn server_requests_are_relayed_and_answered() {
    let cfg = TempConfig::new(&testserver_entry("t", &[]));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize_with(json!({ "roots": {} })).await;
    c.tool_names().await;
    let id = c.next_request_id();
    c.send_raw(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": "t_ask_roots", "arguments": {} } }).to_string()).await;
    let l = c.wait_for(T, |v| v["method"] == "roots/list").await;
    let v: Value = serde_json::from_str(&l).unwrap();
    c.send_raw(&json!({ "jsonrpc": "2.0", "id": v["id"], "result": { "roots": [{ "uri": "file:///w" }] } }).to_string()).await;
    let r: Value = serde_json::from_str(&c.wait_for(T, |v| v["id"] == json!(id)).await).unwrap();
    let reply: Value = serde_json::from_str(&text_of(&r)).unwrap();
    assert_eq!(reply["id"], "srv-1", "the server's own id must come back");
    assert_eq!(reply["result"]["roots"][0]["uri"], "file:///w");
}

fn loom_check(args: &[&str], cwd: &std::path::Path, env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = std::process::Command::new(LOOM);
    cmd.args(args).current_dir(cwd).env_remove("LOOM_CONFIG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn check_reports_health_and_tool_counts() {
    let cfg = TempConfig::new(&format!(
        "{}{}handshake_timeout = 1\nmax_restarts = 0\n",
        sample_entry(),
        testserver_entry("broken", &["--crash-after-init"])
    ));
    let (code, out, _) = loom_check(
        &["check", "-c", cfg.path.to_str().unwrap()],
        cfg.dir.path(),
        &[],
    );
    assert_eq!(code, 1, "{out}");
    let sample = out.lines().find(|l| l.starts_with("sample")).unwrap();
    assert!(sample.contains("up") && sample.contains(" 8 "), "{out}");
    let broken = out.lines().find(|l| l.starts_with("broken")).unwrap();
    assert!(broken.contains("failed"), "{out}");
    let ok = TempConfig::new(&sample_entry());
    let (code, out, _) = loom_check(
        &["check", "-c", ok.path.to_str().unwrap()],
        ok.dir.path(),
        &[],
    );
    assert_eq!(code, 0, "{out}");
}

#[test]
fn bad_config_fails_fast_with_every_problem() {
    let cfg = TempConfig::new(
        "naming = 3\n[[servers]]\nname = \"A\"\n[[servers]]\nname = \"b\"\ncommand = \"x\"\nurl = \"http://x\"\n",
    );
    let (code, _, err) = loom_check(
        &["serve", "-c", cfg.path.to_str().unwrap()],
        cfg.dir.path(),
        &[],
    );
    assert_eq!(code, 2);
    for needle in [
        "naming: must be a string",
        "servers[0].name",
        "servers[0]: needs either `command`",
        "servers[1]: has both",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in {err}");
    }
    let (code, _, err) = loom_check(
        &["check", "-c", "/nonexistent/loom.toml"],
        cfg.dir.path(),
        &[],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("cannot read config /nonexistent/loom.toml"),
        "{err}"
    );
}

#[test]
fn config_flag_wins_over_loom_config_which_wins_over_the_default() {
    let good = TempConfig::new(&sample_entry());
    let bad = TempConfig::new("oops = 1\n");
    let good_path = good.path.to_str().unwrap();
    let bad_path = bad.path.to_str().unwrap();
    // LOOM_CONFIG is used when --config is absent.
    let (code, _, err) = loom_check(&["check"], good.dir.path(), &[("LOOM_CONFIG", bad_path)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("oops"), "{err}");
    // --config wins.
    let (code, out, _) = loom_check(
        &["check", "-c", good_path],
        bad.dir.path(),
        &[("LOOM_CONFIG", bad_path)],
    );
    assert_eq!(code, 0, "{out}");
    // Neither: ./loom.toml.
    let (code, out, _) = loom_check(&["check"], good.dir.path(), &[]);
    assert_eq!(code, 0, "{out}");
}

#[tokio::test]
async fn progress_resets_the_call_timeout() {
    let cfg = TempConfig::new(&format!("{}call_timeout = 0.6\n", sample_entry()));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    // 6 steps of 0.3 s take 1.8 s, three times the timeout, but each step reports progress.
    let r = c
        .request("tools/call", json!({ "name": "sample_slow_count", "arguments": { "steps": 6, "delay_ms": 300 }, "_meta": { "progressToken": 1 } }))
        .await;
    assert_eq!(text_of(&r), "counted to 6", "{r}");
    // Without a progress token nothing resets it.
    let r = c
        .call("sample_slow_count", json!({ "steps": 6, "delay_ms": 300 }))
        .await;
    assert!(
        is_error_result(&r) && text_of(&r).contains("call_timeout"),
        "{r}"
    );
}

/// With bare names, a name two servers offer goes to neither: a server listed first cannot take
/// another's tool by its place in the config (the attacker pass of 2026-12-07, hole 7: a hostile
/// server first in the config got `cancel_order`). Both are qualified, names no one shares stay
/// bare, and the log and `loom check` say why.
#[tokio::test]
async fn bare_naming_keeps_original_names_unless_they_clash() {
    let toml = format!(
        "naming = \"bare\"\n{}env = {{ LOOM_TEST_WHO = \"one\" }}\n{}env = {{ LOOM_TEST_WHO = \"two\" }}\n",
        testserver_entry("one", &["--tools", "0"]),
        testserver_entry("two", &["--tools", "1"])
    );
    let cfg = TempConfig::new(&toml);
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    let names = c.tool_names().await;
    // `echo` clashes between the two servers: neither keeps it bare.
    assert!(
        names.contains(&"one_echo".to_owned()) && names.contains(&"two_echo".to_owned()),
        "{names:?}"
    );
    assert!(!names.contains(&"echo".to_owned()), "{names:?}");
    assert!(names.contains(&"tool_000".to_owned()), "{names:?}");
    let r = c.call("echo", json!({})).await;
    assert!(
        r.get("error").is_some() || is_error_result(&r),
        "a contested bare name routes nowhere: {r}"
    );
    let r = c.call("one_echo", json!({})).await;
    let v: Value = serde_json::from_str(&text_of(&r)).unwrap();
    assert_eq!(v["tool"], "echo", "{r}");
    for (exposed, server) in [("one_env", "one"), ("two_env", "two")] {
        let r = c.call(exposed, json!({})).await;
        let v: Value = serde_json::from_str(&text_of(&r)).unwrap();
        assert_eq!(
            v["LOOM_TEST_WHO"], server,
            "{exposed} reaches its own server: {r}"
        );
    }
    let check = std::process::Command::new(env!("CARGO_BIN_EXE_loom"))
        .args(["check", "-c"])
        .arg(&cfg.path)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("loom check");
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(
        text.contains("note: tool name `echo` is offered by servers one, two")
            && text.contains("`one_echo` and `two_echo`"),
        "{text}"
    );
}

/// A legacy server that refuses `resources/subscribe` (the test server has no subscriptions):
/// the refusal reaches the client, and loom does not count the subscription, so a second try
/// asks the server again instead of being told it succeeded. A URI loom never routed cannot
/// be unsubscribed as if it had been.
#[tokio::test]
async fn a_refused_subscribe_is_not_held() {
    let cfg = TempConfig::new(&testserver_entry("t", &[]));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    let uri = "test://r/00";
    for attempt in 0..2 {
        let r = c
            .request("resources/subscribe", json!({ "uri": uri }))
            .await;
        assert!(
            r.get("error").is_some(),
            "attempt {attempt}: the server's refusal, not a held subscription: {r}"
        );
    }
    let r = c
        .request(
            "resources/unsubscribe",
            json!({ "uri": "sample://nowhere" }),
        )
        .await;
    assert_eq!(r["error"]["code"], json!(-32002), "{r}");
}

/// A client's cancel stops its `loom_query` in the engine: the next query runs at once instead
/// of waiting for the cancelled one to reach `query_timeout`, and the cancelled request gets
/// no answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_loom_query_stops_and_the_next_query_does_not_wait_for_it() {
    let cfg = sample_config("query_timeout = 600", "");
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.send_raw(
        &json!({ "jsonrpc": "2.0", "id": "long", "method": "tools/call",
            "params": { "name": "loom_query", "arguments": { "sql": "SELECT count(*) FROM range(1000000000000) a, range(10) b" } } })
        .to_string(),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    c.notify(
        "notifications/cancelled",
        json!({ "requestId": "long", "reason": "changed my mind" }),
    )
    .await;
    // Answered well within the 30 s a request waits here; without the cancel reaching the
    // engine it would wait for the 600 s timeout.
    let r = c
        .call("loom_query", json!({ "sql": "SELECT 8 AS n" }))
        .await;
    assert_eq!(
        r["result"]["structuredContent"]["rows"],
        json!([{ "n": 8 }]),
        "{r}"
    );
    while let Some(line) = c.next_line(Duration::from_millis(500)).await {
        assert!(
            !line.contains(r#""id":"long""#),
            "the cancelled request was answered: {line}"
        );
    }
}

/// A call whose name is not a string, or whose arguments are not an object, is refused with
/// an error that says so; it never reaches a server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_tool_calls_are_refused_in_words() {
    let cfg = sample_config("", "");
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    for (params, words) in [
        (json!({ "name": 1 }), "as a string"),
        (json!({ "arguments": {} }), "as a string"),
        (
            json!({ "name": "sample_get_weather", "arguments": "Lisbon" }),
            "must be an object",
        ),
        (
            json!({ "name": "sample_get_weather", "arguments": [1, 2] }),
            "must be an object",
        ),
        (
            json!({ "name": "loom_query", "arguments": 5 }),
            "must be an object",
        ),
    ] {
        let r = c.request("tools/call", params.clone()).await;
        assert_eq!(r["error"]["code"], json!(-32602), "{params}: {r}");
        let message = r["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(words), "{params}: {r}");
    }
    // Still serving.
    let r = c
        .call("sample_get_weather", json!({ "city": "Lisbon" }))
        .await;
    assert!(r["result"].is_object(), "{r}");
}

/// A batch, or a request whose id is an object, array or boolean, is refused in words; the
/// session keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_and_ids_that_are_not_strings_or_numbers_are_refused_in_words() {
    let cfg = sample_config("", "");
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.send_raw(
        r#"[{"jsonrpc":"2.0","id":91,"method":"ping"},{"jsonrpc":"2.0","id":92,"method":"ping"}]"#,
    )
    .await;
    let line = c
        .wait_for(Duration::from_secs(30), |v| {
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("batches"))
        })
        .await;
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["error"]["code"], json!(-32600), "{v}");
    for id in [r#"{"a":1}"#, "[1]", "true"] {
        c.send_raw(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#))
            .await;
        let line = c
            .wait_for(Duration::from_secs(30), |v| {
                v["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("string or a number"))
            })
            .await;
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["id"], Value::Null, "{v}");
    }
    // Strings and numbers are ids as before.
    let r = c.request("ping", json!({})).await;
    assert!(r["result"].is_object(), "{r}");
    c.send_raw(r#"{"jsonrpc":"2.0","id":"seven","method":"ping"}"#)
        .await;
    c.wait_for(Duration::from_secs(30), |v| {
        v["id"] == json!("seven") && v["result"].is_object()
    })
    .await;
}
