//! Read-only queries. The statement guard asks DuckDB's own parser and binder what a statement
//! is: exactly one statement, of the SELECT family (SELECT, WITH, FROM-first, VALUES, DESCRIBE,
//! SUMMARIZE) or a plain EXPLAIN; everything else is refused before it runs. A result is built
//! inside the engine; small ones come back inline as exact JSON, large ones stay there as a
//! dataset. A watchdog interrupts a query that outlives `query_timeout`.

use super::profile::{first_rows, shape};
use super::sealed::StatementKind;
use super::{DatasetKind, DatasetMeta, Result, Store, StoreError, quote_ident, valid_ref};
use serde_json::Value;

#[derive(Debug)]
pub enum QueryOutcome {
    Inline {
        columns: Vec<(String, String)>,
        rows: Vec<Value>,
    },
    Dataset(Box<DatasetMeta>),
}

const ALLOWED: &str =
    "SELECT, WITH … SELECT, FROM-first queries, VALUES, DESCRIBE, SUMMARIZE and EXPLAIN";

/// The statement without comments at its start, for naming what it is.
fn leading_words(sql: &str, n: usize) -> Vec<String> {
    let mut s = sql.trim_start();
    loop {
        if let Some(rest) = s.strip_prefix("--") {
            s = rest.split_once('\n').map_or("", |x| x.1).trim_start();
        } else if let Some(rest) = s.strip_prefix("/*") {
            s = rest.split_once("*/").map_or("", |x| x.1).trim_start();
        } else {
            break;
        }
    }
    s.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .take(n)
        .map(str::to_uppercase)
        .collect()
}

/// Removes trailing semicolons and whitespace so the statement can be wrapped.
pub(super) fn body(sql: &str) -> &str {
    sql.trim_end().trim_end_matches(';').trim_end()
}

/// Table functions that read files or reveal host paths. External access is off, but DuckDB
/// still lets queries reach its own temporary (spill) folder; these never run at all.
const FILE_FUNCTIONS: &[&str] = &[
    "glob",
    "read_text",
    "read_blob",
    "read_csv",
    "read_csv_auto",
    "sniff_csv",
    "read_json",
    "read_json_auto",
    "read_json_objects",
    "read_json_objects_auto",
    "read_ndjson",
    "read_ndjson_auto",
    "read_ndjson_objects",
    "read_parquet",
    "parquet_scan",
    "parquet_metadata",
    "parquet_schema",
    "parquet_file_metadata",
    "parquet_kv_metadata",
    "parquet_bloom_probe",
    "read_xlsx",
    "current_setting",
    "duckdb_settings",
    "duckdb_temporary_files",
    "duckdb_databases",
    "duckdb_extensions",
    "which_secret",
    "duckdb_secrets",
    "getenv",
    "query",
    "query_table",
];

/// Identifiers used as calls (`name(` or `"name"(`), and string literals, outside comments.
fn calls_and_strings(sql: &str) -> (Vec<String>, Vec<String>) {
    let chars: Vec<char> = sql.chars().collect();
    let (mut calls, mut strings) = (Vec::new(), Vec::new());
    let mut i = 0;
    let next_is_paren = |mut j: usize| {
        while j < chars.len() && chars[j].is_whitespace() {
            j += 1;
        }
        chars.get(j) == Some(&'(')
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '-' && chars.get(i + 1) == Some(&'-') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == '\'' || c == '"' {
            let mut text = String::new();
            i += 1;
            while i < chars.len() {
                if chars[i] == c {
                    if chars.get(i + 1) == Some(&c) {
                        text.push(c);
                        i += 2;
                        continue;
                    }
                    break;
                }
                text.push(chars[i]);
                i += 1;
            }
            i += 1;
            if c == '"' {
                if next_is_paren(i) {
                    calls.push(text.to_lowercase());
                }
            } else {
                strings.push(text);
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect::<String>().to_lowercase();
            if next_is_paren(i) {
                // `main.glob(` and `glob(` alike.
                calls.push(word.rsplit('.').next().unwrap_or(&word).to_owned());
            }
        } else {
            i += 1;
        }
    }
    (calls, strings)
}

/// Decides whether `sql` may run; returns its kind.
pub fn guard(store: &Store, sql: &str) -> Result<StatementKind> {
    if body(sql).is_empty() {
        return Err(StoreError::Refused("the query is empty".into()));
    }
    let kind = store
        .db
        .classify(sql)
        .map_err(|e| StoreError::Refused(format!("the query was not accepted: {e}")))?;
    let (calls, strings) = calls_and_strings(sql);
    if let Some(f) = calls.iter().find(|c| FILE_FUNCTIONS.contains(&c.as_str())) {
        return Err(StoreError::Refused(format!(
            "{f}() is not available: the engine is sealed and reads only loom's datasets"
        )));
    }
    let spill = store.spill_dir().display().to_string();
    if strings
        .iter()
        .any(|s| s.contains(&spill) || s.contains("loom-spill-"))
    {
        return Err(StoreError::Refused("loom's temporary folder is not readable: the engine is sealed and reads only loom's datasets".into()));
    }
    let words = leading_words(sql, 2);
    match kind {
        StatementKind::Select => Ok(kind),
        StatementKind::Explain
            if words
                .get(1)
                .is_some_and(|w| w == "ANALYZE" || w == "ANALYSE") =>
        {
            Err(StoreError::Refused(
                "EXPLAIN ANALYZE runs the statement; use EXPLAIN without ANALYZE".into(),
            ))
        }
        StatementKind::Explain => Ok(kind),
        StatementKind::Other(_) => {
            let what = words.first().cloned().unwrap_or_else(|| "this".into());
            Err(StoreError::Refused(format!(
                "{what} statements are not allowed: loom runs only read-only queries ({ALLOWED})"
            )))
        }
    }
}

/// Runs `f` on the reader connection, interrupting it after the query timeout.
pub(super) fn with_timeout<T>(
    store: &Store,
    f: impl FnOnce(&duckdb::Connection) -> Result<T>,
) -> Result<T> {
    let timeout = store.config.query_timeout;
    let (done, watch) = std::sync::mpsc::channel::<()>();
    let handle = store.interrupt.clone();
    let fired = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let fired2 = fired.clone();
    let reader = Store::lock(&store.reader);
    std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = watch.recv_timeout(timeout) {
            fired2.store(true, std::sync::atomic::Ordering::SeqCst);
            handle.interrupt();
        }
    });
    let out = f(&reader);
    let _ = done.send(());
    if fired.load(std::sync::atomic::Ordering::SeqCst) && out.is_err() {
        return Err(StoreError::Timeout(timeout.as_secs_f64()));
    }
    out
}

