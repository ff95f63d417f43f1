//! The sealed DuckDB store through its library API: sealing, ingest with exact types,
//! profiling, queries (inline and as datasets), the statement guard, materialize, export,
//! join hints and eviction.

use loom::intercept::extract::find_in_text;
use loom::store::{
    ExportFormat, Provenance, QueryOutcome, Store, StoreConfig, StoreError, envelope,
};
use serde_json::{Value, json};
use std::time::Duration;

fn open_with(dir: &std::path::Path, memory_budget: u64, query_timeout: Duration) -> Store {
    Store::open(StoreConfig {
        memory_limit: "1GB".into(),
        threads: 2,
        memory_budget,
        query_timeout,
        export_dir: dir.join("exports"),
        envelope_budget: 1500,
        inline_rows: 100,
        probe_file: std::env::current_exe().unwrap(),
        blob_dir: None,
        parked_max_bytes: u64::MAX,
    })
    .expect("store opens and proves its seal")
}

fn open(dir: &std::path::Path) -> Store {
    open_with(dir, 512 << 20, Duration::from_secs(5))
}

fn prov(tool: &str) -> Provenance {
    Provenance {
        server: "sample".into(),
        tool: tool.into(),
        arguments: Some(json!({ "limit": 10 })),
        at: "2026-11-30T00:00:00Z".into(),
        rung: "json".into(),
    }
}

fn ingest_json(store: &Store, tool: &str, text: &str) -> String {
    let table = find_in_text(text)
        .expect("rows found")
        .into_table()
        .expect("typed table");
    store
        .ingest(&table, prov(tool))
        .expect("ingest")
        .dataset_ref
}

fn inline(store: &Store, sql: &str) -> Vec<Value> {
    match store.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}")) {
        QueryOutcome::Inline { rows, .. } => rows,
        QueryOutcome::Dataset(d) => panic!("expected inline rows, got dataset {}", d.dataset_ref),
    }
}

const ORDERS: &str = r#"[
 {"order_id": 7300000000000007919, "customer_id": 1, "status": "paid", "amount": 10.5, "created_at": "2025-03-01T10:00:00Z", "day": "2025-03-01", "meta": {"channel": "web", "tags": ["a", "b"]}},
 {"order_id": 7300000000000015838, "customer_id": 2, "status": "pending", "amount": 99.99, "created_at": "2025-03-02T11:30:00Z", "day": "2025-03-02", "meta": {"channel": "app", "tags": []}},
 {"order_id": 7300000000000023757, "customer_id": 1, "status": "paid", "amount": 5, "created_at": "2025-03-03T12:00:00Z", "day": "2025-03-03", "meta": {"channel": "web", "tags": ["c"]}}
]"#;

const CUSTOMERS: &str = r#"{"total": 3, "customers": [
 {"customer_id": 1, "name": "Ana"}, {"customer_id": 2, "name": "Bruno"}, {"customer_id": 3, "name": "Chen"}]}"#;

#[test]
fn ingest_keeps_exact_types_order_and_context() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let r = ingest_json(&store, "list_orders", ORDERS);
    let meta = store.dataset(&r).unwrap();
    let types: Vec<(&str, &str)> = meta
        .columns
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    assert_eq!(
        types,
        vec![
            ("order_id", "BIGINT"),
            ("customer_id", "BIGINT"),
            ("status", "VARCHAR"),
            ("amount", "DECIMAL(18,2)"),
            ("created_at", "TIMESTAMP"),
            ("day", "DATE"),
            ("meta", "JSON"),
            ("meta.channel", "VARCHAR"),
            ("meta.tags", "JSON"),
        ]
    );
    // A 19-digit id comes back exactly, in insertion order.
    let rows = inline(&store, &format!("SELECT order_id FROM {r}"));
    assert_eq!(rows[0]["order_id"].to_string(), "7300000000000007919");
    assert_eq!(rows[2]["order_id"].to_string(), "7300000000000023757");
    let rows = inline(
        &store,
        &format!("SELECT count(*) AS n FROM {r} WHERE day >= DATE '2025-03-02'"),
    );
    assert_eq!(rows[0]["n"], 2);
    let rows = inline(
        &store,
        &format!("SELECT \"meta.tags\"->>'$[0]' AS first_tag FROM {r} ORDER BY order_id"),
    );
    assert_eq!(rows[0]["first_tag"], "a");
    let c = ingest_json(&store, "list_customers", CUSTOMERS);
    assert_eq!(store.dataset(&c).unwrap().context["total"], 3);
}

/// Rows as a Postgres MCP server sends a jsonb column that holds an object on every 7th row and
/// null elsewhere, pretty-printed, bare (the fast reader) or wrapped in an object (the general
/// rung).
fn sparse_objects(rows: usize, wrapped: bool) -> String {
    let rows: Vec<Value> = (0..rows)
        .map(|i| {
            let meta = if i % 7 == 0 {
                json!({ "q": i, "sku": format!("S-{i}") })
            } else {
                Value::Null
            };
            json!({ "order_id": i, "meta": meta })
        })
        .collect();
    if wrapped {
        serde_json::to_string_pretty(&json!({ "rows": rows })).unwrap()
    } else {
        serde_json::to_string_pretty(&rows).unwrap()
    }
}

#[test]
fn a_json_column_with_objects_on_some_rows_counts_every_object() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let objects = (0..300).filter(|i| i % 7 == 0).count();
    for wrapped in [false, true] {
        let r = ingest_json(&store, "pg_query", &sparse_objects(300, wrapped));
        let rows = inline(
            &store,
            &format!(
                "SELECT count(meta) AS m, count(*) FILTER (WHERE meta IS NOT NULL) AS w, count(\"meta.q\") AS q, sum((meta->>'$.q')::BIGINT) AS s FROM {r}"
            ),
        );
        assert_eq!(rows[0]["m"], objects, "wrapped {wrapped}");
        assert_eq!(rows[0]["w"], objects);
        assert_eq!(rows[0]["q"], objects);
        let sum: usize = (0..300).filter(|i| i % 7 == 0).sum();
        assert_eq!(rows[0]["s"], sum);
        let rows = inline(
            &store,
            &format!("SELECT meta, \"meta.sku\" AS sku FROM {r} WHERE order_id = 14"),
        );
        assert_eq!(rows[0]["meta"], json!({ "q": 14, "sku": "S-14" }));
        assert_eq!(rows[0]["sku"], "S-14");
        // The envelope says the column is the truth and the dotted ones are views of it.
        let p = store.profile(&r, 5).unwrap();
        let notes: Vec<(&str, Option<&str>)> = p
            .columns
            .iter()
            .map(|c| (c.name.as_str(), c.note.as_deref()))
            .collect();
        assert_eq!(
            notes,
            [
                ("order_id", None),
                ("meta", Some("JSON object; also flattened to meta.*")),
                ("meta.q", Some("view of meta")),
                ("meta.sku", Some("view of meta")),
            ]
        );
    }
}

