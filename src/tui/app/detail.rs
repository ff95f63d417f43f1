//! The detail pane: it owns what is shown (a call, dataset, blob or memory), its lines,
//! highlighted once per change rather than per frame, the scroll, and the ticket of the newest
//! request made for it (older replies are stale). It never sends requests and never draws.

use super::navigation::step;
use super::*;

/// What the Detail pane shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Detail {
    #[default]
    Empty,
    Call(Box<CallRecord>),
    Dataset {
        dataset: String,
        describe: Box<Description>,
    },
    Blob(BlobView),
    Memory(MemoryView),
    /// A tool of the Catalog: where it stands in the listing, and its definition as listed.
    Tool {
        entry: Box<ToolEntry>,
        tool: Box<Value>,
        /// The session's listing mode.
        mode: String,
        /// The last find, to say where it put this tool and why.
        found: Option<Box<LastFind>>,
    },
}

/// The Detail pane's state.
#[derive(Default)]
pub struct DetailPane {
    pub shown: Detail,
    /// `shown` as highlighted lines.
    pub lines: Vec<Line<'static>>,
    /// The first line on screen.
    pub scroll: usize,
    /// The newest request for this pane: older replies are stale.
    pub(super) ticket: u64,
    /// The shown call's dataset left the session (and why): `o` has nowhere to go.
    pub(super) reference_gone: Option<crate::types::data::DropReason>,
    /// The shown call has not started: it waits for a person's approval.
    pub(super) awaiting_approval: bool,
    /// How far the shown running call is, as its server last said (`40/500 · counting`).
    pub(super) progress: Option<String>,
    /// Where the shown dataset or parked text came from, as a short chain of lines.
    pub(super) lineage: Vec<String>,
}

impl DetailPane {
    /// Shows `d`; the scroll starts at the top unless it is the item already shown.
    pub(super) fn set(&mut self, d: Detail, th: &Theme, h: &Highlighter, now_secs: u64) {
        let same_item = match (&self.shown, &d) {
            (Detail::Call(a), Detail::Call(b)) => a.summary.call == b.summary.call,
            (Detail::Dataset { dataset: a, .. }, Detail::Dataset { dataset: b, .. }) => a == b,
            (Detail::Tool { entry: a, .. }, Detail::Tool { entry: b, .. }) => a.name == b.name,
            _ => false,
        };
        if !same_item {
            self.scroll = 0;
        }
        self.shown = d;
        self.rebuild(th, h, now_secs);
    }

    /// Whether it shows call `call`.
    pub(super) fn shows_call(&self, call: u64) -> bool {
        matches!(&self.shown, Detail::Call(r) if r.summary.call == call)
    }

    /// Whether it shows call `call`, finished: asking again would show the same.
    pub(super) fn shows_finished_call(&self, call: u64) -> bool {
        matches!(&self.shown, Detail::Call(r) if r.summary.call == call && r.summary.outcome != crate::types::events::Outcome::Running)
    }

    /// Whether it shows a call still running (its elapsed time moves on).
    pub(super) fn shows_running_call(&self) -> bool {
        matches!(&self.shown, Detail::Call(r) if r.summary.outcome == crate::types::events::Outcome::Running)
    }

    /// The dataset it shows, if it shows one.
    pub fn dataset(&self) -> Option<&str> {
        match &self.shown {
            Detail::Dataset { dataset, .. } => Some(dataset),
            _ => None,
        }
    }

    /// The tool it shows, if it shows one.
    pub(super) fn shown_tool(&self) -> Option<String> {
        match &self.shown {
            Detail::Tool { entry, .. } => Some(entry.name.clone()),
            _ => None,
        }
    }

    pub(super) fn move_by(&mut self, delta: i64) {
        self.scroll = step(self.scroll, self.lines.len().max(1), delta);
    }

