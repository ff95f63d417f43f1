//! Data moving from tool to tool without the model: `loom_call`'s `bind` and `loom_call_each`,
//! end to end through the real `loom serve` in front of the sample server, driven by a raw MCP
//! client over stdio (and over HTTP), with approvals decided by an attached workbench engine.

mod common;

use common::{
    RawClient, TempConfig, decide, is_error_result, next_approval, sample_config, session_entry,
    text_of,
};
use loom::frontend::engine::{Engine, Reply, Request};
use loom::frontend::socket::RemoteEngine;
use loom::session::Event;
use loom::session::approvals::Decision;
use serde_json::{Value, json};
use sha2::Digest;
use std::sync::Arc;
use std::time::Duration;

async fn started(cfg: &TempConfig) -> RawClient {
    let mut client = RawClient::spawn(&cfg.path);
    client.initialize().await;
    client.tool_names().await;
    client
}

/// `list_orders` as a dataset: its ref.
async fn orders(client: &mut RawClient, limit: u64) -> String {
    let r = client
        .call("sample_list_orders", json!({ "limit": limit }))
        .await;
    r["result"]["structuredContent"]["ref"]
        .as_str()
        .unwrap_or_else(|| panic!("an orders dataset: {r}"))
        .to_owned()
}

/// `tail_logs` parked: its key, and the text the server gave.
async fn parked_log(client: &mut RawClient) -> String {
    let r = client
        .call("sample_tail_logs", json!({ "lines": 3000 }))
        .await;
    r["result"]["structuredContent"]["blob_key"]
        .as_str()
        .unwrap_or_else(|| panic!("a parked log: {r}"))
        .to_owned()
}

fn sha(s: &str) -> String {
    sha2::Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

async fn query(client: &mut RawClient, sql: &str) -> Value {
    let r = client.call("loom_query", json!({ "sql": sql })).await;
    assert!(!is_error_result(&r), "{sql}: {r}");
    r["result"]["structuredContent"]["rows"].clone()
}

/// A large binding in a batch is held once, not once per row (the attacker pass of 2026-12-07,
/// hole 2: a 7 MiB blob bound into 1,000 rows aborted loom, 600 rows reached 4.5 GB): 120 rows
/// with 3.2 MB bound each would hold 390 MB of copies before the first call; loom's peak
/// resident size stays far below that, every call gets the whole text, and loom stays up.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_binding_in_a_batch_is_held_once_not_per_row() {
    let cfg = sample_config("", "approve.allow = [\"write_note\"]");
    let mut client = started(&cfg).await;
    let r = client
        .call("sample_tail_logs", json!({ "lines": 40_000 }))
        .await;
    let key = r["result"]["structuredContent"]["blob_key"]
        .as_str()
        .unwrap_or_else(|| panic!("a parked log: {r}"))
        .to_owned();
    let log = loom::sample_server::data::log_lines(40_000);
    assert!(log.len() > 3_000_000, "{}", log.len());
    let peak = |pid: u32| -> u64 {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .map_or(0, |kib| kib * 1024)
    };
    let pid = client.child.id().expect("loom runs");
    let before = peak(pid);
    let r = client
        .call(
            "loom_call_each",
            json!({ "tool": "sample_write_note", "sql": "SELECT 'note ' || i AS title FROM range(120) t(i)", "bind": { "/body": { "blob": key } }, "concurrency": 4 }),
        )
        .await;
    assert_eq!(
        r["result"]["structuredContent"]["batch"]["outcomes"],
        json!({ "ok": 120 }),
        "{r}"
    );
    // Every call got the whole text: the server's receipt hashes it.
    let rows = query(
        &mut client,
        &format!(
            "SELECT count(*) AS n FROM {} WHERE text LIKE '%sha256 {}%'",
            r["result"]["structuredContent"]["ref"].as_str().unwrap(),
            sha(&log)
        ),
    )
    .await;
    assert_eq!(rows, json!([{ "n": 120 }]));
    let grew = peak(pid).saturating_sub(before);
    assert!(
        grew < 200 << 20,
        "loom's peak resident size grew by {} MiB for a batch whose copies would be 390 MB",
        grew >> 20
    );
}

