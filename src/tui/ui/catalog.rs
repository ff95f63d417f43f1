//! The Catalog pane: datasets (ref, rows, source, pinned), parked blobs and memories, one
//! list at a time. Selecting an item shows it in Detail; `d` opens the describe view.

use super::super::app::{App, Pane, Section};
use super::{empty_state, fit, human, pane_block};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    let th = &app.theme;
    let block = pane_block(app, Pane::Catalog, "");
    let inner = block.inner(area);
    f.render_widget(block, area);
    let w = inner.width as usize;
    let tab = |s: Section, label: String| {
        Span::styled(
            format!(" {label} "),
            if app.catalog.section == s {
                th.title_focused
            } else {
                th.muted
            },
        )
    };
    let mut lines = vec![Line::from(vec![
        tab(
            Section::Datasets,
            format!("data {}", app.catalog.datasets.len()),
        ),
        tab(
            Section::Blobs,
            format!("parked {}", app.catalog.blobs.len()),
        ),
        tab(
            Section::Memories,
            match app.catalog.memory_skipped_lines {
                0 => format!("mem {}", app.catalog.memories.len()),
                // The pane is narrow: the mark here, the words under the list.
                bad => format!("mem {} !{bad}", app.catalog.memories.len()),
            },
        ),
    ])];
    let sel = app.catalog.selected();
    let damage = (app.catalog.section == Section::Memories && app.catalog.memory_skipped_lines > 0)
        .then(|| {
            format!(
                "! {} damaged line{} in the memory file skipped",
                app.catalog.memory_skipped_lines,
                if app.catalog.memory_skipped_lines == 1 {
                    ""
                } else {
                    "s"
                }
            )
        });
    let rows = (inner.height as usize).saturating_sub(1 + usize::from(damage.is_some()));
    let scroll = sel.saturating_sub(rows.saturating_sub(1));
    let mut items: Vec<Line> = match app.catalog.section {
        Section::Datasets => app
            .catalog
            .datasets
            .iter()
            .map(|d| {
                Line::from(vec![
                    Span::styled(if d.pinned { "📌" } else { "  " }, th.accent),
                    Span::styled(
                        format!(
                            "{:<width$}",
                            fit(&d.dataset, w.saturating_sub(9)),
                            width = w.saturating_sub(9)
                        ),
                        th.function,
                    ),
                    Span::styled(format!("{:>7}", human(d.rows)), th.number),
                ])
            })
            .collect(),
        Section::Blobs => app
            .catalog
            .blobs
            .iter()
            .map(|b| {
                Line::from(vec![
                    Span::styled(fit(&b.key, 14), th.function),
                    Span::styled(format!(" {:>6} ", human(b.chars as u64)), th.number),
                    Span::styled(fit(&b.summary, w.saturating_sub(22)), th.muted),
                ])
            })
            .collect(),
        Section::Memories => app
            .catalog
            .memories
            .iter()
            .map(|m| {
                Line::from(vec![
                    Span::styled(if m.pinned { "📌" } else { "  " }, th.accent),
                    Span::styled(fit(&m.key, w / 2), th.function),
                    Span::styled(
                        format!(" {}", fit(m.content.lines().next().unwrap_or(""), w / 2)),
                        th.muted,
                    ),
                ])
            })
            .collect(),
    };
    if items.is_empty() {
        let hint: &[&str] = match app.catalog.section {
            Section::Datasets => &[
                "No datasets yet.",
                "A large tabular tool result becomes one",
                "(try list_orders from the palette, :),",
                "and so does loom_query or loom_materialize.",
            ],
            Section::Blobs => &[
                "No parked text yet.",
                "Large non-table results are parked",
                "for paged or pattern reads.",
            ],
            Section::Memories => &[
                "No memories yet.",
                "The model keeps them with",
                "loom_memory_set.",
            ],
        };
        lines.extend(empty_state(hint, th.muted));
    } else {
        for (i, line) in items.drain(..).enumerate().skip(scroll).take(rows) {
            lines.push(if i == sel && app.focus == Pane::Catalog {
                line.style(th.selection)
            } else if i == sel {
                line.style(th.muted)
            } else {
                line
            });
        }
    }
    if let Some(d) = damage {
        lines.push(Line::from(Span::styled(fit(&d, w), th.warning)));
    }
    f.render_widget(Paragraph::new(lines), inner);
}
