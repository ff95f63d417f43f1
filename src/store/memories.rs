//! Memories: keyed notes that a model and a human share across sessions, every version kept.
//! They live in an append-only JSON Lines file per project; every change is one appended line
//! written under an exclusive `flock`, and every read replays the file under a shared lock, so
//! two loom processes on one project can read and write at once without losing anything.
//!
//! The file is outside data (a crash, a disk error or a hand edit can damage it), so replay
//! reads bytes, never fails on a bad line, and counts every line it skipped; callers show that
//! count, never hide it. A write first ends a torn last line so the new record stands on its own
//! line, and a version is never handed out twice, even when the line that held it is damaged.
//! The file and its folders are private to the user from the moment they exist.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Memory {
    pub key: String,
    pub version: u64,
    pub content: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub pinned: bool,
    /// `model` or `human`.
    pub author: String,
    pub at: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
}

impl From<&Memory> for crate::types::data::MemoryView {
    fn from(m: &Memory) -> Self {
        crate::types::data::MemoryView {
            key: m.key.clone(),
            version: m.version,
            content: m.content.clone(),
            tags: m.tags.clone(),
            pinned: m.pinned,
            author: m.author.clone(),
            at: m.at.clone(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct MemoryLimits {
    pub max_key_chars: usize,
    pub max_content_bytes: usize,
    pub max_memories: usize,
}

impl Default for MemoryLimits {
    fn default() -> Self {
        MemoryLimits {
            max_key_chars: 200,
            max_content_bytes: 256 * 1024,
            max_memories: 10_000,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MemoryError {
    #[error("no memory `{0}`")]
    NotFound(String),
    #[error(
        "memory `{key}` is at version {current}, not {expected}; read it again and retry with if_version = {current}"
    )]
    Conflict {
        key: String,
        expected: u64,
        current: u64,
    },
    #[error("{0}")]
    Limit(String),
    #[error("memory file {path}: {message}")]
    Io { path: String, message: String },
}

/// Why replay could not use a line of the memory file.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// The line's bytes are not UTF-8.
    InvalidUtf8,
    /// The last line has no newline and is not a whole record (a write cut short).
    TornTail,
    /// The line is not JSON.
    NotJson,
    /// The line is JSON but not a memory record (another program's, or another schema).
    OtherSchema,
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SkipReason::InvalidUtf8 => "invalid UTF-8",
            SkipReason::TornTail => "torn last line",
            SkipReason::NotJson => "not JSON",
            SkipReason::OtherSchema => "not a memory record",
        })
    }
}

/// One skipped line: its 1-based number in the file and why.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct SkippedLine {
    pub line: u64,
    pub reason: SkipReason,
}

/// What the last replay of the memory file could not use.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Skipped {
    /// How many lines were skipped.
    pub count: u64,
    /// The first few of them (at most [`SKIPPED_SHOWN`]).
    pub lines: Vec<SkippedLine>,
}

/// Skipped lines listed by number; the count always covers all of them.
pub const SKIPPED_SHOWN: usize = 10;

impl Skipped {
    fn push(&mut self, line: u64, reason: SkipReason) {
        self.count += 1;
        if self.lines.len() < SKIPPED_SHOWN {
            self.lines.push(SkippedLine { line, reason });
        }
    }

    /// A sentence for a person or a model, naming the file; `None` when nothing was skipped.
    pub fn notice(&self, path: &Path) -> Option<String> {
        if self.count == 0 {
            return None;
        }
        let listed: Vec<String> = self
            .lines
            .iter()
            .map(|l| format!("line {}: {}", l.line, l.reason))
            .collect();
        let more = if self.count as usize > self.lines.len() {
            ", …"
        } else {
            ""
        };
        Some(format!(
            "{} damaged line{} in {} {} skipped ({}{more}); the other memories are intact",
            self.count,
            if self.count == 1 { "" } else { "s" },
            path.display(),
            if self.count == 1 { "was" } else { "were" },
            listed.join(", "),
        ))
    }
}

