//! The `?` menu, generated from the keymap: the keys that work where the person is first (they
//! run with `enter`), then every other view's, the filter being typed, and the selection kept
//! in view. It only reads the menu's state.

use super::super::app::{App, Menu};
use super::super::keymap::Context;
use super::{centred, fit};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

pub fn draw(f: &mut Frame, area: Rect, app: &App, m: &Menu) {
    let th = &app.theme;
    let r = centred(f, area, 80, 85);
    let items = m.items(&app.keymap);
    let width = r.width.saturating_sub(2) as usize;
    // Rows: a heading before each view's first binding, then its bindings.
    let mut rows: Vec<(Option<usize>, Line)> = Vec::new();
    let mut last: Option<Context> = None;
    for (i, it) in items.iter().enumerate() {
        if last != Some(it.ctx) {
            let heading = if it.runs_here {
                format!("{} — here (enter runs)", it.ctx.name())
            } else {
                it.ctx.name().to_owned()
            };
            rows.push((None, Line::styled(heading, th.title)));
            last = Some(it.ctx);
        }
        let style = if i == m.selected {
            th.selection
        } else if it.runs_here {
            th.base
        } else {
            th.muted
        };
        let text = fit(&format!("  {:<28}{}", it.keys, it.action.help()), width);
        rows.push((Some(i), Line::styled(format!("{text:<width$}"), style)));
    }
    if items.is_empty() {
        rows.push((
            None,
            Line::styled("  no key matches; esc clears the filter", th.muted),
        ));
    }
    // One row for the filter line at the bottom.
    let visible = (r.height.saturating_sub(3) as usize).max(1);
    m.rows.set(visible);
    let at = rows
        .iter()
        .position(|(i, _)| *i == Some(m.selected))
        .unwrap_or(0);
    // The selection stays in view, with its heading when there is room.
    let top = at
        .saturating_sub(visible.saturating_sub(1))
        .min(rows.len().saturating_sub(visible));
    let top = if at >= 1 && top == at { at - 1 } else { top };
    let mut lines: Vec<Line> = rows
        .into_iter()
        .skip(top)
        .take(visible)
        .map(|(_, l)| l)
        .collect();
    let filter = if m.typing {
        let mut spans = vec![Span::styled("/", th.key)];
        spans.extend(
            m.filter
                .spans(ratatui::style::Style::default(), th.selection),
        );
        spans.push(Span::styled("  enter keeps it · esc clears", th.muted));
        Line::from(spans)
    } else if m.filter.is_empty() {
        Line::styled("/ filters · enter runs · esc closes", th.muted)
    } else {
        Line::from(vec![
            Span::styled(format!("/{}", m.filter), th.key),
            Span::styled(format!("  {} · / changes it", items.len()), th.muted),
        ])
    };
    while lines.len() < visible {
        lines.push(Line::raw(""));
    }
    lines.push(filter);
    let title = format!(
        " keys · {} of {} ",
        if items.is_empty() { 0 } else { m.selected + 1 },
        items.len()
    );
    f.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(th.border_focused)
                .style(th.base)
                .title(Span::styled(title, th.title_focused)),
        ),
        r,
    );
}
