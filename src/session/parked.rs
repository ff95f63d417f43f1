//! Work waiting across requests for a client's answers: a call whose server asked a question
//! that a 2026-07-28 client answers by retrying the call. The session keeps each item under a
//! random name until it is taken or its time runs out, and hands the client the name sealed
//! (`protocol::seal`), so a token it changed or made up opens nothing. What an item is, and
//! what dropping it undoes (cancelling the call, answering the server), belongs to the layer
//! that parked it.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// At most this many items wait at once; parking more drops the one closest to its end.
const MAX_PARKED: usize = 1024;

type Item = Box<dyn Any + Send>;

/// The domain parked names are sealed for.
const DOMAIN: &str = "loom-parked-call";

#[derive(Default)]
pub struct Parked {
    items: Arc<Mutex<HashMap<String, (Instant, Item)>>>,
    key: crate::protocol::seal::Key,
}

/// Why a token took nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Not a token this loom sealed: changed, made up, or another server's.
    NotOurs,
    /// A token of ours whose item was taken already or ran out of time.
    Gone,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Parked {
    /// Keeps `item` for at most `ttl` under a fresh random name, and returns the name sealed.
    /// An item nobody takes in time is dropped (its `Drop` undoes what it holds).
    pub fn put(&self, item: Item, ttl: Duration) -> String {
        let name = fresh_name();
        self.keep(name.clone(), Instant::now() + ttl, item);
        self.key.close(DOMAIN, &name)
    }

    /// Keeps `item` under `name` until `until`, when a timer drops it unless it was taken (or
    /// kept again for longer) meanwhile.
    fn keep(&self, name: String, until: Instant, item: Item) {
        let evicted = {
            let mut items = lock(&self.items);
            let mut evicted = Vec::new();
            while items.len() >= MAX_PARKED && !items.contains_key(&name) {
                let Some(first) = items
                    .iter()
                    .min_by_key(|(_, (t, _))| *t)
                    .map(|(k, _)| k.clone())
                else {
                    break;
                };
                evicted.extend(items.remove(&first));
            }
            evicted.extend(items.insert(name.clone(), (until, item)));
            evicted
        };
        drop(evicted);
        let items = Arc::downgrade(&self.items);
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                tokio::time::sleep_until(until).await;
                if let Some(items) = items.upgrade() {
                    // Dropped outside the lock: its Drop may talk to servers.
                    let gone = {
                        let mut items = lock(&items);
                        let due = items.get(&name).is_some_and(|(t, _)| *t <= Instant::now());
                        if due { items.remove(&name) } else { None }
                    };
                    drop(gone);
                }
            });
        }
    }

    /// Takes the item a sealed token names, if it is still there.
    pub fn take(&self, token: &str) -> Result<Item, Refused> {
        let name = self.key.open(DOMAIN, token).ok_or(Refused::NotOurs)?;
        let (until, item) = lock(&self.items).remove(name).ok_or(Refused::Gone)?;
        if Instant::now() < until {
            Ok(item)
        } else {
            Err(Refused::Gone)
        }
    }

    /// Puts an item back under its token after a retry that could not use it.
    /// Puts an item back under its token after a retry that could not use it, for `ttl` more,
    pub fn put_back(&self, token: &str, item: Item, ttl: Duration) {
        if let Some(name) = self.key.open(DOMAIN, token) {
            self.keep(name.to_owned(), Instant::now() + ttl, item);
        }
    }

    pub fn len(&self) -> usize {
        lock(&self.items).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// 128 random bits as hex.
fn fresh_name() -> String {
    let mut bytes = [0u8; 16];
    let from_os = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes));
    if from_os.is_err() {
        use sha2::Digest;
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let h = sha2::Sha256::new()
            .chain_update(now.to_le_bytes())
            .chain_update(n.to_le_bytes())
            .finalize();
        bytes.copy_from_slice(&h[..16]);
    }
    crate::protocol::seal::hex(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Flag(Arc<std::sync::atomic::AtomicBool>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[tokio::test]
    async fn an_item_is_taken_once_and_dropped_when_its_time_runs_out() {
        let p = Parked::default();
        let a = p.put(Box::new(1u32), Duration::from_secs(60));
        assert!(a.len() < 120, "small: {a}");
        assert_eq!(p.take("nope").err(), Some(Refused::NotOurs));
        let forged = format!("{}0.{}", &a[..32], &a[33..]);
        assert_eq!(p.take(&forged).err(), Some(Refused::NotOurs));
        let got = p.take(&a).ok().and_then(|b| b.downcast::<u32>().ok());
        assert_eq!(got.as_deref(), Some(&1));
        assert_eq!(p.take(&a).err(), Some(Refused::Gone), "taken once");

        let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let b = p.put(Box::new(Flag(dropped.clone())), Duration::from_millis(20));
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(dropped.load(std::sync::atomic::Ordering::SeqCst));
        assert_eq!(p.take(&b).err(), Some(Refused::Gone));
        assert!(p.is_empty());
    }

    #[tokio::test]
    async fn an_item_put_back_after_its_first_timer_fired_is_still_dropped_in_time() {
        let p = Parked::default();
        let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let t = p.put(Box::new(Flag(dropped.clone())), Duration::from_millis(30));
        // A retry holds it while the first timer fires, then puts it back.
        let held = p.take(&t).expect("still there");
        tokio::time::sleep(Duration::from_millis(100)).await;
        p.put_back(&t, held, Duration::from_millis(30));
        assert_eq!(p.len(), 1);
        assert!(!dropped.load(std::sync::atomic::Ordering::SeqCst));
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(
            dropped.load(std::sync::atomic::Ordering::SeqCst),
            "its own timer dropped it"
        );
        assert!(p.is_empty());
        // Put back for longer than the first deadline: the first timer leaves it alone.
        let t = p.put(Box::new(1u32), Duration::from_millis(30));
        let held = p.take(&t).expect("still there");
        p.put_back(&t, held, Duration::from_secs(60));
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(p.take(&t).is_ok(), "kept until its new deadline");
    }
}