#[test]
fn a_json_column_with_objects_on_every_row_or_mixed_values_exists() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let every =
        r#"[{"id": 1, "meta": {"a": 1}}, {"id": 2, "meta": {}}, {"id": 3, "meta": {"a": 3}}]"#;
    let r = ingest_json(&store, "pg_query", every);
    let rows = inline(&store, &format!("SELECT meta FROM {r} ORDER BY id"));
    let metas: Vec<&Value> = rows.iter().map(|r| &r["meta"]).collect();
    assert_eq!(metas, [&json!({"a": 1}), &json!({}), &json!({"a": 3})]);
    // Objects beside text, numbers and arrays: every value kept, none flattened away.
    let mixed = r#"[{"id": 1, "meta": {"a": 1}}, {"id": 2, "meta": "none"}, {"id": 3, "meta": 7300000000000007919}, {"id": 4, "meta": [1]}, {"id": 5, "meta": null}]"#;
    let r = ingest_json(&store, "pg_query", mixed);
    let meta = store.dataset(&r).unwrap();
    let names: Vec<&str> = meta.columns.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["id", "meta"]);
    let rows = inline(
        &store,
        &format!("SELECT meta::VARCHAR AS m FROM {r} ORDER BY id"),
    );
    let metas: Vec<&Value> = rows.iter().map(|r| &r["m"]).collect();
    assert_eq!(
        metas,
        [
            &json!(r#"{"a":1}"#),
            &json!(r#""none""#),
            &json!("7300000000000007919"),
            &json!("[1]"),
            &Value::Null
        ]
    );
}

#[test]
fn envelope_profile_and_join_hints() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let c = ingest_json(&store, "list_customers", CUSTOMERS);
    let o = ingest_json(&store, "list_orders", ORDERS);
    let meta = store.dataset(&o).unwrap();
    let p = store.profile(&o, 5).unwrap();
    assert_eq!(p.samples.len(), 3);
    let status = p.columns.iter().find(|c| c.name == "status").unwrap();
    assert_eq!(status.top[0], (json!("paid"), 2));
    let amount = p.columns.iter().find(|c| c.name == "amount").unwrap();
    // Money is an exact DECIMAL, read back at its scale.
    assert_eq!(
        amount.min.as_ref().map(Value::to_string),
        Some("5.00".to_owned())
    );
    let hint = p
        .join_hints
        .iter()
        .find(|h| h.other == c)
        .expect("join hint to customers");
    assert_eq!(hint.column, "customer_id");
    // Every order's customer exists: a foreign key into a primary key scores 1.0 that way.
    assert_eq!(hint.this_in_other, 1.0);
    assert!((hint.other_in_this - 2.0 / 3.0).abs() < 1e-9);
    let (env, tokens) = envelope::render(&meta, &p, 1500, Some(5000));
    assert!(tokens <= 1500);
    let text = env["content"][0]["text"].as_str().unwrap();
    assert!(text.contains(&format!("Dataset `{o}`: 3 rows")), "{text}");
    assert!(text.contains("join hints"), "{text}");
    assert_eq!(env["structuredContent"]["ref"], json!(o));
    assert_eq!(
        env["structuredContent"]["provenance"]["tool"],
        "list_orders"
    );
    // Joins across datasets work.
    let rows = inline(
        &store,
        &format!(
            "SELECT c.name, sum(o.amount) AS total FROM {o} o JOIN {c} c USING (customer_id) GROUP BY 1 ORDER BY 1"
        ),
    );
    assert_eq!(
        rows,
        // The exact sum of DECIMAL(18,2) money, at its scale.
        serde_json::from_str::<Vec<Value>>(
            r#"[{"name": "Ana", "total": 15.50}, {"name": "Bruno", "total": 99.99}]"#
        )
        .unwrap()
    );
}

/// Two results of one tool hold rows of one kind: their shared column is one attribute, not a
/// join, so no hint pairs them (and no call of that tool pays a scan of every earlier page);
/// another tool's dataset is still hinted, and the newest datasets are scored first.
#[test]
fn pages_of_one_tool_are_not_hinted_as_joins_of_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let c = ingest_json(&store, "list_customers", CUSTOMERS);
    let first = ingest_json(&store, "list_orders", ORDERS);
    let second = ingest_json(&store, "list_orders", ORDERS);
    let p = store.profile(&second, 5).unwrap();
    assert!(
        p.join_hints.iter().all(|h| h.other != first),
        "{:?}",
        p.join_hints
    );
    assert!(
        p.join_hints
            .iter()
            .any(|h| h.other == c && h.column == "customer_id"),
        "{:?}",
        p.join_hints
    );
    // Top values of every low-cardinality column come from one statement, each column's own,
    // most frequent first.
    let status = p.columns.iter().find(|c| c.name == "status").unwrap();
    assert_eq!(status.top[0], (json!("paid"), 2));
    let customer = p.columns.iter().find(|c| c.name == "customer_id").unwrap();
    assert_eq!(customer.top, vec![(json!(1), 2), (json!(2), 1)]);
}

