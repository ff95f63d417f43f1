//! MCP over streamable HTTP, end to end: the real `loom serve --http` in front of the sample
//! server. The guards are checked by status code (token, Host, Origin, path, body size,
//! batches, sessions), and the Python MCP SDK's streamable-HTTP client calls through loom with
//! progress and a large intercepted result.

mod common;

use common::*;
use serde_json::{Value, json};
use std::process::Stdio;

const SAMPLE: &str =
    "[[servers]]\nname = \"sample\"\ncommand = \"loom\"\nargs = [\"sample-server\"]\n";
const TOKEN: &str = "test-token-0123456789";

/// `loom serve --http 127.0.0.1:0` with stdin held open, and the URL it prints.
async fn served(cfg: &TempConfig) -> (LoomOverHttp, String) {
    let loom = LoomOverHttp::start(cfg, TOKEN).await;
    let url = loom.url.clone();
    (loom, url)
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
    // The SDK's streamable-HTTP client in both eras: a legacy session, and stateless
    // 2026-07-28 requests, which its auto mode picks.
    for (mode, version) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let v = python_client_check(&[
            "--http".as_ref(),
            url.as_ref(),
            TOKEN.as_ref(),
            mode.as_ref(),
        ])
        .await;
        check_python_client_saw(&v, version);
    }
}

/// A 2026-07-28 request with its `_meta` and the headers that mirror it.
fn modern(url: &str, method: &str, name: Option<&str>, params: Value) -> reqwest::RequestBuilder {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "curlish", "version": "1" },
    });
    let body = json!({ "jsonrpc": "2.0", "id": 9, "method": method, "params": params });
    let mut r = http()
        .post(url)
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .body(body.to_string());
    if let Some(n) = name {
        r = r.header("mcp-name", n);
    }
    r
}

async fn status_and_code(r: reqwest::RequestBuilder) -> (u16, Value) {
    let r = r.send().await.expect("a response");
    let status = r.status().as_u16();
    let v = json_of(r).await;
    (status, v["error"]["code"].clone())
}

#[tokio::test]
async fn stateless_requests_are_checked_against_their_headers_with_the_revisions_codes() {
    let cfg = TempConfig::new(SAMPLE);
    let (_child, url) = served(&cfg).await;
    let r = modern(&url, "server/discover", None, json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("mcp-session-id").is_none(), "no sessions");
    let v = json_of(r).await;
    assert_eq!(v["result"]["resultType"], "complete", "{v}");
    assert!(
        v["result"]["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    let call = json!({ "name": "sample_get_weather", "arguments": { "city": "Lima" } });
    let (s, v) = status_and_code(modern(
        &url,
        "tools/call",
        Some("sample_get_weather"),
        call.clone(),
    ))
    .await;
    assert_eq!((s, v), (200, Value::Null), "a matching call is served");
    // The name header names another tool than the body: -32020, and nothing is called.
    let (s, c) = status_and_code(modern(
        &url,
        "tools/call",
        Some("sample_cancel_order"),
        call.clone(),
    ))
    .await;
    assert_eq!((s, c), (400, json!(-32020)));
    let (s, c) = status_and_code(modern(&url, "tools/call", None, call.clone())).await;
    assert_eq!((s, c), (400, json!(-32020)), "Mcp-Name is required");
    // The method header disagrees with the body.
    let wrong = modern(&url, "tools/list", None, json!({})).header("mcp-method", "prompts/list");
    assert_eq!(status_and_code(wrong).await, (400, json!(-32020)));
    // _meta without the client's capabilities.
    let bare = http()
        .post(&url)
        .bearer_auth(TOKEN)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#);
    assert_eq!(status_and_code(bare).await, (400, json!(-32602)));
    // A version loom does not serve, in the header and in _meta alike.
    let future = http()
        .post(&url)
        .bearer_auth(TOKEN)
        .header("mcp-protocol-version", "2099-01-01")
        .header("mcp-method", "tools/list")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(future.status(), 400);
    let v = json_of(future).await;
    assert_eq!(v["error"]["code"], -32022, "{v}");
    assert_eq!(v["error"]["data"]["supported"], json!(["2026-07-28"]));
    // Methods the revision removed, and ones nobody has.
    for method in ["ping", "logging/setLevel", "no/such"] {
        let (s, c) = status_and_code(modern(&url, method, None, json!({}))).await;
        assert_eq!((s, c), (404, json!(-32601)), "{method}");
    }
    // No sessions: GET and DELETE without one are not served.
    for m in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let r = http()
            .request(m, &url)
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 405);
    }
}

