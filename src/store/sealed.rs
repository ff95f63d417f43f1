//! The sealed engine: one in-memory DuckDB database that reaches no file, network or
//! extension. External access, extension install and autoload are off and the configuration is
//! locked before any query runs; spill goes to a private folder removed on exit. A self-test at
//! start proves the seal or the store refuses to open. This module also gives the statement
//! guard (`guard.rs`) DuckDB's own answers about a statement: its parsed tree and its bound
//! type, on a connection of their own that never runs a client statement.

use duckdb::ffi;
use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::path::Path;
use std::ptr;

#[derive(Debug, thiserror::Error)]
pub enum SealError {
    #[error("cannot open the DuckDB engine: {0}")]
    Open(String),
    #[error("the engine is not sealed: {0}; refusing to start")]
    NotSealed(String),
    /// The self-test in a child process could not run or failed.
    #[error("{0}")]
    Probe(String),
}

/// What kind of statement a query is, as DuckDB's parser and binder see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatementKind {
    Select,
    Explain,
    Other(u32),
}

impl StatementKind {
    /// The statement type's name as DuckDB's C API spells it, for refusals.
    pub fn name(self) -> &'static str {
        match self {
            StatementKind::Select => "SELECT",
            StatementKind::Explain => "EXPLAIN",
            StatementKind::Other(t) => match t {
                2 => "INSERT",
                3 => "UPDATE",
                5 => "DELETE",
                6 => "PREPARE",
                7 => "CREATE",
                8 => "EXECUTE",
                9 => "ALTER",
                10 => "transaction",
                11 => "COPY",
                12 => "ANALYZE",
                13 | 20 => "SET",
                14 => "CREATE FUNCTION",
                15 => "DROP",
                16 => "EXPORT",
                17 => "PRAGMA",
                18 => "VACUUM",
                19 => "CALL",
                21 => "LOAD",
                22 => "relation",
                23 => "extension",
                24 => "logical plan",
                25 => "ATTACH",
                26 => "DETACH",
                27 => "multi",
                28 => "COPY DATABASE",
                29 => "UPDATE EXTENSIONS",
                30 => "MERGE INTO",
                _ => "these",
            },
        }
    }
}

/// Owns the raw database handle (closed last), a raw connection for the statement guard and
/// one for bulk appends (the C API's data-chunk appender, which duckdb-rs does not expose).
pub struct SealedDb {
    db: ffi::duckdb_database,
    guard_con: std::sync::Mutex<ffi::duckdb_connection>,
    /// `json_serialize_sql` prepared once on the guard connection (null until first use); used
    /// only while `guard_con` is held.
    serialize_stmt: std::sync::Mutex<ffi::duckdb_prepared_statement>,
    append_con: std::sync::Mutex<ffi::duckdb_connection>,
}

// SAFETY: DuckDB database handles are thread-safe; each raw connection is used only while its
// mutex is held (the guard is kept for the whole use, never just to copy the handle out).
unsafe impl Send for SealedDb {}
unsafe impl Sync for SealedDb {}

fn c(s: &str) -> Result<CString, SealError> {
    CString::new(s).map_err(|_| SealError::Open(format!("NUL byte in {s:?}")))
}

/// Settings applied at open, in order; `lock_configuration` comes last so nothing can change
/// them afterwards.
fn settings(spill: &Path, memory_limit: &str, threads: u32) -> Vec<(&'static str, String)> {
    vec![
        // Paths first: once external access is off they can no longer be set.
        ("temp_directory", spill.display().to_string()),
        ("max_memory", memory_limit.to_owned()),
        ("threads", threads.max(1).to_string()),
        ("preserve_insertion_order", "true".into()),
        ("autoinstall_known_extensions", "false".into()),
        ("autoload_known_extensions", "false".into()),
        ("allow_community_extensions", "false".into()),
        ("allow_unsigned_extensions", "false".into()),
        ("enable_external_access", "false".into()),
        ("lock_configuration", "true".into()),
    ]
}

