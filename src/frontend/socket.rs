//! The session socket: a Unix socket per running loom in a folder only its user can enter
//! (`$XDG_RUNTIME_DIR/loom/`, else `/tmp/loom-<uid>/`, mode 0700, socket 0600). A peer from
//! another user id is refused by its kernel credentials, whatever the file modes say. The
//! socket speaks MCP (each connection is its own client of the shared session) plus loom's
//! workbench methods (`loom/hello`, `loom/request`, `loom/subscribe` and `loom/event`
//! notifications). Beside each socket a small JSON file says what the session is; a socket
//! whose process is gone is stale and is removed by whoever finds it.

use super::engine::{
    Engine, EngineError, EngineFuture, EventFeed, Origin, Reply, Request, WORKBENCH_PROTOCOL,
};
use super::peer::{Ancestry, ancestry};
use crate::config::ListingMode;
use crate::downstream::connection::lock;
use crate::jsonrpc::{self, Line, LineReader, RawMessage, code};
use crate::session::Session;
use crate::types::events::Caller;
use crate::upstream::ClientSession;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;

/// What `loom sessions` shows of a running session.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SessionEntry {
    pub pid: u32,
    pub config: String,
    pub started_at: String,
    pub servers: Vec<String>,
    pub socket: PathBuf,
    /// `serve` or `tui`.
    pub kind: String,
    /// The URL MCP is served at over HTTP, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<String>,
}

use crate::folders::uid;

