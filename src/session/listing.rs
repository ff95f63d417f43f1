//! What this session changed about the tool listing: tools promoted after they were found and
//! called, tools a person pinned from the workbench, and how often each tool was called (which
//! ranks search results and names the most used tools).

use super::finder::{Finder, ToolDoc};

/// Finders kept at once: one per distinct set of tools that clients search.
const FINDERS_KEPT: usize = 4;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

#[derive(Default)]
pub struct ListingState {
    promoted: Mutex<BTreeSet<String>>,
    pinned: Mutex<BTreeSet<String>>,
    uses: Mutex<HashMap<String, u32>>,
    /// The finders over the tool sets they were last built for (clients whose listings differ
    /// search different sets), with their fingerprints, most recently used last.
    finder: Mutex<Vec<(u64, Arc<Finder>)>>,
    /// The same finders by the key of what their tools came from (`finder_keyed`).
    keyed: Mutex<Vec<(u64, Arc<Finder>)>>,
}

/// A copy of the session's use counts (`ListingState::uses_now`).
pub struct Uses(HashMap<String, u32>);

impl Uses {
    pub fn of(&self, exposed: &str) -> u32 {
        if self.0.is_empty() {
            return 0;
        }
        self.0.get(exposed).copied().unwrap_or(0)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ListingState {
    /// Adds `exposed` to the listing for the rest of the session; whether it was new.
    pub fn promote(&self, exposed: &str) -> bool {
        lock(&self.promoted).insert(exposed.to_owned())
    }

    pub fn is_promoted(&self, exposed: &str) -> bool {
        lock(&self.promoted).contains(exposed)
    }

    /// Pins or unpins `exposed` for this session; whether it is pinned now.
    pub fn toggle_pin(&self, exposed: &str) -> bool {
        let mut p = lock(&self.pinned);
        if p.remove(exposed) {
            false
        } else {
            p.insert(exposed.to_owned());
            true
        }
    }

    pub fn is_pinned(&self, exposed: &str) -> bool {
        lock(&self.pinned).contains(exposed)
    }

    pub fn record_use(&self, exposed: &str) {
        *lock(&self.uses).entry(exposed.to_owned()).or_default() += 1;
    }

    /// How often each tool was called, as of now: read once by a search that asks for every
    /// tool it scores, instead of locking once per tool.
    pub fn uses_now(&self) -> Uses {
        Uses(lock(&self.uses).clone())
    }

    /// The finder last built under `key` (a fingerprint of everything the tools come from),
    /// else one over the tools `docs` gives, kept under `key`. What a find costs is then the
    /// search alone, however many tools there are, until the tools change.
    pub fn finder_keyed(&self, key: u64, docs: impl FnOnce() -> Vec<ToolDoc>) -> Arc<Finder> {
        {
            let mut keyed = lock(&self.keyed);
            if let Some(at) = keyed.iter().position(|(k, _)| *k == key) {
                let hit = keyed.remove(at);
                let f = hit.1.clone();
                keyed.push(hit);
                return f;
            }
        }
        let f = self.finder_for(docs());
        let mut keyed = lock(&self.keyed);
        if keyed.len() >= FINDERS_KEPT {
            keyed.remove(0);
        }
        keyed.push((key, f.clone()));
        f
    }

    /// A finder over `docs`: the one built before when the tools are the same, else a new one
    /// that reads only the tools the last one did not hold.
    pub fn finder_for(&self, docs: Vec<ToolDoc>) -> Arc<Finder> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        // Every field of every tool (the derived `Hash`), so a new field cannot be missed.
        docs.hash(&mut h);
        let print = h.finish();
        let mut cached = lock(&self.finder);
        if let Some(at) = cached.iter().position(|(p, _)| *p == print) {
            // Most recently used last.
            let hit = cached.remove(at);
            let f = hit.1.clone();
            cached.push(hit);
            return f;
        }
        // Most often one server's tools changed: the last finder lends the others' reading.
        let f = Arc::new(match cached.last() {
            Some((_, last)) => last.rebuilt(docs),
            None => Finder::new(docs),
        });
        if cached.len() >= FINDERS_KEPT {
            cached.remove(0);
        }
        cached.push((print, f.clone()));
        f
    }

    /// The `n` most called tools, most first (ties by name).
    pub fn most_used(&self, n: usize) -> Vec<(String, u32)> {
        let mut all: Vec<(String, u32)> = lock(&self.uses)
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        all.truncate(n);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finders_are_kept_per_tool_set_and_rebuilt_when_a_tool_changes() {
        let s = ListingState::default();
        let docs = |title: &str| {
            vec![ToolDoc::from_tool(
                "s",
                "s_t",
                &serde_json::json!({ "name": "t", "title": title, "description": "d" }),
            )]
        };
        let a = s.finder_for(docs("A"));
        let b = s.finder_for(docs("B"));
        assert!(!Arc::ptr_eq(&a, &b), "a changed title is a new index");
        // Two clients searching different sets, in turn, each keep theirs.
        assert!(Arc::ptr_eq(&a, &s.finder_for(docs("A"))));
        assert!(Arc::ptr_eq(&b, &s.finder_for(docs("B"))));
        for i in 0..FINDERS_KEPT {
            s.finder_for(docs(&format!("other {i}")));
        }
        assert!(
            !Arc::ptr_eq(&a, &s.finder_for(docs("A"))),
            "at most FINDERS_KEPT kept"
        );
    }

    #[test]
    fn promotion_pins_and_uses() {
        let s = ListingState::default();
        assert!(s.promote("a") && !s.promote("a") && s.is_promoted("a"));
        assert!(s.toggle_pin("b") && s.is_pinned("b") && !s.toggle_pin("b"));
        for t in ["x", "y", "y", "z", "z"] {
            s.record_use(t);
        }
        assert_eq!(
            s.most_used(2),
            vec![("y".to_owned(), 2), ("z".to_owned(), 2)]
        );
        assert_eq!(s.uses_now().of("x"), 1);
    }
}