#[test]
fn wide_tables_stay_within_the_envelope_budget() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let rows: Vec<Value> = (0..200)
        .map(|i| {
            let mut o = serde_json::Map::new();
            for c in 0..80 {
                o.insert(
                    format!("column_number_{c}"),
                    json!(format!(
                        "value {i} {c} with some longer text to make it wide"
                    )),
                );
            }
            Value::Object(o)
        })
        .collect();
    let r = ingest_json(&store, "wide", &Value::Array(rows).to_string());
    let meta = store.dataset(&r).unwrap();
    let p = store.profile(&r, 5).unwrap();
    let (env, tokens) = envelope::render(&meta, &p, 1500, Some(100_000));
    assert!(
        tokens <= 1500
            || env["structuredContent"]["sample_rows"]
                .as_array()
                .unwrap()
                .is_empty(),
        "{tokens}"
    );

    // So wide that its schema alone is over the budget: the first columns, and how many more.
    let rows: Vec<Value> = (0..5)
        .map(|i| {
            Value::Object(
                (0..1200)
                    .map(|c| (format!("measurement_{c}"), json!(i * c)))
                    .collect(),
            )
        })
        .collect();
    let r = ingest_json(&store, "very_wide", &Value::Array(rows).to_string());
    let meta = store.dataset(&r).unwrap();
    let p = store.profile(&r, 5).unwrap();
    let (env, tokens) = envelope::render(&meta, &p, 1500, Some(100_000));
    assert!(tokens <= 1500, "{tokens}");
    let listed = env["structuredContent"]["columns"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(
        listed as u64 + env["structuredContent"]["more_columns"].as_u64().unwrap(),
        1200
    );
    let text = env["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("more columns (loom_describe"), "{text}");
    // loom_describe lists them all.
    let (all, _) = envelope::render(&meta, &p, usize::MAX, None);
    assert_eq!(
        all["structuredContent"]["columns"]
            .as_array()
            .unwrap()
            .len(),
        1200
    );
}

#[test]
fn large_query_results_become_datasets() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    match store
        .query("SELECT range AS n, range * 2 AS twice FROM range(5000)")
        .unwrap()
    {
        QueryOutcome::Dataset(d) => {
            assert_eq!(d.rows, 5000);
            assert!(d.dataset_ref.starts_with("q_"));
            let rows = inline(
                &store,
                &format!("SELECT max(twice) AS m FROM {}", d.dataset_ref),
            );
            assert_eq!(rows[0]["m"], 9998);
        }
        other => panic!("{other:?}"),
    }
    // A few rows that are large become a dataset too: an inline answer costs at most four
    // envelopes (1500 tokens each here, about 24 KB).
    match store
        .query("SELECT range AS n, repeat('ab', 20000) AS c FROM range(3)")
        .unwrap()
    {
        QueryOutcome::Dataset(d) => assert_eq!(d.rows, 3),
        other => panic!("three 40 KB rows came back inline: {other:?}"),
    }
    assert!(matches!(
        store
            .query("SELECT range AS n, repeat('ab', 100) AS c FROM range(3)")
            .unwrap(),
        QueryOutcome::Inline { .. }
    ));
}

#[test]
fn every_read_only_form_works() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let r = ingest_json(&store, "list_orders", ORDERS);
    for sql in [
        "SELECT 1 AS one".to_owned(),
        "SELECT 1;".to_owned(),
        "  -- a comment\nSELECT 2 AS two -- trailing".to_owned(),
        "/* block */ SELECT ';' AS semi".to_owned(),
        "WITH x AS (SELECT 1 AS a) SELECT * FROM x".to_owned(),
        format!("FROM {r}"),
        format!("FROM {r} SELECT status"),
        "VALUES (1, 'a'), (2, 'b')".to_owned(),
        format!("DESCRIBE {r}"),
        format!("SUMMARIZE {r}"),
        format!("EXPLAIN SELECT * FROM {r}"),
        format!("SELECT * FROM {r} WHERE status IN (SELECT status FROM {r} LIMIT 1)"),
        "SELECT 18446744073709551615::UBIGINT AS big, 170141183460469231731687303715884105727::HUGEINT AS huge".to_owned(),
    ] {
        store.query(&sql).unwrap_or_else(|e| panic!("{sql:?} refused: {e}"));
    }
    let rows = inline(
        &store,
        "SELECT 18446744073709551615::UBIGINT AS big, 170141183460469231731687303715884105727::HUGEINT AS huge",
    );
    assert_eq!(rows[0]["big"].to_string(), "18446744073709551615");
    assert_eq!(
        rows[0]["huge"].to_string(),
        "170141183460469231731687303715884105727"
    );
}

#[test]
fn escape_attempts_are_all_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let r = ingest_json(&store, "list_orders", ORDERS);
    let spill = store.spill_dir().display().to_string();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "top secret").unwrap();
    let secret = secret.display().to_string();
    let attempts = vec![
        format!("COPY (SELECT 1) TO '{}/out.csv'", dir.path().display()),
        format!("COPY {r} FROM '{secret}'"),
        format!(
            "COPY {r} TO '{}/t.parquet' (FORMAT parquet)",
            dir.path().display()
        ),
        format!("ATTACH '{}/x.db' AS x", dir.path().display()),
        "ATTACH ':memory:' AS m".into(),
        "DETACH memory".into(),
        "INSTALL httpfs".into(),
        "LOAD httpfs".into(),
        "FORCE INSTALL json".into(),
        "SET enable_external_access = true".into(),
        "SET memory_limit = '100GB'".into(),
        "RESET memory_limit".into(),
        "SET temp_directory = '/tmp'".into(),
        "PRAGMA enable_profiling".into(),
        "PRAGMA memory_limit = '1GB'".into(),
        "CALL pragma_version()".into(),
        "CREATE TABLE x AS SELECT 1".into(),
        "CREATE TEMP TABLE x (a INTEGER)".into(),
        "CREATE VIEW v AS SELECT 1".into(),
        "CREATE MACRO m(a) AS a".into(),
        "CREATE SEQUENCE s".into(),
        format!("INSERT INTO {r} (order_id) VALUES (1)"),
        format!("UPDATE {r} SET status = 'x'"),
        format!("DELETE FROM {r}"),
        format!("DROP TABLE {r}"),
        format!("ALTER TABLE {r} ADD COLUMN z INTEGER"),
        format!("TRUNCATE {r}"),
        format!("SELECT 1; DROP TABLE {r}"),
        "SELECT 1; SELECT 2".into(),
        format!("/* hello */ DROP TABLE {r}"),
        format!("-- hello\nDROP TABLE {r}"),
        format!("WITH x AS (SELECT 1) INSERT INTO {r} (order_id) SELECT * FROM x"),
        format!("SELECT * FROM read_csv('{secret}')"),
        format!("SELECT * FROM read_text('{secret}')"),
        format!("SELECT * FROM read_blob('{secret}')"),
        format!("SELECT * FROM read_json('{secret}')"),
        format!("SELECT * FROM read_parquet('{secret}')"),
        format!("SELECT * FROM '{secret}'"),
        "SELECT * FROM glob('/*')".into(),
        format!("SELECT * FROM glob('{spill}/*')"),
        format!("SELECT * FROM read_text('{spill}/*')"),
        format!("SUMMARIZE SELECT * FROM read_csv('{secret}')"),
        format!("EXPORT DATABASE '{}/dump'", dir.path().display()),
        format!("IMPORT DATABASE '{}/dump'", dir.path().display()),
        "CHECKPOINT".into(),
        "VACUUM".into(),
        "BEGIN TRANSACTION".into(),
        "EXPLAIN ANALYZE SELECT 1".into(),
        "USE memory".into(),
        "CREATE SECRET s (TYPE s3, KEY_ID 'x', SECRET 'y')".into(),
        "SELECT current_setting('temp_directory') AS t; SET threads = 1".into(),
        "SELECT current_setting('temp_directory') AS t".into(),
        "SELECT * FROM duckdb_settings()".into(),
        "SELECT * FROM \"glob\"('/*')".into(),
        "SELECT * FROM main.read_text('/etc/hostname')".into(),
        "".into(),
        ";".into(),
    ];
    assert!(attempts.len() >= 40);
    for sql in &attempts {
        let out = store.query(sql);
        assert!(out.is_err(), "escape attempt ran: {sql:?} -> {out:?}");
    }
    // Nothing was written or changed.
    assert!(!dir.path().join("out.csv").exists());
    assert!(!dir.path().join("dump").exists());
    let rows = inline(&store, &format!("SELECT count(*) AS n FROM {r}"));
    assert_eq!(rows[0]["n"], 3);
    assert!(matches!(
        store.query("DROP TABLE x"),
        Err(StoreError::Refused(_))
    ));
}

