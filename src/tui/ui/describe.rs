//! The describe view of a dataset: its columns with stats, the join hints found against the
//! other datasets (across the bottom), and for the selected column its range, top values and
//! a chart — a histogram for numbers and times, top-value bars for text. It draws the store's
//! typed description; nothing here guesses at field names.

use super::super::app::{App, Describe, hint_text, scalar, top_text};
use super::{centred, display_width, fit, fit_left, human};
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
            // The labels take what the count and a short bar leave.
            let width = split[1].width as usize;
            let labels = bar_labels(
                &bars.iter().map(|b| b.label.as_str()).collect::<Vec<_>>(),
                width.saturating_sub(LEAST_BAR + 8).max(4),
            );
            let label_w = labels.iter().map(|l| display_width(l)).max().unwrap_or(4);
            let bar_w = width.saturating_sub(label_w + 10).max(4);
            for (b, label) in bars.iter().zip(labels) {
                let n = (b.count as f64 / max as f64 * bar_w as f64).round() as usize;
                let pad = " ".repeat(label_w.saturating_sub(display_width(&label)));
                lines.push(Line::from(vec![
                    Span::styled(format!("{pad}{label} "), th.muted),
                    Span::styled("█".repeat(n.max(usize::from(b.count > 0))), th.chart),
                    Span::styled(format!(" {}", human(b.count)), th.number),
                ]));
            }
        }
    }
    f.render_widget(Paragraph::new(lines), split[1]);
}

/// The shortest bar drawn beside a label: a chart whose bars are all cut is no chart.
const LEAST_BAR: usize = 12;

/// Labels for a chart's bars in at most `w` columns, each still telling its bar from the
/// others (the report's `73000000000000081…` on every bar told nothing): whole when they fit;
/// numbers in the shortest scientific form that keeps apart the values that differ, else cut
/// from the left, where numbers of one size differ; text cut at its end, as everywhere.
pub fn bar_labels(labels: &[&str], w: usize) -> Vec<String> {
    if labels.iter().all(|l| display_width(l) <= w) {
        return labels.iter().map(|l| (*l).to_owned()).collect();
    }
    let numbers: Option<Vec<f64>> = labels
        .iter()
        .map(|l| {
            l.chars()
                .all(|c| c.is_ascii_digit() || "+-.eE".contains(c))
                .then(|| l.parse::<f64>().ok())
                .flatten()
                .filter(|x| x.is_finite())
        })
        .collect();
    let Some(numbers) = numbers else {
        return labels.iter().map(|l| fit(l, w)).collect();
    };
    let distinct = |v: &[String]| v.iter().collect::<std::collections::HashSet<_>>().len();
    let wanted = distinct(&labels.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>());
    for digits in 0..17 {
        let short: Vec<String> = numbers.iter().map(|x| format!("{x:.digits$e}")).collect();
        if short.iter().any(|l| l.len() > w) {
            break;
        }
        if distinct(&short) == wanted {
            return short;
        }
    }
    labels.iter().map(|l| fit_left(l, w)).collect()
}

#[cfg(test)]
mod tests {
    use super::bar_labels;

    /// B6: bucket labels of 19-digit ids told apart in the room there is.
    #[test]
    fn large_integer_labels_keep_the_digits_that_differ() {
        let ids = [
            "7300000000000008100",
            "7300000000006676000",
            "7300000000013271000",
        ];
        assert_eq!(bar_labels(&ids, 40), ids);
        assert_eq!(
            bar_labels(&ids, 17),
            [
                "7.300000000000e18",
                "7.300000000007e18",
                "7.300000000013e18"
            ]
        );
        assert_eq!(
            bar_labels(&ids, 14),
            ["…0000000008100", "…0000006676000", "…0000013271000"]
        );
    }

    #[test]
    fn labels_too_wide_for_scientific_form_are_cut_from_the_left() {
        let ids = ["7300000000000008100", "7300000000000008200"];
        let short = bar_labels(&ids, 8);
        assert_eq!(short, ["…0008100", "…0008200"]);
    }

    #[test]
    fn decimals_and_doubles_take_the_shortest_form_that_tells_them_apart() {
        let v = ["25062.129999999997", "25062.5", "25063.000000000004"];
        assert_eq!(bar_labels(&v, 10), ["2.50621e4", "2.50625e4", "2.50630e4"]);
        let v = ["-0.000012345", "-0.000012346"];
        assert_eq!(bar_labels(&v, 10), ["-1.234e-5", "-1.235e-5"]);
    }

    #[test]
    fn text_is_cut_at_its_end_on_character_boundaries() {
        let v = ["naïve café résumé", "naïve café résumés"];
        assert_eq!(bar_labels(&v, 8), ["naïve c…", "naïve c…"]);
    }
}