    /// What `y` copies: the call's request and response, the description, the key, the memory.
    pub(super) fn copy_text(&self) -> String {
        match &self.shown {
            Detail::Call(r) => format!("{}\n{}", pretty(&r.request), pretty(&r.response)),
            Detail::Dataset { describe, .. } => {
                serde_json::to_string_pretty(describe).unwrap_or_default()
            }
            Detail::Blob(b) => b.key.clone(),
            Detail::Memory(m) => m.content.clone(),
            Detail::Tool { tool, .. } => serde_json::to_string_pretty(tool).unwrap_or_default(),
            Detail::Empty => String::new(),
        }
    }

    /// Highlighting is done once per change, not per frame.
    pub(super) fn rebuild(&mut self, th: &Theme, h: &Highlighter, now_secs: u64) {
        let heading = |t: String| Line::styled(t, th.title);
        self.lines = match &self.shown {
            Detail::Empty => Vec::new(),
            Detail::Call(r) => {
                let s = &r.summary;
                let running = s.outcome == crate::types::events::Outcome::Running;
                let outcome = if running && self.awaiting_approval {
                    "awaiting approval".to_owned()
                } else {
                    s.outcome.to_string()
                };
                let took = if running && self.awaiting_approval {
                    match elapsed_secs(now_secs, &s.at) {
                        Some(t) => format!("waiting {t} s"),
                        None => "waiting".to_owned(),
                    }
                } else if running {
                    let mut parts: Vec<String> = Vec::new();
                    if let Some(t) = elapsed_secs(now_secs, &s.at) {
                        parts.push(format!("{t} s so far"));
                    }
                    parts.extend(self.progress.clone());
                    parts.push("c cancels".to_owned());
                    parts.join(" · ")
                } else {
                    match s.waited_millis {
                        // The wait for a person is not the server's latency: shown apart.
                        Some(w) if w <= s.millis => format!(
                            "{} ms ({} ms waiting for approval, {} ms the call)",
                            s.millis,
                            w,
                            s.millis - w
                        ),
                        _ => format!("{} ms", s.millis),
                    }
                };
                let mut lines = vec![heading(format!(
                    "#{} {} → {}/{} · {outcome} · {took}",
                    s.call, s.caller, s.server, s.tool
                ))];
                if let Some(c) = &s.client {
                    lines.push(Line::styled(format!("client: {c}"), th.muted));
                }
                if let Some(v) = &s.via {
                    lines.push(Line::styled(format!("called through {v}"), th.muted));
                }
                if let Some(b) = s.batch {
                    lines.push(Line::styled(
                        format!("one call of the loom_call_each batch #{b}"),
                        th.muted,
                    ));
                }
                if !s.bindings.is_empty() {
                    lines.push(heading("bound into the arguments".into()));
                    for b in &s.bindings {
                        lines.push(binding_line(b, th));
                    }
                }
                if let Some(d) = &s.decision {
                    lines.push(Line::styled(format!("approval: {d}"), th.warning));
                }
                if let Some(reference) = &s.reference {
                    let hint = match self.reference_gone {
                        None => "o: go to it",
                        Some(crate::types::data::DropReason::Dropped) => "dropped since",
                        Some(crate::types::data::DropReason::Evicted) => "evicted since",
                    };
                    lines.push(Line::styled(
                        format!("{} → {reference}   ({hint})", s.outcome),
                        if self.reference_gone.is_some() {
                            th.muted
                        } else {
                            th.accent
                        },
                    ));
                }
                if let Some(why) = &s.passed_because {
                    lines.push(Line::styled(
                        format!("passed whole, not intercepted: {why}"),
                        th.info,
                    ));
                }
                lines.push(Line::styled(
                    format!(
                        "in {} B ≈{} tok → out {} B ≈{} tok",
                        s.bytes_in, s.tokens_in, s.bytes_out, s.tokens_out
                    ),
                    th.muted,
                ));
                lines.push(heading("request".into()));
                lines.extend(h.json_lines(&pretty(&r.request), th));
                lines.push(heading("response".into()));
                lines.extend(response_lines(&r.response, h, th));
                lines
            }
            Detail::Dataset { dataset, describe } => {
                let mut lines = dataset_lines(dataset, describe, th);
                lines.extend(lineage_lines(&self.lineage, th));
                lines
            }
            Detail::Blob(b) => {
                let mut lines = vec![
                    heading(format!("parked {}", b.key)),
                    Line::raw(b.summary.clone()),
                    Line::styled(
                        format!(
                            "{} chars, {} lines, kept until {}",
                            b.chars, b.lines, b.expires
                        ),
                        th.muted,
                    ),
                    Line::raw(""),
                    Line::styled(
                        "The model reads it with loom_fetch (offset/length or a pattern)."
                            .to_owned(),
                        th.muted,
                    ),
                ];
                lines.extend(lineage_lines(&self.lineage, th));
                lines
            }
            Detail::Memory(m) => {
                let mut lines = vec![
                    heading(format!("memory {} v{}", m.key, m.version)),
                    Line::styled(
                        format!(
                            "by {} at {}{}{}",
                            m.author,
                            m.at,
                            if m.pinned { " · pinned" } else { "" },
                            if m.tags.is_empty() {
                                String::new()
                            } else {
                                format!(" · tags: {}", m.tags.join(", "))
                            }
                        ),
                        th.muted,
                    ),
                ];
                lines.extend(m.content.lines().map(|l| Line::raw(l.to_owned())));
                lines
            }
            Detail::Tool {
                entry,
                tool,
                mode,
                found,
            } => tool_lines(entry, tool, mode, found.as_deref(), th, h),
        };
    }
}

