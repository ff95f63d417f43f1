//! Ingest: a typed table is created with exactly the inferred types and filled in row order
//! (so insertion order is kept and the first rows are the samples). Cells are written column
//! by column into the engine's own vectors, one data chunk at a time, through the C API's
//! data-chunk appender. Text cells of DATE, TIMESTAMP and JSON columns are cast by the
//! engine itself; a cell that does not fit its column fails the whole ingest, never guessed.
//! A column's note (say, the offsets a UTC timestamp column was converted from) becomes the
//! column's comment in the engine's catalog, where profiling and `loom_describe` read it.

use super::sealed::SealedDb;
use super::{Result, StoreError, quote_ident};
use crate::intercept::table::{Cell, ColumnType, Table};
use duckdb::ffi;
use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::ptr;

/// The vector type a column is filled through.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lane {
    Bool,
    BigInt,
    UBigInt,
    HugeInt,
    Double,
    /// Text, cast by the engine to the column's type where that is not VARCHAR.
    Text,
}

impl Lane {
    fn of(ty: ColumnType) -> Lane {
        match ty {
            ColumnType::Boolean => Lane::Bool,
            ColumnType::BigInt => Lane::BigInt,
            ColumnType::UBigInt => Lane::UBigInt,
            ColumnType::HugeInt => Lane::HugeInt,
            ColumnType::Double => Lane::Double,
            ColumnType::Decimal { .. }
            | ColumnType::Date
            | ColumnType::Timestamp
            | ColumnType::TimestampUtc
            | ColumnType::Varchar
            | ColumnType::Json => Lane::Text,
        }
    }

    fn duckdb_type(self) -> ffi::duckdb_type {
        match self {
            Lane::Bool => ffi::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN,
            Lane::BigInt => ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT,
            Lane::UBigInt => ffi::DUCKDB_TYPE_DUCKDB_TYPE_UBIGINT,
            Lane::HugeInt => ffi::DUCKDB_TYPE_DUCKDB_TYPE_HUGEINT,
            Lane::Double => ffi::DUCKDB_TYPE_DUCKDB_TYPE_DOUBLE,
            Lane::Text => ffi::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR,
        }
    }
}

/// Creates table `name` and appends every row; returns the row count.
pub fn create_and_append(
    conn: &duckdb::Connection,
    db: &SealedDb,
    name: &str,
    table: &Table,
) -> Result<u64> {
    let cols: Vec<String> = table
        .columns
        .iter()
        .map(|c| format!("{} {}", quote_ident(&c.name), c.ty.sql()))
        .collect();
    conn.execute_batch(&format!(
        "CREATE TABLE {} ({})",
        quote_ident(name),
        cols.join(", ")
    ))?;
    let comments: String = table
        .columns
        .iter()
        .filter_map(|c| {
            let note = c.note.as_ref()?;
            Some(format!(
                "COMMENT ON COLUMN {}.{} IS {};",
                quote_ident(name),
                quote_ident(&c.name),
                quote_literal(note)
            ))
        })
        .collect();
    let commented = if comments.is_empty() {
        Ok(())
    } else {
        conn.execute_batch(&comments).map_err(StoreError::from)
    };
    let appended =
        commented.and_then(|()| db.with_append_connection(|con| append(con, name, table)));
    if appended.is_err() {
        let _ = conn.execute_batch(&format!("DROP TABLE IF EXISTS {}", quote_ident(name)));
    }
    appended
}

/// `s` as an SQL string literal.
fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Everything the C API handed out for one append, released on every path.
struct Handles {
    appender: ffi::duckdb_appender,
    types: Vec<ffi::duckdb_logical_type>,
    chunk: ffi::duckdb_data_chunk,
}

impl Handles {
    fn error(&self, what: &str) -> StoreError {
        // SAFETY: the appender is live; its error text belongs to it and is copied at once.
        let detail = unsafe {
            let e = ffi::duckdb_appender_error(self.appender);
            if e.is_null() {
                String::new()
            } else {
                format!(": {}", CStr::from_ptr(e).to_string_lossy())
            }
        };
        StoreError::Engine(format!("{what}{detail}"))
    }
}

impl Drop for Handles {
    fn drop(&mut self) {
        // SAFETY: each handle was created by the C API in `append` and is destroyed once.
        unsafe {
            if !self.chunk.is_null() {
                ffi::duckdb_destroy_data_chunk(&mut self.chunk);
            }
            for t in &mut self.types {
                ffi::duckdb_destroy_logical_type(t);
            }
            if !self.appender.is_null() {
                ffi::duckdb_appender_destroy(&mut self.appender);
            }
        }
    }
}

