//! The handshake of either era and every request that is not a tool call: initialize, discovery,
//! lists, prompts, resources, logging; results finished for the client's era. The handshake
//! starts the servers and waits a bounded moment for them, so its instructions can carry
//! their guidance.

use super::calls::refuse_foreign_state;
use super::*;

/// How long a handshake waits for the servers to come up, from their start (never past
/// `startup_grace`): long enough for a typical stdio server (0.4–2 s measured), short enough
/// that a client's connect still feels immediate.
const INSTRUCTIONS_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

impl ClientSession {
    /// Checks the per-request `_meta` of a 2026-07-28 request.
    pub(super) fn check_modern_meta(&self, params: &Map<String, Value>) -> Result<(), RpcError> {
        let Some(meta) = params.get("_meta").and_then(Value::as_object) else {
            return Ok(());
        };
        let Some(version) = meta.get(protocol::META_PROTOCOL_VERSION) else {
            return Ok(());
        };
        let requested = version.as_str().unwrap_or_default();
        if meta.get(protocol::META_CLIENT_CAPABILITIES).is_none() {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                format!(
                    "invalid params: _meta lacks {}",
                    protocol::META_CLIENT_CAPABILITIES
                ),
            ));
        }
        if requested != protocol::V_2026_07_28 {
            return Err(RpcError::new(
                protocol::UNSUPPORTED_PROTOCOL_VERSION,
                format!("unsupported protocol version \"{requested}\""),
            )
            .with_data(json!({ "supported": [protocol::V_2026_07_28], "requested": version })));
        }
        self.learn_client_info(meta.get(protocol::META_CLIENT_INFO));
        let mut era = lock(&self.era);
        if era.is_none() {
            *era = Some(Era::Modern);
            *lock(&self.caps) =
                ClientCapabilities::from_value(meta.get(protocol::META_CLIENT_CAPABILITIES));
        }
        Ok(())
    }

    pub(super) fn is_modern(&self) -> bool {
        *lock(&self.era) == Some(Era::Modern)
    }

    /// Adds what a 2026-07-28 client expects on results loom builds itself.
    pub(super) fn finish_result(
        &self,
        mut result: Map<String, Value>,
        cacheable: bool,
    ) -> Box<RawValue> {
        if self.is_modern() {
            result.insert("resultType".into(), json!("complete"));
            result.entry("_meta").or_insert_with(|| {
                json!({ protocol::META_SERVER_INFO: crate::downstream::connection::client_info() })
            });
            if cacheable {
                result.insert("ttlMs".into(), json!(0));
                result.insert("cacheScope".into(), json!("private"));
            }
        }
        jsonrpc::to_raw(&result)
    }

    pub(super) fn our_capabilities() -> Value {
        json!({
            "tools": { "listChanged": true },
            "prompts": { "listChanged": true },
            "resources": { "subscribe": true, "listChanged": true },
            "logging": {},
            "completions": {},
        })
    }

    /// How loom works for this client (how to reach unlisted tools, the servers), pinned
    /// memories and the datasets so far, within the primer's budget: the stable part of
    /// `loom_context`, plus the datasets.
    pub(super) fn primer(&self) -> String {
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
        let mut primer = self.stable_prefix(&datasets, PRIMER_BUDGET);
        for notice in lock(&self.notices).iter() {
            primer.push_str("\n\nNote: ");
            primer.push_str(notice);
        }
        primer
    }

    /// Starts the servers (the client's capabilities are known now) and waits, at most
    /// [`INSTRUCTIONS_WAIT`] from their start, for those starting to come up, so that the
    /// handshake's `instructions` carry each one's own guidance: a client may read them only
    /// once. A server slower than that is named only; its guidance reaches the primer
    /// (`loom://primer`, the `loom` prompt) and `loom_context`, whose lists are said to have
    /// changed when it comes up. Only the first clients of a session ever wait; what the
    /// servers send this client meanwhile (a `roots/list`, a log message) is held by the
    /// caller to follow the answer.
    async fn servers_for_instructions(self: &Arc<Self>) {
        let fleet = self.ensure_fleet().await;
        if fleet.wait_settled(INSTRUCTIONS_WAIT).await {
            // Every server has settled: the naming round runs now, so the instructions
            // count each one's tools.
            fleet.wait_startup().await;
        }
    }

    pub(super) async fn dispatch(
        self: &Arc<Self>,
        id: &RawValue,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<Option<String>, RpcError> {
        let params = object(params).map_err(|e| RpcError::new(code::INVALID_PARAMS, e))?;
        if method != "initialize" {
            self.check_modern_meta(&params)?;
            if self.is_modern() && protocol::removed_in_modern(method) {
                return Err(RpcError::new(
                    code::METHOD_NOT_FOUND,
                    format!("method not found: {method} (removed in 2026-07-28)"),
                ));
            }
        }
        let ok = |result: Box<RawValue>| Ok(Some(jsonrpc::response(id, &result)));
        // A retry with answers to a legacy server's questions goes on with the waiting request.
        if matches!(method, "prompts/get" | "resources/read")
            && params.contains_key("requestState")
            && let Some(done) = self.resume(id, method, &params).await
        {
            return done;
        }
        match method {
            "initialize" => {
                let requested = params.get("protocolVersion").and_then(Value::as_str);
                let version = protocol::negotiate_initialize(requested);
                *lock(&self.era) = Some(Era::Legacy);
                *lock(&self.caps) = ClientCapabilities::from_value(params.get("capabilities"));
                self.learn_client_info(params.get("clientInfo"));
                self.hold();
                self.servers_for_instructions().await;
                let result = json!({
                    "protocolVersion": version,
                    "capabilities": Self::our_capabilities(),
                    "serverInfo": crate::downstream::connection::client_info(),
                    "instructions": self.primer(),
                });
                let line = jsonrpc::response(id, &jsonrpc::to_raw(&result));
                self.answer_and_release(line);
                Ok(None)
            }
            "server/discover" => {
                self.hold();
                self.servers_for_instructions().await;
                let mut result = Map::new();
                result.insert(
                    "supportedVersions".into(),
                    json!(protocol::SUPPORTED_VERSIONS),
                );
                result.insert("capabilities".into(), Self::our_capabilities());
                result.insert("instructions".into(), json!(self.primer()));
                result.insert("_meta".into(), json!({ protocol::META_SERVER_INFO: crate::downstream::connection::client_info() }));
                let line = jsonrpc::response(id, &self.finish_result(result, true));
                self.answer_and_release(line);
                Ok(None)
            }
            "ping" => ok(jsonrpc::to_raw(&json!({}))),
            "subscriptions/listen" if self.is_modern() => {
                let fleet = self.ready_fleet().await;
                self.listen(id, &params, &fleet)?;
                Ok(None)
            }
            "logging/setLevel" => {
                let level = params
                    .get("level")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if protocol::log_level_rank(level).is_none() {
                    return Err(RpcError::new(
                        code::INVALID_PARAMS,
                        format!(
                            "unknown log level \"{level}\"; use one of {}",
                            protocol::LOG_LEVELS.join(", ")
                        ),
                    ));
                }
                *lock(&self.log_level) = Some(level.to_owned());
                self.ensure_fleet().await;
                self.session.log_levels_changed();
                ok(jsonrpc::to_raw(&json!({})))
            }
            "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
                if params.get("cursor").is_some() {
                    return Err(RpcError::new(
                        code::INVALID_PARAMS,
                        "invalid cursor: loom returns the whole list in one page",
                    ));
                }
                let fleet = self.ready_fleet().await;
                let only = lock(&self.listing).clone();
                let only = only.as_deref();
                let (key, items) = match method {
                    "tools/list" => ("tools", listing::listing(&self.placed_tools(&fleet))),
                    "prompts/list" => ("prompts", {
                        let mut all = fleet.prompts(only);
                        all.push(json!({ "name": "loom", "title": "Loom primer", "description": "Pinned memories and this session's datasets: what to know before starting." }));
                        all
                    }),
                    "resources/list" => ("resources", {
                        let mut all = fleet.resources(only);
                        all.push(json!({ "uri": PRIMER_URI, "name": "primer", "title": "Loom primer", "mimeType": "text/markdown" }));
                        all
                    }),
                    _ => ("resourceTemplates", fleet.resource_templates(only)),
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
                    RpcError::new(code::INVALID_PARAMS, format!("unknown prompt \"{name}\""))
                })?;
                refuse_foreign_state(&params, &route.server)?;
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
                let subs = &self.session.subscriptions;
                // Counted across clients: the server hears the first subscribe and the last
                // unsubscribe of a URI, so one client's unsubscribe never ends another's. An
                // unsubscribe goes to the server that heard the subscribe, even when the
                // resource has left the listing since.
                if method == "resources/unsubscribe" && subs.is_subscribed(&uri, self.number) {
                    let Some(server) = subs.unsubscribe(&uri, self.number) else {
                        return ok(self.finish_result(Map::new(), false));
                    };
                    let Some(server) = fleet.server(&server).cloned() else {
                        return ok(self.finish_result(Map::new(), false));
                    };
                    if let Ok(conn) = server.connection()
                        && subs.tell_modern(&conn, false, &uri)
                    {
                        return ok(self.finish_result(Map::new(), false));
                    }
                    return self.forward(id, &server, method, params, None).await;
                }
                let Some(server) = fleet.route_resource(&uri) else {
                    let code = if self.is_modern() {
                        code::INVALID_PARAMS
                    } else {
                        -32002
                    };
                    return Err(RpcError::new(code, format!("resource not found: {uri}"))
                        .with_data(json!({ "uri": uri })));
                };
                if method == "resources/read" {
                    refuse_foreign_state(&params, &server)?;
                    return self.forward(id, &server, method, params, None).await;
                }
                if method == "resources/subscribe" && !subs.has_room(&uri, self.number) {
                    return Err(RpcError::new(
                        code::INVALID_PARAMS,
                        format!(
                            "too many subscriptions: a client may hold {} at once; unsubscribe from some first",
                            crate::session::subscriptions::MAX_PER_CLIENT
                        ),
                    ));
                }
                if method == "resources/unsubscribe"
                    || !subs.subscribe(&uri, self.number, server.name())
                {
                    return ok(self.finish_result(Map::new(), false));
                }
                // A 2026-07-28 server has no subscribe: loom holds a listen stream for the URI.
                if let Ok(conn) = server.connection()
                    && subs.tell_modern(&conn, true, &uri)
                {
                    return ok(self.finish_result(Map::new(), false));
                }
                let answer = self.forward(id, &server, method, params, None).await;
                // A subscribe the server refused (or never answered) is not held: the next
                // subscribe, from this client or another, asks the server again.
                let refused = match &answer {
                    Ok(Some(line)) => serde_json::from_str::<Value>(line)
                        .map_or(true, |v| v.get("error").is_some()),
                    _ => true,
                };
                if refused {
                    subs.unsubscribe(&uri, self.number);
                }
                answer
            }
            "completion/complete" => {
                let fleet = self.ready_fleet().await;
                let mut params = params;
                let reference = params.get("ref").cloned().unwrap_or(Value::Null);
                let server = match reference["type"].as_str() {
                    Some("ref/prompt") => {
                        let name = reference["name"].as_str().unwrap_or_default();
                        let route = fleet.route_prompt(name).ok_or_else(|| {
                            RpcError::new(
                                code::INVALID_PARAMS,
                                format!("unknown prompt \"{name}\""),
                            )
                        })?;
                        params["ref"]["name"] = Value::String(route.original.clone());
                        route.server
                    }
                    Some("ref/resource") => {
                        let uri = reference["uri"].as_str().unwrap_or_default();
                        fleet.route_resource(uri).ok_or_else(|| {
                            RpcError::new(
                                code::INVALID_PARAMS,
                                format!("no server offers resource template {uri}"),
                            )
                        })?
                    }
                    _ => {
                        return Err(RpcError::new(
                            code::INVALID_PARAMS,
                            "ref.type must be \"ref/prompt\" or \"ref/resource\"",
                        ));
                    }
                };
                self.forward(id, &server, method, params, None).await
            }
            _ => Err(RpcError::new(
                code::METHOD_NOT_FOUND,
                format!("method not found: {method}"),
            )),
        }
    }
}

