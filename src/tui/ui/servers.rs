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
    let room = area.height.saturating_sub(2) as usize;
    let n = app.servers.len();
    // When not every server fits, the view follows the selection, the title says which are
    // shown and, where there is a row for it, the last row says how many more: nothing is cut
    // silently.
    let (skip, shown) = if n <= room {
        (0, n)
    } else {
        let shown = if room >= 3 { room - 1 } else { room.max(1) };
        (
            app.server_sel.saturating_sub(shown - 1).min(n - shown),
            shown,
        )
    };
    let extra = if app.show_stderr {
        "stderr".to_owned()
    } else if shown < n {
        format!("{}–{} of {n}", skip + 1, skip + shown)
    } else {
        String::new()
    };
    let block = pane_block(app, Pane::Servers, &extra);
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
    let mut lines: Vec<Line> = app
        .servers
        .iter()
        .enumerate()
        .skip(skip)
        .take(shown)
        .map(|(i, s)| {
            let (state_style, mark) = match s.state {
                ServerState::Up => (th.success, "●"),
                ServerState::Delisted | ServerState::Stopped => (th.error, "✕"),
                ServerState::Starting | ServerState::Restarting { .. } => (th.warning, "◌"),
            };
            // The protocol revision in words a person knows, not loom's own names for them.
            let era = match s.era.as_deref() {
                Some("legacy") => " · MCP 2025".to_owned(),
                Some("modern") => " · MCP 2026-07-28".to_owned(),
                Some(other) => format!(" · MCP {other}"),
                None => String::new(),
            };
            let err = s
                .last_error
                .as_deref()
                .filter(|_| s.state != ServerState::Up)
                .map(|e| format!(" {e}"))
                .unwrap_or_default();
            let text = format!(
                "{} {} · {}{era}",
                s.name,
                s.state,
                super::plural(s.tools as u64, "tool")
            );
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
    if shown < n && lines.len() < room {
        let (above, below) = (skip, n - skip - shown);
        let text = match (above, below) {
            (0, b) => format!("… {b} more below"),
            (a, 0) => format!("… {a} more above"),
            (a, b) => format!("… {a} above, {b} below"),
        };
        lines.push(Line::styled(fit(&text, w), th.muted));
    }
    f.render_widget(Paragraph::new(lines), inner);
}
