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
use std::path::PathBuf;
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
    let served = serve_http(&composed.session, http, socket.as_mut()).await?;
    let until = match served {
        Some(_) => super::stdio::Until::Signal,
        None => super::stdio::Until::StdinCloses,
    };
    let result = super::stdio::serve(composed.session, max, until).await;
    drop(served);
    result
}

/// The HTTP surface while it serves; dropping it stops it and removes its token file.
pub struct HttpServing {
    pub url: String,
    task: tokio::task::JoinHandle<()>,
    token_file: Option<PathBuf>,
}

impl Drop for HttpServing {
    fn drop(&mut self) {
        self.task.abort();
        if let Some(f) = &self.token_file {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// Serves MCP over HTTP for `session` when the command line (`cli`) or the config asks for it.
/// The settings are checked against the address actually used: `http_auth = "open"` off
/// loopback is refused unless the config says `http_open_remote = true`.
pub async fn serve_http(
    session: &Arc<Session>,
    cli: Option<SocketAddr>,
    socket: Option<&mut SessionSocket>,
) -> anyhow::Result<Option<HttpServing>> {
    let settings = &session.config.http;
    let Some(addr) = cli.or(settings.addr) else {
        return Ok(None);
    };
    settings.check(addr)?;
    let token_path = socket
        .as_ref()
        .map(|s| s.entry.socket.with_extension("token"));
    let (token, token_file) = match settings.auth {
        HttpAuth::Open => (None, None),
        HttpAuth::Required => {
            let (token, written) =
                http_token(settings.token_env.as_deref(), token_path.as_deref())?;
            (Some(token), written)
        }
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
    Ok(Some(HttpServing {
        url,
        task,
        token_file,
    }))
}

/// The bearer token of the HTTP surface: from the variable the config names (which must then be
/// set), else `$LOOM_HTTP_TOKEN` when set, else a new one, printed once to stderr and written
/// (0600) beside the session socket for tools of this user; that file is returned.
fn http_token(
    named: Option<&str>,
    file: Option<&std::path::Path>,
) -> anyhow::Result<(String, Option<PathBuf>)> {
    let from = |var: &str| {
        std::env::var(var)
            .ok()
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
    };
    if let Some(var) = named {
        let token = from(var).ok_or_else(|| {
            anyhow::anyhow!(
                "http_token_env names ${var}, which is not set: set it, or remove http_token_env to have loom make a token"
            )
        })?;
        return Ok((token, None));
    }
    if let Some(token) = from(DEFAULT_TOKEN_ENV) {
        return Ok((token, None));
    }
    let mut seed = [0u8; 32];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut seed)?;
    let token: String = seed.iter().map(|b| format!("{b:02x}")).collect();
    let Some(path) = file else {
        eprintln!("loom: HTTP bearer token: {token}");
        return Ok((token, None));
    };
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    crate::folders::write_private(dir, path, ".token-", token.as_bytes())
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    eprintln!(
        "loom: HTTP bearer token (also in {}): {token}",
        path.display()
    );
    Ok((token, Some(path.to_owned())))
}
