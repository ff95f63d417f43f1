//! What comes back from the session: events on its bus, replies to requests and failures,
//! each routed by its purpose to the pane it is for, which updates its own state (stale
//! replies to the Detail pane and to older dataset listings are dropped). It never draws and
//! never keeps a pane's state of its own.

use super::*;

impl App {
    pub(super) fn on_event(&mut self, ev: Event) {
        match ev {
            Event::ServerState {
                server,
                state,
                detail,
            } => {
                self.server_state_logged(&server, &state, detail.as_deref());
                self.restart_outcome(&server, &state, detail.as_deref());
                self.send(Purpose::Servers, Request::Servers);
                // The palette waits for the new list; the catalog keeps the old one until then.
                // The palette waits for a list from after this change: one asked before it
                // (on its way now) still updates the catalog, not the palette.
                self.tools.clear();
                if self.pending.values().any(|p| *p == Purpose::Tools) {
                    self.tools_stale = true;
                }
                self.ask_tools();
            }
            Event::ListingChanged { .. } => self.ask_tools(),
            Event::ToolsFound { query, tools } => {
                self.catalog.found(query, tools);
                // A tool shown in Detail shows where this find put it.
                if matches!(self.detail.shown, Detail::Tool { .. }) {
                    self.open_catalog_item();
                }
            }
            Event::CallProgress {
                call,
                progress,
                total,
                message,
            } => {
                let running =
                    self.traffic.calls.iter().rev().any(|c| {
                        c.call == call && c.outcome == crate::types::events::Outcome::Running
                    });
                if running {
                    self.traffic.progress.insert(
                        call,
                        super::traffic::CallProgress {
                            progress,
                            total,
                            message,
                        },
                    );
                    if self.detail.shows_running_call() {
                        self.rebuild_detail_lines();
                    }
                }
            }
            Event::ServerStderr { server, line, at } => {
                let logged = crate::types::events::LogLine {
                    at,
                    kind: crate::types::events::LogKind::Stderr,
                    text: line.clone(),
                };
                self.server_log_event(&server, logged);
                self.servers.push_stderr(&server, line)
            }
            Event::CallStarted(c) | Event::CallFinished(c) => {
                let call = c.call;
                let finished = c.outcome != crate::types::events::Outcome::Running;
                self.traffic.record(c);
                // Following moves Detail to the newest call only while Detail shows calls and
                // the person has not just asked it for something else (a dataset whose
                // description is on its way is theirs, not the next call's).
                let asked_other = matches!(
                    self.pending.get(&self.detail.ticket),
                    Some(Purpose::DatasetDetail(_))
                );
                let detail_on_calls =
                    matches!(self.detail.shown, Detail::Empty | Detail::Call(_)) && !asked_other;
                if self.traffic.follow {
                    self.traffic.sel = 0;
                    if detail_on_calls {
                        self.select_call();
                    }
                } else if finished && self.detail.shows_call(call) {
                    self.send(Purpose::CallDetail(call), Request::CallDetail { call });
                }
            }
            Event::DatasetCreated { .. } => {
                // The listing carries the columns and source the event does not.
                self.send(Purpose::Datasets, Request::Datasets);
            }
            Event::DatasetDropped { dataset, reason } => self.dataset_dropped(dataset, reason),
            Event::BlobParked { .. } => {
                self.send(Purpose::Blobs, Request::Blobs);
            }
            Event::MemoryChanged { .. } => {
                self.send(Purpose::Memories, Request::Memories);
            }
            Event::ApprovalRequested(req) => {
                self.approvals.add(req);
                self.rebuild_detail_lines();
            }
            Event::ApprovalSettled {
                approval,
                decision,
                by,
            } => {
                // Another terminal decided what this one was showing: say who, and how.
                let shown = self
                    .approvals
                    .waiting
                    .iter()
                    .find(|a| a.approval == approval);
                if let (Some(a), Some(by)) = (shown, by) {
                    let text = format!("{} #{}: {decision} at {by}", a.tool, a.call);
                    self.set_status(text, StatusKind::Info);
                }
                self.approvals.settled(approval);
                self.rebuild_detail_lines();
            }
            Event::ExportProgress { table, rows, total } => {
                if let Some(e) = &mut self.results.export
                    && e.table == table
                {
                    e.rows = rows;
                    e.total = total;
                }
            }
        }
    }

