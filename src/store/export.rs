//! Export of a dataset to CSV, JSON or JSON Lines. loom writes the file, never DuckDB (the
//! engine has no file access). Files go under `export_dir` and are never overwritten: an
//! existing name gets a numeric suffix. Rows stream from the engine; memory stays flat. A
//! workbench result table exports the same way as a dataset.

use super::{Result, Store, StoreError, quote_ident};
pub use crate::types::engine::ExportOptions;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Csv,
    Json,
    Jsonl,
    /// Apache Parquet, written by loom's own writer from the engine's Arrow batches (the same
    /// writer as history): exact types, readable by any Parquet reader.
    Parquet,
}

impl ExportFormat {
    pub fn parse(s: &str) -> Option<ExportFormat> {
        match s.to_ascii_lowercase().as_str() {
            "csv" => Some(ExportFormat::Csv),
            "json" => Some(ExportFormat::Json),
            "jsonl" | "ndjson" => Some(ExportFormat::Jsonl),
            "parquet" => Some(ExportFormat::Parquet),
            _ => None,
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Csv => "csv",
            ExportFormat::Json => "json",
            ExportFormat::Jsonl => "jsonl",
            ExportFormat::Parquet => "parquet",
        }
    }
}

/// One CSV field, quoted (RFC 4180) when it holds a separator, a quote, a line break or edge
/// spaces.
pub fn csv_field(s: &str) -> String {
    csv_field_with(s, ',')
}

/// One CSV field for files separated by `delimiter`.
pub fn csv_field_with(s: &str, delimiter: char) -> String {
    if s.contains([delimiter, '"', '\n', '\r']) || s.starts_with(' ') || s.ends_with(' ') {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// Opens a new file in `dir` named after `stem`, never replacing an existing one.
fn create_new(dir: &std::path::Path, stem: &str, ext: &str) -> Result<(PathBuf, std::fs::File)> {
    for n in 0..10_000 {
        let name = if n == 0 {
            format!("{stem}.{ext}")
        } else {
            format!("{stem}-{n}.{ext}")
        };
        let path = dir.join(name);
        // Readable by the user only, as parked copies of the same data are (0600).
        match std::os::unix::fs::OpenOptionsExt::mode(
            std::fs::OpenOptions::new().write(true).create_new(true),
            0o600,
        )
        .open(&path)
        {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(StoreError::Io(format!(
                    "cannot create {}: {e}",
                    path.display()
                )));
            }
        }
    }
    Err(StoreError::Io("no free file name".into()))
}

/// A file stem from a requested name: no folders, no dots at the start, only safe characters.
fn stem_of(requested: &str, ext: &str) -> Option<String> {
    let base = requested.rsplit(['/', '\\']).next()?.trim();
    let base = base.strip_suffix(&format!(".{ext}")).unwrap_or(base);
    let clean: String = base
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    let clean = clean.trim_start_matches('.').to_owned();
    (!clean.is_empty()).then_some(clean)
}

/// Rows between two progress reports.
const PROGRESS_EVERY: u64 = 10_000;

pub fn export(
    store: &Store,
    r: &str,
    format: ExportFormat,
    options: &ExportOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<(PathBuf, u64)> {
    let delimiter = options.delimiter;
    if format == ExportFormat::Csv && matches!(delimiter, '"' | '\n' | '\r') {
        return Err(StoreError::Refused(format!(
            "{delimiter:?} cannot separate CSV fields; use a comma, a semicolon, a tab or a bar"
        )));
    }
    let filename = options.filename.as_deref().filter(|f| !f.trim().is_empty());
    let columns = store.table_columns(r)?;
    let dir = &store.config.export_dir;
    crate::folders::create_private_dirs(dir)
        .map_err(|e| StoreError::Io(format!("cannot create {}: {e}", dir.display())))?;
    let ext = format.extension();
    let stem = filename
        .and_then(|f| stem_of(f, ext))
        .unwrap_or_else(|| r.to_owned());
    let (path, file) = create_new(dir, &stem, ext)?;
    let t = match options.rows {
        Some((offset, limit)) => format!(
            "(SELECT * FROM {} LIMIT {limit} OFFSET {offset})",
            quote_ident(r)
        ),
        None => quote_ident(r),
    };
    if format == ExportFormat::Parquet {
        drop(file);
        // The name reserved above is replaced whole once the file is complete.
        let written = store.write_parquet(&t, &path, &[], progress);
        if written.is_err() {
            let _ = std::fs::remove_file(&path);
        }
        let abs = std::path::absolute(&path).unwrap_or(path);
        return written.map(|rows| (abs, rows));
    }
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let io = |e: std::io::Error| StoreError::Io(format!("writing {}: {e}", path.display()));
    let taken = store.lanes.take(super::query::asking_client());
    let reader = taken.conn();
    let mut count = 0u64;
    match format {
        ExportFormat::Csv => {
            if options.header {
                let header: Vec<String> = columns
                    .iter()
                    .map(|(n, _)| csv_field_with(n, delimiter))
                    .collect();
                writeln!(out, "{}", header.join(&delimiter.to_string())).map_err(io)?;
            }
            let cols: Vec<String> = columns
                .iter()
                .map(|(n, _)| format!("{}::VARCHAR", quote_ident(n)))
                .collect();
            let mut stmt = reader.prepare(&format!("SELECT {} FROM {t}", cols.join(", ")))?;
            let n = columns.len();
            let mut rows = stmt.query([])?;
            let mut line = String::new();
            while let Some(row) = rows.next()? {
                line.clear();
                for i in 0..n {
                    if i > 0 {
                        line.push(delimiter);
                    }
                    if let Some(v) = row.get::<_, Option<String>>(i)? {
                        line.push_str(&csv_field_with(&v, delimiter));
                    }
                }
                line.push('\n');
                out.write_all(line.as_bytes()).map_err(io)?;
                count += 1;
                if count.is_multiple_of(PROGRESS_EVERY) {
                    progress(count);
                }
            }
        }
        // Written above, from Arrow batches.
        ExportFormat::Parquet => {}
        ExportFormat::Json | ExportFormat::Jsonl => {
            let mut stmt = {
                let (row, from) = super::profile::row_json(&t, &columns);
                reader.prepare(&format!("SELECT {row} FROM {from}"))?
            };
            let mut rows = stmt.query([])?;
            let json = format == ExportFormat::Json;
            if json {
                out.write_all(b"[\n").map_err(io)?;
            }
            while let Some(row) = rows.next()? {
                let v: String = row.get(0)?;
                if json && count > 0 {
                    out.write_all(b",\n").map_err(io)?;
                }
                out.write_all(super::profile::finite_json(&v).as_bytes())
                    .map_err(io)?;
                if !json {
                    out.write_all(b"\n").map_err(io)?;
                }
                count += 1;
                if count.is_multiple_of(PROGRESS_EVERY) {
                    progress(count);
                }
            }
            if json {
                out.write_all(b"\n]\n").map_err(io)?;
            }
        }
    }
    out.flush().map_err(io)?;
    let abs = std::path::absolute(&path).unwrap_or(path);
    Ok((abs, count))
}
