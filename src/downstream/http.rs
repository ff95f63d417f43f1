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

pub fn connect(launch: HttpLaunch<'_>) -> Result<Arc<Connection>, String> {
    let mut headers = HeaderMap::new();
    for (k, v) in launch.headers {
        let name =
            HeaderName::from_bytes(k.as_bytes()).map_err(|e| format!("header name {k:?}: {e}"))?;
        let value = HeaderValue::from_str(v).map_err(|e| format!("header {k}: {e}"))?;
        headers.insert(name, value);
    }
    let mut bearer = None;
    if let Some(var) = launch.bearer_token_env {
        let token = std::env::var(var)
            .map_err(|_| format!("environment variable {var} (bearer_token_env) is not set"))?;
        let value = bearer_value(token.trim()).map_err(|e| match e {
            TokenError::Empty => format!("environment variable {var} (bearer_token_env) is empty"),
            _ => format!(
                "environment variable {var} (bearer_token_env) holds characters a bearer token cannot hold (visible ASCII is expected)"
            ),
        })?;
        bearer = Some(value);
    }
    let client = reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .redirect(same_origin_redirects())
        .build()
        .map_err(|e| format!("cannot build HTTP client: {e}"))?;
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

/// How a reply stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SseEnd {
    /// The request's answer arrived (or the stream belongs to no request).
    Answered,
    /// It ended, or broke, before the answer.
    Dropped,
    /// An event passed the size limit; the request was failed.
    CutOff,
}

/// Where a stream was when it dropped: the last event id and the server's reconnect delay.
#[derive(Debug, Default)]
struct StreamPosition {
    last_id: Option<HeaderValue>,
    retry: Option<Duration>,
    /// Data events read so far, over every stream this position followed.
    events: u64,
}

impl StreamPosition {
    fn delay(&self) -> Duration {
        self.retry.unwrap_or(RETRY_DEFAULT)
    }
}

/// The server's `retry` field (milliseconds), within loom's bounds.
pub fn bounded_retry(millis: u64) -> Duration {
    Duration::from_millis(millis).clamp(RETRY_MIN, RETRY_MAX)
}

/// An SSE `id` as a `Last-Event-ID` value: none when empty (the server reset it) or when it
/// could not travel in a header.
fn event_id_header(id: &[u8]) -> Option<HeaderValue> {
    if id.is_empty() || id.len() > 1024 {
        return None;
    }
    HeaderValue::from_bytes(id).ok()
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

/// The `WWW-Authenticate` challenges of a 401, joined and cut for a person to read.
fn challenge_of(headers: &HeaderMap) -> Option<String> {
    let all: Vec<String> = headers
        .get_all(reqwest::header::WWW_AUTHENTICATE)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect();
    let joined = all.join(", ");
    let joined = joined.trim();
    (!joined.is_empty()).then(|| joined.chars().take(CHALLENGE_MAX_CHARS).collect())
}

/// `url` as a message may name it: without the userinfo, query and fragment, where secrets
/// (passwords, API keys) travel; text that is no URL is not shown at all.
pub fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            // Only a URL that cannot have them refuses these, and then it has none to hide.
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => "the configured URL".to_owned(),
    }
}

/// What the server's refusal means, in words a person can act on.
fn needs_auth_text(url: &str, challenge: Option<&str>, command: bool) -> String {
    let tried = if command {
        " even after bearer_token_command ran again"
    } else {
        ""
    };
    match challenge {
        Some(c) => format!(
            "needs authentication: {url} answered 401 Unauthorized{tried}; WWW-Authenticate: {c}"
        ),
        None => format!(
            "needs authentication: {url} answered 401 Unauthorized{tried} (no WWW-Authenticate challenge)"
        ),
    }
}

/// Why the token command's output is no token.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("printed nothing")]
    Empty,
    #[error("printed more than 16 KiB")]
    TooLong,
    #[error("printed text that is not UTF-8")]
    NotText,
    #[error(
        "printed characters a bearer token cannot hold (one token of visible ASCII on one line is expected)"
    )]
    NotAHeader,
}

