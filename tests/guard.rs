//! The statement guard, proven by an invariant rather than a list: a fingerprint of everything
//! a client statement could change (catalog, datasets' rows and content, the query connection's
//! settings, what well-known functions answer, loom's private folder) is byte-identical after
//! each of several hundred hostile statements, sent through every store entry point a client
//! reaches (`loom_query`, `loom_materialize`, the workbench and `loom query`). A property test
//! composes statements from fragments and checks the same. Every read-only form still works.

mod common;

use common::{LOOM, RawClient, is_error_result, sample_config, text_of};
use loom::intercept::extract::find_in_text;
use loom::store::{Provenance, QueryOutcome, Store, StoreConfig, reviewed_functions};
use proptest::prelude::*;
use serde_json::json;
use std::time::Duration;

fn open(dir: &std::path::Path) -> Store {
    Store::open(StoreConfig {
        memory_limit: "1GB".into(),
        threads: 2,
        memory_budget: 512 << 20,
        query_timeout: Duration::from_secs(30),
        export_dir: dir.join("exports"),
        envelope_budget: 1500,
        inline_rows: 100,
        probe_file: std::env::current_exe().expect("test binary"),
        blob_dir: None,
        parked_max_bytes: u64::MAX,
    })
    .expect("store opens and proves its seal")
}

const ORDERS: &str = r#"[
 {"order_id": 7300000000000007919, "customer_id": 1, "status": "paid", "amount": 10.5, "created_at": "2025-03-01T10:00:00Z", "meta": {"tags": ["a", "b"]}},
 {"order_id": 7300000000000015838, "customer_id": 2, "status": "pending", "amount": 99.99, "created_at": "2025-03-02T11:30:00Z", "meta": {"tags": []}},
 {"order_id": 7300000000000023757, "customer_id": 1, "status": "paid", "amount": 5, "created_at": "2025-03-03T12:00:00Z", "meta": {"tags": ["c"]}}
]"#;

/// A store with one ingested dataset and one pinned (materialized) dataset.
struct Fixture {
    _dir: tempfile::TempDir,
    store: Store,
    orders: String,
    pinned: String,
    secret: String,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path());
    let table = find_in_text(ORDERS)
        .expect("rows")
        .into_table()
        .expect("table");
    let orders = store
        .ingest(
            &table,
            Provenance {
                server: "sample".into(),
                tool: "list_orders".into(),
                arguments: Some(json!({})),
                at: "2026-11-30T00:00:00Z".into(),
                rung: "json".into(),
            },
        )
        .expect("ingest")
        .dataset_ref;
    let pinned = store
        .materialize(
            &format!("SELECT status, count(*) AS n FROM {orders} GROUP BY status"),
            "by_status",
        )
        .expect("materialize")
        .dataset_ref;
    let secret = dir.path().join("secret.csv");
    std::fs::write(&secret, "a,b\n1,2\n").expect("write secret");
    let secret = secret.display().to_string();
    Fixture {
        _dir: dir,
        store,
        orders,
        pinned,
        secret,
    }
}

/// The names an attack aims at.
struct Targets {
    orders: String,
    pinned: String,
    secret: String,
    private: String,
    spill: String,
}

impl Fixture {
    fn targets(&self) -> Targets {
        Targets {
            orders: self.orders.clone(),
            pinned: self.pinned.clone(),
            secret: self.secret.clone(),
            private: self.store.private_dir().display().to_string(),
            spill: self.store.spill_dir().display().to_string(),
        }
    }
}

