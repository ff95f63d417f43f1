//! The Engine API's vocabulary: every request a workbench may make of a session and every reply,
//! the same in process and over the session socket.

use super::data::{Bar, Description, MemoryView, Page, ResultTable};
use super::events::{ApprovalRequest, CallRecord, CallSummary, Decision, LogLine, ServerState};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why the Engine API could not answer a request. Over the session socket it travels in the
/// JSON-RPC error's `data`, so an attached workbench tells the kinds apart as a local one does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "kind", content = "message", rename_all = "snake_case")]
pub enum EngineError {
    /// No dataset or kept result has that name (dropped, evicted, or never made).
    #[error("{0}")]
    Unknown(String),
    /// A result the session kept for a workbench is gone; the message says why, in words for
    /// the person who ran it.
    #[error("{0}")]
    Dropped(String),
    /// The query was cancelled (by the person who ran it, or another).
    #[error("{0}")]
    Cancelled(String),
    /// The session refused or failed the request; the message says why (a query error, an
    /// unknown dataset, a call that failed).
    #[error("{0}")]
    Failed(String),
    /// The session could not be reached, or went away before it answered.
    #[error("{0}")]
    Disconnected(String),
}

impl From<String> for EngineError {
    fn from(message: String) -> Self {
        EngineError::Failed(message)
    }
}

impl From<&str> for EngineError {
    fn from(message: &str) -> Self {
        EngineError::Failed(message.to_owned())
    }
}

/// The workbench protocol version spoken on the session socket; it moves whenever a type
/// below (or an event) changes shape. 2: typed describe payload, drop reasons. 3: typed
/// errors (`EngineError`) in the JSON-RPC error's `data`. 4: a server's state is typed
/// (`ServerState`), not a label. 5: cancel a tool call by its number; read and search parked
/// text; the number of connected clients; a server's uptime, restarts and when its last error
/// happened. 6: a server's log with times and restart separators; restart or re-enable a
/// server; export options (delimiter, header, file name, a range of rows); memories written,
/// deleted and read back version by version by a person; who decided an
/// approval; how long a call waited for one; why a large result passed through whole; where
/// exports go. 7: the
/// tool list says which server serves each tool (exposed names need not say it). 9: a server
/// may be in the state "needs authentication" (an HTTP server refused loom's token). 10: a
/// result that is gone says why (`dropped`); a cancelled query is told apart (`cancelled`).
/// 11: a running call's progress (`call_progress`). 12: a server's failures are counted apart
/// from its restarts (`failures`). 13: a call's batch and bindings (`batch`, `bindings`), an
/// approval of a bound call or a whole batch, and where datasets and parked texts came from
/// (`lineage`). 14: what a `loom_find_tools` named and why each tool ranked there
/// (`tools_found`). 15: a place a find kept for a tool whatever its score (`kept`: the writer,
/// the clock, or a tool's feeder). 16: a tool discounted because it reads a kind of file the
/// request only makes (`unmade`). 17: what a call's arguments were made from besides its
/// bindings (`inputs`: a batch call's statement read these), and a batch approval's too. 18:
/// why an approval is asked when the policy alone would not ask (`reason`: data bound from
/// elsewhere), and a server's call rate (`max_calls_per_second`, `throttled`).
pub const WORKBENCH_PROTOCOL: u32 = 18;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "request", rename_all = "snake_case")]
pub enum Request {
    Session,
    Servers,
    Calls {
        limit: usize,
    },
    CallDetail {
        call: u64,
    },
    Datasets,
    Describe {
        dataset: String,
    },
    Chart {
        table: String,
        column: String,
        bins: u32,
    },
    Query {
        sql: String,
    },
    CancelQuery,
    Rows {
        table: String,
        offset: u64,
        limit: u64,
    },
    Export {
        table: String,
        format: String,
        #[serde(default)]
        options: ExportOptions,
    },
    Blobs,
    Memories,
    Tools,
    /// Pins a tool to every client's listing for this session, or unpins it.
    PinTool {
        name: String,
    },
    CallTool {
        name: String,
        arguments: Value,
    },
    Approve {
        approval: u64,
        decision: Decision,
    },
    Approvals,
    /// Stops a running tool call (the model's or a person's); its caller is answered with an
    /// error result that says a person cancelled it.
    CancelCall {
        call: u64,
    },
    /// The whole text of a parked blob.
    BlobText {
        key: String,
    },
    /// The lines of a parked blob that match `pattern`, by the rules of `loom_fetch`.
    BlobSearch {
        key: String,
        pattern: String,
    },
    /// A server's recent log: stderr lines and state changes, oldest first.
    ServerLog {
        server: String,
    },
    /// Restarts a server now (a running one is stopped first); a delisted one is listed again.
    RestartServer {
        server: String,
    },
    /// Writes a memory as the person. With `if_version`, only if it is still at that
    /// version (someone else's change in between is refused, never overwritten).
    MemorySet {
        key: String,
        content: String,
        tags: Vec<String>,
        pinned: bool,
        if_version: Option<u64>,
    },
    /// Deletes a memory as the person (its history stays).
    MemoryDelete {
        key: String,
    },
    /// Every version of a memory, oldest first, deletions included.
    MemoryHistory {
        key: String,
    },
}

