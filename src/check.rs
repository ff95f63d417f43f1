//! `loom check`: validate the config, start every server, and print each one's health and tool
//! count. Exits non-zero when any server is not up; an HTTP server that refused loom's credentials
//! says `needs auth`, with the server's challenge. Server names, errors and stderr come from
//! outside loom, so every field is escaped before it reaches the terminal.

use crate::config::Config;
use crate::downstream::{Fleet, ServerState};
use crate::protocol::ClientCapabilities;
use crate::terminal_text;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

/// Returns whether every server came up.
pub async fn run(config: Arc<Config>, out: &mut impl Write) -> anyhow::Result<bool> {
    let n = config.servers.len();
    writeln!(
        out,
        "config ok: {} ({n} server{})",
        terminal_text::line(
            &config
                .source
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        ),
        if n == 1 { "" } else { "s" }
    )?;
    let fleet = Fleet::start(
        config.clone(),
        ClientCapabilities::default(),
        Arc::new(|_| {}),
    );
    let deadline = tokio::time::Instant::now()
        + config
            .servers
            .iter()
            .map(|s| s.handshake_timeout)
            .max()
            .unwrap_or_default()
        + Duration::from_secs(1);
    // Wait until each server is up or has failed at least once.
    loop {
        let settled = fleet.servers().iter().all(|s| {
            let st = s.status();
            st.state == ServerState::Up
                || st.last_error.is_some()
                || st.state == ServerState::Delisted
        });
        if settled || tokio::time::Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let width = fleet
        .servers()
        .iter()
        .map(|s| terminal_text::line(s.name()).chars().count())
        .max()
        .unwrap_or(4)
        .max(6);
    writeln!(
        out,
        "{:width$}  {:<10}  {:<6}  {:>5}  detail",
        "server", "state", "era", "tools"
    )?;
    let mut all_up = true;
    for s in fleet.servers() {
        let st = s.status();
        let up = st.state == ServerState::Up;
        all_up &= up;
        let era = st.era.map(|e| e.label()).unwrap_or("-");
        let detail = if up {
            format!("protocol {}", st.version.unwrap_or_default())
        } else {
            st.last_error
                .unwrap_or_else(|| "did not finish starting".into())
        };
        // A refused credential is for a person to fix, not a crash: say so, and the detail
        // carries the server's `WWW-Authenticate` challenge.
        let state = match st.state {
            ServerState::Up => "up",
            ServerState::NeedsAuth => "needs auth",
            _ => "failed",
        };
        writeln!(
            out,
            "{:width$}  {:<10}  {:<6}  {:>5}  {detail}",
            terminal_text::line(s.name()),
            state,
            era,
            st.tools,
            detail = terminal_text::line(&detail),
        )?;
    }
    fleet.shutdown().await;
    Ok(all_up)
}
