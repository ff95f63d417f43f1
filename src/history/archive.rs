//! The running session's archive: a worker thread writes what the session does into the
//! session's folder (see the layout in `super`) as it happens. Calls and events are collected
//! and written as a new Parquet part every few seconds; a dataset is written when it is
//! created, a parked text when the call that parked it finishes. At exit the parts are
//! compacted and the manifest says the session ended cleanly. A loom killed on the spot
//! leaves its parts and a manifest without an end; the next loom of that history folder finds
//! the session's lock free, compacts what is there and marks it as not ended cleanly.

use super::parquet_io;
use super::{Manifest, Mode};
use crate::config::Config;
use crate::store::Store;
use crate::store::calls_table;
use crate::types::events::{CallSummary, Outcome};
use duckdb::arrow::array::{
    ArrayRef, RecordBatch, StringBuilder, TimestampMicrosecondBuilder, UInt64Builder,
};
use duckdb::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use duckdb::types::Value as Sql;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often collected calls and events become a Parquet part.
pub const FLUSH_EVERY: Duration = Duration::from_secs(2);
/// A dataset no call has referenced after this long is archived without its envelope.
const ENVELOPE_WAIT: Duration = Duration::from_secs(5);
/// The longest envelope text kept with a dataset.
const ENVELOPE_CAP: usize = 256 * 1024;

/// The columns of `events/*.parquet`.
pub const EVENT_COLUMNS: &[(&str, &str)] = &[
    ("seq", "UBIGINT"),
    ("at", "TIMESTAMP"),
    ("kind", "VARCHAR"),
    ("server", "VARCHAR"),
    ("subject", "VARCHAR"),
    ("detail", "VARCHAR"),
];

/// The session's store once it is open (never waits for it).
pub type StoreHandle = Arc<dyn Fn() -> Option<Arc<Store>> + Send + Sync>;

/// What the session tells its archive.
pub enum Job {
    Call(Box<CallSummary>),
    /// A server state change, an approval asked or settled.
    Event {
        seq: u64,
        kind: &'static str,
        server: String,
        subject: String,
        detail: String,
        /// The data the event's words were made from (an approval's bindings and batch).
        inputs: Vec<String>,
    },
    /// A dataset was created (by `server`'s result, or by loom).
    DatasetCreated {
        reference: String,
        server: String,
    },
    /// The envelope the model got for a dataset (the response of the call that made it).
    Envelope {
        reference: String,
        text: String,
    },
    /// Something could not be archived.
    Problem(String),
    Finish(mpsc::Sender<()>),
}

