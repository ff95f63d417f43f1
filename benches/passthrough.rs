//! Pass-through overhead: N small `tools/call`s straight to the sample server versus through
//! `loom serve`, one at a time, reporting p50/p99 latency of each and the difference, plus
//! loom's resident memory idle and under load. `cargo bench --bench passthrough` runs 10,000
//! calls; under `cargo test` it runs a short smoke pass so the harness itself stays working.

mod common;

use common::peer::Peer;
use std::time::{Duration, Instant};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn measure(peer: &mut Peer, tool: &str, n: usize) -> Vec<Duration> {
    let params = format!(r#"{{"name":"{tool}","arguments":{{"city":"Lisbon"}}}}"#);
    for _ in 0..n.min(200) {
        peer.request("tools/call", &params);
    }
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            let r = peer.request("tools/call", &params);
            let d = t.elapsed();
            assert!(r.contains("Lisbon"), "unexpected reply: {r}");
            d
        })
        .collect();
    times.sort();
    times
}

/// `n` calls through `loom serve` with `extra` config lines in front of the sample server; the
/// sorted latencies and loom's RSS idle and after the calls.
fn through(dir: &std::path::Path, extra: &str, n: usize) -> (Vec<Duration>, u64, u64) {
    let cfg = dir.join("loom.toml");
    std::fs::write(
        &cfg,
        format!("{extra}[[servers]]\nname = \"sample\"\ncommand = \"loom\"\nargs = [\"sample-server\"]\n"),
    )
    .expect("config");
    let mut proxied = Peer::spawn(&["serve", "-c", cfg.to_str().expect("utf-8 path")]);
    proxied.initialize();
    proxied.request("tools/list", "{}");
    std::thread::sleep(Duration::from_millis(500));
    let idle = proxied.rss_kib();
    let l = measure(&mut proxied, "sample_get_weather", n);
    let loaded = proxied.rss_kib();
    (l, idle, loaded)
}

/// `LOOM_BENCH_HISTORY=1`: three rounds, each `history = "off"` then `"all"` (the order
/// alternating between rounds), every run a fresh `loom serve` archiving into `dir`.
fn history_rounds(dir: &std::path::Path, direct: &[Duration], n: usize) {
    let modes = ["off", "all"];
    let mut p50 = [Vec::new(), Vec::new()];
    let mut p99 = [Vec::new(), Vec::new()];
    let (d50, d99) = (us(percentile(direct, 0.5)), us(percentile(direct, 0.99)));
    println!(
        "history off vs all, {n} sequential small tools/call per run; direct p50 {d50:.1} µs p99 {d99:.1} µs"
    );
    for round in 0..3 {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for m in order {
            let hist = dir.join(format!("hist-{round}-{m}"));
            let extra = format!(
                "history = \"{}\"\nhistory_dir = \"{}\"\n",
                modes[m],
                hist.display()
            );
            let (l, _, loaded) = through(dir, &extra, n);
            let (a, b) = (us(percentile(&l, 0.5)), us(percentile(&l, 0.99)));
            println!(
                "  round {} history = {:>3}: p50 {a:7.1} µs  p99 {b:7.1} µs  (added p50 {:6.1} µs)  RSS after {:.1} MiB",
                round + 1,
                modes[m],
                a - d50,
                loaded as f64 / 1024.0
            );
            p50[m].push(a);
            p99[m].push(b);
        }
    }
    let med = |v: &Vec<f64>| {
        let mut v = v.clone();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for m in 0..2 {
        println!(
            "  median history = {:>3}: p50 {:7.1} µs  p99 {:7.1} µs",
            modes[m],
            med(&p50[m]),
            med(&p99[m])
        );
    }
    let ratios: Vec<f64> = (0..3).map(|r| p50[1][r] / p50[0][r]).collect();
    println!(
        "  all / off p50 per round: {:.3} {:.3} {:.3}, median {:.3}",
        ratios[0],
        ratios[1],
        ratios[2],
        med(&ratios)
    );
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let n = if full { 10_000 } else { 200 };

    let mut direct = Peer::spawn(&["sample-server"]);
    direct.initialize();
    let d = measure(&mut direct, "get_weather", n);
    drop(direct);

    let dir = std::env::temp_dir().join(format!("loom-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    if std::env::var_os("LOOM_BENCH_HISTORY").is_some() {
        history_rounds(&dir, &d, n);
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let (l, idle, loaded) = through(&dir, "", n);
    let _ = std::fs::remove_dir_all(&dir);

    let (d50, d99, l50, l99) = (
        percentile(&d, 0.5),
        percentile(&d, 0.99),
        percentile(&l, 0.5),
        percentile(&l, 0.99),
    );
    println!("pass-through overhead, {n} sequential small tools/call (sample get_weather)");
    println!(
        "  direct       p50 {:8.1} µs   p99 {:8.1} µs",
        us(d50),
        us(d99)
    );
    println!(
        "  through loom p50 {:8.1} µs   p99 {:8.1} µs",
        us(l50),
        us(l99)
    );
    println!(
        "  added        p50 {:8.1} µs   p99 {:8.1} µs",
        us(l50) - us(d50),
        us(l99) - us(d99)
    );
    println!(
        "  loom RSS idle {:.1} MiB, after load {:.1} MiB",
        idle as f64 / 1024.0,
        loaded as f64 / 1024.0
    );
}
