//! Tables in and out of the engine as Arrow batches, for history and Parquet exports. Out: a
//! table is streamed (one engine vector at a time, never the whole table at once) on loom's
//! own archive connection, so archiving never holds up the model's queries or ingests. In: the
//! batches a Parquet file gives are appended through the engine's appender into a staging
//! table of the types the appender fills, then cast to the types the table had, so a dataset
//! comes back exactly as it was (HUGEINT, JSON, DECIMAL and the rest). No statement names a
//! file: the engine stays sealed.

use super::parquet_io::{self, ParquetError};
use super::{DatasetMeta, Result, Store, StoreError, quote_ident};
use duckdb::arrow::array::{Array, ArrayRef, RecordBatch};
use duckdb::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use std::sync::Arc;

/// A table's name, in a schema (a loaded past session's) or in `main`.
pub fn qualified(schema: Option<&str>, name: &str) -> String {
    match schema {
        Some(s) => format!("{}.{}", quote_ident(s), quote_ident(name)),
        None => quote_ident(name),
    }
}

impl Store {
    /// Streams the rows of `from` (a quoted table name, or a parenthesized query loom wrote)
    /// as Arrow batches to `f`, which pulls them one by one.
    pub fn with_batches<T>(
        &self,
        from: &str,
        f: impl FnOnce(
            SchemaRef,
            &mut dyn FnMut() -> Option<std::result::Result<RecordBatch, String>>,
        ) -> T,
    ) -> Result<T> {
        let conn = Self::lock(&self.archive);
        let mut stmt = conn.prepare(&format!("SELECT * FROM {from}"))?;
        let mut stream = stmt.stream_arrow([])?;
        let arrow_schema = stream.get_schema();
        let mut next = || stream.next().map(|b| b.map_err(|e| e.to_string()));
        Ok(f(arrow_schema, &mut next))
    }

    /// Writes the rows of `from` (see [`Store::with_batches`]) to a Parquet file at `path`
    /// with `metadata` in its footer, telling `progress` the rows written so far; the rows.
    pub fn write_parquet(
        &self,
        from: &str,
        path: &std::path::Path,
        metadata: &[(&str, String)],
        progress: &mut dyn FnMut(u64),
    ) -> Result<u64> {
        self.with_batches(from, |arrow_schema, next| {
            let mut rows = 0u64;
            let mut counted = || {
                let b = next()?;
                if let Ok(batch) = &b {
                    rows += batch.num_rows() as u64;
                    if rows % 10_240 < batch.num_rows() as u64 {
                        progress(rows);
                    }
                }
                Some(b)
            };
            parquet_io::write(path, arrow_schema, metadata, &mut counted)
        })?
        .map_err(|e| StoreError::Io(format!("cannot write {}: {e}", path.display())))
    }

    /// Creates `schema.name` (`main` without a schema) from a Parquet file's batches, each
    /// column cast to its type in `types` (the engine's spelling) where one is given. Nothing
    /// is left behind when it fails, and no reader ever sees the table half filled. Safe to
    /// call from several threads at once, for different tables.
    pub fn load_parquet(
        &self,
        schema: Option<&str>,
        name: &str,
        reader: parquet_io::Reader,
        types: &[(String, String)],
    ) -> Result<u64> {
        let staged = staged_columns(&reader)?;
        if !types.is_empty()
            && (types.len() != staged.len()
                || types.iter().zip(&staged).any(|((a, _), (b, _))| a != b))
        {
            return Err(StoreError::Io(
                "the file's columns are not those its description lists".into(),
            ));
        }
        // A connection of its own: files load side by side, and no ingest waits for them.
        let writer = self.db.connect()?;
        let target = qualified(schema, name);
        if types.iter().zip(&staged).all(|((_, ty), (_, s))| ty == s) {
            // Every column comes out of the appender as the type the table had: the rows go
            // straight into the table, with no staging copy and no cast.
            return in_transaction(&writer, || {
                writer
                    .execute_batch(&format!("CREATE TABLE {target} ({})", column_list(&staged)))?;
                append_batches(&writer, schema, name, reader)
            });
        }
        let staging = format!("_loom_load_{}", self.tick());
        writer.execute_batch(&format!(
            "CREATE TABLE {} ({})",
            quote_ident(&staging),
            column_list(&staged)
        ))?;
        let filled = (|| -> Result<u64> {
            let rows = append_batches(&writer, None, &staging, reader)?;
            let select: Vec<String> = staged
                .iter()
                .enumerate()
                .map(|(i, (n, staged_ty))| {
                    let q = quote_ident(n);
                    match types.get(i) {
                        Some((_, ty)) if ty != staged_ty => format!("CAST({q} AS {ty}) AS {q}"),
                        _ => q,
                    }
                })
                .collect();
            writer.execute_batch(&format!(
                "CREATE TABLE {target} AS SELECT {} FROM {}",
                select.join(", "),
                quote_ident(&staging)
            ))?;
            Ok(rows)
        })();
        let _ = writer.execute_batch(&format!("DROP TABLE IF EXISTS {}", quote_ident(&staging)));
        filled
    }

