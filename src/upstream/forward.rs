//! Forwarding one request to a server: its progress token and cancellation mapped both ways, the
//! timeout, and the reply spliced back byte for byte.

use super::alarm::{Alarm, Alarms};
use super::intercept::Interception;
use super::*;

/// How long a call nobody was asked about runs before it is logged as running (at most one
/// `alarm::TICK` more); one answered sooner is logged whole once its answer has left
/// (`after_reply`).
const ANNOUNCE_AFTER: std::time::Duration = std::time::Duration::from_millis(2);

/// A request sent to a server and not answered yet: everything waiting on it needs, in this
/// request or, for a 2026-07-28 client, in its retry with the answers to the server's questions.
pub(super) struct Waiting {
    pub server: Arc<ServerHandle>,
    pub conn: Arc<crate::downstream::connection::Connection>,
    pub method: String,
    /// The tool's or prompt's name at the server, or the URI read (`resources/read`).
    pub tool: String,
    pub call_args: Option<Value>,
    pub track: Option<CallTrack>,
    pub down_id: u64,
    pub rx: oneshot::Receiver<Reply>,
    /// The progress token loom gave the server (as a map key), when the client asked.
    pub down_token: Option<String>,
    /// The request's params as sent (for a legacy client), for a retry with a modern server's
    /// questions answered.
    pub asked_again: Option<String>,
    /// The capabilities the client declared on the request (2026-07-28: per request).
    pub caps: ClientCapabilities,
    /// The log level the request asked for (2026-07-28: per request).
    pub log_level: Option<String>,
    /// Questions the server asks during the call, for a 2026-07-28 client (see `rounds`);
    /// `None` for a legacy client, which is asked them while the call waits.
    pub questions: Option<(
        mpsc::UnboundedSender<ServerRequest>,
        mpsc::UnboundedReceiver<ServerRequest>,
    )>,
    /// Where a question left untaken when the request ends goes instead.
    pub session: std::sync::Weak<Session>,
}

/// A question the server asked while this request was waiting, that the request ended before
/// taking up (its answer came first, or it was cancelled or timed out), may belong to another
/// request on the same server (a legacy server's questions name no request): it is routed
/// again, and answered with an error when no one takes it, so that the server never waits for
/// it until its own timeout.
impl Drop for Waiting {
    fn drop(&mut self) {
        let Some((_, questions)) = &mut self.questions else {
            return;
        };
        questions.close();
        while let Ok(q) = questions.try_recv() {
            match self.session.upgrade() {
                Some(session) => session.route_server_request(q),
                None => {
                    let err = jsonrpc::to_raw(&json!({
                        "code": code::INTERNAL_ERROR,
                        "message": "the request this question belongs to has ended",
                    }));
                    q.conn.respond(&q.id, Err(&err));
                }
            }
        }
    }
}

/// The next question a server asked during a call.
async fn next_question(rx: Option<&mut mpsc::UnboundedReceiver<ServerRequest>>) -> ServerRequest {
    match rx {
        Some(rx) => match rx.recv().await {
            Some(q) => q,
            None => std::future::pending().await,
        },
        None => std::future::pending().await,
    }
}

/// A server's question during a 2026-07-28 request that did not declare the capability it
/// needs: the server hears that the client cannot answer, its call is cancelled, and the
/// request fails with -32021 naming the capability, as a 2026-07-28 server would fail it.
fn undeclared(w: &Waiting, question: &ServerRequest) -> Option<Reply> {
    let cap = protocol::capability_for_server_request(&question.method)?;
    if w.caps.has(cap) {
        return None;
    }
    let why = format!(
        "server `{}` asked for {} during this request, which did not declare the client capability `{cap}`",
        w.server.name(),
        question.method
    );
    let refusal = jsonrpc::to_raw(&json!({
        "code": code::METHOD_NOT_FOUND,
        "message": format!("the client did not declare {cap} ({})", question.method),
    }));
    question.conn.respond(&question.id, Err(&refusal));
    w.conn.cancel(w.down_id, &why);
    Some(Reply::Error(jsonrpc::to_raw(&json!({
        "code": protocol::MISSING_CLIENT_CAPABILITY,
        "message": why,
        "data": { "requiredCapabilities": { cap: {} } },
    }))))
}

