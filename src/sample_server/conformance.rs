//! `loom sample-server --conformance`: the fixture server the official MCP conformance suite's
//! server scenarios call — tools `test_*`, resources `test://…`, prompts `test_*`, completion,
//! logging, progress, subscriptions and the multi-round-trip (`input_required`) tools — on stdio,
//! in both eras. A request carrying the 2026-07-28 `_meta` is served statelessly (its client
//! capabilities and log level come with it, questions go back as `input_required`); after
//! `initialize` the legacy rules hold (`logging/setLevel`, `resources/subscribe`, questions as
//! real requests to the client). `tests/conformance.rs` runs the suite against loom fronting this
//! server. It never touches the network or the disk.

mod catalog;
mod flows;
mod rounds;
mod seal;

use crate::jsonrpc::pending::Pending;
use crate::jsonrpc::{self, Kind, Line, LineReader, RawMessage, RpcError, code};
use crate::protocol;
use flows::{Flow, Question, Step};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::{Notify, mpsc};

/// 2025-11-25 and older: no resource has this URI.
const RESOURCE_NOT_FOUND_LEGACY: i64 = -32002;
/// How long a legacy question to the client may wait for its answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);
/// Rounds of questions a legacy call may take before the fixture gives up.
const MAX_ROUNDS: usize = 8;
/// The pause between the messages of the logging and progress tools.
const PAUSE: Duration = Duration::from_millis(50);

