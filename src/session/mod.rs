//! The shared session: one event bus, one store, one set of memories and one fleet of servers
//! that every front end shares — each MCP client (stdio, socket), the in-process workbench and
//! attached workbenches. Every state change a person may want to see is an event on the bus;
//! publishing never blocks and never fails when nobody listens, and a bounded backlog lets a
//! late subscriber catch up without gaps or duplicates.

pub mod approvals;
pub mod calls;
pub mod finder;
pub mod listing;
pub mod log_file;
pub mod parked;
pub mod server_log;
pub mod subscriptions;

pub use crate::types::events::{Event, Sequenced};

use crate::config::Config;
use crate::downstream::connection::{Connection, lock};
use crate::downstream::{EventSink, Fleet, FleetEvent, ListKind};
use crate::protocol::ClientCapabilities;
use crate::store::memories::Memories;
use crate::store::{CatalogChange, DatasetKind, Store, StoreConfig};
use serde_json::value::RawValue;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::{OnceCell, broadcast};

const BACKLOG: usize = 2000;

#[derive(Clone)]
pub struct EventBus {
    tx: broadcast::Sender<Sequenced>,
    backlog: Arc<Mutex<(u64, VecDeque<Sequenced>)>>,
}

impl Default for EventBus {
    fn default() -> Self {
        EventBus {
            tx: broadcast::channel(8192).0,
            backlog: Arc::new(Mutex::new((0, VecDeque::new()))),
        }
    }
}

impl EventBus {
    pub fn publish(&self, event: Event) {
        // Sending under the backlog lock keeps `subscribe_with_backlog` exact.
        let mut b = lock(&self.backlog);
        b.0 += 1;
        let item = Sequenced { seq: b.0, event };
        if b.1.len() == BACKLOG {
            b.1.pop_front();
        }
        b.1.push_back(item.clone());
        let _ = self.tx.send(item);
    }

    /// An event for those watching now that a later one soon makes stale (a call's progress):
    /// it is numbered like every event but not kept for those who subscribe later, so it
    /// never pushes lasting news out of the backlog.
    pub fn publish_passing(&self, event: Event) {
        let mut b = lock(&self.backlog);
        b.0 += 1;
        let _ = self.tx.send(Sequenced { seq: b.0, event });
    }

    /// The recent events and a receiver for every later one: nothing missed, nothing twice.
    pub fn subscribe_with_backlog(&self) -> (Vec<Sequenced>, broadcast::Receiver<Sequenced>) {
        let b = lock(&self.backlog);
        (b.1.iter().cloned().collect(), self.tx.subscribe())
    }
}

/// The session's store, opened once in the background; every front end awaits the same one.
/// The catalog changes the store makes on its own (drops, evictions) reach the bus.
pub struct StoreSlot {
    config: StoreConfig,
    bus: EventBus,
    /// Finished calls for the store's `loom_calls`, fed from the first call on.
    pub calls: Arc<crate::store::calls_table::CallFeed>,
    cell: tokio::sync::OnceCell<Result<Arc<Store>, StoreUnavailable>>,
}

impl StoreSlot {
    pub fn new(config: &Config, bus: EventBus) -> Arc<StoreSlot> {
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
                parked_max_bytes: s.parked_max_bytes,
            },
            bus,
            calls: Default::default(),
            cell: tokio::sync::OnceCell::new(),
        })
    }

    /// The store if it is already open (never waits).
    pub fn try_get(&self) -> Option<Arc<Store>> {
        self.cell.get().and_then(|r| r.as_ref().ok()).cloned()
    }

    /// The open store, or why it could not be opened.
    pub async fn get(&self) -> Result<Arc<Store>, StoreUnavailable> {
        self.cell
            .get_or_init(|| async {
                let config = self.config.clone();
                match tokio::task::spawn_blocking(move || Store::open(config)).await {
                    Ok(Ok(store)) => {
                        store.feed_calls_from(self.calls.clone());
                        let bus = self.bus.clone();
                        store.report_changes(Arc::new(move |change| {
                            bus.publish(catalog_event(change))
                        }));
                        Ok(Arc::new(store))
                    }
                    Ok(Err(e)) => Err(StoreUnavailable(e.to_string())),
                    Err(e) => Err(StoreUnavailable(format!("opening the store panicked: {e}"))),
                }
            })
            .await
            .clone()
    }
}

