//! The approval prompt: it owns the calls waiting for this person's decision, the denial
//! reason being typed, what the screen last showed of them (the prompt, its scroll, when it
//! was first drawn) and the person's choices to review one now or set it aside. Settling sends
//! a request, so it is the app's; the pane never draws and never decides on a call the person
//! has not seen.
//!
//! A prompt never takes keys meant for something else. While the person types (the SQL editor,
//! the palette, the traffic filter) a waiting call is a one-line banner and keys stay with the
//! text; `ctrl-g` opens the prompt. Elsewhere the prompt opens by itself, but its keys only
//! decide once it has been on screen for a grace period: a key pressed before then goes where
//! it was meant to go.

use super::*;

/// The grace before a prompt that opened by itself takes keys.
pub const APPROVAL_GRACE: std::time::Duration = std::time::Duration::from_millis(800);

/// How the oldest waiting call is on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalView {
    /// Nothing waits.
    None,
    /// A line that says a call waits, while keys stay with what the person is doing.
    Banner,
    /// The prompt; its keys decide only when `armed`.
    Prompt { armed: bool },
}

/// The Approvals pane's state.
pub struct Approvals {
    /// Calls waiting for this person's decision, oldest first.
    pub waiting: Vec<crate::types::events::ApprovalRequest>,
    /// The reason being typed for a denial.
    pub deny_reason: Option<LineInput>,
    /// The approval the screen last showed: a key decides that one, never one the person
    /// has not seen yet.
    pub drawn: std::cell::Cell<Option<u64>>,
    /// How far the approval prompt is scrolled, and for which approval (another one starts at
    /// the top).
    pub scroll: (u64, usize),
    /// The furthest the prompt can scroll, as last drawn (the draw knows the wrapped height).
    pub scroll_max: std::cell::Cell<usize>,
    /// When the prompt on screen was first drawn: its keys decide only after `grace`.
    pub shown: std::cell::Cell<Option<(u64, Instant)>>,
    pub grace: std::time::Duration,
    /// When this workbench first saw each waiting call: the prompt counts down from there.
    pub seen: HashMap<u64, Instant>,
    /// The approval the person opened on purpose (`ctrl-g`): its keys decide at once.
    pub review: Option<u64>,
    /// The approval the person set aside with `esc`: a banner until they open it.
    pub later: Option<u64>,
    /// The prompt that had an answer key pressed during its grace: it says to wait.
    pub early: Option<u64>,
}

impl Default for Approvals {
    fn default() -> Approvals {
        Approvals {
            waiting: Vec::new(),
            deny_reason: None,
            drawn: std::cell::Cell::new(None),
            scroll: (0, 0),
            scroll_max: std::cell::Cell::new(0),
            shown: std::cell::Cell::new(None),
            grace: APPROVAL_GRACE,
            seen: HashMap::new(),
            review: None,
            later: None,
            early: None,
        }
    }
}

impl Approvals {
    /// How the oldest waiting call is on screen, given whether keys are text right now.
    pub fn view(&self, typing: bool) -> ApprovalView {
        let Some(first) = self.waiting.first() else {
            return ApprovalView::None;
        };
        let id = first.approval;
        if self.deny_reason.is_some() || self.review == Some(id) {
            // Opened on purpose: its keys are the person's answer, once it is on screen.
            return ApprovalView::Prompt {
                armed: self.drawn.get() == Some(id),
            };
        }
        if self.later == Some(id) || typing {
            return ApprovalView::Banner;
        }
        let armed = self
            .shown
            .get()
            .is_some_and(|(shown, at)| shown == id && at.elapsed() >= self.grace);
        ApprovalView::Prompt { armed }
    }

    /// Records what the frame shows: the prompt's grace starts when it is first drawn.
    pub fn record_drawn(&self, view: ApprovalView) {
        let shown = match view {
            ApprovalView::Prompt { .. } => self.waiting.first().map(|a| a.approval),
            _ => None,
        };
        self.drawn.set(shown);
        match shown {
            Some(id) if self.shown.get().map(|s| s.0) != Some(id) => {
                self.shown.set(Some((id, Instant::now())));
            }
            Some(_) => {}
            None => self.shown.set(None),
        }
    }

    /// Seconds left before a waiting call is denied for want of an answer.
    pub fn left(&self, req: &crate::types::events::ApprovalRequest) -> u64 {
        let waited = self
            .seen
            .get(&req.approval)
            .map_or(0, |t| t.elapsed().as_secs());
        req.timeout_secs.saturating_sub(waited)
    }

