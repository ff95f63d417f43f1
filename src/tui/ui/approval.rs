//! The approval prompt: a model's call that needs a person waits until they approve it once,
//! for the session, or deny it (with an optional reason).

use super::super::app::App;
use super::centred;
use crate::session::approvals::ApprovalRequest;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

pub fn draw(f: &mut Frame, area: Rect, app: &App, req: &ApprovalRequest) {
    let th = &app.theme;
    let r = centred(f, area, 64, 60);
    let more = if app.approvals.len() > 1 {
        format!(" (+{} waiting)", app.approvals.len() - 1)
    } else {
        String::new()
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(th.warning)
        .style(th.base)
        .title(Span::styled(format!(" approve a call?{more} "), th.warning));
    let mut lines = vec![
        Line::from(vec![
            Span::styled("tool    ", th.muted),
            Span::styled(req.tool.clone(), th.function),
            Span::styled(
                format!("  ({} on server {})", req.original, req.server),
                th.muted,
            ),
        ]),
        Line::from(vec![
            Span::styled("call    ", th.muted),
            Span::raw(format!(
                "#{} from the model · denied after {}s without an answer",
                req.call, req.timeout_secs
            )),
        ]),
    ];
    if !req.annotations.is_null() {
        lines.push(Line::from(vec![
            Span::styled("hints   ", th.muted),
            Span::styled(req.annotations.to_string(), th.warning),
        ]));
    }
    lines.push(Line::styled("arguments", th.muted));
    let args = serde_json::to_string_pretty(&req.arguments).unwrap_or_default();
    lines.extend(app.highlighter.json_lines(&args, th).into_iter().take(20));
    lines.push(Line::raw(""));
    match &app.deny_reason {
        Some(reason) => lines.push(Line::from(vec![
            Span::styled("reason for denying: ", th.error),
            Span::raw(format!("{reason}▏")),
            Span::styled("  (enter denies, esc goes back)", th.muted),
        ])),
        None => lines.push(Line::from(vec![
            Span::styled(" a ", th.key),
            Span::raw("approve once  "),
            Span::styled(" A ", th.key),
            Span::raw("approve for this session  "),
            Span::styled(" d ", th.key),
            Span::raw("deny…"),
        ])),
    }
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block),
        r,
    );
}