/// A batch holds at most `memory_budget` of its calls' answers: past it no further call is made,
/// the answer says why, and loom stays up (the attacker pass of 2026-12-07, hole 2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_large_results_stops_at_its_memory_budget_and_says_so() {
    let cfg = sample_config("memory_budget = \"16MiB\"", "");
    let mut client = started(&cfg).await;
    // About 1.6 MB a call: some 10 calls reach the budget, far fewer than the 60 asked for.
    let r = client
        .call(
            "loom_call_each",
            json!({ "tool": "sample_tail_logs", "sql": "SELECT 20000 AS lines FROM range(60)", "concurrency": 2 }),
        )
        .await;
    let batch = &r["result"]["structuredContent"]["batch"];
    let stopped = batch["stopped"].as_str().unwrap_or_else(|| panic!("{r}"));
    assert!(stopped.contains("the most one batch holds"), "{stopped}");
    assert!(text_of(&r).contains(stopped), "{r}");
    let ok = batch["outcomes"]["ok"].as_u64().unwrap_or(0);
    assert!((5..60).contains(&ok), "{batch}");
    assert!(
        batch["outcomes"]["skipped"].as_u64().unwrap_or(0) > 0,
        "{batch}"
    );
    let r = client
        .call("sample_get_weather", json!({ "city": "Lima" }))
        .await;
    assert!(text_of(&r).starts_with("Lima"), "loom is still up: {r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bound_call_gets_parked_text_query_rows_and_memories_without_the_model() {
    let cfg = sample_config("", "approve.allow = [\"write_note\"]");
    let mut client = started(&cfg).await;
    let orders = orders(&mut client, 1000).await;
    let key = parked_log(&mut client).await;
    let log = loom::sample_server::data::log_lines(3000);
    // The whole parked text: the server receives every character.
    let r = client
        .call(
            "loom_call",
            json!({ "tool": "sample_write_note", "arguments": { "title": "log" }, "bind": { "/body": { "blob": key } } }),
        )
        .await;
    assert!(!is_error_result(&r), "{r}");
    assert!(text_of(&r).contains(&sha(&log)), "{r}");
    // The lines matching a pattern, joined by newlines, without numbers.
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("ERROR")).collect();
    let r = client
        .call(
            "loom_call",
            json!({ "tool": "sample_write_note", "arguments": { "title": "errors" }, "bind": { "/body": { "blob": key, "pattern": "error" } } }),
        )
        .await;
    assert!(text_of(&r).contains(&sha(&errors.join("\n"))), "{r}");
    // A slice by characters.
    let r = client
        .call(
            "loom_call",
            json!({ "tool": "sample_write_note", "arguments": { "title": "slice" }, "bind": { "/body": { "blob": key, "offset": 10, "limit": 500 } } }),
        )
        .await;
    let slice: String = log.chars().skip(10).take(500).collect();
    assert!(text_of(&r).contains(&sha(&slice)), "{r}");
    // Query rows as CSV, and a memory.
    let csv_sql = format!("SELECT order_id, status FROM {orders} ORDER BY order_id LIMIT 3");
    let r = client
        .call(
            "loom_call",
            json!({ "tool": "sample_write_note", "arguments": { "title": "csv" }, "bind": { "/body": { "sql": csv_sql, "as": "csv" } } }),
        )
        .await;
    let rows = query(&mut client, &csv_sql).await;
    let mut csv = "order_id,status\n".to_owned();
    for row in rows.as_array().unwrap() {
        csv.push_str(&format!(
            "{},{}\n",
            row["order_id"],
            row["status"].as_str().unwrap()
        ));
    }
    assert!(text_of(&r).contains(&sha(&csv)), "{csv}\n{r}");
    client
        .call(
            "loom_memory_set",
            json!({ "key": "runbook", "content": "restart the worker, then page ops" }),
        )
        .await;
    // A memory is loom's own data, not the server's: binding it asks a person first, and with
    // nobody attached the call is refused, whatever `approve.allow` says.
    let r = client
        .call(
            "loom_call",
            json!({ "tool": "sample_write_note", "arguments": { "title": "memo" }, "bind": { "/body": { "memory": "runbook" } } }),
        )
        .await;
    assert!(
        is_error_result(&r)
            && text_of(&r).contains("loom's own data")
            && text_of(&r).contains("approve.cross_server")
            && text_of(&r).contains("nobody is attached"),
        "{r}"
    );
    // A scalar keeps its exact integer type: a 19-digit id reaches the server as an integer.
    let one = format!("SELECT max(order_id) AS id FROM {orders}");
    let r = client
        .call(
            "loom_call",
            json!({ "tool": "sample_get_order_details", "bind": { "/order_id": { "sql": one, "as": "value" } } }),
        )
        .await;
    assert!(!is_error_result(&r), "{r}");
    let max = query(&mut client, &one).await[0]["id"].to_string();
    assert!(
        text_of(&r).contains(&format!("\"order_id\":{max}")),
        "{max}: {r}"
    );

    // After binding, the schema check names the binding that broke it.
    let r = client
        .call(
            "loom_call",
            json!({ "tool": "sample_write_note", "arguments": { "title": "x" }, "bind": { "/body": { "sql": csv_sql, "as": "rows" } } }),
        )
        .await;
    assert!(is_error_result(&r), "{r}");
    let t = text_of(&r);
    assert!(
        t.contains("after binding")
            && t.contains("`body` must be string")
            && t.contains("bound at `/body` from sql (rows)"),
        "{t}"
    );
    // The size cap.
    drop(client);
    let cfg = sample_config("max_bound_bytes = 1000", "approve.allow = [\"write_note\"]");
    let mut client = started(&cfg).await;
    let key = parked_log(&mut client).await;
    let r = client
        .call(
            "loom_call",
            json!({ "tool": "sample_write_note", "arguments": { "title": "log" }, "bind": { "/body": { "blob": key } } }),
        )
        .await;
    assert!(
        is_error_result(&r) && text_of(&r).contains("max_bound_bytes (1000)"),
        "{r}"
    );

    // The call log records the bindings, never the bound values.
    let log_rows = query(
        &mut client,
        "SELECT tool, outcome, arguments, inputs FROM loom_calls WHERE tool = 'sample_write_note' ORDER BY call_id",
    )
    .await;
    assert_eq!(
        log_rows.as_array().map(Vec::len),
        Some(0),
        "the refused call never reached the server: {log_rows}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_call_log_and_lineage_say_which_data_went_into_a_call() {
    let cfg = sample_config("", "approve.allow = [\"write_note\"]");
    let mut client = started(&cfg).await;
    let key = parked_log(&mut client).await;
    let r = client
        .call(
            "loom_call",
            json!({ "tool": "sample_write_note", "arguments": { "title": "errors" }, "bind": { "/body": { "blob": key, "pattern": "ERROR" } } }),
        )
        .await;
    assert!(!is_error_result(&r), "{r}");
    let rows = query(
        &mut client,
        "SELECT via, arguments, inputs FROM loom_calls WHERE tool = 'sample_write_note'",
    )
    .await;
    assert_eq!(rows[0]["via"], json!("loom_call"), "{rows}");
    assert_eq!(
        rows[0]["arguments"],
        json!("{\"title\":\"errors\"}"),
        "{rows}"
    );
    assert_eq!(rows[0]["inputs"], json!(format!("[\"{key}\"]")), "{rows}");
    // Joined on lineage: the call that produced the parked text the note was written from.
    let rows = query(
        &mut client,
        "SELECT n.call_id AS note, src.tool AS source_tool FROM loom_calls n, unnest(from_json(n.inputs, '[\"VARCHAR\"]')) AS i(input) JOIN loom_calls src ON src.reference = i.input WHERE n.tool = 'sample_write_note'",
    )
    .await;
    assert_eq!(rows[0]["source_tool"], json!("sample_tail_logs"), "{rows}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_over_rows_becomes_one_dataset_with_exact_types_and_lineage() {
    let cfg = sample_config("", "");
    let mut client = started(&cfg).await;
    let orders = orders(&mut client, 1000).await;
    let sql = format!(
        "SELECT order_id FROM {orders} WHERE status = 'pending' ORDER BY order_id LIMIT 30"
    );
    let r = client
        .call(
            "loom_call_each",
            json!({ "tool": "sample_get_order_details", "sql": sql }),
        )
        .await;
    assert!(!is_error_result(&r), "{r}");
    let s = &r["result"]["structuredContent"];
    assert_eq!(s["batch"]["calls"], json!(30), "{r}");
    assert_eq!(s["batch"]["outcomes"], json!({ "ok": 30 }), "{r}");
    let dataset = s["ref"].as_str().unwrap().to_owned();
    // Every call's lines unnested, with the call's key; exact types end to end.
    let rows = query(
        &mut client,
        &format!("SELECT count(DISTINCT call) AS calls, count(*) AS lines, min(typeof(order_id)) AS id_type, min(typeof(unit_price)) AS price_type, min(typeof(promised_date)) AS date_type FROM {dataset}"),
    )
    .await;
    assert_eq!(rows[0]["calls"], json!(30), "{rows}");
    assert!(rows[0]["lines"].as_u64().unwrap() >= 30, "{rows}");
    let source = query(
        &mut client,
        &format!("SELECT any_value(typeof(order_id)) AS t FROM {orders}"),
    )
    .await;
    assert_eq!(
        rows[0]["id_type"], source[0]["t"],
        "the input column keeps its type: {rows} {source}"
    );
    assert!(
        rows[0]["price_type"]
            .as_str()
            .unwrap()
            .starts_with("DECIMAL"),
        "{rows}"
    );
    assert_eq!(rows[0]["date_type"], json!("DATE"), "{rows}");
    let one = query(&mut client, &format!("SELECT order_id, result_order_id, unit_price FROM {dataset} WHERE call = 1 AND line = 1")).await;
    let first = query(&mut client, &format!("SELECT * FROM ({sql}) LIMIT 1")).await;
    assert_eq!(one[0]["order_id"], first[0]["order_id"], "{one}");
    assert_eq!(one[0]["result_order_id"], first[0]["order_id"], "{one}");
    let want =
        loom::sample_server::data::order_details(first[0]["order_id"].as_u64().unwrap()).unwrap();
    assert_eq!(
        one[0]["unit_price"].to_string(),
        want["lines"][0]["unit_price"].to_string(),
        "{one}"
    );
    // Every call is in the log with its batch id.
    let batch = query(
        &mut client,
        "SELECT call_id FROM loom_calls WHERE tool = 'loom_call_each'",
    )
    .await[0]["call_id"]
        .clone();
    let n = query(&mut client, &format!("SELECT count(*) AS n FROM loom_calls WHERE batch_id = {batch} AND tool = 'sample_get_order_details' AND via = 'loom_call_each'")).await;
    assert_eq!(n[0]["n"], json!(30), "{n}");
    // Lineage in describe: the batch call, the dataset its rows came from, the statement.
    let d = client
        .call("loom_describe", json!({ "ref": dataset }))
        .await;
    let lineage = &d["result"]["structuredContent"]["lineage"];
    assert_eq!(lineage["call"], batch, "{d}");
    assert_eq!(lineage["inputs"], json!([orders]), "{d}");
    assert_eq!(lineage["sql"], json!(sql), "{d}");
    assert!(text_of(&d).contains("lineage"), "{d}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_mixes_tables_text_and_errors_and_stops_when_asked() {
    let cfg = sample_config("", "");
    let mut client = started(&cfg).await;
    let orders = orders(&mut client, 1000).await;
    // Every third call asks for text; two ids no order has fail.
    let sql = format!(
        "SELECT order_id, CASE WHEN row_number() OVER (ORDER BY order_id) % 3 = 0 THEN 'text' ELSE 'json' END AS format FROM (SELECT order_id FROM {orders} ORDER BY order_id LIMIT 10) UNION ALL SELECT 1 AS order_id, 'json' AS format UNION ALL SELECT 2, 'json'"
    );
    let r = client
        .call(
            "loom_call_each",
            json!({ "tool": "sample_get_order_details", "sql": sql, "concurrency": 2 }),
        )
        .await;
    assert!(!is_error_result(&r), "{r}");
    let b = &r["result"]["structuredContent"]["batch"];
    assert_eq!(b["outcomes"], json!({ "error": 2, "ok": 10 }), "{r}");
    assert_eq!(b["first_errors"][0]["error"], json!("no order 1"), "{r}");
    let dataset = r["result"]["structuredContent"]["ref"]
        .as_str()
        .unwrap()
        .to_owned();
    let rows = query(
        &mut client,
        &format!("SELECT count(*) FILTER (WHERE text IS NOT NULL) AS texts, count(DISTINCT call) FILTER (WHERE sku IS NOT NULL) AS tables, count(*) FILTER (WHERE outcome = 'error') AS errors FROM {dataset}"),
    )
    .await;
    assert_eq!(
        rows[0],
        json!({ "texts": 3, "tables": 7, "errors": 2 }),
        "{rows}"
    );
    // on_error = "stop": no call starts after the first error.
    let sql = "SELECT 1 AS order_id UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4";
    let r = client
        .call("loom_call_each", json!({ "tool": "sample_get_order_details", "sql": sql, "concurrency": 1, "on_error": "stop" }))
        .await;
    assert_eq!(
        r["result"]["structuredContent"]["batch"]["outcomes"],
        json!({ "error": 1, "skipped": 3 }),
        "{r}"
    );
    // Rows that do not fit the schema: no call at all, and the error names the rows.
    let r = client
        .call("loom_call_each", json!({ "tool": "sample_get_order_details", "sql": "SELECT 'x' AS order_id UNION ALL SELECT '7'" }))
        .await;
    assert!(is_error_result(&r), "{r}");
    assert!(
        text_of(&r).contains("2 of 2 rows") && text_of(&r).contains("row 1 {\"order_id\":\"x\"}"),
        "{r}"
    );
    // More rows than max_calls.
    let r = client
        .call("loom_call_each", json!({ "tool": "sample_get_order_details", "sql": format!("SELECT order_id FROM {orders}"), "max_calls": 10 }))
        .await;
    assert!(
        is_error_result(&r) && text_of(&r).contains("more than max_calls (10)"),
        "{r}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bound_call_and_a_batch_are_approved_once_denied_or_timed_out() {
    let cfg = sample_config("approval_timeout = 3", "");
    let mut client = started(&cfg).await;
    let key = parked_log(&mut client).await;
    let orders = orders(&mut client, 1000).await;
    let entry = session_entry(&cfg).await;
    let eng = RemoteEngine::connect(&entry).await.expect("attach");
    let mut feed = eng.events(true);
    let client = Arc::new(tokio::sync::Mutex::new(client));
    let call = |tool: &'static str, args: Value| {
        let c = client.clone();
        tokio::spawn(async move { c.lock().await.call(tool, args).await })
    };
    // A bound call: the prompt shows the binding, its source and size, and the value in full.
    let pending = call(
        "loom_call",
        json!({ "tool": "sample_write_note", "arguments": { "title": "errors" }, "bind": { "/body": { "blob": key, "pattern": "ERROR" } } }),
    );
    let req = next_approval(&mut feed).await;
    assert_eq!(req.bindings.len(), 1, "{req:?}");
    assert_eq!(req.bindings[0].at, "/body");
    assert!(
        req.bindings[0]
            .source
            .starts_with(&format!("{key} lines matching")),
        "{req:?}"
    );
    assert!(
        req.arguments["body"].as_str().unwrap().contains("ERROR"),
        "{req:?}"
    );
    assert_eq!(
        req.bindings[0].bytes as usize,
        req.arguments["body"].as_str().unwrap().len()
    );
    decide(&*eng, req.approval, Decision::Once).await;
    let r = pending.await.unwrap();
    assert!(!is_error_result(&r), "{r}");
    // A batch of a destructive tool: asked once, for every call; a denial runs none.
    let sql = format!(
        "SELECT 'note ' || order_id AS title, status AS body FROM {orders} ORDER BY order_id LIMIT 25"
    );
    let pending = call(
        "loom_call_each",
        json!({ "tool": "sample_write_note", "sql": sql }),
    );
    let req = next_approval(&mut feed).await;
    let batch = req.batch.clone().expect("a batch approval");
    assert_eq!(batch.calls, 25);
    assert_eq!(batch.arguments.len(), 25);
    assert_eq!(batch.sql, sql);
    decide(
        &*eng,
        req.approval,
        Decision::Deny {
            reason: Some("not today".into()),
        },
    )
    .await;
    let r = pending.await.unwrap();
    assert!(
        is_error_result(&r) && text_of(&r).contains("not today"),
        "{r}"
    );
    // Approved: all 25 run, and no call of the batch asks again.
    let pending = call(
        "loom_call_each",
        json!({ "tool": "sample_write_note", "sql": sql }),
    );
    let req = next_approval(&mut feed).await;
    decide(&*eng, req.approval, Decision::Once).await;
    let r = pending.await.unwrap();
    assert_eq!(
        r["result"]["structuredContent"]["batch"]["outcomes"],
        json!({ "ok": 25 }),
        "{r}"
    );
    // Nobody answers: denied at approval_timeout, and nothing ran.
    let r = call(
        "loom_call_each",
        json!({ "tool": "sample_write_note", "sql": sql }),
    )
    .await
    .unwrap();
    assert!(
        is_error_result(&r) && text_of(&r).contains("approval_timeout"),
        "{r}"
    );
    let Ok(Reply::Calls { calls }) = eng.request(Request::Calls { limit: 1000 }).await else {
        panic!("calls")
    };
    let notes = calls
        .iter()
        .filter(|c| c.tool == "sample_write_note" && c.batch.is_some())
        .count();
    assert_eq!(
        notes, 25,
        "only the approved batch's calls reached the server"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_batch_midway_stops_the_rest_and_the_dataset_says_which_ran() {
    let cfg = sample_config("", "");
    let mut client = started(&cfg).await;
    let entry = session_entry(&cfg).await;
    let eng = RemoteEngine::connect(&entry).await.expect("attach");
    let mut feed = eng.events(true);
    // Twenty slow calls, two at a time; a person cancels the batch once a few have ended.
    let id = client.next_request_id();
    client
        .send_raw(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": "loom_call_each", "arguments": {
            "tool": "sample_slow_count", "sql": "SELECT 2 AS steps, 150 AS delay_ms FROM range(20)", "concurrency": 2 },
            "_meta": { "progressToken": "batch-1" } } }).to_string())
        .await;
    let mut batch = None;
    let mut progress = 0;
    while progress < 3 {
        let ev = tokio::time::timeout(Duration::from_secs(30), feed.live.recv())
            .await
            .expect("events")
            .expect("feed");
        match ev.event {
            Event::CallStarted(c) if c.tool == "loom_call_each" => batch = Some(c.call),
            Event::CallProgress { call, .. } if Some(call) == batch => progress += 1,
            _ => {}
        }
    }
    eng.request(Request::CancelCall {
        call: batch.unwrap(),
    })
    .await
    .unwrap();
    let reply = client
        .wait_for(Duration::from_secs(30), |v| v["id"] == json!(id))
        .await;
    let v: Value = serde_json::from_str(&reply).unwrap();
    let outcomes = &v["result"]["structuredContent"]["batch"]["outcomes"];
    assert_eq!(
        v["result"]["structuredContent"]["batch"]["cancelled"],
        json!(true),
        "{v}"
    );
    let ok = outcomes["ok"].as_u64().unwrap_or(0);
    let skipped = outcomes["skipped"].as_u64().unwrap_or(0);
    let cancelled = outcomes["cancelled"].as_u64().unwrap_or(0);
    assert!(
        ok >= 3 && skipped > 0 && ok + skipped + cancelled == 20,
        "{v}"
    );
    // The client asked for progress: it heard it, counted in calls.
    let dataset = v["result"]["structuredContent"]["ref"]
        .as_str()
        .unwrap()
        .to_owned();
    let rows = query(
        &mut client,
        &format!("SELECT outcome, count(*) AS n FROM {dataset} GROUP BY ALL ORDER BY outcome"),
    )
    .await;
    assert!(rows.to_string().contains("skipped"), "{rows}");
}

