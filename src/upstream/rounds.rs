//! A 2026-07-28 client in front of a legacy server: the server asks its questions
//! (`sampling/createMessage`, `elicitation/create`, `roots/list`) as requests during a call
//! (`tools/call`, `prompts/get` or `resources/read`),
//! which a modern client never takes. Loom answers the call with `input_required` instead: the
//! questions, and a `requestState` that names the waiting call, sealed by loom. The client's
//! retry (`inputResponses` and that state) answers the server's waiting requests and goes on
//! waiting for the same call: the tool is not called again, approved again or logged twice.
//!
//! A state that loom did not seal is refused with -32602 when the call goes to a legacy server
//! (a modern server's own state passes through to it); a state whose call was answered
//! already or ran out of time is refused with -32602 too, and so is a retry that leaves a
//! question unanswered (the call keeps waiting for a complete retry).

use super::forward::Waiting;
use super::*;
use crate::session::parked::Refused;

/// A call parked until the client retries it with answers. Dropped unanswered (the client
/// never came back in time), it cancels the call at the server, answers the server's questions
/// with an error and logs the call as cancelled.
pub(super) struct ParkedCall {
    session: Arc<Session>,
    /// The exposed name the client called.
    exposed: String,
    waiting: Option<Waiting>,
    /// The server's requests waiting for the client's answers, by the key the client was given.
    asks: Vec<(String, ServerRequest)>,
    /// Why it ends if dropped unanswered.
    why: &'static str,
}

impl Drop for ParkedCall {
    fn drop(&mut self) {
        let Some(mut w) = self.waiting.take() else {
            return;
        };
        let why = self.why;
        if let Some(call) = w.track.as_ref().map(|t| t.summary.call) {
            self.session.cancels.forget(call);
        }
        let err = jsonrpc::to_raw(&json!({ "code": code::INTERNAL_ERROR, "message": why }));
        for (_, q) in self.asks.drain(..) {
            q.conn.respond(&q.id, Err(&err));
        }
        w.conn.cancel(w.down_id, why);
        if let Some(track) = w.track.take() {
            calls::end_call(&self.session, track, Outcome::Cancelled, None, None, why);
        }
    }
}

fn invalid(message: impl Into<String>) -> RpcError {
    RpcError::new(code::INVALID_PARAMS, message)
}

impl ClientSession {
    /// What a 2026-07-28 request in flight (`up_key`) takes: the server's questions (sent to
    /// `questions`, when the request declared the capability they need) and log messages at or
    /// above `log_level`.
    pub(super) fn describe_call(
        &self,
        up_key: &str,
        questions: Option<(mpsc::UnboundedSender<ServerRequest>, ClientCapabilities)>,
        log_level: Option<String>,
    ) {
        if let Some(f) = lock(&self.in_flight).get_mut(up_key) {
            f.questions = questions;
            f.log_level = log_level;
        }
    }

    /// A server's request for a 2026-07-28 client: it goes to a call of this client in flight
    /// on that server, to become `input_required`, when that call's request declared the
    /// capability it needs.
    pub(super) fn question_for_call(&self, request: ServerRequest) -> Result<(), ServerRequest> {
        self.question_to_call(request, true)
    }

    /// A server's request that no client could take, for a call of this 2026-07-28 client in
    /// flight on that server whose request did not declare the capability it needs: the call
    /// fails with -32021 (see `await_reply`).
    pub(super) fn question_for_call_without(
        &self,
        request: ServerRequest,
    ) -> Result<(), ServerRequest> {
        self.question_to_call(request, false)
    }

    /// The request goes to a call in flight on its server that takes questions and whose
    /// request declared (`declared`) or did not declare the capability it needs.
    fn question_to_call(
        &self,
        request: ServerRequest,
        declared: bool,
    ) -> Result<(), ServerRequest> {
        let Some(needed) = protocol::capability_for_server_request(&request.method) else {
            return Err(request);
        };
        let flights = lock(&self.in_flight);
        let target = flights.values().find_map(|f| {
            f.questions
                .as_ref()
                .filter(|(_, caps)| f.server == request.conn.server && caps.has(needed) == declared)
        });
        match target {
            Some((tx, _)) => tx.send(request).map_err(|e| e.0),
            None => Err(request),
        }
    }

