//! The downstream side: every configured server, started in parallel and supervised, its tools,
//! prompts and resources listed (every page) under stable exposed names, and requests routed to
//! it. This layer knows nothing of upstream clients; what servers send that concerns a client
//! leaves as a [`FleetEvent`].

pub mod connection;
mod entries;
pub mod env;
pub mod guard;
pub mod http;
pub mod naming;
mod noise;
mod probe_echo;
pub mod rate;
mod stamp;
pub mod stdio;
mod supervisor;

use crate::config::{Config, Naming, ServerSpec};
use crate::protocol::{ClientCapabilities, Era};
use connection::{Connection, lock};
use naming::{NameRegistry, Target};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// The lists a server publishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    Tools,
    Prompts,
    Resources,
}

/// Receives fleet events synchronously, in the order servers sent them.
pub type EventSink = Arc<dyn Fn(FleetEvent) + Send + Sync>;

/// What servers send that an upstream client may need, and what a person watching may want to
/// see; the session republishes it.
pub enum FleetEvent {
    /// A server's state changed; `detail` is the error that caused it, if any.
    State {
        server: String,
        state: ServerState,
        detail: Option<String>,
    },
    /// A line a stdio server wrote on stderr.
    Stderr { server: String, line: String },
    /// Something loom decided about a server that a person should be able to read in its log.
    Note { server: String, text: String },
    /// The merged list of this kind changed.
    ListChanged(ListKind),
    /// A notification that is not a list change (progress, log message, resource update…).
    Notification {
        server: String,
        method: String,
        params: Option<Box<RawValue>>,
    },
    /// The server knows none of the subscriptions it was told of: it came up on a new process
    /// or connection (sent before its state is `Up`), or an HTTP server forgot loom's session
    /// and a new one was started on the same connection.
    Renewed { server: String },
    /// A server-to-client request (roots, sampling, elicitation) to answer on `conn`.
    ServerRequest {
        conn: Arc<Connection>,
        id: Box<RawValue>,
        method: String,
        params: Option<Box<RawValue>>,
    },
}

pub use crate::types::events::ServerState;

