//! Resource reads and prompts through the real `loom serve`, intercepted like tool results:
//! a large table read becomes a dataset and large text is parked, each answered in its own
//! method's shape, while small answers, blobs and images reach the client byte for byte as the
//! server sent them. The server is the built-in sample server, also asked directly for what it
//! sends.

mod common;

use common::*;
use serde_json::{Value, json};
use std::time::Duration;

const T: Duration = Duration::from_secs(30);
const CUSTOMERS: &str = "sample://data/customers.json";
const LOG: &str = "sample://logs/service.log";
const CHART: &str = "sample://images/chart.png";

/// The sample server itself, on stdio, initialized.
async fn direct() -> RawClient {
    let mut c = RawClient::spawn_args(&["sample-server"], &[]);
    c.initialize().await;
    c
}

async fn both(
    loom: &mut RawClient,
    direct: &mut RawClient,
    method: &str,
    loom_params: Value,
    params: Value,
) -> (String, String) {
    let through = result_text(&loom.request_raw(method, loom_params, T).await);
    let straight = result_text(&direct.request_raw(method, params, T).await);
    (through, straight)
}

/// All of a parked text, read back page by page with `loom_fetch`.
async fn fetch_all(c: &mut RawClient, key: &str) -> String {
    let mut out = String::new();
    let mut offset = 0u64;
    loop {
        let r = c
            .call(
                "loom_fetch",
                json!({ "blob_key": key, "offset": offset, "limit": 64_000 }),
            )
            .await;
        out.push_str(&text_of(&r));
        match r["result"]["structuredContent"]["next_offset"].as_u64() {
            Some(next) if next > offset => offset = next,
            _ => return out,
        }
    }
}