/// Methods 2026-07-28 removed; a stateless request for one is answered -32601.
const REMOVED_IN_2026: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];
/// Results that carry caching hints in 2026-07-28.
const CACHEABLE: &[&str] = &[
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub async fn serve_stdio(legacy_only: bool) -> anyhow::Result<()> {
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(mut line) = rx.recv().await {
            line.push('\n');
            if stdout.write_all(line.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    let mut fixture = Fixture::new(tx);
    fixture.legacy_only = legacy_only;
    let fixture = Arc::new(fixture);
    let mut lines = LineReader::new(BufReader::new(tokio::io::stdin()), 16 << 20);
    while let Ok(Some(line)) = lines.next_line().await {
        if let Line::Complete(bytes) = line {
            fixture.receive(&bytes);
        }
    }
    fixture.close();
    drop(fixture);
    let _ = tokio::time::timeout(Duration::from_secs(2), writer).await;
    Ok(())
}

/// What `initialize` set up for a legacy client.
#[derive(Default)]
struct LegacySession {
    caps: Map<String, Value>,
    /// From `logging/setLevel`; none means every level.
    log_level: Option<String>,
}

/// A `subscriptions/listen` that is open.
struct Listen {
    id: Value,
    filter: Map<String, Value>,
}

/// An answer from the client to a question the fixture asked (legacy), or why there is none.
type Answer = Result<Value, String>;

pub struct Fixture {
    out: mpsc::UnboundedSender<String>,
    legacy: Mutex<Option<LegacySession>>,
    dynamic_tool: AtomicBool,
    dynamic_prompt: AtomicBool,
    /// URIs a legacy client subscribed to.
    subscribed: Mutex<BTreeSet<String>>,
    listens: Mutex<Vec<Listen>>,
    asked: Pending<Answer>,
    /// Requests in flight, by their id's JSON text, for `notifications/cancelled`.
    running: Mutex<HashMap<String, Arc<Notify>>>,
    seal: seal::Seal,
    /// Answers only the handshake era: `server/discover` and `_meta`-carried requests are
    /// unknown, as to a server written before 2026-07-28.
    legacy_only: bool,
}

/// Who sent one request, as far as the fixture's answer depends on it.
struct Peer {
    modern: bool,
    caps: Map<String, Value>,
    log_level: Option<String>,
    progress: Option<Value>,
}

impl Fixture {
    pub fn new(out: mpsc::UnboundedSender<String>) -> Fixture {
        Fixture::with_seal(out, seal::Seal::new())
    }

    fn with_seal(out: mpsc::UnboundedSender<String>, seal: seal::Seal) -> Fixture {
        Fixture {
            out,
            legacy: Mutex::new(None),
            dynamic_tool: AtomicBool::new(false),
            dynamic_prompt: AtomicBool::new(false),
            subscribed: Mutex::new(BTreeSet::new()),
            listens: Mutex::new(Vec::new()),
            asked: Pending::default(),
            running: Mutex::new(HashMap::new()),
            seal,
            legacy_only: false,
        }
    }

    /// One line from the client.
    pub fn receive(self: &Arc<Self>, bytes: &[u8]) {
        let Ok(msg) = RawMessage::parse(bytes) else {
            self.send(jsonrpc::error_response(
                &jsonrpc::raw_null(),
                code::PARSE_ERROR,
                "not JSON",
                None,
            ));
            return;
        };
        match msg.kind() {
            Kind::Request => {
                // Requests run side by side, but each runs as it is read until it first
                // waits, as with a server that reads one message at a time: what their order
                // decides (a subscription, a listen stream, a cancel's target) is settled before
                // the next line is read.
                let mut task = Box::pin(self.clone().handle(msg));
                let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
                if task.as_mut().poll(&mut cx).is_pending() {
                    tokio::spawn(task);
                }
            }
            Kind::Response => self.answered(msg),
            Kind::Notification => self.notified(msg),
            Kind::Invalid(why) => {
                if let Some(id) = msg.id {
                    self.send(jsonrpc::error_response(
                        &id,
                        code::INVALID_REQUEST,
                        why,
                        None,
                    ));
                }
            }
        }
    }

    /// The client is gone: every question still waiting is answered with that.
    pub fn close(&self) {
        self.asked
            .close(|| Err("the client closed the connection".into()));
    }

    fn send(&self, line: String) {
        let _ = self.out.send(line);
    }

    fn notify(&self, method: &str, params: Value) {
        self.send(jsonrpc::notification(
            method,
            Some(&jsonrpc::to_raw(&params)),
        ));
    }

    fn answered(&self, msg: RawMessage) {
        let Some(id) = msg.numeric_id() else {
            return;
        };
        let answer = match (msg.result, msg.error) {
            (Some(result), _) => serde_json::from_str(result.get()).map_err(|e| e.to_string()),
            (None, Some(error)) => Err(error.get().to_owned()),
            (None, None) => Err("an empty response".into()),
        };
        self.asked.resolve(id, answer);
    }

    fn notified(&self, msg: RawMessage) {
        if msg.method.as_deref() != Some("notifications/cancelled") {
            return;
        }
        let params: Value = msg
            .params
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or_default();
        let key = params["requestId"].to_string();
        if let Some(n) = lock(&self.running).get(&key) {
            n.notify_one();
        }
    }

    async fn handle(self: Arc<Self>, msg: RawMessage) {
        let (Some(id), Some(method)) = (msg.id, msg.method) else {
            return;
        };
        let id_value: Value = serde_json::from_str(id.get()).unwrap_or_default();
        let key = id_value.to_string();
        let cancel = Arc::new(Notify::new());
        lock(&self.running).insert(key.clone(), cancel.clone());
        let outcome = tokio::select! {
            r = self.dispatch(&id_value, &method, msg.params.as_deref()) => Some(r),
            _ = cancel.notified() => None,
        };
        lock(&self.running).remove(&key);
        lock(&self.listens).retain(|l| l.id != id_value);
        match outcome {
            None | Some(Ok(None)) => {}
            Some(Ok(Some(result))) => self.send(jsonrpc::response(&id, &jsonrpc::to_raw(&result))),
            Some(Err(e)) => self.send(jsonrpc::error_response(&id, e.code, &e.message, e.data)),
        }
    }

    /// The peer of one request: a 2026-07-28 request speaks for itself, a legacy one relies on
    /// what `initialize` and `logging/setLevel` said.
    fn peer(&self, params: &Map<String, Value>) -> Result<Peer, RpcError> {
        let meta = params.get("_meta").and_then(Value::as_object);
        let progress = meta.and_then(|m| m.get("progressToken")).cloned();
        let Some(version) = meta.and_then(|m| m.get(protocol::META_PROTOCOL_VERSION)) else {
            let legacy = lock(&self.legacy);
            return Ok(Peer {
                modern: false,
                caps: legacy.as_ref().map(|l| l.caps.clone()).unwrap_or_default(),
                log_level: legacy.as_ref().and_then(|l| l.log_level.clone()),
                progress,
            });
        };
        let meta = meta.cloned().unwrap_or_default();
        if version.as_str() != Some(protocol::V_2026_07_28) {
            return Err(RpcError::new(
                protocol::UNSUPPORTED_PROTOCOL_VERSION,
                "unsupported protocol version",
            )
            .with_data(json!({ "supported": [protocol::V_2026_07_28], "requested": version })));
        }
        let Some(Value::Object(caps)) = meta.get(protocol::META_CLIENT_CAPABILITIES) else {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                format!("_meta must carry {}", protocol::META_CLIENT_CAPABILITIES),
            ));
        };
        Ok(Peer {
            modern: true,
            caps: caps.clone(),
            log_level: meta
                .get(protocol::META_LOG_LEVEL)
                .and_then(Value::as_str)
                .map(str::to_owned),
            progress,
        })
    }

    /// The answer to one request: a result, nothing (an open subscription), or an error.
    async fn dispatch(
        &self,
        id: &Value,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<Option<Value>, RpcError> {
        let params: Map<String, Value> = match params {
            None => Map::new(),
            Some(p) => serde_json::from_str(p.get())
                .map_err(|_| RpcError::new(code::INVALID_PARAMS, "params must be an object"))?,
        };
        if self.legacy_only && method == "server/discover" {
            return Err(not_found(method));
        }
        let peer = self.peer(&params)?;
        if peer.modern && REMOVED_IN_2026.contains(&method) {
            return Err(not_found(method));
        }
        let result = match method {
            "initialize" => self.initialize(&params),
            "server/discover" => json!({
                "supportedVersions": protocol::SUPPORTED_VERSIONS,
                "capabilities": capabilities(),
                "instructions": "The MCP conformance suite's fixtures.",
                "_meta": { protocol::META_SERVER_INFO: server_info() },
            }),
            "ping" => json!({}),
            "logging/setLevel" => self.set_level(&params)?,
            "tools/list" => {
                json!({ "tools": catalog::tools(self.dynamic_tool.load(Ordering::SeqCst)) })
            }
            "tools/call" => self.call_tool(&peer, &params).await?,
            "prompts/list" => {
                json!({ "prompts": catalog::prompts(self.dynamic_prompt.load(Ordering::SeqCst)) })
            }
            "prompts/get" => self.get_prompt(&peer, &params).await?,
            "resources/list" => json!({ "resources": catalog::resources() }),
            "resources/templates/list" => {
                json!({ "resourceTemplates": catalog::resource_templates() })
            }
            "resources/read" => {
                let uri = str_param(&params, "uri")?;
                catalog::read(uri).ok_or_else(|| resource_not_found(&peer, uri))?
            }
            "resources/subscribe" | "resources/unsubscribe" => {
                let uri = str_param(&params, "uri")?;
                if catalog::read(uri).is_none() {
                    return Err(resource_not_found(&peer, uri));
                }
                let mut subscribed = lock(&self.subscribed);
                if method == "resources/subscribe" {
                    subscribed.insert(uri.to_owned());
                } else {
                    subscribed.remove(uri);
                }
                json!({})
            }
            "completion/complete" => complete(&params)?,
            "subscriptions/listen" if peer.modern => {
                self.listen(id, &params);
                std::future::pending::<()>().await;
                return Ok(None);
            }
            other => return Err(not_found(other)),
        };
        Ok(Some(finish(&peer, method, result)))
    }

    fn initialize(&self, params: &Map<String, Value>) -> Value {
        let caps = params
            .get("capabilities")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        *lock(&self.legacy) = Some(LegacySession {
            caps,
            log_level: None,
        });
        let version =
            protocol::negotiate_initialize(params.get("protocolVersion").and_then(Value::as_str));
        json!({
            "protocolVersion": version,
            "capabilities": capabilities(),
            "serverInfo": server_info(),
            "instructions": "The MCP conformance suite's fixtures.",
        })
    }

    fn set_level(&self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let level = str_param(params, "level")?;
        if protocol::log_level_rank(level).is_none() {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                format!("unknown log level \"{level}\""),
            ));
        }
        lock(&self.legacy)
            .get_or_insert_with(LegacySession::default)
            .log_level = Some(level.to_owned());
        Ok(json!({}))
    }

    async fn call_tool(&self, peer: &Peer, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let name = str_param(params, "name")?;
        let args = params
            .get("arguments")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        if let Some(flow) = Flow::tool(name) {
            return self.interact(peer, flow, &args, params).await;
        }
        let image =
            json!({ "type": "image", "data": catalog::PNG_BASE64, "mimeType": "image/png" });
        Ok(match name {
            "test_simple_text" => flows::text_result("This is a simple text response for testing."),
            "test_image_content" => json!({ "content": [image] }),
            "test_audio_content" => json!({ "content": [
                { "type": "audio", "data": catalog::WAV_BASE64, "mimeType": "audio/wav" }
            ] }),
            "test_embedded_resource" => json!({ "content": [{ "type": "resource", "resource": {
                "uri": "test://embedded-resource", "mimeType": "text/plain",
                "text": "This is an embedded resource content.",
            } }] }),
            "test_multiple_content_types" => json!({ "content": [
                { "type": "text", "text": "Multiple content types test:" },
                image,
                { "type": "resource", "resource": {
                    "uri": "test://mixed-content-resource", "mimeType": "application/json",
                    "text": json!({ "test": "data", "value": 123 }).to_string(),
                } },
            ] }),
            "test_tool_with_logging" | "test_logging_tool" => {
                self.log(peer, "info", "Tool execution started");
                tokio::time::sleep(PAUSE).await;
                self.log(peer, "info", "Tool processing data");
                tokio::time::sleep(PAUSE).await;
                self.log(peer, "info", "Tool execution completed");
                flows::text_result("Logged three messages.")
            }
            "test_tool_with_progress" => {
                for (i, progress) in [0, 50, 100].into_iter().enumerate() {
                    if i > 0 {
                        tokio::time::sleep(PAUSE).await;
                    }
                    if let Some(token) = &peer.progress {
                        self.notify(
                            "notifications/progress",
                            json!({ "progressToken": token, "progress": progress, "total": 100 }),
                        );
                    }
                }
                flows::text_result("Progress reported: 0, 50, 100 of 100.")
            }
            "test_error_handling" => {
                flows::tool_error("This tool intentionally returns an error for testing")
            }
            "test_trigger_tool_change" => {
                let now = !self.dynamic_tool.fetch_xor(true, Ordering::SeqCst);
                self.list_changed("toolsListChanged", "notifications/tools/list_changed");
                flows::text_result(format!(
                    "{} {}",
                    if now { "Added" } else { "Removed" },
                    catalog::DYNAMIC_TOOL
                ))
            }
            "test_trigger_prompt_change" => {
                let now = !self.dynamic_prompt.fetch_xor(true, Ordering::SeqCst);
                self.list_changed("promptsListChanged", "notifications/prompts/list_changed");
                flows::text_result(format!(
                    "{} {}",
                    if now { "Added" } else { "Removed" },
                    catalog::DYNAMIC_PROMPT
                ))
            }
            "test_trigger_resource_update" => {
                self.resource_updated(catalog::WATCHED_URI);
                flows::text_result(format!("Announced an update of {}", catalog::WATCHED_URI))
            }
            catalog::DYNAMIC_TOOL if self.dynamic_tool.load(Ordering::SeqCst) => {
                flows::text_result("The dynamic tool ran.")
            }
            other => {
                return Err(RpcError::new(
                    code::INVALID_PARAMS,
                    format!("unknown tool: {other}"),
                ));
            }
        })
    }

    async fn get_prompt(
        &self,
        peer: &Peer,
        params: &Map<String, Value>,
    ) -> Result<Value, RpcError> {
        let name = str_param(params, "name")?;
        let args = params
            .get("arguments")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        if let Some(flow) = Flow::prompt(name) {
            return self.interact(peer, flow, &args, params).await;
        }
        let arg = |key: &str| {
            args.get(key).and_then(Value::as_str).ok_or_else(|| {
                RpcError::new(
                    code::INVALID_PARAMS,
                    format!("prompt {name} needs the argument `{key}`"),
                )
            })
        };
        let user = |content: Value| json!({ "role": "user", "content": content });
        let text = |t: String| user(json!({ "type": "text", "text": t }));
        let messages = match name {
            "test_simple_prompt" => vec![text("This is a simple prompt for testing.".into())],
            "test_prompt_with_arguments" => vec![text(format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                arg("arg1")?,
                arg("arg2")?
            ))],
            "test_prompt_with_embedded_resource" => vec![
                user(json!({ "type": "resource", "resource": {
                    "uri": arg("resourceUri")?, "mimeType": "text/plain",
                    "text": "Embedded resource content for testing.",
                } })),
                text("Please process the embedded resource above.".into()),
            ],
            "test_prompt_with_image" => vec![
                user(
                    json!({ "type": "image", "data": catalog::PNG_BASE64, "mimeType": "image/png" }),
                ),
                text("Please analyze the image above.".into()),
            ],
            catalog::DYNAMIC_PROMPT if self.dynamic_prompt.load(Ordering::SeqCst) => {
                vec![text("The dynamic prompt.".into())]
            }
            other => {
                return Err(RpcError::new(
                    code::INVALID_PARAMS,
                    format!("unknown prompt: {other}"),
                ));
            }
        };
        Ok(json!({ "messages": messages }))
    }

    /// A log message, if the request's (2026-07-28) or the session's (legacy) level lets it
    /// through. A 2026-07-28 request without a level gets none.
    fn log(&self, peer: &Peer, level: &str, message: &str) {
        let wanted = match (&peer.log_level, peer.modern) {
            (Some(min), _) => protocol::log_level_rank(level) >= protocol::log_level_rank(min),
            (None, modern) => !modern,
        };
        if wanted {
            self.notify(
                "notifications/message",
                json!({ "level": level, "logger": "conformance", "data": message }),
            );
        }
    }

    fn listen(&self, id: &Value, params: &Map<String, Value>) {
        let requested = params
            .get("notifications")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut honoured = Map::new();
        for flag in [
            "toolsListChanged",
            "promptsListChanged",
            "resourcesListChanged",
        ] {
            if requested.get(flag) == Some(&Value::Bool(true)) {
                honoured.insert(flag.into(), json!(true));
            }
        }
        if let Some(Value::Array(uris)) = requested.get("resourceSubscriptions") {
            let known: Vec<Value> = uris
                .iter()
                .filter(|u| u.as_str().is_some_and(|u| catalog::read(u).is_some()))
                .cloned()
                .collect();
            honoured.insert("resourceSubscriptions".into(), Value::Array(known));
        }
        self.notify(
            "notifications/subscriptions/acknowledged",
            json!({ "notifications": honoured, "_meta": { META_SUBSCRIPTION_ID: id } }),
        );
        lock(&self.listens).push(Listen {
            id: id.clone(),
            filter: honoured,
        });
    }

    /// Tells whoever asked that a list changed: a legacy client always, 2026-07-28 listeners
    /// whose filter names it.
    fn list_changed(&self, flag: &str, method: &str) {
        if lock(&self.legacy).is_some() {
            self.notify(method, json!({}));
        }
        let ids: Vec<Value> = lock(&self.listens)
            .iter()
            .filter(|l| l.filter.get(flag) == Some(&Value::Bool(true)))
            .map(|l| l.id.clone())
            .collect();
        for id in ids {
            self.notify(method, json!({ "_meta": { META_SUBSCRIPTION_ID: id } }));
        }
    }

    fn resource_updated(&self, uri: &str) {
        if lock(&self.subscribed).contains(uri) {
            self.notify("notifications/resources/updated", json!({ "uri": uri }));
        }
        let ids: Vec<Value> = lock(&self.listens)
            .iter()
            .filter(|l| {
                l.filter
                    .get("resourceSubscriptions")
                    .and_then(Value::as_array)
                    .is_some_and(|uris| uris.iter().any(|u| u.as_str() == Some(uri)))
            })
            .map(|l| l.id.clone())
            .collect();
        for id in ids {
            self.notify(
                "notifications/resources/updated",
                json!({ "uri": uri, "_meta": { META_SUBSCRIPTION_ID: id } }),
            );
        }
    }
}

