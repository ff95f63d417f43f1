//! What others write never reaches the terminal raw from the workbench: every pane is drawn
//! with hostile text (escape sequences in server names, stderr, tool names, arguments, column
//! names, cells, error messages) and no control character may land in a drawn cell. And a
//! panic off the UI thread leaves the terminal alone.

use super::app::{App, Msg, Pane};
use super::clipboard::Clipboard;
use super::keymap::Keymap;
use super::theme::Theme;
use super::ui;
use crate::frontend::engine::EngineError;
use crate::frontend::engine::{DatasetView, Reply, Request, ServerView, SessionInfo};
use crate::types::data::ResultTable;
use crate::types::events::{CallRecord, CallSummary};
use crate::types::events::{Event, Sequenced};
use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// OSC 52 clipboard write, OSC 2 title, screen clear, cursor home, C1 CSI, bidi override, DEL.
fn evil(tag: &str) -> String {
    format!(
        "{tag}\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}]2;owned\u{1b}\\\u{1b}[2J\u{1b}[H\u{9b}31m\r\n\u{202e}x\u{7f}"
    )
}

fn summary(n: u64) -> CallSummary {
    CallSummary {
        call: n,
        at: "2026-11-30T10:00:00Z".into(),
        caller: crate::types::events::Caller::Model,
        server: evil("srv"),
        tool: evil("tool"),
        outcome: crate::types::events::Outcome::Intercepted,
        reference: Some(evil("ref")),
        arguments: evil("{\"a\":\""),
        ..CallSummary::default()
    }
}

fn hostile(req: &Request) -> Result<Reply, String> {
    Ok(match req {
        Request::Session => Reply::Session(Box::new(SessionInfo {
            pid: 1,
            config: evil("/cfg"),
            started_at: evil("t"),
            servers: vec![evil("srv")],
            protocol: 1,
            clients: 0,
            export_dir: evil("/exports"),
        })),
        Request::Servers => Reply::Servers {
            servers: vec![ServerView {
                name: evil("srv"),
                state: crate::types::events::ServerState::Up,
                last_error: Some(evil("err")),
                stderr: vec![evil("stderr")],
                ..ServerView::default()
            }],
        },
        Request::Calls { .. } => Reply::Calls {
            calls: vec![summary(1), summary(2)],
        },
        Request::CallDetail { call } => Reply::CallDetail {
            record: Some(Box::new(CallRecord {
                summary: summary(*call),
                request: evil("request"),
                response: evil("response"),
            })),
        },
        Request::Datasets => Reply::Datasets {
            datasets: vec![DatasetView {
                dataset: evil("ds"),
                rows: 3,
                columns: vec![(evil("col"), "VARCHAR".into())],
                source: evil("src"),
                ..DatasetView::default()
            }],
        },
        Request::Query { .. } => Reply::Query {
            result: ResultTable {
                table: "_loom_result_1".into(),
                columns: vec![
                    (evil("name"), "VARCHAR".into()),
                    ("v".into(), "VARCHAR".into()),
                ],
                rows: 3,
                millis: 1,
            },
        },
        Request::Rows { .. } => Reply::Rows {
            rows: (0..3)
                .map(|i| vec![Some(evil(&format!("cell{i}"))), None])
                .collect(),
        },
        Request::Tools => Reply::Tools {
            tools: vec![
                serde_json::json!({ "name": evil("t"), "description": evil("d"), "inputSchema": { "type": "object" } }),
            ],
            owners: [(evil("t"), evil("server"))].into(),
            placement: [(
                evil("t"),
                crate::types::engine::ToolPlacement {
                    listed: true,
                    why: evil("why"),
                    tokens: 1,
                    tokens_full: 2,
                },
            )]
            .into(),
            mode: evil("mode"),
        },
        // Everything else fails with a hostile engine message, which lands in the status line.
        _ => return Err(evil("engine error")),
    })
}

fn feed(app: &mut App, msgs: Vec<Msg>) {
    for m in msgs {
        let mut queue = app.update(m);
        while let Some((t, req)) = queue.pop() {
            let more = app.update(Msg::Reply(t, hostile(&req).map_err(EngineError::from)));
            queue.extend(more);
        }
    }
}