/// The running session's archive.
pub struct Archive {
    pub id: String,
    pub folder: PathBuf,
    /// What the worker has still to write, in the order the session said it. A call or an
    /// event only joins it: the worker takes them at its next round, so a small call never
    /// wakes another thread (a wake costs more than the call on a busy machine).
    queue: Arc<Mutex<Vec<Job>>>,
    /// Wakes the worker before its round, for what must not wait (a dataset, the end).
    tx: Mutex<Option<mpsc::Sender<()>>>,
    worker: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Archive {
    /// Starts archiving a new session of `config` (nothing when history is off). The writer
    /// first tidies the history folder: sessions that did not end cleanly are finished and
    /// marked, then old and excess sessions go (see [`super::past::prune`]), never this one.
    pub fn start(config: &Config, store: StoreHandle) -> Result<Option<Arc<Archive>>, String> {
        if config.history.mode == Mode::Off {
            return Ok(None);
        }
        let root = crate::history::dir_of(config);
        super::private_dir(&root)
            .map_err(|e| format!("cannot create the history folder {}: {e}", root.display()))?;
        let id = super::new_id();
        let folder = root.join(&id);
        for sub in [
            "",
            super::CALLS,
            super::EVENTS,
            super::DATASETS,
            super::TEXTS,
        ] {
            super::private_dir(&folder.join(sub))
                .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
        }
        let lock = lock_file(&folder.join(super::LOCK))
            .map_err(|e| format!("cannot lock {}: {e}", folder.display()))?;
        let (config_path, config_sha256) = match &config.source {
            Some(p) => (
                Some(p.display().to_string()),
                std::fs::read(p).ok().map(|b| {
                    use sha2::{Digest, Sha256};
                    Sha256::digest(&b)
                        .iter()
                        .map(|x| format!("{x:02x}"))
                        .collect()
                }),
            ),
            None => (None, None),
        };
        let manifest = Manifest {
            format: super::FORMAT,
            id: id.clone(),
            loom_version: env!("CARGO_PKG_VERSION").to_owned(),
            started: crate::types::time::now_iso(),
            ended: None,
            clean: false,
            config_path,
            config_sha256,
            mode: match config.history.mode {
                Mode::Calls => "calls",
                _ => "all",
            }
            .to_owned(),
            servers: config.servers.iter().map(|s| s.name.clone()).collect(),
            ..Default::default()
        };
        let excluded: HashSet<String> = config
            .servers
            .iter()
            .filter(|s| !s.history)
            .map(|s| s.name.clone())
            .collect();
        let mut worker = Worker {
            folder: folder.clone(),
            manifest,
            store,
            data: config.history.mode == Mode::All,
            excluded,
            origin: HashMap::new(),
            calls: Vec::new(),
            events: Vec::new(),
            parts: HashMap::new(),
            clients: BTreeSet::new(),
            pending: HashMap::new(),
            envelopes: HashMap::new(),
            archived: HashSet::new(),
            texts: 0,
            root: root.clone(),
            settings: config.history.clone(),
            written: 0,
            others: 0,
            data_full: false,
            full: false,
            _lock: lock,
        };
        worker.write_manifest();
        let (tx, rx) = mpsc::channel();
        let queue: Arc<Mutex<Vec<Job>>> = Arc::default();
        let jobs = queue.clone();
        let root_for_prune = root.clone();
        let settings = config.history.clone();
        let keep = id.clone();
        let handle = std::thread::Builder::new()
            .name("loom-history".into())
            .spawn(move || {
                // Tidying the folder reads every session in it: done here, never on start-up.
                super::past::recover(&root_for_prune);
                super::past::prune(&root_for_prune, &settings, Some(&keep));
                worker.count_others();
                worker.run(&jobs, rx);
                super::past::prune(&root_for_prune, &settings, Some(&keep));
            })
            .map_err(|e| format!("cannot start the history writer: {e}"))?;
        Ok(Some(Arc::new(Archive {
            id,
            folder,
            queue,
            tx: Mutex::new(Some(tx)),
            worker: Mutex::new(Some(handle)),
        })))
    }

    pub fn send(&self, job: Job) {
        let urgent = matches!(job, Job::DatasetCreated { .. } | Job::Finish(_));
        let tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
        // Once finished, nothing more is taken (as a closed channel took nothing).
        let Some(tx) = tx.as_ref() else { return };
        self.queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(job);
        if urgent {
            let _ = tx.send(());
        }
    }

    /// Writes what is left, compacts the parts and marks the session ended; waits for it.
    pub fn finish(&self) {
        let (done, wait) = mpsc::channel();
        self.send(Job::Finish(done));
        if self
            .tx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .is_some()
        {
            let _ = wait.recv_timeout(Duration::from_secs(60));
        }
        if let Some(h) = self.worker.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = h.join();
        }
    }
}

/// Opens `path` (0600) and holds an exclusive lock on it for as long as the file is open.
fn lock_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(f)
}

/// Holds `path`'s lock as a running session does, for tests.
#[cfg(test)]
pub fn lock_file_for_tests(path: &Path) -> std::fs::File {
    lock_file(path).expect("lock")
}

/// Whether the session that owns `path`'s lock is gone (the lock can be taken).
pub fn lock_is_free(path: &Path) -> bool {
    lock_file(path).is_ok()
}