/// Over streamable HTTP, the Python SDK as the client: a parked log bound into a note, and a
/// batch with progress counted in calls whose dataset keeps the ids exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_binds_and_runs_a_batch_over_http() {
    let cfg = sample_config("", "approve.allow = [\"write_note\"]");
    let token = "flow-token-0123456789abcdef";
    let loom = common::LoomOverHttp::start(&cfg, token).await;
    let v = common::python_client_check(&[
        "--flow".as_ref(),
        loom.url.as_ref(),
        token.as_ref(),
        "legacy".as_ref(),
    ])
    .await;
    let log = loom::sample_server::data::log_lines(3000);
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("ERROR")).collect();
    let receipt = v["receipt"].as_str().unwrap_or_default();
    assert!(receipt.contains(&sha(&errors.join("\n"))), "{v}");
    assert_eq!(v["batch"]["batch"]["calls"], 12, "{v}");
    assert_eq!(v["batch"]["batch"]["outcomes"]["ok"], 12, "{v}");
    let progress = v["progress"].as_array().expect("progress");
    assert_eq!(progress.len(), 12, "{v}");
    let last: Vec<f64> = progress[11]
        .as_array()
        .map(|p| p.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    assert_eq!(last, [12.0, 12.0], "{v}");
    assert_eq!(v["query"], json!([{ "ids": 12, "t": "BIGINT" }]), "{v}");
}

