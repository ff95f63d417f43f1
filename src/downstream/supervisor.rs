//! One task per server: start it, shake hands, list everything, watch it, and restart it with
//! exponential backoff when it dies. Failures are counted over a sliding window, so a crash loop
//! ends in delisting while a long-stable server that crashes once is simply restarted.

use super::connection::{Connection, HandshakeError, Inbound, InboundSink, Opening, lock};
use super::stdio::{StdioLaunch, StdioProcess};
use super::{
    Fleet, FleetEvent, ListKind, Lists, ServerHandle, ServerState, entries, env, http, stdio,
};
use crate::config::TransportSpec;
use crate::jsonrpc;
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

struct Running {
    conn: Arc<Connection>,
    process: Option<StdioProcess>,
}

fn set_state(fleet: &Fleet, server: &ServerHandle, state: ServerState, error: Option<String>) {
    let mut st = lock(&server.status);
    st.state = state.clone();
    st.up_since = (state == ServerState::Up).then(crate::types::time::now_iso);
    if error.is_some() {
        st.last_error = error.clone();
        st.last_error_at = Some(crate::types::time::now_iso());
    }
    drop(st);
    fleet.tools_changed();
    tracing::info!(server = %server.name(), state = %state.label(), error = error.as_deref().unwrap_or(""), "server state");
    (fleet.events)(FleetEvent::State {
        server: server.name().into(),
        state,
        detail: error,
    });
}

pub async fn supervise(fleet: Arc<Fleet>, server: Arc<ServerHandle>) {
    let policy = server.spec.restart.clone();
    let mut failures: VecDeque<Instant> = VecDeque::new();
    let mut consecutive = 0u32;
    let mut settled = false;
    let mut shutdown = fleet.shutdown.subscribe();
    loop {
        let launched = tokio::select! {
            r = launch(&fleet, &server) => r,
            _ = stopping(&mut shutdown) => {
                set_state(&fleet, &server, ServerState::Stopped, None);
                return;
            }
        };
        let (failure, needs_auth) = match launched {
            Ok(mut running) => {
                *lock(&server.conn) = Some(running.conn.clone());
                {
                    let mut st = lock(&server.status);
                    st.last_error = None;
                }
                // The new process or connection knows no subscriptions: they are renewed
                // before anyone can see the server up, so nothing sent after that misses them.
                (fleet.events)(FleetEvent::Renewed {
                    server: server.name().into(),
                });
                set_state(&fleet, &server, ServerState::Up, None);
                announce_guidance(&fleet, &server, &running.conn);
                if !settled {
                    settled = true;
                    fleet.settled.send_modify(|n| *n += 1);
                }
                let started = Instant::now();
                let reason = tokio::select! {
                    reason = running.conn.wait_closed() => reason,
                    _ = server.restart.notified() => {
                        // A person asked (and the state already says starting): not a
                        // failure, so nothing is counted and there is no backoff.
                        stop(&fleet, &mut running).await;
                        continue;
                    }
                    _ = stopping(&mut shutdown) => {
                        stop(&fleet, &mut running).await;
                        set_state(&fleet, &server, ServerState::Stopped, None);
                        return;
                    }
                };
                let needs_auth = running.conn.needs_authentication();
                drop(running);
                if started.elapsed() >= policy.window {
                    failures.clear();
                    consecutive = 0;
                }
                (reason, needs_auth)
            }
            Err(f) => (f.why, f.needs_auth),
        };
        if needs_auth {
            // Restarting cannot fix a refused credential: nothing is counted, and the server
            // waits for a person's restart.
            if !settled {
                settled = true;
                fleet.settled.send_modify(|n| *n += 1);
            }
            set_state(&fleet, &server, ServerState::NeedsAuth, Some(failure));
            tokio::select! {
                _ = server.restart.notified() => continue,
                _ = stopping(&mut shutdown) => {
                    set_state(&fleet, &server, ServerState::Stopped, None);
                    return;
                }
            }
        }
        tracing::warn!(server = %server.name(), "server failed: {failure}");
        {
            let mut st = lock(&server.status);
            st.last_error = Some(failure.clone());
            st.last_error_at = Some(crate::types::time::now_iso());
            st.failures += 1;
        }
        if !settled {
            settled = true;
            fleet.settled.send_modify(|n| *n += 1);
        }
        let now = Instant::now();
        failures.push_back(now);
        while failures
            .front()
            .is_some_and(|t| now.duration_since(*t) > policy.window)
        {
            failures.pop_front();
        }
        if failures.len() as u32 > policy.max_restarts {
            set_state(&fleet, &server, ServerState::Delisted, Some(failure));
            *lock(&server.lists) = Lists::default();
            fleet.tools_changed();
            lock(&server.status).tools = 0;
            for kind in [ListKind::Tools, ListKind::Prompts, ListKind::Resources] {
                (fleet.events)(FleetEvent::ListChanged(kind));
            }
            return;
        }
        consecutive += 1;
        lock(&server.status).restarts += 1;
        set_state(
            &fleet,
            &server,
            ServerState::Restarting {
                attempt: failures.len() as u32,
                max: policy.max_restarts,
            },
            Some(failure),
        );
        let backoff = policy
            .backoff_initial
            .saturating_mul(1u32 << (consecutive - 1).min(16))
            .min(policy.backoff_max);
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            // A person's restart skips the wait.
            _ = server.restart.notified() => {}
            _ = stopping(&mut shutdown) => {
                set_state(&fleet, &server, ServerState::Stopped, None);
                return;
            }
        }
    }
}

