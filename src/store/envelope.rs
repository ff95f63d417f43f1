//! The envelope: what the model gets instead of a large table. Ref, rows, per-column schema and
//! stats, a few sample rows (long strings cut and marked), join hints, provenance, context and
//! a one-line usage hint, as text and as `structuredContent`. It has a token budget: wide tables
//! get a compact schema and fewer sample columns rather than blowing it.

use super::{DatasetMeta, Profile};
use crate::intercept::tokens;
use serde_json::{Map, Value, json};

const CUT: usize = 80;

fn cut_strings(v: &Value) -> Value {
    match v {
        Value::String(s) if s.chars().count() > CUT => Value::String(format!(
            "{}…[+{} chars]",
            s.chars().take(CUT).collect::<String>(),
            s.chars().count() - CUT
        )),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, v)| (k.clone(), cut_strings(v))).collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(cut_strings).collect()),
        other => other.clone(),
    }
}

/// Arguments as shown in an envelope: large ones (a call that sent rows) are cut.
fn compact_args(v: &Value) -> Value {
    let text = v.to_string();
    if text.chars().count() <= 400 {
        return cut_strings(v);
    }
    Value::String(format!(
        "{}…[+{} chars]",
        text.chars().take(300).collect::<String>(),
        text.chars().count() - 300
    ))
}

/// How much detail fits: each step drops some.
#[derive(Clone, Copy)]
struct Detail {
    samples: usize,
    sample_columns: usize,
    top_values: bool,
    stats: bool,
}

const STEPS: [Detail; 6] = [
    Detail {
        samples: usize::MAX,
        sample_columns: usize::MAX,
        top_values: true,
        stats: true,
    },
    Detail {
        samples: 3,
        sample_columns: 12,
        top_values: true,
        stats: true,
    },
    Detail {
        samples: 3,
        sample_columns: 8,
        top_values: false,
        stats: true,
    },
    Detail {
        samples: 2,
        sample_columns: 6,
        top_values: false,
        stats: false,
    },
    Detail {
        samples: 1,
        sample_columns: 4,
        top_values: false,
        stats: false,
    },
    Detail {
        samples: 0,
        sample_columns: 0,
        top_values: false,
        stats: false,
    },
];

fn pct(f: f64) -> String {
    format!("{:.0}%", f * 100.0)
}

/// A column name as it is simplest to type in SQL: bare when that is unambiguous.
fn sql_name(name: &str) -> String {
    let bare = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !matches!(
            name,
            "select"
                | "from"
                | "where"
                | "group"
                | "order"
                | "by"
                | "limit"
                | "table"
                | "user"
                | "default"
        );
    if bare {
        name.to_owned()
    } else {
        super::quote_ident(name)
    }
}

fn usage_hint(meta: &DatasetMeta) -> String {
    let r = &meta.dataset_ref;
    let group = meta
        .columns
        .iter()
        .find(|(_, t)| t == "VARCHAR" || t == "BOOLEAN")
        .map(|(n, _)| sql_name(n));
    let sql = match group {
        Some(g) => format!("SELECT {g}, count(*) FROM {r} GROUP BY 1 ORDER BY 2 DESC"),
        None => format!("SELECT * FROM {r} LIMIT 20"),
    };
    format!("loom_query {}", json!({ "sql": sql }))
}

fn structured(meta: &DatasetMeta, p: &Profile, d: Detail, original_tokens: Option<usize>) -> Value {
    let columns: Vec<Value> = p
        .columns
        .iter()
        .map(|c| {
            let mut o = Map::new();
            o.insert("name".into(), json!(c.name));
            o.insert("type".into(), json!(c.ty));
            if d.stats {
                o.insert(
                    "null_fraction".into(),
                    json!((c.null_fraction * 1000.0).round() / 1000.0),
                );
                o.insert("distinct".into(), json!(c.distinct));
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
    out.insert("sample_rows".into(), Value::Array(samples));
    out.insert(
        "join_hints".into(),
        serde_json::to_value(&p.join_hints).unwrap_or(Value::Null),
    );
    if let Some(prov) = &meta.provenance {
        out.insert(
            "provenance".into(),
            serde_json::to_value(prov).unwrap_or(Value::Null),
        );
    }
    if !meta.context.is_empty() {
        out.insert("context".into(), Value::Object(meta.context.clone()));
    }
    if let Some(t) = original_tokens {
        out.insert("original_tokens".into(), json!(t));
    }
    out.insert("hint".into(), json!(usage_hint(meta)));
    Value::Object(out)
}

fn text(meta: &DatasetMeta, p: &Profile, d: Detail, original_tokens: Option<usize>) -> String {
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
    for c in &p.columns {
        s.push_str(&format!("  {} {}", c.name, c.ty));
        if d.stats {
            s.push_str(&format!(
                "  nulls {} distinct≈{}",
                pct(c.null_fraction),
                c.distinct
            ));
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
                h.column,
                h.other,
                h.other_column,
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
        s.push_str(&format!("called with: {}\n", compact_args(args)));
    }
    s.push_str(&format!("try: {}\n", usage_hint(meta)));
    s
}

/// The envelope as a `tools/call` result: text plus `structuredContent`, within `budget`
/// tokens when at all possible.
pub fn render(
    meta: &DatasetMeta,
    p: &Profile,
    budget: usize,
    original_tokens: Option<usize>,
) -> (Value, usize) {
    let mut chosen = (String::new(), Value::Null, usize::MAX);
    for d in STEPS {
        let t = text(meta, p, d, original_tokens);
        let st = structured(meta, p, d, original_tokens);
        let tokens = tokens::estimate(&t) + tokens::estimate(&st.to_string());
        chosen = (t, st, tokens);
        if tokens <= budget {
            break;
        }
    }
    let (t, st, tokens) = chosen;
    (
        json!({ "content": [{ "type": "text", "text": t }], "structuredContent": st }),
        tokens,
    )
}
