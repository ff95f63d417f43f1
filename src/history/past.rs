//! Reading the past: the sessions of a history folder, their manifests, and loading one into
//! a store, read-only. Everything here treats the folder as outside input: a session folder is
//! found only by a valid id, symbolic links are never followed, a damaged manifest or Parquet
//! file is reported and skipped, and nothing outside the history folder is ever opened.

use super::archive::{self, lock_is_free, write_manifest};
use super::parquet_io::Reader;
use super::{Manifest, valid_id};
use crate::config::HistorySettings;
use crate::store::{DatasetMeta, Store};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One session folder, as listed.
#[derive(Debug, Clone, Serialize)]
pub struct PastSession {
    pub id: String,
    #[serde(skip)]
    pub folder: PathBuf,
    pub manifest: Option<Manifest>,
    pub bytes: u64,
    /// A loom is writing it now.
    pub running: bool,
    /// Why it cannot be read, when it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

impl PastSession {
    fn read(folder: PathBuf, id: String) -> PastSession {
        let bytes = super::size_of(&folder);
        let running = !lock_is_free_quiet(&folder);
        let (manifest, problem) = match read_manifest(&folder) {
            Ok(m) if m.id != id => (
                None,
                Some(format!(
                    "its manifest names another session ({})",
                    crate::terminal_text::line(&m.id)
                )),
            ),
            Ok(m) if m.format > super::FORMAT => (
                None,
                Some(format!(
                    "written by a newer loom (format {}; this loom reads {})",
                    m.format,
                    super::FORMAT
                )),
            ),
            Ok(m) => (Some(m), None),
            Err(e) => (None, Some(e)),
        };
        PastSession {
            id,
            folder,
            manifest,
            bytes,
            running,
            problem,
        }
    }

    /// When it started, for ordering: the manifest's word, else the id's time.
    fn started(&self) -> String {
        self.manifest
            .as_ref()
            .map(|m| m.started.clone())
            .unwrap_or_else(|| self.id.clone())
    }
}

/// Whether a lock is held, without creating a lock file where there is none.
fn lock_is_free_quiet(folder: &Path) -> bool {
    let lock = folder.join(super::LOCK);
    match lock.symlink_metadata() {
        Ok(m) if m.is_file() => lock_is_free(&lock),
        _ => true,
    }
}

fn read_manifest(folder: &Path) -> Result<Manifest, String> {
    let path = folder.join(super::MANIFEST);
    let meta = path
        .symlink_metadata()
        .map_err(|_| "it has no manifest.json".to_owned())?;
    if !meta.is_file() {
        return Err("its manifest.json is not a regular file".into());
    }
    if meta.len() > 4 << 20 {
        return Err("its manifest.json is larger than any loom writes".into());
    }
    let text = std::fs::read(&path).map_err(|e| format!("cannot read its manifest: {e}"))?;
    serde_json::from_slice(&text).map_err(|e| format!("its manifest is damaged: {e}"))
}

/// Every session folder in `root`, newest first. Entries that are not session folders (other
/// names, files, symbolic links) are left alone and not listed.
pub fn list(root: &Path) -> Vec<PastSession> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut all: Vec<PastSession> = entries
        .flatten()
        .filter_map(|e| {
            let id = e.file_name().to_str()?.to_owned();
            if !valid_id(&id) {
                return None;
            }
            let m = e.path().symlink_metadata().ok()?;
            m.is_dir().then(|| PastSession::read(e.path(), id))
        })
        .collect();
    all.sort_by_key(|s| std::cmp::Reverse((s.started(), s.id.clone())));
    all
}

/// The session `id` of `root`, or why there is none.
pub fn find(root: &Path, id: &str) -> Result<PastSession, String> {
    if !valid_id(id) {
        return Err(format!(
            "`{}` is not a session id (`loom history` lists them)",
            crate::terminal_text::line(id)
        ));
    }
    let folder = root.join(id);
    match folder.symlink_metadata() {
        Ok(m) if m.file_type().is_symlink() => Err(format!(
            "session {id} is a symbolic link; loom opens only real folders in {}",
            root.display()
        )),
        Ok(m) if m.is_dir() => Ok(PastSession::read(folder, id.to_owned())),
        _ => Err(format!(
            "no session {id} in {} (`loom history` lists them)",
            root.display()
        )),
    }
}

