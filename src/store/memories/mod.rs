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

mod replay;

#[cfg(test)]
use replay::salvage_key_version;
use replay::{Replayed, replay_bytes};
pub use replay::{SKIPPED_SHOWN, SkipReason, Skipped, SkippedLine};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
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
            deleted: m.deleted,
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

pub struct Memories {
    path: PathBuf,
    limits: MemoryLimits,
    /// What the most recent replay skipped, for callers to show.
    skipped: Mutex<Skipped>,
    /// Where each written or deleted version is reported (the session republishes it).
    changes: std::sync::OnceLock<super::ChangeSink>,
}

/// The default memory file for a project: `$XDG_DATA_HOME/loom/projects/<hash of the config
/// folder>/memories.jsonl`, else under `~/.local/share`.
pub fn default_path(config_dir: &Path) -> PathBuf {
    use sha2::{Digest, Sha256};
    let base = crate::folders::data_dir().unwrap_or_else(|| std::env::temp_dir().join("loom"));
    let digest = Sha256::digest(config_dir.display().to_string().as_bytes());
    let id: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    base.join("projects").join(id).join("memories.jsonl")
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
            changes: std::sync::OnceLock::new(),
        }
    }

    /// Hands the memories the sink their changes go to (the first one set stays): every front
    /// end hears of a version written or deleted, whoever wrote it.
    pub fn report_changes(&self, sink: super::ChangeSink) {
        let _ = self.changes.set(sink);
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
            crate::folders::create_private_dirs(dir).map_err(|e| self.io(e))?;
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
        locked.file.flush().map_err(|e| self.io(e))?;
        // Written: every front end hears of it, whoever wrote it.
        if let Some(sink) = self.changes.get() {
            sink(super::CatalogChange::Memory { key: m.key.clone() });
        }
        Ok(())
    }

    /// Writes a new version of `key` with these tags and pin.
    pub fn set(
        &self,
        key: &str,
        content: &str,
        tags: Vec<String>,
        pinned: bool,
        if_version: Option<u64>,
        author: &str,
    ) -> Result<Memory, MemoryError> {
        self.set_keeping(key, content, Some(tags), Some(pinned), if_version, author)
    }

    /// Writes a new version of `key`; tags or a pin left unsaid (`None`) stay as the current
    /// version has them, so a writer who did not mention the pin never takes it away.
    pub fn set_keeping(
        &self,
        key: &str,
        content: &str,
        tags: Option<Vec<String>>,
        pinned: Option<bool>,
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
        if key.chars().any(char::is_control) {
            return Err(MemoryError::Limit(
                "a key cannot hold control characters (a line break, a tab, NUL)".into(),
            ));
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
        let now = Self::current(versions);
        let m = Memory {
            key: key.to_owned(),
            version: last + 1,
            content: content.to_owned(),
            tags: tags.unwrap_or_else(|| now.map(|m| m.tags.clone()).unwrap_or_default()),
            pinned: pinned.unwrap_or_else(|| now.is_some_and(|m| m.pinned)),
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
mod tests;