/// Reads a response body's server-sent events until `until` says stop; the events' (id, data).
async fn read_events(
    r: &mut reqwest::Response,
    mut until: impl FnMut(&[(Option<u64>, String)]) -> bool,
) -> Vec<(Option<u64>, String)> {
    let mut buf = String::new();
    let mut events = Vec::new();
    while !until(&events) {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(30), r.chunk())
            .await
            .expect("an event in time")
            .expect("the stream reads");
        let Some(chunk) = chunk else { break };
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            let id = block
                .lines()
                .find_map(|l| l.strip_prefix("id: "))
                .and_then(|i| i.parse().ok());
            let data = block
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .collect::<String>();
            events.push((id, data));
        }
    }
    events
}

#[tokio::test]
async fn a_call_streams_its_progress_and_a_dropped_stream_resumes_where_it_was() {
    let cfg = TempConfig::new(SAMPLE);
    let (_child, url) = served(&cfg).await;
    let r = post(&url, Some(TOKEN), None, INIT).await;
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let call = json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{
        "name":"sample_slow_count","arguments":{"steps":6,"delay_ms":150},
        "_meta":{"progressToken":"tok-1"}}});
    let mut r = post(&url, Some(TOKEN), Some(&sid), &call.to_string()).await;
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    // The priming event (an id, no data), then the first progress; then the client drops.
    let first = read_events(&mut r, |e| e.iter().any(|(_, d)| d.contains("progress"))).await;
    assert_eq!(first[0].1, "", "a priming event first: {first:?}");
    let last_id = first.last().unwrap().0.expect("events carry ids");
    drop(r);
    // The GET with Last-Event-ID takes the same stream up: the rest of the progress, then the
    // response, which ends it. Nothing was lost or repeated.
    let mut resumed = http()
        .get(&url)
        .bearer_auth(TOKEN)
        .header("mcp-session-id", &sid)
        .header("accept", "text/event-stream")
        .header("last-event-id", last_id.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resumed.status(), 200);
    let rest = read_events(&mut resumed, |e| {
        e.iter().any(|(_, d)| d.contains("\"result\""))
    })
    .await;
    let progress_seen: Vec<u64> = first
        .iter()
        .chain(&rest)
        .filter_map(|(_, d)| serde_json::from_str::<Value>(d).ok())
        .filter_map(|m| m["params"]["progress"].as_u64())
        .collect();
    assert_eq!(progress_seen, vec![1, 2, 3, 4, 5, 6], "{first:?} {rest:?}");
    let response: Value = serde_json::from_str(&rest.last().unwrap().1).unwrap();
    assert_eq!(response["id"], 5);
    assert_eq!(response["result"]["content"][0]["text"], "counted to 6");
    let ids: Vec<u64> = first.iter().chain(&rest).filter_map(|e| e.0).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids increase: {ids:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_stateless_calls_stream_cancels_the_call() {
    let cfg = TempConfig::new(SAMPLE);
    let (_child, url) = served(&cfg).await;
    // A client that takes JSON only gives up while it waits: the call is cancelled.
    let slow =
        json!({ "name": "sample_slow_count", "arguments": { "steps": 200, "delay_ms": 100 } });
    let waiting = modern(&url, "tools/call", Some("sample_slow_count"), slow).send();
    assert!(
        tokio::time::timeout(std::time::Duration::from_millis(800), waiting)
            .await
            .is_err(),
        "the call takes 20 s"
    );
    // A client that reads the call's stream (its progress) closes it: cancelled too.
    let body = json!({ "jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "sample_slow_count", "arguments": { "steps": 200, "delay_ms": 100 },
        "_meta": { "progressToken": 1,
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {} } } });
    let mut r = http()
        .post(&url)
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "sample_slow_count")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let seen = read_events(&mut r, |e| !e.is_empty()).await;
    assert!(seen[0].1.contains("notifications/progress"), "{seen:?}");
    assert!(
        seen[0].0.is_none(),
        "2026-07-28 streams are not resumable: no ids"
    );
    drop(r);
    let entry = session_entry(&cfg).await;
    let eng = loom::frontend::socket::RemoteEngine::connect(&entry)
        .await
        .expect("attach");
    use loom::frontend::engine::{Engine, Reply, Request};
    let cancelled = wait_until("both calls logged as cancelled", async || {
        let Ok(Reply::Calls { calls }) = eng.request(Request::Calls { limit: 10 }).await else {
            return None;
        };
        let cancelled: Vec<_> = calls
            .into_iter()
            .filter(|c| c.tool == "sample_slow_count")
            .filter(|c| c.outcome == loom::types::events::Outcome::Cancelled)
            .collect();
        (cancelled.len() == 2).then_some(cancelled)
    })
    .await;
    // The workbench tells HTTP clients apart: who (when they say) and from where.
    let labels: Vec<String> = cancelled.iter().filter_map(|c| c.client.clone()).collect();
    assert_eq!(labels.len(), 2, "{labels:?}");
    assert!(
        labels
            .iter()
            .any(|l| l.starts_with("curlish 1 · HTTP from 127.0.0.1:")),
        "{labels:?}"
    );
    assert!(
        labels.iter().all(|l| l.contains("HTTP from 127.0.0.1:")),
        "{labels:?}"
    );
}

