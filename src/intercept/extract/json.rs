//! The JSON rungs: a row array at depth 0–2 of a JSON value (every element checked), with the
//! scalars around it kept as context; JSON text, optionally in one fenced block that covers most
//! of the text; one JSON object per text block; NDJSON.

use super::Found;
use crate::intercept::table::Tier;
use serde_json::{Map, Value};

/// Rows when every element of `items` is an object (or every one a scalar: one `value` column).
fn rows_of(items: &[Value]) -> Option<Vec<Map<String, Value>>> {
    if items.is_empty() {
        return None;
    }
    if items.iter().all(Value::is_object) {
        return Some(
            items
                .iter()
                .filter_map(|v| v.as_object().cloned())
                .collect(),
        );
    }
    let scalar = |v: &Value| !v.is_object() && !v.is_array();
    if items.iter().all(scalar) && items.len() >= 2 {
        return Some(
            items
                .iter()
                .map(|v| Map::from_iter([("value".to_owned(), v.clone())]))
                .collect(),
        );
    }
    None
}

fn scalars(obj: &Map<String, Value>, prefix: &str, into: &mut Map<String, Value>) {
    for (k, v) in obj {
        if !v.is_object() && !v.is_array() {
            let name = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            into.insert(name, v.clone());
        }
    }
}

/// Finds the one row array at depth 0, 1 or 2. Two candidate arrays are ambiguous: none.
pub fn rows_in_value(v: &Value, rung: &'static str) -> Option<Found> {
    match v {
        Value::Array(items) => rows_of(items).map(|records| Found {
            records,
            tier: Tier::Json,
            context: Map::new(),
            rung,
        }),
        Value::Object(obj) => {
            let mut candidates: Vec<(Vec<String>, &Vec<Value>)> = Vec::new();
            for (k, v) in obj {
                match v {
                    Value::Array(items) if rows_of(items).is_some() => {
                        candidates.push((vec![k.clone()], items))
                    }
                    Value::Object(inner) => {
                        for (k2, v2) in inner {
                            if let Value::Array(items) = v2
                                && rows_of(items).is_some()
                            {
                                candidates.push((vec![k.clone(), k2.clone()], items));
                            }
                        }
                    }
                    _ => {}
                }
            }
            // Arrays of scalars next to a row array of objects are context, not rows.
            if candidates.len() > 1 {
                let objects: Vec<_> = candidates
                    .iter()
                    .filter(|(_, items)| items.iter().all(Value::is_object))
                    .cloned()
                    .collect();
                candidates = objects;
            }
            let [(path, items)] = candidates.as_slice() else {
                return None;
            };
            let records = rows_of(items)?;
            let mut context = Map::new();
            scalars(obj, "", &mut context);
            if path.len() == 2
                && let Some(Value::Object(inner)) = obj.get(&path[0])
            {
                scalars(inner, &path[0], &mut context);
            }
            Some(Found {
                records,
                tier: Tier::Json,
                context,
                rung,
            })
        }
        _ => None,
    }
}

/// JSON text, or JSON in the only fenced block when that block is most of the text.
pub fn in_text(text: &str) -> Option<Found> {
    let trimmed = text.trim();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        if let Ok(v) = serde_json::from_str::<Value>(trimmed) {
            return rows_in_value(&v, "json");
        }
        return None;
    }
    let fences: Vec<_> = text.match_indices("```").collect();
    if fences.len() != 2 {
        return None;
    }
    let (open, close) = (fences[0].0, fences[1].0);
    let body_start = text[open + 3..].find('\n').map(|i| open + 3 + i + 1)?;
    if body_start > close {
        return None;
    }
    let body = &text[body_start..close];
    let outside = text.len() - body.len();
    if outside * 5 > text.len() {
        return None;
    }
    let v: Value = serde_json::from_str(body.trim()).ok()?;
    rows_in_value(&v, "json_fenced")
}

/// One JSON object per text block: rows across blocks.
pub fn one_object_per_block(texts: &[&str]) -> Option<Found> {
    let mut records = Vec::with_capacity(texts.len());
    for t in texts {
        match serde_json::from_str::<Value>(t.trim()) {
            Ok(Value::Object(o)) => records.push(o),
            _ => return None,
        }
    }
    Some(Found {
        records,
        tier: Tier::Json,
        context: Map::new(),
        rung: "json_blocks",
    })
}

/// Newline-delimited JSON objects, every non-empty line one object (two lines at least).
pub fn ndjson(text: &str) -> Option<Found> {
    let lines = super::lines(text);
    if lines.len() < 2 || !lines[0].trim_start().starts_with('{') {
        return None;
    }
    let mut records = Vec::with_capacity(lines.len());
    for l in lines {
        match serde_json::from_str::<Value>(l.trim()) {
            Ok(Value::Object(o)) => records.push(o),
            _ => return None,
        }
    }
    Some(Found {
        records,
        tier: Tier::Json,
        context: Map::new(),
        rung: "ndjson",
    })
}