    /// Parks the call `w` and answers `id` with `input_required`: the server's questions (the
    /// first, and any it asked at the same time), and the sealed state naming the call.
    pub(super) fn park(&self, id: &RawValue, mut w: Waiting, first: ServerRequest) -> String {
        let mut asked = vec![first];
        if let Some((_, questions)) = &mut w.questions {
            while let Ok(more) = questions.try_recv() {
                asked.push(more);
            }
        }
        let mut requests = Map::new();
        let mut asks = Vec::new();
        for (i, q) in asked.into_iter().enumerate() {
            let key = format!("loom-{}", i + 1);
            let params = q
                .params
                .as_deref()
                .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
                .unwrap_or_else(|| json!({}));
            requests.insert(key.clone(), json!({ "method": q.method, "params": params }));
            asks.push((key, q));
        }
        let ttl = w.server.spec.call_timeout;
        let exposed = w
            .track
            .as_ref()
            .map(|t| t.summary.tool.clone())
            .unwrap_or_default();
        let call = w.track.as_ref().map(|t| t.summary.call);
        let parked = ParkedCall {
            session: self.session.clone(),
            exposed,
            waiting: Some(w),
            asks,
            why: "the client did not retry the call with answers in time",
        };
        let state = self.session.parked.put(Box::new(parked), ttl);
        // A person can cancel it while it waits for the client's answers, as any call.
        if let Some(call) = call {
            let session = Arc::downgrade(&self.session);
            let token = state.clone();
            self.session.cancels.register(call, move || {
                let item = session.upgrade().and_then(|s| s.parked.take(&token).ok());
                if let Some(mut parked) = item.and_then(|i| i.downcast::<ParkedCall>().ok()) {
                    parked.why = CANCELLED_BY_PERSON;
                }
            });
        }
        let mut result = Map::new();
        result.insert("resultType".into(), json!("input_required"));
        result.insert("inputRequests".into(), Value::Object(requests));
        result.insert("requestState".into(), json!(state));
        result.insert(
            "_meta".into(),
            json!({ protocol::META_SERVER_INFO: crate::downstream::connection::client_info() }),
        );
        jsonrpc::response(id, &jsonrpc::to_raw(&result))
    }

    /// A `tools/call` carrying a `requestState` loom sealed: answers the server's waiting
    /// questions with the client's `inputResponses` and goes on waiting for that call. `None`
    /// when the state is not loom's (it may be a modern server's own).
    pub(super) async fn resume(
        self: &Arc<Self>,
        id: &RawValue,
        method: &str,
        params: &Map<String, Value>,
    ) -> Option<Result<Option<String>, RpcError>> {
        let token = params.get("requestState")?.as_str().unwrap_or_default();
        let item = match self.session.parked.take(token) {
            Ok(item) => item,
            Err(Refused::NotOurs) => return None,
            Err(Refused::Gone) => {
                return Some(Err(invalid(
                    "requestState names a call that was already answered or waited too long; call the tool again without it",
                )));
            }
        };
        let Ok(mut parked) = item.downcast::<ParkedCall>() else {
            return Some(Err(invalid("requestState does not name a request")));
        };
        let parked_method = parked
            .waiting
            .as_ref()
            .map(|w| w.method.clone())
            .unwrap_or_default();
        let name = params.get("name").and_then(Value::as_str).unwrap_or("");
        let responses = params
            .get("inputResponses")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let missing: Vec<&str> = parked
            .asks
            .iter()
            .filter(|(k, _)| !responses.contains_key(k))
            .map(|(k, _)| k.as_str())
            .collect();
        let refusal = if parked_method != method {
            Some(format!(
                "requestState belongs to a {parked_method} request, not {method}"
            ))
        } else if method == "tools/call" && name != parked.exposed && name != "loom_call" {
            Some(format!(
                "requestState belongs to a call of `{}`, not `{name}`",
                parked.exposed
            ))
        } else if !missing.is_empty() {
            Some(format!(
                "inputResponses lacks an answer for {}",
                missing.join(", ")
            ))
        } else {
            None
        };
        if let Some(why) = refusal {
            let ttl = parked
                .waiting
                .as_ref()
                .map_or(std::time::Duration::from_secs(60), |w| {
                    w.server.spec.call_timeout
                });
            self.session.parked.put_back(token, parked, ttl);
            return Some(Err(invalid(why)));
        }
        for (key, q) in parked.asks.drain(..) {
            let answer = jsonrpc::to_raw(&responses[&key]);
            if q.method == "roots/list" {
                self.session.learn_roots(&answer);
            }
            q.conn.respond(&q.id, Ok(&answer));
        }
        let mut w = parked.waiting.take()?;
        w.caps = super::forward::request_caps(params);
        w.log_level = super::forward::request_log_level(params);
        let up_token = params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .cloned();
        Some(self.await_reply(id, w, up_token).await)
    }
}
