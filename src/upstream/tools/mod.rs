//! loom's own tools, listed after the downstream ones: query, list, describe, materialize,
//! drop and export datasets. Arguments are checked against each tool's fields; a wrong call
//! gets every field error, a did-you-mean for unknown keys, the required and optional
//! arguments, and one corrected example call. What a tool adds to or drops from the catalog
//! (a query result kept as a dataset, a materialized one, parked text, a drop, an eviction) the
//! store reports itself, wherever it happens.

use crate::store::memories::{Memories, Memory};
use crate::store::{ExportFormat, QueryOutcome, Store, blobs, envelope};
use serde_json::{Map, Value, json};

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Str,
    Int,
    Bool,
    StrList,
}

pub struct Field {
    pub name: &'static str,
    pub kind: Kind,
    pub required: bool,
    pub about: &'static str,
}

/// loom's own tools. Every tool has one spec in [`TOOLS`] and one arm where it runs; a tool
/// added here without either does not compile (or fails `every_tool_has_one_spec`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoomTool {
    Query,
    ListDatasets,
    Describe,
    Materialize,
    Drop,
    Export,
    Fetch,
    Park,
    MemorySet,
    MemoryGet,
    MemorySearch,
    MemoryDelete,
    MemoryHistory,
}

impl LoomTool {
    pub const ALL: [LoomTool; 13] = [
        LoomTool::Query,
        LoomTool::ListDatasets,
        LoomTool::Describe,
        LoomTool::Materialize,
        LoomTool::Drop,
        LoomTool::Export,
        LoomTool::Fetch,
        LoomTool::Park,
        LoomTool::MemorySet,
        LoomTool::MemoryGet,
        LoomTool::MemorySearch,
        LoomTool::MemoryDelete,
        LoomTool::MemoryHistory,
    ];

    /// The name the client calls it by.
    pub const fn name(self) -> &'static str {
        match self {
            LoomTool::Query => "loom_query",
            LoomTool::ListDatasets => "loom_list_datasets",
            LoomTool::Describe => "loom_describe",
            LoomTool::Materialize => "loom_materialize",
            LoomTool::Drop => "loom_drop",
            LoomTool::Export => "loom_export",
            LoomTool::Fetch => "loom_fetch",
            LoomTool::Park => "loom_park",
            LoomTool::MemorySet => "loom_memory_set",
            LoomTool::MemoryGet => "loom_memory_get",
            LoomTool::MemorySearch => "loom_memory_search",
            LoomTool::MemoryDelete => "loom_memory_delete",
            LoomTool::MemoryHistory => "loom_memory_history",
        }
    }

    /// Whether it works on the memory file rather than the dataset store.
    pub const fn is_memory(self) -> bool {
        matches!(
            self,
            LoomTool::MemorySet
                | LoomTool::MemoryGet
                | LoomTool::MemorySearch
                | LoomTool::MemoryDelete
                | LoomTool::MemoryHistory
        )
    }
}

