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
pub mod tui;
pub mod upstream;

/// Installs the TLS crypto provider used for HTTPS downstreams (once per process).
pub fn init_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
