//! Every column type the typer produces works with the functions a person or a model reaches
//! for, through the real sealed store: comparison, `date_trunc`, `strftime`, `extract`,
//! `histogram`, `sum`/`avg`, `regexp_matches`, list functions on JSON arrays, and the
//! workbench's charts. The sealed engine has no time-zone extension, so no column may come out
//! as TIMESTAMPTZ; times with offsets are converted to UTC, and DuckDB's own parser checks the
//! conversion.

use loom::intercept::extract::find_in_text;
use loom::intercept::table::{ColumnType, Table, Tier};
use loom::store::{Provenance, QueryOutcome, Store, StoreConfig};
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::time::Duration;

fn open(dir: &std::path::Path) -> Store {
    Store::open(StoreConfig {
        memory_limit: "1GB".into(),
        threads: 2,
        memory_budget: 512 << 20,
        query_timeout: Duration::from_secs(10),
        export_dir: dir.join("exports"),
        envelope_budget: 1500,
        inline_rows: 100,
        probe_file: std::env::current_exe().unwrap(),
        blob_dir: None,
        parked_max_bytes: u64::MAX,
    })
    .expect("store opens and proves its seal")
}

fn prov() -> Provenance {
    Provenance {
        server: "t".into(),
        tool: "types".into(),
        arguments: None,
        at: "2026-11-30T00:00:00Z".into(),
        rung: "json".into(),
    }
}

fn rows(store: &Store, sql: &str) -> Vec<Value> {
    match store.query(sql) {
        Ok(QueryOutcome::Inline { rows, .. }) => rows,
        Ok(QueryOutcome::Dataset(d)) => panic!("{sql}: a dataset {}", d.dataset_ref),
        Err(e) => panic!("{sql}: {e}"),
    }
}

fn records(v: Value) -> Vec<Map<String, Value>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_object().unwrap().clone())
        .collect()
}

/// One column of each type the typer produces, from JSON values (the JSON tier) or from
/// text cells (the text tier), and the type each must get.
fn every_type() -> Vec<(Tier, &'static str, ColumnType, Vec<Value>)> {
    use ColumnType::*;
    vec![
        (
            Tier::Json,
            "flag",
            Boolean,
            vec![json!(true), json!(false), json!(true), Value::Null],
        ),
        (
            Tier::Json,
            "n",
            BigInt,
            vec![
                json!(7_300_000_000_000_007_919i64),
                json!(-2),
                json!(3),
                json!(4),
            ],
        ),
        (
            Tier::Json,
            "u",
            UBigInt,
            vec![
                json!(18_446_744_073_709_551_615u64),
                json!(1),
                json!(2),
                json!(3),
            ],
        ),
        (
            Tier::Json,
            "h",
            HugeInt,
            vec![
                json!(18_446_744_073_709_551_615u64),
                json!(-1),
                json!(2),
                json!(3),
            ],
        ),
        (
            Tier::Json,
            "x",
            Double,
            vec![
                json!(1.5),
                json!(2),
                json!(-3.25),
                serde_json::from_str::<Value>("1e10").unwrap(),
            ],
        ),
        (
            Tier::Json,
            "money",
            Decimal {
                precision: 18,
                scale: 2,
            },
            vec![json!(15004.17), json!(0.01), json!(-3.5), json!(7)],
        ),
        (
            Tier::Json,
            "d",
            Date,
            vec![
                json!("2025-01-31"),
                json!("2024-02-29"),
                json!("2025-12-01"),
                json!("0001-01-01"),
            ],
        ),
        (
            Tier::Json,
            "ts",
            Timestamp,
            vec![
                json!("2025-01-31T10:00:00"),
                json!("2025-01-31 10:00:00.123"),
                json!("2025-02-01T23:59"),
                json!("2024-02-29T00:00:00.123456"),
            ],
        ),
        (
            Tier::Json,
            "tz",
            TimestampUtc,
            vec![
                json!("2025-01-31T10:00:00Z"),
                json!("2025-01-31T01:30:00+02:00"),
                json!("2024-12-31T22:15:07.5-05:30"),
                json!("2025-06-01T00:00+0100"),
            ],
        ),
        (
            Tier::Json,
            "s",
            Varchar,
            vec![
                json!("北京市朝阳区建国路八十八号"),
                json!("Café"),
                json!("a1"),
                json!("2025-13-01"),
            ],
        ),
        (
            Tier::Json,
            "j",
            Json,
            vec![
                json!(["a", "b"]),
                json!([]),
                json!(["c", 1, {"k": "v"}]),
                json!({"k": [1, 2]}),
            ],
        ),
        (
            Tier::Text,
            "tn",
            BigInt,
            vec![json!("12"), json!("-3"), json!("0"), json!("")],
        ),
        (
            Tier::Text,
            "tx",
            Double,
            vec![json!("1.5"), json!("2"), json!("-0.25"), json!("3e2")],
        ),
        (
            Tier::Text,
            "tmoney",
            Decimal {
                precision: 38,
                scale: 2,
            },
            vec![
                json!("123456789012345678901.25"),
                json!("0.01"),
                json!(""),
                json!("-2"),
            ],
        ),
        (
            Tier::Text,
            "tb",
            Boolean,
            vec![json!("true"), json!("False"), json!("TRUE"), json!("")],
        ),
        (
            Tier::Text,
            "tzip",
            Varchar,
            vec![json!("0123"), json!("4567"), json!("8901"), json!("2345")],
        ),
        (
            Tier::Text,
            "ttz",
            TimestampUtc,
            vec![
                json!("2025-01-31T10:00:00+09:00"),
                json!("2025-03-30T01:30:00+01:00"),
                json!("2025-03-30T03:30:00+02:00"),
                json!(""),
            ],
        ),
        // Wider than any engine integer: kept as text, exactly, rather than failing the table.
        (
            Tier::Json,
            "wide",
            Varchar,
            vec![
                json!(1),
                serde_json::from_str::<Value>("123456789012345678901234567890123456789012")
                    .unwrap(),
                json!(2),
                json!(3),
            ],
        ),
    ]
}