pub struct ToolSpec {
    pub tool: LoomTool,
    pub title: &'static str,
    pub description: &'static str,
    pub fields: &'static [Field],
    pub example: &'static str,
    pub read_only: bool,
}

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
        description: "Run one read-only DuckDB SQL statement (SELECT, WITH, FROM-first, VALUES, DESCRIBE, SUMMARIZE, PIVOT … IN (…), plain EXPLAIN) over the datasets loom made from large tool results; joins across servers work. Use it instead of re-calling a tool to look at its data again. Small results come back inline with exact values; large ones become a new dataset with an envelope.",
        fields: &[req(
            "sql",
            Kind::Str,
            "one read-only SQL statement; datasets are tables named by their ref",
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
        description: "Full schema and column statistics of a dataset, 10 sample rows, fresh join hints against the other datasets, provenance and context.",
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
        description: "Write a dataset to a CSV, JSON or JSON Lines file under loom's export folder (never overwriting an existing file). Returns the absolute path and the row count.",
        fields: &[
            req("ref", Kind::Str, "the dataset's ref"),
            req("format", Kind::Str, "csv, json or jsonl"),
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
        description: "Read a large text result that loom parked (a log, a page, a diff): a slice of characters from `offset` (default 4000, at most 64000), or with `pattern` the matching lines (case-insensitive regular expression, RE2 syntax) as `lineno: text`, with `context_lines` (0–10) around each as `lineno- text`; `offset` then skips matches. Page on with `next_offset` until it is -1.",
        fields: &[
            req(
                "blob_key",
                Kind::Str,
                "the key from the parked pointer, like blob/3f2a…",
            ),
            opt(
                "offset",
                Kind::Int,
                "characters to skip (or matches, with pattern)",
            ),
            opt(
                "limit",
                Kind::Int,
                "characters to return, 1–64000 (default 4000)",
            ),
            opt("pattern", Kind::Str, "case-insensitive regular expression"),
            opt(
                "context_lines",
                Kind::Int,
                "lines of context around each match, 0–10",
            ),
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
        description: "Save a keyed note that persists across sessions and that the human sees too (decisions, conventions, facts learned). Every version is kept. Pinned memories are shown at the start of every session. Pass if_version (the version you read) to avoid overwriting someone else's change.",
        fields: &[
            req("key", Kind::Str, "a short name, like `db-rules`"),
            req("content", Kind::Str, "the note"),
            opt("tags", Kind::StrList, "labels for search"),
            opt(
                "pinned",
                Kind::Bool,
                "show it at the start of every session",
            ),
            opt(
                "if_version",
                Kind::Int,
                "only write if the memory is still at this version (0: only if it does not exist)",
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
        description: "Find memories: an exact key first, then by how well the words match keys, tags and content.",
        fields: &[
            req("query", Kind::Str, "words to look for"),
            opt("tags", Kind::StrList, "only memories with all these tags"),
            opt("limit", Kind::Int, "at most this many results (default 10)"),
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
];

impl ToolSpec {
    pub const fn name(&self) -> &'static str {
        self.tool.name()
    }
}

pub fn spec(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name() == name)
}

/// Tool definitions for `tools/list`.
pub fn definitions() -> Vec<Value> {
    TOOLS
        .iter()
        .map(|t| {
            let mut props = Map::new();
            for f in t.fields {
                let schema = match f.kind {
                    Kind::Str => json!({ "type": "string", "description": f.about }),
                    Kind::Int => json!({ "type": "integer", "description": f.about }),
                    Kind::Bool => json!({ "type": "boolean", "description": f.about }),
                    Kind::StrList => json!({ "type": "array", "items": { "type": "string" }, "description": f.about }),
                };
                props.insert(f.name.into(), schema);
            }
            let required: Vec<&str> = t.fields.iter().filter(|f| f.required).map(|f| f.name).collect();
            json!({
                "name": t.name(),
                "title": t.title,
                "description": t.description,
                "inputSchema": { "type": "object", "properties": props, "required": required, "additionalProperties": false },
                "annotations": { "readOnlyHint": t.read_only, "destructiveHint": false, "openWorldHint": false },
            })
        })
        .collect()
}

/// Checks arguments; `Err` holds the whole message for an `isError` result.
pub fn validate(spec: &ToolSpec, args: &Map<String, Value>) -> Result<(), String> {
    let mut problems = Vec::new();
    for f in spec.fields {
        match args.get(f.name) {
            None | Some(Value::Null) if f.required => {
                problems.push(format!("`{}` is required ({})", f.name, f.about))
            }
            None | Some(Value::Null) => {}
            Some(v) => {
                let ok = match f.kind {
                    Kind::Str => v
                        .as_str()
                        .is_some_and(|s| !s.trim().is_empty() || !f.required),
                    Kind::Int => v.as_i64().is_some(),
                    Kind::Bool => v.is_boolean(),
                    Kind::StrList => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
                };
                if !ok {
                    let want = match f.kind {
                        Kind::Int => "an integer",
                        Kind::Bool => "true or false",
                        Kind::StrList => "an array of strings",
                        Kind::Str => "a non-empty string",
                    };
                    problems.push(format!("`{}` must be {want}, got {v}", f.name));
                }
            }
        }
    }
    for k in args.keys() {
        if spec.fields.iter().any(|f| f.name == k) {
            continue;
        }
        let near = spec
            .fields
            .iter()
            .map(|f| (strsim::levenshtein(k, f.name), f.name))
            .min();
        match near {
            Some((d, name)) if d <= 3 => {
                problems.push(format!("unknown argument `{k}`; did you mean `{name}`?"))
            }
            _ => problems.push(format!("unknown argument `{k}`")),
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    let required: Vec<&str> = spec
        .fields
        .iter()
        .filter(|f| f.required)
        .map(|f| f.name)
        .collect();
    let optional: Vec<&str> = spec
        .fields
        .iter()
        .filter(|f| !f.required)
        .map(|f| f.name)
        .collect();
    Err(format!(
        "{} was called with wrong arguments:\n- {}\nrequired: {}; optional: {}\nexample: {} {}",
        spec.name(),
        problems.join("\n- "),
        if required.is_empty() {
            "none".into()
        } else {
            required.join(", ")
        },
        if optional.is_empty() {
            "none".into()
        } else {
            optional.join(", ")
        },
        spec.name(),
        spec.example
    ))
}

const PAGE: usize = 50;

fn text_and_structured(text: String, structured: Value) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "structuredContent": structured })
}

fn arg<'a>(args: &'a Map<String, Value>, k: &str) -> &'a str {
    args.get(k).and_then(Value::as_str).unwrap_or_default()
}

/// Runs one of loom's tools (arguments already validated); `Err` is an `isError` message.
/// What it adds to the catalog the store reports as soon as it exists, so a failure after
/// that (say, profiling) never leaves a dataset the workbench does not know of.
pub fn run(store: &Store, tool: LoomTool, args: &Map<String, Value>) -> Result<Value, String> {
    let e = |e: crate::store::StoreError| e.to_string();
    match tool {
        LoomTool::Query => match store.query(arg(args, "sql")).map_err(e)? {
            QueryOutcome::Inline { columns, rows } => {
                let cols: Vec<Value> = columns
                    .iter()
                    .map(|(n, t)| json!({ "name": n, "type": t }))
                    .collect();
                let structured = json!({ "kind": "rows", "columns": cols, "row_count": rows.len(), "rows": rows });
                let mut text = format!(
                    "{} row(s); columns: {}\n",
                    rows.len(),
                    columns
                        .iter()
                        .map(|(n, t)| format!("{n} {t}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                for r in &rows {
                    text.push_str(&r.to_string());
                    text.push('\n');
                }
                Ok(text_and_structured(text, structured))
            }
            QueryOutcome::Dataset(meta) => {
                let p = store.profile(&meta.dataset_ref, 5).map_err(e)?;
                Ok(envelope::render(&meta, &p, store.config().envelope_budget, None).0)
            }
        },
        LoomTool::ListDatasets => {
            let all = store.datasets();
            let start: usize = match args.get("cursor").and_then(Value::as_str) {
                None | Some("") => 0,
                Some(c) => c.parse().map_err(|_| {
                    format!("invalid cursor `{c}`: pass the next_cursor of a previous page")
                })?,
            };
            let page: Vec<Value> = all
                .iter()
                .skip(start)
                .take(PAGE)
                .map(|d| {
                    json!({
                        "ref": d.dataset_ref,
                        "kind": d.kind,
                        "rows": d.rows,
                        "columns": d.columns.len(),
                        "source": d.provenance.as_ref().map(|p| format!("{}/{}", p.server, p.tool)),
                        "pinned": d.pinned,
                        "created": d.created,
                    })
                })
                .collect();
            let next = (start + PAGE < all.len()).then(|| (start + PAGE).to_string());
            let mut text = if all.is_empty() {
                "No datasets yet: large tabular tool results become datasets automatically.\n"
                    .to_owned()
            } else {
                String::new()
            };
            for d in &page {
                text.push_str(&format!(
                    "{} — {} rows × {} columns{}{}\n",
                    d["ref"].as_str().unwrap_or_default(),
                    d["rows"],
                    d["columns"],
                    d["source"]
                        .as_str()
                        .map(|s| format!(" from {s}"))
                        .unwrap_or_default(),
                    if d["pinned"] == true { " (pinned)" } else { "" }
                ));
            }
            if let Some(n) = &next {
                text.push_str(&format!(
                    "more: loom_list_datasets {{\"cursor\": \"{n}\"}}\n"
                ));
            }
            Ok(text_and_structured(
                text,
                json!({ "datasets": page, "next_cursor": next, "total": all.len() }),
            ))
        }
        LoomTool::Describe => {
            let r = arg(args, "ref");
            let meta = store.dataset(r).map_err(e)?;
            let p = store.profile(r, 10).map_err(e)?;
            Ok(envelope::render(&meta, &p, usize::MAX, None).0)
        }
        LoomTool::Materialize => {
            let meta = store
                .materialize(arg(args, "sql"), arg(args, "name"))
                .map_err(e)?;
            let p = store.profile(&meta.dataset_ref, 5).map_err(e)?;
            Ok(envelope::render(&meta, &p, store.config().envelope_budget, None).0)
        }
        LoomTool::Drop => {
            let meta = store.drop_dataset(arg(args, "ref")).map_err(e)?;
            Ok(text_and_structured(
                format!("dropped `{}` ({} rows)", meta.dataset_ref, meta.rows),
                json!({ "dropped": meta.dataset_ref, "rows": meta.rows }),
            ))
        }
        LoomTool::Export => {
            let f = arg(args, "format");
            let format = ExportFormat::parse(f)
                .ok_or_else(|| format!("unknown format `{f}`; use csv, json or jsonl"))?;
            let filename = args.get("filename").and_then(Value::as_str);
            let (path, rows) = store
                .export(arg(args, "ref"), format, filename)
                .map_err(e)?;
            let path = path.display().to_string();
            Ok(text_and_structured(
                format!("wrote {rows} rows to {path}"),
                json!({ "path": path, "rows": rows, "format": format.extension() }),
            ))
        }
        LoomTool::Fetch => {
            let int = |k: &str| args.get(k).and_then(Value::as_i64);
            let offset = int("offset").unwrap_or(0);
            let limit = int("limit").unwrap_or(blobs::DEFAULT_LIMIT as i64);
            let context = int("context_lines").unwrap_or(0);
            let mut problems = Vec::new();
            if offset < 0 {
                problems.push("`offset` must be 0 or more".to_owned());
            }
            if !(1..=blobs::MAX_LIMIT as i64).contains(&limit) {
                problems.push(format!(
                    "`limit` must be between 1 and {}",
                    blobs::MAX_LIMIT
                ));
            }
            if !(0..=10).contains(&context) {
                problems.push("`context_lines` must be between 0 and 10".to_owned());
            }
            if !problems.is_empty() {
                return Err(format!(
                    "loom_fetch was called with wrong arguments:\n- {}",
                    problems.join("\n- ")
                ));
            }
            let f = store
                .blobs
                .fetch(&blobs::FetchRequest {
                    key: arg(args, "blob_key"),
                    offset: offset as usize,
                    limit: limit as usize,
                    pattern: args
                        .get("pattern")
                        .and_then(Value::as_str)
                        .filter(|p| !p.is_empty()),
                    context_lines: context as usize,
                })
                .map_err(|e| format!("loom_fetch: {e}"))?;
            let structured = serde_json::to_value(&f).unwrap_or(Value::Null);
            Ok(text_and_structured(f.content, structured))
        }
        LoomTool::Park => {
            let ttl = args
                .get("ttl_seconds")
                .and_then(Value::as_i64)
                .unwrap_or(blobs::DEFAULT_TTL.as_secs() as i64);
            if !(blobs::MIN_TTL.as_secs() as i64..=blobs::MAX_TTL.as_secs() as i64).contains(&ttl) {
                return Err(format!(
                    "`ttl_seconds` must be between {} and {}",
                    blobs::MIN_TTL.as_secs(),
                    blobs::MAX_TTL.as_secs()
                ));
            }
            let content = arg(args, "content").to_owned();
            let summary = args
                .get("summary")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| blobs::first_lines(&content));
            let content_type = args
                .get("content_type")
                .and_then(Value::as_str)
                .unwrap_or("text/plain")
                .to_owned();
            let blob = store.park(
                content,
                summary,
                content_type,
                std::time::Duration::from_secs(ttl as u64),
            );
            Ok(blobs::pointer(&blob, None))
        }
        LoomTool::MemorySet
        | LoomTool::MemoryGet
        | LoomTool::MemorySearch
        | LoomTool::MemoryDelete
        | LoomTool::MemoryHistory => {
            Err(format!("{} works on memories, not datasets", tool.name()))
        }
    }
}

fn memory_json(m: &Memory) -> Value {
    serde_json::to_value(m).unwrap_or(Value::Null)
}

fn memory_text(m: &Memory) -> String {
    let tags = if m.tags.is_empty() {
        String::new()
    } else {
        format!(" [{}]", m.tags.join(", "))
    };
    format!(
        "{} v{} by {} at {}{}{}:\n{}",
        m.key,
        m.version,
        m.author,
        m.at,
        tags,
        if m.pinned { " (pinned)" } else { "" },
        m.content
    )
}

/// Runs a memory tool (arguments already validated) as the model. Lines of the memory file
/// that could not be read are named in every answer (text, `skipped_lines` in the structured
/// content, and the error message), never hidden.
/// Runs a memory tool for `author` (the caller: `model` or `human`), who is recorded with
/// every version written or deleted.
pub fn run_memory(
    mem: &Memories,
    tool: LoomTool,
    args: &Map<String, Value>,
    author: &str,
) -> Result<Value, String> {
    let out = run_memory_tool(mem, tool, args, author);
    let Some(notice) = mem.skipped_notice() else {
        return out;
    };
    match out {
        Ok(mut v) => {
            if let Some(Value::Array(content)) = v.get_mut("content") {
                content.push(json!({ "type": "text", "text": format!("Note: {notice}.") }));
            }
            if let Some(Value::Object(s)) = v.get_mut("structuredContent") {
                s.insert("skipped_lines".into(), json!(mem.skipped().count));
            }
            Ok(v)
        }
        Err(e) => Err(format!("{e}\nNote: {notice}.")),
    }
}

fn run_memory_tool(
    mem: &Memories,
    tool: LoomTool,
    args: &Map<String, Value>,
    author: &str,
) -> Result<Value, String> {
    let e = |e: crate::store::memories::MemoryError| e.to_string();
    let strings = |k: &str| -> Vec<String> {
        args.get(k)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let uint = |k: &str| args.get(k).and_then(Value::as_i64).map(|v| v.max(0) as u64);
    match tool {
        LoomTool::MemorySet => {
            let m = mem
                .set(
                    arg(args, "key"),
                    arg(args, "content"),
                    strings("tags"),
                    args.get("pinned").and_then(Value::as_bool).unwrap_or(false),
                    uint("if_version"),
                    author,
                )
                .map_err(e)?;
            Ok(text_and_structured(
                format!("saved {} version {}", m.key, m.version),
                memory_json(&m),
            ))
        }
        LoomTool::MemoryGet => {
            let m = mem.get(arg(args, "key"), uint("version")).map_err(e)?;
            Ok(text_and_structured(memory_text(&m), memory_json(&m)))
        }
        LoomTool::MemorySearch => {
            let limit = uint("limit").unwrap_or(10) as usize;
            let hits = mem
                .search(arg(args, "query"), &strings("tags"), limit.min(100))
                .map_err(e)?;
            let text = if hits.is_empty() {
                "no memories match".to_owned()
            } else {
                hits.iter()
                    .map(|(m, _)| memory_text(m))
                    .collect::<Vec<_>>()
                    .join("\n\n")
            };
            let results: Vec<Value> = hits
                .iter()
                .map(|(m, score)| json!({ "memory": memory_json(m), "score": score }))
                .collect();
            Ok(text_and_structured(text, json!({ "results": results })))
        }
        LoomTool::MemoryDelete => {
            let m = mem.delete(arg(args, "key"), author).map_err(e)?;
            Ok(text_and_structured(
                format!("deleted {} (history kept)", m.key),
                memory_json(&m),
            ))
        }
        LoomTool::MemoryHistory => {
            let versions = mem.history(arg(args, "key")).map_err(e)?;
            let text = versions
                .iter()
                .map(|m| {
                    if m.deleted {
                        format!("v{} deleted by {} at {}", m.version, m.author, m.at)
                    } else {
                        memory_text(m)
                    }
                })
                .collect::<Vec<_>>()
                .join("\n\n");
            Ok(text_and_structured(
                text,
                json!({ "versions": versions.iter().map(memory_json).collect::<Vec<_>>() }),
            ))
        }
        LoomTool::Query
        | LoomTool::ListDatasets
        | LoomTool::Describe
        | LoomTool::Materialize
        | LoomTool::Drop
        | LoomTool::Export
        | LoomTool::Fetch
        | LoomTool::Park => Err(format!("{} works on datasets, not memories", tool.name())),
    }
}

#[cfg(test)]
mod tests;
