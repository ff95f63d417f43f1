//! Drawing: pure functions from the app state to a frame. One file per pane; this file owns
//! the layout (also used for mouse hit-testing), the frame around the panes, and overlays.

pub mod approval;
pub mod catalog;
pub mod describe;
pub mod detail;
pub mod editor;
pub mod export_dialog;
pub mod help;
pub mod history;
pub mod memory;
pub mod pager;
pub mod palette;
pub mod results;
pub mod servers;
pub mod status;
pub mod traffic;

use super::app::{App, ApprovalView, Overlay, Pane};
use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout as Split, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear};

/// Where each part of the screen is.
#[derive(Debug, Clone, Copy, Default)]
pub struct Layout {
    pub title: Rect,
    pub servers: Rect,
    pub traffic: Rect,
    pub detail: Rect,
    pub catalog: Rect,
    pub editor: Rect,
    pub results: Rect,
    pub footer: Rect,
}

impl Layout {
    pub fn panes(&self) -> Vec<(Pane, Rect)> {
        vec![
            (Pane::Servers, self.servers),
            (Pane::Traffic, self.traffic),
            (Pane::Detail, self.detail),
            (Pane::Catalog, self.catalog),
            (Pane::Editor, self.editor),
            (Pane::Results, self.results),
        ]
    }

    pub fn rect(&self, p: Pane) -> Rect {
        self.panes()
            .into_iter()
            .find(|(q, _)| *q == p)
            .map(|(_, r)| r)
            .unwrap_or_default()
    }
}

/// How the screen is shared out: one pane zoomed, or the room given to querying (Results and
/// the editor large) or to watching (Traffic and Detail large).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Plan {
    pub zoom: Option<Pane>,
    pub query_room: bool,
    /// Servers the Servers pane lists: it is as tall as they need (two lines each), up to a
    /// third of its column, and Catalog has the rest.
    pub servers: u16,
}

/// The layout for a screen of `area` by `plan`.
pub fn layout(area: Rect, plan: Plan) -> Layout {
    let zoom = plan.zoom;
    let rows = Split::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Length(1),
            Constraint::Min(3),
            Constraint::Length(2),
        ])
        .split(area);
    let (title, body, footer) = (rows[0], rows[1], rows[2]);
    let mut l = Layout {
        title,
        footer,
        ..Default::default()
    };
    if let Some(p) = zoom {
        match p {
            Pane::Servers => l.servers = body,
            Pane::Traffic => l.traffic = body,
            Pane::Detail => l.detail = body,
            Pane::Catalog => l.catalog = body,
            Pane::Editor => l.editor = body,
            Pane::Results => l.results = body,
        }
        return l;
    }
    // Top: what the agent does (Traffic, Detail). Bottom: what the human digs into
    // (Servers and Catalog on the left, SQL and its Results beside them).
    let halves = Split::default()
        .direction(Direction::Vertical)
        .constraints(if plan.query_room {
            [Constraint::Percentage(22), Constraint::Percentage(78)]
        } else {
            [Constraint::Percentage(48), Constraint::Percentage(52)]
        })
        .split(body);
    let top = Split::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(60), Constraint::Percentage(40)])
        .split(halves[0]);
    l.traffic = top[0];
    l.detail = top[1];
    let left_w = (body.width / 4).clamp(24, 40);
    let cols = Split::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Length(left_w), Constraint::Min(20)])
        .split(halves[1]);
    let left = Split::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Length((2 + 2 * plan.servers.max(1)).min((halves[1].height / 3).max(3))),
            Constraint::Min(3),
        ])
        .split(cols[0]);
    l.servers = left[0];
    l.catalog = left[1];
    let right = Split::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Length(if plan.query_room {
                (cols[1].height / 3).clamp(3, 12)
            } else {
                7.min(cols[1].height / 2).max(3)
            }),
            Constraint::Min(3),
        ])
        .split(cols[1]);
    l.editor = right[0];
    l.results = right[1];
    l
}

fn size_rect(size: (u16, u16)) -> Rect {
    Rect::new(0, 0, size.0, size.1)
}