#[test]
fn materialize_drop_and_export() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let r = ingest_json(&store, "list_orders", ORDERS);
    let m = store
        .materialize(
            &format!("SELECT order_id, amount FROM {r} WHERE status = 'paid'"),
            "paid_orders",
        )
        .unwrap();
    assert!(m.pinned);
    assert_eq!(m.rows, 2);
    assert!(store.materialize("SELECT 1", "paid_orders").is_err());
    assert!(store.materialize("SELECT 1", "Bad Name").is_err());
    assert!(store.materialize("DROP TABLE paid_orders", "x_y").is_err());
    // Reserved words and names the engine already uses are refused in words, never with the
    // engine's catalog error.
    for name in [
        "select",
        "from",
        "main",
        "information_schema",
        "temp",
        "loom_calls",
    ] {
        match store.materialize("SELECT 1 AS one", name) {
            Err(StoreError::Refused(why)) => assert!(why.contains("pick another name"), "{why}"),
            other => panic!("{name}: {other:?}"),
        }
    }
    let ok = store
        .materialize("SELECT 1 AS one", "select_count")
        .unwrap();
    assert_eq!(ok.rows, 1);
    let (csv, n) = store.export(&r, ExportFormat::Csv, None).unwrap();
    assert_eq!(n, 3);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(
        text.starts_with(
            "order_id,customer_id,status,amount,created_at,day,meta,meta.channel,meta.tags\n"
        ),
        "{text}"
    );
    assert!(text.contains("7300000000000007919,1,paid,10.50,"), "{text}");
    assert!(
        text.contains("\"[\"\"a\"\",\"\"b\"\"]\""),
        "JSON cells are quoted: {text}"
    );
    // Readable by the user only, as the parked copies of the same data are, whatever the umask.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&csv).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "export mode {mode:o}");
    // The folder loom made for it is the user's alone too (it was 0755: the attacker pass of
    // 2026-12-07, hole 9), whatever the process umask lets through.
    let mode = std::fs::metadata(dir.path().join("exports"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o700, "export_dir mode {mode:o}");
    // Never overwrites: the second export gets a new name.
    let (csv2, _) = store.export(&r, ExportFormat::Csv, None).unwrap();
    assert_ne!(csv, csv2);
    let (json_path, _) = store
        .export(&r, ExportFormat::Json, Some("../../escape.json"))
        .unwrap();
    assert!(
        json_path.starts_with(dir.path().join("exports")),
        "{}",
        json_path.display()
    );
    let parsed: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(parsed[0]["order_id"].to_string(), "7300000000000007919");
    let (jsonl, _) = store
        .export("paid_orders", ExportFormat::Jsonl, Some("paid"))
        .unwrap();
    assert_eq!(std::fs::read_to_string(jsonl).unwrap().lines().count(), 2);
    store.drop_dataset("paid_orders").unwrap();
    assert!(matches!(
        store.dataset("paid_orders"),
        Err(StoreError::UnknownDataset(_))
    ));
}

#[test]
fn query_timeout_interrupts() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_with(dir.path(), 512 << 20, Duration::from_millis(300));
    let out = store.query("SELECT count(*) FROM range(100000000000) a");
    assert!(matches!(out, Err(StoreError::Timeout(_))), "{out:?}");
    // The connection is usable afterwards.
    let next = store.query("SELECT 1");
    assert!(next.is_ok(), "{next:?}");
}

#[test]
fn eviction_keeps_the_engine_within_budget() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_with(dir.path(), 24 << 20, Duration::from_secs(30));
    let pinned = store
        .materialize("SELECT range AS n FROM range(1000)", "keep_me")
        .unwrap();
    let mut refs = Vec::new();
    for _ in 0..8 {
        let QueryOutcome::Dataset(d) = store
            .query("SELECT range AS n, md5(range::VARCHAR) AS h FROM range(200000)")
            .unwrap()
        else {
            panic!()
        };
        refs.push(d.dataset_ref);
    }
    assert!(
        store.memory_bytes() <= 24 << 20 || store.datasets().len() == 1,
        "{} bytes",
        store.memory_bytes()
    );
    let left: Vec<String> = store
        .datasets()
        .into_iter()
        .map(|d| d.dataset_ref)
        .collect();
    assert!(
        left.contains(&pinned.dataset_ref),
        "pinned dataset evicted: {left:?}"
    );
    assert!(
        !left.contains(&refs[0]),
        "the oldest query result should be gone: {left:?}"
    );
}

/// A person's large query never evicts the model's data: only other results go to make room
/// for it. Each connection keeps its own newest results, a closed one's go, and a result that
/// is gone says why.
#[test]
fn workbench_results_never_evict_datasets_and_belong_to_their_connection() {
    let dir = tempfile::tempdir().unwrap();
    let budget = 24 << 20;
    let store = open_with(dir.path(), budget, Duration::from_secs(30));
    let model = ingest_json(&store, "list_orders", ORDERS);

    // Each connection keeps its newest 8; another connection's queries never push them out.
    let theirs: Vec<_> = (0..10)
        .map(|i| store.run_result(&format!("SELECT {i} AS i"), 2).unwrap())
        .collect();
    let old = store.page(&theirs[0].table, 0, 1).unwrap_err();
    assert!(
        matches!(&old, StoreError::ResultDropped(why) if why.contains("newest 8")),
        "{old:?}"
    );
    let big = "SELECT range AS n, md5(range::VARCHAR) AS h FROM range(1000000)";
    let first = store.run_result(big, 1).unwrap();
    let second = store.run_result(big, 1).unwrap();
    assert!(
        store.memory_bytes() > budget,
        "the test needs a result over the budget"
    );
    let refs: Vec<String> = store
        .datasets()
        .into_iter()
        .map(|d| d.dataset_ref)
        .collect();
    assert!(
        refs.contains(&model),
        "a workbench query evicted the model's data: {refs:?}"
    );
    // Older results went to make room; each connection's newest is still readable.
    let gone = store.page(&first.table, 0, 1).unwrap_err();
    assert!(
        matches!(&gone, StoreError::ResultDropped(why) if why.contains("memory_budget")),
        "{gone:?}"
    );
    assert_eq!(store.page(&second.table, 0, 2).unwrap().len(), 2);
    assert_eq!(store.page(&theirs[9].table, 0, 1).unwrap().len(), 1);

    // Data the model brings in makes room by dropping results first, even the newest.
    let more = ingest_json(&store, "list_customers", CUSTOMERS);
    let refs: Vec<String> = store
        .datasets()
        .into_iter()
        .map(|d| d.dataset_ref)
        .collect();
    assert!(refs.contains(&model) && refs.contains(&more), "{refs:?}");
    assert!(store.page(&second.table, 0, 1).is_err());

    // A connection that closes takes its results with it.
    let mine = store.run_result("SELECT 1 AS one", 3).unwrap();
    store.release_results(3);
    let closed = store.page(&mine.table, 0, 1).unwrap_err();
    assert!(
        matches!(&closed, StoreError::ResultDropped(why) if why.contains("closed")),
        "{closed:?}"
    );
    let never = store.page("_loom_result_999999", 0, 1).unwrap_err();
    assert!(matches!(never, StoreError::UnknownDataset(_)), "{never:?}");
}