    /// Makes `schema` for a past session's tables.
    pub fn create_schema(&self, schema: &str) -> Result<()> {
        Self::lock(&self.writer).execute_batch(&format!(
            "CREATE SCHEMA IF NOT EXISTS {}",
            quote_ident(schema)
        ))?;
        Ok(())
    }

    /// The schemas in the engine other than its own (`main`, the system ones).
    pub fn schemas(&self) -> Vec<String> {
        let conn = Self::lock(&self.writer);
        let Ok(mut stmt) = conn.prepare(
            "SELECT schema_name FROM duckdb_schemas() WHERE NOT internal AND database_name = current_database() AND schema_name <> 'main' ORDER BY 1",
        ) else {
            return Vec::new();
        };
        stmt.query_map([], |r| r.get::<_, String>(0))
            .map(|rows| rows.flatten().collect())
            .unwrap_or_default()
    }

    /// Drops `schema` and every table in it.
    pub fn drop_schema(&self, schema: &str) -> Result<()> {
        Self::lock(&self.writer).execute_batch(&format!(
            "DROP SCHEMA IF EXISTS {} CASCADE",
            quote_ident(schema)
        ))?;
        Ok(())
    }

    /// Enters a table loaded from the past in the catalog under its own name, as it was.
    pub fn register_loaded(&self, mut meta: DatasetMeta) -> DatasetMeta {
        meta.last_used = self.tick();
        // A loaded name is taken: loom never draws it for a new dataset.
        Self::lock(&self.names).claim(&meta.dataset_ref);
        Self::lock(&self.catalog).insert(meta.dataset_ref.clone(), meta.clone());
        self.report_created(&meta);
        meta
    }

    /// Appends a Parquet file's rows to `schema.table` by column name (`main` without a
    /// schema), creating it with the file's columns when it does not exist; the rows added.
    /// All or nothing: a file that fails halfway adds no row.
    pub fn append_parquet(
        &self,
        schema: Option<&str>,
        table: &str,
        reader: parquet_io::Reader,
    ) -> Result<u64> {
        let staged = staged_columns(&reader)?;
        // A connection of its own: files load side by side, and no ingest waits for them.
        let writer = self.db.connect()?;
        let existing = table_columns(&writer, schema.unwrap_or("main"), table)?;
        if existing.as_ref().is_none_or(|cols| *cols == staged) {
            // The file's columns are the table's, in order and type: its batches go straight
            // into the table.
            let target = qualified(schema, table);
            return in_transaction(&writer, || {
                if existing.is_none() {
                    writer.execute_batch(&format!(
                        "CREATE TABLE {target} ({})",
                        column_list(&staged)
                    ))?;
                }
                append_batches(&writer, schema, table, reader)
            });
        }
        let staging = format!("_loom_append_{}", self.tick());
        let rows = self.load_parquet(None, &staging, reader, &[])?;
        let target = qualified(schema, table);
        let staged = quote_ident(&staging);
        let moved = writer.execute_batch(&format!(
            "INSERT INTO {target} BY NAME SELECT * FROM {staged}"
        ));
        let _ = writer.execute_batch(&format!("DROP TABLE IF EXISTS {staged}"));
        moved?;
        Ok(rows)
    }
}

/// A file's columns and the engine type the appender fills each with.
fn staged_columns(reader: &parquet_io::Reader) -> Result<Vec<(String, String)>> {
    reader
        .schema
        .fields()
        .iter()
        .map(|f| {
            parquet_io::engine_type(f.data_type())
                .map(|ty| (f.name().clone(), ty))
                .ok_or_else(|| {
                    StoreError::Io(format!(
                        "column `{}` has a type loom cannot read back ({})",
                        f.name(),
                        f.data_type()
                    ))
                })
        })
        .collect()
}

