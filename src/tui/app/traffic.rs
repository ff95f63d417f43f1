//! The traffic pane: it owns the calls this workbench knows of, the filter, the selection and
//! whether it follows the newest call. It answers which calls are shown and keeps the
//! selection on the same call as new ones arrive; asking the engine for a call's detail and
//! jumping to what a call produced are the app's, since they reach other panes. It never draws.

use super::navigation::step;
use super::*;
use crate::types::events::Outcome;

/// Most calls kept: the oldest leave first.
const KEPT_CALLS: usize = 5000;

/// The Traffic pane's state.
pub struct Traffic {
    /// Every call known, oldest first.
    pub calls: Vec<CallSummary>,
    /// The selected row of the visible calls; 0 is the newest.
    pub sel: usize,
    /// Whether the selection stays on the newest call as calls arrive.
    pub follow: bool,
    /// The text a call must contain to be listed.
    pub filter: LineInput,
    /// How far each running call is, as its server last said; gone when the call ends.
    pub progress: HashMap<u64, CallProgress>,
    /// The `loom_call_each` batches opened into their calls.
    pub expanded: std::collections::HashSet<u64>,
}

/// The loom tool whose calls are batches of other calls.
pub const BATCH_TOOL: &str = "loom_call_each";

/// A running call's last progress notification.
#[derive(Debug, Clone, PartialEq)]
pub struct CallProgress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

impl CallProgress {
    /// `40/500`, `40` without a total, then the server's message if it sent one.
    pub fn text(&self) -> String {
        let n = |v: f64| {
            if v.fract() == 0.0 && v.abs() < 1e15 {
                format!("{}", v as i64)
            } else {
                format!("{v:.1}")
            }
        };
        let mut t = match self.total {
            Some(total) => format!("{}/{}", n(self.progress), n(total)),
            None => n(self.progress),
        };
        if let Some(m) = self.message.as_deref().filter(|m| !m.trim().is_empty()) {
            t.push_str(" · ");
            t.push_str(&crate::terminal_text::line(m));
        }
        t
    }
}

impl Default for Traffic {
    fn default() -> Traffic {
        Traffic {
            calls: Vec::new(),
            sel: 0,
            follow: true,
            filter: LineInput::default(),
            progress: HashMap::new(),
            expanded: std::collections::HashSet::new(),
        }
    }
}

impl Traffic {
    /// Calls that pass the filter, newest first. A batch's calls are listed under it only when
    /// it is open; a filter lists every call it matches.
    pub fn visible_calls(&self) -> Vec<&CallSummary> {
        let f = self.filter.to_lowercase();
        if !f.is_empty() {
            return self
                .calls
                .iter()
                .rev()
                .filter(|c| {
                    [
                        c.server.as_str(),
                        &c.tool,
                        c.outcome.as_str(),
                        c.caller.as_str(),
                        &c.arguments,
                    ]
                    .iter()
                    .any(|s| s.to_lowercase().contains(&f))
                        || c.reference
                            .as_deref()
                            .is_some_and(|r| r.to_lowercase().contains(&f))
                })
                .collect();
        }
        let members = self.members();
        let mut out = Vec::with_capacity(self.calls.len());
        for c in self.calls.iter().rev() {
            if c.batch.is_some_and(|b| members.contains_key(&b)) {
                continue;
            }
            out.push(c);
            if self.expanded.contains(&c.call)
                && let Some(m) = members.get(&c.call)
            {
                out.extend(m.iter().copied());
            }
        }
        out
    }

    /// The calls of each batch still listed, in the order they were made.
    fn members(&self) -> HashMap<u64, Vec<&CallSummary>> {
        let batches: std::collections::HashSet<u64> = self
            .calls
            .iter()
            .filter(|c| c.tool == BATCH_TOOL)
            .map(|c| c.call)
            .collect();
        let mut m: HashMap<u64, Vec<&CallSummary>> = HashMap::new();
        for c in &self.calls {
            if let Some(b) = c.batch.filter(|b| batches.contains(b)) {
                m.entry(b).or_default().push(c);
            }
        }
        m
    }

    /// How many calls batch `call` has made so far, and how many of them failed.
    pub fn batch_counts(&self, call: u64) -> (usize, usize) {
        let mine = self.calls.iter().filter(|c| c.batch == Some(call));
        mine.fold((0, 0), |(n, bad), c| {
            let failed = matches!(c.outcome, Outcome::Error | Outcome::Denied);
            (n + 1, bad + usize::from(failed))
        })
    }

    /// Opens (or closes) the selected batch; on one of a batch's calls, closing goes back to
    /// the batch. Says whether anything changed.
    pub(super) fn open_batch(&mut self, open: bool) -> bool {
        let Some(c) = self.selected() else {
            return false;
        };
        let (call, tool, batch) = (c.call, c.tool.clone(), c.batch);
        let target = if tool == BATCH_TOOL {
            call
        } else if let (false, Some(b)) = (open, batch) {
            b
        } else {
            return false;
        };
        let changed = if open {
            self.expanded.insert(target)
        } else {
            self.expanded.remove(&target)
        };
        if let Some(i) = self.visible_calls().iter().position(|c| c.call == target) {
            self.sel = i;
            self.follow = i == 0;
        }
        changed
    }

