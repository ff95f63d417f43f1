//! The streamable-HTTP transport towards a downstream server: each outbound message is a POST
//! whose reply is JSON or an SSE stream; the session id and protocol-version headers follow the
//! negotiated era. Replies are fed to the connection as raw bytes, never re-encoded.

use super::connection::{Connection, InboundSink, Outbound};
use crate::protocol::{ClientCapabilities, Era, V_2026_07_28};
use futures_util::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

pub struct HttpSink {
    client: reqwest::Client,
    url: String,
    headers: HeaderMap,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
}

pub struct HttpLaunch<'a> {
    pub server: &'a str,
    pub url: &'a str,
    pub headers: &'a BTreeMap<String, String>,
    pub bearer_token_env: Option<&'a str>,
    pub client_caps: ClientCapabilities,
    pub inbound: InboundSink,
}

pub fn connect(launch: HttpLaunch<'_>) -> Result<Arc<Connection>, String> {
    let mut headers = HeaderMap::new();
    for (k, v) in launch.headers {
        let name =
            HeaderName::from_bytes(k.as_bytes()).map_err(|e| format!("header name {k:?}: {e}"))?;
        let value = HeaderValue::from_str(v).map_err(|e| format!("header {k}: {e}"))?;
        headers.insert(name, value);
    }
    if let Some(var) = launch.bearer_token_env {
        let token = std::env::var(var)
            .map_err(|_| format!("environment variable {var} (bearer_token_env) is not set"))?;
        let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| format!("{var} holds characters not allowed in a header"))?;
        value.set_sensitive(true);
        headers.insert(reqwest::header::AUTHORIZATION, value);
    }
    let client = reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .build()
        .map_err(|e| format!("cannot build HTTP client: {e}"))?;
    let sink = Arc::new(HttpSink {
        client,
        url: launch.url.to_owned(),
        headers,
        session: Mutex::new(None),
        version: Mutex::new(None),
    });
    Ok(Connection::new(
        launch.server,
        Outbound::Http(sink),
        launch.client_caps,
        launch.inbound,
    ))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    super::connection::lock(m)
}

impl HttpSink {
    pub fn set_version(&self, version: &str) {
        *lock(&self.version) = Some(version.to_owned());
    }

    fn request(
        &self,
        conn: &Connection,
        method: Option<&str>,
        body: &str,
    ) -> reqwest::RequestBuilder {
        let mut req = self
            .client
            .post(&self.url)
            .headers(self.headers.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            );
        if let Some(s) = lock(&self.session).clone() {
            req = req.header("Mcp-Session-Id", s);
        }
        if conn.era() == Era::Modern {
            req = req.header("MCP-Protocol-Version", V_2026_07_28);
            if let Some(m) = method {
                req = req.header("Mcp-Method", m);
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(body)
                    && let Some(name) = v["params"]["name"].as_str().or(v["params"]["uri"].as_str())
                    && let Ok(h) = HeaderValue::from_str(name)
                {
                    req = req.header("Mcp-Name", h);
                }
            }
        } else if let Some(v) = lock(&self.version).clone() {
            req = req.header("MCP-Protocol-Version", v);
        }
        req.body(body.to_owned())
    }

