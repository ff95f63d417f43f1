//! Read-only queries. Every statement passes the guard (`guard.rs`), which decides from DuckDB's
//! own parser and returns the text loom runs for it; nothing else reaches the engine. A result
//! is built inside the engine; small ones come back inline as exact JSON, large ones stay there
//! as a dataset. A watchdog interrupts a query that outlives `query_timeout`, and only that
//! query: it is armed for one query and can no longer fire once that query has ended.

use super::guard::Guarded;
use super::profile::{first_rows, row_json, shape};
use super::sealed::StatementKind;
use super::{
    DatasetKind, DatasetMeta, Lineage, Result, Store, StoreError, guard, quote_ident, valid_ref,
};
use serde_json::Value;

#[derive(Debug)]
pub enum QueryOutcome {
    Inline {
        columns: Vec<(String, String)>,
        rows: Vec<Value>,
    },
    Dataset(Box<DatasetMeta>),
}

/// Decides whether `sql` may run: the one guard for every client (see `guard.rs`).
pub fn guard(store: &Store, sql: &str) -> Result<Guarded> {
    super::guard::check(&store.db, sql, store.private_dir()).map_err(|r| StoreError::Refused(r.0))
}

/// A failed run of a statement the binder had not seen (`Guarded::bound` false) reports the
/// binder's refusal of the client's own text when there is one, exactly as the guard would
/// have; a cancel, a timeout or a failure the binder does not explain stays as it is.
fn explain_failure(store: &Store, guarded: &Guarded, sql: &str, e: StoreError) -> StoreError {
    match e {
        // The engine's own advice (SET threads, preserve_insertion_order) names settings no
        // client may change here: say what the client can do instead.
        StoreError::Engine(m) if m.contains("Out of Memory Error") => {
            let first = m.lines().next().unwrap_or_default();
            StoreError::Engine(format!(
                "{first}\nThe query needs more memory than loom's engine may use (memory_limit {}): aggregate or filter first, select fewer columns, or add a LIMIT.",
                store.config.memory_limit
            ))
        }
        StoreError::Engine(_) if !guarded.bound => {
            super::guard::binder_refusal(&store.db, sql).map_or(e, |r| StoreError::Refused(r.0))
        }
        e => e,
    }
}

/// On whose behalf a query runs: a person at a workbench, or a client's tool call (by its call
/// number, and the client's number among the session's clients). A cancel reaches only the
/// query of whoever asks.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Asker {
    #[default]
    Unnamed,
    Workbench,
    Call {
        call: u64,
        client: u64,
    },
}

impl Asker {
    /// Whether a cancel meant for `wanted` reaches this query: a call by its number alone.
    fn answers_to(self, wanted: Asker) -> bool {
        match (self, wanted) {
            (Asker::Call { call: a, .. }, Asker::Call { call: b, .. }) => a == b,
            (Asker::Workbench, Asker::Workbench) => true,
            _ => false,
        }
    }

    /// Whose queries these are for sharing the lanes: each client, and everyone unnamed (the
    /// command line, the workbench's exports) as one.
    pub(super) fn client(self) -> u64 {
        match self {
            Asker::Call { client, .. } => client.saturating_add(1),
            _ => 0,
        }
    }
}

thread_local! {
    /// Who the queries run on this thread are for (see [`Store::asking_as`]).
    static ASKER: std::cell::Cell<Asker> = const { std::cell::Cell::new(Asker::Unnamed) };
}

/// Who asks on this thread, for sharing the lanes (see [`Asker::client`]).
pub(super) fn asking_client() -> u64 {
    ASKER.with(|a| a.get()).client()
}

/// How many cancels of calls whose query has not started yet are remembered.
const EARLY_CANCELS_KEPT: usize = 1024;

impl Store {
    /// Runs `f` with the queries it makes on this thread marked as `asker`'s.
    pub fn asking_as<T>(asker: Asker, f: impl FnOnce() -> T) -> T {
        struct Reset(Asker);
        impl Drop for Reset {
            fn drop(&mut self) {
                ASKER.with(|a| a.set(self.0));
            }
        }
        let _reset = Reset(ASKER.with(|a| a.replace(asker)));
        f()
    }

