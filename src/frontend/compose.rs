//! Who starts what: the one place a session is put together for `loom serve` and `loom tui`.
//! The engine's seal is proven in a short-lived child process while loom starts (so this
//! process loads the engine only when a result or a loom tool first needs it, and idle memory
//! stays small); a broken seal ends loom. Then the session, its in-process engine and its
//! socket, through which a workbench or a second client attaches.

use super::engine::Engine;
use super::local::LocalEngine;
use super::socket::{self, SessionSocket};
use crate::config::{Config, DEFAULT_TOKEN_ENV, HttpAuth};
use crate::session::Session;
use std::net::SocketAddr;
use std::sync::Arc;

/// A session with its in-process engine and its socket.
pub struct Composed {
    pub session: Arc<Session>,
    pub engine: Arc<dyn Engine>,
    /// The session socket, or why there is none.
    pub socket: std::io::Result<SessionSocket>,
}

/// Proves the seal in the background; on a broken one, `before_exit` runs (say, to give the
/// terminal back), the reason is printed and loom exits with status 2.
pub fn prove_seal(before_exit: fn()) {
    tokio::spawn(async move {
        if let Err(e) = crate::store::prove_seal_in_child().await {
            tracing::error!("{e}");
            before_exit();
            eprintln!("loom: {}", crate::terminal_text::text(&e.to_string()));
            std::process::exit(2);
        }
    });
}

/// Puts a session together. `kind` names what serves it in the session list (`serve`, `tui`);
/// with `start_servers`, the servers start now (declaring no client capabilities) instead of
/// with the first MCP client.
pub async fn session(config: Arc<Config>, kind: &str, start_servers: bool) -> Composed {
    let session = Session::new(config);
    session.start_history();
    let local = LocalEngine::new(session.clone());
    if start_servers {
        local.start_servers().await;
    }
    let engine: Arc<dyn Engine> = local;
    let socket = socket::listen(session.clone(), engine.clone(), kind);
    Composed {
        session,
        engine,
        socket,
    }
}

/// `loom serve`: one MCP client on stdio, a workbench may attach through the socket; with
/// HTTP (`--http` or `http` in the config), MCP is also served over streamable HTTP at that
/// address, on the same session, and loom keeps serving after stdin closes, until SIGINT or
/// SIGTERM.
pub async fn serve(config: Arc<Config>, http: Option<SocketAddr>) -> anyhow::Result<()> {
    prove_seal(|| {});
    let max = config.max_message_bytes;
    let composed = session(config, "serve", false).await;
    // Without a socket loom still serves its client; only attaching is lost.
    let mut socket = composed
        .socket
        .map_err(|e| tracing::warn!("no session socket (attach will not find this session): {e}"))
        .ok();
    use std::io::IsTerminal;
    let on_terminal = std::io::stderr().is_terminal();
    let served = serve_http(&composed.session, http, socket.as_mut(), on_terminal).await?;
    let until = match served {
        Some(_) => super::stdio::Until::Signal,
        None => super::stdio::Until::StdinCloses,
    };
    let result = super::stdio::serve(composed.session, max, until).await;
    drop(served);
    result
}

/// The HTTP surface while it serves; dropping it stops it.
pub struct HttpServing {
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for HttpServing {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves MCP over HTTP for `session` when the command line (`cli`) or the config asks for it.
/// The settings are checked against the address actually used: `http_auth = "open"` off
/// loopback is refused unless the config says `http_open_remote = true`. `show_token` says
/// whether a token loom makes may be printed on stderr (a person's terminal, never a log).
pub async fn serve_http(
    session: &Arc<Session>,
    cli: Option<SocketAddr>,
    socket: Option<&mut SessionSocket>,
    show_token: bool,
) -> anyhow::Result<Option<HttpServing>> {
    let settings = &session.config.http;
    let Some(addr) = cli.or(settings.addr) else {
        return Ok(None);
    };
    settings.check(addr)?;
    let token = match settings.auth {
        HttpAuth::Open => None,
        HttpAuth::Required => Some(http_token(settings.token_env.as_deref(), show_token)?),
    };
    let opts =
        super::http::HttpOptions::new(addr, token, session.config.max_message_bytes, settings);
    let (bound, task) = super::http::listen(session.clone(), opts)
        .await
        .map_err(|e| anyhow::anyhow!("cannot serve HTTP on {addr}: {e}"))?;
    let url = format!("http://{bound}/mcp");
    match settings.auth {
        HttpAuth::Open => eprintln!("loom: MCP over HTTP at {url} (open: no token required)"),
        HttpAuth::Required => eprintln!("loom: MCP over HTTP at {url}"),
    }
    if let Some(s) = socket
        && let Err(e) = s.announce_http(url.clone())
    {
        tracing::warn!("cannot add the HTTP URL to the session's description: {e}");
    }
    Ok(Some(HttpServing { url, task }))
}

/// The shortest bearer token loom accepts from a variable: a short one is guessed quickly.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Why the HTTP surface has no token it may use.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TokenError {
    #[error(
        "http_token_env names ${0}, which is not set: set it, or remove http_token_env to have loom make a token"
    )]
    Unset(String),
    #[error(
        "${var} holds a token of {chars} characters; a bearer token needs at least {MIN_TOKEN_CHARS} (for example `openssl rand -hex 16`)"
    )]
    TooShort { var: String, chars: usize },
    #[error(
        "no HTTP bearer token: set ${DEFAULT_TOKEN_ENV} (at least {MIN_TOKEN_CHARS} characters) or name a variable with http_token_env; loom makes one itself only when it can show it on a terminal, and never writes it to a file, where the servers it starts could read it"
    )]
    NowhereToShow,
}

/// A token from `var`, trimmed; `None` when it is unset or blank.
fn token_in(var: &str) -> Result<Option<String>, TokenError> {
    let Some(token) = std::env::var(var)
        .ok()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
    else {
        return Ok(None);
    };
    let chars = token.chars().count();
    if chars < MIN_TOKEN_CHARS {
        return Err(TokenError::TooShort {
            var: var.to_owned(),
            chars,
        });
    }
    Ok(Some(token))
}

/// The bearer token of the HTTP surface: from the variable the config names (which must then be
/// set), else `$LOOM_HTTP_TOKEN` when set, else a new one, printed once to stderr when
/// `show_token` (stderr is a person's terminal). A token loom makes is never written to a file:
/// its servers run as the same user and could read any file loom can write.
fn http_token(named: Option<&str>, show_token: bool) -> anyhow::Result<String> {
    if let Some(var) = named {
        return Ok(token_in(var)?.ok_or_else(|| TokenError::Unset(var.to_owned()))?);
    }
    if let Some(token) = token_in(DEFAULT_TOKEN_ENV)? {
        return Ok(token);
    }
    if !show_token {
        return Err(TokenError::NowhereToShow.into());
    }
    let mut seed = [0u8; 32];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut seed)?;
    let token: String = seed.iter().map(|b| format!("{b:02x}")).collect();
    eprintln!("loom: HTTP bearer token: {token}");
    Ok(token)
}
