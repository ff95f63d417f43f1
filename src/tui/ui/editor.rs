//! The SQL editor: syntect-highlighted text (colours are applied by `App::prepare_frame` before
//! a frame, only when the text changed, and only to the lines that changed), its tabs in the title (`SQL 1 2* 3`, `!` where the last
//! statement failed), a spinner while a query runs, and the completion popup.

use super::super::app::{App, Pane};
use super::pane_block_with;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

pub const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// The tabs after the pane's name, once there is more than one: ` 1 2* 3!` (`*` the one in
/// view, `!` where the last statement failed).
fn tab_marks(app: &App) -> Vec<Span<'static>> {
    let th = &app.theme;
    let labels = app.editor.tab_labels();
    if labels.len() < 2 {
        return Vec::new();
    }
    let mut marks: Vec<Span<'static>> = labels
        .into_iter()
        .map(|t| {
            let text = format!(
                " {}{}{}",
                t.number,
                if t.current { "*" } else { "" },
                if t.failed { "!" } else { "" }
            );
            let style = match (t.current, t.failed) {
                (_, true) => th.error,
                (true, false) => th.title_focused,
                (false, false) => th.muted,
            };
            Span::styled(text, style)
        })
        .collect();
    marks.push(Span::styled(" ·", th.muted));
    marks
}

pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    let th = &app.theme;
    let extra = match &app.results.running {
        Some(r) => format!(
            "{} running {:.1}s · ctrl-c cancels",
            SPINNER[app.spinner % SPINNER.len()],
            r.started.elapsed().as_secs_f64()
        ),
        None if app.editor.error.is_some() => "error — see Results".into(),
        None => "ctrl-e runs the statement under the cursor".into(),
    };
    let block = pane_block_with(app, Pane::Editor, tab_marks(app), &extra);
    let inner = block.inner(area);
    f.render_widget(block, area);
    f.render_widget(&app.editor.area, inner);
    if let Some(c) = &app.editor.completion
        && app.focus == Pane::Editor
    {
        let (row, col) = app.editor.area.cursor();
        let h = (c.items.len() as u16 + 2).min(10);
        let w = (c.items.iter().map(|s| s.chars().count()).max().unwrap_or(4) as u16 + 4).min(40);
        let x = (inner.x + col as u16).min(f.area().width.saturating_sub(w));
        let y = inner.y + row as u16 + 1;
        let y = if y + h > f.area().height {
            y.saturating_sub(h + 1)
        } else {
            y
        };
        let r = Rect::new(x, y, w, h);
        f.render_widget(Clear, r);
        let skip = c.selected.saturating_sub(h as usize - 3);
        let lines: Vec<Line> = c
            .items
            .iter()
            .enumerate()
            .skip(skip)
            .take(h as usize - 2)
            .map(|(i, s)| {
                let l = Line::from(Span::raw(format!(" {s}")));
                if i == c.selected {
                    l.style(th.selection)
                } else {
                    l
                }
            })
            .collect();
        f.render_widget(
            Paragraph::new(lines).block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(th.border_focused)
                    .style(th.base),
            ),
            r,
        );
    }
}