/// The event a store change is shown as. A dataset loom made itself is shown under the `loom`
/// server and the tool that makes that kind.
fn catalog_event(change: CatalogChange) -> Event {
    match change {
        CatalogChange::Memory { key } => Event::MemoryChanged { key },
        CatalogChange::Created {
            dataset,
            rows,
            kind,
            provenance,
        } => {
            let (server, tool) = match provenance {
                Some(p) => (p.server, p.tool),
                None => (
                    "loom".to_owned(),
                    match kind {
                        DatasetKind::Materialized => "loom_materialize",
                        DatasetKind::Query | DatasetKind::Ingest => "loom_query",
                    }
                    .to_owned(),
                ),
            };
            Event::DatasetCreated {
                dataset,
                rows,
                server,
                tool,
            }
        }
        CatalogChange::Dropped { dataset, reason } => Event::DatasetDropped { dataset, reason },
        CatalogChange::Parked { key, bytes } => Event::BlobParked { key, bytes },
    }
}

/// What the archive keeps of one event.
fn archive_event(session: &Session, archive: &crate::history::archive::Archive, item: Sequenced) {
    use crate::history::archive::Job;
    match item.event {
        Event::CallFinished(summary) => {
            let reference = summary.reference.clone();
            let call = summary.call;
            archive.send(Job::Call(Box::new(summary)));
            if let Some(r) = reference
                && !r.starts_with("blob/")
                && let Some(record) = session.calls.get(call)
            {
                archive.send(Job::Envelope {
                    reference: r,
                    text: record.response,
                });
            }
        }
        Event::DatasetCreated {
            dataset, server, ..
        } => archive.send(Job::DatasetCreated {
            reference: dataset,
            server,
        }),
        Event::ServerState {
            server,
            state,
            detail,
        } => archive.send(Job::Event {
            seq: item.seq,
            kind: "server_state",
            server,
            subject: serde_json::to_value(&state)
                .map(|v| match v {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                })
                .unwrap_or_default(),
            detail: detail.unwrap_or_default(),
            inputs: Vec::new(),
        }),
        // Masked by the archive, as every event is (its arguments, bindings and batch).
        Event::ApprovalRequested(req) => archive.send(Job::Event {
            seq: item.seq,
            kind: "approval_requested",
            server: req.server.clone(),
            subject: req.tool.clone(),
            detail: serde_json::to_string(&req).unwrap_or_default(),
            // What its bound values and batch rows were read from.
            inputs: req
                .bindings
                .iter()
                .flat_map(|b| b.inputs.iter().cloned())
                .chain(req.batch.iter().flat_map(|b| b.inputs.iter().cloned()))
                .collect(),
        }),
        Event::ApprovalSettled {
            approval,
            decision,
            by,
        } => archive.send(Job::Event {
            seq: item.seq,
            kind: "approval_settled",
            server: String::new(),
            subject: approval.to_string(),
            detail: serde_json::json!({ "decision": decision, "by": by }).to_string(),
            inputs: Vec::new(),
        }),
        _ => {}
    }
}

/// Why the store could not be opened (kept, so every later caller reads the same reason).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StoreUnavailable(pub String);

