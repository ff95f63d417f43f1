//! MCP over streamable HTTP (`loom serve --http`, `loom tui --http`): the same surface as
//! stdio, for several clients at once, on the same session as stdio and the socket. One
//! endpoint, `/mcp`, serves both protocol eras:
//!
//! - legacy sessions (2025-11-25 and older, [`legacy`]): `initialize` starts a session named by
//!   `Mcp-Session-Id`; a request is answered with JSON, or with an event stream when it is a
//!   call (so its progress, logs and the servers' requests travel with it); `GET` opens the
//!   session's own stream; a dropped stream resumes with `Last-Event-ID`; `DELETE` ends it;
//! - stateless 2026-07-28 requests ([`stateless`]): each request carries its own `_meta`, its
//!   `Mcp-Method` and `Mcp-Name` headers must match its body, and closing its stream cancels it.
//!
//! A connection from a process this session started (a server, or anything below one, found
//! from the kernel as the session socket finds it, see [`super::peer`]) gets 403 for every
//! request, whatever token it sends; so does a local one that cannot be placed. Before anything
//! is read, every request passes, in order: one `Host` and at most one `Origin` (400 when
//! sent twice), the `Host` check (a loopback listener, IPv4-mapped ones included, answers only
//! to loopback names, read strictly, so a DNS-rebound page gets 403), the `Origin` check (a
//! browser page of another origin, or an origin that does not parse, gets 403), the path (404),
//! and the bearer token (401 with `WWW-Authenticate: Bearer realm="loom"`, and
//! `error="invalid_token"` when a wrong one was sent; a token in the URL is never looked at).
//! Bodies are bounded (413), and so are sessions (503) and the streams of a session (429); idle
//! sessions end. Batches are refused (400), as the revisions loom serves refuse them, and so is
//! a request whose id is an object, an array or a boolean (400, -32600, at once). It never
//! answers for a session it does not hold (404), and never lets one client read another's
//! messages.

mod legacy;
mod outbox;
mod stateless;

use crate::session::Session;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited, combinators::BoxBody};
use hyper::body::Incoming;
use hyper::header::{
    ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, HeaderMap, HeaderValue, ORIGIN, WWW_AUTHENTICATE,
};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The header that names an HTTP session.
pub const SESSION_HEADER: &str = "mcp-session-id";

type Body = BoxBody<Bytes, Infallible>;

/// How the HTTP surface is reached, guarded and bounded.
#[derive(Clone)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// The bearer token every request must carry; `None` serves without one (open).
    pub token: Option<String>,
    /// The largest request body, in bytes.
    pub max_body: usize,
    /// A session no request touched for this long ends.
    pub idle_timeout: Duration,
    pub max_sessions: usize,
    /// Streams one session may hold open at once.
    pub max_streams: usize,
}

impl HttpOptions {
    pub fn new(
        addr: SocketAddr,
        token: Option<String>,
        max_body: usize,
        settings: &crate::config::HttpSettings,
    ) -> HttpOptions {
        HttpOptions {
            addr,
            token,
            max_body,
            idle_timeout: settings.idle_timeout,
            max_sessions: settings.max_sessions,
            max_streams: settings.max_streams,
        }
    }
}

