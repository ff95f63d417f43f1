//! The session socket and the human in the loop, end to end: `loom serve` driven by a real
//! MCP client over stdio, workbenches attached through the socket (the Engine API over
//! `loom/…` methods), approvals decided by an attacher, and the one-shot CLI commands.

mod common;

use common::{
    LOOM, RawClient, TempConfig, decide, is_error_result, next_approval, sample_config,
    session_entry, text_of, wait_until,
};
use loom::frontend::engine::{Engine, Reply, Request};
use loom::frontend::socket::{RemoteEngine, SessionEntry};
use loom::session::Event;
use loom::session::approvals::Decision;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

async fn started(cfg: &TempConfig) -> (RawClient, SessionEntry) {
    let mut client = RawClient::spawn(&cfg.path);
    client.initialize().await;
    let names = client.tool_names().await;
    assert!(
        names.iter().any(|n| n == "sample_cancel_order"),
        "{names:?}"
    );
    let entry = session_entry(cfg).await;
    (client, entry)
}

/// Collects call events from a feed until `n` finished calls were seen.
async fn call_events(feed: &mut loom::frontend::engine::EventFeed, n: usize) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    let mut finished = 0;
    while finished < n {
        let ev = tokio::time::timeout(Duration::from_secs(30), feed.live.recv())
            .await
            .expect("events in time")
            .expect("feed open");
        match &ev.event {
            Event::CallStarted(c) => out.push((ev.seq, format!("start {} {}", c.call, c.tool))),
            Event::CallFinished(c) => {
                finished += 1;
                out.push((ev.seq, format!("end {} {} {}", c.call, c.tool, c.outcome)))
            }
            _ => {}
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_attachers_and_a_model_client_see_the_same_events_in_the_same_order() {
    let cfg = sample_config("", "");
    let (mut client, entry) = started(&cfg).await;
    let a = RemoteEngine::connect(&entry).await.expect("attach a");
    let b = RemoteEngine::connect(&entry).await.expect("attach b");
    let mut fa = a.events(true);
    let mut fb = b.events(true);
    // Let both subscriptions settle before the calls.
    assert!(matches!(
        a.request(Request::Servers).await,
        Ok(Reply::Servers { .. })
    ));
    assert!(matches!(
        b.request(Request::Servers).await,
        Ok(Reply::Servers { .. })
    ));
    for city in ["Lisbon", "Porto", "Faro"] {
        let r = client
            .call("sample_get_weather", json!({ "city": city }))
            .await;
        assert!(!is_error_result(&r), "{r}");
    }
    let ea = call_events(&mut fa, 3).await;
    let eb = call_events(&mut fb, 3).await;
    assert_eq!(ea, eb);
    assert_eq!(ea.len(), 6, "{ea:?}");
    assert!(
        ea.windows(2).all(|w| w[0].0 < w[1].0),
        "in sequence order: {ea:?}"
    );

    // A crashed attacher (its connection dropped mid-stream) never disturbs the model.
    drop(fa);
    drop(a);
    let r = client
        .call("sample_get_weather", json!({ "city": "Braga" }))
        .await;
    assert!(!is_error_result(&r), "{r}");
    // The backlog: a late attacher sees the earlier calls.
    let c = RemoteEngine::connect(&entry).await.expect("attach c");
    let mut fc = c.events(false);
    let late = call_events(&mut fc, 4).await;
    assert_eq!(late.iter().filter(|e| e.1.starts_with("end")).count(), 4);
    drop(fb);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attached_workbench_queries_and_exports_through_the_socket() {
    let cfg = sample_config("", "");
    let (mut client, entry) = started(&cfg).await;
    let r = client.call("sample_list_orders", json!({})).await;
    let dataset = r["result"]["structuredContent"]["ref"]
        .as_str()
        .expect("intercepted")
        .to_owned();
    let eng = RemoteEngine::connect(&entry).await.expect("attach");
    let Ok(Reply::Datasets { datasets }) = eng.request(Request::Datasets).await else {
        panic!("datasets")
    };
    assert!(datasets.iter().any(|d| d.dataset == dataset));
    let Ok(Reply::Query { result }) = eng
        .request(Request::Query {
            sql: format!("SELECT count(*) AS n FROM {dataset}"),
        })
        .await
    else {
        panic!("query")
    };
    let rows_of = |table: &str| {
        eng.request(Request::Rows {
            table: table.to_owned(),
            offset: 0,
            limit: 10,
        })
    };
    let Ok(Reply::Rows { rows }) = rows_of(&result.table).await else {
        panic!("rows")
    };
    let n: u64 = rows[0][0].as_deref().unwrap().parse().unwrap();
    assert!(n >= 100);
    // Another attacher's queries never push this one's result out, and its own go when it
    // leaves.
    let other = RemoteEngine::connect(&entry).await.expect("attach another");
    let mut theirs = String::new();
    for i in 0..9 {
        let Ok(Reply::Query { result }) = other
            .request(Request::Query {
                sql: format!("SELECT {i} AS i"),
            })
            .await
        else {
            panic!("their query")
        };
        theirs = result.table;
    }
    assert!(matches!(
        rows_of(&result.table).await,
        Ok(Reply::Rows { .. })
    ));
    assert!(matches!(rows_of(&theirs).await, Ok(Reply::Rows { .. })));
    drop(other);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        match rows_of(&theirs).await {
            Err(loom::frontend::engine::EngineError::Dropped(why)) => {
                assert!(why.contains("closed"), "{why}");
                break;
            }
            other => assert!(
                std::time::Instant::now() < deadline,
                "a closed attacher's result is still kept: {other:?}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Hostile SQL through the socket is refused like the model's.
    let err = eng
        .request(Request::Query {
            sql: "INSTALL httpfs".into(),
        })
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("not allowed"), "{err}");
    // Errors keep their kind across the socket: a result that is gone is told apart from a
    // refusal without reading its words.
    let gone = eng
        .request(Request::Rows {
            table: "_loom_result_999999".into(),
            offset: 0,
            limit: 10,
        })
        .await
        .unwrap_err();
    assert!(
        matches!(gone, loom::frontend::engine::EngineError::Unknown(_)),
        "{gone:?}"
    );
    let refused = eng
        .request(Request::Query {
            sql: "INSTALL httpfs".into(),
        })
        .await
        .unwrap_err();
    assert!(
        matches!(refused, loom::frontend::engine::EngineError::Failed(_)),
        "{refused:?}"
    );

    // The one-shot commands against the same running session.
    let dir = cfg.dir.path().display().to_string();
    let out = std::process::Command::new(LOOM)
        .env("XDG_RUNTIME_DIR", &dir)
        .args([
            "query",
            &format!("SELECT count(*) AS n FROM {dataset}"),
            "--format",
            "csv",
        ])
        .output()
        .expect("loom query");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("n\n{n}\n"));
    let file = cfg.file("orders.json");
    let out = std::process::Command::new(LOOM)
        .env("XDG_RUNTIME_DIR", &dir)
        .args([
            "export",
            &entry.pid.to_string(),
            &dataset,
            "--format",
            "json",
            "-o",
        ])
        .arg(&file)
        .output()
        .expect("loom export");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v.as_array().map(Vec::len), Some(n as usize));
    // Never overwrites.
    let out = std::process::Command::new(LOOM)
        .env("XDG_RUNTIME_DIR", &dir)
        .args(["export", &dataset, "-o"])
        .arg(&file)
        .output()
        .expect("loom export");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("never overwrites"));
    // `loom sessions` lists this one.
    let out = std::process::Command::new(LOOM)
        .env("XDG_RUNTIME_DIR", &dir)
        .arg("sessions")
        .output()
        .expect("loom sessions");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&entry.pid.to_string()) && text.contains("sample"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_sockets_are_found_and_removed() {
    let cfg = sample_config("", "");
    let dir = cfg.dir.path().join("loom");
    std::fs::create_dir_all(&dir).unwrap();
    // A session that died without cleaning up: its socket and description remain.
    let dead = 999_999u32;
    let sock = dir.join(format!("{dead}.sock"));
    let listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    drop(listener);
    let entry = SessionEntry {
        pid: dead,
        config: "gone.toml".into(),
        started_at: "2026-01-01T00:00:00Z".into(),
        servers: vec![],
        socket: sock.clone(),
        kind: "serve".into(),
        http: None,
    };
    std::fs::write(
        dir.join(format!("{dead}.json")),
        serde_json::to_vec(&entry).unwrap(),
    )
    .unwrap();
    // The HTTP token file an older loom wrote, for this session and one of another dead one;
    // a file of a live process stays.
    let tokens = [dead, dead - 1].map(|pid| dir.join(format!("{pid}.token")));
    for t in &tokens {
        std::fs::write(t, "secret").unwrap();
    }
    let live = dir.join(format!("{}.token", std::process::id()));
    std::fs::write(&live, "secret").unwrap();
    let out = std::process::Command::new(LOOM)
        .env("XDG_RUNTIME_DIR", cfg.dir.path())
        .arg("sessions")
        .output()
        .expect("loom sessions");
    assert!(String::from_utf8_lossy(&out.stdout).contains("no loom session is running"));
    assert!(!sock.exists(), "stale socket removed");
    assert!(!dir.join(format!("{dead}.json")).exists());
    for t in &tokens {
        assert!(!t.exists(), "stale token file {} removed", t.display());
    }
    assert!(live.exists(), "a live process's file stays");
    // `loom connect` with nothing running fails with a clear message.
    let out = std::process::Command::new(LOOM)
        .env("XDG_RUNTIME_DIR", cfg.dir.path())
        .arg("connect")
        .output()
        .expect("loom connect");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no loom session is running"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workbench_of_another_protocol_version_is_told_both_versions() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let cfg = sample_config("", "");
    let (_client, entry) = started(&cfg).await;
    let mut s = tokio::net::UnixStream::connect(&entry.socket)
        .await
        .unwrap();
    s.write_all(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"loom/hello\",\"params\":{\"protocol\":99}}\n",
    )
    .await
    .unwrap();
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).await.unwrap();
    assert!(
        line.contains(&format!(
            "speaks version {}",
            loom::frontend::engine::WORKBENCH_PROTOCOL
        )) && line.contains("version 99"),
        "{line}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_of_another_user_is_refused_whatever_the_file_modes() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    assert_eq!(
        euid, 0,
        "this test runs a second user id and needs root (CI runs as root)"
    );
    let cfg = sample_config("", "");
    let (_client, entry) = started(&cfg).await;
    // Open every door the file system has: only the peer check is left.
    for p in [cfg.dir.path(), &cfg.dir.path().join("loom")] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(&entry.socket, std::fs::Permissions::from_mode(0o777)).unwrap();
    let script = format!(
        "import socket\ns=socket.socket(socket.AF_UNIX)\ns.connect({:?})\nprint(s.makefile().readline())",
        entry.socket.display().to_string()
    );
    let out = std::process::Command::new("python3")
        .args(["-c", &script])
        .uid(65534)
        .gid(65534)
        .output()
        .expect("run as nobody");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("belongs to another user"),
        "stdout {text} stderr {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("\"result\""));
}

