//! The approval prompt: scrolling the request and settling it once, for the session, or with a
//! denial.

use super::*;

impl App {
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
