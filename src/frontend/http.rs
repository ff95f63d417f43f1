//! MCP over streamable HTTP (`loom serve --http`): the same surface as stdio, for several
//! clients at once, on the same session as stdio and the socket. One endpoint, `/mcp`: `POST`
//! carries a client's messages (an `initialize` starts a session and gets `Mcp-Session-Id`; a
//! request is answered with its JSON response, a notification or response with 202), `GET`
//! opens the stream of the server's own messages for a session, `DELETE` ends one.
//!
//! Before anything is read, every request passes, in order: the `Host` check (a loopback
//! listener answers only to loopback names, so a DNS-rebound page gets 403), the `Origin` check
//! (a browser page of another origin gets 403), the path (404), and the bearer token (401 with
//! `WWW-Authenticate: Bearer realm="loom"`, and `error="invalid_token"` when a wrong one was
//! sent; a token in the URL is never looked at). Bodies are bounded (413); batches are refused
//! (400), as the revisions loom serves refuse them. It never answers for a session it does not
//! hold (404), and never lets one client read another's messages.

use crate::session::Session;
use crate::types::events::Caller;
use crate::upstream::ClientSession;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited, StreamBody, combinators::BoxBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue, ORIGIN, WWW_AUTHENTICATE};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};

/// The header that names an HTTP session.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// Messages kept for a session while no stream is open to take them.
const KEPT_FOR_STREAM: usize = 1000;
/// Sessions one loom holds at once; a new one beyond is refused with 503.
const MAX_SESSIONS: usize = 256;

type Body = BoxBody<Bytes, Infallible>;

/// How the HTTP surface is reached and guarded.
#[derive(Clone)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// The bearer token every request must carry; `None` serves without one (open).
    pub token: Option<String>,
    /// The largest request body, in bytes.
    pub max_body: usize,
}

/// One HTTP client's session: its MCP client, the requests waiting for their responses, and
/// where the server's own messages go.
struct HttpClient {
    client: Arc<ClientSession>,
    waiting: Mutex<HashMap<String, oneshot::Sender<String>>>,
    stream: Mutex<Option<mpsc::UnboundedSender<String>>>,
    kept: Mutex<VecDeque<String>>,
}

impl HttpClient {
    /// A line the MCP client wrote: the response a POST waits for, or a message for the
    /// session's stream (kept, bounded, until one opens).
    fn route(&self, line: String) {
        if let Some(key) = response_id(&line)
            && let Some(tx) = lock(&self.waiting).remove(&key)
        {
            let _ = tx.send(line);
            return;
        }
        if let Some(tx) = lock(&self.stream).as_ref()
            && tx.send(line.clone()).is_ok()
        {
            return;
        }
        let mut kept = lock(&self.kept);
        if kept.len() == KEPT_FOR_STREAM {
            kept.pop_front();
        }
        kept.push_back(line);
    }
}

struct State {
    session: Arc<Session>,
    opts: HttpOptions,
    clients: Mutex<HashMap<String, Arc<HttpClient>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The id of a JSON-RPC response (not a request or notification), as its JSON text.
fn response_id(line: &str) -> Option<String> {
    let v: Value = serde_json::from_str(line).ok()?;
    if v.get("method").is_some() {
        return None;
    }
    v.get("id").map(|id| id.to_string())
}

/// Listens on `opts.addr` and serves until the task is aborted; returns the bound address.
pub async fn listen(
    session: Arc<Session>,
    opts: HttpOptions,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(opts.addr).await?;
    let bound = listener.local_addr()?;
    let state = Arc::new(State {
        session,
        opts: HttpOptions {
            addr: bound,
            ..opts
        },
        clients: Mutex::new(HashMap::new()),
    });
    let task = tokio::spawn(async move {
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!("HTTP accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            };
            let state = state.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let state = state.clone();
                    async move { Ok::<_, Infallible>(handle(&state, req).await) }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                if let Err(e) = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await
                {
                    tracing::debug!("HTTP connection ended: {e}");
                }
            });
        }
    });
    Ok((bound, task))
}

fn full(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    let mut r = Response::new(Full::new(body.into()).boxed());
    *r.status_mut() = status;
    if let Ok(v) = HeaderValue::from_str(content_type) {
        r.headers_mut().insert(CONTENT_TYPE, v);
    }
    r
}

/// A refusal in plain words (never a JSON-RPC error: the request was not read as one).
fn refuse(status: StatusCode, why: &str) -> Response<Body> {
    full(status, "text/plain; charset=utf-8", format!("{why}\n"))
}

