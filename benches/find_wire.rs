//! `loom_find_tools` as a model meets it: `loom serve` in search mode in front of real tool
//! listings (each served by `tests/fixtures/listing_server.py`), one `loom_find_tools {query,
//! limit: 10}` per request, timed at the client.
//!
//! 1. LiveMCPBench (`tests/fixtures/livemcpbench/`): its 70 servers, each of its 94 task
//!    queries once; a row is a hit at k when one of its relevant tools is among the first k
//!    tools of the result. Prints hit@1/5/10 and the latency of a find.
//! 2. 2,500 tools: the set's tools spread over 25 servers of 100 (copies under new names),
//!    every query searched in rounds. Prints the latency of a find and loom's RSS.
//!
//! `cargo bench --bench find_wire`; under `cargo test` a short run of both keeps the harness
//! working. Needs python3.

mod common;

use common::peer::Peer;

use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `loom serve` over stdio, initialized (the benches' shared peer).
struct Loom(Peer);

impl Loom {
    fn serve(config: &Path) -> Loom {
        let mut peer = Peer::spawn(&["serve", "-c", config.to_str().expect("utf-8 path")]);
        peer.initialize();
        Loom(peer)
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let line = self.0.request(method, &params.to_string());
        serde_json::from_str(&line).expect("a JSON-RPC response")
    }

    /// The tools one find returns with their schemas, as (server, exposed name), then the
    /// names of its `more` tail, its size in tokens, and how long it took.
    fn find(&mut self, query: &str) -> (Found, Duration) {
        let params = json!({"name": "loom_find_tools",
                            "arguments": {"query": query, "limit": 10}});
        let t = Instant::now();
        let r = self.request("tools/call", params);
        let took = t.elapsed();
        if r["result"]["structuredContent"]["tools"]
            .as_array()
            .is_none_or(|t| t.is_empty())
        {
            eprintln!(
                "no tools for {query:?}: {}",
                &r.to_string()[..r.to_string().len().min(600)]
            );
        }
        let tools = r["result"]["structuredContent"]["tools"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|t| {
                let s = |k: &str| t[k].as_str().unwrap_or_default().to_owned();
                (s("server"), s("name"))
            })
            .collect();
        let structured = &r["result"]["structuredContent"];
        let more = structured["more"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|l| l.as_str()?.split_once(": ").map(|(n, _)| n.to_owned()))
            .collect();
        let tokens = common::tokens(&structured.to_string());
        (
            Found {
                tools,
                more,
                tokens,
            },
            took,
        )
    }

    fn rss_kib(&self) -> u64 {
        self.0.rss_kib()
    }
}

/// What one find returned.
#[derive(Default)]
struct Found {
    tools: Vec<(String, String)>,
    more: Vec<String>,
    tokens: usize,
}

/// A loom config in search mode with one listing server per name of `servers` in `file`.
fn config(dir: &Path, file: &Path, servers: &[String]) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/listing_server.py");
    let mut text = String::from("listing = \"search\"\nstartup_grace = 60\n");
    for s in servers {
        text.push_str(&format!(
            "[[servers]]\nname = \"{s}\"\ncommand = \"python3\"\nargs = [{:?}, {:?}, {s:?}]\n",
            script.display().to_string(),
            file.display().to_string(),
        ));
    }
    let path = dir.join("loom.toml");
    std::fs::write(&path, text).expect("config");
    path
}