/// The client capabilities that matter to a server: those loom can relay requests for.
fn only_relayed(caps: &ClientCapabilities) -> ClientCapabilities {
    ClientCapabilities {
        raw: caps
            .raw
            .iter()
            .filter(|(k, _)| matches!(k.as_str(), "roots" | "sampling" | "elicitation"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    }
}

#[derive(Debug, Clone)]
pub struct ServerStatus {
    pub state: ServerState,
    pub era: Option<Era>,
    pub version: Option<String>,
    pub last_error: Option<String>,
    pub tools: usize,
    /// When the server last came up (ISO 8601), while it is up.
    pub up_since: Option<String>,
    /// Failures since loom started, each followed by a restart or the delisting.
    pub failures: u32,
    /// Restarts loom made after a failure since it started (a delisting ends the failures
    /// without one, so a crash loop of `max_restarts = 3` is 4 failures and 3 restarts).
    pub restarts: u32,
    /// When `last_error` happened (ISO 8601).
    pub last_error_at: Option<String>,
}

#[derive(Debug, Default, Clone, PartialEq)]
pub struct Lists {
    pub tools: Vec<Map<String, Value>>,
    pub prompts: Vec<Map<String, Value>>,
    pub resources: Vec<Map<String, Value>>,
    pub templates: Vec<Map<String, Value>>,
}

pub struct ServerHandle {
    pub spec: ServerSpec,
    status: Mutex<ServerStatus>,
    lists: Mutex<Lists>,
    conn: Mutex<Option<Arc<Connection>>>,
    /// Tools of this server left out of the listing (they require tasks), already noted.
    left_out: Mutex<Vec<String>>,
    /// What loom already noted about this server's lists (a duplicate left out, a schema
    /// filled in), so a refresh does not say it again.
    noted: Mutex<std::collections::HashSet<String>>,
    /// A person asked for a restart: the supervisor stops the server and starts it again.
    restart: tokio::sync::Notify,
    /// The instructions and description the server gave when it last came up: what the
    /// primer says of it.
    guidance: Mutex<(Option<String>, Option<String>)>,
    /// How fast its tools may be called (`max_calls_per_second`).
    pub rate: rate::Rate,
}

impl ServerHandle {
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    pub fn status(&self) -> ServerStatus {
        lock(&self.status).clone()
    }

    pub fn lists(&self) -> Lists {
        lock(&self.lists).clone()
    }

    /// One member (`annotations`, `inputSchema`…) of one of this server's tools (by its
    /// original name), without copying the whole list.
    pub fn tool_field(&self, original: &str, field: &str) -> Option<Value> {
        lock(&self.lists)
            .tools
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(original))
            .and_then(|t| t.get(field).cloned())
    }

    /// The live connection, or why there is none, in words the model can act on.
    pub fn connection(&self) -> Result<Arc<Connection>, Unavailable> {
        if let Some(c) = lock(&self.conn).clone()
            && c.closed_reason().is_none()
        {
            return Ok(c);
        }
        let st = self.status();
        Err(Unavailable {
            server: self.name().to_owned(),
            state: st.state,
            why: st.last_error.map(|e| format!(": {e}")).unwrap_or_default(),
        })
    }
}

/// Why a server has no live connection, in words the model can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    pub server: String,
    pub state: ServerState,
    /// `: <last error>`, or empty.
    why: String,
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (server, why) = (&self.server, &self.why);
        match &self.state {
            ServerState::Starting => write!(f, "server `{server}` is still starting{why}"),
            ServerState::Restarting { attempt, max } => write!(
                f,
                "server `{server}` is restarting (attempt {attempt} of {max}){why}; try again shortly"
            ),
            ServerState::Delisted => {
                write!(
                    f,
                    "server `{server}` was delisted after repeated failures{why}"
                )
            }
            ServerState::Stopped => write!(f, "server `{server}` is stopped"),
            ServerState::NeedsAuth => write!(
                f,
                "server `{server}` needs authentication{why}; a person must fix its credentials (bearer_token_env or bearer_token_command) and restart it"
            ),
            ServerState::Up => write!(f, "server `{server}` lost its connection{why}"),
        }
    }
}

impl std::error::Error for Unavailable {}

/// What a person's restart did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restart {
    /// The server is being stopped and started again.
    Restarting,
    /// A delisted server is being started again; its tools return once it is up.
    Relisted,
}

/// Why a restart was not done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RestartRefused {
    #[error("no server named `{0}`")]
    Unknown(String),
    #[error("server `{0}` is starting now; restart it once it is up or has failed")]
    Starting(String),
    #[error("loom is shutting down")]
    ShuttingDown,
}

fn set_state_starting(fleet: &Fleet, server: &ServerHandle) {
    {
        let mut st = lock(&server.status);
        st.state = ServerState::Starting;
        st.up_since = None;
    }
    (fleet.events)(FleetEvent::State {
        server: server.name().into(),
        state: ServerState::Starting,
        detail: None,
    });
}

/// Where an exposed tool or prompt name leads.
pub struct Route {
    pub server: Arc<ServerHandle>,
    pub original: String,
}

/// One tool as the fleet serves it.
#[derive(Debug, Clone)]
pub struct ServedTool {
    pub server: String,
    pub original: String,
    /// The definition, with the exposed name.
    pub tool: Value,
}

pub struct Fleet {
    pub config: Arc<Config>,
    servers: Vec<Arc<ServerHandle>>,
    tool_names: Mutex<NameRegistry>,
    prompt_names: Mutex<NameRegistry>,
    events: EventSink,
    settled: watch::Sender<usize>,
    shutdown: watch::Sender<bool>,
    /// What loom declares to servers it starts: the union of what its clients can answer.
    client_caps: Mutex<ClientCapabilities>,
    log_level: Mutex<Option<String>>,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    started_at: tokio::time::Instant,
    /// Whether the startup naming round is done. Held while a round or a later server's
    /// naming runs, so that no caller passes [`Fleet::wait_startup`] before every name it
    /// could route is given, and no server's new list is missed between the two.
    names_ready: Mutex<bool>,
    /// Bumped whenever what [`Fleet::served_tools`] gives may have changed (a server's tools,
    /// its names, its state), so that what is built from the tools can be kept until then.
    tools_generation: std::sync::atomic::AtomicU64,
}

