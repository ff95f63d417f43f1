//! The stdio transport of `loom serve`: stdin lines in, protocol messages out on stdout (and
//! nothing else ever on stdout). Ends on stdin EOF, SIGINT or SIGTERM, stopping every child
//! first. It serves a session it is handed; `compose.rs` builds that session.

use crate::jsonrpc::{Line, LineReader};
use crate::session::Session;
use crate::upstream::ClientSession;
use std::sync::Arc;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

/// When serving ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Until {
    /// When stdin closes or a signal arrives: stdio is the only surface.
    StdinCloses,
    /// When a signal arrives: other surfaces (HTTP) go on after stdin closes.
    Signal,
}

/// Serves one MCP client over stdin and stdout for `shared` until `until`; then stops the
/// client and the session's servers.
pub async fn serve(
    shared: Arc<Session>,
    max_message_bytes: usize,
    until: Until,
) -> anyhow::Result<()> {
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = super::pipe::stdout();
        while let Some(mut line) = out_rx.recv().await {
            line.push('\n');
            if stdout.write_all(line.as_bytes()).await.is_err() {
                break;
            }
            // Drain what is queued before flushing, so bursts cost one flush.
            while let Ok(mut more) = out_rx.try_recv() {
                more.push('\n');
                if stdout.write_all(more.as_bytes()).await.is_err() {
                    return;
                }
            }
            if stdout.flush().await.is_err() {
                break;
            }
        }
    });
    let session = ClientSession::new(shared.clone(), out_tx, crate::types::events::Caller::Model);
    session.describe_transport("stdio".into());
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sigint = signal(SignalKind::interrupt())?;
    let mut lines = LineReader::new(
        BufReader::with_capacity(256 * 1024, super::pipe::stdin()),
        max_message_bytes,
    );
    let signalled = loop {
        tokio::select! {
            line = lines.next_line() => match line {
                Ok(Some(Line::Complete(bytes))) => session.handle_line(&bytes).await,
                Ok(Some(Line::TooLong { prefix, len })) => session.handle_oversize(&prefix, len),
                Ok(None) => { tracing::info!("stdin closed"); break false; }
                Err(e) => { tracing::warn!("reading stdin failed: {e}"); break false; }
            },
            _ = sigterm.recv() => { tracing::info!("SIGTERM; shutting down"); break true; }
            _ = sigint.recv() => { tracing::info!("SIGINT; shutting down"); break true; }
        }
    };
    session.close();
    if until == Until::Signal && !signalled {
        tokio::select! {
            _ = sigterm.recv() => tracing::info!("SIGTERM; shutting down"),
            _ = sigint.recv() => tracing::info!("SIGINT; shutting down"),
        }
    }
    shared.shutdown().await;
    drop(session);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), writer).await;
    Ok(())
}
