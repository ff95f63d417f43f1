//! The envelope: what the model gets instead of a large table. Ref, rows, per-column schema and
//! stats, a few sample rows (long strings cut and marked), join hints, provenance, context and
//! a one-line usage hint, as text and as `structuredContent`. It has a token budget: wide tables
//! get a compact schema and fewer sample columns rather than blowing it, and provenance is cut
//! (each string to a prefix with its remaining length, the whole to a few hundred tokens) so a
//! call with large arguments still gets its envelope. Strings are cut on character boundaries
//! only: they are written by others.

use super::{ColumnStats, DatasetMeta, Profile};
use crate::intercept::tokens;
use serde_json::{Map, Value, json};

const CUT: usize = 80;

/// `s` cut after `keep` characters (never inside one), with how much was left out.
fn cut_text(s: &str, keep: usize) -> Option<String> {
    let (end, _) = s.char_indices().nth(keep)?;
    let rest = s.get(end..)?.chars().count();
    Some(format!("{}…[+{rest} chars]", s.get(..end)?))
}

/// Every string in `v` (values and keys) cut after `keep` characters.
fn cut_strings_at(v: &Value, keep: usize) -> Value {
    match v {
        Value::String(s) => Value::String(cut_text(s, keep).unwrap_or_else(|| s.clone())),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let k = cut_text(k, keep).unwrap_or_else(|| k.clone());
                    (k, cut_strings_at(v, keep))
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|v| cut_strings_at(v, keep)).collect()),
        other => other.clone(),
    }
}

fn cut_strings(v: &Value) -> Value {
    cut_strings_at(v, CUT)
}

/// How much of a dataset's provenance (the call that made it) to show. Arguments can be as
/// large as the result (a query text, a document to analyse): copied whole, they would make
/// the envelope larger than the table it replaces, and the cost guard would pass it through.
#[derive(Clone, Copy)]
struct ProvenanceDetail {
    /// Characters kept of each string.
    cut: usize,
    /// Tokens at most of the whole provenance.
    tokens: usize,
}

/// In an envelope: enough to recognise the call.
const ENVELOPE_PROVENANCE: ProvenanceDetail = ProvenanceDetail {
    cut: 60,
    tokens: 200,
};

/// In `loom_describe` (an unbounded budget): more, still bounded.
const DESCRIBE_PROVENANCE: ProvenanceDetail = ProvenanceDetail {
    cut: 2000,
    tokens: 8000,
};