use protocol::META_SUBSCRIPTION_ID;

fn server_info() -> Value {
    json!({ "name": "loom-conformance-fixture", "version": env!("CARGO_PKG_VERSION") })
}

fn capabilities() -> Value {
    json!({
        "tools": { "listChanged": true },
        "prompts": { "listChanged": true },
        "resources": { "subscribe": true, "listChanged": true },
        "logging": {},
        "completions": {},
    })
}

/// A 2026-07-28 result says what kind it is, and a cacheable one how long it keeps.
fn finish(peer: &Peer, method: &str, mut result: Value) -> Value {
    if let Some(obj) = result.as_object_mut()
        && (peer.modern || method == "server/discover")
    {
        let complete = !obj.contains_key("resultType");
        obj.entry("resultType").or_insert(json!("complete"));
        if complete && CACHEABLE.contains(&method) {
            obj.insert("ttlMs".into(), json!(0));
            obj.insert("cacheScope".into(), json!("public"));
        }
    }
    result
}

fn not_found(method: &str) -> RpcError {
    RpcError::new(
        code::METHOD_NOT_FOUND,
        format!("method not found: {method}"),
    )
}

fn resource_not_found(peer: &Peer, uri: &str) -> RpcError {
    let code = if peer.modern {
        code::INVALID_PARAMS
    } else {
        RESOURCE_NOT_FOUND_LEGACY
    };
    RpcError::new(code, format!("resource not found: {uri}")).with_data(json!({ "uri": uri }))
}

