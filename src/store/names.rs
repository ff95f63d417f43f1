//! The names loom draws for the tables it makes: `<server>_<tool>_<n>` for an ingested result,
//! `q_<n>` for a large query result, `_loom_result_<n>` for a workbench result. Each prefix has
//! its own counter, so a user reads `sample_list_orders_1`, `sample_list_customers_1`, not
//! numbers that jump because other kinds of tables share one count. A drawn name is never drawn
//! again in the session, and a name a client already took (a materialized dataset) is skipped,
//! so a client can never squat the name loom's next table would get. This module only hands out
//! names; it never touches the engine.

use std::collections::{HashMap, HashSet};

/// Every name drawn so far, the names clients chose, and the next number of each prefix.
#[derive(Debug, Default)]
pub(super) struct Names {
    next: HashMap<String, u64>,
    drawn: HashSet<String>,
    chosen: HashSet<String>,
}

impl Names {
    /// A fresh `<base>_<n>`: the lowest number after the last one drawn for `base` that is
    /// neither drawn before nor `taken` (a name a client or the engine holds now).
    pub(super) fn draw(&mut self, base: &str, taken: impl Fn(&str) -> bool) -> String {
        let next = self.next.entry(base.to_owned()).or_insert(1);
        loop {
            let name = format!("{base}_{next}");
            *next += 1;
            if !self.drawn.contains(&name) && !self.chosen.contains(&name) && !taken(&name) {
                self.drawn.insert(name.clone());
                return name;
            }
        }
    }

    /// Takes `name` for one of loom's own tables, drawn some other way than `draw` (a table
    /// of several from one result): false when it was drawn or chosen before.
    pub(super) fn reserve(&mut self, name: &str) -> bool {
        !self.chosen.contains(name) && self.drawn.insert(name.to_owned())
    }

    /// A client chose `name` for a table: false when loom drew it for one of its own this
    /// session (it may be gone by now: a name once given is never given to anything else);
    /// otherwise loom never draws it, even if the client's table is not made in the end.
    pub(super) fn claim(&mut self, name: &str) -> bool {
        if self.drawn.contains(name) {
            return false;
        }
        self.chosen.insert(name.to_owned());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::Names;

    #[test]
    fn each_prefix_counts_on_its_own_and_skips_taken_names() {
        let mut n = Names::default();
        assert_eq!(
            n.draw("sample_list_orders", |_| false),
            "sample_list_orders_1"
        );
        assert_eq!(n.draw("q", |_| false), "q_1");
        assert_eq!(
            n.draw("sample_list_customers", |_| false),
            "sample_list_customers_1"
        );
        let taken = ["sample_list_orders_2", "sample_list_orders_3"];
        assert_eq!(
            n.draw("sample_list_orders", |s| taken.contains(&s)),
            "sample_list_orders_4"
        );
        // A client may not take a name loom drew; one it chose is never drawn.
        assert!(!n.claim("q_1"));
        assert!(n.claim("q_2"));
        assert_eq!(n.draw("q", |_| false), "q_3");
    }
}