impl App {
    pub(super) fn set_detail(&mut self, d: Detail) {
        self.detail.lineage = self.lineage_chain(&d);
        self.detail.reference_gone = self.reference_gone(&d);
        self.detail.awaiting_approval =
            matches!(&d, Detail::Call(r) if self.awaits_approval(r.summary.call));
        self.detail.progress = self.progress_of(&d);
        self.detail
            .set(d, &self.theme, &self.highlighter, self.now_secs);
    }

    pub(super) fn rebuild_detail_lines(&mut self) {
        self.detail.lineage = self.lineage_chain(&self.detail.shown);
        self.detail.reference_gone = self.reference_gone(&self.detail.shown);
        self.detail.awaiting_approval = matches!(&self.detail.shown,
            Detail::Call(r) if self.awaits_approval(r.summary.call));
        self.detail.progress = self.progress_of(&self.detail.shown);
        self.detail
            .rebuild(&self.theme, &self.highlighter, self.now_secs);
    }

    /// Where a shown dataset or parked text came from: the call or query that made it, then
    /// each thing read into it with its own origin, a few steps back.
    fn lineage_chain(&self, d: &Detail) -> Vec<String> {
        let start = match d {
            Detail::Dataset { dataset, .. } => self.known_lineage(dataset),
            Detail::Blob(b) => b.lineage.clone().or_else(|| self.known_lineage(&b.key)),
            _ => None,
        };
        let mut out = Vec::new();
        if let Some(l) = start {
            let mut seen = std::collections::HashSet::new();
            self.lineage_step(&l, 0, &mut out, &mut seen);
        }
        out
    }

    fn known_lineage(&self, reference: &str) -> Option<crate::types::data::Lineage> {
        self.catalog
            .datasets
            .iter()
            .find(|d| d.dataset == reference)
            .and_then(|d| d.lineage.clone())
            .or_else(|| {
                self.catalog
                    .blobs
                    .iter()
                    .find(|b| b.key == reference)
                    .and_then(|b| b.lineage.clone())
            })
    }

