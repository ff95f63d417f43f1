//! Why one of loom's own tools could not do what it was asked. Each error's text is the
//! `isError` result the model reads, so it names what to change; the variants carry the same
//! facts as data (the field, the allowed range, the store's own error) for callers and tests.

use super::{Kind, LoomTool, ToolSpec};
use crate::store::StoreError;
use crate::store::blobs::BadPattern;
use crate::store::memories::MemoryError;
use serde_json::Value;

/// One thing wrong with the arguments of a call.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ArgumentProblem {
    #[error("`{name}` is required ({about})")]
    Missing {
        name: &'static str,
        about: &'static str,
    },
    #[error("`{name}` must be {}, got {got}", want(*.kind))]
    WrongType {
        name: &'static str,
        kind: Kind,
        got: Value,
    },
    #[error("unknown argument `{name}`{}", near.map(|n| format!("; did you mean `{n}`?")).unwrap_or_default())]
    Unknown {
        name: String,
        near: Option<&'static str>,
    },
    #[error("`{name}` must be between {min} and {max}")]
    OutOfRange {
        name: &'static str,
        min: i64,
        max: i64,
    },
    #[error("`{name}` must be {min} or more")]
    TooSmall { name: &'static str, min: i64 },
}

/// What a value of `kind` must be, as the model reads it.
fn want(kind: Kind) -> &'static str {
    match kind {
        Kind::Int => "an integer",
        Kind::Bool => "true or false",
        Kind::StrList => "an array of strings",
        Kind::Object => "an object",
        Kind::Str => "a non-empty string",
    }
}

/// A call whose arguments do not fit the tool: every problem at once, the required and
/// optional arguments, and one corrected example call.
#[derive(Debug, Clone, PartialEq)]
pub struct WrongArguments {
    pub spec: &'static ToolSpec,
    pub problems: Vec<ArgumentProblem>,
}

impl std::fmt::Display for WrongArguments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = |required: bool| {
            let n: Vec<&str> = self
                .spec
                .fields
                .iter()
                .filter(|f| f.required == required)
                .map(|f| f.name)
                .collect();
            if n.is_empty() {
                "none".to_owned()
            } else {
                n.join(", ")
            }
        };
        let problems: Vec<String> = self.problems.iter().map(ToString::to_string).collect();
        write!(
            f,
            "{} was called with wrong arguments:\n- {}\nrequired: {}; optional: {}\nexample: {} {}",
            self.spec.name(),
            problems.join("\n- "),
            names(true),
            names(false),
            self.spec.name(),
            self.spec.example
        )
    }
}

impl std::error::Error for WrongArguments {}

/// Why a call of one of loom's tools failed.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error(transparent)]
    WrongArguments(#[from] WrongArguments),
    /// A value the schema allows but the tool does not (a range, a cursor, a format).
    #[error("{tool} was called with wrong arguments:\n- {}", join(.problems))]
    BadValues {
        tool: &'static str,
        problems: Vec<ArgumentProblem>,
    },
    #[error("invalid cursor `{0}`: pass the next_cursor of a previous page")]
    BadCursor(String),
    #[error("unknown format `{0}`; use csv, json, jsonl or parquet")]
    UnknownFormat(String),
    /// `loom_history`: no such session, one that cannot be read, or one that does not fit.
    #[error("loom_history: {0}")]
    History(String),
    #[error("loom_fetch: {0}")]
    BadPattern(#[from] BadPattern),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// Lines of the memory file could not be read: said with every answer, errors too.
    #[error("{error}\nNote: {notice}.")]
    WithNotice {
        error: Box<ToolError>,
        notice: String,
    },
    /// A tool handed to the runner of another kind (a bug in the caller, said plainly).
    #[error("{} works on {works_on}, not {asked}", tool.name())]
    WrongRunner {
        tool: LoomTool,
        works_on: &'static str,
        asked: &'static str,
    },
}

fn join(problems: &[ArgumentProblem]) -> String {
    let p: Vec<String> = problems.iter().map(ToString::to_string).collect();
    p.join("\n- ")
}
