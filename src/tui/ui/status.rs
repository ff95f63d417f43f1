//! The title bar (session, servers up, datasets) and the footer: the last status message
//! and the keys of the focused pane, generated from the keymap.

use super::super::app::{App, Overlay, StatusKind};
use super::super::keymap::{Action, Context};
use super::fit;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn draw_title(f: &mut Frame, area: Rect, app: &App) {
    let th = &app.theme;
    let up = app
        .servers
        .list
        .iter()
        .filter(|s| s.state == crate::types::events::ServerState::Up)
        .count();
    let config = app
        .session
        .as_ref()
        .map(|s| s.config.rsplit('/').next().unwrap_or("").to_owned())
        .unwrap_or_default();
    let mut spans = vec![Span::styled(format!(" {} ", app.title), th.title_focused)];
    if app.session_ended {
        // Said where the eye starts: nothing below moves any more.
        spans.push(Span::styled(
            if app.reattach_to.is_some() {
                " SESSION ENDED · waiting to reattach "
            } else {
                " SESSION ENDED "
            },
            th.error,
        ));
    }
    spans.extend([
        Span::styled(format!(" {config} "), th.muted),
        Span::styled(
            format!(" servers {up}/{} up ", app.servers.list.len()),
            th.muted,
        ),
        Span::styled(
            format!(" datasets {} ", app.catalog.datasets.len()),
            th.muted,
        ),
        Span::styled(
            if app.attached && !app.session_ended {
                " ? keys  : tools  q detach "
            } else {
                " ? keys  : tools  q quit "
            },
            th.muted,
        ),
    ]);
    f.render_widget(Paragraph::new(Line::from(spans)).style(th.status), area);
}

pub fn draw_footer(f: &mut Frame, area: Rect, app: &App) {
    let th = &app.theme;
    let status = match (&app.results.export, &app.status) {
        (Some(e), _) if e.total > 0 => Line::styled(
            format!(
                " exporting {}: {} of {} rows ({}%)",
                e.table,
                e.rows,
                e.total,
                e.rows * 100 / e.total
            ),
            th.info,
        ),
        (_, status) => match status {
            Some((text, kind)) => Line::styled(
                format!(" {}", fit(text, area.width as usize - 1)),
                match kind {
                    StatusKind::Info => th.info,
                    StatusKind::Success => th.success,
                    StatusKind::Error => th.error,
                },
            ),
            None => Line::raw(""),
        },
    };
    let status_area = Rect::new(area.x, area.y, area.width, 1);
    f.render_widget(Paragraph::new(status).style(th.status), status_area);
    if area.height < 2 {
        return;
    }
    // Keys of what has focus: the overlay or the pane, then the navigation basics.
    let contexts = app.contexts();
    let mut spans = Vec::new();
    let mut width = 0usize;
    let limit = area.width as usize;
    let primary = contexts.first().copied();
    let mut shown = Vec::new();
    let mut cut = false;
    'contexts: for ctx in contexts {
        for (k, a) in app.keymap.grouped(ctx) {
            if Some(ctx) != primary
                && !matches!(a.name(), "focus_next" | "help" | "palette" | "quit")
            {
                continue;
            }
            // An action bound in several contexts is named once, with its first keys; one that
            // would do nothing for the selection is not offered.
            if shown.contains(&a) || !app.offers(a) {
                continue;
            }
            // The nine `alt-N` tab keys are one idea: the title numbers the tabs, help lists
            // the keys, and next/previous tab stand for them here.
            if a.tab_index().is_some() {
                continue;
            }
            shown.push(a);
            let item = format!(" {k} ");
            // Attached, quitting leaves the session running: the key bar says so.
            let help = match a {
                Action::Quit if app.attached && !app.session_ended => "detach",
                Action::Open if ctx == Context::Catalog => app.catalog.open_label(),
                _ => a.help(),
            };
            let text = format!("{help} ");
            // Two columns stay free for the mark that says more keys did not fit.
            if width + item.chars().count() + text.chars().count() + 2 > limit {
                cut = true;
                break;
            }
            width += item.chars().count() + text.chars().count();
            spans.push(Span::styled(item, th.key));
            spans.push(Span::styled(text, th.muted));
        }
        if cut {
            break 'contexts;
        }
    }
    if cut {
        spans.push(Span::styled("…", th.muted));
    }
    if matches!(app.overlay, Overlay::Filter) {
        spans = vec![Span::styled(
            format!(
                " filter: {} (enter keeps, esc closes)",
                app.traffic.filter.with_cursor()
            ),
            th.info,
        )];
    }
    f.render_widget(
        Paragraph::new(Line::from(spans)).style(th.status),
        Rect::new(area.x, area.y + 1, area.width, 1),
    );
}
