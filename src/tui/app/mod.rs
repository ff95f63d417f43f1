//! The workbench's shared state and its one reducer. `App::update` takes a message (a key, a
//! mouse event, an event from the session, a reply to an earlier request, a tick) and routes it
//! to the pane it concerns, returning the requests to send to the Engine API; it never draws
//! and never waits. Each pane owns its state in its own file (`Traffic`, `Servers`,
//! `DetailPane`, `Catalog`, `EditorPane` with its tabs and history, `Results`, `Approvals`, and
//! the overlays `Palette`, `Describe`, `Pager`, `HistoryBrowser`, `MemoryEditor`, `Menu`,
//! `ExportDialog`); `App` keeps only what they share and must never grow a pane's
//! fields back. Tests drive it with messages and read the state or the drawn screen.

mod actions;
mod approvals;
mod arrangement;
mod catalog;
mod confirm;
mod describe;
mod detail;
mod editor;
pub mod export_dialog;
mod grid;
mod grid_search;
mod history;
mod history_browser;
mod keys;
pub mod line_input;
mod memory;
mod menu;
mod mouse;
mod navigation;
mod pager;
mod palette;
mod replies;
mod results;
pub mod server_log;
mod servers;
mod tabs;
mod text_keys;
mod traffic;
mod view;

pub use super::sql::{error_position, statement_at};
pub use approvals::{APPROVAL_GRACE, ApprovalView, Approvals};
pub use arrangement::{Arrangement, Preferences, load_preferences, preferences_file};
pub use catalog::{Catalog, Group, LOOM_SERVER, LastFind, Node, Row, ToolEntry};
pub use confirm::{Confirm, Confirmed};
pub use describe::Describe;
pub use detail::{Detail, DetailPane};
pub(crate) use detail::{hint_text, scalar, top_text};
pub use editor::{Completion, DRAFT_SAVE_SECS, EditorPane, ErrorMark};
pub use export_dialog::ExportDialog;
pub use grid_search::GridSearch;
pub use history::{
    HistoryEntry, Outcome, default_history_file, load_history, parse_history, shorten_error,
};
pub use history_browser::{HistoryBrowser, one_line};
pub use line_input::LineInput;
pub use memory::{MemoryEditor, MemoryStage, history_text};
pub use menu::{Menu, MenuItem};
pub use pager::Pager;
pub use palette::{Palette, PaletteStage, prefill_arguments, validate_arguments};
pub use results::{ExportState, GridPrompt, QueryError, Results, Running};
pub use servers::Servers;
pub use tabs::{
    MAX_TABS, TabLabel, Tabs, TabsFile, TabsFileError, read_tabs_file, tabs_file_beside,
};
pub use traffic::{BATCH_TOOL, Traffic};
pub use view::GridView;

use grid::slice_range;
pub use grid::{COPY_ALL_MAX, Grid, PAGE_ROWS};

use super::highlight::Highlighter;
use super::keymap::{Action, Context, KeySpec, Keymap};
use super::theme::Theme;
use crate::frontend::engine::{
    BlobView, DatasetView, EngineError, Reply, Request, ServerView, SessionInfo,
};
use crate::tui::clipboard::Clipboard;
use crate::types::data::Description;
use crate::types::data::MemoryView;
use crate::types::data::{Bar, Page, ResultTable};
use crate::types::events::{CallRecord, CallSummary};
use crate::types::events::{Event, Sequenced};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};
use ratatui::text::Line;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::Instant;
use tui_textarea::TextArea;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Servers,
    Traffic,
    Detail,
    Catalog,
    Editor,
    Results,
}

impl Pane {
    pub const ORDER: [Pane; 6] = [
        Pane::Traffic,
        Pane::Detail,
        Pane::Servers,
        Pane::Catalog,
        Pane::Editor,
        Pane::Results,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Pane::Servers => "Servers",
            Pane::Traffic => "Traffic",
            Pane::Detail => "Detail",
            Pane::Catalog => "Catalog",
            Pane::Editor => "SQL",
            Pane::Results => "Results",
        }
    }

    fn context(self) -> Context {
        match self {
            Pane::Servers => Context::Servers,
            Pane::Traffic => Context::Traffic,
            Pane::Detail => Context::Detail,
            Pane::Catalog => Context::Catalog,
            Pane::Editor => Context::Editor,
            Pane::Results => Context::Results,
        }
    }
}

