//! Data loom holds, put into a tool call's arguments before it is forwarded (`loom_call`'s and
//! `loom_call_each`'s `bind`): a parked text (whole, a slice, or the lines matching a pattern),
//! the rows of a read-only query (as rows, CSV, one column or one value, exact types kept), or a
//! memory's text. Each binding names its place with a JSON pointer (RFC 6901). Everything is read
//! through the store's own doors: blobs by key, statements through the guard, memories by key.
//! No binding names a file, and none can reach one.

use super::memories::Memories;
use super::{Store, StoreError, blobs};
use crate::types::events::Binding;
use serde_json::{Map, Value};

/// Default cap of the data bound into one call, in bytes of JSON.
pub use crate::config::DEFAULT_MAX_BOUND_BYTES;

/// How the rows of a statement are bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A JSON array of objects, one per row.
    Rows,
    /// CSV text with a header line.
    Csv,
    /// The one column, as a JSON array.
    Column,
    /// The one value of a one-row, one-column result.
    Value,
}

impl Shape {
    fn parse(s: &str) -> Option<Shape> {
        Some(match s {
            "rows" => Shape::Rows,
            "csv" => Shape::Csv,
            "column" => Shape::Column,
            "value" => Shape::Value,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Shape::Rows => "rows",
            Shape::Csv => "csv",
            Shape::Column => "column",
            Shape::Value => "value",
        }
    }
}

/// Where a binding's value comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    Blob {
        key: String,
        offset: Option<usize>,
        limit: Option<usize>,
        pattern: Option<String>,
    },
    Sql {
        sql: String,
        shape: Shape,
    },
    Memory {
        key: String,
    },
}

/// One binding as asked: a place and a source.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub at: String,
    pub source: Source,
}

/// A binding resolved: what the log shows, and the value to put in place.
#[derive(Debug, Clone)]
pub struct Bound {
    pub view: Binding,
    pub value: Value,
}

/// Why a `bind` could not be carried out; the message names the binding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BindError(pub String);

fn err(at: &str, why: impl std::fmt::Display) -> BindError {
    BindError(format!("binding `{at}`: {why}"))
}

/// Reads `bind` (an object of pointer → source), every problem of it at once.
pub fn parse(bind: &Value) -> Result<Vec<Spec>, BindError> {
    let Some(map) = bind.as_object() else {
        return Err(BindError(format!(
            "`bind` must be an object of JSON pointer → source (`{{\"/notes\": {{\"blob\": \"blob/…\"}}}}`), got {}",
            short(bind)
        )));
    };
    let mut specs = Vec::with_capacity(map.len());
    let mut problems = Vec::new();
    for (at, source) in map {
        match parse_one(at, source) {
            Ok(s) => specs.push(s),
            Err(e) => problems.push(e.0),
        }
    }
    if !problems.is_empty() {
        return Err(BindError(problems.join("\n")));
    }
    // Two bindings into the same place, or one inside another, would depend on their order.
    for a in &specs {
        for b in &specs {
            if a.at != b.at && b.at.starts_with(&format!("{}/", a.at)) {
                return Err(err(&b.at, format!("it lies inside binding `{}`", a.at)));
            }
        }
    }
    Ok(specs)
}