/// Statements that would change the store, read files or settings, or run more than asked.
fn base_attacks(t: &Targets) -> Vec<String> {
    let (r, p, s, private, spill) = (&t.orders, &t.pinned, &t.secret, &t.private, &t.spill);
    // The name the next ingest of the same tool would get.
    let next = "sample_list_orders_2";
    vec![
        "CREATE TABLE pwn AS SELECT 42 AS v".into(),
        format!("INSERT INTO {r} SELECT * FROM {r}"),
        format!("DROP TABLE {p}"),
        "CREATE MACRO upper(x) AS 'pwned'".into(),
        "CREATE TEMP MACRO lower(x) AS 'pwned'".into(),
        "CREATE MACRO t() AS TABLE SELECT 1".into(),
        "SET search_path = 'temp'".into(),
        "SET schema = 'temp'".into(),
        "RESET search_path".into(),
        format!("CREATE VIEW {next} AS SELECT 1 AS x"),
        format!("CREATE TEMP VIEW {r} AS SELECT 1 AS x"),
        "CREATE SECRET s (TYPE s3, KEY_ID 'x', SECRET 'y')".into(),
        "CREATE TYPE mood AS ENUM ('a', 'b')".into(),
        "CREATE SEQUENCE seq".into(),
        "CREATE SCHEMA evil".into(),
        format!("CREATE INDEX i ON {r} (status)"),
        format!("UPDATE {r} SET status = 'x'"),
        format!("DELETE FROM {r}"),
        format!("TRUNCATE {p}"),
        format!("ALTER TABLE {r} ADD COLUMN z INTEGER"),
        format!("ALTER TABLE {r} RENAME TO gone"),
        format!("COMMENT ON TABLE {r} IS 'x'"),
        "PREPARE q AS SELECT 1".into(),
        "EXECUTE q".into(),
        "DEALLOCATE q".into(),
        "PRAGMA enable_profiling".into(),
        "PRAGMA threads = 1".into(),
        "CALL pragma_version()".into(),
        "CALL enable_logging()".into(),
        "ATTACH ':memory:' AS m".into(),
        format!("ATTACH '{private}/x.db' AS x"),
        "DETACH memory".into(),
        "USE temp".into(),
        "INSTALL httpfs".into(),
        "LOAD icu".into(),
        "FORCE INSTALL json".into(),
        format!("COPY {r} TO '{private}/out.csv'"),
        format!("COPY {r} FROM '{s}'"),
        "SET threads = 1".into(),
        "SET VARIABLE v = 1".into(),
        "RESET threads".into(),
        "BEGIN TRANSACTION".into(),
        "COMMIT".into(),
        "CHECKPOINT".into(),
        "VACUUM".into(),
        format!("ANALYZE {r}"),
        format!("EXPORT DATABASE '{private}/dump'"),
        format!("WITH x AS (SELECT 1) INSERT INTO {r} (order_id) SELECT * FROM x"),
        format!("WITH x AS (DELETE FROM {r} RETURNING *) SELECT * FROM x"),
        format!("SELECT 1; DROP TABLE {p}"),
        format!("SELECT 1; INSERT INTO {r} SELECT * FROM {r}"),
        format!("MERGE INTO {r} USING {r} AS s ON false WHEN NOT MATCHED THEN INSERT *"),
        format!("SELECT * FROM read_csv('{s}')"),
        format!("SELECT * FROM read_text/**/('{s}')"),
        format!("SELECT * FROM read_text -- x\n('{s}')"),
        format!("SELECT * FROM \"read_text\"('{s}')"),
        format!("SELECT * FROM main.read_blob('{s}')"),
        format!("SELECT * FROM '{s}'"),
        format!("SELECT * FROM \"{s}\""),
        format!("FROM '{s}'"),
        format!("SELECT * FROM $${s}$$"),
        format!("SELECT * FROM read_text($x${s}$x$)"),
        format!("SELECT * FROM read_text(E'{}')", s.replace('/', "\\x2f")),
        format!("SELECT * FROM glob('{spill}/*')"),
        format!("SELECT * FROM glob(E'{}/*')", private.replace('/', "\\x2f")),
        format!("SELECT * FROM query('SELECT * FROM {r}')"),
        // F1: SQL bound from a string, constant-folded by the optimizer.
        "SELECT json_serialize_plan('SELECT current_setting(''temp_directory'') AS x', optimize := true) AS p".into(),
        "SELECT json_extract_string(json_serialize_plan('SELECT current_setting(''secret_directory'') AS x', optimize := true), '$.plans[0].expressions[0].value.value') AS v".into(),
        "SELECT json_serialize_sql('SELECT 1') AS p".into(),
        "SELECT json_deserialize_sql(json_serialize_sql('SELECT 1')) AS p".into(),
        "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1'))".into(),
        format!("SELECT * FROM query_table('{r}')"),
        "SELECT getvariable('v') AS v".into(),
        "SELECT current_setting('temp_directory') AS t".into(),
        "SELECT getenv('HOME') AS h".into(),
        "SELECT setseed(0.5)".into(),
        "SELECT * FROM duckdb_settings()".into(),
        "SELECT * FROM duckdb_secrets()".into(),
        "SELECT * FROM duckdb_temporary_files()".into(),
        "SELECT * FROM checkpoint()".into(),
        "SELECT * FROM enable_logging()".into(),
        "SELECT * FROM truncate_duckdb_logs()".into(),
        format!("SUMMARIZE SELECT * FROM read_csv('{s}')"),
        format!("DESCRIBE SELECT * FROM '{s}'"),
        "".into(),
        ";".into(),
        "/* only a comment */".into(),
        // DuckDB runs this as CREATE TYPE + SELECT.
        format!("PIVOT {r} ON status USING sum(amount)"),
    ]
}