/// `"name" TYPE, …` for a `CREATE TABLE`.
fn column_list(columns: &[(String, String)]) -> String {
    columns
        .iter()
        .map(|(n, t)| format!("{} {t}", quote_ident(n)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The columns of `schema.table` with their types in the engine's spelling, in order, or
/// `None` when there is no such table.
fn table_columns(
    conn: &duckdb::Connection,
    schema: &str,
    table: &str,
) -> Result<Option<Vec<(String, String)>>> {
    let mut stmt = conn.prepare(
        "SELECT column_name, data_type FROM duckdb_columns() \
         WHERE database_name = current_database() AND schema_name = ? AND table_name = ? \
         ORDER BY column_index",
    )?;
    let columns: Vec<(String, String)> = stmt
        .query_map([schema, table], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<std::result::Result<_, _>>()?;
    Ok((!columns.is_empty()).then_some(columns))
}

/// Runs `f` in one transaction on `conn`: committed when it succeeds, rolled back (leaving
/// nothing) when it fails.
fn in_transaction<T>(conn: &duckdb::Connection, f: impl FnOnce() -> Result<T>) -> Result<T> {
    conn.execute_batch("BEGIN TRANSACTION")?;
    match f() {
        Ok(v) => match conn.execute_batch("COMMIT") {
            Ok(()) => Ok(v),
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                Err(e.into())
            }
        },
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Appends every batch of `reader` to `schema.table` through the engine's appender; the rows.
fn append_batches(
    conn: &duckdb::Connection,
    schema: Option<&str>,
    table: &str,
    reader: parquet_io::Reader,
) -> Result<u64> {
    let mut app = conn.appender_to_db(table, schema.unwrap_or("main"))?;
    let mut rows = 0u64;
    for batch in reader {
        let batch = plain(batch.map_err(|e| StoreError::Io(e.to_string()))?)
            .map_err(|e| StoreError::Io(e.to_string()))?;
        rows += batch.num_rows() as u64;
        app.append_record_batch(batch)?;
    }
    app.flush()?;
    Ok(rows)
}

/// The batch with dictionary columns as their plain values (the appender takes no dictionary).
fn plain(batch: RecordBatch) -> std::result::Result<RecordBatch, ParquetError> {
    if !batch
        .schema()
        .fields()
        .iter()
        .any(|f| matches!(f.data_type(), DataType::Dictionary(..)))
    {
        return Ok(batch);
    }
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for (f, c) in batch.schema().fields().iter().zip(batch.columns()) {
        match f.data_type() {
            DataType::Dictionary(_, values) => {
                columns.push(duckdb::arrow::compute::cast(c, values)?);
                fields.push(Field::new(
                    f.name(),
                    (**values).clone(),
                    c.null_count() > 0 || f.is_nullable(),
                ));
            }
            _ => {
                columns.push(c.clone());
                fields.push((**f).clone());
            }
        }
    }
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use duckdb::arrow::array::UInt64Array;

    /// The rows of `sql` on the store's own connection, as text.
    fn rows(store: &Store, sql: &str) -> Vec<Vec<String>> {
        let conn = Store::lock(&store.writer);
        let mut stmt = conn.prepare(sql).unwrap();
        let mut out = Vec::new();
        let mut q = stmt.query([]).unwrap();
        while let Some(r) = q.next().unwrap() {
            let width = r.as_ref().column_count();
            out.push(
                (0..width)
                    .map(|i| {
                        r.get::<_, Option<String>>(i)
                            .unwrap()
                            .unwrap_or_else(|| "NULL".into())
                    })
                    .collect(),
            );
        }
        out
    }

    /// A Parquet file of `n` rows in one UBIGINT column `n`, written by the store from the
    /// engine (so in several row groups when `n` is large).
    fn numbers(store: &Store, dir: &std::path::Path, name: &str, n: u64) -> std::path::PathBuf {
        let path = dir.join(format!("{name}.parquet"));
        store
            .write_parquet(
                &format!("(SELECT range::UBIGINT AS n FROM range({n}))"),
                &path,
                &[],
                &mut |_| {},
            )
            .unwrap();
        path
    }

    /// `path` with the header of its second row group's first page overwritten: the file
    /// opens and its first row group reads, then reading fails.
    fn damage_second_row_group(path: &std::path::Path) {
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let file = std::fs::File::open(path).unwrap();
        let reader = SerializedFileReader::new(file).unwrap();
        let meta = reader.metadata();
        assert!(meta.num_row_groups() > 1, "the file needs two row groups");
        let at = meta.row_group(1).column(0).data_page_offset() as usize;
        let mut bytes = std::fs::read(path).unwrap();
        for b in &mut bytes[at..at + 16] {
            *b = 0xff;
        }
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn a_file_of_the_tables_types_goes_straight_in_and_keeps_them() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::for_tests(dir.path());
        store
            .materialize(
                "SELECT range::BIGINT AS id, (range * 1.5)::DECIMAL(18,2) AS amount, \
                 'x' || range AS label, TIMESTAMP '2026-01-01' + INTERVAL (range) SECOND AS placed \
                 FROM range(5000)",
                "orders",
            )
            .unwrap();
        let path = dir.path().join("orders.parquet");
        store
            .write_parquet("\"orders\"", &path, &[], &mut |_| {})
            .unwrap();
        let types = vec![
            ("id".to_owned(), "BIGINT".to_owned()),
            ("amount".to_owned(), "DECIMAL(18,2)".to_owned()),
            ("label".to_owned(), "VARCHAR".to_owned()),
            ("placed".to_owned(), "TIMESTAMP".to_owned()),
        ];
        let fresh = Store::for_tests(&dir.path().join("fresh"));
        let n = fresh
            .load_parquet(
                None,
                "orders",
                parquet_io::Reader::open(&path).unwrap(),
                &types,
            )
            .unwrap();
        assert_eq!(n, 5000);
        let got = rows(
            &fresh,
            "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = 'orders' \
             ORDER BY column_index",
        );
        let want: Vec<Vec<String>> = types
            .iter()
            .map(|(a, b)| vec![a.clone(), b.clone()])
            .collect();
        assert_eq!(got, want);
        assert_eq!(
            rows(
                &fresh,
                "SELECT count(*)::VARCHAR, sum(amount)::VARCHAR, max(label), max(placed)::VARCHAR FROM orders"
            ),
            rows(
                &store,
                "SELECT count(*)::VARCHAR, sum(amount)::VARCHAR, max(label), max(placed)::VARCHAR FROM orders"
            )
        );
        // A description that asks for another type still gets it, through a cast.
        let wider = vec![
            ("id".to_owned(), "HUGEINT".to_owned()),
            ("amount".to_owned(), "DECIMAL(18,2)".to_owned()),
            ("label".to_owned(), "VARCHAR".to_owned()),
            ("placed".to_owned(), "TIMESTAMP".to_owned()),
        ];
        fresh
            .load_parquet(
                None,
                "wider",
                parquet_io::Reader::open(&path).unwrap(),
                &wider,
            )
            .unwrap();
        assert_eq!(
            rows(
                &fresh,
                "SELECT data_type FROM duckdb_columns() WHERE table_name = 'wider' AND column_name = 'id'"
            ),
            vec![vec!["HUGEINT".to_owned()]]
        );
    }

    #[test]
    fn appending_a_file_adds_all_its_rows_or_none() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::for_tests(dir.path());
        let good = numbers(&store, dir.path(), "good", 10);
        let big = numbers(&store, dir.path(), "big", 130_000);
        damage_second_row_group(&big);
        // Its first row group still reads: the failure comes after rows were appended.
        let mut first = parquet_io::Reader::open(&big).unwrap();
        let batch = first.next().unwrap().unwrap();
        let col = batch
            .column(0)
            .as_any()
            .downcast_ref::<UInt64Array>()
            .unwrap();
        assert_eq!(col.value(0), 0);

        // Into a table that does not exist yet: it is made with the file's columns.
        let n = store
            .append_parquet(None, "t", parquet_io::Reader::open(&good).unwrap())
            .unwrap();
        assert_eq!(n, 10);
        let broken = store.append_parquet(None, "t", parquet_io::Reader::open(&big).unwrap());
        assert!(broken.is_err());
        assert_eq!(
            rows(&store, "SELECT count(*)::VARCHAR, sum(n)::VARCHAR FROM t"),
            vec![vec!["10".to_owned(), "45".to_owned()]],
            "a file that fails halfway adds no row"
        );
        let again = store
            .append_parquet(None, "t", parquet_io::Reader::open(&good).unwrap())
            .unwrap();
        assert_eq!(again, 10);
        assert_eq!(
            rows(&store, "SELECT count(*)::VARCHAR FROM t"),
            vec![vec!["20".to_owned()]]
        );
        // Into a table of other columns: by name, through a staging table.
        store
            .materialize("SELECT 1::UBIGINT AS n, 'a' AS tag", "other")
            .unwrap();
        store
            .append_parquet(None, "other", parquet_io::Reader::open(&good).unwrap())
            .unwrap();
        assert_eq!(
            rows(
                &store,
                "SELECT count(*)::VARCHAR, count(tag)::VARCHAR FROM other"
            ),
            vec![vec!["11".to_owned(), "1".to_owned()]]
        );
        // Loading a file that fails halfway leaves no table behind.
        let loaded = store.load_parquet(None, "half", parquet_io::Reader::open(&big).unwrap(), &[]);
        assert!(loaded.is_err());
        assert!(
            rows(
                &store,
                "SELECT table_name FROM duckdb_tables() WHERE table_name LIKE '%half%' OR table_name LIKE '_loom_%'"
            )
            .is_empty()
        );
    }
}
