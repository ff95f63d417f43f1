//! The call log as a table: `loom_calls` holds every call of the session that has finished, so
//! a person (or the model) can ask the traffic itself questions in SQL: which tool is slow, what
//! failed, how many tokens interception saved. Calls are fed in as they finish, kept in memory,
//! and written into the table on loom's own connection just before a query runs, never on a
//! call's path. The table is created with the store, so its existence never changes what a
//! query can see; clients can only read it (the guard refuses every write).

use super::Result;
use crate::types::events::CallSummary;
use std::sync::Mutex;

pub use crate::types::data::{CALLS_TABLE as TABLE, CALLS_TABLE_COLUMNS};

/// Calls kept waiting for the table; beyond this the oldest are let go, and counted.
const PENDING_CAP: usize = 200_000;

/// `CREATE TABLE loom_calls (…)`, from the shared column list.
pub(super) fn create_sql() -> String {
    let columns: Vec<String> = CALLS_TABLE_COLUMNS
        .iter()
        .map(|(name, ty)| format!("{name} {ty}"))
        .collect();
    format!("CREATE TABLE {TABLE} ({})", columns.join(", "))
}

/// Finished calls on their way into `loom_calls`: the session feeds it from its first call on,
/// before the store exists; the store drains it when a query is about to run.
#[derive(Default)]
pub struct CallFeed {
    pending: Mutex<(Vec<CallSummary>, u64)>,
}

impl CallFeed {
    /// A call that finished (a running one is never fed).
    pub fn finished(&self, call: CallSummary) {
        let mut g = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if g.0.len() >= PENDING_CAP {
            g.0.remove(0);
            g.1 += 1;
        }
        g.0.push(call);
    }

    fn take(&self) -> (Vec<CallSummary>, u64) {
        let mut g = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        (std::mem::take(&mut g.0), std::mem::take(&mut g.1))
    }

    /// Puts calls back at the front (a write that failed), keeping the cap.
    fn put_back(&self, mut calls: Vec<CallSummary>, lost: u64) {
        let mut g = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        calls.append(&mut g.0);
        let over = calls.len().saturating_sub(PENDING_CAP);
        calls.drain(..over);
        g.0 = calls;
        g.1 += lost + over as u64;
    }
}

/// Writes what `feed` holds into the table, all or nothing; on failure nothing is written
/// and the calls wait for the next query. Returns how many calls were let go for the cap since
/// the last write (they are missing from the table; the caller logs it).
pub(super) fn record(conn: &duckdb::Connection, feed: &CallFeed) -> Result<u64> {
    let (calls, lost) = feed.take();
    if calls.is_empty() {
        return Ok(lost);
    }
    match write(conn, &calls) {
        Ok(()) => Ok(lost),
        Err(e) => {
            feed.put_back(calls, lost);
            Err(e)
        }
    }
}

/// Appends `calls` in one transaction: all of them or none.
fn write(conn: &duckdb::Connection, calls: &[CallSummary]) -> Result<()> {
    conn.execute_batch("BEGIN TRANSACTION")?;
    match append(conn, calls) {
        Ok(()) => conn.execute_batch("COMMIT").map_err(Into::into),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

fn append(conn: &duckdb::Connection, calls: &[CallSummary]) -> Result<()> {
    use duckdb::types::{TimeUnit, Value as Sql};
    let mut app = conn.appender(TABLE)?;
    for c in calls {
        let started = crate::types::time::parse_iso(&c.at)
            .map(|secs| Sql::Timestamp(TimeUnit::Second, secs as i64))
            .unwrap_or(Sql::Null);
        app.append_row(duckdb::params![
            c.call,
            started,
            c.client,
            c.caller.as_str(),
            c.server,
            c.tool,
            c.via,
            c.outcome.as_str(),
            c.millis,
            c.waited_millis,
            c.bytes_in,
            c.bytes_out,
            c.tokens_in,
            c.tokens_out,
            c.reference,
            c.decision,
            c.passed_because,
            c.arguments,
        ])?;
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
        let (taken, lost) = feed.take();
        feed.finished(call(4));
        feed.put_back(taken, lost);
        let (all, lost) = feed.take();
        assert_eq!(all.iter().map(|c| c.call).collect::<Vec<_>>(), [3, 4]);
        assert_eq!(lost, 0);
        let big: Vec<CallSummary> = (0..PENDING_CAP as u64 + 5).map(call).collect();
        feed.put_back(big, 2);
        let (all, lost) = feed.take();
        assert_eq!(all.len(), PENDING_CAP);
        assert_eq!(all[0].call, 5, "the oldest go first");
        assert_eq!(lost, 7);
    }
}
