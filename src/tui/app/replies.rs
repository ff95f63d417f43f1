//! What comes back from the session: events on its bus, replies to requests and failures.

use super::*;

impl App {
    pub(super) fn on_event(&mut self, ev: Event) {
        match ev {
            Event::ServerState { .. } => {
                self.send(Purpose::Servers, Request::Servers);
                self.tools.clear();
            }
            Event::ServerStderr { server, line, .. } => {
                if let Some(s) = self.servers.iter_mut().find(|s| s.name == server) {
                    s.stderr.push(line);
                    if s.stderr.len() > 200 {
                        s.stderr.remove(0);
                    }
                }
            }
            Event::CallStarted(c) | Event::CallFinished(c) => {
                let call = c.call;
                let finished = c.outcome != crate::types::events::Outcome::Running;
                match self.calls.iter_mut().rev().find(|x| x.call == call) {
                    Some(x) => *x = c,
                    None => {
                        self.calls.push(c);
                        if !self.follow {
                            // Keep the same call selected as new ones arrive on top.
                            self.traffic_sel += 1;
                        }
                    }
                }
                if self.calls.len() > 5000 {
                    self.calls.remove(0);
                }
                // Following moves Detail to the newest call only while Detail shows calls.
                let detail_on_calls = matches!(self.detail, Detail::Empty | Detail::Call(_));
                if self.follow {
                    self.traffic_sel = 0;
                    if detail_on_calls {
                        self.select_call();
                    }
                } else if finished
                    && matches!(&self.detail, Detail::Call(r) if r.summary.call == call)
                {
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
                self.approval_seen
                    .entry(req.approval)
                    .or_insert_with(Instant::now);
                if !self.approvals.iter().any(|a| a.approval == req.approval) {
                    self.approvals.push(req);
                }
            }
            Event::ApprovalSettled { approval, .. } => {
                self.approvals.retain(|a| a.approval != approval);
                self.approval_seen.remove(&approval);
                if self.approvals.is_empty() {
                    self.deny_reason = None;
                }
            }
            Event::ExportProgress { table, rows, total } => {
                if let Some(e) = &mut self.export
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
        if matches!(purpose, Purpose::CallDetail(_) | Purpose::DatasetDetail(_))
            && ticket != self.detail_ticket
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
                self.servers = servers;
                self.server_sel = self.server_sel.min(self.servers.len().saturating_sub(1));
            }
            (Purpose::Calls, Reply::Calls { calls }) => {
                // Keep calls the live feed already delivered that the reply predates.
                let newest = calls.last().map(|c| c.call).unwrap_or(0);
                let later: Vec<CallSummary> =
                    self.calls.drain(..).filter(|c| c.call > newest).collect();
                self.calls = calls;
                self.calls.extend(later);
                if self.follow {
                    self.traffic_sel = 0;
                    self.select_call();
                }
            }
            (Purpose::CallDetail(_), Reply::CallDetail { record: Some(r) }) => {
                self.set_detail(Detail::Call(r))
            }
            (Purpose::Datasets, Reply::Datasets { datasets }) => {
                if ticket < self.datasets_ticket {
                    return;
                }
                self.datasets_ticket = ticket;
                self.datasets = datasets;
                // Keep the list's selection on the dataset Detail shows (a jump may have
                // arrived before the list knew it).
                if let Detail::Dataset { dataset, .. } = &self.detail
                    && let Some(i) = self.datasets.iter().position(|d| &d.dataset == dataset)
                {
                    self.catalog_sel[0] = i;
                }
                self.catalog_sel[0] =
                    self.catalog_sel[0].min(self.datasets.len().saturating_sub(1));
            }
            (Purpose::Blobs, Reply::Blobs { blobs }) => {
                self.blobs = blobs;
                self.catalog_sel[1] = self.catalog_sel[1].min(self.blobs.len().saturating_sub(1));
            }
            (
                Purpose::Memories,
                Reply::Memories {
                    memories,
                    skipped_lines,
                },
            ) => {
                self.memories = memories;
                self.memory_skipped_lines = skipped_lines;
                self.catalog_sel[2] =
                    self.catalog_sel[2].min(self.memories.len().saturating_sub(1));
            }
            (Purpose::DatasetDetail(dataset), Reply::Describe { describe }) => {
                self.set_detail(Detail::Dataset { dataset, describe })
            }
            (Purpose::Describe(dataset), Reply::Describe { describe }) => {
                if let Overlay::Describe(d) = &mut self.overlay
                    && d.dataset == dataset
                {
                    d.describe = Some(describe);
                }
                // Charts are computed on demand, for the column in view.
                self.chart_for_selection();
            }
            (Purpose::Chart(dataset, column), Reply::Chart { bars }) => {
                if let Overlay::Describe(d) = &mut self.overlay
                    && d.dataset == dataset
                {
                    d.charts.insert(column, bars);
                }
            }
            (Purpose::Query, Reply::Query { result }) => {
                self.running = None;
                let millis = result.millis;
                let rows = result.rows;
                let mut grid = Grid::new(result);
                grid.view = self.pending_view.take();
                if grid.view.is_some()
                    && let Some(old) = &self.grid
                    && old.result.columns == grid.result.columns
                {
                    // A new view of the same result: the person stays on their column, and
                    // widths they set stay.
                    grid.col = old.col;
                    grid.left = old.left;
                    for &i in &old.fixed_width {
                        grid.widths[i] = old.widths[i];
                    }
                    grid.fixed_width = old.fixed_width.clone();
                }
                self.grid = Some(grid);
                self.ensure_pages();
                self.set_status(
                    format!(
                        "{rows} row{} in {millis} ms",
                        if rows == 1 { "" } else { "s" }
                    ),
                    StatusKind::Success,
                );
                self.send(Purpose::Datasets, Request::Datasets);
            }
            (Purpose::Rows(table, page), Reply::Rows { rows }) => {
                if let Some(g) = &mut self.grid
                    && g.result.table == table
                {
                    g.requested.remove(&page);
                    g.pages.insert(page, rows);
                }
                self.fit_columns();
                if self.copy_all_pending {
                    self.copy_grid(Action::CopyAll);
                }
            }
            (Purpose::Export, Reply::Exported { path, rows }) => {
                self.export = None;
                self.set_status(
                    format!("exported {} to {path}", crate::tui::ui::plural(rows, "row")),
                    StatusKind::Success,
                );
            }
            (Purpose::Tools, Reply::Tools { tools }) => self.tools = tools,
            (Purpose::Approvals, Reply::Approvals { approvals }) => {
                // Calls that waited before this workbench came (the backlog may not reach back).
                for a in approvals {
                    self.approval_seen
                        .entry(a.approval)
                        .or_insert_with(Instant::now);
                    if !self.approvals.iter().any(|x| x.approval == a.approval) {
                        self.approvals.push(a);
                    }
                }
                self.approvals.sort_by_key(|a| a.approval);
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
                self.follow = true;
                self.traffic_sel = 0;
                self.select_call();
            }
            (Purpose::Cancel, _) => {}
            (Purpose::CancelCall(call), _) => {
                self.set_status(format!("call #{call} cancelled"), StatusKind::Success)
            }
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
                p.matches = lines;
                p.current = None;
                let n = p.matches.len();
                if n > 0 {
                    self.pager_jump(true);
                }
                self.set_status(
                    format!("{n} matching line{}", if n == 1 { "" } else { "s" }),
                    StatusKind::Info,
                );
            }
            _ => {}
        }
    }