/// A 2026-07-28 client requires `resultType` on every result; older servers do not send it.
/// It is spliced in front of the other members, which stay byte for byte as the server sent them.
pub(super) fn with_result_type(raw: Box<RawValue>) -> Box<RawValue> {
    with_members(
        raw,
        &[
            ("resultType", "\"complete\""),
            ("_meta", &server_info_meta()),
        ],
    )
}

/// `_meta` naming loom as the server, as 2026-07-28 results carry it, as JSON text.
fn server_info_meta() -> String {
    json!({ protocol::META_SERVER_INFO: crate::downstream::connection::client_info() }).to_string()
}

/// The members a 2026-07-28 client expects on a result, with their values as JSON text, spliced
/// in front of the server's members when it did not send them (the rest stays byte for byte).
pub(super) fn with_members(raw: Box<RawValue>, members: &[(&str, &str)]) -> Box<RawValue> {
    let text = raw.get();
    let Ok(keys) = serde_json::from_str::<HashMap<String, serde::de::IgnoredAny>>(text) else {
        return raw;
    };
    let missing: Vec<String> = members
        .iter()
        .filter(|(k, _)| !keys.contains_key(*k))
        .map(|(k, v)| format!("\"{k}\":{v}"))
        .collect();
    if missing.is_empty() {
        return raw;
    }
    let inner = &text.trim_start()[1..];
    let sep = if inner.trim_start().starts_with('}') {
        ""
    } else {
        ","
    };
    RawValue::from_string(format!("{{{}{sep}{inner}", missing.join(","))).unwrap_or(raw)
}