struct State {
    session: Arc<Session>,
    opts: HttpOptions,
    sessions: Mutex<HashMap<String, Arc<legacy::HttpSession>>>,
    /// Sessions being set up (their `initialize` in flight): counted with `sessions` against
    /// `max_sessions`, so that many at once cannot pass the bound together.
    starting: std::sync::atomic::AtomicUsize,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Connections the HTTP surface holds open at once; more are closed as they arrive.
const MAX_CONNECTIONS: usize = 1024;
/// How long a connection may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

/// What every handler needs to know about the request besides its body.
struct Asked {
    remote: SocketAddr,
    /// The client takes an event stream as the answer.
    takes_stream: bool,
    /// `?servers=a,b`: the servers this connection's lists show.
    listing: Option<Vec<String>>,
    /// `?listing=search`: this connection's listing mode.
    mode: Option<crate::config::ListingMode>,
    /// What the URL asked for that does not exist, told to the client in its primer.
    notices: Vec<String>,
    headers: HeaderMap,
}

impl Asked {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
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
        sessions: Mutex::new(HashMap::new()),
        starting: std::sync::atomic::AtomicUsize::new(0),
    });
    let reaper = tokio::spawn(legacy::expire_idle(Arc::downgrade(&state)));
    let connections = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let task = tokio::spawn(async move {
        let _reaper = AbortOnDrop(reaper);
        loop {
            let (stream, remote) = match listener.accept().await {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!("HTTP accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            // Connections are bounded, so that clients holding them open (authenticated or
            // not) cannot take every file descriptor loom has.
            let Ok(permit) = connections.clone().try_acquire_owned() else {
                tracing::warn!("HTTP connection from {remote} refused: {MAX_CONNECTIONS} are open");
                continue;
            };
            let _ = stream.set_nodelay(true);
            keep_alive(&stream);
            let state = state.clone();
            tokio::spawn(async move {
                let _permit = permit;
                let local = stream.local_addr().map_err(|e| e.to_string());
                let refused = peer_refusal(&local, remote).await;
                if let Some(why) = &refused {
                    tracing::warn!("HTTP connection from {remote}: {why}");
                }
                // The peer is placed again at its first request: a socket handed on between
                // the accept and the request is judged where it is when it speaks.
                let again = Arc::new(tokio::sync::OnceCell::new());
                let service = hyper::service::service_fn(move |req| {
                    let (state, refused, again) = (state.clone(), refused.clone(), again.clone());
                    let local = local.clone();
                    async move {
                        let refused = match refused {
                            Some(why) => Some(why),
                            None => again
                                .get_or_init(|| async {
                                    let why = peer_refusal(&local, remote).await;
                                    if let Some(why) = &why {
                                        tracing::warn!("HTTP request from {remote}: {why}");
                                    }
                                    why
                                })
                                .await
                                .clone(),
                        };
                        Ok::<_, Infallible>(match refused {
                            Some(why) => refuse(StatusCode::FORBIDDEN, &why),
                            None => handle(&state, req, remote).await,
                        })
                    }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                // A client gets HEADER_TIMEOUT to send a request's headers (a slow drip of
                // bytes does not hold a connection forever).
                if let Err(e) = hyper::server::conn::http1::Builder::new()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(HEADER_TIMEOUT)
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

/// Why a connection's peer may not use the HTTP surface, when it may not: a process this
/// session started (a server, or anything below one) is refused as on the session socket,
/// whatever token it read, and so is a local peer that cannot be placed.
async fn peer_refusal(local: &Result<SocketAddr, String>, remote: SocketAddr) -> Option<String> {
    let local = match local {
        Ok(a) => *a,
        Err(e) => {
            return Some(format!(
                "refused: the connection has no local address ({e})"
            ));
        }
    };
    let me = std::process::id();
    let ancestry = tokio::task::spawn_blocking(move || super::peer::tcp_peer(local, remote, me))
        .await
        .unwrap_or_else(|e| super::peer::Ancestry::Unknown(e.to_string()));
    super::peer::refusal(ancestry, "HTTP surface")
}

/// A client's connection finds a peer that vanished without closing (a laptop that slept, a
/// dropped network) in about two minutes, and its streams and session are let go: keepalive
/// probes for a silent connection, and a user timeout for one whose data (a heartbeat, an
/// event) goes unacknowledged, which the kernel would otherwise retransmit for 15 minutes or
/// more (and keepalive never probes a connection with data in flight).
fn keep_alive(stream: &tokio::net::TcpStream) {
    let probes = socket2::TcpKeepalive::new()
        .with_time(Duration::from_secs(60))
        .with_interval(Duration::from_secs(10))
        .with_retries(6);
    let sock = socket2::SockRef::from(stream);
    if let Err(e) = sock.set_tcp_keepalive(&probes) {
        tracing::debug!("TCP keepalive not set: {e}");
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Err(e) = sock.set_tcp_user_timeout(Some(Duration::from_secs(120))) {
        tracing::debug!("TCP user timeout not set: {e}");
    }
}

/// Aborts a task when the owner goes (the listener's task owns the idle reaper).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
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
fn rpc_error(
    status: StatusCode,
    id: &Value,
    code: i64,
    message: &str,
    data: Option<Value>,
) -> Response<Body> {
    let mut error = serde_json::json!({ "code": code, "message": message });
    if let Some(d) = data {
        error["data"] = d;
    }
    let body = serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": error });
    full(status, "application/json", body.to_string())
}

/// Events queued for one stream's reader at most: a reader that falls this far behind (a
/// client that stopped reading) is let go rather than held in memory without bound.
const STREAM_QUEUE: usize = 4096;

/// How long a stream stays silent before it carries a heartbeat.
const HEARTBEAT: Duration = Duration::from_secs(15);

/// The SSE comment a quiet stream carries every [`HEARTBEAT`]: every client ignores it, and
/// writing it finds a reader that vanished (its stream is let go, its request cancelled)
/// without waiting for the next real event; proxies that cut idle connections keep it open.
const HEARTBEAT_EVENT: &[u8] = b": keepalive\n\n";

/// A stream of server-sent events as a response body, with a heartbeat while it is quiet.
fn event_stream(events: tokio::sync::mpsc::Receiver<Bytes>) -> Response<Body> {
    event_stream_beating(events, HEARTBEAT)
}

fn event_stream_beating(
    events: tokio::sync::mpsc::Receiver<Bytes>,
    every: Duration,
) -> Response<Body> {
    let frames = futures_util::stream::unfold(events, move |mut rx| async move {
        let bytes = match tokio::time::timeout(every, rx.recv()).await {
            Ok(next) => next?,
            Err(_) => Bytes::from_static(HEARTBEAT_EVENT),
        };
        Some((Ok::<_, Infallible>(hyper::body::Frame::data(bytes)), rx))
    });
    let mut r = Response::new(http_body_util::StreamBody::new(frames).boxed());
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert("cache-control", HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

/// The host of a `Host` header or of an origin's authority: `name`, `name:port`, `[v6]` or
/// `[v6]:port`, with a port of digits only; anything else (`[::1]evil.example`,
/// `localhost:evil`, a user or a path) is no host at all.
fn authority_host(authority: &str) -> Option<&str> {
    let (host, port) = match authority.strip_prefix('[') {
        Some(rest) => {
            let (host, after) = rest.split_once(']')?;
            host.parse::<std::net::Ipv6Addr>().ok()?;
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':')?),
            };
            (host, port)
        }
        None => match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    if let Some(p) = port
        && (p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    Some(host)
}

/// Whether an authority names this machine's loopback: `localhost` or a loopback address
/// written out (`127.0.0.1`, `127.0.0.2`, `[::1]`, `[::ffff:127.0.0.1]`; never `127.1` or
/// `0x7f000001`, which the address parser refuses).
fn is_loopback_name(authority: &str) -> bool {
    match authority_host(authority) {
        Some("localhost") => true,
        Some(h) => h
            .parse::<std::net::IpAddr>()
            .is_ok_and(crate::config::is_loopback),
        None => false,
    }
}

/// Whether a browser's `Origin` is a page on this machine's loopback (`http://` or
/// `https://` and a loopback authority, nothing after it).
fn is_loopback_origin(origin: &str) -> bool {
    origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .is_some_and(is_loopback_name)
}

/// The one value of a header, `Ok(None)` when it is absent; sent twice (RFC 9112 allows one
/// `Host`, and a second `Origin` could hide the first), it is refused with 400.
fn single(
    headers: &HeaderMap,
    name: hyper::header::HeaderName,
) -> Result<Option<&HeaderValue>, Box<Response<Body>>> {
    let mut all = headers.get_all(&name).iter();
    let first = all.next();
    if all.next().is_some() {
        return Err(Box::new(refuse(
            StatusCode::BAD_REQUEST,
            &format!("the {name} header was sent more than once"),
        )));
    }
    Ok(first)
}

/// Whether the guards let the request through; the refusal otherwise.
fn guard(state: &State, req: &Request<Incoming>) -> Result<(), Box<Response<Body>>> {
    let header = |name| req.headers().get(name).and_then(|v| v.to_str().ok());
    let host = single(req.headers(), HOST)?;
    let origin = single(req.headers(), ORIGIN)?;
    // DNS rebinding: a loopback listener answers only to loopback names.
    if crate::config::is_loopback(state.opts.addr.ip())
        && !host
            .and_then(|h| h.to_str().ok())
            .is_some_and(is_loopback_name)
    {
        return Err(Box::new(refuse(
            StatusCode::FORBIDDEN,
            "this Host is not served here",
        )));
    }
    // An Origin that is not plain ASCII is not skipped: it is not a loopback page.
    if let Some(origin) = origin
        && !origin.to_str().is_ok_and(is_loopback_origin)
    {
        return Err(Box::new(refuse(
            StatusCode::FORBIDDEN,
            "requests from this origin are not allowed",
        )));
    }
    if req.uri().path() != "/mcp" {
        return Err(Box::new(refuse(
            StatusCode::NOT_FOUND,
            "MCP is served at /mcp",
        )));
    }
    if let Some(token) = &state.opts.token {
        // The scheme's name is case-insensitive (RFC 7235).
        let sent = header(AUTHORIZATION).and_then(|a| {
            a.get(..7)
                .filter(|s| s.eq_ignore_ascii_case("bearer "))
                .and_then(|_| a.get(7..))
        });
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

async fn handle(state: &Arc<State>, req: Request<Incoming>, remote: SocketAddr) -> Response<Body> {
    if let Err(refusal) = guard(state, &req) {
        return *refusal;
    }
    let mut notices = Vec::new();
    let asked = Asked {
        remote,
        takes_stream: req
            .headers()
            .get(ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("text/event-stream")),
        listing: listing_of(state, req.uri().query(), &mut notices),
        mode: mode_of(req.uri().query(), &mut notices),
        notices,
        headers: req.headers().clone(),
    };
    let session_id = asked.header(SESSION_HEADER).map(str::to_owned);
    match *req.method() {
        Method::POST => {
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
            post(state, session_id, asked, body).await
        }
        Method::GET | Method::DELETE if session_id.is_none() => not_allowed(),
        Method::GET => legacy::open_stream(state, session_id.as_deref(), &asked),
        Method::DELETE => legacy::end(state, session_id.as_deref()),
        _ => not_allowed(),
    }
}

/// GET and DELETE belong to sessions; without one (2026-07-28 has none) only POST is served.
fn not_allowed() -> Response<Body> {
    let mut r = refuse(
        StatusCode::METHOD_NOT_ALLOWED,
        "use POST (GET and DELETE need an Mcp-Session-Id)",
    );
    r.headers_mut()
        .insert("allow", HeaderValue::from_static("POST, GET, DELETE"));
    r
}

/// The first value of `key` in a URL's query, percent-decoded (`a%2Cb` is `a,b`, `+` a space).
fn query_param(query: &str, key: &str) -> Option<String> {
    form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}

/// `?servers=a,b`, when every name is a configured server; otherwise all servers, never a
/// silently different set (an unknown name is reported in the log).
fn listing_of(
    state: &State,
    query: Option<&str>,
    notices: &mut Vec<String>,
) -> Option<Vec<String>> {
    let value = query_param(query?, "servers")?;
    let value = value.as_str();
    let names: Vec<String> = value
        .split(',')
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .collect();
    let known = state.session.server_names();
    let unknown: Vec<&String> = names.iter().filter(|n| !known.contains(n)).collect();
    if names.is_empty() || !unknown.is_empty() {
        tracing::warn!(
            "HTTP client asked for servers={value:?}; unknown: {unknown:?}; listing every server"
        );
        notices.push(format!(
            "this connection asked for servers={}, which names no configured server ({}); every server is listed",
            crate::terminal_text::line(&value.chars().take(80).collect::<String>()),
            known.join(", ")
        ));
        return None;
    }
    Some(names)
}

/// `?listing=full|compact|search`; an unknown mode is reported and the config's applies.
fn mode_of(query: Option<&str>, notices: &mut Vec<String>) -> Option<crate::config::ListingMode> {
    let value = query_param(query?, "listing")?;
    let value = value.as_str();
    let mode = crate::config::ListingMode::parse(value);
    if mode.is_none() {
        tracing::warn!("HTTP client asked for listing={value:?}; unknown, the config's applies");
        notices.push(format!(
            "this connection asked for listing={}, which is not a listing mode (full, compact, search); the configured listing applies",
            crate::terminal_text::line(&value.chars().take(80).collect::<String>())
        ));
    }
    mode
}

/// Gives a new MCP client what the request's URL asked for.
fn configure(client: &crate::upstream::ClientSession, asked: &Asked) {
    client.describe_transport(format!("HTTP from {}", asked.remote));
    if let Some(servers) = asked.listing.clone() {
        client.narrow_listing(servers);
    }
    if let Some(mode) = asked.mode {
        client.set_listing_mode(mode);
    }
    for notice in &asked.notices {
        client.add_notice(notice.clone());
    }
}

async fn post(
    state: &Arc<State>,
    session_id: Option<String>,
    asked: Asked,
    body: Bytes,
) -> Response<Body> {
    let msg: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                &Value::Null,
                crate::jsonrpc::code::PARSE_ERROR,
                &format!("the body is not JSON: {e}"),
                None,
            );
        }
    };
    if msg.is_array() {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            &Value::Null,
            crate::jsonrpc::code::INVALID_REQUEST,
            "batches are not supported; send one message per request",
            None,
        );
    }
    // What the session reads next is parsed strictly (`jsonrpc` a string, no member twice):
    // a message that fails there is refused here, where its id can still be answered, rather
    // than left for a response that could never find its request.
    match crate::jsonrpc::RawMessage::parse(&body) {
        Err(e) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                msg.get("id").unwrap_or(&Value::Null),
                crate::jsonrpc::code::INVALID_REQUEST,
                &format!("not a JSON-RPC message: {e}"),
                None,
            );
        }
        // The session would refuse it with no id to answer to, so no waiter could ever be
        // answered: it is refused here, before one is registered (as stdio refuses it).
        Ok(raw) if raw.has_unusable_id() => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                &Value::Null,
                crate::jsonrpc::code::INVALID_REQUEST,
                crate::jsonrpc::UNUSABLE_ID,
                None,
            );
        }
        Ok(_) => {}
    }
    let method = msg.get("method").and_then(Value::as_str);
    if let Some(id) = session_id {
        return legacy::post(state, &id, &asked, &msg, body).await;
    }
    // An `initialize` starts a legacy session, unless it comes as a 2026-07-28 request (which
    // has no such method).
    if method == Some("initialize") && !stateless::is_modern(&asked, &msg) {
        return legacy::start(state, &asked, &msg, body).await;
    }
    stateless::post(state, &asked, &msg, body).await
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
            "127.0.0.2",
            "[::1]:7331",
            "[::1]",
            "[::ffff:127.0.0.1]:7331",
        ] {
            assert!(is_loopback_name(h), "{h}");
        }
        for h in [
            "evil.example:7331",
            "127.0.0.1.evil.example",
            "10.0.0.1:7331",
            "",
            "[::1]evil.example",
            "[::1]:evil",
            "localhost:evil",
            "localhost:",
            "localhost:123456",
            "localhost:80:80",
            "[127.0.0.1]",
            "[::ffff:10.0.0.1]",
            "::1",
            "127.1",
            "0x7f000001",
            "LOCALHOST",
            "localhost.",
            "127.0.0.1@evil.example",
        ] {
            assert!(!is_loopback_name(h), "{h}");
        }
        for o in ["http://localhost:3000", "https://[::1]", "http://127.0.0.1"] {
            assert!(is_loopback_origin(o), "{o}");
        }
        for o in [
            "null",
            "file://",
            "http://[::1]evil.example",
            "http://127.0.0.1@evil.example",
            "http://evil.example/http://localhost",
            "ftp://localhost",
            "localhost",
        ] {
            assert!(!is_loopback_origin(o), "{o}");
        }
    }

    proptest::proptest! {
        #[test]
        fn authorities_never_panic_and_a_loopback_one_ends_in_its_port(s in "\\PC{0,40}") {
            let _ = is_loopback_origin(&s);
            if is_loopback_name(&s) {
                // Nothing but a host and digits: no user, path, or text after the brackets.
                proptest::prop_assert!(!s.contains(['@', '/', '?', '#', ' ']));
            }
        }
    }

    #[tokio::test]
    async fn a_quiet_stream_carries_a_heartbeat_and_events_pass_unchanged() {
        use http_body_util::BodyExt;
        let (tx, rx) = tokio::sync::mpsc::channel(8);
        let mut body = event_stream_beating(rx, Duration::from_millis(30)).into_body();
        async fn next(b: &mut Body) -> Option<Bytes> {
            b.frame()
                .await
                .map(|f| f.expect("frame").into_data().expect("data"))
        }
        let event = Bytes::from_static(b"id: 1\ndata: {}\n\n");
        tx.send(event.clone()).await.unwrap();
        assert_eq!(next(&mut body).await.unwrap(), event);
        // Quiet: heartbeats, each a comment that ends its own block.
        for _ in 0..2 {
            assert_eq!(next(&mut body).await.unwrap(), HEARTBEAT_EVENT);
        }
        tx.send(event.clone()).await.unwrap();
        assert_eq!(next(&mut body).await.unwrap(), event, "events come as sent");
        drop(tx);
        assert!(
            next(&mut body).await.is_none(),
            "the stream ends with its sender"
        );
    }

    #[test]
    fn tokens_compare_in_full() {
        assert!(same(b"token", b"token") && !same(b"token", b"tokem") && !same(b"t", b"tt"));
    }
}
