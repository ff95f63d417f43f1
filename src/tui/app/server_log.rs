//! A server's log in the pager: its stderr lines with their times, each change of its state as
//! a separator line (so restarts stand apart), new lines appended live while it is open and
//! the view kept at the end while following (`f`). Restarting or re-enabling a server by key,
//! after a confirmation. The lines come from the engine; this never reads a process itself.

use super::*;
use crate::types::events::{LogKind, LogLine, ServerState};

/// Marks a state line in the log; the pager draws such lines apart.
pub const SEPARATOR: &str = "────";

/// One log line as the pager shows it: `07:15:01  text`, or a separator for a state change.
pub fn log_text(l: &LogLine) -> String {
    let time = l.at.get(11..19).unwrap_or(&l.at);
    let text = crate::terminal_text::line(&l.text);
    match l.kind {
        LogKind::Stderr => format!("{time}  {text}"),
        LogKind::State => format!("{SEPARATOR} {time} {text} {SEPARATOR}"),
    }
}

impl App {
    /// `enter` on a server: its log, following new lines.
    pub(super) fn open_server_log(&mut self) {
        let Some(server) = self
            .servers
            .list
            .get(self.servers.sel)
            .map(|s| s.name.clone())
        else {
            return;
        };
        self.send(
            Purpose::ServerLog(server.clone()),
            Request::ServerLog {
                server: server.clone(),
            },
        );
        let mut pager = Pager::new(String::new(), format!("log of {server}"), None);
        pager.local = true;
        pager.log_of = Some(server);
        pager.follow = true;
        self.overlay = Overlay::Pager(Box::new(pager));
    }

    /// The open log of `server`, if that is what the pager shows.
    fn log_of(&mut self, server: &str) -> Option<&mut Pager> {
        self.pager_mut()
            .filter(|p| p.log_of.as_deref() == Some(server))
    }

    pub(super) fn server_log_arrived(&mut self, server: &str, lines: &[LogLine]) {
        if let Some(p) = self.log_of(server) {
            // Lines that arrived live before the log keep their place after it.
            let live = p.lines.take().unwrap_or_default();
            let mut all: Vec<String> = lines.iter().map(log_text).collect();
            all.extend(live);
            p.lines = Some(all);
            p.keep_at_end();
        }
    }

    /// A new line of a server's life while its log is open.
    pub(super) fn server_log_event(&mut self, server: &str, line: LogLine) {
        if let Some(p) = self.log_of(server) {
            p.lines.get_or_insert_with(Vec::new).push(log_text(&line));
            p.keep_at_end();
        }
    }

    /// A state change as a log line.
    pub(super) fn server_state_logged(
        &mut self,
        server: &str,
        state: &ServerState,
        detail: Option<&str>,
    ) {
        let text = match detail {
            Some(why) => format!("{state}: {why}"),
            None => state.label(),
        };
        let line = LogLine {
            at: crate::types::time::now_iso(),
            kind: LogKind::State,
            text,
        };
        self.server_log_event(server, line);
    }

    /// `R` on a server: restart it (or re-enable it when delisted), after a confirmation.
    pub(super) fn ask_restart(&mut self) {
        let Some(s) = self.servers.list.get(self.servers.sel) else {
            return;
        };
        let question = match &s.state {
            ServerState::Delisted => format!(
                "Re-enable {}? It was delisted after repeated failures{}. Its tools return once it is up.",
                s.name,
                s.last_error
                    .as_deref()
                    .map(|e| format!(" (last: {e})"))
                    .unwrap_or_default()
            ),
            ServerState::Starting | ServerState::Stopped => {
                let state = s.state.label();
                self.set_status(
                    format!("{} is {state}: nothing to restart now", s.name),
                    StatusKind::Info,
                );
                return;
            }
            _ => format!(
                "Restart {}? Calls it is answering now fail and are reported to their callers.",
                s.name
            ),
        };
        self.overlay = Overlay::Confirm(Confirm {
            question,
            yes: Confirmed::RestartServer(s.name.clone()),
        });
    }

    pub(super) fn restart_server(&mut self, server: String) {
        self.send(
            Purpose::Restart(server.clone()),
            Request::RestartServer {
                server: server.clone(),
            },
        );
        self.set_status(format!("restarting {server}…"), StatusKind::Info);
        self.servers.restarting = Some(server);
    }

    /// The restart was taken: the status line waits for its outcome, unless it came first.
    pub(super) fn restart_taken(&mut self, server: &str) {
        if self.servers.restarting.as_deref() == Some(server) {
            self.set_status(
                format!("restarting {server}… (enter shows its log)"),
                StatusKind::Info,
            );
        }
    }

    /// A server a person restarted changed state: the status line says how the restart went,
    /// up or failed again (and whether loom tries once more or gave up on it).
    pub(super) fn restart_outcome(&mut self, server: &str, state: &ServerState, why: Option<&str>) {
        if self.servers.restarting.as_deref() != Some(server) {
            return;
        }
        let why = why
            .map(|w| format!(": {}", crate::terminal_text::line(w)))
            .unwrap_or_default();
        let (text, kind, done) = match state {
            ServerState::Starting => return,
            ServerState::Up => (format!("{server} is up again"), StatusKind::Success, true),
            ServerState::Restarting { .. } => (
                format!("{server} failed again{why}; {state} (enter shows its log)"),
                StatusKind::Error,
                false,
            ),
            ServerState::Delisted => (
                format!("{server} failed again and was delisted{why} (enter shows its log)"),
                StatusKind::Error,
                true,
            ),
            ServerState::NeedsAuth => (
                format!("{server} needs authentication{why}"),
                StatusKind::Error,
                true,
            ),
            ServerState::Stopped => (format!("{server} stopped"), StatusKind::Info, true),
        };
        if done {
            self.servers.restarting = None;
        }
        self.set_status(text, kind);
    }
}
