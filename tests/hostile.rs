//! Hostile downstream servers (tests/fixtures/hostile_server.py, plain stdin/stdout) driven
//! through the real `loom serve`: a server that breaks the protocol fails fast and clearly,
//! and never costs a client the full call or handshake timeout.

mod common;

use common::*;
use serde_json::json;
use std::time::{Duration, Instant};

/// TOML for one stdio server running the hostile server in `mode` with `flags`, then `extra`.
fn hostile_entry(name: &str, mode: &str, flags: &[&str], extra: &str) -> String {
    let script = root().join("tests/fixtures/hostile_server.py");
    let mut args = vec![
        format!("{:?}", script.display().to_string()),
        format!("{mode:?}"),
    ];
    args.extend(flags.iter().map(|f| format!("{f:?}")));
    format!(
        "[[servers]]\nname = \"{name}\"\ncommand = \"python3\"\nargs = [{}]\n{extra}\n",
        args.join(", ")
    )
}

fn read_pid(path: &std::path::Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[tokio::test]
async fn a_server_that_closes_stdout_but_lives_fails_at_once_and_is_restarted() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let pid_arg = pid_file.display().to_string();
    let cfg = TempConfig::new(&hostile_entry(
        "h",
        "closeout",
        &["--pid-file", &pid_arg],
        "call_timeout = 120\nrestart_backoff = 0.1\n",
    ));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    assert!(c.tool_names().await.contains(&"h_close_stdout".to_owned()));
    let first = read_pid(&pid_file).expect("the server wrote its pid");
    let started = Instant::now();
    let r = c.call("h_close_stdout", json!({})).await;
    assert!(is_error_result(&r), "{r}");
    assert!(text_of(&r).contains("closed its stdout"), "{r}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the call waited {:?}, as if for call_timeout",
        started.elapsed()
    );
    // The live server is killed, not left running with no way to reach it.
    wait_until(
        "the server that closed its stdout to be killed",
        async || (!alive(first)).then_some(()),
    )
    .await;
    // It failed like a crash: logged, and started again.
    wait_until("the restarted server to answer", async || {
        let r = c.call("h_echo", json!({ "x": 1 })).await;
        (!is_error_result(&r)).then_some(())
    })
    .await;
    assert_ne!(read_pid(&pid_file), Some(first), "a new process serves");
    let log = c.stderr.lock().unwrap().clone();
    assert!(
        log.contains("server failed") && log.contains("closed its stdout"),
        "{log}"
    );
}

#[tokio::test]
async fn a_reply_that_is_not_utf8_fails_its_call_at_once_and_is_never_passed_on_altered() {
    let cfg = TempConfig::new(&hostile_entry("h", "badutf8", &[], "call_timeout = 120\n"));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    let started = Instant::now();
    let r = c.call("h_bad_utf8", json!({})).await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the call waited {:?}, as if for call_timeout",
        started.elapsed()
    );
    assert!(is_error_result(&r), "{r}");
    let text = text_of(&r);
    assert!(
        text.contains("server `h` replied with text that is not valid UTF-8"),
        "{r}"
    );
    assert!(!text.contains("no answer within"), "{r}");
    assert!(
        !r.to_string().contains("bytes") && !r.to_string().contains('\u{fffd}'),
        "the altered reply is not passed on: {r}"
    );
    // The server itself is fine: its next call works.
    let r = c.call("h_echo", json!({ "after": 1 })).await;
    assert!(text_of(&r).contains("after"), "{r}");
}

#[tokio::test]
async fn a_null_initialize_result_fails_the_handshake_at_once() {
    let cfg = TempConfig::new(&hostile_entry(
        "h",
        "nullinit",
        &[],
        "handshake_timeout = 120\nmax_restarts = 0\n",
    ));
    let started = Instant::now();
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    let log = c.stderr.clone();
    wait_until("the handshake failure in the log", async || {
        let log = log.lock().unwrap().clone();
        log.contains("server failed: server answered initialize with null instead of an object")
            .then_some(())
    })
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the handshake failed only after {:?}, as if it waited out handshake_timeout",
        started.elapsed()
    );
    assert!(
        !log.lock()
            .unwrap()
            .contains("not a request, notification or response"),
        "the null result was taken for a response"
    );
}

