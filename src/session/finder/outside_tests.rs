//! The finder held to an outside benchmark nobody here wrote: LiveMCPBench's 70 real servers
//! (527 tools) and its people-written tasks (`tests/fixtures/livemcpbench/`, Apache-2.0, its
//! README names the source). Each task is searched once as `loom_find_tools {query, limit: 10}`
//! would search it; a row is a hit at k when one of its relevant tools is among the first k.

use super::*;
use std::path::Path;

/// One task row: the query and every (server, tool) pair that answers it.
pub(super) struct Row {
    pub query: String,
    pub relevant: Vec<(String, String)>,
}

/// The set's tools as loom would expose them, and its rows.
pub(super) fn load_livemcpbench() -> (Vec<ToolDoc>, Vec<Row>) {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/livemcpbench/livemcpbench.json");
    let set: Value = serde_json::from_str(
        &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .expect("livemcpbench.json");
    let mut docs = Vec::new();
    for (server, tools) in set["servers"].as_object().expect("servers") {
        for tool in tools.as_array().expect("tools") {
            let name = tool["name"].as_str().expect("tool name");
            docs.push(ToolDoc::from_tool(
                server,
                &format!("{server}_{name}"),
                tool,
            ));
        }
    }
    let pair = |p: &Value| {
        let s = |i: usize| p[i].as_str().expect("[server, tool]").to_owned();
        (s(0), s(1))
    };
    let rows = set["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| Row {
            query: t["query"].as_str().expect("query").to_owned(),
            relevant: t["relevant"]
                .as_array()
                .expect("relevant")
                .iter()
                .map(pair)
                .collect(),
        })
        .collect();
    (docs, rows)
}

/// hit@1, hit@5 and hit@10 of the first ten hits `rank` gives each row's query.
pub(super) fn hits_at(
    docs: &[ToolDoc],
    rows: &[Row],
    mut rank: impl FnMut(&str) -> Vec<usize>,
) -> [f64; 3] {
    let mut at = [0usize; 3];
    for row in rows {
        let found = rank(&row.query);
        let first = found.iter().position(|&i| {
            let d = &docs[i];
            row.relevant
                .iter()
                .any(|(s, t)| *s == d.server && *t == d.original)
        });
        for (n, k) in at.iter_mut().zip([1, 5, 10]) {
            *n += usize::from(first.is_some_and(|f| f < k));
        }
    }
    at.map(|n| n as f64 / rows.len().max(1) as f64)
}

fn finder_hits(f: &Finder, rows: &[Row]) -> [f64; 3] {
    hits_at(f.docs(), rows, |q| {
        f.search(q, 10, None, &|_| 0)
            .iter()
            .map(|h| h.index)
            .collect()
    })
}

#[test]
fn retrieval_quality_on_livemcpbench() {
    let (docs, rows) = load_livemcpbench();
    assert_eq!(
        (docs.len(), rows.len()),
        (527, 251),
        "the set as its README counts it"
    );
    let f = Finder::new(docs);
    let [h1, h5, h10] = finder_hits(&f, &rows);
    eprintln!("livemcpbench: hit@1 {h1:.3}, hit@5 {h5:.3}, hit@10 {h10:.3}");
    // Floors: the scores reached (0.175, 0.506, 0.614 on 2026-12-05: a server named counted
    // once, descriptions weighing 1.5) minus 0.02; raise them with the ranking. BENCHMARKS.md
    // has the history.
    assert!(h1 >= 0.155, "hit@1 {h1:.3}");
    assert!(h5 >= 0.486, "hit@5 {h5:.3}");
    assert!(h10 >= 0.594, "hit@10 {h10:.3}");
}

/// Prints each missed row with the first hits. `cargo test --lib livemcpbench_misses --
/// --ignored --nocapture`
#[test]
#[ignore]
fn livemcpbench_misses() {
    let (docs, rows) = load_livemcpbench();
    let f = Finder::new(docs);
    for row in &rows {
        let hits = f.search(&row.query, 10, None, &|_| 0);
        let names: Vec<String> = hits
            .iter()
            .map(|h| {
                format!(
                    "{}:{}",
                    f.docs()[h.index].server,
                    f.docs()[h.index].original
                )
            })
            .collect();
        let hit = hits.iter().any(|h| {
            let d = &f.docs()[h.index];
            row.relevant
                .iter()
                .any(|(s, t)| *s == d.server && *t == d.original)
        });
        if !hit {
            eprintln!(
                "MISS {:?}\n  wants {:?}\n  got {names:?}",
                row.query, row.relevant
            );
        }
    }
}

