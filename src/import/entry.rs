//! One entry of a client's server list as a `[[servers]]` block: the block being written
//! (its lines, why it must stay commented out, its notes), and the choice of kind (stdio,
//! streamable HTTP, the old HTTP+SSE) with the keys of the entry loom did not carry over.

use super::http::{http, url_line};
use super::stdio::stdio;
use super::toml_text::quoted;
use serde_json::Value;

/// Keys of a source entry that loom reads; others are named in a note.
const KNOWN_KEYS: &[&str] = &[
    "type",
    "transportType",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "serverUrl",
    "headers",
    "disabled",
    "enabled",
];

/// One entry, converted: its lines, why it cannot be served as written, and notes.
pub(super) struct Block {
    pub(super) lines: Vec<String>,
    pub(super) skip: Option<String>,
    pub(super) notes: Vec<String>,
}

impl Block {
    /// Keeps the block commented out for `why` (the first reason stays).
    pub(super) fn refuse(&mut self, why: impl Into<String>) {
        if self.skip.is_none() {
            self.skip = Some(why.into());
        }
    }

    pub(super) fn note(&mut self, note: String) {
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }
}

pub(super) fn convert(source_name: &str, name: &str, entry: &Value) -> Block {
    let mut b = Block {
        lines: vec!["[[servers]]".into(), format!("name = {}", quoted(name))],
        skip: None,
        notes: Vec::new(),
    };
    let Some(e) = entry.as_object() else {
        b.refuse("the entry is not an object");
        return b;
    };
    let ignored: Vec<&str> = e
        .keys()
        .map(String::as_str)
        .filter(|k| !KNOWN_KEYS.contains(k))
        .collect();
    if !ignored.is_empty() {
        b.note(format!(
            "not carried over (loom has no such key): {}",
            ignored.join(", ")
        ));
    }
    if e.get("disabled").and_then(Value::as_bool) == Some(true)
        || e.get("enabled").and_then(Value::as_bool) == Some(false)
    {
        b.refuse("disabled in the source");
    }
    let kind = e
        .get("type")
        .or_else(|| e.get("transportType"))
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase);
    let url = e
        .get("url")
        .or_else(|| e.get("serverUrl"))
        .and_then(Value::as_str);
    let used: &[&str] = match (kind.as_deref(), e.get("command"), url) {
        (Some("sse"), _, _) => {
            if let Some(u) = url {
                url_line(&mut b, u);
            }
            b.refuse("the old HTTP+SSE transport (2024-11-05); loom speaks streamable HTTP: if the server also serves it, point url at that endpoint (often /mcp) and uncomment");
            &["url", "serverUrl"]
        }
        (_, Some(command), _) => {
            stdio(&mut b, source_name, command, e);
            &["command", "args", "env", "cwd"]
        }
        (_, None, Some(u)) => {
            http(&mut b, name, u, e);
            &["url", "serverUrl", "headers"]
        }
        _ => {
            b.refuse("neither a `command` nor a `url`");
            &[]
        }
    };
    let unused: Vec<&str> = KNOWN_KEYS
        .iter()
        .filter(|k| !matches!(**k, "type" | "transportType" | "disabled" | "enabled"))
        .filter(|k| e.contains_key(**k) && !used.contains(k))
        .copied()
        .collect();
    if !unused.is_empty() {
        b.note(format!(
            "not carried over (not used by this kind of server): {}",
            unused.join(", ")
        ));
    }
    b
}
