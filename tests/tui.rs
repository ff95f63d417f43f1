//! The workbench driven as a person would, on a real session: the built-in sample server as
//! the downstream, the real store, the in-process Engine API. Keys go into the reducer, the
//! requests it makes run against the engine, and the replies and live events come back.

mod common;

use common::{LOOM, TempConfig, sample_config};
use crossterm::event::KeyCode;
use loom::config::Config;
use loom::frontend::engine::{Engine, Reply, Request};
use loom::frontend::local::LocalEngine;
use loom::session::Session;
use loom::tui::app::{App, Detail, Msg, Overlay, PaletteStage, Pane};
use loom::tui::{TuiOptions, build_app, clipboard::Clipboard};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

struct Driver {
    app: App,
    engine: Arc<dyn Engine>,
    tx: mpsc::UnboundedSender<Msg>,
    rx: mpsc::UnboundedReceiver<Msg>,
    _presence: Option<loom::session::approvals::Presence>,
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

/// A workbench on a real in-process session of `cfg`, with the sample server up.
async fn workbench(cfg: &TempConfig) -> (Driver, Arc<Session>) {
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
        attached: false,
    };
    let mut app = build_app(&opts, Clipboard::memory()).expect("app");
    app.size = (160, 45);
    let (tx, rx) = mpsc::unbounded_channel();
    let presence = loom::tui::forward_events(engine.as_ref(), tx.clone());
    let mut d = Driver {
        app,
        engine,
        tx,
        rx,
        _presence: presence,
    };
    let first = d.app.start();
    d.dispatch(first);
    d.until("the sample server to be up", |a| {
        a.servers
            .list
            .first()
            .is_some_and(|s| s.state == "up" && s.tools > 0)
    })
    .await;
    (d, session)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_calls_a_tool_follows_it_to_its_dataset_queries_copies_and_exports() {
    let cfg = sample_config("", "");
    let (mut d, session) = workbench(&cfg).await;

    // The palette: pick list_orders, keep the prefilled arguments, call it.
    d.press(vec![Msg::char(':')]);
    d.until("list_orders in the tool list", |a| {
        a.tools.iter().any(|t| t["name"] == "sample_list_orders")
    })
    .await;
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
        a.traffic
            .calls
            .iter()
            .any(|c| c.caller == "human" && c.outcome == "intercepted")
    })
    .await;
    let call = d
        .app
        .traffic
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
        |a| matches!(&a.detail.shown, Detail::Dataset { dataset: x, .. } if *x == dataset),
    )
    .await;
    assert!(d.screen().contains("join hints") || d.screen().contains("columns"));

    // Query it: the grid fills from the engine a page at a time.
    d.press(vec![Msg::char('s')]);
    d.until("the query result", |a| {
        a.results
            .grid
            .as_ref()
            .is_some_and(|g| g.cell(0, 0).is_some())
    })
    .await;
    let rows = d
        .app
        .catalog
        .datasets
        .iter()
        .find(|x| x.dataset == dataset)
        .map(|x| x.rows)
        .expect("listed");
    assert_eq!(d.app.results.grid.as_ref().unwrap().result.rows, rows);
    let first_cell = d
        .app
        .results
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
    // `x` opens the export dialog, prefilled; enter writes.
    d.press(vec![Msg::char('x'), Msg::code(KeyCode::Enter)]);
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
        a.results
            .grid
            .as_ref()
            .is_some_and(|g| g.result.rows == 1 && g.cell(0, 0).is_some())
    })
    .await;
    assert_eq!(
        d.app.results.grid.as_ref().unwrap().cell(0, 0).unwrap(),
        Some(rows.to_string().as_str())
    );

    // The whole (small) result goes to the clipboard as TSV with its header.
    d.press(vec![Msg::code(KeyCode::Esc), Msg::ctrl('y')]);
    assert_eq!(
        d.app.clipboard.register().map(str::to_owned),
        Some(format!("n\n{rows}"))
    );
    d.press(vec![Msg::char('5'), Msg::ctrl('e')]);
    d.until("the same count again", |a| a.results.running.is_none())
        .await;

    // Hostile SQL is refused with the engine's reason, and nothing is written.
    d.type_text(";\nCOPY (SELECT 1) TO '/tmp/loom-should-not-exist.csv'");
    d.press(vec![Msg::ctrl('e')]);
    d.until("the refusal", |a| a.results.query_error.is_some())
        .await;
    let msg = d.app.results.query_error.as_ref().unwrap().message.clone();
    assert!(
        msg.contains("not allowed") || msg.contains("disabled"),
        "{msg}"
    );
    assert!(!std::path::Path::new("/tmp/loom-should-not-exist.csv").exists());

    // A long query (minutes of work) shows as running and ctrl-c cancels it. A ctrl-c that
    // comes before the engine has started the query is refused ("no workbench query is
    // running"): press again until one is taken, then the query must end as cancelled.
    d.type_text(";\nSELECT sum(range) FROM range(100000000000)");
    d.press(vec![Msg::ctrl('e')]);
    assert!(d.app.results.running.is_some());
    let refused = "no workbench query is running";
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the engine never started the query: every ctrl-c was refused"
        );
        d.press(vec![Msg::ctrl('c')]);
        d.until("the answer to ctrl-c", |a| {
            a.results.running.is_none() || status(a).contains(refused)
        })
        .await;
        if d.app.results.running.is_none() {
            break;
        }
        d.app.status = None;
    }
    let msg = d
        .app
        .results
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

