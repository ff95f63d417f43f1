//! The merged surface served to one MCP client: the handshake of either era, routing of every
//! request to the server behind an exposed name or URI, progress tokens and cancellations
//! mapped both ways, and server-to-client requests relayed when the client can take them.
//! Results that loom does not change are spliced back verbatim.

mod alarm;
mod bind;
mod bridge;
mod calls;
mod each;
mod forward;
mod handshake;
mod history_tool;
mod intercept;
mod listen;
pub mod listing;
mod meta;
mod relay;
mod rounds;
pub mod tools;

use handshake::with_result_type;

use crate::downstream::connection::{Reply, lock};
use crate::downstream::{Fleet, ListKind, ServerHandle};
use crate::jsonrpc::{self, Kind, RawMessage, RpcError, code};
use crate::protocol::{self, ClientCapabilities, Era};
use crate::session::approvals::{ApprovalRequest, Verdict};
use crate::session::calls::CallSummary;
use crate::session::{Event, FleetListener, ServerRequest, Session};
use crate::types::events::{Caller, Outcome};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::time::Instant;

/// Numbers the clients of this process.
static NEXT_CLIENT: AtomicU64 = AtomicU64::new(1);

/// Why a call in flight stops before its answer.
enum Stop {
    /// The client cancelled its own request: it expects no answer.
    Client(String),
    /// A person cancelled it from the workbench: the client is still answered, with an error
    /// result that says so.
    Person,
}

/// What a client reads when a person cancelled its call.
const CANCELLED_BY_PERSON: &str = "cancelled by a person at the loom workbench";

struct InFlight {
    cancel: oneshot::Sender<Stop>,
    /// The server the call went to.
    server: String,
    /// Where the server's questions during this call go, for a 2026-07-28 client, with the
    /// capabilities that request declared.
    questions: Option<(mpsc::UnboundedSender<ServerRequest>, ClientCapabilities)>,
    /// The log level a 2026-07-28 request asked for: messages for it at or above it reach
    /// the client; with none, none do.
    log_level: Option<String>,
}

/// Where a server's progress for one request goes: to the client under its own token (when
/// it asked for progress), and to the bus for the workbench (when the request is a logged
/// call; loom then asks the server for progress itself if the client did not).
struct ProgressRoute {
    upstream_token: Option<Value>,
    notify: Arc<Notify>,
    call: Option<u64>,
}

struct RelayedRequest {
    conn: Arc<crate::downstream::connection::Connection>,
    downstream_id: Box<RawValue>,
    method: String,
}

/// One upstream MCP client and everything loom tracks for it.
pub struct ClientSession {
    session: Arc<Session>,
    /// Who this client is in the call log: `model` or `human`.
    caller: Caller,
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
    /// The servers whose tools, prompts and resources this client's lists show (`None`: all).
    listing: Mutex<Option<Vec<String>>>,
    /// How this client reaches loom (`stdio`, `HTTP from 127.0.0.1:53122`, …), for the call log.
    transport: Mutex<Option<String>>,
    /// The client's own name and version, from `initialize` or a request's `_meta`.
    client_info: Mutex<Option<String>>,
    /// This connection's listing mode, over the config's (`loom connect --listing`, `?listing=`).
    listing_mode: Mutex<Option<crate::config::ListingMode>>,
    /// What this connection asked for that loom could not do (an unknown listing mode or
    /// server), said at the end of its primer so that the client learns of it.
    notices: Mutex<Vec<String>>,
    /// Open `subscriptions/listen` streams (2026-07-28 clients).
    listens: Mutex<Vec<listen::Listen>>,
    /// Questions loom asked this client for a modern server (by our request id), waiting.
    asked: Mutex<HashMap<String, oneshot::Sender<Result<Value, Value>>>>,
    /// This client among the session's clients (for the subscriptions they share).
    number: u64,
    /// What is to be sent while the handshake's answer is composed (the servers' requests and
    /// notifications as they come up): held, to follow the answer, never precede it.
    held: Mutex<Option<Vec<String>>>,
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
    /// When it started, in seconds since the epoch (`summary.at` is written from it when the
    /// call is announced).
    wall: u64,
    /// The arguments as provenance records them when they are not the ones sent (a bound
    /// call's, before loom put data into them).
    logged_args: Option<Value>,
    /// The result goes back as the server sent it, never intercepted (a batch's calls, whose
    /// results the batch gathers itself).
    keep_raw: bool,
    /// The params the call log and the workbench have not been told of yet: a call no one is
    /// asked about is announced once its request has left for the server, so that the log's
    /// work runs while the server works, not before it (see `announce`).
    unannounced: Option<Map<String, Value>>,
}