pub fn run(store: &Store, sql: &str) -> Result<QueryOutcome> {
    let kind = guard(store, sql)?;
    if kind == StatementKind::Explain {
        // A plan is two text columns; it cannot be wrapped in a table, so it runs as is.
        return with_timeout(store, |conn| {
            let mut stmt = conn.prepare(body(sql))?;
            let rows = stmt
                .query_map([], |r| Ok(serde_json::json!({ "explain_key": r.get::<_, Option<String>>(0)?, "explain_value": r.get::<_, Option<String>>(1)? })))?
                .collect::<std::result::Result<Vec<_>, _>>()?;
            Ok(QueryOutcome::Inline {
                columns: vec![
                    ("explain_key".into(), "VARCHAR".into()),
                    ("explain_value".into(), "VARCHAR".into()),
                ],
                rows,
            })
        });
    }
    let name = store.new_ref("q");
    let table = quote_ident(&name);
    let inline_rows = store.config.inline_rows;
    let outcome = with_timeout(store, |conn| {
        conn.execute_batch(&format!(
            "CREATE TABLE {table} AS SELECT * FROM (\n{}\n)",
            body(sql)
        ))?;
        let (rows, columns) = shape(conn, &name)?;
        if rows as usize <= inline_rows {
            let data = first_rows(conn, &table, inline_rows);
            let _ = conn.execute_batch(&format!("DROP TABLE IF EXISTS {table}"));
            return Ok(Some(QueryOutcome::Inline {
                columns,
                rows: data?,
            }));
        }
        Ok(None)
    })?;
    match outcome {
        Some(inline) => Ok(inline),
        None => Ok(QueryOutcome::Dataset(Box::new(store.register(
            &name,
            DatasetKind::Query,
            false,
        )?))),
    }
}

pub fn materialize(store: &Store, sql: &str, name: &str) -> Result<DatasetMeta> {
    if !valid_ref(name) {
        return Err(StoreError::Refused(format!(
            "`{name}` is not a valid dataset name: use lowercase letters, digits and _, starting with a letter, at most 48 characters"
        )));
    }
    if Store::lock(&store.catalog).contains_key(name) {
        return Err(StoreError::Refused(format!(
            "a dataset named `{name}` already exists; loom_drop it first or pick another name"
        )));
    }
    if guard(store, sql)? != StatementKind::Select {
        return Err(StoreError::Refused(
            "only a query that returns rows can be materialized".into(),
        ));
    }
    let table = quote_ident(name);
    with_timeout(store, |conn| {
        Ok(conn.execute_batch(&format!(
            "CREATE TABLE {table} AS SELECT * FROM (\n{}\n)",
            body(sql)
        ))?)
    })?;
    store.register(name, DatasetKind::Materialized, true)
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_calls_and_strings_outside_comments() {
        let (calls, strings) = super::calls_and_strings(
            "SELECT upper(x), \"GLOB\" ('a''b') -- glob(\n/* read_text( */ FROM main.read_csv ('/x')",
        );
        assert_eq!(calls, vec!["upper", "glob", "read_csv"]);
        assert_eq!(strings, vec!["a'b", "/x"]);
    }
}
