//! The call log as a table: `loom_calls` holds every call of the session that has finished, so
//! a person (or the model) can ask the traffic itself questions in SQL: which tool is slow, what
//! failed, how many tokens interception saved. Calls are fed in as they finish, kept in memory,
//! and written into the table on loom's own connection just before a query runs, never on a
//! call's path. The table is created with the store, so its existence never changes what a
//! query can see; clients can only read it (the guard refuses every write).

use super::Result;
use crate::types::events::CallSummary;
use std::collections::VecDeque;
use std::sync::Mutex;

pub use crate::types::data::{CALLS_TABLE as TABLE, CALLS_TABLE_COLUMNS};

/// Calls kept waiting for the table; beyond this the oldest are let go, and counted.
const PENDING_CAP: usize = 100_000;
/// Calls written under one hold of the writer connection: an envelope waiting for it waits
/// for one chunk at most, never for a whole backlog.
const CHUNK: usize = 5_000;
/// Rows the table keeps: the newest calls. It counts against the store's memory like a
/// dataset does, so it must not grow without bound.
pub const ROWS_KEPT: u64 = 100_000;

/// `CREATE TABLE loom_calls (…)`, from the shared column list.
pub(super) fn create_sql() -> String {
    let columns: Vec<String> = CALLS_TABLE_COLUMNS
        .iter()
        .map(|(name, ty)| format!("{name} {ty}"))
        .collect();
    format!("CREATE TABLE {TABLE} ({})", columns.join(", "))
}

#[derive(Default)]
struct Pending {
    calls: VecDeque<CallSummary>,
    /// Let go for the cap since the last report.
    lost: u64,
}

/// Finished calls on their way into `loom_calls`: the session feeds it from its first call on,
/// before the store exists; the store drains it when a query is about to run.
#[derive(Default)]
pub struct CallFeed {
    pending: Mutex<Pending>,
    /// Rows in the table now.
    rows: std::sync::atomic::AtomicU64,
    /// Held by one writer of the backlog at a time, so a query never sees newer calls with
    /// older ones still missing (the writer connection is let go between chunks).
    recording: Mutex<()>,
}

impl CallFeed {
    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A call that finished (a running one is never fed). Cheap: it is on the call's path.
    pub fn finished(&self, call: CallSummary) {
        let mut g = self.pending();
        if g.calls.len() >= PENDING_CAP {
            g.calls.pop_front();
            g.lost += 1;
        }
        g.calls.push_back(call);
    }

    /// The oldest calls waiting, at most `n`.
    fn take(&self, n: usize) -> Vec<CallSummary> {
        let mut g = self.pending();
        let n = n.min(g.calls.len());
        g.calls.drain(..n).collect()
    }

    /// Puts calls back at the front (a write that failed), keeping the cap.
    fn put_back(&self, calls: Vec<CallSummary>) {
        let mut g = self.pending();
        for c in calls.into_iter().rev() {
            g.calls.push_front(c);
        }
        while g.calls.len() > PENDING_CAP {
            g.calls.pop_front();
            g.lost += 1;
        }
    }

    fn take_lost(&self) -> u64 {
        std::mem::take(&mut self.pending().lost)
    }
}

/// Writes what `feed` holds into the table, a chunk at a time under the writer connection's
/// lock, each chunk all or nothing: a chunk that fails goes back, in order, for the next
/// query. Returns how many calls were let go for the cap since the last report (missing from
/// the table; the caller logs it). Beyond [`ROWS_KEPT`] rows the oldest calls leave the table.
pub(super) fn record(writer: &Mutex<duckdb::Connection>, feed: &CallFeed) -> Result<u64> {
    use std::sync::atomic::Ordering::Relaxed;
    let _one_at_a_time = feed.recording.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let chunk = feed.take(CHUNK);
        if chunk.is_empty() {
            break;
        }
        let conn = writer.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = write(&conn, &chunk) {
            drop(conn);
            feed.put_back(chunk);
            return Err(e);
        }
        let rows = feed.rows.fetch_add(chunk.len() as u64, Relaxed) + chunk.len() as u64;
        if rows > ROWS_KEPT + ROWS_KEPT / 10 {
            // The newest ROWS_KEPT stay (by call number: the order calls began in).
            conn.execute_batch(&format!(
                "DELETE FROM {TABLE} WHERE call_id < (SELECT min(call_id) FROM \
                 (SELECT call_id FROM {TABLE} ORDER BY call_id DESC LIMIT {ROWS_KEPT}))"
            ))?;
            let left: u64 =
                conn.query_row(&format!("SELECT count(*) FROM {TABLE}"), [], |r| r.get(0))?;
            feed.rows.store(left, Relaxed);
        }
    }
    Ok(feed.take_lost())
}

/// One call as a row of the table, in [`CALLS_TABLE_COLUMNS`]'s order: what the table holds
/// and what history archives (see `crate::history::archive`).
pub fn row(c: &CallSummary) -> Vec<duckdb::types::Value> {
    use duckdb::types::{TimeUnit, Value as Sql};
    let text = |s: &Option<String>| s.clone().map_or(Sql::Null, Sql::Text);
    let started = crate::types::time::parse_iso(&c.at)
        .map(|secs| Sql::Timestamp(TimeUnit::Second, secs as i64))
        .unwrap_or(Sql::Null);
    vec![
        Sql::UBigInt(c.call),
        started,
        text(&c.client),
        Sql::Text(c.caller.as_str().to_owned()),
        Sql::Text(c.server.clone()),
        Sql::Text(c.tool.clone()),
        text(&c.via),
        Sql::Text(c.outcome.as_str().to_owned()),
        Sql::UBigInt(c.millis),
        c.waited_millis.map_or(Sql::Null, Sql::UBigInt),
        Sql::UBigInt(c.bytes_in),
        Sql::UBigInt(c.bytes_out),
        Sql::UBigInt(c.tokens_in),
        Sql::UBigInt(c.tokens_out),
        text(&c.reference),
        text(&c.decision),
        text(&c.passed_because),
        Sql::Text(c.arguments.clone()),
        c.batch.map_or(Sql::Null, Sql::UBigInt),
        inputs_text(c).map_or(Sql::Null, Sql::Text),
    ]
}

