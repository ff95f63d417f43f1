//! Reducer tests and screen snapshots. The app is fed fixture replies and events exactly as
//! the runtime would feed the Engine API's answers, then drawn into a `TestBackend`.

use super::app::{App, Msg, Node, Overlay, Pane};
use super::clipboard::Clipboard;
use super::keymap::Keymap;
use super::theme::Theme;
use super::ui;
use crate::frontend::engine::EngineError;
use crate::frontend::engine::{DatasetView, Reply, Request, ServerView, SessionInfo};
use crate::types::data::ResultTable;
use crate::types::data::{ColumnStats, DatasetKind, Description, DropReason, JoinHint, Provenance};
use crate::types::events::{CallRecord, CallSummary, LogKind, LogLine};
use crate::types::events::{Event, Sequenced};
use crossterm::event::{KeyCode, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};

pub(super) fn app() -> App {
    let mut a = App::new(
        Keymap::default_map(),
        Theme::builtin("dark").expect("dark theme"),
        "dark",
        Clipboard::memory(),
    );
    a.size = (120, 40);
    a.now_minute = 0;
    a
}

/// Answers every request with fixture data, as an engine would.
pub(super) fn answer(app: &mut App, reqs: Vec<(u64, Request)>) {
    let mut queue = reqs;
    while let Some((t, req)) = queue.pop() {
        let reply = fixture(&req);
        let more = app.update(Msg::Reply(t, reply.map_err(EngineError::from)));
        queue.extend(more);
    }
}

pub(super) fn call(
    n: u64,
    tool: &str,
    outcome: &str,
    reference: Option<&str>,
    caller: &str,
) -> CallSummary {
    CallSummary {
        call: n,
        at: format!("2026-11-30T10:{:02}:{:02}Z", n / 60, n % 60),
        caller: caller.parse().expect("caller"),
        server: "sample".into(),
        tool: tool.into(),
        outcome: outcome.parse().expect("outcome"),
        reference: reference.map(str::to_owned),
        millis: 12 * n,
        bytes_in: 48_000 * n,
        tokens_in: 12_000 * n,
        bytes_out: 1_500,
        tokens_out: 400,
        arguments: "{\"limit\":1000}".into(),
        decision: None,
        ..Default::default()
    }
}

pub(super) fn orders_describe() -> Box<Description> {
    let column =
        |name: &str, ty: &str, nulls: f64, distinct: u64, range: Option<(Value, Value)>| {
            ColumnStats {
                name: name.into(),
                ty: ty.into(),
                null_fraction: nulls,
                distinct,
                distinct_exact: false,
                min: range.as_ref().map(|r| r.0.clone()),
                max: range.map(|r| r.1),
                top: vec![],
                note: None,
            }
        };
    let mut status = column("status", "VARCHAR", 0.0, 4, None);
    status.top = vec![
        (json!("shipped"), 600),
        (json!("open"), 300),
        (json!("paid"), 90),
    ];
    let mut context = serde_json::Map::new();
    context.insert("total".into(), json!(1000));
    Box::new(Description {
        dataset: "sample_list_orders_1".into(),
        kind: DatasetKind::Ingest,
        rows: 1000,
        pinned: false,
        created: "2026-11-30T10:00:01Z".into(),
        columns: vec![
            column(
                "order_id",
                "BIGINT",
                0.0,
                1000,
                Some((json!(1), json!(1000))),
            ),
            column(
                "customer_id",
                "BIGINT",
                0.0,
                120,
                Some((json!(1), json!(120))),
            ),
            status,
            column(
                "total",
                "DOUBLE",
                0.02,
                990,
                Some((json!(3.5), json!(980.25))),
            ),
        ],
        sample_rows: vec![
            json!({ "order_id": 1, "customer_id": 7, "status": "shipped", "total": 12.5 }),
        ],
        join_hints: vec![JoinHint {
            column: "customer_id".into(),
            other: "sample_list_customers_2".into(),
            other_column: "customer_id".into(),
            this_in_other: 1.0,
            other_in_this: 0.95,
        }],
        provenance: Some(Provenance {
            server: "sample".into(),
            tool: "list_orders".into(),
            arguments: Some(json!({ "limit": 1000 })),
            at: "2026-11-30T10:00:01Z".into(),
            rung: "structuredContent".into(),
        }),
        context,
    })
}