/// The exposed name loom gives a tool under qualified naming (short names only; a long one
/// is cut and hashed, and matched by its start).
fn exposed_matches(exposed: &str, server: &str, tool: &str) -> bool {
    let q: String = format!("{server}_{tool}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    exposed == q || (q.len() > 64 && exposed.starts_with(&q[..40]))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let set_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/livemcpbench/livemcpbench.json");
    let set: Value =
        serde_json::from_str(&std::fs::read_to_string(&set_path).expect("set")).expect("set JSON");
    let servers: Vec<String> = set["servers"]
        .as_object()
        .expect("servers")
        .keys()
        .cloned()
        .collect();
    let rows = set["tasks"].as_array().expect("tasks");
    let mut queries: Vec<&str> = Vec::new();
    for r in rows {
        let q = r["query"].as_str().expect("query");
        if !queries.contains(&q) {
            queries.push(q);
        }
    }
    let dir = tempfile::tempdir().expect("temp dir");

    // 1. LiveMCPBench over the wire.
    let mut loom = Loom::serve(&config(dir.path(), &set_path, &servers));
    let asked = if full { queries.len() } else { 3 };
    let mut found: HashMap<&str, Found> = HashMap::new();
    // The first find waits for the servers and builds the index; it is not timed.
    loom.find(queries[0]);
    let mut times = Vec::new();
    for q in &queries[..asked] {
        let (tools, took) = loom.find(q);
        times.push(took);
        found.insert(q, tools);
    }
    // Ranks run through the tools with schemas, then the tail; `shown` counts a row whose
    // tool the result names anywhere.
    let (mut at, mut shown, mut n) = ([0usize; 3], 0usize, 0usize);
    for r in rows {
        let Some(f) = found.get(r["query"].as_str().unwrap_or_default()) else {
            continue;
        };
        n += 1;
        let relevant = r["relevant"].as_array().expect("relevant");
        let names = f
            .tools
            .iter()
            .map(|(_, name)| name.as_str())
            .chain(f.more.iter().map(String::as_str));
        let first = names.enumerate().find_map(|(i, name)| {
            relevant
                .iter()
                .any(|p| {
                    let (s, t) = (
                        p[0].as_str().unwrap_or_default(),
                        p[1].as_str().unwrap_or_default(),
                    );
                    exposed_matches(name, s, t)
                })
                .then_some(i)
        });
        for (a, k) in at.iter_mut().zip([1, 5, 10]) {
            *a += usize::from(first.is_some_and(|f| f < k));
        }
        shown += usize::from(first.is_some());
    }
    assert!(
        found.values().all(|f| !f.tools.is_empty()),
        "every find returns tools"
    );
    times.sort();
    let per =
        |count: fn(&Found) -> usize| found.values().map(count).sum::<usize>() as f64 / asked as f64;
    println!(
        "livemcpbench over the wire: {} servers, {n} rows of {asked} queries: hit@1 {:.3}, hit@5 {:.3}, hit@10 {:.3}, named anywhere {:.3}; {:.1} tools with schemas + {:.1} in `more` per find, {:.0} tokens; find p50 {:.2} ms, p99 {:.2} ms",
        servers.len(),
        at[0] as f64 / n as f64,
        at[1] as f64 / n as f64,
        at[2] as f64 / n as f64,
        shown as f64 / n as f64,
        per(|f| f.tools.len()),
        per(|f| f.more.len()),
        per(|f| f.tokens),
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.99)),
    );
    drop(loom);

    // 2. 2,500 tools: 25 servers of 100, the set's tools in turn under each.
    let all: Vec<&Value> = set["servers"]
        .as_object()
        .expect("servers")
        .values()
        .flat_map(|t| t.as_array().expect("tools"))
        .collect();
    let mut big = serde_json::Map::new();
    for s in 0..25 {
        let tools: Vec<Value> = (0..100)
            .map(|i| {
                let mut t = all[(s * 100 + i) % all.len()].clone();
                let name = t["name"].as_str().unwrap_or_default().to_owned();
                t["name"] = json!(format!("{name}_{i}"));
                t
            })
            .collect();
        big.insert(format!("fleet{s:02}"), Value::Array(tools));
    }
    let big_names: Vec<String> = big.keys().cloned().collect();
    let big_path = dir.path().join("big.json");
    std::fs::write(&big_path, json!({"servers": big}).to_string()).expect("big set");
    let mut loom = Loom::serve(&config(dir.path(), &big_path, &big_names));
    let rounds = if full { 5 } else { 1 };
    let asked = if full { queries.len() } else { 3 };
    let t = Instant::now();
    let (first, _) = loom.find(queries[0]);
    let first_find = t.elapsed();
    assert!(!first.tools.is_empty(), "the first find returns tools");
    let mut times = Vec::new();
    for _ in 0..rounds {
        for q in &queries[..asked] {
            times.push(loom.find(q).1);
        }
    }
    times.sort();
    println!(
        "2,500 tools of 25 servers: first find (index built) {:.1} ms; find p50 {:.2} ms, p99 {:.2} ms over {} finds; loom RSS {:.1} MiB",
        ms(first_find),
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.99)),
        times.len(),
        loom.rss_kib() as f64 / 1024.0,
    );
    drop(loom);

    // 3. 500 HTTP servers of 5 tools, all behind one loopback port: how long until every tool
    // is findable, and loom's memory then.
    let servers = if full { 500 } else { 20 };
    let mut fleet = serde_json::Map::new();
    let mut names = Vec::new();
    for s in 0..servers {
        let server = format!("h{s:03}");
        let tools: Vec<Value> = (0..5)
            .map(|i| {
                let mut t = all[(s * 5 + i) % all.len()].clone();
                t["name"] = json!(format!("t{i}"));
                names.push(format!("{server}_t{i}"));
                t
            })
            .collect();
        fleet.insert(server, Value::Array(tools));
    }
    let fleet_path = dir.path().join("fleet.json");
    std::fs::write(&fleet_path, json!({"servers": fleet}).to_string()).expect("fleet set");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fleet_http.py");
    let mut http = std::process::Command::new("python3")
        .arg(&script)
        .arg(&fleet_path)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs the HTTP fleet");
    let mut port = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(http.stdout.take().expect("stdout")),
        &mut port,
    )
    .expect("the fleet's port");
    let port = port.trim();
    let mut text = String::from("listing = \"search\"\n");
    for s in 0..servers {
        text.push_str(&format!(
            "[[servers]]\nname = \"h{s:03}\"\nurl = \"http://127.0.0.1:{port}/h{s:03}/mcp\"\n"
        ));
    }
    let cfg = dir.path().join("fleet.toml");
    std::fs::write(&cfg, text).expect("fleet config");
    let t = Instant::now();
    let mut loom = Loom::serve(&cfg);
    // Every tool is findable when a find naming 20 of them returns those 20, for every 20.
    let findable = |loom: &mut Loom, chunk: &[String]| {
        let params = json!({"name": "loom_find_tools",
                            "arguments": {"query": chunk.join(" "), "limit": 50}});
        let r = loom.request("tools/call", params);
        let got: Vec<&str> = r["result"]["structuredContent"]["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str())
            .chain(
                r["result"]["structuredContent"]["more"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|l| Some(l.as_str()?.split_once(": ")?.0)),
            )
            .collect();
        chunk.iter().all(|n| got.contains(&n.as_str()))
    };
    let mut ready = None;
    while t.elapsed() < Duration::from_secs(120) {
        if names.chunks(20).all(|c| findable(&mut loom, c)) {
            ready = Some(t.elapsed());
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let ready = ready.expect("every tool of the HTTP fleet becomes findable");
    println!(
        "{servers} HTTP servers, {} tools: every tool findable {:.2} s after loom started; loom RSS {:.1} MiB",
        names.len(),
        ready.as_secs_f64(),
        loom.rss_kib() as f64 / 1024.0,
    );
    drop(loom);
    let _ = http.kill();
    let _ = http.wait();
}
