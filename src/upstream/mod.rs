//! The merged surface served to one MCP client: the handshake of either era, routing of every
//! request to the server behind an exposed name or URI, progress tokens and cancellations
//! mapped both ways, and server-to-client requests relayed when the client can take them.
//! Results that loom does not change are spliced back verbatim.

pub mod stdio;
pub mod tools;

use crate::config::Config;
use crate::downstream::connection::{Reply, lock};
use crate::downstream::{EventSink, Fleet, FleetEvent, ListKind, ServerHandle};
use crate::jsonrpc::{self, Kind, RawMessage, code};
use crate::protocol::{self, ClientCapabilities, Era};
use crate::session::{Event, EventBus, StoreSlot};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{Notify, OnceCell, mpsc, oneshot};
use tokio::time::Instant;

struct InFlight {
    cancel: oneshot::Sender<String>,
}

struct ProgressRoute {
    upstream_token: Value,
    notify: Arc<Notify>,
}

struct RelayedRequest {
    conn: Arc<crate::downstream::connection::Connection>,
    downstream_id: Box<RawValue>,
}

/// One upstream MCP client and everything loom tracks for it.
pub struct ClientSession {
    config: Arc<Config>,
    bus: EventBus,
    out: mpsc::UnboundedSender<String>,
    fleet: OnceCell<Arc<Fleet>>,
    caps: Mutex<ClientCapabilities>,
    era: Mutex<Option<Era>>,
    in_flight: Mutex<HashMap<String, InFlight>>,
    progress: Mutex<HashMap<String, ProgressRoute>>,
    relayed: Mutex<HashMap<String, RelayedRequest>>,
    next_id: AtomicU64,
    log_level: Mutex<Option<String>>,
    store: Arc<StoreSlot>,
    memories: Arc<crate::store::memories::Memories>,
}

/// The key an id is tracked under: its canonical JSON text.
fn id_key(id: &RawValue) -> String {
    serde_json::from_str::<Value>(id.get())
        .map(|v| v.to_string())
        .unwrap_or_else(|_| id.get().to_owned())
}

/// Runs one of loom's own tools off the async threads; failures become `isError` results.
async fn run_blocking(
    name: &'static str,
    f: impl FnOnce() -> Result<Value, String> + Send + 'static,
) -> Box<RawValue> {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(v)) => jsonrpc::to_raw(&v),
        Ok(Err(msg)) => tool_error(&msg),
        Err(e) => tool_error(&format!("{name} failed inside loom: {e}")),
    }
}

fn tool_error(message: &str) -> Box<RawValue> {
    jsonrpc::to_raw(&json!({ "content": [{ "type": "text", "text": message }], "isError": true }))
}

fn object(params: Option<&RawValue>) -> Result<Map<String, Value>, String> {
    match params {
        None => Ok(Map::new()),
        Some(p) => match serde_json::from_str::<Value>(p.get()) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err("params must be an object".into()),
            Err(e) => Err(format!("params are not valid JSON: {e}")),
        },
    }
}

impl ClientSession {
    pub fn new(
        config: Arc<Config>,
        bus: EventBus,
        out: mpsc::UnboundedSender<String>,
        store: Arc<StoreSlot>,
        memories: Arc<crate::store::memories::Memories>,
    ) -> Arc<ClientSession> {
        Arc::new(ClientSession {
            config,
            bus,
            out,
            fleet: OnceCell::new(),
            caps: Mutex::new(ClientCapabilities::default()),
            era: Mutex::new(None),
            in_flight: Mutex::new(HashMap::new()),
            progress: Mutex::new(HashMap::new()),
            relayed: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            log_level: Mutex::new(None),
            store,
            memories,
        })
    }

    fn send(&self, line: String) {
        let _ = self.out.send(line);
    }

    pub fn fleet(&self) -> Option<&Arc<Fleet>> {
        self.fleet.get()
    }

