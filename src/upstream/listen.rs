//! `subscriptions/listen` (2026-07-28): a modern client's stream of list changes and resource
//! updates. The request stays open; loom acknowledges it first, then sends every change the
//! filter asks for, each tagged with the subscription's id (the listen request's own id, which
//! is how clients match the stream's notifications to it), until the client closes it.

use super::*;

/// The most listen streams one client may hold open at once.
const MAX_LISTENS: usize = 64;

/// One open listen request and what it asked for.
pub(super) struct Listen {
    /// The request's id (JSON text), which the client cancels it by.
    pub key: String,
    /// The request's id as sent: the `subscriptionId` of everything on the stream.
    pub subscription: Value,
    pub tools: bool,
    pub prompts: bool,
    pub resources: bool,
    pub uris: Vec<String>,
}

impl Listen {
    fn wants(&self, kind: ListKind) -> bool {
        match kind {
            ListKind::Tools => self.tools,
            ListKind::Prompts => self.prompts,
            ListKind::Resources => self.resources,
        }
    }
}

/// `params` with the subscription's id in `_meta`.
fn tagged(subscription: &Value, mut params: Map<String, Value>) -> Box<RawValue> {
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(m) = meta {
        m.insert(protocol::META_SUBSCRIPTION_ID.into(), subscription.clone());
    }
    jsonrpc::to_raw(&params)
}

impl ClientSession {
    /// Opens a listen stream: acknowledged at once, answered never (the client ends it).
    pub(super) fn listen(
        &self,
        id: &RawValue,
        params: &Map<String, Value>,
        fleet: &Fleet,
    ) -> Result<(), RpcError> {
        if lock(&self.listens).len() >= MAX_LISTENS {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                format!(
                    "too many listen streams: a client may hold {MAX_LISTENS} at once; end one first"
                ),
            ));
        }
        let filter = params
            .get("notifications")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let flag = |k: &str| filter.get(k).and_then(Value::as_bool).unwrap_or(false);
        let uris: Vec<String> = filter
            .get("resourceSubscriptions")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        // Only the URIs a server offers are accepted, each subscribed at its server (counted
        // with every other client's: the server hears the first).
        let subs = &self.session.subscriptions;
        let mut uris: Vec<String> = uris
            .into_iter()
            .filter(|uri| match fleet.route_resource(uri) {
                Some(server) if subs.has_room(uri, self.number) => {
                    if subs.subscribe(uri, self.number, server.name())
                        && let Ok(conn) = server.connection()
                    {
                        subs.tell(&conn, true, uri);
                    }
                    true
                }
                _ => false,
            })
            .collect();
        uris.sort();
        uris.dedup();
        let subscription: Value = serde_json::from_str(id.get()).unwrap_or(Value::Null);
        let listen = Listen {
            key: id_key(id),
            subscription: subscription.clone(),
            tools: flag("toolsListChanged"),
            prompts: flag("promptsListChanged"),
            resources: flag("resourcesListChanged"),
            uris,
        };
        // The acknowledgement says what this stream will carry.
        let mut accepted = Map::new();
        for (k, on) in [
            ("toolsListChanged", listen.tools),
            ("promptsListChanged", listen.prompts),
            ("resourcesListChanged", listen.resources),
        ] {
            if on {
                accepted.insert(k.into(), Value::Bool(true));
            }
        }
        if !listen.uris.is_empty() {
            accepted.insert("resourceSubscriptions".into(), json!(listen.uris));
        }
        let mut ack = Map::new();
        ack.insert("notifications".into(), Value::Object(accepted));
        lock(&self.listens).push(listen);
        self.send(jsonrpc::notification(
            "notifications/subscriptions/acknowledged",
            Some(&tagged(&subscription, ack)),
        ));
        Ok(())
    }

    /// Ends the listen stream `key` (the client cancelled it); whether there was one. Its
    /// URIs that no other stream of this client holds are unsubscribed (the server hears the
    /// last one).
    pub(super) fn end_listen(&self, key: &str) -> bool {
        let mut l = lock(&self.listens);
        let Some(at) = l.iter().position(|x| x.key == key) else {
            return false;
        };
        let ended = l.remove(at);
        let released: Vec<String> = ended
            .uris
            .into_iter()
            .filter(|u| !l.iter().any(|x| x.uris.contains(u)))
            .collect();
        drop(l);
        let subs = &self.session.subscriptions;
        for uri in released {
            if let Some(server) = subs.unsubscribe(&uri, self.number)
                && let Some(fleet) = self.fleet()
            {
                subs.end(fleet, &uri, &server);
            }
        }
        true
    }

    /// A list changed: every listen stream that asked for it hears, tagged.
    pub(super) fn tell_listens(&self, kind: ListKind, method: &str) {
        for l in lock(&self.listens).iter().filter(|l| l.wants(kind)) {
            self.send(jsonrpc::notification(
                method,
                Some(&tagged(&l.subscription, Map::new())),
            ));
        }
    }

    /// A resource changed: the listen streams subscribed to its URI hear, tagged. Whether any
    /// did.
    pub(super) fn tell_listens_updated(&self, params: Option<&RawValue>) -> bool {
        let Ok(p) = object(params) else { return false };
        let Some(uri) = p.get("uri").and_then(Value::as_str) else {
            return false;
        };
        let listens = lock(&self.listens);
        let mut told = false;
        for l in listens.iter().filter(|l| l.uris.iter().any(|u| u == uri)) {
            self.send(jsonrpc::notification(
                "notifications/resources/updated",
                Some(&tagged(&l.subscription, p.clone())),
            ));
            told = true;
        }
        told
    }
}
