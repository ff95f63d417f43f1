//! Parquet files (history archives, exports) written and read by loom's own code (arrow-rs), never by the engine: the
//! engine is sealed and has no file access. A file is written under a temporary name in its
//! folder (0600) and renamed once complete, so a reader never sees half a file; its footer
//! carries loom's description of the table (`loom.*` key-value metadata) for any reader.

use duckdb::arrow::array::RecordBatch;
use duckdb::arrow::datatypes::{DataType, SchemaRef, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use std::path::Path;

/// Rows per row group: the unit a reader skips by, and what the writer holds before it flushes.
const ROW_GROUP_ROWS: usize = 122_880;
/// Rows per batch handed back when reading.
const READ_BATCH_ROWS: usize = 8_192;

#[derive(Debug, thiserror::Error)]
pub enum ParquetError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("not a readable Parquet file: {0}")]
    Format(#[from] parquet::errors::ParquetError),
    #[error("{0}")]
    Arrow(#[from] duckdb::arrow::error::ArrowError),
    #[error("{0}")]
    Source(String),
    /// The reader gave up on the file's contents (arrow-rs panics on some damaged files; the
    /// panic is caught here and becomes this error, so a damaged file never ends loom).
    #[error("not a readable Parquet file: its contents are damaged")]
    Damaged,
}

/// Runs `f`, turning a panic of the Parquet reader into [`ParquetError::Damaged`].
fn guarded<T>(f: impl FnOnce() -> Result<T, ParquetError>) -> Result<T, ParquetError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(Err(ParquetError::Damaged))
}

/// Writes the batches `next` yields (until `None`) to `path`, with `metadata` in the footer;
/// returns the rows written. Nothing appears at `path` unless the whole file was written.
pub fn write(
    path: &Path,
    schema: SchemaRef,
    metadata: &[(&str, String)],
    next: &mut dyn FnMut() -> Option<Result<RecordBatch, String>>,
) -> Result<u64, ParquetError> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = tempfile::Builder::new()
        .prefix(".part-")
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o600))
        .tempfile_in(dir)?;
    let props = WriterProperties::builder()
        .set_compression(parquet::basic::Compression::SNAPPY)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_key_value_metadata(Some(
            metadata
                .iter()
                .map(|(k, v)| KeyValue::new((*k).to_owned(), v.clone()))
                .collect(),
        ))
        .build();
    let mut writer = ArrowWriter::try_new(tmp.as_file().try_clone()?, schema, Some(props))?;
    let mut rows = 0u64;
    while let Some(batch) = next() {
        let batch = batch.map_err(ParquetError::Source)?;
        rows += batch.num_rows() as u64;
        writer.write(&batch)?;
    }
    writer.close()?;
    tmp.as_file().sync_data()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(rows)
}

/// Writes one batch to `path` (see [`write`]); the rows.
pub fn write_batch(
    path: &Path,
    batch: RecordBatch,
    metadata: &[(&str, String)],
) -> Result<u64, ParquetError> {
    let schema = batch.schema();
    let mut once = Some(Ok(batch));
    write(path, schema, metadata, &mut || once.take())
}

/// An open Parquet file: its schema, its `loom.*` metadata and its batches.
pub struct Reader {
    pub schema: SchemaRef,
    pub metadata: Vec<(String, String)>,
    pub rows: u64,
    batches: parquet::arrow::arrow_reader::ParquetRecordBatchReader,
    /// Set once the file proved damaged: nothing more is read from it.
    failed: bool,
}

impl Reader {
    /// Opens `path` (a regular file; a symlink is refused by the caller's walk).
    pub fn open(path: &Path) -> Result<Reader, ParquetError> {
        guarded(|| Self::open_unguarded(path, 0))
    }

    /// Opens `path` (see [`Reader::open`]) to read its rows after the first `skip`; the
    /// schema, metadata and `rows` are still the whole file's.
    pub fn open_after(path: &Path, skip: u64) -> Result<Reader, ParquetError> {
        guarded(|| Self::open_unguarded(path, skip))
    }

    fn open_unguarded(path: &Path, skip: u64) -> Result<Reader, ParquetError> {
        let file = std::fs::File::open(path)?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(file)?;
        let meta = builder.metadata().file_metadata();
        let rows = meta.num_rows().max(0) as u64;
        let metadata = meta
            .key_value_metadata()
            .map(|kv| {
                kv.iter()
                    .filter(|e| e.key.starts_with("loom."))
                    .map(|e| (e.key.clone(), e.value.clone().unwrap_or_default()))
                    .collect()
            })
            .unwrap_or_default();
        let schema = builder.schema().clone();
        let builder = builder.with_batch_size(READ_BATCH_ROWS);
        let builder = if skip > 0 {
            builder.with_offset(usize::try_from(skip).unwrap_or(usize::MAX))
        } else {
            builder
        };
        let batches = builder.build()?;
        Ok(Reader {
            schema,
            metadata,
            rows,
            batches,
            failed: false,
        })
    }

    pub fn meta(&self, key: &str) -> Option<&str> {
        self.metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

impl Iterator for Reader {
    type Item = Result<RecordBatch, ParquetError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let batches = &mut self.batches;
        let next = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| batches.next()));
        match next {
            Ok(b) => b.map(|b| b.map_err(ParquetError::from)),
            Err(_) => {
                self.failed = true;
                Some(Err(ParquetError::Damaged))
            }
        }
    }
}

