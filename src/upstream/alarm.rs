//! Coarse deadlines for calls in flight, kept off the proxy's async worker.
//!
//! Every call waits for its answer against two deadlines: its `call_timeout` and the moment it is
//! announced to the log as running. As tokio timers, each call registered two timers with the
//! runtime's driver and dropped them again, and the worker went to sleep in `epoll_wait` with a
//! timeout, which arms a kernel timer at every sleep: together ~17 µs of a small call's added
//! latency on the machines we measure (BENCHMARKS.md).
//!
//! An alarm rings at its deadline or up to one tick later, never before. Setting one takes a
//! slot in a table that one thread of its own scans every [`TICK`] while any is set (a lock and
//! a store, no allocation); dropping one frees its slot; the thread sleeps for good once the
//! table has been empty for [`GRACE`], so an idle proxy does not wake. The worker that waits for
//! a call then sleeps in `epoll_wait` with no timeout at all.

use crate::downstream::connection::lock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// How often the thread looks at the table while any alarm is set.
pub const TICK: Duration = Duration::from_millis(10);

/// How long the table stays empty before the thread stops ticking.
const GRACE: Duration = Duration::from_secs(2);

/// A set of alarms and the thread that rings them.
pub struct Alarms {
    shared: Arc<Shared>,
}

struct Slot {
    deadline: Instant,
    rung: bool,
    waker: Option<Waker>,
}

struct Shared {
    table: Mutex<slab::Slab<Slot>>,
    /// The thread is parked with no tick: a new alarm must wake it.
    asleep: AtomicBool,
    thread: OnceLock<std::thread::Thread>,
    tick: Duration,
    grace: Duration,
}

/// Rings (resolves) once its deadline has passed. Dropping it unsets it.
pub struct Alarm {
    shared: Arc<Shared>,
    key: usize,
}

impl std::future::Future for Alarm {
    type Output = ();
    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut table = lock(&self.shared.table);
        let slot = &mut table[self.key];
        if slot.rung {
            return Poll::Ready(());
        }
        match &mut slot.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            other => *other = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

impl Drop for Alarm {
    fn drop(&mut self) {
        lock(&self.shared.table).remove(self.key);
    }
}

impl Alarms {
    /// The process's alarms (the thread starts with the first alarm set).
    pub fn global() -> &'static Alarms {
        static GLOBAL: OnceLock<Alarms> = OnceLock::new();
        GLOBAL.get_or_init(|| Alarms::with(TICK, GRACE))
    }

    fn with(tick: Duration, grace: Duration) -> Alarms {
        Alarms {
            shared: Arc::new(Shared {
                table: Mutex::new(slab::Slab::new()),
                asleep: AtomicBool::new(false),
                thread: OnceLock::new(),
                tick,
                grace,
            }),
        }
    }

    /// An alarm that rings at `deadline` (or within a tick after it).
    pub fn at(&self, deadline: Instant) -> Alarm {
        let shared = &self.shared;
        let key = lock(&shared.table).insert(Slot {
            deadline,
            rung: false,
            waker: None,
        });
        let thread = shared.thread.get_or_init(|| {
            let s = shared.clone();
            std::thread::Builder::new()
                .name("loom-alarms".into())
                .spawn(move || s.run())
                .expect("spawning the alarm thread")
                .thread()
                .clone()
        });
        if shared.asleep.load(Ordering::SeqCst) {
            thread.unpark();
        }
        Alarm {
            shared: shared.clone(),
            key,
        }
    }

    /// An alarm that rings `after` from now.
    pub fn after(&self, after: Duration) -> Alarm {
        self.at(Instant::now() + after)
    }
}

impl Shared {
    fn run(&self) {
        let mut empty_since: Option<Instant> = None;
        let mut ring = Vec::new();
        loop {
            let now = Instant::now();
            let empty = {
                let mut table = lock(&self.table);
                for (_, slot) in table.iter_mut() {
                    if !slot.rung && slot.deadline <= now {
                        slot.rung = true;
                        ring.extend(slot.waker.take());
                    }
                }
                table.is_empty()
            };
            // Woken outside the lock: a woken task may poll its alarm at once.
            ring.drain(..).for_each(Waker::wake);
            if !empty {
                empty_since = None;
            } else if empty_since.get_or_insert(now).elapsed() >= self.grace {
                // Asleep is announced before the table is looked at again, and a setter looks
                // at `asleep` after its insert: one of the two sees the other.
                self.asleep.store(true, Ordering::SeqCst);
                if lock(&self.table).is_empty() {
                    std::thread::park();
                }
                self.asleep.store(false, Ordering::SeqCst);
                empty_since = None;
                continue;
            }
            std::thread::park_timeout(self.tick);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn rings_at_its_deadline_never_before() {
        let alarms = Alarms::with(Duration::from_millis(5), Duration::from_millis(50));
        for wait in [0u64, 1, 20, 60] {
            let start = Instant::now();
            alarms.after(Duration::from_millis(wait)).await;
            assert!(start.elapsed() >= Duration::from_millis(wait), "{wait} ms");
        }
    }

    #[tokio::test]
    async fn rings_after_the_thread_slept_for_good() {
        let alarms = Alarms::with(Duration::from_millis(2), Duration::from_millis(10));
        alarms.after(Duration::from_millis(1)).await;
        // Long past the grace: the thread is parked without a tick.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(alarms.shared.asleep.load(Ordering::SeqCst));
        let start = Instant::now();
        tokio::time::timeout(
            Duration::from_secs(5),
            alarms.after(Duration::from_millis(3)),
        )
        .await
        .expect("the alarm rang");
        assert!(start.elapsed() >= Duration::from_millis(3));
    }

    #[tokio::test]
    async fn a_dropped_alarm_leaves_the_list_and_others_still_ring() {
        let alarms = Alarms::with(Duration::from_millis(2), Duration::from_secs(60));
        let dropped: Vec<Alarm> = (0..100)
            .map(|_| alarms.after(Duration::from_secs(3600)))
            .collect();
        let later = alarms.after(Duration::from_millis(20));
        let sooner = alarms.after(Duration::from_millis(5));
        drop(dropped);
        sooner.await;
        later.await;
        // One tick after the drops, the list is empty.
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(lock(&alarms.shared.table).is_empty());
    }
}