struct Worker {
    folder: PathBuf,
    manifest: Manifest,
    store: StoreHandle,
    /// Whether datasets and parked text are archived (`history = "all"`).
    data: bool,
    /// Servers with `history = false`.
    excluded: HashSet<String>,
    /// The server each dataset and parked text this session made came from, as the session
    /// said (`loom` for what loom made itself).
    origin: HashMap<String, String>,
    calls: Vec<CallSummary>,
    events: Vec<Vec<Sql>>,
    /// The last part number written in each folder.
    parts: HashMap<&'static str, u32>,
    clients: BTreeSet<String>,
    /// Datasets created and not yet archived, with when they were created.
    pending: HashMap<String, Instant>,
    envelopes: HashMap<String, String>,
    archived: HashSet<String>,
    texts: u32,
    /// The history folder, and its bounds (`history_max_bytes`, `history_keep_days`).
    root: PathBuf,
    settings: crate::config::HistorySettings,
    /// The bytes this session's files take (as written; the manifest aside).
    written: u64,
    /// The bytes of the folder's other sessions, as last counted.
    others: u64,
    /// The folder reached its bound with nothing left to prune: no more datasets or texts
    /// (`data_full`), then nothing more but the manifest (`full`).
    data_full: bool,
    full: bool,
    _lock: std::fs::File,
}

impl Worker {
    fn run(&mut self, queue: &Mutex<Vec<Job>>, rx: mpsc::Receiver<()>) {
        let mut last = Instant::now();
        loop {
            let gone = matches!(
                rx.recv_timeout(FLUSH_EVERY),
                Err(mpsc::RecvTimeoutError::Disconnected)
            );
            let jobs = std::mem::take(&mut *queue.lock().unwrap_or_else(|e| e.into_inner()));
            for job in jobs {
                match job {
                    Job::Finish(done) => {
                        self.finish();
                        let _ = done.send(());
                        return;
                    }
                    job => self.handle(job),
                }
            }
            if gone {
                self.finish();
                return;
            }
            if last.elapsed() >= FLUSH_EVERY {
                self.flush(false);
                last = Instant::now();
            }
        }
    }

    fn handle(&mut self, job: Job) {
        match job {
            Job::Call(c) => self.call(*c),
            Job::Event {
                seq,
                kind,
                server,
                subject,
                mut detail,
                inputs,
            } => {
                self.manifest.events += 1;
                // What a server that keeps no history was sent, or what was made from its
                // data, is not kept: the event says only that it happened.
                if self.excluded.contains(&server) || self.derived_from_excluded(inputs) {
                    detail = withheld(&detail);
                }
                let now = crate::types::time::now_secs() as i64;
                // Every event's words are masked on disk as on the wire, whatever made the
                // event: an approval's arguments, its bindings, a batch's statement and rows.
                let masked = crate::intercept::redact::redact_text;
                self.events.push(vec![
                    Sql::UBigInt(seq),
                    Sql::Timestamp(duckdb::types::TimeUnit::Second, now),
                    Sql::Text(kind.to_owned()),
                    Sql::Text(server),
                    Sql::Text(masked(&subject)),
                    Sql::Text(masked(&detail)),
                ]);
            }
            Job::DatasetCreated { reference, server } => {
                self.origin.insert(reference.clone(), server.clone());
                if self.data && !self.excluded.contains(&server) {
                    self.pending.insert(reference, Instant::now());
                }
            }
            Job::Envelope { reference, text } => {
                if self.pending.contains_key(&reference) {
                    let mut text = text;
                    if text.len() > ENVELOPE_CAP {
                        let mut cut = ENVELOPE_CAP;
                        while !text.is_char_boundary(cut) {
                            cut -= 1;
                        }
                        text.truncate(cut);
                    }
                    self.envelopes.insert(reference.clone(), text);
                    self.pending.remove(&reference);
                    self.dataset(&reference);
                }
            }
            Job::Problem(p) => self.problem(p),
            Job::Finish(_) => {}
        }
    }

