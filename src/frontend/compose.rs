//! Who starts what: the one place a session is put together for `loom serve` and `loom tui`.
//! The engine's seal is proven in a short-lived child process while loom starts (so this
//! process loads the engine only when a result or a loom tool first needs it, and idle memory
//! stays small); a broken seal ends loom. Then the session, its in-process engine and its
//! socket, through which a workbench or a second client attaches.

use super::engine::Engine;
use super::local::LocalEngine;
use super::socket::{self, SessionSocket};
use crate::config::Config;
use crate::session::Session;
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
/// `http`, MCP is also served over streamable HTTP at that address, on the same session, and
/// loom keeps serving after stdin closes, until SIGINT or SIGTERM.
pub async fn serve(config: Arc<Config>, http: Option<std::net::SocketAddr>) -> anyhow::Result<()> {
    prove_seal(|| {});
    let max = config.max_message_bytes;
    let composed = session(config, "serve", false).await;
    // Without a socket loom still serves its client; only attaching is lost.
    let socket = composed
        .socket
        .map_err(|e| tracing::warn!("no session socket (attach will not find this session): {e}"))
        .ok();
    let Some(addr) = http else {
        return super::stdio::serve(composed.session, max, super::stdio::Until::StdinCloses).await;
    };
    let token = http_token(socket.as_ref())?;
    let opts = super::http::HttpOptions {
        addr,
        token: Some(token),
        max_body: max,
    };
    let (bound, task) = super::http::listen(composed.session.clone(), opts)
        .await
        .map_err(|e| anyhow::anyhow!("cannot serve HTTP on {addr}: {e}"))?;
    eprintln!("loom: MCP over HTTP at http://{bound}/mcp");
    let served = super::stdio::serve(composed.session, max, super::stdio::Until::Signal).await;
    task.abort();
    if let Some(s) = &socket {
        let _ = std::fs::remove_file(s.entry.socket.with_extension("token"));
    }
    served
}

/// The bearer token of the HTTP surface: `$LOOM_HTTP_TOKEN` when set, else a new one, printed
/// once to stderr and written (0600) beside the session socket for tools of this user.
fn http_token(socket: Option<&SessionSocket>) -> anyhow::Result<String> {
    if let Ok(t) = std::env::var("LOOM_HTTP_TOKEN")
        && !t.trim().is_empty()
    {
        return Ok(t.trim().to_owned());
    }
    let mut seed = [0u8; 32];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut seed)?;
    let token: String = seed.iter().map(|b| format!("{b:02x}")).collect();
    if let Some(s) = socket {
        let path = s.entry.socket.with_extension("token");
        let dir = path.parent().unwrap_or(std::path::Path::new("."));
        crate::folders::write_private(dir, &path, ".token-", token.as_bytes())
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        eprintln!(
            "loom: HTTP bearer token (also in {}): {token}",
            path.display()
        );
    } else {
        eprintln!("loom: HTTP bearer token: {token}");
    }
    Ok(token)
}
