//! Requests waiting for their answers, by id: the one map behind every place loom sends a
//! request and awaits the reply (a downstream connection, the in-process engine's client, the
//! session socket's client). Ids are handed out here. Once closed, every waiter is answered and
//! no new one is let in; the check and the insert happen under one lock, so no request can slip
//! in after the close and wait forever.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::oneshot;

pub struct Pending<T> {
    next: AtomicU64,
    state: Mutex<State<T>>,
}

struct State<T> {
    closed: bool,
    waiting: HashMap<u64, oneshot::Sender<T>>,
}

impl<T> Default for Pending<T> {
    fn default() -> Self {
        Pending {
            next: AtomicU64::new(1),
            state: Mutex::new(State {
                closed: false,
                waiting: HashMap::new(),
            }),
        }
    }
}

impl<T> Pending<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Requests sent and not answered yet.
    pub fn waiting(&self) -> usize {
        self.lock().waiting.len()
    }

    /// Whether `id` is still waited for.
    pub fn is_waiting(&self, id: u64) -> bool {
        self.lock().waiting.contains_key(&id)
    }

    /// A fresh id, for a message that expects no answer through this map.
    pub fn next_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// A fresh id and the receiver its answer arrives on. When the map is closed the receiver
    /// is answered at once with `closed()`.
    pub fn register(&self, closed: impl FnOnce() -> T) -> (u64, oneshot::Receiver<T>) {
        let id = self.next_id();
        let (tx, rx) = oneshot::channel();
        let mut state = self.lock();
        if state.closed {
            drop(state);
            let _ = tx.send(closed());
        } else {
            state.waiting.insert(id, tx);
        }
        (id, rx)
    }

    /// Answers `id`; false when nobody waits for it (answered, forgotten, or never asked).
    pub fn resolve(&self, id: u64, value: T) -> bool {
        let tx = self.lock().waiting.remove(&id);
        match tx {
            Some(tx) => {
                let _ = tx.send(value);
                true
            }
            None => false,
        }
    }

    /// Stops waiting for `id`; true if it was still waited for.
    pub fn forget(&self, id: u64) -> bool {
        self.lock().waiting.remove(&id).is_some()
    }

    /// Closes the map: every waiter is answered with `value()`, and later ones at once.
    pub fn close(&self, value: impl Fn() -> T) {
        let waiting: Vec<_> = {
            let mut state = self.lock();
            state.closed = true;
            state.waiting.drain().map(|(_, tx)| tx).collect()
        };
        for tx in waiting {
            let _ = tx.send(value());
        }
    }

    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }
}

#[cfg(test)]
mod tests {
    use super::Pending;

    #[tokio::test]
    async fn every_waiter_is_answered_once_and_none_after_the_close_waits() {
        let p = Pending::<String>::default();
        let (a, ra) = p.register(|| "closed".into());
        let (b, rb) = p.register(|| "closed".into());
        assert_ne!(a, b);
        assert!(p.resolve(a, "one".into()));
        assert!(!p.resolve(a, "twice".into()), "an id is answered once");
        assert_eq!(ra.await.unwrap(), "one");
        assert!(p.is_waiting(b) && !p.is_waiting(a));
        assert!(p.forget(b));
        assert!(!p.is_waiting(b));
        assert!(rb.await.is_err(), "a forgotten waiter is dropped");
        let (_, rc) = p.register(|| "closed".into());
        p.close(|| "gone".to_owned());
        assert_eq!(rc.await.unwrap(), "gone");
        let (late, rd) = p.register(|| "closed".into());
        assert_eq!(rd.await.unwrap(), "closed");
        assert!(!p.resolve(late, "x".into()));
        assert!(p.is_closed());
    }
}
