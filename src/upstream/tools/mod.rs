//! loom's own tools, listed after the downstream ones: query, list, describe, materialize,
//! drop and export datasets. Arguments are checked against each tool's fields; a wrong call
//! gets every field error, a did-you-mean for unknown keys, the required and optional
//! arguments, and one corrected example call. What a tool adds to or drops from the catalog
//! (a query result kept as a dataset, a materialized one, parked text, a drop, an eviction) the
//! store reports itself, wherever it happens.

use crate::store::memories::{Memories, Memory};
use crate::store::{ExportFormat, QueryOutcome, Store, blobs, envelope};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Map, Value, json};
use std::sync::Arc;

mod error;
pub use error::{ArgumentProblem, ToolError, WrongArguments};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Str,
    Int,
    Bool,
    StrList,
    /// A JSON object (a tool's arguments).
    Object,
}

#[derive(Debug, PartialEq)]
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
    FindTools,
    Call,
    CallEach,
    Context,
    History,
}

impl LoomTool {
    pub const ALL: [LoomTool; 18] = [
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
        LoomTool::FindTools,
        LoomTool::Call,
        LoomTool::CallEach,
        LoomTool::Context,
        LoomTool::History,
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
            LoomTool::FindTools => "loom_find_tools",
            LoomTool::Call => "loom_call",
            LoomTool::CallEach => "loom_call_each",
            LoomTool::Context => "loom_context",
            LoomTool::History => "loom_history",
        }
    }

    /// The few a model needs unprompted: listed in every listing mode.
    pub const fn is_core(self) -> bool {
        matches!(
            self,
            LoomTool::Query
                | LoomTool::Describe
                | LoomTool::Fetch
                | LoomTool::MemorySearch
                | LoomTool::MemorySet
        )
    }

    /// Whether it works on the session's tools and listing, not on a store.
    pub const fn is_session(self) -> bool {
        matches!(
            self,
            LoomTool::FindTools | LoomTool::Call | LoomTool::CallEach | LoomTool::Context
        )
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

#[derive(Debug, PartialEq)]
pub struct ToolSpec {
    pub tool: LoomTool,
    pub title: &'static str,
    pub description: &'static str,
    pub fields: &'static [Field],
    pub example: &'static str,
    pub read_only: bool,
}

mod specs;
pub use specs::TOOLS;

impl ToolSpec {
    pub const fn name(&self) -> &'static str {
        self.tool.name()
    }
}

pub fn spec(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name() == name)
}

/// Tool definitions for `tools/list`, all of them.
pub fn definitions() -> Vec<Value> {
    TOOLS.iter().map(definition).collect()
}

/// One tool's definition, as JSON for the listing.
pub fn definition(t: &ToolSpec) -> Value {
    serde_json::to_value(tool(t)).unwrap_or(Value::Null)
}

/// One tool's definition as rmcp's model type: loom's tools only read or write loom's own
/// store and memories, so none is destructive and none reaches the open world.
pub fn tool(t: &ToolSpec) -> Tool {
    let mut props = JsonObject::new();
    for f in t.fields {
        let schema = match f.kind {
            Kind::Str => json!({ "type": "string", "description": f.about }),
            Kind::Int => json!({ "type": "integer", "description": f.about }),
            Kind::Bool => json!({ "type": "boolean", "description": f.about }),
            Kind::StrList => {
                json!({ "type": "array", "items": { "type": "string" }, "description": f.about })
            }
            Kind::Object => json!({ "type": "object", "description": f.about }),
        };
        props.insert(f.name.into(), schema);
    }
    let required: Vec<&str> = t
        .fields
        .iter()
        .filter(|f| f.required)
        .map(|f| f.name)
        .collect();
    let mut schema = JsonObject::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(props));
    schema.insert("additionalProperties".into(), json!(false));
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    Tool::new(t.name(), t.description, Arc::new(schema))
        .with_title(t.title)
        .with_annotations(
            ToolAnnotations::new()
                .read_only(t.read_only)
                .destructive(false)
                .open_world(false),
        )
}

