//! Property tests: no text, JSON or line-shaped input may panic an extraction rung or the
//! typer, and whatever table comes out can be read cell by cell. Inputs are arbitrary Unicode
//! and text built from the fragments each rung looks for (pipes, colons, dashes, quotes,
//! brackets, timestamps), mixed with multi-byte characters so any byte slice would split one.

use super::*;
use crate::intercept::table::{Cell, Table, Tier};
use proptest::prelude::*;

/// Pieces the rungs look for, and characters of 2, 3 and 4 bytes next to them.
const FRAGMENTS: &[&str] = &[
    "|",
    " | ",
    "\\|",
    ":",
    ": ",
    "---",
    ":--",
    "--:",
    ":-:",
    "-",
    ",",
    "\t",
    "\"",
    "\"\"",
    "{",
    "}",
    "[",
    "]",
    "{\"a\": ",
    "\"k\":",
    "null",
    "true",
    "1",
    "-0",
    "1.5e3",
    "007",
    "1. ",
    "2) ",
    "[FILE] ",
    "[DIR] ",
    "Name: ",
    "Points: 120 | Comments: 45",
    " · ",
    "NAME",
    "  ",
    "PID",
    "```",
    "```json\n",
    "2025-01-31",
    "2025-01-31T10:00:00",
    "2025-01-31T10:00:00+02:00",
    "2025-01-31 10:00Z",
    "+05:30",
    "-0800",
    "é",
    "東京",
    "日本語のテキスト",
    "مرحبا",
    "😀",
    "👩‍👩‍👧",
    "\u{301}",
    "\r",
    " ",
    "x",
    "ABC",
    "\u{0}",
];

fn fragment_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => proptest::sample::select(FRAGMENTS).prop_map(str::to_owned),
        1 => any::<char>().prop_map(String::from),
    ];
    let line = proptest::collection::vec(piece, 0..12).prop_map(|p| p.concat());
    proptest::collection::vec(line, 0..24).prop_map(|l| l.join("\n"))
}

/// A table of `rows` rows × `cols` columns in one of the shapes the line rungs read.
fn shaped_text() -> impl Strategy<Value = String> {
    let cell = prop_oneof![
        proptest::sample::select(FRAGMENTS).prop_map(str::to_owned),
        "\\PC{0,12}",
        any::<String>(),
    ];
    (
        0usize..6,
        proptest::collection::vec(proptest::collection::vec(cell, 1..5), 0..8),
    )
        .prop_map(|(shape, rows)| {
            let mut out = String::new();
            for (i, r) in rows.iter().enumerate() {
                let line = match shape {
                    0 => format!("| {} |", r.join(" | ")),
                    1 => r.join(","),
                    2 => r.join("\t"),
                    3 => r
                        .iter()
                        .enumerate()
                        .map(|(k, v)| format!("Key{k}: {v}"))
                        .collect::<Vec<_>>()
                        .join(" | "),
                    4 => format!("[FILE] {}", r.join(" ")),
                    _ => r.join("   "),
                };
                out.push_str(&line);
                out.push('\n');
                if shape == 0 && i == 0 {
                    out.push_str(&format!("|{}|\n", vec![":-:"; r.len()].join("|")));
                }
                if shape == 3 {
                    out.push('\n');
                }
            }
            out
        })
}

