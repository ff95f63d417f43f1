//! Forwarding one request to a server: its progress token and cancellation mapped both ways, the
//! timeout, and the reply spliced back byte for byte.

use super::intercept::Interception;
use super::*;

impl ClientSession {
    /// Sends a request to `server` and relays its answer, mapping progress and cancellation.
    pub(super) async fn forward(
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
        let finish = |outcome: Outcome,
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
                Err(RpcError::new(code::INTERNAL_ERROR, why))
            }
        };
        let conn = match server.connection() {
            Ok(c) => c,
            Err(why) => {
                let why = why.to_string();
                finish(Outcome::Error, None, None, &why);
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
        let call_no = lock(&track).as_ref().map(|t| t.summary.call);
        let mut cancel_rx = self.track_in_flight(&up_key, server.name(), call_no);
        let mut by_person = false;
        // Kept for a retry with a modern server's questions answered (see `bridge`).
        let asked_again = (!self.is_modern()).then(|| params.clone());
        let (mut down_id, mut rx) = conn.send_request(method, Some(params));
        let timeout = server.spec.call_timeout;
        let mut deadline = Instant::now() + timeout;
        let outcome = 'rounds: loop {
            let outcome = loop {
                tokio::select! {
                    reply = &mut rx => break Some(reply.unwrap_or(Reply::Lost("connection dropped".into()))),
                    _ = notify.notified() => deadline = Instant::now() + timeout,
                    _ = tokio::time::sleep_until(deadline) => {
                        conn.cancel(down_id, "timed out in loom");
                        break Some(Reply::Lost(format!("no answer within {:.0}s (call_timeout of server `{}`)", timeout.as_secs_f64(), server.name())));
                    }
                    stop = &mut cancel_rx => {
                        match stop {
                            Ok(Stop::Person) => {
                                conn.cancel(down_id, CANCELLED_BY_PERSON);
                                by_person = true;
                            }
                            Ok(Stop::Client(reason)) => conn.cancel(down_id, &reason),
                            Err(_) => conn.cancel(down_id, "cancelled"),
                        }
                        break None;
                    }
                }
            };
            // A legacy client cannot take `input_required`: loom asks it and retries.
            if let (Some(again), Some(Reply::Result(raw))) = (&asked_again, &outcome)
                && let Some(ask) = bridge::input_required(raw)
            {
                match self.ask_client(&ask.requests, timeout).await {
                    Ok(answers) => {
                        let mut retry = again.clone();
                        retry.insert("inputResponses".into(), Value::Object(answers));
                        if let Some(state) = ask.state {
                            retry.insert("requestState".into(), state);
                        }
                        (down_id, rx) = conn.send_request(method, Some(retry));
                        deadline = Instant::now() + timeout;
                        continue 'rounds;
                    }
                    Err(why) => break 'rounds Some(Reply::Lost(why)),
                }
            }
            break 'rounds outcome;
        };
        self.untrack_in_flight(&up_key, call_no);
        if let Some(k) = token_key {
            lock(&self.progress).remove(&k);
        }
        match outcome {
            None if by_person => {
                // The client did not cancel: it is answered, and told who stopped the call.
                let result = tool_error(CANCELLED_BY_PERSON);
                finish(Outcome::Cancelled, None, None, result.get());
                Ok(Some(jsonrpc::response(id, &result)))
            }
            None => {
                finish(Outcome::Cancelled, None, None, "");
                Ok(None)
            }
            Some(Reply::Result(raw)) => {
                let (raw, dataset) = if is_call {
                    match self.intercept(raw, server, &tool, call_args).await {
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
                    }
                } else {
                    (raw, None)
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
                lost(why)
            }
        }
    }
}
