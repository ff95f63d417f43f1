//! The workbench driven as a person would, on a real session: the built-in sample server as
//! the downstream, the real store, the in-process Engine API. Keys go into the reducer, the
//! requests it makes run against the engine, and the replies and live events come back.

mod common;

use common::{LOOM, sample_config};
use crossterm::event::KeyCode;
use loom::config::Config;
use loom::session::Session;
use loom::session::engine::{Engine, Request};
use loom::session::local::LocalEngine;
use loom::tui::app::{App, Detail, Msg, Overlay, PaletteStage, Pane};
use loom::tui::{TuiOptions, build_app, clipboard::Clipboard};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

struct Driver {
    app: App,
    engine: Arc<dyn Engine>,
    tx: mpsc::UnboundedSender<Msg>,
    rx: mpsc::UnboundedReceiver<Msg>,
}

impl Driver {
    fn dispatch(&self, reqs: Vec<(u64, Request)>) {
        for (t, req) in reqs {
            let fut = self.engine.request(req);
            let tx = self.tx.clone();
            tokio::spawn(async move {
                let _ = tx.send(Msg::Reply(t, fut.await));
            });
        }
    }

    fn press(&mut self, msgs: Vec<Msg>) {
        for m in msgs {
            let reqs = self.app.update(m);
            self.dispatch(reqs);
        }
    }

    fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            let m = if c == '\n' {
                Msg::code(KeyCode::Enter)
            } else {
                Msg::char(c)
            };
            self.press(vec![m]);
        }
    }

    fn screen(&self) -> String {
        use ratatui::Terminal;
        use ratatui::backend::TestBackend;
        let mut t = Terminal::new(TestBackend::new(160, 45)).expect("terminal");
        t.draw(|f| loom::tui::ui::draw(f, &self.app)).expect("draw");
        let buf = t.backend().buffer();
        (0..buf.area.height)
            .map(|y| {
                (0..buf.area.width)
                    .map(|x| buf[(x, y)].symbol().to_owned())
                    .collect::<String>()
                    .trim_end()
                    .to_owned()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Pumps replies and events until `done` holds; fails with the screen after 60 s.
    async fn until(&mut self, what: &str, done: impl Fn(&App) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        while !done(&self.app) {
            match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Ok(Some(m)) => {
                    let reqs = self.app.update(m);
                    self.dispatch(reqs);
                }
                _ => panic!("timed out waiting for {what}; screen:\n{}", self.screen()),
            }
        }
    }
}

fn status(app: &App) -> String {
    app.status.as_ref().map(|s| s.0.clone()).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_calls_a_tool_follows_it_to_its_dataset_queries_copies_and_exports() {
    let cfg = sample_config("", "");
    // This test embeds loom's library: the process guard is the real loom binary.
    loom::downstream::stdio::set_loom_executable(LOOM.into());
    let config = Arc::new(Config::load(&cfg.path).expect("config"));
    let session = Session::new(config);
    let local = LocalEngine::new(session.clone());
    local.start_servers().await;
    let engine: Arc<dyn Engine> = local;
    let opts = TuiOptions {
        theme: "dark".into(),
        theme_overrides: None,
        keymap: None,
        title: "loom tui".into(),
        history_file: Some(cfg.file("history.jsonl")),
    };
    let mut app = build_app(&opts, Clipboard::memory()).expect("app");
    app.size = (160, 45);
    let (tx, rx) = mpsc::unbounded_channel();
    let _presence = loom::tui::forward_events(engine.as_ref(), tx.clone());
    let mut d = Driver {
        app,
        engine,
        tx,
        rx,
    };
    let first = d.app.start();
    d.dispatch(first);
    d.until("the sample server to be up", |a| {
        a.servers
            .first()
            .is_some_and(|s| s.state == "up" && s.tools > 0)
    })
    .await;

    // The palette: pick list_orders, keep the prefilled arguments, call it.
    d.press(vec![Msg::char(':')]);
    d.until("the tool list", |a| !a.tools.is_empty()).await;
    d.type_text("list_orders");
    d.press(vec![Msg::code(KeyCode::Enter)]);
    assert!(
        matches!(&d.app.overlay, Overlay::Palette(p) if matches!(p.stage, PaletteStage::Edit { .. }))
    );
    d.press(vec![Msg::ctrl('s')]);
    d.until("the call to finish", |a| {
        status(a).contains("sample_list_orders done")
    })
    .await;
    assert!(status(&d.app).contains("dataset"), "{}", status(&d.app));
    d.until("the call in Traffic", |a| {
        a.calls
            .iter()
            .any(|c| c.caller == "human" && c.outcome == "intercepted")
    })
    .await;
    let call = d
        .app
        .calls
        .iter()
        .find(|c| c.caller == "human")
        .cloned()
        .expect("call");
    let dataset = call.reference.clone().expect("dataset ref");
    assert!(call.tokens_in > call.tokens_out * 5, "{call:?}");
    let screen = d.screen();
    assert!(screen.contains("sample_list_orders"), "{screen}");

    // Follow it into its dataset.
    assert_eq!(d.app.focus, Pane::Traffic);
    d.press(vec![Msg::char('o')]);
    d.until(
        "the dataset in Detail",
        |a| matches!(&a.detail, Detail::Dataset { dataset: x, .. } if *x == dataset),
    )
    .await;
    assert!(d.screen().contains("join hints") || d.screen().contains("columns"));

    // Query it: the grid fills from the engine a page at a time.
    d.press(vec![Msg::char('s')]);
    d.until("the query result", |a| {
        a.grid.as_ref().is_some_and(|g| g.cell(0, 0).is_some())
    })
    .await;
    let rows = d
        .app
        .datasets
        .iter()
        .find(|x| x.dataset == dataset)
        .map(|x| x.rows)
        .expect("listed");
    assert_eq!(d.app.grid.as_ref().unwrap().result.rows, rows);
    let first_cell = d
        .app
        .grid
        .as_ref()
        .unwrap()
        .cell(0, 0)
        .unwrap()
        .map(str::to_owned);

    // Copy a cell (memory clipboard) and export the result to CSV.
    assert_eq!(d.app.focus, Pane::Results);
    d.press(vec![Msg::char('y')]);
    assert_eq!(d.app.clipboard.register().map(str::to_owned), first_cell);
    d.press(vec![Msg::char('x')]);
    d.until("the export", |a| status(a).starts_with("exported"))
        .await;
    let st = status(&d.app);
    let path = st.rsplit(" to ").next().expect("path").to_owned();
    let text = std::fs::read_to_string(&path).expect("exported file");
    assert_eq!(
        text.lines().count() as u64,
        rows + 1,
        "header plus every row"
    );
    assert!(
        path.starts_with(&cfg.dir.path().join("exports").display().to_string()),
        "{path}"
    );

    // A second statement in the editor runs alone (the one under the cursor).
    d.press(vec![Msg::char('5'), Msg::code(KeyCode::End)]);
    d.type_text(&format!("\nSELECT count(*) AS n FROM {dataset}"));
    d.press(vec![Msg::ctrl('e')]);
    d.until("the count", |a| {
        a.grid
            .as_ref()
            .is_some_and(|g| g.result.rows == 1 && g.cell(0, 0).is_some())
    })
    .await;
    assert_eq!(
        d.app.grid.as_ref().unwrap().cell(0, 0).unwrap(),
        Some(rows.to_string().as_str())
    );

    // The whole (small) result goes to the clipboard as TSV with its header.
    d.press(vec![Msg::code(KeyCode::Esc), Msg::ctrl('y')]);
    assert_eq!(
        d.app.clipboard.register().map(str::to_owned),
        Some(format!("n\n{rows}"))
    );
    d.press(vec![Msg::char('5'), Msg::ctrl('e')]);
    d.until("the same count again", |a| a.running.is_none())
        .await;

    // Hostile SQL is refused with the engine's reason, and nothing is written.
    d.type_text(";\nCOPY (SELECT 1) TO '/tmp/loom-should-not-exist.csv'");
    d.press(vec![Msg::ctrl('e')]);
    d.until("the refusal", |a| a.query_error.is_some()).await;
    let msg = d.app.query_error.as_ref().unwrap().message.clone();
    assert!(
        msg.contains("not allowed") || msg.contains("disabled"),
        "{msg}"
    );
    assert!(!std::path::Path::new("/tmp/loom-should-not-exist.csv").exists());

    // A long query shows as running and ctrl-c cancels it.
    d.type_text(";\nSELECT sum(range) FROM range(100000000000)");
    d.press(vec![Msg::ctrl('e')]);
    assert!(d.app.running.is_some());
    tokio::time::sleep(Duration::from_millis(300)).await;
    d.press(vec![Msg::ctrl('c')]);
    d.until("the cancellation", |a| a.running.is_none()).await;
    let msg = d
        .app
        .query_error
        .as_ref()
        .map(|e| e.message.clone())
        .unwrap_or_default();
    assert!(msg.contains("cancelled"), "{msg}");

    // History was kept on disk.
    let hist = std::fs::read_to_string(cfg.file("history.jsonl")).expect("history file");
    assert!(hist.contains("count(*)"), "{hist}");
    session.shutdown().await;
}
