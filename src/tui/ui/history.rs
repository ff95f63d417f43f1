//! The history browser overlay: the filter being typed, then one statement a row, newest
//! first — when it ran (UTC: `HH:MM` today, else `Mon DD HH:MM`), how long it took, its rows
//! or `error` — and the selected statement's error below. Statements are drawn on one line,
//! control characters escaped, cut on character boundaries with `…`. It only reads the state.

use super::super::app::{App, HistoryBrowser, HistoryEntry, Outcome, one_line};
use super::super::keymap::{Action, Context};
use super::{centred, empty_state, fit, human};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// When a statement ran, in UTC: `HH:MM` on the day of `now`, else `Mon DD HH:MM`.
pub fn when(at: Option<u64>, now: u64) -> String {
    let Some(at) = at else {
        return "—".into();
    };
    let hm = format!("{:02}:{:02}", at % 86_400 / 3600, at % 3600 / 60);
    if now > 0 && now / 86_400 == at / 86_400 {
        return hm;
    }
    let (_, m, d) = crate::types::time::civil_from_days((at / 86_400) as i64);
    let month = MONTHS.get(m as usize - 1).copied().unwrap_or("???");
    format!("{month} {d:02} {hm}")
}

/// How long a statement took: `12 ms`, `3.4 s`, `2m`.
pub fn took(millis: Option<u64>) -> String {
    match millis {
        None => "—".into(),
        Some(ms @ 0..1000) => format!("{ms} ms"),
        Some(ms @ 1000..60_000) => format!("{:.1} s", ms as f64 / 1000.0),
        Some(ms) => super::duration(ms / 1000),
    }
}

/// What came of a statement, for its column.
fn outcome_cell(e: &HistoryEntry, app: &App) -> (String, Style) {
    let th = &app.theme;
    match &e.outcome {
        Outcome::Rows(n) => (human(*n), th.base),
        Outcome::Failed(_) => ("error".into(), th.error),
        Outcome::Cancelled => ("cancelled".into(), th.muted),
        Outcome::Kept => ("kept".into(), th.muted),
        Outcome::Running => ("running".into(), th.info),
        Outcome::Unknown => ("—".into(), th.muted),
    }
}

/// The first key bound to `a` in `ctx`, to name it in a hint.
fn key_of(app: &App, ctx: Context, a: Action) -> String {
    app.keymap
        .bindings(ctx)
        .iter()
        .find(|(_, b)| *b == a)
        .map_or_else(|| a.name().to_owned(), |(k, _)| k.label().to_owned())
}

pub fn draw(f: &mut Frame, area: Rect, app: &App, b: &HistoryBrowser) {
    let th = &app.theme;
    let r = centred(f, area, 90, 80);
    let history = &app.editor.history;
    let matches = b.matches(history);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(th.border_focused)
        .style(th.base)
        .title(Span::styled(
            format!(" query history · {} of {} ", matches.len(), history.len()),
            th.title_focused,
        ));
    let inner = block.inner(r);
    f.render_widget(block, r);
    let w = inner.width as usize;
    let mut lines = vec![Line::from(vec![
        Span::styled("› ", th.accent),
        Span::raw(fit(&one_line(&b.filter.with_cursor()), w.saturating_sub(4))),
        Span::styled(
            if b.filter.is_empty() {
                "  type to filter (any case)"
            } else {
                ""
            },
            th.muted,
        ),
    ])];
    // The filter line, the header and the selected statement's error take three rows.
    let rows = (inner.height as usize).saturating_sub(3).max(1);
    b.rows.set(rows);
    if history.is_empty() {
        let run = key_of(app, Context::Editor, Action::RunQuery);
        let editor = key_of(app, Context::Global, Action::FocusEditor);
        lines.extend(empty_state(
            &[
                "No queries yet.",
                &format!(
                    "Write SQL in the editor ({editor}) and run it with {run}: each statement"
                ),
                "is kept here with when it ran, how long it took and how many rows it gave.",
            ],
            th.muted,
        ));
        f.render_widget(Paragraph::new(lines), inner);
        return;
    }
    lines.push(Line::styled(
        format!(
            "{:<12}  {:>8}  {:>7}  statement",
            "ran (UTC)", "took", "rows"
        ),
        th.header,
    ));
    if matches.is_empty() {
        lines.push(Line::styled(
            format!(
                " nothing holds “{}” — backspace widens the filter",
                fit(&one_line(&b.filter), w.saturating_sub(40))
            ),
            th.muted,
        ));
    }
    let skip = b.selected.saturating_sub(rows.saturating_sub(1));
    let sql_w = w.saturating_sub(12 + 2 + 8 + 2 + 7 + 2);
    for (k, i) in matches.iter().enumerate().skip(skip).take(rows) {
        let Some(e) = history.get(*i) else { continue };
        let (rows_text, rows_style) = outcome_cell(e, app);
        let line = Line::from(vec![
            Span::styled(format!("{:<12}  ", when(e.at, app.now_secs)), th.muted),
            Span::styled(format!("{:>8}  ", took(e.millis)), th.muted),
            Span::styled(format!("{rows_text:>7}  "), rows_style),
            Span::raw(fit(&one_line(&e.sql), sql_w)),
        ]);
        lines.push(if k == b.selected {
            line.style(th.selection)
        } else {
            line
        });
    }
    f.render_widget(Paragraph::new(lines), inner);
    if let Some(Outcome::Failed(m)) = b.selected_entry(history).map(|e| &e.outcome) {
        let foot = Rect {
            y: inner.y + inner.height.saturating_sub(1),
            height: 1,
            ..inner
        };
        f.render_widget(
            Paragraph::new(Line::styled(
                fit(&format!("error: {}", one_line(m)), w),
                th.error,
            )),
            foot,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_short_today_and_dated_before() {
        let now = 1_796_032_800 + 3600; // 2026-11-30T11:00:00Z
        assert_eq!(when(Some(1_796_032_800), now), "10:00");
        assert_eq!(when(Some(1_796_032_800 - 86_400), now), "Nov 29 10:00");
        assert_eq!(when(None, now), "—");
        assert_eq!(when(Some(1_796_032_800), 0), "Nov 30 10:00");
    }

    #[test]
    fn durations_read_at_a_glance() {
        assert_eq!(took(Some(12)), "12 ms");
        assert_eq!(took(Some(3_400)), "3.4 s");
        assert_eq!(took(Some(125_000)), "2m");
        assert_eq!(took(None), "—");
    }
}
