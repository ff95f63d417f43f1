//! Workbench tests of the editor's SQL helpers (completion, history, the statement under the
//! cursor, error positions), the palette's argument checks, and replies that fail by kind.
//! The fixtures and helpers are the ones `tests.rs` drives the whole workbench with.

use super::app::{Msg, Pane, error_position, statement_at, validate_arguments};
use super::tests::{fixture, press, started};
use crate::frontend::engine::{EngineError, Request};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

#[test]
fn completion_offers_datasets_columns_and_keywords() {
    let mut a = started();
    press(&mut a, vec![Msg::char('5')]);
    for c in "SELECT * FROM sample_list_o".chars() {
        press(&mut a, vec![Msg::char(c)]);
    }
    press(&mut a, vec![Msg::ctrl(' ')]);
    assert_eq!(
        a.editor.area.lines()[0],
        "SELECT * FROM sample_list_orders_1"
    );
    for c in " WHERE cust".chars() {
        press(&mut a, vec![Msg::char(c)]);
    }
    press(&mut a, vec![Msg::ctrl(' ')]);
    assert!(
        a.editor.area.lines()[0].ends_with("WHERE customer_id"),
        "{}",
        a.editor.area.lines()[0]
    );
    // The call log's table and its columns are always offered.
    a.editor.area = tui_textarea::TextArea::default();
    for c in "SELECT tokens_o".chars() {
        press(&mut a, vec![Msg::char(c)]);
    }
    press(&mut a, vec![Msg::ctrl(' ')]);
    for c in " FROM loom_ca".chars() {
        press(&mut a, vec![Msg::char(c)]);
    }
    press(&mut a, vec![Msg::ctrl(' ')]);
    assert_eq!(
        a.editor.area.lines()[0],
        "SELECT tokens_out FROM loom_calls"
    );
}

#[test]
fn history_walks_back_and_forth() {
    let mut a = started();
    a.editor.area = tui_textarea::TextArea::new(vec!["SELECT 1".into()]);
    press(&mut a, vec![Msg::char('5'), Msg::ctrl('e')]);
    a.editor.area = tui_textarea::TextArea::new(vec!["SELECT 2".into()]);
    press(&mut a, vec![Msg::ctrl('e')]);
    let up = Msg::Key(KeyEvent::new(KeyCode::Up, KeyModifiers::CONTROL));
    press(&mut a, vec![up]);
    assert_eq!(a.editor.area.lines()[0], "SELECT 2");
    let up = Msg::Key(KeyEvent::new(KeyCode::Up, KeyModifiers::CONTROL));
    press(&mut a, vec![up]);
    assert_eq!(a.editor.area.lines()[0], "SELECT 1");
}

#[test]
fn statement_under_the_cursor() {
    let text = "SELECT 1;\nSELECT ';' AS x; -- a ; comment\n\nFROM t";
    assert_eq!(statement_at(text, (0, 3)).0, "SELECT 1");
    assert_eq!(
        statement_at(text, (1, 4)),
        ("SELECT ';' AS x".into(), (1, 0))
    );
    assert_eq!(statement_at(text, (3, 2)).0, "-- a ; comment\n\nFROM t");
    assert_eq!(statement_at("SELECT 1;\n", (1, 0)).0, "SELECT 1");
}

