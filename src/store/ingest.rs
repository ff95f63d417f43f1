//! Ingest: a typed table is created with exactly the inferred types and filled through the
//! appender in row order (so insertion order is kept and the first rows are the samples).
//! Text cells of DATE, TIMESTAMP, DECIMAL and JSON columns are cast by the engine itself.

use super::{Result, quote_ident};
use crate::intercept::table::{Cell, Table};
use duckdb::types::Value as Db;

fn to_db(cell: &Cell) -> Db {
    match cell {
        Cell::Null => Db::Null,
        Cell::Bool(b) => Db::Boolean(*b),
        Cell::Int(i) => Db::BigInt(*i),
        Cell::UInt(u) => Db::UBigInt(*u),
        Cell::Huge(h) => Db::HugeInt(*h),
        Cell::Double(d) => Db::Double(*d),
        Cell::Text(s) => Db::Text(s.clone()),
    }
}

/// Creates table `name` and appends every row; returns the row count.
pub fn create_and_append(conn: &duckdb::Connection, name: &str, table: &Table) -> Result<u64> {
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
    let appended = (|| -> Result<u64> {
        let mut app = conn.appender(name)?;
        for row in &table.rows {
            app.append_row(duckdb::appender_params_from_iter(row.iter().map(to_db)))?;
        }
        app.flush()?;
        Ok(table.rows.len() as u64)
    })();
    if appended.is_err() {
        let _ = conn.execute_batch(&format!("DROP TABLE IF EXISTS {}", quote_ident(name)));
    }
    appended
}