/// Checks arguments: every problem at once, or none.
pub fn validate(spec: &'static ToolSpec, args: &Map<String, Value>) -> Result<(), WrongArguments> {
    let mut problems = Vec::new();
    for f in spec.fields {
        match args.get(f.name) {
            None | Some(Value::Null) if f.required => problems.push(ArgumentProblem::Missing {
                name: f.name,
                about: f.about,
            }),
            None | Some(Value::Null) => {}
            Some(v) => {
                let ok = match f.kind {
                    Kind::Str => v
                        .as_str()
                        .is_some_and(|s| !s.trim().is_empty() || !f.required),
                    Kind::Int => v.as_i64().is_some(),
                    Kind::Bool => v.is_boolean(),
                    Kind::StrList => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
                    Kind::Object => v.is_object(),
                };
                if !ok {
                    problems.push(ArgumentProblem::WrongType {
                        name: f.name,
                        kind: f.kind,
                        got: v.clone(),
                    });
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
            .min()
            .filter(|(d, _)| *d <= 3)
            .map(|(_, name)| name);
        problems.push(ArgumentProblem::Unknown {
            name: k.clone(),
            near,
        });
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(WrongArguments { spec, problems })
    }
}

const PAGE: usize = 50;

fn text_and_structured(text: String, structured: Value) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "structuredContent": structured })
}

fn arg<'a>(args: &'a Map<String, Value>, k: &str) -> &'a str {
    args.get(k).and_then(Value::as_str).unwrap_or_default()
}

