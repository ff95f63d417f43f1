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
    let n = app.servers.list.len();
    // When not every server fits, the view follows the selection, the title says which are
    // shown and, where there is a row for it, the last row says how many more: nothing is cut
    // silently.
    // Two rows a server (its state, then its numbers) when there is room, else one.
    let per = if room >= 2 * n || room >= 3 { 2 } else { 1 };
    let (skip, shown) = if n * per <= room {
        (0, n)
    } else {
        let shown = if room > per {
            (room - 1) / per
        } else {
            (room / per).max(1)
        };
        (
            app.servers.sel.saturating_sub(shown - 1).min(n - shown),
            shown,
        )
    };
    let extra = if app.servers.show_stderr {
        "stderr".to_owned()
    } else if shown < n {
        format!("{}–{} of {n}", skip + 1, skip + shown)
    } else {
        String::new()
    };
    let block = pane_block(app, Pane::Servers, &extra);
    let inner = block.inner(area);
    f.render_widget(block, area);
    if app.servers.list.is_empty() {
        f.render_widget(
            Paragraph::new(empty_state(&["no servers in the config"], th.muted)),
            inner,
        );
        return;
    }
    let w = inner.width as usize;
    if app.servers.show_stderr {
        let s = &app.servers.list[app.servers.sel.min(app.servers.list.len() - 1)];
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
        .list
        .iter()
        .enumerate()
        .skip(skip)
        .take(shown)
        .flat_map(|(i, s)| {
            let (state_style, mark) = match s.state {
                ServerState::Up => (th.success, "●"),
                ServerState::Delisted | ServerState::Stopped => (th.error, "✕"),
                ServerState::Starting | ServerState::Restarting { .. } => (th.warning, "◌"),
                ServerState::NeedsAuth => (th.warning, "!"),
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
                .map(|e| {
                    let at = s
                        .last_error_at
                        .as_deref()
                        .and_then(|t| t.get(11..19))
                        .map(|t| format!(" at {t}"))
                        .unwrap_or_default();
                    let what = if s.state == ServerState::NeedsAuth {
                        "refused"
                    } else {
                        "failed"
                    };
                    format!("{what}{at}: {e}")
                })
                .unwrap_or_default();
            // How long it has been up, how often it restarted, and how its calls went.
            let up = s
                .up_since
                .as_deref()
                .and_then(|t| app.elapsed_secs(t))
                .map(|secs| format!("up {}", super::duration(secs)))
                .unwrap_or_default();
            let restarts = failures_text(s.failures, s.restarts)
                .map(|t| format!(" · {t}"))
                .unwrap_or_default();
            let up = if up.is_empty() { String::new() } else { up };
            let (calls, p50) = app.traffic.server_calls(&s.name);
            let calls = match (calls, p50) {
                (0, _) => String::new(),
                (n, Some(p)) => format!(" · {} p50 {p} ms", super::plural(n as u64, "call")),
                (n, None) => format!(" · {}", super::plural(n as u64, "call")),
            };
            let text = format!(
                "{} {} · {}{era}",
                s.name,
                s.state,
                super::plural(s.tools as u64, "tool")
            );
            let first = Line::from(vec![
                Span::styled(format!("{mark} "), state_style),
                Span::raw(fit(&text, w.saturating_sub(2))),
            ]);
            // Calls that waited for the server's rate, and the rate.
            let held = if s.throttled > 0 {
                format!(
                    " · {} held to {}/s",
                    super::plural(s.throttled, "call"),
                    s.max_calls_per_second
                )
            } else {
                String::new()
            };
            let numbers = format!("  {}{restarts}{calls}{held}", up.trim_start());
            let numbers = numbers.trim_end_matches(" · ").replacen("   · ", "  ", 1);
            let mut second = vec![Span::styled(fit(&numbers, w), th.muted)];
            if !err.is_empty() {
                let err = if numbers.trim().is_empty() {
                    err
                } else {
                    format!(" · {err}")
                };
                let room = w.saturating_sub(numbers.chars().count());
                second.push(Span::styled(fit(&err, room), th.error));
            }
            let mut rows = vec![first];
            if per == 2 {
                rows.push(Line::from(second));
            }
            let selected = i == app.servers.sel && app.focus == Pane::Servers;
            rows.into_iter()
                .map(move |l| if selected { l.style(th.selection) } else { l })
                .collect::<Vec<_>>()
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

/// How often a server failed and was restarted, in the words of its log: `1 restart` when
/// each failure was followed by one, `4 failures · 3 restarts` when the last one delisted it.
fn failures_text(failures: u32, restarts: u32) -> Option<String> {
    match (failures, restarts) {
        (0, 0) => None,
        (f, r) if f == r => Some(super::plural(r, "restart")),
        (f, 0) => Some(super::plural(f, "failure")),
        (f, r) => Some(format!(
            "{} · {}",
            super::plural(f, "failure"),
            super::plural(r, "restart")
        )),
    }
}