/// Finishes the sessions of `root` whose loom is gone without ending them: their parts are
/// compacted and the manifest says when they last wrote and that they did not end cleanly.
pub fn recover(root: &Path) {
    for s in list(root) {
        let Some(mut m) = s.manifest.clone() else {
            continue;
        };
        if m.ended.is_some() || s.running {
            continue;
        }
        for folder in [super::CALLS, super::EVENTS] {
            if let Err(e) = archive::compact(&s.folder.join(folder), folder) {
                m.problems.push(format!("{folder} were not compacted: {e}"));
            }
        }
        let last = std::fs::metadata(s.folder.join(super::MANIFEST))
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| crate::types::time::iso(d.as_secs()))
            .unwrap_or_else(|| m.started.clone());
        m.ended = Some(last);
        m.clean = false;
        m.problems
            .push("the session did not end cleanly (loom was stopped or crashed)".into());
        // The counts in the manifest may trail the files by the last few seconds.
        if let Ok(calls) = count_rows(&s.folder.join(super::CALLS)) {
            m.calls = calls;
        }
        if let Ok(events) = count_rows(&s.folder.join(super::EVENTS)) {
            m.events = events;
        }
        m.datasets = parquet_files(&s.folder.join(super::DATASETS)).len() as u64;
        m.texts = parquet_files(&s.folder.join(super::TEXTS)).len() as u64;
        if let Err(e) = write_manifest(&s.folder, &m) {
            tracing::warn!("history: session {} could not be marked: {e}", s.id);
        }
    }
}

fn parquet_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "parquet")
                && p.symlink_metadata().is_ok_and(|m| m.is_file())
        })
        .collect();
    files.sort();
    files
}

fn count_rows(dir: &Path) -> Result<u64, String> {
    let mut n = 0;
    for f in parquet_files(dir) {
        n += Reader::open(&f).map_err(|e| e.to_string())?.rows;
    }
    Ok(n)
}

/// Removes sessions older than `keep_days`, then the oldest until the folder is within
/// `max_bytes`; never a running session, nor `keep`. Returns the ids removed.
pub fn prune(root: &Path, settings: &HistorySettings, keep: Option<&str>) -> Vec<String> {
    let all = list(root);
    let mut removed = Vec::new();
    let now = crate::types::time::now_secs();
    let mut total: u64 = all.iter().map(|s| s.bytes).sum();
    // Oldest first.
    for s in all.iter().rev() {
        if s.running || Some(s.id.as_str()) == keep {
            continue;
        }
        let ended = s
            .manifest
            .as_ref()
            .and_then(|m| m.ended.as_deref().or(Some(m.started.as_str())))
            .and_then(crate::types::time::parse_iso);
        let too_old = match (settings.keep_days, ended) {
            (Some(days), Some(t)) => now.saturating_sub(t) > days * 86_400,
            _ => false,
        };
        if (too_old || total > settings.max_bytes) && remove_folder(&s.folder).is_ok() {
            total = total.saturating_sub(s.bytes);
            removed.push(s.id.clone());
        }
    }
    removed
}

fn remove_folder(folder: &Path) -> std::io::Result<()> {
    // `remove_dir_all` removes symbolic links inside, never what they point to.
    std::fs::remove_dir_all(folder)
}

/// `loom history rm`: removes one ended session.
pub fn remove(root: &Path, id: &str) -> Result<PastSession, String> {
    let s = find(root, id)?;
    if s.running {
        return Err(format!(
            "session {id} is running; it can be removed once it ends"
        ));
    }
    remove_folder(&s.folder).map_err(|e| format!("cannot remove session {id}: {e}"))?;
    Ok(s)
}

/// A dataset file of a session and its description, or why it cannot be read.
pub struct ArchivedDataset {
    pub file: PathBuf,
    pub meta: Result<DatasetMeta, String>,
}

/// The datasets a session archived, by file name.
pub fn datasets(session: &PastSession) -> Vec<ArchivedDataset> {
    parquet_files(&session.folder.join(super::DATASETS))
        .into_iter()
        .map(|file| {
            let meta = Reader::open(&file)
                .map_err(|e| e.to_string())
                .and_then(|r| dataset_meta(&r, &file));
            ArchivedDataset { file, meta }
        })
        .collect()
}

fn dataset_meta(reader: &Reader, file: &Path) -> Result<DatasetMeta, String> {
    let text = reader
        .meta("loom.dataset")
        .ok_or("it has no loom.dataset description")?;
    let meta: DatasetMeta =
        serde_json::from_str(text).map_err(|e| format!("its description is damaged: {e}"))?;
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if meta.dataset_ref != stem || !crate::store::valid_ref(&meta.dataset_ref) {
        return Err("its description names another dataset".into());
    }
    Ok(meta)
}

/// What loading a session did.
#[derive(Debug, Default, Serialize)]
pub struct Loaded {
    pub datasets: Vec<String>,
    pub calls: u64,
    pub texts: u64,
    pub problems: Vec<String>,
}