/// Every version of every key, what could not be read, and the highest version each key has
/// ever been given (damaged lines included, so no version is handed out twice).
struct Replayed {
    all: HashMap<String, Vec<Memory>>,
    highest: HashMap<String, u64>,
    skipped: Skipped,
    /// The file is empty or ends with a newline: an appended line starts a line of its own.
    ends_clean: bool,
}

impl Replayed {
    fn highest(&self, key: &str) -> u64 {
        let valid = self
            .all
            .get(key)
            .map_or(0, |v| v.iter().map(|m| m.version).max().unwrap_or(0));
        valid.max(self.highest.get(key).copied().unwrap_or(0))
    }
}

/// The key and version at the start of a line loom wrote (`{"key":…,"version":N,` — serde keeps
/// field order), read from a line whose whole record cannot be trusted. `None` unless both are
/// complete: a version cut mid-number is not known.
fn salvage_key_version(text: &str) -> Option<(String, u64)> {
    let after_name = |s: &str, name: &str| -> Option<usize> {
        let t = s.trim_start();
        let t = t.strip_prefix(name)?.trim_start().strip_prefix(':')?;
        let t = t.trim_start();
        Some(s.len() - t.len())
    };
    let body = text.trim_start().strip_prefix('{')?;
    let at = after_name(body, "\"key\"")?;
    let rest = body.get(at..)?;
    let mut strings = serde_json::Deserializer::from_str(rest).into_iter::<String>();
    let key = strings.next()?.ok()?;
    let rest = rest
        .get(strings.byte_offset()..)?
        .trim_start()
        .strip_prefix(',')?;
    let at = after_name(rest, "\"version\"")?;
    let rest = rest.get(at..)?;
    let end = rest.find(|c: char| !c.is_ascii_digit())?;
    let version = rest.get(..end)?.parse().ok()?;
    rest.get(end..)?
        .trim_start()
        .starts_with([',', '}'])
        .then_some((key, version))
}

impl Replayed {
    /// Remembers the version a line that cannot be used still shows, so it is not reused.
    fn note_version(&mut self, text: &str) {
        let found = serde_json::from_str::<Memory>(text)
            .ok()
            .map(|m| (m.key, m.version))
            .or_else(|| salvage_key_version(text));
        if let Some((key, version)) = found {
            let h = self.highest.entry(key).or_default();
            *h = (*h).max(version);
        }
    }
}

/// Reads the memory file's bytes: records by key, plus what could not be used and why.
fn replay_bytes(bytes: &[u8]) -> Replayed {
    let mut out = Replayed {
        all: HashMap::new(),
        highest: HashMap::new(),
        skipped: Skipped::default(),
        ends_clean: bytes.is_empty() || bytes.ends_with(b"\n"),
    };
    let mut pieces = bytes.split(|b| *b == b'\n').peekable();
    let mut number = 0u64;
    while let Some(raw) = pieces.next() {
        number += 1;
        // `split` yields an empty piece after a final newline; it is not a line.
        let last = pieces.peek().is_none();
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let torn = last && !out.ends_clean;
        let text = match std::str::from_utf8(raw) {
            Ok(t) => t,
            Err(_) => {
                // Keep the version the damaged record held, if it can still be read.
                let lossy = String::from_utf8_lossy(raw);
                out.note_version(&lossy);
                out.skipped.push(
                    number,
                    if torn {
                        SkipReason::TornTail
                    } else {
                        SkipReason::InvalidUtf8
                    },
                );
                continue;
            }
        };
        match serde_json::from_str::<Memory>(text) {
            Ok(m) => out.all.entry(m.key.clone()).or_default().push(m),
            Err(_) => {
                out.note_version(text);
                let reason = if torn {
                    SkipReason::TornTail
                } else if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() {
                    SkipReason::OtherSchema
                } else {
                    SkipReason::NotJson
                };
                out.skipped.push(number, reason);
            }
        }
    }
    out
}

pub struct Memories {
    path: PathBuf,
    limits: MemoryLimits,
    /// What the most recent replay skipped, for callers to show.
    skipped: Mutex<Skipped>,
}