fn str_param<'a>(params: &'a Map<String, Value>, key: &str) -> Result<&'a str, RpcError> {
    params.get(key).and_then(Value::as_str).ok_or_else(|| {
        RpcError::new(
            code::INVALID_PARAMS,
            format!("`{key}` (a string) is required"),
        )
    })
}

fn complete(params: &Map<String, Value>) -> Result<Value, RpcError> {
    let reference = params.get("ref").cloned().unwrap_or_default();
    let argument = params.get("argument").cloned().unwrap_or_default();
    let (Some(name), Some(value)) = (argument["name"].as_str(), argument["value"].as_str()) else {
        return Err(RpcError::new(
            code::INVALID_PARAMS,
            "`argument` needs a `name` and a `value`",
        ));
    };
    let candidates = catalog::completion_candidates(&reference, name).ok_or_else(|| {
        RpcError::new(
            code::INVALID_PARAMS,
            format!("nothing to complete for argument `{name}` of {reference}"),
        )
    })?;
    let values: Vec<&str> = candidates
        .iter()
        .copied()
        .filter(|c| c.starts_with(value))
        .collect();
    Ok(json!({ "completion": { "values": values, "total": values.len(), "hasMore": false } }))
}

#[cfg(test)]
mod flow_tests;
#[cfg(test)]
mod tests;
