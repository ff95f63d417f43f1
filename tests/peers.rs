//! loom against real peers: the rmcp and Python MCP SDK clients upstream, and the npm
//! server-everything (stdio and streamable HTTP) and server-filesystem downstream. The peers
//! are installed by `scripts/test.sh`; a missing peer fails the test.

mod common;

use common::*;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::time::Duration;

const T: Duration = Duration::from_secs(30);

fn everything_entry(name: &str) -> String {
    format!(
        "[[servers]]\nname = \"{name}\"\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n",
        everything_js().display().to_string()
    )
}

fn filesystem_entry(dir: &std::path::Path) -> String {
    format!(
        "[[servers]]\nname = \"fs\"\ncommand = \"node\"\nargs = [{:?}, {:?}]\ntools.deny = [\"write_*\", \"move_*\"]\n",
        filesystem_js().display().to_string(),
        dir.display().to_string()
    )
}

const SAMPLE: &str =
    "[[servers]]\nname = \"sample\"\ncommand = \"loom\"\nargs = [\"sample-server\"]\n";

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().cloned().unwrap()
}

#[tokio::test]
async fn rmcp_client_through_loom_to_real_servers() {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("hello.txt"), "hello from disk").unwrap();
    let cfg = TempConfig::new(&format!(
        "{}{}{SAMPLE}",
        everything_entry("everything"),
        filesystem_entry(data.path())
    ));
    let transport = TokioChildProcess::new(tokio::process::Command::new(LOOM).configure(|c| {
        c.arg("serve").arg("-c").arg(&cfg.path);
    }))
    .unwrap();
    let client = ().serve(transport).await.expect("rmcp client connects to loom");
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    for n in [
        "everything_echo",
        "everything_get-sum",
        "fs_list_directory",
        "fs_read_text_file",
        "sample_list_orders",
    ] {
        assert!(names.contains(&n.to_owned()), "{n} missing: {names:?}");
    }
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("fs_write_") || n.starts_with("fs_move_")),
        "denied tools exposed: {names:?}"
    );
    let sum = client
        .call_tool(
            CallToolRequestParams::new("everything_get-sum")
                .with_arguments(args(json!({ "a": 2, "b": 40 }))),
        )
        .await
        .unwrap();
    assert!(format!("{:?}", sum.content).contains("42"), "{sum:?}");
    let listing = client
        .call_tool(
            CallToolRequestParams::new("fs_read_text_file")
                .with_arguments(args(json!({ "path": data.path().join("hello.txt") }))),
        )
        .await
        .unwrap();
    assert!(
        format!("{:?}", listing.content).contains("hello from disk"),
        "{listing:?}"
    );
    let denied = client
        .call_tool(
            CallToolRequestParams::new("fs_write_file")
                .with_arguments(args(json!({ "path": "x", "content": "y" }))),
        )
        .await;
    assert!(denied.is_err(), "a denied tool must not be callable");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn rmcp_modern_client_through_loom() {
    let cfg = TempConfig::new(&format!("{SAMPLE}{}", everything_entry("everything")));
    let transport = TokioChildProcess::new(tokio::process::Command::new(LOOM).configure(|c| {
        c.arg("serve").arg("-c").arg(&cfg.path);
    }))
    .unwrap();
    use rmcp::service::ClientServiceExt;
    let mode = rmcp::service::ClientLifecycleMode::Discover {
        preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
    };
    let client = rmcp::model::ClientConfig::default()
        .serve_with_lifecycle(transport, mode)
        .await
        .expect("modern handshake with loom");
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "everything_echo"));
    let r = client
        .call_tool(
            CallToolRequestParams::new("everything_echo")
                .with_arguments(args(json!({ "message": "modern" }))),
        )
        .await
        .unwrap();
    assert!(format!("{:?}", r.content).contains("Echo: modern"), "{r:?}");
    client.cancel().await.unwrap();
}

/// The raw `result` member of a response line.
fn result_bytes(line: &str) -> String {
    #[derive(serde::Deserialize)]
    struct R<'a> {
        #[serde(borrow)]
        result: &'a RawValue,
    }
    let r: R = serde_json::from_str(line).unwrap();
    r.result.get().to_owned()
}

