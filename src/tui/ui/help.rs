//! The help overlay, generated from the keymap: every context with its keys and what they do.

use super::super::app::App;
use super::super::keymap::Context;
use super::centred;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

pub fn draw(f: &mut Frame, area: Rect, app: &App, scroll: u16) {
    let th = &app.theme;
    let r = centred(f, area, 80, 85);
    let mut lines = Vec::new();
    for ctx in Context::ALL {
        let keys = app.keymap.grouped(*ctx);
        if keys.is_empty() {
            continue;
        }
        lines.push(Line::styled(ctx.name().to_owned(), th.title));
        for (k, a) in keys {
            lines.push(Line::from(vec![
                Span::styled(format!("  {k:<28}"), th.key),
                Span::raw(a.help().to_owned()),
            ]));
        }
    }
    let visible = r.height.saturating_sub(2) as usize;
    app.help_rows.set((visible.max(1), lines.len()));
    let scroll = scroll.min(lines.len().saturating_sub(visible) as u16);
    f.render_widget(
        Paragraph::new(lines).scroll((scroll, 0)).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(th.border_focused)
                .style(th.base)
                .title(Span::styled(
                    " keys (esc closes, j/k, page keys, g/G scroll) ",
                    th.title_focused,
                )),
        ),
        r,
    );
}