/// The primer (the `loom` prompt and `loom://primer`) says what each server is for, from its
/// instructions or description, which are known only once it is up: when they are new or
/// changed, clients are told their prompt and resource lists changed, so that one which read
/// the primer before the servers were up reads it again.
fn announce_guidance(fleet: &Fleet, server: &ServerHandle, conn: &Connection) {
    let now = (conn.instructions(), conn.description());
    let before = std::mem::replace(&mut *lock(&server.guidance), now.clone());
    if before != now {
        for kind in [ListKind::Prompts, ListKind::Resources] {
            (fleet.events)(FleetEvent::ListChanged(kind));
        }
    }
}

/// Resolves once the fleet is shutting down.
async fn stopping(rx: &mut tokio::sync::watch::Receiver<bool>) {
    let stopped = rx.wait_for(|s| *s).await.is_ok();
    if !stopped {
        std::future::pending::<()>().await;
    }
}

/// Why a launch failed, whether the server refused loom's credentials, and whether it never
/// answered `server/discover` (so a fresh process should try `initialize`).
struct Failed {
    why: String,
    needs_auth: bool,
    unanswered: bool,
}

impl From<String> for Failed {
    fn from(why: String) -> Failed {
        Failed {
            why,
            needs_auth: false,
            unanswered: false,
        }
    }
}

/// Starts the server and shakes hands, `server/discover` first. A server that leaves discover
/// unanswered until the deadline is stopped and started afresh with `initialize` alone (each
/// attempt has the whole handshake timeout): `initialize` on the first connection could reach
/// a slow 2026-07-28 server after its discover, which it refuses.
async fn launch(fleet: &Arc<Fleet>, server: &Arc<ServerHandle>) -> Result<Running, Failed> {
    match launch_with(fleet, server, Opening::Discover).await {
        Err(f) if f.unanswered => {
            let text = format!(
                "{}; starting it again to try the initialize handshake on a fresh process",
                f.why
            );
            tracing::warn!(server = %server.name(), "{text}");
            (fleet.events)(FleetEvent::Note {
                server: server.name().to_owned(),
                text,
            });
            launch_with(fleet, server, Opening::Initialize).await
        }
        other => other,
    }
}

