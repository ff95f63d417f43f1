//! The approval prompt: a model's call that needs a person waits until they approve it once,
//! for the session, or deny it (with an optional reason). The person decides on what they can
//! read, so every argument is shown: the text is wrapped to the prompt's width and scrolls
//! (j/k, page keys, home/end), and when it does not fit, the prompt says which lines are on
//! screen and how many there are. Nothing is cut silently.

use super::super::app::App;
use super::super::keymap::{Action, Context};
use super::centred;
use crate::types::events::ApprovalRequest;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use unicode_width::UnicodeWidthChar;

/// Lines under the scrolling text: where the view is, and the keys.
const FOOTER: u16 = 2;

pub fn draw(f: &mut Frame, area: Rect, app: &App, req: &ApprovalRequest, armed: bool) {
    let th = &app.theme;
    // A narrow terminal gives the prompt nearly all its width: its text and keys must fit.
    let r = centred(f, area, if area.width < 110 { 96 } else { 64 }, 60);
    let more = if app.approvals.waiting.len() > 1 {
        format!(" (+{} waiting)", app.approvals.waiting.len() - 1)
    } else {
        String::new()
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(th.warning)
        .style(th.base)
        .title(Span::styled(
            match &req.batch {
                Some(b) => format!(" approve a batch of {} calls?{more} ", b.calls),
                None => format!(" approve a call?{more} "),
            },
            th.warning,
        ));
    let inner = block.inner(r);
    f.render_widget(block, r);
    if inner.height == 0 || inner.width == 0 {
        return;
    }

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
                "#{} from the model · denied in {} s without an answer",
                req.call,
                app.approvals.left(req)
            )),
        ]),
    ];
    if let Some(why) = &req.reason {
        lines.push(Line::from(vec![
            Span::styled("asked   ", th.muted),
            Span::styled(crate::terminal_text::line(why).into_owned(), th.warning),
        ]));
    }
    if !req.annotations.is_null() {
        lines.push(Line::from(vec![
            Span::styled("hints   ", th.muted),
            Span::styled(req.annotations.to_string(), th.warning),
        ]));
    }
    if let Some(b) = &req.batch {
        let sql: Vec<&str> = b.sql.split_whitespace().collect();
        lines.push(Line::from(vec![
            Span::styled("batch   ", th.muted),
            Span::styled(
                format!("{} calls, one per row of: {}", b.calls, sql.join(" ")),
                th.warning,
            ),
        ]));
    }
    if !req.bindings.is_empty() {
        lines.push(Line::styled(
            "bound by loom (the values are in the arguments below)",
            th.muted,
        ));
        for b in &req.bindings {
            let mut t = format!("  {} ← {} · {} B", b.at, b.source, b.bytes);
            if !b.inputs.is_empty() {
                t.push_str(&format!(" · read {}", b.inputs.join(", ")));
            }
            lines.push(Line::styled(t, th.info));
        }
    }
    match &req.batch {
        // Every call's arguments, one line each: the first on screen, the rest by scrolling.
        Some(b) => {
            lines.push(Line::styled(
                format!("arguments of each call ({})", b.arguments.len()),
                th.muted,
            ));
            let digits = b.arguments.len().max(1).to_string().len();
            for (i, a) in b.arguments.iter().enumerate() {
                lines.push(Line::from(vec![
                    Span::styled(format!("{:>digits$} ", i + 1), th.muted),
                    Span::raw(a.to_string()),
                ]));
            }
        }
        None => {
            lines.push(Line::styled("arguments", th.muted));
            let args = serde_json::to_string_pretty(&req.arguments).unwrap_or_default();
            lines.extend(app.highlighter.json_lines(&args, th));
        }
    }

    let footer = FOOTER.min(inner.height.saturating_sub(1));
    let body = Rect {
        height: inner.height - footer,
        ..inner
    };
    let rows = wrap(lines, body.width as usize);
    let visible = body.height as usize;
    let max = rows.len().saturating_sub(visible);
    app.approvals.scroll_max.set(max);
    let offset = if app.approvals.scroll.0 == req.approval {
        app.approvals.scroll.1.min(max)
    } else {
        0
    };
    let shown: Vec<Line<'static>> = rows.iter().skip(offset).take(visible).cloned().collect();
    f.render_widget(Paragraph::new(shown), body);

    let mut foot = Vec::new();
    if footer == FOOTER {
        foot.push(if rows.len() > visible {
            Line::styled(
                format!(
                    "lines {}–{} of {} · {} scroll",
                    offset + 1,
                    (offset + visible).min(rows.len()),
                    rows.len(),
                    scroll_keys(app)
                ),
                th.warning,
            )
        } else {
            Line::raw("")
        });
    }
    foot.push(match &app.approvals.deny_reason {
        Some(reason) => {
            let mut spans = vec![Span::styled("reason for denying: ", th.error)];
            spans.extend(reason.spans(ratatui::style::Style::default(), th.selection));
            spans.push(Span::styled("  (enter denies, esc goes back)", th.muted));
            Line::from(spans)
        }
        None if !armed && app.approvals.early == Some(req.approval) => Line::styled(
            "wait… keys answer in a moment: the key pressed decided nothing",
            th.warning,
        ),
        None if !armed => Line::styled(
            "keys answer in a moment: a key pressed now still goes where it was meant to go",
            th.muted,
        ),
        None => decision_keys(app, inner.width as usize),
    });
    let foot_area = Rect {
        y: body.y + body.height,
        height: footer,
        ..inner
    };
    f.render_widget(Paragraph::new(foot), foot_area);
}