/// Call rows the Traffic pane shows.
pub fn traffic_rows(size: (u16, u16), plan: Plan) -> usize {
    let r = layout(size_rect(size), plan).traffic;
    (r.height as usize).saturating_sub(2 + traffic::LIST_TOP)
}

/// Data rows the Results grid shows.
pub fn grid_rows(size: (u16, u16), plan: Plan) -> usize {
    let r = layout(size_rect(size), plan).results;
    (r.height as usize).saturating_sub(2 + 3)
}

/// A pane's frame: a border that shows focus, and a numbered title.
pub fn pane_block<'a>(app: &App, pane: Pane, extra: &str) -> Block<'a> {
    pane_block_with(app, pane, Vec::new(), extra)
}

/// A pane's frame whose title has `marks` (the editor's tabs) after the pane's name.
pub fn pane_block_with<'a>(
    app: &App,
    pane: Pane,
    marks: Vec<Span<'static>>,
    extra: &str,
) -> Block<'a> {
    let focused = app.focus == pane;
    let n = Pane::ORDER.iter().position(|p| *p == pane).unwrap_or(0) + 1;
    let th = &app.theme;
    let mut spans = vec![
        Span::styled(format!(" {n} "), th.key),
        Span::styled(
            pane.title().to_owned(),
            if focused { th.title_focused } else { th.title },
        ),
    ];
    spans.extend(marks);
    spans.push(Span::styled(
        if extra.is_empty() {
            " ".to_owned()
        } else {
            format!(" {extra} ")
        },
        th.muted,
    ));
    let title = Line::from(spans);
    Block::default()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Rounded
        })
        .border_style(if focused {
            th.border_focused
        } else {
            th.border
        })
        .style(th.base)
        .title(title)
}

/// An overlay's frame: the focused border and its title.
pub fn overlay_block<'a>(app: &App, title: String) -> Block<'a> {
    let th = &app.theme;
    Block::default()
        .borders(Borders::ALL)
        .border_style(th.border_focused)
        .style(th.base)
        .title(Span::styled(title, th.title_focused))
}

/// Muted centred-ish lines for a pane with nothing to show yet.
pub fn empty_state(lines: &[&str], style: Style) -> Vec<Line<'static>> {
    let mut out = vec![Line::raw("")];
    out.extend(lines.iter().map(|l| Line::styled(format!(" {l}"), style)));
    out
}

pub fn draw(f: &mut Frame, app: &App) {
    let area = f.area();
    f.render_widget(Block::default().style(app.theme.base), area);
    let l = layout(area, app.plan());
    *app.drawn.borrow_mut() = l.panes();
    status::draw_title(f, l.title, app);
    let show = |r: Rect| r.width > 2 && r.height > 2;
    if show(l.servers) {
        servers::draw(f, l.servers, app);
    }
    if show(l.traffic) {
        traffic::draw(f, l.traffic, app);
    }
    if show(l.detail) {
        detail::draw(f, l.detail, app);
    }
    if show(l.catalog) {
        catalog::draw(f, l.catalog, app);
    }
    if show(l.editor) {
        editor::draw(f, l.editor, app);
    }
    if show(l.results) {
        results::draw(f, l.results, app);
    }
    status::draw_footer(f, l.footer, app);
    match &app.overlay {
        Overlay::None | Overlay::Filter => {}
        Overlay::Pager(p) => pager::draw(f, area, app, p),
        Overlay::Confirm(c) => pager::draw_confirm(f, area, app, &c.question),
        Overlay::Help(m) => help::draw(f, area, app, m),
        Overlay::Palette(p) => palette::draw(f, area, app, p),
        Overlay::Describe(d) => describe::draw(f, area, app, d),
        Overlay::Export(d) => export_dialog::draw(f, area, &app.theme, d),
        Overlay::History(b) => history::draw(f, area, app, b),
        Overlay::Memory(m) => memory::draw(f, area, app, m),
    }
    // This frame shows the prompt: its keys may decide from the next key on.
    app.approvals.record_drawn(app.approval_view());
    let view = app.approval_view();
    if let Some(req) = app.approvals.waiting.first() {
        match view {
            ApprovalView::Prompt { armed } => approval::draw(f, area, app, req, armed),
            ApprovalView::Banner => approval::draw_banner(f, l.title, app, req),
            ApprovalView::None => {}
        }
    }
}

