//! The Results grid as a person works through a result: export by a dialog (format,
//! delimiter, header, name), marked rows exported alone, and long cells wrapped.

use super::app::{Msg, Pane};
use super::tests::{answer, pane_text, press, screen, started};
use crate::frontend::engine::Request;
use crossterm::event::KeyCode;

#[test]
fn export_from_the_grid_reports_the_written_path() {
    let mut a = started();
    a.editor.area = tui_textarea::TextArea::new(vec!["SELECT 1".into()]);
    press(
        &mut a,
        vec![
            Msg::char('5'),
            Msg::ctrl('e'),
            Msg::code(KeyCode::Esc),
            Msg::char('x'),
        ],
    );
    // `x` asks first: format, delimiter, header and the file's name, prefilled.
    let s = screen(&a);
    for want in [
        "Export _loom_result_9",
        "Format",
        "‹CSV›",
        "‹comma›",
        "[x] column names first",
    ] {
        assert!(s.contains(want), "{want}: {s}");
    }
    // A result is named after what it read (here nothing: `result`), selected.
    assert!(s.contains("/demo/exports/result.csv"), "{s}");
    // Tab to the delimiter, choose a semicolon; to the name, rename; enter writes.
    let mut keys = vec![Msg::code(KeyCode::Tab), Msg::code(KeyCode::Right)];
    keys.extend([Msg::code(KeyCode::Tab), Msg::code(KeyCode::Tab)]);
    // The proposed name is selected: typing replaces it.
    keys.extend("paid".chars().map(Msg::char));
    let mut sent = Vec::new();
    for m in keys.into_iter().chain([Msg::code(KeyCode::Enter)]) {
        let reqs = a.update(m);
        sent.extend(reqs.iter().map(|(_, r)| r.clone()));
        answer(&mut a, reqs);
    }
    let Some(Request::Export { options, .. }) = sent.first() else {
        panic!("{sent:?}")
    };
    assert_eq!(options.delimiter, ';');
    assert_eq!(options.filename.as_deref(), Some("paid.csv"));
    assert!(matches!(a.overlay, super::app::Overlay::None));
    let status = a.status.as_ref().unwrap().0.clone();
    assert!(
        status.contains("exported 1,000,000 rows to /demo/exports/_loom_result_9.csv"),
        "{status}"
    );
}

/// Rows marked in the grid (`v`, then moving) export alone, by their place in the result.
#[test]
fn marked_rows_export_alone_and_wrap_shows_long_cells_whole() {
    let mut a = started();
    a.editor.area = tui_textarea::TextArea::new(vec!["SELECT 1".into()]);
    press(
        &mut a,
        vec![Msg::char('5'), Msg::ctrl('e'), Msg::code(KeyCode::Esc)],
    );
    press(
        &mut a,
        vec![
            Msg::char('j'),
            Msg::char('v'),
            Msg::char('j'),
            Msg::char('j'),
        ],
    );
    assert!(screen(&a).contains("3 rows marked"), "{}", screen(&a));
    press(&mut a, vec![Msg::char('x')]);
    let super::app::Overlay::Export(d) = &a.overlay else {
        panic!("no dialog")
    };
    let Request::Export { options, .. } = d.request() else {
        panic!()
    };
    assert_eq!(options.rows, Some((1, 3)));
    assert!(screen(&a).contains("3 rows of _loom_result_9 (rows 2–4)"));
    press(&mut a, vec![Msg::code(KeyCode::Esc), Msg::char('v')]);
    assert_eq!(a.results.grid.as_ref().unwrap().marked(), None);
    // Wrap: a toggle, remembered by the grid, said in the footer.
    press(&mut a, vec![Msg::char('w')]);
    assert!(a.results.grid.as_ref().unwrap().wrap);
    assert!(pane_text(&a, Pane::Results).contains("wrapped"));
}

