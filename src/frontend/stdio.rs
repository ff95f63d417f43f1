//! `loom serve` over stdio: stdin lines in, protocol messages out on stdout (and nothing else
//! ever on stdout). Ends on stdin EOF, SIGINT or SIGTERM, stopping every child first. The
//! session socket is open meanwhile, so a workbench can attach.

use crate::config::Config;
use crate::jsonrpc::{Line, LineReader};
use crate::session::Session;
use crate::upstream::ClientSession;
use std::sync::Arc;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

pub async fn serve(config: Arc<Config>) -> anyhow::Result<()> {
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
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
    // The seal is proven at start, in a short-lived child process, so that this process loads
    // the engine only when a result or a loom tool first needs it (idle memory stays small).
    // A broken seal stops loom; the in-process open proves it again.
    tokio::spawn(async move {
        if let Err(e) = crate::store::prove_seal_in_child().await {
            tracing::error!("{e}");
            eprintln!("loom: {e}");
            std::process::exit(2);
        }
    });
    let shared = Session::new(config.clone());
    let session = ClientSession::new(shared.clone(), out_tx, crate::types::events::Caller::Model);
    // The session socket lets a developer attach a workbench (or a second client) to this
    // session; without it loom still serves its client.
    let engine: Arc<dyn crate::frontend::engine::Engine> =
        crate::frontend::local::LocalEngine::new(shared.clone());
    let _socket = match crate::frontend::socket::listen(shared.clone(), engine, "serve") {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!("no session socket (attach will not find this session): {e}");
            None
        }
    };
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sigint = signal(SignalKind::interrupt())?;
    let mut lines = LineReader::new(
        BufReader::with_capacity(256 * 1024, tokio::io::stdin()),
        config.max_message_bytes,
    );
    loop {
        tokio::select! {
            line = lines.next_line() => match line {
                Ok(Some(Line::Complete(bytes))) => session.handle_line(&bytes).await,
                Ok(Some(Line::TooLong { prefix, len })) => session.handle_oversize(&prefix, len),
                Ok(None) => { tracing::info!("stdin closed; shutting down"); break; }
                Err(e) => { tracing::warn!("reading stdin failed: {e}; shutting down"); break; }
            },
            _ = sigterm.recv() => { tracing::info!("SIGTERM; shutting down"); break; }
            _ = sigint.recv() => { tracing::info!("SIGINT; shutting down"); break; }
        }
    }
    session.close();
    shared.shutdown().await;
    drop(session);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), writer).await;
    Ok(())
}