/// What a connected MCP client does with what the servers send. The session fans each fleet
/// event out to its clients in order; a server-to-client request goes to the first client that
/// can answer it.
pub trait FleetListener: Send + Sync {
    fn list_changed(&self, kind: ListKind);
    /// One tool's place in the listing changed (promoted, pinned or unpinned): a client hears
    /// of it when its own listing changes.
    fn listing_changed(&self, _tool: &str) {
        self.list_changed(ListKind::Tools);
    }
    fn notification(&self, server: &str, method: &str, params: Option<&RawValue>);
    /// Takes the request if this client can answer `method`; otherwise hands it back.
    fn server_request(&self, request: ServerRequest) -> Result<(), ServerRequest>;
    /// A request no client could take: if it belongs to a call of this client whose request
    /// did not declare the capability it needs (a 2026-07-28 client's), that call fails as a
    /// 2026-07-28 server would fail it, and the request is taken; otherwise it is handed back.
    fn undeclared_capability(&self, request: ServerRequest) -> Result<(), ServerRequest> {
        Err(request)
    }
    /// Whether this client has a call in flight to `server`.
    fn has_call_on(&self, server: &str) -> bool;
    /// The log level this client set for the session's servers (legacy clients), if any.
    fn log_level(&self) -> Option<String> {
        None
    }
    /// Whether this is a model's MCP client, connected now (a workbench is not).
    fn is_connected_client(&self) -> bool {
        false
    }
}

pub struct ServerRequest {
    pub conn: Arc<Connection>,
    pub id: Box<RawValue>,
    pub method: String,
    pub params: Option<Box<RawValue>>,
}

/// Everything one running loom shares between its clients and workbenches.
pub struct Session {
    pub config: Arc<Config>,
    pub bus: EventBus,
    pub store: Arc<StoreSlot>,
    pub memories: Arc<Memories>,
    pub calls: calls::CallLog,
    /// How to stop each running tool call, for a person's cancel.
    pub cancels: calls::Cancels,
    pub approvals: approvals::Approvals,
    /// Each server's recent stderr and state changes, with times.
    pub server_logs: server_log::ServerLogs,
    /// Promoted and pinned tools, and how often each tool was called.
    pub listing: listing::ListingState,
    pub started_at: String,
    /// Calls waiting for a 2026-07-28 client to retry them with answers.
    pub parked: parked::Parked,
    /// Resource subscriptions of every client, counted per URI.
    pub subscriptions: subscriptions::Subscriptions,
    /// This session's archive on disk (see `crate::history`), once started.
    pub history: std::sync::OnceLock<Arc<crate::history::archive::Archive>>,
    /// The last `roots/list` answer a client gave, for servers that ask when no client can.
    roots: Mutex<Option<Box<RawValue>>>,
    fleet: OnceCell<Arc<Fleet>>,
    listeners: Mutex<Vec<Weak<dyn FleetListener>>>,
    next_call: AtomicU64,
    next_token: AtomicU64,
}

impl Session {
    pub fn new(config: Arc<Config>) -> Arc<Session> {
        let memory_path = config
            .memory_file
            .clone()
            .unwrap_or_else(|| crate::store::memories::default_path(&config.base_dir));
        let limits = crate::store::memories::MemoryLimits {
            max_content_bytes: config.memory_max_bytes,
            ..Default::default()
        };
        let bus = EventBus::default();
        Arc::new(Session {
            store: StoreSlot::new(&config, bus.clone()),
            memories: {
                let memories = Memories::new(memory_path, limits);
                let bus = bus.clone();
                memories.report_changes(Arc::new(move |change| bus.publish(catalog_event(change))));
                Arc::new(memories)
            },
            calls: calls::CallLog::default(),
            cancels: calls::Cancels::default(),
            approvals: approvals::Approvals::default(),
            server_logs: server_log::ServerLogs::default(),
            listing: listing::ListingState::default(),
            bus,
            config,
            started_at: crate::store::now_iso(),
            parked: parked::Parked::default(),
            roots: Mutex::new(None),
            subscriptions: subscriptions::Subscriptions::default(),
            history: std::sync::OnceLock::new(),
            fleet: OnceCell::new(),
            listeners: Mutex::new(Vec::new()),
            next_call: AtomicU64::new(1),
            next_token: AtomicU64::new(1),
        })
    }

    /// The config file this session runs, for listings.
    pub fn config_label(&self) -> String {
        self.config
            .source
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    }

    pub fn server_names(&self) -> Vec<String> {
        self.config.servers.iter().map(|s| s.name.clone()).collect()
    }

    pub fn next_call_id(&self) -> u64 {
        self.next_call.fetch_add(1, Ordering::Relaxed)
    }