    /// The selected call, if the list has one there.
    pub fn selected(&self) -> Option<&CallSummary> {
        self.visible_calls().get(self.sel).copied()
    }

    /// The first visible call row when `rows` fit, so the selection stays on screen.
    pub fn scroll(&self, rows: usize) -> usize {
        self.sel.saturating_sub(rows.saturating_sub(1))
    }

    /// Whether some call is still running (its elapsed time moves on screen).
    pub fn any_running(&self) -> bool {
        self.calls.iter().any(|c| c.outcome == Outcome::Running)
    }

    /// Finished calls to `server`, and their median latency.
    pub fn server_calls(&self, server: &str) -> (usize, Option<u64>) {
        let mut ms: Vec<u64> = self
            .calls
            .iter()
            .filter(|c| c.server == server && c.outcome != Outcome::Running)
            // The time a call waited for a person is not the server's.
            .map(|c| c.millis.saturating_sub(c.waited_millis.unwrap_or(0)))
            .collect();
        ms.sort_unstable();
        let p50 = ms.get(ms.len() / 2).copied().filter(|_| !ms.is_empty());
        (ms.len(), p50)
    }

    /// Moves the selection by `delta` rows; it follows only while on the newest call.
    pub(super) fn move_by(&mut self, delta: i64) {
        let n = self.visible_calls().len();
        self.sel = step(self.sel, n, delta);
        self.follow = self.sel == 0;
    }

    /// Selects visible row `idx` if there is one; says whether it did.
    pub(super) fn select_row(&mut self, idx: usize) -> bool {
        if idx >= self.visible_calls().len() {
            return false;
        }
        self.sel = idx;
        self.follow = idx == 0;
        true
    }

    /// Turns following on or off; on, the selection goes to the newest call.
    pub(super) fn toggle_follow(&mut self) -> bool {
        self.follow = !self.follow;
        if self.follow {
            self.sel = 0;
        }
        self.follow
    }

    pub(super) fn clear_filter(&mut self) {
        self.filter.clear();
        self.sel = 0;
    }

    /// How far call `call` is, in words, while it runs and its server has said.
    pub fn progress_text(&self, call: u64) -> Option<String> {
        self.progress.get(&call).map(CallProgress::text)
    }

    /// A call started or finished: it replaces what was known of it, or joins the list. Unless
    /// following, the same call stays selected (a batch's calls may arrive out of sight).
    pub(super) fn record(&mut self, c: CallSummary) {
        if c.outcome != Outcome::Running {
            self.progress.remove(&c.call);
        }
        let kept = if self.follow {
            None
        } else {
            self.selected().map(|s| s.call)
        };
        match self.calls.iter_mut().rev().find(|x| x.call == c.call) {
            Some(x) => *x = c,
            None => self.calls.push(c),
        }
        if self.calls.len() > KEPT_CALLS {
            self.calls.remove(0);
        }
        if let Some(id) = kept
            && let Some(i) = self.visible_calls().iter().position(|c| c.call == id)
        {
            self.sel = i;
        }
    }

    /// The engine's listing arrived: it replaces the list, keeping calls the live feed
    /// already delivered that the listing predates.
    pub(super) fn replace(&mut self, calls: Vec<CallSummary>) {
        let newest = calls.last().map(|c| c.call).unwrap_or(0);
        let later: Vec<CallSummary> = self.calls.drain(..).filter(|c| c.call > newest).collect();
        self.calls = calls;
        self.calls.extend(later);
    }
}

impl App {
    /// The first visible call row, so the selection stays on screen.
    pub fn traffic_scroll(&self) -> usize {
        let rows = crate::tui::ui::traffic_rows(self.size, self.plan());
        self.traffic.scroll(rows)
    }

    /// Asks for the selected call's detail, unless Detail already shows it finished.
    pub(super) fn select_call(&mut self) {
        let call = self.traffic.selected().map(|c| c.call);
        if let Some(call) = call {
            if self.detail.shows_finished_call(call) {
                return;
            }
            self.send(Purpose::CallDetail(call), Request::CallDetail { call });
        }
    }

    /// Selects the newest call and shows it.
    pub(super) fn follow_newest(&mut self) {
        self.traffic.sel = 0;
        self.select_call();
    }

    pub(super) fn jump_to_reference(&mut self) {
        let reference = match &self.detail.shown {
            Detail::Call(r) => r.summary.reference.clone().map(|x| (r.summary.outcome, x)),
            _ => None,
        }
        .or_else(|| {
            self.traffic
                .selected()
                .and_then(|c| c.reference.clone().map(|r| (c.outcome, r)))
        });
        let Some((outcome, reference)) = reference else {
            self.set_status(
                "this call made no dataset or parked text",
                StatusKind::Error,
            );
            return;
        };
        if let Some(reason) = self.catalog.gone.get(&reference) {
            let why = match reason {
                crate::types::data::DropReason::Dropped => "dropped",
                crate::types::data::DropReason::Evicted => "evicted to stay within memory_budget",
            };
            self.set_status(format!("{reference} was {why}"), StatusKind::Info);
            return;
        }
        if outcome == Outcome::Parked {
            self.catalog.select_blob(&reference);
        } else {
            self.catalog.select_dataset(&reference);
        }
        self.focus = Pane::Catalog;
        match outcome {
            Outcome::Parked => self.open_catalog_item(),
            _ => self.show_dataset(reference),
        }
    }
}