/// The default memory file for a project: `$XDG_DATA_HOME/loom/projects/<hash of the config
/// folder>/memories.jsonl`, else under `~/.local/share`.
pub fn default_path(config_dir: &Path) -> PathBuf {
    use sha2::{Digest, Sha256};
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(std::env::temp_dir);
    let digest = Sha256::digest(config_dir.display().to_string().as_bytes());
    let id: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    base.join("loom")
        .join("projects")
        .join(id)
        .join("memories.jsonl")
}

struct Locked {
    file: std::fs::File,
}

impl Drop for Locked {
    fn drop(&mut self) {
        // SAFETY: unlocking a descriptor we hold.
        unsafe {
            libc::flock(self.file.as_raw_fd(), libc::LOCK_UN);
        }
    }
}

impl Memories {
    pub fn new(path: PathBuf, limits: MemoryLimits) -> Memories {
        Memories {
            path,
            limits,
            skipped: Mutex::new(Skipped::default()),
        }
    }

    /// What the most recent read of the file skipped (nothing before the first read).
    pub fn skipped(&self) -> Skipped {
        self.skipped
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// [`Skipped::notice`] for the most recent read of this file.
    pub fn skipped_notice(&self) -> Option<String> {
        self.skipped().notice(&self.path)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self, e: impl std::fmt::Display) -> MemoryError {
        MemoryError::Io {
            path: self.path.display().to_string(),
            message: e.to_string(),
        }
    }

    fn lock(&self, exclusive: bool) -> Result<Locked, MemoryError> {
        if let Some(dir) = self.path.parent() {
            private_dir(dir).map_err(|e| self.io(e))?;
        }
        // Created 0600, so there is no moment at which another user can read it.
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .mode(0o600)
            .open(&self.path)
            .map_err(|e| self.io(e))?;
        tighten(&file);
        let op = if exclusive {
            libc::LOCK_EX
        } else {
            libc::LOCK_SH
        };
        // SAFETY: flock on a descriptor we own; retried on EINTR.
        loop {
            if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
                break;
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(self.io(e));
            }
        }
        Ok(Locked { file })
    }

    /// Every version of every key in file order, skipping (and counting) what cannot be used.
    fn replay(&self, locked: &Locked) -> Result<Replayed, MemoryError> {
        let mut bytes = Vec::new();
        (&locked.file)
            .read_to_end(&mut bytes)
            .map_err(|e| self.io(e))?;
        let replayed = replay_bytes(&bytes);
        if replayed.skipped.count > 0 {
            tracing::warn!(
                "{}",
                replayed.skipped.notice(&self.path).unwrap_or_default()
            );
        }
        *self.skipped.lock().unwrap_or_else(|e| e.into_inner()) = replayed.skipped.clone();
        Ok(replayed)
    }

    /// Every version of every key, read under a shared lock; no file yet means no memories
    /// (reading never creates it).
    fn read_all(&self) -> Result<HashMap<String, Vec<Memory>>, MemoryError> {
        if !self.path.exists() {
            *self.skipped.lock().unwrap_or_else(|e| e.into_inner()) = Skipped::default();
            return Ok(HashMap::new());
        }
        let locked = self.lock(false)?;
        Ok(self.replay(&locked)?.all)
    }

    fn current(versions: &[Memory]) -> Option<&Memory> {
        versions.last().filter(|m| !m.deleted)
    }

    /// Appends one record on a line of its own: a torn last line is ended first (in the same
    /// write), or the record would be glued to it and lost on the next replay.
    fn append(&self, locked: &mut Locked, m: &Memory, ends_clean: bool) -> Result<(), MemoryError> {
        let mut line = if ends_clean {
            String::new()
        } else {
            String::from("\n")
        };
        line.push_str(&serde_json::to_string(m).map_err(|e| self.io(e))?);
        line.push('\n');
        locked
            .file
            .write_all(line.as_bytes())
            .map_err(|e| self.io(e))?;
        locked.file.flush().map_err(|e| self.io(e))
    }