pub(super) fn fixture(req: &Request) -> Result<Reply, String> {
    Ok(match req {
        Request::Session => Reply::Session(Box::new(SessionInfo {
            pid: 4242,
            config: "/demo/loom.toml".into(),
            started_at: "2026-11-30T10:00:00Z".into(),
            servers: vec!["sample".into(), "fs".into()],
            protocol: 1,
            clients: 0,
            export_dir: "/demo/exports".into(),
        })),
        Request::Servers => Reply::Servers {
            servers: vec![
                ServerView {
                    name: "sample".into(),
                    state: crate::types::events::ServerState::Up,
                    era: Some("legacy".into()),
                    version: Some("2025-11-25".into()),
                    tools: 6,
                    last_error: None,
                    stderr: vec!["sample server ready".into()],
                    up_since: Some("2026-11-30T09:58:00Z".into()),
                    failures: 0,
                    restarts: 0,
                    last_error_at: None,
                    max_calls_per_second: 100,
                    throttled: 0,
                },
                ServerView {
                    name: "fs".into(),
                    state: crate::types::events::ServerState::Restarting { attempt: 1, max: 5 },
                    era: None,
                    version: None,
                    tools: 0,
                    last_error: Some("exited with status 1".into()),
                    stderr: vec![],
                    up_since: None,
                    failures: 1,
                    restarts: 1,
                    last_error_at: Some("2026-11-30T10:00:02Z".into()),
                    max_calls_per_second: 100,
                    throttled: 0,
                },
            ],
        },
        Request::Calls { .. } => Reply::Calls {
            calls: vec![
                call(1, "sample_get_weather", "passed", None, "model"),
                call(2, "sample_list_orders", "intercepted", Some("sample_list_orders_1"), "model"),
                call(3, "sample_tail_logs", "parked", Some("a1b2c3d4e5f6"), "model"),
                call(4, "loom_query", "passed", None, "human"),
            ],
        },
        // Call 9 waited for a person and passed whole: what Detail says of both.
        Request::CallDetail { call: 9 } => Reply::CallDetail {
            record: Some(Box::new(CallRecord {
                summary: CallSummary {
                    millis: 2_300,
                    waited_millis: Some(2_000),
                    passed_because: Some("non-text content".into()),
                    decision: Some("approved once by a human (at loom attach, pid 77 on /dev/pts/4)".into()),
                    client: Some("claude-code 2.1 · HTTP from 127.0.0.1:53122".into()),
                    ..call(9, "sample_get_image", "passed", None, "model")
                },
                request: "{}".into(),
                response: "{}".into(),
            })),
        },
        // The call the approval tests ask about: not started, waiting for a person.
        Request::CallDetail { call: 41 } => Reply::CallDetail {
            record: Some(Box::new(CallRecord {
                summary: CallSummary {
                    at: "2026-11-30T10:10:00Z".into(),
                    ..call(41, "sample_cancel_order", "running", None, "model")
                },
                request: r#"{"name":"sample_cancel_order","arguments":{"order_id":7}}"#.into(),
                response: String::new(),
            })),
        },
        // A call made with loom_call's bind: the log says where, from what and how large.
        Request::CallDetail { call: 42 } => Reply::CallDetail {
            record: Some(Box::new(CallRecord {
                summary: CallSummary {
                    via: Some("loom_call".into()),
                    bindings: vec![crate::types::events::Binding {
                        at: "/body".into(),
                        source: "blob/3f2a9c lines matching \"ERROR\"".into(),
                        inputs: vec!["blob/3f2a9c".into()],
                        bytes: 48_213,
                    }],
                    ..call(42, "sample_write_note", "passed", None, "model")
                },
                request: r#"{"name":"loom_call","arguments":{"tool":"sample_write_note"}}"#.into(),
                response: r#"{"content":[{"type":"text","text":"saved note"}]}"#.into(),
            })),
        },
        Request::CallDetail { call: n } => Reply::CallDetail {
            record: Some(Box::new(CallRecord {
                summary: call(*n, "sample_list_orders", "intercepted", Some("sample_list_orders_1"), "model"),
                request: r#"{"name":"sample_list_orders","arguments":{"limit":1000}}"#.into(),
                response: r#"{"content":[{"type":"text","text":"dataset sample_list_orders_1: 1000 rows"}],"structuredContent":{"kind":"dataset","ref":"sample_list_orders_1","rows":1000}}"#.into(),
            })),
        },
        Request::Datasets => Reply::Datasets {
            datasets: vec![
                DatasetView {
                    dataset: "sample_list_orders_1".into(),
                    rows: 1000,
                    columns: vec![("order_id".into(), "BIGINT".into()), ("customer_id".into(), "BIGINT".into()), ("status".into(), "VARCHAR".into())],
                    source: "sample/list_orders".into(),
                    pinned: false,
                    created: "2026-11-30T10:00:01Z".into(),
                    lineage: None,
                },
                DatasetView {
                    dataset: "sample_list_customers_2".into(),
                    rows: 120,
                    columns: vec![("customer_id".into(), "BIGINT".into()), ("name".into(), "VARCHAR".into())],
                    source: "sample/list_customers".into(),
                    pinned: true,
                    created: "2026-11-30T10:00:02Z".into(),
                    lineage: None,
                },
            ],
        },
        Request::Blobs => Reply::Blobs { blobs: vec![] },
        Request::Memories => Reply::Memories {
            memories: vec![],
            skipped_lines: 0,
        },
        Request::Describe { .. } => Reply::Describe { describe: orders_describe() },
        Request::Chart { column, .. } if column == "total" => return Err("Binder Error: no histogram for this column".into()),
        Request::Chart { column, .. } => Reply::Chart {
            bars: (0..4)
                .map(|i| crate::types::data::Bar { label: format!("{column}{i}"), count: (i + 1) * 10 })
                .collect(),
        },
        Request::Query { sql } if sql.contains("nosuch") => {
            // As DuckDB draws it: the caret under the name, in display columns.
            let before = &sql[..sql.find("nosuch").unwrap_or(0)];
            let width = unicode_width::UnicodeWidthStr::width(before);
            return Err(format!("the query was not accepted: Binder Error: Referenced column \"nosuch\" not found\n\nLINE 1: {sql}\n{}^", " ".repeat(8 + width)));
        }
        Request::Query { sql } if sql.contains("nope") => {
            return Err("the query was not accepted: Binder Error: Referenced column \"nope\" not found\n\nLINE 1: SELECT nope FROM t\n               ^".into());
        }
        Request::Query { sql } if sql.contains("small") => Reply::Query {
            result: ResultTable { table: "_loom_result_3".into(), columns: vec![("n".into(), "BIGINT".into())], rows: 450, millis: 2 },
        },
        Request::Query { .. } => Reply::Query {
            result: ResultTable {
                table: "_loom_result_9".into(),
                columns: vec![("order_id".into(), "BIGINT".into()), ("status".into(), "VARCHAR".into()), ("note".into(), "VARCHAR".into())],
                rows: 1_000_000,
                millis: 42,
            },
        },
        Request::Rows { offset, limit, .. } => Reply::Rows {
            rows: (*offset..offset + limit)
                .map(|r| vec![Some(r.to_string()), Some(if r % 2 == 0 { "shipped" } else { "open" }.into()), if r % 3 == 0 { None } else { Some(format!("note {r}")) }])
                .collect(),
        },
        Request::Export { .. } => Reply::Exported { path: "/demo/exports/_loom_result_9.csv".into(), rows: 1_000_000 },
        Request::Tools => Reply::Tools {
            tools: vec![
                json!({ "name": "sample_list_orders", "description": "List orders", "inputSchema": { "type": "object", "properties": { "limit": { "type": "integer" } }, "required": ["limit"] } }),
                json!({ "name": "loom_query", "description": "Run SQL", "inputSchema": { "type": "object", "properties": { "sql": { "type": "string" } }, "required": ["sql"] } }),
            ],
            owners: [("sample_list_orders".to_owned(), "sample".to_owned())].into(),
            placement: [
                ("sample_list_orders".to_owned(), crate::types::engine::ToolPlacement { listed: false, why: "not listed".into(), tokens: 0, tokens_full: 61 }),
                ("loom_query".to_owned(), crate::types::engine::ToolPlacement { listed: true, why: "core".into(), tokens: 37, tokens_full: 37 }),
            ]
            .into(),
            mode: "search".into(),
        },
        Request::PinTool { name } => Reply::ToolPinned { name: name.clone(), pinned: true },
        Request::CallTool { name, .. } => Reply::ToolResult { result: json!({ "content": [], "structuredContent": { "ref": format!("{name}_1") } }) },
        Request::CancelQuery | Request::Approve { .. } | Request::CancelCall { .. } => Reply::Done,
        Request::BlobText { .. } => Reply::BlobText { text: (1..=300).map(|i| format!("{i:03} {}", if i % 50 == 0 { "ERROR disk full" } else { "ok" })).collect::<Vec<_>>().join("\n") },
        Request::BlobSearch { .. } => Reply::BlobMatches { lines: vec![49, 99, 149, 199, 249, 299] },
        Request::Approvals => Reply::Approvals { approvals: vec![] },
        Request::ServerLog { .. } => Reply::ServerLog {
            lines: vec![
                LogLine { at: "2026-11-30T09:58:00Z".into(), kind: LogKind::State, text: "up".into() },
                LogLine { at: "2026-11-30T09:58:01Z".into(), kind: LogKind::Stderr, text: "sample server ready".into() },
                LogLine { at: "2026-11-30T10:00:02Z".into(), kind: LogKind::State, text: "restarting 1/5: exited with status 1".into() },
            ],
        },
        Request::RestartServer { .. } => Reply::Done,
        Request::MemorySet { .. } | Request::MemoryDelete { .. } | Request::MemoryHistory { .. } => {
            return super::catalog_tests::Memories::default().answer(req);
        }
    })
}

