//! `loom_call_each`: one call of a server's tool per row of a read-only query, the row's columns
//! its arguments by name. The batch is approved once, runs with bounded concurrency, can be
//! cancelled as a whole, reports progress by calls, logs every call with its batch id, and
//! answers with one dataset of all the results (a row per call, or per result row when a result
//! is a table) and one envelope.

use super::tools::LoomTool;
use super::*;
use crate::intercept::table::{Table, Tier};
use crate::store::bind::Bound;
use crate::store::{Asker, Store};
use crate::types::events::BatchAsk;
use std::collections::BTreeMap;

/// Calls of a batch in flight at once unless the model asks otherwise.
const DEFAULT_CONCURRENCY: i64 = 4;
/// Rows a batch may have unless the model asks otherwise.
const DEFAULT_MAX_CALLS: i64 = 1000;
/// The most calls any batch may make.
const MAX_CALLS: i64 = 100_000;
/// Errors named in the answer.
const ERRORS_SHOWN: usize = 5;
/// Rows of arguments the approval prompt and the refusal of bad rows show.
const ROWS_SHOWN: usize = 5;

/// How one call of the batch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    Ok,
    Error,
    Cancelled,
    /// Never started: the batch stopped first (an error with `on_error = "stop"`, or a cancel).
    Skipped,
}

impl Ended {
    fn as_str(self) -> &'static str {
        match self {
            Ended::Ok => "ok",
            Ended::Error => "error",
            Ended::Cancelled => "cancelled",
            Ended::Skipped => "skipped",
        }
    }
}

/// One call's end: its outcome, and its result (`None` when it has none).
struct Done {
    index: usize,
    ended: Ended,
    result: Option<Value>,
    error: Option<String>,
}

/// What the model asked for, checked.
struct Ask {
    tool: String,
    sql: String,
    base: Map<String, Value>,
    bind: Option<Value>,
    concurrency: usize,
    max_calls: usize,
    stop_on_error: bool,
}

fn ask_of(args: &Map<String, Value>) -> Result<Ask, String> {
    let int = |k: &str, default: i64, max: i64| -> Result<i64, String> {
        match args.get(k) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => v
                .as_i64()
                .filter(|n| (1..=max).contains(n))
                .ok_or_else(|| format!("`{k}` must be an integer from 1 to {max}, got {v}")),
        }
    };
    let stop_on_error = match args.get("on_error").and_then(Value::as_str) {
        None | Some("continue") => false,
        Some("stop") => true,
        Some(other) => {
            return Err(format!(
                "`on_error` must be \"continue\" or \"stop\", got {}",
                Value::String(other.to_owned())
            ));
        }
    };
    Ok(Ask {
        tool: args
            .get("tool")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        sql: args
            .get("sql")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        base: args
            .get("arguments")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        bind: args.get("bind").filter(|b| !b.is_null()).cloned(),
        concurrency: int("concurrency", DEFAULT_CONCURRENCY, 64)? as usize,
        max_calls: int("max_calls", DEFAULT_MAX_CALLS, MAX_CALLS)? as usize,
        stop_on_error,
    })
}

/// One row's own arguments: the shared ones with the row's columns over them.
fn row_arguments(base: &Map<String, Value>, row: &Value) -> Value {
    let mut args = base.clone();
    if let Some(r) = row.as_object() {
        for (k, v) in r {
            args.insert(k.clone(), v.clone());
        }
    }
    Value::Object(args)
}

