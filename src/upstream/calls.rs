//! Tool calls: loom's own tools or a server's, the approval a risky call waits for, and the call
//! log entry every call gets.

use super::*;
use crate::store::{Asker, Store};

impl ClientSession {
    /// A `tools/call` from the client.
    pub(super) async fn call_tool(
        self: &Arc<Self>,
        id: &RawValue,
        params: Map<String, Value>,
    ) -> Result<Option<String>, RpcError> {
        self.call_tool_via(id, params, Via::default()).await
    }

    /// A `tools/call`; `via` names the loom tool that made it (`loom_call`) and what it bound,
    /// for the log.
    async fn call_tool_via(
        self: &Arc<Self>,
        id: &RawValue,
        params: Map<String, Value>,
        via: Via,
    ) -> Result<Option<String>, RpcError> {
        // A retry with answers to a legacy server's questions goes on with the waiting call.
        if params.contains_key("requestState")
            && let Some(done) = self.resume(id, "tools/call", &params).await
        {
            return done;
        }
        let Some(name) = params
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                "tools/call needs `name`: the tool's name, as a string",
            ));
        };
        if params
            .get("arguments")
            .is_some_and(|a| !a.is_object() && !a.is_null())
        {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                format!("the arguments of `{name}` must be an object of named arguments"),
            ));
        }
        if let Some(spec) = tools::spec(&name) {
            let args = params
                .get("arguments")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            // `loom_call` becomes the call it names, or is answered with why it cannot.
            let mut refused = None;
            if spec.tool == tools::LoomTool::Call && tools::validate(spec, &args).is_ok() {
                match self.resolve_call(&args, &params).await {
                    Ok((inner, via)) => {
                        return Box::pin(self.call_tool_via(id, inner, via)).await;
                    }
                    Err(why) => refused = Some(why),
                }
            }
            if spec.tool == tools::LoomTool::CallEach && tools::validate(spec, &args).is_ok() {
                return self.call_each(id, &params, args).await;
            }
            self.note_use(&name, None);
            let mut track = self.begin_call(LOOM_SERVER, &name, &params);
            track.summary.via = via.tool.map(str::to_owned);
            let result = match tools::validate(spec, &args) {
                Err(wrong) => tool_error(&wrong.to_string()),
                Ok(()) if refused.is_some() => tool_error(refused.as_deref().unwrap_or_default()),
                Ok(()) if spec.tool.is_session() => self.run_session_tool(spec.tool, &args).await,
                Ok(()) if spec.tool == tools::LoomTool::History => match self.store().await {
                    Err(e) => tool_error(&e),
                    Ok(store) => {
                        let session = self.session.clone();
                        run_blocking(spec.name(), move || {
                            super::history_tool::tool(&session, &store, &args)
                        })
                        .await
                    }
                },
                Ok(()) if spec.tool.is_memory() => {
                    // The memories report what they write to the session themselves.
                    let mem = self.session.memories.clone();
                    let author = self.caller;
                    run_blocking(spec.name(), move || {
                        tools::run_memory(&mem, spec.tool, &args, author.as_str())
                    })
                    .await
                }
                Ok(()) => match self.store().await {
                    Err(e) => tool_error(&e),
                    Ok(store) => {
                        // The client's cancel, or a person's, interrupts this call's query.
                        let (call, client) = (track.summary.call, self.number);
                        let up_key = id_key(id);
                        let mut cancel_rx = self.track_in_flight(&up_key, LOOM_SERVER, Some(call));
                        let running = store.clone();
                        let run = run_blocking(spec.name(), move || {
                            Store::asking_as(Asker::Call { call, client }, || {
                                tools::run(&running, spec.tool, &args)
                            })
                        });
                        let ran = tokio::select! {
                            r = run => Ok(r),
                            stop = &mut cancel_rx => Err(stop),
                        };
                        self.untrack_in_flight(&up_key, Some(call));
                        match ran {
                            Ok(r) => r,
                            Err(stop) => {
                                store.cancel_call(call);
                                if let Ok(Stop::Person) = stop {
                                    return Ok(Some(self.refuse(
                                        id,
                                        track,
                                        Outcome::Cancelled,
                                        CANCELLED_BY_PERSON,
                                    )));
                                }
                                self.end_call(track, Outcome::Cancelled, None, None, "");
                                return Ok(None);
                            }
                        }
                    }
                },
            };
            let result = if self.is_modern() {
                with_result_type(result)
            } else {
                result
            };
            let outcome = if reports_error(&result) {
                Outcome::Error
            } else {
                Outcome::Passed
            };
            let reference = serde_json::from_str::<Value>(result.get())
                .ok()
                .and_then(|v| v["structuredContent"]["ref"].as_str().map(str::to_owned));
            self.end_call(track, outcome, reference, None, result.get());
            return Ok(Some(jsonrpc::response(id, &result)));
        }
        let fleet = self.ready_fleet().await;
        let Some(route) = fleet.route_tool(&name) else {
            // Logged like any call, so a person sees what the client tried (loom answered it).
            let message = format!("unknown tool \"{name}\"");
            let mut track = self.begin_call(LOOM_SERVER, &name, &params);
            track.summary.via = via.tool.map(str::to_owned);
            self.end_call(track, Outcome::Error, None, None, &message);
            return Err(RpcError::new(code::INVALID_PARAMS, message));
        };
        refuse_foreign_state(&params, &route.server)?;
        let mut track = self.track_call(route.server.name(), &name);
        track.summary.via = via.tool.map(str::to_owned);
        track.summary.bindings = via.bindings;
        if let Some(logged) = &via.logged {
            track.logged_args = logged.get("arguments").cloned();
        }
        let read: Vec<String> = track
            .summary
            .bindings
            .iter()
            .flat_map(|b| b.inputs.iter().cloned())
            .collect();
        let crossing = self.crossing(&route, read).await;
        if crossing.is_none() && self.policy(&route).0 == crate::config::Approval::Allow {
            // Nobody is asked: the call is logged once its request has left (`await_reply`).
            self.allowed(&route, &mut track);
            track.unannounced = Some(via.logged.unwrap_or_else(|| params.clone()));
        } else {
            announce(
                &self.session,
                &mut track,
                via.logged.as_ref().unwrap_or(&params),
            );
            // A call waiting for approval can be cancelled like one in flight.
            let up_key = id_key(id);
            let call_no = Some(track.summary.call);
            let mut cancel_rx = self.track_in_flight(&up_key, route.server.name(), call_no);
            let verdict = tokio::select! {
                // (The policy is read again there: only for a call that is not plainly allowed.)
                v = self.approve(&route, &name, &params, &mut track, None, crossing) => Ok(v),
                stop = &mut cancel_rx => Err(stop),
            };
            self.untrack_in_flight(&up_key, call_no);
            let verdict = match verdict {
                Ok(v) => v,
                Err(Ok(Stop::Person)) => {
                    return Ok(Some(self.refuse(
                        id,
                        track,
                        Outcome::Cancelled,
                        CANCELLED_BY_PERSON,
                    )));
                }
                Err(_) => {
                    self.end_call(track, Outcome::Cancelled, None, None, "");
                    return Ok(None);
                }
            };
            if let Err(why) = verdict {
                return Ok(Some(self.refuse(id, track, Outcome::Denied, &why)));
            }
        }
        // Counted, and promoted, only once it goes to the server: a denied or cancelled call
        // lists nothing.
        self.note_use(&name, Some((route.server.name(), &route.original)));
        let mut params = params;
        params.insert("name".into(), Value::String(route.original.clone()));
        self.forward(id, &route.server, "tools/call", params, Some(track))
            .await
    }

    /// The server's approval policy for a call's tool, and the tool's annotations it read.
    fn policy(&self, route: &crate::downstream::Route) -> (crate::config::Approval, Option<Value>) {
        let annotations = route.server.tool_field(&route.original, "annotations");
        let policy = route
            .server
            .spec
            .approve
            .decide(&route.original, annotations.as_ref());
        (policy, annotations)
    }

    /// A call the policy allows: the log says so when `approve.allow` named it.
    fn allowed(&self, route: &crate::downstream::Route, track: &mut CallTrack) {
        if route.server.spec.approve.allow.matches(&route.original) {
            track.summary.decision = Some("allowed by policy (approve.allow)".into());
        }
    }

    /// Applies the server's approval policy to a call; the human's own calls from the workbench
    /// are never asked about, but `deny` holds for them too. A call that binds data from
    /// elsewhere (`crossing` says why) is asked about whatever the policy would allow, and with
    /// nobody attached it is denied, whatever `unattended` says. Records who decided; `Err`
    /// says why the call may not run.
    pub(super) async fn approve(
        &self,
        route: &crate::downstream::Route,
        exposed: &str,
        params: &Map<String, Value>,
        track: &mut CallTrack,
        batch: Option<crate::types::events::BatchAsk>,
        crossing: Option<String>,
    ) -> Result<(), String> {
        let (mut policy, annotations) = self.policy(route);
        if crossing.is_some() && policy == crate::config::Approval::Allow {
            policy = crate::config::Approval::Ask;
        }
        let verdict = match policy {
            // The person at the workbench is the one who would approve; `deny` still holds.
            crate::config::Approval::Ask if self.caller == Caller::Human => return Ok(()),
            crate::config::Approval::Allow => {
                self.allowed(route, track);
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
                    bindings: track.summary.bindings.clone(),
                    batch,
                    reason: crossing.clone(),
                    ..Default::default()
                };
                let config = &self.session.config;
                let asked = self
                    .session
                    .approvals
                    .ask(
                        &self.session.bus,
                        req,
                        config.unattended_allow,
                        config.approval_timeout,
                    )
                    .await;
                track.summary.waited_millis = asked.waited.map(|w| w.as_millis() as u64);
                if let Some(by) = &asked.by {
                    // The person watching learns where it was decided; the model does not.
                    let (Verdict::Allowed(why) | Verdict::Denied(why)) = &asked.verdict;
                    track.summary.decision = Some(format!("{why} (at {by})"));
                }
                asked.verdict
            }
        };
        match verdict {
            Verdict::Allowed(why) => {
                track.summary.decision.get_or_insert(why);
                Ok(())
            }
            Verdict::Denied(why) => {
                track.summary.decision.get_or_insert_with(|| why.clone());
                Err(why)
            }
        }
    }

    /// Logs the start of a tool call and announces it.
    /// Answers a call that never reached its server with an error result saying `why`, and logs it.
    pub(super) fn refuse(
        &self,
        id: &RawValue,
        track: CallTrack,
        outcome: Outcome,
        why: &str,
    ) -> String {
        let result = tool_error(why);
        let result = if self.is_modern() {
            with_result_type(result)
        } else {
            result
        };
        self.end_call(track, outcome, None, None, result.get());
        jsonrpc::response(id, &result)
    }

    /// Registers a call in flight: the client's `notifications/cancelled` and a person's cancel
    /// from the workbench both reach it through the receiver.
    pub(super) fn track_in_flight(
        self: &Arc<Self>,
        up_key: &str,
        server: &str,
        call: Option<u64>,
    ) -> oneshot::Receiver<Stop> {
        let (cancel, rx) = oneshot::channel();
        lock(&self.in_flight).insert(
            up_key.to_owned(),
            InFlight {
                cancel,
                server: server.to_owned(),
                questions: None,
                log_level: None,
            },
        );
        if let Some(call) = call {
            let client = Arc::downgrade(self);
            let key = up_key.to_owned();
            self.session.cancels.register(call, move || {
                if let Some(c) = client.upgrade()
                    && let Some(f) = lock(&c.in_flight).remove(&key)
                {
                    let _ = f.cancel.send(Stop::Person);
                }
            });
        }
        rx
    }

    pub(super) fn untrack_in_flight(&self, up_key: &str, call: Option<u64>) {
        lock(&self.in_flight).remove(up_key);
        if let Some(call) = call {
            self.session.cancels.forget(call);
        }
    }

    /// Starts timing a call and logs it at once (see `track_call` and `announce`).
    pub(super) fn begin_call(
        &self,
        server: &str,
        tool: &str,
        params: &Map<String, Value>,
    ) -> CallTrack {
        let mut track = self.track_call(server, tool);
        announce(&self.session, &mut track, params);
        track
    }

    /// Starts timing a call, not yet logged: `announce` (or its end) tells the log and the
    /// workbench.
    pub(super) fn track_call(&self, server: &str, tool: &str) -> CallTrack {
        let summary = CallSummary {
            call: self.session.next_call_id(),
            caller: self.caller,
            server: server.to_owned(),
            tool: tool.to_owned(),
            outcome: Outcome::Running,
            client: self.client_label(),
            ..Default::default()
        };
        CallTrack {
            summary,
            started: Instant::now(),
            wall: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            logged_args: None,
            keep_raw: false,
            unannounced: None,
        }
    }

    /// Logs how a tool call ended. `original` is the size and estimated tokens of what the
    /// server answered when loom replaced it; `sent` is what the caller received.
    pub(super) fn end_call(
        &self,
        track: CallTrack,
        outcome: Outcome,
        reference: Option<String>,
        original: Option<(usize, usize)>,
        sent: &str,
    ) {
        end_call(&self.session, track, outcome, reference, original, sent);
    }
}

