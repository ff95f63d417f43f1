//! One live connection to a downstream server, whatever its transport: outbound request ids,
//! the table of requests waiting for an answer, and the dispatch of what the server sends
//! (responses to their waiters; notifications and server-to-client requests to the fleet).
//! It never interprets a result: replies are handed on as raw JSON.

use crate::jsonrpc::pending::Pending;
use crate::jsonrpc::{self, Kind, RawMessage};
use crate::protocol::{self, ClientCapabilities, Era};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot, watch};

/// What became of a request sent downstream.
#[derive(Debug)]
pub enum Reply {
    Result(Box<RawValue>),
    /// The JSON-RPC `error` object, verbatim.
    Error(Box<RawValue>),
    /// No answer will come: the server exited, the transport failed, or the reply was unusable.
    Lost(String),
}

/// Messages the server sent that are not replies.
#[derive(Debug)]
pub enum Inbound {
    Notification {
        method: String,
        params: Option<Box<RawValue>>,
    },
    Request {
        id: Box<RawValue>,
        method: String,
        params: Option<Box<RawValue>>,
    },
    /// The server's session was renewed without a new process or connection (an HTTP server
    /// forgot it): what the old session was told (subscriptions, the log level) is lost.
    Renewed,
}

/// Receives what the server sends that is not a reply, synchronously and in arrival order, so
/// a progress notification is always relayed before the reply that follows it.
pub type InboundSink = Arc<dyn Fn(&Arc<Connection>, Inbound) + Send + Sync>;

/// How frames leave loom for this server.
pub enum Outbound {
    Stdio(mpsc::UnboundedSender<StdioFrame>),
    Http(Arc<super::http::HttpSink>),
}

pub enum StdioFrame {
    Line(String),
    /// Close the child's stdin (the first step of a graceful shutdown).
    CloseStdin,
}

/// How a handshake begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opening {
    /// `server/discover`, then `initialize` if the server answers that it is legacy.
    Discover,
    /// `initialize` only: for a fresh process after a `server/discover` that went unanswered.
    Initialize,
}

/// Why a handshake did not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandshakeError {
    /// The server never answered `server/discover`: it is slow, hung, or a legacy server that
    /// ignores requests before `initialize`. The era is unknown, so `initialize` must not follow
    /// on this connection.
    #[error("no answer to server/discover within {:.1}s (handshake_timeout)", waited.as_secs_f64())]
    Unanswered { waited: std::time::Duration },
    #[error("{0}")]
    Failed(String),
}

/// What the server told us in the handshake.
#[derive(Debug, Clone)]
pub struct Handshake {
    pub era: Era,
    pub version: String,
    pub capabilities: Value,
    pub server_info: Value,
    pub instructions: Option<String>,
}

pub struct Connection {
    pub server: String,
    outbound: Outbound,
    pending: Pending<Reply>,
    inbound: InboundSink,
    closed: watch::Sender<Option<String>>,
    era: Mutex<Era>,
    /// What the server said about how to use it, in its handshake.
    instructions: Mutex<Option<String>>,
    /// The `description` of its `serverInfo` (2025-11-25 and later), in its handshake.
    description: Mutex<Option<String>>,
    client_caps: ClientCapabilities,
    /// The `_meta` members every request to a 2026-07-28 server carries, written once.
    stamp: super::stamp::Stamp,
    log_level: Mutex<Option<String>>,
    /// Whether the server said in its handshake that it takes `logging/setLevel`.
    logs: std::sync::atomic::AtomicBool,
    /// How many complaints about ignored messages were logged, so garbage cannot flood the log.
    noise: Mutex<super::noise::NoiseLog>,
}