pub(super) fn started() -> App {
    let mut a = app();
    let reqs = a.start();
    answer(&mut a, reqs);
    a
}

/// Each message as if it came alone: its requests answered, then a frame prepared.
pub(super) fn press(a: &mut App, msgs: Vec<Msg>) {
    for m in msgs {
        let reqs = a.update(m);
        answer(a, reqs);
        a.prepare_frame();
    }
}

pub(super) fn screen(a: &App) -> String {
    let mut t = Terminal::new(TestBackend::new(a.size.0, a.size.1)).expect("terminal");
    t.draw(|f| ui::draw(f, a)).expect("draw");
    let buf = t.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        for x in 0..buf.area.width {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Only the lines of one pane, to snapshot it on its own.
pub(super) fn pane_text(a: &App, pane: Pane) -> String {
    let r = ui::layout(
        ratatui::layout::Rect::new(0, 0, a.size.0, a.size.1),
        a.plan(),
    )
    .rect(pane);
    let full = screen(a);
    full.lines()
        .skip(r.y as usize)
        .take(r.height as usize)
        .map(|l| {
            l.chars()
                .skip(r.x as usize)
                .take(r.width as usize)
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn first_frame_with_nothing_yet_says_what_to_do() {
    let a = app();
    let s = screen(&a);
    assert!(s.contains("No traffic yet."), "{s}");
    assert!(s.contains("loom connect"), "{s}");
    assert!(s.contains("No datasets yet."), "{s}");
    insta::assert_snapshot!("empty_screen", s);
}

#[test]
fn whole_screen_with_session_data() {
    let a = started();
    insta::assert_snapshot!("whole_screen", screen(&a));
}

#[test]
fn every_pane_snapshot() {
    let mut a = started();
    // A result in the grid and a dataset shown in detail.
    press(&mut a, vec![Msg::char('5'), Msg::ctrl('e')]);
    a.editor.area = tui_textarea::TextArea::new(vec!["SELECT * FROM sample_list_orders_1".into()]);
    press(&mut a, vec![Msg::ctrl('e')]);
    insta::assert_snapshot!("pane_servers", pane_text(&a, Pane::Servers));
    insta::assert_snapshot!("pane_traffic", pane_text(&a, Pane::Traffic));
    insta::assert_snapshot!("pane_detail_call", pane_text(&a, Pane::Detail));
    insta::assert_snapshot!("pane_editor", pane_text(&a, Pane::Editor));
    insta::assert_snapshot!("pane_results", pane_text(&a, Pane::Results));
    press(
        &mut a,
        vec![
            Msg::code(KeyCode::Esc),
            Msg::char('4'),
            Msg::code(KeyCode::Enter),
        ],
    );
    assert_eq!(a.focus, Pane::Catalog);
    insta::assert_snapshot!("pane_catalog", pane_text(&a, Pane::Catalog));
    insta::assert_snapshot!("pane_detail_dataset", pane_text(&a, Pane::Detail));
    press(&mut a, vec![Msg::char('d')]);
    assert!(matches!(a.overlay, super::app::Overlay::Describe(_)));
    insta::assert_snapshot!("describe_overlay", screen(&a));
    press(&mut a, vec![Msg::code(KeyCode::Esc), Msg::char(':')]);
    insta::assert_snapshot!("palette_overlay", screen(&a));
    press(&mut a, vec![Msg::code(KeyCode::Esc), Msg::char('?')]);
    insta::assert_snapshot!("help_overlay", screen(&a));
}

#[test]
fn the_grid_builds_only_what_is_on_screen_and_pages_in_as_it_scrolls() {
    let mut a = started();
    a.editor.area = tui_textarea::TextArea::new(vec!["SELECT 1".into()]);
    a.focus = Pane::Editor;
    let reqs = a.update(Msg::ctrl('e'));
    // The query, then only the first page of rows.
    answer(&mut a, reqs);
    let g = a.results.grid.as_ref().expect("grid");
    assert_eq!(g.result.rows, 1_000_000);
    assert_eq!(g.pages.len(), 1, "only the page on screen was fetched");
    press(&mut a, vec![Msg::code(KeyCode::Esc), Msg::char('G')]);
    let g = a.results.grid.as_ref().expect("grid");
    assert_eq!(g.row, 999_999);
    assert!(g.pages.contains_key(&(999_999 / super::app::PAGE_ROWS)));
    assert!(
        g.pages.len() <= 4,
        "far pages are dropped: {}",
        g.pages.len()
    );
    let s = screen(&a);
    assert!(s.contains("row 1,000,000 of 1,000,000"), "{s}");
    assert!(s.contains("NULL"), "NULL is shown distinctly: {s}");
}

#[test]
fn copy_cell_row_and_a_small_result_to_the_register() {
    let mut a = started();
    a.editor.area = tui_textarea::TextArea::new(vec!["SELECT 1".into()]);
    press(
        &mut a,
        vec![
            Msg::char('5'),
            Msg::ctrl('e'),
            Msg::code(KeyCode::Esc),
            Msg::char('j'),
            Msg::char('l'),
            Msg::char('y'),
        ],
    );
    assert_eq!(a.clipboard.register(), Some("open"));
    assert!(
        a.status.as_ref().unwrap().0.contains("cell (4 B)"),
        "{:?}",
        a.status.as_ref().map(|s| &s.0)
    );
    press(&mut a, vec![Msg::char('Y')]);
    assert_eq!(a.clipboard.register(), Some("1\topen\tnote 1"));
    // A million rows do not go to the clipboard; the status says to export.
    press(&mut a, vec![Msg::ctrl('y')]);
    assert!(
        a.status.as_ref().unwrap().0.contains("export"),
        "{:?}",
        a.status.as_ref().map(|s| &s.0)
    );
}

#[test]
fn query_error_is_placed_in_the_editor() {
    let mut a = started();
    a.editor.area =
        tui_textarea::TextArea::new(vec!["SELECT 1;".into(), "SELECT nope FROM t".into()]);
    a.editor.area.move_cursor(tui_textarea::CursorMove::Bottom);
    press(&mut a, vec![Msg::char('5'), Msg::ctrl('e')]);
    let e = a.results.query_error.as_ref().expect("error");
    assert_eq!(e.at, Some((1, 7)), "{}", e.message);
    let s = screen(&a);
    assert!(s.contains("at line 2, column 8"), "{s}");
}

#[test]
fn palette_validates_then_calls_as_the_human() {
    let mut a = started();
    press(&mut a, vec![Msg::char(':')]);
    for c in "orders".chars() {
        press(&mut a, vec![Msg::char(c)]);
    }
    press(&mut a, vec![Msg::code(KeyCode::Enter)]);
    // Prefilled from the schema: {"limit": 0}. Break it, then fix it.
    if let super::app::Overlay::Palette(p) = &mut a.overlay
        && let super::app::PaletteStage::Edit { args, .. } = &mut p.stage
    {
        assert!(args.lines().join("").contains("\"limit\": 0"));
        **args = tui_textarea::TextArea::new(vec!["{\"limit\": \"x\"}".into()]);
    }
    press(&mut a, vec![Msg::ctrl('s')]);
    match &a.overlay {
        super::app::Overlay::Palette(p) => {
            assert_eq!(p.error.as_deref(), Some("argument `limit` must be integer"))
        }
        _ => panic!("the palette stays open on a bad argument"),
    }
    if let super::app::Overlay::Palette(p) = &mut a.overlay
        && let super::app::PaletteStage::Edit { args, .. } = &mut p.stage
    {
        **args = tui_textarea::TextArea::new(vec!["{\"limit\": 5}".into()]);
    }
    press(&mut a, vec![Msg::ctrl('s')]);
    assert!(matches!(a.overlay, super::app::Overlay::None));
    let status = a.status.as_ref().unwrap().0.clone();
    assert!(
        status.contains("sample_list_orders done: dataset sample_list_orders_1"),
        "{status}"
    );
}

#[test]
fn live_events_update_traffic_and_follow_keeps_the_newest_selected() {
    let mut a = started();
    let n = a.traffic.calls.len();
    let ev = |seq, c| {
        Msg::event(Sequenced {
            seq,
            event: Event::CallStarted(c),
        })
    };
    press(
        &mut a,
        vec![ev(
            10,
            call(5, "sample_get_weather", "running", None, "model"),
        )],
    );
    assert_eq!(a.traffic.calls.len(), n + 1);
    assert_eq!(a.traffic.visible_calls()[0].call, 5);
    assert_eq!(a.traffic.sel, 0);
    // Not following: the selection stays on the same call as new ones arrive.
    press(&mut a, vec![Msg::char('1'), Msg::char('j')]);
    assert!(!a.traffic.follow);
    let selected = a.traffic.visible_calls()[a.traffic.sel].call;
    press(
        &mut a,
        vec![ev(
            11,
            call(6, "sample_get_weather", "running", None, "model"),
        )],
    );
    assert_eq!(a.traffic.visible_calls()[a.traffic.sel].call, selected);
    // Filter by text.
    press(&mut a, vec![Msg::char('/')]);
    for c in "parked".chars() {
        press(&mut a, vec![Msg::char(c)]);
    }
    press(&mut a, vec![Msg::code(KeyCode::Enter)]);
    assert_eq!(a.traffic.visible_calls().len(), 1);
    assert_eq!(a.traffic.visible_calls()[0].tool, "sample_tail_logs");
}

#[test]
fn jump_from_an_intercepted_call_to_its_dataset() {
    let mut a = started();
    press(
        &mut a,
        vec![
            Msg::char('1'),
            Msg::char('j'),
            Msg::char('j'),
            Msg::char('o'),
        ],
    );
    assert_eq!(a.focus, Pane::Catalog);
    assert_eq!(
        a.catalog.selected_node(),
        &Node::Dataset("sample_list_orders_1".into())
    );
    assert!(
        matches!(&a.detail.shown, super::app::Detail::Dataset { dataset, .. } if dataset == "sample_list_orders_1")
    );
}

#[test]
fn mouse_click_focuses_and_selects() {
    let mut a = started();
    let l = ui::layout(ratatui::layout::Rect::new(0, 0, 120, 40), a.plan());
    let r = l.rect(Pane::Catalog);
    let click = crossterm::event::MouseEvent {
        kind: crossterm::event::MouseEventKind::Down(crossterm::event::MouseButton::Left),
        column: r.x + 3,
        // Servers (closed), Datasets, then the second dataset.
        row: r.y + 1 + 3,
        modifiers: KeyModifiers::NONE,
    };
    press(&mut a, vec![Msg::Mouse(click)]);
    assert_eq!(a.focus, Pane::Catalog);
    assert_eq!(
        a.catalog.selected_node(),
        &Node::Dataset("sample_list_customers_2".into())
    );
}

/// A click acts on the pane where it was last drawn, even when the terminal has been resized
/// since and the next frame is not drawn yet.
#[test]
fn a_click_acts_on_the_panes_as_they_were_drawn() {
    let mut a = started();
    screen(&a);
    let drawn = ui::layout(
        ratatui::layout::Rect::new(0, 0, 120, 40),
        ui::Plan::default(),
    )
    .rect(Pane::Results);
    a.size = (60, 20);
    let now = ui::layout(
        ratatui::layout::Rect::new(0, 0, 60, 20),
        ui::Plan::default(),
    );
    let (x, y) = (drawn.x + 2, drawn.y + 2);
    assert!(
        !now.rect(Pane::Results)
            .contains(ratatui::layout::Position::new(x, y)),
        "the resized layout puts another pane there"
    );
    let click = crossterm::event::MouseEvent {
        kind: crossterm::event::MouseEventKind::Down(crossterm::event::MouseButton::Left),
        column: x,
        row: y,
        modifiers: KeyModifiers::NONE,
    };
    press(&mut a, vec![Msg::Mouse(click)]);
    assert_eq!(a.focus, Pane::Results);
}

#[test]
fn the_approval_prompt_shows_every_argument_and_scrolls_instead_of_cutting() {
    use crate::types::events::ApprovalRequest;
    let mut a = started();
    a.approvals.grace = std::time::Duration::ZERO;
    let arguments: serde_json::Map<String, serde_json::Value> = (0..300)
        .map(|i| (format!("key{i:03}"), json!(format!("value {i}"))))
        .collect();
    let req = ApprovalRequest {
        approval: 1,
        call: 9,
        server: "sample".into(),
        tool: "sample_cancel_order".into(),
        original: "cancel_order".into(),
        annotations: json!({ "destructiveHint": true }),
        arguments: serde_json::Value::Object(arguments),
        timeout_secs: 60,
        ..Default::default()
    };
    press(
        &mut a,
        vec![Msg::event(Sequenced {
            seq: 100,
            event: Event::ApprovalRequested(req),
        })],
    );
    let keys_on = |screen: &str| -> Vec<String> {
        screen
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| w.len() == 6 && w.starts_with("key"))
            .map(str::to_owned)
            .collect()
    };
    let first = screen(&a);
    assert!(first.contains("key000"), "{first}");
    assert!(!first.contains("key299"), "{first}");
    // The prompt says the text goes on, and how far.
    assert!(
        first.contains("lines 1–") && first.contains(" of 30"),
        "{first}"
    );
    // Page by page, every argument comes into view; the decision keys stay on screen.
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..100 {
        let s = screen(&a);
        assert!(s.contains("approve once"), "{s}");
        seen.extend(keys_on(&s));
        if s.contains("key299") {
            break;
        }
        press(&mut a, vec![Msg::code(KeyCode::PageDown)]);
    }
    assert_eq!(seen.len(), 300, "missing arguments: {seen:?}");
    // Home and end jump; scrolling never leaves the text.
    press(&mut a, vec![Msg::code(KeyCode::Home)]);
    assert!(screen(&a).contains("key000"));
    press(&mut a, vec![Msg::code(KeyCode::End)]);
    let last = screen(&a);
    assert!(last.contains("key299"), "{last}");
    press(&mut a, vec![Msg::char('j'), Msg::char('j')]);
    assert_eq!(screen(&a), last);
    press(&mut a, vec![Msg::char('k')]);
    assert_ne!(screen(&a), last);
}

#[test]
fn a_dropped_or_evicted_dataset_leaves_the_catalog_and_every_view_of_it() {
    use super::app::{Detail, Overlay};
    let mut a = started();
    assert_eq!(a.catalog.datasets.len(), 2);
    // The dataset is open in Detail and in the describe view.
    press(
        &mut a,
        vec![Msg::char('4'), Msg::code(KeyCode::Enter), Msg::char('d')],
    );
    assert!(
        matches!(&a.detail.shown, Detail::Dataset { dataset, .. } if dataset == "sample_list_orders_1")
    );
    assert!(matches!(a.overlay, Overlay::Describe(_)));
    let ev = |seq, event| Msg::event(Sequenced { seq, event });
    // A listing asked for when a query made a dataset, answered only after the drop below.
    let stale = a.update(ev(
        20,
        Event::DatasetCreated {
            dataset: "q_9".into(),
            rows: 500,
            server: "loom".into(),
            tool: "loom_query".into(),
        },
    ));
    assert!(
        matches!(stale.as_slice(), [(_, Request::Datasets)]),
        "{stale:?}"
    );
    let fresh = a.update(ev(
        21,
        Event::DatasetDropped {
            dataset: "sample_list_orders_1".into(),
            reason: DropReason::Evicted,
        },
    ));
    // Gone at once, from the catalog and from every view that showed it.
    assert!(
        a.catalog
            .datasets
            .iter()
            .all(|d| d.dataset != "sample_list_orders_1"),
        "{:?}",
        a.catalog.datasets
    );
    assert!(matches!(a.detail.shown, Detail::Empty));
    assert!(matches!(a.overlay, Overlay::None));
    let status = a.status.as_ref().map(|s| s.0.clone()).unwrap_or_default();
    assert!(
        status.contains("sample_list_orders_1 was evicted"),
        "{status}"
    );
    assert!(
        matches!(fresh.as_slice(), [(_, Request::Datasets)]),
        "{fresh:?}"
    );
    // The newer listing arrives first; the older one, which predates the drop, changes nothing.
    let listing = |names: &[&str]| -> Result<Reply, EngineError> {
        Ok(Reply::Datasets {
            datasets: names
                .iter()
                .map(|n| DatasetView {
                    dataset: (*n).into(),
                    ..Default::default()
                })
                .collect(),
        })
    };
    a.update(Msg::Reply(
        fresh[0].0,
        listing(&["sample_list_customers_2", "q_9"]),
    ));
    a.update(Msg::Reply(
        stale[0].0,
        listing(&["sample_list_orders_1", "sample_list_customers_2", "q_9"]),
    ));
    let names: Vec<&str> = a
        .catalog
        .datasets
        .iter()
        .map(|d| d.dataset.as_str())
        .collect();
    assert_eq!(names, ["sample_list_customers_2", "q_9"]);
    let pane = pane_text(&a, Pane::Catalog);
    assert!(
        !pane.contains("sample_list_orders_1") && pane.contains("q_9"),
        "{pane}"
    );
    // A plain drop says so too.
    a.update(ev(
        22,
        Event::DatasetDropped {
            dataset: "q_9".into(),
            reason: DropReason::Dropped,
        },
    ));
    assert_eq!(a.catalog.datasets.len(), 1);
    assert!(
        a.status.as_ref().is_some_and(|s| s.0 == "q_9 was dropped"),
        "{:?}",
        a.status
    );
}

/// B6: the histogram of 19-digit ids labels each bucket with its whole number when the pane
/// has room (the report saw `73000000000000081…` on every bar), and with the digits that differ
/// when it has not.
#[test]
fn histogram_labels_of_large_integers_tell_the_buckets_apart() {
    let ids = [
        "7300000000000008100",
        "7300000000006676000",
        "7300000000013271000",
    ];
    let mut a = started();
    a.size = (160, 45);
    press(&mut a, vec![Msg::char('4'), Msg::char('d')]);
    let Overlay::Describe(d) = &mut a.overlay else {
        panic!("the describe view is open")
    };
    let column = d.describe.as_ref().expect("described").columns[0]
        .name
        .clone();
    d.charts.insert(
        column,
        ids.iter()
            .map(|l| crate::types::data::Bar {
                label: (*l).into(),
                count: 84,
            })
            .collect(),
    );
    let s = screen(&a);
    for id in ids {
        assert!(s.contains(&format!("{id} █")), "{id}:\n{s}");
    }
    a.size = (60, 30);
    let s = screen(&a);
    for id in ["00008100 █", "06676000 █", "13271000 █"] {
        assert!(s.contains(&format!("…{id}")), "{id}:\n{s}");
    }
}

#[test]
fn the_describe_view_shows_join_hints_and_top_values() {
    let mut a = started();
    press(&mut a, vec![Msg::char('4'), Msg::char('d')]);
    // The third column, `status`, has top values.
    press(&mut a, vec![Msg::char('j'), Msg::char('j')]);
    let s = screen(&a);
    assert!(s.contains("join hints"), "{s}");
    assert!(
        s.contains("customer_id = sample_list_customers_2.customer_id: all of its values found there, 95% of theirs here"),
        "{s}"
    );
    assert!(
        s.contains("top shipped (600), open (300), paid (90)"),
        "{s}"
    );
}
