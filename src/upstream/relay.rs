//! What flows from servers to the client and back: notifications, list changes, and server-to-
//! client requests relayed to a client that can answer them.

use super::*;

impl ClientSession {
    pub(super) async fn handle_notification(self: &Arc<Self>, msg: RawMessage) {
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
                    let _ = f.cancel.send(Stop::Client(reason));
                } else {
                    self.end_listen(&req.to_string());
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

    pub(super) fn handle_response(&self, msg: RawMessage) {
        let Some(id) = msg.id else { return };
        if self.take_answer(&id, msg.result.as_deref(), msg.error.as_deref()) {
            return;
        }
        let Some(relay) = lock(&self.relayed).remove(&id_key(&id)) else {
            return;
        };
        match (msg.result, msg.error) {
            (Some(r), _) => {
                if relay.method == "roots/list" {
                    self.session.learn_roots(&r);
                }
                relay.conn.respond(&relay.downstream_id, Ok(&r))
            }
            (None, Some(e)) => relay.conn.respond(&relay.downstream_id, Err(&e)),
            _ => {}
        }
    }

    /// Hands a server-to-client request to this client if it declared the capability.
    pub(super) fn take_server_request(&self, request: ServerRequest) -> Result<(), ServerRequest> {
        if self.is_closed() {
            return Err(request);
        }
        if self.is_modern() {
            // A 2026-07-28 client takes no requests: the call they belong to asks instead.
            return self.question_for_call(request);
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
                method: request.method.clone(),
            },
        );
        self.send(jsonrpc::request(
            &ours,
            &request.method,
            request.params.as_deref(),
        ));
        Ok(())
    }

    pub(super) fn relay_notification(&self, server: &str, method: &str, params: Option<&RawValue>) {
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
                // Only progress the client asked for resets the call's timeout, as before loom
                // asked for progress itself.
                if route.upstream_token.is_some() {
                    route.notify.notify_one();
                }
                if let Some(call) = route.call
                    && let Some(progress) = p.get("progress").and_then(Value::as_f64)
                {
                    self.session.bus.publish_passing(Event::CallProgress {
                        call,
                        progress,
                        total: p.get("total").and_then(Value::as_f64),
                        message: p
                            .get("message")
                            .and_then(Value::as_str)
                            .map(|m| m.chars().take(200).collect()),
                    });
                }
                // Progress loom asked for itself is the workbench's alone.
                let Some(up) = route.upstream_token.clone() else {
                    return;
                };
                p.insert("progressToken".into(), up);
                drop(routes);
                self.send(jsonrpc::notification(method, Some(&jsonrpc::to_raw(&p))));
            }
            "notifications/message" => {
                let Ok(mut p) = object(params) else {
                    return;
                };
                if !self.wants_log(server, p.get("level").and_then(Value::as_str)) {
                    return;
                }
                let logger = match p.get("logger").and_then(Value::as_str) {
                    Some(l) => format!("{server}/{l}"),
                    None => server.to_owned(),
                };
                p.insert("logger".into(), Value::String(logger));
                self.send(jsonrpc::notification(method, Some(&jsonrpc::to_raw(&p))));
            }
            // A modern client hears of a resource's change on the listen streams that asked.
            "notifications/resources/updated" if self.is_modern() => {
                self.tell_listens_updated(params);
            }
            // A legacy client hears of the resources it subscribed to.
            "notifications/resources/updated" => {
                let uri = object(params)
                    .ok()
                    .and_then(|p| p.get("uri").and_then(Value::as_str).map(str::to_owned));
                if uri.is_some_and(|u| self.session.subscriptions.is_subscribed(&u, self.number)) {
                    self.send(jsonrpc::notification(method, params));
                }
            }
            // A modern server's acknowledgement of loom's own listen stream is loom's.
            "notifications/subscriptions/acknowledged" => {}
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
    fn listing_changed(&self, tool: &str) {
        // A client whose mode lists the tool anyway (full, or pinned in the config) keeps the
        // same listing: it is not made to list again (and lose its prompt cache).
        let route = self.fleet().and_then(|f| f.route_tool(tool));
        let downstream = route
            .as_ref()
            .map(|r| (r.server.name(), r.original.as_str()));
        let inputs = super::listing::Inputs {
            config: &self.session.config,
            connection: *lock(&self.listing_mode),
            state: &self.session.listing,
        };
        let place = super::listing::decide(&inputs, tool, downstream);
        if !matches!(
            place,
            super::listing::Listed::ByMode
                | super::listing::Listed::Pinned
                | super::listing::Listed::Core
        ) {
            self.list_changed(ListKind::Tools);
        }
    }

    /// A model's client that spoke MCP (a handshake, or a 2026-07-28 request): a workbench
    /// attached over the same socket never does, so it is not counted as one.
    fn is_connected_client(&self) -> bool {
        self.caller == Caller::Model && !self.is_closed() && lock(&self.era).is_some()
    }

    fn list_changed(&self, kind: ListKind) {
        // Only a client that finished its handshake hears about list changes; a 2026-07-28
        // client hears on its listen streams, as each asked.
        if lock(&self.era).is_none() || self.is_closed() {
            return;
        }
        let method = match kind {
            ListKind::Tools => "notifications/tools/list_changed",
            ListKind::Prompts => "notifications/prompts/list_changed",
            ListKind::Resources => "notifications/resources/list_changed",
        };
        if self.is_modern() {
            self.tell_listens(kind, method);
        } else {
            self.send(jsonrpc::notification(method, None));
        }
    }

    fn notification(&self, server: &str, method: &str, params: Option<&RawValue>) {
        if !self.is_closed() {
            self.relay_notification(server, method, params);
        }
    }

    fn server_request(&self, request: ServerRequest) -> Result<(), ServerRequest> {
        self.take_server_request(request)
    }

    fn undeclared_capability(&self, request: ServerRequest) -> Result<(), ServerRequest> {
        if self.is_closed() || !self.is_modern() {
            return Err(request);
        }
        self.question_for_call_without(request)
    }

    fn log_level(&self) -> Option<String> {
        if self.is_closed() || self.is_modern() {
            return None;
        }
        lock(&self.log_level).clone()
    }

    fn has_call_on(&self, server: &str) -> bool {
        lock(&self.in_flight).values().any(|f| f.server == server)
    }
}

impl ClientSession {
    /// Whether a log message from `server` at `level` reaches this client: a legacy client
    /// hears what is at or above the level it set (everything if it set none); a 2026-07-28
    /// client hears only messages for a call of its own on that server whose request asked
    /// for a level, at or above that level.
    fn wants_log(&self, server: &str, level: Option<&str>) -> bool {
        let rank = level.and_then(protocol::log_level_rank).unwrap_or(0);
        let at_least = |min: &str| protocol::log_level_rank(min).is_none_or(|m| rank >= m);
        if self.is_modern() {
            return lock(&self.in_flight)
                .values()
                .filter(|f| f.server == server)
                .any(|f| f.log_level.as_deref().is_some_and(at_least));
        }
        lock(&self.log_level).as_deref().is_none_or(at_least)
    }
}