impl Connection {
    pub fn new(
        server: &str,
        outbound: Outbound,
        client_caps: ClientCapabilities,
        inbound: InboundSink,
    ) -> Arc<Connection> {
        let conn = Connection {
            server: server.to_owned(),
            outbound,
            pending: Pending::default(),
            inbound,
            closed: watch::channel(None).0,
            era: Mutex::new(Era::Legacy),
            instructions: Mutex::new(None),
            description: Mutex::new(None),
            stamp: super::stamp::Stamp::new(&client_caps),
            client_caps,
            log_level: Mutex::new(None),
            logs: std::sync::atomic::AtomicBool::new(false),
            noise: Mutex::new(super::noise::NoiseLog::default()),
        };
        Arc::new(conn)
    }

    /// Whether the server takes `logging/setLevel` (it said so in its handshake).
    pub fn takes_log_level(&self) -> bool {
        self.logs.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The server's session was renewed: whoever listens re-tells it what it forgot.
    pub(super) fn renewed(self: &Arc<Self>) {
        (self.inbound)(self, Inbound::Renewed);
    }

    pub fn era(&self) -> Era {
        *lock(&self.era)
    }

    pub fn set_log_level(&self, level: Option<String>) {
        *lock(&self.log_level) = level;
    }

    /// Handles one message from the server.
    pub fn handle_incoming(self: &Arc<Self>, bytes: &[u8]) {
        // A pretty-printed body (an HTTP server's, or an event of several `data:` lines) holds
        // line breaks; in valid JSON they can only be whitespace between tokens, never inside a
        // string, so they become spaces: what loom passes on is one line, as every framing
        // upward (stdio lines, SSE `data:`) needs.
        let flat;
        let bytes = if bytes.iter().any(|b| matches!(b, b'\n' | b'\r')) {
            flat = bytes
                .iter()
                .map(|&b| if matches!(b, b'\n' | b'\r') { b' ' } else { b })
                .collect::<Vec<u8>>();
            &flat[..]
        } else {
            bytes
        };
        let msg = match RawMessage::parse(bytes) {
            Ok(m) => m,
            Err(e) => {
                self.unreadable(bytes, &e);
                return;
            }
        };
        match msg.kind() {
            Kind::Response => {
                let Some(id) = msg.numeric_id() else {
                    self.ignored(format_args!("response with an id loom never sent"));
                    return;
                };
                let reply = match (msg.result, msg.error) {
                    (Some(r), _) => Reply::Result(r),
                    (None, Some(e)) => Reply::Error(e),
                    (None, None) => Reply::Lost("empty response".into()),
                };
                self.resolve(id, reply);
            }
            Kind::Notification => {
                let method = msg.method.unwrap_or_default();
                (self.inbound)(
                    self,
                    Inbound::Notification {
                        method,
                        params: msg.params,
                    },
                );
            }
            Kind::Request => {
                let (Some(id), Some(method)) = (msg.id, msg.method) else {
                    return;
                };
                (self.inbound)(
                    self,
                    Inbound::Request {
                        id,
                        method,
                        params: msg.params,
                    },
                );
            }
            Kind::Invalid(why) => self.ignored(format_args!("ignoring an invalid message: {why}")),
        }
    }

    /// A message that does not parse. One that is not valid UTF-8 but is still a reply to a
    /// request loom waits for (its id read from the lossy text) fails that request at once: the
    /// altered text is never passed off as the server's result, and the caller does not wait
    /// out its timeout.
    fn unreadable(&self, bytes: &[u8], error: &serde_json::Error) {
        let Err(bad) = std::str::from_utf8(bytes) else {
            self.ignored(format_args!(
                "ignoring a line that is not JSON-RPC: {error}"
            ));
            return;
        };
        let at = bad.valid_up_to();
        match jsonrpc::response_id_lenient(bytes).filter(|id| self.pending.is_waiting(*id)) {
            Some(id) => {
                tracing::warn!(server = %self.server, "the reply to request {id} is not valid UTF-8 (at byte {at}); the request fails");
                self.resolve(
                    id,
                    Reply::Lost(format!(
                        "server `{}` replied with text that is not valid UTF-8 (at byte {at})",
                        self.server
                    )),
                );
            }
            None => self.ignored(format_args!(
                "ignoring a line that is not valid UTF-8 (at byte {at})"
            )),
        }
    }

    /// Logs a message the server sent that loom ignores: the first few one by one, then a count
    /// once a minute.
    fn ignored(&self, what: std::fmt::Arguments<'_>) {
        use super::noise::Say;
        let say = lock(&self.noise).note(std::time::Instant::now());
        match say {
            Say::Each { last: false } => tracing::warn!(server = %self.server, "{what}"),
            Say::Each { last: true } => tracing::warn!(
                server = %self.server,
                "{what} (further messages loom ignores from this server are counted and logged once a minute)"
            ),
            Say::Summary { count, over } => tracing::warn!(
                server = %self.server,
                "ignored {count} more messages in the last {}s (not JSON-RPC, or answering nothing); the latest: {what}",
                over.as_secs()
            ),
            Say::Nothing => {}
        }
    }

    /// A message too large to accept: fail the request it answers, if that can be told.
    pub fn handle_oversize(&self, prefix: &[u8], len: usize, limit: usize) {
        tracing::warn!(server = %self.server, "dropped a {len}-byte message (limit {limit})");
        if let Some(id) = jsonrpc::sniff_numeric_id(prefix) {
            self.resolve(id, Reply::Lost(format!("the reply was {len} bytes, over the {limit}-byte limit (max_downstream_message_bytes)")));
        }
    }

    /// A message that passed the limit while it streamed and was cut off there (its full size is
    /// never read): fail the request it answers. On a request's own HTTP stream that is
    /// `request`; elsewhere the id is sniffed from the first bytes, as for an oversize line.
    pub fn handle_cut_off(&self, prefix: &[u8], limit: usize, request: Option<u64>) {
        tracing::warn!(server = %self.server, "cut off a message over {limit} bytes while it streamed");
        if let Some(id) = request.or_else(|| jsonrpc::sniff_numeric_id(prefix)) {
            self.resolve(
                id,
                Reply::Lost(format!(
                    "the reply passed the {limit}-byte limit (max_downstream_message_bytes) and was cut off while it streamed"
                )),
            );
        }
    }

    /// Fails the request `id` with `reason` (its reply is known never to come).
    pub fn fail(&self, id: u64, reason: &str) {
        self.resolve(id, Reply::Lost(reason.to_owned()));
    }

    /// Transport work that follows a successful handshake.
    pub fn established(self: &Arc<Self>, hs: &Handshake) {
        lock(&self.instructions).clone_from(&hs.instructions);
        *lock(&self.description) = hs.server_info["description"].as_str().map(str::to_owned);
        self.logs.store(
            hs.capabilities.get("logging").is_some(),
            std::sync::atomic::Ordering::Relaxed,
        );
        if hs.era == Era::Modern {
            self.listen_for_changes(&hs.capabilities);
        }
        if let Outbound::Http(sink) = &self.outbound {
            sink.set_version(&hs.version);
            if hs.era == Era::Legacy {
                sink.listen(self.clone());
            }
        }
    }

    /// A 2026-07-28 server tells of list changes only on a listen stream: loom opens one for
    /// every list the server says can change, and leaves it open for the connection's life
    /// (its notifications arrive like any other; a new connection opens a new one).
    fn listen_for_changes(self: &Arc<Self>, caps: &Value) {
        let changes = |k: &str| caps[k]["listChanged"].as_bool().unwrap_or(false);
        let (tools, prompts, resources) =
            (changes("tools"), changes("prompts"), changes("resources"));
        if !(tools || prompts || resources) {
            return;
        }
        let filter = json!({ "notifications": {
            "toolsListChanged": tools,
            "promptsListChanged": prompts,
            "resourcesListChanged": resources,
        } });
        let Value::Object(params) = filter else {
            return;
        };
        // Never answered while the stream is open; the reply, if any, is not waited for.
        let _ = self.send_request("subscriptions/listen", Some(params));
    }

    /// Whether request `id` is still waited for (not answered, failed, cancelled nor forgotten).
    pub fn is_waiting(&self, id: u64) -> bool {
        self.pending.is_waiting(id)
    }

    /// Requests loom sent this server that it has not answered yet.
    pub fn requests_waiting(&self) -> usize {
        self.pending.waiting()
    }

    /// The server's `instructions` from its handshake.
    pub fn instructions(&self) -> Option<String> {
        lock(&self.instructions).clone()
    }

    /// The `description` in the server's `serverInfo`, from its handshake.
    pub fn description(&self) -> Option<String> {
        lock(&self.description).clone()
    }

    fn resolve(&self, id: u64, reply: Reply) {
        self.pending.resolve(id, reply);
    }

    /// Marks the connection dead and fails every waiting request with `reason`.
    pub fn close(&self, reason: &str) {
        if self.closed.borrow().is_some() {
            return;
        }
        self.closed.send_replace(Some(reason.to_owned()));
        let unlogged = lock(&self.noise).unlogged();
        if unlogged > 0 {
            tracing::warn!(server = %self.server, "ignored {unlogged} more messages before the connection closed (not JSON-RPC, or answering nothing)");
        }
        self.pending.close(|| Reply::Lost(reason.to_owned()));
        // No reply stream is read for a closed connection.
        if let Outbound::Http(sink) = &self.outbound {
            sink.close_streams();
        }
    }

    pub fn closed_reason(&self) -> Option<String> {
        self.closed.borrow().clone()
    }

    /// Resolves when the connection is closed, with the reason.
    pub async fn wait_closed(&self) -> String {
        let mut rx = self.closed.subscribe();
        loop {
            if let Some(r) = rx.borrow_and_update().clone() {
                return r;
            }
            if rx.changed().await.is_err() {
                return "connection dropped".into();
            }
        }
    }

    /// Sends a request; the receiver yields its reply. Returns the downstream id for cancelling.
    pub fn send_request(
        self: &Arc<Self>,
        method: &str,
        params: Option<Map<String, Value>>,
    ) -> (u64, oneshot::Receiver<Reply>) {
        let (id, rx, _) = self.send_request_kept(method, params, false);
        (id, rx)
    }

    /// `send_request`, and when `keep`, the params' text as it was sent (stamped for this
    /// server's era; `{}` when the connection had closed and nothing was sent).
    pub fn send_request_kept(
        self: &Arc<Self>,
        method: &str,
        params: Option<Map<String, Value>>,
        keep: bool,
    ) -> (u64, oneshot::Receiver<Reply>, Option<String>) {
        let (id, rx) = self.pending.register(|| {
            Reply::Lost(
                self.closed_reason()
                    .unwrap_or_else(|| "connection closed".into()),
            )
        });
        if self.pending.is_closed() {
            return (id, rx, keep.then(|| "{}".to_owned()));
        }
        let (line, sent) = self.stamp.request_line(
            self.era(),
            lock(&self.log_level).as_deref(),
            id,
            method,
            params.as_ref(),
        );
        let sent = keep.then(|| line[sent].to_owned());
        self.send_frame(line, Some((id, method)));
        (id, rx, sent)
    }

    /// A request loom makes for itself (handshake, listing), with a deadline.
    pub async fn call(
        self: &Arc<Self>,
        method: &str,
        params: Option<Map<String, Value>>,
        timeout: std::time::Duration,
    ) -> Reply {
        let (id, rx) = self.send_request(method, params);
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => Reply::Lost("connection dropped".into()),
            Err(_) => {
                self.forget(id);
                Reply::Lost(format!(
                    "no reply to {method} within {:.1}s",
                    timeout.as_secs_f64()
                ))
            }
        }
    }

