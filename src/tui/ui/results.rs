//! The Results grid: virtualised — only the rows on screen are built, from pages fetched
//! around the view — with column widths fitted from a sample, types in the header, NULL shown
//! distinctly, horizontal scroll, and the row count always visible. A failed query shows its
//! error here.

use super::super::app::{App, GridPrompt, Pane};
use super::{count, empty_state, fit, pane_block, plural, shown_cell};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Gauge, Paragraph, Wrap};

pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    let th = &app.theme;
    let extra = match &app.results.grid {
        Some(g) => {
            // After a failure or a cancel, the grid is the result from before.
            let before = if app.results.query_error.is_some() {
                "previous result: "
            } else {
                ""
            };
            let mut t = format!(
                "{before}{} × {} · {} ms",
                super::plural(g.result.rows, "row"),
                super::plural(g.result.columns.len() as u64, "column"),
                super::count(g.result.millis)
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
    let mut inner = block.inner(area);
    f.render_widget(block, area);
    if let Some(e) = &app.results.query_error {
        // Why the last query gave nothing, above the grid that was on screen (it stays).
        let (head, style) = if e.cancelled {
            ("query cancelled", th.muted)
        } else {
            ("query failed", th.error)
        };
        let mut lines = vec![Line::styled(head, style)];
        lines.extend(e.message.lines().map(|l| Line::styled(l.to_owned(), style)));
        if let Some((l, c)) = e.at {
            lines.push(Line::styled(
                format!("at line {}, column {} of the editor", l + 1, c + 1),
                th.muted,
            ));
        }
        if app.results.grid.is_none() {
            f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
            return;
        }
        let want = u16::try_from(lines.len()).unwrap_or(u16::MAX);
        let h = want.min(inner.height / 2);
        f.render_widget(
            Paragraph::new(lines).wrap(Wrap { trim: false }),
            Rect::new(inner.x, inner.y, inner.width, h),
        );
        inner = Rect::new(inner.x, inner.y + h, inner.width, inner.height - h);
    }
    let Some(g) = &app.results.grid else {
        if let Some(why) = &app.results.dropped {
            let lines = vec![
                Line::styled("The result is gone.", th.error),
                Line::styled(why.clone(), th.muted),
            ];
            f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
            return;
        }
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
    // The row-number gutter: wide enough for the last row's number and a mark (`▌`, `•`).
    let numw = (g.result.rows.max(1).to_string().len() + 1).max(6);
    // Columns that fit from the left scroll position; the selected column is always shown.
    let mut left = g.left.min(g.col);
    let fits = |left: usize| {
        let mut used = numw;
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
    let cols: Vec<usize> = (left..=last.min(g.widths.len().saturating_sub(1))).collect();
    let marked = g.marked();
    let is_marked = |r: u64| marked.is_some_and(|(lo, n)| r >= lo && r < lo + n);
    let search = app
        .results
        .search
        .as_ref()
        .filter(|s| s.table == g.result.table);
    let is_hit = |r: u64| search.is_some_and(|s| s.is_hit(r));
    // Each row as lines of cells: one line, or with wrap on as many as its longest cell needs.
    let row_lines = |r: u64| -> Vec<Line<'static>> {
        let row = g.row_cells(r);
        let cells: Vec<(Vec<String>, ratatui::style::Style, bool)> = cols
            .iter()
            .map(|&i| {
                let w = g.widths[i] as usize;
                let right = numeric.get(i) == Some(&true);
                match row {
                    None => (vec!["…".to_owned()], th.muted, false),
                    Some(cells) => match cells
                        .get(i)
                        .and_then(|c| c.as_deref())
                        .map(|v| shown_cell(&g.result.columns[i].1, v))
                    {
                        None => (vec!["NULL".to_owned()], th.null, false),
                        Some(v) if g.wrap => (
                            wrap_text(&v, w, WRAP_LINES),
                            if right { th.number } else { th.base },
                            right,
                        ),
                        Some(v) => {
                            let v = v.replace(['\n', '\r', '\t'], " ");
                            (
                                vec![fit(&v, w)],
                                if right { th.number } else { th.base },
                                right,
                            )
                        }
                    },
                }
            })
            .collect();
        let height = cells.iter().map(|c| c.0.len()).max().unwrap_or(1).max(1);
        (0..height)
            .map(|k| {
                let number = match (k, is_marked(r)) {
                    (0, true) => Span::styled(format!("▌{:>w$}", r + 1, w = numw - 1), th.accent),
                    (0, false) if is_hit(r) => {
                        Span::styled(format!("{:>numw$}", format!("•{}", r + 1)), th.warning)
                    }
                    (0, false) => Span::styled(format!("{:>numw$}", r + 1), th.muted),
                    (_, true) => Span::styled(format!("{:<numw$}", "▌"), th.accent),
                    (_, false) => Span::raw(" ".repeat(numw)),
                };
                let mut spans = vec![number];
                for (&i, (texts, style, right)) in cols.iter().zip(&cells) {
                    let w = g.widths[i] as usize;
                    let text = texts.get(k).cloned().unwrap_or_default();
                    let text = if *right { format!("{text:>w$}") } else { text };
                    let style = if r == g.row && i == g.col && app.focus == Pane::Results {
                        th.selection
                    } else {
                        *style
                    };
                    spans.push(Span::raw(" "));
                    spans.push(Span::styled(format!("{text:<w$}"), style));
                }
                let line = Line::from(spans);
                if r == g.row {
                    line.patch_style(
                        ratatui::style::Style::default()
                            .add_modifier(ratatui::style::Modifier::BOLD),
                    )
                } else {
                    line
                }
            })
            .collect()
    };
    // Wrapped rows take more than a line: start early enough that the cursor's row shows.
    let mut top = g.top;
    if g.wrap {
        let height = |r: u64| row_lines(r).len();
        let mut used = height(g.row);
        top = g.row.min(g.top.max(g.row.saturating_sub(body_rows as u64)));
        let mut t = g.row;
        while t > top {
            let h = height(t - 1);
            if used + h > body_rows {
                top = t;
                break;
            }
            used += h;
            t -= 1;
        }
    }
    let mut shown_to = top;
    for r in top..g.result.rows {
        if lines.len() >= body_rows + 2 {
            break;
        }
        lines.extend(row_lines(r));
        shown_to = r + 1;
    }
    lines.truncate(body_rows + 2);
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
    if let Some(prompt) = &app.results.prompt {
        let (label, text, hint) = match prompt {
            GridPrompt::Filter(t) => (
                "rows containing: ",
                t,
                "  (enter keeps them, empty shows all, esc cancels)",
            ),
            GridPrompt::Search(t) => ("find: ", t, "  (enter finds, then n / N · esc cancels)"),
        };
        let mut spans = vec![Span::styled(label, th.info)];
        spans.extend(text.spans(ratatui::style::Style::default(), th.selection));
        spans.push(Span::styled(hint, th.muted));
        let line = Line::from(spans);
        f.render_widget(Paragraph::new(line), foot);
        return;
    }
    let loaded = g.row_cells(g.row).is_some();
    let mut info = format!(
        "row {} of {} · showing {}–{} · col {}/{}",
        count(if g.result.rows == 0 { 0 } else { g.row + 1 }),
        count(g.result.rows),
        count(if g.result.rows == 0 { 0 } else { top + 1 }),
        count(shown_to),
        g.col + 1,
        g.result.columns.len(),
    );
    if let Some((_, n)) = marked {
        info.push_str(&format!(" · {} marked (x exports them)", plural(n, "row")));
    }
    if let Some(s) = app
        .results
        .search
        .as_ref()
        .filter(|s| s.table == g.result.table)
    {
        match (&s.hits, s.current) {
            (None, _) => info.push_str(&format!(" · finding “{}”…", s.text)),
            (Some(h), Some(i)) => {
                info.push_str(&format!(" · “{}” {} of {} (n/N)", s.text, i + 1, h.len()))
            }
            (Some(h), None) => info.push_str(&format!(
                " · “{}” {}",
                s.text,
                plural(h.len() as u64, "match")
            )),
        }
    }
    if g.wrap {
        info.push_str(" · wrapped");
    }
    if !loaded {
        info.push_str(" · loading…");
    }
    f.render_widget(Paragraph::new(Line::styled(info, th.muted)), foot);
}

/// Lines a wrapped cell may take; more is cut with `…` (enter opens the whole cell).
const WRAP_LINES: usize = 4;

/// `text` broken into lines of at most `w` display columns (on character boundaries, line
/// breaks kept), at most `max` lines, the last marked with `…` when text was left out.
pub fn wrap_text(text: &str, w: usize, max: usize) -> Vec<String> {
    use unicode_width::UnicodeWidthChar;
    let w = w.max(1);
    let mut out: Vec<String> = Vec::new();
    let mut cut = false;
    'all: for para in text.split('\n') {
        let mut line = String::new();
        let mut used = 0;
        for c in para.chars() {
            let c = if c.is_control() { ' ' } else { c };
            let cw = c.width().unwrap_or(0);
            if used > 0 && used + cw > w {
                out.push(std::mem::take(&mut line));
                used = 0;
                if out.len() == max {
                    cut = true;
                    break 'all;
                }
            }
            line.push(c);
            used += cw;
        }
        out.push(line);
        if out.len() == max {
            cut = out.len() < text.split('\n').count() || cut;
            break;
        }
    }
    if out.is_empty() {
        out.push(String::new());
    }
    if cut && let Some(last) = out.last_mut() {
        *last = fit(&format!("{last}…"), w);
        if !last.ends_with('…') {
            last.push('…');
        }
    }
    out.truncate(max);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn wrapping_keeps_width_lines_and_marks_what_is_left_out() {
        assert_eq!(wrap_text("abcdef", 3, 4), ["abc", "def"]);
        assert_eq!(wrap_text("a\nb", 3, 4), ["a", "b"]);
        let cut = wrap_text("aaaabbbbccccdddd", 2, 3);
        assert_eq!(cut.len(), 3);
        assert!(cut[2].ends_with('…'), "{cut:?}");
        // Wide characters count two columns each.
        assert_eq!(wrap_text("日本語", 4, 4), ["日本", "語"]);
    }

    proptest! {
        /// Any cell text wraps without a panic, within the width and the line budget.
        #[test]
        fn any_text_wraps_within_bounds(text in "\\PC{0,200}", w in 1usize..30, max in 1usize..6) {
            let lines = wrap_text(&text, w, max);
            prop_assert!(!lines.is_empty() && lines.len() <= max);
            for l in &lines {
                prop_assert!(super::super::display_width(l) <= w.max(2));
            }
        }
    }
}