#[tokio::test]
async fn everything_results_are_byte_identical_to_a_direct_connection() {
    // Directly: server-everything as its own child.
    let mut direct = tokio::process::Command::new("node")
        .arg(everything_js())
        .arg("stdio")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut stdin = direct.stdin.take().unwrap();
    let mut out = tokio::io::BufReader::new(direct.stdout.take().unwrap()).lines();
    let mut ask = async |line: String, id: u64| -> String {
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        loop {
            let l = tokio::time::timeout(T, out.next_line())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            let v: Value = serde_json::from_str(&l).unwrap();
            if v["id"] == json!(id) {
                return l;
            }
        }
    };
    ask(json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"d","version":"0"}}}).to_string(), 1).await;
    let calls = [
        json!({ "name": "echo", "arguments": { "message": "héllo \"quoted\" 🎉" } }),
        json!({ "name": "get-structured-content", "arguments": { "location": "New York" } }),
        json!({ "name": "get-tiny-image", "arguments": {} }),
        json!({ "name": "get-resource-links", "arguments": { "count": 3 } }),
    ];
    let mut direct_results = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        let id = 10 + i as u64;
        let line = ask(
            json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": call })
                .to_string(),
            id,
        )
        .await;
        direct_results.push(result_bytes(&line));
    }
    drop(direct);

    let cfg = TempConfig::new(&everything_entry("everything"));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    for (call, direct) in calls.iter().zip(direct_results) {
        let mut call = call.clone();
        call["name"] = json!(format!("everything_{}", call["name"].as_str().unwrap()));
        let line = c.request_raw("tools/call", call, T).await;
        assert_eq!(result_bytes(&line), direct, "result differs through loom");
    }
}

#[tokio::test]
async fn progress_is_mapped_and_cancel_reaches_the_server() {
    let cfg = TempConfig::new(&everything_entry("everything"));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    // Progress: the client's own token comes back, with integer values intact.
    let id = c.next_request_id();
    c.send_raw(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "everything_trigger-long-running-operation", "arguments": { "duration": 1, "steps": 3 },
        "_meta": { "progressToken": "my-token" } } }).to_string()).await;
    let mut progress = Vec::new();
    loop {
        let l = c.next_line(T).await.expect("line");
        let v: Value = serde_json::from_str(&l).unwrap();
        if v["method"] == "notifications/progress" {
            assert_eq!(v["params"]["progressToken"], "my-token");
            assert!(
                l.contains("\"progress\":") && !l.contains("\"progress\":1.0"),
                "{l}"
            );
            progress.push(v["params"]["progress"].as_u64().unwrap());
        } else if v["id"] == json!(id) {
            assert!(text_of(&v).contains("completed"), "{v}");
            break;
        }
    }
    assert_eq!(progress, vec![1, 2, 3]);
    // Cancel: the response never comes, and progress after the cancel is dropped.
    c.send_raw(&json!({ "jsonrpc": "2.0", "id": 500, "method": "tools/call", "params": {
        "name": "everything_trigger-long-running-operation", "arguments": { "duration": 3, "steps": 6 },
        "_meta": { "progressToken": 99 } } }).to_string()).await;
    c.wait_for(T, |v| {
        v["method"] == "notifications/progress" && v["params"]["progressToken"] == 99
    })
    .await;
    c.notify(
        "notifications/cancelled",
        json!({ "requestId": 500, "reason": "changed my mind" }),
    )
    .await;
    // A barrier: the same operation, started later and running longer. Had the cancel done
    // nothing, the first one's answer would come before this one's.
    c.send_raw(&json!({ "jsonrpc": "2.0", "id": 501, "method": "tools/call", "params": {
        "name": "everything_trigger-long-running-operation", "arguments": { "duration": 5, "steps": 5 } } }).to_string()).await;
    loop {
        let l = c
            .next_line(T)
            .await
            .expect("the barrier call's answer in time");
        let v: Value = serde_json::from_str(&l).unwrap();
        assert!(v["id"] != json!(500), "cancelled request answered: {l}");
        assert!(
            v["params"]["progressToken"] != json!(99),
            "progress after cancel: {l}"
        );
        if v["id"] == json!(501) {
            assert!(text_of(&v).contains("completed"), "{v}");
            break;
        }
    }
    let r = c.request("ping", json!({})).await;
    assert_eq!(r["result"], json!({}));
}

