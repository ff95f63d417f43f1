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
        cols.contains(&("order_id", "BIGINT")) && cols.contains(&("created_at", "TIMESTAMP")),
        "{cols:?}"
    );
    // Offsets were converted to UTC and say so; the usual time functions work on the column.
    let created = env["columns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "created_at")
        .unwrap();
    assert!(
        created["note"]
            .as_str()
            .unwrap()
            .starts_with("UTC: converted exactly"),
        "{created}"
    );
    let by_day = c
        .call(
            "loom_query",
            json!({ "sql": format!("SELECT date_trunc('month', created_at) AS d, strftime(min(created_at), '%H:%M') AS first, count(*) AS n FROM {} GROUP BY 1 ORDER BY 1", env["ref"].as_str().unwrap()) }),
        )
        .await;
    assert!(!is_error_result(&by_day), "{by_day}");
    assert_eq!(
        structured(&by_day)["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["n"].as_u64().unwrap())
            .sum::<u64>(),
        2000
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
    assert!(is_error_result(&missing), "{missing}");
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

/// A server whose one tool, `say`, answers with its `text` argument as the whole result.
fn text_server_entry(name: &str) -> String {
    let script = root().join("tests/fixtures/text_server.py");
    format!(
        "[[servers]]\nname = \"{name}\"\ncommand = \"python3\"\nargs = [{:?}]\n",
        script.display().to_string()
    )
}

/// Long values (all over 16 bytes) in each script, with the characters that need care:
/// CJK, kana, right-to-left text with its own comma, emoji sequences with joiners, accents.
const SCRIPTS: [(&str, [&str; 3]); 5] = [
    (
        "chinese",
        [
            "北京市朝阳区建国路八十八号",
            "上海市浦东新区陆家嘴环路",
            "广州市天河区珠江新城",
        ],
    ),
    (
        "japanese",
        [
            "東京都渋谷区神南一丁目",
            "大阪府大阪市北区梅田三丁目",
            "京都府京都市左京区吉田",
        ],
    ),
    (
        "arabic",
        [
            "شارع الملك فهد، الرياض",
            "كورنيش النيل، القاهرة",
            "شارع الحمراء، بيروت",
        ],
    ),
    (
        "emoji",
        [
            "🚀 launch day 🎉🎉",
            "👩‍👩‍👧 family plan ✨",
            "🔥🔥 hot deal 💯",
        ],
    ),
    (
        "accents",
        [
            "Café de Flore, Saint-Germain",
            "Müllerstraße 12, Zürich",
            "São João da Madeira",
        ],
    ),
];

const ROWS: usize = 80;

/// The same rows written the ways tools write them: JSON, a GFM table with alignment and a
/// title, CSV, and numbered records with several pairs on a line.
fn shapes(words: &[&str; 3]) -> Vec<(&'static str, String)> {
    let name = |i: usize| format!("{} {i}", words[i % 3]);
    let json_rows: Vec<Value> = (0..ROWS)
        .map(|i| {
            json!({
                "id": i,
                "name": name(i),
                "ラベル": words[(i + 1) % 3],
                "when": format!("2025-03-{:02}T23:30:00+09:00", 1 + i % 28),
                "score": i as f64 * 1.5,
                "tags": [words[i % 3], "x"],
            })
        })
        .collect();
    let mut markdown = format!("{}\n\n| id | name | score |\n|---:|:---|:-:|\n", words[0]);
    let mut csv = "id,name,score\n".to_owned();
    let mut records = String::new();
    for i in 0..ROWS {
        let n = name(i).replace('|', "\\|");
        markdown.push_str(&format!("| {i} | {n} | {} |\n", i as f64 * 1.5));
        csv.push_str(&format!("{i},\"{}\",{}\n", name(i), i as f64 * 1.5));
        records.push_str(&format!(
            "{}. Name: {}\n   Score: {} | Rank: {i}\n",
            i + 1,
            name(i),
            i as f64 * 1.5
        ));
    }
    markdown.push_str(&format!("\n{} {ROWS}\n", words[1]));
    vec![
        ("json", Value::Array(json_rows).to_string()),
        ("markdown", markdown),
        ("csv", csv),
        ("records", records),
    ]
}

#[tokio::test]
async fn tables_in_every_script_are_intercepted_like_english_ones() {
    let (_cfg, mut c) = text_client().await;
    for (script, words) in SCRIPTS {
        for (shape, text) in shapes(&words) {
            let r = c.call("t_say", json!({ "text": text })).await;
            let env = structured(&r);
            assert_eq!(env["kind"], "dataset", "{script} {shape}: {r}");
            assert_eq!(env["rows"], ROWS, "{script} {shape}");
            assert_eq!(env["provenance"]["rung"], shape, "{script}");
            let table = env["ref"].as_str().unwrap();
            // The cell comes back exactly, whichever way the rows were written.
            let (name_col, key_col) = if shape == "records" {
                ("\"Name\"", "\"Rank\"")
            } else {
                ("name", "id")
            };
            let q = c
                .call(
                    "loom_query",
                    json!({ "sql": format!("SELECT {name_col} AS name, length({name_col}) AS len FROM {table} WHERE {key_col} = 4") }),
                )
                .await;
            let row = &structured(&q)["rows"][0];
            let want = format!("{} 4", words[1]);
            assert_eq!(row["name"], json!(want), "{script} {shape}: {q}");
            assert_eq!(row["len"], want.chars().count(), "{script} {shape}");
            if shape == "json" {
                let q = c
                    .call(
                        "loom_query",
                        json!({ "sql": format!("SELECT count(*) AS n, min(\"when\") AS first, list_contains(any_value(tags)::VARCHAR[], 'x') AS has_x FROM {table} WHERE \"ラベル\" = '{}'", words[2]) }),
                    )
                    .await;
                let row = &structured(&q)["rows"][0];
                assert!(row["n"].as_u64().unwrap() > 0, "{script}: {q}");
                // 23:30 at +09:00 is 14:30 UTC the same day.
                assert!(
                    row["first"].as_str().unwrap().ends_with("14:30:00"),
                    "{script}: {q}"
                );
                assert_eq!(row["has_x"], true, "{script}: {q}");
            }
        }
    }
}

#[tokio::test]
async fn large_arguments_do_not_defeat_interception() {
    let (_cfg, mut c) = client("").await;
    // A query text far larger than the table it fetches: copied into the envelope whole, it
    // made the envelope dearer than the raw result, and the result went through raw.
    let query = "SELECT o.*, c.name FROM orders o JOIN customers c USING (customer_id) WHERE c.note LIKE '%東京%' -- 説明\n".repeat(500);
    let r = c
        .call(
            "sample_list_orders",
            json!({ "limit": 150, "query": query }),
        )
        .await;
    let env = structured(&r);
    assert_eq!(env["kind"], "dataset", "{}", text_of(&r).len());
    assert_eq!(env["rows"], 150);
    let args = &env["provenance"]["arguments"];
    assert_eq!(args["limit"], 150);
    let shown = args["query"].as_str().unwrap();
    let rest = query.chars().count() - 60;
    assert!(
        shown.ends_with(&format!("…[+{rest} chars]"))
            && query.starts_with(shown.split('…').next().unwrap()),
        "{shown}"
    );
    let envelope_tokens = loom::intercept::tokens::estimate(&r["result"].to_string());
    let query_tokens = loom::intercept::tokens::estimate(&query);
    assert!(
        envelope_tokens < query_tokens / 4,
        "{envelope_tokens} vs {query_tokens}"
    );
    // loom_describe shows more of the call, still bounded.
    let d = c.call("loom_describe", json!({ "ref": env["ref"] })).await;
    let described = structured(&d)["provenance"]["arguments"]["query"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        described.chars().count() > 1000 && described.len() < query.len(),
        "{}",
        described.len()
    );
}

async fn text_client() -> (TempConfig, RawClient) {
    let cfg = TempConfig::new(&format!(
        "token_threshold = 200\n{}",
        text_server_entry("t")
    ));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    (cfg, c)
}

/// A JSON key `""` is a column like any other (it once failed the ingest and the whole result
/// reached the model raw), and rows the engine still cannot store (a NUL in a column name)
/// are parked rather than forwarded whole.
#[tokio::test]
async fn an_empty_key_is_a_column_and_rows_that_cannot_be_stored_are_parked() {
    let (_cfg, mut c) = text_client().await;
    let rows = |key: &str| {
        let rows: Vec<Value> = (0..3000)
            .map(|i| json!({ "n": i, "name": format!("item {i}"), "amount": i % 97, key: "x" }))
            .collect();
        Value::Array(rows).to_string()
    };
    let r = c.call("t_say", json!({ "text": rows("") })).await;
    let env = structured(&r);
    assert_eq!(env["kind"], "dataset", "{r}");
    assert_eq!(env["rows"], 3000);
    let names: Vec<&str> = env["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["n", "name", "amount", "column_4"], "{env}");
    let q = c
        .call(
            "loom_query",
            json!({ "sql": format!("SELECT count(*) AS n FROM {} WHERE column_4 = 'x'", env["ref"].as_str().unwrap()) }),
        )
        .await;
    assert_eq!(structured(&q)["rows"][0]["n"], 3000, "{q}");

    let text = rows("a\u{0}b");
    let r = c.call("t_say", json!({ "text": text })).await;
    let p = structured(&r);
    assert_eq!(p["kind"], "parked", "{r}");
    assert!(
        r["result"].to_string().len() < 2000,
        "a pointer, not the rows"
    );
    let page = c
        .call(
            "loom_fetch",
            json!({ "blob_key": p["blob_key"], "offset": 0, "limit": 64000 }),
        )
        .await;
    assert!(
        text.starts_with(&text_of(&page)),
        "the parked text is the result's"
    );
}

/// `{columns, columnTypes, rows: [[…]]}`, as MotherDuck's DuckDB server answers a query,
/// becomes a dataset with those names and the declared types, also wrapped in an object.
#[tokio::test]
async fn a_columnar_sql_result_becomes_a_typed_dataset() {
    let (_cfg, mut c) = text_client().await;
    let rows: Vec<Value> = (0..2000)
        .map(|i| {
            json!([
                7_300_000_000_000_000_000u64 + i,
                serde_json::from_str::<Value>(&format!("{}.{:02}", 10 + i * 7, i % 100)).unwrap(),
                format!("2023-01-01 00:{:02}:{:02}.807144", i % 60, i % 60),
                if i % 3 == 0 {
                    Value::Null
                } else {
                    json!(format!("note {i}"))
                },
            ])
        })
        .collect();
    let result = json!({
        "success": true,
        "columns": ["order_id", "amount", "ordered_at", "note"],
        "columnTypes": ["BIGINT", "DECIMAL(12,2)", "TIMESTAMP", "VARCHAR"],
        "rows": rows,
        "rowCount": 2000,
    });
    for text in [
        serde_json::to_string_pretty(&result).unwrap(),
        json!({ "data": result }).to_string(),
    ] {
        let r = c.call("t_say", json!({ "text": text })).await;
        let env = structured(&r);
        assert_eq!(env["kind"], "dataset", "{r}");
        assert_eq!(env["rows"], 2000);
        let cols: Vec<(&str, &str)> = env["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["name"].as_str().unwrap(), c["type"].as_str().unwrap()))
            .collect();
        assert_eq!(
            cols,
            [
                ("order_id", "BIGINT"),
                ("amount", "DECIMAL(12,2)"),
                ("ordered_at", "TIMESTAMP"),
                ("note", "VARCHAR")
            ]
        );
        let table = env["ref"].as_str().unwrap();
        let q = c
            .call(
                "loom_query",
                json!({ "sql": format!("SELECT sum(amount)::VARCHAR AS s, max(order_id) AS m, count(note) AS n FROM {table}") }),
            )
            .await;
        let row = &structured(&q)["rows"][0];
        let want: u64 = (0..2000u64).map(|i| (10 + i * 7) * 100 + i % 100).sum();
        assert_eq!(
            row["s"],
            json!(format!("{}.{:02}", want / 100, want % 100)),
            "{q}"
        );
        assert_eq!(row["m"].to_string(), "7300000000000001999");
        assert_eq!(row["n"], 1333);
    }
}

/// A search that matches inside one enormous line (minified JSON, a repr) returns an excerpt
/// around the match within `limit`, and where to read on, never the whole line.
#[tokio::test]
async fn a_pattern_match_in_an_enormous_line_is_cut_to_the_limit() {
    let (_cfg, mut c) = text_client().await;
    let mut line = String::new();
    let mut i = 0;
    while line.chars().count() < 815_000 {
        line.push_str(&format!("({i}, '名前 {i}', 12.5), "));
        i += 1;
    }
    line.push_str("(99999, '李 Crab🦀', 1.0)");
    while line.chars().count() < 815_611 {
        line.push('x');
    }
    let r = c.call("t_say", json!({ "text": line })).await;
    let p = structured(&r);
    assert_eq!(p["kind"], "parked", "{r}");
    let key = p["blob_key"].clone();
    for limit in [500, 4000, 64000, 40] {
        let f = c
            .call(
                "loom_fetch",
                json!({ "blob_key": key, "pattern": "李 Crab", "limit": limit }),
            )
            .await;
        let text = text_of(&f);
        assert!(
            text.chars().count() <= limit,
            "{limit}: {} chars",
            text.chars().count()
        );
        assert!(text.contains("李 Crab"), "{limit}: {text}");
        let st = structured(&f);
        assert_eq!(st["matched_lines"], 1);
        assert_eq!(st["next_offset"], -1);
        // Reading on from where the excerpt ends gives the text that follows it.
        let at = st["cut_at"].as_u64().unwrap() as usize;
        let rest = c
            .call(
                "loom_fetch",
                json!({ "blob_key": key, "offset": at, "limit": 10 }),
            )
            .await;
        let want: String = line.chars().skip(at).take(10).collect();
        assert_eq!(text_of(&rest), want);
        if limit >= 500 {
            assert!(text.contains(&format!("offset {at}")), "{text}");
        }
    }
}