    pub(super) fn on_failure(&mut self, purpose: Purpose, ticket: u64, error: EngineError) {
        let gone = matches!(error, EngineError::Unknown(_));
        let e = error.to_string();
        match purpose {
            Purpose::Query => {
                if self.running.as_ref().is_some_and(|r| r.ticket == ticket) {
                    self.running = None;
                }
                let at = error_position(&e, &self.statement_sql).map(|(l, c)| {
                    let (ol, oc) = self.statement_origin;
                    if l == 0 { (ol, oc + c) } else { (ol + l, c) }
                });
                self.query_error = Some(QueryError {
                    message: e.clone(),
                    at,
                });
                self.dirty_highlight = true;
                // Results shows the last query's state: its failure, never an older result
                // that an export or a copy would then act on.
                self.grid = None;
                self.copy_all_pending = false;
                let first = e.lines().next().unwrap_or_default().to_owned();
                self.set_status(format!("query failed: {first}"), StatusKind::Error);
                // A sort or filter of the grid failed: the person stays in Results.
                if self.pending_view.take().is_none() && !self.statement_sql.is_empty() {
                    self.focus = Pane::Editor;
                }
            }
            Purpose::Rows(table, page) => {
                let current = self.grid.as_ref().is_some_and(|g| g.result.table == table);
                if current && gone {
                    // The session keeps only the newest results; this one is gone.
                    self.grid = None;
                    self.set_status(
                        "this result was dropped (the session keeps the newest 8): run the query again",
                        StatusKind::Error,
                    );
                    return;
                }
                if let Some(g) = &mut self.grid
                    && current
                {
                    g.requested.remove(&page);
                }
                self.set_status(format!("loading rows failed: {e}"), StatusKind::Error);
            }
            Purpose::Export => {
                self.export = None;
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
            Purpose::Chart(dataset, column) => {
                if let Overlay::Describe(d) = &mut self.overlay
                    && d.dataset == dataset
                {
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