impl Fleet {
    /// Starts every server in parallel and returns at once.
    pub fn start(
        config: Arc<Config>,
        client_caps: ClientCapabilities,
        events: EventSink,
    ) -> Arc<Fleet> {
        let servers = config
            .servers
            .iter()
            .map(|spec| {
                Arc::new(ServerHandle {
                    spec: spec.clone(),
                    status: Mutex::new(ServerStatus {
                        state: ServerState::Starting,
                        era: None,
                        version: None,
                        last_error: None,
                        tools: 0,
                        up_since: None,
                        failures: 0,
                        restarts: 0,
                        last_error_at: None,
                    }),
                    lists: Mutex::new(Lists::default()),
                    conn: Mutex::new(None),
                    left_out: Mutex::new(Vec::new()),
                    noted: Mutex::new(std::collections::HashSet::new()),
                    restart: tokio::sync::Notify::new(),
                    guidance: Mutex::new((None, None)),
                    rate: rate::Rate::new(spec.max_calls_per_second),
                })
            })
            .collect();
        let fleet = Arc::new(Fleet {
            config,
            servers,
            tool_names: Mutex::new(NameRegistry::default()),
            prompt_names: Mutex::new(NameRegistry::default()),
            events,
            settled: watch::channel(0).0,
            shutdown: watch::channel(false).0,
            client_caps: Mutex::new(only_relayed(&client_caps)),
            log_level: Mutex::new(None),
            tasks: Mutex::new(Vec::new()),
            started_at: tokio::time::Instant::now(),
            names_ready: Mutex::new(false),
            tools_generation: std::sync::atomic::AtomicU64::new(0),
        });
        for server in &fleet.servers {
            let task = tokio::spawn(supervisor::supervise(fleet.clone(), server.clone()));
            lock(&fleet.tasks).push(task);
        }
        fleet
    }

    pub fn servers(&self) -> &[Arc<ServerHandle>] {
        &self.servers
    }

    pub fn server(&self, name: &str) -> Option<&Arc<ServerHandle>> {
        self.servers.iter().find(|s| s.name() == name)
    }

    /// Waits until every server is up or has failed once, or `startup_grace` has passed since
    /// the fleet started (so only the first callers ever wait).
    pub async fn wait_startup(&self) {
        let mut rx = self.settled.subscribe();
        let n = self.servers.len();
        let deadline = self.started_at + self.config.startup_grace;
        let _ = tokio::time::timeout_at(deadline, rx.wait_for(|c| *c >= n)).await;
        // Names are first given out here, in config order, so that which server keeps a bare
        // name (or the unsuffixed one) does not depend on which came up first.
        let mut ready = lock(&self.names_ready);
        if !*ready {
            if self.bare() {
                self.contest_bare_clashes();
            }
            for server in &self.servers {
                let lists = server.lists();
                self.allocate_names(server, &lists);
            }
            *ready = true;
        }
    }

