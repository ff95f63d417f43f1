//! Results of the workbench's own queries: each becomes a table inside the engine (never
//! pulled into loom's memory whole), the grid reads it a page at a time. Each connection
//! (the in-process workbench, an attached one, a `loom query`) keeps its own newest few, which
//! go when it closes; older ones are the first to go when the engine is over its memory
//! budget, and a person's query never evicts the model's datasets. Why a result went is kept,
//! so the grid can say so.
//! Also the numbers behind the describe view's charts. Everything here goes through the same
//! statement guard and timeout as the model's queries.

pub use crate::types::data::{Bar, Page, ResultTable};

use super::query::run_guarded;
use super::sealed::StatementKind;
use super::{Result, Store, StoreError, quote_ident};

/// How many results each connection keeps readable; older ones are dropped.
pub const KEEP: usize = 8;
/// How many reasons for dropped results are remembered.
const REASONS_KEPT: usize = 256;

/// The connection the in-process workbench's requests come on.
pub const LOCAL_CONNECTION: u64 = 0;

/// A kept result and the connection whose it is.
#[derive(Debug)]
pub(super) struct Kept {
    pub result: ResultTable,
    pub connection: u64,
}

/// The kept results, oldest first, and why recent ones were dropped.
#[derive(Debug, Default)]
pub(super) struct Results {
    kept: Vec<Kept>,
    dropped: std::collections::VecDeque<(String, String)>,
}

impl Results {
    /// Whether `table` is a kept result's.
    pub(super) fn holds(&self, table: &str) -> bool {
        self.find(table).is_some()
    }

    fn find(&self, table: &str) -> Option<&ResultTable> {
        self.kept
            .iter()
            .find(|k| k.result.table == table)
            .map(|k| &k.result)
    }

    /// Takes the oldest result `pick` accepts; `newest` tells whether it is the newest of its
    /// connection.
    pub(super) fn take_oldest(&mut self, pick: impl Fn(bool) -> bool) -> Option<Kept> {
        let i = (0..self.kept.len()).find(|&i| {
            let c = self.kept[i].connection;
            let newest = !self.kept[i + 1..].iter().any(|k| k.connection == c);
            pick(newest)
        })?;
        Some(self.kept.remove(i))
    }

    fn note_dropped(&mut self, table: String, reason: String) {
        if self.dropped.len() == REASONS_KEPT {
            self.dropped.pop_front();
        }
        self.dropped.push_back((table, reason));
    }

    /// Why `table` is not a kept result.
    fn gone(&self, table: &str) -> StoreError {
        match self.dropped.iter().rev().find(|(t, _)| t == table) {
            Some((_, why)) => StoreError::ResultDropped(why.clone()),
            None => StoreError::UnknownDataset(table.to_owned()),
        }
    }
}

impl Store {
    /// Runs one guarded read-only statement into a new result table, kept for `connection`.
    pub fn run_result(&self, sql: &str, connection: u64) -> Result<ResultTable> {
        // A cancel from a workbench interrupts this query, never the model's.
        Store::asking_as(super::query::Asker::Workbench, || {
            self.run_result_as_asked(sql, connection)
        })
    }

    fn run_result_as_asked(&self, sql: &str, connection: u64) -> Result<ResultTable> {
        self.record_calls();
        let started = std::time::Instant::now();
        let mut name = String::new();
        let (rows, columns) = run_guarded(self, sql, |conn, guarded| {
            name = self.draw_name("_loom_result");
            let t = quote_ident(&name);
            if guarded.kind == StatementKind::Explain {
                // A plan cannot be wrapped in CREATE TABLE AS; copy its two text columns.
                let mut stmt = conn.prepare(&guarded.sql)?;
                let plan = stmt
                    .query_map([], |r| {
                        Ok((
                            r.get::<_, Option<String>>(0)?,
                            r.get::<_, Option<String>>(1)?,
                        ))
                    })?
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                conn.execute_batch(&format!(
                    "CREATE TABLE {t} (explain_key VARCHAR, explain_value VARCHAR)"
                ))?;
                let mut ins = conn.prepare(&format!("INSERT INTO {t} VALUES (?, ?)"))?;
                for (k, v) in &plan {
                    ins.execute([k, v])?;
                }
            } else {
                conn.execute_batch(&format!("CREATE TABLE {t} AS {}", guarded.sql))?;
            }
            super::profile::shape(conn, &name)
        })?;
        let result = ResultTable {
            table: name,
            columns,
            rows,
            millis: started.elapsed().as_millis() as u64,
        };
        let stale = {
            let mut results = Store::lock(&self.results);
            results.kept.push(Kept {
                result: result.clone(),
                connection,
            });
            let mine = results
                .kept
                .iter()
                .filter(|k| k.connection == connection)
                .count();
            let mut stale = Vec::new();
            for _ in KEEP..mine {
                let i = results
                    .kept
                    .iter()
                    .position(|k| k.connection == connection)
                    .expect("counted above");
                stale.push(results.kept.remove(i));
            }
            stale
        };
        for k in stale {
            self.drop_result(
                k,
                format!("this result was dropped: a workbench keeps its newest {KEEP}; run the query again"),
            );
        }
        self.evict(super::Room::ForResult);
        Ok(result)
    }

