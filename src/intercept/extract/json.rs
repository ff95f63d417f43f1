//! The JSON rungs: a row array at depth 0–2 of a JSON value (every element checked), with the
//! scalars around it kept as context; JSON text, optionally in one fenced block that covers most
//! of the text; one JSON object per text block; NDJSON. JSON text that is an array of objects
//! goes to the fast reader (`json_rows`) first; this general path decides whatever it declines.

use super::{Found, Records, json_rows};
use crate::intercept::table::{ColumnType, Table, Tier, declared_type};
use serde_json::{Map, Value};

/// Whether `items` are rows: every element an object, or every one a scalar (then one `value`
/// column), or every one an array of scalars of one length, a grid (`{"range": "A1:K909",
/// "values": [[header…], [row…]…]}`, as spreadsheet servers answer). Every element is checked,
/// not only the first.
fn is_rows(items: &[Value]) -> bool {
    if items.is_empty() {
        return false;
    }
    items.iter().all(Value::is_object)
        || (items.len() >= 2 && items.iter().all(|v| !v.is_object() && !v.is_array()))
        || is_grid(items)
}

fn is_grid(items: &[Value]) -> bool {
    let width = items.first().and_then(Value::as_array).map_or(0, Vec::len);
    items.len() >= 3
        && width >= 2
        && items.iter().all(|r| {
            r.as_array().is_some_and(|cells| {
                cells.len() == width && cells.iter().all(|c| !c.is_object() && !c.is_array())
            })
        })
}

/// Moves the rows out of `items` (which passed `is_rows`). A grid's first row names the
/// columns only when it reads as names (strings, as a CSV header must); otherwise its columns
/// are `column_N`, every row is a row, and the context says so.
fn take_rows(items: Vec<Value>, context: &mut Map<String, Value>) -> Vec<Map<String, Value>> {
    if is_grid(&items) {
        let mut grid: Vec<Vec<Value>> = items
            .into_iter()
            .map(|r| match r {
                Value::Array(cells) => cells,
                _ => Vec::new(),
            })
            .collect();
        let first: Option<Vec<String>> = grid[0]
            .iter()
            .map(|c| c.as_str().map(str::to_owned))
            .collect();
        let named = first.filter(|names| {
            super::reads_as_names(names, |col, name| {
                grid[1..]
                    .iter()
                    .any(|r| r.get(col).and_then(Value::as_str) == Some(name))
            })
        });
        let names = match named {
            Some(names) => {
                grid.remove(0);
                names
            }
            None => {
                context.insert("header".into(), Value::String(super::NO_HEADER.into()));
                (1..=grid[0].len()).map(|i| format!("column_{i}")).collect()
            }
        };
        return grid
            .into_iter()
            .map(|cells| names.iter().cloned().zip(cells).collect())
            .collect();
    }
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

/// The header of a columnar result (`{columns, columnTypes?, rows: [[…]]}`, as DuckDB,
/// MotherDuck and many SQL servers answer): the column names, and the declared types when
/// the result gives one per column. `None` unless `rows` is a non-empty array of arrays and
/// `columns` names every column (strings, or objects with a string `name` and maybe a
/// `type`).
fn columnar_header(obj: &Map<String, Value>) -> Option<(Vec<String>, Vec<Option<ColumnType>>)> {
    let rows = obj.get("rows")?.as_array()?;
    if rows.is_empty() || !rows.iter().all(Value::is_array) {
        return None;
    }
    let columns = obj.get("columns")?.as_array()?;
    if columns.is_empty() {
        return None;
    }
    let mut names = Vec::with_capacity(columns.len());
    let mut inline_types = Vec::with_capacity(columns.len());
    for c in columns {
        match c {
            Value::String(name) => {
                names.push(name.clone());
                inline_types.push(None);
            }
            Value::Object(o) => {
                names.push(o.get("name")?.as_str()?.to_owned());
                inline_types.push(
                    o.get("type")
                        .and_then(Value::as_str)
                        .and_then(declared_type),
                );
            }
            _ => return None,
        }
    }
    // Types beside the names count only when there is exactly one for each column; a list
    // that does not line up says nothing reliable about any of them.
    let declared = ["columnTypes", "column_types", "types"]
        .iter()
        .find_map(|k| obj.get(*k)?.as_array())
        .filter(|types| types.len() == names.len())
        .map(|types| {
            types
                .iter()
                .map(|t| t.as_str().and_then(declared_type))
                .collect()
        })
        .unwrap_or(inline_types);
    Some((names, declared))
}

/// Where columnar results are in `obj`: itself (an empty path), or its members at depth 1
/// and 2.
fn columnar_paths(obj: &Map<String, Value>) -> Vec<Vec<String>> {
    if columnar_header(obj).is_some() {
        return vec![Vec::new()];
    }
    let mut found = Vec::new();
    for (k, v) in obj {
        let Value::Object(inner) = v else { continue };
        if columnar_header(inner).is_some() {
            found.push(vec![k.clone()]);
        }
        for (k2, v2) in inner {
            if let Value::Object(deeper) = v2
                && columnar_header(deeper).is_some()
            {
                found.push(vec![k.clone(), k2.clone()]);
            }
        }
    }
    found
}

/// The columnar result at `path` in `obj` as a table whose context is the scalars around it.
fn columnar(mut obj: Map<String, Value>, path: &[String], rung: &'static str) -> Option<Found> {
    let mut context = Map::new();
    let mut at = &mut obj;
    let mut prefix = String::new();
    scalars(at, &prefix, &mut context);
    for key in path {
        let Some(Value::Object(inner)) = at.get_mut(key) else {
            return None;
        };
        prefix = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        at = inner;
        scalars(at, &prefix, &mut context);
    }
    let (names, declared) = columnar_header(at)?;
    let Some(Value::Array(rows)) = at.remove("rows") else {
        return None;
    };
    let rows = rows
        .into_iter()
        .map(|r| match r {
            Value::Array(cells) => Some(cells),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Table::from_columnar(names, &declared, rows, context, rung).map(Found::Typed)
}

/// Finds the one row array at depth 0, 1 or 2 and moves it out. Two candidate arrays are
/// ambiguous: none. A columnar result (`{columns, rows: [[…]]}`) is read by its header.
pub fn rows_in_value(v: Value, rung: &'static str) -> Option<Found> {
    match v {
        Value::Array(items) => is_rows(&items).then(|| {
            let mut context = Map::new();
            Found::Records(Records {
                records: take_rows(items, &mut context),
                tier: Tier::Json,
                context,
                rung,
            })
        }),
        Value::Object(obj) => match columnar_paths(&obj).as_slice() {
            [] => row_array_in(obj, rung),
            [path] => columnar(obj, path, rung),
            // Two columnar results side by side are ambiguous: none.
            _ => None,
        },
        _ => None,
    }
}

/// The one row array at depth 0, 1 or 2 of `obj`, moved out.
fn row_array_in(mut obj: Map<String, Value>, rung: &'static str) -> Option<Found> {
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
        records: take_rows(items, &mut context),
        tier: Tier::Json,
        context,
        rung,
    }))
}