/// Each base attack in the spellings that have slipped past word-based guards.
fn attacks(t: &Targets) -> Vec<String> {
    let mut all = Vec::new();
    for a in base_attacks(t) {
        all.push(a.clone());
        all.push(format!("EXPLAIN ANALYZE {a}"));
        all.push(format!("EXPLAIN /* x */ ANALYZE {a}"));
        all.push(format!("EXPLAIN (FORMAT json, ANALYZE) {a}"));
        all.push(format!("explain\tanalyse {a}"));
        all.push(format!("EXPLAIN\n-- c\nANALYZE VERBOSE {a}"));
        all.push(format!("EXPLAIN {a}"));
        all.push(format!("/* lead */ {}", a.to_lowercase()));
        all.push(format!("-- lead\n\t{}", a.to_uppercase()));
    }
    // Naming loom's private folder at all is refused (its path is known only in-process).
    all.push(format!("SELECT '{}' AS p", t.private));
    all.push("EXPLAIN (ANALYZE) SELECT 1".into());
    all.push("EXPLAIN (ANALYZE true) SELECT 1".into());
    all.push("EXPLAIN ANALYZE SELECT 1".into());
    all
}

/// The forms a person or a model uses every day; each must run.
fn read_only_forms(f: &Fixture) -> Vec<String> {
    let (r, p) = (&f.orders, &f.pinned);
    vec![
        format!("SELECT * FROM {r}"),
        format!("select status, sum(amount) AS total FROM {r} GROUP BY ALL ORDER BY 1"),
        format!("WITH t AS (SELECT * FROM {r}) SELECT count(*) AS n FROM t"),
        format!("FROM {r}"),
        format!("FROM {r} SELECT status WHERE amount > 6"),
        "VALUES (1, 'a'), (2, 'b')".into(),
        format!("DESCRIBE {r}"),
        format!("SUMMARIZE {r}"),
        format!("EXPLAIN SELECT * FROM {r}"),
        format!("EXPLAIN /* plan */ FROM {r}"),
        format!("explain\n  WITH t AS (SELECT 1 AS a) SELECT * FROM t"),
        format!("PIVOT {r} ON status IN ('paid', 'pending') USING sum(amount)"),
        format!("SELECT * FROM (PIVOT {r} ON status IN ('paid', 'pending') USING count(*))"),
        format!("UNPIVOT {p} ON n INTO NAME k VALUE v"),
        format!(
            "SELECT order_id, amount, sum(amount) OVER (PARTITION BY customer_id ORDER BY created_at) AS running, rank() OVER (ORDER BY amount DESC) AS rk FROM {r}"
        ),
        format!("SELECT o.status, b.n FROM {r} o JOIN {p} b USING (status)"),
        "SELECT * FROM range(5)".into(),
        "SELECT unnest([1, 2, 3]) AS x".into(),
        "SELECT table_name FROM duckdb_tables() ORDER BY 1".into(),
        format!("SELECT * FROM pragma_table_info('{r}')"),
        format!("SELECT 'a.csv' AS file, $$dollar$$ AS d, E'tab\\t' AS e FROM {r} LIMIT 1"),
        format!("SELECT upper(status) FROM {r};"),
        format!("SELECT list_transform([amount, amount * 2], lambda x: x + 1) AS l FROM {r}"),
    ]
}