    fn lineage_step(
        &self,
        l: &crate::types::data::Lineage,
        depth: usize,
        out: &mut Vec<String>,
        seen: &mut std::collections::HashSet<String>,
    ) {
        /// Steps back the chain goes before it stops.
        const DEPTH: usize = 3;
        let pad = "    ".repeat(depth);
        if let Some(c) = l.call {
            let what = match self.traffic.calls.iter().rev().find(|x| x.call == c) {
                Some(x) => format!("call #{c} {}/{}", x.server, x.tool),
                None => format!("call #{c}"),
            };
            out.push(format!("{pad}← made by {what}"));
        }
        if let Some(sql) = &l.sql {
            let one: Vec<&str> = sql.split_whitespace().collect();
            out.push(format!("{pad}← by the query {}", one.join(" ")));
        }
        for input in &l.inputs {
            out.push(format!("{pad}← read {input}"));
            if depth + 1 < DEPTH
                && seen.insert(input.clone())
                && let Some(back) = self.known_lineage(input)
            {
                self.lineage_step(&back, depth + 1, out, seen);
            }
        }
    }

    /// How far a shown call is, when its server said.
    fn progress_of(&self, d: &Detail) -> Option<String> {
        match d {
            Detail::Call(r) => self.traffic.progress_text(r.summary.call),
            _ => None,
        }
    }

    /// Whether call `call` waits for a person's approval (it has not started yet).
    pub fn awaits_approval(&self, call: u64) -> bool {
        self.approvals.waiting.iter().any(|a| a.call == call)
    }

    /// Why the dataset a shown call made is gone, when it is.
    fn reference_gone(&self, d: &Detail) -> Option<crate::types::data::DropReason> {
        match d {
            Detail::Call(r) => r
                .summary
                .reference
                .as_ref()
                .and_then(|reference| self.catalog.gone.get(reference).copied()),
            _ => None,
        }
    }
}

/// The lineage chain under a heading, when there is one.
fn lineage_lines(chain: &[String], th: &Theme) -> Vec<Line<'static>> {
    if chain.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![Line::styled("lineage".to_owned(), th.title)];
    lines.extend(
        chain
            .iter()
            .map(|l| Line::styled(format!("  {l}"), th.muted)),
    );
    lines
}

/// One binding of a call: where, from what, how large (never the value).
fn binding_line(b: &crate::types::events::Binding, th: &Theme) -> Line<'static> {
    let mut t = format!("  {} ← {} · {} B", b.at, b.source, b.bytes);
    if !b.inputs.is_empty() {
        t.push_str(&format!(" · read {}", b.inputs.join(", ")));
    }
    Line::styled(t, th.info)
}

pub(super) fn pretty(text: &str) -> String {
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| text.to_owned())
}

/// The response as a reader wants it: a text block that holds JSON is unfolded.
/// A tool result as a reader wants it: each text block as its own lines (an envelope or a
/// parked pointer reads as written), structured content and anything else as pretty JSON.
pub(super) fn response_lines(response: &str, h: &Highlighter, th: &Theme) -> Vec<Line<'static>> {
    let Ok(Value::Object(mut v)) = serde_json::from_str::<Value>(response) else {
        return h.json_lines(&pretty(response), th);
    };
    let mut lines = Vec::new();
    if let Some(Value::Array(blocks)) = v.remove("content") {
        for b in blocks {
            match b["text"].as_str() {
                Some(text) if b["type"] == "text" => {
                    lines.push(Line::styled("─ text".to_owned(), th.muted));
                    if serde_json::from_str::<Value>(text).is_ok() {
                        lines.extend(h.json_lines(&pretty(text), th));
                    } else {
                        lines.extend(text.lines().map(|l| Line::raw(l.to_owned())));
                    }
                }
                _ => {
                    lines.push(Line::styled(
                        format!("─ {}", b["type"].as_str().unwrap_or("block")),
                        th.muted,
                    ));
                    lines.extend(h.json_lines(&pretty(&b.to_string()), th));
                }
            }
        }
    }
    if !v.is_empty() {
        lines.push(Line::styled("─ result".to_owned(), th.muted));
        lines.extend(h.json_lines(&pretty(&Value::Object(v).to_string()), th));
    }
    lines
}