    #[allow(clippy::too_many_arguments)]
    pub fn set(
        &self,
        key: &str,
        content: &str,
        tags: Vec<String>,
        pinned: bool,
        if_version: Option<u64>,
        author: &str,
    ) -> Result<Memory, MemoryError> {
        let key = key.trim();
        if key.is_empty() || key.chars().count() > self.limits.max_key_chars {
            return Err(MemoryError::Limit(format!(
                "a key must have 1 to {} characters",
                self.limits.max_key_chars
            )));
        }
        if content.len() > self.limits.max_content_bytes {
            return Err(MemoryError::Limit(format!(
                "content is {} bytes; the limit is {} (memory_max_bytes)",
                content.len(),
                self.limits.max_content_bytes
            )));
        }
        let mut locked = self.lock(true)?;
        let replayed = self.replay(&locked)?;
        let all = &replayed.all;
        let versions = all.get(key).map(Vec::as_slice).unwrap_or_default();
        let last = replayed.highest(key);
        let current = Self::current(versions).map_or(0, |m| m.version);
        if let Some(expected) = if_version
            && expected != current
        {
            return Err(MemoryError::Conflict {
                key: key.to_owned(),
                expected,
                current,
            });
        }
        let live = all.values().filter(|v| Self::current(v).is_some()).count();
        if current == 0 && live >= self.limits.max_memories {
            return Err(MemoryError::Limit(format!(
                "there are already {live} memories (the limit); delete some first"
            )));
        }
        let m = Memory {
            key: key.to_owned(),
            version: last + 1,
            content: content.to_owned(),
            tags,
            pinned,
            author: author.to_owned(),
            at: super::now_iso(),
            deleted: false,
        };
        self.append(&mut locked, &m, replayed.ends_clean)?;
        Ok(m)
    }

    pub fn get(&self, key: &str, version: Option<u64>) -> Result<Memory, MemoryError> {
        let all = self.read_all()?;
        let versions = all
            .get(key)
            .ok_or_else(|| MemoryError::NotFound(key.to_owned()))?;
        match version {
            Some(v) => versions
                .iter()
                .find(|m| m.version == v && !m.deleted)
                .cloned()
                .ok_or_else(|| MemoryError::NotFound(format!("{key} version {v}"))),
            None => Self::current(versions)
                .cloned()
                .ok_or_else(|| MemoryError::NotFound(key.to_owned())),
        }
    }

    pub fn delete(&self, key: &str, author: &str) -> Result<Memory, MemoryError> {
        let mut locked = self.lock(true)?;
        let replayed = self.replay(&locked)?;
        let versions = replayed
            .all
            .get(key)
            .ok_or_else(|| MemoryError::NotFound(key.to_owned()))?;
        let cur = Self::current(versions).ok_or_else(|| MemoryError::NotFound(key.to_owned()))?;
        let tomb = Memory {
            version: replayed.highest(key) + 1,
            deleted: true,
            author: author.to_owned(),
            at: super::now_iso(),
            ..cur.clone()
        };
        self.append(&mut locked, &tomb, replayed.ends_clean)?;
        Ok(tomb)
    }

    pub fn history(&self, key: &str) -> Result<Vec<Memory>, MemoryError> {
        let mut all = self.read_all()?;
        all.remove(key)
            .ok_or_else(|| MemoryError::NotFound(key.to_owned()))
    }

