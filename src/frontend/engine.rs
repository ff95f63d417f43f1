//! The Engine API: everything a workbench may ask of a session, as one request vocabulary
//! and one event feed. The in-process workbench uses [`super::local::LocalEngine`]; an
//! attached one uses the same trait over the session socket. Requests and replies are plain
//! serde types so both transports carry exactly the same thing.

pub use crate::session::approvals::Presence;
pub use crate::types::engine::*;

use crate::session::Sequenced;
use std::future::Future;
use std::pin::Pin;
use tokio::sync::mpsc;

pub type EngineFuture = Pin<Box<dyn Future<Output = Result<Reply, EngineError>> + Send>>;

/// Recent events and every later one, in order.
pub struct EventFeed {
    pub backlog: Vec<Sequenced>,
    pub live: mpsc::UnboundedReceiver<Sequenced>,
    /// While held, a human counts as attached (approvals wait for them).
    pub presence: Option<Presence>,
}

/// One session as a workbench sees it, whatever the transport.
pub trait Engine: Send + Sync + 'static {
    fn request(&self, request: Request) -> EngineFuture;
    /// A request made on another connection: what a person decides there is recorded as
    /// decided at its terminal, and the results it runs are its own.
    fn request_from(&self, request: Request, origin: Origin) -> EngineFuture {
        let _ = origin;
        self.request(request)
    }
    /// A connection that made requests has closed: the results it kept go.
    fn closed(&self, connection: u64) {
        let _ = connection;
    }
    /// Subscribes to the session's events. With `human`, a person counts as attached (and
    /// `ask` approvals wait for them) while the feed is held.
    fn events(&self, human: bool) -> EventFeed;
}

/// Where a request was made.
#[derive(Debug, Clone)]
pub struct Origin {
    /// The terminal, in words (`loom attach, pid 4242 on /dev/pts/3`).
    pub terminal: String,
    /// The connection, unique in this process; never [`crate::store::results::LOCAL_CONNECTION`].
    pub connection: u64,
}

/// A terminal in words, for the record of who decided: `loom attach, pid 4242 on /dev/pts/3`.
/// The terminal is read from the process's standard input, and named only when it is one.
pub fn terminal_words(program: &str, pid: u32) -> String {
    let tty = std::fs::read_link(format!("/proc/{pid}/fd/0"))
        .ok()
        .map(|p| p.display().to_string())
        .filter(|p| {
            (p.starts_with("/dev/pts/") || p.starts_with("/dev/tty"))
                && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '/')
        });
    match tty {
        Some(tty) => format!("{program}, pid {pid} on {tty}"),
        None => format!("{program}, pid {pid}"),
    }
}
