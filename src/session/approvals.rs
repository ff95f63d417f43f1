//! Human in the loop: a call whose policy is `ask` waits here for a person's decision while a
//! workbench is attached (in-process or over the socket); `unattended` decides only a call that
//! arrives while nobody is attached. A call that already waits is decided by a person or denied:
//! at `approval_timeout`, or when the last person leaves (fail closed: a prompt someone saw is
//! never settled by the unattended policy). Presence is counted by guards that workbench event
//! feeds hold for as long as their connection lives, so a crashed attacher stops counting at
//! once and a slow one keeps counting.

pub use crate::types::events::{ApprovalRequest, Decision};

use super::{Event, EventBus};
use crate::downstream::connection::lock;
use crate::types::events::Settlement;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;

/// How a call's approval ended, for the caller and the call log.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Allowed(String),
    Denied(String),
}

/// Where a person's decision goes, with the terminal they decided at.
type Decider = oneshot::Sender<(Decision, String)>;

/// What asking came to, and the terminal where a person decided (when one did).
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    pub verdict: Verdict,
    pub by: Option<String>,
    /// How long the call waited for a person, when it was put to one.
    pub waited: Option<Duration>,
}

#[derive(Default)]
pub struct Approvals {
    pending: Mutex<HashMap<u64, (Decider, ApprovalRequest)>>,
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
                decision: Settlement::Withdrawn,
                by: None,
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
    ) -> Asked {
        // A call asked about for the data bound into it is approved for the session apart
        // from the same tool asked about for itself, and for where that data came from (the
        // reason names every origin): data from another server asks again.
        let key = match &req.reason {
            Some(why) => (req.server.clone(), format!("{}\0{why}", req.original)),
            None => (req.server.clone(), req.original.clone()),
        };
        if lock(&self.session_allowed).contains(&key) {
            return Asked {
                verdict: Verdict::Allowed("approved for the session by a human".into()),
                by: None,
                waited: None,
            };
        }
        if self.humans() == 0 {
            // Data bound from elsewhere is never sent on nobody's word (`unattended` or not).
            let verdict = match &req.reason {
                Some(why) => Verdict::Denied(format!(
                    "denied: this call needs a human's approval because {why}, and nobody is attached to give it"
                )),
                None => Self::unattended(unattended_allow, "nobody is attached"),
            };
            return Asked {
                verdict,
                by: None,
                waited: None,
            };
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        req.approval = id;
        req.timeout_secs = timeout.as_secs();
        let (tx, mut rx) = oneshot::channel();
        lock(&self.pending).insert(id, (tx, req.clone()));
        let asked_at = tokio::time::Instant::now();
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
        let by = match &outcome {
            Ok(Ok((_, by))) => Some(by.clone()),
            _ => None,
        };
        let (verdict, label) = match outcome {
            Ok(Ok((Decision::Once, _))) => (
                Verdict::Allowed("approved once by a human".into()),
                Settlement::ApprovedOnce,
            ),
            Ok(Ok((Decision::Session, _))) => {
                lock(&self.session_allowed).insert(key);
                (
                    Verdict::Allowed("approved for the session by a human".into()),
                    Settlement::ApprovedForSession,
                )
            }
            Ok(Ok((Decision::Deny { reason }, _))) => (
                Verdict::Denied(match reason.filter(|r| !r.trim().is_empty()) {
                    Some(r) => format!("denied by a human: {r}"),
                    None => "denied by a human".into(),
                }),
                Settlement::Denied,
            ),
            Ok(Err(_)) => (
                Verdict::Denied("denied: the approval was dropped".into()),
                Settlement::Dropped,
            ),
            Err(true) => (
                Verdict::Denied(format!(
                    "denied: no human decided within {}s (approval_timeout)",
                    timeout.as_secs()
                )),
                Settlement::TimedOut,
            ),
            Err(false) => (
                Verdict::Denied(
                    "denied: everyone detached while it waited (a call a person was asked about is never settled by `unattended`)".into(),
                ),
                Settlement::NobodyAttached,
            ),
        };
        bus.publish(Event::ApprovalSettled {
            approval: id,
            decision: label,
            by: by.clone(),
        });
        Asked {
            verdict,
            by,
            waited: Some(asked_at.elapsed()),
        }
    }

    /// Settles a waiting call, `by` naming the terminal the person decided at; false if it
    /// is no longer waiting.
    pub fn decide(&self, approval: u64, decision: Decision, by: &str) -> bool {
        match lock(&self.pending).remove(&approval) {
            Some((tx, _)) => tx.send((decision, by.to_owned())).is_ok(),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> ApprovalRequest {
        ApprovalRequest {
            server: "sample".into(),
            tool: "sample_cancel_order".into(),
            original: "cancel_order".into(),
            ..ApprovalRequest::default()
        }
    }

    /// Waits until the prompt is on the bus, so the test acts on a call that really waits.
    async fn prompted(rx: &mut tokio::sync::broadcast::Receiver<super::super::Sequenced>) {
        loop {
            let ev = rx.recv().await.expect("the bus stays open");
            if matches!(ev.event, Event::ApprovalRequested(_)) {
                return;
            }
        }
    }

    /// A call that asks for approval on a task of its own (`unattended` as given).
    fn ask_in_background(
        approvals: &Arc<Approvals>,
        bus: &EventBus,
        unattended: bool,
    ) -> tokio::task::JoinHandle<Asked> {
        let (approvals, bus) = (approvals.clone(), bus.clone());
        tokio::spawn(async move {
            approvals
                .ask(&bus, request(), unattended, Duration::from_secs(3600))
                .await
        })
    }

    #[tokio::test]
    async fn a_waiting_call_is_denied_when_the_last_person_leaves_even_if_unattended_allows() {
        let approvals = Arc::new(Approvals::default());
        let bus = EventBus::default();
        let person = approvals.presence();
        let (_, mut rx) = bus.subscribe_with_backlog();
        let waiting = ask_in_background(&approvals, &bus, true);
        prompted(&mut rx).await;
        drop(person);
        let asked = waiting.await.expect("the wait ends");
        assert!(
            matches!(&asked.verdict, Verdict::Denied(why) if why.contains("detached")),
            "{asked:?}"
        );
        assert_eq!(asked.by, None);
    }

    #[tokio::test]
    async fn unattended_decides_only_calls_that_arrive_while_nobody_is_attached() {
        let approvals = Approvals::default();
        let bus = EventBus::default();
        let allow = approvals
            .ask(&bus, request(), true, Duration::from_secs(3600))
            .await;
        assert!(matches!(allow.verdict, Verdict::Allowed(_)), "{allow:?}");
        let deny = approvals
            .ask(&bus, request(), false, Duration::from_secs(3600))
            .await;
        assert!(matches!(deny.verdict, Verdict::Denied(_)), "{deny:?}");
    }

    #[tokio::test]
    async fn a_waiting_call_is_decided_by_the_person_while_anyone_stays() {
        let approvals = Arc::new(Approvals::default());
        let bus = EventBus::default();
        let first = approvals.presence();
        let second = approvals.presence();
        let (_, mut rx) = bus.subscribe_with_backlog();
        let waiting = ask_in_background(&approvals, &bus, false);
        prompted(&mut rx).await;
        drop(first);
        let id = approvals.waiting()[0].approval;
        assert!(approvals.decide(id, Decision::Once, "loom attach, pid 7"));
        let asked = waiting.await.expect("the wait ends");
        assert!(matches!(asked.verdict, Verdict::Allowed(_)), "{asked:?}");
        assert_eq!(asked.by.as_deref(), Some("loom attach, pid 7"));
        drop(second);
    }
}
