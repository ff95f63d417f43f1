//! Typing in the workbench as a person does: every one-line field (the grid's search and
//! row filter, the Traffic filter, the palette's filter, the export file name) takes the same
//! keys to clear it, select it or delete a word; a recalled text arrives selected; the text
//! areas (the SQL editor) select all, clear, and never lose text to a stray line feed.

use super::app::{GridPrompt, Msg, Overlay, Pane};
use super::daily_tests::{sent, typed};
use super::tests::{press, screen, started};
use crate::frontend::engine::Request;
use crossterm::event::KeyCode;

fn run(a: &mut super::app::App, sql: &str) {
    press(a, vec![Msg::char('5')]);
    a.editor.area = tui_textarea::TextArea::new(vec![sql.to_owned()]);
    press(a, vec![Msg::ctrl('e')]);
    a.focus = Pane::Results;
}

fn prompt(a: &super::app::App) -> String {
    match &a.results.prompt {
        Some(GridPrompt::Search(t) | GridPrompt::Filter(t)) => t.to_string(),
        None => panic!("no prompt"),
    }
}

/// B5: `/` `weber` on one result, then a new result and `/` `77777`: the search is
/// “77777”, not “weber77777”; no stale `N` is offered; the same grid's last search comes back
/// selected (typing replaces it), and `ctrl-w`/`ctrl-u` work in the prompt.
#[test]
fn a_new_result_starts_without_the_old_search() {
    let mut a = started();
    a.size = (160, 45);
    run(&mut a, "SELECT * FROM small");
    press(&mut a, vec![Msg::char('/')]);
    press(&mut a, typed("weber"));
    press(&mut a, vec![Msg::code(KeyCode::Enter)]);
    assert_eq!(
        a.results.search.as_ref().map(|s| s.text.as_str()),
        Some("weber")
    );
    run(&mut a, "SELECT * FROM range(1000000)");
    assert!(a.results.search.is_none(), "the old search is gone");
    let keys = screen(&a);
    assert!(!keys.contains("previous match"), "{keys}");
    press(&mut a, vec![Msg::char('/')]);
    assert_eq!(prompt(&a), "");
    press(&mut a, typed("77777"));
    press(&mut a, vec![Msg::code(KeyCode::Enter)]);
    assert_eq!(
        a.results.search.as_ref().map(|s| s.text.as_str()),
        Some("77777")
    );
    // Recalled on the same grid: selected, so typing replaces it.
    press(&mut a, vec![Msg::char('/')]);
    assert!(screen(&a).contains("find: 77777"), "{}", screen(&a));
    press(&mut a, typed("12 34"));
    assert_eq!(prompt(&a), "12 34");
    press(&mut a, vec![Msg::ctrl('w')]);
    assert_eq!(prompt(&a), "12 ");
    press(&mut a, vec![Msg::ctrl('u')]);
    assert_eq!(prompt(&a), "");
    press(&mut a, typed("ab"));
    press(&mut a, vec![Msg::ctrl('a'), Msg::code(KeyCode::Backspace)]);
    assert_eq!(prompt(&a), "");
}

/// The same keys in the other one-line fields: the Traffic filter and the palette's filter.
#[test]
fn every_filter_clears_with_one_key() {
    let mut a = started();
    press(&mut a, vec![Msg::char('1'), Msg::char('/')]);
    press(&mut a, typed("sample list"));
    press(&mut a, vec![Msg::ctrl('w')]);
    assert_eq!(a.traffic.filter.as_str(), "sample ");
    press(&mut a, vec![Msg::ctrl('u')]);
    assert_eq!(a.traffic.filter.as_str(), "");
    press(&mut a, vec![Msg::code(KeyCode::Esc)]);
    press(&mut a, vec![Msg::char(':')]);
    press(&mut a, typed("ordrs"));
    press(
        &mut a,
        vec![
            Msg::code(KeyCode::Left),
            Msg::code(KeyCode::Left),
            Msg::char('e'),
        ],
    );
    let Overlay::Palette(p) = &a.overlay else {
        panic!("the palette")
    };
    assert_eq!(p.filter.as_str(), "orders");
    press(&mut a, vec![Msg::ctrl('a'), Msg::char('x')]);
    let Overlay::Palette(p) = &a.overlay else {
        panic!("the palette")
    };
    assert_eq!(p.filter.as_str(), "x");
}

/// Annoyance 1: the export name is proposed from what the query read, selected, so typing
/// replaces it (not 21 backspaces); the cursor keys move in it.
#[test]
fn the_export_name_is_proposed_selected_and_edited_with_the_line_keys() {
    let mut a = started();
    a.size = (160, 45);
    run(
        &mut a,
        "SELECT * FROM sample_list_orders_1 WHERE status = 'paid'",
    );
    press(&mut a, vec![Msg::char('x')]);
    let s = screen(&a);
    assert!(
        s.contains("/demo/exports/sample_list_orders_1-result.csv"),
        "{s}"
    );
    // Tab to the name (format, delimiter, header, name); typing replaces it.
    press(
        &mut a,
        vec![
            Msg::code(KeyCode::Tab),
            Msg::code(KeyCode::Tab),
            Msg::code(KeyCode::Tab),
        ],
    );
    press(&mut a, typed("paid orders"));
    press(
        &mut a,
        vec![Msg::code(KeyCode::Left), Msg::code(KeyCode::Left)],
    );
    press(&mut a, vec![Msg::ctrl('k')]);
    press(&mut a, vec![Msg::char('X')]);
    let reqs = sent(&mut a, vec![Msg::code(KeyCode::Enter)]);
    let Some(Request::Export { options, .. }) = reqs.first() else {
        panic!("{reqs:?}")
    };
    assert_eq!(options.filename.as_deref(), Some("paid ordeX.csv"));
}

/// Annoyance 2 and the `ctrl-j` report: a stray line feed (ctrl-j) starts a line instead of
/// wiping the one typed; select all then backspace clears the editor, and one undo brings it
/// back; `?` lists those keys (generated from the keymap).
#[test]
fn the_editor_selects_all_clears_and_keeps_text_on_a_line_feed() {
    let mut a = started();
    a.size = (160, 45);
    press(&mut a, vec![Msg::char('5')]);
    press(&mut a, typed("SELECT 'taband"));
    press(&mut a, vec![Msg::ctrl('j')]);
    press(&mut a, typed("x"));
    assert_eq!(a.editor.text(), "SELECT 'taband\nx");
    for c in ['d', 'v'] {
        press(&mut a, vec![Msg::ctrl(c)]);
    }
    assert_eq!(
        a.editor.text(),
        "SELECT 'taband\nx",
        "no hidden chord edits"
    );
    press(&mut a, vec![Msg::ctrl('a'), Msg::code(KeyCode::Backspace)]);
    assert_eq!(a.editor.text(), "");
    press(&mut a, vec![Msg::ctrl('u')]);
    assert_eq!(a.editor.text(), "SELECT 'taband\nx");
    press(&mut a, vec![Msg::code(KeyCode::F(1))]);
    let s = screen(&a);
    for want in [
        "ctrl-a",
        "select all",
        "ctrl-j",
        "new line",
        "ctrl-k",
        "alt-backspace",
    ] {
        assert!(s.contains(want), "{want} not in ?: {s}");
    }
}
