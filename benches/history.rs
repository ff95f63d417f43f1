//! Archiving a large dataset, as history does it: N rows × 10 columns of JSON text are
//! intercepted (rows found and typed) and ingested into the sealed store, then written to a
//! Parquet file with `Store::write_parquet` (the call the history archiver makes), then loaded
//! back with `Store::load_parquet` (what `loom query --session` and `loom tui --open` do).
//! Each phase is timed; its memory is this process's peak RSS during the phase (`VmHWM`, reset
//! before each phase by writing `5` to `/proc/self/clear_refs`) minus its RSS when the phase
//! began. Every run is a fresh process (the bench runs itself with `--child`), so no run
//! inherits another's allocator state. `cargo bench --bench history` (1,000,000 rows, 3 runs);
//! under `cargo test` it runs once on 10,000 rows so the harness keeps working.

use loom::intercept::{Decision, decide};
use loom::store::{Provenance, Store, StoreConfig, parquet_io, quote_ident};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// The same rows as `benches/ingest.rs` (19-digit ids, integers, doubles, text, timestamps,
/// booleans), written straight to text so a million rows need no `serde_json::Value` each.
fn rows_json(n: usize) -> String {
    let statuses = ["pending", "paid", "shipped", "delivered", "refunded"];
    let currencies = ["EUR", "USD", "JPY"];
    let countries = ["PT", "DE", "FR", "JP"];
    let mut s = String::with_capacity(n * 260);
    s.push('[');
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        write!(
            s,
            r#"{{"order_id":{},"customer_id":{},"status":"{}","amount":{:?},"currency":"{}","items":{},"created_at":"2025-{:02}-{:02}T{:02}:{:02}:00Z","country":"{}","express":{},"note":"order number {i}"}}"#,
            7_300_000_000_000_000_000u64 + i as u64 * 7919,
            1 + (i * 37) % 5000,
            statuses[i % 5],
            (500 + (i * 7717) % 250_000) as f64 / 100.0,
            currencies[i % 3],
            1 + i % 9,
            1 + i % 12,
            1 + i % 28,
            i % 24,
            i % 60,
            countries[i % 4],
            i % 7 == 0,
        )
        .unwrap();
    }
    s.push(']');
    s
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

/// Starts a phase: resets the peak RSS to the current RSS; returns the RSS now (KiB).
fn phase_start() -> u64 {
    std::fs::write("/proc/self/clear_refs", "5").expect("reset VmHWM (Linux ≥ 4.0)");
    status_kib("VmRSS:")
}

/// Peak RSS added since `phase_start` (MiB).
fn phase_peak(start: u64) -> f64 {
    status_kib("VmHWM:").saturating_sub(start) as f64 / 1024.0
}

fn child(n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(StoreConfig {
        memory_limit: "4GB".into(),
        threads: 2,
        memory_budget: 8 << 30,
        query_timeout: Duration::from_secs(600),
        export_dir: dir.path().to_owned(),
        envelope_budget: 1500,
        inline_rows: 100,
        probe_file: std::env::current_exe().unwrap(),
        blob_dir: None,
        parked_max_bytes: u64::MAX,
    })
    .unwrap();
    let text = rows_json(n);
    let raw = serde_json::value::to_raw_value(
        &serde_json::json!({ "content": [{ "type": "text", "text": text }] }),
    )
    .unwrap();
    drop(text);

    // Ingest: what interception does with the result (find rows, type, append).
    let rss0 = phase_start();
    let t = Instant::now();
    let Decision::Table { table, .. } = decide(&raw, 2000) else {
        panic!("not a table")
    };
    let t_decide = t.elapsed().as_secs_f64();
    let meta = store
        .ingest(
            &table,
            Provenance {
                server: "bench".into(),
                tool: "orders".into(),
                arguments: None,
                at: String::new(),
                rung: table.rung.into(),
            },
        )
        .unwrap();
    let t_ingest = t.elapsed().as_secs_f64();
    let m_ingest = phase_peak(rss0);
    assert_eq!(meta.rows as usize, n);
    drop(table);
    drop(raw);

    // Archive: the call the history archiver makes.
    let path = dir.path().join(format!("{}.parquet", meta.dataset_ref));
    let rss1 = phase_start();
    let t = Instant::now();
    let rows = store
        .write_parquet(&quote_ident(&meta.dataset_ref), &path, &[], &mut |_| {})
        .unwrap();
    let t_archive = t.elapsed().as_secs_f64();
    let m_archive = phase_peak(rss1);
    assert_eq!(rows as usize, n);
    let file_mib = std::fs::metadata(&path).unwrap().len() as f64 / 1048576.0;

    // Load back: what opening a past session does with each dataset.
    store.create_schema("past").unwrap();
    let rss2 = phase_start();
    let t = Instant::now();
    let reader = parquet_io::Reader::open(&path).unwrap();
    let loaded = store
        .load_parquet(Some("past"), &meta.dataset_ref, reader, &meta.columns)
        .unwrap();
    let t_load = t.elapsed().as_secs_f64();
    let m_load = phase_peak(rss2);
    assert_eq!(loaded as usize, n);

    println!(
        "RESULT {t_decide} {t_ingest} {m_ingest} {t_archive} {m_archive} {t_load} {m_load} {file_mib} {}",
        rss1 as f64 / 1024.0
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(args[i + 1].parse().unwrap());
        return;
    }
    let full = args.iter().any(|a| a == "--bench");
    let (n, runs) = if full { (1_000_000, 3) } else { (10_000, 1) };
    let mut results: Vec<Vec<f64>> = Vec::new();
    println!("history archive of {n} rows × 10 columns, {runs} fresh processes");
    for run in 1..=runs {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--child", &n.to_string()])
            .output()
            .expect("run child");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let Some(line) = stdout.lines().find_map(|l| l.strip_prefix("RESULT ")) else {
            panic!(
                "child failed: {stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let r: Vec<f64> = line.split(' ').map(|x| x.parse().unwrap()).collect();
        println!(
            "  run {run}: ingest {:.3} s (find+type {:.3} s, append {:.3} s, peak +{:.0} MiB) | archive {:.3} s (peak +{:.0} MiB, RSS before {:.0} MiB, file {:.1} MiB) = {:.2}× ingest, {:.2}× append | load back {:.3} s (peak +{:.0} MiB)",
            r[1],
            r[0],
            r[1] - r[0],
            r[2],
            r[3],
            r[4],
            r[8],
            r[7],
            r[3] / r[1],
            r[3] / (r[1] - r[0]),
            r[5],
            r[6]
        );
        results.push(r);
    }
    let col = |f: &dyn Fn(&Vec<f64>) -> f64| median(results.iter().map(f).collect());
    println!(
        "median: ingest {:.3} s (append {:.3} s, peak +{:.0} MiB), archive {:.3} s (peak +{:.0} MiB), archive/ingest {:.2}×, archive/append {:.2}×, load back {:.3} s (peak +{:.0} MiB), file {:.1} MiB",
        col(&|r| r[1]),
        col(&|r| r[1] - r[0]),
        col(&|r| r[2]),
        col(&|r| r[3]),
        col(&|r| r[4]),
        col(&|r| r[3] / r[1]),
        col(&|r| r[3] / (r[1] - r[0])),
        col(&|r| r[5]),
        col(&|r| r[6]),
        col(&|r| r[7]),
    );
}