impl ClientSession {
    /// Runs a `loom_call_each` (its arguments already match its spec) and answers it.
    pub(super) async fn call_each(
        self: &Arc<Self>,
        id: &RawValue,
        params: &Map<String, Value>,
        args: Map<String, Value>,
    ) -> Result<Option<String>, RpcError> {
        let name = LoomTool::CallEach.name();
        self.note_use(name, None);
        let mut track = self.begin_call(LOOM_SERVER, name, params);
        let up_key = id_key(id);
        let batch = track.summary.call;
        // Cancellable from the start: while rows are read, while it waits for approval, and
        // while its calls run.
        let mut cancel_rx = self.track_in_flight(&up_key, LOOM_SERVER, Some(batch));
        let prepared = tokio::select! {
            p = self.prepare_batch(&args, &mut track) => Some(p),
            _ = &mut cancel_rx => None,
        };
        let outcome = match prepared {
            None => Err((
                Outcome::Cancelled,
                "the batch was cancelled before it started".to_owned(),
            )),
            Some(Err(why)) => Err(why),
            Some(Ok(plan)) => Ok(plan),
        };
        let plan = match outcome {
            Ok(p) => p,
            Err((outcome, why)) => {
                self.untrack_in_flight(&up_key, Some(batch));
                return Ok(Some(self.refuse(id, track, outcome, &why)));
            }
        };
        let progress_token = params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .cloned();
        let (done, stopped, over) = self
            .run_batch(&plan, batch, &mut cancel_rx, progress_token)
            .await;
        self.untrack_in_flight(&up_key, Some(batch));
        let answer = self
            .batch_answer(&plan, batch, done, stopped.is_some(), over)
            .await;
        let (result, reference) = match answer {
            Ok((v, r)) => (jsonrpc::to_raw(&v), Some(r)),
            Err(why) => (tool_error(&why), None),
        };
        let result = if self.is_modern() {
            with_result_type(result)
        } else {
            result
        };
        if matches!(stopped, Some(Stop::Client(_))) {
            // The client withdrew its request: it expects no answer, the log keeps the end.
            self.end_call(track, Outcome::Cancelled, reference, None, result.get());
            return Ok(None);
        }
        let outcome = match stopped {
            Some(_) => Outcome::Cancelled,
            None if reports_error(&result) => Outcome::Error,
            None => Outcome::Passed,
        };
        self.end_call(track, outcome, reference, None, result.get());
        Ok(Some(jsonrpc::response(id, &result)))
    }

