//! The store: a sealed, in-memory DuckDB holding the session's datasets. Ingest, profiling,
//! queries and exports all run here, off the request path (callers use `spawn_blocking`).
//! Ingest and queries use separate connections on one database, so neither blocks the other
//! for long. Rows are never pulled into loom's memory to be shipped inline beyond small results.

mod arrow_io;
pub mod bind;
pub mod blobs;
pub mod calls_table;
pub mod describe;
pub mod envelope;
mod export;
mod functions;
mod group_envelope;
mod guard;
mod ingest;
pub mod memories;
mod memory_bound;
mod names;
pub mod parquet_io;
mod private_dir;
mod profile;
mod query;
pub mod results;
pub mod sealed;

pub use crate::types::data::{
    ColumnStats, DatasetKind, Description, DropReason, JoinHint, Lineage, Provenance,
};
pub use crate::types::time::{civil_from_days, iso, now_iso};
pub use arrow_io::qualified;
pub use export::{ExportFormat, csv_field};
pub use group_envelope::render_group;
pub use profile::Profile;
pub use query::{Asker, BoundRows, QueryOutcome};

use crate::intercept::table::Table;
use sealed::{SealError, SealedDb};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Seal(#[from] sealed::SealError),
    #[error("{0}")]
    Engine(String),
    #[error("no dataset named `{0}`; loom_list_datasets lists them")]
    UnknownDataset(String),
    /// A workbench result that was kept and is gone; the message says why.
    #[error("{0}")]
    ResultDropped(String),
    #[error("{0}")]
    Refused(String),
    #[error("the query was cancelled")]
    Cancelled,
    #[error("the query was cancelled after {0:.0}s (query_timeout)")]
    Timeout(f64),
    /// The query would have grown loom past what one query may use (see `memory_bound.rs`).
    #[error(
        "the query was stopped: it needed more memory than one query may use here (memory_limit {limit} plus {headroom_mib} MiB for the values it builds; long strings and lists are built whole, outside the engine's limit). Aggregate or filter first, select fewer or shorter values (left(s, 100), substr), or add a LIMIT."
    )]
    MemoryBound { limit: String, headroom_mib: u64 },
    #[error("{0}")]
    Io(String),
}

impl From<duckdb::Error> for StoreError {
    fn from(e: duckdb::Error) -> Self {
        StoreError::Engine(e.to_string())
    }
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// What an eviction makes room for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Room {
    /// A dataset (the model's data): results go first, then older datasets.
    ForData,
    /// A person's query result: only other results go.
    ForResult,
}

/// Every change the store makes to what it holds, reported to whoever holds the store (the
/// session republishes it to every front end); the store never imports them. A dataset that an
/// eviction takes at once is reported created and then dropped, in that order.
#[derive(Debug, Clone, PartialEq)]
pub enum CatalogChange {
    /// A dataset entered the catalog: a tool result ingested, a query result too large to
    /// return inline, or a materialized query.
    Created {
        dataset: String,
        rows: u64,
        kind: DatasetKind,
        provenance: Option<Provenance>,
    },
    Dropped {
        dataset: String,
        reason: DropReason,
    },
    /// Text was parked for paged or pattern fetch.
    Parked {
        key: String,
        bytes: u64,
    },
    /// A memory got a new version, or was deleted.
    Memory {
        key: String,
    },
}

pub type ChangeSink = std::sync::Arc<dyn Fn(CatalogChange) + Send + Sync>;