    /// A call asks for a decision (from the feed or the backlog); it is kept once.
    pub(super) fn add(&mut self, req: crate::types::events::ApprovalRequest) {
        self.seen.entry(req.approval).or_insert_with(Instant::now);
        if !self.waiting.iter().any(|a| a.approval == req.approval) {
            self.waiting.push(req);
        }
    }

    /// A call was decided (here or elsewhere): it waits no more.
    pub(super) fn settled(&mut self, approval: u64) {
        self.waiting.retain(|a| a.approval != approval);
        self.seen.remove(&approval);
        if self.waiting.is_empty() {
            self.deny_reason = None;
        }
    }

    /// `ctrl-g`: opens the prompt for the oldest waiting call; says whether one waits.
    pub(super) fn open_review(&mut self) -> bool {
        let Some(a) = self.waiting.first() else {
            return false;
        };
        self.review = Some(a.approval);
        self.later = None;
        true
    }

    /// `esc` on the prompt: back to what the person was doing; the banner stays.
    pub(super) fn set_aside(&mut self) {
        self.later = self.waiting.first().map(|a| a.approval);
        self.review = None;
    }

    /// Scrolls the prompt on screen; a prompt for another call starts at the top.
    pub(super) fn scroll_by(&mut self, delta: i64) {
        let Some(shown) = self
            .drawn
            .get()
            .or_else(|| self.waiting.first().map(|a| a.approval))
        else {
            return;
        };
        let current = if self.scroll.0 == shown {
            self.scroll.1
        } else {
            0
        };
        let max = self.scroll_max.get() as i64;
        let next = (current as i64).saturating_add(delta).clamp(0, max) as usize;
        self.scroll = (shown, next);
    }

    /// Takes the call the screen shows off the list, to be decided; `None` when it was
    /// already decided elsewhere.
    fn take_shown(&mut self) -> Option<crate::types::events::ApprovalRequest> {
        let shown = self.drawn.get();
        let i = self
            .waiting
            .iter()
            .position(|a| shown == Some(a.approval))?;
        Some(self.waiting.remove(i))
    }
}

impl App {
    /// Whether keys are text right now: then a key is never a decision.
    pub fn typing(&self) -> bool {
        match &self.overlay {
            Overlay::Filter
            | Overlay::Palette(_)
            | Overlay::Memory(_)
            | Overlay::History(_)
            | Overlay::Export(_) => true,
            Overlay::Pager(p) => p.typing.is_some(),
            Overlay::Help(m) => m.typing,
            Overlay::None => self.focus == Pane::Editor || self.results.prompt.is_some(),
            _ => false,
        }
    }

    pub fn approval_view(&self) -> ApprovalView {
        self.approvals.view(self.typing())
    }

    /// A key that answers the prompt, pressed while its grace still holds it back: it does not
    /// decide (the person may not have read the call yet), and the prompt and the status line
    /// say to wait, so the key does not seem lost.
    pub(super) fn answer_too_early(&mut self, spec: &KeySpec) {
        if self.approval_view() != (ApprovalView::Prompt { armed: false })
            || self.keymap.lookup(Context::Approval, spec).is_none()
        {
            return;
        }
        self.approvals.early = self.approvals.waiting.first().map(|r| r.approval);
        self.set_status(
            "wait… the prompt takes its keys in a moment; that key decided nothing",
            StatusKind::Info,
        );
    }

    /// `ctrl-g`: opens the prompt for the oldest waiting call.
    pub(super) fn review_approval(&mut self) {
        if !self.approvals.open_review() {
            self.set_status("no call is waiting for approval", StatusKind::Info);
        }
    }

    /// Sends the decision on the call the screen shows.
    pub(super) fn settle(&mut self, decision: crate::types::events::Decision) {
        let Some(req) = self.approvals.take_shown() else {
            self.set_status(
                "that call was already decided elsewhere; look again",
                StatusKind::Error,
            );
            return;
        };
        // Detail no longer says the call waits.
        self.rebuild_detail_lines();
        let what = match &decision {
            crate::types::events::Decision::Once => "approved once".to_owned(),
            crate::types::events::Decision::Session => "approved for this session".to_owned(),
            crate::types::events::Decision::Deny { reason: Some(r) } => {
                format!("denied ({r})")
            }
            crate::types::events::Decision::Deny { reason: None } => "denied".to_owned(),
        };
        self.send(
            Purpose::Approve,
            Request::Approve {
                approval: req.approval,
                decision,
            },
        );
        self.set_status(format!("{}: {what}", req.tool), StatusKind::Info);
    }
}