/// The per-user folder holding session sockets, created 0700 and checked to be ours.
pub fn runtime_dir() -> std::io::Result<PathBuf> {
    let dir = crate::folders::runtime_dir();
    // Created 0700 by mkdir itself: no moment at which another user can enter it.
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(&dir)?;
    use std::os::unix::fs::MetadataExt;
    if !meta.is_dir() || meta.uid() != uid() {
        return Err(std::io::Error::other(format!(
            "{} is not a folder owned by this user; refusing to use it",
            dir.display()
        )));
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    Ok(dir)
}

fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let found = unsafe { libc::kill(pid as libc::pid_t, 0) } == 0;
    found || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Whether `path` is a Unix socket itself (not a symlink to one, not a regular file).
fn is_socket(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

/// Whether `path` is named as a session's description is (`<pid>.json`). The runtime folder
/// may be the data folder too (one `XDG_*` folder for both): other files there, such as the
/// workbench's `editor-tabs.json`, are never read or removed as sessions.
fn is_session_description(path: &Path) -> bool {
    path.extension().and_then(|x| x.to_str()) == Some("json")
        && path
            .file_stem()
            .and_then(|s| s.to_str())
            .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
}

/// Running sessions of this user, removing the files of any whose process is gone.
pub fn sessions() -> Vec<SessionEntry> {
    let Ok(dir) = runtime_dir() else {
        return Vec::new();
    };
    let Ok(read) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in read.flatten() {
        let path = e.path();
        if !is_session_description(&path) {
            continue;
        }
        // A description belongs to the socket beside it: whatever path its text names, that
        // is the socket used, and only files in this folder are ever removed.
        let own_socket = path.with_extension("sock");
        let entry = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<SessionEntry>(&t).ok())
            .map(|s| SessionEntry {
                socket: own_socket.clone(),
                ..s
            });
        match entry {
            Some(s) if alive(s.pid) && is_socket(&own_socket) => out.push(s),
            Some(_) => {
                if is_socket(&own_socket) {
                    let _ = std::fs::remove_file(&own_socket);
                }
                let _ = std::fs::remove_file(&path);
            }
            None => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    // Sockets without a description (a process killed mid-start) are stale too, and so is
    // the HTTP token file an older loom wrote beside its socket once its process is gone.
    if let Ok(read) = std::fs::read_dir(&dir) {
        for e in read.flatten() {
            let p = e.path();
            let pid = p
                .file_stem()
                .and_then(|s| s.to_str())
                .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|s| s.parse::<u32>().ok());
            let stale = match p.extension().and_then(|x| x.to_str()) {
                Some("sock") => {
                    is_socket(&p) && !p.with_extension("json").exists() && !pid.is_some_and(alive)
                }
                Some("token") => {
                    pid.is_some_and(|pid| !alive(pid))
                        && std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file())
                }
                _ => false,
            };
            if stale {
                let _ = std::fs::remove_file(&p);
            }
        }
    }
    out.sort_by_key(|s| s.pid);
    out
}

/// Why no one session could be chosen, with the sessions there are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NoSession(pub String);

/// The one session `arg` names (a pid or a socket path), or the only one running.
pub fn resolve(arg: Option<&str>) -> Result<SessionEntry, NoSession> {
    let all = sessions();
    let listing = |all: &[SessionEntry]| {
        all.iter()
            .map(|s| {
                format!(
                    "  {}  {}  started {}  servers: {}",
                    s.pid,
                    s.config,
                    s.started_at,
                    s.servers.join(", ")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    match arg {
        Some(a) => all
            .iter()
            .find(|s| s.pid.to_string() == a || s.socket == Path::new(a))
            .cloned()
            .ok_or_else(|| {
                NoSession(if all.is_empty() {
                    format!("no session `{a}`: no loom session is running")
                } else {
                    format!("no session `{a}`; running sessions:\n{}", listing(&all))
                })
            }),
        None => match all.len() {
            0 => Err(NoSession(
                "no loom session is running (start one with `loom tui` or `loom serve`)".into(),
            )),
            1 => Ok(all[0].clone()),
            _ => Err(NoSession(format!(
                "{} loom sessions are running; name one by its pid:\n{}",
                all.len(),
                listing(&all)
            ))),
        },
    }
}

/// The listening socket of this process; its files are removed when it is dropped.
pub struct SessionSocket {
    pub entry: SessionEntry,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SessionSocket {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.entry.socket);
        let _ = std::fs::remove_file(self.entry.socket.with_extension("json"));
    }
}

impl SessionSocket {
    /// Adds the HTTP surface's URL to what `loom sessions` shows.
    pub fn announce_http(&mut self, url: String) -> std::io::Result<()> {
        self.entry.http = Some(url);
        write_entry(&self.entry)
    }
}

/// Writes a session's description beside its socket, whole or not at all.
fn write_entry(entry: &SessionEntry) -> std::io::Result<()> {
    let desc = entry.socket.with_extension("json");
    let tmp = entry.socket.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(entry).unwrap_or_default())?;
    std::fs::rename(&tmp, &desc)
}

/// Opens this process's session socket and serves it until dropped.
pub fn listen(
    session: Arc<Session>,
    engine: Arc<dyn Engine>,
    kind: &str,
) -> std::io::Result<SessionSocket> {
    let dir = runtime_dir()?;
    sessions(); // sweep stale ones while we are here
    let pid = std::process::id();
    let path = dir.join(format!("{pid}.sock"));
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    let entry = SessionEntry {
        pid,
        config: session.config_label(),
        started_at: session.started_at.clone(),
        servers: session.server_names(),
        socket: path.clone(),
        kind: kind.to_owned(),
        http: None,
    };
    write_entry(&entry)?;
    let me = uid();
    let task = tokio::spawn(async move {
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of descriptors and the like: wait instead of spinning.
                    tracing::warn!("session socket accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            };
            let cred = stream.peer_cred().ok();
            let peer = cred.map(|c| c.uid());
            if peer == Some(me) {
                // A server this session started runs as the same user; it must not approve its
                // own calls or call tools as the human. The guard is the subreaper of each
                // server, so a double-forked descendant still has this process as an ancestor.
                // When the kernel's answer cannot be read, the peer is refused.
                let ancestry = match cred.and_then(|c| c.pid()) {
                    Some(pid) if pid > 0 => ancestry(pid as u32, std::process::id()),
                    _ => Ancestry::Unknown("the kernel gave no process id for the peer".into()),
                };
                let why = super::peer::refusal(ancestry, "socket");
                if let Some(why) = why {
                    tracing::warn!("session socket: {why}");
                    tokio::spawn(refuse_with(stream, why));
                    continue;
                }
            }
            if peer != Some(me) {
                tracing::warn!(
                    "refused a session-socket connection from uid {peer:?} (this session belongs to uid {me})"
                );
                tokio::spawn(refuse(stream, peer));
                continue;
            }
            // Who decides at this connection, in words, for the record of approvals.
            let terminal = match cred.and_then(|c| c.pid()) {
                Some(pid) if pid > 0 => super::engine::terminal_words("loom attach", pid as u32),
                _ => "loom attach".to_owned(),
            };
            tokio::spawn(serve_connection(
                session.clone(),
                engine.clone(),
                stream,
                terminal,
            ));
        }
    });
    Ok(SessionSocket { entry, task })
}

async fn refuse(stream: UnixStream, peer: Option<u32>) {
    let who = peer
        .map(|p| p.to_string())
        .unwrap_or_else(|| "unknown".into());
    refuse_with(
        stream,
        format!("refused: this loom session belongs to another user (your uid: {who})"),
    )
    .await
}

async fn refuse_with(mut stream: UnixStream, why: String) {
    let msg = jsonrpc::error_response(&jsonrpc::raw_null(), code::INVALID_REQUEST, &why, None);
    let _ = stream.write_all(format!("{msg}\n").as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// One socket connection: MCP for the session, plus the workbench methods.
async fn serve_connection(
    session: Arc<Session>,
    engine: Arc<dyn Engine>,
    stream: UnixStream,
    terminal: String,
) {
    let (read, write) = stream.into_split();
    let (events_tx, events_rx) = mpsc::channel::<String>(EVENT_QUEUE);
    let (out_tx, writer) = line_writer(write, Some(events_rx));
    let client = ClientSession::new(session.clone(), out_tx.clone(), Caller::Model);
    client.describe_transport("session socket".into());
    let mut lines = LineReader::new(
        BufReader::with_capacity(64 * 1024, read),
        session.config.max_message_bytes,
    );
    let mut feed_task: Option<tokio::task::JoinHandle<()>> = None;
    // Set by `loom connect`: the connection carries an MCP client's messages only, so the
    // workbench methods are not its to call (a model must not approve its own calls).
    let mut mcp_only = false;
    static CONNECTIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let connection = CONNECTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    loop {
        match lines.next_line().await {
            Ok(Some(Line::Complete(bytes))) => {
                let workbench = if mcp_only {
                    None
                } else {
                    workbench_message(&bytes)
                };
                if let Some(msg) = workbench {
                    if msg.method.as_deref() == Some(BRIDGE_METHOD) {
                        // `loom connect [--listing MODE]`: an MCP client's connection, with
                        // its listing mode.
                        mcp_only = true;
                        let listing = msg
                            .params
                            .as_deref()
                            .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
                            .and_then(|p| p.get("listing").cloned());
                        match listing
                            .as_ref()
                            .map(|l| l.as_str().and_then(ListingMode::parse))
                        {
                            Some(Some(m)) => client.set_listing_mode(m),
                            Some(None) => tracing::warn!(
                                "loom connect asked for an unknown listing mode; the config's applies"
                            ),
                            None => {}
                        }
                        continue;
                    }
                    let link = Link {
                        out: &out_tx,
                        events: &events_tx,
                        terminal: &terminal,
                        connection,
                    };
                    handle_workbench(&engine, msg, link, &mut feed_task);
                } else {
                    client.handle_line(&bytes).await;
                }
            }
            Ok(Some(Line::TooLong { prefix, len })) => client.handle_oversize(&prefix, len),
            Ok(None) | Err(_) => break,
        }
    }
    if let Some(t) = feed_task {
        t.abort();
    }
    engine.closed(connection);
    client.close();
    drop(client);
    drop(out_tx);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), writer).await;
}

/// A request or notification whose method starts with `loom/`.
fn workbench_message(bytes: &[u8]) -> Option<RawMessage> {
    // Cheap test before parsing: MCP traffic never names a loom/ method.
    let text = std::str::from_utf8(bytes).ok()?;
    if !text.contains("\"loom/") {
        return None;
    }
    let msg = RawMessage::parse(bytes).ok()?;
    msg.method.as_deref()?.starts_with("loom/").then_some(msg)
}

/// Where a workbench connection's answers and events go, and the terminal it runs in.
struct Link<'a> {
    out: &'a mpsc::UnboundedSender<String>,
    events: &'a mpsc::Sender<String>,
    terminal: &'a str,
    /// This connection, so the results it runs are its own and go when it closes.
    connection: u64,
}

fn handle_workbench(
    engine: &Arc<dyn Engine>,
    msg: RawMessage,
    link: Link<'_>,
    feed_task: &mut Option<tokio::task::JoinHandle<()>>,
) {
    let Link {
        out,
        events,
        terminal,
        connection,
    } = link;
    let Some(id) = msg.id else { return };
    let method = msg.method.unwrap_or_default();
    let params: Value = msg
        .params
        .as_deref()
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or(Value::Null);
    let reply = |result: Result<Value, (i64, String, Option<Value>)>| match result {
        Ok(v) => jsonrpc::response(&id, &jsonrpc::to_raw(&v)),
        Err((c, m, d)) => jsonrpc::error_response(&id, c, &m, d),
    };
    match method.as_str() {
        "loom/hello" => {
            let theirs = params["protocol"].as_u64();
            let line = if theirs == Some(WORKBENCH_PROTOCOL as u64) {
                reply(Ok(
                    json!({ "protocol": WORKBENCH_PROTOCOL, "pid": std::process::id() }),
                ))
            } else {
                let theirs = theirs
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "none".into());
                reply(Err((
                    code::INVALID_REQUEST,
                    format!(
                        "workbench protocol mismatch: this session speaks version {WORKBENCH_PROTOCOL}, the attaching loom speaks version {theirs}; use the same loom build for both"
                    ),
                    Some(json!({ "supported": WORKBENCH_PROTOCOL, "requested": theirs })),
                )))
            };
            let _ = out.send(line);
        }
        "loom/subscribe" => {
            let human = params["human"].as_bool().unwrap_or(true);
            let EventFeed {
                backlog,
                mut live,
                presence,
            } = engine.events(human);
            let _ = out.send(reply(Ok(json!({ "backlog": backlog }))));
            let out = out.clone();
            if let Some(old) = feed_task.take() {
                old.abort();
            }
            let events = events.clone();
            *feed_task = Some(tokio::spawn(async move {
                // The attacher counts as present for as long as its connection lives (this task
                // is aborted when it ends), even when it reads slowly: a waiting call is then
                // decided by that person or denied at approval_timeout, never settled by the
                // unattended policy behind the back of someone who is still there.
                let _presence = presence;
                let mut behind = false;
                while let Some(ev) = live.recv().await {
                    let is_prompt = matches!(
                        ev.event,
                        crate::session::Event::ApprovalRequested(_)
                            | crate::session::Event::ApprovalSettled { .. }
                    );
                    let params = jsonrpc::to_raw(&ev);
                    let line = jsonrpc::notification("loom/event", Some(&params));
                    if behind {
                        // Prompts still reach a workbench that fell behind: they are few, and a
                        // person must see what waits for them.
                        if is_prompt && out.send(line).is_err() {
                            break;
                        }
                        continue;
                    }
                    match events.try_send(line) {
                        Ok(()) => {}
                        Err(mpsc::error::TrySendError::Full(line)) => {
                            tracing::warn!(
                                "an attached workbench stopped reading events; only approval prompts still go to it"
                            );
                            let note = jsonrpc::to_raw(
                                &json!({ "reason": "the workbench fell too far behind; events stopped except approval prompts" }),
                            );
                            let _ = out.send(jsonrpc::notification("loom/overflow", Some(&note)));
                            behind = true;
                            if is_prompt && out.send(line).is_err() {
                                break;
                            }
                        }
                        Err(mpsc::error::TrySendError::Closed(_)) => break,
                    }
                }
            }));
        }
        "loom/request" => match serde_json::from_value::<Request>(params) {
            Ok(req) => {
                let fut = engine.request_from(
                    req,
                    Origin {
                        terminal: terminal.to_owned(),
                        connection,
                    },
                );
                let out = out.clone();
                tokio::spawn(async move {
                    let line = match fut.await {
                        Ok(r) => jsonrpc::response(&id, &jsonrpc::to_raw(&r)),
                        Err(e) => jsonrpc::error_response(
                            &id,
                            code::INTERNAL_ERROR,
                            &e.to_string(),
                            serde_json::to_value(&e).ok(),
                        ),
                    };
                    let _ = out.send(line);
                });
            }
            Err(e) => {
                let _ = out.send(reply(Err((
                    code::INVALID_PARAMS,
                    format!("not a workbench request: {e}"),
                    None,
                ))));
            }
        },
        other => {
            let _ = out.send(reply(Err((
                code::METHOD_NOT_FOUND,
                format!("unknown workbench method {other}"),
                None,
            ))));
        }
    }
}

async fn dial(entry: &SessionEntry) -> anyhow::Result<UnixStream> {
    UnixStream::connect(&entry.socket).await.map_err(|e| {
        anyhow::anyhow!(
            "cannot connect to session {} at {}: {e}",
            entry.pid,
            entry.socket.display()
        )
    })
}

/// A task writing each queued message as one line; it ends when every sender is gone.
/// Replies go through `tx`; event notifications, when `events` is given, through that bounded
/// queue, so an attacher that stops reading cannot make loom hold an endless backlog.
fn line_writer(
    mut write: tokio::net::unix::OwnedWriteHalf,
    mut events: Option<mpsc::Receiver<String>>,
) -> (mpsc::UnboundedSender<String>, tokio::task::JoinHandle<()>) {
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let task = tokio::spawn(async move {
        loop {
            let next = match &mut events {
                Some(ev) => tokio::select! {
                    biased;
                    l = rx.recv() => l,
                    l = ev.recv() => match l {
                        Some(l) => Some(l),
                        None => { events = None; continue; }
                    },
                },
                None => rx.recv().await,
            };
            let Some(mut line) = next else { break };
            line.push('\n');
            if write.write_all(line.as_bytes()).await.is_err() {
                break;
            }
        }
    });
    (tx, task)
}

/// Event notifications queued for one attacher before it counts as stuck.
const EVENT_QUEUE: usize = 8192;

/// The notification `loom connect` sends before anything its MCP client writes: from then on
/// the connection is that client's alone, and a `loom/…` method on it is answered as stdio
/// answers it (method not found). Its params may name the listing mode (`--listing`).
const BRIDGE_METHOD: &str = "loom/connect";

/// `loom connect`: stdio to the session socket, byte for byte, after one notification that
/// says the connection is an MCP client's (with `listing`, in that listing mode).
pub async fn bridge(entry: &SessionEntry, listing: Option<ListingMode>) -> anyhow::Result<()> {
    let stream = dial(entry).await?;
    let (mut r, mut w) = stream.into_split();
    let params = match listing {
        Some(mode) => json!({ "listing": mode.as_str() }),
        None => json!({}),
    };
    let line = jsonrpc::notification(BRIDGE_METHOD, Some(&jsonrpc::to_raw(&params)));
    w.write_all(format!("{line}\n").as_bytes()).await?;
    let up = tokio::spawn(async move {
        let mut stdin = super::pipe::stdin();
        let _ = tokio::io::copy(&mut stdin, &mut w).await;
        let _ = w.shutdown().await;
    });
    let mut stdout = super::pipe::stdout();
    // Flush per chunk: an MCP client waits on each line.
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        use tokio::io::AsyncReadExt;
        let n = r.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        stdout.write_all(&buf[..n]).await?;
        stdout.flush().await?;
    }
    up.abort();
    Ok(())
}

