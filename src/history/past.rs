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
    // An id begins with the session's start (UTC), so it orders sessions by when they began.
    all.sort_by(|a, b| b.id.cmp(&a.id));
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
    // Two workers: one loads the call log first, then both take datasets as they come; the
    // engine appends each file on a connection of its own. Results are put back in file
    // order, so the catalog and the problems read as a one-by-one load would leave them.
    let files = parquet_files(&session.folder.join(super::DATASETS));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let take_datasets = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(file) = files.get(i) else {
                break;
            };
            done.push((i, load_dataset(store, file, schema)));
        }
        done
    };
    let (mut done, calls) = std::thread::scope(|scope| {
        let other = std::thread::Builder::new()
            .name("loom-history-load".into())
            .spawn_scoped(scope, || {
                (load_calls(store, session, schema), take_datasets())
            });
        match other {
            Ok(other) => {
                let mut mine = take_datasets();
                match other.join() {
                    Ok((calls, theirs)) => {
                        mine.extend(theirs);
                        (mine, calls)
                    }
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            Err(_) => {
                let calls = load_calls(store, session, schema);
                (take_datasets(), calls)
            }
        }
    });
    done.sort_by_key(|(i, _)| *i);
    for (i, loaded) in done {
        match loaded {
            Ok((rows, meta)) => {
                out.datasets.push(meta.dataset_ref.clone());
                if schema.is_none() {
                    let mut meta = meta;
                    meta.rows = rows;
                    store.register_loaded(meta);
                }
            }
            Err(e) => {
                let name = files[i]
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                out.problems
                    .push(format!("{}: {e}", crate::terminal_text::line(&name)));
            }
        }
    }
    out.calls = calls.0;
    out.problems.extend(calls.1);
    for f in parquet_files(&session.folder.join(super::TEXTS)) {
        match read_text(&f) {
            Ok(t) => {
                // Its lineage names the past session's calls: kept when the session is opened
                // on its own, left out beside a live one, whose calls are others.
                let lineage = match (schema, t.lineage) {
                    (None, Some(Ok(l))) => l,
                    (None, Some(Err(e))) => {
                        out.problems.push(format!(
                            "parked text {}: its lineage is damaged ({e}); the text is loaded without it",
                            crate::terminal_text::line(&t.key)
                        ));
                        Default::default()
                    }
                    _ => Default::default(),
                };
                store.park_traced(
                    t.text,
                    t.summary,
                    t.content_type,
                    crate::store::blobs::MAX_TTL,
                    lineage,
                );
                out.texts += 1;
            }
            Err(e) => out.problems.push(format!("a parked text: {e}")),
        }
    }
    out
}

/// One dataset file loaded into `store`: its rows and description.
fn load_dataset(
    store: &Store,
    file: &Path,
    schema: Option<&str>,
) -> Result<(u64, DatasetMeta), String> {
    // One open of the file gives both its description and its rows.
    let reader = Reader::open(file).map_err(|e| e.to_string())?;
    let meta = dataset_meta(&reader, file)?;
    let rows = store
        .load_parquet(schema, &meta.dataset_ref, reader, &meta.columns)
        .map_err(|e| e.to_string())?;
    Ok((rows, meta))
}

/// The call log's parts appended to `loom_calls`: the calls added, and what failed.
fn load_calls(store: &Store, session: &PastSession, schema: Option<&str>) -> (u64, Vec<String>) {
    let mut calls = 0;
    let mut problems = Vec::new();
    for f in parquet_files(&session.folder.join(super::CALLS)) {
        let loaded = Reader::open(&f).map_err(|e| e.to_string()).and_then(|r| {
            store
                .append_parquet(schema, crate::store::calls_table::TABLE, r)
                .map_err(|e| e.to_string())
        });
        match loaded {
            Ok(n) => calls += n,
            Err(e) => problems.push(format!(
                "calls/{}: {e}",
                f.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            )),
        }
    }
    (calls, problems)
}

/// A parked text as the archive kept it.
struct ArchivedText {
    key: String,
    text: String,
    summary: String,
    content_type: String,
    /// `None` when it has none (or the archive is older than lineage).
    lineage: Option<Result<crate::types::data::Lineage, String>>,
}

fn read_text(file: &Path) -> Result<ArchivedText, String> {
    use duckdb::arrow::array::{Array, StringArray};
    let reader = Reader::open(file).map_err(|e| e.to_string())?;
    let mut reader = reader;
    let batch = reader
        .next()
        .ok_or("it is empty")?
        .map_err(|e| e.to_string())?;
    let cell = |name: &str| {
        batch
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<StringArray>())
            .filter(|c| !c.is_empty() && !c.is_null(0))
            .map(|c| c.value(0).to_owned())
    };
    let col = |name: &str| cell(name).ok_or_else(|| format!("it has no {name}"));
    Ok(ArchivedText {
        key: col("key").unwrap_or_default(),
        text: col("text")?,
        summary: col("summary")?,
        content_type: col("content_type")?,
        lineage: cell(super::archive::TEXT_LINEAGE)
            .map(|j| serde_json::from_str(&j).map_err(|e| e.to_string())),
    })
}

