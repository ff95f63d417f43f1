//! MCP over streamable HTTP, end to end: the real `loom serve --http` in front of the sample
//! server. The guards are checked by status code (token, Host, Origin, path, body size,
//! batches, sessions), and the Python MCP SDK's streamable-HTTP client calls through loom with
//! progress and a large intercepted result.

mod common;

use common::*;
use serde_json::{Value, json};
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, BufReader};

const SAMPLE: &str =
    "[[servers]]\nname = \"sample\"\ncommand = \"loom\"\nargs = [\"sample-server\"]\n";
const TOKEN: &str = "test-token-0123456789";

/// `loom serve --http 127.0.0.1:0` with stdin held open; the URL it prints.
async fn served(cfg: &TempConfig) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(LOOM)
        .args(["serve", "-c"])
        .arg(&cfg.path)
        .args(["--http", "127.0.0.1:0"])
        .env("XDG_RUNTIME_DIR", cfg.dir.path())
        .env("LOOM_HTTP_TOKEN", TOKEN)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("loom serve");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        while let Ok(Some(l)) = lines.next_line().await {
            if let Some(url) = l.strip_prefix("loom: MCP over HTTP at ") {
                return url.to_owned();
            }
        }
        panic!("loom ended without serving HTTP")
    })
    .await
    .expect("the URL in time");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

fn http() -> reqwest::Client {
    loom::init_tls();
    reqwest::Client::new()
}

async fn post(
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
    body: &str,
) -> reqwest::Response {
    let mut r = http()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_owned());
    if let Some(t) = token {
        r = r.bearer_auth(t);
    }
    if let Some(s) = session {
        r = r.header("mcp-session-id", s);
    }
    r.send().await.expect("a response")
}

/// The JSON-RPC response in a body: plain JSON, or the last message of an event stream.
async fn json_of(r: reqwest::Response) -> Value {
    let sse = r
        .headers()
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let bytes = r.bytes().await.expect("a body");
    if !sse {
        return serde_json::from_slice(&bytes).expect("JSON");
    }
    let text = String::from_utf8(bytes.to_vec()).expect("UTF-8 events");
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .rfind(|m| m.get("method").is_none())
        .expect("a response among the events")
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#;

#[tokio::test]
async fn the_guards_answer_by_status_code_before_reading_anything() {
    let cfg = TempConfig::new(SAMPLE);
    let (_child, url) = served(&cfg).await;
    // No token: 401 with the challenge, never a JSON-RPC error.
    let r = post(&url, None, None, INIT).await;
    assert_eq!(r.status(), 401);
    assert_eq!(r.headers()["www-authenticate"], "Bearer realm=\"loom\"");
    // A wrong token says so.
    let r = post(&url, Some("wrong"), None, INIT).await;
    assert_eq!(r.status(), 401);
    assert_eq!(
        r.headers()["www-authenticate"],
        "Bearer realm=\"loom\", error=\"invalid_token\""
    );
    // A token in the URL is never looked at.
    let r = post(&format!("{url}?access_token={TOKEN}"), None, None, INIT).await;
    assert_eq!(r.status(), 401);
    // A page of another origin, and a rebound Host, are refused.
    let r = http()
        .post(&url)
        .bearer_auth(TOKEN)
        .header("origin", "https://evil.example")
        .body(INIT)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let r = http()
        .post(&url)
        .bearer_auth(TOKEN)
        .header("host", "evil.example")
        .body(INIT)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    // Another path, a body too large, a batch, an unknown or missing session.
    let other = url.replace("/mcp", "/other");
    assert_eq!(post(&other, Some(TOKEN), None, INIT).await.status(), 404);
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(17 * 1024 * 1024)
    );
    assert_eq!(
        post(&url, Some(TOKEN), Some("x"), &huge).await.status(),
        413
    );
    let batch = format!("[{INIT}]");
    assert_eq!(post(&url, Some(TOKEN), None, &batch).await.status(), 400);
    let ping = r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
    assert_eq!(
        post(&url, Some(TOKEN), Some("nope"), ping).await.status(),
        404
    );
    assert_eq!(post(&url, Some(TOKEN), None, ping).await.status(), 400);
    // An unsupported protocol version header is refused.
    let r = http()
        .post(&url)
        .bearer_auth(TOKEN)
        .header("mcp-protocol-version", "1999-01-01")
        .body(ping)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
}

#[tokio::test]
async fn a_session_lists_calls_and_ends_over_plain_http() {
    let cfg = TempConfig::new(SAMPLE);
    let (_child, url) = served(&cfg).await;
    let r = post(&url, Some(TOKEN), None, INIT).await;
    assert_eq!(r.status(), 200);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let init = json_of(r).await;
    assert_eq!(init["result"]["serverInfo"]["name"], "loom", "{init}");
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(
        post(&url, Some(TOKEN), Some(&sid), note).await.status(),
        202
    );
    let list = post(
        &url,
        Some(TOKEN),
        Some(&sid),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    )
    .await;
    let list = json_of(list).await;
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"sample_list_orders"), "{names:?}");
    let call = json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
        "params":{"name":"sample_list_orders","arguments":{"limit":1000}}});
    let r = json_of(post(&url, Some(TOKEN), Some(&sid), &call.to_string()).await).await;
    assert_eq!(r["id"], 3);
    assert_eq!(r["result"]["structuredContent"]["kind"], "dataset", "{r}");
    // DELETE ends the session; it is unknown afterwards.
    let d = http()
        .delete(&url)
        .bearer_auth(TOKEN)
        .header("mcp-session-id", &sid)
        .send()
        .await
        .unwrap();
    assert_eq!(d.status(), 200);
    let again = post(
        &url,
        Some(TOKEN),
        Some(&sid),
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!(again.status(), 404);
}

#[tokio::test]
async fn the_python_sdk_calls_through_loom_over_http_with_progress_and_interception() {
    let cfg = TempConfig::new(SAMPLE);
    let (_child, url) = served(&cfg).await;
    // The SDK's streamable-HTTP client: legacy sessions (modern requests over HTTP are the
    // next step of the HTTP surface).
    let v = python_client_check(&[
        "--http".as_ref(),
        url.as_ref(),
        TOKEN.as_ref(),
        "legacy".as_ref(),
    ])
    .await;
    check_python_client_saw(&v, "2025-11-25");
}