/// Every drawn cell's symbol; a control character in any of them would reach the terminal.
fn assert_clean(app: &App, what: &str) -> String {
    let mut t = Terminal::new(TestBackend::new(app.size.0, app.size.1)).expect("terminal");
    t.draw(|f| ui::draw(f, app)).expect("draw");
    let buf = t.backend().buffer();
    let mut screen = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            let symbol = buf[(x, y)].symbol();
            assert!(
                !symbol.chars().any(char::is_control),
                "{what}: control character {symbol:?} drawn at {x},{y}"
            );
            screen.push_str(symbol);
        }
        screen.push('\n');
    }
    screen
}

#[test]
fn hostile_text_in_every_pane_is_drawn_without_control_characters() {
    let mut app = App::new(
        Keymap::default_map(),
        Theme::builtin("dark").expect("dark theme"),
        "dark",
        Clipboard::memory(),
    );
    app.size = (140, 45);
    let start = app.start();
    let mut queue = start;
    while let Some((t, req)) = queue.pop() {
        let more = app.update(Msg::Reply(t, hostile(&req).map_err(EngineError::from)));
        queue.extend(more);
    }
    feed(
        &mut app,
        vec![
            Msg::event(Sequenced {
                seq: 10,
                event: Event::ServerStderr {
                    server: evil("srv"),
                    line: evil("live stderr"),
                    at: String::new(),
                },
            }),
            Msg::event(Sequenced {
                seq: 11,
                event: Event::CallStarted(summary(3)),
            }),
        ],
    );
    let screen = assert_clean(&app, "traffic, servers, catalog");
    // The text around the sequences is still shown: only the control characters are gone.
    assert!(screen.contains("srv"), "{screen}");
    // A query whose columns and cells carry escape sequences, then a failing request.
    app.editor.area = tui_textarea::TextArea::new(vec!["SELECT 1".into()]);
    app.focus = Pane::Editor;
    feed(&mut app, vec![Msg::ctrl('e')]);
    assert!(
        app.results.grid.is_some(),
        "the hostile result is in the grid"
    );
    assert_clean(&app, "results grid");
    feed(&mut app, vec![Msg::code(KeyCode::Esc), Msg::char('e')]);
    assert_clean(&app, "export error in the status line");
    feed(&mut app, vec![Msg::WorkerPanicked(evil("panic"))]);
    let screen = assert_clean(&app, "a worker panic in the status line");
    assert!(screen.contains("internal error in loom"), "{screen}");
    for pane in ['1', '2', '3', '4', '5', '6'] {
        feed(&mut app, vec![Msg::code(KeyCode::Esc), Msg::char(pane)]);
        assert_clean(&app, &format!("pane {pane}"));
        feed(&mut app, vec![Msg::code(KeyCode::Enter)]);
        assert_clean(&app, &format!("pane {pane} opened"));
    }
}

static RESTORED: AtomicUsize = AtomicUsize::new(0);

fn count_restore() {
    RESTORED.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn only_a_panic_on_the_ui_thread_touches_the_terminal() {
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let tx = std::sync::Mutex::new(tx);
    let previous: Arc<super::PanicHook> = Arc::new(std::panic::take_hook());
    std::panic::set_hook(super::panic_hook(
        std::thread::current().id(),
        count_restore,
        move |what| {
            if let Ok(tx) = tx.lock() {
                let _ = tx.send(what);
            }
        },
        previous.clone(),
    ));
    let worker = std::thread::spawn(|| panic!("worker boom"));
    let worker_failed = worker.join().is_err();
    let restored_by_worker = RESTORED.load(Ordering::SeqCst);
    let on_ui = std::panic::catch_unwind(|| panic!("ui boom")).is_err();
    let restored_by_ui = RESTORED.load(Ordering::SeqCst);
    let hook_before: Arc<super::PanicHook> = previous.clone();
    std::panic::set_hook(Box::new(move |info| hook_before(info)));

    assert!(worker_failed && on_ui);
    assert_eq!(
        restored_by_worker, 0,
        "a worker's panic restored the terminal"
    );
    assert_eq!(
        restored_by_ui, 1,
        "the UI thread's panic gives the terminal back"
    );
    let reports: Vec<String> = rx.try_iter().collect();
    assert!(
        reports.iter().any(|r| r == "worker boom"),
        "the worker's panic is reported for the status line: {reports:?}"
    );
    assert!(!reports.iter().any(|r| r == "ui boom"));
}
