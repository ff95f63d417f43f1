//! The SQL history's records: each statement run from the workbench with when it ran, how
//! long it took and how many rows it gave (or why it failed), and the text the editor kept
//! when something replaced it. It owns the record types and the history file (JSON Lines,
//! appended one record a line, created private). Reading takes today's records, the older
//! one-JSON-string-a-line format, and skips any line it cannot read: a broken file never
//! panics and never stops the workbench. It never draws and never sends requests.

use super::EditorPane;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The newest records kept in memory when the file is read.
const KEEP: usize = 1000;

/// The characters of an error a record keeps.
const ERROR_CHARS: usize = 200;

/// What came of a statement in the history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A line from before loom recorded outcomes, or a run the workbench quit before it ended.
    Unknown,
    /// Text the editor kept when something replaced it; it was not run.
    Kept,
    /// Sent to the engine; no answer yet.
    Running,
    Rows(u64),
    /// The engine's error, shortened to one line.
    Failed(String),
    /// A person cancelled it.
    Cancelled,
}

/// One statement of the history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryEntry {
    pub sql: String,
    /// Seconds since the epoch (UTC) when it ran or was kept.
    pub at: Option<u64>,
    /// How long the engine took.
    pub millis: Option<u64>,
    pub outcome: Outcome,
}

impl HistoryEntry {
    fn new(sql: &str, at: u64, outcome: Outcome) -> HistoryEntry {
        HistoryEntry {
            sql: sql.to_owned(),
            at: Some(at),
            millis: None,
            outcome,
        }
    }
}

/// One line of the history file, as written.
#[derive(Serialize, Deserialize, Default)]
#[serde(default)]
struct Record {
    sql: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rows: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    kept: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    cancelled: bool,
}

impl From<&HistoryEntry> for Record {
    fn from(e: &HistoryEntry) -> Record {
        Record {
            sql: e.sql.clone(),
            at: e.at.map(crate::types::time::iso),
            ms: e.millis,
            rows: match e.outcome {
                Outcome::Rows(n) => Some(n),
                _ => None,
            },
            error: match &e.outcome {
                Outcome::Failed(m) => Some(m.clone()),
                _ => None,
            },
            kept: e.outcome == Outcome::Kept,
            cancelled: e.outcome == Outcome::Cancelled,
        }
    }
}

impl From<Record> for HistoryEntry {
    fn from(r: Record) -> HistoryEntry {
        let outcome = match (r.error, r.rows) {
            (Some(m), _) => Outcome::Failed(shorten_error(&m)),
            (None, Some(n)) => Outcome::Rows(n),
            (None, None) if r.kept => Outcome::Kept,
            (None, None) if r.cancelled => Outcome::Cancelled,
            (None, None) => Outcome::Unknown,
        };
        HistoryEntry {
            sql: r.sql,
            at: r.at.as_deref().and_then(crate::types::time::parse_iso),
            millis: r.ms,
            outcome,
        }
    }
}

/// One line of the file: a record, or a bare JSON string as older versions wrote.
fn parse_line(line: &[u8]) -> Option<HistoryEntry> {
    let text = std::str::from_utf8(line).ok()?.trim();
    let entry = if text.starts_with('"') {
        HistoryEntry {
            sql: serde_json::from_str::<String>(text).ok()?,
            at: None,
            millis: None,
            outcome: Outcome::Unknown,
        }
    } else {
        serde_json::from_str::<Record>(text).ok()?.into()
    };
    (!entry.sql.trim().is_empty()).then_some(entry)
}

/// The entries of a history file's bytes, oldest first: unreadable lines are skipped, a
/// statement run again straight after itself counts once (its newest run), and only the
/// newest `KEEP` stay.
pub fn parse_history(bytes: &[u8]) -> Vec<HistoryEntry> {
    let mut out: Vec<HistoryEntry> = Vec::new();
    for entry in bytes.split(|b| *b == b'\n').filter_map(parse_line) {
        match out.last_mut() {
            Some(last) if last.sql == entry.sql => *last = entry,
            _ => out.push(entry),
        }
    }
    let skip = out.len().saturating_sub(KEEP);
    out.drain(..skip);
    out
}