/// The engine's type for an Arrow column as the engine's appender fills it (its conversion
/// of Arrow types), or `None` for a type it cannot take. Dictionaries are read as their values.
pub fn engine_type(ty: &DataType) -> Option<String> {
    Some(match ty {
        DataType::Boolean => "BOOLEAN".into(),
        DataType::Int8 => "TINYINT".into(),
        DataType::Int16 => "SMALLINT".into(),
        DataType::Int32 => "INTEGER".into(),
        DataType::Int64 => "BIGINT".into(),
        DataType::UInt8 => "UTINYINT".into(),
        DataType::UInt16 => "USMALLINT".into(),
        DataType::UInt32 => "UINTEGER".into(),
        DataType::UInt64 => "UBIGINT".into(),
        DataType::Float32 => "FLOAT".into(),
        DataType::Float64 => "DOUBLE".into(),
        DataType::Timestamp(TimeUnit::Second, None) => "TIMESTAMP_S".into(),
        DataType::Timestamp(TimeUnit::Millisecond, None) => "TIMESTAMP_MS".into(),
        DataType::Timestamp(TimeUnit::Microsecond, None) => "TIMESTAMP".into(),
        DataType::Timestamp(TimeUnit::Nanosecond, None) => "TIMESTAMP_NS".into(),
        DataType::Timestamp(_, Some(_)) => "TIMESTAMPTZ".into(),
        DataType::Date32 | DataType::Date64 => "DATE".into(),
        DataType::Time32(_) | DataType::Time64(_) => "TIME".into(),
        DataType::Duration(_) | DataType::Interval(_) => "INTERVAL".into(),
        DataType::Binary
        | DataType::LargeBinary
        | DataType::FixedSizeBinary(_)
        | DataType::BinaryView => "BLOB".into(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "VARCHAR".into(),
        DataType::Decimal128(p, s) | DataType::Decimal64(p, s) | DataType::Decimal32(p, s)
            if *p <= 38 =>
        {
            format!("DECIMAL({p},{s})")
        }
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            format!("{}[]", engine_type(f.data_type())?)
        }
        DataType::Struct(fields) => {
            let inner: Option<Vec<String>> = fields
                .iter()
                .map(|f| {
                    engine_type(f.data_type())
                        .map(|t| format!("{} {t}", crate::store::quote_ident(f.name())))
                })
                .collect();
            format!("STRUCT({})", inner?.join(", "))
        }
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => format!(
                "MAP({}, {})",
                engine_type(kv[0].data_type())?,
                engine_type(kv[1].data_type())?
            ),
            _ => return None,
        },
        DataType::Dictionary(_, values) => engine_type(values)?,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small valid file's bytes, to mutate.
    fn valid_file() -> Vec<u8> {
        use duckdb::arrow::array::{Int64Array, StringArray};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let schema = Arc::new(duckdb::arrow::datatypes::Schema::new(vec![
            duckdb::arrow::datatypes::Field::new("n", DataType::Int64, true),
            duckdb::arrow::datatypes::Field::new("s", DataType::Utf8, true),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(vec![1, 2, 3])),
                Arc::new(StringArray::from(vec!["a", "b", "c"])),
            ],
        )
        .unwrap();
        let mut once = Some(Ok(batch));
        write(&path, schema, &[("loom.x", "y".into())], &mut || {
            once.take()
        })
        .unwrap();
        std::fs::read(&path).unwrap()
    }

    use std::sync::Arc;

    /// Reads everything in `bytes` as a Parquet file; errors are fine, panics are not.
    fn read_all(bytes: &[u8]) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.parquet");
        std::fs::write(&path, bytes).unwrap();
        if let Ok(r) = Reader::open(&path) {
            for b in r {
                if b.is_err() {
                    break;
                }
            }
        }
    }

    #[test]
    fn a_file_reads_back_with_its_metadata() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        std::fs::write(&path, valid_file()).unwrap();
        let r = Reader::open(&path).unwrap();
        assert_eq!(r.rows, 3);
        assert_eq!(r.meta("loom.x"), Some("y"));
        assert_eq!(r.map(|b| b.unwrap().num_rows()).sum::<usize>(), 3);
    }

    #[test]
    fn a_file_read_after_some_rows_gives_only_the_rest() {
        use duckdb::arrow::array::{Array, StringArray};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        std::fs::write(&path, valid_file()).unwrap();
        let r = Reader::open_after(&path, 2).unwrap();
        assert_eq!(r.rows, 3, "rows is the whole file's");
        let batches: Vec<RecordBatch> = r.map(|b| b.unwrap()).collect();
        let s: Vec<String> = batches
            .iter()
            .flat_map(|b| {
                let c = b
                    .column_by_name("s")
                    .unwrap()
                    .as_any()
                    .downcast_ref::<StringArray>()
                    .unwrap()
                    .clone();
                (0..c.len()).map(move |i| c.value(i).to_owned())
            })
            .collect();
        assert_eq!(s, vec!["c"]);
        let past_the_end = Reader::open_after(&path, 10).unwrap();
        assert_eq!(
            past_the_end.map(|b| b.unwrap().num_rows()).sum::<usize>(),
            0
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        #[test]
        fn no_damage_to_a_file_makes_reading_it_panic(
            cut in 0usize..2000,
            flips in proptest::collection::vec((0usize..2000, proptest::prelude::any::<u8>()), 0..8),
        ) {
            let mut bytes = valid_file();
            for (at, v) in flips {
                let n = bytes.len();
                bytes[at % n] = v;
            }
            bytes.truncate(cut.min(bytes.len()));
            read_all(&bytes);
        }

        #[test]
        fn no_bytes_at_all_make_reading_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600)) {
            let mut b = bytes;
            // Often shaped like a file: the magic at both ends.
            if b.len() > 8 && b[0] % 2 == 0 {
                b[..4].copy_from_slice(b"PAR1");
                let n = b.len();
                b[n - 4..].copy_from_slice(b"PAR1");
            }
            read_all(&b);
        }
    }
}