pub(super) fn dataset_lines(dataset: &str, d: &Description, th: &Theme) -> Vec<Line<'static>> {
    use ratatui::text::Span;
    let mut lines = vec![Line::styled(
        format!("{dataset} · {}", crate::tui::ui::plural(d.rows, "row")),
        th.title,
    )];
    if let Some(p) = &d.provenance {
        lines.push(Line::styled(
            format!(
                "from {}/{} at {}, rows found in {}",
                p.server, p.tool, p.at, p.rung
            ),
            th.muted,
        ));
        if let Some(a) = &p.arguments {
            lines.push(Line::styled(format!("arguments {a}"), th.muted));
        }
    }
    lines.push(Line::styled("columns".to_owned(), th.title));
    for c in &d.columns {
        let mut spans = vec![
            Span::styled(format!("{:<22}", c.name), th.function),
            Span::styled(format!("{:<12}", c.ty), th.keyword),
        ];
        let mut facts = Vec::new();
        if c.null_fraction > 0.0 {
            facts.push(format!("null {:.0}%", c.null_fraction * 100.0));
        }
        let about = if c.distinct_exact { "" } else { "~" };
        facts.push(format!("{about}{} distinct", c.distinct));
        if let (Some(lo), Some(hi)) = (&c.min, &c.max) {
            facts.push(format!("{} … {}", scalar(lo), scalar(hi)));
        }
        if !c.top.is_empty() {
            facts.push(format!("top {}", top_text(&c.top, 3)));
        }
        spans.push(Span::styled(facts.join(" · "), th.muted));
        lines.push(Line::from(spans));
    }
    if !d.join_hints.is_empty() {
        lines.push(Line::styled("join hints".to_owned(), th.title));
        for h in &d.join_hints {
            lines.push(Line::raw(format!("  {}", hint_text(h))));
        }
    }
    if !d.context.is_empty() {
        lines.push(Line::styled("context".to_owned(), th.title));
        for (k, v) in &d.context {
            lines.push(Line::raw(format!("  {k}: {}", scalar(v))));
        }
    }
    if !d.sample_rows.is_empty() {
        lines.push(Line::styled("sample rows".to_owned(), th.title));
        for r in d.sample_rows.iter().take(10) {
            lines.push(Line::raw(format!("  {r}")));
        }
    }
    lines.push(Line::styled(
        "d: describe with charts · s: query it · x/X: export".to_owned(),
        th.muted,
    ));
    lines
}

