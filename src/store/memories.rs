//! Memories: keyed notes that a model and a human share across sessions, every version kept.
//! They live in an append-only JSON Lines file per project; every change is one appended line
//! written under an exclusive `flock`, and every read replays the file under a shared lock, so
//! two loom processes on one project can read and write at once without losing anything.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

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
        Memories { path, limits }
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
            std::fs::create_dir_all(dir).map_err(|e| self.io(e))?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(&self.path)
            .map_err(|e| self.io(e))?;
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

    /// Every version of every key, in file order.
    fn replay(&self, locked: &Locked) -> Result<HashMap<String, Vec<Memory>>, MemoryError> {
        let mut all: HashMap<String, Vec<Memory>> = HashMap::new();
        let reader = std::io::BufReader::new(&locked.file);
        for line in reader.lines() {
            let line = line.map_err(|e| self.io(e))?;
            if line.trim().is_empty() {
                continue;
            }
            // A torn last line (a crash mid-write) is skipped, never fatal.
            if let Ok(m) = serde_json::from_str::<Memory>(&line) {
                all.entry(m.key.clone()).or_default().push(m);
            }
        }
        Ok(all)
    }

    /// Every version of every key, read under a shared lock; no file yet means no memories
    /// (reading never creates it).
    fn read_all(&self) -> Result<HashMap<String, Vec<Memory>>, MemoryError> {
        if !self.path.exists() {
            return Ok(HashMap::new());
        }
        let locked = self.lock(false)?;
        self.replay(&locked)
    }

    fn current(versions: &[Memory]) -> Option<&Memory> {
        versions.last().filter(|m| !m.deleted)
    }

    fn append(&self, locked: &mut Locked, m: &Memory) -> Result<(), MemoryError> {
        let mut line = serde_json::to_string(m).map_err(|e| self.io(e))?;
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
        let all = self.replay(&locked)?;
        let versions = all.get(key).map(Vec::as_slice).unwrap_or_default();
        let last = versions.last().map_or(0, |m| m.version);
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
        self.append(&mut locked, &m)?;
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
        let all = self.replay(&locked)?;
        let versions = all
            .get(key)
            .ok_or_else(|| MemoryError::NotFound(key.to_owned()))?;
        let cur = Self::current(versions).ok_or_else(|| MemoryError::NotFound(key.to_owned()))?;
        let tomb = Memory {
            version: versions.last().map_or(0, |m| m.version) + 1,
            deleted: true,
            author: author.to_owned(),
            at: super::now_iso(),
            ..cur.clone()
        };
        self.append(&mut locked, &tomb)?;
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
