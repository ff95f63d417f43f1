//! The streamable-HTTP transport towards a downstream server: each outbound message is a POST
//! whose reply is JSON or an SSE stream; the session id and protocol-version headers follow the
//! negotiated era. Replies are fed to the connection as raw bytes, never re-encoded.
//!
//! `max_downstream_message_bytes` holds here as on stdio: a JSON body or an SSE event is read in
//! chunks and cut off the moment it passes the limit (never buffered whole first); the request
//! it answers fails with a message that names the limit, and loom goes on serving. Redirects
//! are followed only within the configured origin (scheme, host and port), so configured
//! headers, the bearer token, `Mcp-Session-Id` and request bodies never reach another origin.
//!
//! What a connection survives without a restart (legacy eras; 2026-07-28 has no sessions and
//! no resumable streams): a reply stream that drops before its answer is resumed with
//! `Last-Event-ID` after the server's `retry` delay (bounded); the GET stream is re-opened when
//! it drops (given up only on 405 or 404; errors and streams that end without an event are
//! retried with backoff); a session the server forgot (404) is initialized again and the
//! request, which never reached the server, is sent once more, unless its caller stopped
//! waiting meanwhile; a second 404 fails that request alone. On 2026-07-28 a call is cancelled
//! by closing its stream; on older eras a cancelled call's stream is closed after
//! `notifications/cancelled`. A reply stream is dropped shortly after its answer, and every
//! one when the connection closes. A 401 is never retried blindly: the
//! `bearer_token_command`, if any, is run again once, and then the connection ends as "needs
//! authentication" with the server's challenge, which the supervisor does not count as a
//! failure. The token never appears in a message, nor the URL's userinfo or query, nor the
//! token command's stderr (logged at debug level only).
//!
//! Here: the sink, its launch, and sending a message (`post`, `deliver`); `auth` holds the
//! bearer token and what a refusal says, `session` the legacy session (its GET stream, its
//! renewal, its end), `sse` reading replies (JSON bodies and event streams, within the limit).

mod auth;
mod error;
mod session;
mod sse;
#[cfg(test)]
mod tests;

use auth::*;
pub use auth::{TokenError, bearer_from_output, shown_url};
pub use error::{LaunchError, RenewError, ReplyError, TokenCommandError};
use sse::*;
pub use sse::{SseItem, SseParser, bounded_retry};

use super::connection::{Connection, InboundSink, Outbound, client_info};
use crate::jsonrpc::{Kind, RawMessage};
use crate::protocol::{self, ClientCapabilities, Era, V_2026_07_28};
use futures_util::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The reconnect delay when the server named none (SSE `retry`), and its bounds.
const RETRY_DEFAULT: Duration = Duration::from_secs(1);
const RETRY_MIN: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(30);
/// Resumptions of one reply stream in a row that brought no new event before giving up.
const FRUITLESS_RESUMES: u32 = 3;
/// Failed attempts in a row to re-open the GET stream before giving up on it.
const GET_STREAM_ATTEMPTS: u32 = 8;
/// How long a request's reply stream is still read after its answer arrived.
const ANSWERED_GRACE: Duration = Duration::from_secs(3);
/// How long a session's re-initialization may take.
const REINIT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the `DELETE` that ends a session may take at shutdown.
const DELETE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long `bearer_token_command` may run, and the most it may print.
const TOKEN_COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
const TOKEN_MAX_BYTES: usize = 16 * 1024;
/// The most of a `WWW-Authenticate` challenge kept for the person.
const CHALLENGE_MAX_CHARS: usize = 500;
/// The id of the `initialize` that renews an expired session (never one of the connection's).
const REINIT_ID: &str = "loom-reinitialize";

/// Where the `Authorization` header comes from.
struct Bearer {
    value: Option<HeaderValue>,
    /// Moves each time the token command ran, so concurrent 401s re-run it once.
    generation: u64,
}