/// A rectangle of `pw`% × `ph`% centred in `area`, cleared for an overlay.
pub fn centred(f: &mut Frame, area: Rect, pw: u16, ph: u16) -> Rect {
    let w = area.width * pw / 100;
    let h = area.height * ph / 100;
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    f.render_widget(Clear, r);
    clear_wide_edge(f.buffer_mut(), r);
    r
}

/// A wide character (an emoji, CJK) just left of `r` spills one column into it, over the
/// overlay's left border: such cells are blanked so the border is drawn whole.
fn clear_wide_edge(buf: &mut ratatui::buffer::Buffer, r: Rect) {
    if r.x == 0 || r.x <= buf.area.x {
        return;
    }
    for y in r.y..r.y.saturating_add(r.height).min(buf.area.bottom()) {
        let cell = &mut buf[(r.x - 1, y)];
        if display_width(cell.symbol()) > 1 {
            cell.set_symbol(" ");
        }
    }
}

/// `1 row`, `2 rows`, `3 matches`: a count with its noun in the right number.
pub fn plural(n: impl Into<u64>, one: &str) -> String {
    let n = n.into();
    let shown = count(n);
    if n == 1 {
        format!("1 {one}")
    } else if one.ends_with("ch") || one.ends_with('s') {
        format!("{shown} {one}es")
    } else {
        format!("{shown} {one}s")
    }
}

/// `20000000` → `20,000,000`: a count a person reads at a glance.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// Significant digits a floating-point cell is shown with: every decimal of up to 15 digits
/// reads as it was written (`25062.13`, not `25062.129999999997`).
const DOUBLE_DIGITS: usize = 15;
/// The same for a single-precision one.
const FLOAT_DIGITS: usize = 7;

/// A cell as the grid shows it: a floating-point value in the shortest form that round-trips
/// at display precision; anything else, and a float too large or small for plain digits
/// (the engine's own `1e+300`), as the engine wrote it. The cell view, copies and exports keep
/// the exact text.
pub fn shown_cell<'a>(ty: &str, text: &'a str) -> std::borrow::Cow<'a, str> {
    use std::borrow::Cow;
    let ty = ty.trim().to_ascii_uppercase();
    let digits = match ty.as_str() {
        "DOUBLE" | "FLOAT8" => DOUBLE_DIGITS,
        "FLOAT" | "FLOAT4" | "REAL" => FLOAT_DIGITS,
        _ => return Cow::Borrowed(text),
    };
    let Ok(x) = text.parse::<f64>() else {
        return Cow::Borrowed(text);
    };
    let Ok(rounded) = format!("{x:.*e}", digits - 1).parse::<f64>() else {
        return Cow::Borrowed(text);
    };
    // Already short (or too large or small for plain digits): the engine's text as it is.
    if rounded == x || !rounded.is_finite() || !(1e-5..1e16).contains(&rounded.abs()) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(rounded.to_string())
}

/// `45s`, `12m`, `3h 5m`, `2d 4h`: a duration as a person reads it at a glance.
pub fn duration(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86_400 => format!("{}h {}m", secs / 3600, secs % 3600 / 60),
        _ => format!("{}d {}h", secs / 86_400, secs % 86_400 / 3600),
    }
}

/// The display columns `s` takes.
pub fn display_width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// Cuts `s` to `w` display columns, marking the cut with `…`.
pub fn fit(s: &str, w: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    let mut out = String::new();
    let mut used = 0;
    let total: usize = s.chars().map(|c| c.width().unwrap_or(0)).sum();
    if total <= w {
        return s.to_owned();
    }
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if used + cw + 1 > w {
            break;
        }
        out.push(c);
        used += cw;
    }
    if w > 0 {
        out.push('…');
    }
    out
}

/// Cuts `s` to `w` display columns from the left, marking the cut with `…`: for numbers of
/// one size, which differ in their last digits.
pub fn fit_left(s: &str, w: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    if display_width(s) <= w {
        return s.to_owned();
    }
    let mut tail: Vec<char> = Vec::new();
    let mut used = 0;
    for c in s.chars().rev() {
        let cw = c.width().unwrap_or(0);
        if used + cw + 1 > w {
            break;
        }
        tail.push(c);
        used += cw;
    }
    if w == 0 {
        return String::new();
    }
    std::iter::once('…').chain(tail.into_iter().rev()).collect()
}