/// A non-finite DOUBLE keeps its row: the value reads as a string, every other column stays,
/// and a JSON export is JSON.
#[test]
fn infinity_and_nan_keep_their_rows_in_results_envelopes_and_exports() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let sql = "SELECT * FROM (VALUES (1, 'inf'::DOUBLE, 'keep me', [1.5, 'nan'::DOUBLE]), (2, '-inf'::DOUBLE, 'NaN', [2.5])) t(id, a, c, l)";
    let QueryOutcome::Inline { rows, .. } = store.query(sql).unwrap() else {
        panic!("inline")
    };
    assert_eq!(
        rows,
        vec![
            json!({"id": 1, "a": "Infinity", "c": "keep me", "l": [1.5, "NaN"]}),
            json!({"id": 2, "a": "-Infinity", "c": "NaN", "l": [2.5]}),
        ]
    );
    let meta = store.materialize(sql, "odd_numbers").unwrap();
    let p = store.profile(&meta.dataset_ref, 5).unwrap();
    assert!(
        p.samples.iter().all(|r| r["id"].is_number()),
        "{:?}",
        p.samples
    );
    let (path, _) = store
        .export(&meta.dataset_ref, ExportFormat::Json, None)
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let v: Value = serde_json::from_str(&text).expect("the export is JSON");
    assert_eq!(v[0]["a"], json!("Infinity"));
}

/// Out of memory, the model is told what it can do, never to change settings it may not.
#[test]
fn out_of_memory_advice_names_only_what_a_client_can_do() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(StoreConfig {
        memory_limit: "40MB".into(),
        threads: 1,
        memory_budget: 512 << 20,
        query_timeout: Duration::from_secs(60),
        export_dir: dir.path().join("exports"),
        envelope_budget: 1500,
        inline_rows: 100,
        probe_file: std::env::current_exe().unwrap(),
        blob_dir: None,
        parked_max_bytes: u64::MAX,
    })
    .expect("store opens");
    let err = store
        .query("SELECT list(range) AS l FROM range(200000000)")
        .unwrap_err()
        .to_string();
    assert!(err.contains("Out of Memory"), "{err}");
    assert!(
        err.contains("memory_limit 40MB") && err.contains("LIMIT"),
        "{err}"
    );
    assert!(
        !err.contains("SET ") && !err.contains("preserve_insertion_order"),
        "{err}"
    );
}

/// The envelope text of a fixed dataset, compared with `tests/snapshots/orders_envelope.txt`
/// (set `UPDATE_SNAPSHOTS=1` to rewrite it after an intended change).
#[test]
fn envelope_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let c = ingest_json(&store, "list_customers", CUSTOMERS);
    let o = ingest_json(&store, "list_orders", ORDERS);
    let meta = store.dataset(&o).unwrap();
    let p = store.profile(&o, 5).unwrap();
    let (env, _) = envelope::render(&meta, &p, 1500, Some(4321));
    let text = env["content"][0]["text"]
        .as_str()
        .unwrap()
        .replace(&c, "CUSTOMERS_REF")
        .replace(&o, "ORDERS_REF");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots/orders_envelope.txt");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
    }
    let expected =
        std::fs::read_to_string(&path).expect("snapshot exists (run with UPDATE_SNAPSHOTS=1 once)");
    assert_eq!(text, expected);
}

/// `loom serve` proves the seal at start in a child process (`loom __seal-check`), so the
/// engine is loaded in loom itself only when first needed.
#[test]
fn seal_check_command_proves_the_seal() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_loom"))
        .arg("__seal-check")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_column_type_survives_the_chunked_append_with_nulls() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    // 5,000 rows: more than two engine chunks; a null in every column now and then.
    let rows: Vec<Value> = (0..5000u64)
        .map(|i| {
            let null = i % 97 == 3;
            let or_null = |v: Value| if null { Value::Null } else { v };
            json!({
                "i": or_null(json!(-(i as i64))),
                "u": or_null(json!(u64::MAX - i)),
                "h": or_null(if i == 0 { json!(-1) } else { serde_json::from_str::<Value>(&format!("-{}", u64::MAX as u128 + i as u128)).unwrap() }),
                "w": or_null(serde_json::from_str::<Value>(&format!("1234567890123456789012345678901234567{}", i % 10)).unwrap()),
                // Written with an exponent, so a DOUBLE; plain two-decimal money is DECIMAL.
                "d": or_null(serde_json::from_str::<Value>(&format!("{}e-2", i * 100 + 25)).unwrap()),
                "m": or_null(serde_json::from_str::<Value>(&format!("{i}.{:02}", i % 100)).unwrap()),
                "b": or_null(json!(i % 2 == 0)),
                "day": or_null(json!(format!("2024-02-{:02}", 1 + i % 29))),
                "ts": or_null(json!(format!("2025-01-31T10:00:{:02}", i % 60))),
                "tz": or_null(json!("2025-01-31T10:00:00+02:00")),
                "s": or_null(json!(format!("text \"{i}\" é"))),
                "j": or_null(json!([i, "x"])),
            })
        })
        .collect();
    let r = ingest_json(&store, "types", &Value::Array(rows).to_string());
    let got = inline(
        &store,
        &format!(
            "SELECT typeof(i) AS ti, typeof(u) AS tu, typeof(h) AS th, typeof(w) AS tw, typeof(d) AS td, typeof(m) AS tm, \
             typeof(b) AS tb, typeof(day) AS tday, typeof(ts) AS tts, typeof(tz) AS ttz, typeof(s) AS ts_, \
             typeof(j) AS tj, i, u::VARCHAR AS u, h::VARCHAR AS h, w::VARCHAR AS w, d, m::VARCHAR AS m, b, day::VARCHAR AS day, \
             ts::VARCHAR AS ts, tz::VARCHAR AS tz, s, j::VARCHAR AS j FROM {r} LIMIT 1 OFFSET 4999"
        ),
    );
    let row = &got[0];
    let types: Vec<&str> = [
        "ti", "tu", "th", "tw", "td", "tm", "tb", "tday", "tts", "ttz", "ts_", "tj",
    ]
    .iter()
    .map(|k| row[*k].as_str().unwrap())
    .collect();
    assert_eq!(
        types,
        [
            "BIGINT",
            "UBIGINT",
            "HUGEINT",
            "HUGEINT",
            "DOUBLE",
            "DECIMAL(18,2)",
            "BOOLEAN",
            "DATE",
            "TIMESTAMP",
            "TIMESTAMP",
            "VARCHAR",
            "JSON"
        ]
    );
    assert_eq!(row["i"], -4999);
    assert_eq!(row["u"], (u64::MAX - 4999).to_string());
    assert_eq!(row["h"], format!("-{}", u64::MAX as u128 + 4999));
    assert_eq!(row["w"], "12345678901234567890123456789012345679");
    assert_eq!(row["d"], 4999.25);
    assert_eq!(row["m"], "4999.99");
    assert_eq!(row["b"], false);
    assert_eq!(row["day"], "2024-02-12");
    assert_eq!(row["ts"], "2025-01-31 10:00:19");
    // The offset is honoured: 10:00 at +02:00 is 08:00 UTC.
    assert_eq!(row["tz"], "2025-01-31 08:00:00");
    assert_eq!(row["s"], "text \"4999\" é");
    assert_eq!(row["j"], "[4999,\"x\"]");
    // Nulls land where they were, in every column, and nowhere else.
    let nulls = inline(
        &store,
        &format!(
            "SELECT count(*) FILTER (WHERE i IS NULL AND u IS NULL AND h IS NULL AND w IS NULL AND d IS NULL AND m IS NULL \
             AND b IS NULL AND day IS NULL AND ts IS NULL AND tz IS NULL AND s IS NULL AND j IS NULL) AS all_null, \
             count(*) FILTER (WHERE i IS NULL OR j IS NULL) AS any_null, \
             count(*) FILTER (WHERE i IS NULL AND (rowid % 97) <> 3) AS misplaced FROM {r}"
        ),
    );
    let expected = (0..5000u64).filter(|i| i % 97 == 3).count();
    assert_eq!(nulls[0]["all_null"], expected);
    assert_eq!(nulls[0]["any_null"], expected);
    assert_eq!(nulls[0]["misplaced"], 0);
}

