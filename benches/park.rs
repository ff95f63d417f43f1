//! Parking a 50 MB log and reading it back: park (hash, index), a pattern fetch over all of it,
//! and a slice from the middle. `cargo bench --bench park`; under `cargo test` a 1 MB run keeps
//! the harness working.

use loom::store::blobs::{Blobs, DEFAULT_TTL, FetchRequest};
use std::time::Instant;

fn log(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 200);
    let mut i = 0u64;
    while out.len() < bytes {
        let level = match i % 50 {
            0 => "ERROR",
            1..=4 => "WARN",
            _ => "INFO",
        };
        out.push_str(&format!("2025-03-01T10:{:02}:{:02}Z {level} [api] request {i} handled in {}ms for customer {}\n", (i / 60) % 60, i % 60, 3 + i % 97, 1 + i % 300));
        i += 1;
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let size = if full { 50_000_000 } else { 1_000_000 };
    let runs = if full { 5 } else { 1 };
    let text = log(size);
    let mut park_t = Vec::new();
    let mut grep_t = Vec::new();
    let mut slice_t = Vec::new();
    let mut matched = 0;
    for r in 0..runs {
        let blobs = Blobs::default();
        // A different first line each run, so each park hashes and indexes anew.
        let content = format!("run {r}\n{text}");
        let t = Instant::now();
        let blob = blobs.park(
            content,
            "bench log".into(),
            "text/plain".into(),
            DEFAULT_TTL,
        );
        park_t.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let f = blobs
            .fetch(&FetchRequest {
                key: &blob.key,
                offset: 0,
                limit: 4000,
                pattern: Some("error.*customer 101\\b"),
                context_lines: 2,
            })
            .unwrap();
        grep_t.push(t.elapsed().as_secs_f64());
        matched = f.matched_lines.unwrap_or(0);
        let t = Instant::now();
        let s = blobs
            .fetch(&FetchRequest {
                key: &blob.key,
                offset: blob.total_chars / 2,
                limit: 4000,
                pattern: None,
                context_lines: 0,
            })
            .unwrap();
        slice_t.push(t.elapsed().as_secs_f64());
        assert_eq!(s.content.chars().count(), 4000);
    }
    println!(
        "{:.0} MB log: park {:.0} ms, pattern fetch {:.0} ms ({matched} matching lines), slice from the middle {:.2} ms (medians of {runs})",
        size as f64 / 1e6,
        median(park_t) * 1e3,
        median(grep_t) * 1e3,
        median(slice_t) * 1e3
    );
}
