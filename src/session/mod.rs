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
    DatasetCreated {
        dataset: String,
        rows: u64,
        server: String,
        tool: String,
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

use crate::config::Config;
use crate::store::{Store, StoreConfig};
use std::sync::Arc;

/// The session's store, opened once in the background; every front end awaits the same one.
pub struct StoreSlot {
    config: StoreConfig,
    cell: tokio::sync::OnceCell<Result<Arc<Store>, String>>,
}

impl StoreSlot {
    pub fn new(config: &Config) -> Arc<StoreSlot> {
        let s = &config.store;
        let probe_file = config
            .source
            .clone()
            .or_else(|| std::env::current_exe().ok())
            .unwrap_or_else(|| "/etc/hostname".into());
        Arc::new(StoreSlot {
            config: StoreConfig {
                memory_limit: s.memory_limit.clone(),
                threads: s.threads,
                memory_budget: s.memory_budget,
                query_timeout: s.query_timeout,
                export_dir: config.export_dir.clone(),
                envelope_budget: s.envelope_budget,
                inline_rows: s.inline_rows,
                probe_file,
                blob_dir: Some(
                    config
                        .memory_file
                        .clone()
                        .unwrap_or_else(|| crate::store::memories::default_path(&config.base_dir))
                        .parent()
                        .map(|p| p.join("blobs"))
                        .unwrap_or_else(|| config.base_dir.join(".loom-blobs")),
                ),
            },
            cell: tokio::sync::OnceCell::new(),
        })
    }

    /// The store if it is already open (never waits).
    pub fn try_get(&self) -> Option<Arc<Store>> {
        self.cell.get().and_then(|r| r.as_ref().ok()).cloned()
    }

    /// The open store, or why it could not be opened.
    pub async fn get(&self) -> Result<Arc<Store>, String> {
        self.cell
            .get_or_init(|| async {
                let config = self.config.clone();
                match tokio::task::spawn_blocking(move || Store::open(config)).await {
                    Ok(Ok(store)) => Ok(Arc::new(store)),
                    Ok(Err(e)) => Err(e.to_string()),
                    Err(e) => Err(format!("opening the store panicked: {e}")),
                }
            })
            .await
            .clone()
    }
}
