//! The workbench as a person uses it all day: nothing they type is taken by something else,
//! nothing they wrote is lost, and every action acts on what is on screen.

use super::app::{ApprovalView, Msg, Pane};
use super::tests::{press, screen, started};
use crate::frontend::engine::Request;
use crate::types::events::{ApprovalRequest, Decision, Event, Sequenced};
use crossterm::event::KeyCode;
use serde_json::json;
use std::time::Duration;

fn approval(id: u64) -> Msg {
    Msg::event(Sequenced {
        seq: 1000 + id,
        event: Event::ApprovalRequested(ApprovalRequest {
            approval: id,
            call: 40 + id,
            server: "sample".into(),
            tool: "sample_cancel_order".into(),
            original: "cancel_order".into(),
            annotations: json!({ "destructiveHint": true }),
            arguments: json!({ "order_id": 7 }),
            timeout_secs: 60,
            ..Default::default()
        }),
    })
}

/// Feeds messages and returns every request they produced.
pub(super) fn sent(a: &mut super::app::App, msgs: Vec<Msg>) -> Vec<Request> {
    let mut out = Vec::new();
    for m in msgs {
        let reqs = a.update(m);
        out.extend(reqs.iter().map(|(_, r)| r.clone()));
        super::tests::answer(a, reqs);
    }
    out
}

pub(super) fn typed(text: &str) -> Vec<Msg> {
    text.chars().map(Msg::char).collect()
}

