//! The tool palette: pick any exposed tool, edit its arguments as JSON prefilled from its
//! schema (checked before sending), and call it as the human.

use super::super::app::{App, Palette, PaletteStage};
use super::{centred, fit};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

pub fn draw(f: &mut Frame, area: Rect, app: &App, p: &Palette) {
    let th = &app.theme;
    let r = centred(f, area, 70, 70);
    let block = |title: String| super::overlay_block(app, title);
    match &p.stage {
        PaletteStage::Pick => {
            let b = block(" call a tool — type to filter, enter picks, esc closes ".into());
            let inner = b.inner(r);
            f.render_widget(b, r);
            let mut prompt = vec![Span::styled("› ", th.accent)];
            prompt.extend(
                p.filter
                    .spans(ratatui::style::Style::default(), th.selection),
            );
            let mut lines = vec![Line::from(prompt)];
            let matches = p.matches(&app.tools);
            if app.tools.is_empty() {
                lines.push(Line::styled("loading tools…", th.muted));
            } else if matches.is_empty() {
                lines.push(Line::styled("no tool matches", th.muted));
            }
            let mut rows = (inner.height as usize).saturating_sub(1);
            // When the list is longer than the box, its last row says how many are below.
            let overflow = matches.len() > rows;
            if overflow {
                rows = rows.saturating_sub(1);
            }
            let skip = p.selected.saturating_sub(rows.saturating_sub(1));
            let w = inner.width as usize;
            for (i, t) in matches.iter().enumerate().skip(skip).take(rows) {
                let name = t["name"].as_str().unwrap_or("");
                let desc = t["description"]
                    .as_str()
                    .unwrap_or("")
                    .lines()
                    .next()
                    .unwrap_or("");
                let line = Line::from(vec![
                    Span::styled(format!("{:<30}", fit(name, 29)), th.function),
                    Span::styled(fit(desc, w.saturating_sub(30)), th.muted),
                ]);
                lines.push(if i == p.selected {
                    line.style(th.selection)
                } else {
                    line
                });
            }
            let below = matches.len().saturating_sub(skip + rows);
            if overflow {
                lines.push(Line::styled(
                    if below > 0 {
                        format!(
                            "↓ {below} more below ({} of {})",
                            p.selected + 1,
                            matches.len()
                        )
                    } else {
                        format!("end of the list ({} of {})", p.selected + 1, matches.len())
                    },
                    th.muted,
                ));
            }
            f.render_widget(Paragraph::new(lines), inner);
        }
        PaletteStage::Edit { tool, args } => {
            let name = tool["name"].as_str().unwrap_or("");
            let b = block(if p.question.is_some() {
                format!(" {name} — call it? y calls · n back ")
            } else {
                format!(" {name} — arguments (JSON) · ctrl-s calls · esc back ")
            });
            let inner = b.inner(r);
            f.render_widget(b, r);
            let desc = tool["description"].as_str().unwrap_or("");
            let desc_h = 3.min(inner.height / 3);
            f.render_widget(
                Paragraph::new(Line::styled(desc.to_owned(), th.muted)).wrap(Wrap { trim: true }),
                Rect::new(inner.x, inner.y, inner.width, desc_h),
            );
            let room = inner.height.saturating_sub(desc_h);
            // The error sits right under the arguments, where the person is looking, and
            // takes the room it needs to be read whole (up to half the box).
            let note = p
                .question
                .as_ref()
                .map(|q| (format!("? {q}"), th.warning))
                .or_else(|| p.error.as_ref().map(|e| (format!("✗ {e}"), th.error)));
            let err_h = note.as_ref().map_or(0, |(e, _)| {
                let w = usize::from(inner.width.max(1));
                let lines = (e.chars().count() + 2).div_ceil(w).max(1);
                u16::try_from(lines)
                    .unwrap_or(u16::MAX)
                    .min(room / 2)
                    .max(1)
            });
            let text_h = u16::try_from(args.lines().len()).unwrap_or(u16::MAX);
            let edit_h = if note.is_some() {
                text_h.min(room.saturating_sub(err_h))
            } else {
                room
            };
            let edit = Rect::new(inner.x, inner.y + desc_h, inner.width, edit_h);
            f.render_widget(args.as_ref(), edit);
            if let Some((text, style)) = note {
                f.render_widget(
                    Paragraph::new(Line::styled(text, style)).wrap(Wrap { trim: true }),
                    Rect::new(inner.x, edit.y + edit_h, inner.width, err_h),
                );
            }
        }
    }
}