    /// Cancels the query of tool call `call`: at once if it runs, and as soon as it would
    /// start if it waits for the connection. False when it runs no query now.
    pub fn cancel_call(&self, call: u64) -> bool {
        let wanted = Asker::Call { call, client: 0 };
        if self
            .lanes
            .each
            .iter()
            .any(|lane| lane.watchdog.cancel(wanted, &lane.interrupt))
        {
            return true;
        }
        let mut early = Store::lock(&self.early_cancels);
        if early.len() == EARLY_CANCELS_KEPT {
            early.pop_front();
        }
        early.push_back(call);
        false
    }

    /// Stops the workbench query that is running, if one is; a model's query on the same
    /// connection is never touched.
    pub fn interrupt_query(&self) -> bool {
        self.bench
            .watchdog
            .cancel(Asker::Workbench, &self.bench.interrupt)
    }
}

/// What the watchdog knows of the query armed now.
#[derive(Default, Clone, Copy)]
pub(super) struct Armed {
    /// The query's generation; 0 when none runs.
    generation: u64,
    /// Whose it is.
    asker: Asker,
    /// The timeout interrupted it.
    fired: bool,
    /// A person cancelled it.
    cancelled: bool,
    /// It grew loom past its memory ceiling.
    memory: bool,
}

/// The query watchdog: armed for one query on the reader connection at a time. A timer fires
/// it with the generation it was armed for; once that query has ended (disarmed) or another
/// has been armed, the stale timer does nothing. Firing, cancelling and disarming take the same
/// lock, so an interrupt can never reach a query other than the one it was meant for. A cancel
/// is held until the query ends and repeated by the timer: DuckDB forgets an interrupt that
/// arrives just before a statement begins, and the cancel must not be lost then.
#[derive(Default)]
pub(super) struct Watchdog {
    state: std::sync::Mutex<Armed>,
    next: std::sync::atomic::AtomicU64,
}

/// How often a held cancel is repeated while its query runs.
const CANCEL_REPEAT: std::time::Duration = std::time::Duration::from_millis(20);

impl Watchdog {
    fn lock(&self) -> std::sync::MutexGuard<'_, Armed> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Arms the watchdog for `asker`'s query about to run; returns its generation.
    pub(super) fn arm(&self, asker: Asker) -> u64 {
        let generation = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        *self.lock() = Armed {
            generation,
            asker,
            ..Armed::default()
        };
        generation
    }

    /// Whether a query is armed (running) now.
    pub(super) fn armed(&self) -> bool {
        self.lock().generation != 0
    }

    /// The query has ended; returns what happened to it.
    pub(super) fn disarm(&self) -> Armed {
        std::mem::take(&mut *self.lock())
    }

    /// Interrupts the query armed as `generation` if it is still running; true if it did. The
    /// timer calls it again every `CANCEL_REPEAT` until that query ends.
    pub(super) fn fire(&self, generation: u64, handle: &duckdb::InterruptHandle) -> bool {
        let mut state = self.lock();
        if state.generation != generation || generation == 0 {
            return false;
        }
        handle.interrupt();
        state.fired = true;
        true
    }

    /// Cancels `asker`'s query if it is the one running now, and keeps it cancelled until it
    /// ends; false otherwise.
    pub(super) fn cancel(&self, asker: Asker, handle: &duckdb::InterruptHandle) -> bool {
        let mut state = self.lock();
        if state.generation == 0 || !state.asker.answers_to(asker) {
            return false;
        }
        state.cancelled = true;
        handle.interrupt();
        true
    }

    /// Interrupts the query armed as `generation`, if it still runs, for growing loom past
    /// its memory ceiling; held and repeated like a timeout.
    fn stop_for_memory(&self, generation: u64, handle: &duckdb::InterruptHandle) {
        let mut state = self.lock();
        if state.generation == generation && generation != 0 {
            state.memory = true;
            handle.interrupt();
        }
    }

    /// Repeats a held cancel, timeout or memory stop of the query armed as `generation`, if it
    /// still runs.
    fn repeat(&self, generation: u64, handle: &duckdb::InterruptHandle) {
        let state = self.lock();
        if state.generation == generation
            && generation != 0
            && (state.cancelled || state.fired || state.memory)
        {
            handle.interrupt();
        }
    }
}