/// Where a reply goes.
#[derive(Debug, Clone, PartialEq)]
enum Purpose {
    Session,
    Servers,
    Calls,
    CallDetail(u64),
    Datasets,
    Blobs,
    Memories,
    DatasetDetail(String),
    Describe(String),
    Chart(String, String),
    Query,
    Rows(String, u64),
    Export,
    Tools,
    CallTool(String),
    Cancel,
    Approve,
    Approvals,
    CancelCall(u64),
    QuitCheck,
    BlobText(String),
    BlobSearch(String),
    ServerLog(String),
    Restart(String),
    SearchQuery(String),
    SearchHits(String),
    MemorySaved(String),
    /// The key and whether it is now pinned.
    MemoryPinned(String, bool),
    MemoryDeleted(String),
    MemoryHistory(String),
    PinTool(String),
}

pub enum Overlay {
    None,
    Help(Box<Menu>),
    Palette(Box<Palette>),
    Describe(Box<Describe>),
    Filter,
    Confirm(Confirm),
    Pager(Box<Pager>),
    Export(Box<ExportDialog>),
    History(HistoryBrowser),
    Memory(Box<MemoryEditor>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusKind {
    Info,
    Success,
    Error,
}

/// Seconds after which an unanswered tool-list request is given up and asked again.
const TOOLS_STUCK_SECS: u64 = 30;

/// Seconds a status line stays once shown: news fades soon, an error stays to be read.
const STATUS_INFO_SECS: u64 = 8;
const STATUS_ERROR_SECS: u64 = 20;

/// Everything the workbench shows: what the panes share, and each pane's own state.
pub struct App {
    pub keymap: Keymap,
    pub theme: Theme,
    pub theme_name: String,
    pub highlighter: Highlighter,
    pub clipboard: Clipboard,
    pub size: (u16, u16),
    /// Where each pane was last drawn: what a click is tested against, so the mouse acts on
    /// what the person saw. Empty until the first frame.
    pub drawn: std::cell::RefCell<Vec<(Pane, Rect)>>,
    pub focus: Pane,
    pub zoom: bool,
    /// How the screen is shared between watching and querying (`+`).
    pub arrangement: Arrangement,
    /// Where the arrangement is remembered between runs.
    pub prefs_file: Option<PathBuf>,
    pub overlay: Overlay,
    pub quit: bool,
    /// Drawn as the title: `loom tui` or `loom attach <pid>`.
    pub title: String,
    /// Attached to another process's session: quitting detaches, the session goes on.
    pub attached: bool,
    pub session: Option<SessionInfo>,
    pub servers: Servers,
    pub traffic: Traffic,
    pub detail: DetailPane,
    pub catalog: Catalog,
    pub editor: EditorPane,
    pub results: Results,
    pub approvals: Approvals,
    pub status: Option<(String, StatusKind)>,
    /// When the status line was set (the runtime's clock), so it fades; 0 before the clock
    /// runs, and for a status that stays until it is replaced.
    status_since: u64,
    /// The status line says why the palette did not send a call: it goes when the palette
    /// closes or leaves the arguments, as the palette's own error does.
    palette_status: bool,
    pub spinner: usize,
    pub tools: Vec<Value>,
    /// Seconds since the epoch (set by the runtime's clock): elapsed times of running calls.
    pub now_secs: u64,
    /// Minutes since the epoch, for the traffic sparkline (set by the runtime's clock).
    pub now_minute: u64,
    pending: HashMap<u64, Purpose>,
    /// The tool list changed while a request for it was on its way: ask again when it is
    /// answered (one request at a time, however fast the changes come).
    tools_again: bool,
    /// The tool list on its way was asked for before a server changed state: the palette
    /// waits for the next one.
    tools_stale: bool,
    /// When the tool-list request on its way was sent (the runtime's clock; 0 before it ticks).
    tools_asked_at: u64,
    next_ticket: u64,
    out: Vec<(u64, Request)>,
    /// The session's event feed closed: nothing on screen changes any more.
    pub session_ended: bool,
    /// `loom attach`: the config whose next session it joins once this one ends.
    pub reattach_to: Option<String>,
}

/// A message for the reducer.
pub enum Msg {
    Key(KeyEvent),
    Mouse(MouseEvent),
    Paste(String),
    Resize(u16, u16),
    /// Boxed: a call's summary is large, and most messages are keys and ticks.
    Event(Box<Sequenced>),
    Reply(u64, Result<Reply, EngineError>),
    Action(Action),
    Tick,
    /// The session's event feed closed (an attached session stopped).
    SessionEnded,
    /// A thread other than the UI's panicked; the message is what it said.
    WorkerPanicked(String),
    /// The process was told to end (SIGTERM, SIGHUP, SIGINT): quit at once, as `q` does
    /// once answered, keeping what the editor holds.
    Stop,
}

impl Msg {
    /// A session event.
    pub fn event(ev: Sequenced) -> Msg {
        Msg::Event(Box::new(ev))
    }

    /// A plain character key, as typed.
    pub fn char(c: char) -> Msg {
        Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
    }

    /// A named key (`Enter`, `Esc`, arrows…) with no modifier.
    pub fn code(code: KeyCode) -> Msg {
        Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    /// `ctrl` plus a character.
    pub fn ctrl(c: char) -> Msg {
        Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
    }

    /// `ctrl` plus a named key.
    pub fn ctrl_code(code: KeyCode) -> Msg {
        Msg::Key(KeyEvent::new(code, KeyModifiers::CONTROL))
    }
}

impl App {
    pub fn new(keymap: Keymap, theme: Theme, theme_name: &str, clipboard: Clipboard) -> App {
        let mut app = App {
            keymap,
            theme,
            theme_name: theme_name.to_owned(),
            highlighter: Highlighter::new(),
            clipboard,
            size: (120, 40),
            drawn: std::cell::RefCell::new(Vec::new()),
            focus: Pane::Traffic,
            zoom: false,
            arrangement: Arrangement::default(),
            prefs_file: None,
            overlay: Overlay::None,
            quit: false,
            title: "loom tui".into(),
            attached: false,
            session: None,
            servers: Servers::default(),
            traffic: Traffic::default(),
            detail: DetailPane::default(),
            catalog: Catalog::default(),
            editor: EditorPane::new(),
            results: Results::default(),
            approvals: Approvals::default(),
            status: None,
            status_since: 0,
            palette_status: false,
            spinner: 0,
            tools: Vec::new(),
            now_minute: 0,
            now_secs: 0,
            pending: HashMap::new(),
            tools_again: false,
            tools_stale: false,
            tools_asked_at: 0,
            next_ticket: 1,
            session_ended: false,
            reattach_to: None,
            out: Vec::new(),
        };
        app.editor.style(&app.theme);
        app
    }

    /// How often the screen needs a tick: often while something animates or a prompt waits to
    /// take keys, once a second while a call runs or a prompt counts down, when the status
    /// line is due to fade, else not at all.
    pub fn tick_interval(&self) -> Option<std::time::Duration> {
        use std::time::Duration;
        if self.results.running.is_some()
            || self.results.export.is_some()
            || self.approval_view() == (ApprovalView::Prompt { armed: false })
        {
            return Some(Duration::from_millis(100));
        }
        if self.traffic.any_running() || !self.approvals.waiting.is_empty() {
            return Some(Duration::from_secs(1));
        }
        let draft = self.editor.draft_since.map(|since| {
            Duration::from_secs(
                (since + editor::DRAFT_SAVE_SECS)
                    .saturating_sub(self.now_secs)
                    .max(1),
            )
        });
        let status = self
            .status_left()
            .map(|left| Duration::from_secs(left.max(1)));
        match (draft, status) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Seconds until the status line fades; none when there is nothing to fade.
    fn status_left(&self) -> Option<u64> {
        let (_, kind) = self.status.as_ref()?;
        if self.status_since == 0 || self.now_secs == 0 {
            return None;
        }
        let lasts = match kind {
            StatusKind::Error => STATUS_ERROR_SECS,
            StatusKind::Info | StatusKind::Success => STATUS_INFO_SECS,
        };
        Some((self.status_since + lasts).saturating_sub(self.now_secs))
    }

    /// The first requests: everything the panes show.
    pub fn start(&mut self) -> Vec<(u64, Request)> {
        self.send(Purpose::Session, Request::Session);
        self.send(Purpose::Servers, Request::Servers);
        self.send(Purpose::Calls, Request::Calls { limit: 5000 });
        self.send(Purpose::Approvals, Request::Approvals);
        self.ask_tools();
        self.refresh_catalog();
        std::mem::take(&mut self.out)
    }

    fn refresh_catalog(&mut self) {
        self.send(Purpose::Datasets, Request::Datasets);
        self.send(Purpose::Blobs, Request::Blobs);
        self.send(Purpose::Memories, Request::Memories);
    }

    /// Asks for the tool list, or, while a request for it is on its way, for once more after.
    fn ask_tools(&mut self) {
        if self.tools_on_the_way() {
            self.tools_again = true;
        } else {
            self.send(Purpose::Tools, Request::Tools);
        }
    }

    /// Whether a tool-list request is on its way. One unanswered for [`TOOLS_STUCK_SECS`] is
    /// given up (its late answer is ignored), so a request the engine never answers does not
    /// stop the list from being asked for again.
    fn tools_on_the_way(&mut self) -> bool {
        let asked: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, p)| **p == Purpose::Tools)
            .map(|(t, _)| *t)
            .collect();
        let stuck = self.now_secs > 0
            && self.tools_asked_at > 0
            && self.now_secs.saturating_sub(self.tools_asked_at) >= TOOLS_STUCK_SECS;
        if stuck {
            for t in &asked {
                self.pending.remove(t);
            }
            self.tools_stale = false;
            return false;
        }
        !asked.is_empty()
    }

    fn send(&mut self, purpose: Purpose, req: Request) -> u64 {
        if purpose == Purpose::Tools {
            self.tools_asked_at = self.now_secs;
        }
        let t = self.next_ticket;
        self.next_ticket += 1;
        if matches!(purpose, Purpose::CallDetail(_) | Purpose::DatasetDetail(_)) {
            self.detail.ticket = t;
        }
        self.pending.insert(t, purpose);
        self.out.push((t, req));
        t
    }

    /// Seconds since `at` (an ISO date of the session), by the runtime's clock.
    pub fn elapsed_secs(&self, at: &str) -> Option<u64> {
        elapsed_secs(self.now_secs, at)
    }

    /// Shows `text` on the status line; it fades after a few seconds (longer for an error).
    pub fn set_status(&mut self, text: impl Into<String>, kind: StatusKind) {
        self.status = Some((text.into(), kind));
        self.status_since = self.now_secs;
        self.palette_status = false;
    }

    /// This workbench takes over from `old`, whose session ended, on a new session named
    /// `title`: the same screen size and clock, and tickets that never meet the old ones.
    pub fn rejoined(&mut self, old: &App, title: String) {
        self.size = old.size;
        self.now_secs = old.now_secs;
        self.now_minute = old.now_minute;
        self.next_ticket = old.next_ticket;
        self.reattach_to = old.reattach_to.clone();
        self.set_status(format!("reattached: {title}"), StatusKind::Success);
        self.title = title;
    }

    /// Shows `text` on the status line until something replaces it: for a state that goes on
    /// (the session ended), not for news.
    pub fn set_lasting_status(&mut self, text: impl Into<String>, kind: StatusKind) {
        self.status = Some((text.into(), kind));
        self.status_since = 0;
        self.palette_status = false;
    }

    /// Work for the frame about to be drawn, done once however many messages came since the
    /// last one: colouring the editor's and the palette's text. Call it right before drawing.
    pub fn prepare_frame(&mut self) {
        self.editor
            .highlight_if_dirty(&self.highlighter, &self.theme);
        if let Overlay::Palette(p) = &mut self.overlay {
            p.highlight_if_dirty(&self.highlighter, &self.theme);
        }
    }

    /// Applies one message; returns the requests to send. It never colours text (a paste or
    /// a burst of keys would pay for it per key): [`App::prepare_frame`] does, once a frame.
    pub fn update(&mut self, msg: Msg) -> Vec<(u64, Request)> {
        match msg {
            Msg::Key(k) => self.on_key(k),
            Msg::Mouse(m) => self.on_mouse(m),
            Msg::Paste(text) => self.on_paste(&text),
            Msg::Resize(w, h) => {
                self.size = (w, h);
                self.ensure_pages();
                self.editor.rescroll();
            }
            Msg::Event(ev) => self.on_event(ev.event),
            Msg::Reply(t, r) => self.on_reply(t, r),
            Msg::Action(a) => self.apply(a),
            Msg::Tick => {
                self.spinner = self.spinner.wrapping_add(1);
                if self
                    .editor
                    .draft_since
                    .is_some_and(|t| self.now_secs >= t + editor::DRAFT_SAVE_SECS)
                {
                    self.save_tabs();
                }
                if self.status_left() == Some(0) {
                    self.status = None;
                }
                // A running call's elapsed time moves on in Detail.
                if self.detail.shows_running_call() {
                    self.rebuild_detail_lines();
                }
            }
            Msg::SessionEnded => {
                self.servers.all_stopped();
                self.session_ended = true;
                let text = match &self.reattach_to {
                    Some(config) => format!(
                        "the session ended · q quits · waiting for a new session of {} to reattach",
                        crate::terminal_text::line(config)
                    ),
                    None => "the session ended: what is on screen stays readable; q quits".into(),
                };
                self.set_lasting_status(text, StatusKind::Error);
            }
            Msg::WorkerPanicked(what) => self.set_status(
                format!("internal error in loom (details in the log): {what}"),
                StatusKind::Error,
            ),
            Msg::Stop => self.quit = true,
        }
        // The clock starts the wait for a draft's save at the first change since the last one.
        if self.editor.unsaved && self.editor.draft_since.is_none() && self.now_secs > 0 {
            self.editor.draft_since = Some(self.now_secs);
        }
        if self.quit {
            // The last moment this workbench's state is seen: what the editor holds is kept.
            self.editor.write_pending_run();
            self.save_tabs();
        }
        std::mem::take(&mut self.out)
    }

    // ----- keys -------------------------------------------------------------------------

    /// Contexts a key is looked up in, most specific first.
    pub fn contexts(&self) -> Vec<Context> {
        if self.approval_view() == (ApprovalView::Prompt { armed: true }) {
            // A prompt that may decide comes first; while a denial reason is typed, keys are text.
            return if self.approvals.deny_reason.is_some() {
                vec![Context::Filter]
            } else {
                vec![Context::Approval, Context::Global]
            };
        }
        match &self.overlay {
            Overlay::Help(m) if m.typing => vec![Context::Filter],
            Overlay::Help(_) => vec![Context::Help, Context::Global],
            Overlay::Palette(p) if p.asking() => vec![Context::Ask],
            Overlay::Palette(p) if p.editing() => {
                vec![Context::Palette, Context::Text, Context::Global]
            }
            Overlay::Palette(_) => vec![Context::Palette, Context::Global],
            Overlay::Describe(_) => vec![Context::Describe, Context::Global],
            Overlay::Filter => vec![Context::Filter],
            Overlay::Confirm(_) => vec![Context::Confirm, Context::Global],
            Overlay::Export(_) => vec![Context::Export],
            Overlay::Pager(p) if p.typing.is_some() => vec![Context::Filter],
            Overlay::Pager(_) => vec![Context::Pager, Context::Global],
            // Typing filters the list: only its own keys are taken.
            Overlay::History(_) => vec![Context::History],
            // Every key but its own is text.
            Overlay::Memory(m) if m.stage == MemoryStage::Content => {
                vec![Context::MemoryEditor, Context::Text]
            }
            Overlay::Memory(_) => vec![Context::MemoryEditor],
            Overlay::None if self.results.prompt.is_some() => vec![Context::Filter],
            Overlay::None => {
                if self.focus == Pane::Editor {
                    if self.editor.completion.is_some() {
                        vec![
                            Context::Completion,
                            Context::Editor,
                            Context::Text,
                            Context::Global,
                        ]
                    } else {
                        vec![Context::Editor, Context::Text, Context::Global]
                    }
                } else {
                    vec![self.focus.context(), Context::Navigation, Context::Global]
                }
            }
        }
    }
}

/// Seconds from `at` (an ISO date of the session) to `now_secs`; none before the runtime's
/// first tick (or in a test that sets no clock).
fn elapsed_secs(now_secs: u64, at: &str) -> Option<u64> {
    if now_secs == 0 {
        return None;
    }
    crate::types::time::parse_iso(at).map(|t| now_secs.saturating_sub(t))
}