/// Tunings tried on the set, printed side by side with the tool corpus's recall@5.
/// `cargo test --lib livemcpbench_tune -- --ignored --nocapture`
#[test]
#[ignore]
fn livemcpbench_tune() {
    let (docs, rows) = load_livemcpbench();
    let (corpus, tasks) = super::tests::load_corpus(&super::tests::corpus_dir());
    let base = Tuning::DEFAULT;
    let mut variants: Vec<(String, Tuning)> = vec![("default".into(), base)];
    let changes: Vec<(&str, super::tests::Change)> = vec![
        ("meaning 1", |t| t.meaning = 1.0),
        ("unmade 1", |t| t.unmade = 1.0),
        ("unmade 0.6", |t| t.unmade = 0.6),
        ("unmade 0.4", |t| t.unmade = 0.4),
        ("unmade 0", |t| t.unmade = 0.0),
        ("no writer place", |t| t.writer_at = None),
        ("writer at 2", |t| t.writer_at = Some(2)),
        ("writer at 9", |t| t.writer_at = Some(9)),
        ("no clock place", |t| t.clock_at = None),
        ("no feeder", |t| t.fed = 0),
        ("feeder of the first only", |t| t.fed = 1),
        ("feeders of the first 3", |t| t.fed = 3),
        ("clock at 9", |t| t.clock_at = Some(9)),
        ("implied 0.25", |t| t.implied = 0.25),
        ("implied 0.25, destination 0", |t| {
            t.implied = 0.25;
            t.destination = 0.0
        }),
        ("implied 0, destination 0", |t| {
            t.implied = 0.0;
            t.destination = 0.0
        }),
        ("clock at 6", |t| t.clock_at = Some(6)),
        ("meaning 2", |t| t.meaning = 2.0),
        ("server 0.5", |t| t.server = 0.5),
        ("server 0", |t| t.server = 0.0),
        ("named 0", |t| t.named = 0.0),
        ("named 1", |t| t.named = 1.0),
        ("named 0.5", |t| t.named = 0.5),
        ("description 1", |t| t.weight[2] = 1.0),
        ("implied 0", |t| t.implied = 0.0),
        ("implied 1", |t| t.implied = 1.0),
        ("path words 1", |t| t.path_words = 1.0),
        ("destination 0.35", |t| t.destination = 0.35),
        ("destination 0.75", |t| t.destination = 0.75),
        ("cover 0.7", |t| t.cover = 0.7),
        ("k1 0.8", |t| t.k1 = 0.8),
    ];
    for (label, change) in changes {
        let mut t = base;
        change(&mut t);
        variants.push((label.into(), t));
    }
    for (label, t) in variants {
        let f = Finder::with_tuning(docs.clone(), t);
        let [h1, h5, h10] = finder_hits(&f, &rows);
        let c = Finder::with_tuning(corpus.clone(), t);
        let (r1, r5, mrr) = super::tests::evaluate(&c, &tasks, false);
        eprintln!("{label:<24} live {h1:.3} {h5:.3} {h10:.3}   corpus {r1:.3} {r5:.3} {mrr:.3}");
    }
}

/// Where each row's first relevant tool ranks in the whole ranking, in bands.
/// `cargo test --lib livemcpbench_ranks -- --ignored --nocapture`
#[test]
#[ignore]
fn livemcpbench_ranks() {
    let (docs, rows) = load_livemcpbench();
    let f = Finder::new(docs);
    let n = f.docs().len();
    let mut bands = [0usize; 6];
    for row in &rows {
        let hits = f.search(&row.query, n, None, &|_| 0);
        let rank = hits.iter().position(|h| {
            let d = &f.docs()[h.index];
            row.relevant
                .iter()
                .any(|(s, t)| *s == d.server && *t == d.original)
        });
        let band = match rank {
            Some(r) if r < 10 => 0,
            Some(r) if r < 20 => 1,
            Some(r) if r < 50 => 2,
            Some(r) if r < 100 => 3,
            Some(_) => 4,
            None => 5,
        };
        bands[band] += 1;
        if band >= 2 {
            eprintln!(
                "rank {rank:?} of {}: {:?} wants {:?}",
                hits.len(),
                &row.query[..row.query.len().min(90)],
                row.relevant[0]
            );
        }
    }
    eprintln!(
        "ranks <10 {} <20 {} <50 {} <100 {} later {} never {}",
        bands[0], bands[1], bands[2], bands[3], bands[4], bands[5]
    );
}

