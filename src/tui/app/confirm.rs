//! Questions before an action that cannot be taken back (`y` confirms, `n` or `esc` does not),
//! cancelling a running tool call from Traffic or Detail, and which keys the key bar offers for
//! what is selected.

use super::*;

/// A question on screen and what `y` does.
pub struct Confirm {
    pub question: String,
    pub yes: Confirmed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmed {
    /// Stop a model's running call.
    CancelCall(u64),
    /// Restart a server, or re-enable a delisted one.
    RestartServer(String),
    /// Stop serving the clients still connected, and quit.
    Quit,
    /// Close the editor tab of this id (its text goes to the history).
    CloseTab(u64),
    /// Delete the memory of this key, as the person.
    DeleteMemory(String),
}

impl App {
    /// The call Traffic or Detail has selected.
    fn selected_call(&self) -> Option<CallSummary> {
        match self.focus {
            Pane::Detail => match &self.detail.shown {
                Detail::Call(r) => Some(r.summary.clone()),
                _ => None,
            },
            _ => self.traffic.selected().cloned(),
        }
    }

    /// `c`: cancels the selected call if it runs. A person's own call stops at once; a model's
    /// call is asked about first (the model then reads that a person cancelled it).
    pub(super) fn cancel_call(&mut self) {
        let Some(c) = self.selected_call() else {
            self.set_status("select a call to cancel", StatusKind::Info);
            return;
        };
        if c.outcome != crate::types::events::Outcome::Running {
            self.set_status(
                format!("call #{} is not running ({})", c.call, c.outcome),
                StatusKind::Info,
            );
            return;
        }
        if c.caller == crate::types::events::Caller::Human {
            self.confirmed(Confirmed::CancelCall(c.call));
            return;
        }
        self.overlay = Overlay::Confirm(Confirm {
            question: format!(
                "Cancel the {}'s call #{} {}? It is told that a person cancelled it.",
                c.caller, c.call, c.tool
            ),
            yes: Confirmed::CancelCall(c.call),
        });
    }

    /// `q`: an attached workbench detaches at once; the one that serves asks first when MCP
    /// clients are still connected (it counts them now, not at start).
    pub(super) fn ask_to_quit(&mut self) {
        if self.attached {
            self.quit = true;
            return;
        }
        self.send(Purpose::QuitCheck, Request::Session);
    }

    /// The count of connected clients arrived: quit, or ask.
    pub(super) fn quit_checked(&mut self, clients: Option<u32>) {
        let question = match clients {
            Some(0) => {
                self.quit = true;
                return;
            }
            Some(1) => "1 MCP client is connected. Stop serving it and quit?".to_owned(),
            Some(n) => format!("{n} MCP clients are connected. Stop serving them and quit?"),
            // Fail closed: when the count is unknown, ask.
            None => "Could not count the connected MCP clients. Quit anyway?".to_owned(),
        };
        self.overlay = Overlay::Confirm(Confirm {
            question,
            yes: Confirmed::Quit,
        });
    }

    /// Carries out what a confirmation asked for.
    pub(super) fn confirmed(&mut self, yes: Confirmed) {
        match yes {
            Confirmed::Quit => self.quit = true,
            Confirmed::CloseTab(id) => self.tab_closed(id),
            Confirmed::CancelCall(call) => {
                self.send(Purpose::CancelCall(call), Request::CancelCall { call });
                self.set_status(format!("cancelling call #{call}…"), StatusKind::Info);
            }
            Confirmed::RestartServer(server) => self.restart_server(server),
            Confirmed::DeleteMemory(key) => self.delete_memory(key),
        }
    }

