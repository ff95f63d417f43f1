//! A legacy session with a downstream server: its GET stream (re-opened when it drops), the
//! resumption of a reply stream with `Last-Event-ID`, the renewal of a session the server
//! forgot, and the `DELETE` that ends it.

use super::*;

impl HttpSink {
    /// A request loom sent for itself did not reach the server.
    fn unreachable(&self, e: reqwest::Error) -> RenewError {
        RenewError::Unreachable {
            url: self.shown_url.clone(),
            reason: e.without_url().to_string(),
        }
    }

    /// A GET on the session, for its own stream or to resume one from `last`.
    pub(super) fn get(&self, session: &str, last: Option<&HeaderValue>) -> reqwest::RequestBuilder {
        let mut req = self
            .client
            .get(&self.url)
            .headers(self.headers.clone())
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .header("Mcp-Session-Id", session);
        if let Some(v) = lock(&self.version).clone() {
            req = req.header("MCP-Protocol-Version", v);
        }
        if let Some(last) = last {
            req = req.header("Last-Event-ID", last.clone());
        }
        self.with_auth(req)
    }

    /// Resumes a dropped reply stream after event `last`; `None` when the server will not.
    pub(super) async fn resume(&self, last: &HeaderValue) -> Option<reqwest::Response> {
        let session = lock(&self.session).clone()?;
        let resp = self.get(&session, Some(last)).send().await.ok()?;
        (resp.status().is_success() && is_event_stream(&resp)).then_some(resp)
    }

    /// Initializes a new session in place of `old`, which the server forgot; a request that
    /// got its 404 after another renewed it just goes again.
    pub(super) async fn renew_session(
        self: &Arc<Self>,
        conn: &Arc<Connection>,
        old: &str,
    ) -> Result<(), RenewError> {
        {
            let _gate = self.renewing.write().await;
            if lock(&self.session).as_deref() != Some(old) {
                return Ok(());
            }
            tracing::info!(server = %conn.server, "the HTTP session expired (404); initializing a new one");
            *lock(&self.session) = None;
            tokio::time::timeout(REINIT_TIMEOUT, self.reinitialize())
                .await
                .map_err(|_| RenewError::Timeout(REINIT_TIMEOUT.as_secs()))??;
            self.listen(conn.clone());
        }
        // Told once the gate is open again: what the new session is told goes through it.
        conn.renewed();
        Ok(())
    }

    /// The legacy handshake again, at the version agreed first: `initialize`, then
    /// `notifications/initialized`, sent here rather than through the connection.
    pub(super) async fn reinitialize(&self) -> Result<(), RenewError> {
        let asked = lock(&self.version)
            .clone()
            .unwrap_or_else(|| protocol::V_2025_11_25.to_owned());
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": REINIT_ID,
            "method": "initialize",
            "params": {
                "protocolVersion": asked,
                "capabilities": self.client_caps.to_value(),
                "clientInfo": client_info(),
            },
        });
        let post = |body: String| {
            let mut req = self.json_post();
            if let Some(s) = lock(&self.session).clone() {
                req = req
                    .header("Mcp-Session-Id", s)
                    .header("MCP-Protocol-Version", asked.clone());
            }
            self.with_auth(req).body(body)
        };
        let resp = post(body.to_string())
            .send()
            .await
            .map_err(|e| self.unreachable(e))?;
        if !resp.status().is_success() {
            return Err(RenewError::InitializeRefused(resp.status()));
        }
        let session = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let reply = reply_to(resp, REINIT_ID, self.max_message).await?;
        let version = reply["result"]["protocolVersion"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if version != asked {
            return Err(RenewError::VersionChanged {
                now: version,
                before: asked,
            });
        }
        *lock(&self.session) = session;
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let resp = post(initialized.to_owned())
            .send()
            .await
            .map_err(|e| self.unreachable(e))?;
        if !resp.status().is_success() {
            return Err(RenewError::InitializedRefused(resp.status()));
        }
        Ok(())
    }

    /// Opens the server's GET stream (legacy sessions) for notifications that belong to no
    /// request, such as list changes, and opens it again when it drops (resuming after its
    /// last event, after the server's `retry` delay). A server without one answers 405, which
    /// is fine; a 404 means the session ended, and the next request renews it and opens a new
    /// stream. It stops with the connection or when the session changes.
    pub fn listen(self: &Arc<Self>, conn: Arc<Connection>) {
        let Some(session) = lock(&self.session).clone() else {
            return;
        };
        let me = self.clone();
        tokio::spawn(async move {
            let mut pos = StreamPosition::default();
            let mut failed = 0u32;
            loop {
                if conn.closed_reason().is_some()
                    || lock(&me.session).as_deref() != Some(session.as_str())
                {
                    return;
                }
                let sent = tokio::select! {
                    r = me.get(&session, pos.last_id.as_ref()).send() => r,
                    _ = conn.wait_closed() => return,
                };
                let failure = match sent {
                    Ok(resp) if resp.status().is_success() && is_event_stream(&resp) => {
                        let before = pos.events;
                        tokio::select! {
                            _ = read_sse(resp, &conn, me.max_message, None, &mut pos) => {}
                            _ = conn.wait_closed() => return,
                        }
                        if pos.events > before {
                            tracing::debug!(server = %conn.server, "the GET stream dropped; opening it again");
                            None
                        } else {
                            // Counted, or a server that closes it at once is reopened forever.
                            Some("it closed without an event".to_owned())
                        }
                    }
                    Ok(resp)
                        if matches!(
                            resp.status(),
                            reqwest::StatusCode::METHOD_NOT_ALLOWED
                                | reqwest::StatusCode::NOT_FOUND
                        ) =>
                    {
                        tracing::debug!(server = %conn.server, "no GET stream: HTTP {}", resp.status());
                        return;
                    }
                    Ok(resp) if resp.status().is_success() => {
                        Some(format!("HTTP {} without an event stream", resp.status()))
                    }
                    Ok(resp) => Some(format!("HTTP {}", resp.status())),
                    Err(e) => Some(e.without_url().to_string()),
                };
                match failure {
                    None => failed = 0,
                    Some(why) => {
                        failed += 1;
                        if failed >= GET_STREAM_ATTEMPTS {
                            tracing::warn!(server = %conn.server, "the GET stream could not be opened again: {why}");
                            return;
                        }
                        tracing::debug!(server = %conn.server, "opening the GET stream failed ({why}); trying again");
                    }
                }
                let delay = pos
                    .delay()
                    .saturating_mul(1 << failed.min(5))
                    .min(RETRY_MAX);
                tokio::select! {
                    _ = tokio::time::sleep(delay) => {}
                    _ = conn.wait_closed() => return,
                }
            }
        });
    }

    /// Ends the session with a `DELETE` (legacy), and waits for it, boundedly.
    pub async fn end_session(&self) {
        let Some(session) = lock(&self.session).take() else {
            return;
        };
        let mut req = self
            .client
            .delete(&self.url)
            .headers(self.headers.clone())
            .header("Mcp-Session-Id", session);
        if let Some(v) = lock(&self.version).clone() {
            req = req.header("MCP-Protocol-Version", v);
        }
        match tokio::time::timeout(DELETE_TIMEOUT, self.with_auth(req).send()).await {
            Ok(Ok(r)) => {
                tracing::debug!(url = %self.shown_url, "session ended: HTTP {}", r.status())
            }
            Ok(Err(e)) => tracing::debug!(
                url = %self.shown_url,
                "ending the session failed: {}",
                e.without_url()
            ),
            Err(_) => tracing::debug!(url = %self.shown_url, "ending the session took too long"),
        }
    }
}