/// Logs a call's start and tells the workbenches: its request (`params`) redacted once, for the
/// log's record and the summary's line of arguments.
fn announce(session: &Session, track: &mut CallTrack, params: &Map<String, Value>) {
    track.summary.at = crate::store::iso(track.wall);
    let (request, redacted) = crate::intercept::redact::Redacted::object_and_value(params);
    track.summary.arguments = redacted
        .get("arguments")
        .map(|a| {
            crate::session::calls::cap_text(&a.to_string(), 200)
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .unwrap_or_default();
    session.calls.started(track.summary.clone(), request);
    session
        .bus
        .publish(Event::CallStarted(track.summary.clone()));
}

/// Announces a call whose announcement waited for its request to leave (see
/// `CallTrack::unannounced`).
pub(super) fn announce_pending(session: &Session, track: &mut CallTrack) {
    if let Some(params) = track.unannounced.take() {
        announce(session, track, &params);
    }
}

/// Logs the end of a call and tells the workbenches.
pub(super) fn end_call(
    session: &Session,
    track: CallTrack,
    outcome: Outcome,
    reference: Option<String>,
    original: Option<(usize, usize)>,
    sent: &str,
) {
    Ended::new(track, outcome, reference, original, sent).log(session);
}

/// A call's end as measured when its answer was ready (its time, its sizes, the answer as the
/// log keeps it), logged by `log`: for a call answered through `handle_request`, after the
/// answer has gone to the client's writer (`after_reply`), so that neither the log, the bus nor
/// the archive's queue stand between a server's answer and its client.
pub(super) struct Ended {
    track: CallTrack,
    outcome: Outcome,
    reference: Option<String>,
    millis: u64,
    /// Bytes and tokens of the result as the server sent it, then as the client got it.
    came: (u64, u64),
    went: (u64, u64),
    response: String,
}

impl Ended {
    pub(super) fn new(
        track: CallTrack,
        outcome: Outcome,
        reference: Option<String>,
        original: Option<(usize, usize)>,
        sent: &str,
    ) -> Ended {
        let went = (
            sent.len() as u64,
            crate::intercept::tokens::estimate(sent) as u64,
        );
        Ended {
            millis: track.started.elapsed().as_millis() as u64,
            track,
            outcome,
            reference,
            came: original.map_or(went, |(b, t)| (b as u64, t as u64)),
            went,
            response: crate::session::calls::cap_text(sent, crate::session::calls::RESPONSE_CAP),
        }
    }

    /// Logs the end (and the start, for a call not announced yet) and tells the workbenches.
    pub(super) fn log(self, session: &Session) {
        let mut track = self.track;
        announce_pending(session, &mut track);
        let summary = CallSummary {
            outcome: self.outcome,
            reference: self.reference,
            millis: self.millis,
            bytes_in: self.came.0,
            tokens_in: self.came.1,
            bytes_out: self.went.0,
            tokens_out: self.went.1,
            ..track.summary
        };
        session
            .calls
            .finished_capped(summary.clone(), self.response);
        session.store.calls.finished(summary.clone());
        session.bus.publish(Event::CallFinished(summary));
    }
}

/// A retry's `requestState` that loom did not seal (it would have been resumed before this),
/// for a legacy server, which has no state of its own: refused rather than run afresh.
pub(super) fn refuse_foreign_state(
    params: &Map<String, Value>,
    server: &crate::downstream::ServerHandle,
) -> Result<(), RpcError> {
    if params.contains_key("requestState")
        && server.connection().is_ok_and(|c| c.era() == Era::Legacy)
    {
        let why = "requestState failed its integrity check: loom did not issue it for this request; send the request again without it";
        return Err(RpcError::new(code::INVALID_PARAMS, why));
    }
    Ok(())
}