#[test]
fn a_workbench_cancel_never_interrupts_the_models_query() {
    let dir = tempfile::tempdir().unwrap();
    // A timeout far beyond the queries' run time: only a cancel may stop them.
    let store = std::sync::Arc::new(open_with(dir.path(), 512 << 20, Duration::from_secs(600)));
    let wait_until = |what: &str, check: &dyn Fn() -> bool| {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while !check() {
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting for {what}"
            );
            std::thread::yield_now();
        }
    };
    // The model's query holds the reader for a while.
    let s = store.clone();
    let model = std::thread::spawn(move || {
        s.query("SELECT count(*) AS n FROM range(1000000000) a WHERE a.range % 7 = 3")
    });
    wait_until("the model's query to start", &|| store.query_running());
    assert!(!store.interrupt_query(), "no workbench query was running");
    let r = model.join().unwrap();
    assert!(
        r.is_ok(),
        "the model's query was interrupted: {:?}",
        r.err()
    );
    // A workbench query is the one a cancel stops.
    let s = store.clone();
    let bench =
        std::thread::spawn(move || s.run_result("SELECT sum(range) FROM range(100000000000)", 0));
    wait_until("the workbench query to be cancelled", &|| {
        store.interrupt_query()
    });
    let r = bench.join().unwrap();
    assert!(r.is_err(), "the cancel did nothing: {r:?}");

    // The model's long query and a person's query do not wait for each other: each has its
    // own connection. The person's result arrives while the model's query still runs, and a
    // cancel of the model's call stops only that.
    let s = store.clone();
    let model = std::thread::spawn(move || {
        Store::asking_as(loom::store::Asker::Call { call: 7, client: 0 }, || {
            s.query("SELECT sum(range) AS n FROM range(100000000000)")
        })
    });
    wait_until("the model's query to start", &|| store.query_running());
    let mine = store
        .run_result("SELECT 42 AS n", 1)
        .expect("the person's query");
    assert_eq!(mine.rows, 1);
    assert!(
        !model.is_finished(),
        "the person's query waited for the model's to end"
    );
    assert!(store.cancel_call(7), "the model's call query was running");
    let r = model.join().unwrap();
    assert!(
        matches!(r, Err(StoreError::Cancelled)),
        "{:?}",
        r.map(|_| ())
    );
}

/// A person's export options: another delimiter (quoting follows it), no header, a chosen
/// name, and a range of rows (a selection in the grid).
#[test]
fn export_options_delimiter_header_name_and_a_range_of_rows() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let r = ingest_json(&store, "list_orders", ORDERS);
    let options = loom::types::engine::ExportOptions {
        delimiter: ';',
        header: false,
        filename: Some("picked".into()),
        rows: Some((1, 1)),
    };
    let mut progress = |_| {};
    let (path, n) = store
        .export_with_progress(&r, ExportFormat::Csv, &options, &mut progress)
        .unwrap();
    assert_eq!(n, 1);
    assert_eq!(path.file_name().unwrap(), "picked.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    let fields: Vec<&str> = text.trim_end().split(';').collect();
    assert_eq!(fields.len(), 9, "{text}");
    // The same row, in the table's order, is the second of a full export.
    let (all, _) = store.export(&r, ExportFormat::Csv, None).unwrap();
    let second = std::fs::read_to_string(all)
        .unwrap()
        .lines()
        .nth(2)
        .unwrap()
        .to_owned();
    assert_eq!(second.split(',').next(), fields.first().copied());
    // A field holding the delimiter is quoted.
    let q = store
        .materialize("SELECT 'a;b' AS v, 'c,d' AS w", "semi")
        .unwrap();
    let (path, _) = store
        .export_with_progress(
            &q.dataset_ref,
            ExportFormat::Csv,
            &options_all(';'),
            &mut progress,
        )
        .unwrap();
    assert_eq!(std::fs::read_to_string(path).unwrap(), "v;w\n\"a;b\";c,d\n");
    // A delimiter that cannot separate fields is refused before a file is made.
    let err = store
        .export_with_progress(&r, ExportFormat::Csv, &options_all('"'), &mut progress)
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot separate"), "{err}");
}

fn options_all(delimiter: char) -> loom::types::engine::ExportOptions {
    loom::types::engine::ExportOptions {
        delimiter,
        ..Default::default()
    }
}

