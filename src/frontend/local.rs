//! The Engine API in-process: the workbench of `loom tui` talks to the session it runs in.
//! A human's tool call goes through a client of its own on the same routing as the model's
//! calls (so it is logged, intercepted and shown the same way), marked as the human's.

use super::engine::{
    BlobView, DatasetView, Engine, EngineError, EngineFuture, EventFeed, Origin, Reply, Request,
    ServerView, SessionInfo, WORKBENCH_PROTOCOL,
};
use crate::protocol::ClientCapabilities;
use crate::session::Session;
use crate::types::data::MemoryView;
use crate::types::events::Caller;
use crate::upstream::ClientSession;
use crate::upstream::tools;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::mpsc;

type Pending = Arc<crate::jsonrpc::pending::Pending<Value>>;

impl From<crate::store::StoreError> for EngineError {
    fn from(e: crate::store::StoreError) -> Self {
        match e {
            crate::store::StoreError::UnknownDataset(_) => EngineError::Unknown(e.to_string()),
            crate::store::StoreError::ResultDropped(why) => EngineError::Dropped(why),
            crate::store::StoreError::Cancelled => EngineError::Cancelled(e.to_string()),
            e => EngineError::Failed(e.to_string()),
        }
    }
}

impl From<crate::session::StoreUnavailable> for EngineError {
    fn from(e: crate::session::StoreUnavailable) -> Self {
        EngineError::Failed(e.0)
    }
}

pub struct LocalEngine {
    inner: Arc<Inner>,
}

struct Inner {
    session: Arc<Session>,
    human: Arc<ClientSession>,
    pending: Pending,
}

impl LocalEngine {
    /// An engine on `session`. It does not start the servers: the first MCP client does (its
    /// capabilities are what loom declares), or [`LocalEngine::start_servers`].
    pub fn new(session: Arc<Session>) -> Arc<LocalEngine> {
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let pending: Pending = Arc::default();
        let waiting = pending.clone();
        tokio::spawn(async move {
            while let Some(line) = rx.recv().await {
                let Ok(v) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if let Some(id) = v.get("id").and_then(Value::as_u64) {
                    waiting.resolve(id, v);
                }
            }
        });
        let human = ClientSession::new(session.clone(), tx, Caller::Human);
        Arc::new(LocalEngine {
            inner: Arc::new(Inner {
                session,
                human,
                pending,
            }),
        })
    }

    /// Starts the servers now, declaring no client capabilities (the workbench owns them).
    pub async fn start_servers(&self) {
        self.inner
            .session
            .ensure_fleet(ClientCapabilities::default())
            .await;
    }
}

