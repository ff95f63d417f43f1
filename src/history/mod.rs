//! History: each session's calls, server states, decisions, datasets and parked text, kept on
//! disk after the session ends, in a documented layout of plain Parquet files that any Parquet
//! reader opens (DuckDB, Polars, Spark, DuckLake).
//!
//! ```text
//! <history_dir>/                       0700
//!   <session id>/                      0700, e.g. 20261202T050101Z-3f2a
//!     manifest.json                    the session: id, start, end, clean, config, servers,
//!                                      clients, counts, tokens saved, loom version
//!     .lock                            held (flock) by the running loom; free once it ended
//!     calls/part-000001.parquet …      the call log, `loom_calls`'s columns, appended every
//!                                      few seconds; compacted into calls/calls.parquet at exit
//!     events/part-000001.parquet …     server state changes, approvals and their decisions
//!     datasets/<ref>.parquet           one per dataset, with its description (`loom.dataset`:
//!                                      provenance, engine types, context, lineage;
//!                                      `loom.envelope`)
//!                                      in the file's key-value metadata
//!     texts/<n>.parquet                parked text: key, type, summary, created, text, lineage
//! ```
//!
//! Every file is 0600 and written under a temporary name, then renamed: a reader never sees
//! half a file, and a `kill -9` loses at most the calls of the last few seconds. Redaction
//! holds on disk as on the wire: arguments and provenance are stored masked, a server with
//! `history = false` leaves no results or arguments, only its calls.

pub mod archive;
pub mod past;

pub use crate::config::HistoryMode as Mode;
pub use crate::store::parquet_io;

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The manifest's layout version; a reader refuses a newer one.
pub const FORMAT: u32 = 1;
pub const MANIFEST: &str = "manifest.json";
pub const LOCK: &str = ".lock";
pub const CALLS: &str = "calls";
pub const EVENTS: &str = "events";
pub const DATASETS: &str = "datasets";
pub const TEXTS: &str = "texts";
/// The compacted call log inside `calls/`.
pub const CALLS_COMPACT: &str = "calls.parquet";

/// A session folder's name: `YYYYMMDDTHHMMSSZ-xxxx` (UTC start, then 4 to 16 hex digits).
pub fn valid_id(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() >= 21
        && b.len() <= 33
        && b[..8].iter().all(u8::is_ascii_digit)
        && b[8] == b'T'
        && b[9..15].iter().all(u8::is_ascii_digit)
        && b[15] == b'Z'
        && b[16] == b'-'
        && b[17..]
            .iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

/// A new session id, from the time now and a few random bits.
pub fn new_id() -> String {
    let iso = crate::types::time::now_iso(); // 2026-12-02T05:01:31Z
    let compact: String = iso.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    let mut bytes = [0u8; 2];
    let _ = getrandom(&mut bytes);
    format!("{compact}-{:02x}{:02x}", bytes[0], bytes[1])
}

fn getrandom(buf: &mut [u8]) -> std::io::Result<()> {
    use std::io::Read;
    std::fs::File::open("/dev/urandom")?.read_exact(buf)
}

/// The schema a loaded past session's datasets live in: `past_<id>` in the engine's spelling
/// (lowercase, `_` for what is not a letter or digit).
pub fn schema_of(id: &str) -> String {
    format!("past_{}", crate::store::name_chars(id))
}

/// Where `config`'s sessions are archived: `history_dir`, else a folder of its own under
/// loom's data folder, named after the config file (or folder) and a hash of its path.
pub fn dir_of(config: &crate::config::Config) -> PathBuf {
    match &config.history.dir {
        Some(d) => d.clone(),
        None => default_dir(config.source.as_deref(), &config.base_dir),
    }
}

/// The default `history_dir`: `<data>/history/<config file stem>-<hash of its path>`.
fn default_dir(source: Option<&Path>, base: &Path) -> PathBuf {
    use sha2::{Digest, Sha256};
    let data = crate::folders::data_dir().unwrap_or_else(|| std::env::temp_dir().join("loom"));
    let key = source.unwrap_or(base);
    let digest = Sha256::digest(key.display().to_string().as_bytes());
    let hash: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    let stem: String = key
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(32)
        .collect();
    let name = if stem.is_empty() {
        hash
    } else {
        format!("{stem}-{hash}")
    };
    data.join("history").join(name)
}

/// `manifest.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Manifest {
    pub format: u32,
    pub id: String,
    pub loom_version: String,
    /// ISO 8601, UTC.
    pub started: String,
    /// When the session ended (or, after a crash, when it last wrote); `None` while it runs.
    #[serde(default)]
    pub ended: Option<String>,
    /// Whether it ended by itself (`false` after a crash, once the next loom found it).
    #[serde(default)]
    pub clean: bool,
    #[serde(default)]
    pub config_path: Option<String>,
    /// SHA-256 of the config file's text, hex.
    #[serde(default)]
    pub config_sha256: Option<String>,
    /// `off`, `calls` or `all`.
    pub mode: String,
    #[serde(default)]
    pub servers: Vec<String>,
    #[serde(default)]
    pub clients: Vec<String>,
    #[serde(default)]
    pub calls: u64,
    #[serde(default)]
    pub datasets: u64,
    #[serde(default)]
    pub texts: u64,
    #[serde(default)]
    pub events: u64,
    /// Tokens interception kept out of the model's context.
    #[serde(default)]
    pub tokens_saved: u64,
    /// Anything that could not be archived, in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// Creates `dir` (and its parents) 0700, refusing a symlink at `dir` itself.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    if let Ok(m) = std::fs::symlink_metadata(dir) {
        if m.file_type().is_symlink() {
            return Err(std::io::Error::other(format!(
                "{} is a symbolic link; history folders must be real folders",
                dir.display()
            )));
        }
        if m.is_dir() {
            return Ok(());
        }
    }
    crate::folders::create_private_dirs(dir)
}

/// Bytes of the regular files under `dir` (symlinks are neither followed nor counted).
pub fn size_of(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(m) = e.path().symlink_metadata() else {
                continue;
            };
            if m.is_dir() {
                stack.push(e.path());
            } else if m.is_file() {
                total += m.len();
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_ids_are_valid_and_others_are_not() {
        let id = new_id();
        assert!(valid_id(&id), "{id}");
        for bad in [
            "",
            "..",
            "20261202T050101Z",
            "20261202T050101Z-",
            "20261202T050101Z-xyz1",
            "20261202T050101Z-3F2A",
            "../20261202T050101Z-3f2a",
            "20261202T050101Z-3f2a/..",
            "2026120xT050101Z-3f2a",
        ] {
            assert!(!valid_id(bad), "{bad}");
        }
        assert_eq!(
            schema_of("20261202T050101Z-3f2a"),
            "past_20261202t050101z_3f2a"
        );
    }

    proptest::proptest! {
        #[test]
        fn an_id_never_leaves_its_folder(id in "\\PC{0,40}") {
            if valid_id(&id) {
                proptest::prop_assert!(!id.contains('/') && !id.contains('.'));
            }
        }
    }
}
