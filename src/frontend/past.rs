//! A past session opened read-only (`loom tui --open`, `loom query --session`, `loom export
//! --session`): a session with no servers whose store holds what the archive kept, behind an
//! engine that answers only requests that read. Nothing can call a tool, approve, restart a
//! server or write a memory from here, whatever the workbench asks.

use super::engine::{Engine, EngineError, EngineFuture, EventFeed, Origin, Request};
use super::local::LocalEngine;
use crate::config::Config;
use crate::history::past::{self, Loaded};
use crate::session::Session;
use std::sync::Arc;

/// What a refused request is told.
pub const READ_ONLY: &str =
    "this is a past session, opened read-only: nothing can be called, approved or changed";

/// Whether `request` only reads.
pub fn reads_only(request: &Request) -> bool {
    matches!(
        request,
        Request::Session
            | Request::Servers
            | Request::Calls { .. }
            | Request::CallDetail { .. }
            | Request::Datasets
            | Request::Describe { .. }
            | Request::Chart { .. }
            | Request::Query { .. }
            | Request::CancelQuery
            | Request::Rows { .. }
            | Request::Export { .. }
            | Request::Blobs
            | Request::Memories
            | Request::Tools
            | Request::Approvals
            | Request::BlobText { .. }
            | Request::BlobSearch { .. }
            | Request::ServerLog { .. }
            | Request::MemoryHistory { .. }
    )
}

pub struct PastEngine {
    inner: Arc<LocalEngine>,
    /// The past session's id.
    pub id: String,
}

impl Engine for PastEngine {
    fn request(&self, request: Request) -> EngineFuture {
        if reads_only(&request) {
            self.inner.request(request)
        } else {
            Box::pin(async { Err(EngineError::Failed(READ_ONLY.into())) })
        }
    }

    fn request_from(&self, request: Request, origin: Origin) -> EngineFuture {
        if reads_only(&request) {
            self.inner.request_from(request, origin)
        } else {
            Box::pin(async { Err(EngineError::Failed(READ_ONLY.into())) })
        }
    }

    fn closed(&self, connection: u64) {
        self.inner.closed(connection)
    }

    fn events(&self, _human: bool) -> EventFeed {
        // No person is ever "attached" here: there is nothing to approve.
        self.inner.events(false)
    }
}

/// Opens past session `id` of `config`'s history folder: its datasets under their names,
/// its call log in `loom_calls` and in Traffic, its parked texts.
pub async fn open(
    config: &Config,
    id: &str,
) -> anyhow::Result<(Arc<Session>, Arc<PastEngine>, Loaded)> {
    let root = crate::history::dir_of(config);
    let found = past::find(&root, id).map_err(anyhow::Error::msg)?;
    if let Some(p) = &found.problem {
        anyhow::bail!("session {id} cannot be opened: {p}");
    }
    let mut cfg = config.clone();
    cfg.servers.clear();
    cfg.history.mode = crate::history::Mode::Off;
    cfg.source = found
        .manifest
        .as_ref()
        .and_then(|m| m.config_path.clone())
        .map(Into::into)
        .or(cfg.source);
    let session = Session::new(Arc::new(cfg));
    let store = session
        .store
        .get()
        .await
        .map_err(|e| anyhow::anyhow!("the store cannot open: {e}"))?;
    let (loaded, calls) = {
        let found = found.clone();
        // Traffic keeps the newest calls only, as in a live session: those are all that
        // are read back into it (every call is in `loom_calls`).
        tokio::task::spawn_blocking(move || {
            (
                past::load(&store, &found, None),
                past::recent_calls(&found, crate::session::calls::MAX_CALLS),
            )
        })
        .await?
    };
    for c in calls.0 {
        session.calls.started(c.clone(), Default::default());
        session.calls.finished(c, "");
    }
    let mut loaded = loaded;
    loaded.problems.extend(calls.1);
    let inner = LocalEngine::new(session.clone());
    Ok((
        session,
        Arc::new(PastEngine {
            inner,
            id: id.to_owned(),
        }),
        loaded,
    ))
}

#[cfg(test)]
mod tests {
    use crate::session::calls::{CallLog, CallSummary, MAX_CALLS};

    fn replay(log: &CallLog, calls: &[CallSummary]) {
        for c in calls {
            log.started(c.clone(), Default::default());
            log.finished(c.clone(), "");
        }
    }

    #[test]
    fn replaying_the_newest_calls_leaves_traffic_as_replaying_them_all_would() {
        // `open` replays only the newest MAX_CALLS (`past::recent_calls`): Traffic must end
        // up exactly as if every archived call had gone through it.
        let all: Vec<CallSummary> = (1..=(MAX_CALLS as u64 * 2 + 123))
            .map(|i| CallSummary {
                call: i,
                tool: format!("tool_{}", i % 7),
                arguments: format!("{{\"i\":{i}}}"),
                millis: i % 40,
                ..Default::default()
            })
            .collect();
        let every = CallLog::default();
        replay(&every, &all);
        let newest = CallLog::default();
        replay(&newest, &all[all.len() - MAX_CALLS..]);
        let kept = newest.recent(usize::MAX);
        assert_eq!(kept.len(), MAX_CALLS);
        assert_eq!(kept, every.recent(usize::MAX));
        assert!(
            !kept[0].arguments.contains("sk-live"),
            "{}",
            kept[0].arguments
        );
        assert_eq!(newest.get(kept[0].call), every.get(kept[0].call));
    }
}