    /// Stops waiting for `id` and tells the server to stop working on it: on 2026-07-28 over
    /// HTTP by closing the request's stream (`notifications/cancelled` is for stdio there); on
    /// older eras over HTTP by `notifications/cancelled`, and then its stream is closed too,
    /// since nothing on it is awaited any more.
    pub fn cancel(self: &Arc<Self>, id: u64, reason: &str) {
        if self.pending.forget(id) {
            if let Outbound::Http(sink) = &self.outbound
                && self.era() == Era::Modern
            {
                sink.close_stream(id);
                return;
            }
            let params = json!({ "requestId": id, "reason": reason });
            self.notify("notifications/cancelled", Some(params));
            if let Outbound::Http(sink) = &self.outbound {
                sink.close_stream(id);
            }
        }
    }

    /// Drops the waiter for `id` without telling the server.
    pub fn forget(&self, id: u64) {
        self.pending.forget(id);
    }

    pub fn notify(self: &Arc<Self>, method: &str, params: Option<Value>) {
        let params = params.map(|p| jsonrpc::to_raw(&p));
        self.send_frame(jsonrpc::notification(method, params.as_deref()), None);
    }

    /// Answers a request the server sent us.
    pub fn respond(self: &Arc<Self>, id: &RawValue, outcome: Result<&RawValue, &RawValue>) {
        let line = match outcome {
            Ok(result) => jsonrpc::response(id, result),
            Err(error) => jsonrpc::error_response_raw(id, error),
        };
        self.send_frame(line, None);
    }