    /// Starts the downstream servers once, declaring the capabilities this client declared.
    async fn ensure_fleet(self: &Arc<Self>) -> Arc<Fleet> {
        self.fleet
            .get_or_init(|| async {
                let caps = lock(&self.caps).clone();
                let me = Arc::downgrade(self);
                let sink: EventSink = Arc::new(move |ev| {
                    if let Some(me) = me.upgrade() {
                        me.on_fleet_event(ev);
                    }
                });
                Fleet::start(self.config.clone(), caps, self.bus.clone(), sink)
            })
            .await
            .clone()
    }

    /// Pinned memories and the datasets so far, within the primer's budget.
    fn primer(&self) -> String {
        let pinned = self.memories.pinned();
        let datasets: Vec<(String, u64)> = self
            .store
            .try_get()
            .map(|s| {
                s.datasets()
                    .into_iter()
                    .map(|d| (d.dataset_ref, d.rows))
                    .collect()
            })
            .unwrap_or_default();
        crate::store::memories::primer(&pinned, &datasets, PRIMER_BUDGET)
    }

    /// The fleet, once its startup naming round is done (at most `startup_grace`).
    async fn ready_fleet(self: &Arc<Self>) -> Arc<Fleet> {
        let fleet = self.ensure_fleet().await;
        fleet.wait_startup().await;
        fleet
    }

    /// Handles one line from the client.
    pub async fn handle_line(self: &Arc<Self>, bytes: &[u8]) {
        let msg = match RawMessage::parse(bytes) {
            Ok(m) => m,
            Err(e) => {
                let null = jsonrpc::raw_null();
                self.send(jsonrpc::error_response(
                    &null,
                    code::PARSE_ERROR,
                    &format!("parse error: {e}"),
                    None,
                ));
                return;
            }
        };
        match msg.kind() {
            Kind::Request => {
                let me = self.clone();
                tokio::spawn(async move { me.handle_request(msg).await });
            }
            Kind::Notification => self.handle_notification(msg).await,
            Kind::Response => self.handle_response(msg),
            Kind::Invalid(why) => {
                let id = msg
                    .id
                    .filter(|i| i.get() != "null")
                    .unwrap_or_else(jsonrpc::raw_null);
                self.send(jsonrpc::error_response(
                    &id,
                    code::INVALID_REQUEST,
                    &format!("invalid request: {why}"),
                    None,
                ));
            }
        }
    }

    pub fn handle_oversize(&self, prefix: &[u8], len: usize) {
        let id = jsonrpc::sniff_numeric_id(prefix)
            .map(|n| jsonrpc::to_raw(&n))
            .unwrap_or_else(jsonrpc::raw_null);
        let limit = self.config.max_message_bytes;
        self.send(jsonrpc::error_response(
            &id,
            code::INVALID_REQUEST,
            &format!("message of {len} bytes exceeds the {limit}-byte limit (max_message_bytes)"),
            Some(json!({ "size": len, "limit": limit })),
        ));
    }

    async fn handle_request(self: Arc<Self>, msg: RawMessage) {
        let (Some(id), Some(method)) = (msg.id, msg.method) else {
            return;
        };
        let reply = match self.dispatch(&id, &method, msg.params.as_deref()).await {
            Ok(Some(line)) => line,
            Ok(None) => return,
            Err((code, message, data)) => jsonrpc::error_response(&id, code, &message, data),
        };
        self.send(reply);
    }

    /// Checks the per-request `_meta` of a 2026-07-28 request.
    fn check_modern_meta(&self, params: &Map<String, Value>) -> Result<(), RpcError> {
        let Some(meta) = params.get("_meta").and_then(Value::as_object) else {
            return Ok(());
        };
        let Some(version) = meta.get(protocol::META_PROTOCOL_VERSION) else {
            return Ok(());
        };
        let requested = version.as_str().unwrap_or_default();
        if requested != protocol::V_2026_07_28 {
            return Err((
                protocol::UNSUPPORTED_PROTOCOL_VERSION,
                format!("unsupported protocol version \"{requested}\""),
                Some(json!({ "supported": [protocol::V_2026_07_28], "requested": version })),
            ));
        }
        let mut era = lock(&self.era);
        if era.is_none() {
            *era = Some(Era::Modern);
            *lock(&self.caps) =
                ClientCapabilities::from_value(meta.get(protocol::META_CLIENT_CAPABILITIES));
        }
        if let Some(level) = meta.get(protocol::META_LOG_LEVEL).and_then(Value::as_str) {
            *lock(&self.log_level) = Some(level.to_owned());
        }
        Ok(())
    }