fn table_of(tier: Tier, name: &str, values: &[Value]) -> Table {
    let recs = records(Value::Array(
        values
            .iter()
            .enumerate()
            .map(|(i, v)| json!({ "rid": i, name: v }))
            .collect(),
    ));
    Table::from_records(recs, tier, Map::new(), "json").expect("a table")
}

/// The statements to try on a column `c` of a table `t`, by the column's SQL type.
fn battery(ty: &str) -> Vec<&'static str> {
    let mut b = vec![
        "SELECT count(DISTINCT c) AS n, min(c) AS lo, max(c) AS hi FROM t",
        "SELECT histogram(c) AS h FROM t",
        "SELECT c, count(*) AS n FROM t GROUP BY c ORDER BY c NULLS LAST",
        "SELECT count(*) AS n FROM t WHERE c = (SELECT min(c) FROM t)",
        "SELECT count(*) AS n FROM t WHERE c IS DISTINCT FROM (SELECT max(c) FROM t)",
        "SELECT count(*) AS n FROM t WHERE regexp_matches(c::VARCHAR, '[0-9a-z]')",
        "SELECT string_agg(c::VARCHAR, ',' ORDER BY rid) AS s FROM t",
        "SELECT mode(c) AS m, any_value(c) AS a FROM t",
        "SELECT c, lag(c) OVER (ORDER BY rid) AS prev FROM t",
    ];
    match ty {
        "BIGINT" | "UBIGINT" | "HUGEINT" | "DOUBLE" | "DECIMAL(18,2)" | "DECIMAL(38,2)" => b.extend([
            "SELECT sum(c) AS s, avg(c) AS a, stddev(c) AS sd, median(c) AS m FROM t",
            "SELECT count(*) AS n FROM t WHERE c > 1 AND c < 1e30",
            "SELECT c // 2 AS half, c % 7 AS m, round(c / 3, 2) AS r, abs(c) AS a FROM t",
            "SELECT quantile_cont(c, 0.5) AS q FROM t",
            "SELECT histogram(c, [0, 10, 100]) AS h FROM t",
        ]),
        "DATE" | "TIMESTAMP" => b.extend([
            "SELECT date_trunc('month', c) AS m, count(*) AS n FROM t GROUP BY 1 ORDER BY 1",
            "SELECT date_trunc('hour', c) AS h FROM t",
            "SELECT strftime(c, '%Y-%m-%d %H:%M') AS f FROM t",
            "SELECT extract(year FROM c) AS y, extract(month FROM c) AS m, dayname(c) AS d FROM t",
            "SELECT year(c) AS y, week(c) AS w, epoch(c) AS e FROM t",
            "SELECT count(*) AS n FROM t WHERE c > DATE '2020-01-01' AND c < TIMESTAMP '2030-01-01 00:00:00'",
            "SELECT date_diff('day', min(c), max(c)) AS days, max(c) - min(c) AS span FROM t",
            "SELECT c + INTERVAL 1 DAY AS next FROM t",
            "SELECT time_bucket(INTERVAL '1 week', c::TIMESTAMP) AS w, count(*) AS n FROM t GROUP BY 1",
        ]),
        "BOOLEAN" => b.extend([
            "SELECT count_if(c) AS y, bool_and(c) AS a, bool_or(c) AS o, sum(c::INTEGER) AS s FROM t",
            "SELECT count(*) AS n FROM t WHERE c AND NOT c IS NULL",
        ]),
        "VARCHAR" => b.extend([
            "SELECT lower(c) AS l, upper(c) AS u, length(c) AS n, left(c, 3) AS p FROM t",
            "SELECT count(*) AS n FROM t WHERE c LIKE '%a%' OR c ILIKE '%É%' OR contains(c, '区')",
            "SELECT regexp_extract(c, '[0-9]+') AS d, string_split(c, ' ') AS parts FROM t",
            "SELECT c || '!' AS e, reverse(c) AS r FROM t",
        ]),
        "JSON" => b.extend([
            "SELECT json_array_length(c) AS n, json_type(c) AS ty FROM t",
            "SELECT c->>'$[0]' AS first, json_extract(c, '$.k') AS k FROM t",
            "SELECT len(c::VARCHAR[]) AS n FROM t WHERE json_type(c) = 'ARRAY'",
            "SELECT list_contains(c::VARCHAR[], 'a') AS has_a FROM t WHERE json_type(c) = 'ARRAY'",
            "SELECT unnest(c::JSON[]) AS item FROM t WHERE json_type(c) = 'ARRAY'",
            "SELECT list_transform(c::JSON[], lambda x: json_type(x)) AS types FROM t WHERE json_type(c) = 'ARRAY'",
            "SELECT json_keys(c) AS keys FROM t WHERE json_type(c) = 'OBJECT'",
        ]),
        _ => {}
    }
    b
}