async fn attacher(entry: &SessionEntry) -> (Arc<RemoteEngine>, loom::frontend::engine::EventFeed) {
    let eng = RemoteEngine::connect(entry).await.expect("attach");
    let feed = eng.events(true);
    assert!(matches!(
        eng.request(Request::Servers).await,
        Ok(Reply::Servers { .. })
    ));
    (eng, feed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_approve_once_for_the_session_and_deny_with_a_reason() {
    let cfg = sample_config("", "");
    let (client, entry) = started(&cfg).await;
    let (eng, mut feed) = attacher(&entry).await;
    let client = Arc::new(tokio::sync::Mutex::new(client));
    let call = |order: u64| {
        let c = client.clone();
        tokio::spawn(async move {
            c.lock()
                .await
                .call("sample_cancel_order", json!({ "order_id": order }))
                .await
        })
    };
    // Once.
    let pending = call(1);
    let req = next_approval(&mut feed).await;
    assert_eq!(req.original, "cancel_order");
    assert_eq!(req.arguments, json!({ "order_id": 1 }));
    assert_eq!(req.annotations["destructiveHint"], json!(true));
    decide(&*eng, req.approval, Decision::Once).await;
    let r = pending.await.unwrap();
    assert!(!is_error_result(&r), "{r}");
    // Denied with a reason: the model gets isError and the reason.
    let pending = call(2);
    let req = next_approval(&mut feed).await;
    decide(
        &*eng,
        req.approval,
        Decision::Deny {
            reason: Some("not during the demo".into()),
        },
    )
    .await;
    let r = pending.await.unwrap();
    assert!(is_error_result(&r), "{r}");
    assert!(
        text_of(&r).contains("denied by a human: not during the demo"),
        "{r}"
    );
    // For the session: asked once, then never again.
    let pending = call(3);
    let req = next_approval(&mut feed).await;
    decide(&*eng, req.approval, Decision::Session).await;
    assert!(!is_error_result(&pending.await.unwrap()));
    let r = call(4).await.unwrap();
    assert!(!is_error_result(&r), "{r}");
    // Every decision is in the call log with who decided.
    let Ok(Reply::Calls { calls }) = eng.request(Request::Calls { limit: 100 }).await else {
        panic!("calls")
    };
    let decisions: Vec<(String, Option<String>)> = calls
        .iter()
        .filter(|c| c.tool == "sample_cancel_order")
        .map(|c| (c.outcome.to_string(), c.decision.clone()))
        .collect();
    assert_eq!(decisions.len(), 4, "{decisions:?}");
    // The person reading the log learns at which terminal each was decided.
    let at = format!("(at loom attach, pid {}", std::process::id());
    let decided = |i: usize| decisions[i].1.clone().unwrap_or_default();
    assert!(
        decided(0).starts_with("approved once by a human ") && decided(0).contains(&at),
        "{decisions:?}"
    );
    assert_eq!(decisions[1].0, "denied");
    assert!(
        decided(1).starts_with("denied by a human: not during the demo ")
            && decided(1).contains(&at),
        "{decisions:?}"
    );
    assert!(
        decided(2).starts_with("approved for the session by a human ") && decided(2).contains(&at),
        "{decisions:?}"
    );
    // Asked once, then allowed for the session without waiting again.
    assert_eq!(
        decisions[3].1.as_deref(),
        Some("approved for the session by a human")
    );
    let waits: Vec<Option<u64>> = calls
        .iter()
        .filter(|c| c.tool == "sample_cancel_order")
        .map(|c| c.waited_millis)
        .collect();
    assert!(waits[..3].iter().all(Option::is_some), "{waits:?}");
    assert_eq!(waits[3], None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_time_out_follow_unattended_and_policy_deny_always_holds() {
    // A human attached who never answers: denied at approval_timeout.
    let cfg = sample_config("approval_timeout = 1", "");
    let (mut client, entry) = started(&cfg).await;
    let (_eng, mut feed) = attacher(&entry).await;
    let r = client
        .call("sample_cancel_order", json!({ "order_id": 1 }))
        .await;
    assert!(
        is_error_result(&r) && text_of(&r).contains("approval_timeout"),
        "{r}"
    );
    // It was put to the person first, and withdrawn when the time was up.
    let req = next_approval(&mut feed).await;
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(30), feed.live.recv())
            .await
            .expect("the approval settled in time")
            .expect("feed open");
        if let Event::ApprovalSettled {
            approval, decision, ..
        } = ev.event
            && approval == req.approval
        {
            assert_eq!(decision, "timed out");
            break;
        }
    }

    // Nobody attached: `unattended = "deny"` denies at once; the default allows.
    let cfg = sample_config("unattended = \"deny\"", "");
    let (mut client, _) = started(&cfg).await;
    let r = client
        .call("sample_cancel_order", json!({ "order_id": 1 }))
        .await;
    assert!(
        is_error_result(&r) && text_of(&r).contains("unattended = \"deny\""),
        "{r}"
    );
    let cfg = sample_config("", "");
    let (mut client, _) = started(&cfg).await;
    let r = client
        .call("sample_cancel_order", json!({ "order_id": 1 }))
        .await;
    assert!(!is_error_result(&r), "{r}");

    // approve.deny holds even when nobody is attached and unattended allows; approve.ask
    // makes a read-only tool ask.
    let cfg = sample_config(
        "",
        "approve.deny = [\"cancel_*\"]\napprove.ask = [\"get_weather\"]\n",
    );
    let (mut client, entry) = started(&cfg).await;
    let r = client
        .call("sample_cancel_order", json!({ "order_id": 1 }))
        .await;
    assert!(
        is_error_result(&r) && text_of(&r).contains("approve.deny"),
        "{r}"
    );
    let (eng, mut feed) = attacher(&entry).await;
    let client = Arc::new(tokio::sync::Mutex::new(client));
    let c = client.clone();
    let pending = tokio::spawn(async move {
        c.lock()
            .await
            .call("sample_get_weather", json!({ "city": "Lisbon" }))
            .await
    });
    let req = next_approval(&mut feed).await;
    assert_eq!(req.original, "get_weather");
    decide(&*eng, req.approval, Decision::Once).await;
    assert!(!is_error_result(&pending.await.unwrap()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attacher_that_stops_reading_still_counts_as_present_while_it_is_connected() {
    use tokio::io::AsyncWriteExt;
    // `unattended` allows: if the stuck attacher stopped counting, the call would run.
    let cfg = sample_config("approval_timeout = 2", "");
    let (mut client, entry) = started(&cfg).await;
    // A workbench subscribes as a person, then never reads again.
    let mut stuck = tokio::net::UnixStream::connect(&entry.socket)
        .await
        .unwrap();
    stuck
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"loom/subscribe\",\"params\":{\"human\":true}}\n")
        .await
        .unwrap();
    // Enough calls to fill the socket buffer and loom's bounded event queue for it.
    for i in 0..6000 {
        let r = client
            .call("sample_get_weather", json!({ "city": format!("c{i}") }))
            .await;
        assert!(!is_error_result(&r), "{r}");
    }
    // The person is still connected: the call waits for them and is denied at the timeout,
    // never allowed by the unattended policy behind their back.
    let r = client
        .call("sample_cancel_order", json!({ "order_id": 1 }))
        .await;
    assert!(
        is_error_result(&r) && text_of(&r).contains("approval_timeout"),
        "{r}"
    );
    drop(stuck);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cancelled_while_it_waits_for_approval_never_runs_and_its_prompt_is_withdrawn() {
    let cfg = sample_config("", "");
    let (mut client, entry) = started(&cfg).await;
    let (eng, mut feed) = attacher(&entry).await;
    client
        .send_raw(r#"{"jsonrpc":"2.0","id":"wait-1","method":"tools/call","params":{"name":"sample_cancel_order","arguments":{"order_id":9}}}"#)
        .await;
    let req = next_approval(&mut feed).await;
    client
        .notify(
            "notifications/cancelled",
            json!({ "requestId": "wait-1", "reason": "changed my mind" }),
        )
        .await;
    // The prompt is withdrawn for every workbench.
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(20), feed.live.recv())
            .await
            .expect("settled in time")
            .expect("feed open");
        if let Event::ApprovalSettled {
            approval, decision, ..
        } = ev.event
            && approval == req.approval
        {
            assert_eq!(decision, "withdrawn");
            break;
        }
    }
    // Approving it now does nothing: the call is gone and is logged as cancelled.
    let err = eng
        .request(Request::Approve {
            approval: req.approval,
            decision: Decision::Once,
        })
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("no longer waiting"), "{err}");
    // The call's end is logged just after the prompt is withdrawn (another task): wait for it.
    let outcome = common::wait_until("the cancelled call in the log", async || {
        let Ok(Reply::Calls { calls }) = eng.request(Request::Calls { limit: 10 }).await else {
            panic!("calls")
        };
        let c = calls
            .iter()
            .find(|c| c.tool == "sample_cancel_order")
            .expect("logged");
        (c.outcome != "running").then_some(c.outcome)
    })
    .await;
    assert_eq!(outcome, "cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_the_last_person_detaches_a_waiting_call_is_denied_even_if_unattended_allows() {
    // `unattended` allows (the default): it decides only calls that arrive while nobody is
    // attached, never one a person was already asked about.
    let cfg = sample_config("approval_timeout = 600", "");
    let (client, entry) = started(&cfg).await;
    let (eng, mut feed) = attacher(&entry).await;
    let client = Arc::new(tokio::sync::Mutex::new(client));
    let c = client.clone();
    let pending = tokio::spawn(async move {
        c.lock()
            .await
            .call("sample_cancel_order", json!({ "order_id": 3 }))
            .await
    });
    let req = next_approval(&mut feed).await;
    // A late attacher sees the waiting call even without the event.
    let late = RemoteEngine::connect(&entry).await.expect("attach");
    let Ok(Reply::Approvals { approvals }) = late.request(Request::Approvals).await else {
        panic!("approvals")
    };
    assert_eq!(
        approvals.iter().map(|a| a.approval).collect::<Vec<_>>(),
        vec![req.approval]
    );
    drop(late);
    // The only person watching leaves: the call does not wait ten minutes.
    drop(feed);
    drop(eng);
    let r = tokio::time::timeout(Duration::from_secs(20), pending)
        .await
        .expect("no wait once nobody watches")
        .unwrap();
    assert!(is_error_result(&r), "{r}");
    assert!(
        text_of(&r).contains("everyone detached while it waited"),
        "{r}"
    );
}

/// Sends a slow_count with a progress token and returns the tokens of every progress
/// notification that arrived before its result.
async fn count_with_progress(c: &mut RawClient, id: &str, token: &str) -> Vec<String> {
    c.send_raw(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": "sample_slow_count", "arguments": { "steps": 4, "delay_ms": 150 }, "_meta": { "progressToken": token } } }).to_string())
        .await;
    let mut tokens = Vec::new();
    loop {
        let line = c
            .next_line(Duration::from_secs(20))
            .await
            .expect("a line in time");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if v["id"] == json!(id) {
            assert_eq!(text_of(&v), "counted to 4", "{v}");
            return tokens;
        }
        if v["method"] == "notifications/progress" {
            tokens.push(
                v["params"]["progressToken"]
                    .as_str()
                    .unwrap_or("?")
                    .to_owned(),
            );
        }
    }
}

/// `loom connect` carries an MCP client's messages: the workbench methods (subscribing as a
/// person, approving calls) are not found on it, as on stdio, so a model cannot approve its
/// own `ask` calls; its MCP traffic passes as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_through_loom_connect_cannot_call_workbench_methods() {
    let cfg = sample_config("", "");
    let (_a, _entry) = started(&cfg).await;
    let dir = cfg.dir.path().display().to_string();
    let mut b = RawClient::spawn_args(&["connect"], &[("XDG_RUNTIME_DIR", &dir)]);
    b.initialize().await;
    for (method, params) in [
        ("loom/hello", json!({})),
        ("loom/subscribe", json!({ "human": true })),
        (
            "loom/request",
            json!({ "approve": { "approval": 1, "scope": "session" } }),
        ),
        ("loom/connect", json!({})),
    ] {
        let v = b.request(method, params).await;
        assert_eq!(v["error"]["code"], -32601, "{method}: {v}");
    }
    assert!(
        b.tool_names()
            .await
            .iter()
            .any(|n| n == "sample_get_weather")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_only_the_client_whose_call_it_is() {
    let cfg = sample_config("", "");
    let (mut a, _entry) = started(&cfg).await;
    let dir = cfg.dir.path().display().to_string();
    let mut b = RawClient::spawn_args(&["connect"], &[("XDG_RUNTIME_DIR", &dir)]);
    b.initialize().await;
    // Both clients count at once on the same server, each with its own token.
    let (ta, tb) = tokio::join!(
        count_with_progress(&mut a, "a1", "tok-a"),
        count_with_progress(&mut b, "b1", "tok-b")
    );
    // One notification per step, and only for its own call (with shared tokens downstream,
    // each client would see the other's steps too).
    assert_eq!((ta.len(), tb.len()), (4, 4), "{ta:?} {tb:?}");
    assert!(ta.iter().all(|t| t == "tok-a"), "client a saw {ta:?}");
    assert!(tb.iter().all(|t| t == "tok-b"), "client b saw {tb:?}");
}

/// A call made without a progress token still shows its progress to a workbench: loom asks
/// the server for it, tells the attacher (`call_progress`), and sends the client nothing it
/// did not ask for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workbench_sees_the_progress_of_a_call_that_asked_for_none() {
    let cfg = sample_config("", "");
    let (mut client, entry) = started(&cfg).await;
    let (_eng, mut feed) = attacher(&entry).await;
    client
        .send_raw(&json!({ "jsonrpc": "2.0", "id": "c1", "method": "tools/call", "params": { "name": "sample_slow_count", "arguments": { "steps": 3, "delay_ms": 100 } } }).to_string())
        .await;
    loop {
        let line = client
            .next_line(Duration::from_secs(20))
            .await
            .expect("a line in time");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_ne!(v["method"], "notifications/progress", "not asked for: {v}");
        if v["id"] == json!("c1") {
            assert_eq!(text_of(&v), "counted to 3", "{v}");
            break;
        }
    }
    let mut seen = Vec::new();
    while let Ok(Some(ev)) = tokio::time::timeout(Duration::from_secs(5), feed.live.recv()).await {
        match ev.event {
            Event::CallProgress {
                progress, total, ..
            } => seen.push((progress, total)),
            Event::CallFinished(c) if c.tool == "sample_slow_count" => break,
            _ => {}
        }
    }
    assert_eq!(
        seen,
        vec![(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))],
        "{seen:?}"
    );
}

/// B4: a `loom attach` is a workbench, not an MCP client: the quit question counts only
/// the clients that speak MCP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attached_workbench_is_not_counted_as_an_mcp_client() {
    let cfg = sample_config("", "");
    let (_client, entry) = started(&cfg).await;
    let (eng, _feed) = attacher(&entry).await;
    let (_other, _feed2) = attacher(&entry).await;
    let clients = |r| match r {
        Ok(Reply::Session(s)) => s.clients,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        clients(eng.request(Request::Session).await),
        1,
        "the stdio client only"
    );
    let dir = cfg.dir.path().display().to_string();
    let mut joined = RawClient::spawn_args(&["connect"], &[("XDG_RUNTIME_DIR", &dir)]);
    joined.initialize().await;
    assert_eq!(
        clients(eng.request(Request::Session).await),
        2,
        "and the one that joined"
    );
}

/// `loom serve` in front of the probing test server, whose tool `tool` is called with the
/// session socket's path; returns the config (kept alive), the client and the call's answer.
async fn probe_from_a_server(tool: &str) -> (TempConfig, RawClient, serde_json::Value) {
    let cfg = TempConfig::new(&format!(
        "memory_file = \"memories.jsonl\"\n{}",
        common::testserver_entry("t", &["--probe"])
    ));
    let mut client = RawClient::spawn(&cfg.path);
    client.initialize().await;
    assert!(client.tool_names().await.iter().any(|n| n == tool));
    let entry = session_entry(&cfg).await;
    let r = client
        .call(tool, json!({ "path": entry.socket.display().to_string() }))
        .await;
    (cfg, client, r)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_the_session_started_is_refused_on_its_socket() {
    let (_cfg, _client, r) = probe_from_a_server("t_probe_socket").await;
    let text = text_of(&r);
    assert!(
        text.contains("processes this session started"),
        "the server got in: {text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_double_forked_grandchild_of_a_server_is_refused_and_dies_with_loom() {
    let (_cfg, mut client, r) = probe_from_a_server("t_escape_and_probe").await;
    let report: serde_json::Value =
        serde_json::from_str(&text_of(&r)).unwrap_or_else(|e| panic!("{e}: {r}"));
    let line = report["line"].as_str().unwrap_or_default();
    assert!(
        line.contains("processes this session started"),
        "the orphaned grandchild got in: {report}"
    );
    let grandchild = report["pid"].as_i64().expect("grandchild pid") as i32;
    assert!(common::alive(grandchild), "{report}");
    // loom stops: the grandchild, which left the server's process group, goes too.
    client.close_stdin();
    assert!(client.wait_exit(Duration::from_secs(15)).await);
    assert!(
        common::eventually(Duration::from_secs(10), || !common::alive(grandchild)).await,
        "grandchild {grandchild} outlived loom"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_cannot_read_looms_environment() {
    let cfg = TempConfig::new(&format!(
        "memory_file = \"memories.jsonl\"\n{}",
        common::testserver_entry("t", &["--probe"])
    ));
    // Run as root, loom starts without capabilities (an empty bounding set, so its servers
    // get none either): a process with CAP_SYS_PTRACE may read anything, and the promise is
    // about what a plain process of the same user can do.
    let mut loom = tokio::process::Command::new("setpriv");
    loom.args(["--bounding-set=-all", "--inh-caps=-all", "--", LOOM]);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        loom = tokio::process::Command::new(LOOM);
    }
    let run = cfg.dir.path().display().to_string();
    let config = cfg.path.display().to_string();
    let mut client = RawClient::spawn_command(
        loom,
        &["serve", "-c", &config],
        &[
            ("XDG_RUNTIME_DIR", run.as_str()),
            ("LOOM_TEST_TOKEN", "tok-3c1f9e"),
        ],
    );
    client.initialize().await;
    client.tool_names().await;
    let loom = client.child.id().expect("loom pid");
    let r = client.call("t_read_environ", json!({ "pid": loom })).await;
    let text = text_of(&r);
    assert!(
        !text.contains("tok-3c1f9e"),
        "a server read loom's environment"
    );
    assert!(text.starts_with("error:"), "{text}");
    // The same probe on the server's own environment works: the refusal is loom's doing.
    let r = client
        .call("t_read_environ", json!({ "pid": "self" }))
        .await;
    assert!(text_of(&r).starts_with("read:"), "{r}");
}

/// Applies one event to a catalog kept from events alone.
fn apply(catalog: &mut std::collections::BTreeSet<String>, event: &Event) {
    match event {
        Event::DatasetCreated { dataset, .. } => {
            catalog.insert(dataset.clone());
        }
        Event::DatasetDropped { dataset, .. } => {
            catalog.remove(dataset);
        }
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_catalog_change_the_model_makes_reaches_an_attached_workbench() {
    use loom::store::DropReason;
    use std::collections::BTreeSet;
    // A small budget, so that query results push older datasets out.
    let cfg = sample_config("memory_budget = \"24MiB\"", "");
    let (mut client, entry) = started(&cfg).await;
    let eng = RemoteEngine::connect(&entry).await.expect("attach");
    let mut feed = eng.events(false);
    let mut seen: Vec<Event> = feed.backlog.drain(..).map(|s| s.event).collect();

    // A tool result, a materialized dataset, query results, parked text and a drop.
    let r = client.call("sample_list_orders", json!({})).await;
    let orders = r["result"]["structuredContent"]["ref"]
        .as_str()
        .expect("intercepted")
        .to_owned();
    let r = client
        .call(
            "loom_materialize",
            json!({ "sql": format!("SELECT * FROM {orders} LIMIT 10"), "name": "keep_me" }),
        )
        .await;
    assert!(!is_error_result(&r), "{r}");
    for _ in 0..8 {
        let r = client
            .call(
                "loom_query",
                json!({ "sql": "SELECT range AS n, md5(range::VARCHAR) AS h FROM range(200000)" }),
            )
            .await;
        assert!(!is_error_result(&r), "{r}");
    }
    let r = client
        .call(
            "loom_park",
            json!({ "content": "a line of notes\n".repeat(500), "summary": "notes" }),
        )
        .await;
    let key = r["result"]["structuredContent"]["blob_key"]
        .as_str()
        .expect("parked")
        .to_owned();
    let r = client.call("loom_drop", json!({ "ref": "keep_me" })).await;
    assert!(!is_error_result(&r), "{r}");

    // Replaying the events gives exactly what the session lists now.
    let Ok(Reply::Datasets { datasets }) = eng.request(Request::Datasets).await else {
        panic!("datasets")
    };
    let listed: BTreeSet<String> = datasets.into_iter().map(|d| d.dataset).collect();
    let mut catalog = BTreeSet::new();
    for e in &seen {
        apply(&mut catalog, e);
    }
    let parked = |seen: &[Event]| {
        seen.iter()
            .any(|e| matches!(e, Event::BlobParked { key: k, .. } if *k == key))
    };
    while catalog != listed || !parked(&seen) {
        let ev = tokio::time::timeout(Duration::from_secs(30), feed.live.recv())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "the events never added up to the listing {listed:?} (events give {catalog:?}, parked {key}: {})\nevents: {seen:#?}",
                    parked(&seen)
                )
            })
            .expect("feed open");
        apply(&mut catalog, &ev.event);
        seen.push(ev.event);
    }
    let created = |d: &str, tool: &str| {
        seen.iter().any(|e| {
            matches!(e, Event::DatasetCreated { dataset, server, tool: t, .. }
                if dataset == d && server == "loom" && t == tool)
        })
    };
    assert!(created("keep_me", "loom_materialize"), "{seen:#?}");
    assert!(
        seen.iter()
            .any(|e| matches!(e, Event::DatasetCreated { tool, .. } if tool == "loom_query")),
        "{seen:#?}"
    );
    assert!(
        seen.iter().any(|e| matches!(e, Event::DatasetDropped { dataset, reason: DropReason::Dropped } if dataset == "keep_me")),
        "{seen:#?}"
    );
    assert!(
        seen.iter().any(|e| matches!(
            e,
            Event::DatasetDropped {
                reason: DropReason::Evicted,
                ..
            }
        )),
        "the budget evicted nothing: {seen:#?}"
    );
}

/// A person restarts a server and re-enables a delisted one from an attached workbench; the
/// server's log shows each change with its time, and who asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_restarts_a_server_and_re_enables_a_delisted_one_and_the_log_shows_it() {
    let toml = format!(
        "{}max_restarts = 1\nrestart_backoff = 0.05\n",
        common::testserver_entry("t", &[])
    );
    let cfg = TempConfig::new(&toml);
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    assert!(!c.tool_names().await.is_empty());
    let entry = session_entry(&cfg).await;
    let (eng, _feed) = attacher(&entry).await;
    let state = async |eng: &Arc<RemoteEngine>| {
        let Ok(Reply::Servers { servers }) = eng.request(Request::Servers).await else {
            panic!("servers")
        };
        (servers[0].state.clone(), servers[0].restarts)
    };
    // A restart of a healthy server is not a failure: nothing is counted.
    eng.request(Request::RestartServer { server: "t".into() })
        .await
        .expect("restart");
    wait_until("the server to be up again", async || {
        (state(&eng).await == (loom::types::events::ServerState::Up, 0)).then_some(())
    })
    .await;
    let r = c.call("t_echo", json!({ "x": 1 })).await;
    assert!(!is_error_result(&r), "{r}");
    // Crash it past its budget: delisted.
    common::crash_twice(&mut c).await;
    wait_until("delisting", async || {
        (state(&eng).await.0 == loom::types::events::ServerState::Delisted).then_some(())
    })
    .await;
    assert!(c.tool_names().await.is_empty());
    // Its log reads `restarting 1/1`, then `delisted`: two failures, one restart.
    let Ok(Reply::Servers { servers }) = eng.request(Request::Servers).await else {
        panic!("servers")
    };
    assert_eq!((servers[0].failures, servers[0].restarts), (2, 1));
    // Re-enabled by a person: it comes back, and so do its tools.
    eng.request(Request::RestartServer { server: "t".into() })
        .await
        .expect("re-enable");
    wait_until("the re-enabled server's tools", async || {
        c.tool_names()
            .await
            .contains(&"t_echo".to_owned())
            .then_some(())
    })
    .await;
    let r = c.call("t_echo", json!({ "x": 2 })).await;
    assert!(!is_error_result(&r), "{r}");
    // The log tells the story in order, each line with its time.
    let Ok(Reply::ServerLog { lines }) =
        eng.request(Request::ServerLog { server: "t".into() }).await
    else {
        panic!("log")
    };
    let story: Vec<&str> = lines
        .iter()
        .filter(|l| l.kind == loom::types::events::LogKind::State)
        .map(|l| l.text.as_str())
        .collect();
    let position = |needle: &str| {
        story
            .iter()
            .position(|t| t.contains(needle))
            .unwrap_or_else(|| panic!("`{needle}` in {story:#?}"))
    };
    let who = format!(
        "asked for by a person at loom attach, pid {}",
        std::process::id()
    );
    assert!(position(&format!("restart {who}")) < position("delisted"));
    let re_enabled = story
        .iter()
        .rposition(|t| t.contains(&format!("restart {who}")))
        .expect("the second request");
    assert!(position("delisted") < re_enabled);
    assert!(story[re_enabled + 1].starts_with("starting"), "{story:#?}");
    assert!(
        lines
            .iter()
            .all(|l| loom::types::time::parse_iso(&l.at).is_some()),
        "{lines:#?}"
    );
    // Unknown servers are refused by name.
    let err = eng
        .request(Request::RestartServer {
            server: "nope".into(),
        })
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("no server named `nope`"), "{err}");
}

/// A large result that reached the model whole says why in the call log, for the person
/// reading the call in Detail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_call_log_says_why_a_large_result_passed_through_whole() {
    let cfg = sample_config("", "intercept = \"never\"\npark_never = [\"tail_*\"]");
    let (mut client, entry) = started(&cfg).await;
    let (eng, _feed) = attacher(&entry).await;
    client
        .call("sample_list_orders", json!({ "limit": 2000 }))
        .await;
    client
        .call("sample_tail_logs", json!({ "lines": 3000 }))
        .await;
    client
        .call("sample_list_orders", json!({ "limit": 2 }))
        .await;
    let Ok(Reply::Calls { calls }) = eng.request(Request::Calls { limit: 10 }).await else {
        panic!("calls")
    };
    let because: Vec<(String, Option<String>)> = calls
        .iter()
        .map(|c| (c.tool.clone(), c.passed_because.clone()))
        .collect();
    let of = |i: usize| because[i].1.clone().unwrap_or_default();
    assert!(of(0).contains("intercept = \"never\""), "{because:?}");
    assert!(of(1).contains("parking is off"), "{because:?}");
    // A small result needs no reason.
    assert_eq!(because[2].1, None, "{because:?}");
}

/// A person writes, pins, edits and deletes a memory from a workbench: each version is the
/// human's, an edit of a stale version is refused (never overwriting the model's change), and
/// the history keeps every version, the deletion included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_edits_pins_and_deletes_a_memory_with_its_history() {
    let cfg = sample_config("", "");
    let (mut client, entry) = started(&cfg).await;
    let (eng, _feed) = attacher(&entry).await;
    let set = |content: &str, pinned: bool, if_version: Option<u64>| Request::MemorySet {
        key: "deploys".into(),
        content: content.into(),
        tags: vec!["ops".into()],
        pinned,
        if_version,
    };
    let Ok(Reply::Memory { memory }) = eng.request(set("friday: never", false, None)).await else {
        panic!("set")
    };
    assert_eq!((memory.version, memory.author.as_str()), (1, "human"));
    // The model changes it meanwhile …
    let r = client
        .call(
            "loom_memory_set",
            json!({ "key": "deploys", "content": "friday: only hotfixes" }),
        )
        .await;
    assert!(!is_error_result(&r), "{r}");
    // … so the person's edit of version 1 is refused, naming the version to read.
    let err = eng
        .request(set("friday: never, really", true, Some(1)))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("is at version 2"), "{err}");
    let Ok(Reply::Memory { memory }) = eng
        .request(set("friday: never, really", true, Some(2)))
        .await
    else {
        panic!("pin")
    };
    assert!(memory.pinned && memory.version == 3);
    let Ok(Reply::Memory { memory }) = eng
        .request(Request::MemoryDelete {
            key: "deploys".into(),
        })
        .await
    else {
        panic!("delete")
    };
    assert!(memory.deleted);
    let Ok(Reply::MemoryHistory { versions }) = eng
        .request(Request::MemoryHistory {
            key: "deploys".into(),
        })
        .await
    else {
        panic!("history")
    };
    let story: Vec<(u64, &str, bool)> = versions
        .iter()
        .map(|v| (v.version, v.author.as_str(), v.deleted))
        .collect();
    assert_eq!(
        story,
        [
            (1, "human", false),
            (2, "model", false),
            (3, "human", false),
            (4, "human", true)
        ]
    );
    let err = eng
        .request(Request::MemoryHistory { key: "nope".into() })
        .await
        .unwrap_err();
    assert!(
        matches!(err, loom::frontend::engine::EngineError::Unknown(_)),
        "{err:?}"
    );
}

/// Every caller that waits out the start (the workbench lists tools while a person calls
/// one) finds every name routed: none passes while another is still giving names out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_caller_past_the_start_finds_every_tool_routed() {
    loom::downstream::stdio::set_loom_executable(LOOM.into());
    let servers: String = (0..4)
        .map(|i| {
            format!(
                "[[servers]]\nname = \"s{i}\"\ncommand = {LOOM:?}\nargs = [\"sample-server\"]\n"
            )
        })
        .collect();
    let cfg = TempConfig::new(&servers);
    let config = Arc::new(loom::config::Config::load(&cfg.path).expect("config"));
    let fleet = loom::downstream::Fleet::start(
        config,
        loom::protocol::ClientCapabilities::default(),
        Arc::new(|_| {}),
    );
    let waiters: Vec<_> = (0..32)
        .map(|_| {
            let fleet = fleet.clone();
            tokio::spawn(async move {
                fleet.wait_startup().await;
                (0..4)
                    .filter(|i| fleet.route_tool(&format!("s{i}_list_orders")).is_none())
                    .count()
            })
        })
        .collect();
    for w in waiters {
        assert_eq!(w.await.expect("waiter"), 0, "a tool was not routed yet");
    }
    fleet.shutdown().await;
}
