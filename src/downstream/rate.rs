//! How fast loom calls one server's tools: at most `max_calls_per_second`, single calls and
//! the calls of a `loom_call_each` batch alike, in bursts of up to one second's worth. A call
//! over the rate waits its turn (first come, first served); none is refused or dropped. How
//! many calls waited is shown in the workbench's Servers pane.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::time::Instant;

pub struct Rate {
    per_second: u32,
    /// The calls that may go now (up to `per_second`), as of the instant beside it. A tokio
    /// mutex: its waiters are served in order, and the one that waits for the next call's
    /// turn holds it, so calls leave one at a time in the order they came.
    bucket: tokio::sync::Mutex<(f64, Instant)>,
    waited: AtomicU64,
}

impl Rate {
    pub fn new(per_second: u32) -> Rate {
        let per_second = per_second.max(1);
        Rate {
            per_second,
            bucket: tokio::sync::Mutex::new((f64::from(per_second), Instant::now())),
            waited: AtomicU64::new(0),
        }
    }

    pub fn per_second(&self) -> u32 {
        self.per_second
    }

    /// How many calls had to wait for their turn since loom started.
    pub fn waited(&self) -> u64 {
        self.waited.load(Ordering::Relaxed)
    }

    /// Lets one more call go now if it may without waiting (no call waits for its turn, and
    /// the bucket has one): the path of every call under the rate, with nothing to track.
    pub fn try_admit(&self) -> bool {
        let Ok(mut bucket) = self.bucket.try_lock() else {
            return false;
        };
        let (next, wait) = turn(*bucket, Instant::now(), self.per_second);
        if wait.is_zero() {
            *bucket = next;
        }
        wait.is_zero()
    }

    /// Waits until one more call may go.
    pub async fn admit(&self) {
        let mut bucket = self.bucket.lock().await;
        let (next, wait) = turn(*bucket, Instant::now(), self.per_second);
        if !wait.is_zero() {
            self.waited.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(wait).await;
        }
        *bucket = next;
    }
}

/// One call's turn: from the bucket as it was (calls that may go, as of an instant) and the
/// instant the call asks, the bucket after it goes and how long it waits first.
fn turn(bucket: (f64, Instant), now: Instant, per_second: u32) -> ((f64, Instant), Duration) {
    let rate = f64::from(per_second);
    let (tokens, at) = bucket;
    let tokens = (tokens + now.saturating_duration_since(at).as_secs_f64() * rate).min(rate);
    if tokens >= 1.0 {
        return ((tokens - 1.0, now), Duration::ZERO);
    }
    let wait = Duration::from_secs_f64((1.0 - tokens) / rate);
    ((0.0, now + wait), wait)
}

#[cfg(test)]
mod tests {
    use super::turn;
    use std::time::Duration;
    use tokio::time::Instant;

    /// The invariant, for calls that all ask at once and leave one after another (as the
    /// bucket's lock makes them): no second lets more than the rate plus the first burst
    /// through, past the burst no second lets more than the rate, and every call goes.
    #[test]
    fn no_second_lets_more_than_the_rate_through() {
        let start = Instant::now();
        let mut bucket = (10.0, start);
        let mut clock = start;
        let mut at = Vec::new();
        let mut waited = 0;
        for _ in 0..45 {
            let (next, wait) = turn(bucket, clock, 10);
            waited += usize::from(!wait.is_zero());
            clock += wait;
            bucket = next;
            at.push(clock - start);
        }
        assert_eq!(at.len(), 45);
        // The first 10 go at once; then one every 100 ms.
        assert!(at[9].is_zero(), "{at:?}");
        for w in at.windows(21) {
            assert!(w[20] - w[0] >= Duration::from_millis(999), "{at:?}");
        }
        for w in at[10..].windows(11) {
            assert!(w[10] - w[0] >= Duration::from_millis(999), "{at:?}");
        }
        assert_eq!(waited, 35);
        assert!(at[44] >= Duration::from_millis(3499), "{at:?}");
        // A quiet second refills the burst, never more than one second's worth.
        let (_, wait) = turn(bucket, clock + Duration::from_secs(60), 10);
        assert!(wait.is_zero());
        let mut b = (0.0, clock);
        for i in 0..11 {
            let (next, wait) = turn(b, clock + Duration::from_secs(60), 10);
            assert_eq!(wait.is_zero(), i < 10, "{i}");
            b = next;
        }
    }
}