/// The last `n` calls a session archived (all of them when it has fewer), oldest first, as
/// the Traffic pane lists them. Only those rows are decoded: a session of 100,000 calls gives
/// its last few thousand without building the rest.
pub fn recent_calls(
    session: &PastSession,
    n: usize,
) -> (Vec<crate::types::events::CallSummary>, Vec<String>) {
    let mut problems = Vec::new();
    let mut files = Vec::new();
    for f in parquet_files(&session.folder.join(super::CALLS)) {
        match Reader::open(&f) {
            Ok(r) => files.push((f, r.rows)),
            Err(e) => problems.push(format!("{}: {e}", f.display())),
        }
    }
    // Rows to pass over, from the oldest file on, so that at most `n` are left.
    let total: u64 = files.iter().map(|(_, rows)| rows).sum();
    let mut skip = total.saturating_sub(n as u64);
    let mut out = Vec::with_capacity(n.min(total as usize));
    for (f, rows) in files {
        if skip >= rows {
            skip -= rows;
            continue;
        }
        let reader = match Reader::open_after(&f, skip) {
            Ok(r) => r,
            Err(e) => {
                problems.push(format!("{}: {e}", f.display()));
                continue;
            }
        };
        skip = 0;
        for batch in reader {
            let Ok(batch) = batch else {
                problems.push(format!("{}: a damaged row group", f.display()));
                break;
            };
            summaries(&batch, &mut out);
        }
    }
    // A file may hold more rows than its footer said it would give back; keep the newest.
    if out.len() > n {
        out.drain(..out.len() - n);
    }
    (out, problems)
}