    pub fn post(
        self: &Arc<Self>,
        conn: Arc<Connection>,
        body: String,
        request: Option<(u64, &str)>,
    ) {
        let req = self.request(&conn, request.map(|r| r.1), &body);
        let id = request.map(|r| r.0);
        let me = self.clone();
        tokio::spawn(async move {
            let resp = match req.send().await {
                Ok(r) => r,
                Err(e) => {
                    let why = format!("cannot reach {}: {e}", me.url);
                    if e.is_connect() {
                        conn.close(&why);
                    } else if let Some(id) = id {
                        conn.fail(id, &why);
                    }
                    return;
                }
            };
            if let Some(s) = resp
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
            {
                *lock(&me.session) = Some(s.to_owned());
            }
            let status = resp.status();
            if status == reqwest::StatusCode::NOT_FOUND && lock(&me.session).is_some() {
                conn.close("the HTTP session expired (404)");
                return;
            }
            if !status.is_success() {
                let text = resp.text().await.unwrap_or_default();
                // A JSON-RPC error in the body is still a proper reply.
                if text.trim_start().starts_with('{') && text.contains("\"jsonrpc\"") {
                    conn.handle_incoming(text.as_bytes());
                }
                if let Some(id) = id {
                    let snippet: String = text.chars().take(300).collect();
                    conn.fail(id, &format!("HTTP {status}: {snippet}"));
                }
                return;
            }
            let is_sse = resp
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|ct| ct.starts_with("text/event-stream"));
            if is_sse {
                read_sse(resp, &conn).await;
            } else if id.is_some() {
                match resp.bytes().await {
                    Ok(b) if !b.is_empty() => conn.handle_incoming(&b),
                    Ok(_) => {}
                    Err(e) => {
                        if let Some(id) = id {
                            conn.fail(id, &format!("reading the HTTP reply failed: {e}"));
                        }
                    }
                }
            }
            if let Some(id) = id {
                conn.fail(id, "the HTTP reply ended without an answer");
            }
        });
    }

    /// Opens the server's GET stream (legacy sessions) for notifications that belong to no
    /// request, such as list changes. Servers without one answer 405, which is fine.
    pub fn listen(self: &Arc<Self>, conn: Arc<Connection>) {
        let Some(session) = lock(&self.session).clone() else {
            return;
        };
        let mut req = self
            .client
            .get(&self.url)
            .headers(self.headers.clone())
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .header("Mcp-Session-Id", session);
        if let Some(v) = lock(&self.version).clone() {
            req = req.header("MCP-Protocol-Version", v);
        }
        tokio::spawn(async move {
            if let Ok(resp) = req.send().await
                && resp.status().is_success()
            {
                tokio::select! {
                    _ = read_sse(resp, &conn) => {}
                    _ = conn.wait_closed() => {}
                }
            }
        });
    }

    pub fn end_session(self: &Arc<Self>) {
        let Some(session) = lock(&self.session).take() else {
            return;
        };
        let req = self
            .client
            .delete(&self.url)
            .headers(self.headers.clone())
            .header("Mcp-Session-Id", session);
        tokio::spawn(async move {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), req.send()).await;
        });
    }
}

async fn read_sse(resp: reqwest::Response, conn: &Arc<Connection>) {
    let mut parser = SseParser::default();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let Ok(chunk) = chunk else { break };
        for data in parser.feed(&chunk) {
            conn.handle_incoming(&data);
        }
    }
}

/// Incremental `text/event-stream` parser yielding each event's joined `data` lines.
#[derive(Default)]
pub struct SseParser {
    line: Vec<u8>,
    data: Vec<u8>,
}

impl SseParser {
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Vec<u8>> {
        let mut events = Vec::new();
        for &b in chunk {
            if b != b'\n' {
                self.line.push(b);
                continue;
            }
            if self.line.last() == Some(&b'\r') {
                self.line.pop();
            }
            if self.line.is_empty() {
                if !self.data.is_empty() {
                    events.push(std::mem::take(&mut self.data));
                }
            } else if let Some(rest) = self.line.strip_prefix(b"data:") {
                let rest = rest.strip_prefix(b" ").unwrap_or(rest);
                if !self.data.is_empty() {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(rest);
            }
            self.line.clear();
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_across_chunks() {
        let mut p = SseParser::default();
        assert!(
            p.feed(b"event: message\r\nid: 1\r\ndata: {\"a\":")
                .is_empty()
        );
        let ev = p.feed(b"1}\r\n\r\n: comment\n\ndata: x\ndata: y\n\n");
        assert_eq!(ev, vec![b"{\"a\":1}".to_vec(), b"x\ny".to_vec()]);
    }
}
