//! How often loom complains about what a server sends that it ignores (lines that are not
//! JSON-RPC, replies to nothing): the first few one by one, then at most one summary a minute
//! with a count, so a server printing garbage cannot flood loom's log. It decides only what to
//! say; the connection logs it.

use std::time::{Duration, Instant};

/// Complaints logged one by one before counting starts.
pub const ONE_BY_ONE: u32 = 10;
/// How often a count of the complaints left unlogged is logged.
pub const SUMMARY_EVERY: Duration = Duration::from_secs(60);

#[derive(Debug, Default)]
pub struct NoiseLog {
    logged: u32,
    unlogged: u64,
    last_summary: Option<Instant>,
}

/// What to log for one ignored message.
#[derive(Debug, PartialEq, Eq)]
pub enum Say {
    /// Log this complaint; `last` says it is the last logged one by one.
    Each {
        last: bool,
    },
    /// Log a summary: `count` complaints (this one included) over `over`.
    Summary {
        count: u64,
        over: Duration,
    },
    Nothing,
}

impl NoiseLog {
    /// One more ignored message at `now`.
    pub fn note(&mut self, now: Instant) -> Say {
        if self.logged < ONE_BY_ONE {
            self.logged += 1;
            let last = self.logged == ONE_BY_ONE;
            if last {
                self.last_summary = Some(now);
            }
            return Say::Each { last };
        }
        self.unlogged += 1;
        let since = *self.last_summary.get_or_insert(now);
        let over = now.saturating_duration_since(since);
        if over < SUMMARY_EVERY {
            return Say::Nothing;
        }
        self.last_summary = Some(now);
        Say::Summary {
            count: std::mem::take(&mut self.unlogged),
            over,
        }
    }

    /// The complaints not logged yet (when the connection ends), and clears them.
    pub fn unlogged(&mut self) -> u64 {
        std::mem::take(&mut self.unlogged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_ten_are_logged_then_one_summary_a_minute() {
        let mut n = NoiseLog::default();
        let t0 = Instant::now();
        for i in 1..=ONE_BY_ONE {
            assert_eq!(
                n.note(t0),
                Say::Each {
                    last: i == ONE_BY_ONE
                }
            );
        }
        for _ in 0..100_000 {
            assert_eq!(n.note(t0 + Duration::from_secs(30)), Say::Nothing);
        }
        assert_eq!(
            n.note(t0 + SUMMARY_EVERY),
            Say::Summary {
                count: 100_001,
                over: SUMMARY_EVERY
            }
        );
        assert_eq!(n.note(t0 + SUMMARY_EVERY), Say::Nothing);
        assert_eq!(n.unlogged(), 1);
        assert_eq!(n.unlogged(), 0);
    }
}
