//! The approval prompt: scrolling the request and settling it once, for the session, or with a
//! denial.
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

impl App {
    /// Whether keys are text right now: then a key is never a decision.
    pub fn typing(&self) -> bool {
        match &self.overlay {
            Overlay::Filter | Overlay::Palette(_) => true,
            Overlay::Pager(p) => p.typing.is_some(),
            Overlay::None => self.focus == Pane::Editor || self.row_filter.is_some(),
            _ => false,
        }
    }

    pub fn approval_view(&self) -> ApprovalView {
        let Some(first) = self.approvals.first() else {
            return ApprovalView::None;
        };
        let id = first.approval;
        if self.deny_reason.is_some() || self.approval_review == Some(id) {
            // Opened on purpose: its keys are the person's answer, once it is on screen.
            return ApprovalView::Prompt {
                armed: self.drawn_approval.get() == Some(id),
            };
        }
        if self.approval_later == Some(id) || self.typing() {
            return ApprovalView::Banner;
        }
        let armed = self
            .approval_shown
            .get()
            .is_some_and(|(shown, at)| shown == id && at.elapsed() >= self.approval_grace);
        ApprovalView::Prompt { armed }
    }

    /// Records what the frame shows: the prompt's grace starts when it is first drawn.
    pub fn approval_drawn(&self, view: ApprovalView) {
        let shown = match view {
            ApprovalView::Prompt { .. } => self.approvals.first().map(|a| a.approval),
            _ => None,
        };
        self.drawn_approval.set(shown);
        match shown {
            Some(id) if self.approval_shown.get().map(|s| s.0) != Some(id) => {
                self.approval_shown.set(Some((id, Instant::now())));
            }
            Some(_) => {}
            None => self.approval_shown.set(None),
        }
    }

    /// Seconds left before a waiting call is denied for want of an answer.
    pub fn approval_left(&self, req: &crate::types::events::ApprovalRequest) -> u64 {
        let waited = self
            .approval_seen
            .get(&req.approval)
            .map_or(0, |t| t.elapsed().as_secs());
        req.timeout_secs.saturating_sub(waited)
    }

    /// `ctrl-g`: opens the prompt for the oldest waiting call.
    pub(super) fn review_approval(&mut self) {
        match self.approvals.first() {
            Some(a) => {
                self.approval_review = Some(a.approval);
                self.approval_later = None;
            }
            None => self.set_status("no call is waiting for approval", StatusKind::Info),
        }
    }

    /// `esc` on the prompt: back to what the person was doing; the banner stays.
    pub(super) fn approval_set_aside(&mut self) {
        self.approval_later = self.approvals.first().map(|a| a.approval);
        self.approval_review = None;
    }

    /// Scrolls the approval prompt on screen; a prompt for another call starts at the top.
    pub(super) fn scroll_approval(&mut self, delta: i64) {
        let Some(shown) = self
            .drawn_approval
            .get()
            .or_else(|| self.approvals.first().map(|a| a.approval))
        else {
            return;
        };
        let current = if self.approval_scroll.0 == shown {
            self.approval_scroll.1
        } else {
            0
        };
        let max = self.approval_scroll_max.get() as i64;
        let next = (current as i64).saturating_add(delta).clamp(0, max) as usize;
        self.approval_scroll = (shown, next);
    }

    /// Sends the decision on the oldest waiting call.
    pub(super) fn settle(&mut self, decision: crate::types::events::Decision) {
        let shown = self.drawn_approval.get();
        let Some(i) = self
            .approvals
            .iter()
            .position(|a| shown == Some(a.approval))
        else {
            self.set_status(
                "that call was already decided elsewhere; look again",
                StatusKind::Error,
            );
            return;
        };
        let req = self.approvals.remove(i);
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
