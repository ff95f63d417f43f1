//! Interception throughput: JSON text of N rows × 10 columns → rows found and typed → ingested
//! into the sealed store → profiled → envelope, against DuckDB's own `read_json` on the same
//! rows (an unsealed engine reading a file: the physical bound). Also the envelope's size
//! against the raw result, and a CSV export of 100k rows. `cargo bench --bench ingest`; under
//! `cargo test` it runs once on small inputs so the harness keeps working.

use loom::intercept::{Decision, decide};
use loom::store::{ExportFormat, Provenance, Store, StoreConfig, envelope};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn rows_json(n: usize) -> String {
    let statuses = ["pending", "paid", "shipped", "delivered", "refunded"];
    let currencies = ["EUR", "USD", "JPY"];
    let countries = ["PT", "DE", "FR", "JP"];
    let rows: Vec<Value> = (0..n)
        .map(|i| {
            json!({
                "order_id": 7_300_000_000_000_000_000u64 + i as u64 * 7919,
                "customer_id": 1 + (i * 37) % 5000,
                "status": statuses[i % 5],
                "amount": (500 + (i * 7717) % 250_000) as f64 / 100.0,
                "currency": currencies[i % 3],
                "items": 1 + i % 9,
                "created_at": format!("2025-{:02}-{:02}T{:02}:{:02}:00Z", 1 + i % 12, 1 + i % 28, i % 24, i % 60),
                "country": countries[i % 4],
                "express": i % 7 == 0,
                "note": format!("order number {i}"),
            })
        })
        .collect();
    Value::Array(rows).to_string()
}

fn result_of(text: &str) -> Box<serde_json::value::RawValue> {
    serde_json::value::to_raw_value(&json!({ "content": [{ "type": "text", "text": text }] }))
        .unwrap()
}

fn store(dir: &std::path::Path) -> Store {
    Store::open(StoreConfig {
        memory_limit: "4GB".into(),
        threads: 2,
        memory_budget: 2 << 30,
        query_timeout: Duration::from_secs(60),
        export_dir: dir.to_owned(),
        envelope_budget: 1500,
        inline_rows: 100,
        probe_file: std::env::current_exe().unwrap(),
        blob_dir: None,
        parked_max_bytes: u64::MAX,
    })
    .unwrap()
}

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Streams `total_bytes` of intercepted results through a store with a 256 MiB budget and
/// reports the engine's memory and this process's peak RSS.
fn stream(total_bytes: usize) {
    let dir = tempfile::tempdir().unwrap();
    let budget: u64 = 256 << 20;
    let s = Store::open(StoreConfig {
        memory_limit: "1GB".into(),
        threads: 2,
        memory_budget: budget,
        query_timeout: Duration::from_secs(60),
        export_dir: dir.path().to_owned(),
        envelope_budget: 1500,
        inline_rows: 100,
        probe_file: std::env::current_exe().unwrap(),
        blob_dir: None,
        parked_max_bytes: u64::MAX,
    })
    .unwrap();
    let text = rows_json(10_000);
    let raw = result_of(&text);
    let rss_before = status_kib("VmRSS:");
    let mut streamed = 0usize;
    let mut max_engine = 0u64;
    let t = Instant::now();
    while streamed < total_bytes {
        let Decision::Table { table, .. } = decide(&raw, 2000) else {
            panic!("not a table")
        };
        s.ingest(&table, provenance(table.rung)).unwrap();
        streamed += raw.get().len();
        max_engine = max_engine.max(s.memory_bytes());
    }
    println!(
        "stream of {} MB of intercepted results (10k-row JSON each) in {:.1} s: engine memory max {:.0} MiB (budget {} MiB), {} datasets kept; RSS before {:.0} MiB, peak {:.0} MiB",
        streamed / 1_000_000,
        t.elapsed().as_secs_f64(),
        max_engine as f64 / 1048576.0,
        budget >> 20,
        s.datasets().len(),
        rss_before as f64 / 1024.0,
        status_kib("VmHWM:") as f64 / 1024.0
    );
}

fn provenance(rung: &str) -> Provenance {
    Provenance {
        server: "bench".into(),
        tool: "orders".into(),
        arguments: None,
        at: String::new(),
        rung: rung.into(),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let sizes: &[usize] = if full { &[10_000, 100_000] } else { &[1_000] };
    let runs = if full { 3 } else { 1 };
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    for &n in sizes {
        let text = rows_json(n);
        let raw = result_of(&text);
        let mut loom_times = Vec::new();
        let mut env_tokens = 0;
        let mut raw_tokens = 0;
        let mut last_ref = String::new();
        let mut phases = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            let t = Instant::now();
            let Decision::Table { table, tokens } = decide(&raw, 2000) else {
                panic!("not a table")
            };
            let t_decide = t.elapsed().as_secs_f64();
            let meta = s.ingest(&table, provenance(table.rung)).unwrap();
            let t_ingest = t.elapsed().as_secs_f64();
            let p = s.profile(&meta.dataset_ref, 5).unwrap();
            let (_env, et) = envelope::render(&meta, &p, 1500, Some(tokens));
            let total = t.elapsed().as_secs_f64();
            loom_times.push(total);
            phases.0.push(t_decide);
            phases.1.push(t_ingest - t_decide);
            phases.2.push(total - t_ingest);
            env_tokens = et;
            raw_tokens = tokens;
            last_ref = meta.dataset_ref;
        }
        let phase_text = format!(
            "(find rows + type {:.3} s, append {:.3} s, profile + envelope {:.3} s)",
            median(phases.0),
            median(phases.1),
            median(phases.2)
        );
        // The physical bound: DuckDB's own JSON reader on the same rows, from a file.
        let file = dir.path().join(format!("rows-{n}.json"));
        std::fs::write(&file, &text).unwrap();
        let mut duck_times = Vec::new();
        for i in 0..runs {
            let c = duckdb::Connection::open_in_memory().unwrap();
            let t = Instant::now();
            c.execute_batch(&format!(
                "CREATE TABLE t{i} AS SELECT * FROM read_json('{}')",
                file.display()
            ))
            .unwrap();
            duck_times.push(t.elapsed().as_secs_f64());
        }
        let (l, d) = (median(loom_times), median(duck_times));
        println!(
            "{n} rows × 10 columns: loom decide+ingest+profile+envelope {:.3} s {phase_text}, DuckDB read_json {:.3} s, ratio {:.2}×",
            l,
            d,
            l / d
        );
        println!(
            "  raw result ~{raw_tokens} tokens, envelope ~{env_tokens} tokens ({:.0}× smaller)",
            raw_tokens as f64 / env_tokens as f64
        );
        if n == *sizes.last().unwrap() {
            let mut exports = Vec::new();
            for _ in 0..runs {
                let t = Instant::now();
                let (_, rows) = s.export(&last_ref, ExportFormat::Csv, None).unwrap();
                exports.push(t.elapsed().as_secs_f64());
                assert_eq!(rows as usize, n);
            }
            println!("  CSV export of {n} rows: {:.3} s", median(exports));
        }
    }
    drop(s);
    if std::env::var_os("LOOM_BENCH_NO_STREAM").is_none() {
        stream(if full { 1_000_000_000 } else { 5_000_000 });
    }
}