pub struct HttpSink {
    client: reqwest::Client,
    url: String,
    /// The URL as messages name it: no userinfo, query or fragment, which may hold secrets.
    shown_url: String,
    headers: HeaderMap,
    bearer: Mutex<Bearer>,
    /// `bearer_token_command`: the program and its arguments.
    token_command: Option<Vec<String>>,
    /// Held while the token command runs.
    token_refresh: tokio::sync::Mutex<()>,
    /// Why the server refused loom's credentials, once it has.
    auth_failure: Mutex<Option<String>>,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
    /// Held for writing while an expired session is initialized again; a request is built
    /// under it for reading, so none leaves with a session that is being replaced.
    renewing: tokio::sync::RwLock<()>,
    /// The task reading each request's reply, by downstream id: aborting it closes the stream.
    streams: Mutex<HashMap<u64, tokio::task::AbortHandle>>,
    client_caps: ClientCapabilities,
    /// The largest JSON body or SSE event accepted (`max_downstream_message_bytes`).
    max_message: usize,
}

pub struct HttpLaunch<'a> {
    pub server: &'a str,
    pub url: &'a str,
    pub headers: &'a BTreeMap<String, String>,
    pub bearer_token_env: Option<&'a str>,
    pub bearer_token_command: Option<&'a [String]>,
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