/// The `inputs` column: every ref a call's bindings read, as a JSON array of strings (query it
/// with `from_json(inputs, '["VARCHAR"]')`); none when nothing was bound.
fn inputs_text(c: &CallSummary) -> Option<String> {
    let refs: Vec<&str> = c
        .bindings
        .iter()
        .flat_map(|b| b.inputs.iter().map(String::as_str))
        .collect();
    (!refs.is_empty()).then(|| serde_json::to_string(&refs).unwrap_or_default())
}

/// Appends `calls` in one transaction: all of them or none.
fn write(conn: &duckdb::Connection, calls: &[CallSummary]) -> Result<()> {
    conn.execute_batch("BEGIN TRANSACTION")?;
    let done = append(conn, calls).and_then(|()| Ok(conn.execute_batch("COMMIT")?));
    if done.is_err() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    done
}

fn append(conn: &duckdb::Connection, calls: &[CallSummary]) -> Result<()> {
    let mut app = conn.appender(TABLE)?;
    for c in calls {
        app.append_row(duckdb::appender_params_from_iter(row(c)))?;
    }
    app.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{QueryOutcome, Store};
    use crate::types::events::Outcome;

    fn call(n: u64) -> CallSummary {
        CallSummary {
            call: n,
            at: crate::types::time::iso(1_790_000_000 + n),
            server: "sample".into(),
            tool: format!("tool_{}", n % 3),
            outcome: if n.is_multiple_of(10) {
                Outcome::Error
            } else {
                Outcome::Passed
            },
            millis: n,
            arguments: format!("{{\"n\":{n}}}"),
            ..Default::default()
        }
    }

    fn scalar(store: &Store, sql: &str) -> serde_json::Value {
        match store.query(sql).expect(sql) {
            QueryOutcome::Inline { rows, .. } => rows[0]
                .as_object()
                .unwrap()
                .values()
                .next()
                .unwrap()
                .clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_backlog_of_calls_is_in_the_table_at_the_next_query_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::for_tests(dir.path());
        let feed = std::sync::Arc::new(CallFeed::default());
        store.feed_calls_from(feed.clone());
        assert_eq!(scalar(&store, "SELECT count(*) FROM loom_calls"), 0);
        let n = 20_000;
        for i in 1..=n {
            feed.finished(call(i));
        }
        let started = std::time::Instant::now();
        assert_eq!(scalar(&store, "SELECT count(*) FROM loom_calls"), n);
        eprintln!("{n} calls written in {:?}", started.elapsed());
        assert_eq!(
            scalar(
                &store,
                "SELECT count(*) FROM loom_calls WHERE outcome = 'error'"
            ),
            n / 10
        );
        assert_eq!(
            scalar(
                &store,
                "SELECT max(started_at) - min(started_at) FROM loom_calls"
            )
            .as_str()
            .map(str::to_owned),
            Some(format!(
                "{:02}:{:02}:{:02}",
                (n - 1) / 3600,
                (n - 1) / 60 % 60,
                (n - 1) % 60
            )),
            "started_at is a real timestamp"
        );
        // Nothing twice.
        assert_eq!(
            scalar(&store, "SELECT count(DISTINCT call_id) FROM loom_calls"),
            n
        );
    }

    #[test]
    fn calls_put_back_after_a_failed_write_keep_their_order_and_the_cap() {
        let feed = CallFeed::default();
        feed.finished(call(3));
        let taken = feed.take(CHUNK);
        feed.finished(call(4));
        feed.put_back(taken);
        let all = feed.take(usize::MAX);
        assert_eq!(all.iter().map(|c| c.call).collect::<Vec<_>>(), [3, 4]);
        assert_eq!(feed.take_lost(), 0);
        for n in 0..PENDING_CAP as u64 + 5 {
            feed.finished(call(n));
        }
        feed.put_back(vec![call(999_999), call(999_998)]);
        let all = feed.take(usize::MAX);
        assert_eq!(all.len(), PENDING_CAP);
        assert_eq!(all[0].call, 5, "the oldest (those put back) go first");
        assert_eq!(feed.take_lost(), 7);
    }

    #[test]
    fn the_table_keeps_the_newest_calls() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::for_tests(dir.path());
        let feed = std::sync::Arc::new(CallFeed::default());
        store.feed_calls_from(feed.clone());
        let n = ROWS_KEPT + ROWS_KEPT / 10 + 1;
        for i in 1..=n {
            feed.finished(call(i));
        }
        assert_eq!(scalar(&store, "SELECT count(*) FROM loom_calls"), ROWS_KEPT);
        assert_eq!(
            scalar(&store, "SELECT min(call_id) FROM loom_calls"),
            n - ROWS_KEPT + 1
        );
        assert_eq!(scalar(&store, "SELECT max(call_id) FROM loom_calls"), n);
    }
}