/// Column names a server might send that once bent a row: the engine's own keywords, every
/// alias loom's SQL uses, quotes, case, Unicode and names that are almost empty.
fn hostile_column_names() -> Vec<String> {
    let engine = duckdb::Connection::open_in_memory().unwrap();
    let mut stmt = engine
        .prepare("SELECT keyword_name FROM duckdb_keywords()")
        .unwrap();
    let mut names: Vec<String> = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    names.extend(loom::tui::sql::KEYWORDS.iter().map(|k| k.to_string()));
    for n in [
        "t",
        "T",
        "x",
        "a",
        "b",
        "v",
        "r",
        "g",
        "i",
        "n",
        "lo",
        "mn",
        "mx",
        "row",
        "rowid",
        "*",
        "t.*",
        "\"",
        "\"\"",
        "'",
        "''",
        "a\"b",
        "it's",
        "'); DROP TABLE x; --",
        "\\",
        "json",
        "to_json",
        "struct",
        "columns",
        "COLUMNS(*)",
        " ",
        "  t  ",
        "\t",
        "é",
        "世界",
        "🦀",
        "👩‍👩‍👧",
        "Ω",
        "ǅ",
        "t_2",
        "column_1",
        "NULL",
        "null",
        "true",
        "1",
        "0.5",
        "$1",
        "?",
        "%s",
        "{}",
        "[]",
        ".",
        "a.b",
        "-",
        "",
        "loom_row",
        "LOOM_ROW",
        "loom_row_2",
    ] {
        names.push(n.to_owned());
    }
    names
}

/// Nothing a server names a column may change what loom returns: every column of every row
/// comes back, under its own name, from query rows, envelope samples, `loom_describe` and the
/// JSON and JSON Lines exports (a column named `t` once dropped every other column).
#[test]
fn no_column_name_changes_a_row() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let pool = hostile_column_names();
    let mut runner = TestRunner::new(Config {
        cases: 48,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = prop::collection::vec(prop::sample::select(pool), 1..5);
    runner
        .run(&strategy, |mut names| {
            let mut seen = std::collections::HashSet::new();
            names.retain(|n| seen.insert(n.clone()));
            let value = |row: usize, i: usize| {
                if i.is_multiple_of(2) {
                    json!(row * 10 + i)
                } else {
                    json!(format!("v{row}-{i} ✓"))
                }
            };
            let rows: Vec<Value> = (0..3)
                .map(|row| {
                    Value::Object(
                        names
                            .iter()
                            .enumerate()
                            .map(|(i, n)| (n.clone(), value(row, i)))
                            .collect(),
                    )
                })
                .collect();
            let r = ingest_json(&store, "cols", &Value::Array(rows).to_string());
            let meta = store.dataset(&r).unwrap();
            // Names the same up to case (or empty) are renamed by ingest: compare by position.
            let kept: Vec<String> = meta.columns.iter().map(|(n, _)| n.clone()).collect();
            prop_assert_eq!(kept.len(), names.len(), "{:?} for {:?}", kept, names);
            for (k, n) in kept.iter().zip(&names) {
                prop_assert!(
                    k == n || k.starts_with(n.as_str()) || n.is_empty(),
                    "{k:?} for {n:?}"
                );
            }
            let expected: Vec<Value> = (0..3)
                .map(|row| {
                    Value::Object(
                        kept.iter()
                            .enumerate()
                            .map(|(i, n)| (n.clone(), value(row, i)))
                            .collect(),
                    )
                })
                .collect();
            let select = format!("SELECT * FROM {r}");
            prop_assert_eq!(
                &inline(&store, &select),
                &expected,
                "query rows for {:?}",
                names
            );
            let p = store.profile(&r, 5).unwrap();
            prop_assert_eq!(&p.samples, &expected, "envelope samples for {:?}", names);
            let d = store.describe(&r).unwrap();
            prop_assert_eq!(&d.sample_rows, &expected, "describe for {:?}", names);
            let (path, n) = store.export(&r, ExportFormat::Json, None).unwrap();
            prop_assert_eq!(n, 3);
            let json: Value =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            prop_assert_eq!(
                &json,
                &Value::Array(expected.clone()),
                "json export for {:?}",
                names
            );
            let (path, _) = store.export(&r, ExportFormat::Jsonl, None).unwrap();
            let lines: Vec<Value> = std::fs::read_to_string(path)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            prop_assert_eq!(&lines, &expected, "jsonl export for {:?}", names);
            // The same names as aliases in the model's own query.
            let aliases: Vec<String> = kept
                .iter()
                .enumerate()
                .map(|(i, n)| format!("{i} AS \"{}\"", n.replace('"', "\"\"")))
                .collect();
            let row = inline(&store, &format!("SELECT {}", aliases.join(", ")));
            let want: Value = Value::Object(
                kept.iter()
                    .enumerate()
                    .map(|(i, n)| (n.clone(), json!(i)))
                    .collect(),
            );
            prop_assert_eq!(&row, &vec![want], "aliases {:?}", kept);
            store.drop_dataset(&r).unwrap();
            Ok(())
        })
        .unwrap();
}

/// MotherDuck's answer to a 25k-row query, `{success, columns, columnTypes, rows: [[…]],
/// rowCount}`: a dataset with the declared types (exact DECIMAL money, 19-digit BIGINT ids,
/// microsecond TIMESTAMPs, NULLs), so `sum(amount)` is the true sum. A declared type the
/// values contradict is not believed.
#[test]
fn a_motherduck_result_is_a_dataset_with_its_declared_types() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let n = 25_168u64;
    let rows: Vec<Value> = (0..n)
        .map(|i| {
            let amount: Value =
                serde_json::from_str(&format!("{}.{:02}", (i * 7919) % 20_000, i % 100)).unwrap();
            let status = ["paid", "returned", "pending", "李 Crab🦀"][(i % 4) as usize];
            json!([
                1_000_000_000_000_000_000u64 + i * 15_838,
                amount,
                if i % 7 == 0 {
                    Value::Null
                } else {
                    json!(i as f64 / 8.0)
                },
                format!("2023-01-{:02} {:02}:33:03.807144", 1 + i % 28, i % 24),
                status,
                Value::Null,
                if i == 3 {
                    json!("not a number")
                } else {
                    json!(i)
                },
            ])
        })
        .collect();
    let text = serde_json::to_string_pretty(&json!({
        "success": true,
        "columns": ["order_id", "amount", "discount", "ordered_at", "status", "shipped_at", "qty"],
        "columnTypes": ["BIGINT", "DECIMAL(12,2)", "DOUBLE", "TIMESTAMP", "VARCHAR", "TIMESTAMP", "INTEGER"],
        "rows": rows,
        "rowCount": n,
    }))
    .unwrap();
    let r = ingest_json(&store, "execute_query", &text);
    let meta = store.dataset(&r).unwrap();
    assert_eq!(meta.rows, n);
    assert_eq!(meta.context.get("rowCount"), Some(&json!(n)));
    let types: Vec<(&str, &str)> = meta
        .columns
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    assert_eq!(
        types,
        [
            ("order_id", "BIGINT"),
            ("amount", "DECIMAL(12,2)"),
            ("discount", "DOUBLE"),
            ("ordered_at", "TIMESTAMP"),
            ("status", "VARCHAR"),
            ("shipped_at", "TIMESTAMP"),
            // Declared INTEGER, but one value is text: the values decide.
            ("qty", "VARCHAR"),
        ]
    );
    let cents: u64 = (0..n).map(|i| ((i * 7919) % 20_000) * 100 + i % 100).sum();
    let row = &inline(
        &store,
        &format!(
            "SELECT sum(amount)::VARCHAR AS s, max(order_id) AS m, min(ordered_at)::VARCHAR AS t0, count(*) FILTER (WHERE status = 'returned') AS ret, count(shipped_at) AS shipped FROM {r}"
        ),
    )[0];
    assert_eq!(
        row["s"],
        json!(format!("{}.{:02}", cents / 100, cents % 100))
    );
    assert_eq!(
        row["m"].to_string(),
        (1_000_000_000_000_000_000u64 + (n - 1) * 15_838).to_string()
    );
    assert_eq!(row["t0"], "2023-01-01 00:33:03.807144");
    assert_eq!(row["ret"], n / 4);
    assert_eq!(row["shipped"], 0);
}

