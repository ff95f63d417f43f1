use super::*;
use crate::intercept::table::{Table, Tier};
use crate::store::memories::MemoryLimits;
use serde_json::json;

fn store_with_orders(dir: &std::path::Path) -> Store {
    let store = Store::for_tests(dir);
    let records: Vec<Map<String, Value>> = (0..5)
        .map(|i| {
            let Value::Object(m) = json!({
                "order_id": 7_300_000_000_000_000_000u64 + i * 7919,
                "amount": format!("{}.25", 10 + i).parse::<serde_json::Number>().unwrap(),
                "status": if i % 2 == 0 { "late" } else { "paid" },
                "placed": format!("2025-01-0{}", i + 1),
                "note": "a \"quoted\", comma\nline",
            }) else {
                unreachable!()
            };
            m
        })
        .collect();
    let table = Table::from_records(records, Tier::Json, Map::new(), "test").unwrap();
    store
        .ingest(
            &table,
            crate::store::Provenance {
                server: "sample".into(),
                tool: "list_orders".into(),
                arguments: None,
                at: crate::store::now_iso(),
                rung: "test".into(),
            },
        )
        .unwrap();
    store
}

fn memories(dir: &std::path::Path) -> Memories {
    Memories::new(dir.join("m.jsonl"), MemoryLimits::default())
}

fn bind_all(store: &Store, mem: &Memories, bind: Value, max: usize) -> Result<Value, BindError> {
    let specs = parse(&bind)?;
    let bound = resolve(store, mem, &specs, max)?;
    let mut args = json!({});
    apply(&mut args, &bound)?;
    Ok(args)
}

#[test]
fn every_source_and_shape_binds_with_exact_types() {
    let d = tempfile::tempdir().unwrap();
    let store = store_with_orders(d.path());
    let mem = memories(d.path());
    mem.set(
        "runbook",
        "restart the worker",
        vec![],
        false,
        None,
        "human",
    )
    .unwrap();
    let text: String = (0..50)
        .map(|i| format!("line {i} {}\n", if i % 10 == 0 { "ERROR" } else { "ok" }))
        .collect();
    let blob = store.park(
        text.clone(),
        "log".into(),
        "text/plain".into(),
        blobs::DEFAULT_TTL,
    );
    let r = "sample_list_orders_1";
    let args = bind_all(
        &store,
        &mem,
        json!({
            "/whole": {"blob": blob.key},
            "/slice": {"blob": blob.key, "offset": 5, "limit": 6},
            "/errors": {"blob": blob.key, "pattern": "error"},
            "/rows": {"sql": format!("SELECT order_id, amount, placed FROM {r} WHERE status = 'late' ORDER BY order_id")},
            "/csv": {"sql": format!("SELECT order_id, note FROM {r} ORDER BY order_id LIMIT 1"), "as": "csv"},
            "/ids": {"sql": format!("SELECT order_id FROM {r} ORDER BY order_id"), "as": "column"},
            "/total": {"sql": format!("SELECT sum(amount) AS t FROM {r}"), "as": "value"},
            "/deep/er/memo": {"memory": "runbook"},
        }),
        DEFAULT_MAX_BOUND_BYTES,
    )
    .unwrap();
    assert_eq!(args["whole"], json!(text));
    assert_eq!(args["slice"], json!(&text[5..11]));
    assert_eq!(
        args["errors"],
        json!("line 0 ERROR\nline 10 ERROR\nline 20 ERROR\nline 30 ERROR\nline 40 ERROR")
    );
    // 19-digit ids stay integers, decimals stay exact numbers, dates are date strings.
    assert_eq!(
        args["rows"].to_string(),
        r#"[{"order_id":7300000000000000000,"amount":10.25,"placed":"2025-01-01"},{"order_id":7300000000000015838,"amount":12.25,"placed":"2025-01-03"},{"order_id":7300000000000031676,"amount":14.25,"placed":"2025-01-05"}]"#
    );
    assert_eq!(
        args["csv"],
        json!("order_id,note\n7300000000000000000,\"a \"\"quoted\"\", comma\nline\"\n")
    );
    assert_eq!(args["ids"][4].to_string(), "7300000000000031676");
    assert_eq!(args["total"].to_string(), "61.25");
    assert_eq!(args["deep"]["er"]["memo"], json!("restart the worker"));
}

#[test]
fn pointers_place_into_arrays_and_refuse_what_is_not_there() {
    let mut args = json!({"items": [{"body": 1}, 2], "n": 3});
    place(&mut args, "/items/0/body", json!("x")).unwrap();
    place(&mut args, "/items/-", json!("appended")).unwrap();
    place(&mut args, "/items/3", json!("next")).unwrap();
    place(&mut args, "/a~1b~0c", json!(true)).unwrap();
    assert_eq!(
        args,
        json!({"items": [{"body": "x"}, 2, "appended", "next"], "n": 3, "a/b~c": true})
    );
    for (at, why) in [
        ("/items/9/body", "no element"),
        ("/items/01", "no element"),
        ("/n/x", "is a number"),
        ("/bad~2", "~0"),
        ("", "starts with"),
    ] {
        let e = place(&mut args, at, json!(1)).unwrap_err().0;
        assert!(e.contains(why), "{at}: {e}");
    }
}

