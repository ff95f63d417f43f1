//! Reading the memory file back: every line replayed into versions, and each line that cannot
//! be used (torn, not UTF-8, not JSON, another schema) skipped, counted and explained, keeping
//! the highest version any line claimed so none is handed out twice.

use super::*;

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
    pub(super) fn push(&mut self, line: u64, reason: SkipReason) {
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
pub(super) struct Replayed {
    pub(super) all: HashMap<String, Vec<Memory>>,
    pub(super) highest: HashMap<String, u64>,
    pub(super) skipped: Skipped,
    /// The file is empty or ends with a newline: an appended line starts a line of its own.
    pub(super) ends_clean: bool,
}

impl Replayed {
    pub(super) fn highest(&self, key: &str) -> u64 {
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
pub(super) fn salvage_key_version(text: &str) -> Option<(String, u64)> {
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
    pub(super) fn note_version(&mut self, text: &str) {
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
pub(super) fn replay_bytes(bytes: &[u8]) -> Replayed {
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