/// A connection client queries run on, with its own watchdog and interrupt handle.
pub(super) struct Lane {
    pub(super) conn: std::sync::Mutex<duckdb::Connection>,
    pub(super) interrupt: std::sync::Arc<duckdb::InterruptHandle>,
    pub(super) watchdog: std::sync::Arc<Watchdog>,
}

/// How many connections the clients' queries share: queries of different clients run side
/// by side, within the engine's threads and the one memory ceiling they all count against.
pub(super) const LANES: usize = 4;

/// The connections clients' queries run on, one query each at a time. No client holds more
/// than `LANES - 1` of them, so one client's slow queries always leave a lane for another's.
pub(super) struct Lanes {
    pub(super) each: Vec<Lane>,
    /// Whose query holds each lane now (`None`: free).
    holders: std::sync::Mutex<Vec<Option<u64>>>,
    freed: std::sync::Condvar,
    /// Queries waiting for a lane now.
    waiting: std::sync::atomic::AtomicUsize,
}

/// A lane taken for one query; given back when dropped.
pub(super) struct Taken<'a> {
    lanes: &'a Lanes,
    index: usize,
}

impl<'a> Taken<'a> {
    /// The lane's connection (no one else's query can hold it: the lane is this one's).
    pub(super) fn conn(&self) -> std::sync::MutexGuard<'a, duckdb::Connection> {
        Store::lock(&self.lanes.each[self.index].conn)
    }

    /// The lane itself: its watchdog and interrupt handle.
    pub(super) fn lane(&self) -> &'a Lane {
        &self.lanes.each[self.index]
    }
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        Store::lock(&self.lanes.holders)[self.index] = None;
        self.lanes.freed.notify_all();
    }
}

impl Lanes {
    pub(super) fn new(conns: Vec<duckdb::Connection>) -> Lanes {
        Lanes {
            holders: std::sync::Mutex::new(vec![None; conns.len()]),
            each: conns.into_iter().map(Lane::new).collect(),
            freed: std::sync::Condvar::new(),
            waiting: Default::default(),
        }
    }

    /// Takes a free lane for a query of `client`, waiting while none is free or the client
    /// already holds its share.
    pub(super) fn take(&self, client: u64) -> Taken<'_> {
        let share = self.each.len().saturating_sub(1).max(1);
        let mut holders = Store::lock(&self.holders);
        loop {
            let held = holders.iter().filter(|h| **h == Some(client)).count();
            if held < share
                && let Some(index) = holders.iter().position(Option::is_none)
            {
                holders[index] = Some(client);
                return Taken { lanes: self, index };
            }
            use std::sync::atomic::Ordering::SeqCst;
            self.waiting.fetch_add(1, SeqCst);
            holders = self.freed.wait(holders).unwrap_or_else(|e| e.into_inner());
            self.waiting.fetch_sub(1, SeqCst);
        }
    }

    /// How many queries wait for a lane now.
    #[cfg(test)]
    pub(super) fn waiting(&self) -> usize {
        self.waiting.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Whether a query runs on any lane now.
    pub(super) fn armed(&self) -> bool {
        self.each.iter().any(|l| l.watchdog.armed())
    }
}

impl Lane {
    pub(super) fn new(conn: duckdb::Connection) -> Lane {
        Lane {
            interrupt: conn.interrupt_handle(),
            conn: std::sync::Mutex::new(conn),
            watchdog: Default::default(),
        }
    }
}