    /// Drops a kept result's table and remembers why.
    pub(super) fn drop_result(&self, kept: Kept, reason: String) {
        let table = kept.result.table;
        let _ = Store::lock(&self.writer)
            .execute_batch(&format!("DROP TABLE IF EXISTS {}", quote_ident(&table)));
        tracing::info!(result = %table, "{reason}");
        Store::lock(&self.results).note_dropped(table, reason);
    }

    /// Drops every result `connection` keeps: it has closed.
    pub fn release_results(&self, connection: u64) {
        let theirs: Vec<Kept> = {
            let mut results = Store::lock(&self.results);
            let (theirs, others) = std::mem::take(&mut results.kept)
                .into_iter()
                .partition(|k| k.connection == connection);
            results.kept = others;
            theirs
        };
        for k in theirs {
            self.drop_result(
                k,
                "this result was dropped when its workbench closed".into(),
            );
        }
    }

    /// The columns of a dataset or a kept result.
    pub fn table_columns(&self, table: &str) -> Result<Vec<(String, String)>> {
        let results = Store::lock(&self.results);
        if let Some(r) = results.find(table) {
            return Ok(r.columns.clone());
        }
        match self.dataset(table) {
            Ok(d) => Ok(d.columns),
            Err(StoreError::UnknownDataset(_)) => Err(results.gone(table)),
            Err(e) => Err(e),
        }
    }

    /// The row count of a kept result.
    pub fn result_rows(&self, table: &str) -> Result<u64> {
        let results = Store::lock(&self.results);
        results
            .find(table)
            .map(|r| r.rows)
            .ok_or_else(|| results.gone(table))
    }

    /// Rows `offset..offset+limit` of a dataset or result, in insertion order, as text.
    pub fn page(&self, table: &str, offset: u64, limit: u64) -> Result<Page> {
        let columns = self.table_columns(table)?;
        if columns.is_empty() {
            return Ok(Vec::new());
        }
        let cols: Vec<String> = columns
            .iter()
            .map(|(n, _)| format!("{}::VARCHAR", quote_ident(n)))
            .collect();
        // The writer connection: paging must not wait behind a long query on the reader.
        let conn = Store::lock(&self.writer);
        let mut stmt = conn.prepare(&format!(
            "SELECT {} FROM {} LIMIT {limit} OFFSET {offset}",
            cols.join(", "),
            quote_ident(table)
        ))?;
        let n = columns.len();
        let mut rows = stmt.query([])?;
        let mut page = Vec::new();
        while let Some(row) = rows.next()? {
            let mut cells = Vec::with_capacity(n);
            for i in 0..n {
                cells.push(row.get::<_, Option<String>>(i)?);
            }
            page.push(cells);
        }
        Ok(page)
    }