    fn problem(&mut self, p: String) {
        tracing::warn!("history: {p}");
        if self.manifest.problems.len() < 100 {
            self.manifest.problems.push(p);
        }
    }

    fn call(&mut self, mut c: CallSummary) {
        self.manifest.calls += 1;
        // Masked on disk as on the wire, whoever published it: the arguments and every text
        // that may quote them (a person's reason for a denial, a binding's statement).
        let masked = crate::intercept::redact::redact_text;
        c.arguments = masked(&c.arguments);
        for text in [&mut c.decision, &mut c.passed_because]
            .into_iter()
            .flatten()
        {
            *text = masked(text);
        }
        for b in &mut c.bindings {
            b.source = masked(&b.source);
        }
        if let Some(client) = &c.client {
            // The client's name, without how it reached loom.
            let name = client.split(" · ").next().unwrap_or(client).to_owned();
            if self.clients.len() < 100 {
                self.clients.insert(name);
            }
        }
        if c.outcome == Outcome::Intercepted || c.outcome == Outcome::Parked {
            self.manifest.tokens_saved += c.tokens_in.saturating_sub(c.tokens_out);
        }
        if let Some(r) = c.reference.as_ref().filter(|r| r.starts_with("blob/")) {
            self.origin.insert(r.clone(), c.server.clone());
        }
        let read = c
            .bindings
            .iter()
            .flat_map(|b| b.inputs.iter())
            .chain(&c.inputs)
            .chain(&c.reference)
            .cloned();
        if self.excluded.contains(&c.server) || self.derived_from_excluded(read) {
            c.arguments = String::new();
            c.reference = None;
        } else if self.data
            && let Some(r) = c.reference.clone()
            && r.starts_with("blob/")
            && !self.archived.contains(&r)
        {
            self.text(&r);
        }
        self.calls.push(c);
    }

    /// Writes a dataset's rows and its description.
    fn dataset(&mut self, reference: &str) {
        if !self.archived.insert(reference.to_owned()) || self.data_full {
            return;
        }
        let Some(store) = (self.store)() else {
            return;
        };
        let meta = match store.peek_dataset(reference) {
            Ok(m) => m,
            Err(_) => {
                self.problem(format!(
                    "dataset {reference} left the store before it was archived"
                ));
                return;
            }
        };
        // A large query result is not kept: the statement that made it is in the call log and
        // reads archived data; and reading it while the store evicts it would race the eviction.
        if meta.kind == crate::store::DatasetKind::Query {
            return;
        }
        // Nothing made from a server that keeps no history is kept either: a materialized
        // copy of its rows, a batch its rows drove.
        if self.derived_from_excluded([reference.to_owned()]) {
            return;
        }
        let mut metadata = vec![(
            "loom.dataset",
            serde_json::to_string(&meta).unwrap_or_default(),
        )];
        if let Some(env) = self.envelopes.remove(reference) {
            metadata.push(("loom.envelope", env));
        }
        let path = self
            .folder
            .join(super::DATASETS)
            .join(format!("{reference}.parquet"));
        match store.write_parquet(
            &crate::store::quote_ident(reference),
            &path,
            &metadata,
            &mut |_| {},
        ) {
            Ok(_) if self.kept_within_bound(&path, true) => self.manifest.datasets += 1,
            Ok(_) => {}
            Err(e) => self.problem(format!("dataset {reference} was not archived: {e}")),
        }
    }

    /// Whether anything in `refs` (dataset refs, blob keys) came from a server with
    /// `history = false`, followed back through what each was made from. Fails closed: while
    /// some server keeps no history, a ref whose origin loom cannot tell (dropped before this
    /// look, the call log, a past session's data) counts as its.
    fn derived_from_excluded(&self, refs: impl IntoIterator<Item = String>) -> bool {
        if self.excluded.is_empty() {
            return false;
        }
        let store = (self.store)();
        let mut seen = HashSet::new();
        let mut stack: Vec<String> = refs.into_iter().collect();
        while let Some(r) = stack.pop() {
            if !seen.insert(r.clone()) || r.starts_with("memory:") {
                continue;
            }
            if self
                .origin
                .get(&r)
                .is_some_and(|s| self.excluded.contains(s))
            {
                return true;
            }
            let Some(store) = &store else { return true };
            if let Ok(meta) = store.peek_dataset(&r)
                && meta
                    .provenance
                    .as_ref()
                    .is_some_and(|p| self.excluded.contains(&p.server))
            {
                return true;
            }
            match store.lineage_of(&r) {
                Some(lineage) => stack.extend(lineage.inputs),
                None => return true,
            }
        }
        false
    }