#[tokio::test]
async fn listings_narrow_by_url_and_sessions_and_streams_are_bounded() {
    let two = format!(
        "http_idle_timeout = 1\nhttp_max_streams = 1\n{SAMPLE}[[servers]]\nname = \"other\"\ncommand = \"loom\"\nargs = [\"sample-server\"]\n"
    );
    let cfg = TempConfig::new(&two);
    let (_child, url) = served(&cfg).await;
    let tools_at = async |u: &str| -> Vec<String> {
        let r = modern(u, "tools/list", None, json!({}))
            .send()
            .await
            .unwrap();
        let v = json_of(r).await;
        v["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .filter(|n| !n.starts_with("loom_"))
            .collect()
    };
    let all = tools_at(&url).await;
    assert!(
        all.iter().any(|n| n.starts_with("other_")) && all.iter().any(|n| n.starts_with("sample_"))
    );
    let narrowed = tools_at(&format!("{url}?servers=other")).await;
    assert!(
        !narrowed.is_empty() && narrowed.iter().all(|n| n.starts_with("other_")),
        "{narrowed:?}"
    );
    // Values are percent-decoded, as URL libraries write them.
    assert_eq!(tools_at(&format!("{url}?servers=%6Fther")).await, narrowed);
    // An unknown name neither narrows nor widens: the default (every server).
    assert_eq!(tools_at(&format!("{url}?servers=other,nope")).await, all);
    // ... and the client is told, at the end of its primer, as for an unknown listing mode.
    let r = post(
        &format!("{url}?listing=serch&servers=nope"),
        Some(TOKEN),
        None,
        INIT,
    )
    .await;
    let init = json_of(r).await;
    let primer = init["result"]["instructions"].as_str().unwrap_or_default();
    assert!(
        primer.contains("listing=serch, which is not a listing mode")
            && primer.contains("servers=nope, which names no configured server"),
        "{init}"
    );
    // One stream per session here: a second GET is refused while the first is open.
    let r = post(&url, Some(TOKEN), None, INIT).await;
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let get = || {
        http()
            .get(&url)
            .bearer_auth(TOKEN)
            .header("mcp-session-id", &sid)
            .header("accept", "text/event-stream")
            .send()
    };
    let open = get().await.unwrap();
    assert_eq!(open.status(), 200);
    assert_eq!(get().await.unwrap().status(), 429);
    drop(open);
    // A session nobody touches ends after http_idle_timeout (1 s here; any request would
    // touch it, so the test waits rather than polls).
    tokio::time::sleep(std::time::Duration::from_secs(4)).await;
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(
        post(&url, Some(TOKEN), Some(&sid), note).await.status(),
        404
    );
}

#[tokio::test]
async fn open_auth_serves_without_a_token_and_a_named_token_variable_must_be_set() {
    let cfg = TempConfig::new(&format!("http_auth = \"open\"\n{SAMPLE}"));
    let (_child, url) = served(&cfg).await;
    assert_eq!(post(&url, None, None, INIT).await.status(), 200);
    // `loom sessions` shows where MCP is served.
    let out = std::process::Command::new(LOOM)
        .arg("sessions")
        .env("XDG_RUNTIME_DIR", cfg.dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("MCP over HTTP at {url}")), "{text}");
    // A token variable the config names but nobody set: loom refuses to start.
    let named = TempConfig::new(&format!(
        "http_token_env = \"LOOM_TEST_UNSET_TOKEN\"\n{SAMPLE}"
    ));
    let out = std::process::Command::new(LOOM)
        .args(["serve", "--http", "127.0.0.1:0", "-c"])
        .arg(&named.path)
        .env("XDG_RUNTIME_DIR", named.dir.path())
        .env_remove("LOOM_TEST_UNSET_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("LOOM_TEST_UNSET_TOKEN"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Open on an address others can reach is refused unless the config means it.
    let out = std::process::Command::new(LOOM)
        .args(["serve", "--http", "0.0.0.0:0", "-c"])
        .arg(&cfg.path)
        .env("XDG_RUNTIME_DIR", cfg.dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("http_open_remote"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_listen_stream_is_acknowledged_tagged_and_filtered() {
    // A search listing: calling a hidden tool promotes it, which changes the tool list.
    let cfg = TempConfig::new(&format!("listing = \"search\"\n{SAMPLE}"));
    let (_child, url) = served(&cfg).await;
    // The servers start with the first request: their first lists arrive before the streams
    // open, so what the streams hear below is the promotion.
    let r = modern(&url, "tools/list", None, json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let listen = |filter: Value| {
        modern(
            &url,
            "subscriptions/listen",
            None,
            json!({ "notifications": filter }),
        )
        .send()
    };
    let mut tools = listen(json!({ "toolsListChanged": true })).await.unwrap();
    let mut prompts = listen(json!({ "promptsListChanged": true })).await.unwrap();
    let first = read_events(&mut tools, |e| !e.is_empty()).await;
    let ack: Value = serde_json::from_str(&first[0].1).unwrap();
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    let sub = ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].clone();
    // The subscription is named by the listen request's own id, as clients match it.
    assert_eq!(sub, json!(9), "{ack}");
    assert_eq!(
        ack["params"]["notifications"],
        json!({ "toolsListChanged": true })
    );
    read_events(&mut prompts, |e| !e.is_empty()).await;
    // A hidden tool called by name joins the listing: the tools stream hears, tagged.
    let call = json!({ "name": "sample_list_customers", "arguments": { "limit": 1 } });
    let r = modern(&url, "tools/call", Some("sample_list_customers"), call)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let more = read_events(&mut tools, |e| !e.is_empty()).await;
    let changed: Value = serde_json::from_str(&more[0].1).unwrap();
    assert_eq!(
        changed["method"], "notifications/tools/list_changed",
        "{changed}"
    );
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        sub
    );
    // The prompts-only stream never hears of tools.
    let mut heard = String::new();
    while let Ok(Ok(Some(chunk))) =
        tokio::time::timeout(std::time::Duration::from_millis(500), prompts.chunk()).await
    {
        heard.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(!heard.contains("tools/list_changed"), "{heard}");
}

/// A message the session could not read strictly (a `jsonrpc` that is not a string, a member
/// twice) is refused at once with its id, never left waiting; an id still in flight is refused
/// for a second request, and the first still gets its own answer.
#[tokio::test]
async fn odd_messages_and_reused_ids_are_answered_at_once() {
    let cfg = TempConfig::new(SAMPLE);
    let (_child, url) = served(&cfg).await;
    // The scheme of the token is case-insensitive.
    let r = http()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("bearer {TOKEN}"))
        .body(INIT)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = post(&url, Some(TOKEN), None, INIT).await;
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    for odd in [
        r#"{"jsonrpc":2,"id":7,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":7,"id":7,"method":"ping"}"#,
    ] {
        let r = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            post(&url, Some(TOKEN), Some(&sid), odd),
        )
        .await
        .expect("answered at once");
        assert_eq!(r.status(), 400, "{odd}");
        let v = json_of(r).await;
        assert_eq!(v["id"], 7, "{v}");
    }
    // A slow call with id 5, then another request with id 5 while it runs.
    let slow = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sample_slow_count","arguments":{"steps":3,"delay_ms":400}}}"#;
    let (first, second) = tokio::join!(post(&url, Some(TOKEN), Some(&sid), slow), async {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        post(
            &url,
            Some(TOKEN),
            Some(&sid),
            r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
        )
        .await
    });
    let second = json_of(second).await;
    assert!(
        second["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("already in use")),
        "{second}"
    );
    let first = json_of(first).await;
    assert_eq!(first["id"], 5, "{first}");
    assert!(first["result"]["content"].is_array(), "{first}");
}

/// Many `initialize` requests at once cannot pass `http_max_sessions` together.
#[tokio::test]
async fn concurrent_initializes_keep_to_the_session_bound() {
    let cfg = TempConfig::new(&format!("http_max_sessions = 2\n{SAMPLE}"));
    let (_child, url) = served(&cfg).await;
    let all =
        futures_util::future::join_all((0..8).map(|_| post(&url, Some(TOKEN), None, INIT))).await;
    let ok = all.iter().filter(|r| r.status() == 200).count();
    let busy = all.iter().filter(|r| r.status() == 503).count();
    assert_eq!(
        (ok, busy),
        (2, 6),
        "{:?}",
        all.iter().map(|r| r.status()).collect::<Vec<_>>()
    );
}

const DESCENDANT: &str =
    "processes this session started (its servers) may not use its HTTP surface";

/// A server loom started is refused on the HTTP surface as on the session socket, whatever
/// token it holds (here its config hands it the token; a token loom makes is never written
/// where a server could read it): from the server itself, from a grandchild that double-forked
/// and left the process group with `setsid`, and from a child that made itself non-dumpable
/// so that loom cannot read its descriptors, from a thread that unshared its descriptor table,
/// and with the socket parked in flight over `SCM_RIGHTS` while loom looks. This test, an
/// outside client with the same token, is served throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_loom_started_are_refused_on_its_http_surface_whatever_token_they_hold() {
    let cfg = TempConfig::new(&format!(
        "{SAMPLE}{}env = {{ STOLEN = {TOKEN:?} }}\n",
        common::testserver_entry("t", &["--probe"])
    ));
    let (_loom, url) = served(&cfg).await;
    let r = post(&url, Some(TOKEN), None, INIT).await;
    assert_eq!(r.status(), 200);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    post(&url, Some(TOKEN), Some(&sid), note).await;
    for (id, how, why) in [
        (2, "direct", DESCENDANT),
        (3, "escape", DESCENDANT),
        // Run as root, loom can read every process's descriptors and finds the child; as
        // anyone else, it cannot tell and refuses all the same.
        (4, "undumpable", ""),
        // The attacker pass's walks around the check (issue 45, F1): a thread with its own
        // descriptor table is found where it is; a socket parked in flight is held by nobody
        // at the accept, and nobody is never an outside peer.
        (5, "thread", DESCENDANT),
        (6, "parked", ""),
    ] {
        let call = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
            "name":"t_probe_http","arguments":{"url":url,"token":TOKEN,"how":how}}});
        let r = json_of(post(&url, Some(TOKEN), Some(&sid), &call.to_string()).await).await;
        let text = r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.starts_with("403 refused: "), "{how}: {r}");
        assert!(
            text.contains(why)
                && (!why.is_empty()
                    || text.contains(DESCENDANT)
                    || text.contains("cannot tell whether the connecting process")),
            "{how}: {r}"
        );
    }
    // The outside client still gets in, with a session of its own.
    assert_eq!(post(&url, Some(TOKEN), None, INIT).await.status(), 200);
}