impl ClientSession {
    /// Sends a request to `server` and relays its answer, mapping progress and cancellation.
    pub(super) async fn forward(
        self: &Arc<Self>,
        id: &RawValue,
        server: &Arc<ServerHandle>,
        method: &str,
        mut params: Map<String, Value>,
        mut track: Option<CallTrack>,
    ) -> Result<Option<String>, RpcError> {
        let shape = crate::intercept::Shape::of_method(method);
        let target = match shape {
            Some(crate::intercept::Shape::Resource) => "uri",
            _ => "name",
        };
        let tool = params
            .get(target)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if method == "tools/call" && !server.rate.try_admit() {
            // Single calls and a batch's calls alike wait for the server's rate; a cancel
            // (the client's or a person's) reaches a call while it waits.
            let up_key = id_key(id);
            let call_no = track.as_ref().map(|t| t.summary.call);
            let mut cancel_rx = self.track_in_flight(&up_key, server.name(), call_no);
            let stopped = tokio::select! {
                _ = server.rate.admit() => None,
                stop = &mut cancel_rx => Some(stop),
            };
            self.untrack_in_flight(&up_key, call_no);
            if let Some(stop) = stopped {
                return Ok(match (track, stop) {
                    (Some(t), Ok(Stop::Person)) => {
                        Some(self.refuse(id, t, Outcome::Cancelled, CANCELLED_BY_PERSON))
                    }
                    (Some(t), _) => {
                        self.end_call(t, Outcome::Cancelled, None, None, "");
                        None
                    }
                    (None, _) => None,
                });
            }
        }
        let conn = match server.connection() {
            Ok(c) => c,
            Err(why) => {
                let why = why.to_string();
                if let Some(t) = track {
                    self.end_call(t, Outcome::Error, None, None, &why);
                }
                return lost(id, method == "tools/call", why);
            }
        };
        let mut down_token = None;
        let mut up_token = None;
        // A logged call always carries a progress token of loom's, so that the workbench sees
        // how far it is even when the client asked for no progress.
        let logged = track.is_some();
        if logged && !params.contains_key("_meta") {
            params.insert("_meta".into(), Value::Object(Map::new()));
        }
        if let Some(Value::Object(meta)) = params.get_mut("_meta") {
            let up = meta.get("progressToken").cloned();
            if up.is_some() || logged {
                let down = self.session.next_progress_token();
                meta.insert("progressToken".into(), Value::String(down.clone()));
                down_token = Some(Value::String(down).to_string());
                up_token = up;
            }
        }
        // A read or a prompt is logged like a call once answered, under its method and what
        // it named: its answer may become a dataset or parked text, which names the call. (It
        // is tracked only here, so that its request goes as the client sent it, with no
        // progress token of loom's.)
        if track.is_none()
            && let Some(shape) = shape.filter(|s| *s != crate::intercept::Shape::Tool)
        {
            let mut t = self.track_call(server.name(), &shape.label(&tool));
            t.unannounced = Some(params.clone());
            track = Some(t);
        }
        // Provenance records the arguments as the caller wrote them (a bound call's without
        // the data loom put in).
        let call_args = match track.as_ref().and_then(|t| t.logged_args.clone()) {
            Some(logged) => Some(logged),
            None => params.get("arguments").cloned(),
        };
        let caps = request_caps(&params);
        let log_level = request_log_level(&params);
        // A legacy client's params are kept for a retry with a modern server's questions
        // answered (see `bridge`).
        let (down_id, rx, asked_again) =
            conn.send_request_kept(method, Some(params), !self.is_modern());
        let waiting = Waiting {
            server: server.clone(),
            conn,
            method: method.to_owned(),
            tool,
            call_args,
            track,
            down_id,
            rx,
            down_token,
            asked_again,
            caps,
            log_level,
            questions: self.is_modern().then(mpsc::unbounded_channel),
            session: Arc::downgrade(&self.session),
        };
        self.await_reply(id, waiting, up_token).await
    }

