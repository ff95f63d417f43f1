//! Loom: one MCP server in front of many. See DESIGN.md for the layers; each module's own
//! documentation says what it owns.

pub mod check;
pub mod cli;
pub mod config;
pub mod downstream;
pub mod intercept;
pub mod jsonrpc;
pub mod protocol;
pub mod sample_server;
pub mod session;
pub mod store;
pub mod terminal_text;
pub mod tui;
pub mod upstream;

/// When this process started (set first thing in `main`), for the first-frame figure.
pub static PROCESS_START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// Installs the TLS crypto provider used for HTTPS downstreams (once per process).
pub fn init_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