/// The parked key a pointer's text names (`Parked \`blob/…\``).
fn parked_key(text: &str) -> String {
    text.strip_prefix("Parked `")
        .and_then(|t| t.split_once('`'))
        .map(|(k, _)| k.to_owned())
        .unwrap_or_else(|| panic!("not a pointer: {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_and_prompts_are_intercepted_in_their_own_shape() {
    let cfg = sample_config("", "");
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    let mut d = direct().await;

    // Small answers, and a large blob, are forwarded byte for byte.
    for uri in ["sample://docs/readme", CHART] {
        let p = json!({ "uri": uri });
        let (through, straight) = both(&mut c, &mut d, "resources/read", p.clone(), p).await;
        assert_eq!(through, straight, "{uri}");
        if uri == CHART {
            assert!(
                through.len() > 60_000,
                "the blob is large: {}",
                through.len()
            );
        }
    }
    let (through, straight) = both(
        &mut c,
        &mut d,
        "prompts/get",
        json!({ "name": "sample_triage_orders", "arguments": { "status": "paid" } }),
        json!({ "name": "triage_orders", "arguments": { "status": "paid" } }),
    )
    .await;
    assert_eq!(through, straight);
    let (through, straight) = both(
        &mut c,
        &mut d,
        "prompts/get",
        json!({ "name": "sample_review_logs", "arguments": { "lines": "3" } }),
        json!({ "name": "review_logs", "arguments": { "lines": "3" } }),
    )
    .await;
    assert_eq!(through, straight);
    assert!(through.contains("Review this service log"), "{through}");

    // A large JSON table read is a dataset: still a ReadResourceResult, one text content
    // under the URI read, whose text is the envelope.
    let r = c
        .request("resources/read", json!({ "uri": CUSTOMERS }))
        .await;
    let contents = r["result"]["contents"].as_array().expect("contents");
    assert_eq!(contents.len(), 1, "{r}");
    assert_eq!(contents[0]["uri"], CUSTOMERS, "{r}");
    assert_eq!(contents[0]["mimeType"], "text/plain", "{r}");
    assert!(contents[0].get("blob").is_none(), "{r}");
    let envelope = contents[0]["text"].as_str().unwrap();
    let dataset = envelope
        .strip_prefix("Dataset `")
        .and_then(|t| t.split_once('`'))
        .map(|(d, _)| d.to_owned())
        .unwrap_or_else(|| panic!("{envelope}"));
    assert!(dataset.starts_with("sample_data_customers"), "{dataset}");
    assert!(
        envelope.contains("from sample/resources/read sample://data/customers.json"),
        "{envelope}"
    );
    let sums = c
        .call(
            "loom_query",
            json!({ "sql": format!("SELECT count(*) AS n, sum(customer_id) AS s, count(DISTINCT email) AS e FROM {dataset}") }),
        )
        .await;
    let row = &sums["result"]["structuredContent"]["rows"][0];
    assert_eq!(row["n"], 300, "{sums}");
    assert_eq!(row["s"], 300 * 301 / 2, "{sums}");
    assert_eq!(row["e"], 300, "{sums}");
    let described = c.call("loom_describe", json!({ "ref": dataset })).await;
    let prov = &described["result"]["structuredContent"]["provenance"];
    assert_eq!(
        prov["tool"],
        format!("resources/read {CUSTOMERS}"),
        "{described}"
    );
    assert_eq!(prov["server"], "sample", "{described}");

    // Large text read is parked, exactly.
    let r = c.request("resources/read", json!({ "uri": LOG })).await;
    let contents = r["result"]["contents"].as_array().expect("contents");
    assert_eq!(contents.len(), 1, "{r}");
    assert_eq!(contents[0]["uri"], LOG, "{r}");
    let key = parked_key(contents[0]["text"].as_str().unwrap());
    let log = d.request("resources/read", json!({ "uri": LOG })).await;
    let log = log["result"]["contents"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(log.lines().count() == 2000, "the log is large");
    assert_eq!(fetch_all(&mut c, &key).await, log);

    // A large prompt is parked too, and stays a GetPromptResult: its description, one message
    // of its role, whose text is the pointer.
    let r = c
        .request("prompts/get", json!({ "name": "sample_review_logs" }))
        .await;
    let result = &r["result"];
    assert_eq!(result["description"], "Review the service log", "{r}");
    let messages = result["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 1, "{r}");
    assert_eq!(messages[0]["role"], "user", "{r}");
    assert_eq!(messages[0]["content"]["type"], "text", "{r}");
    let key = parked_key(messages[0]["content"]["text"].as_str().unwrap());
    let prompt = d
        .request("prompts/get", json!({ "name": "review_logs" }))
        .await;
    let prompt = prompt["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(fetch_all(&mut c, &key).await, prompt);

    // The call log names each by its method and what it named.
    let sql = "SELECT tool, outcome, reference FROM loom_calls WHERE tool LIKE 'resources/%' OR tool LIKE 'prompts/%' ORDER BY call_id";
    let rows = wait_until("the reads and prompts in loom_calls", async || {
        let r = c.call("loom_query", json!({ "sql": sql })).await;
        let rows = r["result"]["structuredContent"]["rows"].as_array()?.clone();
        (rows.len() >= 7).then_some(rows)
    })
    .await;
    let find = |tool: &str| {
        rows.iter()
            .rev()
            .find(|r| r["tool"] == tool)
            .unwrap_or_else(|| panic!("{tool} not in {rows:?}"))
            .clone()
    };
    let read = find(&format!("resources/read {CUSTOMERS}"));
    assert_eq!(read["outcome"], "intercepted", "{rows:?}");
    assert_eq!(read["reference"], dataset.as_str(), "{rows:?}");
    assert_eq!(find(&format!("resources/read {LOG}"))["outcome"], "parked");
    assert_eq!(
        find(&format!("resources/read {CHART}"))["outcome"],
        "passed"
    );
    assert_eq!(find("prompts/get review_logs")["outcome"], "parked");
    assert_eq!(find("prompts/get triage_orders")["outcome"], "passed");
}