fn append(con: ffi::duckdb_connection, name: &str, table: &Table) -> Result<u64> {
    let cname = CString::new(name)
        .map_err(|_| StoreError::Engine(format!("NUL byte in table name {name:?}")))?;
    let lanes: Vec<Lane> = table.columns.iter().map(|c| Lane::of(c.ty)).collect();
    let mut h = Handles {
        appender: ptr::null_mut(),
        types: Vec::with_capacity(lanes.len()),
        chunk: ptr::null_mut(),
    };
    // SAFETY: C API calls on a live connection; every object created is owned by `h`, and
    // every write stays inside a vector of the chunk's capacity and the column's own type.
    unsafe {
        if ffi::duckdb_appender_create(con, ptr::null(), cname.as_ptr(), &mut h.appender)
            != ffi::DuckDBSuccess
        {
            return Err(h.error("cannot open an appender"));
        }
        for lane in &lanes {
            h.types
                .push(ffi::duckdb_create_logical_type(lane.duckdb_type()));
        }
        h.chunk = ffi::duckdb_create_data_chunk(h.types.as_mut_ptr(), h.types.len() as u64);
        if h.chunk.is_null() {
            return Err(StoreError::Engine("cannot create a data chunk".into()));
        }
        let capacity = (ffi::duckdb_vector_size() as usize).max(1);
        let rows = table.rows();
        let mut start = 0;
        while start < rows {
            let end = rows.min(start + capacity);
            ffi::duckdb_data_chunk_reset(h.chunk);
            for (c, lane) in lanes.iter().enumerate() {
                let vector = ffi::duckdb_data_chunk_get_vector(h.chunk, c as u64);
                fill(vector, *lane, table, c, start..end)?;
            }
            ffi::duckdb_data_chunk_set_size(h.chunk, (end - start) as u64);
            if ffi::duckdb_append_data_chunk(h.appender, h.chunk) != ffi::DuckDBSuccess {
                return Err(h.error("appending rows failed"));
            }
            start = end;
        }
        if ffi::duckdb_appender_flush(h.appender) != ffi::DuckDBSuccess {
            return Err(h.error("flushing rows failed"));
        }
    }
    Ok(table.rows() as u64)
}

/// Writes one column's cells for `rows` into `vector`, which has the lane's type and room for
/// `rows.len()` values.
unsafe fn fill(
    vector: ffi::duckdb_vector,
    lane: Lane,
    table: &Table,
    col: usize,
    rows: std::ops::Range<usize>,
) -> Result<()> {
    // SAFETY (whole body): `data` points at `rows.len()` values of the lane's physical type
    // (the caller's contract), and `i` stays below `rows.len()`.
    unsafe {
        let data = ffi::duckdb_vector_get_data(vector);
        let mut validity: *mut u64 = ptr::null_mut();
        for (i, cell) in table.cells(col, rows).enumerate() {
            match (lane, cell) {
                (_, Cell::Null) => {
                    if validity.is_null() {
                        ffi::duckdb_vector_ensure_validity_writable(vector);
                        validity = ffi::duckdb_vector_get_validity(vector);
                    }
                    ffi::duckdb_validity_set_row_invalid(validity, i as u64);
                }
                (Lane::Bool, Cell::Bool(b)) => *data.cast::<bool>().add(i) = b,
                (Lane::BigInt, Cell::Int(v)) => *data.cast::<i64>().add(i) = v,
                (Lane::UBigInt, Cell::UInt(v)) => *data.cast::<u64>().add(i) = v,
                (Lane::HugeInt, Cell::Huge(v)) => {
                    *data.cast::<ffi::duckdb_hugeint>().add(i) = ffi::duckdb_hugeint {
                        lower: v as u64,
                        upper: (v >> 64) as i64,
                    }
                }
                (Lane::Double, Cell::Double(v)) => *data.cast::<f64>().add(i) = v,
                // A Rust string is valid UTF-8 already: no second check.
                (Lane::Text, Cell::Text(s)) => ffi::duckdb_unsafe_vector_assign_string_element_len(
                    vector,
                    i as u64,
                    s.as_ptr().cast::<c_char>(),
                    s.len() as u64,
                ),
                (_, other) => {
                    let name = table.columns.get(col).map(|c| c.name.as_str());
                    return Err(StoreError::Engine(format!(
                        "cell {other:?} does not fit column {name:?}"
                    )));
                }
            }
        }
    }
    Ok(())
}