/// The keys that decide, from the keymap, in words that fit `width`: the long words, else
/// short ones, so `deny` and `later` are never cut off.
fn decision_keys(app: &App, width: usize) -> Line<'static> {
    let th = &app.theme;
    let bound = app.keymap.bindings(Context::Approval);
    let key = |a: Action| {
        bound
            .iter()
            .find(|(_, b)| *b == a)
            .map_or_else(|| a.name().to_owned(), |(k, _)| k.label().to_owned())
    };
    let long = [
        (Action::ApproveOnce, "approve once"),
        (Action::ApproveSession, "approve for this session"),
        (Action::Deny, "deny…"),
        (Action::Close, "later"),
    ];
    let short = [
        (Action::ApproveOnce, "once"),
        (Action::ApproveSession, "session"),
        (Action::Deny, "deny…"),
        (Action::Close, "later"),
    ];
    let build = |words: &[(Action, &str)]| {
        let mut spans = Vec::new();
        for (i, (a, w)) in words.iter().enumerate() {
            spans.push(Span::styled(format!(" {} ", key(*a)), th.key));
            let gap = if i + 1 < words.len() { "  " } else { "" };
            spans.push(Span::raw(format!("{w}{gap}")));
        }
        Line::from(spans)
    };
    let line = build(&long);
    if line.width() <= width {
        line
    } else {
        build(&short)
    }
}

/// One line over the title row: a call waits, and the key that opens its prompt. Keys stay
/// with what the person is doing.
pub fn draw_banner(f: &mut Frame, area: Rect, app: &App, req: &ApprovalRequest) {
    let th = &app.theme;
    let key = app
        .keymap
        .bindings(Context::Global)
        .iter()
        .find(|(_, a)| *a == Action::ReviewApproval)
        .map_or_else(
            || "review_approval".to_owned(),
            |(k, _)| k.label().to_owned(),
        );
    let more = match app.approvals.waiting.len() {
        1 => String::new(),
        n => format!(" (+{} more)", n - 1),
    };
    let line = Line::from(vec![
        Span::styled(" approval waiting ", th.title_focused),
        Span::styled(
            format!(" {} on server {}{more} ", req.tool, req.server),
            th.warning,
        ),
        Span::styled(format!(" {key} "), th.key),
        Span::styled(" review ", th.muted),
    ]);
    f.render_widget(Clear, area);
    f.render_widget(Paragraph::new(line).style(th.status), area);
}

