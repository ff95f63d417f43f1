//! The describe view of a dataset: its columns with stats, the join hints found against the
//! other datasets (across the bottom), and for the selected column its range, top values and
//! a chart — a histogram for numbers and times, top-value bars for text. It draws the store's
//! typed description; nothing here guesses at field names.

use super::super::app::{App, Describe, hint_text, scalar, top_text};
use super::{centred, fit, human};
use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

pub fn draw(f: &mut Frame, area: Rect, app: &App, d: &Describe) {
    let th = &app.theme;
    let r = centred(f, area, 90, 85);
    let rows = d
        .describe
        .as_ref()
        .map(|v| format!(" · {}", super::plural(v.rows, "row")))
        .unwrap_or_default();
    let b = Block::default()
        .borders(Borders::ALL)
        .border_style(th.border_focused)
        .style(th.base)
        .title(Span::styled(
            format!(
                " describe {}{rows} — j/k column · s query · x export · esc ",
                d.dataset
            ),
            th.title_focused,
        ));
    let inner = b.inner(r);
    f.render_widget(b, r);
    let Some(desc) = &d.describe else {
        f.render_widget(Paragraph::new(Line::styled("loading…", th.muted)), inner);
        return;
    };
    let cols = &desc.columns;
    // Join hints across the bottom, the full width (a hint names two datasets and columns).
    let hint_lines: Vec<Line> = if desc.join_hints.is_empty() {
        Vec::new()
    } else {
        std::iter::once(Line::styled("join hints", th.title))
            .chain(
                desc.join_hints
                    .iter()
                    .map(|h| Line::styled(format!("  {}", hint_text(h)), th.muted)),
            )
            .collect()
    };
    let hints_h = (hint_lines.len() as u16).min(inner.height / 3);
    let parts = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Min(1), Constraint::Length(hints_h)])
        .split(inner);
    if hints_h > 0 {
        f.render_widget(Paragraph::new(hint_lines), parts[1]);
    }
    let split = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(45), Constraint::Percentage(55)])
        .split(parts[0]);
    let rows_h = split[0].height as usize;
    let skip = d.selected.saturating_sub(rows_h.saturating_sub(1));
    let list: Vec<Line> = cols
        .iter()
        .enumerate()
        .skip(skip)
        .take(rows_h)
        .map(|(i, c)| {
            let line = Line::from(vec![
                Span::styled(format!("{:<18}", fit(&c.name, 17)), th.function),
                Span::styled(format!("{:<11}", fit(&c.ty, 10)), th.keyword),
                Span::styled(
                    format!(
                        "{:>5.0}% null {:>7}",
                        c.null_fraction * 100.0,
                        if c.distinct_exact {
                            c.distinct.to_string()
                        } else {
                            format!("~{}", c.distinct)
                        }
                    ),
                    th.muted,
                ),
            ]);
            if i == d.selected {
                line.style(th.selection)
            } else {
                line
            }
        })
        .collect();
    f.render_widget(Paragraph::new(list), split[0]);
    let Some(col) = cols.get(d.selected) else {
        return;
    };
    let name = col.name.as_str();
    let mut lines = vec![Line::styled(format!("{name} ({})", col.ty), th.title)];
    if let (Some(lo), Some(hi)) = (&col.min, &col.max) {
        lines.push(Line::styled(
            format!("min {}  max {}", scalar(lo), scalar(hi)),
            th.muted,
        ));
    }
    if !col.top.is_empty() {
        lines.push(Line::styled(
            format!("top {}", top_text(&col.top, col.top.len())),
            th.muted,
        ));
    }
    match d.charts.get(name) {
        None if d.chart_errors.contains_key(name) => {
            let e = &d.chart_errors[name];
            lines.push(Line::styled(
                format!("chart failed: {}", e.lines().next().unwrap_or_default()),
                th.error,
            ));
            lines.push(Line::styled(
                "r tries again · s queries the dataset in the editor · j/k another column",
                th.muted,
            ));
        }
        None => lines.push(Line::styled("loading chart…", th.muted)),
        Some(bars) if bars.is_empty() => lines.push(Line::styled("no values", th.muted)),
        Some(bars) => {
            let max = bars.iter().map(|b| b.count).max().unwrap_or(1).max(1);
            let label_w = bars
                .iter()
                .map(|b| b.label.chars().count())
                .max()
                .unwrap_or(4)
                .min(18);
            let bar_w = (split[1].width as usize)
                .saturating_sub(label_w + 10)
                .max(4);
            for b in bars {
                let n = (b.count as f64 / max as f64 * bar_w as f64).round() as usize;
                lines.push(Line::from(vec![
                    Span::styled(format!("{:>label_w$} ", fit(&b.label, label_w)), th.muted),
                    Span::styled("█".repeat(n.max(usize::from(b.count > 0))), th.chart),
                    Span::styled(format!(" {}", human(b.count)), th.number),
                ]));
            }
        }
    }
    f.render_widget(Paragraph::new(lines), split[1]);
}