    /// Everything before the first call: the tool, the rows, the bindings, every row's
    /// arguments checked, and the approval.
    async fn prepare_batch(
        self: &Arc<Self>,
        args: &Map<String, Value>,
        track: &mut CallTrack,
    ) -> Result<Plan, (Outcome, String)> {
        let refused = |why: String| (Outcome::Error, why);
        let ask = ask_of(args).map_err(refused)?;
        if tools::spec(&ask.tool).is_some() {
            return Err(refused(format!(
                "loom_call_each calls a server's tools; `{}` is loom's own (query the data with loom_query instead)",
                ask.tool
            )));
        }
        let fleet = self.ready_fleet().await;
        let Some(route) = fleet.route_tool(&ask.tool) else {
            return Err(refused(format!(
                "unknown tool `{}`; loom_find_tools finds tools by what they do",
                ask.tool
            )));
        };
        let schema = route
            .server
            .tool_field(&route.original, "inputSchema")
            .unwrap_or(Value::Null);
        let store = self.store().await.map_err(refused)?;
        let sql = ask.sql.clone();
        let max_bytes = self.session.config.max_bound_bytes;
        let reading = store.clone();
        let (call, client) = (track.summary.call, self.number);
        let rows = tokio::task::spawn_blocking(move || {
            Store::asking_as(Asker::Call { call, client }, || {
                reading.rows_for_binding(&sql, max_bytes)
            })
        })
        .await
        .map_err(|e| refused(format!("the query failed inside loom: {e}")))?
        .map_err(|e| refused(format!("the query that drives the batch failed: {e}")))?;
        let crate::store::BoundRows {
            columns,
            rows,
            read,
        } = rows;
        if rows.len() > ask.max_calls {
            return Err(refused(format!(
                "the query returns {} rows, more than max_calls ({}); narrow it or raise max_calls",
                rows.len(),
                ask.max_calls
            )));
        }
        let bound = match &ask.bind {
            Some(b) => self.resolve_bindings(b).await.map_err(refused)?,
            None => Vec::new(),
        };
        // Every row's arguments, checked before any call: a batch runs whole or not at all.
        let mut calls = Vec::with_capacity(rows.len());
        let mut wrong = Vec::new();
        let mut wrong_count = 0;
        for (i, row) in rows.iter().enumerate() {
            let logged = row_arguments(&ask.base, row);
            // Checked with the bound data in place, then let go: a call's bound values are put
            // in only as it is sent (see `run_batch`), so a large binding is held once, not once
            // per row (a 7 MiB blob bound into 1,000 rows was 7 GB and aborted loom).
            let mut filled = logged.clone();
            crate::store::bind::apply(&mut filled, &bound).map_err(|e| refused(e.to_string()))?;
            if let Some(why) = super::bind::schema_refusal(&ask.tool, &schema, &filled, &bound) {
                wrong_count += 1;
                if wrong.len() < ROWS_SHOWN {
                    let first = why.lines().skip(1).take_while(|l| l.starts_with("- "));
                    wrong.push(format!(
                        "row {} {}: {}",
                        i + 1,
                        logged,
                        first.collect::<Vec<_>>().join("; ")
                    ));
                }
            }
            drop(filled);
            calls.push(logged);
        }
        if wrong_count > 0 {
            return Err(refused(format!(
                "{wrong_count} of {} rows would call {} with wrong arguments, so no call was made (the query's columns are the arguments by name; rename them with AS):\n{}\nits input schema: {schema}",
                rows.len(),
                ask.tool,
                wrong.join("\n")
            )));
        }
        track.summary.bindings = bound.iter().map(|b| b.view.clone()).collect();
        let mut inputs = read;
        for b in &bound {
            for i in &b.view.inputs {
                if !inputs.contains(i) {
                    inputs.push(i.clone());
                }
            }
        }
        let plan = Plan {
            ask,
            route,
            columns,
            rows,
            calls,
            bound,
            inputs,
        };
        if plan.calls.is_empty() {
            return Ok(plan);
        }
        let batch = BatchAsk {
            calls: plan.calls.len() as u64,
            sql: plan.ask.sql.clone(),
            arguments: plan.calls.to_vec(),
            inputs: plan.inputs.clone(),
        };
        let mut first = Map::new();
        first.insert("name".into(), Value::String(plan.ask.tool.clone()));
        let mut filled = plan.calls[0].clone();
        crate::store::bind::apply(&mut filled, &plan.bound).map_err(|e| refused(e.to_string()))?;
        first.insert("arguments".into(), filled);
        let crossing = self.crossing(&plan.route, plan.inputs.clone()).await;
        self.approve(
            &plan.route,
            &plan.ask.tool,
            &first,
            track,
            Some(batch),
            crossing,
        )
        .await
        .map_err(|why| (Outcome::Denied, why))?;
        Ok(plan)
    }

