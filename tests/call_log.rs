//! The call log through the real `loom serve`: every attacher can read it, so the requests it
//! keeps are redacted like provenance (secrets in arguments never reach a workbench).

mod common;

use common::{RawClient, sample_config};
use loom::frontend::engine::{Engine, Reply, Request};
use loom::frontend::socket::RemoteEngine;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attacher_reads_requests_with_their_secrets_masked() {
    let cfg = sample_config("", "");
    let mut client = RawClient::spawn(&cfg.path);
    client.initialize().await;
    client.tool_names().await;
    let secrets = [
        "hunter2",
        "t0k3nv4lu3",
        "abc123secret",
        "cl13nts3cr3t",
        "51HxYzAbCdEfGh",
        "P@ssw0rd",
    ];
    client
        .call(
            "sample_get_weather",
            json!({
                "city": "Lisbon",
                "password": { "v": "hunter2" },
                "callback": "https://api.example.com/cb?access_token=t0k3nv4lu3&page=2",
                "headers": [["Authorization", "Token abc123secret"]],
                "body": "{\"client_secret\":\"cl13nts3cr3t\"}",
                "note": "charge with sk_live_51HxYzAbCdEfGh1234567890",
                "dsn": "Server=db;User Id=sa;Password=P@ssw0rd;Database=app",
            }),
        )
        .await;
    // A call of a tool that does not exist is refused, and logged like any other.
    let unknown = client
        .call("sample_get_wether", json!({ "city": "Lisbon" }))
        .await;
    assert_eq!(unknown["error"]["code"], json!(-32602), "{unknown}");
    let entry = common::session_entry(&cfg).await;
    let eng = RemoteEngine::connect(&entry).await.expect("attach");
    let Ok(Reply::Calls { calls }) = eng.request(Request::Calls { limit: 100 }).await else {
        panic!("calls")
    };
    let refused = calls
        .iter()
        .find(|c| c.tool == "sample_get_wether")
        .expect("the refused call is logged");
    assert_eq!(
        refused.outcome,
        loom::types::events::Outcome::Error,
        "{refused:?}"
    );
    let call = calls
        .iter()
        .find(|c| c.tool == "sample_get_weather")
        .expect("the call is logged");
    for s in secrets {
        assert!(!call.arguments.contains(s), "{s} in {}", call.arguments);
    }
    let Ok(Reply::CallDetail {
        record: Some(record),
    }) = eng.request(Request::CallDetail { call: call.call }).await
    else {
        panic!("call detail")
    };
    for s in secrets {
        assert!(!record.request.contains(s), "{s} in {}", record.request);
    }
    let request: serde_json::Value = serde_json::from_str(&record.request).expect("JSON");
    assert_eq!(request["arguments"]["city"], "Lisbon", "{request}");
    assert!(
        request["arguments"]["callback"]
            .as_str()
            .is_some_and(|u| u.contains("page=2")),
        "{request}"
    );
}

/// The traffic as a table: every finished call is a row of `loom_calls`, which the model's
/// `loom_query` and a workbench's query both read (arguments masked as in the call log), and
/// which no client statement can change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_calls_are_rows_of_loom_calls_that_no_client_can_change() {
    let cfg = sample_config("", "");
    let mut client = RawClient::spawn(&cfg.path);
    client.initialize().await;
    client.tool_names().await;
    client
        .call(
            "sample_get_weather",
            json!({ "city": "Lisbon", "password": "hunter2" }),
        )
        .await;
    client.call("sample_list_orders", json!({})).await;
    let sql = "SELECT tool, outcome, reference IS NOT NULL AS has_ref, tokens_in > tokens_out AS saved, \
               arguments, started_at <= now()::TIMESTAMP AS dated FROM loom_calls ORDER BY call_id";
    let r = client.call("loom_query", json!({ "sql": sql })).await;
    let text = r.to_string();
    let rows = r["result"]["structuredContent"]["rows"]
        .as_array()
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(rows.len(), 2, "{text}");
    let row = |i: usize, col: &str| rows[i][col].clone();
    assert_eq!(row(0, "tool"), "sample_get_weather", "{text}");
    assert_eq!(row(0, "outcome"), "passed", "{text}");
    assert!(
        row(0, "arguments")
            .as_str()
            .is_some_and(|a| a.contains("Lisbon")),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "{text}");
    assert_eq!(row(1, "tool"), "sample_list_orders", "{text}");
    assert_eq!(row(1, "outcome"), "intercepted", "{text}");
    assert_eq!(row(1, "has_ref"), true, "{text}");
    assert_eq!(row(1, "saved"), true, "{text}");
    assert_eq!(row(0, "dated"), true, "{text}");

    // Every write is refused, and the rows are still there (the loom_query calls above and
    // below are rows too, once they finish).
    for attack in [
        "DELETE FROM loom_calls",
        "UPDATE loom_calls SET tool = 'x'",
        "INSERT INTO loom_calls (tool) VALUES ('forged')",
        "DROP TABLE loom_calls",
        "TRUNCATE loom_calls",
        "ALTER TABLE loom_calls RENAME TO gone",
        "WITH d AS (DELETE FROM loom_calls RETURNING *) SELECT * FROM d",
    ] {
        let r = client.call("loom_query", json!({ "sql": attack })).await;
        assert_eq!(r["result"]["isError"], true, "{attack}: {r}");
    }
    let r = client
        .call(
            "loom_query",
            json!({ "sql": "SELECT count(*) AS n, count(*) FILTER (tool = 'sample_list_orders') AS orders, count(*) FILTER (tool = 'x' OR tool = 'forged') AS forged FROM loom_calls" }),
        )
        .await;
    let counts = &r["result"]["structuredContent"]["rows"][0];
    assert_eq!(counts["orders"], 1, "{r}");
    assert_eq!(counts["forged"], 0, "{r}");
    assert_eq!(
        counts["n"],
        2 + 1 + 7,
        "both calls, the first query and the 7 refused: {r}"
    );

    // A workbench reads the same table.
    let entry = common::session_entry(&cfg).await;
    let eng = RemoteEngine::connect(&entry).await.expect("attach");
    let Ok(Reply::Query { result }) = eng
        .request(Request::Query {
            sql: "SELECT * FROM loom_calls WHERE outcome = 'error'".into(),
        })
        .await
    else {
        panic!("query")
    };
    assert_eq!(
        result.rows, 7,
        "the refused statements are errors: {result:?}"
    );
}