#[test]
fn every_type_works_with_the_usual_functions() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    for (tier, name, want, values) in every_type() {
        let table = table_of(tier, name, &values);
        let col = &table.columns[1];
        assert_eq!(col.ty, want, "{name}");
        let meta = store
            .ingest(&table, prov())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let ty = &meta.columns[1].1;
        assert_ne!(ty, "TIMESTAMP WITH TIME ZONE", "{name}");
        let t = &meta.dataset_ref;
        for sql in battery(ty) {
            // `t` and `c` name the dataset and the column under test.
            rows(
                &store,
                &format!("WITH t AS (SELECT rid, \"{name}\" AS c FROM {t}) {sql}"),
            );
        }
        // The workbench's chart of the column.
        let bars = store
            .chart(t, name, 12)
            .unwrap_or_else(|e| panic!("chart of {name} ({ty}): {e}"));
        assert!(!bars.is_empty(), "{name}");
        // Bins are labelled in the column's own terms: whole numbers, days.
        for b in &bars {
            let label = b.label.as_str();
            match want {
                ColumnType::BigInt | ColumnType::UBigInt | ColumnType::HugeInt => assert!(
                    label
                        .trim_start_matches('-')
                        .bytes()
                        .all(|c| c.is_ascii_digit()),
                    "{name}: {label}"
                ),
                ColumnType::Date => {
                    assert!(label.len() == 10 && !label.contains(':'), "{name}: {label}")
                }
                _ => {}
            }
        }
        // The profile and the envelope describe it, with the note for converted times.
        let p = store
            .profile(t, 5)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // A JSON column that mixes objects with other values (`j`) says it was not flattened.
        let note = p.columns[1].note.as_deref();
        let mixed = values.iter().any(Value::is_object) && !values.iter().all(Value::is_object);
        match note {
            Some("objects and other values; not flattened") => assert!(mixed, "{name}"),
            _ => assert_eq!(
                note.is_some(),
                want == ColumnType::TimestampUtc,
                "{name}: {note:?}"
            ),
        }
    }
}