    /// Waits for the server's answer to `w` and relays it as the answer to `id`: progress
    /// relayed (each step extends the deadline), cancellation passed on, a modern server's
    /// questions asked of a legacy client, a legacy server's questions turned into an
    /// `input_required` answer for a modern client, the result intercepted and the call logged.
    pub(super) async fn await_reply(
        self: &Arc<Self>,
        id: &RawValue,
        mut w: Waiting,
        up_token: Option<Value>,
    ) -> Result<Option<String>, RpcError> {
        let is_call = w.method == "tools/call";
        let shape = crate::intercept::Shape::of_method(&w.method);
        let method = w.method.clone();
        let notify = Arc::new(Notify::new());
        let call_no = w.track.as_ref().map(|t| t.summary.call);
        if let Some(key) = &w.down_token {
            lock(&self.progress).insert(
                key.clone(),
                ProgressRoute {
                    upstream_token: up_token,
                    notify: notify.clone(),
                    call: call_no,
                },
            );
        }
        let up_key = id_key(id);
        let mut cancel_rx = self.track_in_flight(&up_key, w.server.name(), call_no);
        if self.is_modern() {
            let asks = matches!(
                method.as_str(),
                "tools/call" | "prompts/get" | "resources/read"
            );
            let questions = (w.questions.as_ref())
                .filter(|_| asks)
                .map(|(tx, _)| (tx.clone(), w.caps.clone()));
            self.describe_call(&up_key, questions, w.log_level.clone());
        }
        // A call nobody was asked about is logged once answered (`after_reply`), or once it has
        // run for `ANNOUNCE_AFTER`, so that a person sees a call that takes time while it runs.
        // Both deadlines are coarse alarms, not tokio timers (see `alarm`).
        let alarms = Alarms::global();
        let mut announce_at = w
            .track
            .as_ref()
            .is_some_and(|t| t.unannounced.is_some())
            .then(|| alarms.after(ANNOUNCE_AFTER));
        let mut by_person = false;
        let timeout = w.server.spec.call_timeout;
        let mut expiry = alarms.after(timeout);
        let outcome = 'rounds: loop {
            let outcome = loop {
                tokio::select! {
                    reply = &mut w.rx => break Some(reply.unwrap_or(Reply::Lost("connection dropped".into()))),
                    _ = notify.notified() => expiry = alarms.after(timeout),
                    _ = ring(&mut announce_at) => {
                        announce_at = None;
                        if let Some(track) = w.track.as_mut() {
                            calls::announce_pending(&self.session, track);
                        }
                    }
                    _ = &mut expiry => {
                        w.conn.cancel(w.down_id, "timed out in loom");
                        break Some(Reply::Lost(format!("no answer within {:.0}s (call_timeout of server `{}`)", timeout.as_secs_f64(), w.server.name())));
                    }
                    stop = &mut cancel_rx => {
                        match stop {
                            Ok(Stop::Person) => {
                                w.conn.cancel(w.down_id, CANCELLED_BY_PERSON);
                                by_person = true;
                            }
                            Ok(Stop::Client(reason)) => w.conn.cancel(w.down_id, &reason),
                            Err(_) => w.conn.cancel(w.down_id, "cancelled"),
                        }
                        break None;
                    }
                    first = next_question(w.questions.as_mut().map(|(_, rx)| rx)) => {
                        if let Some(failed) = undeclared(&w, &first) {
                            break Some(failed);
                        }
                        // A 2026-07-28 client answers by retrying: the call waits parked.
                        if let Some(track) = w.track.as_mut() {
                            calls::announce_pending(&self.session, track);
                        }
                        self.untrack_in_flight(&up_key, call_no);
                        if let Some(k) = &w.down_token {
                            lock(&self.progress).remove(k);
                        }
                        return Ok(Some(self.park(id, w, first)));
                    }
                }
            };
            // A legacy client cannot take `input_required`: loom asks it and retries.
            if let (Some(again), Some(Reply::Result(raw))) = (&w.asked_again, &outcome)
                && let Some(ask) = bridge::input_required(raw)
            {
                if let Some(track) = w.track.as_mut() {
                    calls::announce_pending(&self.session, track);
                }
                announce_at = None;
                match self.ask_client(&ask.requests, timeout).await {
                    Ok(answers) => {
                        let mut retry: Map<String, Value> =
                            serde_json::from_str(again).unwrap_or_default();
                        retry.insert("inputResponses".into(), Value::Object(answers));
                        if let Some(state) = ask.state {
                            retry.insert("requestState".into(), state);
                        }
                        (w.down_id, w.rx) = w.conn.send_request(&method, Some(retry));
                        expiry = alarms.after(timeout);
                        continue 'rounds;
                    }
                    Err(why) => break 'rounds Some(Reply::Lost(why)),
                }
            }
            break 'rounds outcome;
        };
        self.untrack_in_flight(&up_key, call_no);
        if let Some(k) = &w.down_token {
            lock(&self.progress).remove(k);
        }
        let track = Mutex::new(w.track.take());
        let finish = |outcome: Outcome,
                      reference: Option<String>,
                      original: Option<(usize, usize)>,
                      sent: &str| {
            if let Some(t) = lock(&track).take() {
                let ended = calls::Ended::new(t, outcome, reference, original, sent);
                super::after_reply(&self.session, ended);
            }
        };
        let call_args = w.call_args.take();
        let server = &w.server;
        let tool = &w.tool;
        match outcome {
            None if by_person => {
                // The client did not cancel: it is answered, and told who stopped the call (a
                // read or a prompt has no error result: it gets a JSON-RPC error).
                let result = tool_error(CANCELLED_BY_PERSON);
                finish(Outcome::Cancelled, None, None, result.get());
                if !is_call {
                    return Err(RpcError::new(code::INTERNAL_ERROR, CANCELLED_BY_PERSON));
                }
                Ok(Some(jsonrpc::response(id, &result)))
            }
            None => {
                finish(Outcome::Cancelled, None, None, "");
                Ok(None)
            }
            Some(Reply::Result(raw)) => {
                // A legacy client gets what a legacy server would have sent, before loom
                // weighs it (a modern server's icons are no part of the result).
                let raw = if !self.is_modern() && w.conn.era() == Era::Modern {
                    protocol::legacy_result::for_legacy_client(raw)
                } else {
                    raw
                };
                let (keep_raw, lineage) = match lock(&track).as_ref() {
                    Some(t) => (
                        t.keep_raw,
                        crate::types::data::Lineage {
                            call: Some(t.summary.call),
                            inputs: t
                                .summary
                                .bindings
                                .iter()
                                .flat_map(|b| b.inputs.iter().cloned())
                                .collect(),
                            sql: None,
                        },
                    ),
                    None => (false, Default::default()),
                };
                let (raw, dataset) = match shape.filter(|_| !keep_raw) {
                    Some(shape) => match self
                        .intercept(raw, shape, server, tool, call_args, lineage)
                        .await
                    {
                        Interception::Replaced {
                            body,
                            outcome,
                            reference,
                            original_bytes,
                            original_tokens,
                        } => (
                            body,
                            Some(((outcome, reference), original_bytes, original_tokens)),
                        ),
                        Interception::Passed { body, because } => {
                            if let Some(t) = lock(&track).as_mut() {
                                t.summary.passed_because = because;
                            }
                            (body, None)
                        }
                    },
                    None => (raw, None),
                };
                let raw = match self.is_modern() {
                    // A read is cacheable: a legacy server gives no hints, so loom says "do
                    // not reuse" for it.
                    true if method == "resources/read" => handshake::with_members(
                        with_result_type(raw),
                        &[("ttlMs", "0"), ("cacheScope", "\"private\"")],
                    ),
                    true => with_result_type(raw),
                    false => raw,
                };
                match dataset {
                    Some(((outcome, reference), bytes, tokens)) => {
                        finish(outcome, Some(reference), Some((bytes, tokens)), raw.get())
                    }
                    None if is_call && reports_error(&raw) => {
                        finish(Outcome::Error, None, None, raw.get())
                    }
                    None => finish(Outcome::Passed, None, None, raw.get()),
                }
                Ok(Some(jsonrpc::response(id, &raw)))
            }
            Some(Reply::Error(raw)) => {
                finish(Outcome::Error, None, None, raw.get());
                Ok(Some(jsonrpc::error_response_raw(id, &raw)))
            }
            Some(Reply::Lost(why)) => {
                let why = format!("server `{}` failed during {method}: {why}", server.name());
                finish(Outcome::Error, None, None, &why);
                lost(id, is_call, why)
            }
        }
    }
}

/// The answer when the server could not be reached or failed: a tool error result for a call,
/// so the model reads why; a JSON-RPC error otherwise.
fn lost(id: &RawValue, is_call: bool, why: String) -> Result<Option<String>, RpcError> {
    if is_call {
        Ok(Some(jsonrpc::response(id, &tool_error(&why))))
    } else {
        Err(RpcError::new(code::INTERNAL_ERROR, why))
    }
}

/// The log level a 2026-07-28 request asks for in its `_meta`.
pub(super) fn request_log_level(params: &Map<String, Value>) -> Option<String> {
    params
        .get("_meta")
        .and_then(|m| m.get(protocol::META_LOG_LEVEL))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The capabilities a 2026-07-28 request declares in its `_meta`.
pub(super) fn request_caps(params: &Map<String, Value>) -> ClientCapabilities {
    ClientCapabilities::from_value(
        params
            .get("_meta")
            .and_then(|m| m.get(protocol::META_CLIENT_CAPABILITIES)),
    )
}

/// Waits for `alarm` to ring, or for ever when there is none.
async fn ring(alarm: &mut Option<Alarm>) {
    match alarm {
        Some(a) => a.await,
        None => std::future::pending().await,
    }
}