    /// Waits until every server is up or has failed once, for at most `within` since the
    /// fleet started and never past `startup_grace`; whether every one had. Gives out no
    /// names (that waits for the whole grace, [`Fleet::wait_startup`]): a caller that may
    /// wait only briefly, the client's handshake, reads what is known by then.
    pub async fn wait_settled(&self, within: std::time::Duration) -> bool {
        let mut rx = self.settled.subscribe();
        let n = self.servers.len();
        let deadline = self.started_at + within.min(self.config.startup_grace);
        tokio::time::timeout_at(deadline, rx.wait_for(|c| *c >= n))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// Gives names to a server's (new) list entries once the startup naming round is done.
    fn names_for(&self, server: &ServerHandle, lists: &Lists) {
        let ready = lock(&self.names_ready);
        if *ready {
            self.allocate_names(server, lists);
        }
        drop(ready);
    }

    /// The tool and prompt names (bare) that more than one server offers now; with
    /// `naming = "bare"` none of them is given out bare.
    pub fn bare_clashes(&self) -> Vec<naming::BareClash> {
        let lists: Vec<(&str, Lists)> =
            self.servers.iter().map(|s| (s.name(), s.lists())).collect();
        let names = |l: &Vec<Map<String, Value>>| -> Vec<String> {
            l.iter()
                .filter_map(|t| t.get("name").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        };
        let tools: Vec<(&str, Vec<String>)> = self
            .servers
            .iter()
            .zip(&lists)
            .map(|(s, (n, l))| {
                let mut exposed = names(&l.tools);
                exposed.retain(|t| s.spec.tools.exposes(t));
                (*n, exposed)
            })
            .collect();
        let prompts: Vec<(&str, Vec<String>)> =
            lists.iter().map(|(n, l)| (*n, names(&l.prompts))).collect();
        let clashes = |of: &[(&str, Vec<String>)]| {
            naming::bare_clashes(
                of.iter()
                    .map(|(n, names)| (*n, names.iter().map(String::as_str).collect())),
            )
        };
        let mut out = clashes(&tools);
        out.extend(clashes(&prompts).into_iter().map(|mut c| {
            c.prompt = true;
            c
        }));
        out
    }

    /// Keeps every bare name two servers offer from both, and says so in the log.
    fn contest_bare_clashes(&self) {
        for clash in self.bare_clashes() {
            let registry = if clash.prompt {
                &self.prompt_names
            } else {
                &self.tool_names
            };
            lock(registry).contest(&clash.name);
            tracing::warn!("{}", clash.describe());
        }
    }

    fn bare(&self) -> bool {
        self.config.naming == Naming::Bare
    }

    /// Changes with anything [`Fleet::served_tools`] reads: equal generations, equal tools.
    pub fn tools_generation(&self) -> u64 {
        self.tools_generation
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Says that a server's tools, names or state changed.
    fn tools_changed(&self) {
        self.tools_generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// Allocates exposed names for a server's current lists (in listing order).
    fn allocate_names(&self, server: &ServerHandle, lists: &Lists) {
        self.tools_changed();
        let bare = self.bare();
        let mut tools = lock(&self.tool_names);
        for t in &lists.tools {
            if let Some(name) = t.get("name").and_then(Value::as_str)
                && server.spec.tools.exposes(name)
            {
                tools.allocate(
                    &Target {
                        server: server.name().into(),
                        original: name.into(),
                    },
                    bare,
                );
            }
        }
        drop(tools);
        let mut prompts = lock(&self.prompt_names);
        for p in &lists.prompts {
            if let Some(name) = p.get("name").and_then(Value::as_str) {
                prompts.allocate(
                    &Target {
                        server: server.name().into(),
                        original: name.into(),
                    },
                    bare,
                );
            }
        }
    }

    fn listed(&self) -> impl Iterator<Item = &Arc<ServerHandle>> {
        self.servers
            .iter()
            .filter(|s| s.status().state != ServerState::Delisted)
    }

    /// The listed servers a client sees: all, or those `only` names.
    fn listed_for<'a>(
        &'a self,
        only: Option<&'a [String]>,
    ) -> impl Iterator<Item = &'a Arc<ServerHandle>> {
        self.listed()
            .filter(move |s| only.is_none_or(|names| names.iter().any(|n| n == s.name())))
    }

    /// The merged tool list, with exposed names and without `outputSchema` (an envelope could
    /// not satisfy it); every other field is kept as the server sent it.
    pub fn tools(&self, only: Option<&[String]>) -> Vec<Value> {
        self.tools_by_server()
            .into_iter()
            .filter(|(s, _)| only.is_none_or(|names| names.contains(s)))
            .map(|(_, t)| t)
            .collect()
    }

    /// The merged tool list as [`Fleet::tools`] gives it, each with the server that serves it.
    pub fn tools_by_server(&self) -> Vec<(String, Value)> {
        self.served_tools()
            .into_iter()
            .map(|t| (t.server, t.tool))
            .collect()
    }

    /// Every exposed tool with its server and original name; `tool` carries the exposed name
    /// and no `outputSchema` (an envelope could not satisfy it), every other field as sent.
    pub fn served_tools(&self) -> Vec<ServedTool> {
        let names = lock(&self.tool_names);
        let mut out = Vec::new();
        for s in self.listed() {
            for t in &lock(&s.lists).tools {
                let Some(orig) = t.get("name").and_then(Value::as_str) else {
                    continue;
                };
                if !s.spec.tools.exposes(orig) {
                    continue;
                }
                let target = Target {
                    server: s.name().into(),
                    original: orig.into(),
                };
                let Some(exposed) = names.name_of(&target) else {
                    continue;
                };
                let mut t = t.clone();
                t.insert("name".into(), Value::String(exposed.to_owned()));
                t.remove("outputSchema");
                out.push(ServedTool {
                    server: s.name().to_owned(),
                    original: orig.to_owned(),
                    tool: Value::Object(t),
                });
            }
        }
        out
    }

    pub fn prompts(&self, only: Option<&[String]>) -> Vec<Value> {
        let names = lock(&self.prompt_names);
        let mut out = Vec::new();
        for s in self.listed_for(only) {
            for p in &lock(&s.lists).prompts {
                let Some(orig) = p.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let target = Target {
                    server: s.name().into(),
                    original: orig.into(),
                };
                let Some(exposed) = names.name_of(&target) else {
                    continue;
                };
                let mut p = p.clone();
                p.insert("name".into(), Value::String(exposed.to_owned()));
                out.push(Value::Object(p));
            }
        }
        out
    }

    pub fn resources(&self, only: Option<&[String]>) -> Vec<Value> {
        self.listed_for(only)
            .flat_map(|s| lock(&s.lists).resources.clone())
            .map(Value::Object)
            .collect()
    }

    pub fn resource_templates(&self, only: Option<&[String]>) -> Vec<Value> {
        self.listed_for(only)
            .flat_map(|s| lock(&s.lists).templates.clone())
            .map(Value::Object)
            .collect()
    }

    fn route(&self, registry: &Mutex<NameRegistry>, exposed: &str, is_tool: bool) -> Option<Route> {
        let target = lock(registry).resolve(exposed)?.clone();
        let server = self.server(&target.server)?.clone();
        if is_tool && !server.spec.tools.exposes(&target.original) {
            return None;
        }
        if server.status().state == ServerState::Delisted {
            return None;
        }
        Some(Route {
            server,
            original: target.original,
        })
    }

    pub fn route_tool(&self, exposed: &str) -> Option<Route> {
        self.route(&self.tool_names, exposed, true)
    }

    pub fn route_prompt(&self, exposed: &str) -> Option<Route> {
        self.route(&self.prompt_names, exposed, false)
    }

    /// The server that listed `uri`, else the one whose template's fixed prefix matches best.
    pub fn route_resource(&self, uri: &str) -> Option<Arc<ServerHandle>> {
        let servers: Vec<_> = self.listed().cloned().collect();
        for s in &servers {
            if lock(&s.lists)
                .resources
                .iter()
                .any(|r| r.get("uri").and_then(Value::as_str) == Some(uri))
            {
                return Some(s.clone());
            }
        }
        let mut best: Option<(usize, Arc<ServerHandle>)> = None;
        for s in &servers {
            for t in &lock(&s.lists).templates {
                let Some(tpl) = t.get("uriTemplate").and_then(Value::as_str) else {
                    continue;
                };
                let prefix = tpl.split('{').next().unwrap_or("");
                if !prefix.is_empty()
                    && uri.starts_with(prefix)
                    && best.as_ref().is_none_or(|(n, _)| prefix.len() > *n)
                {
                    best = Some((prefix.len(), s.clone()));
                }
            }
        }
        best.map(|(_, s)| s)
    }

    /// Live connections, for fan-out (log level, roots changes).
    pub fn connections(&self) -> Vec<Arc<Connection>> {
        self.servers
            .iter()
            .filter_map(|s| s.connection().ok())
            .collect()
    }

    pub fn set_log_level(&self, level: &str) {
        *lock(&self.log_level) = Some(level.to_owned());
        for c in self.connections() {
            c.set_log_level(Some(level.to_owned()));
            if c.era() == Era::Legacy {
                let params = serde_json::json!({ "level": level });
                let Value::Object(params) = params else {
                    continue;
                };
                let c2 = c.clone();
                tokio::spawn(async move {
                    let _ = c2
                        .call(
                            "logging/setLevel",
                            Some(params),
                            std::time::Duration::from_secs(10),
                        )
                        .await;
                });
            }
        }
    }

    /// What loom declares to the servers it starts now.
    pub fn client_caps(&self) -> ClientCapabilities {
        lock(&self.client_caps).clone()
    }

    /// A client connected with `caps`: what it can answer joins what loom declares to
    /// servers. A legacy server learns capabilities only in its handshake, so each one that is
    /// up is started again once it has no request in flight (not counted as a failure); a
    /// 2026-07-28 server reads them on every request and needs nothing.
    pub fn learn_client_caps(self: &Arc<Self>, caps: &ClientCapabilities) {
        let added: Vec<String> = {
            let mut union = lock(&self.client_caps);
            let mut added = Vec::new();
            for (k, v) in only_relayed(caps).raw {
                if !union.raw.contains_key(&k) {
                    union.raw.insert(k.clone(), v);
                    added.push(k);
                }
            }
            added
        };
        if added.is_empty() {
            return;
        }
        let what = added.join(", ");
        for server in &self.servers {
            let Ok(conn) = server.connection() else {
                continue;
            };
            if conn.era() != Era::Legacy || server.status().state != ServerState::Up {
                continue;
            }
            let fleet = Arc::downgrade(self);
            let server = server.clone();
            let what = what.clone();
            tokio::spawn(async move {
                // Between calls: a restart must not cut one off.
                while conn.requests_waiting() > 0 && conn.closed_reason().is_none() {
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
                let Some(fleet) = fleet.upgrade() else { return };
                if conn.closed_reason().is_some() || *fleet.shutdown.borrow() {
                    return;
                }
                (fleet.events)(FleetEvent::Note {
                    server: server.name().to_owned(),
                    text: format!("started again to announce what clients can answer now: {what}"),
                });
                set_state_starting(&fleet, &server);
                server.restart.notify_one();
            });
        }
    }

    /// Stops every server: stdin closed, then SIGTERM, then SIGKILL of its process group.
    /// Restarts a server at a person's request: a running or restarting one at once (without
    /// counting a failure), a delisted one is supervised afresh and listed again once up.
    pub fn restart(self: &Arc<Self>, name: &str) -> Result<Restart, RestartRefused> {
        let server = self
            .server(name)
            .ok_or_else(|| RestartRefused::Unknown(name.to_owned()))?
            .clone();
        if *self.shutdown.borrow() {
            return Err(RestartRefused::ShuttingDown);
        }
        match server.status().state {
            ServerState::Up | ServerState::Restarting { .. } | ServerState::NeedsAuth => {
                // Starting from now on, for whoever looks next; the supervisor does the rest.
                set_state_starting(self, &server);
                server.restart.notify_one();
                Ok(Restart::Restarting)
            }
            ServerState::Delisted => {
                set_state_starting(self, &server);
                let task = tokio::spawn(supervisor::supervise(self.clone(), server));
                lock(&self.tasks).push(task);
                Ok(Restart::Relisted)
            }
            ServerState::Starting => Err(RestartRefused::Starting(name.to_owned())),
            ServerState::Stopped => Err(RestartRefused::ShuttingDown),
        }
    }

    pub async fn shutdown(&self) {
        self.shutdown.send_replace(true);
        let tasks: Vec<_> = lock(&self.tasks).drain(..).collect();
        let grace = self.config.shutdown_grace * 2 + std::time::Duration::from_secs(2);
        for t in tasks {
            let _ = tokio::time::timeout(grace, t).await;
        }
    }
}
