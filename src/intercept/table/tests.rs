use super::*;
use serde_json::json;

fn recs(v: Value) -> Vec<Map<String, Value>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_object().unwrap().clone())
        .collect()
}

fn types(t: &Table) -> Vec<(&str, &str)> {
    t.columns
        .iter()
        .map(|c| (c.name.as_str(), &*c.ty.sql().leak()))
        .collect()
}

#[test]
fn exact_types_from_json() {
    let rows: Vec<Map<String, Value>> = recs(serde_json::from_str(r#"[
        {"id": 7300000000000007919, "big": 18446744073709551615, "huge": 123456789012345678901234567890, "n": 1, "x": 1.5, "ok": true, "d": "2025-01-31", "t": "2025-01-31T10:00:00", "tz": "2025-01-31T10:00:00Z", "s": "a"},
        {"id": 7300000000000015838, "big": 1, "huge": -1, "n": 2, "x": 2, "ok": false, "d": "2024-02-29", "t": "2025-01-31 10:00:00.123", "tz": "2025-01-31T10:00:00+02:00", "s": "2025-13-01"}
    ]"#).unwrap());
    let t = Table::from_records(rows, Tier::Json, Map::new(), "json").unwrap();
    assert_eq!(
        types(&t),
        vec![
            ("id", "BIGINT"),
            ("big", "UBIGINT"),
            ("huge", "HUGEINT"),
            ("n", "BIGINT"),
            ("x", "DECIMAL(18,1)"),
            ("ok", "BOOLEAN"),
            ("d", "DATE"),
            ("t", "TIMESTAMP"),
            ("tz", "TIMESTAMP"),
            ("s", "VARCHAR")
        ]
    );
    assert_eq!(t.cell(0, 0), Cell::Int(7_300_000_000_000_007_919));
    assert_eq!(t.cell(0, 1), Cell::UInt(u64::MAX));
    assert_eq!(
        t.cell(0, 2),
        Cell::Huge(123_456_789_012_345_678_901_234_567_890)
    );
}

#[test]
fn offsets_become_exact_utc_and_are_noted() {
    let t = Table::from_records(
        recs(json!([
            { "t": "2025-01-01T01:30:00+02:00", "z": "2025-03-01T10:00:00Z", "keep": "2025-01-01T10:00:00+02:00" },
            { "t": "2024-12-31T22:15:07.123456789-05:30", "z": "2025-03-01T10:00Z", "keep": "2025-01-01T10:00:00" },
            { "t": "2024-02-29T23:59:59+0000", "z": null, "keep": null },
            { "t": "0001-01-01T00:30:00+01", "z": "2025-03-01T10:00:00z", "keep": null }
        ])),
        Tier::Json,
        Map::new(),
        "json",
    )
    .unwrap();
    // Year 0 would come out of the last row's conversion: the engine prints that
    // differently, so that column stays text rather than shift silently.
    assert_eq!(
        types(&t),
        vec![("t", "VARCHAR"), ("z", "TIMESTAMP"), ("keep", "VARCHAR")]
    );
    assert_eq!(t.cell(1, 1), Cell::Text("2025-03-01 10:00:00".into()));
    assert_eq!(
        t.columns[1].note.as_deref(),
        Some("UTC: converted exactly from ISO-8601 times with offset Z")
    );
    let t = Table::from_records(
        recs(json!([
            { "t": "2025-01-01T01:30:00+02:00" },
            { "t": "2024-12-31T22:15:07.123456000-05:30" },
            { "t": "2024-02-29T23:59:59+0000" },
            { "t": "2024-03-01T00:10:00+00:30" },
            { "t": "9999-12-31T23:59:00-00:00" }
        ])),
        Tier::Json,
        Map::new(),
        "json",
    )
    .unwrap();
    assert_eq!(t.columns[0].ty, ColumnType::TimestampUtc);
    let utc: Vec<_> = t.cells(0, 0..5).collect();
    assert_eq!(
        utc,
        vec![
            Cell::Text("2024-12-31 23:30:00".into()),
            Cell::Text("2025-01-01 03:45:07.123456000".into()),
            Cell::Text("2024-02-29 23:59:59".into()),
            Cell::Text("2024-02-29 23:40:00".into()),
            Cell::Text("9999-12-31 23:59:00".into()),
        ]
    );
    assert_eq!(
        t.columns[0].note.as_deref(),
        Some("UTC: converted exactly from ISO-8601 times with offset -05:30, Z, +00:30, +02:00")
    );
}

#[test]
fn nanoseconds_the_engine_would_drop_keep_a_column_text() {
    for (values, ty) in [
        (
            ["2025-01-01T10:00:00.123456789Z", "2025-01-01T10:00:00Z"],
            ColumnType::Varchar,
        ),
        (
            ["2025-01-01T10:00:00.1234567", "2025-01-01T10:00:00"],
            ColumnType::Varchar,
        ),
        (
            ["2025-01-01T10:00:00.123456000", "2025-01-01T10:00:00.1"],
            ColumnType::Timestamp,
        ),
    ] {
        let t = Table::from_records(
            recs(json!([{ "t": values[0] }, { "t": values[1] }])),
            Tier::Json,
            Map::new(),
            "json",
        )
        .unwrap();
        assert_eq!(t.columns[0].ty, ty, "{values:?}");
    }
}

#[test]
fn non_ascii_text_is_typed_without_splitting_a_character() {
    // Each of these once cut a character in half while looking for a timestamp.
    for s in [
        "東京都の天気予報です",
        "2025-01-0é12:00:00",
        "2025-01-01T12:00+é",
        "2025-01-01T12:00+0é",
        "2025-01-01T12:00:0é",
        "2025-01-01Té2:00:00Z",
        "مرحبا بالعالم، كيف حالك",
        "😀😀😀😀😀",
    ] {
        let t = Table::from_records(
            recs(json!([{ "s": s }, { "s": s }])),
            Tier::Text,
            Map::new(),
            "csv",
        )
        .unwrap_or_else(|| panic!("{s}: no table"));
        assert_eq!(t.columns[0].ty, ColumnType::Varchar, "{s}");
        assert_eq!(t.cell(1, 0), Cell::Text(s.into()));
    }
}

#[test]
fn a_column_is_a_date_only_if_every_value_is() {
    let t = Table::from_records(
        recs(json!([{ "d": "2025-01-01" }, { "d": "soon" }, { "d": null }])),
        Tier::Json,
        Map::new(),
        "json",
    )
    .unwrap();
    assert_eq!(t.columns[0].ty, ColumnType::Varchar);
}

#[test]
fn flattening_dedup_and_json_columns() {
    let t = Table::from_records(
        recs(json!([
            { "id": 1, "profile": { "city": "Porto", "geo": { "lat": 41.1, "deep": { "x": 1 } } }, "tags": ["a"], "ID": 9, "名前": "x" },
            { "id": 2, "profile": { "city": "Lyon" }, "tags": [], "ID": 8 }
        ])),
        Tier::Json,
        Map::new(),
        "json",
    )
    .unwrap();
    let names: Vec<_> = t.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "id",
            "profile",
            "profile.city",
            "profile.geo",
            "profile.geo.lat",
            "profile.geo.deep",
            "tags",
            "ID_2",
            "名前"
        ]
    );
    assert_eq!(t.columns[1].ty, ColumnType::Json);
    assert_eq!(t.columns[5].ty, ColumnType::Json);
    assert_eq!(t.columns[6].ty, ColumnType::Json);
    assert_eq!(t.cell(1, 2), Cell::Text("Lyon".into()));
    assert_eq!(t.cell(1, 3), Cell::Null);
    assert_eq!(t.cell(1, 4), Cell::Null);
    assert_eq!(t.cell(1, 1), Cell::Text(r#"{"city":"Lyon"}"#.into()));
    let views: Vec<_> = t.columns.iter().map(|c| c.view_of).collect();
    assert_eq!(
        views,
        [
            None,
            None,
            Some(1),
            Some(1),
            Some(3),
            Some(3),
            None,
            None,
            None
        ]
    );
}

/// Names, types and notes of a table's columns.
fn described(t: &Table) -> Vec<(String, String, Option<String>)> {
    t.columns
        .iter()
        .map(|c| (c.name.clone(), c.ty.sql(), c.note.clone()))
        .collect()
}

fn col(name: &str, ty: &str, note: Option<&str>) -> (String, String, Option<String>) {
    (name.to_owned(), ty.to_owned(), note.map(str::to_owned))
}

/// The non-null cells of a column.
fn present(t: &Table, c: usize) -> usize {
    t.cells(c, 0..t.rows()).filter(|c| *c != Cell::Null).count()
}

const FLATTENED: &str = "JSON object; also flattened to meta.*";
const VIEW: &str = "view of meta";

#[test]
fn a_column_of_objects_on_some_rows_keeps_every_object() {
    // The shape of a jsonb column behind `CASE WHEN id % 7 = 0 THEN jsonb_build_object(…)`.
    let rows: Vec<Value> = (0..100)
        .map(|i| {
            let meta = if i % 7 == 0 {
                json!({ "a": i, "tags": ["x"] })
            } else {
                Value::Null
            };
            json!({ "id": i, "meta": meta })
        })
        .collect();
    let t = Table::from_records(recs(Value::Array(rows)), Tier::Json, Map::new(), "json").unwrap();
    assert_eq!(
        described(&t),
        [
            col("id", "BIGINT", None),
            col("meta", "JSON", Some(FLATTENED)),
            col("meta.a", "BIGINT", Some(VIEW)),
            col("meta.tags", "JSON", Some(VIEW)),
        ]
    );
    let objects = (0..100).filter(|i| i % 7 == 0).count();
    assert_eq!(present(&t, 1), objects);
    assert_eq!(present(&t, 2), objects);
    assert_eq!(t.cell(14, 1), Cell::Text(r#"{"a":14,"tags":["x"]}"#.into()));
    assert_eq!(t.cell(14, 2), Cell::Int(14));
    assert_eq!(t.cell(15, 1), Cell::Null);
}

#[test]
fn a_column_of_objects_on_every_row_exists() {
    let t = Table::from_records(
        recs(json!([{ "meta": { "a": 1 } }, { "meta": { "b": "x" } }])),
        Tier::Json,
        Map::new(),
        "json",
    )
    .unwrap();
    assert_eq!(
        described(&t),
        [
            col("meta", "JSON", Some(FLATTENED)),
            col("meta.a", "BIGINT", Some(VIEW)),
            col("meta.b", "VARCHAR", Some(VIEW)),
        ]
    );
    assert_eq!(t.cell(1, 1), Cell::Null);
    assert_eq!(t.cell(1, 0), Cell::Text(r#"{"b":"x"}"#.into()));
}

#[test]
fn empty_objects_are_objects_like_any_other() {
    let only_empty = Table::from_records(
        recs(json!([{ "meta": {} }, { "meta": null }, { "meta": {} }])),
        Tier::Json,
        Map::new(),
        "json",
    )
    .unwrap();
    // No member was met, so there is nothing to flatten and nothing to say.
    assert_eq!(described(&only_empty), [col("meta", "JSON", None)]);
    assert_eq!(present(&only_empty, 0), 2);
    assert_eq!(only_empty.cell(0, 0), Cell::Text("{}".into()));
    let some_empty = Table::from_records(
        recs(json!([{ "meta": {} }, { "meta": null }, { "meta": { "a": 1 } }])),
        Tier::Json,
        Map::new(),
        "json",
    )
    .unwrap();
    assert_eq!(
        described(&some_empty),
        [
            col("meta", "JSON", Some(FLATTENED)),
            col("meta.a", "BIGINT", Some(VIEW))
        ]
    );
    assert_eq!(present(&some_empty, 0), 2);
    assert_eq!(some_empty.cell(0, 0), Cell::Text("{}".into()));
    assert_eq!(some_empty.cell(0, 1), Cell::Null);
}

#[test]
fn objects_mixed_with_other_values_are_kept_whole_and_not_flattened() {
    let t = Table::from_records(
        recs(json!([
            { "meta": { "a": 1 }, "p": { "geo": { "lat": 1 } } },
            { "meta": "text", "p": { "geo": "unknown" } },
            { "meta": 5, "p": null },
            { "meta": [1, 2], "p": { "geo": null } },
            { "meta": null, "p": { "geo": { "lat": 2 } } },
            { "meta": 7300000000000007919u64, "p": {} },
        ])),
        Tier::Json,
        Map::new(),
        "json",
    )
    .unwrap();
    assert_eq!(
        described(&t),
        [
            col(
                "meta",
                "JSON",
                Some("objects and other values; not flattened")
            ),
            col("p", "JSON", Some("JSON object; also flattened to p.*")),
            col(
                "p.geo",
                "JSON",
                Some("view of p; objects and other values; not flattened")
            ),
        ]
    );
    let meta: Vec<Cell> = t.cells(0, 0..t.rows()).collect();
    assert_eq!(
        meta,
        [
            Cell::Text(r#"{"a":1}"#.into()),
            Cell::Text(r#""text""#.into()),
            Cell::Text("5".into()),
            Cell::Text("[1,2]".into()),
            Cell::Null,
            Cell::Text("7300000000000007919".into()),
        ]
    );
    assert_eq!(t.cell(1, 2), Cell::Text(r#""unknown""#.into()));
    assert_eq!(t.cell(2, 1), Cell::Null);
}

#[test]
fn a_view_is_never_mistaken_for_a_key_that_has_its_name() {
    // `"meta.a"` as a key and `a` inside `meta` are two columns: the view is named after the
    // key first met, and its note says what it is.
    let t = Table::from_records(
        recs(json!([{ "meta.a": "key", "meta": { "a": 1 } }, { "meta": { "a": 2 } }])),
        Tier::Json,
        Map::new(),
        "json",
    )
    .unwrap();
    assert_eq!(
        described(&t),
        [
            col("meta.a", "VARCHAR", None),
            col("meta", "JSON", Some(FLATTENED)),
            col("meta.a_2", "BIGINT", Some(VIEW)),
        ]
    );
}

#[test]
fn text_tier_infers_numbers_but_keeps_leading_zeros() {
    let t = Table::from_records(
        recs(json!([{ "n": "12", "f": "1.5", "zip": "0123", "b": "true", "e": "" }, { "n": "-3", "f": "2", "zip": "4567", "b": "False", "e": "" }])),
        Tier::Text,
        Map::new(),
        "csv",
    )
    .unwrap();
    assert_eq!(
        types(&t),
        vec![
            ("n", "BIGINT"),
            ("f", "DECIMAL(18,1)"),
            ("zip", "VARCHAR"),
            ("b", "BOOLEAN"),
            ("e", "VARCHAR")
        ]
    );
    assert_eq!(t.cell(1, 0), Cell::Int(-3));
    assert_eq!(t.cell(0, 4), Cell::Null);
}

#[test]
fn doubles_never_round_big_integers() {
    let t = Table::from_records(
        recs(json!([{ "v": 9007199254740993u64 }, { "v": 0.5 }])),
        Tier::Json,
        Map::new(),
        "json",
    )
    .unwrap();
    // Exact as a DECIMAL; with an exponent somewhere (so no DECIMAL), text.
    assert_eq!(t.columns[0].ty.sql(), "DECIMAL(18,1)");
    let t = Table::from_records(
        recs(serde_json::from_str(r#"[{"v": 9007199254740993}, {"v": 0.5}, {"v": 1e3}]"#).unwrap()),
        Tier::Json,
        Map::new(),
        "json",
    )
    .unwrap();
    assert_eq!(t.columns[0].ty, ColumnType::Varchar);
}

#[test]
fn doubles_never_round_long_decimals_or_hold_numbers_beyond_their_range() {
    let rows = |text: &str| recs(serde_json::from_str(text).unwrap());
    for (json, ty) in [
        (r#"[{"v": 0.5}, {"v": 1e308}, {"v": 2.5e-300}]"#, "DOUBLE"),
        (
            r#"[{"v": 0.1234567890123456789012345678901234567890}, {"v": 1}]"#,
            "VARCHAR",
        ),
        (r#"[{"v": 1e309}, {"v": 1.5}]"#, "VARCHAR"),
        (r#"[{"v": -1e999}, {"v": 1.5}]"#, "VARCHAR"),
        (r#"[{"v": 1.0000000000000001e0}, {"v": 1.5}]"#, "VARCHAR"),
        // Seventeen digits that a double keeps exactly stay a double when written with an
        // exponent; written plainly, they are an exact DECIMAL.
        (r#"[{"v": 0.30000000000000004e0}, {"v": 1.5}]"#, "DOUBLE"),
        (
            r#"[{"v": 1.0000000000000001}, {"v": 1.5}]"#,
            "DECIMAL(18,16)",
        ),
        (
            r#"[{"v": 0.30000000000000004}, {"v": 1.5}]"#,
            "DECIMAL(18,17)",
        ),
    ] {
        let t = Table::from_records(rows(json), Tier::Json, Map::new(), "json").unwrap();
        assert_eq!(t.columns[0].ty.sql(), ty, "{json}");
        if ty == "VARCHAR" {
            assert!(
                matches!(t.cell(0, 0), Cell::Text(_)),
                "{json}: a present value kept"
            );
        }
    }
    let t = Table::from_records(
        recs(json!([{ "v": "1e309" }, { "v": "2.5" }])),
        Tier::Text,
        Map::new(),
        "csv",
    )
    .unwrap();
    assert_eq!(t.columns[0].ty, ColumnType::Varchar);
}

mod double_holds_properties {
    use super::super::scalars::double_holds;
    use proptest::prelude::*;

    #[test]
    fn examples() {
        for t in [
            "0",
            "-0.0",
            "0.1",
            "1.50",
            "2.5e-3",
            "-12.75E+2",
            "1e308",
            "123456789012345",
        ] {
            assert!(double_holds(t), "{t}");
        }
        for t in [
            "1e309",
            "1e-400",
            "1.0000000000000001",
            "12345678901234567890.5",
            "1e99999999999999999999",
            "abc",
            "",
            ".",
        ] {
            assert!(!double_holds(t), "{t}");
        }
    }

    proptest! {
        /// Every finite double's own text holds, in both notations.
        #[test]
        fn a_doubles_own_text_holds(f in proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO) {
            prop_assert!(double_holds(&f.to_string()), "{}", f);
            prop_assert!(double_holds(&format!("{f:e}")), "{:e}", f);
        }

        /// Whatever it says, it agrees with reading the text back.
        #[test]
        fn holds_means_the_same_number_comes_back(text in "-?[0-9]{1,25}(\\.[0-9]{1,25})?([eE][-+]?[0-9]{1,3})?") {
            if double_holds(&text) {
                let f: f64 = text.parse().unwrap();
                prop_assert!(f.is_finite());
                let back: f64 = format!("{f:e}").parse().unwrap();
                prop_assert_eq!(back, f);
            }
        }

        #[test]
        fn any_text_never_panics(text in ".*") {
            let _ = double_holds(&text);
        }
    }
}

#[test]
fn plain_decimals_are_exact_decimals_of_the_narrowest_width() {
    let rows = |text: &str| recs(serde_json::from_str(text).unwrap());
    for (json, ty) in [
        (
            r#"[{"v": 15004.17}, {"v": 0.01}, {"v": 7}, {"v": -3.5}]"#,
            "DECIMAL(18,2)",
        ),
        (r#"[{"v": 1.50}, {"v": 2}]"#, "DECIMAL(18,2)"),
        (
            r#"[{"v": 1234567890123456.78}, {"v": 0.5}]"#,
            "DECIMAL(18,2)",
        ),
        // Nineteen digits: the wide DECIMAL.
        (
            r#"[{"v": 12345678901234567.89}, {"v": 0.5}]"#,
            "DECIMAL(38,2)",
        ),
        // A 19-digit id next to a half: exact in DECIMAL(38,1), never rounded.
        (
            r#"[{"v": 7300000000000007919}, {"v": 0.5}]"#,
            "DECIMAL(38,1)",
        ),
        (
            r#"[{"v": 1234567890123456789012345678.9}, {"v": 1}]"#,
            "DECIMAL(38,1)",
        ),
        // More digits than any DECIMAL holds: as before (text, as a double would round).
        (
            r#"[{"v": 1234567890123456789012345678901234567.89}, {"v": 1}]"#,
            "VARCHAR",
        ),
        // An exponent anywhere: a double.
        (r#"[{"v": 1.5}, {"v": 2e3}]"#, "DOUBLE"),
    ] {
        let t = Table::from_records(rows(json), Tier::Json, Map::new(), "json").unwrap();
        assert_eq!(t.columns[0].ty.sql(), ty, "{json}");
    }
    let t = Table::from_records(
        recs(json!([{ "v": "15004.17" }, { "v": "0.01" }, { "v": "" }, { "v": "-2" }])),
        Tier::Text,
        Map::new(),
        "csv",
    )
    .unwrap();
    assert_eq!(t.columns[0].ty.sql(), "DECIMAL(18,2)");
    assert_eq!(t.cell(0, 0), Cell::Text("15004.17".into()));
    assert_eq!(t.cell(2, 0), Cell::Null);
}

#[test]
fn declared_types_are_read_in_the_servers_words() {
    for (name, ty) in [
        ("BIGINT", Some(ColumnType::BigInt)),
        ("integer", Some(ColumnType::BigInt)),
        ("Int32", Some(ColumnType::BigInt)),
        ("UBIGINT", Some(ColumnType::UBigInt)),
        ("HUGEINT", Some(ColumnType::HugeInt)),
        (
            "DECIMAL(12,2)",
            Some(ColumnType::Decimal {
                precision: 12,
                scale: 2,
            }),
        ),
        (
            "numeric( 38 , 10 )",
            Some(ColumnType::Decimal {
                precision: 38,
                scale: 10,
            }),
        ),
        ("NUMERIC", None),
        ("DECIMAL(39,2)", None),
        ("DECIMAL(2,3)", None),
        ("DECIMAL(12", None),
        ("Float64", Some(ColumnType::Double)),
        ("DOUBLE", Some(ColumnType::Double)),
        ("VARCHAR", Some(ColumnType::Varchar)),
        ("VARCHAR(20)", Some(ColumnType::Varchar)),
        ("String", Some(ColumnType::Varchar)),
        ("TIMESTAMP", Some(ColumnType::Timestamp)),
        ("DateTime", Some(ColumnType::Timestamp)),
        ("TIMESTAMP WITH TIME ZONE", Some(ColumnType::TimestampUtc)),
        ("DATE", Some(ColumnType::Date)),
        ("BOOLEAN", Some(ColumnType::Boolean)),
        ("JSON", Some(ColumnType::Json)),
        ("INTERVAL", None),
        ("STRUCT(a INTEGER)", None),
        ("", None),
    ] {
        assert_eq!(declared_type(name), ty, "{name}");
    }
}

#[test]
fn a_declared_type_is_believed_only_when_every_value_is_of_it() {
    let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let declared: Vec<Option<ColumnType>> = [
        "DECIMAL(6,2)",
        "DECIMAL(6,2)",
        "BIGINT",
        "TIMESTAMP",
        "VARCHAR",
        "DATE",
        "BOOLEAN",
    ]
    .iter()
    .map(|t| declared_type(t))
    .collect();
    let t = Table::from_columnar(
        names(&["money", "too_precise", "n", "when", "zip", "none", "flag"]),
        &declared,
        vec![
            vec![
                json!(12.5),
                json!(1.234),
                json!(1),
                json!("2025-01-01 10:00:00"),
                json!("01234"),
                Value::Null,
                json!(true),
            ],
            vec![
                json!("9999.99"),
                json!(1),
                json!("x"),
                json!("soon"),
                json!("5"),
                Value::Null,
                json!("false"),
            ],
        ],
        Map::new(),
        "json",
    )
    .unwrap();
    assert_eq!(
        types(&t),
        vec![
            ("money", "DECIMAL(6,2)"),
            // Three decimals in a DECIMAL(6,2) would be rounded: the values decide.
            ("too_precise", "DECIMAL(18,3)"),
            ("n", "VARCHAR"),
            ("when", "VARCHAR"),
            ("zip", "VARCHAR"),
            ("none", "DATE"),
            ("flag", "BOOLEAN"),
        ]
    );
    assert_eq!(t.cell(1, 6), Cell::Bool(false));
    // A row of another length is no table.
    assert!(
        Table::from_columnar(
            names(&["a", "b"]),
            &[],
            vec![vec![json!(1)]],
            Map::new(),
            "json"
        )
        .is_none()
    );
}

#[test]
fn empty_names_become_numbered_columns_that_take_no_given_name() {
    let t = Table::from_records(
        recs(json!([{ "": 1, "column_1": 2, "b": { "": 3 } }, { "": 4, "column_1": 5, "b": { "": 6 } }])),
        Tier::Json,
        Map::new(),
        "json",
    )
    .unwrap();
    let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["column_1_2", "column_1", "b", "b."]);
}