    /// Live memories ranked for `query`: the exact key first, then by how well the terms match
    /// key, tags and content. Every tag in `tags` must be present.
    pub fn search(
        &self,
        query: &str,
        tags: &[String],
        limit: usize,
    ) -> Result<Vec<(Memory, f64)>, MemoryError> {
        let all = self.read_all()?;
        let q = query.trim().to_lowercase();
        let terms: Vec<&str> = q
            .split(|c: char| !c.is_alphanumeric())
            .filter(|t| !t.is_empty())
            .collect();
        let mut hits = Vec::new();
        for versions in all.values() {
            let Some(m) = Self::current(versions) else {
                continue;
            };
            if !tags
                .iter()
                .all(|t| m.tags.iter().any(|mt| mt.eq_ignore_ascii_case(t)))
            {
                continue;
            }
            let key = m.key.to_lowercase();
            let content = m.content.to_lowercase();
            let mut score = if !q.is_empty() && key == q {
                100.0
            } else {
                0.0
            };
            for t in &terms {
                if key.contains(t) {
                    score += 3.0;
                }
                if m.tags.iter().any(|tag| tag.to_lowercase() == *t) {
                    score += 2.0;
                }
                score += (content.matches(t).count().min(5) as f64) * 0.5;
            }
            if score > 0.0 || q.is_empty() {
                hits.push((m.clone(), score));
            }
        }
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.key.cmp(&b.0.key)));
        hits.truncate(limit.max(1));
        Ok(hits)
    }

    /// Every live memory at its current version: pinned first, then by key.
    pub fn list(&self) -> Result<Vec<Memory>, MemoryError> {
        let all = self.read_all()?;
        let mut live: Vec<Memory> = all
            .values()
            .filter_map(|v| Self::current(v))
            .filter(|m| !m.deleted)
            .cloned()
            .collect();
        live.sort_by(|a, b| b.pinned.cmp(&a.pinned).then(a.key.cmp(&b.key)));
        Ok(live)
    }

    pub fn pinned(&self) -> Vec<Memory> {
        let Ok(all) = self.read_all() else {
            return Vec::new();
        };
        let mut out: Vec<Memory> = all
            .values()
            .filter_map(|v| Self::current(v))
            .filter(|m| m.pinned)
            .cloned()
            .collect();
        out.sort_by(|a, b| a.key.cmp(&b.key));
        out
    }
}

/// Creates `dir` and any missing parents as 0700 (by `mkdir`'s own mode, so no moment exists at
/// which another user can list them); folders that already exist are left as they are.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// A file an older loom created with wider modes becomes the user's alone; failure (someone
/// else's file) changes nothing and is not an error.
fn tighten(file: &std::fs::File) {
    if let Ok(meta) = file.metadata()
        && meta.permissions().mode() & 0o077 != 0
    {
        let _ = file.set_permissions(std::fs::Permissions::from_mode(0o600));
    }
}