/// Starts the server, shakes hands as `opening` says and lists everything, all within the
/// handshake timeout.
async fn launch_with(
    fleet: &Arc<Fleet>,
    server: &Arc<ServerHandle>,
    opening: Opening,
) -> Result<Running, Failed> {
    let spec = &server.spec;
    let caps = fleet.client_caps();
    let inbound: InboundSink = {
        let fleet = Arc::downgrade(fleet);
        let server = Arc::downgrade(server);
        Arc::new(move |conn: &Arc<Connection>, msg: Inbound| {
            if let (Some(fleet), Some(server)) = (fleet.upgrade(), server.upgrade()) {
                on_inbound(&fleet, &server, conn, msg);
            }
        })
    };
    let (conn, process) = match &spec.transport {
        TransportSpec::Stdio {
            command,
            args,
            env: own_env,
            env_passthrough,
            cwd,
        } => {
            let child_env = env::child_env(std::env::vars_os(), env_passthrough, own_env);
            let events = fleet.events.clone();
            let name = spec.name.clone();
            // A child's stderr is its own chatter (banners, progress boxes, tracebacks of
            // tool errors it also answers with): the workbench and the server's log get every
            // line; loom's log only at debug, so `--log-level info` shows loom's own news. A
            // failure still quotes the last line (`server failed: … last stderr: …`).
            let on_stderr: stdio::StderrSink = Arc::new(move |line: &str| {
                tracing::debug!(target: "loom::downstream::stderr", server = %name, "{line}");
                events(FleetEvent::Stderr {
                    server: name.clone(),
                    line: line.to_owned(),
                });
            });
            let launch = StdioLaunch {
                server: &spec.name,
                command,
                args,
                env: &child_env,
                cwd,
                max_line: fleet.config.max_downstream_message_bytes,
                client_caps: caps,
                inbound,
            };
            let (c, p) = stdio::spawn(launch, on_stderr).map_err(|e| e.to_string())?;
            (c, Some(p))
        }
        TransportSpec::Http {
            url,
            headers,
            bearer_token_env,
            bearer_token_command,
        } => {
            let c = http::connect(http::HttpLaunch {
                server: &spec.name,
                url,
                headers,
                bearer_token_env: bearer_token_env.as_deref(),
                bearer_token_command: bearer_token_command.as_deref(),
                max_message: fleet.config.max_downstream_message_bytes,
                client_caps: caps,
                inbound,
            })
            .map_err(|e| e.to_string())?;
            (c, None)
        }
    };
    let mut running = Running {
        conn: conn.clone(),
        process,
    };
    if let Some(level) = lock(&fleet.log_level).clone() {
        conn.set_log_level(Some(level));
    }
    let timeout = spec.handshake_timeout;
    let deadline = Instant::now() + timeout;
    // The handshake keeps to the deadline itself, and says whether it was left unanswered.
    let hs = match conn.handshake(opening, timeout).await {
        Ok(hs) => hs,
        Err(e) => {
            let needs_auth = conn.needs_authentication();
            stop(fleet, &mut running).await;
            return Err(Failed {
                unanswered: matches!(e, HandshakeError::Unanswered { .. }),
                why: e.to_string(),
                needs_auth,
            });
        }
    };
    let setup = async {
        conn.established(&hs);
        // A level the client set before this server came up applies to it too.
        let level = lock(&fleet.log_level).clone();
        if let (Some(level), crate::protocol::Era::Legacy) = (level, hs.era)
            && hs.capabilities.get("logging").is_some()
        {
            let params = serde_json::json!({ "level": level });
            if let serde_json::Value::Object(params) = params {
                let _ = conn.call("logging/setLevel", Some(params), timeout).await;
            }
        }
        {
            let mut st = lock(&server.status);
            st.era = Some(hs.era);
            st.version = Some(hs.version.clone());
        }
        fetch_lists(&conn, &hs.capabilities, timeout).await
    };
    let lists = match tokio::time::timeout_at(deadline, setup).await {
        Ok(Ok(lists)) => lists,
        Ok(Err(why)) => {
            let needs_auth = conn.needs_authentication();
            stop(fleet, &mut running).await;
            return Err(Failed {
                why,
                needs_auth,
                unanswered: false,
            });
        }
        Err(_) => {
            stop(fleet, &mut running).await;
            return Err(format!(
                "no complete handshake within {:.1}s (handshake_timeout)",
                timeout.as_secs_f64()
            )
            .into());
        }
    };
    install_lists(fleet, server, lists);
    Ok(running)
}

