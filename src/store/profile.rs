//! Profiling a dataset inside the engine: per-column null fraction, approximate distinct
//! count, min/max for numbers and times, top values for low-cardinality columns, the note
//! ingest left in the catalog; the first rows as exact JSON; and join hints scored by exact
//! containment against every other dataset (and, between tables of one result, a key and its
//! references whatever their column names).

use super::{ColumnStats, DatasetMeta, JoinHint, Result, quote_ident};
use crate::types::data::is_numeric_type;
use serde::Serialize;
use serde_json::Value;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Serialize)]
pub struct Profile {
    pub rows: u64,
    pub columns: Vec<ColumnStats>,
    pub samples: Vec<Value>,
    pub join_hints: Vec<JoinHint>,
}

const TOP_VALUES_MAX_DISTINCT: u64 = 20;
/// Up to this many cells (rows × columns) distinct counts are exact, cheap next to the ingest
/// that made the dataset; beyond it they are estimated (and said to be).
const EXACT_DISTINCT_CELLS: u64 = 5_000_000;
const JOIN_BUDGET: Duration = Duration::from_millis(500);

fn is_ordered(ty: &str) -> bool {
    let t = ty.to_uppercase();
    [
        "INT", "DOUBLE", "FLOAT", "DECIMAL", "DATE", "TIME", "REAL", "NUMERIC",
    ]
    .iter()
    .any(|k| t.contains(k))
}

/// Rows and (name, type) columns of a table.
pub fn shape(conn: &duckdb::Connection, table: &str) -> Result<(u64, Vec<(String, String)>)> {
    let rows: u64 = conn.query_row(
        &format!("SELECT count(*)::UBIGINT FROM {}", quote_ident(table)),
        [],
        |r| r.get(0),
    )?;
    let mut stmt = conn.prepare("SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ? AND schema_name = 'main' ORDER BY column_index")?;
    let cols = stmt
        .query_map([table], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok((rows, cols))
}

/// Each column's comment, by name, for the columns that have one.
fn column_notes(
    conn: &duckdb::Connection,
    table: &str,
) -> Result<std::collections::HashMap<String, String>> {
    let mut stmt = conn.prepare("SELECT column_name, comment FROM duckdb_columns() WHERE table_name = ? AND schema_name = 'main' AND comment IS NOT NULL AND comment <> ''")?;
    let notes = stmt
        .query_map([table], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?
        .collect::<std::result::Result<_, _>>()?;
    Ok(notes)
}

/// Columns profiled per statement: many exact distinct aggregates in one statement overflow
/// the engine's stack (80 did on a test thread).
const COLUMNS_PER_QUERY: usize = 16;

/// One column's counts: rows, non-null values, distinct values, min and max as JSON text.
type Counts = (u64, u64, u64, Option<String>, Option<String>);

/// Each column's counts, in order, in one scan per [`COLUMNS_PER_QUERY`] columns: distinct
/// values counted exactly when `exact`, else estimated.
fn column_counts(
    conn: &duckdb::Connection,
    table: &str,
    columns: &[(String, String)],
    exact: bool,
) -> Result<Vec<Counts>> {
    let mut out = Vec::with_capacity(columns.len());
    for chunk in columns.chunks(COLUMNS_PER_QUERY) {
        let mut exprs = vec!["count(*)::UBIGINT".to_owned()];
        for (name, ty) in chunk {
            let c = quote_ident(name);
            exprs.push(format!("count({c})::UBIGINT"));
            exprs.push(if exact {
                format!("count(DISTINCT {c})::UBIGINT")
            } else {
                format!("approx_count_distinct({c})::UBIGINT")
            });
            if is_ordered(ty) {
                let (min, max) = (format!("min({c})"), format!("max({c})"));
                exprs.push(format!("to_json({})::VARCHAR", json_exact(&min, ty)));
                exprs.push(format!("to_json({})::VARCHAR", json_exact(&max, ty)));
            } else {
                exprs.push("NULL::VARCHAR".into());
                exprs.push("NULL::VARCHAR".into());
            }
        }
        let sql = format!("SELECT {} FROM {table}", exprs.join(", "));
        conn.query_row(&sql, [], |r| {
            let total: u64 = r.get(0)?;
            for i in 0..chunk.len() {
                let base = 1 + i * 4;
                out.push((
                    total,
                    r.get(base)?,
                    r.get(base + 1)?,
                    r.get(base + 2)?,
                    r.get(base + 3)?,
                ));
            }
            Ok(())
        })?;
    }
    Ok(out)
}

/// The five most frequent values of each column named by its index in `wanted`, with their
/// counts, most first (ties by value): one statement for up to [`COLUMNS_PER_QUERY`] columns
/// instead of one each, which is most of what profiling a small table costs.
fn top_values(
    conn: &duckdb::Connection,
    table: &str,
    columns: &[(String, String)],
    wanted: &[usize],
) -> Result<std::collections::HashMap<usize, Vec<(Value, u64)>>> {
    let mut out: std::collections::HashMap<usize, Vec<(Value, u64)>> =
        std::collections::HashMap::new();
    for chunk in wanted.chunks(COLUMNS_PER_QUERY) {
        let parts: Vec<String> = chunk
            .iter()
            .map(|&i| {
                let (name, ty) = &columns[i];
                let c = quote_ident(name);
                let value = json_exact(&c, ty);
                format!(
                    "SELECT {i} AS k, * FROM (SELECT to_json({value})::VARCHAR AS v, count(*)::UBIGINT AS n FROM {table} WHERE {c} IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5)"
                )
            })
            .collect();
        let sql = format!(
            "SELECT k, v, n FROM ({}) ORDER BY k, n DESC, v",
            parts.join(" UNION ALL ")
        );
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, i64>(0)?, json_of(r.get(1)?), r.get::<_, u64>(2)?))
        })?;
        for row in rows {
            let (k, v, n) = row?;
            out.entry(k as usize).or_default().push((v, n));
        }
    }
    Ok(out)
}