#[test]
fn converted_times_are_the_instants_written() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let values = [
        "2025-01-31T10:00:00Z",
        "2025-01-01T01:30:00+02:00",
        "2024-12-31T22:15:07.123456-05:30",
        "2024-02-29T23:59:59+0000",
        "2024-03-01T00:10:00+00:30",
        "2025-06-01T00:00+01",
    ];
    let table = table_of(
        Tier::Json,
        "moment",
        &values.iter().map(|v| json!(v)).collect::<Vec<_>>(),
    );
    let meta = store.ingest(&table, prov()).unwrap();
    let t = &meta.dataset_ref;
    let got = rows(
        &store,
        &format!(
            "SELECT strftime(moment, '%Y-%m-%d %H:%M:%S.%f') AS s, date_trunc('day', moment)::VARCHAR AS d FROM {t} ORDER BY rid"
        ),
    );
    let want = [
        ("2025-01-31 10:00:00.000000", "2025-01-31"),
        ("2024-12-31 23:30:00.000000", "2024-12-31"),
        ("2025-01-01 03:45:07.123456", "2025-01-01"),
        ("2024-02-29 23:59:59.000000", "2024-02-29"),
        ("2024-02-29 23:40:00.000000", "2024-02-29"),
        ("2025-05-31 23:00:00.000000", "2025-05-31"),
    ];
    for (g, (s, d)) in got.iter().zip(want) {
        assert_eq!(g["s"], s);
        assert!(g["d"].as_str().unwrap().starts_with(d), "{g}");
    }
    let p = store.profile(t, 1).unwrap();
    assert_eq!(
        p.columns[1].note.as_deref(),
        Some(
            "UTC: converted exactly from ISO-8601 times with offset -05:30, Z, +00:30, +01:00, +02:00"
        )
    );
}

#[test]
fn a_table_found_in_text_keeps_its_times_usable() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let text: String = std::iter::once("id,when\n".to_owned())
        .chain((0..20).map(|i| format!("{i},2025-03-{:02}T08:00:00-07:00\n", 1 + i)))
        .collect();
    let table = find_in_text(&text).unwrap().into_table().unwrap();
    let meta = store.ingest(&table, prov()).unwrap();
    assert_eq!(meta.columns[1].1, "TIMESTAMP");
    let r = rows(
        &store,
        &format!(
            "SELECT date_trunc('week', \"when\") AS w, count(*) AS n FROM {} GROUP BY 1 ORDER BY 1",
            meta.dataset_ref
        ),
    );
    assert_eq!(r.iter().map(|r| r["n"].as_u64().unwrap()).sum::<u64>(), 20);
}

fn offset_time() -> impl Strategy<Value = String> {
    (
        1u32..=9999,
        1u32..=12,
        1u32..=28,
        0u32..=23,
        0u32..=59,
        prop::option::of((0u32..=59, prop::option::of(1usize..=6))),
        prop_oneof![
            Just("Z".to_owned()),
            (prop::bool::ANY, 0u32..=14, 0u32..=59, 0usize..3).prop_map(|(neg, h, m, style)| {
                let s = if neg { '-' } else { '+' };
                match style {
                    0 => format!("{s}{h:02}:{m:02}"),
                    1 => format!("{s}{h:02}{m:02}"),
                    _ => format!("{s}{h:02}"),
                }
            }),
        ],
    )
        .prop_map(|(y, mo, d, h, mi, sec, tz)| {
            let sec = match sec {
                None => String::new(),
                Some((s, None)) => format!(":{s:02}"),
                Some((s, Some(digits))) => {
                    format!(":{s:02}.{}", "123456".get(..digits).unwrap_or("1"))
                }
            };
            format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}{sec}{tz}")
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// DuckDB's own parser reads each text as TIMESTAMPTZ (which needs no extension to parse);
    /// the converted column must hold the same instant, to the microsecond.
    #[test]
    fn conversion_agrees_with_the_engines_parser(values in prop::collection::vec(offset_time(), 2..12)) {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path());
        let recs = records(Value::Array(values.iter().enumerate().map(|(i, v)| json!({ "rid": i, "moment": v, "orig": v })).chain([json!({ "rid": -1, "orig": "n/a" })]).collect()));
        let table = Table::from_records(recs, Tier::Json, Map::new(), "json").unwrap();
        prop_assume!(table.columns[1].ty == ColumnType::TimestampUtc);
        let meta = store.ingest(&table, prov()).unwrap();
        let bad = rows(&store, &format!(
            "SELECT rid, moment::VARCHAR AS moment, orig FROM {} WHERE orig <> 'n/a' AND moment IS DISTINCT FROM orig::TIMESTAMPTZ::TIMESTAMP",
            meta.dataset_ref
        ));
        prop_assert!(bad.is_empty(), "{bad:?}");
    }
}
