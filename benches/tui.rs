//! Workbench figures for BENCHMARKS.md: frame time at 200×50 with a 1,000,000-row result in
//! the grid (drawn from pages the real store serves), time to first frame of `loom tui`
//! (downstream start excluded: servers start in the background), and idle CPU with nothing
//! happening. `cargo bench --bench tui`; under `cargo test` a short pass keeps it working.

use loom::config::Config;
use loom::frontend::engine::Engine;
use loom::frontend::local::LocalEngine;
use loom::session::Session;
use loom::tui::app::{App, Msg};
use loom::tui::{TuiOptions, build_app, clipboard::Clipboard, ui};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

const LOOM: &str = env!("CARGO_BIN_EXE_loom");

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Applies a message, runs the requests it makes against the engine, and feeds the replies
/// back until nothing is pending.
async fn settle(app: &mut App, engine: &Arc<dyn Engine>, msg: Msg) {
    let mut queue = app.update(msg);
    while let Some((t, req)) = queue.pop() {
        let reply = engine.request(req).await;
        queue.extend(app.update(Msg::Reply(t, reply)));
    }
}

async fn frame_times(full: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("loom.toml");
    std::fs::write(&path, "memory_file = \"m.jsonl\"\n").expect("config");
    let config = Arc::new(Config::load(&path).expect("config"));
    let session = Session::new(config);
    let engine: Arc<dyn Engine> = LocalEngine::new(session);
    let opts = TuiOptions {
        theme: "dark".into(),
        theme_overrides: None,
        keymap: None,
        title: "loom tui".into(),
        history_file: None,
        attached: false,
    };
    let mut app = build_app(&opts, Clipboard::memory()).expect("app");
    app.size = (200, 50);
    for (t, req) in app.start() {
        let r = engine.request(req).await;
        settle(&mut app, &engine, Msg::Reply(t, r)).await;
    }
    let sql = "SELECT range AS id, 'customer ' || (range % 997) AS name, range * 1.25 AS amount, \
               DATE '2025-01-01' + (range % 365)::INTEGER AS day, \
               CASE WHEN range % 7 = 0 THEN NULL ELSE 'note ' || range END AS note \
               FROM range(1000000)";
    app.editor.area = tui_textarea::TextArea::new(vec![sql.into()]);
    app.focus = loom::tui::app::Pane::Editor;
    let started = Instant::now();
    settle(&mut app, &engine, Msg::ctrl('e')).await;
    let query_s = started.elapsed().as_secs_f64();
    let rows = app
        .results
        .grid
        .as_ref()
        .map(|g| g.result.rows)
        .unwrap_or(0);
    assert_eq!(rows, 1_000_000);
    app.focus = loom::tui::app::Pane::Results;
    let mut term = Terminal::new(TestBackend::new(200, 50)).expect("terminal");
    let frames = if full { 400 } else { 20 };
    let mut still = Vec::new();
    for _ in 0..frames {
        let t = Instant::now();
        app.prepare_frame();
        term.draw(|f| ui::draw(f, &app)).expect("draw");
        still.push(t.elapsed().as_secs_f64() * 1e3);
    }
    // Scrolling: a key, the reducer, any page fetch, then the frame.
    let mut scroll = Vec::new();
    let mut fetch = Vec::new();
    for i in 0..frames {
        let k = if i % 50 == 49 {
            'G'
        } else if i % 50 == 0 {
            'g'
        } else {
            'j'
        };
        let t = Instant::now();
        settle(&mut app, &engine, Msg::char(k)).await;
        let fetched = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        app.prepare_frame();
        term.draw(|f| ui::draw(f, &app)).expect("draw");
        scroll.push(t.elapsed().as_secs_f64() * 1e3);
        if k == 'G' {
            fetch.push(fetched);
        }
    }
    println!(
        "grid 200x50, {rows} rows (query into the engine {query_s:.2} s): frame median {:.2} ms (still), {:.2} ms (scrolling); jump to the last row incl. page fetch {:.1} ms",
        median(still),
        median(scroll),
        if fetch.is_empty() { 0.0 } else { median(fetch) }
    );
    // Typing into a long line: a 7.5 KB one-line statement in the editor, then keys typed at
    // its end, each followed by the frame (highlighting included), as the workbench does.
    let long = format!(
        "SELECT {}",
        (0..600)
            .map(|i| format!("{i} AS c{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    app.focus = loom::tui::app::Pane::Editor;
    app.editor.area = tui_textarea::TextArea::new(vec![long.clone()]);
    app.editor.area.move_cursor(tui_textarea::CursorMove::End);
    let mut typing = Vec::new();
    for i in 0..frames.min(100) {
        let t = Instant::now();
        settle(
            &mut app,
            &engine,
            Msg::char(if i % 2 == 0 { ' ' } else { 'x' }),
        )
        .await;
        app.prepare_frame();
        term.draw(|f| ui::draw(f, &app)).expect("draw");
        typing.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!(
        "editor: a key typed at the end of a {} B line, with its frame: median {:.2} ms",
        long.len(),
        median(typing)
    );
}

fn tmux(socket: &str, args: &[&str]) -> String {
    let out = Command::new("tmux")
        .arg("-L")
        .arg(socket)
        .args(args)
        .output()
        .expect("tmux");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn cpu_ticks(pid: &str) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name: utime and stime are the 12th and 13th.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
}

fn first_frame_and_idle(full: bool) {
    let runs = if full { 7 } else { 1 };
    let idle_secs = if full { 10 } else { 1 };
    let mut firsts = Vec::new();
    let mut idle = Vec::new();
    for r in 0..runs {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = dir.path().join("loom.toml");
        std::fs::write(
            &cfg,
            format!("memory_file = \"m.jsonl\"\n[[servers]]\nname = \"sample\"\ncommand = {LOOM:?}\nargs = [\"sample-server\"]\n"),
        )
        .expect("config");
        let report = dir.path().join("first-frame");
        let socket = format!("loom-bench-{}-{r}", std::process::id());
        let command = format!(
            "env XDG_RUNTIME_DIR={d} XDG_DATA_HOME={d} LOOM_REPORT_FIRST_FRAME={} {LOOM} tui -c {}",
            report.display(),
            cfg.display(),
            d = dir.path().display()
        );
        tmux(
            &socket,
            &[
                "new-session",
                "-d",
                "-x",
                "160",
                "-y",
                "45",
                "-s",
                "b",
                &command,
            ],
        );
        let start = Instant::now();
        while !report.exists() && start.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let micros: f64 = std::fs::read_to_string(&report)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .expect("first frame reported");
        firsts.push(micros / 1e3);
        if r == 0 {
            let pid = tmux(&socket, &["display", "-p", "-t", "b", "#{pane_pid}"])
                .trim()
                .to_owned();
            // Let the servers come up and the screen settle, then measure doing nothing.
            std::thread::sleep(Duration::from_secs(2));
            let before = cpu_ticks(&pid);
            std::thread::sleep(Duration::from_secs(idle_secs));
            let after = cpu_ticks(&pid);
            // SAFETY: sysconf has no preconditions.
            let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
            idle.push((after - before) as f64 / hz / idle_secs as f64 * 100.0);
        }
        tmux(&socket, &["kill-server"]);
    }
    println!(
        "loom tui: first frame median {:.0} ms after process start ({} runs); idle CPU {:.2}% over {idle_secs} s",
        median(firsts),
        runs,
        idle.first().copied().unwrap_or(0.0)
    );
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(frame_times(full));
    first_frame_and_idle(full);
}