    /// Whether `a` would do something for what is selected now: the key bar shows only those.
    pub fn offers(&self, a: Action) -> bool {
        let running = crate::types::events::Outcome::Running;
        let c = &self.catalog;
        let on_dataset = c.selected_dataset().is_some();
        let on_memory = c.selected_memory().is_some();
        let in_catalog = self.focus == Pane::Catalog && matches!(self.overlay, Overlay::None);
        let has_grid = self.results.grid.is_some();
        let in_results = self.focus == Pane::Results && matches!(self.overlay, Overlay::None);
        match a {
            Action::CancelCall => self.selected_call().is_some_and(|c| c.outcome == running),
            Action::JumpToDataset => self.selected_call().is_some_and(|c| {
                c.reference
                    .as_ref()
                    .is_some_and(|r| !self.catalog.gone.contains_key(r))
            }),
            Action::CopyCell
            | Action::CopyRow
            | Action::CopyAll
            | Action::Sort
            | Action::FilterRows
            | Action::Narrower
            | Action::Wider => has_grid,
            Action::ExportCsv | Action::ExportJson => match self.focus {
                Pane::Catalog => on_dataset,
                _ => has_grid || matches!(self.overlay, Overlay::Describe(_)),
            },
            // On parked text both open the pager, which `enter` (read) already offers.
            Action::Describe | Action::QueryDataset if self.focus == Pane::Catalog => on_dataset,
            Action::Open if self.focus == Pane::Detail => self.detail.shown_tool().is_some(),
            // The grid's own keys act only on a result that is there (not after a failure).
            Action::Open | Action::Search | Action::MarkRows | Action::ToggleWrap if in_results => {
                has_grid
            }
            Action::NextMatch | Action::PrevMatch if in_results => {
                has_grid
                    && self
                        .results
                        .search
                        .as_ref()
                        .is_some_and(|s| s.hits.as_ref().is_some_and(|h| !h.is_empty()))
            }
            Action::Open if self.focus == Pane::Catalog => match c.selected_node() {
                Node::Column { .. } | Node::Empty(_) => false,
                Node::Tool(_) | Node::Blob(_) | Node::Memory(_) => true,
                _ => c.selected_expandable(),
            },
            Action::InsertName => {
                in_catalog && matches!(c.selected_node(), Node::Dataset(_) | Node::Column { .. })
            }
            Action::TogglePin if self.focus == Pane::Detail => self.detail.shown_tool().is_some(),
            Action::TogglePin => {
                in_catalog && (on_memory || matches!(c.selected_node(), Node::Tool(_)))
            }
            Action::EditMemory | Action::DeleteMemory | Action::MemoryHistory => {
                in_catalog && on_memory
            }
            Action::NewMemory => in_catalog && c.selected_node().group() == Group::Memories,
            Action::CancelQuery => self.results.running.is_some(),
            Action::Retry => {
                matches!(&self.overlay, Overlay::Describe(d) if !d.chart_errors.is_empty())
            }
            Action::ToggleStderr | Action::Restart | Action::ServerLog => {
                !self.servers.list.is_empty()
            }
            Action::ToggleFollow if matches!(self.overlay, Overlay::Pager(_)) => {
                matches!(&self.overlay, Overlay::Pager(p) if p.log_of.is_some())
            }
            Action::ClearFilter => !self.traffic.filter.is_empty(),
            Action::NextMatch | Action::PrevMatch => {
                matches!(&self.overlay, Overlay::Pager(p) if !p.matches.is_empty())
            }
            Action::UseQuery | Action::RunQuery if matches!(self.overlay, Overlay::History(_)) => {
                matches!(&self.overlay, Overlay::History(b)
                    if b.selected_entry(&self.editor.history).is_some())
            }
            Action::Redo => self.editor.redo_available,
            Action::NewTab => self.editor.tabs.count() < MAX_TABS,
            Action::CloseTab | Action::NextTab | Action::PrevTab => self.editor.tabs.count() > 1,
            a if a.tab_index().is_some() => a
                .tab_index()
                .is_some_and(|i| i < self.editor.tabs.count() && i != self.editor.tabs.current()),
            _ => true,
        }
    }
}
