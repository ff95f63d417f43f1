//! `loom_find_tools` ranking latency over 1,000 tools: the tool corpus's real listings
//! (`tests/fixtures/tool_corpus/`) copied under varied server names until the index holds at
//! least 1,000 tools, then every corpus task searched as a query, each timed alone. Prints the
//! index build time, the time to build it again after one server's tools changed, and the
//! p50 / p99 / max of one search. `cargo bench --bench find`; under
//! `cargo test` a short run keeps the harness working.

use loom::session::finder::{Finder, ToolDoc};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

const TOOLS: usize = 1000;
/// Deployment-style suffixes that make the copies' server names differ as real fleets do.
const COPIES: &[&str] = &[
    "", "prod", "staging", "dev", "eu", "us", "backup", "mirror", "team", "personal", "archive",
    "local", "remote", "test", "beta", "legacy", "internal", "public", "ops", "data",
];

fn listings(dir: &Path) -> Vec<(String, Vec<Value>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("the tool corpus at {}: {e}", dir.display()))
        .map(|e| e.expect("corpus entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|file| {
            let text = std::fs::read_to_string(file).expect("listing");
            let v: Value = serde_json::from_str(&text).expect("listing JSON");
            let server = v["server"].as_str().expect("server").to_owned();
            let tools = v["tools"].as_array().expect("tools").clone();
            (server, tools)
        })
        .collect()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let rounds = if full { 200 } else { 2 };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tool_corpus");
    let listings = listings(&dir);
    let mut docs = Vec::new();
    'fill: for (copy, suffix) in (0..).zip(COPIES.iter().cycle()) {
        for (server, tools) in &listings {
            let server = match (copy, *suffix) {
                (0, _) => server.clone(),
                (c, "") => format!("{server}-{}", c / COPIES.len()),
                (c, s) if c >= COPIES.len() => format!("{server}-{s}{}", c / COPIES.len()),
                (_, s) => format!("{server}-{s}"),
            };
            for tool in tools {
                let name = tool["name"].as_str().unwrap_or_default();
                docs.push(ToolDoc::from_tool(
                    &server,
                    &format!("{server}_{name}"),
                    tool,
                ));
            }
            if docs.len() >= TOOLS {
                break 'fill;
            }
        }
    }
    let tasks: Vec<String> = std::fs::read_to_string(dir.join("tasks.jsonl"))
        .expect("tasks.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("task JSON");
            v["task"].as_str().expect("task").to_owned()
        })
        .collect();
    // A session that has used a tenth of the tools, as the boost looks them up.
    let uses: HashMap<String, u32> = docs
        .iter()
        .step_by(10)
        .enumerate()
        .map(|(i, d)| (d.exposed.clone(), i as u32 % 7 + 1))
        .collect();
    let uses = |name: &str| uses.get(name).copied().unwrap_or(0);

    let t = Instant::now();
    let finder = Finder::new(docs.clone());
    let build = t.elapsed().as_secs_f64();
    // One server's listing changes: only its tools are read again.
    let first = docs[0].server.clone();
    for d in docs.iter_mut().filter(|d| d.server == first) {
        d.description.push_str(" (changed)");
    }
    let changed = docs.iter().filter(|d| d.server == first).count();
    let t = Instant::now();
    let rebuilt = finder.rebuilt(docs);
    let rebuild = t.elapsed().as_secs_f64();
    assert_eq!(rebuilt.docs().len(), finder.docs().len());

    let mut times = Vec::with_capacity(rounds * tasks.len());
    let mut found = 0usize;
    for _ in 0..rounds {
        for task in &tasks {
            let t = Instant::now();
            let hits = finder.search(task, 10, None, &uses);
            times.push(t.elapsed().as_secs_f64());
            found += hits.len();
        }
    }
    times.sort_by(f64::total_cmp);
    println!(
        "find over {} tools ({} queries x {rounds}, {} hits): build {:.1} ms, again after one server's {changed} tools changed {:.1} ms; search p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        finder.docs().len(),
        tasks.len(),
        found,
        build * 1e3,
        rebuild * 1e3,
        percentile(&times, 0.50) * 1e6,
        percentile(&times, 0.99) * 1e6,
        times.last().copied().unwrap_or_default() * 1e6,
    );
}