/// One exact JSON value from its JSON text (as the engine's `to_json` renders it).
fn json_of(text: Option<String>) -> Value {
    text.and_then(|t| serde_json::from_str(&finite_json(&t)).ok())
        .unwrap_or(Value::Null)
}

/// The engine's JSON text made JSON: `to_json` writes a non-finite DOUBLE as a bare `NaN`,
/// `Infinity` or `-Infinity`, which no JSON parser takes (one such value would lose its whole
/// row). Those become the strings `"NaN"`, `"Infinity"` and `"-Infinity"`; text inside strings
/// is never touched.
pub fn finite_json(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("NaN") && !text.contains("Infinity") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut in_string = false;
    let mut escaped = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else {
            let token = ["-Infinity", "Infinity", "NaN"]
                .into_iter()
                .find(|t| rest.starts_with(t));
            if let Some(t) = token {
                out.push('"');
                out.push_str(t);
                out.push('"');
                rest = &rest[t.len()..];
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

/// A quoted name for a whole row of a table with `columns` that none of its columns has
/// (compared as the engine compares names): `loom_row`, else `loom_row_2`, ….
pub fn row_alias(columns: &[(String, String)]) -> String {
    let taken = |a: &str| columns.iter().any(|(n, _)| n.eq_ignore_ascii_case(a));
    let mut alias = "loom_row".to_owned();
    let mut i = 2;
    while taken(&alias) {
        alias = format!("loom_row_{i}");
        i += 1;
    }
    quote_ident(&alias)
}

/// One row of `from` (whose columns are `columns`) as JSON text: the select expression and
/// the FROM clause it needs. The row is named by an alias that no column has (compared as the
/// engine compares names), because a column named like the alias binds first and the row
/// would shrink to that one column (`to_json(t) … t` with a column `t`): no name a server
/// gives a column may change a row. (Building the object from the column list instead
/// overflows the engine's stack on a table thousands of columns wide.)
pub fn row_json(from: &str, columns: &[(String, String)]) -> (String, String) {
    let alias = row_alias(columns);
    let widened: Vec<String> = columns
        .iter()
        .filter_map(|(name, ty)| {
            let c = quote_ident(name);
            let exact = json_exact(&c, ty);
            (exact != c).then(|| format!("{exact} AS {c}"))
        })
        .collect();
    let from = if widened.is_empty() {
        from.to_owned()
    } else {
        format!(
            "(SELECT * REPLACE ({}) FROM {from} AS loom_narrow)",
            widened.join(", ")
        )
    };
    (
        format!("to_json({alias})::VARCHAR"),
        format!("{from} AS {alias}"),
    )
}

/// `expr`, of type `ty`, made so that `to_json` writes it exactly and with its scale. The
/// engine writes a DECIMAL narrower than 18 digits through a DOUBLE (DECIMAL(12,2)
/// `11979.00` becomes `11979.0`, while a sum of it, DECIMAL(38,2), stays `6283031.90`), so
/// such a one is widened to 18 digits of the same scale first, which changes no value.
pub fn json_exact(expr: &str, ty: &str) -> String {
    let narrow_scale = ty
        .trim()
        .strip_prefix("DECIMAL(")
        .and_then(|r| r.strip_suffix(')'))
        .and_then(|r| r.split_once(','))
        .and_then(|(w, s)| Some((w.trim().parse::<u32>().ok()?, s.trim().parse::<u32>().ok()?)))
        .filter(|&(w, s)| w < 18 && s <= w)
        .map(|(_, s)| s);
    match narrow_scale {
        Some(s) => format!("CAST({expr} AS DECIMAL(18,{s}))"),
        None => expr.to_owned(),
    }
}

/// The first `n` rows of `from` (whose columns are `columns`), as exact JSON objects in
/// column order.
pub fn first_rows(
    conn: &duckdb::Connection,
    from: &str,
    columns: &[(String, String)],
    n: usize,
) -> Result<Vec<Value>> {
    let (row, from) = row_json(&format!("(SELECT * FROM {from} LIMIT {n})"), columns);
    let sql = format!("SELECT {row} FROM {from}");
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok(rows.into_iter().map(|r| json_of(Some(r))).collect())
}

pub fn profile(
    conn: &duckdb::Connection,
    meta: &DatasetMeta,
    others: &[DatasetMeta],
    samples: usize,
) -> Result<Profile> {
    let t = quote_ident(&meta.dataset_ref);
    let mut columns = Vec::with_capacity(meta.columns.len());
    let mut notes = column_notes(conn, &meta.dataset_ref)?;
    // A key's estimate (48,604 distinct of 50,000 unique ids) reads as duplicates: count
    // exactly whenever that is cheap.
    let exact = meta.rows.saturating_mul(meta.columns.len() as u64) <= EXACT_DISTINCT_CELLS;
    if !meta.columns.is_empty() {
        let counts = column_counts(conn, &t, &meta.columns, exact)?;
        // Top values for low-cardinality columns that repeat a value (not JSON).
        let wanted: Vec<usize> = meta
            .columns
            .iter()
            .zip(&counts)
            .enumerate()
            .filter(|(_, ((_, ty), (_, non_null, distinct, _, _)))| {
                let distinct = (*distinct).min(*non_null);
                distinct > 0
                    && distinct <= TOP_VALUES_MAX_DISTINCT
                    && *non_null > distinct
                    && !ty.starts_with("JSON")
            })
            .map(|(i, _)| i)
            .collect();
        let mut tops = if wanted.is_empty() {
            Default::default()
        } else {
            top_values(conn, &t, &meta.columns, &wanted)?
        };
        for (i, ((name, ty), (total, non_null, distinct, min, max))) in
            meta.columns.iter().zip(counts).enumerate()
        {
            columns.push(ColumnStats {
                name: name.clone(),
                ty: ty.clone(),
                null_fraction: if total == 0 {
                    0.0
                } else {
                    1.0 - non_null as f64 / total as f64
                },
                distinct: distinct.min(non_null),
                distinct_exact: exact,
                min: min.map(|m| json_of(Some(m))),
                max: max.map(|m| json_of(Some(m))),
                top: tops.remove(&i).unwrap_or_default(),
                note: notes.remove(name),
            });
        }
    }
    let samples = first_rows(conn, &t, &meta.columns, samples)?;
    let join_hints = join_hints(conn, meta, others).unwrap_or_default();
    Ok(Profile {
        rows: meta.rows,
        columns,
        samples,
        join_hints,
    })
}

fn family(ty: &str) -> &'static str {
    let t = ty.to_uppercase();
    if is_numeric_type(&t) && !t.contains("DOUBLE") && !t.contains("FLOAT") && !t.contains("REAL") {
        "integer"
    } else if t.starts_with("VARCHAR") {
        "text"
    } else if t.contains("DATE") || t.contains("TIME") {
        "time"
    } else {
        "other"
    }
}

fn singular(s: &str) -> String {
    let s = s.to_lowercase();
    s.strip_suffix("ies")
        .map(|x| format!("{x}y"))
        .or_else(|| s.strip_suffix('s').map(str::to_owned))
        .unwrap_or(s)
}

/// Whether two columns may refer to the same thing: same name, or `x_id` against the `id` of a
/// dataset whose name mentions `x`.
fn candidate(a: &str, a_ds: &str, b: &str, b_ds: &str) -> bool {
    let (a, b) = (a.to_lowercase(), b.to_lowercase());
    if a == b {
        return a.ends_with("id")
            || a.ends_with("_key")
            || a.ends_with("code")
            || a.ends_with("email")
            || a.ends_with("name")
            || a.contains("id");
    }
    let fk = |col: &str, other_col: &str, other_ds: &str| {
        other_col == "id"
            && col
                .strip_suffix("_id")
                .is_some_and(|x| !x.is_empty() && other_ds.contains(&singular(x)))
    };
    fk(&a, &b, b_ds) || fk(&b, &a, a_ds)
}

/// Whether a column pair of two tables of one result may be a key and a reference to it, whatever
/// their names (`relations.from` → `entities.name`): the pair is kept only when the engine
/// finds one side a key (no value twice) and most of the other side's values among it.
fn sibling_key(conn: &duckdb::Connection, a: (&str, &str), b: (&str, &str)) -> Option<JoinHint> {
    let sql = format!(
        "WITH a AS (SELECT DISTINCT {ac} AS v FROM {at} WHERE {ac} IS NOT NULL), b AS (SELECT DISTINCT {bc} AS v FROM {bt} WHERE {bc} IS NOT NULL) \
         SELECT (SELECT count(*) FROM a)::UBIGINT, (SELECT count(*) FROM b)::UBIGINT, (SELECT count(*) FROM a JOIN b ON a.v = b.v)::UBIGINT, \
                (SELECT count({ac}) FROM {at})::UBIGINT, (SELECT count({bc}) FROM {bt})::UBIGINT",
        ac = quote_ident(a.1),
        at = quote_ident(a.0),
        bc = quote_ident(b.1),
        bt = quote_ident(b.0),
    );
    let (na, nb, both, ca, cb) = conn
        .query_row(&sql, [], |r| {
            Ok((
                r.get::<_, u64>(0)?,
                r.get::<_, u64>(1)?,
                r.get::<_, u64>(2)?,
                r.get::<_, u64>(3)?,
                r.get::<_, u64>(4)?,
            ))
        })
        .ok()?;
    if both == 0 || na == 0 || nb == 0 {
        return None;
    }
    let (this_in_other, other_in_this) = (both as f64 / na as f64, both as f64 / nb as f64);
    // A key on one side (one row per value, more than one value) that holds at least half of
    // what the other side names.
    let refers = (nb == cb && nb > 1 && this_in_other >= 0.5)
        || (na == ca && na > 1 && other_in_this >= 0.5);
    refers.then(|| JoinHint {
        column: a.1.to_owned(),
        other: b.0.to_owned(),
        other_column: b.1.to_owned(),
        this_in_other,
        other_in_this,
    })
}

/// Scores candidate pairs by exact containment, computed in the engine, under a time budget;
/// keeps the best five with any overlap. A dataset's siblings (tables of the same result) are
/// also tried for a key and its references across differently named columns.
pub fn join_hints(
    conn: &duckdb::Connection,
    meta: &DatasetMeta,
    others: &[DatasetMeta],
) -> Result<Vec<JoinHint>> {
    let started = Instant::now();
    let mut hints = Vec::new();
    // Two results of one tool (pages, or the same call with other filters) hold rows of one
    // kind: a column they share is one attribute, to be unioned, not a key to join on; and
    // scoring it costs a scan of both for every call of that tool. Tables of one result are
    // siblings, not pages, and are still scored.
    let same_tool = |other: &DatasetMeta| {
        !meta.siblings.contains(&other.dataset_ref)
            && matches!(
                (&meta.provenance, &other.provenance),
                (Some(x), Some(y)) if x.server == y.server && x.tool == y.tool
            )
    };
    // Newest first: when the budget runs out, what was left out is the oldest.
    'outer: for other in others.iter().rev() {
        let pages = same_tool(other);
        for (a, aty) in &meta.columns {
            for (b, bty) in &other.columns {
                if started.elapsed() > JOIN_BUDGET {
                    break 'outer;
                }
                if family(aty) == "other" || family(aty) != family(bty) {
                    continue;
                }
                if pages && a.eq_ignore_ascii_case(b) {
                    continue;
                }
                if !candidate(a, &meta.dataset_ref, b, &other.dataset_ref) {
                    let sibling = meta.siblings.contains(&other.dataset_ref)
                        && matches!(family(aty), "text" | "integer");
                    if let Some(hint) = sibling
                        .then(|| sibling_key(conn, (&meta.dataset_ref, a), (&other.dataset_ref, b)))
                        .flatten()
                    {
                        hints.push(hint);
                    }
                    continue;
                }
                let sql = format!(
                    "WITH a AS (SELECT DISTINCT {ac} AS v FROM {at} WHERE {ac} IS NOT NULL), b AS (SELECT DISTINCT {bc} AS v FROM {bt} WHERE {bc} IS NOT NULL) \
                     SELECT (SELECT count(*) FROM a)::UBIGINT, (SELECT count(*) FROM b)::UBIGINT, (SELECT count(*) FROM a JOIN b ON a.v = b.v)::UBIGINT",
                    ac = quote_ident(a),
                    at = quote_ident(&meta.dataset_ref),
                    bc = quote_ident(b),
                    bt = quote_ident(&other.dataset_ref),
                );
                let Ok((na, nb, both)) = conn.query_row(&sql, [], |r| {
                    Ok((
                        r.get::<_, u64>(0)?,
                        r.get::<_, u64>(1)?,
                        r.get::<_, u64>(2)?,
                    ))
                }) else {
                    continue;
                };
                if both == 0 || na == 0 || nb == 0 {
                    continue;
                }
                hints.push(JoinHint {
                    column: a.clone(),
                    other: other.dataset_ref.clone(),
                    other_column: b.clone(),
                    this_in_other: both as f64 / na as f64,
                    other_in_this: both as f64 / nb as f64,
                });
            }
        }
    }
    hints.sort_by(|x, y| {
        let sx = x.this_in_other.max(x.other_in_this);
        let sy = y.this_in_other.max(y.other_in_this);
        sy.total_cmp(&sx)
    });
    hints.truncate(5);
    Ok(hints)
}

#[cfg(test)]
mod tests {
    use super::finite_json;
    use proptest::prelude::*;

    #[test]
    fn decimals_are_written_with_their_scale_whatever_their_width() {
        let conn = duckdb::Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE t (price DECIMAL(12,2), rate DECIMAL(4,3), big DECIMAL(38,2), n INTEGER);
             INSERT INTO t VALUES (11979.00, 0.100, 6283031.90, 1), (12.50, 1.000, 0.10, 2);",
        )
        .unwrap();
        let columns = super::shape(&conn, "t").unwrap().1;
        let rows = super::first_rows(&conn, "t", &columns, 10).unwrap();
        assert_eq!(
            rows.iter().map(|r| r.to_string()).collect::<Vec<_>>(),
            [
                r#"{"price":11979.00,"rate":0.100,"big":6283031.90,"n":1}"#,
                r#"{"price":12.50,"rate":1.000,"big":0.10,"n":2}"#,
            ]
        );
        // A sum and a value of the same column print alike.
        let sum = "(SELECT sum(price) AS total, min(price) AS low FROM t)";
        let columns = vec![
            ("total".to_owned(), "DECIMAL(38,2)".to_owned()),
            ("low".to_owned(), "DECIMAL(12,2)".to_owned()),
        ];
        let rows = super::first_rows(&conn, sum, &columns, 1).unwrap();
        assert_eq!(rows[0].to_string(), r#"{"total":11991.50,"low":12.50}"#);
        assert_eq!(super::json_exact("x", "DECIMAL(18,2)"), "x");
        assert_eq!(super::json_exact("x", "VARCHAR"), "x");
        assert_eq!(
            super::json_exact("x", "DECIMAL(9,2)"),
            "CAST(x AS DECIMAL(18,2))"
        );
    }

    #[test]
    fn non_finite_numbers_become_strings_and_strings_stay() {
        let engine = r#"{"a":Infinity,"b":-Infinity,"c":NaN,"d":[1,NaN],"e":"NaN \"Infinity\" \\","f":{"g":-Infinity}}"#;
        let v: serde_json::Value = serde_json::from_str(&finite_json(engine)).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"a":"Infinity","b":"-Infinity","c":"NaN","d":[1,"NaN"],
                "e":"NaN \"Infinity\" \\","f":{"g":"-Infinity"}})
        );
    }

    fn json() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            ".*".prop_map(serde_json::Value::from),
            "(NaN|-?Infinity|\\\\|\"| )*".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::btree_map("(NaN|Infinity|[a-z])*", inner, 0..4)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Valid JSON passes unchanged, whatever its strings say.
        #[test]
        fn json_passes_unchanged(v in json()) {
            let text = v.to_string();
            let out = finite_json(&text);
            prop_assert_eq!(out.as_ref(), text.as_str());
        }

        /// Any text at all: no panic.
        #[test]
        fn any_text_never_panics(text in ".*") {
            let _ = finite_json(&text);
        }
    }
}