/// A request whose id is an object, an array or a boolean is answered at once (-32600, no id
/// to answer to, as on stdio) on a legacy session and on the stateless path, and the session
/// it came on still ends when it idles: nothing is left waiting for an answer that never comes.
#[tokio::test]
async fn a_request_with_an_unusable_id_is_answered_at_once_and_its_session_still_idles_out() {
    let cfg = TempConfig::new(&format!("http_idle_timeout = 1\n{SAMPLE}"));
    let (_child, url) = served(&cfg).await;
    let r = post(&url, Some(TOKEN), None, INIT).await;
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    for id in [r#"{"a":1}"#, "[1]", "true", "false"] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let r = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            post(&url, Some(TOKEN), Some(&sid), &body),
        )
        .await
        .expect("answered");
        assert_eq!(r.status(), 400, "{id}");
        let v = json_of(r).await;
        assert_eq!(v["id"], Value::Null, "{v}");
        assert_eq!(v["error"]["code"], -32600, "{v}");
        // Stateless: the same.
        let body = json!({"jsonrpc":"2.0","id":serde_json::from_str::<Value>(id).unwrap(),"method":"tools/list","params":{"_meta":{
            "io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":{}}}});
        let r = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            http()
                .post(&url)
                .bearer_auth(TOKEN)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/list")
                .body(body.to_string())
                .send(),
        )
        .await
        .expect("answered")
        .unwrap();
        assert_eq!(r.status(), 400, "{id}");
        assert_eq!(json_of(r).await["error"]["code"], -32600);
    }
    // The session waits for nothing, so it ends once idle.
    let ping = r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
    let mut status = 0;
    // Each ping touches the session, so each waits longer than the timeout first.
    for _ in 0..40 {
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        status = post(&url, Some(TOKEN), Some(&sid), ping)
            .await
            .status()
            .as_u16();
        if status == 404 {
            break;
        }
    }
    assert_eq!(status, 404, "the session never idled out");
}