    /// A progress token unique in the session, so progress reaches only the client whose
    /// call it belongs to, whichever clients share a server.
    pub fn next_progress_token(&self) -> String {
        format!("loom-p{}", self.next_token.fetch_add(1, Ordering::Relaxed))
    }

    /// Registers a client for fleet events; it is forgotten when dropped.
    pub fn add_listener(&self, listener: Weak<dyn FleetListener>) {
        let mut l = lock(&self.listeners);
        l.retain(|w| w.strong_count() > 0);
        l.push(listener);
    }

    fn listeners(&self) -> Vec<Arc<dyn FleetListener>> {
        lock(&self.listeners)
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }

    /// Tells every client and workbench that `tool` joined or left the listing, and why.
    pub fn announce_listing(&self, tool: &str, why: &str) {
        for l in self.listeners() {
            l.listing_changed(tool);
        }
        self.bus.publish(Event::ListingChanged {
            tool: tool.to_owned(),
            why: why.to_owned(),
        });
    }

    /// A client set or dropped its log level: legacy servers log at the most detailed level
    /// any client still wants (each client's messages are filtered to its own level).
    pub fn log_levels_changed(&self) {
        let wanted = self
            .listeners()
            .iter()
            .filter_map(|l| l.log_level())
            .filter_map(|l| crate::protocol::log_level_rank(&l))
            .min();
        if let (Some(rank), Some(fleet)) = (wanted, self.fleet.get()) {
            fleet.set_log_level(crate::protocol::LOG_LEVELS[rank]);
        }
    }

    /// Remembers a client's `roots/list` answer (when it is one: an object with `roots`).
    pub fn learn_roots(&self, answer: &RawValue) {
        let is_roots = serde_json::from_str::<serde_json::Value>(answer.get())
            .is_ok_and(|v| v.get("roots").is_some_and(serde_json::Value::is_array));
        if is_roots {
            *lock(&self.roots) = Some(answer.to_owned());
        }
    }

    /// MCP clients connected now: what quitting would cut off.
    pub fn connected_clients(&self) -> usize {
        self.listeners()
            .iter()
            .filter(|l| l.is_connected_client())
            .count()
    }

    pub fn fleet(&self) -> Option<&Arc<Fleet>> {
        self.fleet.get()
    }

    /// Starts the servers once; what each caller can answer joins what loom declares to them.
    pub async fn ensure_fleet(self: &Arc<Self>, caps: ClientCapabilities) -> Arc<Fleet> {
        let fleet = self.start_fleet(caps.clone()).await;
        fleet.learn_client_caps(&caps);
        fleet
    }

    async fn start_fleet(self: &Arc<Self>, caps: ClientCapabilities) -> Arc<Fleet> {
        self.fleet
            .get_or_init(|| async {
                let me = Arc::downgrade(self);
                let sink: EventSink = Arc::new(move |ev| {
                    if let Some(me) = me.upgrade() {
                        me.on_fleet_event(ev);
                    }
                });
                Fleet::start(self.config.clone(), caps, sink)
            })
            .await
            .clone()
    }

    /// A server's request goes to a client that can answer it (the one whose call the server
    /// is working on first); one that no client takes is answered with an error at once.
    pub fn route_server_request(&self, mut request: ServerRequest) {
        // The client whose call the server is working on is asked first.
        let mut listeners = self.listeners();
        listeners.sort_by_key(|l| !l.has_call_on(&request.conn.server));
        for l in &listeners {
            match l.server_request(request) {
                Ok(()) => return,
                Err(back) => request = back,
            }
        }
        // No client could answer it; a call that needed it without declaring it fails.
        for l in &listeners {
            match l.undeclared_capability(request) {
                Ok(()) => return,
                Err(back) => request = back,
            }
        }
        if request.method == "roots/list"
            && self
                .fleet
                .get()
                .is_some_and(|f| f.client_caps().has("roots"))
        {
            // Loom told the servers it has roots; one asking when no client can answer
            // (at its start, outside any call) gets the roots a client last gave, or
            // none, and never waits.
            let roots = lock(&self.roots)
                .clone()
                .unwrap_or_else(|| crate::jsonrpc::to_raw(&serde_json::json!({ "roots": [] })));
            request.conn.respond(&request.id, Ok(&roots));
            return;
        }
        let needed = crate::protocol::capability_for_server_request(&request.method);
        let why = match needed {
            Some(cap) => format!(
                "no client connected to loom supports {cap} ({})",
                request.method
            ),
            None => format!("loom does not relay {}", request.method),
        };
        let err = crate::jsonrpc::to_raw(
            &serde_json::json!({ "code": crate::jsonrpc::code::METHOD_NOT_FOUND, "message": why }),
        );
        request.conn.respond(&request.id, Err(&err));
    }