fn refused_everywhere(f: &Fixture, sql: &str, i: usize) {
    let before = f.store.fingerprint();
    let model = f.store.query(sql);
    assert!(model.is_err(), "loom_query ran {sql:?}: {model:?}");
    let name = format!("attack_{i}");
    let mat = f.store.materialize(sql, &name);
    assert!(mat.is_err(), "loom_materialize ran {sql:?}: {mat:?}");
    let bench = f.store.run_result(sql, 0);
    assert!(bench.is_err(), "the workbench ran {sql:?}: {bench:?}");
    let after = f.store.fingerprint();
    assert_eq!(
        before, after,
        "the store changed after {sql:?} although it was refused"
    );
}

#[test]
fn no_hostile_statement_changes_the_store_through_any_entry_point() {
    let f = fixture();
    let before = f.store.fingerprint();
    assert!(
        before.contains(&f.orders) && before.contains(&f.pinned),
        "{before}"
    );
    let all = attacks(&f.targets());
    assert!(all.len() >= 300, "{}", all.len());
    for (i, sql) in all.iter().enumerate() {
        refused_everywhere(&f, sql, i);
    }
    assert_eq!(before, f.store.fingerprint());
    // No file appeared beside the secret: the private folder holds only its owner's lock.
    let private: Vec<String> = std::fs::read_dir(f.store.private_dir())
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        private,
        ["owner.lock"],
        "loom's private folder gained files"
    );
}

