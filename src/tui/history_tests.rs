//! Workbench tests of the query history and the editor's tabs, as a person uses them all day:
//! every statement run is recorded with its time, duration and rows or error; the history
//! browser filters, selects, puts a statement in the editor or runs it, never losing the
//! draft; tabs keep their own text and error marks, and come back after a restart.

use super::app::{App, HistoryEntry, Msg, Outcome, Overlay, Pane, StatusKind};
use super::clipboard::Clipboard;
use super::keymap::Action;
use super::tests::{answer, press, screen, started};
use super::{TuiOptions, build_app};
use crate::frontend::engine::Request;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::path::Path;

/// 2026-11-30T10:00:00Z.
const TEN_AM: u64 = 1_796_032_800;

fn typed(text: &str) -> Vec<Msg> {
    text.chars().map(Msg::char).collect()
}

fn alt(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT))
}

/// A started workbench whose history (and tabs) live in `dir`, as `loom tui` builds it.
fn with_files(dir: &Path) -> App {
    let opts = TuiOptions {
        theme: "dark".into(),
        theme_overrides: None,
        keymap: None,
        title: "loom tui".into(),
        history_file: Some(dir.join("sql-history.jsonl")),
        attached: false,
    };
    let mut a = build_app(&opts, Clipboard::memory()).expect("app");
    a.size = (160, 45);
    a.now_secs = TEN_AM;
    let reqs = a.start();
    answer(&mut a, reqs);
    a
}

/// Writes `sql` in the editor (focused) and runs it with ctrl-e.
fn run(a: &mut App, sql: &str) {
    a.focus = Pane::Editor;
    a.editor.area = tui_textarea::TextArea::new(vec![sql.to_owned()]);
    press(a, vec![Msg::ctrl('e')]);
}

fn status(a: &App) -> String {
    a.status.as_ref().map(|s| s.0.clone()).unwrap_or_default()
}

fn records(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("sql-history.jsonl"))
        .expect("history file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object a line"))
        .collect()
}

#[test]
fn each_statement_run_is_recorded_with_time_duration_and_rows_or_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut a = with_files(dir.path());
    run(&mut a, "SELECT * FROM small");
    a.now_secs = TEN_AM + 60;
    run(&mut a, "SELECT nope FROM t");
    let h = &a.editor.history;
    assert_eq!(h.len(), 2);
    assert_eq!(
        (h[0].at, h[0].millis, &h[0].outcome),
        (Some(TEN_AM), Some(2), &Outcome::Rows(450))
    );
    assert_eq!(h[1].at, Some(TEN_AM + 60));
    assert!(h[1].millis.is_some(), "a failure is timed too");
    let Outcome::Failed(e) = &h[1].outcome else {
        panic!("{:?}", h[1].outcome)
    };
    assert!(e.contains("Binder Error") && !e.contains('\n'), "{e}");
    // One JSON object a line, as written.
    let r = records(dir.path());
    assert_eq!(r.len(), 2);
    assert_eq!(r[0]["sql"], "SELECT * FROM small");
    assert_eq!(r[0]["at"], "2026-11-30T10:00:00Z");
    assert_eq!(
        (r[0]["ms"].as_u64(), r[0]["rows"].as_u64()),
        (Some(2), Some(450))
    );
    assert!(r[1]["error"].as_str().is_some_and(|e| e.contains("Binder")));
    assert!(r[1].get("rows").is_none());
    // A restart reads them back, with the outcomes.
    let b = with_files(dir.path());
    assert_eq!(&b.editor.history, h);
}

#[test]
fn an_old_history_file_still_loads_and_broken_lines_are_skipped() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("sql-history.jsonl"),
        b"\"SELECT 1\"\n\xff\xfe garbage\n{\"sql\": 3}\n\"SELECT 2\"\n",
    )
    .expect("write");
    let mut a = with_files(dir.path());
    let sqls: Vec<&str> = a.editor.history.iter().map(|e| e.sql.as_str()).collect();
    assert_eq!(sqls, ["SELECT 1", "SELECT 2"]);
    // ctrl-up walks them as before, and the browser shows them without a time.
    press(&mut a, vec![Msg::char('5'), Msg::ctrl_code(KeyCode::Up)]);
    assert_eq!(a.editor.text(), "SELECT 2");
    press(&mut a, vec![Msg::ctrl('r')]);
    let s = screen(&a);
    assert!(s.contains("query history · 2 of 2"), "{s}");
}