async fn fetch_lists(
    conn: &Arc<Connection>,
    caps: &Value,
    timeout: Duration,
) -> Result<Lists, String> {
    let mut lists = Lists::default();
    if caps.get("tools").is_some() {
        lists.tools = conn.list_all("tools/list", "tools", timeout).await?;
    }
    if caps.get("prompts").is_some() {
        lists.prompts = conn.list_all("prompts/list", "prompts", timeout).await?;
    }
    if caps.get("resources").is_some() {
        lists.resources = conn
            .list_all("resources/list", "resources", timeout)
            .await?;
        // Templates are optional even for servers with resources.
        lists.templates = conn
            .list_all("resources/templates/list", "resourceTemplates", timeout)
            .await
            .unwrap_or_default();
    }
    Ok(lists)
}

/// Whether a tool can only be run as a task (`execution.taskSupport: "required"`), which loom
/// does not relay: listing it would offer a tool that every call fails.
fn requires_task(tool: &Map<String, Value>) -> bool {
    tool.get("execution")
        .and_then(|e| e.get("taskSupport"))
        .and_then(Value::as_str)
        == Some("required")
}

/// Replaces a server's lists, allocates names, and announces the kinds that changed. Tools that
/// require tasks are left out, each with a note in the server's log saying why.
fn install_lists(fleet: &Fleet, server: &ServerHandle, mut lists: Lists) {
    tidy_lists(fleet, server, &mut lists);
    let (task_only, tools): (Vec<_>, Vec<_>) = lists.tools.into_iter().partition(requires_task);
    lists.tools = tools;
    let names: Vec<String> = task_only
        .iter()
        .map(|t| {
            t.get("name")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_owned()
        })
        .collect();
    let noted = std::mem::replace(&mut *lock(&server.left_out), names.clone());
    for name in names.iter().filter(|n| !noted.contains(n)) {
        let text = format!(
            "tool {name} is not listed: it requires tasks (execution.taskSupport \"required\"), which loom does not relay"
        );
        tracing::warn!(server = %server.name(), "{text}");
        (fleet.events)(FleetEvent::Note {
            server: server.name().to_owned(),
            text,
        });
    }
    let old = std::mem::replace(&mut *lock(&server.lists), lists.clone());
    fleet.tools_changed();
    fleet.names_for(server, &lists);
    lock(&server.status).tools = lists
        .tools
        .iter()
        .filter(|t| {
            t.get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| server.spec.tools.exposes(n))
        })
        .count();
    if old.tools != lists.tools {
        (fleet.events)(FleetEvent::ListChanged(ListKind::Tools));
    }
    if old.prompts != lists.prompts {
        (fleet.events)(FleetEvent::ListChanged(ListKind::Prompts));
    }
    if old.resources != lists.resources || old.templates != lists.templates {
        (fleet.events)(FleetEvent::ListChanged(ListKind::Resources));
    }
}

/// Leaves out later entries whose name is already listed (an exposed name must not appear
/// twice) and gives a tool without an `inputSchema` the empty object schema, each noted once
/// in the server's log.
fn tidy_lists(fleet: &Fleet, server: &ServerHandle, lists: &mut Lists) {
    let mut notes = Vec::new();
    for (key, what, items) in [
        ("tools", "tool", &mut lists.tools),
        ("prompts", "prompt", &mut lists.prompts),
        ("resources", "resource", &mut lists.resources),
        (
            "resourceTemplates",
            "resource template",
            &mut lists.templates,
        ),
    ] {
        for name in entries::drop_duplicates(items, key) {
            notes.push((
                format!("duplicate {key} {name}"),
                format!("{what} `{name}` is listed more than once; only the first is kept"),
            ));
        }
    }
    for name in entries::default_input_schemas(&mut lists.tools) {
        notes.push((
            format!("schema {name}"),
            format!(
                "tool `{name}` has no inputSchema object; it is listed with {{\"type\":\"object\"}}"
            ),
        ));
    }
    for (id, text) in notes {
        if !lock(&server.noted).insert(id) {
            continue;
        }
        tracing::warn!(server = %server.name(), "{text}");
        (fleet.events)(FleetEvent::Note {
            server: server.name().to_owned(),
            text,
        });
    }
}