/// How a table is written out. Every field has the default a person would expect.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct ExportOptions {
    /// The CSV field separator.
    pub delimiter: char,
    /// Whether a CSV file starts with the column names.
    pub header: bool,
    /// The file name under `export_dir` (never a path); the table's name when empty.
    pub filename: Option<String>,
    /// Only these rows, in the table's order: `[offset, offset + limit)`.
    pub rows: Option<(u64, u64)>,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            delimiter: ',',
            header: true,
            filename: None,
            rows: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    Session(Box<SessionInfo>),
    Servers {
        servers: Vec<ServerView>,
    },
    Calls {
        calls: Vec<CallSummary>,
    },
    CallDetail {
        record: Option<Box<CallRecord>>,
    },
    Datasets {
        datasets: Vec<DatasetView>,
    },
    Describe {
        describe: Box<Description>,
    },
    Chart {
        bars: Vec<Bar>,
    },
    Query {
        result: ResultTable,
    },
    Rows {
        rows: Page,
    },
    Exported {
        path: String,
        rows: u64,
    },
    Blobs {
        blobs: Vec<BlobView>,
    },
    Memories {
        memories: Vec<MemoryView>,
        /// Lines of the memory file that could not be read (0 from an older loom).
        #[serde(default)]
        skipped_lines: u64,
    },
    Tools {
        tools: Vec<Value>,
        /// Exposed tool name → the configured server that serves it; loom's own tools are
        /// not in it.
        #[serde(default)]
        owners: std::collections::BTreeMap<String, String>,
        /// Exposed tool name → whether and why the listing shows it, and what it costs.
        #[serde(default)]
        placement: std::collections::BTreeMap<String, ToolPlacement>,
        /// The session's listing mode (`full`, `compact`, `search`).
        #[serde(default)]
        mode: String,
    },
    ToolPinned {
        name: String,
        pinned: bool,
    },
    ToolResult {
        result: Value,
    },
    Approvals {
        approvals: Vec<ApprovalRequest>,
    },
    BlobText {
        text: String,
    },
    /// 0-based numbers of the matching lines, in order.
    BlobMatches {
        lines: Vec<u64>,
    },
    ServerLog {
        lines: Vec<LogLine>,
    },
    /// The memory version just written (or the deletion).
    Memory {
        memory: MemoryView,
    },
    MemoryHistory {
        versions: Vec<MemoryView>,
    },
    Done,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct SessionInfo {
    pub pid: u32,
    pub config: String,
    pub started_at: String,
    pub servers: Vec<String>,
    pub protocol: u32,
    /// MCP clients connected now (models' clients, not workbenches).
    #[serde(default)]
    pub clients: u32,
    /// Where exports are written.
    #[serde(default)]
    pub export_dir: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ServerView {
    pub name: String,
    pub state: ServerState,
    pub era: Option<String>,
    pub version: Option<String>,
    pub tools: usize,
    pub last_error: Option<String>,
    pub stderr: Vec<String>,
    /// When the server last came up (ISO 8601), while it is up.
    #[serde(default)]
    pub up_since: Option<String>,
    /// How often it failed since loom started.
    #[serde(default)]
    pub failures: u32,
    /// How often loom restarted it after a failure since it started (the last failure of a
    /// crash loop ends in the delisting, not a restart).
    #[serde(default)]
    pub restarts: u32,
    /// When `last_error` happened (ISO 8601).
    #[serde(default)]
    pub last_error_at: Option<String>,
    /// How many tool calls a second loom sends it at most (`max_calls_per_second`).
    #[serde(default)]
    pub max_calls_per_second: u32,
    /// How many of its calls waited for that rate since loom started.
    #[serde(default)]
    pub throttled: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct DatasetView {
    pub dataset: String,
    pub rows: u64,
    pub columns: Vec<(String, String)>,
    /// `server/tool` for an ingest, else what made it (`query`, `materialized`).
    pub source: String,
    pub pinned: bool,
    pub created: String,
    /// Where it came from (the call, what was bound into it, the query), when loom knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lineage: Option<crate::types::data::Lineage>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct BlobView {
    pub key: String,
    pub summary: String,
    pub chars: usize,
    pub lines: usize,
    pub expires: String,
    /// Where it came from, when loom knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lineage: Option<crate::types::data::Lineage>,
}

/// Where a tool stands in the listing the config gives clients, and its cost.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolPlacement {
    pub listed: bool,
    /// Why it is listed or not: `listed`, `pinned in the config`, `promoted`, `core`…
    pub why: String,
    /// Tokens it costs every turn as listed now (0 when not listed).
    pub tokens: u64,
    /// Tokens it would cost in the `full` listing.
    pub tokens_full: u64,
}