/// `v` with every string cut after `keep` characters, arrays and objects cut after `items`
/// entries and nesting below `depth` levels replaced by a marker; what was left out is
/// counted in place.
fn shrink(v: &Value, keep: usize, items: usize, depth: usize) -> Value {
    let cut = |s: &str| cut_text(s, keep).unwrap_or_else(|| s.to_owned());
    match v {
        Value::String(s) => Value::String(cut(s)),
        Value::Array(a) if depth == 0 => Value::String(format!("…[{} items]", a.len())),
        Value::Object(m) if depth == 0 => Value::String(format!("…[{} keys]", m.len())),
        Value::Array(a) => {
            let mut out: Vec<Value> = a
                .iter()
                .take(items)
                .map(|v| shrink(v, keep, items, depth - 1))
                .collect();
            if a.len() > items {
                out.push(Value::String(format!("…[+{} items]", a.len() - items)));
            }
            Value::Array(out)
        }
        Value::Object(m) => {
            let mut out: Map<String, Value> = m
                .iter()
                .take(items)
                .map(|(k, v)| (cut(k), shrink(v, keep, items, depth - 1)))
                .collect();
            if m.len() > items {
                out.insert("…".into(), json!(format!("[+{} keys]", m.len() - items)));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// Arguments as shown, within the detail's tokens: shrunk step by step (strings, then
/// entries, then depth); when even the smallest step is too large, a marked prefix of its
/// JSON text.
fn compact_args(v: &Value, d: ProvenanceDetail) -> Value {
    let fits = |v: &Value| tokens::estimate(&v.to_string()) <= d.tokens;
    for (divide, items, depth) in [(1, 32, 6), (1, 8, 4), (2, 3, 3), (6, 1, 2)] {
        let shown = shrink(v, d.cut / divide, items, depth);
        if fits(&shown) {
            return shown;
        }
    }
    let text = shrink(v, d.cut / 6, 1, 2).to_string();
    // A JSON token is rarely under two characters: start there and halve until it fits.
    let mut keep = d.tokens.saturating_mul(2);
    loop {
        let shown = Value::String(cut_text(&text, keep).unwrap_or_else(|| text.clone()));
        // Measured as it will be written: quoted, with its escapes.
        if fits(&shown) || keep == 0 {
            return shown;
        }
        keep /= 2;
    }
}

/// The provenance as shown: every string cut, and the whole within the detail's tokens (the
/// arguments get what the other fields leave).
fn provenance_value(prov: &super::Provenance, d: ProvenanceDetail) -> Value {
    let short = |s: &str| Value::String(cut_text(s, d.cut).unwrap_or_else(|| s.to_owned()));
    let mut out = json!({
        "server": short(&prov.server),
        "tool": short(&prov.tool),
        "arguments": Value::Null,
        "at": short(&prov.at),
        "rung": short(&prov.rung),
    });
    if let Some(args) = &prov.arguments {
        let rest = tokens::estimate(&out.to_string());
        let room = ProvenanceDetail {
            tokens: d.tokens.saturating_sub(rest),
            ..d
        };
        out["arguments"] = compact_args(args, room);
    }
    out
}

/// How much detail fits: each step drops some.
#[derive(Clone, Copy)]
struct Detail {
    samples: usize,
    sample_columns: usize,
    top_values: bool,
    stats: bool,
    /// Columns listed; the rest are counted (`loom_describe` lists them all).
    columns: usize,
}

const STEPS: [Detail; 8] = [
    Detail {
        samples: usize::MAX,
        sample_columns: usize::MAX,
        top_values: true,
        stats: true,
        columns: usize::MAX,
    },
    Detail {
        samples: 3,
        sample_columns: 12,
        top_values: true,
        stats: true,
        columns: usize::MAX,
    },
    Detail {
        samples: 3,
        sample_columns: 8,
        top_values: false,
        stats: true,
        columns: usize::MAX,
    },
    Detail {
        samples: 2,
        sample_columns: 6,
        top_values: false,
        stats: false,
        columns: usize::MAX,
    },
    Detail {
        samples: 1,
        sample_columns: 4,
        top_values: false,
        stats: false,
        columns: usize::MAX,
    },
    Detail {
        samples: 0,
        sample_columns: 0,
        top_values: false,
        stats: false,
        columns: usize::MAX,
    },
    // A table too wide for its schema to fit: the first columns, and how many more.
    Detail {
        samples: 0,
        sample_columns: 0,
        top_values: false,
        stats: false,
        columns: 60,
    },
    Detail {
        samples: 0,
        sample_columns: 0,
        top_values: false,
        stats: false,
        columns: 12,
    },
];

/// Whether a column is a key: counted exactly, no nulls, a different value in every row.
fn is_unique(meta: &DatasetMeta, c: &ColumnStats) -> bool {
    c.distinct_exact && c.null_fraction == 0.0 && meta.rows > 1 && c.distinct == meta.rows
}

fn pct(f: f64) -> String {
    format!("{:.0}%", f * 100.0)
}

/// Words DuckDB's parser reserves (its `duckdb_keywords()`, category `reserved`, checked by a
/// test against the engine), plus `user` and `default`, which read as functions bare.
const RESERVED: &[&str] = &[
    "all",
    "analyse",
    "analyze",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "asymmetric",
    "both",
    "by",
    "case",
    "cast",
    "check",
    "collate",
    "column",
    "constraint",
    "create",
    "default",
    "deferrable",
    "desc",
    "describe",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "false",
    "fetch",
    "for",
    "foreign",
    "from",
    "group",
    "having",
    "in",
    "initially",
    "intersect",
    "into",
    "lambda",
    "lateral",
    "leading",
    "limit",
    "not",
    "null",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "pivot",
    "pivot_longer",
    "pivot_wider",
    "placing",
    "primary",
    "qualify",
    "references",
    "returning",
    "select",
    "show",
    "some",
    "summarize",
    "symmetric",
    "table",
    "then",
    "to",
    "trailing",
    "true",
    "union",
    "unique",
    "unpivot",
    "user",
    "using",
    "variadic",
    "when",
    "where",
    "window",
    "with",
];

/// A column name as it is simplest to type in SQL: bare when that is unambiguous.
fn sql_name(name: &str) -> String {
    crate::types::data::sql_name(name, |n| RESERVED.contains(&n))
}

/// Groups few enough to read at a glance, whatever the number of rows.
const FEW_GROUPS: u64 = 20;

/// A query worth trying first: counts by the text or boolean column with the fewest values
/// (at least two, fewer than the rows, and few or two rows a group on average, so never a
/// key such as an order id), else the first rows.
fn usage_hint(meta: &DatasetMeta, p: &Profile) -> String {
    let r = &meta.dataset_ref;
    let group = p
        .columns
        .iter()
        .filter(|c| c.ty == "VARCHAR" || c.ty == "BOOLEAN")
        .filter(|c| {
            c.distinct >= 2
                && c.distinct < meta.rows
                && (c.distinct <= FEW_GROUPS || c.distinct.saturating_mul(2) <= meta.rows)
        })
        .filter(|c| !is_unique(meta, c))
        .min_by_key(|c| c.distinct)
        .map(|c| sql_name(&c.name));
    let sql = match group {
        Some(g) => format!("SELECT {g}, count(*) FROM {r} GROUP BY 1 ORDER BY 2 DESC"),
        None => format!("SELECT * FROM {r} LIMIT 20"),
    };
    format!("loom_query {}", json!({ "sql": sql }))
}

fn structured(
    meta: &DatasetMeta,
    p: &Profile,
    d: Detail,
    pd: ProvenanceDetail,
    original_tokens: Option<usize>,
) -> Value {
    let columns: Vec<Value> = p
        .columns
        .iter()
        .take(d.columns)
        .map(|c| {
            let mut o = Map::new();
            o.insert("name".into(), json!(c.name));
            o.insert("type".into(), json!(c.ty));
            if let Some(note) = &c.note {
                o.insert("note".into(), json!(note));
            }
            if d.stats {
                o.insert(
                    "null_fraction".into(),
                    json!((c.null_fraction * 1000.0).round() / 1000.0),
                );
                o.insert("distinct".into(), json!(c.distinct));
                if is_unique(meta, c) {
                    o.insert("unique".into(), json!(true));
                } else if !c.distinct_exact {
                    o.insert("distinct_estimated".into(), json!(true));
                }
                if let Some(m) = &c.min {
                    o.insert("min".into(), cut_strings(m));
                }
                if let Some(m) = &c.max {
                    o.insert("max".into(), cut_strings(m));
                }
            }
            if d.top_values && !c.top.is_empty() {
                o.insert(
                    "top".into(),
                    Value::Array(
                        c.top
                            .iter()
                            .map(|(v, n)| json!([cut_strings(v), n]))
                            .collect(),
                    ),
                );
            }
            Value::Object(o)
        })
        .collect();
    let samples: Vec<Value> = p
        .samples
        .iter()
        .take(d.samples)
        .map(|row| match row {
            Value::Object(m) => Value::Object(
                m.iter()
                    .take(d.sample_columns)
                    .map(|(k, v)| (k.clone(), cut_strings(v)))
                    .collect(),
            ),
            other => cut_strings(other),
        })
        .collect();
    let mut out = Map::new();
    out.insert("kind".into(), json!("dataset"));
    out.insert("ref".into(), json!(meta.dataset_ref));
    out.insert("rows".into(), json!(meta.rows));
    out.insert("columns".into(), Value::Array(columns));
    let more = p.columns.len().saturating_sub(d.columns);
    if more > 0 {
        out.insert("more_columns".into(), json!(more));
    }
    out.insert("sample_rows".into(), Value::Array(samples));
    out.insert(
        "join_hints".into(),
        serde_json::to_value(&p.join_hints).unwrap_or(Value::Null),
    );
    if let Some(prov) = &meta.provenance {
        out.insert("provenance".into(), provenance_value(prov, pd));
    }
    if !meta.context.is_empty() {
        out.insert("context".into(), Value::Object(meta.context.clone()));
    }
    if let Some(t) = original_tokens {
        out.insert("original_tokens".into(), json!(t));
    }
    out.insert("hint".into(), json!(usage_hint(meta, p)));
    Value::Object(out)
}

fn text(
    meta: &DatasetMeta,
    p: &Profile,
    d: Detail,
    pd: ProvenanceDetail,
    original_tokens: Option<usize>,
) -> String {
    let mut s = String::new();
    let source = meta
        .provenance
        .as_ref()
        .map(|p| format!(" from {}/{} ({} rung)", p.server, p.tool, p.rung))
        .unwrap_or_default();
    let saved = original_tokens
        .map(|t| format!("; the raw result was ~{t} tokens"))
        .unwrap_or_default();
    s.push_str(&format!("Dataset `{}`: {} rows × {} columns{source}{saved}. Query it with loom_query (DuckDB SQL).\n", meta.dataset_ref, meta.rows, meta.columns.len()));
    s.push_str("columns:\n");
    for c in p.columns.iter().take(d.columns) {
        s.push_str(&format!("  {} {}", c.name, c.ty));
        if let Some(note) = &c.note {
            s.push_str(&format!(" ({note})"));
        }
        if d.stats {
            let distinct = if is_unique(meta, c) {
                "unique".to_owned()
            } else if c.distinct_exact {
                format!("distinct {}", c.distinct)
            } else {
                format!("distinct≈{}", c.distinct)
            };
            s.push_str(&format!("  nulls {} {distinct}", pct(c.null_fraction)));
            if let (Some(lo), Some(hi)) = (&c.min, &c.max) {
                s.push_str(&format!(
                    "  range {} … {}",
                    cut_strings(lo),
                    cut_strings(hi)
                ));
            }
        }
        if d.top_values && !c.top.is_empty() {
            let tops: Vec<String> = c
                .top
                .iter()
                .map(|(v, n)| format!("{} ({n})", cut_strings(v)))
                .collect();
            s.push_str(&format!("  top: {}", tops.join(", ")));
        }
        s.push('\n');
    }
    let more = p.columns.len().saturating_sub(d.columns);
    if more > 0 {
        s.push_str(&format!(
            "  … and {more} more columns (loom_describe {{\"ref\": \"{}\"}} lists them all)\n",
            meta.dataset_ref
        ));
    }
    if d.samples > 0 && !p.samples.is_empty() {
        s.push_str(&format!(
            "first rows ({} of {}):\n",
            d.samples.min(p.samples.len()),
            meta.rows
        ));
        for row in p.samples.iter().take(d.samples) {
            let row = match row {
                Value::Object(m) => {
                    let shown: Map<String, Value> = m
                        .iter()
                        .take(d.sample_columns)
                        .map(|(k, v)| (k.clone(), cut_strings(v)))
                        .collect();
                    let more = m.len().saturating_sub(d.sample_columns);
                    let mut t = Value::Object(shown).to_string();
                    if more > 0 {
                        t.push_str(&format!(" …+{more} columns"));
                    }
                    t
                }
                other => other.to_string(),
            };
            s.push_str(&format!("  {row}\n"));
        }
    }
    if !p.join_hints.is_empty() {
        s.push_str("join hints:\n");
        for h in &p.join_hints {
            s.push_str(&format!(
                "  {}.{} = {}.{}  ({} of this side found there, {} of that side found here)\n",
                meta.dataset_ref,
                sql_name(&h.column),
                h.other,
                sql_name(&h.other_column),
                pct(h.this_in_other),
                pct(h.other_in_this)
            ));
        }
    }
    if !meta.context.is_empty() {
        s.push_str(&format!(
            "context: {}\n",
            Value::Object(meta.context.clone())
        ));
    }
    if let Some(prov) = &meta.provenance
        && let Some(args) = &prov.arguments
    {
        s.push_str(&format!("called with: {}\n", compact_args(args, pd)));
    }
    s.push_str(&format!("try: {}\n", usage_hint(meta, p)));
    s
}

/// The envelope as a `tools/call` result: text plus `structuredContent`, within `budget`
/// tokens when at all possible. An unbounded budget (`loom_describe`) also shows more of the
/// provenance; a bounded one keeps it short whatever the call's arguments were.
pub fn render(
    meta: &DatasetMeta,
    p: &Profile,
    budget: usize,
    original_tokens: Option<usize>,
) -> (Value, usize) {
    let pd = if budget == usize::MAX {
        DESCRIBE_PROVENANCE
    } else {
        ENVELOPE_PROVENANCE
    };
    let mut chosen = (String::new(), Value::Null, usize::MAX);
    for d in STEPS {
        let t = text(meta, p, d, pd, original_tokens);
        let st = structured(meta, p, d, pd, original_tokens);
        // The text and `structuredContent` are one result said twice (as the spec asks of a
        // server that sends both); a client gives the model one of them, so the larger counts.
        let tokens = tokens::estimate(&t).max(tokens::estimate(&st.to_string()));
        chosen = (t, st, tokens);
        if tokens <= budget {
            break;
        }
    }
    let (mut t, mut st, tokens) = chosen;
    // `loom_describe` says where the dataset came from.
    if budget == usize::MAX
        && let Some(l) = &meta.lineage
        && let Value::Object(o) = &mut st
    {
        o.insert(
            "lineage".into(),
            serde_json::to_value(l).unwrap_or(Value::Null),
        );
        t.push_str(&format!("lineage: {}\n", lineage_line(l)));
    }
    (
        json!({ "content": [{ "type": "text", "text": t }], "structuredContent": st }),
        tokens,
    )
}

/// A lineage in one line: `call #12 ← sample_list_orders_1, blob/3f2a… · SELECT …`.
pub fn lineage_line(l: &crate::types::data::Lineage) -> String {
    let mut parts = Vec::new();
    if let Some(c) = l.call {
        parts.push(format!("made by call #{c}"));
    }
    if !l.inputs.is_empty() {
        parts.push(format!("from {}", l.inputs.join(", ")));
    }
    if let Some(sql) = &l.sql {
        let one: Vec<&str> = sql.split_whitespace().collect();
        parts.push(format!("by {}", one.join(" ")));
    }
    parts.join(" · ")
}

#[cfg(test)]
mod tests {
    use super::super::{ColumnStats, DatasetKind, JoinHint, Provenance};
    use super::*;
    use proptest::prelude::*;

    fn meta(provenance: Option<Provenance>, context: Map<String, Value>) -> DatasetMeta {
        DatasetMeta {
            dataset_ref: "t_say_1".into(),
            kind: DatasetKind::Ingest,
            rows: 3,
            columns: vec![
                ("名前".into(), "VARCHAR".into()),
                ("when".into(), "TIMESTAMP".into()),
            ],
            pinned: false,
            provenance,
            context,
            lineage: None,
            siblings: Vec::new(),
            last_used: 0,
            created: "2026-11-30T00:00:00Z".into(),
        }
    }

    fn profile(cell: Value, name: String) -> Profile {
        Profile {
            rows: 3,
            columns: vec![ColumnStats {
                name: name.clone(),
                ty: "VARCHAR".into(),
                null_fraction: 0.0,
                distinct: 2,
                distinct_exact: false,
                min: Some(cell.clone()),
                max: Some(cell.clone()),
                top: vec![(cell.clone(), 2)],
                note: Some("UTC: converted exactly from ISO-8601 times with offset +09:00".into()),
            }],
            samples: vec![json!({ name.clone(): cell.clone() }), cell],
            join_hints: vec![JoinHint {
                column: name,
                other: "other".into(),
                other_column: "id".into(),
                this_in_other: 0.5,
                other_in_this: 1.0,
            }],
        }
    }

    fn prov(arguments: Option<Value>) -> Provenance {
        Provenance {
            server: "t".into(),
            tool: "say".into(),
            arguments,
            at: "2026-11-30T00:00:00Z".into(),
            rung: "json".into(),
        }
    }

    /// Every word DuckDB's own parser reserves is quoted when it names a column, so a name
    /// copied from an envelope into SQL parses.
    #[test]
    fn every_reserved_word_is_quoted() {
        let conn = duckdb::Connection::open_in_memory().unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT keyword_name FROM duckdb_keywords() WHERE keyword_category = 'reserved'",
            )
            .unwrap();
        let words: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(words.len() > 50, "{words:?}");
        let bare: Vec<&String> = words
            .iter()
            .filter(|w| !sql_name(w).starts_with('"'))
            .collect();
        assert!(bare.is_empty(), "left bare: {bare:?}");
    }

    #[test]
    fn join_hints_name_columns_as_sql_reads_them() {
        // server-memory's relations: `from` and `to` are keywords, quoted or the hint fails.
        let m = meta(None, Map::new());
        let mut p = profile(json!("x"), "from".into());
        p.join_hints[0].other_column = "Name".into();
        let t = text(&m, &p, STEPS[0], ENVELOPE_PROVENANCE, None);
        assert!(t.contains("t_say_1.\"from\" = other.\"Name\""), "{t}");
    }

    #[test]
    fn a_wide_table_keeps_its_stats_within_the_budget() {
        // dbhub on PostgreSQL: 16 columns. The envelope says its text twice (text and
        // `structuredContent`); counted twice, the stats were the first thing dropped.
        let names: Vec<String> = (0..16).map(|i| format!("column_name_{i}")).collect();
        let mut m = meta(Some(prov(None)), Map::new());
        m.columns = names
            .iter()
            .map(|n| (n.clone(), "VARCHAR".into()))
            .collect();
        m.rows = 20_000;
        let mut p = profile(json!("value"), names[0].clone());
        p.rows = 20_000;
        p.columns = names
            .iter()
            .map(|n| ColumnStats {
                name: n.clone(),
                distinct: 12,
                top: vec![(json!("a fairly typical value"), 2000)],
                note: None,
                ..p.columns[0].clone()
            })
            .collect();
        p.samples = (0..3)
            .map(|r| {
                Value::Object(
                    names
                        .iter()
                        .map(|n| (n.clone(), json!(format!("sample {r} value"))))
                        .collect(),
                )
            })
            .collect();
        let (env, tokens) = render(&m, &p, 1500, Some(3_000_000));
        assert!(tokens <= 1500, "{tokens}");
        let text = env["content"][0]["text"].as_str().unwrap();
        assert!(
            tokens >= tokens::estimate(text),
            "the text is counted whole"
        );
        for c in env["structuredContent"]["columns"].as_array().unwrap() {
            assert!(c.get("distinct").is_some(), "{c}");
        }
    }

    #[test]
    fn the_hint_never_groups_by_a_key_and_prefers_the_fewest_values() {
        let col = |name: &str, ty: &str, distinct: u64| ColumnStats {
            name: name.into(),
            ty: ty.into(),
            null_fraction: 0.0,
            distinct,
            distinct_exact: true,
            min: None,
            max: None,
            top: Vec::new(),
            note: None,
        };
        let mut m = meta(None, Map::new());
        m.rows = 1000;
        let mut p = profile(json!("x"), "x".into());
        // node-pg's ids are strings: a VARCHAR key first, then a near-key, then a status.
        p.columns = vec![
            col("order_id", "VARCHAR", 1000),
            col("email", "VARCHAR", 990),
            col("amount", "DOUBLE", 3),
            col("status", "VARCHAR", 4),
            col("region", "VARCHAR", 12),
        ];
        let hint = usage_hint(&m, &p);
        assert!(hint.contains("SELECT status, count(*)"), "{hint}");
        // Nothing with few values (a near-key groups by ones): the first rows instead.
        p.columns
            .retain(|c| c.name != "status" && c.name != "region");
        let hint = usage_hint(&m, &p);
        assert!(hint.contains("SELECT * FROM t_say_1 LIMIT 20"), "{hint}");
    }

    #[test]
    fn large_arguments_are_cut_in_envelopes_and_shown_longer_in_describe() {
        let doc = "東京の天気は晴れ。".repeat(5000);
        let rows: Vec<Value> = (0..2000).map(|i| json!({ "id": i })).collect();
        let args = json!({ "document": doc, "limit": 5, "rows": rows });
        let m = meta(Some(prov(Some(args))), Map::new());
        let p = profile(json!("x"), "名前".into());
        let (env, tokens) = render(&m, &p, 1500, Some(100_000));
        assert!(tokens <= 1500, "{tokens}");
        let shown = &env["structuredContent"]["provenance"];
        assert!(
            tokens::estimate(&shown.to_string()) <= ENVELOPE_PROVENANCE.tokens + 10,
            "{shown}"
        );
        // Many small items are cut too, and counted.
        let a = &shown["arguments"];
        assert_eq!(a["limit"], 5);
        let kept = a["rows"].as_array().unwrap();
        assert_eq!(kept[0], json!({ "id": 0 }));
        assert_eq!(
            kept.last().unwrap().as_str().unwrap(),
            format!("…[+{} items]", 2000 - (kept.len() - 1))
        );
        // Thousands of keys: the first few, and a count of the rest.
        let wide: Map<String, Value> = (0..3000)
            .map(|i| (format!("キー{i}"), json!(vec!["東京の天気は晴れ。"; 3])))
            .collect();
        let m = meta(Some(prov(Some(Value::Object(wide)))), Map::new());
        let (env, tokens) = render(&m, &p, 1500, Some(100_000));
        assert!(tokens <= 1500, "{tokens}");
        let shown = &env["structuredContent"]["provenance"];
        assert!(
            tokens::estimate(&shown.to_string()) <= ENVELOPE_PROVENANCE.tokens + 10,
            "{shown}"
        );
        let keys = shown["arguments"].as_object().unwrap();
        assert!(keys.contains_key("キー0"), "{shown}");
        assert!(keys["…"].as_str().unwrap().ends_with(" keys]"), "{shown}");
        // Small arguments stay an object, long strings cut with their remaining length.
        let m = meta(
            Some(prov(Some(json!({ "document": doc, "limit": 5 })))),
            Map::new(),
        );
        let (env, _) = render(&m, &p, 1500, Some(100_000));
        let a = &env["structuredContent"]["provenance"]["arguments"];
        assert_eq!(a["limit"], 5);
        assert_eq!(
            a["document"],
            format!(
                "{}…[+{} chars]",
                "東京の天気は晴れ。"
                    .repeat(7)
                    .chars()
                    .take(60)
                    .collect::<String>(),
                45_000 - 60
            )
        );
        // The text half says the same, cut the same way.
        let t = env["content"][0]["text"].as_str().unwrap();
        assert!(t.contains(&format!("[+{} chars]", 45_000 - 60)), "{t}");
        // loom_describe (an unbounded budget) shows more of it.
        let (env, _) = render(&m, &p, usize::MAX, None);
        let a = &env["structuredContent"]["provenance"]["arguments"];
        assert_eq!(
            a["document"].as_str().unwrap().chars().count(),
            2000 + format!("…[+{} chars]", 45_000 - 2000).chars().count()
        );
    }

    #[test]
    fn notes_reach_both_halves() {
        let m = meta(None, Map::new());
        let (env, _) = render(&m, &profile(json!("x"), "when".into()), 1500, None);
        assert_eq!(
            env["structuredContent"]["columns"][0]["note"],
            "UTC: converted exactly from ISO-8601 times with offset +09:00"
        );
        assert!(
            env["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("when VARCHAR (UTC: converted exactly")
        );
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            any::<String>().prop_map(Value::String),
            "\\PC{50,200}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 48, 8, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                proptest::collection::vec(("\\PC{0,90}", inner), 0..8)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Any cell, column name, context and arguments: the envelope renders, and its
        /// provenance stays within its bound.
        #[test]
        fn any_text_renders_and_provenance_stays_bounded(
            cell in json_value(),
            name in any::<String>(),
            args in json_value(),
            context in proptest::collection::vec(("\\PC{0,20}", json_value()), 0..4),
            budget in prop_oneof![Just(usize::MAX), 200usize..5000],
        ) {
            let m = meta(Some(prov(Some(args))), context.into_iter().collect());
            let (env, _) = render(&m, &profile(cell, name), budget, Some(10));
            let shown = &env["structuredContent"]["provenance"];
            let bound = if budget == usize::MAX { DESCRIBE_PROVENANCE } else { ENVELOPE_PROVENANCE };
            prop_assert!(tokens::estimate(&shown.to_string()) <= bound.tokens + 10, "{shown}");
        }

        #[test]
        fn cutting_never_splits_a_character(s in any::<String>(), keep in 0usize..40) {
            if let Some(cut) = cut_text(&s, keep) {
                let kept = cut.rsplit_once('…').map(|(k, _)| k).unwrap_or_default();
                prop_assert!(s.starts_with(kept));
                prop_assert_eq!(kept.chars().count(), keep);
            } else {
                prop_assert!(s.chars().count() <= keep);
            }
        }
    }
}