#[derive(Debug, Clone)]
pub struct StoreConfig {
    /// DuckDB `memory_limit` (engine working memory; spills beyond it).
    pub memory_limit: String,
    pub threads: u32,
    /// Bytes of datasets kept before least recently used ones are evicted.
    pub memory_budget: u64,
    pub query_timeout: Duration,
    pub export_dir: PathBuf,
    /// Token budget of one envelope.
    pub envelope_budget: usize,
    /// Rows at most in an inline query result (more becomes a dataset).
    pub inline_rows: usize,
    /// A file the seal self-test tries (and must fail) to read.
    pub probe_file: PathBuf,
    /// Where parked blobs persist for the project (none: this session only).
    pub blob_dir: Option<PathBuf>,
    /// What parked text may take, in memory and in `blob_dir` each.
    pub parked_max_bytes: u64,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct DatasetMeta {
    #[serde(rename = "ref")]
    pub dataset_ref: String,
    pub kind: DatasetKind,
    pub rows: u64,
    pub columns: Vec<(String, String)>,
    pub pinned: bool,
    pub provenance: Option<Provenance>,
    pub context: Map<String, Value>,
    #[serde(skip, default)]
    pub last_used: u64,
    pub created: String,
    /// Where it came from (the call, what was bound into it, the statement that derived it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lineage: Option<Lineage>,
    /// The datasets made from the same result as this one (its other tables): join hints are
    /// looked for between them even across differently named columns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub siblings: Vec<String>,
}

pub struct Store {
    config: StoreConfig,
    // Field order is drop order: connections before the database they live on.
    writer: Mutex<duckdb::Connection>,
    /// The clients' query connections (see `query::Lanes`).
    lanes: query::Lanes,
    /// History's connection: a table streamed to a Parquet file holds up no one else.
    archive: Mutex<duckdb::Connection>,
    /// The workbench's own connection: a person's long query never holds up the model's, nor
    /// the model's a person's.
    bench: query::Lane,
    db: SealedDb,
    catalog: Mutex<HashMap<String, DatasetMeta>>,
    results: Mutex<results::Results>,
    /// Calls cancelled before their query took the connection (see `cancel_call`).
    early_cancels: Mutex<std::collections::VecDeque<u64>>,
    pub blobs: blobs::Blobs,
    /// Where each parked text came from, by key (a dataset's is in its catalog entry).
    blob_lineage: Mutex<HashMap<String, Lineage>>,
    clock: std::sync::atomic::AtomicU64,
    /// The names loom has drawn for its own tables (see `names.rs`).
    names: Mutex<names::Names>,
    changes: std::sync::OnceLock<ChangeSink>,
    /// Finished calls waiting to be written into `loom_calls` before the next query.
    calls: std::sync::OnceLock<std::sync::Arc<calls_table::CallFeed>>,
    /// Loom's private temporary folder (0700, removed on exit, and by the next loom if this
    /// one is killed); the engine spills inside it.
    private: private_dir::PrivateDir,
}

/// The settings a client statement could try to change, as `Store::fingerprint` reads them.
const SETTINGS: &str = "SELECT name, value FROM duckdb_settings() WHERE name IN ('search_path', 'schema', 'threads', 'max_memory', 'memory_limit', 'temp_directory', 'enable_external_access', 'lock_configuration', 'autoload_known_extensions', 'autoinstall_known_extensions', 'allow_unsigned_extensions', 'allow_community_extensions', 'default_order', 'default_null_order', 'preserve_insertion_order', 'max_execution_time', 'TimeZone', 'Calendar', 'allowed_directories', 'allowed_paths', 'errors_as_json') ORDER BY ALL";

/// Every row of `sql` as text, sorted, or the error; for `Store::fingerprint`.
fn dump(conn: &duckdb::Connection, sql: &str) -> String {
    let all = format!(
        "SELECT coalesce(string_agg(t::VARCHAR, chr(10) ORDER BY t::VARCHAR), '') FROM ({sql}) AS t"
    );
    conn.query_row(&all, [], |r| r.get::<_, String>(0))
        .unwrap_or_else(|e| format!("error: {e}"))
}

/// `"name"` with inner quotes doubled: any Unicode spelling is a valid identifier this way.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A dataset ref: lowercase letters, digits and `_`, starting with a letter, at most 48 chars.
pub fn valid_ref(r: &str) -> bool {
    r.len() <= 48
        && r.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && r.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// `s` in the spelling of loom's names: ASCII letters lowercased, digits kept, `_` for the rest.
pub fn name_chars(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// A member's name as the end of a dataset name: name characters only, at most 30 of them.
fn member_suffix(member: &str) -> String {
    let mut out = name_chars(member);
    while out.contains("__") {
        out = out.replace("__", "_");
    }
    let out: String = out.trim_matches('_').chars().take(30).collect();
    match out.trim_end_matches('_') {
        "" => "table".to_owned(),
        kept => kept.to_owned(),
    }
}

fn ref_base(s: &str) -> String {
    let mut out = name_chars(s);
    while out.contains("__") {
        out = out.replace("__", "_");
    }
    let out = out.trim_matches('_');
    let out = if out.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
        out.to_owned()
    } else {
        format!("d_{out}")
    };
    out.chars()
        .take(40)
        .collect::<String>()
        .trim_end_matches('_')
        .to_owned()
}

/// The reviewed function list (`functions.list`) as `(allowed, kind, name)`, kinds spelled as
/// `duckdb_functions()` spells them (and `window`): for tests that prove it against the engine.
pub fn reviewed_functions() -> Vec<(bool, &'static str, String)> {
    functions::reviews()
        .into_iter()
        .map(|r| (r.allow, r.kind.name(), r.name))
        .collect()
}

/// The argument of the hidden command that proves the seal in a child process.
pub const SEAL_CHECK_ARG: &str = "__seal-check";

/// Opens a sealed engine with default settings and proves the seal (the child's side).
pub fn seal_check() -> Result<()> {
    let probe_file = std::env::current_exe().map_err(|e| StoreError::Io(e.to_string()))?;
    let defaults = crate::config::StoreSettings::default();
    Store::open(StoreConfig {
        memory_limit: defaults.memory_limit,
        threads: 1,
        memory_budget: defaults.memory_budget,
        query_timeout: defaults.query_timeout,
        export_dir: std::env::temp_dir(),
        envelope_budget: defaults.envelope_budget,
        inline_rows: defaults.inline_rows,
        probe_file,
        blob_dir: None,
        parked_max_bytes: u64::MAX,
    })
    .map(drop)
}

/// Runs `loom __seal-check` and reports why the seal could not be proven, if it could not.
pub async fn prove_seal_in_child() -> std::result::Result<(), SealError> {
    let exe = std::env::current_exe()
        .map_err(|e| SealError::Probe(format!("cannot find loom's own executable: {e}")))?;
    let out = tokio::process::Command::new(exe)
        .arg(SEAL_CHECK_ARG)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output()
        .await
        .map_err(|e| SealError::Probe(format!("cannot run the seal self-test: {e}")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(SealError::Probe(format!(
            "the DuckDB seal self-test failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

impl Store {
    /// Opens and seals the engine, then proves the seal.
    pub fn open(config: StoreConfig) -> Result<Store> {
        // The folder is created 0700; DuckDB creates `spill` inside it only when it needs to,
        // so nothing in it is ever reachable by another user.
        let private = private_dir::PrivateDir::create()
            .map_err(|e| StoreError::Io(format!("cannot create loom's temporary folder: {e}")))?;
        let db = SealedDb::open(
            &private.path().join("spill"),
            &config.memory_limit,
            config.threads,
        )?;
        let writer = db.connect()?;
        let mut lanes = Vec::with_capacity(query::LANES);
        for _ in 0..query::LANES {
            let lane = db.connect()?;
            sealed::self_test(&lane, &config.probe_file)?;
            lanes.push(lane);
        }
        let lanes = query::Lanes::new(lanes);
        let bench = db.connect()?;
        sealed::self_test(&bench, &config.probe_file)?;
        let bench = query::Lane::new(bench);
        let archive = db.connect()?;
        writer.execute_batch(&calls_table::create_sql())?;
        let parked = match &config.blob_dir {
            Some(d) => blobs::Blobs::persistent(d.clone()),
            None => blobs::Blobs::default(),
        }
        .bounded(config.parked_max_bytes);
        Ok(Store {
            config,
            writer: Mutex::new(writer),
            lanes,
            archive: Mutex::new(archive),
            bench,
            db,
            catalog: Mutex::new(HashMap::new()),
            results: Mutex::default(),
            early_cancels: Mutex::default(),
            blobs: parked,
            blob_lineage: Mutex::default(),
            clock: std::sync::atomic::AtomicU64::new(1),
            names: Mutex::default(),
            changes: std::sync::OnceLock::new(),
            calls: std::sync::OnceLock::new(),
            private,
        })
    }

    /// A store for unit tests, exporting under `dir`.
    #[cfg(test)]
    pub(crate) fn for_tests(dir: &Path) -> Store {
        Store::open(StoreConfig {
            memory_limit: "1GB".into(),
            threads: 2,
            memory_budget: 512 << 20,
            query_timeout: Duration::from_secs(120),
            export_dir: dir.join("exports"),
            envelope_budget: 1500,
            inline_rows: 100,
            probe_file: std::env::current_exe().expect("test binary path"),
            blob_dir: None,
            parked_max_bytes: u64::MAX,
        })
        .expect("store opens")
    }

    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    /// Where the engine spills (inside `private_dir`).
    pub fn spill_dir(&self) -> PathBuf {
        self.private.path().join("spill")
    }

    /// Loom's private temporary folder for this store (0700).
    pub fn private_dir(&self) -> &Path {
        self.private.path()
    }

    fn tick(&self) -> u64 {
        self.clock
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// A fresh ref starting with `base`, numbered by its own prefix's count: never one drawn
    /// before, nor one a client holds now (a materialized dataset, a kept result).
    fn new_ref(&self, base: &str) -> String {
        self.draw_name(&ref_base(base))
    }

    /// A fresh `<prefix>_<n>` (see `names.rs`).
    fn draw_name(&self, prefix: &str) -> String {
        // The catalog and the results are locked one at a time: elsewhere they are taken in
        // either order.
        Self::lock(&self.names).draw(prefix, |n| {
            Self::lock(&self.catalog).contains_key(n) || Self::lock(&self.results).holds(n)
        })
    }

    /// A client chose `name` for a dataset: false when loom drew it for one of its own; from
    /// now on loom never draws it.
    fn claim_name(&self, name: &str) -> bool {
        Self::lock(&self.names).claim(name)
    }

    fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn datasets(&self) -> Vec<DatasetMeta> {
        let mut all: Vec<_> = Self::lock(&self.catalog).values().cloned().collect();
        all.sort_by(|a, b| {
            a.created
                .cmp(&b.created)
                .then(a.dataset_ref.cmp(&b.dataset_ref))
        });
        all
    }

    /// A dataset's catalog entry without counting it as used (history reads it; that must
    /// not change which dataset is evicted next).
    pub fn peek_dataset(&self, r: &str) -> Result<DatasetMeta> {
        Self::lock(&self.catalog)
            .get(r)
            .cloned()
            .ok_or_else(|| StoreError::UnknownDataset(r.to_owned()))
    }

    pub fn dataset(&self, r: &str) -> Result<DatasetMeta> {
        let mut cat = Self::lock(&self.catalog);
        let t = self.tick();
        let meta = cat
            .get_mut(r)
            .ok_or_else(|| StoreError::UnknownDataset(r.to_owned()))?;
        meta.last_used = t;
        Ok(meta.clone())
    }

    /// Ingests a downstream table as a new dataset and returns its catalog entry.
    pub fn ingest(&self, table: &Table, provenance: Provenance) -> Result<DatasetMeta> {
        self.ingest_traced(table, provenance, Lineage::default())
    }

    /// [`Store::ingest`], with where the table came from.
    pub fn ingest_traced(
        &self,
        table: &Table,
        provenance: Provenance,
        lineage: Lineage,
    ) -> Result<DatasetMeta> {
        let base = format!("{}_{}", provenance.server, provenance.tool);
        self.ingest_named(table, &base, provenance, lineage)
    }

    /// [`Store::ingest_traced`], named after `base` rather than the server and tool (a
    /// resource read is named after its URI, not after `resources/read`).
    pub fn ingest_named(
        &self,
        table: &Table,
        base: &str,
        provenance: Provenance,
        lineage: Lineage,
    ) -> Result<DatasetMeta> {
        let r = self.new_ref(base);
        self.ingest_at(table, r, provenance, lineage, Vec::new())
    }

    /// Ingests tables found side by side in one result (`intercept::extract::multi`): one
    /// dataset each, named `<ref>_<member>` after one ref drawn for the result
    /// (`memory_read_graph_1_entities`), each knowing the others as its siblings. All or
    /// nothing: when one cannot be made, the ones made are dropped again.
    pub fn ingest_group(
        &self,
        tables: &[(&str, &Table)],
        base: &str,
        provenance: Provenance,
        lineage: Lineage,
    ) -> Result<Vec<DatasetMeta>> {
        let group = self.new_ref(base);
        let refs: Vec<String> = tables
            .iter()
            .map(|(member, _)| format!("{group}_{}", member_suffix(member)))
            .collect();
        for r in &refs {
            let free = !Self::lock(&self.catalog).contains_key(r)
                && !Self::lock(&self.results).holds(r)
                && Self::lock(&self.names).reserve(r);
            if !free {
                return Err(StoreError::Engine(format!(
                    "two tables of one result would both be named `{r}`, or the name is taken"
                )));
            }
        }
        let mut made: Vec<DatasetMeta> = Vec::with_capacity(tables.len());
        for ((_, table), r) in tables.iter().zip(&refs) {
            let siblings = refs.iter().filter(|o| *o != r).cloned().collect();
            match self.ingest_at(
                table,
                r.clone(),
                provenance.clone(),
                lineage.clone(),
                siblings,
            ) {
                Ok(meta) => made.push(meta),
                Err(e) => {
                    for m in &made {
                        let _ = self.drop_dataset(&m.dataset_ref);
                    }
                    return Err(e);
                }
            }
        }
        Ok(made)
    }

    /// Creates dataset `r` from `table` and enters it in the catalog.
    fn ingest_at(
        &self,
        table: &Table,
        r: String,
        provenance: Provenance,
        lineage: Lineage,
        siblings: Vec<String>,
    ) -> Result<DatasetMeta> {
        let writer = Self::lock(&self.writer);
        let rows = ingest::create_and_append(&writer, &self.db, &r, table)?;
        drop(writer);
        let meta = DatasetMeta {
            dataset_ref: r.clone(),
            kind: DatasetKind::Ingest,
            rows,
            columns: table
                .columns
                .iter()
                .map(|c| (c.name.clone(), c.ty.sql().to_owned()))
                .collect(),
            pinned: false,
            provenance: Some(provenance),
            context: table.context.clone(),
            last_used: self.tick(),
            created: now_iso(),
            lineage: (!lineage.is_empty()).then_some(lineage),
            siblings,
        };
        Self::lock(&self.catalog).insert(r, meta.clone());
        self.report_created(&meta);
        self.evict(Room::ForData);
        Ok(meta)
    }

    fn report(&self, change: CatalogChange) {
        if let Some(sink) = self.changes.get() {
            sink(change);
        }
    }

    fn report_created(&self, meta: &DatasetMeta) {
        self.report(CatalogChange::Created {
            dataset: meta.dataset_ref.clone(),
            rows: meta.rows,
            kind: meta.kind,
            provenance: meta.provenance.clone(),
        });
    }

    /// Parks text for paged or pattern fetch (see `blobs.rs`) and reports it.
    pub fn park(
        &self,
        content: String,
        summary: String,
        content_type: String,
        ttl: Duration,
    ) -> std::sync::Arc<blobs::ParkedBlob> {
        self.park_traced(content, summary, content_type, ttl, Lineage::default())
    }

    /// [`Store::park`], with where the text came from.
    pub fn park_traced(
        &self,
        content: String,
        summary: String,
        content_type: String,
        ttl: Duration,
        lineage: Lineage,
    ) -> std::sync::Arc<blobs::ParkedBlob> {
        let bytes = content.len() as u64;
        let blob = self.blobs.park(content, summary, content_type, ttl);
        if !lineage.is_empty() {
            Self::lock(&self.blob_lineage).insert(blob.key.clone(), lineage);
        }
        self.report(CatalogChange::Parked {
            key: blob.key.clone(),
            bytes,
        });
        blob
    }

    /// Registers a table that a statement created inside the engine.
    fn register(
        &self,
        r: &str,
        kind: DatasetKind,
        pinned: bool,
        lineage: Lineage,
    ) -> Result<DatasetMeta> {
        let (rows, columns) = self.on_a_lane(|conn| profile::shape(conn, r))?;
        let meta = DatasetMeta {
            dataset_ref: r.to_owned(),
            kind,
            rows,
            columns,
            pinned,
            provenance: None,
            context: Map::new(),
            last_used: self.tick(),
            created: now_iso(),
            lineage: (!lineage.is_empty()).then_some(lineage),
            siblings: Vec::new(),
        };
        Self::lock(&self.catalog).insert(r.to_owned(), meta.clone());
        self.report_created(&meta);
        self.evict(Room::ForData);
        Ok(meta)
    }

    /// Where a dataset or a parked text came from, by its ref or key; `None` when loom knows
    /// nothing of it (or it is gone).
    pub fn lineage_of(&self, r: &str) -> Option<Lineage> {
        if let Some(meta) = Self::lock(&self.catalog).get(r) {
            return Some(meta.lineage.clone().unwrap_or_default());
        }
        let known = Self::lock(&self.blob_lineage).get(r).cloned();
        known.or_else(|| self.blobs.get(r).map(|_| Lineage::default()))
    }

    /// Hands the store the sink its catalog changes go to (the first one set stays).
    pub fn report_changes(&self, sink: ChangeSink) {
        let _ = self.changes.set(sink);
    }

    pub fn drop_dataset(&self, r: &str) -> Result<DatasetMeta> {
        self.remove_dataset(r, DropReason::Dropped)
    }

    fn remove_dataset(&self, r: &str, reason: DropReason) -> Result<DatasetMeta> {
        let meta = Self::lock(&self.catalog)
            .remove(r)
            .ok_or_else(|| StoreError::UnknownDataset(r.to_owned()))?;
        // Reported once it has left the catalog, whatever the engine says next: a listing
        // taken after this event never shows it again.
        self.report(CatalogChange::Dropped {
            dataset: r.to_owned(),
            reason,
        });
        Self::lock(&self.writer)
            .execute_batch(&format!("DROP TABLE IF EXISTS {}", quote_ident(r)))?;
        Ok(meta)
    }

    /// Profile for an envelope or `loom_describe`: stats, samples and join hints.
    pub fn profile(&self, r: &str, samples: usize) -> Result<Profile> {
        let meta = self.dataset(r)?;
        let others: Vec<DatasetMeta> = self
            .datasets()
            .into_iter()
            .filter(|d| d.dataset_ref != r)
            .collect();
        // The writer connection: a long user query on the reader never delays an envelope.
        let writer = Self::lock(&self.writer);
        profile::profile(&writer, &meta, &others, samples)
    }

    /// Bytes the engine holds, by its own accounting.
    pub fn memory_bytes(&self) -> u64 {
        let writer = Self::lock(&self.writer);
        writer
            .query_row(
                "SELECT coalesce(sum(memory_usage_bytes), 0)::UBIGINT FROM duckdb_memory()",
                [],
                |r| r.get::<_, u64>(0),
            )
            .unwrap_or(0)
    }

    /// Drops what was least recently used until the engine is within `memory_budget`: workbench
    /// results that are not their connection's newest, oldest first; then, making room for
    /// data, the newest results too, then query results, then downstream ingests. Never a
    /// pinned dataset, and never a dataset to make room for a person's query: the model's data
    /// does not vanish because someone ran a large query in the workbench.
    pub fn evict(&self, room: Room) -> Vec<String> {
        let mut evicted = Vec::new();
        loop {
            if self.memory_bytes() <= self.config.memory_budget {
                break;
            }
            let result = {
                let mut results = Self::lock(&self.results);
                results
                    .take_oldest(|newest| !newest)
                    .or_else(|| match room {
                        Room::ForData => results.take_oldest(|_| true),
                        Room::ForResult => None,
                    })
            };
            if let Some(k) = result {
                let budget = self.config.memory_budget;
                self.drop_result(
                    k,
                    format!(
                        "this result was dropped to keep the engine within memory_budget ({} MiB); run the query again, or add a LIMIT",
                        budget >> 20
                    ),
                );
                continue;
            }
            if room == Room::ForResult {
                break;
            }
            let victim = {
                let cat = Self::lock(&self.catalog);
                cat.values()
                    .filter(|d| !d.pinned)
                    .min_by_key(|d| {
                        (
                            if d.kind == DatasetKind::Query { 0 } else { 1 },
                            d.last_used,
                        )
                    })
                    .map(|d| d.dataset_ref.clone())
            };
            let Some(v) = victim else { break };
            if self.remove_dataset(&v, DropReason::Evicted).is_err() {
                break;
            }
            tracing::info!(dataset = %v, "evicted to stay within memory_budget");
            evicted.push(v);
        }
        evicted
    }

    /// Runs `f` on a free lane of the clients' connections, outside the watchdog (loom's own
    /// reads of its tables), within the share of whoever asks.
    fn on_a_lane<T>(&self, f: impl FnOnce(&duckdb::Connection) -> T) -> T {
        let taken = self.lanes.take(query::asking_client());
        f(&taken.conn())
    }

    /// A digest of everything a client statement could change: the catalog (tables, views,
    /// macros, schemas, sequences, types, indexes, databases, loaded extensions, variables),
    /// every dataset's row count and content checksum, the settings of the connection client
    /// queries run on, what well-known functions answer there, and the listing of loom's
    /// private folder. Read with loom's own connection, outside the guard. Tests compare it
    /// before and after hostile statements; it is equal only when nothing changed.
    pub fn fingerprint(&self) -> String {
        let mut out = Vec::new();
        let taken = self.lanes.take(0);
        let reader = taken.conn();
        let mut facts: Vec<String> = [
            "SELECT database_name, schema_name, table_name, estimated_size IS NULL, column_count, sql FROM duckdb_tables() ORDER BY ALL",
            "SELECT database_name, schema_name, view_name, sql FROM duckdb_views() WHERE NOT internal ORDER BY ALL",
            "SELECT database_name, schema_name, function_name, function_type, macro_definition FROM duckdb_functions() WHERE NOT internal OR function_type IN ('macro', 'table_macro') ORDER BY ALL",
            "SELECT database_name, schema_name, internal FROM duckdb_schemas() ORDER BY ALL",
            "SELECT database_name, schema_name, sequence_name, last_value FROM duckdb_sequences() ORDER BY ALL",
            "SELECT database_name, schema_name, type_name, logical_type FROM duckdb_types() WHERE NOT internal ORDER BY ALL",
            "SELECT database_name, schema_name, index_name, table_name FROM duckdb_indexes() ORDER BY ALL",
            "SELECT database_name, path, readonly FROM duckdb_databases() ORDER BY ALL",
            "SELECT extension_name FROM duckdb_extensions() WHERE loaded ORDER BY ALL",
            "SELECT name, value FROM duckdb_variables() ORDER BY ALL",
            SETTINGS,
            "SELECT upper('loom'), lower('LOOM'), length('loom'), abs(-1), concat('a', 'b'), current_schema(), current_schemas(true)::VARCHAR, 1 + 1, 'x'::VARCHAR || 'y', round(2.5)",
        ]
        .iter()
        .map(|sql| format!("{sql}\n{}", dump(&reader, sql)))
        .collect();
        let mut tables: Vec<(String, String)> = Self::lock(&self.catalog)
            .iter()
            .map(|(t, m)| (t.clone(), profile::row_alias(&m.columns)))
            .collect();
        tables.sort();
        for (t, row) in tables {
            // The whole row, under a name no column has (a column `x` would bind first).
            let q = quote_ident(&t);
            let sql = format!("SELECT count(*), sum(hash({row}))::VARCHAR FROM {q} AS {row}");
            facts.push(format!("{t}: {}", dump(&reader, &sql)));
        }
        drop(reader);
        drop(taken);
        // Every other connection a statement runs on: the same settings, which no statement
        // may change.
        for (i, lane) in self.lanes.each.iter().enumerate() {
            let conn = Self::lock(&lane.conn);
            facts.push(format!("lane {i} {SETTINGS}\n{}", dump(&conn, SETTINGS)));
        }
        let bench = Self::lock(&self.bench.conn);
        facts.push(format!("workbench {SETTINGS}\n{}", dump(&bench, SETTINGS)));
        drop(bench);
        out.append(&mut facts);
        let mut files = Vec::new();
        let mut stack = vec![self.private_dir().to_path_buf()];
        while let Some(dir) = stack.pop() {
            match std::fs::read_dir(&dir) {
                Ok(entries) => {
                    for e in entries.flatten() {
                        let p = e.path();
                        let meta = e.metadata().ok();
                        files.push(format!(
                            "{} {:?}",
                            p.display(),
                            meta.as_ref().map(|m| (m.is_dir(), m.len()))
                        ));
                        if meta.is_some_and(|m| m.is_dir()) {
                            stack.push(p);
                        }
                    }
                }
                Err(e) => files.push(format!("{}: {e}", dir.display())),
            }
        }
        files.sort();
        out.push(format!("private folder:\n{}", files.join("\n")));
        out.join("\n\n")
    }

    /// Whether a query (the model's or a workbench's) is running on the query connection.
    pub fn query_running(&self) -> bool {
        self.lanes.armed() || self.bench.watchdog.armed()
    }

    /// Runs only the statement guard on `sql`: whether and as what it would be accepted.
    pub fn check_sql(&self, sql: &str) -> Result<sealed::StatementKind> {
        query::guard(self, sql).map(|g| g.kind)
    }

    pub fn query(&self, sql: &str) -> Result<QueryOutcome> {
        self.record_calls();
        query::run(self, sql)
    }

    /// Where finished calls come from for `loom_calls` (set once, by the session).
    pub fn feed_calls_from(&self, feed: std::sync::Arc<calls_table::CallFeed>) {
        let _ = self.calls.set(feed);
    }

    /// Writes the calls that finished since the last query into `loom_calls`, so a query sees
    /// the traffic up to now. A failed write is logged and retried before the next query.
    fn record_calls(&self) {
        let Some(feed) = self.calls.get() else {
            return;
        };
        match calls_table::record(&self.writer, feed) {
            Ok(0) => {}
            Ok(lost) => tracing::warn!(
                "{lost} finished calls were not written to loom_calls: more finished before a query than it keeps waiting"
            ),
            Err(e) => tracing::warn!("finished calls not yet written to loom_calls: {e}"),
        }
    }

    /// Every row of a read-only query as exact JSON, within `max_bytes` (see `bind.rs`).
    pub fn rows_for_binding(&self, sql: &str, max_bytes: usize) -> Result<BoundRows> {
        self.record_calls();
        query::rows_for_binding(self, sql, max_bytes)
    }

    pub fn materialize(&self, sql: &str, name: &str) -> Result<DatasetMeta> {
        self.record_calls();
        query::materialize(self, sql, name)
    }

    pub fn export(
        &self,
        r: &str,
        format: ExportFormat,
        filename: Option<&str>,
    ) -> Result<(PathBuf, u64)> {
        let options = export::ExportOptions {
            filename: filename.map(str::to_owned),
            ..Default::default()
        };
        export::export(self, r, format, &options, &mut |_| {})
    }

    /// Like `export`, with a person's options, reporting the rows written so far every few
    /// thousand rows.
    pub fn export_with_progress(
        &self,
        r: &str,
        format: ExportFormat,
        options: &export::ExportOptions,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(PathBuf, u64)> {
        export::export(self, r, format, options, progress)
    }
}
