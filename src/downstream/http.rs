//! The streamable-HTTP transport towards a downstream server: each outbound message is a POST
//! whose reply is JSON or an SSE stream; the session id and protocol-version headers follow the
//! negotiated era. Replies are fed to the connection as raw bytes, never re-encoded.
//!
//! `max_downstream_message_bytes` holds here as on stdio: a JSON body or an SSE event is read in
//! chunks and cut off the moment it passes the limit (never buffered whole first); the request
//! it answers fails with a message that names the limit, and loom goes on serving. Redirects
//! are followed only within the configured origin (scheme, host and port), so configured
//! headers, the bearer token, `Mcp-Session-Id` and request bodies never reach another origin.

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
    /// The largest JSON body or SSE event accepted (`max_downstream_message_bytes`).
    max_message: usize,
}

pub struct HttpLaunch<'a> {
    pub server: &'a str,
    pub url: &'a str,
    pub headers: &'a BTreeMap<String, String>,
    pub bearer_token_env: Option<&'a str>,
    pub max_message: usize,
    pub client_caps: ClientCapabilities,
    pub inbound: InboundSink,
}

/// Follows a redirect only when it stays on the origin the chain started from; a redirect to
/// another origin is not followed and its 3xx reaches `post` as the answer.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !same {
            attempt.stop()
        } else if attempt.previous().len() > 10 {
            attempt.error("more than 10 redirects")
        } else {
            attempt.follow()
        }
    })
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
        .redirect(same_origin_redirects())
        .build()
        .map_err(|e| format!("cannot build HTTP client: {e}"))?;
    let sink = Arc::new(HttpSink {
        client,
        url: launch.url.to_owned(),
        headers,
        session: Mutex::new(None),
        version: Mutex::new(None),
        max_message: launch.max_message,
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
            if status.is_redirection() {
                // Only a redirect to another origin ends here (same-origin ones were followed).
                if let Some(id) = id {
                    let to = resp
                        .headers()
                        .get(reqwest::header::LOCATION)
                        .and_then(|v| v.to_str().ok())
                        .map(|l| l.chars().take(200).collect::<String>())
                        .unwrap_or_default();
                    conn.fail(
                        id,
                        &format!(
                            "HTTP {status}: the server redirected to another origin ({to:?}); loom follows redirects only within the configured origin, so headers and tokens never leave it"
                        ),
                    );
                }
                return;
            }
            if !status.is_success() {
                let text = match read_body(resp, me.max_message).await {
                    Ok(b) => b,
                    Err(BodyError::TooLarge { .. }) => {
                        if let Some(id) = id {
                            conn.fail(
                                id,
                                &format!(
                                    "HTTP {status}, with a body over the {}-byte limit (max_downstream_message_bytes)",
                                    me.max_message
                                ),
                            );
                        }
                        return;
                    }
                    Err(BodyError::Read(_)) => Vec::new(),
                };
                let text = String::from_utf8_lossy(&text);
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
                read_sse(resp, &conn, me.max_message, id).await;
            } else if id.is_some() {
                match read_body(resp, me.max_message).await {
                    Ok(b) if !b.is_empty() => conn.handle_incoming(&b),
                    Ok(_) => {}
                    Err(BodyError::TooLarge { prefix }) => {
                        conn.handle_cut_off(&prefix, me.max_message, id)
                    }
                    Err(BodyError::Read(e)) => {
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
        let me_limit = self.max_message;
        tokio::spawn(async move {
            if let Ok(resp) = req.send().await
                && resp.status().is_success()
            {
                tokio::select! {
                    _ = read_sse(resp, &conn, me_limit, None) => {}
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

/// Why a body was not read whole.
enum BodyError {
    /// It passed the limit; reading stopped there. The first bytes are kept to tell which
    /// request it answered.
    TooLarge {
        prefix: Vec<u8>,
    },
    Read(reqwest::Error),
}

/// How much of a cut-off message is kept to find its id.
const PREFIX_KEPT: usize = 4096;

/// Reads a body chunk by chunk, stopping as soon as it passes `limit` bytes; what was read of
/// an oversize body is dropped except its first bytes, and the rest is never fetched.
async fn read_body(resp: reqwest::Response, limit: usize) -> Result<Vec<u8>, BodyError> {
    if resp.content_length().is_some_and(|n| n > limit as u64) {
        return Err(BodyError::TooLarge { prefix: Vec::new() });
    }
    let mut body = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(BodyError::Read)?;
        if body.len() + chunk.len() > limit {
            body.truncate(PREFIX_KEPT);
            let room = PREFIX_KEPT - body.len();
            body.extend_from_slice(chunk.get(..room.min(chunk.len())).unwrap_or_default());
            return Err(BodyError::TooLarge { prefix: body });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Feeds each SSE event to the connection. An event over `limit` is cut off while it streams;
/// on a request's own stream (`request` is its id) that ends the stream and fails the request,
/// on the standalone GET stream the event is skipped and reading goes on.
async fn read_sse(
    resp: reqwest::Response,
    conn: &Arc<Connection>,
    limit: usize,
    request: Option<u64>,
) {
    let mut parser = SseParser::new(limit);
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let Ok(chunk) = chunk else { break };
        for item in parser.feed(&chunk) {
            match item {
                SseItem::Event(data) => conn.handle_incoming(&data),
                SseItem::TooLarge { prefix } => {
                    conn.handle_cut_off(&prefix, limit, request);
                    if request.is_some() {
                        return;
                    }
                }
            }
        }
    }
}

/// What the SSE parser yields.
#[derive(Debug, PartialEq)]
pub enum SseItem {
    /// One event's joined `data` lines.
    Event(Vec<u8>),
    /// An event (or a line) passed the limit; its first bytes, and the rest is skipped.
    TooLarge { prefix: Vec<u8> },
}

/// Room for a field name (`data: `, `event: `…) on a line, beyond an event's limit.
const FIELD_SLACK: usize = 6;

/// Incremental `text/event-stream` parser yielding each event's joined `data` lines. No event
/// it yields is over `limit` bytes, and it never holds more than that (plus a field name)
/// however the stream is chunked: an event is cut off the moment it passes the limit.
pub struct SseParser {
    line: Vec<u8>,
    data: Vec<u8>,
    limit: usize,
    /// Inside an event that was cut off: bytes are dropped until the event ends.
    skipping: bool,
}

impl SseParser {
    pub fn new(limit: usize) -> SseParser {
        SseParser {
            line: Vec::new(),
            data: Vec::new(),
            limit,
            skipping: false,
        }
    }

    /// The size the event would have if the line being read ended now: its data so far plus
    /// this line's payload (a line of another field counts beyond its name's room).
    fn held(&self) -> usize {
        let line = match self.line.strip_prefix(b"data:") {
            Some(rest) => {
                rest.strip_prefix(b" ").unwrap_or(rest).len() + usize::from(!self.data.is_empty())
            }
            None => self.line.len().saturating_sub(FIELD_SLACK),
        };
        self.data.len() + line
    }

    /// Drops the event being read, keeping its first bytes, and skips the rest of it.
    fn cut_off(&mut self) -> Vec<u8> {
        let mut prefix = std::mem::take(&mut self.data);
        if let Some(rest) = self.line.strip_prefix(b"data:") {
            if !prefix.is_empty() {
                prefix.push(b'\n');
            }
            prefix.extend_from_slice(rest.strip_prefix(b" ").unwrap_or(rest));
        }
        prefix.truncate(PREFIX_KEPT);
        self.line = vec![b'x'];
        self.skipping = true;
        prefix
    }

    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseItem> {
        let mut items = Vec::new();
        for &b in chunk {
            if b != b'\n' {
                if self.skipping {
                    // A line with content keeps the cut-off event going; an empty one ends it.
                    if b != b'\r' {
                        self.line.clear();
                        self.line.push(b'x');
                    }
                    continue;
                }
                self.line.push(b);
                if self.held() > self.limit {
                    items.push(SseItem::TooLarge {
                        prefix: self.cut_off(),
                    });
                }
                continue;
            }
            if self.line.last() == Some(&b'\r') {
                self.line.pop();
            }
            if self.line.is_empty() {
                if self.skipping {
                    self.skipping = false;
                } else if !self.data.is_empty() {
                    items.push(SseItem::Event(std::mem::take(&mut self.data)));
                }
            } else if !self.skipping
                && let Some(rest) = self.line.strip_prefix(b"data:")
            {
                let rest = rest.strip_prefix(b" ").unwrap_or(rest);
                if !self.data.is_empty() {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(rest);
            }
            self.line.clear();
        }
        items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(items: Vec<SseItem>) -> Vec<Vec<u8>> {
        items
            .into_iter()
            .map(|i| match i {
                SseItem::Event(d) => d,
                SseItem::TooLarge { .. } => panic!("unexpected cut-off"),
            })
            .collect()
    }

    #[test]
    fn sse_events_across_chunks() {
        let mut p = SseParser::new(1 << 20);
        assert!(
            p.feed(b"event: message\r\nid: 1\r\ndata: {\"a\":")
                .is_empty()
        );
        let ev = events(p.feed(b"1}\r\n\r\n: comment\n\ndata: x\ndata: y\n\n"));
        assert_eq!(ev, vec![b"{\"a\":1}".to_vec(), b"x\ny".to_vec()]);
    }

    #[test]
    fn an_oversize_event_is_cut_off_while_it_streams_and_the_next_one_is_read() {
        let mut p = SseParser::new(64);
        let mut cut = Vec::new();
        assert!(p.feed(b"data: {\"jsonrpc\":\"2.0\",\"id\":7,").is_empty());
        // The limit is passed in the middle of a chunk: the parser says so at once, before
        // the event ends, and holds no more of it from then on.
        for _ in 0..1000 {
            cut.extend(p.feed(&[b'x'; 1000]));
            assert!(p.line.len() + p.data.len() <= 64 + FIELD_SLACK);
        }
        assert_eq!(cut.len(), 1, "{cut:?}");
        let SseItem::TooLarge { prefix } = &cut[0] else {
            panic!("{cut:?}")
        };
        assert_eq!(crate::jsonrpc::sniff_numeric_id(prefix), Some(7));
        // More data lines of the same event are skipped too; the next event is read whole.
        assert!(p.feed(b"\ndata: more\n").is_empty());
        let ev = events(p.feed(b"\ndata: {\"id\":8}\n\n"));
        assert_eq!(ev, vec![b"{\"id\":8}".to_vec()]);
    }

    #[test]
    fn an_event_of_many_small_data_lines_is_bounded_too() {
        let mut p = SseParser::new(100);
        let mut items = Vec::new();
        for _ in 0..100 {
            items.extend(p.feed(b"data: 0123456789\n"));
        }
        assert_eq!(items.len(), 1);
        assert!(matches!(items[0], SseItem::TooLarge { .. }));
        assert!(p.feed(b"\n").is_empty());
        assert_eq!(events(p.feed(b"data: ok\n\n")), vec![b"ok".to_vec()]);
    }

    #[test]
    fn an_event_exactly_at_the_limit_passes() {
        let mut p = SseParser::new(10);
        assert_eq!(
            events(p.feed(b"data: 0123456789\n\n")),
            vec![b"0123456789".to_vec()]
        );
        assert!(matches!(
            p.feed(b"data: 0123456789a\n\n").as_slice(),
            [SseItem::TooLarge { .. }]
        ));
    }

    fn fragments() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        proptest::collection::vec(
            prop_oneof![
                Just(b"data: ".to_vec()),
                Just(b"data:".to_vec()),
                Just(b"event: message".to_vec()),
                Just(b"\n".to_vec()),
                Just(b"\r\n".to_vec()),
                Just(b"\n\n".to_vec()),
                Just(b": comment".to_vec()),
                proptest::collection::vec(any::<u8>(), 0..40),
            ],
            0..80,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest::proptest! {
        #[test]
        fn the_parser_stays_within_its_limit_whatever_the_stream_and_its_chunking(
            stream in fragments(),
            cuts in proptest::collection::vec(0usize..2000, 0..8),
            limit in 1usize..120,
        ) {
            let mut whole = SseParser::new(limit);
            let expected = whole.feed(&stream);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(stream.len())).collect();
            cuts.sort_unstable();
            let mut pieces = SseParser::new(limit);
            let mut got = Vec::new();
            let mut at = 0;
            for cut in cuts.into_iter().chain([stream.len()]) {
                got.extend(pieces.feed(&stream[at..cut]));
                proptest::prop_assert!(pieces.line.len() + pieces.data.len() <= limit + FIELD_SLACK + 1);
                at = cut;
            }
            proptest::prop_assert_eq!(&got, &expected);
            for item in &got {
                if let SseItem::Event(data) = item {
                    proptest::prop_assert!(data.len() <= limit, "{} > {limit}", data.len());
                }
            }
        }
    }
}