/// JSON text, or JSON in the only fenced block when that block is most of the text.
pub fn in_text(text: &str) -> Option<Found> {
    let trimmed = text.trim();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        if let Some(table) = json_rows::array_of_objects(trimmed, "json") {
            return Some(Found::Typed(table));
        }
        if let Some(found) = wrapped_rows(trimmed) {
            return Some(found);
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

/// An object's members, each kept as its JSON text (nothing below the first level is built).
struct Members<'t>(Vec<(String, &'t serde_json::value::RawValue)>);

impl<'de> serde::Deserialize<'de> for Members<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    out.push((key, map.next_value()?));
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// An object whose one array member is an array of objects and whose other members are
/// scalars (`{"data": [...], "total": 20000}`), read by the fast reader: the general rung
/// would build every row as a value first. What it takes is exactly what the general rung
/// makes of it (the rows, and the scalars around them as context, in order); anything else
/// (members that are objects or other arrays, a key twice, rows the fast reader declines)
/// is left to the general rung.
pub(super) fn wrapped_rows(text: &str) -> Option<Found> {
    let Members(members) = serde_json::from_str(text).ok()?;
    let mut rows = None;
    let mut context = Map::new();
    for (key, raw) in &members {
        let value = raw.get().trim_start();
        if value.starts_with('[') {
            if rows.replace(value).is_some() {
                return None;
            }
        } else if value.starts_with('{') {
            return None;
        } else {
            context.insert(key.clone(), serde_json::from_str(value).ok()?);
        }
    }
    // Every key once: a key twice is kept by the general rung as the last of its values.
    let keys: std::collections::HashSet<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
    if keys.len() != members.len() {
        return None;
    }
    let mut table = json_rows::array_of_objects(rows?.trim_end(), "json")?;
    table.context = context;
    Some(Found::Typed(table))
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