    /// Writes a parked text.
    fn text(&mut self, key: &str) {
        if self.data_full {
            return;
        }
        let Some(store) = (self.store)() else {
            return;
        };
        let Some(blob) = store.blobs.get(key) else {
            return;
        };
        self.archived.insert(key.to_owned());
        self.texts += 1;
        // Where the text came from (the call, what it read, the statement), as JSON; none
        // when loom knows nothing of it.
        let lineage = store
            .lineage_of(key)
            .filter(|l| !l.is_empty())
            .and_then(|l| serde_json::to_string(&l).ok());
        let mut fields: Vec<Field> = TEXT_COLUMNS
            .iter()
            .map(|n| Field::new(*n, DataType::Utf8, false))
            .collect();
        fields.push(Field::new(TEXT_LINEAGE, DataType::Utf8, true));
        let schema: SchemaRef = Arc::new(Schema::new(fields));
        let created = crate::types::time::now_iso();
        let values = [
            Some(blob.key.as_str()),
            Some(blob.content_type.as_str()),
            Some(blob.summary.as_str()),
            Some(created.as_str()),
            Some(blob.content.as_str()),
            lineage.as_deref(),
        ];
        let columns: Vec<ArrayRef> = values
            .iter()
            .map(|v| {
                let mut b = StringBuilder::new();
                b.append_option(*v);
                Arc::new(b.finish()) as ArrayRef
            })
            .collect();
        let path = self
            .folder
            .join(super::TEXTS)
            .join(format!("{:06}.parquet", self.texts));
        let written = RecordBatch::try_new(schema, columns)
            .map_err(|e| e.to_string())
            .and_then(|batch| {
                parquet_io::write_batch(&path, batch, &[]).map_err(|e| e.to_string())
            });
        match written {
            Ok(_) if self.kept_within_bound(&path, true) => self.manifest.texts += 1,
            Ok(_) => {}
            Err(e) => self.problem(format!("parked text {key} was not archived: {e}")),
        }
    }

    /// Counts the bytes of the folder's other sessions.
    fn count_others(&mut self) {
        let id = &self.manifest.id;
        self.others = super::past::list(&self.root)
            .iter()
            .filter(|s| &s.id != id)
            .map(|s| s.bytes)
            .sum();
    }

    /// Counts the file just written at `path` and holds the folder to `history_max_bytes`
    /// while the session runs: past sessions go first, oldest first; when the folder is still
    /// over with none left to remove, a data file (a dataset, a text) just written is removed
    /// and no more data is archived, and once even the call log passes the bound nothing more
    /// is written but the manifest. The manifest says so, once. False when the file was
    /// removed.
    fn kept_within_bound(&mut self, path: &Path, data: bool) -> bool {
        let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
        self.written += bytes;
        let max = self.settings.max_bytes;
        if self.written.saturating_add(self.others) <= max {
            return true;
        }
        let removed = super::past::prune(&self.root, &self.settings, Some(&self.manifest.id));
        if !removed.is_empty() {
            tracing::info!(
                "history: {} past session(s) removed to keep the folder within history_max_bytes",
                removed.len()
            );
        }
        self.count_others();
        if self.written.saturating_add(self.others) <= max {
            return true;
        }
        let bound = crate::config::size_words(max);
        if data {
            self.written = self.written.saturating_sub(bytes);
            let _ = std::fs::remove_file(path);
            if !self.data_full {
                self.data_full = true;
                self.problem(format!(
                    "history_max_bytes ({bound}) reached: from {path} on, this session's datasets and parked texts are not archived",
                    path = path.file_name().unwrap_or_default().to_string_lossy()
                ));
            }
            return false;
        }
        if !self.full {
            self.full = true;
            self.data_full = true;
            self.problem(format!(
                "history_max_bytes ({bound}) reached: from here on, this session's calls and events are not archived (the manifest still counts them)"
            ));
        }
        true
    }