    /// Bars for one column: equal-width bins for numbers and times, top values otherwise.
    pub fn chart(&self, table: &str, column: &str, bins: u32) -> Result<Vec<Bar>> {
        let columns = self.table_columns(table)?;
        let Some((_, ty)) = columns.iter().find(|(n, _)| n == column) else {
            return Err(StoreError::Refused(format!(
                "`{table}` has no column `{column}`"
            )));
        };
        let c = quote_ident(column);
        let t = quote_ident(table);
        let ty = ty.to_ascii_uppercase();
        let numeric = [
            "TINYINT",
            "SMALLINT",
            "INTEGER",
            "BIGINT",
            "HUGEINT",
            "UBIGINT",
            "UINTEGER",
            "USMALLINT",
            "UTINYINT",
            "FLOAT",
            "DOUBLE",
            "REAL",
        ]
        .contains(&ty.as_str())
            || ty.starts_with("DECIMAL");
        let temporal = ty.starts_with("TIMESTAMP") || ty == "DATE";
        let bins = bins.clamp(1, 200);
        // Whole numbers up to 64 bits are binned in exact 128-bit arithmetic: through DOUBLE,
        // a 19-digit id's bin was labelled by a number it cannot hold (…8192 below a min of
        // …7919). The widest integers, whose products could overflow, take the DOUBLE way.
        let exact = numeric
            && !(ty.starts_with("DECIMAL")
                || ["FLOAT", "DOUBLE", "REAL", "HUGEINT", "UHUGEINT"].contains(&ty.as_str()));
        let sql = if exact {
            format!(
                "WITH v AS (SELECT {c}::HUGEINT AS x FROM {t} WHERE {c} IS NOT NULL), \
                 r AS (SELECT min(x) AS mn, max(x) AS mx FROM v), \
                 b AS (SELECT CASE WHEN r.mx = r.mn THEN 0 ELSE least({bins} - 1, ((x - r.mn) * {bins}) // (r.mx - r.mn))::INTEGER END AS i, r.mn, r.mx FROM v, r), \
                 g AS (SELECT i, count(*) AS n, any_value(mn + ((mx - mn) * i + {bins} - 1) // {bins}) AS lo FROM b GROUP BY i) \
                 SELECT lo::VARCHAR, n::UBIGINT FROM g ORDER BY i"
            )
        } else if numeric || temporal {
            let x = if temporal {
                format!("epoch({c})")
            } else {
                format!("{c}::DOUBLE")
            };
            // A bin is labelled by the least value it can hold, in the column's own terms: a
            // whole number for integers, a day for dates.
            let integer = numeric
                && !(ty.starts_with("DECIMAL")
                    || ["FLOAT", "DOUBLE", "REAL"].contains(&ty.as_str()));
            let label = if ty == "DATE" {
                "strftime(to_timestamp(ceil(lo / 86400) * 86400), '%Y-%m-%d')".to_owned()
            } else if temporal {
                "strftime(to_timestamp(lo), '%Y-%m-%d %H:%M')".to_owned()
            } else if integer {
                "ceil(lo)::HUGEINT::VARCHAR".to_owned()
            } else {
                "format('{:.4g}', lo)".to_owned()
            };
            format!(
                "WITH v AS (SELECT {x} AS x FROM {t} WHERE {c} IS NOT NULL), \
                 r AS (SELECT min(x) AS mn, max(x) AS mx FROM v), \
                 b AS (SELECT CASE WHEN r.mx = r.mn THEN 0 ELSE least({bins} - 1, floor((x - r.mn) / (r.mx - r.mn) * {bins}))::INTEGER END AS i, r.mn, r.mx FROM v, r), \
                 g AS (SELECT i, count(*) AS n, any_value(mn + (mx - mn) * i / {bins}) AS lo FROM b GROUP BY i) \
                 SELECT {label}, n::UBIGINT FROM g ORDER BY i"
            )
        } else {
            format!(
                "SELECT coalesce({c}::VARCHAR, 'NULL'), count(*)::UBIGINT AS n FROM {t} GROUP BY 1 ORDER BY n DESC, 1 LIMIT {bins}"
            )
        };
        let conn = Store::lock(&self.writer);
        let mut stmt = conn.prepare(&sql)?;
        let bars = stmt
            .query_map([], |r| {
                Ok(Bar {
                    label: r.get::<_, Option<String>>(0)?.unwrap_or_default(),
                    count: r.get(1)?,
                })
            })?
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(bars)
    }
}

#[cfg(test)]
mod tests {
    use crate::store::Store;

    /// B6: each bin of 19-digit ids is labelled by the least id it can hold, exactly: the
    /// first is the column's min, and every id counted in a bin is at least its label.
    #[test]
    fn bins_of_large_integers_are_labelled_exactly() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::for_tests(dir.path());
        let meta = store
            .materialize(
                "SELECT 7300000000000007919 + i * 7999999999 AS id FROM range(1000) t(i)",
                "ids",
            )
            .expect("materialized");
        let bars = store.chart(&meta.dataset_ref, "id", 12).expect("chart");
        assert_eq!(bars.len(), 12, "{bars:?}");
        assert_eq!(bars[0].label, "7300000000000007919");
        assert_eq!(bars.iter().map(|b| b.count).sum::<u64>(), 1000);
        let ids: Vec<i128> = (0..1000)
            .map(|i| 7300000000000007919 + i * 7999999999)
            .collect();
        let labels: Vec<i128> = bars
            .iter()
            .map(|b| b.label.parse().expect("a whole number"))
            .collect();
        for (k, b) in bars.iter().enumerate() {
            let upper = labels.get(k + 1).copied().unwrap_or(i128::MAX);
            let held = ids.iter().filter(|&&x| x >= labels[k] && x < upper).count() as u64;
            assert_eq!(held, b.count, "bin {k} from {}: {bars:?}", labels[k]);
        }
    }
}
