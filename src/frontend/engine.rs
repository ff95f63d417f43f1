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
    /// Subscribes to the session's events. With `human`, a person counts as attached (and
    /// `ask` approvals wait for them) while the feed is held.
    fn events(&self, human: bool) -> EventFeed;
}