/// The calls of one batch of the call log, appended to `out`.
fn summaries(
    batch: &duckdb::arrow::array::RecordBatch,
    out: &mut Vec<crate::types::events::CallSummary>,
) {
    use crate::types::events::CallSummary;
    use duckdb::arrow::array::{Array, StringArray, TimestampMicrosecondArray, UInt64Array};
    // Each column is looked up once per batch, not once per row.
    let text_column = |name: &str| {
        batch
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<StringArray>())
    };
    let number_column = |name: &str| {
        batch
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<UInt64Array>())
    };
    let text = |c: Option<&StringArray>, i: usize| {
        c.filter(|c| !c.is_null(i)).map(|c| c.value(i).to_owned())
    };
    let number =
        |c: Option<&UInt64Array>, i: usize| c.filter(|c| !c.is_null(i)).map(|c| c.value(i));
    let started = batch
        .column_by_name("started_at")
        .and_then(|c| c.as_any().downcast_ref::<TimestampMicrosecondArray>());
    let (call_id, millis, bytes_in, tokens_in, bytes_out, tokens_out, waited, batch_id) = (
        number_column("call_id"),
        number_column("millis"),
        number_column("bytes_in"),
        number_column("tokens_in"),
        number_column("bytes_out"),
        number_column("tokens_out"),
        number_column("waited_millis"),
        number_column("batch_id"),
    );
    let (caller, server, tool, outcome, reference, arguments) = (
        text_column("caller"),
        text_column("server"),
        text_column("tool"),
        text_column("outcome"),
        text_column("reference"),
        text_column("arguments"),
    );
    let (decision, passed_because, client, via) = (
        text_column("decision"),
        text_column("passed_because"),
        text_column("client"),
        text_column("via"),
    );
    for i in 0..batch.num_rows() {
        let at = started
            .filter(|c| !c.is_null(i))
            .map(|c| crate::types::time::iso((c.value(i).max(0) / 1_000_000) as u64))
            .unwrap_or_default();
        out.push(CallSummary {
            call: number(call_id, i).unwrap_or(0),
            at,
            caller: text(caller, i)
                .and_then(|s| s.parse().ok())
                .unwrap_or_default(),
            server: text(server, i).unwrap_or_default(),
            tool: text(tool, i).unwrap_or_default(),
            outcome: text(outcome, i)
                .and_then(|s| s.parse().ok())
                .unwrap_or_default(),
            reference: text(reference, i),
            millis: number(millis, i).unwrap_or(0),
            bytes_in: number(bytes_in, i).unwrap_or(0),
            tokens_in: number(tokens_in, i).unwrap_or(0),
            bytes_out: number(bytes_out, i).unwrap_or(0),
            tokens_out: number(tokens_out, i).unwrap_or(0),
            arguments: text(arguments, i).unwrap_or_default(),
            decision: text(decision, i),
            waited_millis: number(waited, i),
            passed_because: text(passed_because, i),
            client: text(client, i),
            via: text(via, i),
            batch: number(batch_id, i),
            ..Default::default()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{FORMAT, Manifest, private_dir};

    /// A session folder that ended `days_ago`, holding `bytes` of filler.
    fn fake(root: &Path, id: &str, started: u64, bytes: usize) -> PathBuf {
        let folder = root.join(id);
        private_dir(&folder.join(crate::history::DATASETS)).unwrap();
        let m = Manifest {
            format: FORMAT,
            id: id.into(),
            started: crate::types::time::iso(started),
            ended: Some(crate::types::time::iso(started + 60)),
            clean: true,
            mode: "all".into(),
            ..Default::default()
        };
        write_manifest(&folder, &m).unwrap();
        std::fs::write(folder.join("filler"), vec![0u8; bytes]).unwrap();
        folder
    }

    fn settings(max_bytes: u64, keep_days: Option<u64>) -> HistorySettings {
        HistorySettings {
            max_bytes,
            keep_days,
            ..Default::default()
        }
    }

    #[test]
    fn pruning_removes_the_oldest_first_and_never_a_running_session() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let now = crate::types::time::now_secs();
        let oldest = fake(root, "20260101T000000Z-0001", now - 5 * 86_400, 400_000);
        let running = fake(root, "20260102T000000Z-0002", now - 4 * 86_400, 400_000);
        let middle = fake(root, "20260103T000000Z-0003", now - 3 * 86_400, 400_000);
        let newest = fake(root, "20260104T000000Z-0004", now - 86_400, 400_000);
        let _held = crate::history::archive::lock_file_for_tests(&running.join(LOCK_NAME));
        // 1.6 MB in four sessions, 1 MB allowed: the oldest that is not running goes, then the
        // next, until it fits.
        let removed = prune(root, &settings(1_000_000, None), None);
        assert_eq!(
            removed,
            vec!["20260101T000000Z-0001", "20260103T000000Z-0003"]
        );
        assert!(!oldest.exists() && !middle.exists());
        assert!(running.exists() && newest.exists());
        // By age: older than two days goes (the running one stays whatever its age).
        let removed = prune(root, &settings(u64::MAX, Some(2)), None);
        assert!(removed.is_empty(), "{removed:?}");
        drop(_held);
        let removed = prune(
            root,
            &settings(u64::MAX, Some(2)),
            Some("20260104T000000Z-0004"),
        );
        assert_eq!(removed, vec!["20260102T000000Z-0002"]);
        // The one named to keep stays even past the size bound.
        let removed = prune(root, &settings(1, None), Some("20260104T000000Z-0004"));
        assert!(removed.is_empty());
        assert!(newest.exists());
    }

    const LOCK_NAME: &str = crate::history::LOCK;

    #[test]
    fn many_datasets_load_side_by_side_each_whole_and_in_file_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("history");
        let folder = fake(&root, "20260111T000000Z-000b", 1_700_000_000, 0);
        let store = Store::for_tests(dir.path());
        let mut names = Vec::new();
        for i in 0..24u64 {
            let name = format!("d_{i:02}");
            store
                .materialize(
                    &format!(
                        "SELECT range AS n, 'v' || range AS s FROM range({})",
                        1000 + i
                    ),
                    &name,
                )
                .unwrap();
            let meta = store.dataset(&name).unwrap();
            store
                .write_parquet(
                    &format!("\"{name}\""),
                    &folder.join(format!("datasets/{name}.parquet")),
                    &[("loom.dataset", serde_json::to_string(&meta).unwrap())],
                    &mut |_| {},
                )
                .unwrap();
            names.push(name);
        }
        // One damaged file among them is reported where it stands, and the rest load.
        std::fs::write(folder.join("datasets/d_05x.parquet"), b"PAR1 not really").unwrap();
        call_part(&folder, 1, 1, 3000);
        let s = find(&root, "20260111T000000Z-000b").unwrap();
        let fresh = Store::for_tests(&dir.path().join("fresh"));
        let loaded = load(&fresh, &s, None);
        assert_eq!(loaded.datasets, names);
        assert_eq!(loaded.calls, 3000);
        assert_eq!(loaded.problems.len(), 1, "{:?}", loaded.problems);
        assert!(loaded.problems[0].starts_with("d_05x.parquet"));
        for (i, name) in names.iter().enumerate() {
            let meta = fresh.dataset(name).unwrap();
            assert_eq!(meta.rows, 1000 + i as u64, "{name}");
            let q = fresh
                .query(&format!("SELECT count(*) AS c, max(n) AS m FROM {name}"))
                .unwrap();
            let text = format!("{q:?}");
            assert!(
                text.contains(&(1000 + i).to_string()) && text.contains(&(999 + i).to_string()),
                "{name}: {text}"
            );
        }
    }

    /// Calls `first..=last` as the archive writes them, in one part of `folder`'s call log.
    fn call_part(folder: &Path, n: u32, first: u64, last: u64) {
        use crate::store::calls_table;
        use crate::types::events::{CallSummary, Outcome};
        let calls: Vec<CallSummary> = (first..=last)
            .map(|i| CallSummary {
                call: i,
                at: crate::types::time::iso(1_700_000_000 + i),
                server: "sample".into(),
                tool: format!("tool_{}", i % 7),
                outcome: if i % 3 == 0 {
                    Outcome::Intercepted
                } else {
                    Outcome::Passed
                },
                reference: (i % 3 == 0).then(|| format!("ref_{i}")),
                millis: i % 50,
                tokens_in: i * 10,
                arguments: format!("{{\"i\":{i}}}"),
                waited_millis: (i % 5 == 0).then_some(i),
                ..Default::default()
            })
            .collect();
        let rows: Vec<_> = calls.iter().map(calls_table::row).collect();
        let dir = folder.join(crate::history::CALLS);
        private_dir(&dir).unwrap();
        let batch = archive::batch_of(calls_table::CALLS_TABLE_COLUMNS, &rows).unwrap();
        crate::history::parquet_io::write_batch(
            &dir.join(format!("part-{n:06}.parquet")),
            batch,
            &[],
        )
        .unwrap();
    }

    #[test]
    fn the_newest_calls_come_back_in_order_and_loom_calls_gets_them_all() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("history");
        let folder = fake(&root, "20260110T000000Z-000a", 1_700_000_000, 0);
        // Two parts, so the newest calls span both.
        call_part(&folder, 1, 1, 4000);
        call_part(&folder, 2, 4001, 7000);
        let s = find(&root, "20260110T000000Z-000a").unwrap();

        let (all, problems) = recent_calls(&s, usize::MAX);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(all.len(), 7000);
        assert!(all.windows(2).all(|w| w[0].call + 1 == w[1].call));
        let c = &all[2999];
        assert_eq!(
            (
                c.call,
                c.tool.as_str(),
                c.reference.as_deref(),
                c.waited_millis
            ),
            (3000, "tool_4", Some("ref_3000"), Some(3000))
        );
        assert_eq!(c.at, crate::types::time::iso(1_700_003_000));
        assert_eq!(c.arguments, "{\"i\":3000}");

        let (tail, _) = recent_calls(&s, 4500);
        assert_eq!(tail.len(), 4500);
        assert_eq!(
            tail[..],
            all[2500..],
            "the newest, in order, across both parts"
        );
        let (last, _) = recent_calls(&s, 10);
        assert_eq!(last[..], all[6990..]);

        // And `loom_calls` has every call, with its types.
        let store = Store::for_tests(dir.path());
        let loaded = load(&store, &s, None);
        assert_eq!(loaded.calls, 7000);
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
        let n = store
            .query("SELECT count(*) AS n, sum(tokens_in) AS t, count(waited_millis) AS w FROM loom_calls")
            .unwrap();
        let text = format!("{n:?}");
        assert!(
            text.contains("7000") && text.contains("245035000") && text.contains("1400"),
            "{text}"
        );
        let types = store
            .query("SELECT string_agg(data_type, ',' ORDER BY column_index) AS t FROM duckdb_columns() WHERE table_name = 'loom_calls'")
            .unwrap();
        let want: Vec<&str> = crate::store::calls_table::CALLS_TABLE_COLUMNS
            .iter()
            .map(|(_, t)| *t)
            .collect();
        assert!(format!("{types:?}").contains(&want.join(",")), "{types:?}");
    }

    #[test]
    fn damaged_and_foreign_folders_are_reported_and_skipped_and_nothing_outside_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("history");
        private_dir(&root).unwrap();
        let store = Store::for_tests(dir.path());
        // A good session with one dataset.
        store
            .materialize("SELECT range AS n, range * 2 AS m FROM range(10)", "good")
            .unwrap();
        let good = fake(&root, "20260105T000000Z-0005", 1_700_000_000, 10);
        let meta = store.dataset("good").unwrap();
        store
            .write_parquet(
                "\"good\"",
                &good.join("datasets/good.parquet"),
                &[("loom.dataset", serde_json::to_string(&meta).unwrap())],
                &mut |_| {},
            )
            .unwrap();
        // A truncated copy of it, a file whose description names another dataset, and a
        // symlink to a Parquet file outside the history folder.
        let whole = std::fs::read(good.join("datasets/good.parquet")).unwrap();
        std::fs::write(good.join("datasets/cut.parquet"), &whole[..whole.len() / 2]).unwrap();
        std::fs::write(good.join("datasets/other.parquet"), &whole).unwrap();
        let outside = dir.path().join("outside.parquet");
        std::fs::write(&outside, &whole).unwrap();
        std::os::unix::fs::symlink(&outside, good.join("datasets/linked.parquet")).unwrap();
        // A session with a damaged manifest, one from a newer loom, one that is a symlink to
        // a folder outside, and names that are no session.
        let bad = fake(&root, "20260106T000000Z-0006", 1_700_000_100, 10);
        std::fs::write(bad.join("manifest.json"), b"{\"format\": 1, \"id\": ").unwrap();
        let newer = fake(&root, "20260107T000000Z-0007", 1_700_000_200, 10);
        let mut m: Manifest =
            serde_json::from_slice(&std::fs::read(newer.join("manifest.json")).unwrap()).unwrap();
        m.format = FORMAT + 1;
        write_manifest(&newer, &m).unwrap();
        let elsewhere = dir.path().join("elsewhere");
        fake(dir.path(), "20260108T000000Z-0008", 1_700_000_300, 10);
        std::fs::rename(dir.path().join("20260108T000000Z-0008"), &elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join("20260108T000000Z-0008")).unwrap();
        std::fs::create_dir(root.join("not-a-session")).unwrap();
        std::fs::write(root.join("20260109T000000Z-0009"), b"a file").unwrap();

        let all = list(&root);
        let ids: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(
            ids,
            vec![
                "20260107T000000Z-0007",
                "20260106T000000Z-0006",
                "20260105T000000Z-0005"
            ],
            "only real session folders are listed, newest first"
        );
        let problem = |id: &str| {
            all.iter()
                .find(|s| s.id == id)
                .and_then(|s| s.problem.clone())
                .unwrap_or_default()
        };
        assert!(problem("20260106T000000Z-0006").contains("damaged"));
        assert!(problem("20260107T000000Z-0007").contains("newer loom"));
        assert!(
            find(&root, "20260108T000000Z-0008")
                .unwrap_err()
                .contains("symbolic link")
        );
        assert!(find(&root, "../elsewhere").is_err());

        let fresh = Store::for_tests(&dir.path().join("fresh"));
        let s = find(&root, "20260105T000000Z-0005").unwrap();
        let loaded = load(&fresh, &s, None);
        assert_eq!(loaded.datasets, vec!["good"]);
        assert_eq!(loaded.problems.len(), 2, "{:?}", loaded.problems);
        assert!(loaded.problems.iter().any(|p| p.starts_with("cut.parquet")));
        assert!(
            loaded
                .problems
                .iter()
                .any(|p| p.starts_with("other.parquet") && p.contains("another dataset"))
        );
        let n = fresh.query("SELECT sum(m) AS s FROM good").unwrap();
        assert!(format!("{n:?}").contains("90"), "{n:?}");
        // The damaged session loads nothing and says why.
        let bad = find(&root, "20260106T000000Z-0006").unwrap();
        let loaded = load(&fresh, &bad, Some("past_x"));
        assert!(loaded.datasets.is_empty() && !loaded.problems.is_empty());
    }
}