/// Runs one of loom's tools (arguments already validated); `Err` is an `isError` result.
/// What it adds to the catalog the store reports as soon as it exists, so a failure after
/// that (say, profiling) never leaves a dataset the workbench does not know of.
pub fn run(store: &Store, tool: LoomTool, args: &Map<String, Value>) -> Result<Value, ToolError> {
    match tool {
        LoomTool::Query => match store.query(arg(args, "sql"))? {
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
                let p = store.profile(&meta.dataset_ref, 5)?;
                Ok(envelope::render(&meta, &p, store.config().envelope_budget, None).0)
            }
        },
        LoomTool::ListDatasets => {
            let all = store.datasets();
            let start: usize = match args.get("cursor").and_then(Value::as_str) {
                None | Some("") => 0,
                Some(c) => c.parse().map_err(|_| ToolError::BadCursor(c.to_owned()))?,
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
            let meta = store.dataset(r)?;
            let p = store.profile(r, 10)?;
            Ok(envelope::render(&meta, &p, usize::MAX, None).0)
        }
        LoomTool::Materialize => {
            let meta = store.materialize(arg(args, "sql"), arg(args, "name"))?;
            let p = store.profile(&meta.dataset_ref, 5)?;
            Ok(envelope::render(&meta, &p, store.config().envelope_budget, None).0)
        }
        LoomTool::Drop => {
            let meta = store.drop_dataset(arg(args, "ref"))?;
            Ok(text_and_structured(
                format!("dropped `{}` ({} rows)", meta.dataset_ref, meta.rows),
                json!({ "dropped": meta.dataset_ref, "rows": meta.rows }),
            ))
        }
        LoomTool::Export => {
            let f = arg(args, "format");
            let format =
                ExportFormat::parse(f).ok_or_else(|| ToolError::UnknownFormat(f.to_owned()))?;
            let filename = args.get("filename").and_then(Value::as_str);
            let (path, rows) = store.export(arg(args, "ref"), format, filename)?;
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
                problems.push(ArgumentProblem::TooSmall {
                    name: "offset",
                    min: 0,
                });
            }
            if !(1..=blobs::MAX_LIMIT as i64).contains(&limit) {
                problems.push(ArgumentProblem::OutOfRange {
                    name: "limit",
                    min: 1,
                    max: blobs::MAX_LIMIT as i64,
                });
            }
            if !(0..=10).contains(&context) {
                problems.push(ArgumentProblem::OutOfRange {
                    name: "context_lines",
                    min: 0,
                    max: 10,
                });
            }
            if !problems.is_empty() {
                return Err(ToolError::BadValues {
                    tool: tool.name(),
                    problems,
                });
            }
            let f = store.blobs.fetch(&blobs::FetchRequest {
                key: arg(args, "blob_key"),
                offset: offset as usize,
                limit: limit as usize,
                pattern: args
                    .get("pattern")
                    .and_then(Value::as_str)
                    .filter(|p| !p.is_empty()),
                context_lines: context as usize,
            })?;
            let found = f.found;
            let structured = serde_json::to_value(&f).unwrap_or(Value::Null);
            if !found {
                // A key that names nothing is the caller's mistake: an error it can act on.
                let mut r = text_and_structured(
                    format!(
                        "{}; a key comes from the pointer that replaced a large text result",
                        f.content
                    ),
                    structured,
                );
                r["isError"] = json!(true);
                return Ok(r);
            }
            Ok(text_and_structured(f.content, structured))
        }
        LoomTool::Park => {
            let ttl = args
                .get("ttl_seconds")
                .and_then(Value::as_i64)
                .unwrap_or(blobs::DEFAULT_TTL.as_secs() as i64);
            let (min, max) = (
                blobs::MIN_TTL.as_secs() as i64,
                blobs::MAX_TTL.as_secs() as i64,
            );
            if !(min..=max).contains(&ttl) {
                return Err(ToolError::BadValues {
                    tool: tool.name(),
                    problems: vec![ArgumentProblem::OutOfRange {
                        name: "ttl_seconds",
                        min,
                        max,
                    }],
                });
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
        | LoomTool::MemoryHistory => Err(ToolError::WrongRunner {
            tool,
            works_on: "memories",
            asked: "datasets",
        }),
        LoomTool::FindTools
        | LoomTool::Call
        | LoomTool::CallEach
        | LoomTool::Context
        | LoomTool::History => Err(ToolError::WrongRunner {
            tool,
            works_on: "the session",
            asked: "datasets",
        }),
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
) -> Result<Value, ToolError> {
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
        Err(error) => Err(ToolError::WithNotice {
            error: Box::new(error),
            notice,
        }),
    }
}

fn run_memory_tool(
    mem: &Memories,
    tool: LoomTool,
    args: &Map<String, Value>,
    author: &str,
) -> Result<Value, ToolError> {
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
            // Tags or a pin the caller did not mention stay as they are.
            let m = mem.set_keeping(
                arg(args, "key"),
                arg(args, "content"),
                args.get("tags").is_some().then(|| strings("tags")),
                args.get("pinned").and_then(Value::as_bool),
                uint("if_version"),
                author,
            )?;
            Ok(text_and_structured(
                format!("saved {} version {}", m.key, m.version),
                memory_json(&m),
            ))
        }
        LoomTool::MemoryGet => {
            let m = mem.get(arg(args, "key"), uint("version"))?;
            Ok(text_and_structured(memory_text(&m), memory_json(&m)))
        }
        LoomTool::MemorySearch => {
            let limit = uint("limit").unwrap_or(10) as usize;
            let hits = mem.search(arg(args, "query"), &strings("tags"), limit.min(100))?;
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
            let m = mem.delete(arg(args, "key"), author)?;
            Ok(text_and_structured(
                format!("deleted {} (history kept)", m.key),
                memory_json(&m),
            ))
        }
        LoomTool::MemoryHistory => {
            let versions = mem.history(arg(args, "key"))?;
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
        | LoomTool::Park => Err(ToolError::WrongRunner {
            tool,
            works_on: "datasets",
            asked: "memories",
        }),
        LoomTool::FindTools
        | LoomTool::Call
        | LoomTool::CallEach
        | LoomTool::Context
        | LoomTool::History => Err(ToolError::WrongRunner {
            tool,
            works_on: "the session",
            asked: "memories",
        }),
    }
}

#[cfg(test)]
mod tests;