/// Runs `f` on the connection of whoever asks (the workbench's own, or a lane of the clients'
/// for clients and the command line), interrupting it after the query timeout.
pub(super) fn with_timeout<T>(
    store: &Store,
    f: impl FnOnce(&duckdb::Connection) -> Result<T>,
) -> Result<T> {
    let timeout = store.config.query_timeout;
    let (done, watch) = std::sync::mpsc::channel::<()>();
    let asker = ASKER.with(|a| a.get());
    let taken;
    let (reader, watchdog, interrupt) = if asker == Asker::Workbench {
        (
            Store::lock(&store.bench.conn),
            &store.bench.watchdog,
            &store.bench.interrupt,
        )
    } else {
        taken = store.lanes.take(asker.client());
        let lane = taken.lane();
        (taken.conn(), &lane.watchdog, &lane.interrupt)
    };
    if let Asker::Call { call, .. } = asker {
        // Cancelled while it waited for the connection: it never starts.
        let mut early = Store::lock(&store.early_cancels);
        if let Some(i) = early.iter().position(|c| *c == call) {
            early.remove(i);
            return Err(StoreError::Cancelled);
        }
    }
    let generation = watchdog.arm(asker);
    let dog = watchdog.clone();
    let handle = interrupt.clone();
    // Held from here to the end of the query: the timer stops it past the ceiling, and the
    // engine's large allocations past it fail.
    let held = std::sync::Arc::new(super::memory_bound::Held::start(query_allowance(store)));
    let watched = held.clone();
    std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + timeout;
        // Once the deadline has passed, the interrupt is repeated like a held cancel until the
        // query ends: one that lands just before the statement begins would be forgotten.
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let wait = if left.is_zero() {
                CANCEL_REPEAT
            } else {
                left.min(CANCEL_REPEAT)
            };
            match watch.recv_timeout(wait) {
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) if left <= wait => {
                    dog.fire(generation, &handle);
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    if watched.passed() {
                        dog.stop_for_memory(generation, &handle);
                    }
                    dog.repeat(generation, &handle);
                }
                _ => break,
            }
        }
    });
    let out = f(&reader);
    let ended = watchdog.disarm();
    let refused = held.refused_any();
    drop(held);
    let _ = done.send(());
    drop(reader);
    match out {
        Err(_) if ended.cancelled => Err(StoreError::Cancelled),
        Err(_) if ended.fired => Err(StoreError::Timeout(timeout.as_secs_f64())),
        Err(_) if ended.memory || refused => Err(StoreError::MemoryBound {
            limit: store.config.memory_limit.clone(),
            headroom_mib: super::memory_bound::HEADROOM >> 20,
        }),
        out => out,
    }
}

/// What one client query may grow loom by: the engine's `memory_limit` and the headroom for
/// values built outside it (see `memory_bound.rs`).
fn query_allowance(store: &Store) -> u64 {
    crate::config::parse_size(&store.config.memory_limit)
        .unwrap_or(2 << 30)
        .saturating_add(super::memory_bound::HEADROOM)
}

/// Guards `sql`, then runs `f` with what the guard returned on the reader connection under the
/// watchdog. The one way a client's statement reaches the engine.
pub(super) fn run_guarded<T>(
    store: &Store,
    sql: &str,
    f: impl FnOnce(&duckdb::Connection, &Guarded) -> Result<T>,
) -> Result<T> {
    let guarded = guard(store, sql)?;
    with_timeout(store, |conn| f(conn, &guarded))
        .map_err(|e| explain_failure(store, &guarded, sql, e))
}

/// What a query left behind: rows to return now, or a table to register as a dataset.
enum Ran {
    Inline(QueryOutcome),
    Table(String),
}

/// How many times an envelope's token budget an inline answer may cost (about four bytes a
/// token): beyond it, even a few rows become a dataset the model pages through.
const INLINE_ENVELOPES: usize = 4;

/// The bytes `table`'s rows take as JSON, counted in the engine.
fn inline_bytes(
    conn: &duckdb::Connection,
    table: &str,
    columns: &[(String, String)],
) -> Result<usize> {
    let (row, from) = row_json(table, columns);
    let sql = format!("SELECT coalesce(sum(strlen({row})), 0)::UBIGINT FROM {from}");
    Ok(conn.query_row(&sql, [], |r| r.get::<_, u64>(0))? as usize)
}

/// The lineage of a dataset `sql` derived: the call it ran for (when a tool call asked), the
/// datasets it read (those the catalog holds, and loom's call log), and the statement.
fn derived(store: &Store, sql: &str) -> Lineage {
    let read = super::guard::tables_read(&store.db, sql);
    let known = Store::lock(&store.catalog);
    let inputs = read
        .into_iter()
        .filter(|t| known.contains_key(t) || t == super::calls_table::TABLE || t.contains('.'))
        .collect();
    drop(known);
    let call = match ASKER.with(|a| a.get()) {
        Asker::Call { call, .. } => Some(call),
        _ => None,
    };
    Lineage {
        call,
        inputs,
        sql: Some(guard::body(sql).to_owned()),
    }
}