/// Cuts `s` to `w` display columns in the middle, marking the cut with `…`: for names that
/// differ at their end (`sample_list_orders_1`, `sample_list_orders_17`), whose start alone
/// would read the same.
pub fn fit_middle(s: &str, w: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    if display_width(s) <= w {
        return s.to_owned();
    }
    if w < 5 {
        return fit(s, w);
    }
    let room = w - 1;
    let tail_w = room / 2;
    let mut tail: Vec<char> = Vec::new();
    let mut used = 0;
    for c in s.chars().rev() {
        let cw = c.width().unwrap_or(0);
        if used + cw > tail_w {
            break;
        }
        tail.push(c);
        used += cw;
    }
    let mut head = String::new();
    let mut head_used = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if head_used + cw > room - used {
            break;
        }
        head.push(c);
        head_used += cw;
    }
    head.push('…');
    head.extend(tail.into_iter().rev());
    head
}

/// `1234567` → `1.2M`, for bytes and tokens in narrow columns.
pub fn human(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1}M", n as f64 / 1e6),
        _ => format!("{:.1}G", n as f64 / 1e9),
    }
}

#[cfg(test)]
mod number_tests {
    use super::{count, plural, shown_cell};

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(4699), "4,699");
        assert_eq!(count(20_000_000), "20,000,000");
        assert_eq!(count(u64::MAX), "18,446,744,073,709,551,615");
        assert_eq!(plural(1_000_000u64, "row"), "1,000,000 rows");
        assert_eq!(plural(1u64, "row"), "1 row");
    }

    #[test]
    fn floats_show_the_shortest_form_that_round_trips_at_display_precision() {
        assert_eq!(shown_cell("DOUBLE", "25062.129999999997"), "25062.13");
        assert_eq!(shown_cell("DOUBLE", "0.30000000000000004"), "0.3");
        assert_eq!(shown_cell("DOUBLE", "-1234567.891"), "-1234567.891");
        assert_eq!(shown_cell("DOUBLE", "0.1"), "0.1");
        assert_eq!(shown_cell("DOUBLE", "-0.0"), "-0.0");
        assert_eq!(shown_cell("FLOAT", "3.1415927410125732"), "3.141593");
        // What plain digits would blow up stays the engine's own text.
        for kept in [
            "1e+300",
            "1.5e-10",
            "inf",
            "-inf",
            "nan",
            "12345678901234567000",
        ] {
            assert_eq!(shown_cell("DOUBLE", kept), kept);
        }
        // Exact types are never rounded.
        assert_eq!(shown_cell("DECIMAL(18,3)", "25062.129"), "25062.129");
        assert_eq!(
            shown_cell("BIGINT", "7300000000000007919"),
            "7300000000000007919"
        );
        assert_eq!(
            shown_cell("VARCHAR", "0.30000000000000004"),
            "0.30000000000000004"
        );
    }
}

#[cfg(test)]
mod overlay_edge_tests {
    use super::*;
    use ratatui::widgets::{Block, Borders, Paragraph};

    /// B9: `📌billing-timeouts` in the Catalog under a pager's left border hid the border.
    #[test]
    fn an_overlay_border_is_whole_over_wide_characters() {
        let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(20, 6)).unwrap();
        t.draw(|f| {
            let area = f.area();
            let pins: Vec<Line> = (0..6).map(|_| Line::raw("📌".repeat(10))).collect();
            f.render_widget(Paragraph::new(pins), area);
            let r = centred(f, area, 50, 60);
            assert_eq!(r.x, 5, "the overlay starts in the middle of an emoji");
            f.render_widget(Block::default().borders(Borders::ALL), r);
        })
        .unwrap();
        let buf = t.backend().buffer();
        for y in 1..4 {
            assert!(display_width(buf[(4, y)].symbol()) <= 1, "row {y}");
            assert!(["│", "┌", "└"].contains(&buf[(5, y)].symbol()), "row {y}");
        }
    }
}
