//! What happens in a session, as every front end sees it: the events on the bus, the calls in
//! the log and the approvals a person is asked for.

use super::data::DropReason;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    ServerState {
        server: String,
        state: ServerState,
        detail: Option<String>,
    },
    /// A tool joined or left the listing (promoted after a call, pinned by a person).
    ListingChanged {
        tool: String,
        why: String,
    },
    /// `loom_find_tools` answered: the phrasings it ranked by (joined by ` | `), and each tool
    /// it named, best first, with why it ranked there.
    ToolsFound {
        query: String,
        tools: Vec<FoundTool>,
    },
    ServerStderr {
        server: String,
        line: String,
        /// When loom read the line (ISO 8601, UTC).
        #[serde(default)]
        at: String,
    },
    CallStarted(CallSummary),
    /// A running call's server said how far it is (`notifications/progress`). Not kept in the
    /// backlog: only the newest matters, and only while the call runs.
    CallProgress {
        call: u64,
        progress: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    CallFinished(CallSummary),
    DatasetCreated {
        dataset: String,
        rows: u64,
        server: String,
        tool: String,
    },
    /// A dataset left the catalog: dropped on request or evicted for memory.
    DatasetDropped {
        dataset: String,
        reason: DropReason,
    },
    BlobParked {
        key: String,
        bytes: u64,
    },
    MemoryChanged {
        key: String,
    },
    ApprovalRequested(ApprovalRequest),
    ApprovalSettled {
        approval: u64,
        decision: Settlement,
        /// The terminal that decided, in words (`this workbench`, `the workbench attached
        /// from /dev/pts/3, pid 4242`), when a person did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
    ExportProgress {
        table: String,
        rows: u64,
        total: u64,
    },
}

/// An event with its position in the session's sequence.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Sequenced {
    pub seq: u64,
    pub event: Event,
}

/// One call as the Traffic pane lists it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct CallSummary {
    pub call: u64,
    /// When the call started (ISO 8601, UTC).
    pub at: String,
    pub caller: Caller,
    pub server: String,
    /// The exposed tool name the caller used.
    pub tool: String,
    pub outcome: Outcome,
    /// The dataset ref or parked blob key the call produced.
    pub reference: Option<String>,
    pub millis: u64,
    /// Size and estimated tokens of what the server answered …
    pub bytes_in: u64,
    pub tokens_in: u64,
    /// … and of what the caller received.
    pub bytes_out: u64,
    pub tokens_out: u64,
    /// The arguments, compact and redacted, cut to a line.
    pub arguments: String,
    /// Who let the call through or stopped it, when it needed approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// How long the call waited for a person's decision: part of `millis`, shown apart so the
    /// server's own latency is not mistaken for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_millis: Option<u64>,
    /// Why a result large enough to be intercepted reached the caller whole (`non-text
    /// content`, `below threshold`, `no table found`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed_because: Option<String>,
    /// Which MCP client made the call and how it reaches loom (`claude-code 1.2 · HTTP from
    /// 127.0.0.1:53122`), when loom knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The loom tool the call was made through (`loom_call`), when not called directly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// The `loom_call_each` call this call is one of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<u64>,
    /// Data loom put into the arguments before forwarding (`loom_call`'s `bind`): where, from
    /// what, how large. Never the bound values themselves.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bindings: Vec<Binding>,
    /// What the arguments were made from besides the bindings: a `loom_call_each` call's are
    /// a row of its statement, which read these (dataset refs, blob keys).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
}

/// One place of a call's arguments that loom filled from data it holds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Binding {
    /// The JSON pointer into the arguments (`/notes`, `/items/0/body`).
    pub at: String,
    /// Where the value came from, in words (`blob/3f… lines matching "ERROR"`, `sql (rows):
    /// SELECT …`, `memory runbook`).
    pub source: String,
    /// What the value was read from: dataset refs, blob keys, `memory:<key>`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
    /// Size of the bound value as JSON, in bytes.
    pub bytes: u64,
}

/// A batch waiting for approval as a whole (`loom_call_each`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct BatchAsk {
    /// How many calls the batch would make.
    pub calls: u64,
    /// The statement whose rows drive it.
    pub sql: String,
    /// Every call's arguments, in order (the prompt shows the first, and all on request).
    pub arguments: Vec<Value>,
    /// What the statement and the bindings read (dataset refs, blob keys, `memory:<key>`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
}

/// One call with its full request and response text.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CallRecord {
    pub summary: CallSummary,
    pub request: String,
    pub response: String,
}

/// A call waiting for a person.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ApprovalRequest {
    pub approval: u64,
    pub call: u64,
    pub server: String,
    /// The exposed name and the server's own name for it.
    pub tool: String,
    pub original: String,
    pub annotations: Value,
    pub arguments: Value,
    pub timeout_secs: u64,
    /// What loom bound into `arguments` (each binding's value is there in full to read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bindings: Vec<Binding>,
    /// When the request is for a whole `loom_call_each` batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchAsk>,
    /// Why a person is asked when the policy alone would not ask (data bound from elsewhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What a person decided.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    Once,
    Session,
    Deny { reason: Option<String> },
}

/// Who made a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Caller {
    /// An MCP client (the model).
    #[default]
    Model,
    /// A person, from the workbench.
    Human,
}

