//! Interception end to end: the real `loom serve` in front of the sample server and the test
//! server. Large tables become envelopes, the model queries and joins them with loom's tools,
//! and everything that is not a clean table passes through untouched.

mod common;

use common::*;
use serde_json::{Value, json};

const SAMPLE: &str =
    "[[servers]]\nname = \"sample\"\ncommand = \"loom\"\nargs = [\"sample-server\"]\n";

async fn client(extra: &str) -> (TempConfig, RawClient) {
    let cfg = TempConfig::new(&format!("{extra}{SAMPLE}"));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    (cfg, c)
}

fn structured(r: &Value) -> &Value {
    &r["result"]["structuredContent"]
}

#[tokio::test]
async fn large_tables_become_envelopes_and_can_be_queried_and_joined() {
    let (cfg, mut c) = client("").await;
    let names = c.all_tool_names().await;
    for t in [
        "loom_query",
        "loom_list_datasets",
        "loom_describe",
        "loom_materialize",
        "loom_drop",
        "loom_export",
    ] {
        assert!(names.contains(&t.to_owned()), "{t} not listed: {names:?}");
    }
    // loom's tools come after the downstream ones.
    assert!(
        names.iter().position(|n| n == "loom_query")
            > names.iter().position(|n| n == "sample_tail_logs")
    );

    let raw_orders = c.call("sample_list_orders", json!({ "limit": 2000 })).await;
    let env = structured(&raw_orders);
    assert_eq!(env["kind"], "dataset", "{raw_orders}");
    assert_eq!(env["rows"], 2000);
    let orders = env["ref"].as_str().unwrap().to_owned();
    assert!(orders.starts_with("sample_list_orders_"), "{orders}");
    let cols: Vec<(&str, &str)> = env["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["type"].as_str().unwrap()))
        .collect();
    assert!(
        cols.contains(&("order_id", "BIGINT")) && cols.contains(&("created_at", "TIMESTAMPTZ")),
        "{cols:?}"
    );
    assert_eq!(env["provenance"]["arguments"], json!({ "limit": 2000 }));
    let envelope_len = raw_orders.to_string().len();

    // The same call without loom is ~20× bigger.
    let customers = c.call("sample_list_customers", json!({})).await;
    let cenv = structured(&customers);
    let customers_ref = cenv["ref"].as_str().unwrap().to_owned();
    assert_eq!(cenv["context"]["total"], 300);
    let hints = cenv["join_hints"].as_array().unwrap();
    assert!(
        hints
            .iter()
            .any(|h| h["other"] == json!(orders) && h["column"] == "customer_id"),
        "{hints:?}"
    );

    let q = c
        .call("loom_query", json!({ "sql": format!("SELECT c.tier, count(*) AS orders FROM {orders} o JOIN {customers_ref} c USING (customer_id) GROUP BY 1 ORDER BY 1") }))
        .await;
    let rows = structured(&q)["rows"].as_array().unwrap().clone();
    assert_eq!(
        rows.iter()
            .map(|r| r["orders"].as_u64().unwrap())
            .sum::<u64>(),
        2000,
        "{q}"
    );
    let q = c
        .call(
            "loom_query",
            json!({ "sql": format!("SELECT order_id FROM {orders} LIMIT 1") }),
        )
        .await;
    assert_eq!(
        structured(&q)["rows"][0]["order_id"].to_string(),
        "7300000000000007919"
    );

    let refused = c
        .call(
            "loom_query",
            json!({ "sql": format!("DROP TABLE {orders}") }),
        )
        .await;
    assert!(
        is_error_result(&refused) && text_of(&refused).contains("not allowed"),
        "{refused}"
    );
    let wrong = c.call("loom_query", json!({ "sq": "SELECT 1" })).await;
    assert!(
        is_error_result(&wrong) && text_of(&wrong).contains("did you mean `sql`"),
        "{wrong}"
    );

    let list = c.call("loom_list_datasets", json!({})).await;
    assert_eq!(structured(&list)["total"], 2);
    let d = c.call("loom_describe", json!({ "ref": orders })).await;
    assert_eq!(structured(&d)["sample_rows"].as_array().unwrap().len(), 10);
    let m = c.call("loom_materialize", json!({ "sql": format!("SELECT * FROM {orders} WHERE status = 'paid'"), "name": "paid" })).await;
    assert_eq!(structured(&m)["ref"], "paid", "{m}");
    let e = c
        .call("loom_export", json!({ "ref": "paid", "format": "csv" }))
        .await;
    let path = structured(&e)["path"].as_str().unwrap().to_owned();
    assert!(
        path.starts_with(cfg.dir.path().join("exports").to_str().unwrap()),
        "{path}"
    );
    let rows_written = structured(&e)["rows"].as_u64().unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap().lines().count() as u64,
        rows_written + 1
    );
    let dropped = c.call("loom_drop", json!({ "ref": "paid" })).await;
    assert!(!is_error_result(&dropped));
    assert!(envelope_len < 20_000, "envelope is {envelope_len} bytes");
}

#[tokio::test]
async fn small_errors_and_text_pass_through_untouched() {
    let (_cfg, mut c) = client("").await;
    let small = c.call("sample_list_orders", json!({ "limit": 3 })).await;
    let rows: Value = serde_json::from_str(&text_of(&small)).unwrap();
    assert_eq!(
        rows.as_array().unwrap().len(),
        3,
        "a small result is not intercepted"
    );
    let logs = c.call("sample_tail_logs", json!({ "lines": 20 })).await;
    assert_eq!(
        text_of(&logs).lines().count(),
        20,
        "small text passes through"
    );
    let bad = c.call("sample_list_orders", json!({ "limit": 0 })).await;
    assert!(is_error_result(&bad));
}