#[test]
fn the_browser_lists_newest_first_filters_any_case_and_says_n_of_m() {
    let mut a = started();
    a.size = (160, 45);
    a.now_secs = TEN_AM;
    for sql in [
        "SELECT * FROM small",
        "SELECT nope FROM t",
        "SELECT status FROM sales",
    ] {
        run(&mut a, sql);
    }
    press(&mut a, vec![Msg::ctrl('r')]);
    assert!(matches!(a.overlay, Overlay::History(_)));
    let s = screen(&a);
    assert!(s.contains("query history · 3 of 3"), "{s}");
    let newest = s.find("SELECT status FROM sales").expect("listed");
    let oldest = s.find("SELECT * FROM small").expect("listed");
    assert!(newest < oldest, "newest first: {s}");
    assert!(
        s.contains("10:00") && s.contains("2 ms") && s.contains("450"),
        "{s}"
    );
    assert!(s.contains("error"), "{s}");
    // A leading `/` is the search key; typing filters, any case.
    press(&mut a, vec![Msg::char('/')]);
    press(&mut a, typed("FROM S"));
    let s = screen(&a);
    assert!(s.contains("query history · 2 of 3"), "{s}");
    assert!(!s.contains("SELECT nope"), "{s}");
    press(&mut a, typed("mall"));
    assert!(screen(&a).contains("1 of 3"));
    press(&mut a, typed("zzz"));
    let s = screen(&a);
    assert!(
        s.contains("0 of 3") && s.contains("backspace widens"),
        "{s}"
    );
    // Enter with nothing selected leaves the editor alone.
    let before = a.editor.text();
    press(&mut a, vec![Msg::code(KeyCode::Enter)]);
    assert_eq!(a.editor.text(), before);
    // esc closes.
    press(&mut a, vec![Msg::code(KeyCode::Esc)]);
    assert!(matches!(a.overlay, Overlay::None));
}

#[test]
fn enter_puts_the_statement_in_the_editor_and_the_draft_is_never_lost() {
    let mut a = started();
    run(&mut a, "SELECT * FROM small");
    run(&mut a, "SELECT 2");
    a.editor.area = tui_textarea::TextArea::new(vec!["SELECT 'my draft'".to_owned()]);
    press(
        &mut a,
        vec![
            Msg::ctrl('r'),
            Msg::code(KeyCode::Down),
            Msg::code(KeyCode::Enter),
        ],
    );
    assert!(matches!(a.overlay, Overlay::None));
    assert_eq!(a.focus, Pane::Editor);
    assert_eq!(a.editor.text(), "SELECT * FROM small");
    // The draft is the newest history entry (kept, not run), and undo brings it back too.
    let last = a.editor.history.last().expect("entry");
    assert_eq!(
        (last.sql.as_str(), &last.outcome),
        ("SELECT 'my draft'", &Outcome::Kept)
    );
    press(&mut a, vec![Msg::ctrl('u'), Msg::ctrl('u')]);
    assert_eq!(a.editor.text(), "SELECT 'my draft'");
    // Redo (alt-r, as ctrl-r now opens the history) brings the statement back.
    assert!(a.offers(Action::Redo));
    press(&mut a, vec![alt('r'), alt('r')]);
    assert_eq!(a.editor.text(), "SELECT * FROM small");
}

#[test]
fn ctrl_e_in_the_browser_runs_the_statement_at_once() {
    let mut a = started();
    run(&mut a, "SELECT * FROM small");
    run(&mut a, "SELECT 2");
    a.focus = Pane::Traffic;
    // f8 opens it from any pane.
    press(
        &mut a,
        vec![Msg::Key(KeyEvent::new(KeyCode::F(8), KeyModifiers::NONE))],
    );
    press(&mut a, typed("small"));
    let reqs = a.update(Msg::ctrl('e'));
    assert!(
        reqs.iter()
            .any(|(_, r)| matches!(r, Request::Query { sql } if sql == "SELECT * FROM small")),
        "{reqs:?}"
    );
    answer(&mut a, reqs);
    assert_eq!(a.focus, Pane::Editor);
    assert_eq!(a.editor.text(), "SELECT * FROM small");
    assert_eq!(
        a.editor.history.last().map(|e| e.outcome.clone()),
        Some(Outcome::Rows(450))
    );
    // Running it again made it the newest; the older runs stay where they were.
    let sqls: Vec<&str> = a.editor.history.iter().map(|e| e.sql.as_str()).collect();
    assert_eq!(
        sqls,
        ["SELECT * FROM small", "SELECT 2", "SELECT * FROM small"]
    );
}

