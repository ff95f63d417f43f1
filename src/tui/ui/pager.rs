//! The pager over parked text: line numbers, matches marked, where the view is and what the
//! search found in the title.

use super::super::app::{App, Pager};
use super::centred;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

pub fn draw(f: &mut Frame, area: Rect, app: &App, p: &Pager) {
    let th = &app.theme;
    let r = centred(f, area, 92, 90);
    let n = p.lines.as_ref().map_or(0, Vec::len);
    let rows = r.height.saturating_sub(3) as usize;
    p.rows.set(rows.max(1));
    let top = p.top.min(n.saturating_sub(rows));
    let mut title = format!(" {} ", p.title);
    if n > 0 {
        title.push_str(&format!(
            "· lines {}–{} of {n} ",
            top + 1,
            (top + rows).min(n)
        ));
    }
    if p.log_of.is_some() {
        title.push_str(if p.follow {
            "· following (f pauses) "
        } else {
            "· paused (f follows) "
        });
    }
    if let Some(pat) = &p.pattern {
        let at = p
            .current
            .map_or(String::new(), |i| format!("{} of ", i + 1));
        title.push_str(&format!(
            "· /{pat}: {at}{} ",
            super::plural(p.matches.len() as u64, "match")
        ));
    }
    let block = super::overlay_block(app, title);
    let inner = block.inner(r);
    f.render_widget(block, r);
    let body = Rect {
        height: inner.height.saturating_sub(1),
        ..inner
    };
    let numw = n.to_string().len().max(3);
    let current = p.current.and_then(|i| p.matches.get(i)).copied();
    let lines: Vec<Line> = match (&p.lines, &p.error) {
        (_, Some(e)) => vec![Line::styled(e.clone(), th.error)],
        (None, None) => vec![Line::styled("loading…", th.muted)],
        (Some(all), None) => all
            .iter()
            .enumerate()
            .skip(top)
            .take(rows)
            .map(|(i, l)| {
                let hit = p.matches.binary_search(&(i as u64)).is_ok();
                let separator =
                    p.log_of.is_some() && l.starts_with(crate::tui::app::server_log::SEPARATOR);
                let style = if current == Some(i as u64) {
                    th.selection
                } else if hit {
                    th.warning
                } else if separator {
                    th.accent
                } else {
                    th.base
                };
                Line::from(vec![
                    Span::styled(format!("{:>numw$} ", i + 1), th.muted),
                    Span::styled(l.clone(), style),
                ])
            })
            .collect(),
    };
    f.render_widget(Paragraph::new(lines), body);
    let foot = match &p.typing {
        Some(t) => {
            let mut spans = vec![Span::styled("/", th.key)];
            spans.extend(t.spans(ratatui::style::Style::default(), th.selection));
            spans.push(Span::styled(
                "  enter searches (regex, any case, as loom_fetch) · esc cancels",
                th.muted,
            ));
            Line::from(spans)
        }
        None => Line::styled(
            "/ search  n/N next/previous match  y copy  j/k, space, g/G scroll  esc close",
            th.muted,
        ),
    };
    let foot_area = Rect {
        y: inner.y + inner.height.saturating_sub(1),
        height: 1,
        ..inner
    };
    f.render_widget(Paragraph::new(foot), foot_area);
}

/// A yes/no question in the middle of the screen.
pub fn draw_confirm(f: &mut Frame, area: Rect, app: &App, question: &str) {
    let th = &app.theme;
    let width = (question.chars().count() as u16 + 4).clamp(30, area.width.saturating_sub(4));
    let pw = (width * 100 / area.width.max(1)).clamp(20, 90);
    let r = centred(f, area, pw, 20);
    let r = Rect {
        height: r.height.clamp(5.min(area.height), 7),
        ..r
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(th.warning)
        .style(th.base)
        .title(Span::styled(" are you sure? ", th.warning));
    let inner = block.inner(r);
    f.render_widget(block, r);
    let lines = vec![
        Line::raw(question.to_owned()),
        Line::raw(""),
        Line::from(vec![
            Span::styled(" y ", th.key),
            Span::raw("yes  "),
            Span::styled(" n ", th.key),
            Span::raw("no"),
        ]),
    ];
    f.render_widget(
        Paragraph::new(lines).wrap(ratatui::widgets::Wrap { trim: false }),
        inner,
    );
}