fn parse_one(at: &str, source: &Value) -> Result<Spec, BindError> {
    if !at.starts_with('/') {
        return Err(err(
            at,
            "a place is a JSON pointer into the arguments, starting with `/` (`/notes`, `/items/0/body`)",
        ));
    }
    pointer_tokens(at).map_err(|why| err(at, why))?;
    let Some(obj) = source.as_object() else {
        return Err(err(
            at,
            "its source must be an object: {\"blob\": …}, {\"sql\": …} or {\"memory\": …}",
        ));
    };
    let text = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_owned);
    let count = |k: &str| -> Result<Option<usize>, BindError> {
        match obj.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .map(Some)
                .ok_or_else(|| {
                    err(
                        at,
                        format!("`{k}` must be a whole number ≥ 0, got {}", short(v)),
                    )
                }),
        }
    };
    let kinds: Vec<&str> = ["blob", "sql", "memory"]
        .into_iter()
        .filter(|k| obj.contains_key(*k))
        .collect();
    let allowed: &[&str] = match kinds.as_slice() {
        ["blob"] => &["blob", "offset", "limit", "pattern"],
        ["sql"] => &["sql", "as"],
        ["memory"] => &["memory"],
        [] => {
            return Err(err(
                at,
                "its source names no data: give one of `blob`, `sql` or `memory`",
            ));
        }
        _ => {
            return Err(err(
                at,
                format!("its source names {}; give exactly one", kinds.join(" and ")),
            ));
        }
    };
    if let Some(k) = obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(err(
            at,
            format!(
                "unknown member `{k}` of a {} source (it takes {})",
                kinds[0],
                allowed.join(", ")
            ),
        ));
    }
    let source = match kinds[0] {
        "blob" => {
            let key = text("blob")
                .ok_or_else(|| err(at, "`blob` must be a parked text's key (`blob/…`)"))?;
            let pattern = match obj.get("pattern") {
                None | Some(Value::Null) => None,
                Some(Value::String(p)) if !p.is_empty() => Some(p.clone()),
                Some(v) => {
                    return Err(err(
                        at,
                        format!("`pattern` must be a non-empty regex, got {}", short(v)),
                    ));
                }
            };
            let (offset, limit) = (count("offset")?, count("limit")?);
            if pattern.is_some() && (offset.is_some() || limit.is_some()) {
                return Err(err(
                    at,
                    "give either `pattern` or `offset`/`limit`, not both",
                ));
            }
            if limit == Some(0) {
                return Err(err(at, "`limit` must be at least 1"));
            }
            Source::Blob {
                key,
                offset,
                limit,
                pattern,
            }
        }
        "sql" => {
            let sql = text("sql")
                .filter(|s| !s.trim().is_empty())
                .ok_or_else(|| err(at, "`sql` must be a statement"))?;
            let shape = match obj.get("as") {
                None | Some(Value::Null) => Shape::Rows,
                Some(Value::String(s)) => Shape::parse(s).ok_or_else(|| {
                    err(
                        at,
                        format!(
                            "`as` must be rows, csv, column or value, got {}",
                            short(&Value::String(s.clone()))
                        ),
                    )
                })?,
                Some(v) => {
                    return Err(err(
                        at,
                        format!("`as` must be rows, csv, column or value, got {}", short(v)),
                    ));
                }
            };
            Source::Sql { sql, shape }
        }
        _ => {
            let key = text("memory")
                .filter(|k| !k.is_empty())
                .ok_or_else(|| err(at, "`memory` must be a memory's key"))?;
            Source::Memory { key }
        }
    };
    Ok(Spec {
        at: at.to_owned(),
        source,
    })
}

/// A value's JSON cut short for a message.
fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

/// The reference tokens of a JSON pointer, unescaped (`~1` is `/`, `~0` is `~`).
fn pointer_tokens(at: &str) -> Result<Vec<String>, String> {
    let Some(rest) = at.strip_prefix('/') else {
        return Err("a pointer starts with `/`".into());
    };
    rest.split('/')
        .map(|t| {
            let mut out = String::with_capacity(t.len());
            let mut chars = t.chars();
            while let Some(c) = chars.next() {
                if c != '~' {
                    out.push(c);
                    continue;
                }
                match chars.next() {
                    Some('0') => out.push('~'),
                    Some('1') => out.push('/'),
                    _ => return Err("`~` in a pointer must be `~0` or `~1`".to_owned()),
                }
            }
            Ok(out)
        })
        .collect()
}

/// Resolves every binding, within `max_bytes` in all. Reads only through the store.
pub fn resolve(
    store: &Store,
    memories: &Memories,
    specs: &[Spec],
    max_bytes: usize,
) -> Result<Vec<Bound>, BindError> {
    let mut out = Vec::with_capacity(specs.len());
    let mut total = 0usize;
    for spec in specs {
        let left = max_bytes.saturating_sub(total);
        let bound = resolve_one(store, memories, spec, left, max_bytes)?;
        total += bound.view.bytes as usize;
        if total > max_bytes {
            return Err(err(
                &spec.at,
                format!(
                    "the bound data comes to {total} bytes, more than max_bound_bytes ({max_bytes})"
                ),
            ));
        }
        out.push(bound);
    }
    Ok(out)
}