#[tokio::test]
async fn roots_requests_are_relayed_to_a_capable_client() {
    let cfg = TempConfig::new(&everything_entry("everything"));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize_with(json!({ "roots": { "listChanged": true } }))
        .await;
    // server-everything asks for roots when the client declared them; loom relays the request.
    let l = c.wait_for(T, |v| v["method"] == "roots/list").await;
    let v: Value = serde_json::from_str(&l).unwrap();
    assert!(v["id"].as_str().unwrap().starts_with("loom-s-"), "{l}");
    c.send_raw(&json!({ "jsonrpc": "2.0", "id": v["id"], "result": { "roots": [{ "uri": "file:///srv/project", "name": "project" }] } }).to_string()).await;
    let names = c.tool_names().await;
    assert!(
        names.contains(&"everything_get-roots-list".to_owned()),
        "{names:?}"
    );
    wait_until(
        "the roots the client gave to reach the server",
        async || {
            let r = c.call("everything_get-roots-list", json!({})).await;
            text_of(&r).contains("file:///srv/project").then_some(())
        },
    )
    .await;
}

#[tokio::test]
async fn log_messages_are_prefixed_with_the_server() {
    let cfg = TempConfig::new(&everything_entry("everything"));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    let r = c
        .request("logging/setLevel", json!({ "level": "debug" }))
        .await;
    assert_eq!(r["result"], json!({}));
    c.call("everything_toggle-simulated-logging", json!({}))
        .await;
    let l = c
        .wait_for(T, |v| v["method"] == "notifications/message")
        .await;
    let v: Value = serde_json::from_str(&l).unwrap();
    assert!(
        v["params"]["logger"]
            .as_str()
            .unwrap()
            .starts_with("everything"),
        "{l}"
    );
}

async fn free_port() -> u16 {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    l.local_addr().unwrap().port()
}

#[tokio::test]
async fn streamable_http_downstream() {
    let port = free_port().await;
    let _server = tokio::process::Command::new("node")
        .arg(everything_js())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    wait_until("server-everything to listen over HTTP", async || {
        tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .ok()
    })
    .await;
    let cfg = TempConfig::new(&format!(
        "[[servers]]\nname = \"web\"\nurl = \"http://127.0.0.1:{port}/mcp\"\nheaders = {{ \"X-Test\" = \"1\" }}\n"
    ));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    let names = c.tool_names().await;
    assert!(
        names.contains(&"web_echo".to_owned()),
        "{names:?}\n{}",
        c.stderr.lock().unwrap()
    );
    let r = c.call("web_echo", json!({ "message": "over http" })).await;
    assert_eq!(text_of(&r), "Echo: over http");
    let r = c.call("web_get-sum", json!({ "a": 1, "b": 2 })).await;
    assert!(text_of(&r).contains('3'), "{r}");
    // Progress arrives on the POST's event stream and is mapped back.
    let id = c.next_request_id();
    c.send_raw(
        &json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "web_trigger-long-running-operation", "arguments": { "duration": 1, "steps": 2 },
        "_meta": { "progressToken": "h" } } })
        .to_string(),
    )
    .await;
    c.wait_for(T, |v| {
        v["method"] == "notifications/progress" && v["params"]["progressToken"] == "h"
    })
    .await;
    c.wait_for(T, |v| v["id"] == json!(id)).await;
}

#[tokio::test]
async fn python_sdk_client_in_both_eras() {
    let cfg = TempConfig::new(SAMPLE);
    for mode in ["auto", "legacy"] {
        let v = python_client_check(&[LOOM.as_ref(), cfg.path.as_os_str(), mode.as_ref()]).await;
        let expected_version = if mode == "auto" {
            "2026-07-28"
        } else {
            "2025-11-25"
        };
        check_python_client_saw(&v, expected_version);
    }
}

#[tokio::test]
async fn completion_and_resource_subscriptions_are_routed() {
    let cfg = TempConfig::new(&everything_entry("everything"));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    let r = c
        .request(
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "everything_completable-prompt" }, "argument": { "name": "department", "value": "S" } }),
        )
        .await;
    assert_eq!(
        r["result"]["completion"]["values"],
        json!(["Sales", "Support"]),
        "{r}"
    );
    let list = c.request("resources/list", json!({})).await;
    let uri = list["result"]["resources"][0]["uri"]
        .as_str()
        .expect("a resource")
        .to_owned();
    let read = c.request("resources/read", json!({ "uri": uri })).await;
    assert_eq!(read["result"]["contents"][0]["uri"], json!(uri), "{read}");
    let sub = c
        .request("resources/subscribe", json!({ "uri": uri }))
        .await;
    assert_eq!(sub["result"], json!({}), "{sub}");
    c.call("everything_toggle-subscriber-updates", json!({}))
        .await;
    let l = c
        .wait_for(T, |v| v["method"] == "notifications/resources/updated")
        .await;
    assert!(l.contains(&uri), "{l}");
}
