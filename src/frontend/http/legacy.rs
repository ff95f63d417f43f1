//! Legacy HTTP sessions (2025-11-25 and older): `initialize` starts one and names it with
//! `Mcp-Session-Id`; its requests, its GET stream and its DELETE carry that name.

use super::outbox::{Outbox, Resumed};
use super::{Asked, Body, SESSION_HEADER, State, event_stream, full, lock, refuse, rpc_error};
use crate::protocol;
use crate::types::events::Caller;
use crate::upstream::ClientSession;
use bytes::Bytes;
use hyper::header::HeaderValue;
use hyper::{Response, StatusCode};
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// One HTTP client's session: its MCP client and where what it writes goes.
pub(super) struct HttpSession {
    client: Arc<ClientSession>,
    outbox: Mutex<Outbox>,
    last_seen: Mutex<Instant>,
}

impl HttpSession {
    fn touch(&self) {
        *lock(&self.last_seen) = Instant::now();
    }

    fn close(&self) {
        self.client.close();
        lock(&self.outbox).close();
    }
}

/// The key a request id is matched under: its JSON text.
/// A session being set up; its slot is given back when this drops.
struct Starting<'a>(&'a std::sync::atomic::AtomicUsize);

impl Drop for Starting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn id_key(msg: &Value) -> Option<String> {
    msg.get("id").map(Value::to_string)
}

/// `initialize` without a session: a new session, answered with its name.
pub(super) async fn start(
    state: &Arc<State>,
    asked: &Asked,
    msg: &Value,
    body: Bytes,
) -> Response<Body> {
    // A slot is taken before the session exists (checked and counted under one lock) and
    // given back once it is in the map or has failed.
    let _slot = {
        let sessions = lock(&state.sessions);
        let starting = state.starting.fetch_add(1, Ordering::SeqCst);
        let slot = Starting(&state.starting);
        if sessions.len() + starting >= state.opts.max_sessions {
            return refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many sessions; end one (DELETE) or try later",
            );
        }
        slot
    };
    let Some(key) = id_key(msg) else {
        return refuse(StatusCode::BAD_REQUEST, "initialize must be a request");
    };
    let requested = msg
        .pointer("/params/protocolVersion")
        .and_then(Value::as_str);
    let version = protocol::negotiate_initialize(requested);
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let client = ClientSession::new(state.session.clone(), tx, Caller::Model);
    super::configure(&client, asked);
    let session = Arc::new(HttpSession {
        client,
        outbox: Mutex::new(Outbox::new(version == protocol::V_2025_11_25)),
        last_seen: Mutex::new(Instant::now()),
    });
    let weak = Arc::downgrade(&session);
    tokio::spawn(async move {
        while let Some(line) = rx.recv().await {
            match weak.upgrade() {
                Some(s) => lock(&s.outbox).route(line),
                None => break,
            }
        }
    });
    let reply = lock(&session.outbox).wait_json(key);
    session.client.handle_line(&body).await;
    let Ok(line) = reply.await else {
        return ended(msg);
    };
    // A session id nobody can guess, or no session: never a predictable one.
    let name = match new_session_id() {
        Ok(n) if !lock(&state.sessions).contains_key(&n) => n,
        other => {
            session.close();
            let why = other
                .err()
                .map_or_else(|| "a clash".to_owned(), |e| e.to_string());
            tracing::error!("no HTTP session id could be drawn: {why}");
            return rpc_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                msg.get("id").unwrap_or(&Value::Null),
                crate::jsonrpc::code::INTERNAL_ERROR,
                "loom could not draw a random session id; try again",
                None,
            );
        }
    };
    let mut r = full(StatusCode::OK, "application/json", line);
    if let Ok(v) = HeaderValue::from_str(&name) {
        r.headers_mut().insert(SESSION_HEADER, v);
    }
    lock(&state.sessions).insert(name, session);
    r
}

fn ended(msg: &Value) -> Response<Body> {
    rpc_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        msg.get("id").unwrap_or(&Value::Null),
        crate::jsonrpc::code::INTERNAL_ERROR,
        "the session ended before it answered",
        None,
    )
}

fn session_of(state: &State, name: Option<&str>) -> Result<Arc<HttpSession>, Box<Response<Body>>> {
    let Some(name) = name else {
        return Err(Box::new(refuse(
            StatusCode::BAD_REQUEST,
            "Mcp-Session-Id is required after initialize",
        )));
    };
    let session = lock(&state.sessions).get(name).cloned().ok_or_else(|| {
        Box::new(refuse(
            StatusCode::NOT_FOUND,
            "no such session (ended or expired); initialize again",
        ))
    })?;
    session.touch();
    Ok(session)
}