    fn send_frame(self: &Arc<Self>, line: String, request: Option<(u64, &str)>) {
        match &self.outbound {
            Outbound::Stdio(tx) => {
                if tx.send(StdioFrame::Line(line)).is_err() {
                    self.close("the server's stdin is closed");
                }
            }
            Outbound::Http(sink) => sink.post(self.clone(), line, request),
        }
    }

    /// First step of a graceful stop: close stdin (stdio) or end the session (HTTP, awaited).
    pub async fn begin_shutdown(self: &Arc<Self>) {
        match &self.outbound {
            Outbound::Stdio(tx) => {
                let _ = tx.send(StdioFrame::CloseStdin);
            }
            Outbound::Http(sink) => sink.end_session().await,
        }
    }

    /// Whether the server refused loom's credentials (HTTP 401): restarting will not help.
    pub fn needs_authentication(&self) -> bool {
        matches!(&self.outbound, Outbound::Http(sink) if sink.needs_authentication())
    }

    /// Negotiates the era. With [`Opening::Discover`], `server/discover` is sent and its answer
    /// waited for until the deadline, however slow the server is to start: only the server's
    /// own answer chooses the era (a result naming 2026-07-28 is modern; an error, such as
    /// method not found, or a result without it is legacy, and `initialize` follows on the same
    /// connection, which cannot race anything since the server has answered). Silence is no
    /// answer: sending `initialize` after it would reach a slow 2026-07-28 server as a second
    /// opening, which it refuses, so the handshake fails with [`HandshakeError::Unanswered`]
    /// and the caller starts a fresh process with [`Opening::Initialize`].
    pub async fn handshake(
        self: &Arc<Self>,
        opening: Opening,
        timeout: std::time::Duration,
    ) -> Result<Handshake, HandshakeError> {
        let deadline = tokio::time::Instant::now() + timeout;
        if opening == Opening::Discover {
            *lock(&self.era) = Era::Modern;
            let (id, rx) = self.send_request("server/discover", None);
            let answer = match tokio::time::timeout_at(deadline, rx).await {
                Ok(Ok(reply)) => reply,
                Ok(Err(_)) => Reply::Lost("connection dropped".into()),
                Err(_) => {
                    self.forget(id);
                    return Err(HandshakeError::Unanswered { waited: timeout });
                }
            };
            if let Some(reason) = self.closed_reason() {
                return Err(HandshakeError::Failed(reason));
            }
            if let Some(hs) = discovered(&answer) {
                return Ok(hs);
            }
        }
        *lock(&self.era) = Era::Legacy;
        let params = json!({
            "protocolVersion": protocol::V_2025_11_25,
            "capabilities": self.client_caps.to_value(),
            "clientInfo": client_info(),
        });
        let Value::Object(params) = params else {
            unreachable!("json! object")
        };
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let fail = |why: String| Err(HandshakeError::Failed(why));
        match self
            .call(
                "initialize",
                Some(params),
                left.max(std::time::Duration::from_millis(100)),
            )
            .await
        {
            Reply::Result(raw) => {
                let v: Value = match serde_json::from_str(raw.get()) {
                    Ok(v) => v,
                    Err(e) => return fail(format!("initialize result is not JSON: {e}")),
                };
                if !v.is_object() {
                    return fail(format!(
                        "server answered initialize with {} instead of an object (protocolVersion, capabilities, serverInfo)",
                        raw.get().chars().take(80).collect::<String>()
                    ));
                }
                let version = v["protocolVersion"].as_str().unwrap_or_default().to_owned();
                if !protocol::is_supported(&version) {
                    return fail(format!(
                        "server answered initialize with unsupported protocol version \"{version}\""
                    ));
                }
                self.notify("notifications/initialized", None);
                Ok(Handshake {
                    era: Era::Legacy,
                    version,
                    capabilities: v["capabilities"].clone(),
                    server_info: v["serverInfo"].clone(),
                    instructions: v["instructions"].as_str().map(str::to_owned),
                })
            }
            Reply::Error(e) => fail(format!("initialize failed: {}", e.get())),
            Reply::Lost(why) => fail(format!("handshake failed: {why}")),
        }
    }