/// `value (count)` for the first `n` top values.
pub(crate) fn top_text(top: &[(Value, u64)], n: usize) -> String {
    top.iter()
        .take(n)
        .map(|(v, count)| format!("{} ({count})", scalar(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A join hint as a person reads it: the join, then how much of each side the other holds.
pub(crate) fn hint_text(h: &crate::types::data::JoinHint) -> String {
    let share = |x: f64, all: &str| {
        if x >= 1.0 {
            all.to_owned()
        } else {
            format!("{:.0}%", x * 100.0)
        }
    };
    format!(
        "{} = {}.{}: {} of its values found there, {} of theirs here",
        h.column,
        h.other,
        h.other_column,
        share(h.this_in_other, "all"),
        share(h.other_in_this, "all")
    )
}

pub(crate) fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Where the last find put a tool and why: its rank, then each part of its score (words with
/// the query's words it holds, meaning, its server's lift, a server the query named, this
/// session's use), or that the find did not name it.
pub(crate) fn found_line(find: &LastFind, tool: &str) -> String {
    use crate::types::events::KeptPlace;
    let query = crate::tui::ui::fit(&crate::terminal_text::line(&find.query), 80);
    let Some(t) = find.of(tool) else {
        return format!(
            "last find \"{query}\" did not name it ({} named)",
            find.tools.len()
        );
    };
    let place = if t.schema {
        "with its schema"
    } else {
        "in `more`"
    };
    let why = &t.why;
    let mut parts = Vec::new();
    if t.named_exactly {
        parts.push("named in the query".to_owned());
    }
    if why.words > 0.0 {
        let words = crate::tui::ui::fit(&crate::terminal_text::line(&why.matched.join(", ")), 60);
        parts.push(format!("words {:.2} ({words})", why.words));
    }
    if why.meaning > 0.0 {
        parts.push(format!("meaning {:.2}", why.meaning));
    }
    if why.server > 0.0 {
        parts.push(format!("server +{:.2}", why.server));
    }
    if why.named > 0.0 {
        parts.push(format!("server named +{:.2}", why.named));
    }
    if why.used > 1.0 {
        parts.push(format!("used ×{:.2}", why.used));
    }
    if why.unmade {
        parts.push("discounted: reads a kind of file the request only makes".into());
    }
    match &why.kept {
        None => {}
        Some(KeptPlace::Writer) => parts
            .push("kept a place as the writer (the request names where its result goes)".into()),
        Some(KeptPlace::Clock) => parts
            .push("kept a place as the clock (the request names a day relative to today)".into()),
        Some(KeptPlace::Feeder { of }) => parts.push(format!(
            "placed after {}, which needs what it gives",
            crate::terminal_text::line(of)
        )),
    }
    format!(
        "last find \"{query}\": #{} of {} ({place}) · score {:.2} = {}",
        t.rank,
        find.tools.len(),
        why.score,
        parts.join(" · ")
    )
}

/// A tool as Detail shows it: its server, where it stands in the listing and what that costs,
/// then its description and, highlighted, the input schema and annotations it was listed with.
fn tool_lines(
    entry: &ToolEntry,
    tool: &Value,
    mode: &str,
    found: Option<&LastFind>,
    th: &Theme,
    h: &Highlighter,
) -> Vec<Line<'static>> {
    let heading = |t: String| Line::styled(t, th.title);
    let mut lines = vec![heading(format!(
        "tool {} · server {}",
        entry.name, entry.server
    ))];
    if let Some(find) = found {
        lines.push(Line::styled(
            found_line(find, &entry.name),
            if find.of(&entry.name).is_some() {
                th.accent
            } else {
                th.muted
            },
        ));
    }
    lines.push(match &entry.placement {
        Some(p) if p.listed => Line::styled(
            format!(
                "{} · {} tok per turn, {} in the full listing",
                // In full mode every tool is listed, and the reason is just that.
                match p.why.as_str() {
                    "" | "listed" => format!("listed in {mode} mode"),
                    why => format!("listed ({why})"),
                },
                p.tokens,
                p.tokens_full
            ),
            th.success,
        ),
        Some(p) => Line::styled(
            format!(
                "not listed in {} mode · callable by name, findable with loom_find_tools · {} tok in the full listing",
                mode, p.tokens_full
            ),
            th.muted,
        ),
        None => Line::styled("listing place not known yet".to_owned(), th.muted),
    });
    lines.push(Line::styled(
        "p pins or unpins it for this session · enter calls it · y (in Detail) copies it"
            .to_owned(),
        th.muted,
    ));
    lines.push(Line::raw(""));
    lines.extend(entry.description.lines().map(|l| Line::raw(l.to_owned())));
    for (key, title) in [
        ("inputSchema", "input schema"),
        ("annotations", "annotations"),
    ] {
        if let Some(v) = tool.get(key).filter(|v| !v.is_null()) {
            lines.push(heading(title.to_owned()));
            lines.extend(h.json_lines(&serde_json::to_string_pretty(v).unwrap_or_default(), th));
        }
    }
    lines
}
