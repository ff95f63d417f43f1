//! Human in the loop: a call whose policy is `ask` waits here for a person's decision while a
//! workbench is attached (in-process or over the socket); with nobody attached, `unattended`
//! decides. A wait ends in a decision or in denial at `approval_timeout`. Presence is counted
//! by guards that workbench event feeds hold, so a crashed attacher stops counting at once.

use super::{Event, EventBus};
use crate::downstream::connection::lock;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;

/// A call waiting for a person.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ApprovalRequest {
    pub approval: u64,
    pub call: u64,
    pub server: String,
    /// The exposed name and the server's own name for it.
    pub tool: String,
    pub original: String,
    pub annotations: Value,
    pub arguments: Value,
    pub timeout_secs: u64,
}

/// What a person decided.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    Once,
    Session,
    Deny { reason: Option<String> },
}

/// How a call's approval ended, for the caller and the call log.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Allowed(String),
    Denied(String),
}

#[derive(Default)]
pub struct Approvals {
    pending: Mutex<HashMap<u64, oneshot::Sender<Decision>>>,
    session_allowed: Mutex<HashSet<(String, String)>>,
    next: AtomicU64,
    humans: Arc<AtomicUsize>,
}

/// Withdraws a waiting prompt when the wait is dropped before it ended.
struct Waiting<'a> {
    approvals: &'a Approvals,
    bus: &'a EventBus,
    id: u64,
    settled: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if !self.settled {
            lock(&self.approvals.pending).remove(&self.id);
            self.bus.publish(Event::ApprovalSettled {
                approval: self.id,
                decision: "withdrawn".into(),
            });
        }
    }
}

/// Held while a workbench watches the session.
pub struct Presence(Arc<AtomicUsize>);

impl Drop for Presence {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Approvals {
    pub fn presence(&self) -> Presence {
        self.humans.fetch_add(1, Ordering::SeqCst);
        Presence(self.humans.clone())
    }

    pub fn humans(&self) -> usize {
        self.humans.load(Ordering::SeqCst)
    }

    /// Waits for a decision on `req` (its `approval` id is filled in here).
    pub async fn ask(
        &self,
        bus: &EventBus,
        mut req: ApprovalRequest,
        unattended_allow: bool,
        timeout: Duration,
    ) -> Verdict {
        let key = (req.server.clone(), req.original.clone());
        if lock(&self.session_allowed).contains(&key) {
            return Verdict::Allowed("approved for the session by a human".into());
        }
        if self.humans() == 0 {
            return if unattended_allow {
                Verdict::Allowed("allowed: nobody attached (unattended = \"allow\")".into())
            } else {
                Verdict::Denied(
                    "denied: this tool needs a human's approval and nobody is attached (unattended = \"deny\")"
                        .into(),
                )
            };
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        req.approval = id;
        req.timeout_secs = timeout.as_secs();
        let (tx, mut rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        bus.publish(Event::ApprovalRequested(req));
        // If the caller gives up (cancelled, disconnected), the prompt is withdrawn.
        let mut waiting = Waiting {
            approvals: self,
            bus,
            id,
            settled: false,
        };
        let mut outcome = tokio::time::timeout(timeout, &mut rx).await;
        lock(&self.pending).remove(&id);
        if outcome.is_err() {
            // A decision that arrived just as the time ran out still counts.
            if let Ok(d) = rx.try_recv() {
                outcome = Ok(Ok(d));
            }
        }
        waiting.settled = true;
        let (verdict, label) = match outcome {
            Ok(Ok(Decision::Once)) => (
                Verdict::Allowed("approved once by a human".into()),
                "approved once",
            ),
            Ok(Ok(Decision::Session)) => {
                lock(&self.session_allowed).insert(key);
                (
                    Verdict::Allowed("approved for the session by a human".into()),
                    "approved for the session",
                )
            }
            Ok(Ok(Decision::Deny { reason })) => (
                Verdict::Denied(match reason.filter(|r| !r.trim().is_empty()) {
                    Some(r) => format!("denied by a human: {r}"),
                    None => "denied by a human".into(),
                }),
                "denied",
            ),
            Ok(Err(_)) => (
                Verdict::Denied("denied: the approval was dropped".into()),
                "dropped",
            ),
            Err(_) => (
                Verdict::Denied(format!(
                    "denied: no human decided within {}s (approval_timeout)",
                    timeout.as_secs()
                )),
                "timed out",
            ),
        };
        bus.publish(Event::ApprovalSettled {
            approval: id,
            decision: label.into(),
        });
        verdict
    }

    /// Settles a waiting call; false if it is no longer waiting.
    pub fn decide(&self, approval: u64, decision: Decision) -> bool {
        match lock(&self.pending).remove(&approval) {
            Some(tx) => tx.send(decision).is_ok(),
            None => false,
        }
    }
}
