//! Data from tool to tool (issue 26): one scripted task, "look up the details of every late
//! order and attach a summary of the parked log to a note", run two ways through `loom serve` in
//! front of the sample server, as a model would run it:
//!
//! - by hand: the model reads the late orders' ids (paged `loom_query`), calls
//!   `sample_get_order_details` once per id and reads every answer, reads the log's ERROR lines
//!   with `loom_fetch`, and writes them back into `sample_write_note`'s body;
//! - with loom: one `loom_call_each` over the query, and one `loom_call` whose `bind` puts the
//!   parked log's ERROR lines into the body.
//!
//! Tokens that reach the model are what it writes (each call's name and arguments) and what it
//! reads (each call's result as JSON), counted with o200k (the tokenizer the tests hold the
//! estimate to). Wall time is the task's, from the first call to the last, each way in a fresh
//! `loom serve`, alternating. Both notes must have the same digest: the same body arrived.
//!
//! Then the per-call cost of a batch: N sequential direct calls of `sample_get_order_details`
//! through loom against one `loom_call_each` of N rows at concurrency 1.
//!
//! `cargo bench --bench flow` runs 300 late orders, 3 rounds and N = 1,000; under `cargo test`
//! a short smoke pass keeps the harness working.

mod common;

use common::peer::Peer;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// Ids the by-hand run reads per `loom_query` page (small enough to come back inline).
const PAGE: usize = 50;

struct Run {
    tokens: usize,
    calls: usize,
    wall: Duration,
    digest: String,
}

struct Counter {
    bpe: tiktoken_rs::CoreBPE,
    tokens: usize,
    calls: usize,
}

impl Counter {
    /// A call the model makes: it writes the name and arguments, and reads the result.
    fn call(&mut self, peer: &mut Peer, tool: &str, arguments: Value) -> Value {
        let asked = json!({ "name": tool, "arguments": arguments }).to_string();
        let (_, result) = peer.call(tool, &arguments);
        assert!(
            result.get("isError") != Some(&Value::Bool(true)),
            "{tool} failed: {result}"
        );
        self.tokens += self.bpe.encode_ordinary(&asked).len();
        self.tokens += self.bpe.encode_ordinary(&result.to_string()).len();
        self.calls += 1;
        result
    }
}

fn config(dir: &std::path::Path) -> std::path::PathBuf {
    let cfg = dir.join("loom.toml");
    std::fs::write(
        &cfg,
        format!(
            "history = \"off\"\nmemory_file = \"{}\"\n[[servers]]\nname = \"sample\"\ncommand = \"loom\"\nargs = [\"sample-server\"]\napprove.allow = [\"write_note\"]\n",
            dir.join("memories.jsonl").display()
        ),
    )
    .expect("config");
    cfg
}

fn start(cfg: &std::path::Path) -> Peer {
    let mut p = Peer::spawn(&["serve", "-c", cfg.to_str().expect("utf-8 path")]);
    p.initialize();
    p.request("tools/list", "{}");
    p
}

fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn digest(receipt: &Value) -> String {
    let t = text(receipt);
    let at = t
        .find("sha256 ")
        .unwrap_or_else(|| panic!("a note receipt: {t}"));
    t[at + 7..].trim().to_owned()
}

/// The steps both ways share: the orders as a dataset, the log parked. Counted: the model
/// makes these calls either way.
fn common(c: &mut Counter, peer: &mut Peer) -> (String, String) {
    let r = c.call(peer, "sample_list_orders", json!({ "limit": 5000 }));
    let orders = r["structuredContent"]["ref"]
        .as_str()
        .unwrap_or_else(|| panic!("an orders dataset: {r}"))
        .to_owned();
    let r = c.call(peer, "sample_tail_logs", json!({ "lines": 3000 }));
    let blob = r["structuredContent"]["blob_key"]
        .as_str()
        .unwrap_or_else(|| panic!("a parked log: {r}"))
        .to_owned();
    (orders, blob)
}

/// A fresh `loom serve`, a counter, the clock started, and the shared steps done.
fn begin(
    cfg: &std::path::Path,
    bpe: &tiktoken_rs::CoreBPE,
) -> (Peer, Counter, Instant, String, String) {
    let mut peer = start(cfg);
    let mut c = Counter {
        bpe: bpe.clone(),
        tokens: 0,
        calls: 0,
    };
    let t = Instant::now();
    let (orders, blob) = common(&mut c, &mut peer);
    (peer, c, t, orders, blob)
}

fn late(orders: &str, n: usize) -> String {
    format!("SELECT order_id FROM {orders} WHERE status = 'pending' ORDER BY order_id LIMIT {n}")
}

