//! The Catalog pane: the tree of servers and their tools, datasets and their typed columns,
//! parked text and memories, each group with its count. Outside text (tool descriptions,
//! column names, memory content) is escaped and cut to the pane; the selection is kept in view.

use super::super::app::{App, Group, Node, Pane, Row};
use super::{fit, fit_middle, human, pane_block};
use crate::terminal_text::line as one_line;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    let th = &app.theme;
    let c = &app.catalog;
    let block = pane_block(app, Pane::Catalog, "");
    let inner = block.inner(area);
    f.render_widget(block, area);
    let w = inner.width as usize;
    let rows = c.rows();
    let sel = c.selected_row();
    let damage =
        (c.memory_skipped_lines > 0 && c.selected_node().group() == Group::Memories).then(|| {
            format!(
                "! {} damaged line{} in the memory file skipped",
                c.memory_skipped_lines,
                if c.memory_skipped_lines == 1 { "" } else { "s" }
            )
        });
    let height = (inner.height as usize).saturating_sub(usize::from(damage.is_some()));
    // The view moves only as far as the selection needs.
    let mut top = c.top.get();
    if sel < top {
        top = sel;
    } else if height > 0 && sel >= top + height {
        top = sel + 1 - height;
    }
    top = top.min(rows.len().saturating_sub(height));
    c.top.set(top);
    let mut lines: Vec<Line> = Vec::new();
    for (i, row) in rows.iter().enumerate().skip(top).take(height) {
        let line = row_line(app, row, w);
        lines.push(if i == sel && app.focus == Pane::Catalog {
            line.style(th.selection)
        } else if i == sel {
            line.style(th.muted)
        } else {
            line
        });
    }
    if let Some(d) = damage {
        lines.push(Line::from(Span::styled(fit(&d, w), th.warning)));
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// One row: its indent and open mark, then what the node shows, cut to `w` columns.
fn row_line<'a>(app: &App, row: &Row, w: usize) -> Line<'a> {
    let th = &app.theme;
    let c = &app.catalog;
    let mark = match row.open {
        Some(true) => "▾ ",
        Some(false) => "▸ ",
        None => "  ",
    };
    let lead = format!("{}{mark}", "  ".repeat(row.depth as usize));
    let room = w.saturating_sub(super::display_width(&lead));
    let mut spans = vec![Span::styled(lead, th.muted)];
    // A name, then muted words after it in what room is left.
    let named = |spans: &mut Vec<Span<'a>>, name: &str, style: Style, rest: &str| {
        let name = fit(&one_line(name), room);
        let left = room.saturating_sub(super::display_width(&name));
        spans.push(Span::styled(name, style));
        if left > 1 && !rest.is_empty() {
            spans.push(Span::styled(fit(&format!(" {rest}"), left), th.muted));
        }
    };
    match &row.node {
        Node::Group(g) => {
            let mut label = format!("{} · {}", g.label(), c.count(*g));
            if *g == Group::Memories && c.memory_skipped_lines > 0 {
                label.push_str(&format!(" !{}", c.memory_skipped_lines));
            }
            // What the tool listing costs each turn, against the full listing.
            if *g == Group::Servers
                && let Some((now, full)) = c.listing_cost()
            {
                label.push_str(&format!(
                    " · {} {}/{} tok",
                    c.listing_mode,
                    human(now),
                    human(full)
                ));
            }
            spans.push(Span::styled(fit(&label, room), th.title));
        }
        Node::Server(s) => {
            let n = c.tools.iter().filter(|t| &t.server == s).count();
            named(&mut spans, s, th.function, &super::plural(n as u64, "tool"));
        }
        Node::Tool(name) => {
            let tool = c.tools.iter().find(|t| &t.name == name);
            let desc = tool
                .map(|t| t.description.lines().next().unwrap_or("").trim())
                .unwrap_or("");
            // Its cost in the listing and why it is there (or that it is not).
            let note = match tool.and_then(|t| t.placement.as_ref()) {
                Some(p) if p.listed => format!("{} tok · {} · {}", p.tokens, p.why, one_line(desc)),
                Some(p) => format!(
                    "not listed ({} tok in full) · {}",
                    p.tokens_full,
                    one_line(desc)
                ),
                None => one_line(desc).into_owned(),
            };
            // Where the last find put it (Detail says why).
            let note = match c.last_find.as_ref().and_then(|f| f.of(name)) {
                Some(t) => format!("#{} found · {note}", t.rank),
                None => note,
            };
            let style = match tool.and_then(|t| t.placement.as_ref()) {
                Some(p) if !p.listed => th.muted,
                _ => th.function,
            };
            named(&mut spans, name, style, &note);
        }
        Node::Dataset(d) => {
            let view = c.datasets.iter().find(|x| &x.dataset == d);
            let pinned = view.is_some_and(|v| v.pinned);
            let rows = view.map_or(String::new(), |v| format!("{:>6}", human(v.rows)));
            let pin = if pinned { "📌" } else { "" };
            let name_w = room.saturating_sub(rows.len() + super::display_width(pin));
            // Cut in the middle: datasets of one tool differ at their end.
            let name = fit_middle(&one_line(d), name_w);
            let pad = name_w.saturating_sub(super::display_width(&name));
            spans.push(Span::styled(pin, th.accent));
            spans.push(Span::styled(name, th.function));
            spans.push(Span::raw(" ".repeat(pad)));
            spans.push(Span::styled(rows, th.number));
        }
        Node::Column { dataset, column } => {
            let ty = c
                .datasets
                .iter()
                .find(|x| &x.dataset == dataset)
                .and_then(|x| x.columns.iter().find(|(n, _)| n == column))
                .map_or(String::new(), |(_, t)| format!(" {}", one_line(t)));
            named(&mut spans, column, th.base, &ty);
        }
        Node::Blob(key) => {
            let (size, summary) = c
                .blobs
                .iter()
                .find(|b| &b.key == key)
                .map_or((String::new(), String::new()), |b| {
                    (human(b.chars as u64), one_line(&b.summary).into_owned())
                });
            named(&mut spans, key, th.function, &format!("{size} {summary}"));
        }
        Node::Memory(key) => {
            let m = c.memories.iter().find(|m| &m.key == key);
            if m.is_some_and(|m| m.pinned) {
                spans.push(Span::styled("📌", th.accent));
            }
            let first = m.map_or("", |m| m.content.lines().next().unwrap_or(""));
            let room_left = room.saturating_sub(if m.is_some_and(|m| m.pinned) { 2 } else { 0 });
            let name = fit(&one_line(key), room_left.min(room_left / 2 + 4));
            let left = room_left.saturating_sub(super::display_width(&name));
            spans.push(Span::styled(name, th.function));
            if left > 1 {
                spans.push(Span::styled(
                    fit(&format!(" {}", one_line(first)), left),
                    th.muted,
                ));
            }
        }
        Node::Empty(g) => {
            let hint = match g {
                Group::Servers => "No servers yet.",
                Group::Datasets => "No datasets yet.",
                Group::Parked => "No parked text yet.",
                Group::Memories => "No memories yet (n adds one).",
            };
            spans.push(Span::styled(fit(hint, room), th.muted));
        }
    }
    Line::from(spans)
}
