//! The JSON rungs: a row array at depth 0–2 of a JSON value (every element checked), with the
//! scalars around it kept as context; JSON text, optionally in one fenced block that covers most
//! of the text; one JSON object per text block; NDJSON. JSON text that is an array of objects
//! goes to the fast reader (`json_rows`) first; this general path decides whatever it declines.

use super::{Found, Records, json_rows};
use crate::intercept::table::Tier;
use serde_json::{Map, Value};

/// Whether `items` are rows: every element an object, or every one a scalar (then one `value`
/// column). Every element is checked, not only the first.
fn is_rows(items: &[Value]) -> bool {
    if items.is_empty() {
        return false;
    }
    items.iter().all(Value::is_object)
        || (items.len() >= 2 && items.iter().all(|v| !v.is_object() && !v.is_array()))
}

/// Moves the rows out of `items` (which passed `is_rows`).
fn take_rows(items: Vec<Value>) -> Vec<Map<String, Value>> {
    items
        .into_iter()
        .map(|v| match v {
            Value::Object(m) => m,
            scalar => Map::from_iter([("value".to_owned(), scalar)]),
        })
        .collect()
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

/// Finds the one row array at depth 0, 1 or 2 and moves it out. Two candidate arrays are
/// ambiguous: none.
pub fn rows_in_value(v: Value, rung: &'static str) -> Option<Found> {
    match v {
        Value::Array(items) => is_rows(&items).then(|| {
            Found::Records(Records {
                records: take_rows(items),
                tier: Tier::Json,
                context: Map::new(),
                rung,
            })
        }),
        Value::Object(mut obj) => {
            let mut candidates: Vec<(Vec<String>, bool)> = Vec::new();
            for (k, v) in &obj {
                match v {
                    Value::Array(items) if is_rows(items) => {
                        candidates.push((vec![k.clone()], items.iter().all(Value::is_object)))
                    }
                    Value::Object(inner) => {
                        for (k2, v2) in inner {
                            if let Value::Array(items) = v2
                                && is_rows(items)
                            {
                                candidates.push((
                                    vec![k.clone(), k2.clone()],
                                    items.iter().all(Value::is_object),
                                ));
                            }
                        }
                    }
                    _ => {}
                }
            }
            // Arrays of scalars next to a row array of objects are context, not rows.
            if candidates.len() > 1 {
                candidates.retain(|(_, objects)| *objects);
            }
            let [(path, _)] = candidates.as_slice() else {
                return None;
            };
            let path = path.clone();
            let mut context = Map::new();
            scalars(&obj, "", &mut context);
            let items = if path.len() == 2 {
                let Some(Value::Object(inner)) = obj.get_mut(&path[0]) else {
                    return None;
                };
                scalars(inner, &path[0], &mut context);
                inner.remove(&path[1])
            } else {
                obj.remove(&path[0])
            };
            let Some(Value::Array(items)) = items else {
                return None;
            };
            Some(Found::Records(Records {
                records: take_rows(items),
                tier: Tier::Json,
                context,
                rung,
            }))
        }
        _ => None,
    }
}

/// JSON text, or JSON in the only fenced block when that block is most of the text.
pub fn in_text(text: &str) -> Option<Found> {
    let trimmed = text.trim();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        if let Some(table) = json_rows::array_of_objects(trimmed, "json") {
            return Some(Found::Typed(table));
        }
        if let Ok(v) = serde_json::from_str::<Value>(trimmed) {
            return rows_in_value(v, "json");
        }
        return None;
    }
    let fences: Vec<_> = text.match_indices("```").collect();
    if fences.len() != 2 {
        return None;
    }
    let (open, close) = (fences[0].0, fences[1].0);
    let body_start = text.get(open + 3..)?.find('\n').map(|i| open + 3 + i + 1)?;
    let body = text.get(body_start..close)?;
    let outside = text.len() - body.len();
    if outside * 5 > text.len() {
        return None;
    }
    let v: Value = serde_json::from_str(body.trim()).ok()?;
    rows_in_value(v, "json_fenced")
}

/// Rows when every piece is one JSON object.
fn one_object_each<'a>(
    pieces: impl IntoIterator<Item = &'a str>,
    rung: &'static str,
) -> Option<Found> {
    let mut records = Vec::new();
    for piece in pieces {
        match serde_json::from_str::<Value>(piece.trim()) {
            Ok(Value::Object(o)) => records.push(o),
            _ => return None,
        }
    }
    Some(Found::Records(Records {
        records,
        tier: Tier::Json,
        context: Map::new(),
        rung,
    }))
}

/// One JSON object per text block: rows across blocks.
pub fn one_object_per_block(texts: &[&str]) -> Option<Found> {
    one_object_each(texts.iter().copied(), "json_blocks")
}

/// Newline-delimited JSON objects, every non-empty line one object (two lines at least).
pub fn ndjson(text: &str) -> Option<Found> {
    let lines = super::lines(text);
    if lines.len() < 2 || !lines[0].trim_start().starts_with('{') {
        return None;
    }
    one_object_each(lines, "ndjson")
}