pub fn connect(launch: HttpLaunch<'_>) -> Result<Arc<Connection>, LaunchError> {
    let mut headers = HeaderMap::new();
    for (k, v) in launch.headers {
        let name = HeaderName::from_bytes(k.as_bytes()).map_err(|e| LaunchError::HeaderName {
            name: k.clone(),
            reason: e.to_string(),
        })?;
        let value = HeaderValue::from_str(v).map_err(|e| LaunchError::HeaderValue {
            name: k.clone(),
            reason: e.to_string(),
        })?;
        headers.insert(name, value);
    }
    let mut bearer = None;
    if let Some(var) = launch.bearer_token_env {
        let token = std::env::var(var).map_err(|_| LaunchError::TokenEnvUnset(var.to_owned()))?;
        let value = bearer_value(token.trim()).map_err(|e| match e {
            TokenError::Empty => LaunchError::TokenEnvEmpty(var.to_owned()),
            _ => LaunchError::TokenEnvNotAHeader(var.to_owned()),
        })?;
        bearer = Some(value);
    }
    let client = reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .redirect(same_origin_redirects())
        .build()
        .map_err(|e| LaunchError::Client(e.to_string()))?;
    let sink = Arc::new(HttpSink {
        client,
        url: launch.url.to_owned(),
        shown_url: shown_url(launch.url),
        headers,
        bearer: Mutex::new(Bearer {
            value: bearer,
            generation: 0,
        }),
        token_command: launch.bearer_token_command.map(<[String]>::to_vec),
        token_refresh: tokio::sync::Mutex::new(()),
        auth_failure: Mutex::new(None),
        session: Mutex::new(None),
        version: Mutex::new(None),
        renewing: tokio::sync::RwLock::new(()),
        streams: Mutex::new(HashMap::new()),
        client_caps: launch.client_caps.clone(),
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

/// What a request was sent with, to tell what changed when it failed.
struct Sent {
    session: Option<String>,
    token_generation: u64,
}

/// A header value as 2026-07-28 sends it: as is when it is plain visible ASCII (spaces
/// inside allowed), else `=?base64?<base64 of the UTF-8>?=`. A value that itself looks like
/// the encoded form is encoded too, so the server never decodes what was meant literally.
pub fn header_text(value: &str) -> String {
    use base64::Engine;
    let plain = !value.starts_with("=?base64?")
        && value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && value.trim() == value;
    if plain {
        value.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value)
        )
    }
}

/// The `name` or `uri` a 2026-07-28 request names in `Mcp-Name`.
fn name_of(body: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Request {
        params: Option<Params>,
    }
    #[derive(serde::Deserialize)]
    struct Params {
        name: Option<String>,
        uri: Option<String>,
    }
    let params = serde_json::from_str::<Request>(body).ok()?.params?;
    params.name.or(params.uri)
}

/// Whether the caller stopped waiting for request `id` (cancelled, timed out, or the connection
/// closed) while it was held back for a new token or session: then it is not sent again.
fn gave_up(conn: &Connection, id: Option<u64>) -> bool {
    id.is_some_and(|id| !conn.is_waiting(id))
}

/// Whether `data` is the response to request `id` (a server's own request may carry the same
/// number, and an `"id"` may sit inside a result before the message's own).
fn answers(data: &[u8], id: u64) -> bool {
    RawMessage::parse(data)
        .is_ok_and(|m| matches!(m.kind(), Kind::Response) && m.numeric_id() == Some(id))
}

impl HttpSink {
    pub fn set_version(&self, version: &str) {
        *lock(&self.version) = Some(version.to_owned());
    }

    /// Closes the reply stream of request `id` (how 2026-07-28 cancels over HTTP).
    pub fn close_stream(&self, id: u64) {
        if let Some(task) = lock(&self.streams).remove(&id) {
            task.abort();
        }
    }

    /// Closes every reply stream (the connection closed).
    pub fn close_streams(&self) {
        let tasks: Vec<_> = lock(&self.streams).drain().map(|(_, t)| t).collect();
        for task in tasks {
            task.abort();
        }
    }

    /// A POST of a JSON-RPC message, with the configured headers, taking JSON or SSE back.
    fn json_post(&self) -> reqwest::RequestBuilder {
        self.client
            .post(&self.url)
            .headers(self.headers.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            )
    }

    fn request(
        &self,
        conn: &Connection,
        method: Option<&str>,
        body: &str,
    ) -> (reqwest::RequestBuilder, Sent) {
        let mut req = self.json_post();
        let session = lock(&self.session).clone();
        if let Some(s) = &session {
            req = req.header("Mcp-Session-Id", s);
        }
        if conn.era() == Era::Modern {
            req = req.header("MCP-Protocol-Version", V_2026_07_28);
            if let Some(m) = method {
                req = req.header("Mcp-Method", m);
                if matches!(m, "tools/call" | "resources/read" | "prompts/get")
                    && let Some(name) = name_of(body)
                    && let Ok(h) = HeaderValue::from_str(&header_text(&name))
                {
                    req = req.header("Mcp-Name", h);
                }
            }
        } else if let Some(v) = lock(&self.version).clone() {
            req = req.header("MCP-Protocol-Version", v);
        }
        let token_generation = lock(&self.bearer).generation;
        let req = self.with_auth(req).body(body.to_owned());
        (
            req,
            Sent {
                session,
                token_generation,
            },
        )
    }

    pub fn post(
        self: &Arc<Self>,
        conn: Arc<Connection>,
        body: String,
        request: Option<(u64, &str)>,
    ) {
        let id = request.map(|r| r.0);
        let method = request.map(|r| r.1.to_owned());
        let me = self.clone();
        // Held across the spawn, so the task's own removal always comes after the insert.
        let mut streams = lock(&self.streams);
        let task = tokio::spawn(async move {
            me.deliver(&conn, &body, id, method.as_deref()).await;
            if let Some(id) = id {
                lock(&me.streams).remove(&id);
            }
        });
        if let Some(id) = id {
            streams.insert(id, task.abort_handle());
        }
    }

    /// Ends the connection as "needs authentication".
    fn refuse(&self, conn: &Connection, why: &str) {
        tracing::warn!(server = %conn.server, "{why}");
        *lock(&self.auth_failure) = Some(why.to_owned());
        conn.close(why);
    }

    async fn deliver(
        self: &Arc<Self>,
        conn: &Arc<Connection>,
        body: &str,
        id: Option<u64>,
        method: Option<&str>,
    ) {
        let mut renewed = false;
        let mut token_rerun = false;
        let resp = loop {
            if let Err(why) = self.ensure_token().await {
                self.refuse(conn, &format!("needs authentication: {why}"));
                return;
            }
            let (req, sent) = {
                // The renewal's own `initialize` is sent apart, never through here.
                let _gate = self.renewing.read().await;
                self.request(conn, method, body)
            };
            let resp = match req.send().await {
                Ok(r) => r,
                Err(e) => {
                    let connect = e.is_connect();
                    let why = format!("cannot reach {}: {}", self.shown_url, e.without_url());
                    if connect {
                        conn.close(&why);
                    } else if let Some(id) = id {
                        conn.fail(id, &why);
                    }
                    return;
                }
            };
            // A session is named in the answer to `initialize` (sent without one); a late
            // answer on a session since renewed must not bring the old name back.
            if sent.session.is_none()
                && let Some(s) = resp
                    .headers()
                    .get("mcp-session-id")
                    .and_then(|v| v.to_str().ok())
            {
                *lock(&self.session) = Some(s.to_owned());
            }
            let status = resp.status();
            if status == reqwest::StatusCode::UNAUTHORIZED {
                let challenge = challenge_of(resp.headers());
                if self.token_command.is_some() && !token_rerun {
                    // The token may have expired: the command makes a new one, once.
                    token_rerun = true;
                    if let Err(why) = self.refresh_token(sent.token_generation).await {
                        self.refuse(conn, &format!("needs authentication: {why}"));
                        return;
                    }
                    if gave_up(conn, id) {
                        return;
                    }
                    continue;
                }
                let why = needs_auth_text(
                    &self.shown_url,
                    challenge.as_deref(),
                    self.token_command.is_some(),
                );
                self.refuse(conn, &why);
                return;
            }
            if status == reqwest::StatusCode::NOT_FOUND
                && conn.era() == Era::Legacy
                && !renewed
                && let Some(old) = sent.session.as_deref()
            {
                // The server forgot the session, so it never saw this request: a new session,
                // and the request once more. A second 404 for the same request is that
                // request's own failure (an unknown path or method, say), not the session's:
                // it falls through to the answer below and the connection stays.
                renewed = true;
                if let Err(why) = self.renew_session(conn, old).await {
                    conn.close(&format!(
                        "the HTTP session expired (404) and initializing a new one failed: {why}"
                    ));
                    return;
                }
                if gave_up(conn, id) {
                    return;
                }
                continue;
            }
            break resp;
        };
        let status = resp.status();
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
            let text = match read_body(resp, self.max_message).await {
                Ok(b) => b,
                Err(BodyError::TooLarge { .. }) => {
                    if let Some(id) = id {
                        conn.fail(
                            id,
                            &format!(
                                "HTTP {status}, with a body over the {}-byte limit (max_downstream_message_bytes)",
                                self.max_message
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
        if is_event_stream(&resp) {
            let mut pos = StreamPosition::default();
            let mut end = read_sse(resp, conn, self.max_message, id, &mut pos).await;
            let mut fruitless = 0;
            while end == SseEnd::Dropped
                && let Some(id) = id
                && fruitless < FRUITLESS_RESUMES
                && conn.era() == Era::Legacy
                && let Some(last) = pos.last_id.clone()
            {
                tokio::select! {
                    _ = tokio::time::sleep(pos.delay()) => {}
                    _ = conn.wait_closed() => return,
                }
                let Some(resp) = self.resume(&last).await else {
                    break;
                };
                end = read_sse(resp, conn, self.max_message, Some(id), &mut pos).await;
                if pos.last_id.as_ref() == Some(&last) {
                    fruitless += 1;
                } else {
                    fruitless = 0;
                }
            }
        } else if id.is_some() {
            match read_body(resp, self.max_message).await {
                Ok(b) if !b.is_empty() => conn.handle_incoming(&b),
                Ok(_) => {}
                Err(BodyError::TooLarge { prefix }) => {
                    conn.handle_cut_off(&prefix, self.max_message, id)
                }
                Err(BodyError::Read(e)) => {
                    if let Some(id) = id {
                        conn.fail(
                            id,
                            &format!("reading the HTTP reply failed: {}", e.without_url()),
                        );
                    }
                }
            }
        }
        if let Some(id) = id {
            conn.fail(id, "the HTTP reply ended without an answer");
        }
    }
}
