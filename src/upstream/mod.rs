//! The merged surface served to one MCP client: the handshake of either era, routing of every
//! request to the server behind an exposed name or URI, progress tokens and cancellations
//! mapped both ways, and server-to-client requests relayed when the client can take them.
//! Results that loom does not change are spliced back verbatim.

pub mod tools;

use crate::downstream::connection::{Reply, lock};
use crate::downstream::{Fleet, ListKind, ServerHandle};
use crate::jsonrpc::{self, Kind, RawMessage, code};
use crate::protocol::{self, ClientCapabilities, Era};
use crate::session::approvals::{ApprovalRequest, Verdict};
use crate::session::calls::CallSummary;
use crate::session::{Event, FleetListener, ServerRequest, Session};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::time::Instant;

struct InFlight {
    cancel: oneshot::Sender<String>,
    /// The server the call went to.
    server: String,
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
    session: Arc<Session>,
    /// Who this client is in the call log: `model` or `human`.
    caller: &'static str,
    out: mpsc::UnboundedSender<String>,
    caps: Mutex<ClientCapabilities>,
    era: Mutex<Option<Era>>,
    in_flight: Mutex<HashMap<String, InFlight>>,
    /// Ids (canonical JSON) of every request of this client that has not been answered.
    active_ids: Mutex<HashSet<String>>,
    progress: Mutex<HashMap<String, ProgressRoute>>,
    relayed: Mutex<HashMap<String, RelayedRequest>>,
    next_id: AtomicU64,
    log_level: Mutex<Option<String>>,
    /// Set when the client's connection ended: nothing more is sent to it or taken by it.
    closed: std::sync::atomic::AtomicBool,
}

/// A request id in flight; released when dropped, however the request ends.
struct ActiveId {
    client: Arc<ClientSession>,
    key: String,
}

impl Drop for ActiveId {
    fn drop(&mut self) {
        lock(&self.client.active_ids).remove(&self.key);
    }
}

/// A tool call being timed and logged.
struct CallTrack {
    summary: CallSummary,
    started: Instant,
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

/// Whether a tool result says it failed (a cheap look at the text; for the call log only).
fn reports_error(result: &RawValue) -> bool {
    result.get().contains("\"isError\":true")
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
    /// A client of `session`; it receives fleet events until it is dropped.
    pub fn new(
        session: Arc<Session>,
        out: mpsc::UnboundedSender<String>,
        caller: &'static str,
    ) -> Arc<ClientSession> {
        let client = Arc::new(ClientSession {
            session,
            caller,
            out,
            caps: Mutex::new(ClientCapabilities::default()),
            era: Mutex::new(None),
            in_flight: Mutex::new(HashMap::new()),
            active_ids: Mutex::new(HashSet::new()),
            progress: Mutex::new(HashMap::new()),
            relayed: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            log_level: Mutex::new(None),
            closed: std::sync::atomic::AtomicBool::new(false),
        });
        let weak: std::sync::Weak<ClientSession> = Arc::downgrade(&client);
        client.session.add_listener(weak);
        client
    }

    fn send(&self, line: String) {
        let _ = self.out.send(line);
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// The client went away: its calls (waiting for approval or in flight) are cancelled, the
    /// servers' requests relayed to it are answered with an error, and it takes no more.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        for (_, f) in lock(&self.in_flight).drain() {
            let _ = f.cancel.send("the client disconnected".into());
        }
        let err = jsonrpc::to_raw(
            &json!({ "code": code::INTERNAL_ERROR, "message": "the client that was asked disconnected" }),
        );
        for (_, r) in lock(&self.relayed).drain() {
            r.conn.respond(&r.downstream_id, Err(&err));
        }
    }

    pub fn fleet(&self) -> Option<&Arc<Fleet>> {
        self.session.fleet()
    }