    /// Fetches every page of a list method (`tools/list` …), concatenating `key` arrays. Entries
    /// are read one by one: one that is not valid drops only itself, and what was left out is
    /// logged once per listing.
    pub async fn list_all(
        self: &Arc<Self>,
        method: &str,
        key: &str,
        timeout: std::time::Duration,
    ) -> Result<Vec<Map<String, Value>>, String> {
        let mut out = Vec::new();
        let mut dropped = super::entries::Dropped::default();
        let mut cursor: Option<String> = None;
        for _page in 0..10_000 {
            let params = cursor.take().map(|c| {
                let mut m = Map::new();
                m.insert("cursor".into(), Value::String(c));
                m
            });
            match self.call(method, params, timeout).await {
                Reply::Result(raw) => {
                    let page = super::entries::read_page(&raw, key, &mut dropped);
                    out.extend(page.items);
                    match page.next_cursor {
                        Some(c) => cursor = Some(c),
                        None => {
                            if let Some(said) = dropped.describe(key) {
                                tracing::warn!(server = %self.server, "{method}: {said}");
                            }
                            return Ok(out);
                        }
                    }
                }
                Reply::Error(e) => return Err(format!("{method} failed: {}", e.get())),
                Reply::Lost(why) => return Err(format!("{method}: {why}")),
            }
        }
        Err(format!("{method}: gave up after 10000 pages"))
    }
}

/// The handshake of a server that answered `server/discover` with a result naming 2026-07-28;
/// `None` for any other answer (the server is legacy).
fn discovered(answer: &Reply) -> Option<Handshake> {
    let Reply::Result(raw) = answer else {
        return None;
    };
    let v = serde_json::from_str::<Value>(raw.get()).ok()?;
    let modern = v["supportedVersions"]
        .as_array()
        .is_some_and(|a| a.iter().any(|x| x == protocol::V_2026_07_28));
    modern.then(|| Handshake {
        era: Era::Modern,
        version: protocol::V_2026_07_28.into(),
        capabilities: v["capabilities"].clone(),
        server_info: v["_meta"][protocol::META_SERVER_INFO].clone(),
        instructions: v["instructions"].as_str().map(str::to_owned),
    })
}

pub fn client_info() -> Value {
    static INFO: std::sync::LazyLock<Value> = std::sync::LazyLock::new(
        || json!({ "name": "loom", "version": env!("CARGO_PKG_VERSION") }),
    );
    INFO.clone()
}

/// Poisoning only follows a panic elsewhere; the data is still usable.
pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