fn json_value() -> impl Strategy<Value = Value> {
    let text = prop_oneof![
        any::<String>(),
        proptest::sample::select(FRAGMENTS).prop_map(str::to_owned),
        "\\PC{16,40}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        text.prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec(("\\PC{0,8}", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Rows of objects whose keys repeat across rows, so columns form and get typed.
fn json_rows() -> impl Strategy<Value = Value> {
    let key = proptest::sample::select(&["id", "name", "名前", "t", "when", "é", "a.b", "ID"][..]);
    proptest::collection::vec(
        proptest::collection::vec((key, json_value()), 0..6)
            .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        1..12,
    )
    .prop_map(Value::Array)
}

/// Every cell of a table, read: the reading must not panic either, and every row has a cell
/// in every column.
fn read_all(t: &Table) {
    for c in 0..t.columns.len() {
        let cells: Vec<Cell<'_>> = t.cells(c, 0..t.rows()).collect();
        assert_eq!(cells.len(), t.rows(), "column {}", t.columns[c].name);
    }
}

/// Every rung on `text`, one by one (not only the first that answers), then the ladder.
fn every_rung(text: &str) {
    let found = [
        json::in_text(text),
        json::ndjson(text),
        csv::parse(text),
        markdown::parse(text),
        records::parse(text),
        fixed_width::tagged(text),
        fixed_width::aligned(text),
        json::one_object_per_block(&[text, text]),
    ];
    for f in found.into_iter().flatten() {
        if let Some(t) = f.into_table() {
            read_all(&t);
        }
    }
    if let Some(t) = find_in_text(text).and_then(Found::into_table) {
        read_all(&t);
    }
}

/// String cells of every kind, as the text tier and the JSON tier type them.
fn type_strings(values: &[String]) {
    for tier in [Tier::Text, Tier::Json] {
        let records: Vec<Map<String, Value>> = values
            .iter()
            .map(|v| Map::from_iter([("v".to_owned(), Value::String(v.clone()))]))
            .collect();
        if let Some(t) = Table::from_records(records, tier, Map::new(), "prop") {
            read_all(&t);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_unicode_panics_no_rung(text in any::<String>()) {
        every_rung(&text);
    }

    #[test]
    fn fragment_lines_panic_no_rung(text in fragment_text()) {
        every_rung(&text);
    }

    #[test]
    fn table_shaped_lines_panic_no_rung(text in shaped_text()) {
        every_rung(&text);
    }

    #[test]
    fn arbitrary_json_panics_no_rung(v in json_value()) {
        let text = v.to_string();
        every_rung(&text);
        every_rung(&serde_json::to_string_pretty(&v).unwrap_or_default());
        if let Some(t) = find_rows(Some(&v), &[&text]).and_then(Found::into_table) {
            read_all(&t);
        }
    }

    #[test]
    fn json_rows_are_typed_without_panic(v in json_rows()) {
        // The fast reader and the general rung both see them.
        let text = v.to_string();
        every_rung(&text);
        if let Some(t) = json::rows_in_value(v, "json").and_then(Found::into_table) {
            read_all(&t);
        }
    }

    #[test]
    fn the_typer_takes_any_string(values in proptest::collection::vec(
        prop_oneof![any::<String>(), "\\PC{10,30}", fragment_text()], 1..8)
    ) {
        type_strings(&values);
    }

    #[test]
    fn the_typer_takes_near_timestamps(
        prefix in proptest::sample::select(&["2025-01-31", "2024-02-29", "0001-01-01", "9999-12-31"][..]),
        tail in proptest::collection::vec(proptest::sample::select(&[
            "T", " ", "1", "0", "2", "9", ":", ".", "+", "-", "Z", "z", "é", "東", "😀", "\u{301}",
        ][..]), 0..16),
    ) {
        let s = format!("{prefix}{}", tail.concat());
        type_strings(&[s.clone(), s]);
    }
}

/// Columnar answers (`{columns, columnTypes?, rows: [[…]]}`) with any cells, declared types
/// true or false, rows of the wrong length, and the header as strings or objects.
fn columnar_value() -> impl Strategy<Value = Value> {
    let ty = prop_oneof![
        proptest::sample::select(
            &[
                "BIGINT",
                "DECIMAL(12,2)",
                "DECIMAL(3,3)",
                "DECIMAL(38,0)",
                "DOUBLE",
                "VARCHAR",
                "TIMESTAMP",
                "TIMESTAMPTZ",
                "DATE",
                "BOOLEAN",
                "JSON",
                "UBIGINT",
                "HUGEINT",
                "DECIMAL(",
                "numeric(1,x)",
                "",
                "Int32",
            ][..]
        )
        .prop_map(str::to_owned),
        any::<String>(),
    ];
    let cell = prop_oneof![
        json_value(),
        proptest::sample::select(FRAGMENTS).prop_map(|f| Value::String(f.to_owned())),
        "-?[0-9]{0,40}(\\.[0-9]{0,40})?"
            .prop_map(|n| serde_json::from_str(&n).unwrap_or(Value::String(n))),
    ];
    (
        proptest::collection::vec(("\\PC{0,6}", ty), 1..5),
        proptest::collection::vec(proptest::collection::vec(cell, 0..6), 1..8),
        any::<bool>(),
        0usize..3,
    )
        .prop_map(|(cols, rows, objects, wrap)| {
            let names: Vec<Value> = cols
                .iter()
                .map(|(n, t)| {
                    if objects {
                        serde_json::json!({ "name": n, "type": t })
                    } else {
                        Value::String(n.clone())
                    }
                })
                .collect();
            let types: Vec<Value> = cols.iter().map(|(_, t)| Value::String(t.clone())).collect();
            let v = serde_json::json!({
                "columns": names,
                "columnTypes": types,
                "rows": rows,
                "rowCount": rows.len(),
            });
            match wrap {
                0 => v,
                1 => serde_json::json!({ "result": v }),
                _ => serde_json::json!({ "ok": true, "data": { "query": v } }),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn columnar_answers_panic_no_rung(v in columnar_value()) {
        let text = v.to_string();
        every_rung(&text);
        if let Some(t) = json::rows_in_value(v, "json").and_then(Found::into_table) {
            read_all(&t);
        }
    }

    #[test]
    fn declared_types_take_any_text(s in any::<String>()) {
        let _ = crate::intercept::table::declared_type(&s);
    }
}