/// The stream bound of a session: a new stream beyond it is 429.
fn too_many_streams(state: &State, session: &HttpSession) -> Option<Response<Body>> {
    (lock(&session.outbox).live_streams() >= state.opts.max_streams).then(|| {
        refuse(
            StatusCode::TOO_MANY_REQUESTS,
            &format!(
                "this session has {} streams open already; close one first",
                state.opts.max_streams
            ),
        )
    })
}

/// A message of a session's client: a request is answered as JSON, or as an event stream when
/// it is a call (its progress, logs and the servers' requests then travel with it); anything
/// else is accepted (202).
pub(super) async fn post(
    state: &Arc<State>,
    name: &str,
    asked: &Asked,
    msg: &Value,
    body: Bytes,
) -> Response<Body> {
    let session = match session_of(state, Some(name)) {
        Ok(s) => s,
        Err(r) => return *r,
    };
    if let Some(v) = asked.header("mcp-protocol-version")
        && !protocol::is_supported(v)
    {
        return refuse(
            StatusCode::BAD_REQUEST,
            &format!(
                "unsupported MCP-Protocol-Version {v:?}; supported: {}",
                protocol::SUPPORTED_VERSIONS.join(", ")
            ),
        );
    }
    let method = msg.get("method").and_then(Value::as_str);
    let (Some(key), Some(method)) = (id_key(msg), method) else {
        session.client.handle_line(&body).await;
        return full(StatusCode::ACCEPTED, "text/plain", "");
    };
    // An id still in flight is refused here: registering it again would take the first
    // request's response away from it.
    if lock(&session.outbox).is_waiting(&key) {
        return rpc_error(
            StatusCode::OK,
            msg.get("id").unwrap_or(&Value::Null),
            crate::jsonrpc::code::INVALID_REQUEST,
            &format!("request id {key} is already in use by a request in flight"),
            None,
        );
    }
    let progress = msg
        .pointer("/params/_meta/progressToken")
        .map(Value::to_string);
    if asked.takes_stream && (method == "tools/call" || progress.is_some()) {
        if let Some(r) = too_many_streams(state, &session) {
            return r;
        }
        let events = lock(&session.outbox).open_post_stream(key, progress);
        session.client.handle_line(&body).await;
        return event_stream(events);
    }
    let reply = lock(&session.outbox).wait_json(key);
    session.client.handle_line(&body).await;
    match reply.await {
        Ok(line) => full(StatusCode::OK, "application/json", line),
        Err(_) => ended(msg),
    }
}

/// `GET`: the session's stream of server messages; with `Last-Event-ID`, the rest of the stream
/// that event was on. A newer GET stream replaces an older one.
pub(super) fn open_stream(state: &Arc<State>, name: Option<&str>, asked: &Asked) -> Response<Body> {
    let session = match session_of(state, name) {
        Ok(s) => s,
        Err(r) => return *r,
    };
    if let Some(r) = too_many_streams(state, &session) {
        return r;
    }
    let mut outbox = lock(&session.outbox);
    if let Some(last) = asked
        .header("last-event-id")
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        let (tx, rx) = mpsc::channel(super::STREAM_QUEUE);
        if let Resumed::Stream { replay, open } = outbox.resume(last, tx.clone()) {
            for event in replay {
                let _ = tx.try_send(event);
            }
            drop(tx);
            if !open {
                tracing::debug!("resumed a stream that had ended; replayed what was left");
            }
            return event_stream(rx);
        }
    }
    event_stream(outbox.open_get_stream())
}

/// `DELETE`: ends the session; its calls are cancelled.
pub(super) fn end(state: &Arc<State>, name: Option<&str>) -> Response<Body> {
    match name.and_then(|n| lock(&state.sessions).remove(n)) {
        Some(s) => {
            s.close();
            refuse(StatusCode::OK, "session ended")
        }
        None => refuse(StatusCode::NOT_FOUND, "no such session"),
    }
}

/// Ends sessions no request has touched for `idle_timeout` and that wait for nothing.
pub(super) async fn expire_idle(state: Weak<State>) {
    loop {
        let period = match state.upgrade() {
            Some(s) => (s.opts.idle_timeout / 4).clamp(
                std::time::Duration::from_millis(50),
                std::time::Duration::from_secs(30),
            ),
            None => return,
        };
        tokio::time::sleep(period).await;
        let Some(state) = state.upgrade() else { return };
        let idle = state.opts.idle_timeout;
        let expired: Vec<Arc<HttpSession>> = {
            let mut sessions = lock(&state.sessions);
            let names: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| lock(&s.last_seen).elapsed() >= idle && !lock(&s.outbox).busy())
                .map(|(n, _)| n.clone())
                .collect();
            names.iter().filter_map(|n| sessions.remove(n)).collect()
        };
        for s in expired {
            tracing::info!("an HTTP session was idle for {idle:?}; ended");
            s.close();
        }
    }
}

/// 128 random bits from the kernel, as hex; an error when the kernel gives none.
fn new_session_id() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut bytes)?;
    Ok(crate::protocol::seal::hex(&bytes))
}
