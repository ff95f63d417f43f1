//! The Detail pane: the selected call's request and response as pretty, highlighted JSON
//! (for an intercepted call, the envelope and a jump to its dataset), or the selected
//! catalog item: a dataset's schema, stats, join hints and provenance, a blob, a memory.

use super::super::app::{App, Detail, Pane};
use super::{empty_state, pane_block};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::widgets::{Paragraph, Wrap};

pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    let th = &app.theme;
    let extra = match &app.detail.shown {
        Detail::Empty => String::new(),
        _ if app.detail.lines.is_empty() => String::new(),
        _ => format!(
            "{}/{}",
            (app.detail.scroll + 1).min(app.detail.lines.len()),
            app.detail.lines.len()
        ),
    };
    let block = pane_block(app, Pane::Detail, &extra);
    let inner = block.inner(area);
    f.render_widget(block, area);
    if matches!(app.detail.shown, Detail::Empty) {
        f.render_widget(
            Paragraph::new(empty_state(
                &[
                    "Select a call in Traffic to see its request",
                    "and response, or an item in the Catalog.",
                ],
                th.muted,
            )),
            inner,
        );
        return;
    }
    // Only the visible slice is handed to the widget.
    let lines: Vec<_> = app
        .detail
        .lines
        .iter()
        .skip(app.detail.scroll)
        .take(inner.height as usize * 2)
        .cloned()
        .collect();
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}