#[tokio::test]
async fn garbage_on_stdout_is_logged_ten_times_then_counted() {
    let cfg = TempConfig::new(&hostile_entry(
        "h",
        "garbagestorm",
        &["--lines", "5000"],
        "",
    ));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    // The server wrote its garbage before reading this call, so loom has read all of it.
    let r = c.call("h_echo", json!({ "x": 1 })).await;
    assert!(text_of(&r).contains("echo"), "{r}");
    c.close_stdin();
    assert!(c.wait_exit(Duration::from_secs(30)).await);
    let log = c.stderr.lock().unwrap().clone();
    let one_by_one = log
        .lines()
        .filter(|l| l.contains("ignoring a line that is not JSON-RPC"))
        .count();
    assert_eq!(one_by_one, 10, "{log}");
    assert!(
        log.contains("further messages loom ignores from this server are counted"),
        "{log}"
    );
    // What was not logged one by one is still counted, at the latest when the server stops.
    assert!(
        log.contains("ignored 4990 more messages"),
        "the count of the other lines is missing: {log}"
    );
}

#[tokio::test]
async fn a_tool_nested_too_deep_to_read_drops_only_itself() {
    let cfg = TempConfig::new(&hostile_entry("h", "listing", &[], ""));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    let names = c.tool_names().await;
    assert!(
        names.contains(&"h_echo".to_owned()) && names.contains(&"h_after_deep".to_owned()),
        "the server's valid tools are listed: {names:?}"
    );
    assert!(!names.contains(&"h_deep".to_owned()), "{names:?}");
    let log = c.stderr.lock().unwrap().clone();
    assert!(
        log.contains("`deep` could not be read (recursion limit exceeded"),
        "{log}"
    );
    assert!(!log.contains("result is not JSON"), "{log}");
}

#[tokio::test]
async fn a_listing_keeps_one_tool_per_name_and_every_tool_has_a_schema() {
    let cfg = TempConfig::new(&hostile_entry("h", "listing", &[], ""));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    let r = c.request("tools/list", json!({})).await;
    let tools = r["result"]["tools"].as_array().expect("tools").clone();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    let mut ours: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| n.starts_with("h_"))
        .collect();
    ours.sort_unstable();
    assert_eq!(ours, ["h_after_deep", "h_echo", "h_no_schema"], "{names:?}");
    // No exposed name twice, and the first definition wins.
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(
        unique.len(),
        names.len(),
        "a name is listed twice: {names:?}"
    );
    let tool = |n: &str| tools.iter().find(|t| t["name"] == n).unwrap().clone();
    assert_eq!(tool("h_echo")["description"], "echo");
    // Every tool has the object inputSchema MCP requires.
    assert!(
        tools.iter().all(|t| t["inputSchema"]["type"] == "object"),
        "{tools:?}"
    );
    assert_eq!(
        tool("h_no_schema")["inputSchema"],
        json!({ "type": "object" })
    );
    let log = c.stderr.lock().unwrap().clone();
    for said in [
        "tool `echo` is listed more than once; only the first is kept",
        "tool `no_schema` has no inputSchema object",
        "tools/list: left out 4 entries of `tools`: 1 not a JSON object; 2 without a string `name`;",
    ] {
        assert!(log.contains(said), "missing {said:?} in:\n{log}");
    }
    // Asking again does not say it all again.
    c.request("tools/list", json!({})).await;
    let log = c.stderr.lock().unwrap().clone();
    assert_eq!(log.matches("is listed more than once").count(), 1, "{log}");
}
