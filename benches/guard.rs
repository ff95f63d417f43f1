//! The statement guard's cost per query: DuckDB parses the statement as the subquery loom runs
//! and loom walks the parsed tree (the run binds it). Measured alone and
//! beside the whole `loom_query` path for the same statement. `cargo bench --bench guard`;
//! under `cargo test` a short run keeps the harness working.

use loom::intercept::extract::find_in_text;
use loom::store::{Provenance, Store, StoreConfig};
use std::time::{Duration, Instant};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let runs = if full { 2000 } else { 20 };
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(StoreConfig {
        memory_limit: "1GB".into(),
        threads: 2,
        memory_budget: 1 << 30,
        query_timeout: Duration::from_secs(30),
        export_dir: dir.path().join("exports"),
        envelope_budget: 1500,
        inline_rows: 100,
        probe_file: std::env::current_exe().expect("bench binary"),
        blob_dir: None,
        parked_max_bytes: u64::MAX,
    })
    .expect("store");
    let rows: Vec<String> = (0..1000)
        .map(|i| {
            format!(
                r#"{{"order_id": {i}, "customer_id": {}, "status": "{}", "amount": {}.5}}"#,
                i % 50,
                ["paid", "pending", "refunded"][i % 3],
                i % 300
            )
        })
        .collect();
    let table = find_in_text(&format!("[{}]", rows.join(",")))
        .expect("rows")
        .into_table()
        .expect("table");
    let r = store
        .ingest(
            &table,
            Provenance {
                server: "bench".into(),
                tool: "orders".into(),
                arguments: None,
                at: "2026-11-30T00:00:00Z".into(),
                rung: "json".into(),
            },
        )
        .expect("ingest")
        .dataset_ref;
    let long_in: Vec<String> = (0..300).map(|i| i.to_string()).collect();
    let cases = [
        (
            "point lookup",
            format!("SELECT * FROM {r} WHERE order_id = 42"),
        ),
        (
            "aggregate",
            format!(
                "SELECT status, count(*) AS n, avg(amount) AS a FROM {r} GROUP BY status ORDER BY n DESC"
            ),
        ),
        (
            "CTE + window + join",
            format!(
                "WITH c AS (SELECT customer_id, sum(amount) AS total FROM {r} GROUP BY ALL) SELECT o.order_id, c.total, rank() OVER (PARTITION BY o.status ORDER BY o.amount DESC) AS rk FROM {r} o JOIN c USING (customer_id) QUALIFY rk <= 3"
            ),
        ),
        (
            "2 KB IN list",
            format!(
                "SELECT count(*) AS n FROM {r} WHERE order_id IN ({})",
                long_in.join(", ")
            ),
        ),
        (
            "plain EXPLAIN",
            format!("EXPLAIN SELECT * FROM {r} WHERE amount > 10"),
        ),
    ];
    for (name, sql) in &cases {
        let mut guard_t = Vec::new();
        let mut query_t = Vec::new();
        for _ in 0..runs {
            let t = Instant::now();
            store.check_sql(sql).expect("accepted");
            guard_t.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            store.query(sql).expect("runs");
            query_t.push(t.elapsed().as_secs_f64());
        }
        let (g, q) = (median(guard_t), median(query_t));
        println!(
            "{name:<22} guard {:>7.1} µs   whole query {:>8.1} µs   guard share {:>4.1}%   ({} bytes, medians of {runs})",
            g * 1e6,
            q * 1e6,
            100.0 * g / q,
            sql.len()
        );
    }
}