    pub(super) fn on_reply(&mut self, ticket: u64, r: Result<Reply, EngineError>) {
        let Some(purpose) = self.pending.remove(&ticket) else {
            return;
        };
        let stale_tools = purpose == Purpose::Tools && std::mem::take(&mut self.tools_stale);
        if purpose == Purpose::Tools && std::mem::take(&mut self.tools_again) {
            self.send(Purpose::Tools, Request::Tools);
        }
        if matches!(purpose, Purpose::CallDetail(_) | Purpose::DatasetDetail(_))
            && ticket != self.detail.ticket
        {
            return;
        }
        let reply = match r {
            Ok(reply) => reply,
            Err(e) => {
                self.on_failure(purpose, ticket, e);
                return;
            }
        };
        match (purpose, reply) {
            (Purpose::Session, Reply::Session(info)) => self.session = Some(*info),
            (Purpose::QuitCheck, Reply::Session(info)) => {
                self.quit_checked(Some(info.clients));
                self.session = Some(*info);
            }
            (Purpose::Servers, Reply::Servers { servers }) => {
                self.catalog
                    .set_servers(servers.iter().map(|s| s.name.clone()).collect());
                self.servers.set(servers)
            }
            (Purpose::Calls, Reply::Calls { calls }) => {
                self.traffic.replace(calls);
                if self.traffic.follow {
                    self.follow_newest();
                }
            }
            (Purpose::CallDetail(_), Reply::CallDetail { record: Some(r) }) => {
                self.set_detail(Detail::Call(r))
            }
            (Purpose::Datasets, Reply::Datasets { datasets }) => {
                self.catalog.set_datasets(ticket, datasets)
            }
            (Purpose::Blobs, Reply::Blobs { blobs }) => self.catalog.set_blobs(blobs),
            (
                Purpose::Memories,
                Reply::Memories {
                    memories,
                    skipped_lines,
                },
            ) => {
                self.catalog.set_memories(memories, skipped_lines);
                self.memories_listed();
            }
            (
                p @ (Purpose::MemorySaved(_)
                | Purpose::MemoryPinned(..)
                | Purpose::MemoryDeleted(_)),
                Reply::Memory { memory },
            ) => self.memory_changed(&p, memory),
            (Purpose::MemoryHistory(key), Reply::MemoryHistory { versions }) => {
                self.memory_history_arrived(&key, &versions)
            }
            (Purpose::DatasetDetail(dataset), Reply::Describe { describe }) => {
                self.set_detail(Detail::Dataset { dataset, describe })
            }
            (Purpose::Describe(dataset), Reply::Describe { describe }) => {
                if let Some(d) = self.describe_of(&dataset) {
                    d.describe = Some(describe);
                }
                // Charts are computed on demand, for the column in view.
                self.chart_for_selection();
            }
            (Purpose::Chart(dataset, column), Reply::Chart { bars }) => {
                if let Some(d) = self.describe_of(&dataset) {
                    d.charts.insert(column, bars);
                }
            }
            (Purpose::Query, Reply::Query { result }) => self.query_done(ticket, result),
            (Purpose::SearchQuery(table), Reply::Query { result }) => {
                self.search_counted(table, result)
            }
            (Purpose::SearchHits(table), Reply::Rows { rows }) => self.search_found(table, rows),
            (Purpose::Rows(table, page), Reply::Rows { rows }) => {
                if let Some(g) = self.results.grid_of(&table) {
                    g.page_arrived(page, rows);
                }
                self.fit_columns();
                if self.results.copy_all_pending {
                    self.copy_grid(Action::CopyAll);
                }
            }
            (Purpose::Export, Reply::Exported { path, rows }) => {
                self.results.export = None;
                self.set_status(
                    format!("exported {} to {path}", crate::tui::ui::plural(rows, "row")),
                    StatusKind::Success,
                );
            }
            (
                Purpose::Tools,
                Reply::Tools {
                    tools,
                    owners,
                    placement,
                    mode,
                },
            ) if self.catalog.set_tools(
                ticket,
                &tools,
                &owners,
                placement.clone(),
                mode.clone(),
            ) =>
            {
                if !stale_tools {
                    self.tools = tools;
                }
                // A tool shown in Detail follows its new place in the listing (a pin, a promotion).
                if let Detail::Tool { entry, .. } = &self.detail.shown
                    && self
                        .catalog
                        .selected_tool()
                        .is_some_and(|t| t.name == entry.name)
                {
                    self.open_catalog_item();
                }
            }
            (Purpose::PinTool(_), Reply::ToolPinned { name, pinned }) => {
                let what = if pinned {
                    format!("{name} is listed to every client for this session")
                } else {
                    format!("{name} is unpinned")
                };
                self.set_status(what, StatusKind::Success);
                self.ask_tools();
            }
            (Purpose::Approvals, Reply::Approvals { approvals }) => {
                // Calls that waited before this workbench came (the backlog may not reach back).
                for a in approvals {
                    self.approvals.add(a);
                }
                self.approvals.waiting.sort_by_key(|a| a.approval);
                self.rebuild_detail_lines();
            }
            (Purpose::CallTool(name), Reply::ToolResult { result }) => {
                let is_error = result["isError"] == Value::Bool(true);
                let sc = &result["structuredContent"];
                let what = if let Some(r) = sc["ref"].as_str() {
                    format!(": dataset {r} (o opens it)")
                } else if let Some(k) = sc["blob_key"].as_str() {
                    format!(": parked as {k}")
                } else if let (Some(k), Some(v)) = (sc["key"].as_str(), sc["version"].as_u64()) {
                    format!(": memory {k} version {v}")
                } else {
                    String::new()
                };
                self.set_status(
                    format!("{name} {}{what}", if is_error { "failed" } else { "done" }),
                    if is_error {
                        StatusKind::Error
                    } else {
                        StatusKind::Success
                    },
                );
                // Follow the human's call: newest first, selected, detail shown.
                self.traffic.follow = true;
                self.follow_newest();
            }
            (Purpose::Cancel, _) => {}
            (Purpose::CancelCall(call), _) => {
                self.set_status(format!("call #{call} cancelled"), StatusKind::Success)
            }
            (Purpose::ServerLog(server), Reply::ServerLog { lines }) => {
                self.server_log_arrived(&server, &lines)
            }
            (Purpose::Restart(server), Reply::Done) => self.restart_taken(&server),
            (Purpose::BlobText(key), Reply::BlobText { text }) => {
                if let Some(p) = self.pager_mut()
                    && p.key == key
                {
                    p.lines = Some(text.lines().map(str::to_owned).collect());
                }
            }
            (Purpose::BlobSearch(key), Reply::BlobMatches { lines }) => {
                let Some(p) = self.pager_mut().filter(|p| p.key == key) else {
                    return;
                };
                let n = lines.len();
                p.matched(lines);
                self.set_status(
                    format!("{n} matching line{}", if n == 1 { "" } else { "s" }),
                    StatusKind::Info,
                );
            }
            _ => {}
        }
    }