#[test]
fn every_read_only_form_still_works_through_every_entry_point() {
    let f = fixture();
    for (i, sql) in read_only_forms(&f).iter().enumerate() {
        f.store
            .query(sql)
            .unwrap_or_else(|e| panic!("loom_query refused {sql:?}: {e}"));
        f.store
            .run_result(sql, 0)
            .unwrap_or_else(|e| panic!("the workbench refused {sql:?}: {e}"));
        if !sql.trim_start().to_lowercase().starts_with("explain") {
            f.store
                .materialize(sql, &format!("form_{i}"))
                .unwrap_or_else(|e| panic!("loom_materialize refused {sql:?}: {e}"));
        }
    }
    // EXPLAIN shows a plan and runs nothing.
    match f
        .store
        .query(&format!("EXPLAIN SELECT * FROM {}", f.orders))
        .expect("explain")
    {
        QueryOutcome::Inline { rows, .. } => {
            assert_eq!(rows[0]["explain_key"], "physical_plan", "{rows:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_private_folder_is_the_users_alone() {
    use std::os::unix::fs::PermissionsExt;
    let f = fixture();
    let mode = std::fs::metadata(f.store.private_dir())
        .expect("private folder exists")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700, "{mode:o}");
    assert!(f.store.spill_dir().starts_with(f.store.private_dir()));
}

/// A call of `name` (of `kind`, as `duckdb_functions()` spells it) with `args`, in the position
/// a function of that kind is called from.
fn call_of(kind: &str, name: &str, args: &str) -> String {
    let quoted = format!("\"{}\"", name.replace('"', "\"\""));
    match kind {
        "table" | "table_macro" => format!("SELECT * FROM {quoted}({args})"),
        "window" => format!("SELECT {quoted}({args}) OVER () AS x"),
        _ => format!("SELECT {quoted}({args}) AS x"),
    }
}

/// The allowlist as an invariant over every function the engine has: each one the reviewed
/// list denies is refused by the real guard through every entry point, each one it allows is
/// called with several argument shapes, and the store's fingerprint (catalog, datasets, both
/// query connections' settings, the private folder) is unchanged after every batch of them (a
/// change stays until compared, and the failure names the batch).
#[test]
fn every_function_the_engine_has_is_refused_or_harmless() {
    let f = fixture();
    let reviewed = reviewed_functions();
    let engine: Vec<(String, String)> = match f
        .store
        .query("SELECT DISTINCT function_type, function_name FROM duckdb_functions() WHERE function_type <> 'pragma' ORDER BY ALL")
        .expect("the catalog of functions")
    {
        QueryOutcome::Dataset(d) => {
            let rows = f.store.page(&d.dataset_ref, 0, 100_000).expect("page");
            f.store.drop_dataset(&d.dataset_ref).expect("drop");
            rows.into_iter()
                .map(|r| {
                    let mut cells = r.into_iter().map(Option::unwrap_or_default);
                    (
                        cells.next().unwrap_or_default(),
                        cells.next().unwrap_or_default(),
                    )
                })
                .collect()
        }
        other => panic!("{other:?}"),
    };
    assert!(engine.len() > 500, "{}", engine.len());
    let shapes = ["", "'x'", "1", "'x', 'y'", "1, 2", "[1, 2]", "'x', 1"];
    let before = f.store.fingerprint();
    let (mut denied, mut allowed) = (0, 0);
    let mut batch = Vec::new();
    for (i, (kind, name)) in engine.iter().enumerate() {
        batch.push(format!("{kind} {name}"));
        let verdicts: Vec<bool> = reviewed
            .iter()
            .filter(|(_, k, n)| k == kind && *n == name.to_lowercase())
            .map(|(a, _, _)| *a)
            .collect();
        assert!(
            !verdicts.is_empty(),
            "{kind} {name} is not reviewed in functions.list"
        );
        if verdicts.contains(&false) {
            denied += 1;
            let sql = call_of(kind, name, "'x'");
            let refusal = f.store.check_sql(&sql).expect_err(&sql).to_string();
            assert!(refusal.contains("is not available"), "{sql}: {refusal}");
            assert!(f.store.query(&sql).is_err(), "loom_query ran {sql}");
            let mat = f.store.materialize(&sql, &format!("attack_{i}"));
            assert!(mat.is_err(), "loom_materialize ran {sql}");
            assert!(
                f.store.run_result(&sql, 0).is_err(),
                "the workbench ran {sql}"
            );
        } else {
            allowed += 1;
            for args in shapes {
                let sql = call_of(kind, name, args);
                if let Ok(QueryOutcome::Dataset(d)) = f.store.query(&sql) {
                    f.store
                        .drop_dataset(&d.dataset_ref)
                        .expect("drop the call's result");
                }
            }
        }
        if batch.len() == 40 || i + 1 == engine.len() {
            assert_eq!(
                before,
                f.store.fingerprint(),
                "one of these changed the store: {batch:?}"
            );
            batch.clear();
        }
    }
    assert!(
        denied > 50 && allowed > 400,
        "{denied} denied, {allowed} allowed"
    );
}

/// Fragments that statements are composed of: verbs, modifiers, comments, names, quotes.
const FRAGMENTS: &[&str] = &[
    "SELECT",
    "EXPLAIN",
    "ANALYZE",
    "ANALYSE",
    "VERBOSE",
    "(FORMAT json)",
    "(ANALYZE)",
    "WITH t AS (SELECT 1 AS a)",
    "CREATE TABLE x AS",
    "CREATE MACRO upper(x) AS",
    "CREATE VIEW v AS",
    "INSERT INTO ORDERS",
    "DROP TABLE PINNED",
    "DELETE FROM ORDERS",
    "SET search_path =",
    "SET schema =",
    "PRAGMA",
    "CALL",
    "ATTACH",
    "COPY",
    "BEGIN;",
    "PREPARE p AS",
    "EXECUTE p",
    "FROM",
    "ORDERS",
    "PINNED",
    "*",
    "1",
    "'temp'",
    "$$x$$",
    "E'\\x41'",
    "/* c */",
    "-- c\n",
    "\t",
    "\n",
    ";",
    ",",
    "(",
    ")",
    "read_text('/etc/hostname')",
    "'x.csv'",
    "\"y.parquet\"",
    "VALUES (1)",
    "DESCRIBE",
    "SUMMARIZE",
    "PIVOT",
    "TABLE",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn composed_statements_never_change_the_store(picks in proptest::collection::vec(0..FRAGMENTS.len(), 1..8)) {
        let f = FIXTURE.with(|f| f.clone());
        let fx = &f.0;
        let sql = picks
            .iter()
            .map(|&i| FRAGMENTS[i].replace("ORDERS", &fx.orders).replace("PINNED", &fx.pinned))
            .collect::<Vec<_>>()
            .join(" ");
        let before = fx.store.fingerprint();
        let made = match fx.store.query(&sql) {
            Ok(QueryOutcome::Dataset(d)) => Some(d.dataset_ref),
            _ => None,
        };
        let bench = fx.store.run_result(&sql, 0).is_ok();
        if let Some(d) = made {
            fx.store.drop_dataset(&d).expect("drop the query's own dataset");
        }
        let after = fx.store.fingerprint();
        if bench {
            // An accepted query adds only its own result table in the workbench.
            let strip = |s: &str| s.lines().filter(|l| !l.contains("_loom_result_")).collect::<Vec<_>>().join("\n");
            prop_assert_eq!(strip(&before), strip(&after), "{:?} changed the store", sql);
        } else {
            prop_assert_eq!(before, after, "{:?} changed the store", sql);
        }
    }
}

thread_local! {
    static FIXTURE: std::rc::Rc<(Fixture,)> = std::rc::Rc::new((fixture(),));
}

/// A fingerprint that a client can compute through loom itself (only allowed functions): the
/// catalog, each named dataset's rows and content hash, and what well-known functions answer.
fn fingerprint_sql(datasets: &[&str]) -> String {
    let mut parts = vec![
        "SELECT 'table ' || schema_name || '.' || table_name || ' ' || column_count AS x FROM duckdb_tables() WHERE NOT starts_with(table_name, '_loom_result_') AND NOT starts_with(table_name, 'q_')".to_owned(),
        "SELECT 'view ' || schema_name || '.' || view_name FROM duckdb_views() WHERE NOT internal".to_owned(),
        "SELECT 'fn ' || schema_name || '.' || function_name || ' ' || function_type FROM duckdb_functions() WHERE NOT internal".to_owned(),
        "SELECT 'schema ' || database_name || '.' || schema_name FROM duckdb_schemas()".to_owned(),
        "SELECT 'seq ' || sequence_name FROM duckdb_sequences()".to_owned(),
        "SELECT 'type ' || type_name FROM duckdb_types() WHERE NOT internal".to_owned(),
        "SELECT 'canary ' || upper('loom') || lower('LOOM') || current_schema() || current_schemas(true)::VARCHAR".to_owned(),
    ];
    for d in datasets {
        parts.push(format!(
            "SELECT 'rows {d} ' || count(*) || ' ' || sum(hash(t)) FROM {d} AS t"
        ));
    }
    format!(
        "SELECT string_agg(x, ' | ' ORDER BY x) AS fp FROM ({}) AS f(x)",
        parts.join(" UNION ALL ")
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_sql_through_the_real_binary_changes_nothing() {
    let cfg = sample_config("", "");
    let mut client = RawClient::spawn(&cfg.path);
    client.initialize().await;
    let r = client.call("sample_list_orders", json!({})).await;
    let orders = r["result"]["structuredContent"]["ref"]
        .as_str()
        .unwrap_or_else(|| panic!("intercepted: {r}"))
        .to_owned();
    let m = client
        .call(
            "loom_materialize",
            json!({ "sql": format!("SELECT status, count(*) AS n FROM {orders} GROUP BY status"), "name": "by_status" }),
        )
        .await;
    assert!(!is_error_result(&m), "{m}");
    let fp = fingerprint_sql(&[&orders, "by_status"]);
    let fingerprint = async |client: &mut RawClient| {
        let r = client.call("loom_query", json!({ "sql": fp })).await;
        assert!(!is_error_result(&r), "{r}");
        text_of(&r)
    };
    let before = fingerprint(&mut client).await;
    assert!(before.contains(&format!("rows {orders} ")), "{before}");
    let targets = Targets {
        orders: orders.clone(),
        pinned: "by_status".into(),
        secret: cfg.file("loom.toml").display().to_string(),
        private: std::env::temp_dir().join("loom-x").display().to_string(),
        spill: std::env::temp_dir()
            .join("loom-x/spill")
            .display()
            .to_string(),
    };
    let run = cfg.dir.path().display().to_string();
    let mut all = base_attacks(&targets);
    for a in base_attacks(&targets) {
        all.push(format!("EXPLAIN /* x */ ANALYZE {a}"));
        all.push(format!("EXPLAIN (FORMAT json, ANALYZE) {a}"));
    }
    assert!(all.len() >= 100, "{}", all.len());
    for (i, sql) in all.iter().enumerate() {
        let q = client.call("loom_query", json!({ "sql": sql })).await;
        assert!(is_error_result(&q), "loom_query ran {sql:?}: {q}");
        let m = client
            .call(
                "loom_materialize",
                json!({ "sql": sql, "name": format!("attack_{i}") }),
            )
            .await;
        assert!(is_error_result(&m), "loom_materialize ran {sql:?}: {m}");
        let out = std::process::Command::new(LOOM)
            .env("XDG_RUNTIME_DIR", &run)
            .args(["query", sql, "--format", "csv"])
            .output()
            .expect("loom query");
        assert!(
            !out.status.success(),
            "loom query ran {sql:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    assert_eq!(before, fingerprint(&mut client).await);
    // The model's and the person's answers are still true.
    let r = client
        .call("loom_query", json!({ "sql": "SELECT upper('a') AS u" }))
        .await;
    assert!(text_of(&r).contains("\"A\""), "{r}");
}

/// A client that takes the names loom's next tables would get (F5 of the attacker's report)
/// breaks nothing: the next intercept still becomes a dataset and the next large query too,
/// each under a name of its own; numbers count per prefix, and a name loom gave is never a
/// client's to take.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_cannot_squat_the_names_loom_draws() {
    let cfg = sample_config("", "");
    let mut client = RawClient::spawn(&cfg.path);
    client.initialize().await;
    let dataset = |r: &serde_json::Value| {
        r["result"]["structuredContent"]["ref"]
            .as_str()
            .unwrap_or_else(|| panic!("not a dataset: {r}"))
            .to_owned()
    };
    let first = dataset(&client.call("sample_list_orders", json!({})).await);
    assert_eq!(first, "sample_list_orders_1");
    for name in [
        "sample_list_orders_2",
        "sample_list_orders_3",
        "q_1",
        "q_2",
        "sample_list_customers_1",
    ] {
        let m = client
            .call(
                "loom_materialize",
                json!({ "sql": "SELECT 'squatted' AS s", "name": name }),
            )
            .await;
        assert!(!is_error_result(&m), "{name}: {m}");
    }
    let again = dataset(&client.call("sample_list_orders", json!({})).await);
    assert_eq!(again, "sample_list_orders_4");
    let customers = dataset(&client.call("sample_list_customers", json!({})).await);
    assert_eq!(customers, "sample_list_customers_2");
    let big = client
        .call(
            "loom_query",
            json!({ "sql": "SELECT range AS n FROM range(5000)" }),
        )
        .await;
    assert!(!is_error_result(&big), "{big}");
    assert_eq!(dataset(&big), "q_3");
    // What the client made is untouched, and a name loom gave stays loom's once it is gone.
    let r = client
        .call("loom_query", json!({ "sql": "SELECT s FROM q_1" }))
        .await;
    assert!(text_of(&r).contains("squatted"), "{r}");
    let d = client
        .call("loom_drop", json!({ "ref": "sample_list_orders_1" }))
        .await;
    assert!(!is_error_result(&d), "{d}");
    let m = client
        .call(
            "loom_materialize",
            json!({ "sql": "SELECT 1 AS x", "name": "sample_list_orders_1" }),
        )
        .await;
    assert!(is_error_result(&m), "{m}");
}

/// loom's resident sizes from /proc: (VmRSS, VmHWM) in bytes.
fn resident(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kb| kb * 1024)
            .unwrap_or_else(|| panic!("{name} in {status}"))
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// F3 of the attacker's report: with `memory_limit = "100MB"`, queries that build huge strings
/// outside the engine's buffer manager (one value of gigabytes, or many large ones in a chunk)
/// get a clear error instead of growing loom by gigabytes, loom answers the next query, and
/// loom's peak resident size stays within what one query may add: memory_limit + 256 MiB, plus
/// 128 MiB for what lands between two watchdog ticks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_query_cannot_grow_loom_past_its_memory_bound() {
    let cfg = sample_config("memory_limit = \"100MB\"", "");
    let mut client = RawClient::spawn(&cfg.path);
    client.initialize().await;
    let pid = client.child.id().expect("loom's pid");
    let answer = async |client: &mut RawClient| {
        let r = client
            .call("loom_query", json!({ "sql": "SELECT 40 + 2 AS v" }))
            .await;
        assert!(text_of(&r).contains("42"), "{r}");
    };
    answer(&mut client).await;
    let (rss, hwm) = resident(pid);
    let start = rss.max(hwm);
    let bound = start + (100_000_000 + (256 << 20) + (128 << 20));
    // Each either is stopped with the error, or (the engine freeing as it goes) runs within
    // the bound; the first three cannot run within it.
    for (sql, stopped) in [
        (
            "SELECT length(repeat('x', 300000000) || repeat('y', 300000000)) AS s",
            true,
        ),
        ("SELECT length(repeat('x', 1500000000)) AS s", true),
        (
            "SELECT length(list_value(range(200000000))::VARCHAR) AS s",
            true,
        ),
        (
            "SELECT sum(length(repeat('x', 10000000))) AS s FROM range(1000)",
            false,
        ),
        (
            "SELECT max(length(s)) AS m FROM (SELECT repeat(range::VARCHAR, 400000) AS s FROM range(20000) ORDER BY s)",
            false,
        ),
    ] {
        let q = client.call("loom_query", json!({ "sql": sql })).await;
        let text = text_of(&q);
        if stopped {
            assert!(
                is_error_result(&q) && text.contains("more memory than one query may use"),
                "{sql}: {text}"
            );
        }
        if is_error_result(&q) {
            // Loom's bound, or the engine's own limit where its buffer manager does the work.
            assert!(
                (text.contains("more memory than one query may use")
                    || text.contains("Out of Memory"))
                    && text.contains("LIMIT"),
                "{sql}: {text}"
            );
        }
        answer(&mut client).await;
        let (_, peak) = resident(pid);
        assert!(
            peak <= bound,
            "{sql}: loom peaked at {} MiB, past {} MiB",
            peak >> 20,
            bound >> 20
        );
    }
}

/// F5 of the third attacker pass: many values of just under a megabyte built inside one
/// expression, where no interrupt lands, took loom to about 2× its ceiling (921 MB against
/// 566 MB with 2 threads, 1784 MB with 16). Held now within 1.3× of the ceiling (loom's
/// resident size at the query's start, plus `memory_limit`, plus 256 MiB), with 2 threads and
/// with 16; each query either is stopped with the bound's error or runs within it, and loom
/// answers the next query.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_just_under_a_megabyte_in_one_expression_stay_within_the_bound() {
    for (threads, sql) in [
        (
            2,
            "SELECT max(len(list_transform(range(500), lambda x: repeat('x', 900000)))) AS m FROM range(8)",
        ),
        (
            16,
            "SELECT max(len(list_transform(range(1000), lambda x: repeat('x', 900000)))) AS m FROM range(32)",
        ),
        (
            2,
            "SELECT max(len(list_transform(range(3000), lambda x: repeat('y', 300000)))) AS m FROM range(8)",
        ),
    ] {
        let cfg = sample_config(
            &format!("memory_limit = \"256MB\"\nthreads = {threads}"),
            "",
        );
        let mut client = RawClient::spawn(&cfg.path);
        client.initialize().await;
        let pid = client.child.id().expect("loom's pid");
        let r = client
            .call("loom_query", json!({ "sql": "SELECT 40 + 2 AS v" }))
            .await;
        assert!(text_of(&r).contains("42"), "{r}");
        let (rss, hwm) = resident(pid);
        let ceiling = rss.max(hwm) + 256_000_000 + (256 << 20);
        let q = client.call("loom_query", json!({ "sql": sql })).await;
        let text = text_of(&q);
        if is_error_result(&q) {
            assert!(
                text.contains("more memory than one query may use")
                    || text.contains("Out of Memory"),
                "{sql}: {text}"
            );
        }
        let r = client
            .call("loom_query", json!({ "sql": "SELECT 40 + 2 AS v" }))
            .await;
        assert!(text_of(&r).contains("42"), "{r}");
        let (_, peak) = resident(pid);
        // The figures BENCHMARKS.md reports (`-- --nocapture` prints them).
        eprintln!(
            "memory bound: {threads} threads, {sql}: peak {} MiB, ceiling {} MiB, {:.2}x, {}",
            peak >> 20,
            ceiling >> 20,
            peak as f64 / ceiling as f64,
            if is_error_result(&q) {
                "stopped"
            } else {
                "answered"
            }
        );
        assert!(
            peak as f64 <= 1.3 * ceiling as f64,
            "{threads} threads, {sql}: loom peaked at {} MiB, {:.2}x its ceiling of {} MiB",
            peak >> 20,
            peak as f64 / ceiling as f64,
            ceiling >> 20
        );
    }
}
