//! Loom server names for `loom import`: a client's server name made a valid loom name
//! (`^[a-z][a-z0-9_]{0,31}$`, never `loom` or `loom_*`), each one different from the others.

use crate::config::RESERVED_NAME;
use std::collections::HashSet;

/// Loom server names given so far, so that each source name gets one of its own.
#[derive(Default)]
pub(super) struct Names {
    taken: HashSet<String>,
    /// The next suffix to try for each base name (so many clashes stay linear).
    next: std::collections::HashMap<String, usize>,
}

impl Names {
    /// `source` as a loom server name (`^[a-z][a-z0-9_]{0,31}$`, not `loom`, not `loom_*`),
    /// different from every name given before.
    pub(super) fn take(&mut self, source: &str) -> String {
        let base = loom_name(source);
        let mut name = base.clone();
        let mut i = self.next.get(&base).copied().unwrap_or(2);
        while self.taken.contains(&name) {
            let suffix = format!("_{i}");
            let mut b = base.clone();
            b.truncate(32 - suffix.len());
            name = format!("{}{suffix}", b.trim_end_matches('_'));
            i += 1;
        }
        self.next.insert(base, i);
        self.taken.insert(name.clone());
        name
    }
}

fn loom_name(source: &str) -> String {
    let mut n = String::new();
    for c in source.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '_'
        };
        if !(c == '_' && n.ends_with('_')) {
            n.push(c);
        }
        if n.len() > 40 {
            break;
        }
    }
    let mut n = n.trim_matches('_').to_owned();
    if !n.starts_with(|c: char| c.is_ascii_lowercase()) {
        n.insert_str(0, "s_");
    }
    if n == RESERVED_NAME || n.starts_with("loom_") {
        n.insert_str(0, "srv_");
    }
    n.truncate(32);
    n.trim_end_matches('_').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_loom_names_without_clashes() {
        let mut names = Names::default();
        for (src, want) in [
            ("My Server", "my_server"),
            ("my-server", "my_server_2"),
            ("9lives", "s_9lives"),
            ("loom", "srv_loom"),
            ("loom_x", "srv_loom_x"),
            ("", "s"),
            ("日本語", "s_2"),
            ("日本語", "s_3"),
            (
                "a_very_long_server_name_that_goes_on_and_on",
                "a_very_long_server_name_that_goe",
            ),
            (
                "a very long server name that goes on and on",
                "a_very_long_server_name_that_g_2",
            ),
        ] {
            assert_eq!(names.take(src), want, "{src}");
        }
        // Many names that all reduce to one stay quick to tell apart.
        let started = std::time::Instant::now();
        let mut names = Names::default();
        for i in 0..5_000 {
            names.take(&"!".repeat(i % 50 + 1));
        }
        assert_eq!(names.taken.len(), 5_000);
        eprintln!("5,000 clashing names in {:?}", started.elapsed());
    }
}