/// Between two statements the cursor runs the one a person means: the one a `;` just ended
/// (only spaces between them on the line), and on blank lines the previous one unless a
/// statement follows before the next `;`.
#[test]
fn the_statement_a_semicolon_ends_runs_from_right_after_it() {
    let mut a = started();
    press(&mut a, vec![Msg::char('5')]);
    press(
        &mut a,
        vec![Msg::Paste("SELECT * FROM t;\nSELECT 2;".into())],
    );
    a.editor
        .area
        .move_cursor(tui_textarea::CursorMove::Jump(0, 16));
    let reqs = a.update(Msg::ctrl('e'));
    let sql: Vec<&str> = reqs
        .iter()
        .filter_map(|(_, r)| match r {
            Request::Query { sql } => Some(sql.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(sql, ["SELECT * FROM t"]);

    let text = "SELECT 1;   \nSELECT 2;\n\n\nSELECT 3; SELECT 4;\n\n";
    let at = |row, col| statement_at(text, (row, col)).0;
    assert_eq!(at(0, 9), "SELECT 1", "right after the `;`");
    assert_eq!(at(0, 12), "SELECT 1", "spaces after the `;`");
    assert_eq!(at(1, 0), "SELECT 2", "at the start of the next line");
    assert_eq!(at(2, 0), "SELECT 3", "a blank line, a statement follows");
    assert_eq!(at(3, 0), "SELECT 3");
    assert_eq!(
        at(4, 10),
        "SELECT 4",
        "at the start of the next statement on the line"
    );
    assert_eq!(at(4, 9), "SELECT 3", "touching the `;`");
    assert_eq!(at(5, 0), "SELECT 4", "blank lines up to the end");
    assert_eq!(at(6, 0), "SELECT 4");
    assert_eq!(statement_at(text, (0, 12)).1, (0, 0));
    assert_eq!(statement_at(text, (2, 0)).1, (4, 0));
    assert_eq!(statement_at(";  ", (0, 2)).0, "", "nothing before the `;`");
}

#[test]
fn error_positions_from_duckdb_messages() {
    let m = "Parser Error: syntax error at or near \"FORM\"\n\nLINE 1: SELECT * FORM x\n                 ^";
    assert_eq!(error_position(m, "SELECT * FORM x"), Some((0, 9)));
    assert_eq!(error_position("no position here", ""), None);
}

#[test]
fn arguments_are_checked_against_the_schema() {
    let tool = json!({ "inputSchema": { "type": "object", "properties": { "n": { "type": "integer" }, "mode": { "type": "string", "enum": ["a", "b"] } }, "required": ["n"] } });
    assert!(validate_arguments(&tool, "{\"n\": 1}").is_ok());
    assert_eq!(
        validate_arguments(&tool, "{}").unwrap_err().to_string(),
        "missing required argument `n`"
    );
    assert!(
        validate_arguments(&tool, "{\"n\": 1, \"mode\": \"c\"}")
            .unwrap_err()
            .to_string()
            .contains("one of")
    );
    assert!(
        validate_arguments(&tool, "[1]")
            .unwrap_err()
            .to_string()
            .contains("object")
    );
    assert!(
        validate_arguments(&tool, "{n:1}")
            .unwrap_err()
            .to_string()
            .starts_with("not valid JSON")
    );
}

/// A result the session no longer keeps is known by the error's kind, not its words: the grid
/// closes and says so. A failure of another kind that happens to use the same words does not.
#[test]
fn a_dropped_result_is_known_by_its_kind() {
    for (error, closes) in [
        (EngineError::Unknown("gone".into()), true),
        (
            EngineError::Dropped("this result was dropped when its workbench closed".into()),
            true,
        ),
        (
            EngineError::Failed("no dataset named `_loom_result_9`".into()),
            false,
        ),
    ] {
        let mut a = started();
        a.editor.area = tui_textarea::TextArea::new(vec!["SELECT 1".into()]);
        a.focus = Pane::Editor;
        let mut queue = a.update(Msg::ctrl('e'));
        let (t, q) = queue.pop().expect("the query is sent");
        assert!(matches!(q, Request::Query { .. }));
        let reply = fixture(&q).map_err(EngineError::from);
        let rows = a.update(Msg::Reply(t, reply));
        let (t, r) = rows
            .into_iter()
            .find(|(_, r)| matches!(r, Request::Rows { .. }))
            .expect("a page is asked for");
        assert!(matches!(r, Request::Rows { .. }));
        a.update(Msg::Reply(t, Err(error.clone())));
        assert_eq!(a.results.grid.is_none(), closes, "{error:?}");
        assert_eq!(
            a.status
                .as_ref()
                .map(|s| s.0.contains("was dropped") || s.0.contains("no longer kept")),
            Some(closes),
            "{error:?}: {:?}",
            a.status
        );
    }
}

/// A 10,000-character line costs syntect nothing per keystroke (it is lexed in one linear
/// pass), a key in an ordinary line re-parses that line alone, and a burst of keys between
/// two frames is highlighted once.
#[test]
fn a_keystroke_reparses_a_bounded_amount_of_text() {
    let mut a = started();
    press(&mut a, vec![Msg::char('5')]);
    let mut text: String = (0..200)
        .map(|i| format!("SELECT {i} AS n, 'x' FROM t; -- line {i}\n"))
        .collect();
    let list: Vec<String> = (0..2000).map(|i| i.to_string()).collect();
    text.push_str(&format!(
        "SELECT * FROM t WHERE id IN ({})\nORDER BY 1;",
        list.join(", ")
    ));
    press(&mut a, vec![Msg::Paste(text)]);
    let pasted = (a.editor.colours.parsed_lines, a.editor.colours.parsed_bytes);
    assert!(pasted.0 <= 202, "{pasted:?}");
    assert!(
        pasted.1 < 10_000,
        "the long line never reaches syntect: {pasted:?}"
    );

    // Into the long line: nothing is parsed again.
    press(&mut a, vec![Msg::code(KeyCode::Up), Msg::char('9')]);
    assert_eq!(a.editor.area.cursor().0, 200);
    assert!(a.editor.area.lines()[200].chars().count() > 10_000);
    assert_eq!(
        (a.editor.colours.parsed_lines, a.editor.colours.parsed_bytes),
        pasted
    );

    // Into an ordinary line: that line only.
    a.editor
        .area
        .move_cursor(tui_textarea::CursorMove::Jump(0, 0));
    let before = a.editor.colours.parsed_lines;
    press(&mut a, vec![Msg::char('x')]);
    assert_eq!(a.editor.area.cursor(), (0, 1));
    assert_eq!(a.editor.colours.parsed_lines, before + 1);

    // Fifty keys in one burst: one highlight when the frame is drawn.
    let before = a.editor.colours.parsed_lines;
    for _ in 0..50 {
        let reqs = a.update(Msg::char('y'));
        assert!(reqs.is_empty());
    }
    assert_eq!(a.editor.colours.parsed_lines, before, "not per key");
    a.prepare_frame();
    assert_eq!(a.editor.colours.parsed_lines, before + 1);
}

/// `ctrl-s` on arguments that are not JSON, or fail the schema, says so right under them and
/// on the status line, marks where the JSON broke, and sends nothing.
#[test]
fn ctrl_s_on_bad_arguments_shows_why_under_them() {
    let mut a = started();
    press(&mut a, vec![Msg::char(':')]);
    for c in "orders".chars() {
        press(&mut a, vec![Msg::char(c)]);
    }
    press(&mut a, vec![Msg::code(KeyCode::Enter)]);
    // The cursor waits after the prefilled `0`: `0x` is not JSON.
    let mut reqs = Vec::new();
    for m in [Msg::char('x'), Msg::ctrl('s')] {
        let out = a.update(m);
        reqs.extend(out.iter().map(|(_, r)| r.clone()));
        super::tests::answer(&mut a, out);
        a.prepare_frame();
    }
    assert!(
        !reqs.iter().any(|r| matches!(r, Request::CallTool { .. })),
        "{reqs:?}"
    );
    let (status, _) = a.status.clone().expect("a status");
    assert!(
        status.starts_with("not sent to sample_list_orders: not valid JSON"),
        "{status}"
    );
    let s = super::tests::screen(&a);
    let lines: Vec<&str> = s.lines().collect();
    let brace = lines
        .iter()
        .rposition(|l| l.contains("│}"))
        .expect("the arguments' last line");
    assert!(
        lines[brace + 1].contains("✗ not valid JSON: expected `,` or `}` at line 2 column 13"),
        "right under the arguments:\n{s}"
    );
    match &a.overlay {
        super::app::Overlay::Palette(p) => assert_eq!(p.error_at, Some((1, 12))),
        _ => panic!("the palette stays open"),
    }
    // A wrong type: the schema's word, in the same place.
    press(
        &mut a,
        vec![Msg::code(KeyCode::Backspace), Msg::code(KeyCode::Backspace)],
    );
    for c in "\"5\"".chars() {
        press(&mut a, vec![Msg::char(c)]);
    }
    press(&mut a, vec![Msg::ctrl('s')]);
    let s = super::tests::screen(&a);
    assert!(s.contains("✗ argument `limit` must be integer"), "{s}");
    let (status, _) = a.status.clone().expect("a status");
    assert_eq!(
        status,
        "not sent to sample_list_orders: argument `limit` must be integer"
    );
    // Report item 17: the reason goes with the arguments it was about, the palette's line and
    // the status line both (esc back to the list, esc again closes the palette).
    press(&mut a, vec![Msg::code(KeyCode::Esc)]);
    assert!(a.status.is_none(), "{:?}", a.status);
    assert!(!super::tests::screen(&a).contains("not sent to"));
    press(&mut a, vec![Msg::code(KeyCode::Esc)]);
    assert!(matches!(a.overlay, super::app::Overlay::None));
}

/// A status line that is not the palette's stays when the palette closes.
#[test]
fn closing_the_palette_keeps_other_news() {
    let mut a = started();
    a.set_status("sample_list_orders done", super::app::StatusKind::Success);
    press(&mut a, vec![Msg::char(':'), Msg::code(KeyCode::Esc)]);
    assert!(matches!(a.overlay, super::app::Overlay::None));
    assert_eq!(
        a.status.as_ref().map(|s| s.0.as_str()),
        Some("sample_list_orders done")
    );
}

/// With wide characters and emoji before it, the editor marks the very character Results
/// names (a character column), not the one at that byte.
#[test]
fn the_error_mark_lands_on_the_character_results_names() {
    let mut a = started();
    a.size = (160, 45);
    let sql = "SELECT '日本語テキスト🎉🎉' AS 名前, 'x' AS y FROM range(3) t(i) WHERE nosuch = 1";
    press(
        &mut a,
        vec![Msg::char('5'), Msg::Paste(sql.into()), Msg::ctrl('e')],
    );
    let e = a.results.query_error.as_ref().expect("an error");
    assert_eq!(e.at, Some((0, 60)), "{}", e.message);
    let s = super::tests::screen(&a);
    assert!(s.contains("at line 1, column 61"), "{s}");
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(160, 45)).unwrap();
    t.draw(|f| super::ui::draw(f, &a)).unwrap();
    let buf = t.backend().buffer();
    let r =
        super::ui::layout(ratatui::layout::Rect::new(0, 0, 160, 45), a.plan()).rect(Pane::Editor);
    let marked: Vec<String> = (r.y + 1..r.y + r.height - 1)
        .flat_map(|y| (r.x + 1..r.x + r.width - 1).map(move |x| (x, y)))
        .filter(|&(x, y)| buf[(x, y)].fg == a.theme.error.fg.expect("an error colour"))
        .filter(|&(x, y)| buf[(x, y)].symbol() != " ")
        .map(|(x, y)| buf[(x, y)].symbol().to_owned())
        .collect();
    assert_eq!(marked, ["n"], "the `n` of nosuch, not the `R` of FROM");
}

/// A cancelled query is said as cancelled, not failed, and its tab is not marked failed.
#[test]
fn a_cancelled_query_is_not_a_failure() {
    let mut a = started();
    a.editor.area = tui_textarea::TextArea::new(vec!["SELECT 1".into()]);
    a.focus = Pane::Editor;
    let mut queue = a.update(Msg::ctrl('e'));
    let (t, q) = queue.pop().expect("the query is sent");
    assert!(matches!(q, Request::Query { .. }));
    a.update(Msg::Reply(
        t,
        Err(EngineError::Cancelled("the query was cancelled".into())),
    ));
    assert_eq!(
        a.status.as_ref().map(|s| s.0.as_str()),
        Some("query cancelled")
    );
    assert!(a.results.query_error.as_ref().is_some_and(|e| e.cancelled));
    assert!(a.editor.tab_labels().iter().all(|l| !l.failed));
    let s = super::tests::screen(&a);
    assert!(
        s.contains("query cancelled") && !s.contains("query failed"),
        "{s}"
    );
}

/// ctrl-home and ctrl-end reach the start and the end of the whole text.
#[test]
fn ctrl_home_and_ctrl_end_go_to_the_ends_of_the_text() {
    use crossterm::event::{KeyEvent, KeyModifiers};
    let mut a = started();
    a.editor.area = tui_textarea::TextArea::new(vec![
        "SELECT 1;".into(),
        "SELECT 2;".into(),
        "SELECT 33;".into(),
    ]);
    a.focus = Pane::Editor;
    a.editor
        .area
        .move_cursor(tui_textarea::CursorMove::Jump(1, 3));
    a.update(Msg::Key(KeyEvent::new(KeyCode::End, KeyModifiers::CONTROL)));
    assert_eq!(a.editor.area.cursor(), (2, 10));
    a.update(Msg::Key(KeyEvent::new(
        KeyCode::Home,
        KeyModifiers::CONTROL,
    )));
    assert_eq!(a.editor.area.cursor(), (0, 0));
}

/// Annoyance 14: a draft typed into a tab is in `editor-tabs.json` a few seconds later, not
/// only on quit, a tab switch or a run (a crash or `kill -9` then loses little).
#[test]
fn a_draft_is_saved_a_few_seconds_after_it_is_typed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("editor-tabs.json");
    let mut a = started();
    a.editor.tabs.file = Some(file.clone());
    a.now_secs = 1_000;
    a.focus = Pane::Editor;
    for c in "SELECT 42".chars() {
        a.update(Msg::char(c));
    }
    assert!(!file.exists(), "not at once, on every key");
    assert!(a.tick_interval().is_some(), "a tick is due to save it");
    a.now_secs = 1_000 + super::app::DRAFT_SAVE_SECS;
    a.update(Msg::Tick);
    let saved = std::fs::read_to_string(&file).expect("saved");
    assert!(saved.contains("SELECT 42"), "{saved}");
    assert_eq!(a.tick_interval(), None, "nothing more to save");
}