fn decisions(reqs: &[Request]) -> Vec<Decision> {
    reqs.iter()
        .filter_map(|r| match r {
            Request::Approve { decision, .. } => Some(decision.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn typing_sql_while_a_call_waits_keeps_every_key_in_the_editor() {
    let mut a = started();
    press(&mut a, vec![Msg::char('5')]);
    assert_eq!(a.focus, Pane::Editor);
    press(&mut a, typed("SELECT "));
    press(&mut a, vec![approval(1)]);
    let s = screen(&a);
    assert_eq!(a.approval_view(), ApprovalView::Banner);
    assert!(
        s.contains("approval waiting") && s.contains("ctrl-g"),
        "{s}"
    );
    assert!(!s.contains("approve a call?"), "{s}");
    // The exact keys of the report: `a` of "amount" never approves, nothing is lost.
    let reqs = sent(&mut a, typed("amount"));
    assert!(decisions(&reqs).is_empty(), "{reqs:?}");
    assert_eq!(a.editor.area.lines().join("\n"), "SELECT amount");
    assert_eq!(a.approvals.waiting.len(), 1);
    // Opened on purpose, the prompt answers at once; the editor keeps its text.
    press(&mut a, vec![Msg::ctrl('g')]);
    let s = screen(&a);
    assert!(
        s.contains("approve a call?") && s.contains("approve once"),
        "{s}"
    );
    let reqs = sent(&mut a, vec![Msg::char('a')]);
    assert_eq!(decisions(&reqs), vec![Decision::Once]);
    assert!(a.approvals.waiting.is_empty());
    assert_eq!(a.editor.area.lines().join("\n"), "SELECT amount");
    assert_eq!(a.focus, Pane::Editor);
}

#[test]
fn a_prompt_that_opens_by_itself_takes_keys_only_after_its_grace() {
    let mut a = started();
    assert_eq!(a.focus, Pane::Traffic);
    a.approvals.grace = Duration::from_secs(3600);
    press(&mut a, vec![approval(2)]);
    let s = screen(&a);
    assert!(s.contains("approve a call?"), "{s}");
    assert!(s.contains("keys answer in a moment"), "{s}");
    assert_eq!(a.approval_view(), ApprovalView::Prompt { armed: false });
    // Keys pressed before the grace ends go where they were meant to go.
    let reqs = sent(&mut a, vec![Msg::char('a'), Msg::char('d'), Msg::char('4')]);
    assert!(decisions(&reqs).is_empty(), "{reqs:?}");
    assert_eq!(a.focus, Pane::Catalog, "the `4` reached the panes");
    // Report item 16: an answer key pressed too early is said to have decided nothing.
    let s = screen(&a);
    assert!(
        s.contains("wait… keys answer in a moment: the key pressed decided nothing"),
        "{s}"
    );
    assert!(
        a.status
            .as_ref()
            .is_some_and(|(t, _)| t.starts_with("wait… the prompt takes its keys")),
        "{:?}",
        a.status
    );
    // Once the grace is over, the prompt decides.
    a.approvals.grace = Duration::ZERO;
    let s = screen(&a);
    assert!(s.contains("approve once"), "{s}");
    let reqs = sent(&mut a, vec![Msg::char('A')]);
    assert_eq!(decisions(&reqs), vec![Decision::Session]);
}

#[test]
fn esc_sets_a_prompt_aside_and_ctrl_g_brings_it_back() {
    let mut a = started();
    a.approvals.grace = Duration::ZERO;
    press(&mut a, vec![approval(3)]);
    screen(&a);
    press(&mut a, vec![Msg::code(KeyCode::Esc)]);
    let s = screen(&a);
    assert_eq!(a.approval_view(), ApprovalView::Banner);
    assert!(s.contains("approval waiting"), "{s}");
    // Set aside, its keys are the panes' again.
    let reqs = sent(&mut a, vec![Msg::char('d')]);
    assert!(decisions(&reqs).is_empty());
    press(&mut a, vec![Msg::ctrl('g')]);
    screen(&a);
    let reqs = sent(&mut a, vec![Msg::char('d'), Msg::code(KeyCode::Enter)]);
    assert_eq!(decisions(&reqs), vec![Decision::Deny { reason: None }]);
}

#[test]
fn querying_a_dataset_keeps_the_sql_being_written() {
    let mut a = started();
    press(&mut a, vec![Msg::char('5')]);
    press(&mut a, typed("SELECT 42 AS keep"));
    press(
        &mut a,
        vec![Msg::code(KeyCode::Esc), Msg::char('4'), Msg::char('s')],
    );
    assert!(
        a.editor.text().starts_with("SELECT * FROM "),
        "{}",
        a.editor.text()
    );
    // ctrl-up brings the draft back from the history (just before the query `s` ran)…
    press(
        &mut a,
        vec![
            Msg::char('5'),
            Msg::ctrl_code(KeyCode::Up),
            Msg::ctrl_code(KeyCode::Up),
        ],
    );
    assert_eq!(a.editor.text(), "SELECT 42 AS keep");
    // …and undo walks back over the replacement too.
    let mut b = started();
    press(&mut b, vec![Msg::char('5')]);
    press(&mut b, typed("SELECT 42 AS keep"));
    press(
        &mut b,
        vec![
            Msg::code(KeyCode::Esc),
            Msg::char('4'),
            Msg::char('s'),
            Msg::char('5'),
        ],
    );
    for _ in 0..2 {
        press(&mut b, vec![Msg::ctrl('u')]);
    }
    assert_eq!(b.editor.text(), "SELECT 42 AS keep");
}

#[test]
fn walking_the_history_and_back_returns_the_draft() {
    let mut a = started();
    press(&mut a, vec![Msg::char('5')]);
    press(&mut a, typed("SELECT 1"));
    press(&mut a, vec![Msg::ctrl('e')]);
    press(&mut a, typed(" + 1"));
    assert_eq!(a.editor.text(), "SELECT 1 + 1");
    press(&mut a, vec![Msg::ctrl_code(KeyCode::Up)]);
    assert_eq!(a.editor.text(), "SELECT 1");
    press(&mut a, vec![Msg::ctrl_code(KeyCode::Down)]);
    assert_eq!(a.editor.text(), "SELECT 1 + 1", "the draft came back");
}

fn run(a: &mut super::app::App, sql: &str) {
    press(a, vec![Msg::char('5')]);
    a.editor.area = tui_textarea::TextArea::new(vec![sql.to_owned()]);
    press(a, vec![Msg::ctrl('e')]);
}

/// A failed query shows why above the result that was on screen, which stays as it was and
/// is said to be the previous one; what acts on the grid acts on that result, as shown.
#[test]
fn a_failed_query_keeps_the_previous_result_said_to_be_previous() {
    let mut a = started();
    a.size = (160, 45);
    run(&mut a, "SELECT * FROM sample_list_orders_1");
    assert!(a.results.grid.is_some());
    run(&mut a, "SELECT nope FROM t");
    let g = a.results.grid.as_ref().expect("the result on screen stays");
    assert_eq!(g.result.table, "_loom_result_9");
    a.focus = Pane::Results;
    let s = screen(&a);
    assert!(s.contains("query failed"), "{s}");
    assert!(s.contains("previous result: "), "{s}");
    assert!(s.contains("row 1 of 1,000,000"), "{s}");
    press(&mut a, vec![Msg::char('x')]);
    assert!(
        screen(&a).contains("Export _loom_result_9"),
        "{}",
        screen(&a)
    );
}

#[test]
fn page_down_turns_exactly_one_screen_of_rows() {
    let mut a = started();
    run(&mut a, "SELECT * FROM sample_list_orders_1");
    press(&mut a, vec![Msg::code(KeyCode::Esc)]);
    assert_eq!(a.focus, Pane::Results);
    let rows = a.grid_rows();
    screen(&a);
    press(&mut a, vec![Msg::code(KeyCode::PageDown)]);
    let g = a.results.grid.as_ref().unwrap();
    assert_eq!(
        (g.top, g.row),
        (rows, rows),
        "the next page starts after the last row seen"
    );
    let s = screen(&a);
    assert!(s.contains(&format!(" {} ", rows)), "{s}");
    press(&mut a, vec![Msg::code(KeyCode::PageUp)]);
    let g = a.results.grid.as_ref().unwrap();
    assert_eq!((g.top, g.row), (0, 0));
}

#[test]
fn help_scrolls_to_its_end_and_no_further() {
    let mut a = started();
    press(&mut a, vec![Msg::char('?')]);
    screen(&a);
    let total = match &a.overlay {
        super::app::Overlay::Help(m) => m.items(&a.keymap).len(),
        _ => panic!("no menu"),
    };
    let selected = |a: &super::app::App| match &a.overlay {
        super::app::Overlay::Help(m) => m.selected,
        _ => usize::MAX,
    };
    press(&mut a, vec![Msg::char('G')]);
    assert_eq!(selected(&a), total - 1);
    press(&mut a, vec![Msg::char('j'), Msg::code(KeyCode::PageDown)]);
    assert_eq!(selected(&a), total - 1, "it stops at its end");
    let s = screen(&a);
    assert!(
        s.contains(&format!("keys · {total} of {total}")),
        "the last binding is selected:\n{s}"
    );
    press(&mut a, vec![Msg::char('g')]);
    assert_eq!(selected(&a), 0);
}

#[test]
fn copy_all_loads_the_rows_then_copies_on_one_press() {
    let mut a = started();
    run(&mut a, "SELECT * FROM small");
    press(&mut a, vec![Msg::code(KeyCode::Esc), Msg::ctrl('y')]);
    let copied = a.clipboard.register().unwrap_or_default().to_owned();
    assert_eq!(copied.lines().count(), 451, "a header and every row");
    assert!(!a.results.copy_all_pending);
}

#[test]
fn the_editor_scrolls_back_when_a_resize_gives_it_room() {
    let mut a = started();
    a.size = (80, 24);
    press(&mut a, vec![Msg::char('5')]);
    let text: Vec<String> = (0..12).map(|i| format!("-- line {i}")).collect();
    a.editor.area = tui_textarea::TextArea::new(text);
    a.editor.area.move_cursor(tui_textarea::CursorMove::Bottom);
    let s = screen(&a);
    assert!(
        !s.contains("-- line 0\n") && !s.contains("-- line 0 "),
        "{s}"
    );
    press(
        &mut a,
        vec![Msg::Resize(220, 80), Msg::code(KeyCode::F(11))],
    );
    let s = screen(&a);
    assert!(s.contains("-- line 0"), "{s}");
    assert!(s.contains("-- line 11"), "{s}");
}

/// Detail showing a running call (the fixture engine answers every detail as a finished one).
fn running_detail(n: u64, caller: &str) -> super::app::Detail {
    let mut summary = super::tests::call(n, "sample_slow_count", "running", None, caller);
    summary.millis = 0;
    super::app::Detail::Call(Box::new(crate::types::events::CallRecord {
        summary,
        request: "{}".into(),
        response: String::new(),
    }))
}

fn running_call(n: u64, caller: &str) -> Msg {
    let mut c = super::tests::call(n, "sample_slow_count", "running", None, caller);
    c.millis = 0;
    Msg::event(Sequenced {
        seq: 500 + n,
        event: Event::CallStarted(c),
    })
}

#[test]
fn a_running_call_shows_its_elapsed_time_and_cancels_by_key() {
    let mut a = started();
    press(&mut a, vec![running_call(9, "model")]);
    // `call` dates call 9 at 10:00:09.
    a.now_secs = crate::types::time::parse_iso("2026-11-30T10:00:21Z").unwrap();
    a.detail.shown = running_detail(9, "model");
    press(&mut a, vec![Msg::Tick]);
    assert!(
        screen(&a).contains(" c cancel call "),
        "the key bar offers it"
    );
    let s = screen(&a);
    assert!(s.contains("12s…"), "Traffic ticks the elapsed time:\n{s}");
    assert!(s.contains("12 s so far"), "Detail too:\n{s}");
    // A model's call is asked about first.
    let reqs = sent(&mut a, vec![Msg::char('c')]);
    assert!(reqs.is_empty(), "{reqs:?}");
    let s = screen(&a);
    assert!(s.contains("Cancel the model's call #9"), "{s}");
    let reqs = sent(&mut a, vec![Msg::char('n')]);
    assert!(reqs.is_empty());
    let reqs = sent(&mut a, vec![Msg::char('c'), Msg::char('y')]);
    assert_eq!(reqs, vec![Request::CancelCall { call: 9 }]);
    // From Detail, and a person's own call stops without a question.
    press(&mut a, vec![running_call(10, "human"), Msg::char('2')]);
    a.detail.shown = running_detail(10, "human");
    let reqs = sent(&mut a, vec![Msg::char('c')]);
    assert!(reqs.contains(&Request::CancelCall { call: 10 }), "{reqs:?}");
    // A finished call is not cancelled.
    let mut b = started();
    let reqs = sent(&mut b, vec![Msg::char('c')]);
    assert!(reqs.is_empty());
    assert!(
        b.status
            .as_ref()
            .is_some_and(|s| s.0.contains("not running"))
    );
}

#[test]
fn parked_text_opens_in_a_pager_that_searches_and_copies() {
    let mut a = started();
    a.catalog.set_blobs(vec![crate::frontend::engine::BlobView {
        key: "a1b2c3d4e5f6".into(),
        summary: "logs".into(),
        chars: 2400,
        lines: 300,
        expires: "2026-11-30T11:00:00Z".into(),
        lineage: None,
    }]);
    // From the first dataset to the Parked text group, then its first item.
    press(&mut a, vec![Msg::char('4'), Msg::char(']'), Msg::char('j')]);
    for key in ['s', 'd'] {
        press(&mut a, vec![Msg::char(key)]);
        assert!(
            matches!(a.overlay, super::app::Overlay::Pager(_)),
            "{key} opens it"
        );
        press(&mut a, vec![Msg::code(KeyCode::Esc)]);
    }
    press(&mut a, vec![Msg::code(KeyCode::Enter)]);
    let s = screen(&a);
    assert!(s.contains("parked text a1b2c3d4e5f6"), "{s}");
    assert!(s.contains("001 ok") && s.contains("lines 1–"), "{s}");
    press(&mut a, typed("/error"));
    let s = screen(&a);
    assert!(s.contains("/error▏"), "{s}");
    let reqs = sent(&mut a, vec![Msg::code(KeyCode::Enter)]);
    assert_eq!(
        reqs,
        vec![Request::BlobSearch {
            key: "a1b2c3d4e5f6".into(),
            pattern: "error".into()
        }]
    );
    let s = screen(&a);
    assert!(s.contains("/error: 1 of 6 matches"), "{s}");
    assert!(s.contains("050 ERROR disk full"), "{s}");
    press(&mut a, vec![Msg::char('n'), Msg::char('n')]);
    let s = screen(&a);
    assert!(
        s.contains("3 of 6") && s.contains("150 ERROR disk full"),
        "{s}"
    );
    press(&mut a, vec![Msg::char('N'), Msg::char('N'), Msg::char('N')]);
    assert!(screen(&a).contains("6 of 6"));
    press(&mut a, vec![Msg::char('G')]);
    let s = screen(&a);
    assert!(
        s.contains("300 ERROR disk full") && s.contains("of 300"),
        "{s}"
    );
    press(&mut a, vec![Msg::char('y')]);
    let copied = a.clipboard.register().unwrap_or_default().to_owned();
    assert_eq!(copied.lines().count(), 300);
    press(&mut a, vec![Msg::char('q')]);
    assert!(matches!(a.overlay, super::app::Overlay::None));
}

#[test]
fn the_palette_prefills_required_arguments_and_schema_defaults_only() {
    let tool = json!({
        "name": "sample_list_orders",
        "inputSchema": {
            "type": "object",
            "properties": {
                "q": { "type": "string" },
                "status": { "type": "string", "enum": ["pending", "shipped"] },
                "limit": { "type": "integer", "default": 100 },
                "flag": { "type": "boolean" }
            },
            "required": ["q"]
        }
    });
    let v: serde_json::Value = serde_json::from_str(&super::app::prefill_arguments(&tool)).unwrap();
    assert_eq!(v, json!({ "q": "", "limit": 100 }));
}

#[test]
fn a_chart_that_fails_says_why_and_can_be_tried_again() {
    let mut a = started();
    press(&mut a, vec![Msg::char('4'), Msg::char('d')]);
    // The fourth column, `total`, is the one the fixture engine cannot chart.
    press(&mut a, vec![Msg::char('j'), Msg::char('j'), Msg::char('j')]);
    let s = screen(&a);
    assert!(!s.contains("loading chart"), "{s}");
    assert!(
        s.contains("chart failed: Binder Error: no histogram"),
        "{s}"
    );
    assert!(s.contains("r tries again"), "{s}");
    let reqs = sent(&mut a, vec![Msg::char('r')]);
    assert!(
        reqs.iter()
            .any(|r| matches!(r, Request::Chart { column, .. } if column == "total")),
        "{reqs:?}"
    );
}

/// Every cell of the screen has a background of the theme: nothing is left to the terminal's
/// own colours (a light terminal behind a dark theme, or the reverse, would show through).
#[test]
fn every_cell_is_painted_in_both_themes_at_every_size() {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::style::Color;
    for theme in ["dark", "light"] {
        for (w, h) in [(80, 24), (160, 45), (220, 60)] {
            let mut a = started();
            a.theme = crate::tui::theme::Theme::builtin(theme).unwrap();
            a.size = (w, h);
            a.set_status("something happened", super::app::StatusKind::Info);
            let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
            t.draw(|f| crate::tui::ui::draw(f, &a)).unwrap();
            let buf = t.backend().buffer();
            let bad: Vec<(u16, u16)> = (0..h)
                .flat_map(|y| (0..w).map(move |x| (x, y)))
                .filter(|&(x, y)| buf[(x, y)].bg == Color::Reset)
                // The second column of a wide character is drawn by the character itself.
                .filter(|&(x, y)| {
                    x == 0 || unicode_width::UnicodeWidthStr::width(buf[(x - 1, y)].symbol()) < 2
                })
                .collect();
            if !bad.is_empty() {
                let rows: std::collections::BTreeSet<u16> = bad.iter().map(|p| p.1).collect();
                let s = super::tests::screen(&a);
                panic!(
                    "{theme} {w}x{h}: rows {rows:?} have unpainted cells, first {:?}\n{s}",
                    bad[0]
                );
            }
        }
    }
}

#[test]
fn traffic_columns_never_run_together() {
    let mut a = started();
    a.size = (160, 45);
    let mut c = super::tests::call(
        20,
        "sample_list_orders",
        "intercepted",
        Some("x_1"),
        "model",
    );
    (c.bytes_in, c.bytes_out, c.tokens_in, c.tokens_out) = (489_600, 4_300, 169_500, 1_500);
    c.millis = 1_234_567;
    press(
        &mut a,
        vec![Msg::event(Sequenced {
            seq: 900,
            event: Event::CallFinished(c),
        })],
    );
    let s = screen(&a);
    assert!(s.contains("time     who tool"), "{s}");
    assert!(s.contains(" 1234567  489.6k→4.3k   169.5k→1.5k"), "{s}");
}

#[test]
fn the_whole_screen_at_three_sizes_cuts_nothing_silently() {
    for (w, h) in [(80u16, 24u16), (160, 45), (220, 60)] {
        let mut a = started();
        a.size = (w, h);
        let s = screen(&a);
        if w == 80 {
            // Two servers, one row: the title says which is shown, not all of them.
            assert!(s.contains("Servers 1–1 of 2"), "{s}");
            // The key bar ends with a mark when keys did not fit.
            assert!(s.lines().last().is_some_and(|l| l.ends_with('…')), "{s}");
        }
        insta::assert_snapshot!(format!("screen_{w}x{h}"), s);
    }
}

#[test]
fn the_filter_shows_a_cursor_only_while_it_is_typed() {
    let mut a = started();
    press(&mut a, vec![Msg::char('/')]);
    press(&mut a, typed("loom"));
    assert!(screen(&a).contains("filter: loom▏"));
    press(&mut a, vec![Msg::code(KeyCode::Enter)]);
    let s = screen(&a);
    assert!(
        s.contains("filter: loom") && !s.contains("filter: loom▏"),
        "{s}"
    );
}

#[test]
fn quitting_asks_first_while_clients_are_connected_and_an_attached_one_detaches() {
    use crate::frontend::engine::{Reply, SessionInfo};
    let info = |clients| {
        Reply::Session(Box::new(SessionInfo {
            pid: 1,
            config: "loom.toml".into(),
            started_at: "2026-11-30T10:00:00Z".into(),
            servers: vec![],
            protocol: 5,
            clients,
            ..Default::default()
        }))
    };
    let mut a = started();
    let reqs = a.update(Msg::char('q'));
    assert!(!a.quit);
    let (t, req) = reqs.into_iter().next().expect("a fresh count of clients");
    assert_eq!(req, Request::Session);
    a.update(Msg::Reply(t, Ok(info(2))));
    assert!(!a.quit);
    let s = screen(&a);
    assert!(
        s.contains("2 MCP clients are connected. Stop serving them and quit?"),
        "{s}"
    );
    press(&mut a, vec![Msg::char('n')]);
    assert!(!a.quit && matches!(a.overlay, super::app::Overlay::None));
    let reqs = a.update(Msg::ctrl('q'));
    let (t, _) = reqs.into_iter().next().unwrap();
    a.update(Msg::Reply(t, Ok(info(1))));
    assert!(screen(&a).contains("1 MCP client is connected"));
    press(&mut a, vec![Msg::char('y')]);
    assert!(a.quit);
    // Nobody connected: it just quits.
    let mut b = started();
    let reqs = b.update(Msg::char('q'));
    let (t, _) = reqs.into_iter().next().unwrap();
    b.update(Msg::Reply(t, Ok(info(0))));
    assert!(b.quit);
    // Attached, `q` detaches at once and says so.
    let mut c = started();
    c.attached = true;
    let s = screen(&c);
    assert!(s.contains("q detach"), "{s}");
    assert!(c.update(Msg::char('q')).is_empty());
    assert!(c.quit);
}

#[test]
fn the_prompt_counts_down_to_its_timeout() {
    let mut a = started();
    a.approvals.grace = Duration::ZERO;
    press(&mut a, vec![approval(4)]);
    let earlier = std::time::Instant::now()
        .checked_sub(Duration::from_secs(20))
        .unwrap();
    a.approvals.seen.insert(4, earlier);
    let s = screen(&a);
    assert!(s.contains("denied in 40 s without an answer"), "{s}");
}

#[test]
fn counts_read_as_words() {
    use crate::tui::ui::plural;
    assert_eq!(plural(1u64, "row"), "1 row");
    assert_eq!(plural(0u64, "row"), "0 rows");
    assert_eq!(plural(3u64, "match"), "3 matches");
    assert_eq!(plural(1u64, "match"), "1 match");
    let mut a = started();
    a.servers.list.truncate(1);
    a.servers.list[0].tools = 1;
    let s = screen(&a);
    assert!(s.contains("sample up · 1 tool "), "{s}");
    assert!(!s.contains("legacy"), "{s}");
}

#[test]
fn tab_completes_or_indents_in_the_editor_and_esc_leaves_it() {
    let mut a = started();
    press(&mut a, vec![Msg::char('5')]);
    press(&mut a, vec![Msg::code(KeyCode::Tab)]);
    assert_eq!(a.focus, Pane::Editor, "tab stays in the editor");
    assert_eq!(a.editor.text(), "    ");
    press(&mut a, typed("SELECT * FROM sample_list_cu"));
    press(&mut a, vec![Msg::code(KeyCode::Tab)]);
    assert_eq!(a.editor.text(), "    SELECT * FROM sample_list_customers_2");
    press(&mut a, vec![Msg::code(KeyCode::Esc)]);
    assert_ne!(a.focus, Pane::Editor);
}

#[test]
fn enter_sends_the_palette_arguments_once_they_are_whole_json() {
    let mut a = started();
    press(&mut a, vec![Msg::char(':')]);
    press(&mut a, typed("orders"));
    press(&mut a, vec![Msg::code(KeyCode::Enter)]);
    if let super::app::Overlay::Palette(p) = &mut a.overlay
        && let super::app::PaletteStage::Edit { args, .. } = &mut p.stage
    {
        **args = tui_textarea::TextArea::new(vec!["{\"limit\": 5".into()]);
        args.move_cursor(tui_textarea::CursorMove::End);
    }
    // Not whole yet: enter is a new line.
    let reqs = sent(&mut a, vec![Msg::code(KeyCode::Enter)]);
    assert!(reqs.is_empty());
    assert!(matches!(a.overlay, super::app::Overlay::Palette(_)));
    press(&mut a, vec![Msg::char('}')]);
    let reqs = sent(&mut a, vec![Msg::code(KeyCode::Enter)]);
    assert!(
        reqs.iter()
            .any(|r| matches!(r, Request::CallTool { name, .. } if name == "sample_list_orders")),
        "{reqs:?}"
    );
}

#[test]
fn servers_show_uptime_restarts_calls_and_when_they_failed() {
    let mut a = started();
    a.size = (160, 45);
    a.now_secs = crate::types::time::parse_iso("2026-11-30T10:10:00Z").unwrap();
    a.focus = Pane::Servers;
    let s = screen(&a);
    // The fixture: `sample` up since 09:58 with four calls (12, 24, 36, 48 ms), `fs` failing.
    assert!(s.contains("sample up · 6 tools · MCP 2025"), "{s}");
    assert!(s.contains("up 12m · 4 calls p50 36 ms"), "{s}");
    assert!(s.contains("fs restarting 1/5 · 0 tools"), "{s}");
    // Zoomed, the last error reads whole, with its time.
    press(&mut a, vec![Msg::char('z')]);
    let s = screen(&a);
    assert!(
        s.contains("1 restart · failed at 10:00:02: exited with status 1"),
        "{s}"
    );
    assert_eq!(crate::tui::ui::duration(3 * 3600 + 300), "3h 5m");
    // Calls that waited for the server's rate say so, with the rate.
    a.servers.list[0].throttled = 350;
    let s = screen(&a);
    assert!(s.contains("350 calls held to 100/s"), "{s}");
}

/// Detail says which client made a call and from where, how long the call waited for a person
/// apart from its own latency, where the person decided, and why a large result reached the
/// model whole.
#[test]
fn detail_shows_the_wait_apart_who_decided_and_why_a_result_passed_whole() {
    let mut a = started();
    let finished = super::tests::call(9, "sample_get_image", "passed", None, "model");
    press(
        &mut a,
        vec![Msg::event(Sequenced {
            seq: 90,
            event: Event::CallFinished(finished),
        })],
    );
    let d: String = a
        .detail
        .lines
        .iter()
        .map(|l| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
                + "\n"
        })
        .collect();
    assert!(
        d.contains("2300 ms (2000 ms waiting for approval, 300 ms the call)"),
        "{d}"
    );
    assert!(d.contains("at loom attach, pid 77 on /dev/pts/4"), "{d}");
    assert!(
        d.contains("client: claude-code 2.1 · HTTP from 127.0.0.1:53122"),
        "{d}"
    );
    assert!(
        d.contains("passed whole, not intercepted: non-text content"),
        "{d}"
    );
}

/// A prompt decided at another terminal goes away here, and the status line says who
/// decided and how.
#[test]
fn a_prompt_decided_elsewhere_says_where() {
    let mut a = started();
    press(&mut a, vec![approval(1)]);
    press(
        &mut a,
        vec![Msg::event(Sequenced {
            seq: 2000,
            event: Event::ApprovalSettled {
                approval: 1,
                decision: crate::types::events::Settlement::ApprovedOnce,
                by: Some("loom attach, pid 9 on /dev/pts/3".into()),
            },
        })],
    );
    assert_eq!(a.approval_view(), ApprovalView::None);
    let status = a.status.as_ref().map(|s| s.0.clone()).unwrap_or_default();
    assert_eq!(
        status,
        "sample_cancel_order #41: approved once at loom attach, pid 9 on /dev/pts/3"
    );
}

/// Every place a person types a line (the Traffic filter, the grid's search, the key menu's
/// search, the history browser, the export dialog's name) takes letters as text while a call
/// waits, and `ctrl-g` there opens the prompt (never typing a `g`).
#[test]
fn ctrl_g_opens_the_prompt_from_every_line_a_person_types() {
    let surfaces: Vec<(&str, Vec<Msg>)> = vec![
        ("traffic filter", vec![Msg::char('/')]),
        (
            "grid search",
            vec![
                Msg::char('5'),
                Msg::ctrl('e'),
                Msg::code(KeyCode::Esc),
                Msg::char('/'),
            ],
        ),
        ("key menu search", vec![Msg::char('?'), Msg::char('/')]),
        ("history browser", vec![Msg::code(KeyCode::F(8))]),
        (
            "export name",
            vec![
                Msg::char('5'),
                Msg::ctrl('e'),
                Msg::code(KeyCode::Esc),
                Msg::char('x'),
                Msg::code(KeyCode::Tab),
                Msg::code(KeyCode::Tab),
                Msg::code(KeyCode::Tab),
            ],
        ),
    ];
    for (name, open) in surfaces {
        let mut a = started();
        a.approvals.grace = Duration::ZERO;
        a.editor.area = tui_textarea::TextArea::new(vec!["SELECT 1".into()]);
        press(&mut a, open);
        assert!(a.typing(), "{name}: {}", screen(&a));
        let before = screen(&a);
        press(&mut a, vec![approval(1)]);
        assert_eq!(a.approval_view(), ApprovalView::Banner, "{name}");
        let reqs = sent(&mut a, typed("ad"));
        assert!(decisions(&reqs).is_empty(), "{name}: {reqs:?}");
        assert!(screen(&a).contains("ad"), "{name}: the letters are text");
        // A chord is never text: ctrl-x types nothing.
        let s = screen(&a);
        press(&mut a, vec![Msg::ctrl('x')]);
        assert_eq!(screen(&a), s, "{name}: ctrl-x typed something");
        // A character that needs AltGr arrives as itself, and is text.
        press(&mut a, vec![Msg::char('@')]);
        assert!(screen(&a).contains("ad@"), "{name}: @ is text");
        press(&mut a, vec![Msg::ctrl('g')]);
        let s = screen(&a);
        assert!(s.contains("approve a call?"), "{name}: {s}");
        let reqs = sent(&mut a, vec![Msg::char('a')]);
        assert_eq!(decisions(&reqs), vec![Decision::Once], "{name}");
        assert!(a.typing(), "{name}: still typing where it was");
        assert_ne!(screen(&a), before, "{name}");
    }
}

/// A prefilled string argument takes what is typed inside its quotes: typing right after
/// picking the tool, then `enter`, calls it with that text.
#[test]
fn typing_after_picking_a_tool_fills_its_first_string_argument() {
    let mut a = started();
    press(&mut a, vec![Msg::char(':')]);
    press(&mut a, typed("loom_query"));
    press(&mut a, vec![Msg::code(KeyCode::Enter)]);
    press(&mut a, typed("SELECT 1"));
    let reqs = sent(&mut a, vec![Msg::code(KeyCode::Enter)]);
    assert!(
        reqs.iter()
            .any(|r| matches!(r, Request::CallTool { name, arguments }
            if name == "loom_query" && arguments["sql"] == "SELECT 1")),
        "{reqs:?} {}",
        screen(&a)
    );
}

/// A status line fades by the runtime's tick: news after 8 s, an error after 20 s; the tick
/// is asked for only while there is one to fade, and a newer one starts its own time.
#[test]
fn status_messages_fade_news_soon_and_errors_later() {
    use std::time::Duration;
    let mut a = started();
    let t0 = crate::types::time::parse_iso("2026-11-30T10:10:00Z").unwrap();
    a.now_secs = t0;
    press(&mut a, vec![Msg::ctrl('t')]);
    assert_eq!(
        a.status.as_ref().map(|s| s.0.as_str()),
        Some("theme: light")
    );
    assert_eq!(a.tick_interval(), Some(Duration::from_secs(8)));
    a.now_secs = t0 + 7;
    press(&mut a, vec![Msg::Tick]);
    assert!(a.status.is_some(), "still shown at 7 s");
    assert_eq!(a.tick_interval(), Some(Duration::from_secs(1)));
    a.now_secs = t0 + 8;
    press(&mut a, vec![Msg::Tick]);
    assert_eq!(a.status, None, "gone at 8 s");
    assert_eq!(a.tick_interval(), None, "nothing left to tick for");

    // An error stays longer.
    press(&mut a, vec![Msg::char('5'), Msg::ctrl('e')]);
    assert_eq!(
        a.status.as_ref().map(|s| s.0.as_str()),
        Some("no statement under the cursor")
    );
    a.now_secs = t0 + 8 + 19;
    press(&mut a, vec![Msg::Tick]);
    assert!(a.status.is_some(), "an error is still shown at 19 s");
    a.now_secs = t0 + 8 + 20;
    press(&mut a, vec![Msg::Tick]);
    assert_eq!(a.status, None);

    // A session that ended stays said.
    press(&mut a, vec![Msg::SessionEnded]);
    a.now_secs += 600;
    press(&mut a, vec![Msg::Tick]);
    assert!(a.status.is_some());
}

/// The key bar and Detail offer only what works now: no `n`/`N` without a search, no
/// describe or query on parked text (they only open the pager, as `enter` does), and no
/// `o` to a dataset that left the session.
#[test]
fn hints_offer_only_what_works_in_the_state_shown() {
    let keys = |a: &super::app::App| screen(a).lines().last().unwrap_or("").to_owned();
    let mut a = started();
    a.size = (220, 60);
    run(&mut a, "SELECT * FROM sample_list_orders_1");
    a.focus = Pane::Results;
    let bar = keys(&a);
    assert!(
        bar.contains("/ search") && bar.contains("enter open"),
        "{bar}"
    );
    // After a failure the previous result stays on screen, and its keys with it.
    run(&mut a, "SELECT nope FROM t");
    a.focus = Pane::Results;
    let bar = keys(&a);
    assert!(bar.contains("/ search"), "{bar}");
    assert!(!bar.contains("next match"), "no search was made: {bar}");

    a.catalog.set_blobs(vec![crate::frontend::engine::BlobView {
        key: "a1b2c3d4e5f6".into(),
        summary: "logs".into(),
        chars: 2400,
        lines: 300,
        expires: "2026-11-30T11:00:00Z".into(),
        lineage: None,
    }]);
    press(&mut a, vec![Msg::char('4'), Msg::char(']'), Msg::char('j')]);
    let bar = keys(&a);
    assert!(bar.contains("enter read"), "{bar}");
    assert!(
        !bar.contains("describe") && !bar.contains("query it"),
        "{bar}"
    );

    // The call that made sample_list_orders_1, then the dataset is evicted.
    press(&mut a, vec![Msg::char('1'), Msg::char('j'), Msg::char('j')]);
    let s = screen(&a);
    assert!(s.contains("(o: go to it)"), "{s}");
    assert!(keys(&a).contains("o go to dataset"), "{}", keys(&a));
    press(
        &mut a,
        vec![Msg::event(crate::types::events::Sequenced {
            seq: 30,
            event: crate::types::events::Event::DatasetDropped {
                dataset: "sample_list_orders_1".into(),
                reason: crate::types::data::DropReason::Evicted,
            },
        })],
    );
    let s = screen(&a);
    assert!(!s.contains("go to it"), "{s}");
    assert!(s.contains("(evicted since)"), "{s}");
    assert!(!keys(&a).contains("go to dataset"), "{}", keys(&a));
    press(&mut a, vec![Msg::char('o')]);
    assert_eq!(a.focus, Pane::Traffic, "o goes nowhere");
    assert_eq!(
        a.status.as_ref().map(|s| s.0.as_str()),
        Some("sample_list_orders_1 was evicted to stay within memory_budget")
    );
}

/// A call that waits for a person's approval has not started: Traffic and Detail say it is
/// awaiting approval, not running, until it is decided.
#[test]
fn a_call_waiting_for_approval_reads_as_awaiting_approval() {
    let mut a = started();
    a.size = (160, 45);
    let t0 = crate::types::time::parse_iso("2026-11-30T10:10:00Z").unwrap();
    a.now_secs = t0 + 2;
    let mut running = crate::tui::tests::call(41, "sample_cancel_order", "running", None, "model");
    running.at = "2026-11-30T10:10:00Z".into();
    press(
        &mut a,
        vec![
            Msg::event(Sequenced {
                seq: 900,
                event: Event::CallStarted(running),
            }),
            approval(1),
        ],
    );
    let s = screen(&a);
    let row = s
        .lines()
        .find(|l| l.contains("sample_cancel_order"))
        .expect("the call in Traffic");
    assert!(row.contains("awaiting approval"), "{row}");
    assert!(!row.contains("running"), "{row}");
    assert!(
        s.contains("#41 model → sample/sample_cancel_order · awaiting approval ·"),
        "{s}"
    );
    assert!(s.contains("waiting 2 s"), "{s}");
    // Decided elsewhere: now it runs.
    press(
        &mut a,
        vec![Msg::event(Sequenced {
            seq: 2000,
            event: Event::ApprovalSettled {
                approval: 1,
                decision: crate::types::events::Settlement::ApprovedOnce,
                by: None,
            },
        })],
    );
    let s = screen(&a);
    assert!(!s.contains("awaiting approval"), "{s}");
    assert!(s.contains("sample_cancel_order · running ·"), "{s}");
    assert!(s.contains("2 s so far"), "{s}");
}