    /// Runs the batch's calls, at most `concurrency` at once; returns every call's end, and
    /// what stopped the batch when something did.
    async fn run_batch(
        self: &Arc<Self>,
        plan: &Plan,
        batch: u64,
        cancel_rx: &mut oneshot::Receiver<Stop>,
        progress_token: Option<Value>,
    ) -> (Vec<Done>, Option<Stop>, Option<String>) {
        let total = plan.calls.len();
        // A batch holds at most `memory_budget` (what the store holds before it evicts) of its
        // calls' answers, as the servers sent them, until it ends: past it, no further call is
        // made, the calls in flight are cancelled, and the answer says why. Without it a batch
        // of large results grew loom until the system killed it.
        let mut held = 0usize;
        let budget = usize::try_from(self.session.config.store.memory_budget).unwrap_or(usize::MAX);
        let mut over: Option<String> = None;
        let limit = plan
            .ask
            .concurrency
            .min(plan.route.server.spec.max_concurrency)
            .max(1);
        let mut running = tokio::task::JoinSet::new();
        let mut keys: HashMap<usize, String> = HashMap::new();
        let mut done: Vec<Done> = Vec::with_capacity(total);
        let mut next = 0;
        let mut stopped: Option<Stop> = None;
        let mut failed = false;
        let bindings: Vec<crate::types::events::Binding> =
            plan.bound.iter().map(|b| b.view.clone()).collect();
        loop {
            while stopped.is_none()
                && over.is_none()
                && !(failed && plan.ask.stop_on_error)
                && next < total
                && running.len() < limit
            {
                let i = next;
                next += 1;
                let key = format!("\"loom-each-{batch}-{i}\"");
                keys.insert(i, key.clone());
                let me = self.clone();
                let server = plan.route.server.clone();
                let logged = plan.calls[i].clone();
                let mut filled = logged.clone();
                if let Err(e) = crate::store::bind::apply(&mut filled, &plan.bound) {
                    done.push(Done {
                        index: i,
                        ended: Ended::Error,
                        result: None,
                        error: Some(e.to_string()),
                    });
                    continue;
                }
                let tool = plan.ask.tool.clone();
                let original = plan.route.original.clone();
                let bindings = bindings.clone();
                let inputs = plan.inputs.clone();
                running.spawn(async move {
                    let sub_id = jsonrpc::to_raw(&Value::String(format!("loom-each-{batch}-{i}")));
                    let mut logged_params = Map::new();
                    logged_params.insert("name".into(), Value::String(tool.clone()));
                    logged_params.insert("arguments".into(), logged.clone());
                    let mut track = me.begin_call(server.name(), &tool, &logged_params);
                    track.summary.via = Some(LoomTool::CallEach.name().to_owned());
                    track.summary.batch = Some(batch);
                    track.summary.bindings = bindings;
                    track.summary.inputs = inputs;
                    track.logged_args = Some(logged);
                    track.keep_raw = true;
                    let mut params = Map::new();
                    params.insert("name".into(), Value::String(original));
                    params.insert("arguments".into(), filled);
                    let reply = me
                        .forward(&sub_id, &server, "tools/call", params, Some(track))
                        .await;
                    (i, reply)
                });
            }
            if running.is_empty() {
                break;
            }
            tokio::select! {
                joined = running.join_next() => {
                    let Some(joined) = joined else { break };
                    let (i, reply) = match joined {
                        Ok(r) => r,
                        Err(e) => {
                            tracing::warn!("a call of batch {batch} failed inside loom: {e}");
                            continue;
                        }
                    };
                    keys.remove(&i);
                    held += reply.as_ref().map_or(0, |r| r.as_ref().map_or(0, String::len));
                    let d = ended(i, reply);
                    if held > budget && over.is_none() {
                        over = Some(format!(
                            "stopped after {} of {total} calls: their answers reached {} MiB, the most one batch holds (memory_budget); the rest were not called (narrow the query, or ask the tool for less)",
                            done.len() + 1,
                            budget >> 20
                        ));
                        self.cancel_flights(
                            &keys,
                            "the loom_call_each batch it belongs to reached its memory budget",
                        );
                    }
                    failed |= d.ended == Ended::Error;
                    done.push(d);
                    self.batch_progress(batch, done.len(), total, progress_token.as_ref());
                }
                stop = &mut *cancel_rx, if stopped.is_none() => {
                    let stop = stop.unwrap_or(Stop::Client("cancelled".into()));
                    self.cancel_flights(&keys, "the loom_call_each batch it belongs to was cancelled");
                    stopped = Some(stop);
                }
            }
        }
        for i in next..total {
            done.push(Done {
                index: i,
                ended: Ended::Skipped,
                result: None,
                error: None,
            });
        }
        done.sort_by_key(|d| d.index);
        (done, stopped, over)
    }

    /// Cancels every call of a batch still in flight (`keys`: their request keys), as its
    /// client would cancel it, saying `reason`.
    fn cancel_flights(&self, keys: &HashMap<usize, String>, reason: &str) {
        let mut flights = lock(&self.in_flight);
        for key in keys.values() {
            if let Some(f) = flights.remove(key) {
                let _ = f.cancel.send(Stop::Client(reason.into()));
            }
        }
    }

