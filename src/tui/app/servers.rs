//! The servers pane: it owns the list of downstream servers, the selection and whether the
//! selected server's stderr is shown. It keeps the selection inside the list and each server's
//! stderr tail bounded; it never sends requests and never draws.

use super::navigation::step;
use super::*;

/// Lines of stderr kept per server.
const STDERR_LINES: usize = 200;

/// The Servers pane's state.
#[derive(Default)]
pub struct Servers {
    pub list: Vec<ServerView>,
    pub sel: usize,
    /// The selected server's stderr instead of the list's details.
    pub show_stderr: bool,
    /// The server a person restarted, until it is up or given up on: the status line says
    /// which, not what was hoped for.
    pub restarting: Option<String>,
}

impl Servers {
    /// The engine's listing arrived: the selection stays inside it.
    pub(super) fn set(&mut self, list: Vec<ServerView>) {
        self.list = list;
        self.sel = self.sel.min(self.list.len().saturating_sub(1));
    }

    /// A line a server wrote to stderr.
    pub(super) fn push_stderr(&mut self, server: &str, line: String) {
        if let Some(s) = self.list.iter_mut().find(|s| s.name == server) {
            s.stderr.push(line);
            if s.stderr.len() > STDERR_LINES {
                s.stderr.remove(0);
            }
        }
    }

    /// The session ended: no server runs any more.
    pub(super) fn all_stopped(&mut self) {
        for s in &mut self.list {
            s.state = crate::types::events::ServerState::Stopped;
        }
    }

    pub(super) fn move_by(&mut self, delta: i64) {
        self.sel = step(self.sel, self.list.len(), delta);
    }

    /// A click on inner row `row`: the server there, or the last one below the list.
    pub(super) fn click(&mut self, row: usize) {
        self.sel = row.min(self.list.len().saturating_sub(1));
    }
}