    pub(super) fn on_failure(&mut self, purpose: Purpose, ticket: u64, error: EngineError) {
        if self.session_ended && matches!(error, EngineError::Disconnected(_)) {
            // Requests still on their way when the session ended: the header and the status
            // line already say so (and what happens next); "the session ended" again from
            // each of them would hide it.
            return;
        }
        let gone = match &error {
            EngineError::Dropped(why) => Some(why.clone()),
            EngineError::Unknown(_) => {
                Some("this result is no longer kept by the session: run the query again".into())
            }
            _ => None,
        };
        let e = error.to_string();
        match purpose {
            Purpose::Query if matches!(error, EngineError::Cancelled(_)) => {
                self.query_cancelled(ticket, &e)
            }
            Purpose::Query => self.query_failed(ticket, &e),
            Purpose::Rows(table, page) => {
                let current = self.results.grid_of(&table).is_some();
                if let Some(why) = gone.filter(|_| current) {
                    // The session let this result go; the grid closes and says why.
                    self.results.grid = None;
                    self.results.dropped = Some(why.clone());
                    self.set_status(why, StatusKind::Error);
                    return;
                }
                if let Some(g) = self.results.grid_of(&table) {
                    g.requested.remove(&page);
                }
                self.set_status(format!("loading rows failed: {e}"), StatusKind::Error);
            }
            Purpose::Export => {
                self.results.export = None;
                self.set_status(format!("export failed: {e}"), StatusKind::Error);
            }
            Purpose::CallTool(name) => {
                self.set_status(format!("{name} failed: {e}"), StatusKind::Error)
            }
            Purpose::BlobText(key) | Purpose::BlobSearch(key) => {
                if let Some(p) = self.pager_mut()
                    && p.key == key
                {
                    p.error = Some(e.clone());
                }
                self.set_status(e, StatusKind::Error);
            }
            Purpose::QuitCheck => self.quit_checked(None),
            Purpose::ServerLog(server) => {
                if let Some(p) = self.pager_mut()
                    && p.log_of.as_deref() == Some(&server)
                {
                    p.error = Some(e.clone());
                }
                self.set_status(e, StatusKind::Error);
            }
            Purpose::SearchQuery(_) | Purpose::SearchHits(_) => {
                self.results.search = None;
                self.set_status(format!("search failed: {e}"), StatusKind::Error);
            }
            Purpose::Restart(server) => {
                self.servers.restarting = None;
                self.set_status(
                    format!("{server} was not restarted: {e}"),
                    StatusKind::Error,
                )
            }
            p @ (Purpose::MemorySaved(_)
            | Purpose::MemoryPinned(..)
            | Purpose::MemoryDeleted(_)) => self.memory_refused(&p, e),
            Purpose::Chart(dataset, column) => {
                if let Some(d) = self.describe_of(&dataset) {
                    d.chart_errors.insert(column, e);
                }
            }
            Purpose::CancelCall(call) => self.set_status(
                format!("call #{call} not cancelled: {e}"),
                StatusKind::Error,
            ),
            _ => self.set_status(e, StatusKind::Error),
        }
    }
}
