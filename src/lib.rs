//! Loom: one MCP server in front of many. Each module's own documentation says what it owns.
//!
//! The layers, bottom to top. A module imports only modules on lower lines (never a neighbour on
//! its own line, never one above); lower layers report upward through sinks that the upper layer
//! hands down (`downstream::EventSink`, `store::ChangeSink`), never by importing its types.
//! `tests/layering.rs` reads `src/` and fails when an import breaks this.
//!
//! 1. `types` (shared serde types: events, views, Engine API requests and replies, dates),
//!    `folders` (where loom keeps things), `terminal_text`, `jsonrpc`, `protocol`, `config`
//! 2. `intercept`: finding and typing rows in tool results
//! 3. `downstream` (supervise, name and forward to servers), `store` (the sealed DuckDB)
//! 4. `session`: the shared core state (event bus, call log, approvals, store handle, fleet)
//! 5. `upstream`: the merged MCP surface, loom's own tools, the interception pipeline
//! 6. `frontend` (the Engine API in process and over the session socket, `loom serve` over
//!    stdio), `check`, `import` (a client's server list as loom.toml), `sample_server`
//! 7. `tui`: the workbench, which reaches the core only through `frontend`'s Engine API and
//!    the shared types
//! 8. `cli`: the command line, which composes the rest

pub mod check;
pub mod cli;
pub mod config;
pub mod downstream;
pub mod folders;
pub mod frontend;
pub mod history;
pub mod import;
pub mod intercept;
pub mod jsonrpc;
pub mod protocol;
pub mod sample_server;
pub mod session;
pub mod store;
pub mod terminal_text;
pub mod tui;
pub mod types;
pub mod upstream;

/// When this process started (set first thing in `main`), for the first-frame figure.
pub static PROCESS_START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// Installs the TLS crypto provider used for HTTPS downstreams (once per process).
pub fn init_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