    /// Progress by calls: for the workbench always, for the client when it asked.
    fn batch_progress(&self, batch: u64, done: usize, total: usize, token: Option<&Value>) {
        let message = format!("{done} of {total} calls");
        self.session.bus.publish_passing(Event::CallProgress {
            call: batch,
            progress: done as f64,
            total: Some(total as f64),
            message: Some(message.clone()),
        });
        if let Some(token) = token {
            let p = json!({ "progressToken": token, "progress": done, "total": total, "message": message });
            self.send(jsonrpc::notification(
                "notifications/progress",
                Some(&jsonrpc::to_raw(&p)),
            ));
        }
    }

    /// The batch's dataset and the envelope the model reads, or why there is none.
    async fn batch_answer(
        &self,
        plan: &Plan,
        batch: u64,
        done: Vec<Done>,
        cancelled: bool,
        over: Option<String>,
    ) -> Result<(Value, String), String> {
        let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
        for d in &done {
            *counts.entry(d.ended.as_str()).or_default() += 1;
        }
        let errors: Vec<Value> = done
            .iter()
            .filter(|d| d.ended == Ended::Error)
            .take(ERRORS_SHOWN)
            .map(|d| json!({ "call": d.index + 1, "arguments": plan.calls[d.index], "error": d.error }))
            .collect();
        if plan.calls.is_empty() {
            return Ok((
                json!({
                    "content": [{ "type": "text", "text": format!("The query returned no rows: {} was not called.", plan.ask.tool) }],
                    "structuredContent": { "calls": 0, "outcomes": {} },
                }),
                String::new(),
            ))
            .map(|(v, _)| (v, String::new()));
        }
        let store = self.store().await?;
        let threshold = self.session.config.token_threshold as usize;
        let server = plan.route.server.clone();
        let provenance_args = (!server
            .spec
            .provenance_denylist
            .matches(&plan.route.original))
        .then(|| {
            crate::intercept::redact::redact(&json!({
                "sql": plan.ask.sql,
                "arguments": plan.ask.base,
                "bind": plan.ask.bind,
            }))
        });
        let provenance = crate::store::Provenance {
            server: server.name().to_owned(),
            tool: plan.route.original.clone(),
            arguments: provenance_args,
            at: crate::store::now_iso(),
            rung: "loom_call_each".into(),
        };
        let lineage = crate::types::data::Lineage {
            call: Some(batch),
            inputs: plan.inputs.clone(),
            sql: Some(plan.ask.sql.clone()),
        };
        let columns = plan.columns.clone();
        let rows = plan.rows.clone();
        let budget = store.config().envelope_budget;
        let tool = plan.ask.tool.clone();
        let total = plan.calls.len();
        let counts_json = json!(counts);
        let errors_json = Value::Array(errors);
        tokio::task::spawn_blocking(move || {
            let records = batch_records(&store, &columns, &rows, done, threshold, batch);
            let table = Table::from_records(records, Tier::Json, Map::new(), "loom_call_each")
                .ok_or("the results could not be put in a table")?;
            let meta = store
                .ingest_traced(&table, provenance, lineage)
                .map_err(|e| format!("the results could not be stored: {e}"))?;
            let profile = store
                .profile(&meta.dataset_ref, 5)
                .map_err(|e| format!("the results could not be profiled: {e}"))?;
            let (mut envelope, _) = crate::store::envelope::render(&meta, &profile, budget, None);
            let summary = format!(
                "{total} call(s) of {tool}{}: {}. One dataset `{}` holds every result: call (1-based), the input row's columns, outcome, error, then the result's own columns (a table result is one row per result row).{}",
                match (&over, cancelled) {
                    (Some(why), _) => format!(", {why}"),
                    (None, true) => ", cancelled midway".to_owned(),
                    (None, false) => String::new(),
                },
                counts.iter().map(|(k, v)| format!("{v} {k}")).collect::<Vec<_>>().join(", "),
                meta.dataset_ref,
                if errors_json.as_array().is_some_and(|e| !e.is_empty()) {
                    format!(" First errors: {errors_json}")
                } else {
                    String::new()
                }
            );
            if let Some(Value::Array(content)) = envelope.get_mut("content") {
                content.insert(0, json!({ "type": "text", "text": summary }));
            }
            if let Some(Value::Object(s)) = envelope.get_mut("structuredContent") {
                s.insert(
                    "batch".into(),
                    json!({ "call": batch, "calls": total, "outcomes": counts_json, "first_errors": errors_json, "cancelled": cancelled, "stopped": over }),
                );
            }
            Ok((envelope, meta.dataset_ref))
        })
        .await
        .map_err(|e| format!("the results could not be gathered inside loom: {e}"))?
    }
}