/// The rows that one tuning finds in the first ten and another does not.
/// `cargo test --lib livemcpbench_diff -- --ignored --nocapture`
#[test]
#[ignore]
fn livemcpbench_diff() {
    // Edit `a` to the tuning to compare with the default.
    let (docs, rows) = load_livemcpbench();
    let a = Finder::with_tuning(
        docs.clone(),
        Tuning {
            implied: 0.0,
            ..Tuning::DEFAULT
        },
    );
    let b = Finder::new(docs);
    let found = |f: &Finder, row: &Row| {
        let hits = f.search(&row.query, 10, None, &|_| 0);
        hits.iter().position(|h| {
            let d = &f.docs()[h.index];
            row.relevant
                .iter()
                .any(|(s, t)| *s == d.server && *t == d.original)
        })
    };
    for row in &rows {
        let (x, y) = (found(&a, row), found(&b, row));
        if x.is_some() != y.is_some() || x.is_some_and(|x| x < 5) != y.is_some_and(|y| y < 5) {
            eprintln!(
                "{x:?} -> {y:?}: {:?} wants {:?}",
                &row.query[..row.query.len().min(100)],
                row.relevant[0]
            );
        }
    }
}

/// Hits as `[server, tool, score]` triples, for the offline trials below.
fn hits_json(f: &Finder, hits: &[Hit]) -> Value {
    hits.iter()
        .map(|h| {
            let d = &f.docs()[h.index];
            serde_json::json!([d.server, d.original, h.score])
        })
        .collect()
}

/// Writes each row's first 120 hits with their scores to `livemcpbench_dump.json` in the
/// temporary folder, to try a re-ranking offline. `cargo test --lib livemcpbench_dump --
/// --ignored`
#[test]
#[ignore]
fn livemcpbench_dump() {
    let (docs, rows) = load_livemcpbench();
    let f = Finder::new(docs);
    let out: Vec<Value> = rows
        .iter()
        .map(|row| {
            let hits = f.search(&row.query, 120, None, &|_| 0);
            serde_json::json!({
                "query": row.query,
                "relevant": row.relevant,
                "hits": hits_json(&f, &hits),
            })
        })
        .collect();
    let path = std::env::temp_dir().join("livemcpbench_dump.json");
    std::fs::write(&path, serde_json::to_string(&out).expect("JSON")).expect("written");
    eprintln!("{}", path.display());
}

/// Searches every query of the JSON list at `$LOOM_QUERIES` (the first 60 hits each, with
/// scores) and writes them beside it as `.hits.json`, to try query rewrites offline.
/// `LOOM_QUERIES=/tmp/q.json cargo test --lib livemcpbench_queries -- --ignored`
#[test]
#[ignore]
fn livemcpbench_queries() {
    let Ok(path) = std::env::var("LOOM_QUERIES") else {
        panic!("set LOOM_QUERIES to a JSON list of queries");
    };
    let (docs, _) = load_livemcpbench();
    let f = Finder::new(docs);
    let queries: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("queries")).expect("JSON");
    let out: Vec<Value> = queries
        .iter()
        .map(|q| hits_json(&f, &f.search(q, 60, None, &|_| 0)))
        .collect();
    std::fs::write(
        format!("{path}.hits.json"),
        serde_json::to_string(&out).expect("JSON"),
    )
    .expect("written");
}

/// Prints each tool's feeders (the tools of its server to call before it).
/// `cargo test --lib livemcpbench_feeders -- --ignored --nocapture`
#[test]
#[ignore]
fn livemcpbench_feeders() {
    let (docs, _) = load_livemcpbench();
    let f = Finder::new(docs);
    let mut n = 0;
    for (d, fs) in f.feeders.iter().enumerate() {
        if fs.is_empty() {
            continue;
        }
        n += 1;
        let names: Vec<&str> = fs
            .iter()
            .map(|&s| f.docs[s as usize].original.as_str())
            .collect();
        eprintln!(
            "FEED {}:{} <- {:?}",
            f.docs[d].server, f.docs[d].original, names
        );
    }
    eprintln!("FEED {n} of {}", f.docs.len());
}

/// Why each of the first 20 tools ranked where it did for the query in `$LOOM_QUERY`.
/// `LOOM_QUERY='…' cargo test --lib livemcpbench_explain -- --ignored --nocapture`
#[test]
#[ignore]
fn livemcpbench_explain() {
    let (docs, _) = load_livemcpbench();
    let f = Finder::new(docs);
    let Ok(q) = std::env::var("LOOM_QUERY") else {
        panic!("set LOOM_QUERY to a query");
    };
    let (hits, whys) = f.search_all_explained(&[q.as_str()], 20, None, &|_| 0);
    for (h, w) in hits.iter().zip(whys) {
        eprintln!("TOOL {} {:.2} {:?}", f.docs[h.index].exposed, h.score, w);
    }
}