/// Where the SQL history lives when no other place is given.
pub fn default_history_file() -> Option<PathBuf> {
    Some(crate::folders::data_dir()?.join("sql-history.jsonl"))
}

/// The history in `path`; none when it cannot be read.
pub fn load_history(path: &Path) -> Vec<HistoryEntry> {
    std::fs::read(path)
        .map(|b| parse_history(&b))
        .unwrap_or_default()
}

/// Appends one record; the history is a convenience, so a failure to write is only logged.
fn append_record(path: &Path, entry: &HistoryEntry) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(dir) = path.parent() {
        let _ = crate::folders::create_private_dirs(dir);
    }
    let line = match serde_json::to_string(&Record::from(entry)) {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!("history record not written: {e}");
            return;
        }
    };
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut f| writeln!(f, "{line}"));
    if let Err(e) = written {
        tracing::warn!("history not written to {}: {e}", path.display());
    }
}

/// An engine error as a record keeps it: its first line, without control characters, cut on
/// a character boundary.
pub fn shorten_error(message: &str) -> String {
    let first = message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    let clean: String = first.chars().filter(|c| !c.is_control()).collect();
    if clean.chars().count() <= ERROR_CHARS {
        return clean;
    }
    let mut cut: String = clean.chars().take(ERROR_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// A statement the engine runs now: which entry its outcome completes, and which editor tab
/// sent it (its error is marked there).
pub(super) struct PendingRun {
    pub ticket: u64,
    pub index: usize,
    pub tab: u64,
    pub started: Instant,
}

impl EditorPane {
    /// Keeps text the editor is about to lose (a query of the person's choosing replaces it,
    /// or its tab closes) in the history, unless it is the newest entry already.
    pub(super) fn remember(&mut self, sql: &str, at: u64) {
        if self.history.last().map(|e| e.sql.as_str()) == Some(sql) {
            return;
        }
        let entry = HistoryEntry::new(sql, at, Outcome::Kept);
        if let Some(path) = &self.history_file {
            append_record(path, &entry);
        }
        self.history.push(entry);
        self.history_pos = None;
    }

    /// Whether `text` is in the history already, so losing it from the editor loses nothing.
    pub(super) fn in_history(&self, text: &str) -> bool {
        let text = text.trim();
        text.is_empty() || self.history.iter().any(|e| e.sql.trim() == text)
    }

    /// A statement was sent as `ticket` from the current tab: it becomes the newest entry
    /// (the same statement run again straight after itself stays one entry, as it walks).
    /// The record is written when its outcome arrives.
    pub(super) fn record_run(&mut self, sql: &str, ticket: u64, at: u64) {
        let entry = HistoryEntry::new(sql, at, Outcome::Running);
        match self.history.last_mut() {
            Some(last) if last.sql == sql => *last = entry,
            _ => {
                self.history.push(entry);
                self.history_pos = None;
            }
        }
        self.pending_run = Some(PendingRun {
            ticket,
            index: self.history.len() - 1,
            tab: self.tabs.current_id(),
            started: Instant::now(),
        });
    }

    /// The outcome of `ticket` arrived: its entry is completed and written. Returns the tab
    /// that ran it; none when `ticket` was not a statement of the editor (a sort of the grid).
    pub(super) fn finish_run(
        &mut self,
        ticket: u64,
        outcome: Outcome,
        millis: Option<u64>,
    ) -> Option<u64> {
        let run = self.pending_run.take_if(|r| r.ticket == ticket)?;
        let millis = millis.or_else(|| u64::try_from(run.started.elapsed().as_millis()).ok());
        if let Some(entry) = self.history.get_mut(run.index) {
            entry.outcome = outcome;
            entry.millis = millis;
            if let Some(path) = &self.history_file {
                append_record(path, entry);
            }
        }
        Some(run.tab)
    }

    /// The workbench quits: a statement still running is written without its outcome.
    pub(super) fn write_pending_run(&mut self) {
        let Some(run) = self.pending_run.take() else {
            return;
        };
        if let (Some(entry), Some(path)) = (self.history.get_mut(run.index), &self.history_file) {
            entry.outcome = Outcome::Unknown;
            append_record(path, entry);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn records_old_lines_and_broken_lines_read_together() {
        let text = concat!(
            "\"SELECT 1\"\n",
            "not json at all\n",
            "{\"sql\":\"SELECT 2\",\"at\":\"2026-11-30T10:00:00Z\",\"ms\":12,\"rows\":3}\n",
            "{\"sql\":\"SELECT nope\",\"at\":\"bad date\",\"error\":\"Binder Error: no\\nLINE 1\"}\n",
            "{\"sql\":\"SELECT 3\",\"kept\":true}\n",
            "{\"at\":\"2026-11-30T10:00:00Z\"}\n",
            "[1,2]\n",
            "\n",
        );
        let h = parse_history(text.as_bytes());
        let sqls: Vec<&str> = h.iter().map(|e| e.sql.as_str()).collect();
        assert_eq!(sqls, ["SELECT 1", "SELECT 2", "SELECT nope", "SELECT 3"]);
        assert_eq!(h[0].outcome, Outcome::Unknown);
        assert_eq!(
            (h[1].at, h[1].millis, &h[1].outcome),
            (Some(1_796_032_800), Some(12), &Outcome::Rows(3))
        );
        assert_eq!(h[2].at, None);
        assert_eq!(h[2].outcome, Outcome::Failed("Binder Error: no".into()));
        assert_eq!(h[3].outcome, Outcome::Kept);
    }

    #[test]
    fn a_record_reads_back_as_written() {
        for outcome in [
            Outcome::Rows(7),
            Outcome::Failed("x".into()),
            Outcome::Kept,
            Outcome::Unknown,
        ] {
            let e = HistoryEntry {
                sql: "SELECT '\n\t\u{1b}' -- 表".into(),
                at: Some(1_796_032_800),
                millis: Some(5),
                outcome,
            };
            let line = serde_json::to_string(&Record::from(&e)).expect("record");
            assert_eq!(parse_history(line.as_bytes()), vec![e]);
        }
    }

    #[test]
    fn a_statement_run_again_straight_after_itself_counts_once() {
        let text = "\"SELECT 1\"\n{\"sql\":\"SELECT 1\",\"rows\":1}\n\"SELECT 2\"\n\"SELECT 1\"\n";
        let h = parse_history(text.as_bytes());
        assert_eq!(h.len(), 3);
        assert_eq!(h[0].outcome, Outcome::Rows(1));
    }

    #[test]
    fn a_long_error_is_cut_on_a_character_boundary() {
        let long = "错".repeat(500);
        let s = shorten_error(&format!("\n  {long}\nmore"));
        assert_eq!(s.chars().count(), ERROR_CHARS);
        assert!(s.ends_with('…'));
        assert_eq!(shorten_error("a\u{7}b"), "ab");
    }

    proptest! {
        #[test]
        fn load_history_never_panics_on_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let dir = tempfile::tempdir().expect("temp dir");
            let path = dir.path().join("sql-history.jsonl");
            std::fs::write(&path, &bytes).expect("write");
            let h = load_history(&path);
            prop_assert!(h.len() <= KEEP);
            prop_assert!(h.iter().all(|e| !e.sql.trim().is_empty()));
        }

        #[test]
        fn record_shaped_lines_never_panic(
            sql in ".*", at in ".*", ms in any::<i64>(), rows in any::<i64>(), err in ".*",
        ) {
            let line = serde_json::json!({ "sql": sql, "at": at, "ms": ms, "rows": rows, "error": err });
            let _ = parse_history(line.to_string().as_bytes());
        }
    }
}
