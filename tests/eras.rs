//! Both protocol eras through loom, with real peers: the Python SDK as a legacy and as a
//! 2026-07-28 client, in front of legacy servers (server-everything, the conformance fixture in
//! `--legacy-only` mode) and a 2026-07-28 server (the conformance fixture), answering the
//! servers' sampling, elicitation and roots questions in every pairing, across a server
//! restart; and, with a raw client, the sealed `requestState` loom hands a 2026-07-28 client
//! (tampered, stale, incomplete), roots asked when no client can answer, what several clients
//! sharing the servers each hear (subscriptions, log messages), the union of their
//! capabilities announced to servers, and the servers' guidance in the primer.

mod common;

use common::*;
use loom::frontend::engine::Engine;
use loom::frontend::socket::RemoteEngine;
use loom::types::engine::{Reply, Request};
use loom::types::events::ServerState;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

const MODERN: &str = "2026-07-28";

/// Loom in front of the fixture as a 2026-07-28 server (`fx`), the fixture as a legacy server
/// (`lg`) and server-everything (`ev`).
fn eras_config() -> TempConfig {
    TempConfig::new(&format!(
        "[[servers]]\nname = \"fx\"\ncommand = {LOOM:?}\nargs = [\"sample-server\", \"--conformance\"]\n\
         [[servers]]\nname = \"lg\"\ncommand = {LOOM:?}\nargs = [\"sample-server\", \"--conformance\", \"--legacy-only\"]\n\
         [[servers]]\nname = \"ev\"\ncommand = \"node\"\nargs = [{:?}]\n",
        everything_js().display().to_string()
    ))
}

/// The `_meta` of a 2026-07-28 request.
fn modern_meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": { "name": "eras-test", "version": "1" },
    })
}

async fn state_of(eng: &Arc<RemoteEngine>, server: &str) -> (ServerState, u32) {
    let Ok(Reply::Servers { servers }) = eng.request(Request::Servers).await else {
        panic!("servers")
    };
    let s = servers.iter().find(|s| s.name == server).expect("server");
    (s.state.clone(), s.restarts)
}