    /// Writes the collected calls and events as new parts, the datasets whose envelope did
    /// not come, and the manifest. `all` archives every dataset still waiting.
    fn flush(&mut self, all: bool) {
        let due: Vec<String> = self
            .pending
            .iter()
            .filter(|(_, at)| all || at.elapsed() >= ENVELOPE_WAIT)
            .map(|(r, _)| r.clone())
            .collect();
        for r in due {
            self.pending.remove(&r);
            self.dataset(&r);
        }
        if !self.calls.is_empty() {
            let rows: Vec<Vec<Sql>> = self.calls.iter().map(calls_table::row).collect();
            match self.part(super::CALLS, calls_table::CALLS_TABLE_COLUMNS, &rows) {
                Ok(()) => self.calls.clear(),
                Err(e) => self.problem(format!("calls not yet archived: {e}")),
            }
        }
        if !self.events.is_empty() {
            let rows = std::mem::take(&mut self.events);
            if let Err(e) = self.part(super::EVENTS, EVENT_COLUMNS, &rows) {
                self.events = rows;
                self.problem(format!("events not yet archived: {e}"));
            }
        }
        self.write_manifest();
    }

    fn part(
        &mut self,
        folder: &'static str,
        columns: &[(&str, &str)],
        rows: &[Vec<Sql>],
    ) -> Result<(), String> {
        if self.full {
            // Past the bound: counted in the manifest, not written.
            return Ok(());
        }
        let n = self.parts.get(folder).copied().unwrap_or(0) + 1;
        let path = self
            .folder
            .join(folder)
            .join(format!("part-{n:06}.parquet"));
        parquet_io::write_batch(&path, batch_of(columns, rows)?, &[]).map_err(|e| e.to_string())?;
        self.parts.insert(folder, n);
        self.kept_within_bound(&path, false);
        Ok(())
    }

    fn write_manifest(&mut self) {
        self.manifest.clients = self.clients.iter().cloned().collect();
        if let Err(e) = write_manifest(&self.folder, &self.manifest) {
            tracing::warn!("history: the manifest was not written: {e}");
        }
    }

    fn finish(&mut self) {
        self.flush(true);
        for folder in [super::CALLS, super::EVENTS] {
            if let Err(e) = compact(&self.folder.join(folder), folder) {
                self.problem(format!("{folder} were not compacted: {e}"));
            }
        }
        self.manifest.ended = Some(crate::types::time::now_iso());
        self.manifest.clean = true;
        self.write_manifest();
    }
}

/// The columns of `texts/*.parquet`.
pub const TEXT_COLUMNS: &[&str] = &["key", "content_type", "summary", "created", "text"];
/// A parked text's lineage column (JSON, or null): after [`TEXT_COLUMNS`]; older archives lack it.
pub const TEXT_LINEAGE: &str = "lineage";

pub fn write_manifest(folder: &Path, manifest: &Manifest) -> std::io::Result<()> {
    let text = serde_json::to_vec_pretty(manifest).map_err(std::io::Error::other)?;
    crate::folders::write_private(folder, &folder.join(super::MANIFEST), ".manifest-", &text)
}

/// An event's detail without what it quoted of a call: an approval's arguments, bindings and
/// batch are replaced by a note, the rest (which approval, which call, which tool) stays.
fn withheld(detail: &str) -> String {
    const NOTE: &str = "withheld: it holds data of a server with history = false";
    match serde_json::from_str::<serde_json::Value>(detail) {
        Ok(serde_json::Value::Object(mut m)) => {
            for key in ["arguments", "bindings", "batch"] {
                if m.contains_key(key) {
                    m.insert(key.into(), serde_json::Value::String(NOTE.into()));
                }
            }
            serde_json::Value::Object(m).to_string()
        }
        _ if detail.is_empty() => String::new(),
        _ => NOTE.to_owned(),
    }
}

