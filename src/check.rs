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
    let mut notes = Vec::new();
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
        if up {
            notes.extend(unmatched_pins(s.name(), &s.spec.pin, &s.lists().tools));
        }
    }
    if config.naming == crate::config::Naming::Bare {
        notes.extend(fleet.bare_clashes().iter().map(|c| c.describe()));
    }
    for note in notes {
        writeln!(out, "note: {}", terminal_text::line(&note))?;
    }
    fleet.shutdown().await;
    Ok(all_up)
}

/// The `pin` globs of `server` that match none of its tools' original names: most likely a
/// typo, or an exposed name (`fs_read_file`) where the original (`read_file`) is meant.
fn unmatched_pins(
    server: &str,
    pins: &crate::config::Globs,
    tools: &[serde_json::Map<String, serde_json::Value>],
) -> Vec<String> {
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|t| t.get("name").and_then(serde_json::Value::as_str))
        .collect();
    pins.patterns()
        .iter()
        .filter(|p| !names.iter().any(|n| crate::config::glob_match(p, n)))
        .map(|p| {
            format!("server `{server}`: pin `{p}` matches none of its tools (pins name tools as the server does, without `{server}_`)")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pin_that_matches_no_tool_is_named() {
        let tools: Vec<serde_json::Map<String, serde_json::Value>> = ["read_file", "write_file"]
            .iter()
            .map(|n| {
                serde_json::json!({ "name": n })
                    .as_object()
                    .cloned()
                    .unwrap()
            })
            .collect();
        let pins = crate::config::Globs::new(["read_*", "fs_read_file"]).unwrap();
        let notes = unmatched_pins("fs", &pins, &tools);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("`fs_read_file`"), "{notes:?}");
    }
}
