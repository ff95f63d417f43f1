//! The Results grid: virtualised — only the rows on screen are built, from pages fetched
//! around the view — with column widths fitted from a sample, types in the header, NULL shown
//! distinctly, horizontal scroll, and the row count always visible. A failed query shows its
//! error here.

use super::super::app::{App, Pane};
use super::{empty_state, fit, pane_block};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Gauge, Paragraph, Wrap};

pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    let th = &app.theme;
    let extra = match &app.results.grid {
        Some(g) => {
            let mut t = format!(
                "{} × {} · {} ms",
                super::plural(g.result.rows, "row"),
                super::plural(g.result.columns.len() as u64, "column"),
                g.result.millis
            );
            if let Some(v) = &g.view {
                if let Some((col, desc)) = &v.sort {
                    t.push_str(&format!(" · by {col} {}", if *desc { "↓" } else { "↑" }));
                }
                if let Some(f) = &v.filter {
                    t.push_str(&format!(" · rows with \"{f}\""));
                }
            }
            t
        }
        None => String::new(),
    };
    let block = pane_block(app, Pane::Results, &extra);
    let inner = block.inner(area);
    f.render_widget(block, area);
    if let Some(e) = &app.results.query_error {
        let mut lines = vec![Line::styled("query failed", th.error)];
        lines.extend(
            e.message
                .lines()
                .map(|l| Line::styled(l.to_owned(), th.error)),
        );
        if let Some((l, c)) = e.at {
            lines.push(Line::styled(
                format!("at line {}, column {} of the editor", l + 1, c + 1),
                th.muted,
            ));
        }
        f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
        return;
    }
    let Some(g) = &app.results.grid else {
        f.render_widget(
            Paragraph::new(empty_state(
                &[
                    "No result yet.",
                    "Write SQL above and press ctrl-e, or pick a dataset",
                    "in the Catalog and press s.",
                ],
                th.muted,
            )),
            inner,
        );
        return;
    };
    if inner.height < 4 {
        return;
    }
    let body_rows = (inner.height as usize).saturating_sub(3);
    // Columns that fit from the left scroll position; the selected column is always shown.
    let mut left = g.left.min(g.col);
    let fits = |left: usize| {
        let mut used = 6usize;
        let mut last = left;
        for (i, w) in g.widths.iter().enumerate().skip(left) {
            if used + *w as usize + 1 > inner.width as usize && i > left {
                break;
            }
            used += *w as usize + 1;
            last = i;
        }
        last
    };
    while fits(left) < g.col {
        left += 1;
    }
    let last = fits(left);
    let numw = 6usize;
    // Numbers are right-aligned; decided once per column, not per cell.
    let numeric: Vec<bool> = g
        .result
        .columns
        .iter()
        .map(|(_, ty)| crate::types::data::is_numeric_type(ty))
        .collect();
    // Two header rows: the names, then the types.
    let mut header = vec![Span::styled(format!("{:>numw$}", "#"), th.muted)];
    let mut types = vec![Span::raw(" ".repeat(numw))];
    for i in left..=last.min(g.widths.len().saturating_sub(1)) {
        let (name, ty) = &g.result.columns[i];
        let w = g.widths[i] as usize;
        let style = if i == g.col {
            th.title_focused
        } else {
            th.header
        };
        header.push(Span::raw(" "));
        header.push(Span::styled(format!("{:<w$}", fit(name, w)), style));
        types.push(Span::raw(" "));
        types.push(Span::styled(
            format!("{:<w$}", fit(&ty.to_lowercase(), w)),
            th.muted,
        ));
    }
    let mut lines = vec![Line::from(header), Line::from(types)];
    for r in g.top..(g.top + body_rows as u64).min(g.result.rows) {
        let mut spans = vec![Span::styled(format!("{:>numw$}", r + 1), th.muted)];
        let row = g.row_cells(r);
        for i in left..=last.min(g.widths.len().saturating_sub(1)) {
            let w = g.widths[i] as usize;
            spans.push(Span::raw(" "));
            let (text, style) = match row {
                None => ("…".to_owned(), th.muted),
                Some(cells) => match cells.get(i).and_then(|c| c.as_deref()) {
                    None => ("NULL".to_owned(), th.null),
                    Some(v) => {
                        let v = v.replace(['\n', '\r', '\t'], " ");
                        if numeric.get(i) == Some(&true) {
                            (format!("{:>w$}", fit(&v, w)), th.number)
                        } else {
                            (fit(&v, w), th.base)
                        }
                    }
                },
            };
            let style = if r == g.row && i == g.col && app.focus == Pane::Results {
                th.selection
            } else {
                style
            };
            spans.push(Span::styled(format!("{text:<w$}"), style));
        }
        let line = Line::from(spans);
        lines.push(if r == g.row {
            line.patch_style(
                ratatui::style::Style::default().add_modifier(ratatui::style::Modifier::BOLD),
            )
        } else {
            line
        });
    }
    let body = Rect::new(inner.x, inner.y, inner.width, inner.height - 1);
    f.render_widget(Paragraph::new(lines), body);
    let foot = Rect::new(inner.x, inner.y + inner.height - 1, inner.width, 1);
    if let Some(e) = &app.results.export {
        let ratio = if e.total > 0 {
            (e.rows as f64 / e.total as f64).min(1.0)
        } else {
            0.0
        };
        f.render_widget(
            Gauge::default()
                .gauge_style(th.gauge)
                .ratio(ratio)
                .label(format!("exporting {} rows of {}", e.rows, e.total)),
            foot,
        );
        return;
    }
    if let Some(text) = &app.results.row_filter {
        let line = Line::from(vec![
            Span::styled("rows containing: ", th.info),
            Span::raw(format!("{text}▏")),
            Span::styled(
                "  (enter keeps them, empty shows all, esc cancels)",
                th.muted,
            ),
        ]);
        f.render_widget(Paragraph::new(line), foot);
        return;
    }
    let loaded = g.row_cells(g.row).is_some();
    let shown_to = (g.top + body_rows as u64).min(g.result.rows);
    let info = format!(
        "row {} of {} · showing {}–{} · col {}/{} {}",
        if g.result.rows == 0 { 0 } else { g.row + 1 },
        g.result.rows,
        if g.result.rows == 0 { 0 } else { g.top + 1 },
        shown_to,
        g.col + 1,
        g.result.columns.len(),
        if loaded { "" } else { "· loading…" }
    );
    f.render_widget(Paragraph::new(Line::styled(info, th.muted)), foot);
}