impl Inner {
    async fn call_tool(&self, name: String, arguments: Value) -> Result<Reply, EngineError> {
        // Never closed: the session answers every call it is handed.
        let (id, rx) = self.pending.register(|| Value::Null);
        let line = json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": name, "arguments": arguments },
        })
        .to_string();
        self.human.handle_line(line.as_bytes()).await;
        let reply = rx.await.map_err(|_| {
            EngineError::Disconnected("the session stopped before the call finished".into())
        })?;
        match (reply.get("result"), reply.get("error")) {
            (Some(r), _) => Ok(Reply::ToolResult { result: r.clone() }),
            (None, Some(e)) => Err(e["message"].as_str().unwrap_or("call failed").into()),
            _ => Err("malformed reply".into()),
        }
    }

    /// Answers one request; `origin` says where it was made when not in this process.
    async fn handle(
        self: Arc<Self>,
        request: Request,
        origin: Option<Origin>,
    ) -> Result<Reply, EngineError> {
        let session = self.session.clone();
        let connection = origin
            .as_ref()
            .map_or(crate::store::results::LOCAL_CONNECTION, |o| o.connection);
        let terminal = origin.map(|o| o.terminal);
        match request {
            Request::Session => Ok(Reply::Session(Box::new(SessionInfo {
                pid: std::process::id(),
                config: session.config_label(),
                started_at: session.started_at.clone(),
                servers: session.server_names(),
                protocol: WORKBENCH_PROTOCOL,
                clients: session.connected_clients() as u32,
                export_dir: session.config.export_dir.display().to_string(),
            }))),
            Request::Servers => Ok(Reply::Servers {
                servers: servers(&session),
            }),
            Request::Calls { limit } => Ok(Reply::Calls {
                calls: session.calls.recent(limit),
            }),
            Request::CallDetail { call } => Ok(Reply::CallDetail {
                record: session.calls.get(call).map(Box::new),
            }),
            Request::Datasets => Ok(Reply::Datasets {
                datasets: session
                    .store
                    .try_get()
                    .map(|s| s.datasets().into_iter().map(dataset_view).collect())
                    .unwrap_or_default(),
            }),
            Request::Blobs => Ok(Reply::Blobs {
                blobs: session
                    .store
                    .try_get()
                    .map(|s| {
                        s.blobs
                            .list()
                            .iter()
                            .map(|b| BlobView {
                                key: b.key.clone(),
                                summary: b.summary.clone(),
                                chars: b.total_chars,
                                lines: b.total_lines,
                                expires: crate::store::iso(b.expires()),
                                lineage: s.lineage_of(&b.key).filter(|l| !l.is_empty()),
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            }),
            Request::Memories => {
                let mem = session.memories.clone();
                let (list, skipped_lines) =
                    tokio::task::spawn_blocking(move || mem.list().map(|l| (l, mem.skipped().count)))
                        .await
                        .map_err(|e| e.to_string())?
                        .map_err(|e| e.to_string())?;
                Ok(Reply::Memories {
                    memories: list.iter().map(MemoryView::from).collect(),
                    skipped_lines,
                })
            }
            Request::Tools => {
                let Some(fleet) = session.fleet() else {
                    return Ok(Reply::Tools {
                        tools: tools::definitions(),
                        owners: Default::default(),
                        placement: Default::default(),
                        mode: session.config.listing.as_str().to_owned(),
                    });
                };
                fleet.wait_startup().await;
                // The listing the config gives a client: every tool placed, with its cost.
                let placed = self.human.placed_tools(fleet);
                let cost = |v: &Value| crate::intercept::tokens::estimate(&v.to_string()) as u64;
                let mut owners = std::collections::BTreeMap::new();
                let mut placement = std::collections::BTreeMap::new();
                let mut all = Vec::with_capacity(placed.len());
                for p in placed {
                    if p.server != "loom" {
                        owners.insert(p.exposed.clone(), p.server.clone());
                    }
                    placement.insert(
                        p.exposed.clone(),
                        crate::types::engine::ToolPlacement {
                            listed: p.listed.is_listed(),
                            why: p.listed.words().to_owned(),
                            tokens: if p.listed.is_listed() { cost(&p.tool) } else { 0 },
                            // `full` lists no finder tools: they cost nothing there.
                            tokens_full: if p.listed == crate::upstream::listing::Listed::Finder {
                                0
                            } else {
                                cost(&p.full)
                            },
                        },
                    );
                    all.push(p.full);
                }
                Ok(Reply::Tools {
                    tools: all,
                    owners,
                    placement,
                    mode: session.config.listing.as_str().to_owned(),
                })
            }
            Request::PinTool { name } => {
                let pinned = session.listing.toggle_pin(&name);
                session.announce_listing(&name, if pinned { "pinned" } else { "unpinned" });
                Ok(Reply::ToolPinned { name, pinned })
            }
            Request::CallTool { name, arguments } => self.call_tool(name, arguments).await,
            Request::Approvals => Ok(Reply::Approvals {
                approvals: session.approvals.waiting(),
            }),
            Request::Approve { approval, decision } => {
                let by = terminal.unwrap_or_else(|| {
                    super::engine::terminal_words("loom tui", std::process::id())
                });
                if session.approvals.decide(approval, decision, &by) {
                    Ok(Reply::Done)
                } else {
                    Err(format!(
                        "approval {approval} is no longer waiting (decided or timed out)"
                    )
                    .into())
                }
            }
            Request::CancelCall { call } => {
                if session.cancels.cancel(call) {
                    Ok(Reply::Done)
                } else {
                    Err(EngineError::Unknown(format!(
                        "call #{call} is not running (it finished or was cancelled)"
                    )))
                }
            }
            Request::BlobText { key } => {
                let store = session.store.get().await?;
                let blob = store.blobs.get(&key).ok_or_else(|| {
                    EngineError::Unknown(format!("no parked text `{key}` (unknown, or expired)"))
                })?;
                Ok(Reply::BlobText {
                    text: blob.content.clone(),
                })
            }
            Request::BlobSearch { key, pattern } => {
                let store = session.store.get().await?;
                let blob = store.blobs.get(&key).ok_or_else(|| {
                    EngineError::Unknown(format!("no parked text `{key}` (unknown, or expired)"))
                })?;
                blocking(move || {
                    let lines = crate::store::blobs::matching_lines(&blob.content, &pattern, 100_000)
                        .map_err(|e| EngineError::Failed(e.to_string()))?;
                    Ok(Reply::BlobMatches { lines })
                })
                .await
            }
            Request::ServerLog { server } => {
                if !session.server_names().contains(&server) {
                    return Err(EngineError::Unknown(format!("no server named `{server}`")));
                }
                Ok(Reply::ServerLog {
                    lines: session.server_logs.lines(&server),
                })
            }
            Request::RestartServer { server } => {
                let fleet = session.fleet().ok_or_else(|| {
                    EngineError::Failed("the servers have not been started yet".into())
                })?;
                if !session.server_names().contains(&server) {
                    return Err(EngineError::Unknown(format!("no server named `{server}`")));
                }
                let by = terminal.unwrap_or_else(|| {
                    super::engine::terminal_words("loom tui", std::process::id())
                });
                // Logged first, so the log reads in order: the request, then what it did.
                let logs = &session.server_logs;
                logs.note(&server, format!("restart asked for by a person at {by}"));
                match fleet.restart(&server) {
                    Ok(_) => Ok(Reply::Done),
                    Err(e) => {
                        logs.note(&server, format!("restart refused: {e}"));
                        Err(EngineError::Failed(e.to_string()))
                    }
                }
            }
            Request::MemorySet {
                key,
                content,
                tags,
                pinned,
                if_version,
            } => {
                let mem = session.memories.clone();
                memory_op(move || {
                    mem.set(&key, &content, tags, pinned, if_version, "human")
                        .map(|m| Reply::Memory {
                            memory: MemoryView::from(&m),
                        })
                })
                .await
            }
            Request::MemoryDelete { key } => {
                let mem = session.memories.clone();
                memory_op(move || {
                    mem.delete(&key, "human").map(|m| Reply::Memory {
                        memory: MemoryView::from(&m),
                    })
                })
                .await
            }
            Request::MemoryHistory { key } => {
                let mem = session.memories.clone();
                memory_op(move || {
                    mem.history(&key).map(|versions| Reply::MemoryHistory {
                        versions: versions.iter().map(MemoryView::from).collect(),
                    })
                })
                .await
            }
            Request::CancelQuery => {
                match session.store.try_get() {
                    Some(s) if s.interrupt_query() => Ok(Reply::Done),
                    _ => Err("no workbench query is running (a query of the model is never cancelled from here)".into()),
                }
            }
            Request::Describe { dataset } => {
                let store = session.store.get().await?;
                blocking(move || {
                    let describe = store.describe(&dataset)?;
                    Ok(Reply::Describe {
                        describe: Box::new(describe),
                    })
                })
                .await
            }
            Request::Chart {
                table,
                column,
                bins,
            } => {
                let store = session.store.get().await?;
                blocking(move || {
                    Ok(Reply::Chart {
                        bars: store
                            .chart(&table, &column, bins)
                            ?,
                    })
                })
                .await
            }
            Request::Query { sql } => {
                let store = session.store.get().await?;
                blocking(move || {
                    let result = store.run_result(&sql, connection)?;
                    Ok(Reply::Query { result })
                })
                .await
            }
            Request::Rows {
                table,
                offset,
                limit,
            } => {
                let store = session.store.get().await?;
                blocking(move || {
                    Ok(Reply::Rows {
                        rows: store
                            .page(&table, offset, limit.min(10_000))
                            ?,
                    })
                })
                .await
            }
            Request::Export {
                table,
                format,
                options,
            } => {
                let store = session.store.get().await?;
                let fmt = crate::store::ExportFormat::parse(&format).ok_or_else(|| {
                    format!("unknown export format `{format}`; use csv, json, jsonl or parquet")
                })?;
                let bus = session.bus.clone();
                blocking(move || {
                    let all = store
                        .dataset(&table)
                        .map(|d| d.rows)
                        .or_else(|_| store.result_rows(&table))
                        .unwrap_or(0);
                    let total = match options.rows {
                        Some((offset, limit)) => all.saturating_sub(offset).min(limit),
                        None => all,
                    };
                    let t = table.clone();
                    let (path, rows) = store
                        .export_with_progress(&table, fmt, &options, &mut |rows| {
                            bus.publish(crate::session::Event::ExportProgress {
                                table: t.clone(),
                                rows,
                                total,
                            })
                        })
                        ?;
                    Ok(Reply::Exported {
                        path: path.display().to_string(),
                        rows,
                    })
                })
                .await
            }
        }
    }
}

/// Runs a memory operation off the async threads; an unknown key is `Unknown`.
async fn memory_op(
    f: impl FnOnce() -> Result<Reply, crate::store::memories::MemoryError> + Send + 'static,
) -> Result<Reply, EngineError> {
    blocking(move || {
        f().map_err(|e| match e {
            crate::store::memories::MemoryError::NotFound(_) => EngineError::Unknown(e.to_string()),
            e => EngineError::Failed(e.to_string()),
        })
    })
    .await
}

async fn blocking(
    f: impl FnOnce() -> Result<Reply, EngineError> + Send + 'static,
) -> Result<Reply, EngineError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| format!("the request failed inside loom: {e}"))?
}

fn dataset_view(d: crate::store::DatasetMeta) -> DatasetView {
    DatasetView {
        source: d
            .provenance
            .as_ref()
            .map(|p| format!("{}/{}", p.server, p.tool))
            .unwrap_or_else(|| format!("{:?}", d.kind).to_lowercase()),
        dataset: d.dataset_ref,
        rows: d.rows,
        columns: d.columns,
        pinned: d.pinned,
        created: d.created,
        lineage: d.lineage,
    }
}

/// Every configured server with its state, whether or not the fleet has started.
pub fn servers(session: &Session) -> Vec<ServerView> {
    let Some(fleet) = session.fleet() else {
        return session
            .config
            .servers
            .iter()
            .map(|s| ServerView {
                name: s.name.clone(),
                state: crate::types::events::ServerState::Starting,
                ..Default::default()
            })
            .collect();
    };
    fleet
        .servers()
        .iter()
        .map(|s| {
            let st = s.status();
            ServerView {
                name: s.name().to_owned(),
                state: st.state.clone(),
                era: st.era.map(|e| format!("{e:?}").to_lowercase()),
                version: st.version,
                tools: st.tools,
                last_error: st.last_error,
                stderr: session.server_logs.stderr_tail(s.name(), 200),
                up_since: st.up_since,
                failures: st.failures,
                restarts: st.restarts,
                last_error_at: st.last_error_at,
                max_calls_per_second: s.rate.per_second(),
                throttled: s.rate.waited(),
            }
        })
        .collect()
}

impl Engine for LocalEngine {
    fn request(&self, request: Request) -> EngineFuture {
        Box::pin(self.inner.clone().handle(request, None))
    }

    fn request_from(&self, request: Request, origin: Origin) -> EngineFuture {
        Box::pin(self.inner.clone().handle(request, Some(origin)))
    }

    fn closed(&self, connection: u64) {
        if let Some(store) = self.inner.session.store.try_get() {
            tokio::task::spawn_blocking(move || store.release_results(connection));
        }
    }

    fn events(&self, human: bool) -> EventFeed {
        let presence = human.then(|| self.inner.session.approvals.presence());
        let (backlog, mut rx) = self.inner.session.bus.subscribe_with_backlog();
        let (tx, live) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(ev) => {
                        if tx.send(ev).is_err() {
                            break;
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!("workbench fell {n} events behind");
                    }
                    Err(_) => break,
                }
            }
        });
        EventFeed {
            backlog,
            live,
            presence,
        }
    }
}