    /// Starts the downstream servers once per session; the first client's capabilities are
    /// what loom declares to them.
    async fn ensure_fleet(self: &Arc<Self>) -> Arc<Fleet> {
        let caps = lock(&self.caps).clone();
        self.session.ensure_fleet(caps).await
    }

    /// Pinned memories and the datasets so far, within the primer's budget.
    fn primer(&self) -> String {
        let pinned = self.session.memories.pinned();
        let datasets: Vec<(String, u64)> = self
            .session
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
                // Answer the request itself when its id can still be read.
                let id = jsonrpc::request_id_lenient(bytes).unwrap_or_else(jsonrpc::raw_null);
                self.send(jsonrpc::error_response(
                    &id,
                    code::PARSE_ERROR,
                    &format!("parse error: {e}"),
                    None,
                ));
                return;
            }
        };
        match msg.kind() {
            Kind::Request => {
                // Ids must be unique among a client's requests in flight: a reused one would
                // take over the first request's cancellation and progress, so it is refused
                // and the first keeps running.
                let claimed = msg.id.as_deref().and_then(|id| self.claim_id(id));
                let Some(active) = claimed else {
                    let id = msg.id.unwrap_or_else(jsonrpc::raw_null);
                    self.send(jsonrpc::error_response(
                        &id,
                        code::INVALID_REQUEST,
                        &format!(
                            "request id {} is already used by a request in flight",
                            id.get()
                        ),
                        None,
                    ));
                    return;
                };
                let me = self.clone();
                tokio::spawn(async move { me.handle_request(msg, active).await });
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
        let limit = self.session.config.max_message_bytes;
        self.send(jsonrpc::error_response(
            &id,
            code::INVALID_REQUEST,
            &format!("message of {len} bytes exceeds the {limit}-byte limit (max_message_bytes)"),
            Some(json!({ "size": len, "limit": limit })),
        ));
    }

    /// Marks `id` as in flight; `None` when a request with the same id still is.
    fn claim_id(self: &Arc<Self>, id: &RawValue) -> Option<ActiveId> {
        let key = id_key(id);
        if !lock(&self.active_ids).insert(key.clone()) {
            return None;
        }
        Some(ActiveId {
            client: self.clone(),
            key,
        })
    }

    async fn handle_request(self: Arc<Self>, msg: RawMessage, active: ActiveId) {
        let (Some(id), Some(method)) = (msg.id, msg.method) else {
            return;
        };
        let reply = match self.dispatch(&id, &method, msg.params.as_deref()).await {
            Ok(Some(line)) => line,
            Ok(None) => return,
            Err((code, message, data)) => jsonrpc::error_response(&id, code, &message, data),
        };
        // Released before the answer leaves, so the client may reuse the id once it has it.
        drop(active);
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
                self.forward(id, &route.server, method, params, None).await
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
                self.forward(id, &server, method, params, None).await
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
                self.forward(id, &server, method, params, None).await
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
            let track = self.begin_call(LOOM_SERVER, &name, &params);
            let result = match tools::validate(spec, &args) {
                Err(msg) => tool_error(&msg),
                Ok(()) if spec.name.starts_with("loom_memory_") => {
                    let mem = self.session.memories.clone();
                    let bus = self.session.bus.clone();
                    let key = args.get("key").and_then(Value::as_str).map(str::to_owned);
                    let out =
                        run_blocking(spec.name, move || tools::run_memory(&mem, spec.name, &args))
                            .await;
                    if let Some(key) = key
                        && matches!(spec.name, "loom_memory_set" | "loom_memory_delete")
                    {
                        bus.publish(Event::MemoryChanged { key });
                    }
                    out
                }
                Ok(()) => match self.session.store.get().await {
                    Err(e) => tool_error(&format!("the dataset store is not available: {e}")),
                    Ok(store) => {
                        let bus = self.session.bus.clone();
                        run_blocking(spec.name, move || {
                            tools::run(&store, &bus, spec.name, &args)
                        })
                        .await
                    }
                },
            };
            let result = if self.is_modern() {
                with_result_type(result)
            } else {
                result
            };
            let outcome = if reports_error(&result) {
                "error"
            } else {
                "passed"
            };
            let reference = serde_json::from_str::<Value>(result.get())
                .ok()
                .and_then(|v| v["structuredContent"]["ref"].as_str().map(str::to_owned));
            self.end_call(track, outcome, reference, None, result.get());
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
        let mut track = self.begin_call(route.server.name(), &name, &params);
        // A call waiting for approval can be cancelled like one in flight.
        let up_key = id_key(id);
        let (cancel_tx, cancel_rx) = oneshot::channel();
        lock(&self.in_flight).insert(
            up_key.clone(),
            InFlight {
                cancel: cancel_tx,
                server: route.server.name().to_owned(),
            },
        );
        let verdict = tokio::select! {
            v = self.approve(&route, &name, &params, &mut track) => Some(v),
            _ = cancel_rx => None,
        };
        lock(&self.in_flight).remove(&up_key);
        let Some(verdict) = verdict else {
            self.end_call(track, "cancelled", None, None, "");
            return Ok(None);
        };
        if let Err(why) = verdict {
            let result = tool_error(&why);
            let result = if self.is_modern() {
                with_result_type(result)
            } else {
                result
            };
            self.end_call(track, "denied", None, None, result.get());
            return Ok(Some(jsonrpc::response(id, &result)));
        }
        let mut params = params;
        params.insert("name".into(), Value::String(route.original.clone()));
        self.forward(id, &route.server, "tools/call", params, Some(track))
            .await
    }

    /// Applies the server's approval policy to a call; the human's own calls from the workbench
    /// are never asked about, but `deny` holds for them too. Records who decided; `Err` says
    /// why the call may not run.
    async fn approve(
        &self,
        route: &crate::downstream::Route,
        exposed: &str,
        params: &Map<String, Value>,
        track: &mut CallTrack,
    ) -> Result<(), String> {
        let annotations = route.server.tool_annotations(&route.original);
        let policy = route
            .server
            .spec
            .approve
            .decide(&route.original, annotations.as_ref());
        let spec = &route.server.spec.approve;
        let verdict = match policy {
            // The person at the workbench is the one who would approve; `deny` still holds.
            crate::config::Approval::Ask if self.caller == "human" => return Ok(()),
            crate::config::Approval::Allow => {
                if spec
                    .allow
                    .iter()
                    .any(|g| crate::config::glob_match(g, &route.original))
                {
                    track.summary.decision = Some("allowed by policy (approve.allow)".into());
                }
                return Ok(());
            }
            crate::config::Approval::Deny => Verdict::Denied(format!(
                "denied by policy: `{}` of server `{}` is in approve.deny",
                route.original,
                route.server.name()
            )),
            crate::config::Approval::Ask => {
                let req = ApprovalRequest {
                    call: track.summary.call,
                    server: route.server.name().to_owned(),
                    tool: exposed.to_owned(),
                    original: route.original.clone(),
                    annotations: annotations.unwrap_or(Value::Null),
                    arguments: params.get("arguments").cloned().unwrap_or(Value::Null),
                    ..Default::default()
                };
                let config = &self.session.config;
                self.session
                    .approvals
                    .ask(
                        &self.session.bus,
                        req,
                        config.unattended_allow,
                        config.approval_timeout,
                    )
                    .await
            }
        };
        match verdict {
            Verdict::Allowed(why) => {
                track.summary.decision = Some(why);
                Ok(())
            }
            Verdict::Denied(why) => {
                track.summary.decision = Some(why.clone());
                Err(why)
            }
        }
    }

    /// Logs the start of a tool call and announces it.
    fn begin_call(&self, server: &str, tool: &str, params: &Map<String, Value>) -> CallTrack {
        let arguments = params
            .get("arguments")
            .map(|a| {
                let text = crate::intercept::redact::redact(a).to_string();
                crate::session::calls::cap_text(&text, 200)
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_owned()
            })
            .unwrap_or_default();
        let summary = CallSummary {
            call: self.session.next_call_id(),
            at: crate::store::now_iso(),
            caller: self.caller.to_owned(),
            server: server.to_owned(),
            tool: tool.to_owned(),
            outcome: "running".into(),
            arguments,
            ..Default::default()
        };
        let request = Value::Object(params.clone()).to_string();
        self.session.calls.started(summary.clone(), request);
        self.session
            .bus
            .publish(Event::CallStarted(summary.clone()));
        CallTrack {
            summary,
            started: Instant::now(),
        }
    }

    /// Logs how a tool call ended. `original` is the size and estimated tokens of what the
    /// server answered when loom replaced it; `sent` is what the caller received.
    fn end_call(
        &self,
        track: CallTrack,
        outcome: &str,
        reference: Option<String>,
        original: Option<(usize, usize)>,
        sent: &str,
    ) {
        let tokens_out = crate::intercept::tokens::estimate(sent) as u64;
        let (bytes_in, tokens_in) = original
            .map(|(b, t)| (b as u64, t as u64))
            .unwrap_or((sent.len() as u64, tokens_out));
        let summary = CallSummary {
            outcome: outcome.to_owned(),
            reference,
            millis: track.started.elapsed().as_millis() as u64,
            bytes_in,
            tokens_in,
            bytes_out: sent.len() as u64,
            tokens_out,
            ..track.summary
        };
        self.session.calls.finished(summary.clone(), sent);
        self.session.bus.publish(Event::CallFinished(summary));
    }

    /// Sends a request to `server` and relays its answer, mapping progress and cancellation.
    async fn forward(
        self: &Arc<Self>,
        id: &RawValue,
        server: &Arc<ServerHandle>,
        method: &str,
        mut params: Map<String, Value>,
        track: Option<CallTrack>,
    ) -> Result<Option<String>, RpcError> {
        let is_call = method == "tools/call";
        let tool = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let track = Mutex::new(track);
        let finish = |outcome: &str,
                      reference: Option<String>,
                      original: Option<(usize, usize)>,
                      sent: &str| {
            if let Some(t) = lock(&track).take() {
                self.end_call(t, outcome, reference, original, sent);
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
                finish("error", None, None, &why);
                return lost(why);
            }
        };
        let notify = Arc::new(Notify::new());
        let mut token_key = None;
        if let Some(Value::Object(meta)) = params.get_mut("_meta")
            && let Some(up) = meta.get("progressToken").cloned()
        {
            let down = self.session.next_progress_token();
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
        lock(&self.in_flight).insert(
            up_key.clone(),
            InFlight {
                cancel: cancel_tx,
                server: server.name().to_owned(),
            },
        );
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
                finish("cancelled", None, None, "");
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
                match dataset {
                    Some((r, bytes, tokens)) => {
                        let (outcome, reference) = r.split_once(':').unwrap_or((&r, ""));
                        finish(
                            outcome,
                            Some(reference.to_owned()),
                            Some((bytes, tokens)),
                            raw.get(),
                        )
                    }
                    None if is_call && reports_error(&raw) => {
                        finish("error", None, None, raw.get())
                    }
                    None => finish("passed", None, None, raw.get()),
                }
                Ok(Some(jsonrpc::response(id, &raw)))
            }
            Some(Reply::Error(raw)) => {
                finish("error", None, None, raw.get());
                Ok(Some(jsonrpc::error_response_raw(id, &raw)))
            }
            Some(Reply::Lost(why)) => {
                let why = format!("server `{}` failed during {method}: {why}", server.name());
                finish("error", None, None, &why);
                lost(why)
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
    ) -> (Box<RawValue>, Option<(String, usize, usize)>) {
        // Cheap check first: small results never wait for the store.
        let threshold = self.session.config.token_threshold as usize;
        if raw.get().len() < threshold {
            return (raw, None);
        }
        let Ok(store) = self.session.store.get().await else {
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
        let original_len = raw.get().len();
        let work =
            tokio::task::spawn_blocking(move || -> Option<(Box<RawValue>, String, usize)> {
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
                        let pointer_tokens =
                            crate::intercept::tokens::estimate(&pointer.to_string());
                        return (pointer_tokens < tokens).then(|| {
                            (
                                jsonrpc::to_raw(&pointer),
                                format!("parked:{}", blob.key),
                                tokens,
                            )
                        });
                    }
                    _ => return None,
                };
                if let Value::Object(context) = crate::intercept::redact::redact(&Value::Object(
                    std::mem::take(&mut table.context),
                )) {
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
                        tokens,
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
            Ok(Some((env, r, tokens))) => {
                if let Some(dataset) = r.strip_prefix("intercepted:") {
                    let rows = serde_json::from_str::<Value>(env.get())
                        .ok()
                        .and_then(|v| v["structuredContent"]["rows"].as_u64())
                        .unwrap_or(0);
                    self.session.bus.publish(Event::DatasetCreated {
                        dataset: dataset.to_owned(),
                        rows,
                        server: server.name().to_owned(),
                        tool: tool_name,
                    });
                }
                if let Some(key) = r.strip_prefix("parked:") {
                    self.session.bus.publish(Event::BlobParked {
                        key: key.to_owned(),
                        bytes: original_len as u64,
                    });
                }
                (env, Some((r, original_len, tokens)))
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

    /// Hands a server-to-client request to this client if it declared the capability.
    fn take_server_request(&self, request: ServerRequest) -> Result<(), ServerRequest> {
        if self.is_closed() {
            return Err(request);
        }
        let needed = protocol::capability_for_server_request(&request.method);
        if !needed.is_some_and(|cap| lock(&self.caps).has(cap)) {
            return Err(request);
        }
        let ours = jsonrpc::to_raw(&format!(
            "loom-s-{}",
            self.next_id.fetch_add(1, Ordering::Relaxed)
        ));
        lock(&self.relayed).insert(
            id_key(&ours),
            RelayedRequest {
                conn: request.conn,
                downstream_id: request.id,
            },
        );
        self.send(jsonrpc::request(
            &ours,
            &request.method,
            request.params.as_deref(),
        ));
        Ok(())
    }

    fn relay_notification(&self, server: &str, method: &str, params: Option<&RawValue>) {
        match method {
            "notifications/progress" => {
                let Ok(mut p) = object(params) else {
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
                let Ok(mut p) = object(params) else {
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
                let Ok(p) = object(params) else {
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
            _ => self.send(jsonrpc::notification(method, params)),
        }
    }
}

impl FleetListener for ClientSession {
    fn list_changed(&self, kind: ListKind) {
        // Only a client that finished its handshake hears about list changes; a 2026-07-28
        // client learns of them through subscriptions, not these notifications.
        if lock(&self.era).is_none() || self.is_modern() || self.is_closed() {
            return;
        }
        let method = match kind {
            ListKind::Tools => "notifications/tools/list_changed",
            ListKind::Prompts => "notifications/prompts/list_changed",
            ListKind::Resources => "notifications/resources/list_changed",
        };
        self.send(jsonrpc::notification(method, None));
    }

    fn notification(&self, server: &str, method: &str, params: Option<&RawValue>) {
        if !self.is_closed() {
            self.relay_notification(server, method, params);
        }
    }

    fn server_request(&self, request: ServerRequest) -> Result<(), ServerRequest> {
        self.take_server_request(request)
    }

    fn has_call_on(&self, server: &str) -> bool {
        lock(&self.in_flight).values().any(|f| f.server == server)
    }
}

type RpcError = (i64, String, Option<Value>);

/// The server name loom's own tools are logged under.
const LOOM_SERVER: &str = "loom";
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