/// A JSON-RPC error for a message that was read but cannot be served.
fn rpc_error(status: StatusCode, id: &Value, code: i64, message: &str) -> Response<Body> {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message }
    });
    full(status, "application/json", body.to_string())
}

fn is_loopback_name(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    matches!(name, "localhost" | "127.0.0.1" | "::1")
}

/// Whether the guards let the request through; the refusal otherwise.
fn guard(state: &State, req: &Request<Incoming>) -> Result<(), Box<Response<Body>>> {
    let header = |name| req.headers().get(name).and_then(|v| v.to_str().ok());
    // DNS rebinding: a loopback listener answers only to loopback names.
    if state.opts.addr.ip().is_loopback() {
        match header(HOST) {
            Some(h) if is_loopback_name(h) => {}
            _ => {
                return Err(Box::new(refuse(
                    StatusCode::FORBIDDEN,
                    "this Host is not served here",
                )));
            }
        }
    }
    if let Some(origin) = header(ORIGIN) {
        let host = origin.split("://").nth(1).unwrap_or("");
        if !is_loopback_name(host.trim_end_matches('/')) {
            return Err(Box::new(refuse(
                StatusCode::FORBIDDEN,
                "requests from this origin are not allowed",
            )));
        }
    }
    if req.uri().path() != "/mcp" {
        return Err(Box::new(refuse(
            StatusCode::NOT_FOUND,
            "MCP is served at /mcp",
        )));
    }
    if let Some(token) = &state.opts.token {
        let sent = header(AUTHORIZATION).and_then(|a| a.strip_prefix("Bearer "));
        let challenge = match sent {
            Some(t) if same(t.trim().as_bytes(), token.as_bytes()) => None,
            Some(_) => Some("Bearer realm=\"loom\", error=\"invalid_token\""),
            None => Some("Bearer realm=\"loom\""),
        };
        if let Some(c) = challenge {
            let mut r = refuse(StatusCode::UNAUTHORIZED, "a valid bearer token is required");
            r.headers_mut()
                .insert(WWW_AUTHENTICATE, HeaderValue::from_static(c));
            return Err(Box::new(r));
        }
    }
    Ok(())
}

/// Compares in time that does not depend on where the texts differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn handle(state: &Arc<State>, req: Request<Incoming>) -> Response<Body> {
    if let Err(refusal) = guard(state, &req) {
        return *refusal;
    }
    let session_id = req
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(v) = req
        .headers()
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        && !crate::protocol::SUPPORTED_VERSIONS.contains(&v)
    {
        return refuse(
            StatusCode::BAD_REQUEST,
            &format!(
                "unsupported MCP-Protocol-Version {v:?}; supported: {}",
                crate::protocol::SUPPORTED_VERSIONS.join(", ")
            ),
        );
    }
    match *req.method() {
        Method::POST => post(state, session_id, req).await,
        Method::GET => open_stream(state, session_id),
        Method::DELETE => match session_id.and_then(|id| lock(&state.clients).remove(&id)) {
            Some(c) => {
                c.client.close();
                refuse(StatusCode::OK, "session ended")
            }
            None => refuse(StatusCode::NOT_FOUND, "no such session"),
        },
        _ => {
            let mut r = refuse(StatusCode::METHOD_NOT_ALLOWED, "use POST, GET or DELETE");
            r.headers_mut()
                .insert("allow", HeaderValue::from_static("POST, GET, DELETE"));
            r
        }
    }
}

fn client_of(state: &State, id: Option<&str>) -> Result<Arc<HttpClient>, Box<Response<Body>>> {
    let Some(id) = id else {
        return Err(Box::new(refuse(
            StatusCode::BAD_REQUEST,
            "Mcp-Session-Id is required after initialize",
        )));
    };
    lock(&state.clients).get(id).cloned().ok_or_else(|| {
        Box::new(refuse(
            StatusCode::NOT_FOUND,
            "no such session (ended or expired)",
        ))
    })
}

/// A new session's MCP client, with the task that routes what it writes.
fn new_client(state: &State) -> Arc<HttpClient> {
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let client = Arc::new(HttpClient {
        client: ClientSession::new(state.session.clone(), tx, Caller::Model),
        waiting: Mutex::new(HashMap::new()),
        stream: Mutex::new(None),
        kept: Mutex::new(VecDeque::new()),
    });
    let weak = Arc::downgrade(&client);
    tokio::spawn(async move {
        while let Some(line) = rx.recv().await {
            match weak.upgrade() {
                Some(c) => c.route(line),
                None => break,
            }
        }
    });
    client
}

