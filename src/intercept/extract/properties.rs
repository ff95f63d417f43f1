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
        listing::ruled(text),
        listing::long_listing(text),
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

/// The string cells of whatever the ladder found in `text`, header first; `None` when it
/// found nothing. A cell that is not a string (the text rungs make none) fails the test.
fn found_cells(text: &str) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let Found::Records(r) = find_in_text(text)? else {
        panic!("a text table typed as JSON: {text:?}");
    };
    let header: Vec<String> = r.records.first()?.keys().cloned().collect();
    let rows = r
        .records
        .iter()
        .map(|rec| {
            assert_eq!(
                rec.keys().collect::<Vec<_>>(),
                header.iter().collect::<Vec<_>>()
            );
            rec.values()
                .map(|v| v.as_str().expect("text cells").to_owned())
                .collect()
        })
        .collect();
    Some((header, rows))
}

/// One cell's words: short runs of letters, digits and the punctuation listings print.
fn word() -> impl Strategy<Value = String> {
    "[a-z0-9:/.()_+-]{1,6}|[A-Z][a-z]{0,3}|[0-9]{1,7}|東京|é"
}

/// A cell: empty, one word, or words with one or two spaces between them.
fn spaced_cell() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => Just(String::new()),
        4 => word(),
        2 => proptest::collection::vec((word(), proptest::sample::select(&[" ", "  "][..])), 1..4)
            .prop_map(|ws| {
                let mut s: String = ws.iter().map(|(w, sp)| format!("{w}{sp}")).collect();
                s.truncate(s.trim_end().len());
                s
            }),
    ]
}

/// A fixed-width table as a program prints it: each column a field as wide as its widest
/// cell or header, the header and the cells at the field's start (left-aligned) or end
/// (right-aligned), fields one to three spaces apart; the last column left-aligned and
/// unpadded. Returns the text with the header and rows that made it.
fn printed_table(
    cell: BoxedStrategy<String>,
) -> impl Strategy<Value = (String, Vec<String>, Vec<Vec<String>>)> {
    (2usize..6, 2usize..7).prop_flat_map(move |(cols, rows)| {
        (
            proptest::collection::vec(("[A-Z]{1,5}%?", any::<bool>(), 1usize..4), cols),
            proptest::collection::vec(proptest::collection::vec(cell.clone(), cols), rows),
        )
            .prop_filter_map("distinct headers, no blank row", |(spec, rows)| {
                let header: Vec<String> = spec
                    .iter()
                    .enumerate()
                    .map(|(i, (h, _, _))| format!("{h}{i}"))
                    .collect();
                // A column empty on every row leaves no trace of where it is; a blank row is
                // no line at all.
                let empty_column = (0..header.len()).any(|c| rows.iter().all(|r| r[c].is_empty()));
                if empty_column
                    || rows.iter().any(|r| r.iter().all(String::is_empty))
                    || rows.iter().any(|r| r.last().is_some_and(|c| c.is_empty()))
                {
                    return None;
                }
                use unicode_width::UnicodeWidthStr;
                let n = header.len();
                let widths: Vec<usize> = (0..n)
                    .map(|c| {
                        rows.iter()
                            .map(|r| r[c].width())
                            .chain([header[c].width()])
                            .max()
                            .unwrap_or(0)
                    })
                    .collect();
                let line = |cells: &[String]| {
                    let mut out = String::new();
                    for (c, cell) in cells.iter().enumerate() {
                        let pad = widths[c] - cell.width();
                        let right = spec[c].1 && c + 1 < n;
                        if right {
                            out.push_str(&" ".repeat(pad));
                            out.push_str(cell);
                        } else {
                            out.push_str(cell);
                            if c + 1 < n {
                                out.push_str(&" ".repeat(pad));
                            }
                        }
                        if c + 1 < n {
                            out.push_str(&" ".repeat(spec[c].2));
                        }
                    }
                    out
                };
                let mut text = line(&header);
                text.push('\n');
                for r in &rows {
                    text.push_str(&line(r));
                    text.push('\n');
                }
                Some((text, header, rows))
            })
    })
}