/// The keys that scroll the prompt, from the keymap (so the hint follows a user's bindings).
fn scroll_keys(app: &App) -> String {
    let bound = app.keymap.bindings(Context::Approval);
    [
        Action::Down,
        Action::Up,
        Action::PageDown,
        Action::PageUp,
        Action::Top,
        Action::Bottom,
    ]
    .iter()
    .filter_map(|a| bound.iter().find(|(_, b)| b == a).map(|(k, _)| k.label()))
    .collect::<Vec<_>>()
    .join(" ")
}

/// Breaks each line into rows of at most `width` display columns, between words where it
/// can (a word longer than a row is broken on character boundaries), keeping every span's
/// style and every character but the spaces a break replaces; a character wider than the
/// whole row gets a row of its own.
fn wrap(lines: Vec<Line<'static>>, width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let mut out = Vec::new();
    for line in lines {
        let line_style = line.style;
        let mut row: Vec<Span<'static>> = Vec::new();
        let mut used = 0;
        let mut break_row = |row: &mut Vec<Span<'static>>, used: &mut usize| {
            out.push(Line::from(std::mem::take(row)).style(line_style));
            *used = 0;
        };
        for span in line.spans {
            let style = span.style;
            // Words with the spaces after them.
            for word in span.content.split_inclusive(' ') {
                let bare = word.trim_end_matches(' ');
                let bare_w = super::display_width(bare);
                if used > 0 && used + bare_w > width {
                    break_row(&mut row, &mut used);
                }
                if bare_w <= width {
                    // The spaces after the word stay only as far as the row has room.
                    let mut piece = bare.to_owned();
                    let spaces = word.len() - bare.len();
                    let room = width - used - bare_w;
                    piece.push_str(&" ".repeat(spaces.min(room)));
                    used += super::display_width(&piece);
                    row.push(Span::styled(piece, style));
                    continue;
                }
                let mut piece = String::new();
                for ch in word.chars() {
                    let w = ch.width().unwrap_or(0);
                    if used + w > width && used > 0 {
                        if !piece.is_empty() {
                            row.push(Span::styled(std::mem::take(&mut piece), style));
                        }
                        break_row(&mut row, &mut used);
                    }
                    piece.push(ch);
                    used += w;
                }
                if !piece.is_empty() {
                    row.push(Span::styled(piece, style));
                }
            }
        }
        out.push(Line::from(row).style(line_style));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::wrap;
    use ratatui::text::Line;

    fn text(l: &Line) -> String {
        l.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn wrapping_keeps_every_character_and_respects_the_width() {
        let long = format!("{}天気{}", "a".repeat(17), "é".repeat(30));
        let rows = wrap(vec![Line::raw(long.clone()), Line::raw("")], 10);
        let joined: String = rows.iter().map(text).collect();
        assert_eq!(joined, long);
        assert!(rows.iter().all(|r| r.width() <= 10), "{rows:?}");
        // The empty line stays a row of its own.
        assert_eq!(rows.last().map(text).as_deref(), Some(""));
    }

    /// The report at 80 columns: `serve│r sample`, `withou│t an answer`. Rows break between
    /// words, and a word is whole on one row.
    #[test]
    fn wrapping_breaks_between_words() {
        let text_in = "#7 from the model · denied in 119 s without an answer";
        let rows = wrap(vec![Line::raw(text_in)], 20);
        let shown: Vec<String> = rows.iter().map(text).collect();
        assert!(rows.iter().all(|r| r.width() <= 20), "{shown:?}");
        for word in text_in.split(' ') {
            assert!(
                shown.iter().any(|r| r.contains(word)),
                "{word} cut: {shown:?}"
            );
        }
        assert_eq!(
            shown
                .iter()
                .map(|r| r.trim_end())
                .collect::<Vec<_>>()
                .join(" "),
            text_in
        );
    }
}
