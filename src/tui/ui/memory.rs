//! The memory editor overlay: a new memory's key, then the content as a text area, with the
//! version it started from and why a save was refused (the text stays as typed).

use super::super::app::{App, MemoryEditor, MemoryStage};
use super::centred;
use crate::terminal_text::line as one_line;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

pub fn draw(f: &mut Frame, area: Rect, app: &App, m: &MemoryEditor) {
    let th = &app.theme;
    let r = centred(f, area, 70, 70);
    let key = one_line(&m.key);
    let title = match (m.stage, m.if_version) {
        (MemoryStage::Key, _) => {
            " new memory — type its key, enter goes on · esc cancels ".to_owned()
        }
        (MemoryStage::Content, 0) => format!(" new memory {key} · ctrl-s saves · esc cancels "),
        (MemoryStage::Content, v) => {
            format!(" memory {key} · editing version {v} · ctrl-s saves · esc cancels ")
        }
    };
    let block = super::overlay_block(app, title);
    let inner = block.inner(r);
    f.render_widget(block, r);
    let err_h = match (&m.error, m.saving) {
        // The whole message, up to half the box: after a refused save it holds the choice.
        (Some(e), _) => {
            let lines = e.chars().count().div_ceil(usize::from(inner.width.max(1)));
            u16::try_from(lines.max(1))
                .unwrap_or(u16::MAX)
                .min(inner.height / 2)
        }
        (None, true) => 1,
        (None, false) => 0,
    };
    let body = Rect {
        height: inner.height.saturating_sub(err_h),
        ..inner
    };
    match m.stage {
        MemoryStage::Key => {
            let lines = vec![
                Line::from(
                    std::iter::once(Span::styled("key › ", th.accent))
                        .chain(
                            m.key_input
                                .spans(ratatui::style::Style::default(), th.selection),
                        )
                        .collect::<Vec<_>>(),
                ),
                Line::raw(""),
                Line::styled(
                    "The model reads it by this key (loom_memory_get); the content comes next.",
                    th.muted,
                ),
            ];
            f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), body);
        }
        MemoryStage::Content => {
            let mut about = Vec::new();
            if m.pinned {
                about.push("pinned (p in the catalog unpins)".to_owned());
            }
            if !m.tags.is_empty() {
                about.push(format!("tags: {}", one_line(&m.tags.join(", "))));
            }
            let about_h = u16::from(!about.is_empty()).min(body.height);
            if about_h > 0 {
                f.render_widget(
                    Paragraph::new(Line::styled(about.join(" · "), th.muted)),
                    Rect { height: 1, ..body },
                );
            }
            let text = Rect {
                y: body.y + about_h,
                height: body.height.saturating_sub(about_h),
                ..body
            };
            f.render_widget(m.content.as_ref(), text);
        }
    }
    let foot = Rect {
        y: inner.y + inner.height.saturating_sub(err_h),
        height: err_h,
        ..inner
    };
    if let Some(e) = &m.error {
        f.render_widget(
            Paragraph::new(Line::styled(one_line(e).into_owned(), th.error))
                .wrap(Wrap { trim: true }),
            foot,
        );
    } else if m.saving {
        f.render_widget(Paragraph::new(Line::styled("saving…", th.info)), foot);
    }
}