/// A cell's text as a markdown writer escapes it, in one of the ways writers do: every
/// ASCII punctuation mark backslash-escaped, only those that must be, entity references, or
/// a code span. Pipes and backticks are always escaped, so no cell edge or span is invented.
fn markdown_escaped(cell: &str, how: u8) -> String {
    let backslash_free = !cell.contains('\\') && !cell.contains('`');
    if how == 3 && backslash_free && !cell.is_empty() {
        return format!("`{}`", cell.replace('|', "\\|"));
    }
    let mut out = String::new();
    for c in cell.chars() {
        match (how, c) {
            (_, '|') => out.push_str("\\|"),
            (2, '&' | '<' | '>' | '"') => out.push_str(&format!("&#{};", u32::from(c))),
            (2, c) if !c.is_ascii() => out.push_str(&format!("&#x{:X};", u32::from(c))),
            (_, '\\' | '`' | '&') => {
                out.push('\\');
                out.push(c);
            }
            (0, c) if c.is_ascii_punctuation() => {
                out.push('\\');
                out.push(c);
            }
            (_, c) => out.push(c),
        }
    }
    out
}

/// A markdown cell's content: anything a table can hold but commas and tabs (those make the
/// text a CSV first) and edge spaces (cells are trimmed).
fn markdown_cell() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 _*\\\\`&;#|<>\"'!\\[\\]()=.-]{0,10}|東京😀|é".prop_map(|s| s.trim().to_owned())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// A fixed-width table is read exactly as printed, or not at all: never a cell moved to a
    /// neighbour, split or joined.
    #[test]
    fn printed_tables_are_read_exactly_or_not_at_all(
        (text, header, rows) in printed_table(spaced_cell().boxed())
    ) {
        if let Some((got_header, got_rows)) = found_cells(&text) {
            prop_assert_eq!(&got_header, &header, "{}", text);
            prop_assert_eq!(&got_rows, &rows, "{}", text);
        }
    }

    /// Tables that no overflow makes ambiguous (every cell one word) are read.
    #[test]
    fn one_word_tables_are_read((text, header, rows) in printed_table(word().boxed())) {
        let found = found_cells(&text);
        prop_assert!(found.is_some(), "{}", text);
        let (got_header, got_rows) = found.unwrap_or_default();
        prop_assert_eq!(got_header, header);
        prop_assert_eq!(got_rows, rows);
    }

    /// A markdown table's cells read back as the text they were written from, however a
    /// writer escaped them.
    #[test]
    fn markdown_cells_round_trip(
        header in proptest::collection::vec("[a-z][a-z_\\\\*]{0,6}", 2..5),
        rows in proptest::collection::vec(proptest::collection::vec(markdown_cell(), 5), 2..6),
        how in proptest::collection::vec(0u8..4, 5),
    ) {
        let header: Vec<String> = header.iter().enumerate().map(|(i, h)| format!("{h}{i}")).collect();
        let n = header.len();
        let rows: Vec<Vec<String>> = rows.into_iter().map(|mut r| { r.truncate(n); r }).collect();
        let line = |cells: &[String]| {
            let escaped: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| markdown_escaped(c, how[i]))
                .collect();
            format!("| {} |\n", escaped.join(" | "))
        };
        let mut text = line(&header);
        text.push_str(&format!("|{}|\n", vec!["---"; n].join("|")));
        for r in &rows {
            text.push_str(&line(r));
        }
        let found = found_cells(&text);
        prop_assert!(found.is_some(), "{}", text);
        let (got_header, got_rows) = found.unwrap_or_default();
        prop_assert_eq!(got_header, header, "{}", text);
        prop_assert_eq!(got_rows, rows, "{}", text);
    }

    /// Every line of a CSV or TSV is a row or the header: none lost, none invented. A first
    /// line holding a number is never taken for names.
    #[test]
    fn delimited_lines_are_all_kept(
        rows in proptest::collection::vec(
            proptest::collection::vec("[a-z]{1,6}|[0-9]{1,4}|[a-z]{1,3} [a-z]{1,3}", 3), 3..8),
        tab in any::<bool>(),
    ) {
        let delim = if tab { "\t" } else { "," };
        let text: String = rows.iter().map(|r| format!("{}\n", r.join(delim))).collect();
        if let Some((header, got)) = found_cells(&text) {
            let numbered = header.iter().enumerate().all(|(i, h)| *h == format!("column_{}", i + 1));
            if numbered {
                prop_assert_eq!(&got, &rows);
            } else {
                prop_assert_eq!(&header, &rows[0]);
                prop_assert_eq!(&got[..], &rows[1..]);
                prop_assert!(!rows[0].iter().any(|c| c.parse::<u64>().is_ok()), "{}", text);
            }
        }
    }
}
