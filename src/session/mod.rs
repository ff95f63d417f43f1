//! The shared session: one event bus that every front end subscribes to. Every state change a
//! person may want to see (server up or restarting, a stderr line, a call started or finished)
//! is an event here. Publishing never blocks and never fails when nobody listens.

use serde::Serialize;
use tokio::sync::broadcast;

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    ServerState {
        server: String,
        state: String,
        detail: Option<String>,
    },
    ServerStderr {
        server: String,
        line: String,
    },
    CallStarted {
        call: u64,
        server: String,
        tool: String,
    },
    CallFinished {
        call: u64,
        server: String,
        tool: String,
        outcome: String,
        millis: u64,
        bytes: usize,
    },
}

#[derive(Clone)]
pub struct EventBus {
    tx: broadcast::Sender<Event>,
}

impl Default for EventBus {
    fn default() -> Self {
        EventBus {
            tx: broadcast::channel(4096).0,
        }
    }
}

impl EventBus {
    pub fn publish(&self, event: Event) {
        let _ = self.tx.send(event);
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.tx.subscribe()
    }
}