/// How a call reached `call_tool`, when not directly: through which loom tool, and what
/// loom bound into its arguments.
#[derive(Default)]
struct Via {
    tool: Option<&'static str>,
    bindings: Vec<crate::types::events::Binding>,
    /// The params as the call log shows them (a bound call's, without the bound values).
    logged: Option<Map<String, Value>>,
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
    f: impl FnOnce() -> Result<Value, tools::ToolError> + Send + 'static,
) -> Box<RawValue> {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(v)) => jsonrpc::to_raw(&v),
        Ok(Err(e)) => tool_error(&e.to_string()),
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
        caller: Caller,
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
            listing: Mutex::new(None),
            transport: Mutex::new(None),
            client_info: Mutex::new(None),
            listing_mode: Mutex::new(None),
            notices: Mutex::new(Vec::new()),
            listens: Mutex::new(Vec::new()),
            asked: Mutex::new(HashMap::new()),
            number: NEXT_CLIENT.fetch_add(1, Ordering::Relaxed),
            held: Mutex::new(None),
        });
        let weak: std::sync::Weak<ClientSession> = Arc::downgrade(&client);
        client.session.add_listener(weak);
        client
    }

    fn send(&self, line: String) {
        if let Some(held) = lock(&self.held).as_mut() {
            held.push(line);
            return;
        }
        let _ = self.out.send(line);
    }

    /// Holds what is sent from now on until [`ClientSession::answer_and_release`].
    fn hold(&self) {
        lock(&self.held).get_or_insert_with(Vec::new);
    }

    /// Sends `answer`, then whatever was held since [`ClientSession::hold`], in order.
    fn answer_and_release(&self, answer: String) {
        let mut held = lock(&self.held);
        let _ = self.out.send(answer);
        for line in held.take().unwrap_or_default() {
            let _ = self.out.send(line);
        }
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// The client went away: its calls (waiting for approval or in flight) are cancelled, the
    /// servers' requests relayed to it are answered with an error, and it takes no more.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let last = self.session.subscriptions.drop_client(self.number);
        if let Some(fleet) = self.fleet() {
            for (uri, server) in last {
                self.session.subscriptions.end(fleet, &uri, &server);
            }
        }
        if lock(&self.log_level).is_some() {
            self.session.log_levels_changed();
        }
        for (_, f) in lock(&self.in_flight).drain() {
            let _ = f
                .cancel
                .send(Stop::Client("the client disconnected".into()));
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

    /// Says how this client reaches loom, for the call log and the workbench.
    pub fn describe_transport(&self, how: String) {
        *lock(&self.transport) = Some(how);
    }

    /// Remembers the client's `clientInfo` (name and version), as it introduced itself.
    fn learn_client_info(&self, info: Option<&Value>) {
        let Some(info) = info else { return };
        let name = info.get("name").and_then(Value::as_str).unwrap_or_default();
        let version = info
            .get("version")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let label = format!("{name} {version}");
        let label = label.trim();
        if !label.is_empty() {
            *lock(&self.client_info) = Some(crate::session::calls::cap_text(label, 80));
        }
    }

    /// Who this client is, for the call log: its name and how it reaches loom.
    fn client_label(&self) -> Option<String> {
        let parts: Vec<String> = [
            lock(&self.client_info).clone(),
            lock(&self.transport).clone(),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!parts.is_empty()).then(|| parts.join(" · "))
    }

    /// Says `text` at the end of this connection's primer (what it asked for and did not get).
    pub fn add_notice(&self, text: String) {
        lock(&self.notices).push(text);
    }

    /// Lists this connection's tools in `mode`, whatever the config says.
    pub fn set_listing_mode(&self, mode: crate::config::ListingMode) {
        *lock(&self.listing_mode) = Some(mode);
    }

    /// Every tool placed for this client: listed (and why) or not.
    pub fn placed_tools(&self, fleet: &Fleet) -> Vec<listing::Placed> {
        let only = lock(&self.listing).clone();
        let served = fleet
            .served_tools()
            .into_iter()
            .filter(|t| only.as_ref().is_none_or(|o| o.contains(&t.server)))
            .collect();
        listing::place(&self.listing_inputs(), served)
    }

    /// What decides this client's listing now.
    fn listing_inputs(&self) -> listing::Inputs<'_> {
        listing::Inputs {
            config: &self.session.config,
            connection: *lock(&self.listing_mode),
            state: &self.session.listing,
        }
    }

    /// Lists only these servers' tools, prompts and resources to this client (loom's own
    /// always); every name stays callable.
    pub fn narrow_listing(&self, servers: Vec<String>) {
        *lock(&self.listing) = Some(servers);
    }

    /// Starts the downstream servers once per session; the first client's capabilities are
    /// what loom declares to them.
    async fn ensure_fleet(self: &Arc<Self>) -> Arc<Fleet> {
        let caps = lock(&self.caps).clone();
        self.session.ensure_fleet(caps).await
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
                if bytes.trim_ascii_start().starts_with(b"[") {
                    self.send(jsonrpc::error_response(
                        &jsonrpc::raw_null(),
                        code::INVALID_REQUEST,
                        "JSON-RPC batches are not supported: MCP sends one message per line (batching left the protocol in 2025-06-18)",
                        None,
                    ));
                    return;
                }
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
            // An id is a string or a number (JSON-RPC 2.0, MCP): an object, array or boolean is
            // refused, with no id to answer to.
            Kind::Request if msg.has_unusable_id() => {
                self.send(jsonrpc::error_response(
                    &jsonrpc::raw_null(),
                    code::INVALID_REQUEST,
                    jsonrpc::UNUSABLE_ID,
                    None,
                ));
            }
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
                // Boxed: the task then holds a pointer, not the whole request's state, which
                // spawning and finishing would otherwise copy.
                tokio::spawn(Box::pin(self.clone().handle_request(msg, active)));
                // The request's task runs first: its message reaches the server before the
                // caller's reading loop asks for more (a read that usually finds nothing).
                tokio::task::yield_now().await;
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
        let (reply, ended) = AFTER_REPLY
            .scope(std::cell::RefCell::new(Vec::new()), async {
                let reply = self.dispatch(&id, &method, msg.params.as_deref()).await;
                (reply, AFTER_REPLY.with(|e| e.take()))
            })
            .await;
        let reply = match reply {
            Ok(line) => line,
            Err(e) => Some(jsonrpc::error_response(&id, e.code, &e.message, e.data)),
        };
        // Released before the answer leaves, so the client may reuse the id once it has it.
        drop(active);
        if let Some(reply) = reply {
            self.send(reply);
            if !ended.is_empty() {
                // The writer takes the answer to the client before the call is logged.
                tokio::task::yield_now().await;
            }
        }
        for e in ended {
            e.log(&self.session);
        }
    }
}