type Waiting = crate::jsonrpc::pending::Pending<Result<Value, EngineError>>;

/// The Engine API over a session socket (`loom attach`, `loom query`, `loom export`).
pub struct RemoteEngine {
    out: mpsc::UnboundedSender<String>,
    waiting: Waiting,
    events: Mutex<Option<Subscription>>,
}

/// The workbench's event subscription: its request id, and where events go.
struct Subscription {
    id: u64,
    tx: mpsc::UnboundedSender<crate::session::Sequenced>,
}

impl RemoteEngine {
    /// Connects and checks that both sides speak the same workbench protocol.
    pub async fn connect(entry: &SessionEntry) -> anyhow::Result<Arc<RemoteEngine>> {
        let stream = dial(entry).await?;
        let (read, write) = stream.into_split();
        let (out, _writer) = line_writer(write, None);
        let engine = Arc::new(RemoteEngine {
            out,
            waiting: Waiting::default(),
            events: Mutex::new(None),
        });
        let me = Arc::downgrade(&engine);
        tokio::spawn(async move {
            let mut lines = LineReader::new(BufReader::new(read), usize::MAX / 2);
            while let Ok(Some(Line::Complete(bytes))) = lines.next_line().await {
                let Some(me) = me.upgrade() else { break };
                me.on_line(&bytes);
            }
            if let Some(me) = me.upgrade() {
                me.waiting
                    .close(|| Err(EngineError::Disconnected("the session ended".into())));
                lock(&me.events).take();
            }
        });
        let hello = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            engine.call("loom/hello", json!({ "protocol": WORKBENCH_PROTOCOL })),
        )
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "session {} did not answer within 10 s (is it stopped?)",
                entry.pid
            )
        })?
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        tracing::debug!("attached: {hello}");
        Ok(engine)
    }

    fn on_line(&self, bytes: &[u8]) {
        let Ok(v) = serde_json::from_slice::<Value>(bytes) else {
            return;
        };
        if v.get("method").and_then(Value::as_str) == Some("loom/event") {
            if let Ok(ev) = serde_json::from_value::<crate::session::Sequenced>(v["params"].clone())
                && let Some(sub) = lock(&self.events).as_ref()
            {
                let _ = sub.tx.send(ev);
            }
            return;
        }
        let Some(id) = v.get("id").and_then(Value::as_u64) else {
            return;
        };
        // The subscription's reply carries the backlog; it is handed on here, in line order,
        // so it reaches the workbench before any live event.
        if let Some(sub) = lock(&self.events).as_ref()
            && sub.id == id
        {
            let backlog = serde_json::from_value::<Vec<crate::session::Sequenced>>(
                v["result"]["backlog"].clone(),
            )
            .unwrap_or_default();
            for ev in backlog {
                let _ = sub.tx.send(ev);
            }
            return;
        }
        let r = match (v.get("result"), v.get("error")) {
            (Some(r), _) => Ok(r.clone()),
            (_, Some(e)) => Err(e
                .get("data")
                .and_then(|d| serde_json::from_value::<EngineError>(d.clone()).ok())
                .unwrap_or_else(|| e["message"].as_str().unwrap_or("failed").into())),
            _ => Err("malformed reply from the session".into()),
        };
        self.waiting.resolve(id, r);
    }

    fn call(
        &self,
        method: &str,
        params: Value,
    ) -> impl std::future::Future<Output = Result<Value, EngineError>> + Send + 'static {
        let ended = || Err(EngineError::Disconnected("the session ended".into()));
        // Registered before it is sent: the reader's close answers it if the session goes.
        let (id, rx) = self.waiting.register(ended);
        let line =
            json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string();
        if self.out.send(line).is_err() {
            self.waiting.resolve(id, ended());
        }
        async move {
            rx.await.unwrap_or_else(|_| {
                Err(EngineError::Disconnected(
                    "the session connection is closed".into(),
                ))
            })
        }
    }
}

