//! Real MCP clients over streamable HTTP, end to end: the TypeScript SDK v1, the TypeScript SDK
//! v2 (legacy and auto negotiation) and the Python SDK (legacy and auto) connect to `loom serve
//! --http` with the bearer token, and call through loom to a stdio server (loom's sample server)
//! and to an HTTP server (server-everything over streamable HTTP). Against each of the two,
//! every client sees its progress notifications, cancels a long call (loom's events show the
//! call ended as cancelled while the client still worked, which is when loom tells the server),
//! and gets a large result as a dataset envelope that `loom_query` then answers with the right
//! rows.
//!
//! Every client runs the same plan (`plan(progress)`), written by a script per SDK:
//! `tests/js/client_check.mjs` and `tests/py/client_check.py --http-plan`.

mod common;

use common::*;
use loom::frontend::engine::Engine;
use loom::frontend::socket::RemoteEngine;
use loom::types::events::{Event, Sequenced};
use serde_json::{Value, json};

const TOKEN: &str = "http-clients-token-5f0c1a";
/// Rows of the table the HTTP server echoes back.
const ECHOED_ROWS: u64 = 500;
const CITIES: [&str; 3] = ["Lima", "Oslo", "Pune"];

/// The echoed table: `ECHOED_ROWS` rows of `{id, city, amount}`, in a fenced JSON block (the
/// echo tool puts `Echo: ` before it).
fn echoed_table() -> String {
    let rows: Vec<Value> = (1..=ECHOED_ROWS)
        .map(|i| json!({ "id": i, "city": CITIES[(i % 3) as usize], "amount": i * 3 }))
        .collect();
    format!("```json\n{}\n```", Value::Array(rows))
}

/// What `loom_query` must answer about the echoed table, computed here from the same rows.
fn echoed_by_city() -> Value {
    let rows: Vec<Value> = CITIES
        .iter()
        .map(|city| {
            let ids = (1..=ECHOED_ROWS).filter(|i| CITIES[(i % 3) as usize] == *city);
            json!({ "city": city, "n": ids.clone().count(), "total": ids.map(|i| i * 3).sum::<u64>() })
        })
        .collect();
    Value::Array(rows)
}

/// What a client must see of a call's progress notifications.
#[derive(Clone, Copy)]
enum Progress {
    /// Every step, before the call's result. Many steps with no pause between them, so that a
    /// notification losing a race with the result would show.
    EveryStep,
    /// The first steps at least, in order. Today loom sends a request's notifications on the
    /// session's GET stream and its result as the POST's reply: on two connections, the result
    /// can overtake the last notifications, and a client drops progress for a finished call.
    /// The steps are spaced out so that the first ones come well before the result.
    FirstSteps,
}

impl Progress {
    fn steps(self) -> u64 {
        match self {
            Progress::EveryStep => 50,
            Progress::FirstSteps => 3,
        }
    }

    fn step_ms(self) -> u64 {
        match self {
            Progress::EveryStep => 0,
            Progress::FirstSteps => 150,
        }
    }
}

/// The same three things against each downstream: progress, a cancelled long call, a large
/// result queried through its envelope. The long calls would run for minutes if not cancelled.
fn plan(progress: Progress) -> Value {
    let (steps, step_ms) = (progress.steps(), progress.step_ms());
    let seconds = (steps * step_ms) as f64 / 1000.0;
    json!({ "servers": [
        {
            "name": "sample",
            "progress": { "tool": "sample_slow_count", "arguments": { "steps": steps, "delay_ms": step_ms } },
            "cancel": { "tool": "sample_slow_count", "arguments": { "steps": 1000, "delay_ms": 200 } },
            "large": { "tool": "sample_list_orders", "arguments": { "limit": 1000 } },
            "sql": "SELECT count(*) AS n, count(DISTINCT order_id) AS ids FROM {ref}",
        },
        {
            "name": "web",
            "progress": { "tool": "web_trigger-long-running-operation", "arguments": { "duration": seconds, "steps": steps } },
            "cancel": { "tool": "web_trigger-long-running-operation", "arguments": { "duration": 600, "steps": 600 } },
            "large": { "tool": "web_echo", "arguments": { "message": echoed_table() } },
            "sql": "SELECT city, count(*) AS n, sum(amount) AS total FROM {ref} GROUP BY city ORDER BY city",
        },
    ] })
}

/// loom in front of the sample server (stdio) and server-everything (streamable HTTP), served
/// over HTTP.
struct Proxy {
    cfg: TempConfig,
    loom: LoomOverHttp,
    _everything: NodeOverHttp,
}