#[tokio::test]
async fn interception_can_be_turned_off_per_server() {
    let cfg = TempConfig::new(&format!("{SAMPLE}intercept = \"never\"\n"));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    let r = c.call("sample_list_orders", json!({ "limit": 2000 })).await;
    assert!(r["result"].get("structuredContent").is_none());
    assert_eq!(
        serde_json::from_str::<Value>(&text_of(&r))
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        2000
    );
}

#[tokio::test]
async fn secrets_in_arguments_never_reach_the_envelope() {
    let toml = format!(
        "{}provenance_denylist = [\"echo\"]\n",
        testserver_entry("t", &[])
    );
    let cfg = TempConfig::new(&format!("token_threshold = 50\n{toml}"));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    // The test server echoes its arguments as a JSON object; make it big and tabular.
    let rows: Vec<Value> = (0..400)
        .map(|i| json!({ "id": i, "name": format!("row number {i} of the test table") }))
        .collect();
    let r = c
        .call(
            "t_tool_000",
            json!({ "api_key": "sk-SECRETSECRETSECRET1234", "rows": rows }),
        )
        .await;
    let text = r.to_string();
    assert!(!text.contains("SECRETSECRET"), "{text}");
    assert_eq!(structured(&r)["kind"], "dataset", "{r}");
    assert_eq!(
        structured(&r)["provenance"]["arguments"]["api_key"],
        "[redacted]"
    );
    let r = c.call("t_echo", json!({ "rows": rows })).await;
    assert!(
        structured(&r)["provenance"]["arguments"].is_null(),
        "denylisted tool's arguments are omitted: {r}"
    );
}

#[tokio::test]
async fn envelopes_are_at_least_twenty_times_smaller_for_ten_thousand_rows() {
    let (_cfg, mut c) = client("").await;
    let r = c
        .call("sample_list_orders", json!({ "limit": 10000 }))
        .await;
    let env = structured(&r);
    assert_eq!(env["rows"], 10000);
    let original = env["original_tokens"].as_u64().unwrap() as f64;
    let envelope = loom::intercept::tokens::estimate(&r["result"].to_string()) as f64;
    assert!(
        original / envelope >= 20.0,
        "only {:.1}× smaller ({original} → {envelope})",
        original / envelope
    );
}

#[tokio::test]
async fn large_text_is_parked_and_read_back() {
    let (_cfg, mut c) = client("").await;
    let small = text_of(&c.call("sample_tail_logs", json!({ "lines": 3 })).await);
    let parked = c.call("sample_tail_logs", json!({ "lines": 3000 })).await;
    let p = structured(&parked);
    assert_eq!(p["kind"], "parked", "{parked}");
    assert_eq!(p["total_lines"], 3000);
    let key = p["blob_key"].as_str().unwrap().to_owned();
    assert!(
        p["summary"]
            .as_str()
            .unwrap()
            .starts_with("sample/tail_logs: "),
        "{p}"
    );
    // The same output parked again is the same blob.
    let again = c.call("sample_tail_logs", json!({ "lines": 3000 })).await;
    assert_eq!(structured(&again)["blob_key"], json!(key));
    // A slice is the text itself (the first lines of a longer log are the short log).
    let slice = c
        .call(
            "loom_fetch",
            json!({ "blob_key": key, "offset": 0, "limit": small.chars().count() }),
        )
        .await;
    assert_eq!(text_of(&slice), small);
    assert!(structured(&slice)["next_offset"].as_i64().unwrap() > 0);
    // A pattern finds matching lines with their numbers.
    let errors = c
        .call(
            "loom_fetch",
            json!({ "blob_key": key, "pattern": "error", "context_lines": 1, "limit": 2000 }),
        )
        .await;
    let st = structured(&errors);
    assert!(st["matched_lines"].as_u64().unwrap() > 10, "{st}");
    assert!(
        text_of(&errors)
            .lines()
            .any(|l| l.contains(": ") && l.contains("ERROR")),
        "{errors}"
    );
    let bad = c
        .call(
            "loom_fetch",
            json!({ "blob_key": key, "pattern": "(a)\\1" }),
        )
        .await;
    assert!(
        is_error_result(&bad) && text_of(&bad).contains("invalid pattern"),
        "{bad}"
    );
    let missing = c
        .call("loom_fetch", json!({ "blob_key": "blob/0000000000000000" }))
        .await;
    assert_eq!(structured(&missing)["found"], false);
    // The model can park text itself.
    let mine = c
        .call(
            "loom_park",
            json!({ "content": "notes ".repeat(100), "summary": "my notes" }),
        )
        .await;
    let k = structured(&mine)["blob_key"].as_str().unwrap().to_owned();
    let back = c
        .call("loom_fetch", json!({ "blob_key": k, "limit": 12 }))
        .await;
    assert_eq!(text_of(&back), "notes notes ");
    assert_eq!(structured(&back)["summary"], "my notes");
}

#[tokio::test]
async fn parking_can_be_turned_off() {
    let cfg = TempConfig::new(&format!("{SAMPLE}park_never = [\"tail_*\"]\n"));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    let r = c.call("sample_tail_logs", json!({ "lines": 3000 })).await;
    assert_eq!(text_of(&r).lines().count(), 3000);
}
