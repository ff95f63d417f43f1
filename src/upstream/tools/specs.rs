//! Every tool loom serves itself, as the model reads it: a description written as a prompt
//! (what it is for, when to use it and when not, shortest first), its fields and an example.

use super::{Field, Kind, LoomTool, ToolSpec};

const fn req(name: &'static str, kind: Kind, about: &'static str) -> Field {
    Field {
        name,
        kind,
        required: true,
        about,
    }
}

const fn opt(name: &'static str, kind: Kind, about: &'static str) -> Field {
    Field {
        name,
        kind,
        required: false,
        about,
    }
}

pub const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        tool: LoomTool::Query,
        title: "Query datasets with SQL",
        description: "Answer questions about datasets (large tool results loom keeps as tables) with one read-only DuckDB SQL statement; joins work. Use it instead of calling a tool again for data you have. Table loom_calls is this session's call log.",
        fields: &[req(
            "sql",
            Kind::Str,
            "one read-only statement; a dataset's table is its ref",
        )],
        example: r#"{"sql": "SELECT status, count(*) FROM sample_list_orders_1 GROUP BY 1"}"#,
        read_only: true,
    },
    ToolSpec {
        tool: LoomTool::ListDatasets,
        title: "List datasets",
        description: "List the datasets of this session (ref, rows, columns, source, pinned), newest last. Use it to find a ref to query.",
        fields: &[opt(
            "cursor",
            Kind::Str,
            "the next_cursor of a previous page",
        )],
        example: r#"{}"#,
        read_only: true,
    },
    ToolSpec {
        tool: LoomTool::Describe,
        title: "Describe a dataset",
        description: "Schema, column statistics, sample rows and join hints of a dataset: read it before querying one you have not seen.",
        fields: &[req("ref", Kind::Str, "the dataset's ref")],
        example: r#"{"ref": "sample_list_orders_1"}"#,
        read_only: true,
    },
    ToolSpec {
        tool: LoomTool::Materialize,
        title: "Save a query as a dataset",
        description: "Run a read-only query and keep its result as a new pinned dataset under a name you choose (types kept), for reuse in later queries.",
        fields: &[
            req("sql", Kind::Str, "one read-only SQL statement"),
            req(
                "name",
                Kind::Str,
                "the new dataset's name: lowercase letters, digits and _",
            ),
        ],
        example: r#"{"sql": "SELECT * FROM sample_list_orders_1 WHERE status = 'paid'", "name": "paid_orders"}"#,
        read_only: false,
    },
    ToolSpec {
        tool: LoomTool::Drop,
        title: "Drop a dataset",
        description: "Drop a dataset to free memory (pinned ones too).",
        fields: &[req("ref", Kind::Str, "the dataset's ref")],
        example: r#"{"ref": "q_7"}"#,
        read_only: false,
    },
    ToolSpec {
        tool: LoomTool::Export,
        title: "Export a dataset to a file",
        description: "Write a dataset to a CSV, JSON, JSON Lines or Parquet file under loom's export folder (never overwriting an existing file). Returns the absolute path and the row count.",
        fields: &[
            req("ref", Kind::Str, "the dataset's ref"),
            req("format", Kind::Str, "csv, json, jsonl or parquet"),
            opt(
                "filename",
                Kind::Str,
                "a file name (no folders); default: the ref",
            ),
        ],
        example: r#"{"ref": "sample_list_orders_1", "format": "csv"}"#,
        read_only: false,
    },
    ToolSpec {
        tool: LoomTool::Fetch,
        title: "Read a parked result",
        description: "Read parked text (a pointer's blob_key): a slice from offset, or with pattern the matching lines with context_lines around. Page with next_offset until -1.",
        fields: &[
            req("blob_key", Kind::Str, "from the pointer, like blob/3f2a…"),
            opt("offset", Kind::Int, "characters (or matches) to skip"),
            opt("limit", Kind::Int, "characters, 1–64000 (default 4000)"),
            opt("pattern", Kind::Str, "regular expression"),
            opt("context_lines", Kind::Int, "0–10"),
        ],
        example: r#"{"blob_key": "blob/3f2a9c0d1e2b4a5f", "pattern": "error|timeout", "context_lines": 2}"#,
        read_only: true,
    },
    ToolSpec {
        tool: LoomTool::Park,
        title: "Park text",
        description: "Move text out of your context: loom keeps it and returns a short pointer you can read back with loom_fetch.",
        fields: &[
            req("content", Kind::Str, "the text to park"),
            opt("summary", Kind::Str, "what it is, in a line"),
            opt(
                "content_type",
                Kind::Str,
                "a media type, default text/plain",
            ),
            opt(
                "ttl_seconds",
                Kind::Int,
                "how long to keep it, 60–7776000 (default 7 days)",
            ),
        ],
        example: r#"{"content": "…long notes…", "summary": "notes on the failing build"}"#,
        read_only: false,
    },
    ToolSpec {
        tool: LoomTool::MemorySet,
        title: "Keep a memory",
        description: "Keep a note across sessions, shared with the human: a decision, convention or fact. pinned shows it at every session start; if_version avoids overwriting a newer change.",
        fields: &[
            req("key", Kind::Str, "a short name, like db-rules"),
            req("content", Kind::Str, "the note"),
            opt("tags", Kind::StrList, "labels"),
            opt("pinned", Kind::Bool, "show at every session start"),
            opt(
                "if_version",
                Kind::Int,
                "write only at this version (0: new)",
            ),
        ],
        example: r#"{"key": "db-rules", "content": "never touch the prod schema", "pinned": true}"#,
        read_only: false,
    },
    ToolSpec {
        tool: LoomTool::MemoryGet,
        title: "Read a memory",
        description: "Read a memory by key (the current version, or an older one).",
        fields: &[
            req("key", Kind::Str, "the memory's key"),
            opt("version", Kind::Int, "an older version"),
        ],
        example: r#"{"key": "db-rules"}"#,
        read_only: true,
    },
    ToolSpec {
        tool: LoomTool::MemorySearch,
        title: "Search memories",
        description: "Find notes kept across sessions by you or the human. Search before asking what loom may already know.",
        fields: &[
            req("query", Kind::Str, "words or a key"),
            opt("tags", Kind::StrList, "all of these tags"),
            opt("limit", Kind::Int, "default 10"),
        ],
        example: r#"{"query": "database rules"}"#,
        read_only: true,
    },
    ToolSpec {
        tool: LoomTool::MemoryDelete,
        title: "Delete a memory",
        description: "Delete a memory (its history is kept).",
        fields: &[req("key", Kind::Str, "the memory's key")],
        example: r#"{"key": "db-rules"}"#,
        read_only: false,
    },
    ToolSpec {
        tool: LoomTool::MemoryHistory,
        title: "A memory's history",
        description: "Every version of a memory, oldest first, with who wrote it and when.",
        fields: &[req("key", Kind::Str, "the memory's key")],
        example: r#"{"key": "db-rules"}"#,
        read_only: true,
    },
    ToolSpec {
        tool: LoomTool::FindTools,
        title: "Find tools",
        description: "Find unlisted tools: describe the task; get the best matches with schemas, then `more` by name. Call one by name or with loom_call. An empty query lists servers.",
        fields: &[
            opt("query", Kind::Str, "the task, or tool names"),
            opt("queries", Kind::StrList, "other phrasings"),
            opt("server", Kind::Str, "only this server"),
            opt("limit", Kind::Int, "default 5"),
        ],
        example: r#"{"query": "read a file from the project"}"#,
        read_only: true,
    },
    ToolSpec {
        tool: LoomTool::Call,
        title: "Call a tool",
        description: "Call any tool by name (from loom_find_tools) as if directly, its arguments checked against its schema first. `bind` fills arguments with data loom holds, not through you.",
        fields: &[
            req("tool", Kind::Str, "the tool's name"),
            opt("arguments", Kind::Object, "its arguments"),
            opt(
                "bind",
                Kind::Object,
                "JSON pointer → {blob, offset?, limit?, pattern?} | {sql, as: rows|csv|column|value} | {memory}",
            ),
        ],
        example: r#"{"tool": "x_note", "bind": {"/body": {"blob": "blob/3f2a", "pattern": "ERROR"}}}"#,
        read_only: false,
    },
    ToolSpec {
        tool: LoomTool::CallEach,
        title: "Call a tool once per row",
        description: "Call a tool once for every row of a read-only query; each row's columns are arguments by name (merged over `arguments`), e.g. sql \"SELECT id AS order_id FROM orders_1 WHERE status = 'late'\". The results come back as ONE dataset (a row per call, or per result row when results are tables) with one envelope: counts by outcome, schema, sample, first errors. Query it with loom_query.",
        fields: &[
            req("tool", Kind::Str, "the tool's name"),
            req(
                "sql",
                Kind::Str,
                "a read-only query; one call per row, its columns named as the tool's arguments",
            ),
            opt("arguments", Kind::Object, "arguments shared by every call"),
            opt(
                "bind",
                Kind::Object,
                "as in loom_call: data put into every call's arguments",
            ),
            opt(
                "concurrency",
                Kind::Int,
                "calls in flight at once, default 4",
            ),
            opt(
                "max_calls",
                Kind::Int,
                "refuse a query of more rows than this, default 1000",
            ),
            opt("on_error", Kind::Str, "continue (default) or stop"),
        ],
        example: r#"{"tool": "sample_get_order_details", "sql": "SELECT order_id FROM sample_list_orders_1 WHERE status = 'pending' LIMIT 20"}"#,
        read_only: false,
    },
    ToolSpec {
        tool: LoomTool::Context,
        title: "Context for a task",
        description: "What to know before a task, within a token budget: pinned and matching memories, this session's matching datasets and parked texts, and the tools that fit. Call it at the start of a task.",
        fields: &[
            opt("query", Kind::Str, "the task, in words"),
            opt("token_budget", Kind::Int, "default 2000"),
        ],
        example: r#"{"query": "why did last week's orders fail to ship"}"#,
        read_only: true,
    },
    ToolSpec {
        tool: LoomTool::History,
        title: "Past sessions",
        description: "List past sessions of this config with their datasets, or load one read-only beside today's as schema past_<id> (query past_<id>.orders_1, join it with today's datasets; past_<id>.loom_calls is its call log), or unload it. Use it to compare with or check an earlier run.",
        fields: &[
            opt("action", Kind::Str, "list (default), load or unload"),
            opt("id", Kind::Str, "the session's id, for load and unload"),
            opt("limit", Kind::Int, "sessions listed, default 10"),
        ],
        example: r#"{"action": "load", "id": "20261201T091500Z-3f2a"}"#,
        read_only: true,
    },
];