/// The session primer: pinned memories and the session's datasets, within a token budget,
/// saying what it left out.
pub fn primer(pinned: &[Memory], datasets: &[(String, u64)], budget: usize) -> String {
    let mut s = String::from(
        "Loom primer: notes pinned by the human or earlier sessions, and this session's datasets.\n",
    );
    let mut left_out = 0;
    if !pinned.is_empty() {
        s.push_str("Pinned memories:\n");
        for m in pinned {
            let content: String = m.content.chars().take(400).collect();
            let more = if m.content.chars().count() > 400 {
                "…"
            } else {
                ""
            };
            let line = format!("- {} ({}): {content}{more}\n", m.key, m.author);
            if crate::intercept::tokens::estimate(&s) + crate::intercept::tokens::estimate(&line)
                > budget
            {
                left_out += 1;
                continue;
            }
            s.push_str(&line);
        }
    }
    if !datasets.is_empty() {
        s.push_str("Datasets (query with loom_query):\n");
        for (r, rows) in datasets {
            let line = format!("- {r}: {rows} rows\n");
            if crate::intercept::tokens::estimate(&s) + crate::intercept::tokens::estimate(&line)
                > budget
            {
                left_out += 1;
                continue;
            }
            s.push_str(&line);
        }
    }
    if left_out > 0 {
        s.push_str(&format!("({left_out} more left out for length: loom_memory_search and loom_list_datasets list everything.)\n"));
    }
    if pinned.is_empty() && datasets.is_empty() {
        s.push_str("Nothing pinned yet: loom_memory_set {\"key\": …, \"content\": …, \"pinned\": true} keeps a note for next time.\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem(dir: &Path) -> Memories {
        Memories::new(
            dir.join("m.jsonl"),
            MemoryLimits {
                max_key_chars: 20,
                max_content_bytes: 100,
                max_memories: 3,
            },
        )
    }

    #[test]
    fn versions_and_conflicts() {
        let d = tempfile::tempdir().unwrap();
        let m = mem(d.path());
        let a = m
            .set(
                "db",
                "never touch prod",
                vec!["rules".into()],
                true,
                None,
                "human",
            )
            .unwrap();
        assert_eq!(a.version, 1);
        let b = m
            .set(
                "db",
                "never touch prod schema",
                vec![],
                true,
                Some(1),
                "model",
            )
            .unwrap();
        assert_eq!(b.version, 2);
        let stale = m
            .set("db", "x", vec![], false, Some(1), "model")
            .unwrap_err();
        assert_eq!(
            stale,
            MemoryError::Conflict {
                key: "db".into(),
                expected: 1,
                current: 2
            }
        );
        assert_eq!(m.get("db", Some(1)).unwrap().content, "never touch prod");
        assert_eq!(m.history("db").unwrap().len(), 2);
        m.delete("db", "human").unwrap();
        assert!(matches!(m.get("db", None), Err(MemoryError::NotFound(_))));
        assert_eq!(m.history("db").unwrap().len(), 3);
        // A new memory under a deleted key starts from if_version 0.
        assert_eq!(
            m.set("db", "again", vec![], false, Some(0), "model")
                .unwrap()
                .version,
            4
        );
    }

    fn record(key: &str, version: u64, content: &str) -> String {
        serde_json::to_string(&Memory {
            key: key.into(),
            version,
            content: content.into(),
            tags: vec![],
            pinned: true,
            author: "human".into(),
            at: "2026-11-30T00:00:00Z".into(),
            deleted: false,
        })
        .unwrap()
    }

    fn reasons(m: &Memories) -> Vec<(u64, SkipReason)> {
        m.skipped()
            .lines
            .iter()
            .map(|l| (l.line, l.reason))
            .collect()
    }

    #[test]
    fn a_torn_tail_is_skipped_counted_and_ended_before_the_next_write() {
        let d = tempfile::tempdir().unwrap();
        let m = Memories::new(d.path().join("m.jsonl"), MemoryLimits::default());
        let torn = &record("db", 2, "cut short")[..30];
        std::fs::write(m.path(), format!("{}\n{torn}", record("db", 1, "one"))).unwrap();
        assert_eq!(m.get("db", None).unwrap().content, "one");
        assert_eq!(reasons(&m), vec![(2, SkipReason::TornTail)]);
        assert_eq!(m.pinned().len(), 1, "the primer still sees the pinned note");
        // The torn record already showed version 2: the next one is 3, never 2 again.
        let w = m.set("db", "three", vec![], true, None, "model").unwrap();
        assert_eq!(w.version, 3);
        let again = m.set("db", "four", vec![], true, None, "model").unwrap();
        assert_eq!(again.version, 4);
        let history: Vec<(u64, String)> = m
            .history("db")
            .unwrap()
            .into_iter()
            .map(|h| (h.version, h.content))
            .collect();
        assert_eq!(
            history,
            vec![(1, "one".into()), (3, "three".into()), (4, "four".into())],
            "the write after the torn line is its own line, not glued to it"
        );
        // The torn line now ends with a newline: it is still counted, now as not JSON.
        assert_eq!(reasons(&m), vec![(2, SkipReason::NotJson)]);
        let notice = m.skipped_notice().unwrap();
        assert!(
            notice.contains("1 damaged line") && notice.contains("line 2"),
            "{notice}"
        );
    }

    #[test]
    fn a_torn_tail_cut_inside_the_version_is_still_skipped_not_fatal() {
        let d = tempfile::tempdir().unwrap();
        let m = Memories::new(d.path().join("m.jsonl"), MemoryLimits::default());
        std::fs::write(
            m.path(),
            format!("{}\n{{\"key\":\"db\",\"vers", record("db", 1, "one")),
        )
        .unwrap();
        assert_eq!(
            m.set("db", "two", vec![], false, None, "model")
                .unwrap()
                .version,
            2
        );
        assert_eq!(m.skipped().count, 1);
    }

    #[test]
    fn invalid_bytes_mid_file_skip_one_line_and_keep_its_version() {
        let d = tempfile::tempdir().unwrap();
        let m = Memories::new(d.path().join("m.jsonl"), MemoryLimits::default());
        let mut bytes = Vec::new();
        bytes.extend_from_slice(record("db", 1, "one").as_bytes());
        bytes.push(b'\n');
        let bad = record("db", 2, "two XX");
        let at = bad.find("XX").unwrap();
        let mut bad = bad.into_bytes();
        bad[at] = 0xff;
        bad[at + 1] = 0xfe;
        bytes.extend_from_slice(&bad);
        bytes.push(b'\n');
        bytes.extend_from_slice(record("lunch", 1, "tacos").as_bytes());
        bytes.push(b'\n');
        std::fs::write(m.path(), bytes).unwrap();
        let keys: Vec<String> = m.list().unwrap().into_iter().map(|x| x.key).collect();
        assert_eq!(keys, vec!["db", "lunch"]);
        assert_eq!(reasons(&m), vec![(2, SkipReason::InvalidUtf8)]);
        assert_eq!(m.get("db", None).unwrap().content, "one");
        assert!(m.search("tacos", &[], 10).unwrap().len() == 1);
        // Version 2 was handed out once (the damaged line): the next write gets 3.
        assert_eq!(
            m.set("db", "three", vec![], false, None, "model")
                .unwrap()
                .version,
            3
        );
        assert_eq!(m.delete("db", "human").unwrap().version, 4);
    }

    #[test]
    fn a_line_of_another_schema_is_skipped_and_counted() {
        let d = tempfile::tempdir().unwrap();
        let m = Memories::new(d.path().join("m.jsonl"), MemoryLimits::default());
        std::fs::write(
            m.path(),
            format!(
                "{}\n{{\"kind\":\"note\",\"text\":\"x\"}}\n[1,2]\nnot json at all\n\n{}\n",
                record("a", 1, "x"),
                record("b", 1, "y")
            ),
        )
        .unwrap();
        assert_eq!(m.list().unwrap().len(), 2);
        assert_eq!(
            reasons(&m),
            vec![
                (2, SkipReason::OtherSchema),
                (3, SkipReason::OtherSchema),
                (4, SkipReason::NotJson)
            ]
        );
        assert_eq!(m.skipped().count, 3);
    }

    #[test]
    fn two_writers_during_a_torn_tail_lose_nothing_and_never_share_a_version() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("m.jsonl");
        std::fs::write(
            &path,
            format!(
                "{}\n{{\"key\":\"shared\",\"ver",
                record("shared", 1, "first")
            ),
        )
        .unwrap();
        let n = 40;
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
        let writers: Vec<_> = ["a", "b"]
            .into_iter()
            .map(|who| {
                let path = path.clone();
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    // Each writer opens the file on its own, as two loom processes do.
                    let m = Memories::new(path, MemoryLimits::default());
                    barrier.wait();
                    (0..n)
                        .map(|i| {
                            m.set(
                                "shared",
                                &format!("{who} {i}"),
                                vec![],
                                false,
                                None,
                                "model",
                            )
                            .unwrap()
                            .version
                        })
                        .collect::<Vec<u64>>()
                })
            })
            .collect();
        let mut given: Vec<u64> = writers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect();
        given.sort_unstable();
        assert_eq!(given, (2..=2 * n + 1).collect::<Vec<_>>());
        let m = Memories::new(path, MemoryLimits::default());
        let history = m.history("shared").unwrap();
        let mut versions: Vec<u64> = history.iter().map(|h| h.version).collect();
        versions.sort_unstable();
        assert_eq!(
            versions,
            (1..=2 * n + 1).collect::<Vec<_>>(),
            "every write kept"
        );
        assert_eq!(m.skipped().count, 1, "only the torn line is skipped");
    }

    #[test]
    fn the_file_and_its_folders_are_created_private() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("loom/projects/abc/memories.jsonl");
        let m = Memories::new(path.clone(), MemoryLimits::default());
        m.set("k", "v", vec![], false, None, "model").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        for dir in ["loom", "loom/projects", "loom/projects/abc"] {
            assert_eq!(mode(&d.path().join(dir)), 0o700, "{dir}");
        }
        // A file an older loom left world-readable is narrowed on the next open.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        m.get("k", None).unwrap();
        assert_eq!(mode(&path), 0o600);
    }

    #[test]
    fn salvage_reads_only_a_complete_key_and_version() {
        assert_eq!(
            salvage_key_version(r#"{"key":"a\"b","version":12,"con"#),
            Some(("a\"b".into(), 12))
        );
        assert_eq!(salvage_key_version(r#"{"key":"a","version":12"#), None);
        assert_eq!(salvage_key_version(r#"{"key":"a","vers"#), None);
        assert_eq!(salvage_key_version(r#"{"key":"a"#), None);
        assert_eq!(salvage_key_version(r#"{"version":3,"key":"a"}"#), None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        #[test]
        fn replay_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..4096)) {
            let r = replay_bytes(&bytes);
            let lines = bytes.split(|b| *b == b'\n').count() as u64;
            proptest::prop_assert!(r.skipped.count <= lines);
        }

        /// Whatever the file holds, a write lands on a line of its own, is read back, and
        /// gets a version above any the file shows for its key.
        #[test]
        fn a_write_after_any_damage_is_kept(
            before in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512),
            valid in 0u64..4,
        ) {
            let d = tempfile::tempdir().unwrap();
            let m = Memories::new(d.path().join("m.jsonl"), MemoryLimits::default());
            let mut bytes = Vec::new();
            for v in 1..=valid {
                bytes.extend_from_slice(record("k", v, "old").as_bytes());
                bytes.push(b'\n');
            }
            bytes.extend_from_slice(&before);
            std::fs::write(m.path(), &bytes).unwrap();
            let w = m.set("k", "new", vec![], false, None, "model").unwrap();
            proptest::prop_assert!(w.version > valid);
            let got = m.get("k", None).unwrap();
            proptest::prop_assert_eq!(got.content, "new");
            proptest::prop_assert_eq!(got.version, w.version);
        }
    }

    #[test]
    fn limits_are_explained() {
        let d = tempfile::tempdir().unwrap();
        let m = mem(d.path());
        assert!(matches!(
            m.set(&"k".repeat(21), "c", vec![], false, None, "model"),
            Err(MemoryError::Limit(_))
        ));
        assert!(matches!(
            m.set("k", &"c".repeat(101), vec![], false, None, "model"),
            Err(MemoryError::Limit(_))
        ));
        for k in ["a", "b", "c"] {
            m.set(k, "x", vec![], false, None, "model").unwrap();
        }
        assert!(matches!(
            m.set("d", "x", vec![], false, None, "model"),
            Err(MemoryError::Limit(_))
        ));
        // Updating an existing one is still fine.
        assert!(m.set("a", "y", vec![], false, None, "model").is_ok());
    }

    #[test]
    fn search_ranks_exact_key_then_terms() {
        let d = tempfile::tempdir().unwrap();
        let m = Memories::new(d.path().join("m.jsonl"), MemoryLimits::default());
        m.set(
            "deploy",
            "how we ship",
            vec!["ops".into()],
            false,
            None,
            "human",
        )
        .unwrap();
        m.set(
            "deploy checklist",
            "deploy steps: build, test, deploy",
            vec![],
            false,
            None,
            "human",
        )
        .unwrap();
        m.set(
            "lunch",
            "tacos on friday",
            vec!["team".into()],
            false,
            None,
            "human",
        )
        .unwrap();
        let hits = m.search("deploy", &[], 10).unwrap();
        assert_eq!(hits[0].0.key, "deploy");
        assert_eq!(hits[1].0.key, "deploy checklist");
        assert_eq!(hits.len(), 2);
        let tagged = m.search("", &["team".into()], 10).unwrap();
        assert_eq!(tagged.len(), 1);
        assert_eq!(tagged[0].0.key, "lunch");
    }

    #[test]
    fn primer_stays_within_budget_and_says_what_it_left_out() {
        let pinned: Vec<Memory> = (0..50)
            .map(|i| Memory {
                key: format!("note{i}"),
                version: 1,
                content: "remember this important fact about the system ".repeat(3),
                tags: vec![],
                pinned: true,
                author: "human".into(),
                at: String::new(),
                deleted: false,
            })
            .collect();
        let p = primer(&pinned, &[("orders_1".into(), 100)], 300);
        assert!(crate::intercept::tokens::estimate(&p) <= 360, "{p}");
        assert!(p.contains("more left out"), "{p}");
    }
}