/// The Python SDK in `mode` runs the plan against loom over stdio; halfway, the test restarts
/// both legacy servers through the session socket, as a person would, and the rest of the
/// plan runs against the new processes.
async fn python_through_loom(mode: &str) -> Value {
    let cfg = eras_config();
    let paused = cfg.file("paused");
    let go_on = cfg.file("go-on");
    let plan = json!({
        "calls": [
            { "key": "fx_sampling", "name": "fx_test_input_required_result_sampling" },
            { "key": "fx_elicitation", "name": "fx_test_input_required_result_elicitation" },
            { "key": "fx_roots", "name": "fx_test_input_required_result_list_roots" },
            { "key": "lg_sampling", "name": "lg_test_sampling", "arguments": { "prompt": "hi" } },
            { "key": "ev_roots", "name": "ev_get-roots-list" },
            // After both legacy servers started again:
            { "key": "lg_elicitation", "name": "lg_test_elicitation", "arguments": { "message": "who?" } },
            { "key": "ev_sampling", "name": "ev_trigger-sampling-request", "arguments": { "prompt": "hi", "maxTokens": 20 } },
            { "key": "ev_elicitation", "name": "ev_trigger-elicitation-request" },
            { "key": "fx_sampling_again", "name": "fx_test_input_required_result_sampling" },
        ],
        "list_triggers": ["fx_test_trigger_tool_change", "lg_test_trigger_tool_change"],
        // A prompt whose server asks the client for context while it builds the prompt.
        "prompts": [
            { "key": "fx_prompt", "name": "fx_test_input_required_result_prompt" },
            { "key": "lg_prompt", "name": "lg_test_input_required_result_prompt" },
        ],
        "pause_after": "ev_roots",
        "paused": paused,
        "go_on": go_on,
    });
    let plan_file = cfg.file("plan.json");
    std::fs::write(&plan_file, plan.to_string()).expect("plan");
    let run = format!("XDG_RUNTIME_DIR={}", cfg.dir.path().display());
    let config = cfg.path.display().to_string();
    let script = root().join("tests/py/eras_check.py");
    let mut cmd = tokio::process::Command::new(venv_python());
    cmd.arg(&script)
        .args([
            mode,
            &plan_file.display().to_string(),
            "--",
            "env",
            &run,
            LOOM,
        ])
        .args(["serve", "-c", &config])
        .kill_on_drop(true);
    let client = tokio::spawn(async move { cmd.output().await.expect("python runs") });
    wait_until("the client to pause halfway", async || {
        paused.exists().then_some(())
    })
    .await;
    let entry = session_entry(&cfg).await;
    let eng = Arc::new(RemoteEngine::connect(&entry).await.expect("attach"));
    for server in ["lg", "ev"] {
        eng.request(Request::RestartServer {
            server: server.into(),
        })
        .await
        .expect("restart");
    }
    for server in ["lg", "ev"] {
        wait_until("the restarted server to be up", async || {
            (state_of(&eng, server).await.0 == ServerState::Up).then_some(())
        })
        .await;
    }
    std::fs::write(&go_on, "").expect("go on");
    let out = client.await.expect("client task");
    assert!(
        out.status.success(),
        "{mode}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn check_pairings(v: &Value, mode: &str) {
    let r = &v["results"];
    let text = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
    let want = [
        ("fx_sampling", "sampled-by-client"),
        ("fx_elicitation", "Ada"),
        ("fx_roots", "file:///tmp/loom-eras-root"),
        ("lg_sampling", "sampled-by-client"),
        ("ev_roots", "file:///tmp/loom-eras-root"),
        ("lg_elicitation", "ada@example.com"),
        ("ev_sampling", "sampled-by-client"),
        ("ev_elicitation", "ada@example.com"),
        ("fx_sampling_again", "sampled-by-client"),
        ("fx_prompt", "Use this context: Ada"),
        ("lg_prompt", "Use this context: Ada"),
    ];
    for (key, needle) in want {
        assert!(
            text(key).contains(needle),
            "{mode}: {key} wanted {needle:?}, got {:?}",
            text(key)
        );
    }
    // Every question was asked of the client for real, by its era's means.
    for kind in ["sampling", "elicitation", "roots"] {
        assert!(v["asked"][kind].as_u64().unwrap_or(0) >= 1, "{mode}: {v}");
    }
    // Tools that exist only when the client can answer are listed: loom declared it.
    let tools: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for t in ["ev_trigger-sampling-request", "ev_get-roots-list"] {
        assert!(tools.contains(&t), "{mode}: {tools:?}");
    }
    // A list change of a 2026-07-28 server (heard on loom's listen stream to it) and of a
    // legacy one (its list_changed) reach the client by its era's means, and the new tool is
    // listed.
    for (trigger, server) in [
        ("fx_test_trigger_tool_change", "fx"),
        ("lg_test_trigger_tool_change", "lg"),
    ] {
        let change = &v["list_changes"][trigger];
        assert_eq!(change["heard"], true, "{mode}: {trigger}: {v}");
        let dynamic = format!("{server}_test_dynamic_tool");
        assert!(
            change["tools"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t == &json!(dynamic)),
            "{mode}: {trigger}: {change}"
        );
    }
    // A tool that only runs as a task is left out, not listed and uncallable.
    assert!(!tools.contains(&"ev_simulate-research-query"), "{tools:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_python_client_answers_every_servers_questions_across_a_restart() {
    let v = python_through_loom("legacy").await;
    assert_eq!(v["protocol_version"], "2025-11-25");
    check_pairings(&v, "legacy");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_07_28_python_client_answers_every_servers_questions_across_a_restart() {
    let v = python_through_loom(MODERN).await;
    assert_eq!(v["protocol_version"], MODERN);
    check_pairings(&v, MODERN);
}

/// `r` is an invalid-params error whose message says `why`.
fn refused(r: &Value, why: &str) {
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(why), "{r}");
}

/// A 2026-07-28 call of a tool whose legacy server asks for roots.
async fn ask_roots_call(c: &mut RawClient, extra: Value) -> Value {
    let mut params = json!({ "name": "t_ask_roots", "arguments": {},
        "_meta": modern_meta(json!({ "roots": {} })) });
    if let (Value::Object(p), Value::Object(extra)) = (&mut params, extra) {
        p.extend(extra);
    }
    c.request("tools/call", params).await
}

#[tokio::test]
async fn a_legacy_servers_question_reaches_a_2026_07_28_client_as_input_required_with_a_sealed_state()
 {
    let cfg = TempConfig::new(&testserver_entry("t", &[]));
    let mut c = RawClient::spawn(&cfg.path);
    let listed = c
        .request(
            "tools/list",
            json!({ "_meta": modern_meta(json!({ "roots": {} })) }),
        )
        .await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    let first = ask_roots_call(&mut c, json!({})).await;
    let res = &first["result"];
    assert_eq!(res["resultType"], "input_required", "{first}");
    let (key, ask) = res["inputRequests"]
        .as_object()
        .and_then(|m| m.iter().next())
        .expect("one question");
    assert_eq!(ask["method"], "roots/list");
    let state = res["requestState"].as_str().expect("state").to_owned();
    assert!(state.len() < 200, "size-bounded: {state}");
    let roots = json!({ "roots": [{ "uri": "file:///srv/project", "name": "project" }] });

    // Changed by one character: refused, and the call keeps waiting.
    let mut forged = state.clone().into_bytes();
    forged[3] = if forged[3] == b'a' { b'b' } else { b'a' };
    let forged = String::from_utf8(forged).unwrap();
    let r = ask_roots_call(
        &mut c,
        json!({ "requestState": forged, "inputResponses": { key.clone(): roots.clone() } }),
    )
    .await;
    refused(&r, "integrity");

    // No answer to the question: refused, and the call keeps waiting.
    let r = ask_roots_call(
        &mut c,
        json!({ "requestState": state, "inputResponses": {} }),
    )
    .await;
    refused(&r, key.as_str());

    // The real retry resumes the waiting call: the server gets the client's roots.
    let r = ask_roots_call(
        &mut c,
        json!({ "requestState": state, "inputResponses": { key.clone(): roots.clone() } }),
    )
    .await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert!(text_of(&r).contains("file:///srv/project"), "{r}");

    // The same state again: the call it named is over.
    let r = ask_roots_call(
        &mut c,
        json!({ "requestState": state, "inputResponses": { key.clone(): roots } }),
    )
    .await;
    refused(&r, "already");

    // One call in the log, however many rounds it took.
    let entry = session_entry(&cfg).await;
    let eng = RemoteEngine::connect(&entry).await.expect("attach");
    let Ok(Reply::Calls { calls }) = eng.request(Request::Calls { limit: 50 }).await else {
        panic!("calls")
    };
    let asked: Vec<_> = calls.iter().filter(|c| c.tool == "t_ask_roots").collect();
    assert_eq!(asked.len(), 1, "{calls:?}");

    // A person cancels a call while it waits for the client's answers: it ends as cancelled,
    // and the client's retry finds it gone.
    let second = ask_roots_call(&mut c, json!({})).await;
    let state = second["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_owned();
    let Ok(Reply::Calls { calls }) = eng.request(Request::Calls { limit: 50 }).await else {
        panic!("calls")
    };
    let parked = calls
        .iter()
        .filter(|c| c.tool == "t_ask_roots")
        .map(|c| c.call)
        .max()
        .expect("the parked call is listed");
    eng.request(Request::CancelCall { call: parked })
        .await
        .expect("cancel");
    let r = ask_roots_call(
        &mut c,
        json!({ "requestState": state, "inputResponses": { key.clone(): { "roots": [] } } }),
    )
    .await;
    refused(&r, "already");
    let Ok(Reply::Calls { calls }) = eng.request(Request::Calls { limit: 50 }).await else {
        panic!("calls")
    };
    let cancelled = calls.iter().find(|c| c.call == parked).expect("listed");
    assert_eq!(
        cancelled.outcome,
        loom::types::events::Outcome::Cancelled,
        "{cancelled:?}"
    );
}

#[tokio::test]
async fn a_2026_07_28_client_is_never_sent_a_request_and_roots_asked_outside_a_call_are_answered() {
    // server-filesystem asks for roots as soon as it starts when the client declared them.
    let sandbox = tempfile::tempdir().expect("sandbox");
    let cfg = TempConfig::new(&format!(
        "[[servers]]\nname = \"fs\"\ncommand = \"node\"\nargs = [{:?}, {:?}]\n",
        filesystem_js().display().to_string(),
        sandbox.path().display().to_string()
    ));
    let mut c = RawClient::spawn(&cfg.path);
    let caps = json!({ "roots": { "listChanged": true } });
    let listed = c
        .request("tools/list", json!({ "_meta": modern_meta(caps.clone()) }))
        .await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    let r = c
        .request(
            "tools/call",
            json!({ "name": "fs_list_allowed_directories", "arguments": {}, "_meta": modern_meta(caps) }),
        )
        .await;
    assert!(!is_error_result(&r), "{r}");
    // Nothing loom wrote to this client was a request of its own.
    let mut extra = Vec::new();
    while let Some(line) = c.next_line(Duration::from_millis(300)).await {
        extra.push(line);
    }
    assert!(
        !extra.iter().any(|l| l.contains("\"roots/list\"")),
        "{extra:?}"
    );
    assert!(
        !c.stderr.lock().unwrap().contains("roots/list timed out"),
        "the server waited in vain"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_clients_capabilities_reach_a_running_legacy_server_without_a_counted_restart() {
    let cfg = TempConfig::new(&testserver_entry("t", &[]));
    let mut a = RawClient::spawn(&cfg.path);
    a.initialize().await;
    a.tool_names().await;
    let r = a.call("t_caps", json!({})).await;
    assert_eq!(text_of(&r), "{}", "the first client declared nothing");
    let dir = cfg.dir.path().display().to_string();
    let mut b = RawClient::spawn_args(&["connect"], &[("XDG_RUNTIME_DIR", &dir)]);
    b.initialize_with(json!({ "roots": { "listChanged": true }, "sampling": {} }))
        .await;
    let seen = wait_until("the server to hear what client b can do", async || {
        let r = a.call("t_caps", json!({})).await;
        let caps: Value = serde_json::from_str(&text_of(&r)).ok()?;
        (caps.get("sampling").is_some() && caps.get("roots").is_some()).then_some(caps)
    })
    .await;
    assert_eq!(seen["roots"], json!({ "listChanged": true }));
    let entry = session_entry(&cfg).await;
    let eng = Arc::new(RemoteEngine::connect(&entry).await.expect("attach"));
    assert_eq!(state_of(&eng, "t").await, (ServerState::Up, 0));
    // The server's question during b's call reaches b, which can answer it.
    let id = b.next_request_id();
    b.send_raw(
        &json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": "t_ask_roots", "arguments": {} } })
        .to_string(),
    )
    .await;
    let ask: Value = serde_json::from_str(
        &b.wait_for(Duration::from_secs(10), |v| v["method"] == "roots/list")
            .await,
    )
    .unwrap();
    b.send_raw(
        &json!({ "jsonrpc": "2.0", "id": ask["id"],
            "result": { "roots": [{ "uri": "file:///b", "name": "b" }] } })
        .to_string(),
    )
    .await;
    let r: Value = serde_json::from_str(
        &b.wait_for(Duration::from_secs(10), |v| v["id"] == json!(id))
            .await,
    )
    .unwrap();
    assert!(text_of(&r).contains("file:///b"), "{r}");
}

/// Loom in front of the conformance fixture alone, as a legacy or a 2026-07-28 server.
fn fixture_config(legacy: bool) -> TempConfig {
    let extra = if legacy { ", \"--legacy-only\"" } else { "" };
    TempConfig::new(&format!(
        "[[servers]]\nname = \"x\"\ncommand = {LOOM:?}\nargs = [\"sample-server\", \"--conformance\"{extra}]\n"
    ))
}

/// A client on loom's stdio (`a`, whose servers are up) and a second one through
/// `loom connect` (`b`), both past their handshake.
async fn two_clients(cfg: &TempConfig) -> (RawClient, RawClient) {
    let mut a = RawClient::spawn(&cfg.path);
    a.initialize().await;
    a.tool_names().await;
    let dir = cfg.dir.path().display().to_string();
    let mut b = RawClient::spawn_args(&["connect"], &[("XDG_RUNTIME_DIR", &dir)]);
    b.initialize().await;
    (a, b)
}

/// One client's slow query does not hold up another's (issue 45, hole 8: client B's
/// `SELECT 42` waited 6.9 s behind client A's 8 s query): B is answered while A's query,
/// which runs until it is cancelled, still runs; then A's cancel stops it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_clients_slow_query_does_not_hold_up_anothers() {
    let cfg = TempConfig::new(&format!(
        "query_timeout = 600\n{}",
        testserver_entry("t", &[])
    ));
    let (mut a, mut b) = two_clients(&cfg).await;
    // An id of its own, apart from the ones the client numbers its requests with.
    let slow = "slow-1";
    a.send_raw(
        &json!({ "jsonrpc": "2.0", "id": slow, "method": "tools/call", "params": {
            "name": "loom_query",
            "arguments": { "sql": "SELECT count(*) AS n FROM range(1000000000000) r WHERE r.range % 7 = 3" } } })
        .to_string(),
    )
    .await;
    // A's query has long begun by the time B asks (it needs hours to end).
    tokio::time::sleep(Duration::from_secs(1)).await;
    let r: Value = serde_json::from_str(
        &b.request_raw(
            "tools/call",
            json!({ "name": "loom_query", "arguments": { "sql": "SELECT 42 AS v" } }),
            Duration::from_secs(60),
        )
        .await,
    )
    .unwrap();
    assert!(text_of(&r).contains("42"), "{r}");
    let early = drain(&mut a).await;
    assert!(
        !early
            .iter()
            .any(|l| l.contains(&format!("\"id\":\"{slow}\""))),
        "A's query ended before it was cancelled: {early:?}"
    );
    a.notify(
        "notifications/cancelled",
        json!({ "requestId": slow, "reason": "enough" }),
    )
    .await;
    // The cancelled query lets its lane go: A's next query runs.
    let r = a
        .call("loom_query", json!({ "sql": "SELECT 7 AS v" }))
        .await;
    assert!(text_of(&r).contains('7'), "{r}");
}

/// Every line a client was sent within a short quiet time.
async fn drain(c: &mut RawClient) -> Vec<String> {
    let mut lines = Vec::new();
    while let Some(line) = c.next_line(Duration::from_millis(400)).await {
        lines.push(line);
    }
    lines
}

/// Nothing `c` was sent within a short quiet time mentions `what`.
async fn hears_no(c: &mut RawClient, what: &str) {
    let heard = drain(c).await;
    assert!(!heard.iter().any(|l| l.contains(what)), "{heard:?}");
}

/// Two clients subscribe to one resource, one unsubscribes: the other still hears its
/// updates (the server kept the subscription), the one that left hears none, and so it stays
/// after the server starts again.
async fn one_clients_unsubscribe_leaves_anothers_subscription(legacy: bool) {
    let cfg = fixture_config(legacy);
    let (mut a, mut b) = two_clients(&cfg).await;
    let uri = "test://watched-resource";
    for c in [&mut a, &mut b] {
        let r = c
            .request("resources/subscribe", json!({ "uri": uri }))
            .await;
        assert!(r.get("result").is_some(), "{r}");
    }
    let r = a
        .request("resources/unsubscribe", json!({ "uri": uri }))
        .await;
    assert!(r.get("result").is_some(), "{r}");
    let r = b.call("x_test_trigger_resource_update", json!({})).await;
    assert!(!is_error_result(&r), "{r}");
    b.wait_for(Duration::from_secs(10), |v| {
        v["method"] == "notifications/resources/updated" && v["params"]["uri"] == uri
    })
    .await;
    // Exactly once for b; never for a.
    hears_no(&mut b, "resources/updated").await;
    hears_no(&mut a, "resources/updated").await;

    // The server starts again: loom subscribes anew, and b still hears.
    let entry = session_entry(&cfg).await;
    let eng = Arc::new(RemoteEngine::connect(&entry).await.expect("attach"));
    eng.request(Request::RestartServer { server: "x".into() })
        .await
        .expect("restart");
    wait_until("the restarted server to be up", async || {
        (state_of(&eng, "x").await.0 == ServerState::Up).then_some(())
    })
    .await;
    let r = b.call("x_test_trigger_resource_update", json!({})).await;
    assert!(!is_error_result(&r), "{r}");
    b.wait_for(Duration::from_secs(10), |v| {
        v["method"] == "notifications/resources/updated" && v["params"]["uri"] == uri
    })
    .await;
    hears_no(&mut a, "resources/updated").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_to_a_legacy_server_are_counted_across_clients() {
    one_clients_unsubscribe_leaves_anothers_subscription(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_to_a_2026_07_28_server_are_one_listen_stream_for_all_clients() {
    one_clients_unsubscribe_leaves_anothers_subscription(false).await;
}

/// Whenever a server comes up, on its first process or after a restart, its subscriptions are
/// renewed before its state is `Up`: a client that calls once it sees the server up cannot
/// cause an update the new process would not tell of.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_subscriptions_are_renewed_before_anyone_sees_it_up() {
    use loom::downstream::{Fleet, FleetEvent};
    // The process guard is loom's, not this test's executable.
    loom::downstream::stdio::set_loom_executable(LOOM.into());
    let cfg = fixture_config(false);
    let config = loom::config::Config::load(&cfg.path).expect("config");
    let seen = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink = seen.clone();
    let fleet = Fleet::start(
        Arc::new(config),
        loom::protocol::ClientCapabilities::default(),
        Arc::new(move |ev| {
            let what = match ev {
                FleetEvent::Renewed { .. } => "renewed".to_owned(),
                FleetEvent::State { state, .. } => state.label(),
                _ => return,
            };
            sink.lock().unwrap().push(what);
        }),
    );
    fleet.wait_startup().await;
    let up = |n: usize| {
        let seen = seen.clone();
        async move || {
            let ups = seen.lock().unwrap().iter().filter(|s| *s == "up").count();
            (ups == n).then_some(())
        }
    };
    wait_until("the server to be up", up(1)).await;
    fleet.restart("x").expect("restart");
    wait_until("the restarted server to be up", up(2)).await;
    let seen = seen.lock().unwrap().clone();
    for (i, s) in seen.iter().enumerate() {
        if s == "up" {
            assert!(i > 0 && seen[i - 1] == "renewed", "{seen:?}");
        }
    }
    fleet.shutdown().await;
}

/// A 2026-07-28 client's listen stream with `resourceSubscriptions`: loom accepts only the
/// URIs a server offers, subscribes them at that server (a legacy one by `resources/subscribe`,
/// a modern one by its own listen stream), relays the updates tagged with the stream's id, and
/// lets go when the client ends the stream.
async fn a_listen_streams_resource_subscriptions_reach_the_server(legacy: bool) {
    let cfg = fixture_config(legacy);
    let mut c = RawClient::spawn(&cfg.path);
    let meta = modern_meta(json!({}));
    let listed = c
        .request("tools/list", json!({ "_meta": meta.clone() }))
        .await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    let uri = "test://watched-resource";
    let id = c.next_request_id();
    c.send_raw(
        &json!({ "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
            "notifications": { "resourceSubscriptions": [uri, "nowhere://at-all"] },
            "_meta": meta.clone() } })
        .to_string(),
    )
    .await;
    let ack = c
        .wait_for(Duration::from_secs(20), |v| {
            v["method"] == "notifications/subscriptions/acknowledged"
        })
        .await;
    let ack: Value = serde_json::from_str(&ack).unwrap();
    assert_eq!(
        ack["params"]["notifications"]["resourceSubscriptions"],
        json!([uri]),
        "only what a server offers is accepted: {ack}"
    );
    let trigger =
        json!({ "name": "x_test_trigger_resource_update", "arguments": {}, "_meta": meta.clone() });
    let r = c.request("tools/call", trigger.clone()).await;
    assert!(!is_error_result(&r), "{r}");
    let update = c
        .wait_for(Duration::from_secs(10), |v| {
            v["method"] == "notifications/resources/updated" && v["params"]["uri"] == uri
        })
        .await;
    let update: Value = serde_json::from_str(&update).unwrap();
    assert_eq!(
        update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        json!(id),
        "{update}"
    );
    // The client ends the stream: no more updates.
    c.send_raw(
        &json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": id } })
            .to_string(),
    )
    .await;
    drain(&mut c).await;
    let r = c.request("tools/call", trigger).await;
    assert!(!is_error_result(&r), "{r}");
    hears_no(&mut c, "resources/updated").await;
}

/// `loom_call` carries a retry's `requestState` and `inputResponses` to a 2026-07-28 server as a
/// direct call does: its multi-round question loop ends.
#[tokio::test]
async fn loom_call_takes_a_modern_servers_rounds_to_the_end() {
    let cfg = fixture_config(false);
    let mut c = RawClient::spawn(&cfg.path);
    let meta = modern_meta(json!({ "elicitation": {} }));
    let call = |extra: Value| {
        let mut p = json!({ "name": "loom_call", "arguments": {
            "tool": "x_test_input_required_result_multi_round", "arguments": {} },
            "_meta": meta.clone() });
        if let (Value::Object(p), Value::Object(extra)) = (&mut p, extra) {
            p.extend(extra);
        }
        p
    };
    let r1 = c.request("tools/call", call(json!({}))).await;
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    let s1 = r1["result"]["requestState"].clone();
    let r2 = c
        .request(
            "tools/call",
            call(json!({ "requestState": s1, "inputResponses": {
                "step1": { "action": "accept", "content": { "name": "Alice" } } } })),
        )
        .await;
    assert!(r2["result"]["inputRequests"]["step2"].is_object(), "{r2}");
    let s2 = r2["result"]["requestState"].clone();
    let r3 = c
        .request(
            "tools/call",
            call(json!({ "requestState": s2, "inputResponses": {
                "step2": { "action": "accept", "content": { "color": "blue" } } } })),
        )
        .await;
    assert_eq!(
        r3["result"]["content"][0]["text"], "Alice's favorite color is blue.",
        "{r3}"
    );
}

/// loom over stdio in front of the TypeScript SDK reference server as an HTTP downstream
/// (`x`), which asks its questions on the call's SSE stream.
fn reference_config(reference: &NodeOverHttp) -> TempConfig {
    TempConfig::new(&format!(
        "[[servers]]\nname = \"x\"\nurl = \"http://127.0.0.1:{}/mcp\"\n",
        reference.port
    ))
}

/// A legacy client that declared sampling is asked the HTTP server's `sampling/createMessage`,
/// and its answer reaches the server, whose tool result says what the client's model said.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_servers_sampling_request_reaches_the_client_and_its_answer_the_server() {
    let reference = NodeOverHttp::reference().await;
    let cfg = reference_config(&reference);
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize_with(json!({ "sampling": {} })).await;
    c.tool_names().await;
    let id = c.next_request_id();
    c.send_raw(
        &json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                 "params": { "name": "x_test_sampling", "arguments": { "prompt": "Say hi" } } })
        .to_string(),
    )
    .await;
    let asked: Value = serde_json::from_str(
        &c.wait_for(Duration::from_secs(30), |v| {
            v["method"] == "sampling/createMessage"
        })
        .await,
    )
    .unwrap();
    assert_eq!(
        asked["params"]["messages"][0]["content"]["text"], "Say hi",
        "{asked}"
    );
    c.send_raw(
        &json!({ "jsonrpc": "2.0", "id": asked["id"], "result": {
            "role": "assistant", "model": "test-model", "stopReason": "endTurn",
            "content": { "type": "text", "text": "sampled-by-client" } } })
        .to_string(),
    )
    .await;
    let answer: Value = serde_json::from_str(
        &c.wait_for(Duration::from_secs(30), |v| {
            v["id"] == json!(id) && v.get("method").is_none()
        })
        .await,
    )
    .unwrap();
    assert_eq!(
        text_of(&answer),
        "LLM response: sampled-by-client",
        "{answer}"
    );
}

/// A legacy HTTP server asking a question during a 2026-07-28 request that did not declare
/// the capability it needs: the request fails with -32021 naming it, as a 2026-07-28 server
/// would fail it, instead of the server's tool failing on a -32601 from loom.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_the_request_did_not_declare_fails_it_with_32021() {
    let reference = NodeOverHttp::reference().await;
    let cfg = reference_config(&reference);
    let mut c = RawClient::spawn(&cfg.path);
    let call = |caps: Value| json!({ "name": "x_test_missing_capability", "arguments": {}, "_meta": modern_meta(caps) });
    let r = c.request("tools/call", call(json!({}))).await;
    assert_eq!(
        r["error"]["code"],
        json!(loom::protocol::MISSING_CLIENT_CAPABILITY),
        "{r}"
    );
    assert!(
        r["error"]["data"]["requiredCapabilities"]["sampling"].is_object(),
        "{r}"
    );
    // Declared, the same question becomes input_required.
    let r = c
        .request("tools/call", call(json!({ "sampling": {} })))
        .await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_streams_resource_subscriptions_reach_a_legacy_server() {
    a_listen_streams_resource_subscriptions_reach_the_server(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_streams_resource_subscriptions_reach_a_2026_07_28_server() {
    a_listen_streams_resource_subscriptions_reach_the_server(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_message_reaches_only_the_client_whose_call_it_is_at_its_level() {
    let cfg = fixture_config(true);
    let (mut a, mut b) = two_clients(&cfg).await;
    let r = a
        .request("logging/setLevel", json!({ "level": "debug" }))
        .await;
    assert!(r.get("result").is_some(), "{r}");
    let r = b
        .request("logging/setLevel", json!({ "level": "info" }))
        .await;
    assert!(r.get("result").is_some(), "{r}");
    drain(&mut a).await;
    // b's call logs three info messages: b hears them, a (whose level is lower) does not,
    // because the call is not a's.
    let r = b.call("x_test_tool_with_logging", json!({})).await;
    assert!(!is_error_result(&r), "{r}");
    let heard_by_b = drain(&mut b).await;
    let messages = heard_by_b
        .iter()
        .filter(|l| l.contains("notifications/message"))
        .count();
    assert_eq!(messages, 3, "{heard_by_b:?}");
    hears_no(&mut a, "notifications/message").await;
    // a raises its level past info: its own call's messages no longer reach it.
    let r = a
        .request("logging/setLevel", json!({ "level": "error" }))
        .await;
    assert!(r.get("result").is_some(), "{r}");
    let r = a.call("x_test_tool_with_logging", json!({})).await;
    assert!(!is_error_result(&r), "{r}");
    hears_no(&mut a, "notifications/message").await;
}

#[tokio::test]
async fn the_servers_guidance_is_in_the_primer_under_each_servers_name() {
    // The test server's instructions are the capabilities it was given, as JSON.
    let cfg = TempConfig::new(&testserver_entry("t", &[]));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize_with(json!({ "sampling": {} })).await;
    c.tool_names().await;
    let r = c.request("prompts/get", json!({ "name": "loom" })).await;
    let primer = r["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    // A text of one line is said once, as what the server is for.
    assert!(primer.contains("- t ("), "{primer}");
    assert!(primer.contains("tools): {\"sampling\": {}}\n"), "{primer}");
    assert!(!primer.contains("## t\n"), "{primer}");
}

/// A client may read `instructions` once: the handshake waits a moment for the servers
/// starting, so each one's own guidance is there, under its name, in config order, within a
/// fair share of one budget (a long text cut with `…`, a short one whole), control characters
/// gone; a server too slow for that moment is named as starting, and the answer does not wait
/// for it.
#[tokio::test]
async fn the_initialize_instructions_carry_each_servers_guidance_within_a_fair_share() {
    let dir = tempfile::tempdir().unwrap();
    let long = dir.path().join("long.md");
    let short = dir.path().join("short.md");
    let sentence = "Workbooks live in the data folder; use paths relative to it. ";
    std::fs::write(
        &long,
        format!("# Excel server\n\n\u{1b}[32m{}", sentence.repeat(200)),
    )
    .unwrap();
    std::fs::write(
        &short,
        "Read-only. DuckDB dialect.\nAttach files with read_parquet(path).",
    )
    .unwrap();
    let slow = format!("sleep 30; exec {LOOM:?} sample-server");
    let cfg = TempConfig::new(&format!(
        "{}{}[[servers]]\nname = \"late\"\ncommand = \"sh\"\nargs = [\"-c\", {slow:?}]\n",
        testserver_entry("xl", &["--instructions", &long.display().to_string()]),
        testserver_entry("duck", &["--instructions", &short.display().to_string()]),
    ));
    let mut c = RawClient::spawn(&cfg.path);
    let asked = std::time::Instant::now();
    let init = c.initialize().await;
    let waited = asked.elapsed();
    let text = init["result"]["instructions"].as_str().unwrap_or_default();
    assert!(
        waited < Duration::from_secs(20),
        "the handshake waited {waited:?} for a server that takes 30 s"
    );
    assert!(text.contains("- late (starting)\n"), "{text}");
    // Named with what it is for, its first sentence past the heading and the escape.
    assert!(
        text.contains(") Workbooks live in the data folder; use paths relative to it.\n")
            || text
                .contains("- xl: Workbooks live in the data folder; use paths relative to it.\n"),
        "{text}"
    );
    let (xl, duck) = (
        text.find("## xl\n").expect("xl's guidance"),
        text.find("## duck\n").unwrap_or_else(|| panic!("{text}")),
    );
    assert!(xl < duck, "config order: {text}");
    // The short text whole, the long one cut to what the short one left, on a boundary.
    assert!(
        text.contains(
            "## duck\nRead-only. DuckDB dialect.\nAttach files with read_parquet(path).\n"
        ),
        "{text}"
    );
    let xl_part = &text[xl..duck];
    assert!(xl_part.contains("### Excel server\n"), "{xl_part}");
    assert!(xl_part.contains(sentence.trim()), "{xl_part}");
    assert!(xl_part.trim_end().ends_with('…'), "{xl_part}");
    assert!(
        xl_part.len() < sentence.len() * 200 / 3,
        "the long text is cut: {} bytes",
        xl_part.len()
    );
    assert!(
        !text.chars().any(|ch| ch.is_control() && ch != '\n'),
        "{text:?}"
    );
    assert!(!text.contains("[32m"), "{text:?}");
}

/// `loom sample-server`, on rmcp's server API, speaks to each era as it did on loom's own
/// JSON-RPC layer: the same tools, integer progress, no `isError` on a success, and a
/// cancelled count that never answers.
#[tokio::test]
async fn the_sample_server_on_rmcp_answers_both_eras_as_before() {
    let fixture = common::root().join("tests/fixtures/sample-tools.json");
    let before: Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    // The library's own list is the one served.
    assert_eq!(
        serde_json::to_value(loom::sample_server::tools()).unwrap(),
        before
    );

    let mut legacy = RawClient::spawn_args(&["sample-server"], &[]);
    let init = legacy.initialize().await;
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "loom-sample");
    assert_eq!(
        init["result"]["capabilities"]["tools"],
        json!({ "listChanged": false })
    );
    let listed = legacy.request("tools/list", json!({})).await;
    assert_eq!(listed["result"]["tools"], before, "{listed}");
    assert!(listed["result"].get("resultType").is_none(), "{listed}");
    let ok = legacy.call("get_weather", json!({ "city": "Porto" })).await;
    assert_eq!(
        ok["result"],
        json!({ "content": [{ "type": "text", "text": "Porto: 13°C, light rain, humidity 45%" }] })
    );
    let bad = legacy.call("list_orders", json!({ "limit": 0 })).await;
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert_eq!(
        text_of(&bad),
        "`limit` must be an integer between 1 and 100000"
    );
    let unknown = legacy.call("nope", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let id = legacy.next_request_id();
    legacy
        .send_raw(
            &json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "slow_count", "arguments": { "steps": 3, "delay_ms": 0 },
                "_meta": { "progressToken": "tok" } } })
            .to_string(),
        )
        .await;
    let mut progress = Vec::new();
    loop {
        let line = legacy
            .next_line(Duration::from_secs(30))
            .await
            .expect("line");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["method"] == "notifications/progress" {
            assert!(!line.contains("\"progress\":1.0"), "{line}");
            assert_eq!(v["params"]["progressToken"], "tok");
            progress.push(v["params"]["progress"].as_u64().expect("an integer"));
        } else if v["id"] == json!(id) {
            assert_eq!(text_of(&v), "counted to 3");
            break;
        }
    }
    assert_eq!(progress, vec![1, 2, 3]);

    // 2026-07-28: discovery, then requests that carry the revision in `_meta`.
    let meta = json!({ "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {} });
    let mut modern = RawClient::spawn_args(&["sample-server"], &[]);
    let d = modern
        .request("server/discover", json!({ "_meta": meta }))
        .await;
    assert!(
        d["result"]["supportedVersions"]
            .as_array()
            .is_some_and(|v| v.contains(&json!(MODERN))),
        "{d}"
    );
    assert_eq!(d["result"]["cacheScope"], "public", "{d}");
    assert_eq!(
        d["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "loom-sample"
    );
    let r = modern
        .request(
            "tools/call",
            json!({ "name": "get_weather", "arguments": { "city": "Rome" }, "_meta": meta }),
        )
        .await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert!(text_of(&r).starts_with("Rome: "), "{r}");
    // A cancelled count never answers; the next call does.
    let counting = 9000;
    modern
        .send_raw(
            &json!({ "jsonrpc": "2.0", "id": counting, "method": "tools/call", "params": {
                "name": "slow_count", "arguments": { "steps": 1000, "delay_ms": 50 }, "_meta": meta } })
            .to_string(),
        )
        .await;
    modern
        .notify(
            "notifications/cancelled",
            json!({ "requestId": counting, "reason": "test" }),
        )
        .await;
    let after = modern
        .request(
            "tools/call",
            json!({ "name": "get_weather", "arguments": { "city": "Oslo" }, "_meta": meta }),
        )
        .await;
    assert!(text_of(&after).starts_with("Oslo: "), "{after}");
    modern.close_stdin();
    assert!(modern.wait_exit(Duration::from_secs(30)).await);
    while let Some(line) = modern.next_line(Duration::from_millis(10)).await {
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_ne!(
            v["id"],
            json!(counting),
            "a cancelled call answered: {line}"
        );
    }
}

/// A 2026-07-28 server started late, as a cold `uvx` start is: past the 10 s loom used to wait
/// for `server/discover` before sending `initialize` on the same connection (which a modern
/// server on the Python SDK refuses, -32022; this fixture would answer it as legacy). Loom
/// waits for the discover answer, so the server comes up in its own era; the primer then says
/// what it is for; and this legacy client's results carry none of 2026-07-28's members.
#[tokio::test]
async fn a_slow_2026_07_28_server_comes_up_in_its_era_and_answers_a_legacy_client_in_the_clients() {
    let command = format!("sleep 12; exec {LOOM:?} sample-server --conformance");
    let cfg = TempConfig::new(&format!(
        "startup_grace = 120\n[[servers]]\nname = \"slow\"\ncommand = \"sh\"\nargs = [\"-c\", {command:?}]\nhandshake_timeout = 40\n"
    ));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    let names = listed_tools(&mut c).await;
    assert!(
        names.contains(&"slow_test_simple_text".to_owned()),
        "{names:?}\n{}",
        c.stderr.lock().unwrap()
    );
    let entry = session_entry(&cfg).await;
    let eng = RemoteEngine::connect(&entry).await.expect("attach");
    let Ok(Reply::Servers { servers }) = eng.request(Request::Servers).await else {
        panic!("servers")
    };
    let slow = servers.iter().find(|s| s.name == "slow").expect("server");
    assert_eq!(slow.version.as_deref(), Some(MODERN), "{slow:?}");
    let r = c.request("prompts/get", json!({ "name": "loom" })).await;
    let primer = r["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        primer.contains("tools): The MCP conformance suite's fixtures.\n"),
        "{primer}"
    );
    let line = c
        .request_raw(
            "tools/call",
            json!({ "name": "slow_test_simple_text", "arguments": {} }),
            Duration::from_secs(30),
        )
        .await;
    let r: Value = serde_json::from_str(&line).expect("JSON");
    assert!(!text_of(&r).is_empty(), "{line}");
    for modern in ["resultType", "io.modelcontextprotocol/serverInfo"] {
        assert!(!line.contains(modern), "{modern} in {line}");
    }
}

/// The servers' tools, waiting as long as a slow start may take on a loaded machine.
async fn listed_tools(c: &mut RawClient) -> Vec<String> {
    let line = c
        .request_raw("tools/list", json!({}), Duration::from_secs(120))
        .await;
    let r: Value = serde_json::from_str(&line).expect("JSON");
    r["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .filter(|n| !n.starts_with("loom_"))
        .map(str::to_owned)
        .collect()
}

/// A legacy server that answers nothing before `initialize` leaves `server/discover`
/// unanswered: loom never sends `initialize` after it on the same connection (a slow modern
/// server would refuse it), but starts a fresh process with `initialize` alone, and the server
/// comes up.
#[tokio::test]
async fn a_server_silent_to_discover_comes_up_on_a_fresh_process_with_initialize() {
    let cfg = TempConfig::new(&format!(
        "startup_grace = 120\n{}handshake_timeout = 10\n",
        testserver_entry("q", &["--quiet-before-init"])
    ));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    let names = listed_tools(&mut c).await;
    let log = c.stderr.lock().unwrap().clone();
    assert!(names.contains(&"q_echo".to_owned()), "{names:?}\n{log}");
    assert!(
        log.contains("no answer to server/discover within 10.0s (handshake_timeout); starting it again to try the initialize handshake on a fresh process"),
        "{log}"
    );
    let r = c.call("q_echo", json!({ "x": 1 })).await;
    assert!(!is_error_result(&r), "{r}");
}