fn resolve_one(
    store: &Store,
    memories: &Memories,
    spec: &Spec,
    left: usize,
    max_bytes: usize,
) -> Result<Bound, BindError> {
    let at = spec.at.as_str();
    let too_big = |bytes: usize| {
        err(
            at,
            if left == max_bytes {
                format!("its value is {bytes} bytes, more than max_bound_bytes ({max_bytes})")
            } else {
                format!(
                    "its value is {bytes} bytes, more than the {left} left of max_bound_bytes ({max_bytes}) after the bindings before it"
                )
            },
        )
    };
    let (value, source, inputs) = match &spec.source {
        Source::Blob {
            key,
            offset,
            limit,
            pattern,
        } => {
            let blob = store.blobs.get(key).ok_or_else(|| {
                err(
                    at,
                    format!(
                        "no parked text {} (unknown, or expired)",
                        short(&Value::String(key.clone()))
                    ),
                )
            })?;
            let (text, how) = match (pattern, offset, limit) {
                (Some(p), _, _) => {
                    let lines = blobs::matching_lines(&blob.content, p, usize::MAX)
                        .map_err(|e| err(at, e))?;
                    let mut wanted = lines.into_iter().peekable();
                    let mut text = String::new();
                    for (i, line) in blob.content.lines().enumerate() {
                        if wanted.peek() != Some(&(i as u64)) {
                            continue;
                        }
                        wanted.next();
                        if !text.is_empty() {
                            text.push('\n');
                        }
                        text.push_str(line);
                        if text.len() > left {
                            return Err(too_big(text.len()));
                        }
                    }
                    (
                        text,
                        format!(" lines matching {}", Value::String(p.clone())),
                    )
                }
                (None, None, None) => (blob.content.clone(), String::new()),
                (None, o, l) => {
                    let o = o.unwrap_or(0);
                    let l = l.unwrap_or(usize::MAX);
                    (
                        blob.slice(o, l).to_owned(),
                        format!(
                            " characters {o}..{}",
                            o.saturating_add(l).min(blob.total_chars)
                        ),
                    )
                }
            };
            (
                Value::String(text),
                format!("{}{how}", blob.key),
                vec![blob.key.clone()],
            )
        }
        Source::Sql { sql, shape } => {
            let super::query::BoundRows {
                columns,
                rows,
                read,
            } = store
                .rows_for_binding(sql, left)
                .map_err(|e| err(at, query_error(e)))?;
            let value = shaped(at, *shape, &columns, rows)?;
            let one_line: String = sql.split_whitespace().collect::<Vec<_>>().join(" ");
            (value, format!("sql ({}): {one_line}", shape.name()), read)
        }
        Source::Memory { key } => {
            let m = memories.get(key, None).map_err(|e| {
                err(
                    at,
                    format!("memory {}: {e}", short(&Value::String(key.clone()))),
                )
            })?;
            (
                Value::String(m.content),
                format!("memory {key} v{}", m.version),
                vec![format!("memory:{key}")],
            )
        }
    };
    let bytes = match &value {
        Value::String(s) => s.len(),
        v => v.to_string().len(),
    };
    if bytes > left {
        return Err(too_big(bytes));
    }
    Ok(Bound {
        view: Binding {
            at: at.to_owned(),
            source,
            inputs,
            bytes: bytes as u64,
        },
        value,
    })
}

fn query_error(e: StoreError) -> String {
    format!("its query failed: {e}")
}