/// A batch ready to run.
struct Plan {
    ask: Ask,
    route: crate::downstream::Route,
    /// The driving query's columns and rows.
    columns: Vec<(String, String)>,
    rows: Vec<Value>,
    /// Each call's arguments as logged, without bound data: the bound values are put in as
    /// each call is sent.
    calls: Vec<Value>,
    bound: Vec<Bound>,
    /// What the batch read: the query's datasets and the bindings' sources.
    inputs: Vec<String>,
}

/// How a sub-call's reply ended.
fn ended(index: usize, reply: Result<Option<String>, RpcError>) -> Done {
    let fail = |error: String| Done {
        index,
        ended: Ended::Error,
        result: None,
        error: Some(error),
    };
    let line = match reply {
        Ok(Some(line)) => line,
        Ok(None) => {
            return Done {
                index,
                ended: Ended::Cancelled,
                result: None,
                error: None,
            };
        }
        Err(e) => return fail(e.message.to_string()),
    };
    let Ok(mut v) = serde_json::from_str::<Value>(&line) else {
        return fail("the server's answer was not JSON".into());
    };
    if let Some(e) = v.get("error") {
        return fail(
            e.get("message")
                .and_then(Value::as_str)
                .map_or_else(|| e.to_string(), str::to_owned),
        );
    }
    let result = v.get_mut("result").map(Value::take).unwrap_or(Value::Null);
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let text = text_blocks(&result).join("\n");
        if text == CANCELLED_BY_PERSON {
            return Done {
                index,
                ended: Ended::Cancelled,
                result: None,
                error: Some(text),
            };
        }
        return fail(text);
    }
    Done {
        index,
        ended: Ended::Ok,
        result: Some(result),
        error: None,
    }
}