/// A read-only query's rows bound into a tool call: the columns with their types, the rows in
/// order as exact JSON, and the datasets the statement read.
pub struct BoundRows {
    pub columns: Vec<(String, String)>,
    pub rows: Vec<Value>,
    pub read: Vec<String>,
}

/// The rows of a read-only query, whole and as exact JSON, for data bound into a tool call: the
/// columns with their types, the rows in order, and the datasets the statement read. Refused
/// beyond `max_bytes` of JSON (counted in the engine before a row leaves it).
pub fn rows_for_binding(store: &Store, sql: &str, max_bytes: usize) -> Result<BoundRows> {
    let rows = run_guarded(store, sql, |conn, guarded| {
        if guarded.kind != StatementKind::Select {
            return Err(StoreError::Refused(
                "only a query that returns rows can be bound".into(),
            ));
        }
        let name = store.new_ref("bind");
        let table = quote_ident(&name);
        conn.execute_batch(&format!("CREATE TEMP TABLE {table} AS {}", guarded.sql))?;
        let out = (|| {
            let (_, columns) = temp_shape(conn, &name)?;
            let bytes = inline_bytes(conn, &table, &columns)?;
            if bytes > max_bytes {
                return Err(StoreError::Refused(format!(
                    "the query's rows are {bytes} bytes as JSON, more than max_bound_bytes ({max_bytes}); select fewer rows or columns"
                )));
            }
            let n: u64 =
                conn.query_row(&format!("SELECT count(*)::UBIGINT FROM {table}"), [], |r| {
                    r.get(0)
                })?;
            let rows = first_rows(conn, &table, &columns, n as usize)?;
            Ok((columns, rows))
        })();
        let _ = conn.execute_batch(&format!("DROP TABLE IF EXISTS temp.{table}"));
        out
    })?;
    let lineage = derived(store, sql);
    Ok(BoundRows {
        columns: rows.0,
        rows: rows.1,
        read: lineage.inputs,
    })
}