/// The guards read `Host` and `Origin` strictly: twice is 400 (RFC 9112 allows one Host),
/// lax forms are 403, and an IPv4-mapped loopback listener checks Host as a loopback one does.
#[tokio::test]
async fn host_and_origin_are_read_strictly_on_every_loopback_listener() {
    let cfg = TempConfig::new(SAMPLE);
    let v4 = LoomOverHttp::start(&cfg, TOKEN).await;
    let cfg6 = TempConfig::new(SAMPLE);
    let mapped = LoomOverHttp::start_with(&cfg6, TOKEN, &["--http", "[::ffff:127.0.0.1]:0"]).await;
    for url in [&v4.url, &mapped.url] {
        let send = |headers: &[(&str, &[u8])]| {
            let mut r = http()
                .post(url.as_str())
                .bearer_auth(TOKEN)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(INIT);
            let mut map = reqwest::header::HeaderMap::new();
            for (k, v) in headers {
                map.append(
                    reqwest::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                    reqwest::header::HeaderValue::from_bytes(v).unwrap(),
                );
            }
            r = r.headers(map);
            async move { r.send().await.unwrap().status().as_u16() }
        };
        assert_eq!(send(&[]).await, 200, "{url}");
        assert_eq!(
            send(&[("host", b"rebind.evil.example")]).await,
            403,
            "{url}"
        );
        assert_eq!(send(&[("host", b"[::1]evil.example")]).await, 403);
        assert_eq!(send(&[("host", b"localhost:evil")]).await, 403);
        assert_eq!(
            send(&[("host", b"localhost"), ("host", b"localhost")]).await,
            400
        );
        assert_eq!(send(&[("origin", b"http://localhost:3000")]).await, 200);
        assert_eq!(send(&[("origin", b"http://[::1]evil.example")]).await, 403);
        assert_eq!(send(&[("origin", b"http://evil.example\xff")]).await, 403);
        assert_eq!(
            send(&[
                ("origin", b"http://localhost"),
                ("origin", b"http://evil.example")
            ])
            .await,
            400
        );
    }
}

/// A bearer token shorter than 16 characters is refused at start with a clear error, and a
/// token loom makes is neither printed to a log (stderr not a terminal) nor written to a file.
#[tokio::test]
async fn short_tokens_are_refused_and_a_made_token_is_never_written_down() {
    let cfg = TempConfig::new(SAMPLE);
    let out = std::process::Command::new(LOOM)
        .args(["serve", "--http", "127.0.0.1:0", "-c"])
        .arg(&cfg.path)
        .env("XDG_RUNTIME_DIR", cfg.dir.path())
        .env("LOOM_HTTP_TOKEN", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("$LOOM_HTTP_TOKEN holds a token of 1 characters"),
        "{stderr}"
    );
    assert!(stderr.contains("at least 16"), "{stderr}");
    let out = std::process::Command::new(LOOM)
        .args(["serve", "--http", "127.0.0.1:0", "-c"])
        .arg(&cfg.path)
        .env("XDG_RUNTIME_DIR", cfg.dir.path())
        .env_remove("LOOM_HTTP_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("never writes it to a file"), "{stderr}");
    let files: Vec<String> = std::fs::read_dir(cfg.dir.path().join("loom"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(!files.iter().any(|f| f.ends_with(".token")), "{files:?}");
}
