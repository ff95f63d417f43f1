//! `loom_history`: past sessions loaded beside a live one, read-only, each as its own schema
//! (`past_<id>.orders_1`, `past_<id>.loom_calls`): by the model through `loom_history`, or by
//! a person. loom reads the Parquet files itself; no statement ever names a file, and the
//! engine stays sealed. A loaded session counts toward `memory_budget`: one that does not fit
//! is not kept, and unloading drops its schema.

use crate::history::{self, past};
use crate::session::Session;
use crate::store::Store;
use crate::upstream::tools::ToolError;
use serde_json::{Map, Value, json};

const LIST_DEFAULT: usize = 10;
/// Datasets named per session in a listing.
const DATASETS_LISTED: usize = 20;

fn err(s: impl Into<String>) -> ToolError {
    ToolError::History(s.into())
}

/// The schemas of past sessions loaded in `store` now.
pub fn loaded_schemas(store: &Store) -> Vec<String> {
    store
        .schemas()
        .into_iter()
        .filter(|s| s.starts_with("past_"))
        .collect()
}

/// `loom_history {action, id, limit}`.
pub fn tool(
    session: &Session,
    store: &Store,
    args: &Map<String, Value>,
) -> Result<Value, ToolError> {
    let action = args.get("action").and_then(Value::as_str).unwrap_or("list");
    let id = args.get("id").and_then(Value::as_str).unwrap_or("");
    let root = crate::history::dir_of(&session.config);
    let this = session.history.get().map(|a| a.id.clone());
    match action {
        "list" => {
            let limit = args
                .get("limit")
                .and_then(Value::as_u64)
                .map_or(LIST_DEFAULT, |l| l.clamp(1, 100) as usize);
            let loaded = loaded_schemas(store);
            let mut text = String::new();
            let mut items = Vec::new();
            for s in past::list(&root)
                .into_iter()
                .filter(|s| Some(&s.id) != this.as_ref())
                .take(limit)
            {
                let schema = history::schema_of(&s.id);
                let datasets: Vec<Value> = past::datasets(&s)
                    .into_iter()
                    .filter_map(|d| d.meta.ok())
                    .take(DATASETS_LISTED)
                    .map(|m| {
                        json!({
                            "ref": m.dataset_ref, "rows": m.rows,
                            "source": m.provenance.as_ref().map(|p| format!("{}/{}", p.server, p.tool)),
                        })
                    })
                    .collect();
                let m = s.manifest.as_ref();
                text.push_str(&format!(
                    "{} started {} · {} calls · {} datasets{}{}\n",
                    s.id,
                    m.map(|m| m.started.as_str()).unwrap_or("?"),
                    m.map_or(0, |m| m.calls),
                    datasets.len(),
                    if loaded.contains(&schema) {
                        format!(" · loaded as {schema}")
                    } else {
                        String::new()
                    },
                    s.problem
                        .as_deref()
                        .map(|p| format!(" · cannot be read: {p}"))
                        .unwrap_or_default(),
                ));
                for d in &datasets {
                    text.push_str(&format!(
                        "  {} ({} rows{})\n",
                        d["ref"].as_str().unwrap_or_default(),
                        d["rows"],
                        d["source"]
                            .as_str()
                            .map(|s| format!(" from {s}"))
                            .unwrap_or_default()
                    ));
                }
                items.push(json!({
                    "id": s.id,
                    "started": m.map(|m| m.started.clone()),
                    "ended": m.and_then(|m| m.ended.clone()),
                    "clean": m.is_some_and(|m| m.clean),
                    "calls": m.map_or(0, |m| m.calls),
                    "datasets": datasets,
                    "schema": schema,
                    "loaded": loaded.contains(&schema),
                    "problem": s.problem,
                }));
            }
            if items.is_empty() {
                text.push_str("No past sessions yet: each session is kept when it ends (history = \"all\").\n");
            } else {
                text.push_str("Load one: loom_history {\"action\": \"load\", \"id\": \"…\"}\n");
            }
            Ok(json!({
                "content": [{ "type": "text", "text": text }],
                "structuredContent": { "sessions": items },
            }))
        }
        "load" => {
            if Some(id) == this.as_deref() {
                return Err(err("that is this session: its datasets are already here"));
            }
            let s = past::find(&root, id).map_err(err)?;
            if let Some(p) = &s.problem {
                return Err(err(format!("session {id} cannot be loaded: {p}")));
            }
            let schema = history::schema_of(id);
            if loaded_schemas(store).contains(&schema) {
                store.drop_schema(&schema)?;
            }
            let out = past::load(store, &s, Some(&schema));
            let budget = store.config().memory_budget;
            let used = store.memory_bytes();
            if used > budget {
                store.drop_schema(&schema)?;
                return Err(err(format!(
                    "session {id} does not fit: loading it takes loom to {} MiB of its memory_budget of {} MiB; unload another past session or drop datasets first",
                    used >> 20,
                    budget >> 20
                )));
            }
            let mut text = format!(
                "Loaded session {id} read-only as schema {schema}: {} datasets, {} calls in {schema}.loom_calls.\n",
                out.datasets.len(),
                out.calls
            );
            for d in &out.datasets {
                text.push_str(&format!("  {schema}.{d}\n"));
            }
            for p in &out.problems {
                text.push_str(&format!("  not loaded: {p}\n"));
            }
            if let Some(first) = out.datasets.first() {
                text.push_str(&format!(
                    "Query it like today's: SELECT count(*) FROM {schema}.{first}\n"
                ));
            }
            Ok(json!({
                "content": [{ "type": "text", "text": text }],
                "structuredContent": {
                    "id": id, "schema": schema, "datasets": out.datasets,
                    "calls": out.calls, "problems": out.problems,
                },
            }))
        }
        "unload" => {
            let schema = history::schema_of(id);
            if !history::valid_id(id) || !loaded_schemas(store).contains(&schema) {
                return Err(err(format!(
                    "no session {} is loaded",
                    crate::terminal_text::line(id)
                )));
            }
            store.drop_schema(&schema)?;
            Ok(json!({
                "content": [{ "type": "text", "text": format!("unloaded {schema}") }],
                "structuredContent": { "unloaded": schema },
            }))
        }
        other => Err(err(format!(
            "unknown action `{}`: use list, load or unload",
            crate::terminal_text::line(other)
        ))),
    }
}