/// How a call ended (or that it has not yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    #[default]
    Running,
    /// The server's result reached the caller as it was.
    Passed,
    /// The result became a dataset and the caller got its envelope.
    Intercepted,
    /// The result was parked and the caller got a pointer.
    Parked,
    Error,
    Denied,
    Cancelled,
}

/// Text forms of the small enums above, as they travel and as a person filters by them.
macro_rules! words {
    // `serde`: the words are also how the type travels.
    (serde $t:ty { $($v:ident = $w:literal),* $(,)? }) => {
        words!($t { $($v = $w),* });
        impl Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
    ($t:ty { $($v:ident = $w:literal),* $(,)? }) => {
        impl $t {
            pub fn as_str(self) -> &'static str {
                match self { $(<$t>::$v => $w),* }
            }
        }
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl std::str::FromStr for $t {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($w => Ok(<$t>::$v),)*
                    other => Err(format!("unknown {}: {other}", stringify!($t))),
                }
            }
        }
        impl PartialEq<str> for $t {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }
        impl PartialEq<&str> for $t {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }
    };
}

words!(Caller { Model = "model", Human = "human" });
words!(Outcome {
    Running = "running",
    Passed = "passed",
    Intercepted = "intercepted",
    Parked = "parked",
    Error = "error",
    Denied = "denied",
    Cancelled = "cancelled",
});

/// How a waiting call was settled, as everyone watching its prompt learns it; it travels as
/// its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settlement {
    ApprovedOnce,
    ApprovedForSession,
    Denied,
    /// The decision's channel was dropped (the session is going away).
    Dropped,
    TimedOut,
    /// Every person detached while it waited.
    NobodyAttached,
    /// The call went away (cancelled, or its client left) before anyone decided.
    Withdrawn,
}

words!(serde Settlement {
    ApprovedOnce = "approved once",
    ApprovedForSession = "approved for the session",
    Denied = "denied",
    Dropped = "dropped",
    TimedOut = "timed out",
    NobodyAttached = "denied: nobody attached",
    Withdrawn = "withdrawn",
});

/// One line of a server's log as a person reads it: what it wrote on stderr, and where its
/// life changed (started, failed, restarted), so restarts stand apart in the text.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LogLine {
    /// When it happened (ISO 8601, UTC).
    pub at: String,
    pub kind: LogKind,
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogKind {
    /// A line the server wrote on stderr.
    Stderr,
    /// The server's state changed; the text says to what, and why.
    State,
}

/// Where a server is in its life, as the supervisor sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    #[default]
    Starting,
    Up,
    /// Restarting after a failure: this is restart `attempt` of at most `max`.
    Restarting {
        attempt: u32,
        max: u32,
    },
    /// Given up on after repeated failures; its tools are no longer listed.
    Delisted,
    Stopped,
    /// The server refused loom's credentials (HTTP 401): a person must fix them and restart
    /// it. Not a failure: nothing is counted and nothing is retried until then.
    NeedsAuth,
}

impl ServerState {
    /// A word or two for a person: `up`, `restarting 2/5`.
    pub fn label(&self) -> String {
        match self {
            ServerState::Starting => "starting".into(),
            ServerState::Up => "up".into(),
            ServerState::Restarting { attempt, max } => format!("restarting {attempt}/{max}"),
            ServerState::Delisted => "delisted".into(),
            ServerState::Stopped => "stopped".into(),
            ServerState::NeedsAuth => "needs authentication".into(),
        }
    }
}

impl std::fmt::Display for ServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

impl PartialEq<&str> for ServerState {
    fn eq(&self, other: &&str) -> bool {
        self.label() == *other
    }
}

/// One tool a find named, and the parts of its score.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FoundTool {
    pub name: String,
    /// 1 for the best, through the tools given with schemas and then the tail by name.
    pub rank: u32,
    /// Given with its schema (else only by name and a line, in `more`).
    pub schema: bool,
    /// The query named it exactly, which puts it first whatever its score.
    pub named_exactly: bool,
    #[serde(flatten)]
    pub why: RankParts,
}

/// The parts of one tool's score in one search, for a person reading why it ranked where it
/// did: `score = (words + meaning) × used + server + named`, times the discount for a tool
/// that reads a kind of file the request has yet to make (`unmade`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RankParts {
    pub score: f32,
    /// Its words' score over the best tool's (0–1), and the query's words it holds (itself or
    /// a relative: a synonym, a longer or shorter form).
    pub words: f32,
    pub matched: Vec<String>,
    /// Its closeness in meaning to the query (0 to the meaning weight).
    pub meaning: f32,
    /// What its server's best score added, and what a server the query names added.
    pub server: f32,
    pub named: f32,
    /// This session's use of it, a factor (1 when unused).
    pub used: f32,
    /// It reads a kind of file the request only makes (a Word file it saves, none it reads
    /// from), which cannot be read yet: its score was discounted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unmade: bool,
    /// The place the ranking kept for it whatever its score, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<KeptPlace>,
}

/// Why a find kept a tool a place among its first whatever its own score.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "as", rename_all = "snake_case")]
pub enum KeptPlace {
    /// The best writer, for a request that names where its result goes.
    Writer,
    /// The best clock, for a request that names a day relative to today.
    Clock,
    /// A tool that gives what `of` requires, right after it.
    Feeder { of: String },
}