#[test]
fn bad_bindings_say_which_and_why() {
    let d = tempfile::tempdir().unwrap();
    let store = store_with_orders(d.path());
    let mem = memories(d.path());
    let r = "sample_list_orders_1";
    for (bind, why) in [
        (json!([]), "must be an object"),
        (json!({"notes": {"blob": "blob/x"}}), "starting with `/`"),
        (json!({"/n": "blob/x"}), "must be an object"),
        (json!({"/n": {}}), "names no data"),
        (
            json!({"/n": {"blob": "b", "sql": "SELECT 1"}}),
            "exactly one",
        ),
        (
            json!({"/n": {"blob": "b", "as": "rows"}}),
            "unknown member `as`",
        ),
        (json!({"/n": {"blob": "blob/nothing"}}), "no parked text"),
        (
            json!({"/n": {"blob": "b", "pattern": "x", "limit": 3}}),
            "not both",
        ),
        (
            json!({"/n": {"sql": "SELECT 1", "as": "table"}}),
            "rows, csv, column or value",
        ),
        (
            json!({"/n": {"sql": "DROP TABLE sample_list_orders_1"}}),
            "query failed",
        ),
        (
            json!({"/n": {"sql": "SELECT * FROM read_csv('/etc/passwd')"}}),
            "query failed",
        ),
        (
            json!({"/n": {"sql": format!("SELECT order_id, amount FROM {r}"), "as": "column"}}),
            "one column",
        ),
        (
            json!({"/n": {"sql": format!("SELECT order_id FROM {r}"), "as": "value"}}),
            "one row",
        ),
        (json!({"/n": {"memory": "nope"}}), "memory"),
        (
            json!({"/a": {"memory": "x"}, "/a/b": {"memory": "y"}}),
            "inside binding `/a`",
        ),
    ] {
        let e = bind_all(&store, &mem, bind.clone(), DEFAULT_MAX_BOUND_BYTES)
            .unwrap_err()
            .0;
        assert!(e.contains(why), "{bind}: {e}");
    }
    // The cap holds for a blob, a query and the sum of several.
    let big = store.park(
        "x".repeat(5000),
        "x".into(),
        "text/plain".into(),
        blobs::DEFAULT_TTL,
    );
    let e = bind_all(&store, &mem, json!({"/a": {"blob": big.key}}), 4000)
        .unwrap_err()
        .0;
    assert!(e.contains("max_bound_bytes"), "{e}");
    let e = bind_all(
        &store,
        &mem,
        json!({"/a": {"sql": format!("SELECT * FROM {r}")}}),
        200,
    )
    .unwrap_err()
    .0;
    assert!(e.contains("max_bound_bytes"), "{e}");
    let e = bind_all(
        &store,
        &mem,
        json!({"/a": {"blob": big.key}, "/b": {"blob": big.key}}),
        8000,
    )
    .unwrap_err()
    .0;
    assert!(e.contains("max_bound_bytes"), "{e}");
}

#[test]
fn a_query_binding_records_what_it_read() {
    let d = tempfile::tempdir().unwrap();
    let store = store_with_orders(d.path());
    let mem = memories(d.path());
    let specs = parse(
        &json!({"/ids": {"sql": "SELECT order_id FROM sample_list_orders_1", "as": "column"}}),
    )
    .unwrap();
    let bound = resolve(&store, &mem, &specs, DEFAULT_MAX_BOUND_BYTES).unwrap();
    assert_eq!(
        bound[0].view.inputs,
        vec!["sample_list_orders_1".to_owned()]
    );
    assert!(
        bound[0].view.source.starts_with("sql (column): SELECT"),
        "{:?}",
        bound[0].view
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(120))]

    /// No `bind` input, however hostile, panics the binder or changes the store (no table
    /// made or dropped, no setting changed, no file read or written: the fingerprint holds).
    #[test]
    fn no_bind_input_panics_or_reaches_a_file(
        pointer in "(/[a-z~0-9\\-]{0,4}){0,4}|[a-z/~]{0,6}",
        kind in 0usize..4,
        text in "\\PC{0,40}",
        sql in proptest::sample::select(vec![
            "SELECT * FROM read_csv('/etc/passwd')",
            "COPY sample_list_orders_1 TO '/tmp/x.csv'",
            "ATTACH '/tmp/x.db'",
            "SELECT 1; DROP TABLE sample_list_orders_1",
            "SET threads = 1",
            "SELECT * FROM '/etc/passwd'",
            "INSTALL httpfs",
            "SELECT * FROM sample_list_orders_1",
            "SELECT getenv('HOME')",
            "PRAGMA database_list",
            "",
        ]),
        offset in proptest::option::of(0usize..100),
        shape in proptest::sample::select(vec!["rows", "csv", "column", "value", "x"]),
    ) {
        use std::sync::OnceLock;
        static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
        static STORE: OnceLock<Store> = OnceLock::new();
        let dir = DIR.get_or_init(|| tempfile::tempdir().unwrap());
        let store = STORE.get_or_init(|| store_with_orders(dir.path()));
        let mem = memories(dir.path());
        let before = store.fingerprint();
        let source = match kind {
            0 => json!({"blob": text, "offset": offset}),
            1 => json!({"sql": format!("{sql}{text}"), "as": shape}),
            2 => json!({"sql": sql, "as": shape}),
            _ => json!({"memory": text}),
        };
        let mut bind = Map::new();
        bind.insert(pointer.clone(), source);
        let _ = bind_all(store, &mem, Value::Object(bind), 1 << 16);
        let mut args = json!({"a": [1, {"b": 2}]});
        let _ = place(&mut args, &pointer, json!(text));
        proptest::prop_assert_eq!(before, store.fingerprint());
    }
}
