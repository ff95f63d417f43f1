//! The Servers pane: each downstream with its state, tool count, protocol era and last
//! error; the selected server's stderr on demand.

use super::super::app::{App, Pane};
use super::{empty_state, fit, pane_block};
use crate::types::events::ServerState;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    let th = &app.theme;
    let extra = if app.show_stderr { "stderr" } else { "" };
    let block = pane_block(app, Pane::Servers, extra);
    let inner = block.inner(area);
    f.render_widget(block, area);
    if app.servers.is_empty() {
        f.render_widget(
            Paragraph::new(empty_state(&["no servers in the config"], th.muted)),
            inner,
        );
        return;
    }
    let w = inner.width as usize;
    if app.show_stderr {
        let s = &app.servers[app.server_sel.min(app.servers.len() - 1)];
        let mut lines = vec![Line::styled(format!("{} stderr", s.name), th.title)];
        if s.stderr.is_empty() {
            lines.push(Line::styled("(nothing on stderr)", th.muted));
        }
        let room = (inner.height as usize).saturating_sub(1);
        let skip = s.stderr.len().saturating_sub(room);
        lines.extend(
            s.stderr
                .iter()
                .skip(skip)
                .map(|l| Line::styled(fit(l, w), th.muted)),
        );
        f.render_widget(Paragraph::new(lines), inner);
        return;
    }
    let lines: Vec<Line> = app
        .servers
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let (state_style, mark) = match s.state {
                ServerState::Up => (th.success, "●"),
                ServerState::Delisted | ServerState::Stopped => (th.error, "✕"),
                ServerState::Starting | ServerState::Restarting { .. } => (th.warning, "◌"),
            };
            let era = s
                .era
                .as_deref()
                .map(|e| format!(" {e}"))
                .unwrap_or_default();
            let err = s
                .last_error
                .as_deref()
                .filter(|_| s.state != ServerState::Up)
                .map(|e| format!(" {e}"))
                .unwrap_or_default();
            let text = format!("{} {} · {} tools{era}", s.name, s.state, s.tools);
            let mut spans = vec![
                Span::styled(format!("{mark} "), state_style),
                Span::raw(fit(&text, w.saturating_sub(2))),
            ];
            if !err.is_empty() {
                let room = w.saturating_sub(2 + text.chars().count());
                spans.push(Span::styled(fit(&err, room), th.error));
            }
            let line = Line::from(spans);
            if i == app.server_sel && app.focus == Pane::Servers {
                line.style(th.selection)
            } else {
                line
            }
        })
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}