/// The `Authorization` value for a token: `Bearer` and the token, which must be visible ASCII
/// (RFC 6750's token characters are a subset; a header would carry other bytes as opaque
/// octets that no server reads as the same token).
fn bearer_value(token: &str) -> Result<HeaderValue, TokenError> {
    if token.is_empty() {
        return Err(TokenError::Empty);
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(TokenError::NotAHeader);
    }
    let mut value =
        HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| TokenError::NotAHeader)?;
    value.set_sensitive(true);
    Ok(value)
}

/// The `Authorization` value made of the token command's output: its stdout, trimmed.
pub fn bearer_from_output(stdout: &[u8]) -> Result<HeaderValue, TokenError> {
    if stdout.len() > TOKEN_MAX_BYTES {
        return Err(TokenError::TooLong);
    }
    let text = std::str::from_utf8(stdout).map_err(|_| TokenError::NotText)?;
    bearer_value(text.trim())
}

/// Runs `bearer_token_command` (no shell, stdin closed, loom's environment, bounded in time
/// and output) and makes its token the `Authorization` value.
async fn run_token_command(argv: &[String]) -> Result<HeaderValue, String> {
    use tokio::io::AsyncReadExt;
    let Some((program, args)) = argv.split_first() else {
        return Err("bearer_token_command is empty".into());
    };
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("bearer_token_command: cannot run {program:?}: {e}"))?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err("bearer_token_command: no pipes to read".into());
    };
    let work = async {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let mut stdout = stdout.take(TOKEN_MAX_BYTES as u64 + 1);
        let mut stderr = stderr.take(4096);
        let (o, _) = tokio::join!(stdout.read_to_end(&mut out), stderr.read_to_end(&mut err));
        o.map_err(|e| format!("reading its output failed: {e}"))?;
        if out.len() > TOKEN_MAX_BYTES {
            return Err(TokenError::TooLong.to_string());
        }
        let status = child
            .wait()
            .await
            .map_err(|e| format!("waiting for it failed: {e}"))?;
        Ok::<_, String>((status, out, err))
    };
    let (status, out, err) = tokio::time::timeout(TOKEN_COMMAND_TIMEOUT, work)
        .await
        .map_err(|_| {
            format!(
                "bearer_token_command did not finish within {}s",
                TOKEN_COMMAND_TIMEOUT.as_secs()
            )
        })?
        .map_err(|e| format!("bearer_token_command: {e}"))?;
    if !status.success() {
        // Its stderr may hold secrets or personal details: a debug log only, never the
        // reason the model and the workbench are shown.
        if let Some(first) = String::from_utf8_lossy(&err)
            .lines()
            .find(|l| !l.trim().is_empty())
        {
            let first: String = first.trim().chars().take(200).collect();
            tracing::debug!("bearer_token_command failed ({status}); its stderr: {first}");
        }
        return Err(format!("bearer_token_command failed ({status})"));
    }
    bearer_from_output(&out).map_err(|e| format!("bearer_token_command {e}"))
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

    /// Whether the server refused loom's credentials.
    pub fn needs_authentication(&self) -> bool {
        lock(&self.auth_failure).is_some()
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

    fn with_auth(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match lock(&self.bearer).value.clone() {
            Some(v) => req.header(reqwest::header::AUTHORIZATION, v),
            None => req,
        }
    }

    fn request(
        &self,
        conn: &Connection,
        method: Option<&str>,
        body: &str,
    ) -> (reqwest::RequestBuilder, Sent) {
        let mut req = self
            .client
            .post(&self.url)
            .headers(self.headers.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            );
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

    /// Runs the token command when there is one and no token yet.
    async fn ensure_token(&self) -> Result<(), String> {
        if self.token_command.is_none() {
            return Ok(());
        }
        let (missing, generation) = {
            let b = lock(&self.bearer);
            (b.value.is_none(), b.generation)
        };
        if missing {
            self.refresh_token(generation).await?;
        }
        Ok(())
    }

    /// Runs the token command again, unless another request did since `seen` was current.
    async fn refresh_token(&self, seen: u64) -> Result<(), String> {
        let Some(argv) = &self.token_command else {
            return Ok(());
        };
        let _running = self.token_refresh.lock().await;
        if lock(&self.bearer).generation != seen {
            return Ok(());
        }
        let value = run_token_command(argv).await;
        let mut b = lock(&self.bearer);
        b.generation += 1;
        b.value = Some(value?);
        Ok(())
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

    /// A GET on the session, for its own stream or to resume one from `last`.
    fn get(&self, session: &str, last: Option<&HeaderValue>) -> reqwest::RequestBuilder {
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
    async fn resume(&self, last: &HeaderValue) -> Option<reqwest::Response> {
        let session = lock(&self.session).clone()?;
        let resp = self.get(&session, Some(last)).send().await.ok()?;
        (resp.status().is_success() && is_event_stream(&resp)).then_some(resp)
    }

    /// Initializes a new session in place of `old`, which the server forgot; a request that
    /// got its 404 after another renewed it just goes again.
    async fn renew_session(
        self: &Arc<Self>,
        conn: &Arc<Connection>,
        old: &str,
    ) -> Result<(), String> {
        {
            let _gate = self.renewing.write().await;
            if lock(&self.session).as_deref() != Some(old) {
                return Ok(());
            }
            tracing::info!(server = %conn.server, "the HTTP session expired (404); initializing a new one");
            *lock(&self.session) = None;
            tokio::time::timeout(REINIT_TIMEOUT, self.reinitialize())
                .await
                .map_err(|_| format!("no answer within {}s", REINIT_TIMEOUT.as_secs()))??;
            self.listen(conn.clone());
        }
        // Told once the gate is open again: what the new session is told goes through it.
        conn.renewed();
        Ok(())
    }

    /// The legacy handshake again, at the version agreed first: `initialize`, then
    /// `notifications/initialized`, sent here rather than through the connection.
    async fn reinitialize(&self) -> Result<(), String> {
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
                req = req
                    .header("Mcp-Session-Id", s)
                    .header("MCP-Protocol-Version", asked.clone());
            }
            self.with_auth(req).body(body)
        };
        let resp = post(body.to_string())
            .send()
            .await
            .map_err(|e| format!("cannot reach {}: {}", self.shown_url, e.without_url()))?;
        if !resp.status().is_success() {
            return Err(format!("initialize was answered HTTP {}", resp.status()));
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
            return Err(format!(
                "the server now speaks \"{version}\", not \"{asked}\" as before"
            ));
        }
        *lock(&self.session) = session;
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let resp = post(initialized.to_owned())
            .send()
            .await
            .map_err(|e| format!("cannot reach {}: {}", self.shown_url, e.without_url()))?;
        if !resp.status().is_success() {
            return Err(format!(
                "notifications/initialized was answered HTTP {}",
                resp.status()
            ));
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

fn is_event_stream(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/event-stream"))
}

/// The JSON-RPC response with `id` in a reply that is JSON or an event stream; what else the
/// stream carries is dropped (only loom's own renewal reads replies this way).
async fn reply_to(
    resp: reqwest::Response,
    id: &str,
    limit: usize,
) -> Result<serde_json::Value, String> {
    let is_reply = |bytes: &[u8]| {
        serde_json::from_slice::<serde_json::Value>(bytes)
            .ok()
            .filter(|v| v["id"] == id)
    };
    let found = if is_event_stream(&resp) {
        let mut parser = SseParser::new(limit);
        let mut stream = resp.bytes_stream();
        let mut found = None;
        'read: while let Some(Ok(chunk)) = stream.next().await {
            for item in parser.feed(&chunk) {
                if let SseItem::Event(data) = item
                    && let Some(v) = is_reply(&data)
                {
                    found = Some(v);
                    break 'read;
                }
            }
        }
        found
    } else {
        match read_body(resp, limit).await {
            Ok(b) => is_reply(&b),
            Err(_) => None,
        }
    };
    let reply = found.ok_or_else(|| format!("no answer to {id}"))?;
    if reply.get("error").is_some() {
        let text: String = reply["error"].to_string().chars().take(300).collect();
        return Err(format!("the server refused: {text}"));
    }
    Ok(reply)
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

/// Feeds each SSE event to the connection, and keeps `pos` (last event id, `retry`) for a
/// resumption. An event over `limit` is cut off while it streams; on a request's own stream
/// (`request` is its id) that ends the stream and fails the request, on the standalone GET
/// stream the event is skipped and reading goes on. After a request's answer the stream is
/// read for `ANSWERED_GRACE` more (the server should end it; what it sends meanwhile is still
/// handled), then dropped: a server that holds it open never holds a task and a socket.
async fn read_sse(
    resp: reqwest::Response,
    conn: &Arc<Connection>,
    limit: usize,
    request: Option<u64>,
    pos: &mut StreamPosition,
) -> SseEnd {
    let mut parser = SseParser::new(limit);
    let mut stream = resp.bytes_stream();
    let mut answered = request.is_none();
    let mut deadline: Option<tokio::time::Instant> = None;
    loop {
        let next = match deadline {
            Some(at) => match tokio::time::timeout_at(at, stream.next()).await {
                Ok(next) => next,
                Err(_) => break,
            },
            None => stream.next().await,
        };
        let Some(Ok(chunk)) = next else { break };
        for item in parser.feed(&chunk) {
            match item {
                SseItem::Event(data) => {
                    pos.events += 1;
                    if let Some(id) = request
                        && !answered
                    {
                        answered = answers(&data, id);
                        if answered {
                            deadline = Some(tokio::time::Instant::now() + ANSWERED_GRACE);
                        }
                    }
                    conn.handle_incoming(&data);
                }
                SseItem::LastId(id) => pos.last_id = event_id_header(&id),
                SseItem::Retry(ms) => pos.retry = Some(bounded_retry(ms)),
                SseItem::TooLarge { prefix } => {
                    conn.handle_cut_off(&prefix, limit, request);
                    if request.is_some() {
                        return SseEnd::CutOff;
                    }
                }
            }
        }
    }
    if answered {
        SseEnd::Answered
    } else {
        SseEnd::Dropped
    }
}

/// What the SSE parser yields.
#[derive(Debug, PartialEq)]
pub enum SseItem {
    /// One event's joined `data` lines.
    Event(Vec<u8>),
    /// The event just ended set the last event id (empty: the server reset it).
    LastId(Vec<u8>),
    /// The server's reconnect delay, in milliseconds (`retry`).
    Retry(u64),
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
    /// The `id` of the event being read.
    id: Option<Vec<u8>>,
    /// The last line ended with a CR: an LF right after it ends no other line.
    after_cr: bool,
    /// At the stream's start: how much of a UTF-8 BOM was read (held back, as it is dropped).
    bom: Option<usize>,
}

/// The byte order mark a stream may start with, which is not part of its first line.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The value of an SSE field line `name: value` (one leading space dropped), or of a bare
/// `name` line (empty).
fn field<'l>(line: &'l [u8], name: &[u8]) -> Option<&'l [u8]> {
    let rest = line.strip_prefix(name)?;
    if rest.is_empty() {
        return Some(rest);
    }
    let value = rest.strip_prefix(b":")?;
    Some(value.strip_prefix(b" ").unwrap_or(value))
}

impl SseParser {
    pub fn new(limit: usize) -> SseParser {
        SseParser {
            line: Vec::new(),
            data: Vec::new(),
            limit,
            skipping: false,
            id: None,
            after_cr: false,
            bom: Some(0),
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
        self.id = None;
        prefix
    }

    /// A complete field line of the event being read.
    fn field_line(&mut self, items: &mut Vec<SseItem>) {
        if let Some(rest) = field(&self.line, b"data") {
            if !self.data.is_empty() {
                self.data.push(b'\n');
            }
            self.data.extend_from_slice(rest);
        } else if let Some(id) = field(&self.line, b"id") {
            // An id holding NUL is ignored, as the SSE standard says.
            if !id.contains(&0) {
                self.id = Some(id.to_vec());
            }
        } else if let Some(ms) = field(&self.line, b"retry")
            && !ms.is_empty()
            && ms.iter().all(u8::is_ascii_digit)
        {
            // All digits: only an overflow fails to parse, and that is "as long as it gets".
            let ms = std::str::from_utf8(ms)
                .ok()
                .and_then(|t| t.parse::<u64>().ok())
                .unwrap_or(u64::MAX);
            items.push(SseItem::Retry(ms));
        }
    }

    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseItem> {
        let mut items = Vec::new();
        for &b in chunk {
            if let Some(n) = self.bom {
                if BOM.get(n) == Some(&b) {
                    self.bom = (n + 1 < BOM.len()).then_some(n + 1);
                    continue;
                }
                // No BOM after all: what was held back is the stream's own.
                self.bom = None;
                for &held in BOM.get(..n).unwrap_or_default() {
                    self.byte(held, &mut items);
                }
            }
            self.byte(b, &mut items);
        }
        items
    }

    /// One byte of the stream: a line ends with CRLF, LF or a lone CR.
    fn byte(&mut self, b: u8, items: &mut Vec<SseItem>) {
        let after_cr = std::mem::replace(&mut self.after_cr, false);
        if b == b'\n' && after_cr {
            return;
        }
        if b == b'\r' || b == b'\n' {
            self.after_cr = b == b'\r';
            self.end_line(items);
            return;
        }
        if self.skipping {
            // A line with content keeps the cut-off event going; an empty one ends it.
            self.line.clear();
            self.line.push(b'x');
            return;
        }
        self.line.push(b);
        if self.held() > self.limit {
            items.push(SseItem::TooLarge {
                prefix: self.cut_off(),
            });
        }
    }

    fn end_line(&mut self, items: &mut Vec<SseItem>) {
        if self.line.is_empty() {
            if self.skipping {
                self.skipping = false;
            } else {
                if !self.data.is_empty() {
                    items.push(SseItem::Event(std::mem::take(&mut self.data)));
                }
                if let Some(id) = self.id.take() {
                    items.push(SseItem::LastId(id));
                }
            }
        } else if !self.skipping {
            self.field_line(items);
        }
        self.line.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(items: Vec<SseItem>) -> Vec<Vec<u8>> {
        items
            .into_iter()
            .filter_map(|i| match i {
                SseItem::Event(d) => Some(d),
                SseItem::LastId(_) | SseItem::Retry(_) => None,
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
    fn lines_may_end_in_a_lone_cr_and_a_leading_bom_is_dropped() {
        let mut p = SseParser::new(1 << 20);
        let ev = events(p.feed(b"\xEF\xBB\xBFdata: a\r\rdata: b\r\n\r\ndata: c\n\n"));
        assert_eq!(ev, vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
        // A CR at a chunk's end and its LF in the next are one line end.
        assert!(p.feed(b"data: d\r").is_empty());
        assert_eq!(events(p.feed(b"\n\r\n")), vec![b"d".to_vec()]);
        // A BOM split over chunks; and only at the start.
        let mut p = SseParser::new(1 << 20);
        assert!(p.feed(b"\xEF\xBB").is_empty());
        let ev = events(p.feed(b"\xBFdata: \xEF\xBB\xBFx\n\n"));
        assert_eq!(ev, vec![b"\xEF\xBB\xBFx".to_vec()]);
        // Something that only starts like a BOM is kept.
        let mut p = SseParser::new(1 << 20);
        assert_eq!(
            p.feed(b"\xEFdata: y\n\ndata: z\n\n"),
            vec![SseItem::Event(b"z".to_vec())]
        );
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

    #[test]
    fn ids_and_retry_are_kept_for_a_resumption() {
        let mut p = SseParser::new(1 << 20);
        // The priming event of 2025-11-25: an id and a delay, no data.
        let items = p.feed(b"id: 41\nretry: 2500\ndata: \n\n");
        assert_eq!(
            items,
            vec![SseItem::Retry(2500), SseItem::LastId(b"41".to_vec())]
        );
        let items = p.feed(b"id:42\ndata: {}\n\n");
        assert_eq!(
            items,
            vec![
                SseItem::Event(b"{}".to_vec()),
                SseItem::LastId(b"42".to_vec())
            ]
        );
        // A retry that is not all digits, and an id holding NUL, are ignored.
        let items = p.feed(b"retry: 1s\nretry: -5\nid: a\0b\ndata: x\n\n");
        assert_eq!(items, vec![SseItem::Event(b"x".to_vec())]);
        // A bare `id` resets it; a huge retry is "as long as it gets", then bounded.
        let items = p.feed(b"id\nretry: 99999999999999999999999\n\n");
        assert_eq!(
            items,
            vec![SseItem::Retry(u64::MAX), SseItem::LastId(Vec::new())]
        );
        assert_eq!(bounded_retry(u64::MAX), RETRY_MAX);
        assert_eq!(bounded_retry(0), RETRY_MIN);
        assert_eq!(bounded_retry(1500), Duration::from_millis(1500));
        assert_eq!(event_id_header(b""), None);
        assert_eq!(event_id_header(b"41").unwrap(), "41");
        assert_eq!(event_id_header(b"a\nb"), None);
    }

    #[test]
    fn an_event_answers_its_request_only() {
        assert!(answers(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#, 7));
        assert!(answers(br#"{"result":{"id":3},"jsonrpc":"2.0","id":7}"#, 7));
        assert!(!answers(br#"{"jsonrpc":"2.0","id":8,"result":{}}"#, 7));
        // The server's own request may carry the same number: it is no answer.
        assert!(!answers(
            br#"{"jsonrpc":"2.0","id":7,"method":"roots/list"}"#,
            7
        ));
        assert!(!answers(
            br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#,
            7
        ));
        assert!(!answers(b"not json", 7));
    }

    /// The server side's decoding (src/frontend/http/stateless.rs), for the round trip.
    fn decoded(header: &str) -> Option<String> {
        use base64::Engine;
        match header
            .strip_prefix("=?base64?")
            .and_then(|r| r.strip_suffix("?="))
        {
            Some(b64) => base64::engine::general_purpose::STANDARD
                .decode(b64)
                .ok()
                .and_then(|b| String::from_utf8(b).ok()),
            None => Some(header.to_owned()),
        }
    }

    #[test]
    fn names_that_are_not_plain_ascii_travel_base64() {
        assert_eq!(header_text("get_weather"), "get_weather");
        assert_eq!(header_text("file:///a b.txt"), "file:///a b.txt");
        assert_eq!(header_text("café"), "=?base64?Y2Fmw6k=?=");
        for odd in [
            "café",
            " lead",
            "trail ",
            "tab\there",
            "=?base64?eA==?=",
            "日本",
        ] {
            let h = header_text(odd);
            assert!(h.starts_with("=?base64?"), "{odd:?} -> {h}");
            assert_eq!(decoded(&h).as_deref(), Some(odd));
        }
        assert_eq!(
            name_of(r#"{"params":{"uri":"sample://x","arguments":{"n":1}}}"#).as_deref(),
            Some("sample://x")
        );
        assert_eq!(name_of(r#"{"params":{"name":"t"}}"#).as_deref(), Some("t"));
        assert_eq!(name_of("{}"), None);
    }

    #[test]
    fn a_refusal_names_the_challenge_and_never_the_token() {
        let mut h = HeaderMap::new();
        h.append(
            reqwest::header::WWW_AUTHENTICATE,
            HeaderValue::from_static(r#"Bearer realm="loom", error="invalid_token""#),
        );
        h.append(
            reqwest::header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=x"),
        );
        let c = challenge_of(&h);
        assert_eq!(
            c.as_deref(),
            Some(r#"Bearer realm="loom", error="invalid_token", Basic realm=x"#)
        );
        let text = needs_auth_text("http://h/mcp", c.as_deref(), true);
        assert!(
            text.starts_with("needs authentication: http://h/mcp answered 401"),
            "{text}"
        );
        assert!(text.contains("bearer_token_command ran again") && text.contains("invalid_token"));
        assert!(challenge_of(&HeaderMap::new()).is_none());
        let long = HeaderValue::from_str(&"x".repeat(5000)).unwrap();
        let mut h = HeaderMap::new();
        h.insert(reqwest::header::WWW_AUTHENTICATE, long);
        assert_eq!(challenge_of(&h).unwrap().len(), CHALLENGE_MAX_CHARS);
    }

    #[test]
    fn a_shown_url_keeps_no_secret() {
        assert_eq!(
            shown_url("https://user:hunter2@example.com:8443/mcp?key=hunter2#frag"),
            "https://example.com:8443/mcp"
        );
        assert_eq!(
            shown_url("http://127.0.0.1:9/mcp"),
            "http://127.0.0.1:9/mcp"
        );
        assert_eq!(shown_url("http://tok@h/mcp"), "http://h/mcp");
        assert_eq!(shown_url("not a url ?key=hunter2"), "the configured URL");
    }

    #[test]
    fn the_token_is_the_trimmed_output() {
        let v = bearer_from_output(b"  abc.def-1\n").unwrap();
        assert_eq!(v, "Bearer abc.def-1");
        assert!(v.is_sensitive());
        assert_eq!(bearer_from_output(b" \n"), Err(TokenError::Empty));
        assert_eq!(bearer_from_output(b"a\nb"), Err(TokenError::NotAHeader));
        assert_eq!(bearer_from_output(b"\xff"), Err(TokenError::NotText));
        // Found by the proptest below in CI: a header takes obs-text, a bearer token does not.
        assert_eq!(
            bearer_from_output("\u{c0}".as_bytes()),
            Err(TokenError::NotAHeader)
        );
        assert_eq!(bearer_from_output(b"a b"), Err(TokenError::NotAHeader));
        assert_eq!(
            bearer_from_output(&vec![b'a'; TOKEN_MAX_BYTES + 1]),
            Err(TokenError::TooLong)
        );
    }

    #[tokio::test]
    async fn the_token_command_runs_without_a_shell_and_says_why_it_failed() {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let v = run_token_command(&argv(&["echo", "t0k;$HOME"]))
            .await
            .unwrap();
        // No shell: `;` and `$HOME` are the token's own characters.
        assert_eq!(v, "Bearer t0k;$HOME");
        let err = run_token_command(&argv(&["sh", "-c", "echo 'not signed in' >&2; exit 3"]))
            .await
            .unwrap_err();
        assert!(
            err.contains("exit status: 3") && !err.contains("not signed in"),
            "{err}"
        );
        let err = run_token_command(&argv(&["/nonexistent/token-helper"]))
            .await
            .unwrap_err();
        assert!(err.contains("cannot run"), "{err}");
        let err = run_token_command(&argv(&["true"])).await.unwrap_err();
        assert!(err.contains("printed nothing"), "{err}");
    }

    proptest::proptest! {
        #[test]
        fn any_name_becomes_a_header_that_decodes_back(name in ".*") {
            let h = header_text(&name);
            proptest::prop_assert!(HeaderValue::from_str(&h).is_ok(), "{h:?}");
            proptest::prop_assert_eq!(decoded(&h), Some(name));
        }

        #[test]
        fn token_output_never_panics_and_a_token_is_one_header_line(out in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
            if let Ok(v) = bearer_from_output(&out) {
                let text = v.to_str();
                proptest::prop_assert!(text.is_ok(), "{v:?}");
                let text = text.unwrap_or_default();
                proptest::prop_assert!(text.starts_with("Bearer ") && text.len() > 7);
                proptest::prop_assert!(!text[7..].contains(' '));
                proptest::prop_assert!(!text.contains('\n') && !text.contains('\r'));
            }
        }

        #[test]
        fn challenges_never_panic(raw in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600)) {
            if let Ok(v) = HeaderValue::from_bytes(&raw) {
                let mut h = HeaderMap::new();
                h.insert(reqwest::header::WWW_AUTHENTICATE, v);
                if let Some(c) = challenge_of(&h) {
                    proptest::prop_assert!(c.chars().count() <= CHALLENGE_MAX_CHARS);
                }
            }
        }
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
                Just(b"id: ".to_vec()),
                Just(b"retry: ".to_vec()),
                Just(b"\r".to_vec()),
                Just(BOM.to_vec()),
                "[0-9]{1,25}".prop_map(String::into_bytes),
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