/// Two-decimal money, whichever rung found it, is DECIMAL: `sum` is exact. DOUBLE stays for
/// numbers written with an exponent, and text for numbers no DECIMAL or DOUBLE holds.
#[test]
fn money_is_decimal_in_csv_and_json_and_sums_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let amounts: Vec<String> = (0..3000)
        .map(|i| format!("{}.{:02}", (i * 7919) % 20_000, (i * 37) % 100))
        .collect();
    let mut csv = "id,amount,ratio\n".to_owned();
    let mut json_rows = Vec::new();
    for (i, a) in amounts.iter().enumerate() {
        csv.push_str(&format!("{i},{a},{}e-3\n", i % 10));
        json_rows.push(format!(
            r#"{{"id": {i}, "amount": {a}, "ratio": {}e-3}}"#,
            i % 10
        ));
    }
    let json = format!("[{}]", json_rows.join(","));
    let cents: u64 = (0..3000u64)
        .map(|i| ((i * 7919) % 20_000) * 100 + (i * 37) % 100)
        .sum();
    for text in [csv, json] {
        let r = ingest_json(&store, "money", &text);
        let meta = store.dataset(&r).unwrap();
        let types: Vec<&str> = meta.columns.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(types, ["BIGINT", "DECIMAL(18,2)", "DOUBLE"], "{r}");
        let row = &inline(
            &store,
            &format!("SELECT sum(amount)::VARCHAR AS s FROM {r}"),
        )[0];
        assert_eq!(
            row["s"],
            json!(format!("{}.{:02}", cents / 100, cents % 100))
        );
    }
}

/// Tables side by side in one result (a knowledge graph's entities and relations) become one
/// dataset each, named after one ref for the result, and join hints are found between them
/// across differently named columns (`relations.from` → `entities.name`); a lone column that
/// merely shares values is no key, so it gets no hint.
#[test]
fn tables_of_one_result_are_sibling_datasets_that_hint_their_join() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let entities: Vec<Value> = (0..50)
        .map(|i| json!({ "type": "entity", "name": format!("p{i}"), "entityType": if i % 2 == 0 { "person" } else { "city" }, "observations": [format!("obs {i}")] }))
        .collect();
    let relations: Vec<Value> = (1..50)
        .map(|i| json!({ "type": "relation", "from": format!("p{i}"), "to": format!("p{}", i / 2), "relationType": "knows" }))
        .collect();
    let text = json!({ "entities": entities, "relations": relations }).to_string();
    let found = loom::intercept::extract::multi::tables(None, &[&text]).expect("two tables");
    let named: Vec<(&str, &loom::intercept::Table)> =
        found.iter().map(|t| (t.name.as_str(), &t.table)).collect();
    let metas = store
        .ingest_group(
            &named,
            "memory_read_graph",
            prov("read_graph"),
            Default::default(),
        )
        .expect("ingest");
    let refs: Vec<&str> = metas.iter().map(|m| m.dataset_ref.as_str()).collect();
    assert_eq!(
        refs,
        [
            "memory_read_graph_1_entities",
            "memory_read_graph_1_relations"
        ]
    );
    assert_eq!(metas[0].siblings, ["memory_read_graph_1_relations"]);
    let rows = inline(
        &store,
        "SELECT count(*) AS n FROM memory_read_graph_1_relations r JOIN memory_read_graph_1_entities e ON r.\"from\" = e.name",
    );
    assert_eq!(rows[0]["n"], 49);
    let hints = |r: &str| -> Vec<(String, String, String)> {
        store
            .profile(r, 3)
            .unwrap()
            .join_hints
            .into_iter()
            .map(|h| (h.column, h.other, h.other_column))
            .collect()
    };
    let from_relations = hints("memory_read_graph_1_relations");
    for col in ["from", "to"] {
        assert!(
            from_relations.contains(&(
                col.to_owned(),
                "memory_read_graph_1_entities".to_owned(),
                "name".to_owned()
            )),
            "{from_relations:?}"
        );
    }
    // `type` holds one value on each side, `relationType` is no key: no hint for either.
    assert!(
        from_relations
            .iter()
            .all(|(c, _, o)| o == "name" && (c == "from" || c == "to")),
        "{from_relations:?}"
    );
    let from_entities = hints("memory_read_graph_1_entities");
    assert!(
        from_entities.contains(&(
            "name".to_owned(),
            "memory_read_graph_1_relations".to_owned(),
            "from".to_owned()
        )),
        "{from_entities:?}"
    );
    // The next result's tables get the next ref; the group's envelope names both.
    let again = store
        .ingest_group(
            &named,
            "memory_read_graph",
            prov("read_graph"),
            Default::default(),
        )
        .expect("ingest");
    assert_eq!(again[0].dataset_ref, "memory_read_graph_2_entities");
    let parts: Vec<_> = metas
        .iter()
        .map(|m| (m.clone(), store.profile(&m.dataset_ref, 3).unwrap()))
        .collect();
    let (env, tokens) = loom::store::render_group(&parts, 1500, Some(20_000));
    assert!(tokens <= 1600, "{tokens}");
    let text = env["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("This result held 2 tables, now one dataset each: `memory_read_graph_1_entities` (50 rows), `memory_read_graph_1_relations` (49 rows)"),
        "{text}"
    );
    assert!(
        text.contains("memory_read_graph_1_relations.\"from\" = memory_read_graph_1_entities.name"),
        "{text}"
    );
    assert_eq!(
        env["structuredContent"]["datasets"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}