/// The columns of a temporary table, in order, with their types.
fn temp_shape(conn: &duckdb::Connection, table: &str) -> Result<(u64, Vec<(String, String)>)> {
    let mut stmt = conn.prepare("SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ? AND database_name = 'temp' ORDER BY column_index")?;
    let cols = stmt
        .query_map([table], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok((0, cols))
}

pub fn run(store: &Store, sql: &str) -> Result<QueryOutcome> {
    let inline_rows = store.config.inline_rows;
    let inline_max = store.config.envelope_budget * INLINE_ENVELOPES * 4;
    let outcome = run_guarded(store, sql, |conn, guarded| {
        if guarded.kind == StatementKind::Explain {
            // A plan is two text columns; it cannot be wrapped in a table, so it runs as is.
            let mut stmt = conn.prepare(&guarded.sql)?;
            let rows = stmt
                .query_map([], |r| Ok(serde_json::json!({ "explain_key": r.get::<_, Option<String>>(0)?, "explain_value": r.get::<_, Option<String>>(1)? })))?
                .collect::<std::result::Result<Vec<_>, _>>()?;
            return Ok(Ran::Inline(QueryOutcome::Inline {
                columns: vec![
                    ("explain_key".into(), "VARCHAR".into()),
                    ("explain_value".into(), "VARCHAR".into()),
                ],
                rows,
            }));
        }
        let name = store.new_ref("q");
        let table = quote_ident(&name);
        conn.execute_batch(&format!("CREATE TABLE {table} AS {}", guarded.sql))?;
        let (rows, columns) = shape(conn, &name)?;
        if rows as usize <= inline_rows && inline_bytes(conn, &table, &columns)? <= inline_max {
            let data = first_rows(conn, &table, &columns, inline_rows);
            let _ = conn.execute_batch(&format!("DROP TABLE IF EXISTS {table}"));
            return Ok(Ran::Inline(QueryOutcome::Inline {
                columns,
                rows: data?,
            }));
        }
        Ok(Ran::Table(name))
    })?;
    match outcome {
        Ran::Inline(inline) => Ok(inline),
        Ran::Table(name) => Ok(QueryOutcome::Dataset(Box::new(store.register(
            &name,
            DatasetKind::Query,
            false,
            derived(store, sql),
        )?))),
    }
}

pub fn materialize(store: &Store, sql: &str, name: &str) -> Result<DatasetMeta> {
    if !valid_ref(name) {
        return Err(StoreError::Refused(format!(
            "`{name}` is not a valid dataset name: use lowercase letters, digits and _, starting with a letter, at most 48 characters"
        )));
    }
    if Store::lock(&store.catalog).contains_key(name) {
        return Err(StoreError::Refused(format!(
            "a dataset named `{name}` already exists; loom_drop it first or pick another name"
        )));
    }
    // A name loom gave one of its own tables stays that table's for the session, even once it
    // is gone: a client that remembered it never finds someone else's data under it.
    if !store.claim_name(name) {
        return Err(StoreError::Refused(format!(
            "`{name}` is a name loom gave one of its own tables this session; pick another name"
        )));
    }
    // A reserved word would break the SQL written against it (the envelope's own hint
    // included); a name the engine already uses would shadow or clash with it.
    let taken: bool = Store::lock(&store.writer).query_row(
        "SELECT EXISTS (SELECT 1 FROM duckdb_keywords() WHERE lower(keyword_name) = $1 AND keyword_category = 'reserved') \
            OR EXISTS (SELECT 1 FROM duckdb_tables() WHERE lower(table_name) = $1) \
            OR EXISTS (SELECT 1 FROM duckdb_views() WHERE lower(view_name) = $1) \
            OR EXISTS (SELECT 1 FROM duckdb_schemas() WHERE lower(schema_name) = $1) \
            OR EXISTS (SELECT 1 FROM duckdb_databases() WHERE lower(database_name) = $1)",
        [name],
        |r| r.get(0),
    )?;
    if taken {
        return Err(StoreError::Refused(format!(
            "`{name}` is a reserved SQL word or a name the engine already uses; pick another name"
        )));
    }
    let table = quote_ident(name);
    run_guarded(store, sql, |conn, guarded| {
        if guarded.kind != StatementKind::Select {
            return Err(StoreError::Refused(
                "only a query that returns rows can be materialized".into(),
            ));
        }
        Ok(conn.execute_batch(&format!("CREATE TABLE {table} AS {}", guarded.sql))?)
    })?;
    store.register(name, DatasetKind::Materialized, true, derived(store, sql))
}

#[cfg(test)]
mod tests {
    use crate::store::{Store, StoreError};
    use std::time::Duration;

    fn open(dir: &std::path::Path) -> Store {
        Store::for_tests(dir)
    }

    /// Waits until the reader's watchdog is armed for a generation after `after`.
    fn armed_after(store: &Store, after: u64) -> u64 {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let g = store.lanes.each[0].watchdog.lock().generation;
            if g > after {
                return g;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the long query never started"
            );
            std::thread::yield_now();
        }
    }

    /// A statement the guard let through on the parser's word and the binder then refused reads
    /// exactly as a guard refusal: the binder's message against the client's own text, through
    /// every entry point, and nothing is left behind.
    #[test]
    fn a_binder_error_reads_against_the_clients_text_everywhere() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = open(dir.path());
        let sql = "SELECT nope FROM range(3)";
        let guarded = super::guard(&store, sql).expect("the parser accepts it");
        assert!(!guarded.bound, "a plain SELECT takes the parser-only path");
        let before = store.fingerprint();
        for e in [
            store.query(sql).map(|_| ()).unwrap_err(),
            store.materialize(sql, "m").map(|_| ()).unwrap_err(),
            store.run_result(sql, 0).map(|_| ()).unwrap_err(),
        ] {
            let StoreError::Refused(msg) = &e else {
                panic!("not a refusal: {e:?}")
            };
            assert!(
                msg.starts_with("the query was not accepted: Binder Error")
                    && msg.contains("LINE 1: SELECT nope FROM"),
                "{msg}"
            );
        }
        let explain = "EXPLAIN SELECT nope FROM range(3)";
        for e in [
            store.query(explain).map(|_| ()).unwrap_err(),
            store.run_result(explain, 0).map(|_| ()).unwrap_err(),
        ] {
            assert!(
                matches!(&e, StoreError::Refused(m) if m.contains("LINE 1: EXPLAIN SELECT nope")),
                "{e:?}"
            );
        }
        assert_eq!(before, store.fingerprint());
        // A failure the binder does not explain stays the engine's own.
        let e = store.query("SELECT 'x'::INTEGER AS n").unwrap_err();
        assert!(
            matches!(&e, StoreError::Engine(m) if m.contains("Conversion Error")),
            "{e:?}"
        );
    }

    const LONG: &str = "SELECT count(*) AS n FROM range(2000000000) a WHERE a.range % 7 = 3";

    /// Queries of different clients run side by side (issue 45, hole 8), and one client never
    /// holds every lane: with its share of lanes busy, its next query waits while another
    /// client's runs at once. Cancels reach each client's query on whichever lane it runs.
    #[test]
    fn a_clients_slow_queries_leave_a_lane_for_another_client() {
        use super::{Asker, LANES};
        const FOREVER: &str =
            "SELECT count(*) AS n FROM range(1000000000000) r WHERE r.range % 7 = 3";
        let dir = tempfile::tempdir().expect("tempdir");
        let store = open(dir.path());
        let busy = || {
            store
                .lanes
                .each
                .iter()
                .filter(|l| l.watchdog.armed())
                .count()
        };
        let ask = |call: u64, client: u64, sql: &'static str| {
            let store = &store;
            move || Store::asking_as(Asker::Call { call, client }, || store.query(sql))
        };
        std::thread::scope(|s| {
            let share = LANES - 1;
            let slow: Vec<_> = (0..share as u64)
                .map(|i| s.spawn(ask(i + 1, 1, FOREVER)))
                .collect();
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            while busy() < share {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the slow queries never ran"
                );
                std::thread::yield_now();
            }
            // Client 1's next query waits for a lane of its share; client 2's runs now.
            let waiting = s.spawn(ask(10, 1, "SELECT 1 AS v"));
            while store.lanes.waiting() == 0 {
                assert!(
                    std::time::Instant::now() < deadline && !waiting.is_finished(),
                    "client 1 took more than its share"
                );
                std::thread::yield_now();
            }
            let other = ask(20, 2, "SELECT 42 AS v")().expect("client 2's query");
            assert!(format!("{other:?}").contains("42"), "{other:?}");
            assert!(!waiting.is_finished(), "client 1 took more than its share");
            for call in 1..=share as u64 {
                while !store.cancel_call(call) {
                    std::thread::yield_now();
                }
            }
            for q in slow {
                let out = q.join().expect("query thread");
                assert!(matches!(out, Err(StoreError::Cancelled)), "{out:?}");
            }
            assert!(waiting.join().expect("query thread").is_ok());
        });
    }

    #[test]
    fn a_stale_watchdog_never_interrupts_the_next_query() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = open(dir.path());
        store.query("SELECT 1").expect("first query");
        let stale = store.lanes.each[0]
            .watchdog
            .next
            .load(std::sync::atomic::Ordering::Relaxed);
        std::thread::scope(|s| {
            let running = s.spawn(|| store.query(LONG));
            armed_after(&store, stale);
            // The first query's timer fires late, while the long query runs: nothing happens.
            assert!(
                !store.lanes.each[0]
                    .watchdog
                    .fire(stale, &store.lanes.each[0].interrupt)
            );
            let out = running.join().expect("query thread");
            assert!(out.is_ok(), "the long query was interrupted: {out:?}");
        });
    }

    #[test]
    fn the_watchdog_interrupts_the_query_it_was_armed_for() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = open(dir.path());
        let before = store.lanes.each[0]
            .watchdog
            .next
            .load(std::sync::atomic::Ordering::Relaxed);
        std::thread::scope(|s| {
            let running = s.spawn(|| store.query(LONG));
            let current = armed_after(&store, before);
            assert!(
                store.lanes.each[0]
                    .watchdog
                    .fire(current, &store.lanes.each[0].interrupt)
            );
            let out = running.join().expect("query thread");
            assert!(matches!(out, Err(StoreError::Timeout(_))), "{out:?}");
        });
        // The interrupted query leaves nothing behind: the next one runs.
        store.query("SELECT 42 AS v").expect("next query runs");
    }
}
