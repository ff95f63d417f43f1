//! Each server's recent log as a person reads it: the lines it wrote on stderr and the changes
//! in its life (up, failed, restarting, delisted, restarted by a person), each with its time,
//! in the order they happened. Bounded per server; the oldest lines go first. It never holds a
//! line longer than `MAX_LINE_CHARS`, so one runaway line cannot fill memory.

use crate::downstream::connection::lock;
use crate::types::events::{LogKind, LogLine, ServerState};
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// Lines kept per server.
pub const KEPT_LINES: usize = 2000;
/// Characters kept of one line.
pub const MAX_LINE_CHARS: usize = 4000;

#[derive(Default)]
pub struct ServerLogs {
    by_server: Mutex<HashMap<String, VecDeque<LogLine>>>,
}

impl ServerLogs {
    fn push(&self, server: &str, kind: LogKind, text: String, at: String) {
        let text = match text.char_indices().nth(MAX_LINE_CHARS) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None => text,
        };
        let mut map = lock(&self.by_server);
        let lines = map.entry(server.to_owned()).or_default();
        if lines.len() == KEPT_LINES {
            lines.pop_front();
        }
        lines.push_back(LogLine { at, kind, text });
    }

    /// A line the server wrote on stderr, read at `at`.
    pub fn stderr(&self, server: &str, line: &str, at: &str) {
        self.push(server, LogKind::Stderr, line.to_owned(), at.to_owned());
    }

    /// The server's state changed (and why, when it failed).
    pub fn state(&self, server: &str, state: &ServerState, detail: Option<&str>) {
        let text = match detail {
            Some(why) => format!("{state}: {why}"),
            None => state.label(),
        };
        self.push(server, LogKind::State, text, crate::types::time::now_iso());
    }

    /// Something a person did to the server (a restart), in words.
    pub fn note(&self, server: &str, text: String) {
        self.push(server, LogKind::State, text, crate::types::time::now_iso());
    }

    /// Every kept line of one server, oldest first.
    pub fn lines(&self, server: &str) -> Vec<LogLine> {
        lock(&self.by_server)
            .get(server)
            .map(|l| l.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The last `n` stderr lines of one server, oldest first.
    pub fn stderr_tail(&self, server: &str, n: usize) -> Vec<String> {
        let map = lock(&self.by_server);
        let Some(lines) = map.get(server) else {
            return Vec::new();
        };
        let mut tail: Vec<String> = lines
            .iter()
            .rev()
            .filter(|l| l.kind == LogKind::Stderr)
            .take(n)
            .map(|l| l.text.clone())
            .collect();
        tail.reverse();
        tail
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn restarts_stand_between_the_lines_they_separate() {
        let logs = ServerLogs::default();
        logs.stderr("fs", "listening", "2026-12-01T00:00:00Z");
        logs.state(
            "fs",
            &ServerState::Restarting { attempt: 1, max: 5 },
            Some("exit 1"),
        );
        logs.stderr("fs", "listening again", "2026-12-01T00:00:02Z");
        let lines = logs.lines("fs");
        let kinds: Vec<LogKind> = lines.iter().map(|l| l.kind).collect();
        assert_eq!(kinds, [LogKind::Stderr, LogKind::State, LogKind::Stderr]);
        assert_eq!(lines[1].text, "restarting 1/5: exit 1");
        assert_eq!(logs.stderr_tail("fs", 1), ["listening again"]);
        assert!(logs.lines("db").is_empty());
    }

    #[test]
    fn the_oldest_lines_go_first_when_the_log_is_full() {
        let logs = ServerLogs::default();
        for i in 0..KEPT_LINES + 3 {
            logs.stderr("fs", &format!("line {i}"), "t");
        }
        let lines = logs.lines("fs");
        assert_eq!(lines.len(), KEPT_LINES);
        assert_eq!(lines[0].text, "line 3");
    }

    proptest! {
        /// Any text a server writes is kept without a panic, cut on a character boundary.
        #[test]
        fn any_line_is_kept_whole_or_cut_on_a_character(line in "\\PC{0,5000}") {
            let logs = ServerLogs::default();
            logs.stderr("fs", &line, "t");
            let kept = &logs.lines("fs")[0].text;
            prop_assert!(kept.chars().count() <= MAX_LINE_CHARS + 1);
            prop_assert!(line.starts_with(kept.trim_end_matches('…')));
        }
    }
}