impl Engine for RemoteEngine {
    fn request(&self, request: Request) -> EngineFuture {
        let params = serde_json::to_value(&request).unwrap_or(Value::Null);
        let fut = self.call("loom/request", params);
        Box::pin(async move {
            let v = fut.await?;
            serde_json::from_value::<Reply>(v)
                .map_err(|e| EngineError::Failed(format!("unexpected reply: {e}")))
        })
    }

    fn events(&self, human: bool) -> EventFeed {
        let (tx, live) = mpsc::unbounded_channel();
        let id = self.waiting.next_id();
        *lock(&self.events) = Some(Subscription { id, tx });
        let line = json!({ "jsonrpc": "2.0", "id": id, "method": "loom/subscribe", "params": { "human": human } })
            .to_string();
        let _ = self.out.send(line);
        // Presence is held by the session side of the connection.
        EventFeed {
            backlog: Vec::new(),
            live,
            presence: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_session_description;
    use std::path::Path;

    #[test]
    fn only_pid_named_files_are_taken_for_sessions() {
        assert!(is_session_description(Path::new("/run/loom/4242.json")));
        for other in [
            "/run/loom/editor-tabs.json",
            "/run/loom/.json",
            "/run/loom/4242.sock",
            "/run/loom/sql-history.jsonl",
            "/run/loom/12a.json",
        ] {
            assert!(!is_session_description(Path::new(other)), "{other}");
        }
    }
}