/// The compacted file of a folder of parts (`calls/calls.parquet`, `events/events.parquet`).
pub fn compact_name(folder: &str) -> String {
    format!("{folder}.parquet")
}

/// Rewrites the parts in `dir` as one file (the parts' rows in order), then removes them.
pub fn compact(dir: &Path, folder: &str) -> Result<(), String> {
    let mut parts: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("part-") && n.ends_with(".parquet"))
                && p.symlink_metadata().is_ok_and(|m| m.is_file())
        })
        .collect();
    if parts.is_empty() {
        return Ok(());
    }
    parts.sort();
    let target = dir.join(compact_name(folder));
    // An earlier compaction's file comes first: its rows are older than any part.
    let mut sources = Vec::new();
    if target.is_file() {
        sources.push(target.clone());
    }
    sources.extend(parts.iter().cloned());
    let mut readers = Vec::new();
    for s in &sources {
        match parquet_io::Reader::open(s) {
            Ok(r) => readers.push(r),
            // A part cut short by a kill is unreadable: the rest is kept, it is reported.
            Err(e) => tracing::warn!("history: {} skipped: {e}", s.display()),
        }
    }
    let Some(schema) = readers.first().map(|r| r.schema.clone()) else {
        return Ok(());
    };
    let mut batches = readers.into_iter().flatten();
    parquet_io::write(&target, schema, &[], &mut || {
        batches.next().map(|b| b.map_err(|e| e.to_string()))
    })
    .map_err(|e| e.to_string())?;
    for p in parts {
        let _ = std::fs::remove_file(p);
    }
    Ok(())
}

/// Rows of engine values as one Arrow batch of `columns` (UBIGINT, TIMESTAMP, VARCHAR).
pub fn batch_of(columns: &[(&str, &str)], rows: &[Vec<Sql>]) -> Result<RecordBatch, String> {
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for (i, (name, ty)) in columns.iter().enumerate() {
        let cell = |r: &Vec<Sql>| r.get(i).cloned().unwrap_or(Sql::Null);
        let (dt, array): (DataType, ArrayRef) = match *ty {
            "UBIGINT" => {
                let mut b = UInt64Builder::with_capacity(rows.len());
                for r in rows {
                    match cell(r) {
                        Sql::UBigInt(v) => b.append_value(v),
                        _ => b.append_null(),
                    }
                }
                (DataType::UInt64, Arc::new(b.finish()))
            }
            "TIMESTAMP" => {
                let mut b = TimestampMicrosecondBuilder::with_capacity(rows.len());
                for r in rows {
                    match cell(r) {
                        Sql::Timestamp(unit, v) => b.append_value(match unit {
                            duckdb::types::TimeUnit::Second => v * 1_000_000,
                            duckdb::types::TimeUnit::Millisecond => v * 1_000,
                            duckdb::types::TimeUnit::Microsecond => v,
                            duckdb::types::TimeUnit::Nanosecond => v / 1_000,
                        }),
                        _ => b.append_null(),
                    }
                }
                (
                    DataType::Timestamp(TimeUnit::Microsecond, None),
                    Arc::new(b.finish()),
                )
            }
            "VARCHAR" => {
                let mut b = StringBuilder::new();
                for r in rows {
                    match cell(r) {
                        Sql::Text(s) => b.append_value(s),
                        _ => b.append_null(),
                    }
                }
                (DataType::Utf8, Arc::new(b.finish()))
            }
            other => {
                return Err(format!(
                    "column {name} has a type history does not write ({other})"
                ));
            }
        };
        fields.push(Field::new(*name, dt, true));
        arrays.push(array);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).map_err(|e| e.to_string())
}