tokio::task_local! {
    /// The ends of calls that a request's task logs once its answer has left (`after_reply`).
    static AFTER_REPLY: std::cell::RefCell<Vec<calls::Ended>>;
}

/// Logs a call's end once the answer of the request it belongs to has gone to the client's
/// writer, when that request runs in `handle_request`; at once otherwise. On a small machine
/// the log's work (redacting, the call log, the bus, the archive's queue) took a core from the
/// server and the client while the call was in flight: ~30 µs of a small call's added latency
/// (BENCHMARKS.md, "What is left of the added latency").
fn after_reply(session: &Session, ended: calls::Ended) {
    let mut ended = Some(ended);
    let _ = AFTER_REPLY.try_with(|queue| queue.borrow_mut().extend(ended.take()));
    if let Some(ended) = ended {
        ended.log(session);
    }
}

/// The server name loom's own tools are logged under.
const LOOM_SERVER: &str = "loom";
const PRIMER_URI: &str = "loom://primer";
/// Token budget of the session primer.
const PRIMER_BUDGET: usize = 800;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_type_is_spliced_without_touching_the_rest() {
        let info = format!(
            r#""_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"loom","version":"{}"}}}}"#,
            env!("CARGO_PKG_VERSION")
        );
        let raw = RawValue::from_string(r#"{"content":[],  "z":"\u00e9"}"#.into()).unwrap();
        assert_eq!(
            with_result_type(raw).get(),
            format!(r#"{{"resultType":"complete",{info},"content":[],  "z":"\u00e9"}}"#)
        );
        let empty = RawValue::from_string("{ }".into()).unwrap();
        assert_eq!(
            with_result_type(empty).get(),
            format!(r#"{{"resultType":"complete",{info} }}"#)
        );
        // What the server sent stays: its resultType, its own _meta.
        let has =
            RawValue::from_string(r#"{"resultType":"input_required","_meta":{}}"#.into()).unwrap();
        assert_eq!(
            with_result_type(has).get(),
            r#"{"resultType":"input_required","_meta":{}}"#
        );
        let read = RawValue::from_string(r#"{"contents":[],"ttlMs":5}"#.into()).unwrap();
        assert_eq!(
            handshake::with_members(
                read,
                &[
                    ("resultType", "\"complete\""),
                    ("ttlMs", "0"),
                    ("cacheScope", "\"private\"")
                ]
            )
            .get(),
            r#"{"resultType":"complete","cacheScope":"private","contents":[],"ttlMs":5}"#,
            "a member the server sent is kept, the missing ones added"
        );
    }
}