/// The text of a result's text blocks.
fn text_blocks(result: &Value) -> Vec<String> {
    result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The rows a result adds to the batch's dataset: a table's rows (with the scalars that wrapped
/// them), a single object as one row, or its text.
enum Found {
    Rows(Vec<Map<String, Value>>),
    Text(String),
    Nothing,
}

fn found_in(result: &Value) -> Found {
    let texts = text_blocks(result);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let structured = result.get("structuredContent").filter(|s| !s.is_null());
    if let Some(found) = crate::intercept::extract::find_rows(structured, &refs) {
        let context = found.context().clone();
        if let Some(table) = found.into_table() {
            return Found::Rows(table_records(&table, &context));
        }
    }
    // One object (structured, or the whole text as JSON) is one row.
    let object = structured.cloned().or_else(|| {
        (refs.len() == 1)
            .then(|| serde_json::from_str::<Value>(refs[0]).ok())
            .flatten()
    });
    if let Some(Value::Object(o)) = object {
        // Flattened with the rows, as a table's objects are: kept whole beside their members.
        return Found::Rows(vec![o]);
    }
    if texts.is_empty() {
        Found::Nothing
    } else {
        Found::Text(texts.join("\n\n"))
    }
}

/// A typed table back as records, cell by cell (exact: numbers keep their digits), with the
/// scalars that wrapped its rows in every record.
fn table_records(table: &Table, context: &Map<String, Value>) -> Vec<Map<String, Value>> {
    use crate::intercept::table::{Cell, ColumnType};
    let flat_context: Vec<(String, Value)> = crate::intercept::table::flatten(context.clone());
    (0..table.rows())
        .map(|r| {
            let mut m: Map<String, Value> = flat_context.iter().cloned().collect();
            // A view's values are in the object it views, which the batch's table flattens again.
            for (c, col) in table.columns.iter().enumerate() {
                if col.view_of.is_some() {
                    continue;
                }
                let v = match table.cell(r, c) {
                    Cell::Null => Value::Null,
                    Cell::Bool(b) => Value::Bool(b),
                    Cell::Int(n) => json!(n),
                    Cell::UInt(n) => json!(n),
                    Cell::Huge(n) => serde_json::from_str(&n.to_string()).unwrap_or(Value::Null),
                    Cell::Double(f) => json!(f),
                    Cell::Text(t) if matches!(col.ty, ColumnType::Decimal { .. }) => {
                        serde_json::from_str(&t).unwrap_or(Value::String(t.into_owned()))
                    }
                    Cell::Text(t) if col.ty == ColumnType::Json => {
                        serde_json::from_str(&t).unwrap_or(Value::String(t.into_owned()))
                    }
                    Cell::Text(t) => Value::String(t.into_owned()),
                };
                m.insert(col.name.clone(), v);
            }
            m
        })
        .collect()
}

/// The batch's rows: per call, `call`, the input row's columns, `outcome`, `error`, then the
/// result's own columns (renamed `result_<name>` where an input column has the name), or its
/// text (`text`, or `text_blob` when it is large enough to be parked).
fn batch_records(
    store: &Store,
    columns: &[(String, String)],
    rows: &[Value],
    done: Vec<Done>,
    threshold: usize,
    batch: u64,
) -> Vec<Map<String, Value>> {
    let taken: HashSet<&str> = columns
        .iter()
        .map(|(n, _)| n.as_str())
        .chain(["call", "outcome", "error", "text", "text_blob"])
        .collect();
    let mut out = Vec::new();
    for d in done {
        let mut head = Map::new();
        head.insert("call".into(), json!(d.index + 1));
        if let Some(Value::Object(row)) = rows.get(d.index) {
            for (n, _) in columns {
                head.insert(n.clone(), row.get(n).cloned().unwrap_or(Value::Null));
            }
        }
        head.insert("outcome".into(), json!(d.ended.as_str()));
        head.insert(
            "error".into(),
            d.error.clone().map_or(Value::Null, Value::String),
        );
        let found = d.result.as_ref().map_or(Found::Nothing, found_in);
        match found {
            Found::Rows(records) if !records.is_empty() => {
                for rec in records {
                    let mut m = head.clone();
                    for (k, v) in rec {
                        let k = if taken.contains(k.as_str()) {
                            format!("result_{k}")
                        } else {
                            k
                        };
                        m.insert(k, v);
                    }
                    out.push(m);
                }
            }
            Found::Text(text) => {
                let mut m = head;
                if crate::intercept::tokens::estimate(&text) >= threshold {
                    let summary = format!(
                        "call {} of batch {batch}: {}",
                        d.index + 1,
                        crate::store::blobs::first_lines(&text)
                    );
                    let blob = store.park_traced(
                        text,
                        summary,
                        "text/plain".into(),
                        crate::store::blobs::DEFAULT_TTL,
                        crate::types::data::Lineage {
                            call: Some(batch),
                            ..Default::default()
                        },
                    );
                    m.insert("text_blob".into(), Value::String(blob.key.clone()));
                } else {
                    m.insert("text".into(), Value::String(text));
                }
                out.push(m);
            }
            _ => out.push(head),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names of the batch table's columns built from one result's rows.
    fn batch_columns(result: Value) -> Vec<String> {
        let Found::Rows(records) = found_in(&result) else {
            panic!("no rows in {result}");
        };
        Table::from_records(records, Tier::Json, Map::new(), "loom_call_each")
            .expect("a table")
            .columns
            .into_iter()
            .map(|c| c.name)
            .collect()
    }

    #[test]
    fn a_results_objects_are_flattened_once_in_the_batch() {
        let rows = r#"[{"id": 1, "meta": {"a": 1}}, {"id": 2, "meta": null}]"#;
        let table = json!({ "content": [{ "type": "text", "text": rows }] });
        assert_eq!(batch_columns(table), ["id", "meta", "meta.a"]);
        let one =
            json!({ "content": [{ "type": "text", "text": r#"{"id": 1, "meta": {"a": 1}}"# }] });
        assert_eq!(batch_columns(one), ["id", "meta", "meta.a"]);
    }
}