#[test]
fn an_empty_history_says_how_to_fill_it() {
    let mut a = started();
    a.size = (160, 45);
    press(&mut a, vec![Msg::char('5'), Msg::ctrl('r')]);
    let s = screen(&a);
    assert!(s.contains("query history · 0 of 0"), "{s}");
    assert!(s.contains("No queries yet."), "{s}");
    assert!(s.contains("run it with ctrl-e"), "{s}");
    assert!(!a.offers(Action::UseQuery));
}

#[test]
fn statements_are_drawn_on_one_line_escaped_and_cut_on_character_boundaries() {
    let mut a = started();
    a.size = (80, 24);
    let long = format!("SELECT '表{}'\n\tFROM t\u{1b}[2J", "漢字".repeat(60));
    a.editor.history.push(HistoryEntry {
        sql: long,
        at: Some(TEN_AM - 86_400 * 3),
        millis: Some(75_000),
        outcome: Outcome::Rows(1_234_567),
    });
    a.now_secs = TEN_AM;
    press(&mut a, vec![Msg::char('5'), Msg::ctrl('r')]);
    let s = screen(&a);
    assert!(s.contains("Nov 27 10:00"), "{s}");
    assert!(s.contains("1.2M") && s.contains("1m"), "{s}");
    let row = s.lines().find(|l| l.contains("SELECT '表")).expect("row");
    assert!(row.contains('…'), "{row}");
    assert!(!s.contains('\u{1b}') && !s.contains('\t'), "{s:?}");
}

#[test]
fn tabs_keep_their_own_text_and_error_marks() {
    let mut a = started();
    a.size = (160, 45);
    run(&mut a, "SELECT nope FROM t");
    assert!(a.editor.error.is_some());
    press(&mut a, vec![Msg::ctrl('n')]);
    assert_eq!(a.editor.tabs.count(), 2);
    assert_eq!(a.editor.text(), "", "a new tab is empty");
    assert!(a.editor.error.is_none(), "the error is the other tab's");
    press(&mut a, typed("SELECT 2"));
    let s = screen(&a);
    assert!(s.contains("SQL 1! 2*"), "{s}");
    assert!(!s.contains("error — see Results"), "{s}");
    // alt-1 and back with ctrl-pagedown: each tab as it was left.
    press(&mut a, vec![alt('1')]);
    assert_eq!(a.editor.text(), "SELECT nope FROM t");
    assert_eq!(a.editor.error.and_then(|e| e.at), Some((0, 7)));
    assert!(screen(&a).contains("error — see Results"));
    press(&mut a, vec![Msg::ctrl_code(KeyCode::PageDown)]);
    assert_eq!(a.editor.text(), "SELECT 2");
    press(&mut a, vec![Msg::ctrl_code(KeyCode::PageDown)]);
    assert_eq!(a.editor.tabs.current(), 0, "round the end");
    // Each tab undoes its own edits.
    press(&mut a, vec![alt('2')]);
    for _ in 0..10 {
        press(&mut a, vec![Msg::ctrl('u')]);
    }
    assert_eq!(a.editor.text(), "");
    press(&mut a, vec![alt('1')]);
    assert_eq!(a.editor.text(), "SELECT nope FROM t");
    // A statement from the second tab reaches Results as any other, and clears only its mark.
    press(&mut a, vec![alt('2')]);
    a.editor.area = tui_textarea::TextArea::new(vec!["SELECT * FROM small".to_owned()]);
    press(&mut a, vec![Msg::ctrl('e')]);
    assert_eq!(a.results.grid.as_ref().map(|g| g.result.rows), Some(450));
    let marks: Vec<bool> = a.editor.tab_labels().iter().map(|t| t.failed).collect();
    assert_eq!(marks, [true, false]);
    // No tab 5: said, nothing changes.
    press(&mut a, vec![alt('5')]);
    assert!(status(&a).contains("no tab 5"), "{}", status(&a));
}

#[test]
fn a_failure_is_marked_on_the_tab_that_ran_it() {
    let mut a = started();
    a.focus = Pane::Editor;
    a.editor.area = tui_textarea::TextArea::new(vec!["SELECT nope FROM t".to_owned()]);
    // Sent from tab 1; the answer comes while tab 2 is in view.
    let reqs = a.update(Msg::ctrl('e'));
    press(&mut a, vec![Msg::ctrl('n')]);
    answer(&mut a, reqs);
    assert!(a.editor.error.is_none());
    assert_eq!(
        a.editor
            .tab_labels()
            .iter()
            .map(|t| t.failed)
            .collect::<Vec<_>>(),
        [true, false]
    );
}