impl SealedDb {
    pub fn open(spill: &Path, memory_limit: &str, threads: u32) -> Result<SealedDb, SealError> {
        // SAFETY: plain use of the DuckDB C API; every created object is destroyed on all paths.
        unsafe {
            let mut config: ffi::duckdb_config = ptr::null_mut();
            if ffi::duckdb_create_config(&mut config) != ffi::DuckDBSuccess {
                return Err(SealError::Open("duckdb_create_config failed".into()));
            }
            for (k, v) in settings(spill, memory_limit, threads) {
                let (ck, cv) = (c(k)?, c(&v)?);
                if ffi::duckdb_set_config(config, ck.as_ptr(), cv.as_ptr()) != ffi::DuckDBSuccess {
                    ffi::duckdb_destroy_config(&mut config);
                    return Err(SealError::Open(format!("setting {k} = {v} was refused")));
                }
            }
            let mut db: ffi::duckdb_database = ptr::null_mut();
            let mut err: *mut c_char = ptr::null_mut();
            let path = c(":memory:")?;
            let r = ffi::duckdb_open_ext(path.as_ptr(), &mut db, config, &mut err);
            ffi::duckdb_destroy_config(&mut config);
            if r != ffi::DuckDBSuccess {
                let msg = if err.is_null() {
                    "unknown error".to_owned()
                } else {
                    CStr::from_ptr(err).to_string_lossy().into_owned()
                };
                if !err.is_null() {
                    ffi::duckdb_free(err.cast());
                }
                return Err(SealError::Open(msg));
            }
            let mut con: ffi::duckdb_connection = ptr::null_mut();
            if ffi::duckdb_connect(db, &mut con) != ffi::DuckDBSuccess {
                ffi::duckdb_close(&mut db);
                return Err(SealError::Open("cannot connect".into()));
            }
            let mut append_con: ffi::duckdb_connection = ptr::null_mut();
            if ffi::duckdb_connect(db, &mut append_con) != ffi::DuckDBSuccess {
                ffi::duckdb_disconnect(&mut con);
                ffi::duckdb_close(&mut db);
                return Err(SealError::Open("cannot connect".into()));
            }
            Ok(SealedDb {
                db,
                guard_con: std::sync::Mutex::new(con),
                serialize_stmt: std::sync::Mutex::new(ptr::null_mut()),
                append_con: std::sync::Mutex::new(append_con),
            })
        }
    }

    /// A new duckdb-rs connection on this database.
    pub fn connect(&self) -> Result<duckdb::Connection, SealError> {
        // SAFETY: `self.db` is a valid, open database for as long as `self` lives, and
        // connections are dropped before `self` (the store owns both and drops them first).
        unsafe { duckdb::Connection::open_from_raw(self.db) }
            .map_err(|e| SealError::Open(e.to_string()))
    }

    /// Runs `f` with the raw bulk-append connection, one caller at a time.
    pub fn with_append_connection<T>(&self, f: impl FnOnce(ffi::duckdb_connection) -> T) -> T {
        let con = self.append_con.lock().unwrap_or_else(|e| e.into_inner());
        f(*con)
    }

    /// Parses and binds `sql` without running it: exactly one statement, and its kind.
    pub(super) fn classify(&self, sql: &str) -> Result<StatementKind, String> {
        let query =
            CString::new(sql).map_err(|_| "the statement contains a NUL byte".to_owned())?;
        let guard = self.guard_con.lock().unwrap_or_else(|e| e.into_inner());
        let con = *guard;
        // SAFETY: C API calls on a live connection, which the held mutex keeps to this caller;
        // extracted statements and the prepared statement are destroyed on every path.
        unsafe {
            let mut extracted: ffi::duckdb_extracted_statements = ptr::null_mut();
            let n = ffi::duckdb_extract_statements(con, query.as_ptr(), &mut extracted);
            if n == 0 {
                let e = ffi::duckdb_extract_statements_error(extracted);
                let msg = if e.is_null() {
                    "no statement found".to_owned()
                } else {
                    CStr::from_ptr(e).to_string_lossy().into_owned()
                };
                ffi::duckdb_destroy_extracted(&mut extracted);
                return Err(msg);
            }
            if n > 1 {
                ffi::duckdb_destroy_extracted(&mut extracted);
                return Err(format!("only one statement may run at a time; found {n}"));
            }
            let mut stmt: ffi::duckdb_prepared_statement = ptr::null_mut();
            let r = ffi::duckdb_prepare_extracted_statement(con, extracted, 0, &mut stmt);
            let outcome = if r != ffi::DuckDBSuccess {
                let e = ffi::duckdb_prepare_error(stmt);
                Err(if e.is_null() {
                    "the statement could not be prepared".to_owned()
                } else {
                    CStr::from_ptr(e).to_string_lossy().into_owned()
                })
            } else {
                let t = ffi::duckdb_prepared_statement_type(stmt);
                Ok(
                    if t == ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_SELECT {
                        StatementKind::Select
                    } else if t == ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_EXPLAIN {
                        StatementKind::Explain
                    } else {
                        StatementKind::Other(t as u32)
                    },
                )
            };
            ffi::duckdb_destroy_prepare(&mut stmt);
            ffi::duckdb_destroy_extracted(&mut extracted);
            outcome
        }
    }

