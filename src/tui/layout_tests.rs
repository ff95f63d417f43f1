//! Finding one's way around the workbench: the `?` menu that runs what it lists, the layout
//! that gives room to querying or watching (remembered), and the palette's list and JSON.

use super::app::Msg;
use super::tests::{press, screen, started};
use crossterm::event::KeyCode;
use serde_json::json;

fn typed(text: &str) -> Vec<Msg> {
    text.chars().map(Msg::char).collect()
}

/// `+` gives the room to querying, then lets focus choose, then back to watching; the choice
/// is there again in the next run.
#[test]
fn the_layout_gives_room_to_querying_or_watching_and_is_remembered() {
    let dir = tempfile::tempdir().unwrap();
    let opts = super::TuiOptions {
        theme: "dark".into(),
        theme_overrides: None,
        keymap: None,
        title: "loom tui".into(),
        history_file: Some(dir.path().join("loom").join("sql-history.jsonl")),
        attached: false,
    };
    let mut a = super::build_app(&opts, super::clipboard::Clipboard::memory()).unwrap();
    a.size = (160, 45);
    let results = |a: &super::app::App| {
        super::ui::layout(ratatui::layout::Rect::new(0, 0, 160, 45), a.plan())
            .results
            .height
    };
    let watching = results(&a);
    press(&mut a, vec![Msg::char('+')]);
    assert!(results(&a) > watching + 5, "{} vs {watching}", results(&a));
    assert!(
        a.status
            .as_ref()
            .is_some_and(|(t, _)| t.contains("room for querying")),
        "{:?}",
        a.status
    );
    // By focus: querying room in SQL and Results, watching room in Traffic.
    press(&mut a, vec![Msg::char('+'), Msg::char('1')]);
    assert_eq!(results(&a), watching);
    press(&mut a, vec![Msg::char('6')]);
    assert!(results(&a) > watching);
    // The next run starts as this one was left.
    let b = super::build_app(&opts, super::clipboard::Clipboard::memory()).unwrap();
    assert_eq!(b.arrangement, super::app::Arrangement::ByFocus);
}

/// The palette's list says how many tools are below the box, and its arguments are coloured
/// as JSON while they are typed.
#[test]
fn the_palette_marks_tools_below_and_colours_its_json() {
    let mut a = started();
    a.size = (80, 24);
    press(&mut a, vec![Msg::char(':')]);
    let more: Vec<serde_json::Value> = (0..30)
        .map(|i| json!({ "name": format!("fs_tool_{i}"), "description": "a tool" }))
        .collect();
    a.tools.extend(more);
    let s = screen(&a);
    assert!(s.contains("more below (1 of 32)"), "{s}");
    a.tools.truncate(2);
    a.size = (120, 40);
    press(&mut a, typed("orders"));
    press(&mut a, vec![Msg::code(KeyCode::Enter), Msg::char(' ')]);
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).unwrap();
    t.draw(|f| super::ui::draw(f, &a)).unwrap();
    let buf = t.backend().buffer();
    let find = |needle: &str| {
        let w = buf.area.width;
        (0..buf.area.height).find_map(|y| {
            let row: String = (0..w).map(|x| buf[(x, y)].symbol().to_owned()).collect();
            row.find(needle)
                .map(|i| row[..i].chars().count() as u16)
                .map(|x| (x, y))
        })
    };
    let (kx, ky) = find("\"limit\"").expect("the key on screen");
    let (nx, ny) = find(": 0").expect("the value on screen");
    let key = buf[(kx + 1, ky)].style().fg;
    let number = buf[(nx + 2, ny)].style().fg;
    assert_ne!(key, number, "keys and numbers are coloured apart");
    assert_eq!(number, a.theme.number.fg, "numbers in the number colour");
}

/// `?` lists the keys that work here first, `/` filters them, and `enter` runs the chosen
/// action where the person was; a key of another view says where it works.
#[test]
fn the_menu_filters_and_runs_the_chosen_action_where_the_person_was() {
    let mut a = started();
    press(&mut a, vec![Msg::char('3'), Msg::char('?')]);
    let s = screen(&a);
    assert!(s.contains("servers — here (enter runs)"), "{s}");
    press(&mut a, vec![Msg::char('/')]);
    press(&mut a, typed("restart"));
    let s = screen(&a);
    assert!(s.contains("/restart▏"), "{s}");
    assert!(s.contains("restart / re-enable server"), "{s}");
    // `enter` keeps the filter, `enter` again runs: the restart question, for the server
    // selected under the menu.
    press(
        &mut a,
        vec![Msg::code(KeyCode::Enter), Msg::code(KeyCode::Enter)],
    );
    assert!(
        matches!(&a.overlay, super::app::Overlay::Confirm(c) if c.question.starts_with("Restart sample?")),
        "{}",
        screen(&a)
    );
    press(&mut a, vec![Msg::char('n')]);
    // A key of another view is not run from here: the status line says where it works.
    press(&mut a, vec![Msg::char('?'), Msg::char('/')]);
    press(&mut a, typed("copy cell"));
    press(
        &mut a,
        vec![Msg::code(KeyCode::Enter), Msg::code(KeyCode::Enter)],
    );
    let status = a.status.as_ref().map(|s| s.0.clone()).unwrap_or_default();
    assert_eq!(status, "copy cell works in the results view (y)");
    // esc while filtering clears the filter; esc again closes.
    press(
        &mut a,
        vec![Msg::char('/'), Msg::char('x'), Msg::code(KeyCode::Esc)],
    );
    assert!(matches!(&a.overlay, super::app::Overlay::Help(m) if m.filter.is_empty()));
    press(&mut a, vec![Msg::code(KeyCode::Esc)]);
    assert!(matches!(a.overlay, super::app::Overlay::None));
}