#[test]
fn closing_a_tab_with_unsaved_text_asks_and_keeps_the_text_in_the_history() {
    let mut a = started();
    press(&mut a, vec![Msg::char('5'), Msg::ctrl('n')]);
    press(&mut a, typed("SELECT 'unsaved'"));
    press(&mut a, vec![Msg::ctrl('w')]);
    let Overlay::Confirm(c) = &a.overlay else {
        panic!("asks first")
    };
    assert!(c.question.contains("not in the history"), "{}", c.question);
    press(&mut a, vec![Msg::char('n')]);
    assert_eq!(a.editor.tabs.count(), 2, "no keeps it open");
    press(&mut a, vec![Msg::ctrl('w'), Msg::char('y')]);
    assert_eq!(a.editor.tabs.count(), 1);
    assert_eq!(a.editor.text(), "");
    assert!(status(&a).contains("in the history"), "{}", status(&a));
    let last = a.editor.history.last().expect("kept");
    assert_eq!(last.sql, "SELECT 'unsaved'");
    // Text the history holds closes at once; the last tab stays.
    press(&mut a, vec![Msg::ctrl('n')]);
    a.editor.area = tui_textarea::TextArea::new(vec!["SELECT 'unsaved'".to_owned()]);
    press(&mut a, vec![Msg::ctrl('w')]);
    assert!(matches!(a.overlay, Overlay::None));
    assert_eq!(a.editor.tabs.count(), 1);
    press(&mut a, vec![Msg::ctrl('w')]);
    assert_eq!(a.editor.tabs.count(), 1);
    assert!(status(&a).contains("only tab"), "{}", status(&a));
}

#[test]
fn at_most_nine_tabs() {
    let mut a = started();
    press(&mut a, vec![Msg::char('5')]);
    for _ in 0..12 {
        press(&mut a, vec![Msg::ctrl('n')]);
    }
    assert_eq!(a.editor.tabs.count(), super::app::MAX_TABS);
    assert!(status(&a).contains("at most 9"), "{}", status(&a));
    assert!(!a.offers(Action::NewTab));
}

#[test]
fn the_key_bar_offers_tab_keys_only_when_they_act() {
    let mut a = started();
    a.size = (220, 60);
    press(&mut a, vec![Msg::char('5')]);
    let bar = |a: &App| screen(a).lines().last().unwrap_or_default().to_owned();
    let one = bar(&a);
    assert!(
        one.contains("new tab") && one.contains("query history"),
        "{one}"
    );
    assert!(
        !one.contains("close tab") && !one.contains("next tab"),
        "{one}"
    );
    assert!(!one.contains("alt-1") && !one.contains("redo"), "{one}");
    press(&mut a, vec![Msg::ctrl('n')]);
    let two = bar(&a);
    assert!(
        two.contains("close tab") && two.contains("next tab"),
        "{two}"
    );
    assert!(a.offers(Action::Tab1), "{two}");
    assert!(!a.offers(Action::Tab2), "the tab in view is not offered");
    assert!(!a.offers(Action::Tab3), "nor one that is not there");
    // In the browser, its own keys.
    press(&mut a, vec![Msg::ctrl('r')]);
    let browsing = bar(&a);
    assert!(
        browsing.contains("esc") && !browsing.contains("new tab"),
        "{browsing}"
    );
    assert!(
        !browsing.contains("put in the editor"),
        "nothing to pick: {browsing}"
    );
}

#[test]
fn tabs_are_saved_and_restored_after_a_restart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut a = with_files(dir.path());
    press(&mut a, vec![Msg::char('5')]);
    press(&mut a, typed("SELECT 'first'"));
    press(&mut a, vec![Msg::ctrl('n')]);
    press(&mut a, typed("SELECT 'second'"));
    press(&mut a, vec![Msg::ctrl('n')]);
    press(&mut a, typed("SELECT 'third',\n 3"));
    press(&mut a, vec![alt('2')]);
    // Typed after the last save: quitting writes it.
    press(&mut a, typed(" AS x"));
    press(&mut a, vec![Msg::Action(Action::Quit)]);
    assert!(a.quit);
    let file = dir.path().join("editor-tabs.json");
    assert!(file.exists());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).expect("meta").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let b = with_files(dir.path());
    assert_eq!(
        b.editor.tab_texts(),
        [
            "SELECT 'first'",
            "SELECT 'second' AS x",
            "SELECT 'third',\n 3"
        ]
    );
    assert_eq!(b.editor.tabs.current(), 1);
    assert_eq!(b.editor.area.cursor(), (0, 20));
    assert!(b.status.is_none(), "{:?}", b.status);
    // No temporary file is left beside it.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}