impl Proxy {
    async fn start() -> Proxy {
        let everything = NodeOverHttp::everything().await;
        let web = format!(
            "[[servers]]\nname = \"web\"\nurl = \"{}\"\n",
            everything.url()
        );
        let cfg = sample_config("", &web);
        let loom = LoomOverHttp::start(&cfg, TOKEN).await;
        Proxy {
            cfg,
            loom,
            _everything: everything,
        }
    }

    fn url(&self) -> &std::ffi::OsStr {
        self.loom.url.as_ref()
    }

    /// Checks what a client running `plan(progress)` saw, then loom's own record of the
    /// cancels.
    async fn check(&self, v: &Value, progress: Progress) {
        let why = || format!("{v:#}\nloom stderr:\n{}", self.loom.stderr.lock().unwrap());
        let tools = v["tools"].as_array().unwrap_or_else(|| panic!("{}", why()));
        for name in [
            "sample_slow_count",
            "web_trigger-long-running-operation",
            "loom_query",
        ] {
            assert!(tools.iter().any(|t| t == name), "{name}: {}", why());
        }
        for step in plan(progress)["servers"].as_array().unwrap() {
            let name = step["name"].as_str().unwrap();
            let seen = &v["servers"][name];
            check_progress(name, seen, progress, &why);
            // The client gave up after the first progress notification; it got no result.
            let cancel = &seen["cancel"];
            assert!(
                cancel["progressBeforeAbort"].as_u64() >= Some(1) && cancel["error"].is_string(),
                "{name}: the long call was not cancelled: {}",
                why()
            );
            assert_eq!(cancel.get("answered"), None, "{name}: {}", why());
        }
        // The large results became envelopes whose datasets answer queries exactly.
        let sample = &v["servers"]["sample"];
        assert_eq!(sample["envelope"]["kind"], "dataset", "{}", why());
        assert_eq!(sample["envelope"]["rows"], 1000, "{}", why());
        assert_eq!(
            sample["query"]["rows"],
            json!([{ "n": 1000, "ids": 1000 }]),
            "{}",
            why()
        );
        let web = &v["servers"]["web"];
        assert_eq!(web["envelope"]["kind"], "dataset", "{}", why());
        assert_eq!(web["envelope"]["rows"], ECHOED_ROWS, "{}", why());
        assert_eq!(web["query"]["rows"], echoed_by_city(), "{}", why());
        self.check_cancels_logged(v).await;
    }

    /// Each long call ended cancelled, before the client's last call on that server began: so
    /// the client's own cancel ended it (loom then tells the server), not the end of the
    /// session, which cancels whatever is still running. Read from the session's events, as
    /// the workbench's call log reads them.
    async fn check_cancels_logged(&self, v: &Value) {
        let entry = session_entry(&self.cfg).await;
        let engine = RemoteEngine::connect(&entry).await.expect("attach to loom");
        let mut feed = engine.events(false);
        let mut events = Vec::new();
        // The cancelled calls are the same whatever the progress calls were.
        let steps = plan(Progress::FirstSteps)["servers"]
            .as_array()
            .unwrap()
            .clone();
        // A query on a server's dataset is the client's last call there.
        let last_call = |events: &[Sequenced], step: &Value| {
            let reference = v["servers"][step["name"].as_str().unwrap()]["envelope"]["ref"]
                .as_str()
                .unwrap_or("no dataset")
                .to_owned();
            events.iter().find_map(|e| match &e.event {
                Event::CallStarted(c)
                    if c.tool == "loom_query" && c.arguments.contains(&reference) =>
                {
                    Some(e.seq)
                }
                _ => None,
            })
        };
        wait_until("the session's events up to the last calls", async || {
            while let Ok(e) = feed.live.try_recv() {
                events.push(e);
            }
            steps
                .iter()
                .all(|step| last_call(&events, step).is_some())
                .then_some(())
        })
        .await;
        for step in &steps {
            let cancel = &step["cancel"];
            let ended = events.iter().find_map(|e| match &e.event {
                Event::CallFinished(c)
                    if c.tool == cancel["tool"]
                        && serde_json::from_str::<Value>(&c.arguments).ok().as_ref()
                            == Some(&cancel["arguments"]) =>
                {
                    Some((e.seq, c.outcome))
                }
                _ => None,
            });
            let Some((seq, outcome)) = ended else {
                panic!("{cancel}: still running after the client's last call on its server")
            };
            assert_eq!(outcome, "cancelled", "{cancel}");
            assert!(
                Some(seq) < last_call(&events, step),
                "{cancel}: cancelled only after the client's last call on its server"
            );
        }
    }
}