fn new_session_id() -> String {
    use sha2::Digest;
    let mut seed = [0u8; 32];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let _ = std::io::Read::read_exact(&mut f, &mut seed);
    }
    let digest = sha2::Sha256::digest(seed);
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

async fn post(
    state: &Arc<State>,
    session_id: Option<String>,
    req: Request<Incoming>,
) -> Response<Body> {
    let body = match Limited::new(req.into_body(), state.opts.max_body)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("the body is larger than {} bytes", state.opts.max_body),
            );
        }
    };
    let msg: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                &Value::Null,
                crate::jsonrpc::code::PARSE_ERROR,
                &format!("the body is not JSON: {e}"),
            );
        }
    };
    if msg.is_array() {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            &Value::Null,
            crate::jsonrpc::code::INVALID_REQUEST,
            "batches are not supported; send one message per request",
        );
    }
    let method = msg.get("method").and_then(Value::as_str);
    let id = msg.get("id").cloned();
    let (client, new_id) = if method == Some("initialize") && session_id.is_none() {
        if lock(&state.clients).len() >= MAX_SESSIONS {
            return refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many sessions; end one (DELETE) or try later",
            );
        }
        (new_client(state), Some(new_session_id()))
    } else {
        match client_of(state, session_id.as_deref()) {
            Ok(c) => (c, None),
            Err(r) => return *r,
        }
    };
    // A request waits for its response; anything else is accepted at once.
    let waiter = match (&id, method) {
        (Some(id), Some(_)) => {
            let (tx, rx) = oneshot::channel();
            lock(&client.waiting).insert(id.to_string(), tx);
            Some(rx)
        }
        _ => None,
    };
    client.client.handle_line(&body).await;
    let Some(rx) = waiter else {
        return full(StatusCode::ACCEPTED, "text/plain", "");
    };
    let Ok(line) = rx.await else {
        return rpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            id.as_ref().unwrap_or(&Value::Null),
            crate::jsonrpc::code::INTERNAL_ERROR,
            "the session ended before it answered",
        );
    };
    let mut r = full(StatusCode::OK, "application/json", line);
    if let Some(sid) = new_id {
        if let Ok(v) = HeaderValue::from_str(&sid) {
            r.headers_mut().insert(SESSION_HEADER, v);
        }
        lock(&state.clients).insert(sid, client);
    }
    r
}

/// `GET`: the session's stream of server messages, as server-sent events; what was kept while
/// no stream was open comes first. A newer stream replaces an older one.
fn open_stream(state: &Arc<State>, session_id: Option<String>) -> Response<Body> {
    let client = match client_of(state, session_id.as_deref()) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    let (tx, rx) = mpsc::unbounded_channel::<String>();
    for line in lock(&client.kept).drain(..) {
        let _ = tx.send(line);
    }
    *lock(&client.stream) = Some(tx);
    let events = futures_util::stream::unfold(rx, |mut rx| async move {
        let line = rx.recv().await?;
        let event = format!("event: message\ndata: {line}\n\n");
        Some((Ok::<_, Infallible>(Frame::data(Bytes::from(event))), rx))
    });
    let mut r = Response::new(StreamBody::new(events).boxed());
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    r.headers_mut()
        .insert("cache-control", HeaderValue::from_static("no-cache"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_with_and_without_ports() {
        for h in [
            "localhost",
            "localhost:7331",
            "127.0.0.1:80",
            "[::1]:7331",
            "[::1]",
        ] {
            assert!(is_loopback_name(h), "{h}");
        }
        for h in [
            "evil.example:7331",
            "127.0.0.1.evil.example",
            "10.0.0.1:7331",
            "",
        ] {
            assert!(!is_loopback_name(h), "{h}");
        }
    }

    #[test]
    fn responses_are_told_from_requests_by_their_method() {
        assert_eq!(
            response_id(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
            Some("7".into())
        );
        assert_eq!(
            response_id(r#"{"jsonrpc":"2.0","id":"a","method":"roots/list"}"#),
            None
        );
        assert_eq!(response_id("not json"), None);
        assert!(same(b"token", b"token") && !same(b"token", b"tokem") && !same(b"t", b"tt"));
    }
}