/// Loads a session's datasets and call log into `store`: into `main` under the names they had
/// (for `--session` and `--open`), or beside a live session into `schema`.
pub fn load(store: &Store, session: &PastSession, schema: Option<&str>) -> Loaded {
    let mut out = Loaded::default();
    if let Some(p) = &session.problem {
        out.problems.push(p.clone());
    }
    if let Some(s) = schema
        && let Err(e) = store.create_schema(s)
    {
        out.problems.push(format!("cannot make schema {s}: {e}"));
        return out;
    }
    for d in datasets(session) {
        let name = d
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let meta = match d.meta {
            Ok(m) => m,
            Err(e) => {
                out.problems
                    .push(format!("{}: {e}", crate::terminal_text::line(&name)));
                continue;
            }
        };
        let loaded = Reader::open(&d.file)
            .map_err(|e| e.to_string())
            .and_then(|r| {
                store
                    .load_parquet(schema, &meta.dataset_ref, r, &meta.columns)
                    .map_err(|e| e.to_string())
            });
        match loaded {
            Ok(rows) => {
                out.datasets.push(meta.dataset_ref.clone());
                if schema.is_none() {
                    let mut meta = meta;
                    meta.rows = rows;
                    store.register_loaded(meta);
                }
            }
            Err(e) => out
                .problems
                .push(format!("{}: {e}", crate::terminal_text::line(&name))),
        }
    }
    for f in parquet_files(&session.folder.join(super::CALLS)) {
        let loaded = Reader::open(&f).map_err(|e| e.to_string()).and_then(|r| {
            store
                .append_parquet(schema, crate::store::calls_table::TABLE, r)
                .map_err(|e| e.to_string())
        });
        match loaded {
            Ok(n) => out.calls += n,
            Err(e) => out.problems.push(format!(
                "calls/{}: {e}",
                f.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            )),
        }
    }
    for f in parquet_files(&session.folder.join(super::TEXTS)) {
        match read_text(&f) {
            Ok((text, summary, content_type)) => {
                store.park(text, summary, content_type, crate::store::blobs::MAX_TTL);
                out.texts += 1;
            }
            Err(e) => out.problems.push(format!("a parked text: {e}")),
        }
    }
    out
}

/// A parked text's content, summary and type.
fn read_text(file: &Path) -> Result<(String, String, String), String> {
    use duckdb::arrow::array::{Array, StringArray};
    let reader = Reader::open(file).map_err(|e| e.to_string())?;
    let mut reader = reader;
    let batch = reader
        .next()
        .ok_or("it is empty")?
        .map_err(|e| e.to_string())?;
    let col = |name: &str| {
        batch
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<StringArray>())
            .filter(|c| !c.is_empty() && !c.is_null(0))
            .map(|c| c.value(0).to_owned())
            .ok_or_else(|| format!("it has no {name}"))
    };
    Ok((col("text")?, col("summary")?, col("content_type")?))
}

/// The calls a session archived, in order, as the Traffic pane lists them.
pub fn calls(session: &PastSession) -> (Vec<crate::types::events::CallSummary>, Vec<String>) {
    use crate::types::events::CallSummary;
    use duckdb::arrow::array::{Array, StringArray, TimestampMicrosecondArray, UInt64Array};
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for f in parquet_files(&session.folder.join(super::CALLS)) {
        let reader = match Reader::open(&f) {
            Ok(r) => r,
            Err(e) => {
                problems.push(format!("{}: {e}", f.display()));
                continue;
            }
        };
        for batch in reader {
            let Ok(batch) = batch else {
                problems.push(format!("{}: a damaged row group", f.display()));
                break;
            };
            let text = |name: &str, i: usize| {
                batch
                    .column_by_name(name)
                    .and_then(|c| c.as_any().downcast_ref::<StringArray>())
                    .filter(|c| !c.is_null(i))
                    .map(|c| c.value(i).to_owned())
            };
            let number = |name: &str, i: usize| {
                batch
                    .column_by_name(name)
                    .and_then(|c| c.as_any().downcast_ref::<UInt64Array>())
                    .filter(|c| !c.is_null(i))
                    .map(|c| c.value(i))
            };
            let started = batch
                .column_by_name("started_at")
                .and_then(|c| c.as_any().downcast_ref::<TimestampMicrosecondArray>());
            for i in 0..batch.num_rows() {
                let at = started
                    .filter(|c| !c.is_null(i))
                    .map(|c| crate::types::time::iso((c.value(i).max(0) / 1_000_000) as u64))
                    .unwrap_or_default();
                out.push(CallSummary {
                    call: number("call_id", i).unwrap_or(0),
                    at,
                    caller: text("caller", i)
                        .and_then(|s| s.parse().ok())
                        .unwrap_or_default(),
                    server: text("server", i).unwrap_or_default(),
                    tool: text("tool", i).unwrap_or_default(),
                    outcome: text("outcome", i)
                        .and_then(|s| s.parse().ok())
                        .unwrap_or_default(),
                    reference: text("reference", i),
                    millis: number("millis", i).unwrap_or(0),
                    bytes_in: number("bytes_in", i).unwrap_or(0),
                    tokens_in: number("tokens_in", i).unwrap_or(0),
                    bytes_out: number("bytes_out", i).unwrap_or(0),
                    tokens_out: number("tokens_out", i).unwrap_or(0),
                    arguments: text("arguments", i).unwrap_or_default(),
                    decision: text("decision", i),
                    waited_millis: number("waited_millis", i),
                    passed_because: text("passed_because", i),
                    client: text("client", i),
                    via: text("via", i),
                });
            }
        }
    }
    (out, problems)
}