    fn on_fleet_event(&self, ev: FleetEvent) {
        match ev {
            FleetEvent::State {
                server,
                state,
                detail,
            } => {
                self.server_logs.state(&server, &state, detail.as_deref());
                self.bus.publish(Event::ServerState {
                    server,
                    state,
                    detail,
                })
            }
            FleetEvent::Stderr { server, line } => {
                let at = crate::types::time::now_iso();
                self.server_logs.stderr(&server, &line, &at);
                self.bus.publish(Event::ServerStderr { server, line, at })
            }
            FleetEvent::Note { server, text } => self.server_logs.note(&server, text),
            FleetEvent::Renewed { server } => {
                if let Some(fleet) = self.fleet.get() {
                    self.subscriptions.renew(fleet, &server);
                }
            }
            FleetEvent::ListChanged(kind) => {
                for l in self.listeners() {
                    l.list_changed(kind);
                }
            }
            FleetEvent::Notification {
                server,
                method,
                params,
            } => {
                let mut listeners = self.listeners();
                // A log message belongs to the calls in flight on its server: when a client
                // has one, only such clients hear it; otherwise it is the server's own news.
                if method == "notifications/message"
                    && listeners.iter().any(|l| l.has_call_on(&server))
                {
                    listeners.retain(|l| l.has_call_on(&server));
                }
                for l in listeners {
                    l.notification(&server, &method, params.as_deref());
                }
            }
            FleetEvent::ServerRequest {
                conn,
                id,
                method,
                params,
            } => {
                self.route_server_request(ServerRequest {
                    conn,
                    id,
                    method,
                    params,
                });
            }
        }
    }

    /// Stops the downstream servers (if they were started), then ends the archive.
    pub async fn shutdown(&self) {
        if let Some(f) = self.fleet.get() {
            f.shutdown().await;
        }
        if let Some(a) = self.history.get() {
            let a = a.clone();
            let _ = tokio::task::spawn_blocking(move || a.finish()).await;
        }
    }

    /// Starts archiving this session (unless `history = "off"`): what the bus says of calls,
    /// datasets, server states and approvals reaches the archive's writer. A history folder
    /// that cannot be written is reported and the session serves on without one.
    pub fn start_history(self: &Arc<Self>) {
        let slot = self.store.clone();
        let store: crate::history::archive::StoreHandle = Arc::new(move || slot.try_get());
        let archive = match crate::history::archive::Archive::start(&self.config, store) {
            Ok(Some(a)) => a,
            Ok(None) => return,
            Err(e) => {
                tracing::error!("history is not kept for this session: {e}");
                return;
            }
        };
        if self.history.set(archive.clone()).is_err() {
            return;
        }
        let (backlog, mut live) = self.bus.subscribe_with_backlog();
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            for item in backlog {
                let Some(session) = weak.upgrade() else {
                    return;
                };
                archive_event(&session, &archive, item);
            }
            loop {
                let item = match live.recv().await {
                    Ok(item) => item,
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        archive.send(crate::history::archive::Job::Problem(format!(
                            "{n} session events went by faster than they were archived; some calls or states may be missing"
                        )));
                        continue;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                let Some(session) = weak.upgrade() else {
                    return;
                };
                archive_event(&session, &archive, item);
            }
        });
    }
}