/// The row-number gutter grows with the result: the millionth row's number lines up under `#`
/// and never pushes its cells out of their columns.
#[test]
fn the_row_number_gutter_fits_the_last_row() {
    let mut a = started();
    a.editor.area = tui_textarea::TextArea::new(vec!["SELECT 1".into()]);
    press(
        &mut a,
        vec![
            Msg::char('5'),
            Msg::ctrl('e'),
            Msg::code(KeyCode::Esc),
            Msg::char('G'),
        ],
    );
    let s = screen(&a);
    let lines: Vec<Vec<char>> = s.lines().map(|l| l.chars().collect()).collect();
    let at = |line: &Vec<char>, needle: &str| {
        let n: Vec<char> = needle.chars().collect();
        line.windows(n.len()).position(|w| w == n.as_slice())
    };
    let header = lines
        .iter()
        .find(|l| at(l, "# order_id").is_some())
        .unwrap_or_else(|| panic!("the header row: {s}"));
    let hash = at(header, "# order_id").expect("#");
    let last = lines
        .iter()
        .find(|l| at(l, " 1000000 ").is_some() && at(l, "999999").is_some())
        .unwrap_or_else(|| panic!("the last row: {s}"));
    let number = at(last, "1000000").expect("number");
    assert_eq!(number + 6, hash, "{s}");
    assert_eq!(last[number + 7], ' ', "{s}");
}

/// Report annoyance 9: a DOUBLE shows the shortest form that reads back the same at display
/// precision (`25062.13`), while the cell view keeps the exact value; counts in status lines
/// and the footer have thousands separators.
#[test]
fn doubles_read_as_written_and_counts_are_grouped() {
    use crate::frontend::engine::{EngineError, Reply};
    use crate::types::data::ResultTable;
    let mut a = started();
    a.size = (160, 45);
    a.editor.area = tui_textarea::TextArea::new(vec!["SELECT total FROM t".into()]);
    let cells = [
        "25062.129999999997",
        "0.30000000000000004",
        "1e+300",
        "-inf",
        "7",
    ];
    let mut queue = a.update(Msg::char('5'));
    queue.extend(a.update(Msg::ctrl('e')));
    while !queue.is_empty() {
        let (t, req) = queue.remove(0);
        let reply = match &req {
            Request::Query { .. } => Ok(Reply::Query {
                result: ResultTable {
                    table: "_loom_result_4".into(),
                    columns: vec![
                        ("total".into(), "DOUBLE".into()),
                        ("ratio".into(), "FLOAT".into()),
                    ],
                    rows: 20_000_000,
                    millis: 4699,
                },
            }),
            Request::Rows { offset, limit, .. } => Ok(Reply::Rows {
                rows: (*offset..offset + limit)
                    .map(|r| {
                        vec![
                            Some(cells[(r % 5) as usize].to_owned()),
                            Some("0.1".to_owned()),
                        ]
                    })
                    .collect(),
            }),
            other => super::tests::fixture(other).map_err(EngineError::from),
        };
        queue.extend(a.update(Msg::Reply(t, reply)));
    }
    assert_eq!(
        a.status.as_ref().map(|s| s.0.as_str()),
        Some("20,000,000 rows in 4,699 ms")
    );
    let grid = pane_text(&a, Pane::Results);
    for shown in [
        "25062.13",
        "0.3",
        "1e+300",
        "-inf",
        "20,000,000 rows × 2 columns · 4,699 ms",
    ] {
        assert!(grid.contains(shown), "{shown}:\n{grid}");
    }
    assert!(!grid.contains("25062.129999999997"), "{grid}");
    assert!(screen(&a).contains("row 1 of 20,000,000"), "{}", screen(&a));
    // The cell itself, opened, is the exact value.
    a.focus = Pane::Results;
    press(&mut a, vec![Msg::code(KeyCode::Enter)]);
    assert!(screen(&a).contains("25062.129999999997"), "{}", screen(&a));
}