/// Data bound from one server into a call to another asks a person first (issue 45's design
/// risk: a hostile result only had to ask the model to send another server's rows, a memory
/// or the call log to its own `readOnly` sink). Followed through lineage (a materialized copy
/// of the rows is still theirs); with nobody attached it is refused, whatever `unattended`
/// says; a person sees why they are asked and approves; data of the server itself is bound
/// without asking; and `approve.cross_server = "allow"` restores the old behaviour.
#[tokio::test(flavor = "multi_thread")]
async fn data_bound_from_another_server_asks_a_person_first() {
    let sink = common::testserver_entry("t", &[]);
    let cfg = sample_config("", &format!("approve.allow = [\"write_note\"]\n{sink}"));
    let mut client = started(&cfg).await;
    let rows = orders(&mut client, 100).await;
    let r = client
        .call(
            "loom_materialize",
            json!({ "sql": format!("SELECT order_id FROM {rows}"), "name": "copied" }),
        )
        .await;
    assert!(!is_error_result(&r), "{r}");
    for source in [rows.as_str(), "copied"] {
        let r = client.call("loom_call", to_sink(source)).await;
        assert!(
            is_error_result(&r)
                && text_of(&r).contains("server `sample`")
                && text_of(&r).contains("approve.cross_server")
                && text_of(&r).contains("nobody is attached"),
            "{source}: {r}"
        );
    }
    // The server's own data goes to it without asking (write_note is allowed by policy).
    let r = client
        .call(
            "loom_call",
            json!({ "tool": "sample_write_note", "arguments": { "title": "t" }, "bind": { "/body": { "sql": format!("SELECT max(order_id)::VARCHAR AS id FROM {rows}"), "as": "value" } } }),
        )
        .await;
    assert!(!is_error_result(&r), "{r}");
    // With a person attached: asked, with the reason, and run once approved.
    let entry = session_entry(&cfg).await;
    let eng = RemoteEngine::connect(&entry).await.expect("attach");
    let mut feed = eng.events(true);
    let client = Arc::new(tokio::sync::Mutex::new(client));
    let c = client.clone();
    let args = to_sink(&rows);
    let pending = tokio::spawn(async move { c.lock().await.call("loom_call", args).await });
    let req = next_approval(&mut feed).await;
    let reason = req.reason.clone().unwrap_or_default();
    assert!(
        reason.contains("server `sample`") && reason.contains("server `t`"),
        "{req:?}"
    );
    decide(&*eng, req.approval, Decision::Once).await;
    let r = pending.await.unwrap();
    assert!(!is_error_result(&r), "{r}");
    let max = query(
        &mut *client.lock().await,
        &format!("SELECT max(order_id) AS id FROM {rows}"),
    )
    .await[0]["id"]
        .to_string();
    assert!(text_of(&r).contains(&max), "{max}: {r}");
    // A memory is loom's own data: asked about too, and sent once approved.
    client
        .lock()
        .await
        .call(
            "loom_memory_set",
            json!({ "key": "note", "content": "the memo" }),
        )
        .await;
    let c = client.clone();
    let pending = tokio::spawn(async move {
        c.lock()
            .await
            .call(
                "loom_call",
                json!({ "tool": "t_echo", "bind": { "/v": { "memory": "note" } } }),
            )
            .await
    });
    let req = next_approval(&mut feed).await;
    assert!(
        req.reason
            .as_deref()
            .is_some_and(|r| r.contains("loom's own data")),
        "{req:?}"
    );
    decide(&*eng, req.approval, Decision::Once).await;
    let r = pending.await.unwrap();
    assert!(text_of(&r).contains("the memo"), "{r}");

    // `approve.cross_server = "allow"` on the sink: bound without asking, nobody attached.
    let sink = format!("{sink}approve.cross_server = \"allow\"\n");
    let cfg = sample_config("", &sink);
    let mut client = started(&cfg).await;
    let theirs = orders(&mut client, 100).await;
    let r = client.call("loom_call", to_sink(&theirs)).await;
    assert!(!is_error_result(&r), "{r}");
}

/// A `loom_call` of the test server's echo with the largest order id of `source` bound in.
fn to_sink(source: &str) -> Value {
    json!({ "tool": "t_echo", "bind": { "/v": { "sql": format!("SELECT max(order_id) AS id FROM {source}"), "as": "value" } } })
}