/// The progress a client saw for the plan's progress call: steps 1, 2, … each with the total,
/// in order, as many as `progress` demands; then the call's result.
fn check_progress(name: &str, seen: &Value, progress: Progress, why: &impl Fn() -> String) {
    let steps = progress.steps();
    let got: Vec<(f64, f64)> = seen["progress"]
        .as_array()
        .unwrap_or_else(|| panic!("{name}: no progress: {}", why()))
        .iter()
        .map(|p| (p[0].as_f64().unwrap_or(-1.0), p[1].as_f64().unwrap_or(-1.0)))
        .collect();
    let expected: Vec<(f64, f64)> = (1..=steps).map(|i| (i as f64, steps as f64)).collect();
    match progress {
        Progress::EveryStep => assert_eq!(got, expected, "{name}: {}", why()),
        Progress::FirstSteps => assert!(
            !got.is_empty() && expected.starts_with(&got),
            "{name}: progress {got:?}, expected the first of {expected:?}: {}",
            why()
        ),
    }
    let done = seen["progress_text"].as_str().unwrap_or_default();
    assert!(
        done == format!("counted to {steps}") || done.contains("completed"),
        "{name}: {}",
        why()
    );
}

/// The real MCP clients, each driven by its script.
#[derive(Clone, Copy, Debug)]
enum Sdk {
    /// `@modelcontextprotocol/sdk` 1.x: legacy sessions only.
    TypeScriptV1,
    /// `@modelcontextprotocol/client` 2.x, with its `versionNegotiation`.
    TypeScriptV2,
    /// Python `mcp` 2.x.
    Python,
}

/// Starts loom in front of both servers, runs `sdk` (in `mode`) on `plan(progress)` against
/// it, and checks what the client saw and what loom recorded; what the client saw.
async fn through_loom(sdk: Sdk, mode: &str, progress: Progress) -> Value {
    let proxy = Proxy::start().await;
    let plan_file = proxy.cfg.file("plan.json");
    std::fs::write(&plan_file, plan(progress).to_string()).expect("write the plan");
    let args = [
        proxy.url(),
        TOKEN.as_ref(),
        mode.as_ref(),
        plan_file.as_os_str(),
    ];
    let v = match sdk {
        Sdk::TypeScriptV1 => node_client_check(&[&["v1".as_ref()], &args[..]].concat()).await,
        Sdk::TypeScriptV2 => node_client_check(&[&["v2".as_ref()], &args[..]].concat()).await,
        Sdk::Python => python_client_check(&[&["--http-plan".as_ref()], &args[..]].concat()).await,
    };
    proxy.check(&v, progress).await;
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_sdk_v1_calls_through_loom_over_http() {
    let v = through_loom(Sdk::TypeScriptV1, "legacy", Progress::FirstSteps).await;
    assert_eq!(v["protocol_version"], "2025-11-25", "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_sdk_v2_in_legacy_mode_calls_through_loom_over_http() {
    let v = through_loom(Sdk::TypeScriptV2, "legacy", Progress::FirstSteps).await;
    assert_eq!(
        (&v["era"], &v["protocol_version"]),
        (&json!("legacy"), &json!("2025-11-25")),
        "{v}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_sdk_v2_in_auto_mode_calls_through_loom_over_http() {
    let v = through_loom(Sdk::TypeScriptV2, "auto", Progress::FirstSteps).await;
    // loom offers 2026-07-28 in server/discover and serves it statelessly: auto picks it.
    assert_eq!(
        (&v["era"], &v["protocol_version"]),
        (&json!("modern"), &json!("2026-07-28")),
        "{v}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_sdk_v2_pinned_to_2026_07_28_calls_through_loom_over_http() {
    let v = through_loom(Sdk::TypeScriptV2, "2026-07-28", Progress::FirstSteps).await;
    assert_eq!(
        (&v["era"], &v["protocol_version"]),
        (&json!("modern"), &json!("2026-07-28")),
        "{v}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_in_legacy_mode_calls_through_loom_over_http() {
    let v = through_loom(Sdk::Python, "legacy", Progress::FirstSteps).await;
    assert_eq!(v["protocol_version"], "2025-11-25", "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_in_auto_mode_calls_through_loom_over_http() {
    let v = through_loom(Sdk::Python, "auto", Progress::FirstSteps).await;
    assert_eq!(v["protocol_version"], "2026-07-28", "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_at_2026_07_28_calls_through_loom_over_http() {
    let v = through_loom(Sdk::Python, "2026-07-28", Progress::FirstSteps).await;
    assert_eq!(v["protocol_version"], "2026-07-28", "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_client_sees_every_progress_step_before_the_result() {
    for sdk in [Sdk::TypeScriptV1, Sdk::TypeScriptV2, Sdk::Python] {
        through_loom(sdk, "legacy", Progress::EveryStep).await;
    }
}