fn by_hand(cfg: &std::path::Path, n: usize, bpe: &tiktoken_rs::CoreBPE) -> Run {
    let (mut peer, mut c, t, orders, blob) = begin(cfg, bpe);
    let mut ids: Vec<Value> = Vec::new();
    while ids.len() < n {
        let sql = format!(
            "SELECT order_id FROM ({}) LIMIT {PAGE} OFFSET {}",
            late(&orders, n),
            ids.len()
        );
        let r = c.call(&mut peer, "loom_query", json!({ "sql": sql }));
        let rows = r["structuredContent"]["rows"]
            .as_array()
            .unwrap_or_else(|| panic!("rows inline: {r}"))
            .clone();
        if rows.is_empty() {
            break;
        }
        ids.extend(rows.into_iter().map(|row| row["order_id"].clone()));
    }
    assert_eq!(ids.len(), n, "{n} late orders");
    for id in ids {
        c.call(
            &mut peer,
            "sample_get_order_details",
            json!({ "order_id": id }),
        );
    }
    // The log's ERROR lines, paged, then written back as the note's body.
    let mut lines: Vec<String> = Vec::new();
    let mut offset = 0i64;
    loop {
        let r = c.call(
            &mut peer,
            "loom_fetch",
            json!({ "blob_key": blob, "pattern": "ERROR", "limit": 64000, "offset": offset }),
        );
        let st = &r["structuredContent"];
        let page = st["text"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| text(&r));
        for l in page.lines() {
            if let Some((num, rest)) = l.split_once(": ")
                && num.chars().all(|ch| ch.is_ascii_digit())
            {
                lines.push(rest.to_owned());
            }
        }
        offset = st["next_offset"].as_i64().unwrap_or(-1);
        if offset < 0 {
            break;
        }
    }
    let receipt = c.call(
        &mut peer,
        "sample_write_note",
        json!({ "title": "late orders", "body": lines.join("\n") }),
    );
    Run {
        tokens: c.tokens,
        calls: c.calls,
        wall: t.elapsed(),
        digest: digest(&receipt),
    }
}

fn with_loom(cfg: &std::path::Path, n: usize, bpe: &tiktoken_rs::CoreBPE) -> Run {
    let (mut peer, mut c, t, orders, blob) = begin(cfg, bpe);
    let r = c.call(
        &mut peer,
        "loom_call_each",
        json!({ "tool": "sample_get_order_details", "sql": late(&orders, n) }),
    );
    let calls = r["structuredContent"]["batch"]["calls"].as_u64();
    assert_eq!(calls, Some(n as u64), "{r}");
    let receipt = c.call(
        &mut peer,
        "loom_call",
        json!({
            "tool": "sample_write_note",
            "arguments": { "title": "late orders" },
            "bind": { "/body": { "blob": blob, "pattern": "ERROR" } }
        }),
    );
    Run {
        tokens: c.tokens,
        calls: c.calls,
        wall: t.elapsed(),
        digest: digest(&receipt),
    }
}

/// Per call: N sequential direct calls through loom, and one batch of N at concurrency 1.
fn per_call(cfg: &std::path::Path, n: usize) -> (f64, f64) {
    let mut peer = start(cfg);
    let (_, r) = peer.call("sample_list_orders", &json!({ "limit": 5000 }));
    let orders = r["structuredContent"]["ref"]
        .as_str()
        .expect("a dataset")
        .to_owned();
    let (_, r) = peer.call(
        "loom_query",
        &json!({ "sql": format!("SELECT min(order_id)::VARCHAR AS lo FROM {orders}") }),
    );
    let lo: u64 = r["structuredContent"]["rows"][0]["lo"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("the least id");
    // Warm both paths.
    for _ in 0..50 {
        peer.call("sample_get_order_details", &json!({ "order_id": lo }));
    }
    let t = Instant::now();
    for _ in 0..n {
        peer.call("sample_get_order_details", &json!({ "order_id": lo }));
    }
    let direct = t.elapsed().as_secs_f64() * 1e3 / n as f64;
    let sql = format!("SELECT order_id FROM {orders} ORDER BY order_id LIMIT {n}");
    let t = Instant::now();
    let (_, r) = peer.call(
        "loom_call_each",
        &json!({ "tool": "sample_get_order_details", "sql": sql, "concurrency": 1, "max_calls": n }),
    );
    let batch = t.elapsed().as_secs_f64() * 1e3 / n as f64;
    assert_eq!(
        r["structuredContent"]["batch"]["calls"].as_u64(),
        Some(n as u64),
        "{r}"
    );
    (direct, batch)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (n, rounds, per) = if full { (300, 3, 1000) } else { (20, 1, 50) };
    let dir = std::env::temp_dir().join(format!("loom-bench-flow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cfg = config(&dir);
    let bpe = tiktoken_rs::o200k_base().expect("o200k");
    let mut hand = Vec::new();
    let mut loom = Vec::new();
    for round in 0..rounds {
        let (a, b) = if round % 2 == 0 {
            let a = by_hand(&cfg, n, &bpe);
            (a, with_loom(&cfg, n, &bpe))
        } else {
            let b = with_loom(&cfg, n, &bpe);
            (by_hand(&cfg, n, &bpe), b)
        };
        assert_eq!(a.digest, b.digest, "both notes have the same body");
        println!(
            "round {}: by hand {} calls {} tokens {:.0} ms · with loom {} calls {} tokens {:.0} ms",
            round + 1,
            a.calls,
            a.tokens,
            a.wall.as_secs_f64() * 1e3,
            b.calls,
            b.tokens,
            b.wall.as_secs_f64() * 1e3
        );
        hand.push(a);
        loom.push(b);
    }
    let tok = |v: &[Run]| median(v.iter().map(|r| r.tokens as f64).collect());
    let ms = |v: &[Run]| median(v.iter().map(|r| r.wall.as_secs_f64() * 1e3).collect());
    println!(
        "{n} late orders: by hand {:.0} tokens, {:.0} ms; with loom {:.0} tokens, {:.0} ms; {:.1}x fewer tokens, wall time ratio {:.2} (medians of {rounds})",
        tok(&hand),
        ms(&hand),
        tok(&loom),
        ms(&loom),
        tok(&hand) / tok(&loom),
        ms(&loom) / ms(&hand)
    );
    let (direct, batch) = per_call(&cfg, per);
    println!(
        "per call over {per}: direct through loom {direct:.3} ms, in a loom_call_each batch (concurrency 1) {batch:.3} ms, difference {:+.3} ms",
        batch - direct
    );
    let _ = std::fs::remove_dir_all(&dir);
}
