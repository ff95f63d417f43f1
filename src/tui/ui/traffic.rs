//! The Traffic pane: every tool call, newest first (or following), with caller, tool,
//! outcome, latency, size and estimated tokens in → out; a sparkline of calls and tokens
//! saved per minute; a filter by server, tool, outcome or text.

use super::super::app::{App, BATCH_TOOL, Pane};
use super::{empty_state, fit, human, pane_block};
use crate::types::events::{CallSummary, Caller, Outcome};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Lines above the call list: the sparkline and the column header.
pub const LIST_TOP: usize = 2;
const MINUTES: usize = 30;

/// Minutes since the epoch of an ISO time `YYYY-MM-DDTHH:MM:SSZ`.
fn minute_of(iso: &str) -> Option<u64> {
    let date = iso.get(0..10)?;
    let mut p = date.split('-');
    let (y, m, d): (i64, u32, u32) = (
        p.next()?.parse().ok()?,
        p.next()?.parse().ok()?,
        p.next()?.parse().ok()?,
    );
    let h: u64 = iso.get(11..13)?.parse().ok()?;
    let min: u64 = iso.get(14..16)?.parse().ok()?;
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days as u64 * 1440 + h * 60 + min)
}

/// Calls and tokens saved per minute over the last half hour.
pub fn per_minute(calls: &[CallSummary], now_minute: u64) -> (Vec<u64>, Vec<u64>) {
    let newest = calls
        .iter()
        .filter_map(|c| minute_of(&c.at))
        .max()
        .unwrap_or(0);
    let end = now_minute.max(newest);
    let mut n = vec![0u64; MINUTES];
    let mut saved = vec![0u64; MINUTES];
    for c in calls {
        let Some(m) = minute_of(&c.at) else { continue };
        if m + (MINUTES as u64) <= end {
            continue;
        }
        let i = MINUTES - 1 - (end - m) as usize;
        n[i] += 1;
        saved[i] += c.tokens_in.saturating_sub(c.tokens_out);
    }
    (n, saved)
}

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

fn spark(values: &[u64]) -> String {
    let max = values.iter().copied().max().unwrap_or(0);
    values
        .iter()
        .map(|&v| {
            if v == 0 || max == 0 {
                ' '
            } else {
                BARS[((v * 7).div_ceil(max)) as usize].min('█')
            }
        })
        .collect()
}

pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    let th = &app.theme;
    let visible = app.traffic.visible_calls();
    let mut extra = super::plural(visible.len() as u64, "call");
    if app.traffic.follow {
        extra.push_str(" · following");
    }
    let typing = matches!(app.overlay, super::super::app::Overlay::Filter);
    if !app.traffic.filter.is_empty() || typing {
        // The cursor only while the filter is being typed.
        let shown = if typing {
            app.traffic.filter.with_cursor()
        } else {
            app.traffic.filter.to_string()
        };
        extra.push_str(&format!(" · filter: {shown}"));
    }
    let block = pane_block(app, Pane::Traffic, &extra);
    let inner = block.inner(area);
    f.render_widget(block, area);
    if app.traffic.calls.is_empty() {
        f.render_widget(
            Paragraph::new(empty_state(
                &[
                    "No traffic yet.",
                    "Call a tool from the palette (: or ctrl-p),",
                    "or point an MCP client at `loom connect`.",
                ],
                th.muted,
            )),
            inner,
        );
        return;
    }
    let w = inner.width as usize;
    let (n, saved) = per_minute(&app.traffic.calls, app.now_minute);
    let total_saved: u64 = app
        .traffic
        .calls
        .iter()
        .map(|c| c.tokens_in.saturating_sub(c.tokens_out))
        .sum();
    let mut lines = vec![Line::from(vec![
        Span::styled("calls ", th.muted),
        Span::styled(spark(&n), th.chart),
        Span::styled("  saved ", th.muted),
        Span::styled(spark(&saved), th.success),
        Span::styled(format!(" {} tok", human(total_saved)), th.muted),
    ])];
    // Fixed columns: time, caller, latency, tokens; tool and outcome share the rest. Every
    // column but the first starts with a space, so neighbours never run together. Sizes in
    // bytes only when there is room; tokens always.
    let size_w = if w >= 90 { 13 } else { 0 };
    // Narrow panes keep the numbers tight so that tool and outcome stay readable; the
    // narrowest show the time to the minute and leave the tokens to Detail.
    let narrow = w < 60;
    let (ms_w, tok_w) = match w {
        90.. => (8, 14),
        60.. => (7, 11),
        _ => (7, 0),
    };
    let (time_w, who_w) = if narrow { (6, 2) } else { (9, 4) };
    let flex = w
        .saturating_sub(time_w + who_w + ms_w + tok_w + size_w)
        .max(10);
    let tool_w = flex * 11 / 20;
    let out_w = flex - tool_w;
    lines.push(Line::styled(
        fit(
            &format!(
                "{:<time_w$}{:<who_w$}{:<tool_w$}{:<out_w$}{:>ms_w$}{:>size_w$}{:>tok_w$}",
                "time",
                if narrow { "" } else { "who" },
                "tool",
                "outcome",
                "ms",
                if size_w > 0 { "B in→out" } else { "" },
                if tok_w > 0 { "tok in→out" } else { "" }
            ),
            w,
        ),
        th.header,
    ));
    let rows = (inner.height as usize).saturating_sub(LIST_TOP);
    let scroll = app.traffic_scroll();
    for (i, c) in visible.iter().enumerate().skip(scroll).take(rows) {
        let time = c.at.get(11..if narrow { 16 } else { 19 }).unwrap_or("");
        let who = match c.caller {
            Caller::Human => "H",
            Caller::Model => "M",
        };
        let outcome = match (&c.reference, c.outcome) {
            // A finished batch says how many of its calls failed beside what it made.
            (Some(r), o) if c.tool == BATCH_TOOL && o != Outcome::Running => {
                match app.traffic.batch_counts(c.call) {
                    (_, 0) => format!("→ {r}"),
                    (_, bad) => format!("{bad} failed → {r}"),
                }
            }
            (Some(r), Outcome::Intercepted) => format!("→ {r}"),
            (Some(r), Outcome::Parked) => format!("⇢ {r}"),
            // Not started: a person has yet to approve it.
            (_, Outcome::Running) if app.awaits_approval(c.call) => "awaiting approval".into(),
            (_, Outcome::Running) => match app.traffic.progress_text(c.call) {
                Some(p) => format!("running {p}"),
                None => "running".into(),
            },
            (_, o) => o.to_string(),
        };
        let outcome_style = match c.outcome {
            Outcome::Intercepted | Outcome::Parked => th.accent,
            Outcome::Error | Outcome::Denied => th.error,
            Outcome::Running => th.warning,
            Outcome::Cancelled => th.muted,
            Outcome::Passed => th.success,
        };
        let tokens = if c.outcome == Outcome::Running {
            String::new()
        } else {
            format!("{}→{}", human(c.tokens_in), human(c.tokens_out))
        };
        let millis = if c.outcome == Outcome::Running {
            app.elapsed_secs(&c.at)
                .map_or_else(|| "…".to_owned(), |t| format!("{t}s…"))
        } else {
            c.millis.to_string()
        };
        let line = Line::from(vec![
            Span::styled(format!("{time} "), th.muted),
            Span::styled(
                format!("{who:<who_w$}"),
                if who == "H" { th.keyword } else { th.muted },
            ),
            Span::raw(format!(
                "{:<tool_w$}",
                fit(&tool_text(app, c), tool_w.saturating_sub(1))
            )),
            Span::styled(
                format!("{:<out_w$}", fit(&outcome, out_w.saturating_sub(1))),
                outcome_style,
            ),
            Span::styled(cell(&millis, ms_w), th.number),
            Span::styled(
                if size_w > 0 && c.outcome != Outcome::Running {
                    cell(
                        &format!("{}→{}", human(c.bytes_in), human(c.bytes_out)),
                        size_w,
                    )
                } else {
                    " ".repeat(size_w)
                },
                th.muted,
            ),
            Span::styled(cell(&tokens, tok_w), th.muted),
        ]);
        let selected = i == app.traffic.sel;
        lines.push(if selected && app.focus == Pane::Traffic {
            line.style(th.selection)
        } else if selected {
            line.style(th.muted)
        } else {
            line
        });
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// The tool column: a batch with its calls so far (▸ closed, ▾ open), a batch's call indented
/// under it, a call made through loom_call marked (the model found the tool, then called it).
fn tool_text(app: &App, c: &CallSummary) -> String {
    if c.tool == BATCH_TOOL {
        let mark = if app.traffic.expanded.contains(&c.call) {
            '▾'
        } else {
            '▸'
        };
        let (n, _) = app.traffic.batch_counts(c.call);
        return format!("{mark} {} ×{n}", c.tool);
    }
    let shown_under_batch = c.batch.is_some() && app.traffic.filter.is_empty();
    match (shown_under_batch, &c.via) {
        (true, _) => format!("  · {}", c.tool),
        (false, Some(_)) => format!("↪ {}", c.tool),
        (false, None) => c.tool.clone(),
    }
}

/// A right-aligned numeric cell of `w` columns that always keeps one space on its left.
fn cell(text: &str, w: usize) -> String {
    let text = fit(text, w.saturating_sub(1));
    format!("{text:>w$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minutes_and_buckets() {
        assert_eq!(minute_of("1970-01-01T00:01:00Z"), Some(1));
        assert_eq!(minute_of("2000-03-01T00:00:00Z"), Some(951_868_800 / 60));
        let c = |at: &str, i, o| CallSummary {
            at: at.into(),
            tokens_in: i,
            tokens_out: o,
            ..Default::default()
        };
        let calls = vec![
            c("2026-11-30T10:00:10Z", 100, 10),
            c("2026-11-30T10:00:50Z", 5, 5),
            c("2026-11-30T10:02:00Z", 50, 0),
        ];
        let (n, saved) = per_minute(&calls, 0);
        assert_eq!(&n[MINUTES - 3..], &[2, 0, 1]);
        assert_eq!(&saved[MINUTES - 3..], &[90, 0, 50]);
    }
}