    fn is_modern(&self) -> bool {
        *lock(&self.era) == Some(Era::Modern)
    }

    /// Adds what a 2026-07-28 client expects on results loom builds itself.
    fn finish_result(&self, mut result: Map<String, Value>, cacheable: bool) -> Box<RawValue> {
        if self.is_modern() {
            result.insert("resultType".into(), json!("complete"));
            if cacheable {
                result.insert("ttlMs".into(), json!(0));
                result.insert("cacheScope".into(), json!("private"));
            }
        }
        jsonrpc::to_raw(&result)
    }

    fn our_capabilities() -> Value {
        json!({
            "tools": { "listChanged": true },
            "prompts": { "listChanged": true },
            "resources": { "subscribe": true, "listChanged": true },
            "logging": {},
            "completions": {},
        })
    }

    async fn dispatch(
        self: &Arc<Self>,
        id: &RawValue,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<Option<String>, RpcError> {
        let params = object(params).map_err(|e| (code::INVALID_PARAMS, e, None))?;
        if method != "initialize" {
            self.check_modern_meta(&params)?;
        }
        let ok = |result: Box<RawValue>| Ok(Some(jsonrpc::response(id, &result)));
        match method {
            "initialize" => {
                let requested = params.get("protocolVersion").and_then(Value::as_str);
                let version = protocol::negotiate_initialize(requested);
                *lock(&self.era) = Some(Era::Legacy);
                *lock(&self.caps) = ClientCapabilities::from_value(params.get("capabilities"));
                let result = json!({
                    "protocolVersion": version,
                    "capabilities": Self::our_capabilities(),
                    "serverInfo": crate::downstream::connection::client_info(),
                    "instructions": self.primer(),
                });
                let line = jsonrpc::response(id, &jsonrpc::to_raw(&result));
                // Answer first: starting the servers must never delay the handshake.
                self.send(line);
                self.ensure_fleet().await;
                Ok(None)
            }
            "server/discover" => {
                let mut result = Map::new();
                result.insert(
                    "supportedVersions".into(),
                    json!(protocol::SUPPORTED_VERSIONS),
                );
                result.insert("capabilities".into(), Self::our_capabilities());
                result.insert("instructions".into(), json!(self.primer()));
                result.insert("_meta".into(), json!({ protocol::META_SERVER_INFO: crate::downstream::connection::client_info() }));
                let line = jsonrpc::response(id, &self.finish_result(result, true));
                self.send(line);
                self.ensure_fleet().await;
                Ok(None)
            }
            "ping" => ok(jsonrpc::to_raw(&json!({}))),
            "logging/setLevel" => {
                let level = params
                    .get("level")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if protocol::log_level_rank(level).is_none() {
                    return Err((
                        code::INVALID_PARAMS,
                        format!(
                            "unknown log level \"{level}\"; use one of {}",
                            protocol::LOG_LEVELS.join(", ")
                        ),
                        None,
                    ));
                }
                *lock(&self.log_level) = Some(level.to_owned());
                self.ensure_fleet().await.set_log_level(level);
                ok(jsonrpc::to_raw(&json!({})))
            }
            "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
                if params.get("cursor").is_some() {
                    return Err((
                        code::INVALID_PARAMS,
                        "invalid cursor: loom returns the whole list in one page".into(),
                        None,
                    ));
                }
                let fleet = self.ready_fleet().await;
                let (key, items) = match method {
                    "tools/list" => ("tools", {
                        let mut all = fleet.tools();
                        all.extend(tools::definitions());
                        all
                    }),
                    "prompts/list" => ("prompts", {
                        let mut all = fleet.prompts();
                        all.push(json!({ "name": "loom", "title": "Loom primer", "description": "Pinned memories and this session's datasets: what to know before starting." }));
                        all
                    }),
                    "resources/list" => ("resources", {
                        let mut all = fleet.resources();
                        all.push(json!({ "uri": PRIMER_URI, "name": "primer", "title": "Loom primer", "mimeType": "text/markdown" }));
                        all
                    }),
                    _ => ("resourceTemplates", fleet.resource_templates()),
                };
                let mut result = Map::new();
                result.insert(key.into(), Value::Array(items));
                ok(self.finish_result(result, true))
            }
            "tools/call" => self.call_tool(id, params).await,
            "prompts/get" if params.get("name").and_then(Value::as_str) == Some("loom") => {
                let result = json!({
                    "description": "Loom primer",
                    "messages": [{ "role": "user", "content": { "type": "text", "text": self.primer() } }],
                });
                let Value::Object(result) = result else {
                    unreachable!("json! object")
                };
                ok(self.finish_result(result, false))
            }
            "resources/read" if params.get("uri").and_then(Value::as_str) == Some(PRIMER_URI) => {
                let result = json!({ "contents": [{ "uri": PRIMER_URI, "mimeType": "text/markdown", "text": self.primer() }] });
                let Value::Object(result) = result else {
                    unreachable!("json! object")
                };
                ok(self.finish_result(result, true))
            }
            "prompts/get" => {
                let fleet = self.ready_fleet().await;
                let name = params
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let route = fleet.route_prompt(&name).ok_or_else(|| {
                    (
                        code::INVALID_PARAMS,
                        format!("unknown prompt \"{name}\""),
                        None,
                    )
                })?;
                let mut params = params;
                params.insert("name".into(), Value::String(route.original.clone()));
                self.forward(id, &route.server, method, params).await
            }
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
                let fleet = self.ready_fleet().await;
                let uri = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let Some(server) = fleet.route_resource(&uri) else {
                    let code = if self.is_modern() {
                        code::INVALID_PARAMS
                    } else {
                        -32002
                    };
                    return Err((
                        code,
                        format!("resource not found: {uri}"),
                        Some(json!({ "uri": uri })),
                    ));
                };
                self.forward(id, &server, method, params).await
            }
            "completion/complete" => {
                let fleet = self.ready_fleet().await;
                let mut params = params;
                let reference = params.get("ref").cloned().unwrap_or(Value::Null);
                let server = match reference["type"].as_str() {
                    Some("ref/prompt") => {
                        let name = reference["name"].as_str().unwrap_or_default();
                        let route = fleet.route_prompt(name).ok_or_else(|| {
                            (
                                code::INVALID_PARAMS,
                                format!("unknown prompt \"{name}\""),
                                None,
                            )
                        })?;
                        params["ref"]["name"] = Value::String(route.original.clone());
                        route.server
                    }
                    Some("ref/resource") => {
                        let uri = reference["uri"].as_str().unwrap_or_default();
                        fleet.route_resource(uri).ok_or_else(|| {
                            (
                                code::INVALID_PARAMS,
                                format!("no server offers resource template {uri}"),
                                None,
                            )
                        })?
                    }
                    _ => {
                        return Err((
                            code::INVALID_PARAMS,
                            "ref.type must be \"ref/prompt\" or \"ref/resource\"".into(),
                            None,
                        ));
                    }
                };
                self.forward(id, &server, method, params).await
            }
            _ => Err((
                code::METHOD_NOT_FOUND,
                format!("method not found: {method}"),
                None,
            )),
        }
    }

    async fn call_tool(
        self: &Arc<Self>,
        id: &RawValue,
        params: Map<String, Value>,
    ) -> Result<Option<String>, RpcError> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if let Some(spec) = tools::spec(&name) {
            let args = params
                .get("arguments")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let result = match tools::validate(spec, &args) {
                Err(msg) => tool_error(&msg),
                Ok(()) if spec.name.starts_with("loom_memory_") => {
                    let mem = self.memories.clone();
                    run_blocking(spec.name, move || tools::run_memory(&mem, spec.name, &args)).await
                }
                Ok(()) => match self.store.get().await {
                    Err(e) => tool_error(&format!("the dataset store is not available: {e}")),
                    Ok(store) => {
                        run_blocking(spec.name, move || tools::run(&store, spec.name, &args)).await
                    }
                },
            };
            let result = if self.is_modern() {
                with_result_type(result)
            } else {
                result
            };
            return Ok(Some(jsonrpc::response(id, &result)));
        }
        let fleet = self.ready_fleet().await;
        let route = fleet.route_tool(&name).ok_or_else(|| {
            (
                code::INVALID_PARAMS,
                format!("unknown tool \"{name}\""),
                None,
            )
        })?;
        let mut params = params;
        params.insert("name".into(), Value::String(route.original.clone()));
        self.forward(id, &route.server, "tools/call", params).await
    }

    /// Sends a request to `server` and relays its answer, mapping progress and cancellation.
    async fn forward(
        self: &Arc<Self>,
        id: &RawValue,
        server: &Arc<ServerHandle>,
        method: &str,
        mut params: Map<String, Value>,
    ) -> Result<Option<String>, RpcError> {
        let is_call = method == "tools/call";
        let tool = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let call_no = self.next_id.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        if is_call {
            self.bus.publish(Event::CallStarted {
                call: call_no,
                server: server.name().into(),
                tool: tool.clone(),
            });
        }
        let finish = |outcome: &str, bytes: usize| {
            if is_call {
                self.bus.publish(Event::CallFinished {
                    call: call_no,
                    server: server.name().into(),
                    tool: tool.clone(),
                    outcome: outcome.into(),
                    millis: started.elapsed().as_millis() as u64,
                    bytes,
                });
            }
        };
        let lost = |why: String| -> Result<Option<String>, RpcError> {
            if is_call {
                Ok(Some(jsonrpc::response(id, &tool_error(&why))))
            } else {
                Err((code::INTERNAL_ERROR, why, None))
            }
        };
        let conn = match server.connection() {
            Ok(c) => c,
            Err(why) => {
                finish("error", 0);
                return lost(why);
            }
        };
        let notify = Arc::new(Notify::new());
        let mut token_key = None;
        if let Some(Value::Object(meta)) = params.get_mut("_meta")
            && let Some(up) = meta.get("progressToken").cloned()
        {
            let down = format!("loom-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
            meta.insert("progressToken".into(), Value::String(down.clone()));
            let key = Value::String(down).to_string();
            lock(&self.progress).insert(
                key.clone(),
                ProgressRoute {
                    upstream_token: up,
                    notify: notify.clone(),
                },
            );
            token_key = Some(key);
        }
        let call_args = params.get("arguments").cloned();
        let up_key = id_key(id);
        let (cancel_tx, mut cancel_rx) = oneshot::channel();
        lock(&self.in_flight).insert(up_key.clone(), InFlight { cancel: cancel_tx });
        let (down_id, mut rx) = conn.send_request(method, Some(params));
        let timeout = server.spec.call_timeout;
        let mut deadline = Instant::now() + timeout;
        let outcome = loop {
            tokio::select! {
                reply = &mut rx => break Some(reply.unwrap_or(Reply::Lost("connection dropped".into()))),
                _ = notify.notified() => deadline = Instant::now() + timeout,
                _ = tokio::time::sleep_until(deadline) => {
                    conn.cancel(down_id, "timed out in loom");
                    break Some(Reply::Lost(format!("no answer within {:.0}s (call_timeout of server `{}`)", timeout.as_secs_f64(), server.name())));
                }
                reason = &mut cancel_rx => {
                    conn.cancel(down_id, &reason.unwrap_or_else(|_| "cancelled".into()));
                    break None;
                }
            }
        };
        lock(&self.in_flight).remove(&up_key);
        if let Some(k) = token_key {
            lock(&self.progress).remove(&k);
        }
        match outcome {
            None => {
                finish("cancelled", 0);
                Ok(None)
            }
            Some(Reply::Result(raw)) => {
                let (raw, dataset) = if is_call && (server.spec.intercept || server.spec.park) {
                    self.intercept(raw, server, &tool, call_args).await
                } else {
                    (raw, None)
                };
                let raw = if self.is_modern() {
                    with_result_type(raw)
                } else {
                    raw
                };
                let outcome = match dataset {
                    Some(r) => r,
                    None if is_call && raw.get().contains("\"isError\":true") => "error".into(),
                    None => "passed".into(),
                };
                finish(&outcome, raw.get().len());
                Ok(Some(jsonrpc::response(id, &raw)))
            }
            Some(Reply::Error(raw)) => {
                finish("error", raw.get().len());
                Ok(Some(jsonrpc::error_response_raw(id, &raw)))
            }
            Some(Reply::Lost(why)) => {
                finish("error", 0);
                lost(format!(
                    "server `{}` failed during {method}: {why}",
                    server.name()
                ))
            }
        }
    }

    /// Turns a large tabular result into a dataset and answers with its envelope; anything
    /// that fails or does not pay off forwards the original untouched.
    async fn intercept(
        &self,
        raw: Box<RawValue>,
        server: &Arc<ServerHandle>,
        tool: &str,
        arguments: Option<Value>,
    ) -> (Box<RawValue>, Option<String>) {
        // Cheap check first: small results never wait for the store.
        let threshold = self.config.token_threshold as usize;
        if raw.get().len() < threshold {
            return (raw, None);
        }
        let Ok(store) = self.store.get().await else {
            return (raw, None);
        };
        let denied = server
            .spec
            .provenance_denylist
            .iter()
            .any(|g| crate::config::glob_match(g, tool));
        let provenance_args = if denied {
            None
        } else {
            arguments.map(|a| crate::intercept::redact::redact(&a))
        };
        let server_name = server.name().to_owned();
        let intercept_tables = server.spec.intercept;
        let park_text = server.spec.park
            && !server
                .spec
                .park_never
                .iter()
                .any(|g| crate::config::glob_match(g, tool));
        let tool_name = tool.to_owned();
        let tool = tool.to_owned();
        let original = raw.clone();
        let work = tokio::task::spawn_blocking(move || -> Option<(Box<RawValue>, String)> {
            let (mut table, tokens) = match crate::intercept::decide(&raw, threshold) {
                crate::intercept::Decision::Table { table, tokens } if intercept_tables => {
                    (table, tokens)
                }
                crate::intercept::Decision::Text { text, tokens } if park_text => {
                    let content_type = if serde_json::from_str::<Value>(&text).is_ok() {
                        "application/json"
                    } else {
                        "text/plain"
                    };
                    let summary = format!(
                        "{server_name}/{tool}: {}",
                        crate::store::blobs::first_lines(&text)
                    );
                    let blob = store.blobs.park(
                        text,
                        summary,
                        content_type.into(),
                        crate::store::blobs::DEFAULT_TTL,
                    );
                    let pointer = crate::store::blobs::pointer(&blob, Some(tokens));
                    let pointer_tokens = crate::intercept::tokens::estimate(&pointer.to_string());
                    return (pointer_tokens < tokens)
                        .then(|| (jsonrpc::to_raw(&pointer), format!("parked:{}", blob.key)));
                }
                _ => return None,
            };
            if let Value::Object(context) =
                crate::intercept::redact::redact(&Value::Object(std::mem::take(&mut table.context)))
            {
                table.context = context;
            }
            let provenance = crate::store::Provenance {
                server: server_name,
                tool,
                arguments: provenance_args,
                at: crate::store::now_iso(),
                rung: table.rung.to_owned(),
            };
            let meta = match store.ingest(&table, provenance) {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!("ingest failed, passing the result through: {e}");
                    return None;
                }
            };
            let envelope = store.profile(&meta.dataset_ref, 5).map(|p| {
                crate::store::envelope::render(
                    &meta,
                    &p,
                    store.config().envelope_budget,
                    Some(tokens),
                )
            });
            match envelope {
                Ok((env, env_tokens)) if env_tokens < tokens => Some((
                    jsonrpc::to_raw(&env),
                    format!("intercepted:{}", meta.dataset_ref),
                )),
                other => {
                    if let Err(e) = other {
                        tracing::warn!("profiling failed, passing the result through: {e}");
                    }
                    let _ = store.drop_dataset(&meta.dataset_ref);
                    None
                }
            }
        });
        match work.await {
            Ok(Some((env, r))) => {
                if let Some(dataset) = r.strip_prefix("intercepted:") {
                    let rows = serde_json::from_str::<Value>(env.get())
                        .ok()
                        .and_then(|v| v["structuredContent"]["rows"].as_u64())
                        .unwrap_or(0);
                    self.bus.publish(Event::DatasetCreated {
                        dataset: dataset.to_owned(),
                        rows,
                        server: server.name().to_owned(),
                        tool: tool_name,
                    });
                }
                (env, Some(r))
            }
            _ => (original, None),
        }
    }

    async fn handle_notification(self: &Arc<Self>, msg: RawMessage) {
        let method = msg.method.unwrap_or_default();
        match method.as_str() {
            "notifications/cancelled" => {
                let Ok(p) = object(msg.params.as_deref()) else {
                    return;
                };
                let Some(req) = p.get("requestId") else {
                    return;
                };
                let reason = p
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or("cancelled by the client")
                    .to_owned();
                if let Some(f) = lock(&self.in_flight).remove(&req.to_string()) {
                    let _ = f.cancel.send(reason);
                }
            }
            "notifications/roots/list_changed" => {
                if let Some(fleet) = self.fleet() {
                    for c in fleet.connections() {
                        if c.era() == Era::Legacy {
                            c.notify(&method, None);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn handle_response(&self, msg: RawMessage) {
        let Some(id) = msg.id else { return };
        let Some(relay) = lock(&self.relayed).remove(&id_key(&id)) else {
            return;
        };
        match (msg.result, msg.error) {
            (Some(r), _) => relay.conn.respond(&relay.downstream_id, Ok(&r)),
            (None, Some(e)) => relay.conn.respond(&relay.downstream_id, Err(&e)),
            _ => {}
        }
    }

    /// Called synchronously, in order, for what the servers send.
    fn on_fleet_event(&self, ev: FleetEvent) {
        match ev {
            FleetEvent::ListChanged(kind) => {
                if self.is_modern() {
                    return;
                }
                let method = match kind {
                    ListKind::Tools => "notifications/tools/list_changed",
                    ListKind::Prompts => "notifications/prompts/list_changed",
                    ListKind::Resources => "notifications/resources/list_changed",
                };
                self.send(jsonrpc::notification(method, None));
            }
            FleetEvent::Notification {
                server,
                method,
                params,
            } => self.relay_notification(&server, &method, params),
            FleetEvent::ServerRequest {
                conn,
                id,
                method,
                params,
            } => {
                let needed = protocol::capability_for_server_request(&method);
                let allowed = needed.is_some_and(|cap| lock(&self.caps).has(cap));
                if !allowed {
                    let why = match needed {
                        Some(cap) => format!(
                            "the client connected to loom does not support {cap} ({method})"
                        ),
                        None => format!("loom does not relay {method}"),
                    };
                    let err =
                        jsonrpc::to_raw(&json!({ "code": code::METHOD_NOT_FOUND, "message": why }));
                    conn.respond(&id, Err(&err));
                    return;
                }
                let ours = jsonrpc::to_raw(&format!(
                    "loom-s-{}",
                    self.next_id.fetch_add(1, Ordering::Relaxed)
                ));
                lock(&self.relayed).insert(
                    id_key(&ours),
                    RelayedRequest {
                        conn,
                        downstream_id: id,
                    },
                );
                self.send(jsonrpc::request(&ours, &method, params.as_deref()));
            }
        }
    }

    fn relay_notification(&self, server: &str, method: &str, params: Option<Box<RawValue>>) {
        match method {
            "notifications/progress" => {
                let Ok(mut p) = object(params.as_deref()) else {
                    return;
                };
                let Some(token) = p.get("progressToken").map(Value::to_string) else {
                    return;
                };
                let routes = lock(&self.progress);
                // Progress for an unknown, finished or cancelled request is dropped.
                let Some(route) = routes.get(&token) else {
                    return;
                };
                p.insert("progressToken".into(), route.upstream_token.clone());
                route.notify.notify_one();
                drop(routes);
                self.send(jsonrpc::notification(method, Some(&jsonrpc::to_raw(&p))));
            }
            "notifications/message" => {
                if self.is_modern() && lock(&self.log_level).is_none() {
                    return;
                }
                let Ok(mut p) = object(params.as_deref()) else {
                    return;
                };
                let logger = match p.get("logger").and_then(Value::as_str) {
                    Some(l) => format!("{server}/{l}"),
                    None => server.to_owned(),
                };
                p.insert("logger".into(), Value::String(logger));
                self.send(jsonrpc::notification(method, Some(&jsonrpc::to_raw(&p))));
            }
            "notifications/cancelled" => {
                // A server withdrew a request it relayed through us: withdraw ours too.
                let Ok(p) = object(params.as_deref()) else {
                    return;
                };
                let Some(req) = p.get("requestId") else {
                    return;
                };
                let want = req.to_string();
                let mut relayed = lock(&self.relayed);
                let key = relayed
                    .iter()
                    .find(|(_, r)| r.conn.server == server && id_key(&r.downstream_id) == want)
                    .map(|(k, _)| k.clone());
                if let Some(k) = key {
                    relayed.remove(&k);
                    drop(relayed);
                    let up: Value = serde_json::from_str(&k).unwrap_or(Value::Null);
                    let mut p = p;
                    p.insert("requestId".into(), up);
                    self.send(jsonrpc::notification(method, Some(&jsonrpc::to_raw(&p))));
                }
            }
            _ => self.send(jsonrpc::notification(method, params.as_deref())),
        }
    }

    /// Stops the downstream servers (if they were started).
    pub async fn shutdown(&self) {
        if let Some(f) = self.fleet.get() {
            f.shutdown().await;
        }
    }
}

type RpcError = (i64, String, Option<Value>);

const PRIMER_URI: &str = "loom://primer";
/// Token budget of the session primer.
const PRIMER_BUDGET: usize = 800;

/// A 2026-07-28 client requires `resultType` on every result; older servers do not send it.
/// It is spliced in front of the other members, which stay byte for byte as the server sent them.
fn with_result_type(raw: Box<RawValue>) -> Box<RawValue> {
    let text = raw.get();
    let keys: Result<HashMap<String, serde::de::IgnoredAny>, _> = serde_json::from_str(text);
    match keys {
        Ok(k) if !k.contains_key("resultType") => {
            let body = text.trim_start();
            let inner = &body[1..];
            let sep = if inner.trim_start().starts_with('}') {
                ""
            } else {
                ","
            };
            RawValue::from_string(format!("{{\"resultType\":\"complete\"{sep}{inner}"))
                .unwrap_or(raw)
        }
        _ => raw,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_type_is_spliced_without_touching_the_rest() {
        let raw = RawValue::from_string(r#"{"content":[],  "z":"\u00e9"}"#.into()).unwrap();
        assert_eq!(
            with_result_type(raw).get(),
            r#"{"resultType":"complete","content":[],  "z":"\u00e9"}"#
        );
        let empty = RawValue::from_string("{ }".into()).unwrap();
        assert_eq!(
            with_result_type(empty).get(),
            r#"{"resultType":"complete" }"#
        );
        let has = RawValue::from_string(r#"{"resultType":"input_required"}"#.into()).unwrap();
        assert_eq!(
            with_result_type(has).get(),
            r#"{"resultType":"input_required"}"#
        );
    }
}