    /// DuckDB's parse of `sql` as JSON (`json_serialize_sql`): the statements' trees, or the
    /// parser's error. The text is bound as a parameter and only parsed, never run.
    pub(super) fn serialize_sql(&self, sql: &str) -> Result<String, String> {
        let query =
            c("SELECT json_serialize_sql($1::VARCHAR, skip_null := true, skip_empty := true)")
                .map_err(|e| e.to_string())?;
        let guard = self.guard_con.lock().unwrap_or_else(|e| e.into_inner());
        let con = *guard;
        let mut prepared = self
            .serialize_stmt
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // SAFETY: C API calls on a live connection held by this caller; the prepared statement
        // lives until `drop`, the result and the returned string are freed on every path. The
        // text is passed with its length, so any byte (NUL included) is data.
        unsafe {
            if prepared.is_null() {
                let mut fresh: ffi::duckdb_prepared_statement = ptr::null_mut();
                if ffi::duckdb_prepare(con, query.as_ptr(), &mut fresh) != ffi::DuckDBSuccess {
                    let e = ffi::duckdb_prepare_error(fresh);
                    let msg = if e.is_null() {
                        "the parser could not be reached".to_owned()
                    } else {
                        CStr::from_ptr(e).to_string_lossy().into_owned()
                    };
                    ffi::duckdb_destroy_prepare(&mut fresh);
                    return Err(msg);
                }
                *prepared = fresh;
            }
            let stmt = *prepared;
            let bound = ffi::duckdb_bind_varchar_length(
                stmt,
                1,
                sql.as_ptr().cast::<c_char>(),
                sql.len() as ffi::idx_t,
            );
            if bound != ffi::DuckDBSuccess {
                return Err("the statement could not be passed to the parser".into());
            }
            let mut result: ffi::duckdb_result = std::mem::zeroed();
            let r = ffi::duckdb_execute_prepared(stmt, &mut result);
            let out = if r != ffi::DuckDBSuccess {
                let e = ffi::duckdb_result_error(&mut result);
                Err(if e.is_null() {
                    "the parser failed".to_owned()
                } else {
                    CStr::from_ptr(e).to_string_lossy().into_owned()
                })
            } else if ffi::duckdb_row_count(&mut result) != 1
                || ffi::duckdb_value_is_null(&mut result, 0, 0)
            {
                Err("the parser gave no answer".to_owned())
            } else {
                let v = ffi::duckdb_value_varchar(&mut result, 0, 0);
                if v.is_null() {
                    Err("the parser gave no answer".to_owned())
                } else {
                    let text = CStr::from_ptr(v).to_string_lossy().into_owned();
                    ffi::duckdb_free(v.cast());
                    Ok(text)
                }
            };
            ffi::duckdb_destroy_result(&mut result);
            out
        }
    }
}

impl Drop for SealedDb {
    fn drop(&mut self) {
        // SAFETY: the handles were created in `open` and are closed exactly once, here.
        unsafe {
            let mut stmt = *self
                .serialize_stmt
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if !stmt.is_null() {
                ffi::duckdb_destroy_prepare(&mut stmt);
            }
            let mut con = *self.guard_con.lock().unwrap_or_else(|e| e.into_inner());
            ffi::duckdb_disconnect(&mut con);
            let mut con = *self.append_con.lock().unwrap_or_else(|e| e.into_inner());
            ffi::duckdb_disconnect(&mut con);
            ffi::duckdb_close(&mut self.db);
        }
    }
}

/// Proves the seal: reading a host file, loading an extension and changing a setting must all
/// fail. `probe_file` is a file that certainly exists (loom's own config or executable).
pub fn self_test(conn: &duckdb::Connection, probe_file: &Path) -> Result<(), SealError> {
    let path = probe_file.display().to_string().replace('\'', "''");
    let attempts = [
        format!("SELECT * FROM read_text('{path}')"),
        format!("SELECT * FROM read_csv('{path}')"),
        "SET enable_external_access = true".to_owned(),
        "INSTALL httpfs".to_owned(),
        "SELECT * FROM glob('/*')".to_owned(),
    ];
    for sql in attempts {
        if conn.execute_batch(&sql).is_ok() {
            return Err(SealError::NotSealed(format!("`{sql}` succeeded")));
        }
    }
    Ok(())
}
