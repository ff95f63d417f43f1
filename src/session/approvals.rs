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
    pending: Mutex<HashMap<u64, (oneshot::Sender<Decision>, ApprovalRequest)>>,
    session_allowed: Mutex<HashSet<(String, String)>>,
    next: AtomicU64,
    humans: Arc<Humans>,
}

/// How many people watch, and a signal for when the last one leaves.
#[derive(Default)]
struct Humans {
    count: AtomicUsize,
    gone: tokio::sync::Notify,
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
pub struct Presence(Arc<Humans>);

impl Drop for Presence {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.gone.notify_waiters();
        }
    }
}

impl Approvals {
    pub fn presence(&self) -> Presence {
        self.humans.count.fetch_add(1, Ordering::SeqCst);
        Presence(self.humans.clone())
    }

    pub fn humans(&self) -> usize {
        self.humans.count.load(Ordering::SeqCst)
    }

    /// The calls waiting for a person now, oldest first.
    pub fn waiting(&self) -> Vec<ApprovalRequest> {
        let mut all: Vec<ApprovalRequest> = lock(&self.pending)
            .values()
            .map(|(_, r)| r.clone())
            .collect();
        all.sort_by_key(|r| r.approval);
        all
    }

    fn unattended(unattended_allow: bool, why: &str) -> Verdict {
        if unattended_allow {
            Verdict::Allowed(format!("allowed: {why} (unattended = \"allow\")"))
        } else {
            Verdict::Denied(format!(
                "denied: this tool needs a human's approval and {why} (unattended = \"deny\")"
            ))
        }
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
            return Self::unattended(unattended_allow, "nobody is attached");
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        req.approval = id;
        req.timeout_secs = timeout.as_secs();
        let (tx, mut rx) = oneshot::channel();
        lock(&self.pending).insert(id, (tx, req.clone()));
        bus.publish(Event::ApprovalRequested(req));
        // If the caller gives up (cancelled, disconnected), the prompt is withdrawn.
        let mut waiting = Waiting {
            approvals: self,
            bus,
            id,
            settled: false,
        };
        let deadline = tokio::time::Instant::now() + timeout;
        // `Ok(decision)`, `Err(true)` when the time ran out, `Err(false)` when the last person
        // left while the call waited.
        let mut outcome = loop {
            let gone = self.humans.gone.notified();
            tokio::pin!(gone);
            gone.as_mut().enable();
            if self.humans() == 0 {
                break Err(false);
            }
            tokio::select! {
                r = &mut rx => break Ok(r),
                _ = tokio::time::sleep_until(deadline) => break Err(true),
                _ = &mut gone => continue,
            }
        };
        lock(&self.pending).remove(&id);
        if outcome.is_err() {
            // A decision that arrived just as the wait ended still counts.
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
            Err(true) => (
                Verdict::Denied(format!(
                    "denied: no human decided within {}s (approval_timeout)",
                    timeout.as_secs()
                )),
                "timed out",
            ),
            Err(false) => (
                Self::unattended(unattended_allow, "everyone detached while it waited"),
                "unattended",
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
            Some((tx, _)) => tx.send(decision).is_ok(),
            None => false,
        }
    }
}