/// The rows of a statement in the shape asked for.
fn shaped(
    at: &str,
    shape: Shape,
    columns: &[(String, String)],
    rows: Vec<Value>,
) -> Result<Value, BindError> {
    let one_column = |what: &str| -> Result<&str, BindError> {
        match columns {
            [(name, _)] => Ok(name.as_str()),
            _ => Err(err(
                at,
                format!(
                    "`as: {what}` needs a query of one column; it returned {} ({})",
                    columns.len(),
                    columns
                        .iter()
                        .map(|(n, _)| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        }
    };
    Ok(match shape {
        Shape::Rows => Value::Array(rows),
        Shape::Csv => Value::String(csv(columns, &rows)),
        Shape::Column => {
            let name = one_column("column")?;
            Value::Array(
                rows.into_iter()
                    .map(|mut r| r.get_mut(name).map(Value::take).unwrap_or(Value::Null))
                    .collect(),
            )
        }
        Shape::Value => {
            let name = one_column("value")?;
            if rows.len() != 1 {
                return Err(err(
                    at,
                    format!(
                        "`as: value` needs a query of one row; it returned {}",
                        rows.len()
                    ),
                ));
            }
            rows.into_iter()
                .next()
                .and_then(|mut r| r.get_mut(name).map(Value::take))
                .unwrap_or(Value::Null)
        }
    })
}

/// Rows as CSV with a header line (RFC 4180 quoting; a null is an empty field, nested values
/// their compact JSON).
fn csv(columns: &[(String, String)], rows: &[Value]) -> String {
    let mut out = columns
        .iter()
        .map(|(n, _)| super::csv_field(n))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for r in rows {
        let fields: Vec<String> = columns
            .iter()
            .map(|(n, _)| match r.get(n) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => super::csv_field(s),
                Some(v) => super::csv_field(&v.to_string()),
            })
            .collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// Puts `value` at pointer `at` of `arguments`: members of objects on the way are made when
/// missing; an array's element must exist, or be the next one (its length, or `-`).
pub fn place(arguments: &mut Value, at: &str, value: Value) -> Result<(), BindError> {
    let tokens = pointer_tokens(at).map_err(|why| err(at, why))?;
    let Some((last, path)) = tokens.split_last() else {
        return Err(err(at, "a pointer must name a place inside the arguments"));
    };
    let mut here = arguments;
    for (depth, t) in path.iter().enumerate() {
        let seen = || format!("/{}", tokens[..=depth].join("/"));
        here = match here {
            Value::Object(m) => m
                .entry(t.clone())
                .or_insert_with(|| Value::Object(Map::new())),
            Value::Array(a) => {
                let i = index(t, a.len(), false).ok_or_else(|| {
                    err(
                        at,
                        format!("`{}` is no element of an array of {}", seen(), a.len()),
                    )
                })?;
                &mut a[i]
            }
            other => {
                return Err(err(
                    at,
                    format!("`{}` is {}, not an object or array", seen(), kind(other)),
                ));
            }
        };
    }
    match here {
        Value::Object(m) => {
            m.insert(last.clone(), value);
        }
        Value::Array(a) => {
            let i = index(last, a.len(), true).ok_or_else(|| {
                err(
                    at,
                    format!("`{last}` is no element of an array of {}", a.len()),
                )
            })?;
            if i == a.len() {
                a.push(value);
            } else {
                a[i] = value;
            }
        }
        other => {
            return Err(err(
                at,
                format!("its parent is {}, not an object or array", kind(other)),
            ));
        }
    }
    Ok(())
}

/// An array index token: digits without a leading zero, below `len` (or `len` itself and `-`
/// when `append` is allowed).
fn index(t: &str, len: usize, append: bool) -> Option<usize> {
    if t == "-" {
        return append.then_some(len);
    }
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) || (t.len() > 1 && t.starts_with('0'))
    {
        return None;
    }
    let i: usize = t.parse().ok()?;
    (i < len || (append && i == len)).then_some(i)
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Puts every bound value in place.
pub fn apply(arguments: &mut Value, bound: &[Bound]) -> Result<(), BindError> {
    for b in bound {
        place(arguments, &b.view.at, b.value.clone())?;
    }
    Ok(())
}

/// Which binding a schema problem of member `member` belongs to, when one placed it.
pub fn culprit<'a>(bound: &'a [Bound], problem: &str) -> Option<&'a Binding> {
    bound.iter().map(|b| &b.view).find(|b| {
        pointer_tokens(&b.at)
            .ok()
            .and_then(|t| t.into_iter().next())
            .is_some_and(|member| problem.contains(&format!("`{member}`")))
    })
}

#[cfg(test)]
mod tests;