/// Calls a tool as the person at the workbench, straight through the engine (not the
/// palette), so the workbench learns of what the call made only from the session's events.
async fn call_as_human(d: &Driver, tool: &str, arguments: serde_json::Value) -> serde_json::Value {
    match d
        .engine
        .request(Request::CallTool {
            name: tool.into(),
            arguments,
        })
        .await
    {
        Ok(Reply::ToolResult { result }) => {
            assert!(result["isError"] != true, "{tool}: {result}");
            result
        }
        other => panic!("{tool}: {other:?}"),
    }
}

fn listed(app: &App) -> Vec<String> {
    let mut names: Vec<String> = app
        .catalog
        .datasets
        .iter()
        .map(|d| d.dataset.clone())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catalog_follows_every_dataset_made_dropped_or_evicted() {
    // A small budget, so that query results push older ones out.
    let cfg = sample_config("memory_budget = \"24MiB\"", "");
    let (mut d, session) = workbench(&cfg).await;
    let store = session.store.get().await.expect("store");
    call_as_human(
        &d,
        "loom_materialize",
        json!({ "sql": "SELECT range AS n FROM range(1000)", "name": "keep_me" }),
    )
    .await;
    d.until("the materialized dataset in the catalog", |a| {
        a.catalog.datasets.iter().any(|x| x.dataset == "keep_me")
    })
    .await;
    let mut made = Vec::new();
    for _ in 0..8 {
        let r = call_as_human(
            &d,
            "loom_query",
            json!({ "sql": "SELECT range AS n, md5(range::VARCHAR) AS h FROM range(200000)" }),
        )
        .await;
        made.push(
            r["structuredContent"]["ref"]
                .as_str()
                .expect("a dataset")
                .to_owned(),
        );
    }
    let mut in_store: Vec<String> = store
        .datasets()
        .into_iter()
        .map(|x| x.dataset_ref)
        .collect();
    in_store.sort();
    assert!(
        !in_store.contains(&made[0]),
        "nothing was evicted, the test proves nothing: {in_store:?}"
    );
    d.until("the catalog to show what the store holds", |a| {
        listed(a) == in_store
    })
    .await;
    // A drop leaves the catalog, and the Detail pane that showed it.
    d.press(vec![Msg::char('4')]);
    d.app.catalog.select_dataset("keep_me");
    d.press(vec![Msg::code(KeyCode::Enter)]);
    d.until(
        "keep_me in Detail",
        |a| matches!(&a.detail.shown, Detail::Dataset { dataset, .. } if dataset == "keep_me"),
    )
    .await;
    call_as_human(&d, "loom_drop", json!({ "ref": "keep_me" })).await;
    d.until("keep_me to leave the catalog and Detail", |a| {
        !listed(a).contains(&"keep_me".to_owned()) && matches!(a.detail.shown, Detail::Empty)
    })
    .await;
    assert_eq!(status(&d.app), "keep_me was dropped");
    // Parked text joins the catalog's parked section.
    let r = call_as_human(
        &d,
        "loom_park",
        json!({ "content": "a line of notes\n".repeat(500), "summary": "notes" }),
    )
    .await;
    let key = r["structuredContent"]["blob_key"]
        .as_str()
        .expect("parked")
        .to_owned();
    d.until("the parked text in the catalog", |a| {
        a.catalog.blobs.iter().any(|b| b.key == key)
    })
    .await;
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_describe_view_shows_a_datasets_join_hints_and_top_values() {
    let cfg = sample_config("", "");
    let (mut d, session) = workbench(&cfg).await;
    let mut refs = Vec::new();
    for tool in ["sample_list_customers", "sample_list_orders"] {
        let r = call_as_human(&d, tool, json!({})).await;
        refs.push(
            r["structuredContent"]["ref"]
                .as_str()
                .expect("intercepted")
                .to_owned(),
        );
    }
    let (customers, orders) = (refs[0].clone(), refs[1].clone());
    d.until("both datasets in the catalog", |a| {
        let names = listed(a);
        names.contains(&customers) && names.contains(&orders)
    })
    .await;
    d.press(vec![Msg::char('4')]);
    d.app.catalog.select_dataset(&orders);
    d.press(vec![Msg::char('d')]);
    d.until(
        "the description",
        |a| matches!(&a.overlay, Overlay::Describe(x) if x.describe.is_some()),
    )
    .await;
    let Overlay::Describe(x) = &d.app.overlay else {
        panic!("the describe view closed")
    };
    let desc = x.describe.as_ref().expect("loaded");
    let status_at = desc
        .columns
        .iter()
        .position(|c| c.name == "status")
        .expect("a status column");
    let (value, count) = desc.columns[status_at]
        .top
        .first()
        .cloned()
        .expect("top values");
    for _ in 0..status_at {
        d.press(vec![Msg::char('j')]);
    }
    let screen = d.screen();
    assert!(screen.contains("join hints"), "{screen}");
    assert!(
        screen.contains(&format!("customer_id = {customers}.customer_id")),
        "{screen}"
    );
    assert!(
        screen.contains(&format!(
            "top {} ({count})",
            value.as_str().expect("a text status")
        )),
        "{screen}"
    );
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_written_from_the_palette_is_the_persons_and_the_status_says_memory() {
    let cfg = sample_config("", "");
    let (mut d, _session) = workbench(&cfg).await;
    d.press(vec![Msg::char(':')]);
    d.until("the tool list", |a| !a.tools.is_empty()).await;
    d.type_text("loom_memory_set");
    d.press(vec![Msg::code(KeyCode::Enter)]);
    if let Overlay::Palette(p) = &mut d.app.overlay
        && let PaletteStage::Edit { args, .. } = &mut p.stage
    {
        **args = tui_textarea::TextArea::new(vec![
            r#"{"key": "db", "content": "never touch prod"}"#.into(),
        ]);
    } else {
        panic!("the argument editor is open");
    }
    d.press(vec![Msg::ctrl('s')]);
    d.until("the call's status", |a| {
        a.status
            .as_ref()
            .is_some_and(|s| s.0.contains("loom_memory_set done"))
    })
    .await;
    let status = d.app.status.as_ref().unwrap().0.clone();
    assert!(status.contains("memory db version 1"), "{status}");
    assert!(!status.contains("parked"), "{status}");
    d.until("the memory in the catalog", |a| {
        a.catalog.memories.iter().any(|m| m.key == "db")
    })
    .await;
    let m = d
        .app
        .catalog
        .memories
        .iter()
        .find(|m| m.key == "db")
        .unwrap();
    assert_eq!(m.author, "human", "{m:?}");
}

/// The first `n` values of column `col` as the grid holds them.
fn column_values(app: &App, col: usize, n: u64) -> Vec<Option<String>> {
    let g = app.results.grid.as_ref().expect("a result");
    (0..n.min(g.result.rows))
        .map(|r| g.cell(r, col).expect("loaded").map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_grid_sorts_filters_and_opens_a_cell_on_the_real_engine() {
    let cfg = sample_config("", "");
    let (mut d, session) = workbench(&cfg).await;
    let r = call_as_human(&d, "sample_list_orders", json!({})).await;
    let orders = r["structuredContent"]["ref"]
        .as_str()
        .expect("a dataset")
        .to_owned();
    d.press(vec![Msg::char('5')]);
    d.app.editor.area = tui_textarea::TextArea::new(vec![format!("SELECT * FROM {orders}")]);
    d.press(vec![Msg::ctrl('e')]);
    d.until("the result", |a| {
        a.results
            .grid
            .as_ref()
            .is_some_and(|g| g.cell(0, 0).is_some())
    })
    .await;
    let all = d.app.results.grid.as_ref().unwrap().result.rows;
    let history = d.app.editor.history.len();
    d.press(vec![Msg::code(KeyCode::Esc)]);
    assert_eq!(d.app.focus, Pane::Results);
    let status_col = d
        .app
        .results
        .grid
        .as_ref()
        .unwrap()
        .result
        .columns
        .iter()
        .position(|(n, _)| n == "status")
        .expect("a status column");
    for _ in 0..status_col {
        d.press(vec![Msg::char('l')]);
    }

    // Sort by status, descending on the second press: the same rows, in DuckDB's order.
    d.press(vec![Msg::char('s')]);
    d.until("the sorted view", |a| {
        a.results
            .grid
            .as_ref()
            .is_some_and(|g| g.view.is_some() && g.cell(0, 0).is_some())
    })
    .await;
    let store = session.store.get().await.expect("store");
    let expected = store
        .run_result(
            &format!("SELECT status FROM {orders} ORDER BY status ASC NULLS LAST"),
            1000,
        )
        .expect("reference query");
    let want: Vec<Option<String>> = store
        .page(&expected.table, 0, 50)
        .expect("page")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(column_values(&d.app, status_col, 50), want);
    assert_eq!(d.app.results.grid.as_ref().unwrap().result.rows, all);
    assert!(d.screen().contains("by status ↑"), "{}", d.screen());
    d.press(vec![Msg::char('s')]);
    d.until("descending", |a| {
        a.results.grid.as_ref().is_some_and(|g| {
            g.view
                .as_ref()
                .is_some_and(|v| v.sort.as_ref().is_some_and(|s| s.1))
                && g.cell(0, 0).is_some()
        })
    })
    .await;

    // Find the rows that contain "SHIPPED" (any case), the rows staying as they are; n and N
    // move between them. The count is checked against the rows themselves.
    let shipped_rows = store
        .page(&orders, 0, 10_000)
        .expect("every row")
        .iter()
        .filter(|row| {
            row.iter()
                .flatten()
                .any(|c| c.to_lowercase().contains("shipped"))
        })
        .count();
    d.press(vec![Msg::char('g'), Msg::char('/')]);
    d.type_text("SHIPPED");
    d.press(vec![Msg::code(KeyCode::Enter)]);
    d.until("the search's hits", |a| {
        a.results.search.as_ref().is_some_and(|s| s.hits.is_some())
    })
    .await;
    let hits = d.app.results.search.as_ref().unwrap().hits.clone().unwrap();
    assert_eq!(hits.len(), shipped_rows);
    assert_eq!(
        d.app.results.grid.as_ref().unwrap().result.rows,
        all,
        "no row hidden"
    );
    let on_hit = |a: &App| {
        let g = a.results.grid.as_ref().unwrap();
        g.row_cells(g.row).is_some_and(|cells| {
            cells
                .iter()
                .flatten()
                .any(|c| c.to_lowercase().contains("shipped"))
        })
    };
    let first = d.app.results.grid.as_ref().unwrap().row;
    assert_eq!(first, hits[0]);
    d.until("the first hit's row", on_hit).await;
    d.press(vec![Msg::char('n')]);
    assert_eq!(d.app.results.grid.as_ref().unwrap().row, hits[1]);
    d.until("the second hit's row", on_hit).await;
    d.press(vec![Msg::char('N'), Msg::char('N')]);
    assert_eq!(
        d.app.results.grid.as_ref().unwrap().row,
        *hits.last().unwrap(),
        "N wraps to the last"
    );

    // Keep the rows that contain "shipped" anywhere, any case.
    d.press(vec![Msg::char('&')]);
    d.type_text("SHIPPED");
    d.press(vec![Msg::code(KeyCode::Enter)]);
    d.until("the filtered view", |a| {
        a.results.grid.as_ref().is_some_and(|g| {
            g.view.as_ref().is_some_and(|v| v.filter.is_some()) && g.cell(0, 0).is_some()
        })
    })
    .await;
    // Counted here, row by row, independently of the SQL the grid ran.
    let shipped = store
        .page(&orders, 0, 10_000)
        .expect("every row")
        .iter()
        .filter(|row| {
            row.iter()
                .flatten()
                .any(|c| c.to_lowercase().contains("shipped"))
        })
        .count() as u64;
    let g = d.app.results.grid.as_ref().unwrap();
    assert!(shipped > 0 && shipped < all, "{shipped} of {all}");
    assert_eq!(g.result.rows, shipped);
    for v in column_values(&d.app, status_col, 200) {
        assert_eq!(v.as_deref(), Some("shipped"));
    }
    // Sorting and filtering never touch the editor's history.
    assert_eq!(d.app.editor.history.len(), history);

    // The cell view shows a value whole; `>` widens the column and fitting leaves it so.
    let before = d.app.results.grid.as_ref().unwrap().widths[status_col];
    d.press(vec![Msg::char('>')]);
    assert_eq!(
        d.app.results.grid.as_ref().unwrap().widths[status_col],
        before + 4
    );
    d.press(vec![Msg::code(KeyCode::Enter)]);
    assert!(matches!(&d.app.overlay, Overlay::Pager(p) if p.title.starts_with("status")));
    assert!(d.screen().contains("shipped"), "{}", d.screen());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_edits_pins_and_deletes_a_memory_from_the_catalog_tree() {
    let cfg = sample_config("", "");
    let (mut d, session) = workbench(&cfg).await;
    let memories = session.memories.clone();
    let model_writes = |content: &str| {
        memories
            .set("db", content, vec![], false, None, "model")
            .expect("the model's write")
    };
    model_writes("never touch prod");
    d.until("the model's memory in the catalog", |a| {
        a.catalog.memories.iter().any(|m| m.key == "db")
    })
    .await;
    // The memory is the tree's last row.
    d.press(vec![Msg::char('4'), Msg::char('G'), Msg::char('e')]);
    assert!(matches!(d.app.overlay, Overlay::Memory(_)));
    d.press(vec![Msg::code(KeyCode::End)]);
    d.type_text(" or staging");
    d.press(vec![Msg::ctrl('s')]);
    d.until("the save", |a| {
        status(a).contains("memory db saved: version 2")
    })
    .await;
    d.until("the new version in the catalog", |a| {
        a.catalog.memories.iter().any(|m| {
            m.version == 2 && m.author == "human" && m.content == "never touch prod or staging"
        })
    })
    .await;
    // The model writes while the person edits: the save is refused and the text stays.
    d.press(vec![Msg::char('e')]);
    model_writes("the model's own words");
    // The cursor opens at the end of the text.
    d.type_text(" (mine)");
    d.press(vec![Msg::ctrl('s')]);
    // Said at once, and again in the person's words once the newer version is read.
    d.until("the refusal", |a| {
        status(a).to_lowercase().contains("not saved")
    })
    .await;
    let Overlay::Memory(m) = &d.app.overlay else {
        panic!("the editor stays open after a refusal")
    };
    assert_eq!(m.text(), "never touch prod or staging (mine)");
    assert!(
        m.error.as_deref().is_some_and(|e| e.contains("version 3")),
        "{:?}",
        m.error
    );
    d.press(vec![Msg::code(KeyCode::Esc)]);
    d.until("the model's version in the catalog", |a| {
        a.catalog.memories.iter().any(|m| m.version == 3)
    })
    .await;
    d.press(vec![Msg::char('p')]);
    d.until("the pin", |a| {
        a.catalog
            .memories
            .iter()
            .any(|m| m.pinned && m.version == 4)
    })
    .await;
    d.press(vec![Msg::char('D'), Msg::char('y')]);
    d.until("the deletion", |a| a.catalog.memories.is_empty())
        .await;
    let history = memories.history("db").expect("the history stays");
    let last = history.last().expect("versions");
    assert!(last.deleted && last.author == "human", "{last:?}");
    assert_eq!(history.len(), 5);
    session.shutdown().await;
}