/// Two workbenches on one machine (`loom tui` and `loom attach`) share the tabs file: each
/// save keeps the tabs the other opened, and a tab closed where it was seen goes.
#[test]
fn two_workbenches_keep_each_others_tabs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut a = with_files(dir.path());
    let mut b = with_files(dir.path());
    press(&mut a, vec![Msg::char('5')]);
    press(&mut a, typed("SELECT 'a1'"));
    press(&mut a, vec![Msg::ctrl('n')]);
    press(&mut a, typed("SELECT 'a2'"));
    press(&mut b, vec![Msg::char('5')]);
    press(&mut b, typed("SELECT 'b1'"));
    press(&mut a, vec![Msg::Action(Action::Quit)]);
    press(&mut b, vec![Msg::Action(Action::Quit)]);
    let mut c = with_files(dir.path());
    assert_eq!(
        c.editor.tab_texts(),
        ["SELECT 'b1'", "SELECT 'a1'", "SELECT 'a2'"]
    );
    // A fourth workbench starts before the close, and opens a tab of its own (saved when it
    // quits).
    let mut d = with_files(dir.path());
    press(&mut d, vec![Msg::char('5'), Msg::ctrl('n')]);
    press(&mut d, typed("SELECT 'd'"));
    // Closed in c (its text goes to the history first): gone from the file for everyone.
    press(&mut c, vec![Msg::char('5'), alt('1')]);
    press(&mut c, vec![Msg::ctrl('w')]);
    press(&mut c, vec![Msg::char('y')]);
    press(&mut c, vec![Msg::Action(Action::Quit)]);
    let between = with_files(dir.path()).editor.tab_texts();
    assert_eq!(
        between,
        ["SELECT 'a1'", "SELECT 'a2'"],
        "c's close removed b1"
    );
    press(&mut d, vec![Msg::Action(Action::Quit)]);
    let e = with_files(dir.path());
    let texts = e.editor.tab_texts();
    assert!(texts.contains(&"SELECT 'd'".to_owned()), "{texts:?}");
    assert!(texts.contains(&"SELECT 'a1'".to_owned()), "{texts:?}");
    // d saw b1 at its start and still holds it, so b1 stays: d's copy is the one written.
    assert!(texts.contains(&"SELECT 'b1'".to_owned()), "{texts:?}");
}

#[test]
fn a_broken_tabs_file_is_reported_set_aside_and_never_fatal() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("editor-tabs.json");
    std::fs::write(&file, b"{\"tabs\": [{\"text\": 3}").expect("write");
    let a = with_files(dir.path());
    let (text, kind) = a.status.clone().expect("reported");
    assert_eq!(kind, StatusKind::Error);
    assert!(text.contains("editor tabs not restored"), "{text}");
    assert!(text.contains("editor-tabs.json.broken"), "{text}");
    assert_eq!(a.editor.tabs.count(), 1);
    assert_eq!(a.editor.text(), "");
    assert!(dir.path().join("editor-tabs.json.broken").exists());
    assert!(
        !file.exists(),
        "the next save does not overwrite what was there"
    );
}

#[test]
fn history_browser_and_tabs_snapshot() {
    let mut a = started();
    a.size = (160, 45);
    a.now_secs = TEN_AM + 600;
    run(&mut a, "SELECT * FROM small");
    a.now_secs = TEN_AM + 1200;
    run(&mut a, "SELECT nope FROM t");
    // A failure is timed by the clock; fix it so the picture does not
    // depend on how busy the machine was.
    a.editor.history[1].millis = Some(0);
    a.editor.history.insert(
        0,
        HistoryEntry {
            sql: "SELECT 1 -- from an older loom".into(),
            at: None,
            millis: None,
            outcome: Outcome::Unknown,
        },
    );
    press(&mut a, vec![Msg::ctrl('n')]);
    press(&mut a, typed("SELECT 2"));
    insta::assert_snapshot!("editor_tabs", screen(&a));
    press(&mut a, vec![Msg::ctrl('r')]);
    insta::assert_snapshot!("history_browser", screen(&a));
}
