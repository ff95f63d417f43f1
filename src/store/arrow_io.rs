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
    /// is left behind when it fails.
    pub fn load_parquet(
        &self,
        schema: Option<&str>,
        name: &str,
        reader: parquet_io::Reader,
        types: &[(String, String)],
    ) -> Result<u64> {
        let fields = reader.schema.fields().clone();
        let mut staged = Vec::with_capacity(fields.len());
        for f in fields.iter() {
            let Some(ty) = parquet_io::engine_type(f.data_type()) else {
                return Err(StoreError::Io(format!(
                    "column `{}` has a type loom cannot read back ({})",
                    f.name(),
                    f.data_type()
                )));
            };
            staged.push((f.name().clone(), ty));
        }
        if !types.is_empty()
            && (types.len() != staged.len()
                || types.iter().zip(&staged).any(|((a, _), (b, _))| a != b))
        {
            return Err(StoreError::Io(
                "the file's columns are not those its description lists".into(),
            ));
        }
        let staging = format!("_loom_load_{}", self.tick());
        let writer = Self::lock(&self.writer);
        let columns: Vec<String> = staged
            .iter()
            .map(|(n, t)| format!("{} {t}", quote_ident(n)))
            .collect();
        writer.execute_batch(&format!(
            "CREATE TABLE {} ({})",
            quote_ident(&staging),
            columns.join(", ")
        ))?;
        let filled = (|| -> Result<u64> {
            let mut app = writer.appender(&staging)?;
            let mut rows = 0u64;
            for batch in reader {
                let batch = plain(batch.map_err(|e| StoreError::Io(e.to_string()))?)
                    .map_err(|e| StoreError::Io(e.to_string()))?;
                rows += batch.num_rows() as u64;
                app.append_record_batch(batch)?;
            }
            app.flush()?;
            drop(app);
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
                "CREATE TABLE {} AS SELECT {} FROM {}",
                qualified(schema, name),
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
    pub fn append_parquet(
        &self,
        schema: Option<&str>,
        table: &str,
        reader: parquet_io::Reader,
    ) -> Result<u64> {
        let staging = format!("_loom_append_{}", self.tick());
        let rows = self.load_parquet(None, &staging, reader, &[])?;
        let writer = Self::lock(&self.writer);
        let target = qualified(schema, table);
        let staged = quote_ident(&staging);
        let moved = writer.execute_batch(&format!(
            "CREATE TABLE IF NOT EXISTS {target} AS SELECT * FROM {staged} WITH NO DATA; \
             INSERT INTO {target} BY NAME SELECT * FROM {staged}"
        ));
        let _ = writer.execute_batch(&format!("DROP TABLE IF EXISTS {staged}"));
        moved?;
        Ok(rows)
    }
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