async fn refresh(
    fleet: Arc<Fleet>,
    server: Arc<ServerHandle>,
    conn: Arc<Connection>,
    kind: ListKind,
) {
    let timeout = server.spec.handshake_timeout;
    let mut lists = server.lists();
    let result = match kind {
        ListKind::Tools => conn
            .list_all("tools/list", "tools", timeout)
            .await
            .map(|t| lists.tools = t),
        ListKind::Prompts => conn
            .list_all("prompts/list", "prompts", timeout)
            .await
            .map(|p| lists.prompts = p),
        ListKind::Resources => match conn.list_all("resources/list", "resources", timeout).await {
            Ok(r) => {
                lists.resources = r;
                lists.templates = conn
                    .list_all("resources/templates/list", "resourceTemplates", timeout)
                    .await
                    .unwrap_or_default();
                Ok(())
            }
            Err(e) => Err(e),
        },
    };
    match result {
        Ok(()) => install_lists(&fleet, &server, lists),
        Err(e) => tracing::warn!(server = %server.name(), "refreshing the list failed: {e}"),
    }
}

/// Routes what the server sends, in arrival order: list changes refresh that server only;
/// `ping` is answered here; everything else goes to the upstream side at once.
fn on_inbound(
    fleet: &Arc<Fleet>,
    server: &Arc<ServerHandle>,
    conn: &Arc<Connection>,
    msg: Inbound,
) {
    match msg {
        Inbound::Notification { method, params } => {
            let kind = match method.as_str() {
                "notifications/tools/list_changed" => Some(ListKind::Tools),
                "notifications/prompts/list_changed" => Some(ListKind::Prompts),
                "notifications/resources/list_changed" => Some(ListKind::Resources),
                _ => None,
            };
            match kind {
                Some(kind) => {
                    tokio::spawn(refresh(fleet.clone(), server.clone(), conn.clone(), kind));
                }
                None => (fleet.events)(FleetEvent::Notification {
                    server: server.name().into(),
                    method,
                    params,
                }),
            }
        }
        Inbound::Renewed => {
            // The level a client set applies to the new session too.
            let level = lock(&fleet.log_level).clone();
            if let Some(level) = level
                .filter(|_| conn.era() == crate::protocol::Era::Legacy && conn.takes_log_level())
                && let serde_json::Value::Object(params) = serde_json::json!({ "level": level })
            {
                drop(conn.send_request("logging/setLevel", Some(params)));
            }
            (fleet.events)(FleetEvent::Note {
                server: server.name().into(),
                text: "the server forgot loom's session; a new one was started and told again what the old one knew".into(),
            });
            (fleet.events)(FleetEvent::Renewed {
                server: server.name().into(),
            });
        }
        Inbound::Request { id, method, params } => {
            if method == "ping" {
                conn.respond(&id, Ok(&jsonrpc::to_raw(&serde_json::json!({}))));
            } else {
                (fleet.events)(FleetEvent::ServerRequest {
                    conn: conn.clone(),
                    id,
                    method,
                    params,
                });
            }
        }
    }
}

/// Graceful stop: close stdin (or end the HTTP session), then SIGTERM, then kill the group.
async fn stop(fleet: &Fleet, running: &mut Running) {
    let grace = fleet.config.shutdown_grace;
    running.conn.begin_shutdown().await;
    let Some(process) = running.process.as_mut() else {
        running.conn.close("stopped by loom");
        return;
    };
    if tokio::time::timeout(grace, running.conn.wait_closed())
        .await
        .is_ok()
    {
        return;
    }
    process.terminate();
    if tokio::time::timeout(grace, running.conn.wait_closed())
        .await
        .is_ok()
    {
        return;
    }
    process.kill();
    let _ = tokio::time::timeout(Duration::from_secs(1), running.conn.wait_closed()).await;
    running.conn.close("stopped by loom");
}
