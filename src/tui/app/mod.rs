//! The workbench's state and its one reducer. `App::update` takes a message (a key, a mouse
//! event, an event from the session, a reply to an earlier request, a tick) and changes the
//! state, returning the requests to send to the Engine API; it never draws and never waits.
//! Tests drive it with messages and read the state or the drawn screen.

mod actions;
mod approvals;
mod catalog;
mod confirm;
mod detail;
mod editor;
mod grid;
mod keys;
mod mouse;
mod navigation;
mod pager;
mod palette;
mod replies;
mod traffic;
mod view;

pub use super::sql::{error_position, statement_at};
pub use approvals::{APPROVAL_GRACE, ApprovalView};
pub use confirm::{Confirm, Confirmed};
pub(crate) use detail::{hint_text, scalar, top_text};
pub use editor::{default_history_file, load_history};
pub use pager::Pager;
pub use palette::{prefill_arguments, validate_arguments};
pub use view::GridView;

use detail::pretty;
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Datasets,
    Blobs,
    Memories,
}

impl Section {
    pub const ORDER: [Section; 3] = [Section::Datasets, Section::Blobs, Section::Memories];
    fn index(self) -> usize {
        Section::ORDER.iter().position(|s| *s == self).unwrap_or(0)
    }
}

/// What the Detail pane shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Detail {
    Empty,
    Call(Box<CallRecord>),
    Dataset {
        dataset: String,
        describe: Box<Description>,
    },
    Blob(BlobView),
    Memory(MemoryView),
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
}

pub struct Completion {
    pub items: Vec<String>,
    pub selected: usize,
    /// Characters before the cursor that the chosen item replaces.
    pub prefix_len: usize,
}

pub enum PaletteStage {
    Pick,
    Edit {
        tool: Value,
        args: Box<TextArea<'static>>,
    },
}

pub struct Palette {
    pub filter: String,
    pub selected: usize,
    pub stage: PaletteStage,
    pub error: Option<String>,
}

pub struct Describe {
    pub dataset: String,
    pub describe: Option<Box<Description>>,
    pub charts: HashMap<String, Vec<Bar>>,
    /// Charts the engine could not draw, by column: shown with the way on (`r` retries).
    pub chart_errors: HashMap<String, String>,
    requested: HashSet<String>,
    pub selected: usize,
}

pub enum Overlay {
    None,
    Help { scroll: u16 },
    Palette(Palette),
    Describe(Box<Describe>),
    Filter,
    Confirm(Confirm),
    Pager(Box<Pager>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusKind {
    Info,
    Success,
    Error,
}

pub struct Running {
    pub ticket: u64,
    pub started: Instant,
}

pub struct QueryError {
    pub message: String,
    /// Line and column in the editor (0-based) when the engine said where.
    pub at: Option<(usize, usize)>,
}

pub struct ExportState {
    pub table: String,
    pub rows: u64,
    pub total: u64,
}

/// Everything the workbench shows.
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
    pub overlay: Overlay,
    pub quit: bool,
    /// Drawn as the title: `loom tui` or `loom attach <pid>`.
    pub title: String,
    /// Attached to another process's session: quitting detaches, the session goes on.
    pub attached: bool,
    pub session: Option<SessionInfo>,
    pub servers: Vec<ServerView>,
    pub server_sel: usize,
    pub show_stderr: bool,
    pub calls: Vec<CallSummary>,
    pub traffic_sel: usize,
    pub follow: bool,
    pub filter: String,
    pub detail: Detail,
    pub detail_lines: Vec<Line<'static>>,
    pub detail_scroll: usize,
    pub section: Section,
    pub datasets: Vec<DatasetView>,
    pub blobs: Vec<BlobView>,
    pub memories: Vec<MemoryView>,
    /// Lines of the memory file the engine could not read; shown beside the memory count.
    pub memory_skipped_lines: u64,
    pub catalog_sel: [usize; 3],
    pub editor: TextArea<'static>,
    pub history: Vec<String>,
    history_pos: Option<usize>,
    /// The text being written when the person started walking the history.
    history_draft: Option<String>,
    pub history_file: Option<PathBuf>,
    pub completion: Option<Completion>,
    pub running: Option<Running>,
    pub query_error: Option<QueryError>,
    /// Where the running statement starts in the editor, to place the engine's error.
    statement_origin: (usize, usize),
    /// The running statement's text, to read the engine's error position against.
    statement_sql: String,
    pub grid: Option<Grid>,
    /// The sort and filter the running query will show, when it is one.
    pending_view: Option<GridView>,
    /// The text rows must contain, while it is typed after `/` in Results.
    pub row_filter: Option<String>,
    /// Copy-all was asked for while pages were loading: it runs when the last one arrives.
    pub copy_all_pending: bool,
    pub status: Option<(String, StatusKind)>,
    pub export: Option<ExportState>,
    pub spinner: usize,
    pub tools: Vec<Value>,
    /// Calls waiting for this person's decision, oldest first.
    pub approvals: Vec<crate::types::events::ApprovalRequest>,
    /// The reason being typed for a denial.
    pub deny_reason: Option<String>,
    /// The approval the screen last showed: a key decides that one, never one the person
    /// has not seen yet.
    pub drawn_approval: std::cell::Cell<Option<u64>>,
    /// How far the approval prompt is scrolled, and for which approval (another one starts at
    /// the top).
    pub approval_scroll: (u64, usize),
    /// The furthest the prompt can scroll, as last drawn (the draw knows the wrapped height).
    pub approval_scroll_max: std::cell::Cell<usize>,
    /// The help overlay as last drawn: rows on screen and rows in all (scrolling stops at
    /// the end).
    pub help_rows: std::cell::Cell<(usize, usize)>,
    /// When the prompt on screen was first drawn: its keys decide only after `approval_grace`.
    pub approval_shown: std::cell::Cell<Option<(u64, Instant)>>,
    pub approval_grace: std::time::Duration,
    /// When this workbench first saw each waiting call: the prompt counts down from there.
    pub approval_seen: HashMap<u64, Instant>,
    /// The approval the person opened on purpose (`ctrl-g`): its keys decide at once.
    pub approval_review: Option<u64>,
    /// The approval the person set aside with `esc`: a banner until they open it.
    pub approval_later: Option<u64>,
    /// Seconds since the epoch (set by the runtime's clock): elapsed times of running calls.
    pub now_secs: u64,
    /// Minutes since the epoch, for the traffic sparkline (set by the runtime's clock).
    pub now_minute: u64,
    pending: HashMap<u64, Purpose>,
    next_ticket: u64,
    /// The newest request for the Detail pane: older replies are stale.
    detail_ticket: u64,
    /// The dataset listing last applied: a reply to an older request that arrives later is
    /// stale (it may still show a dataset whose drop was already seen).
    datasets_ticket: u64,
    out: Vec<(u64, Request)>,
    dirty_highlight: bool,
}

/// A message for the reducer.
pub enum Msg {
    Key(KeyEvent),
    Mouse(MouseEvent),
    Paste(String),
    Resize(u16, u16),
    Event(Sequenced),
    Reply(u64, Result<Reply, EngineError>),
    Action(Action),
    Tick,
    /// The session's event feed closed (an attached session stopped).
    SessionEnded,
    /// A thread other than the UI's panicked; the message is what it said.
    WorkerPanicked(String),
}

impl Msg {
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
        let mut editor = TextArea::default();
        editor.set_placeholder_text("SELECT … — ctrl-e runs the statement under the cursor");
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
            overlay: Overlay::None,
            quit: false,
            title: "loom tui".into(),
            attached: false,
            session: None,
            servers: Vec::new(),
            server_sel: 0,
            show_stderr: false,
            calls: Vec::new(),
            traffic_sel: 0,
            follow: true,
            filter: String::new(),
            detail: Detail::Empty,
            detail_lines: Vec::new(),
            detail_scroll: 0,
            section: Section::Datasets,
            datasets: Vec::new(),
            blobs: Vec::new(),
            memories: Vec::new(),
            memory_skipped_lines: 0,
            catalog_sel: [0; 3],
            editor,
            history: Vec::new(),
            history_pos: None,
            history_draft: None,
            history_file: None,
            completion: None,
            running: None,
            query_error: None,
            statement_origin: (0, 0),
            statement_sql: String::new(),
            grid: None,
            copy_all_pending: false,
            pending_view: None,
            row_filter: None,
            status: None,
            export: None,
            spinner: 0,
            tools: Vec::new(),
            approvals: Vec::new(),
            deny_reason: None,
            drawn_approval: std::cell::Cell::new(None),
            approval_scroll: (0, 0),
            approval_scroll_max: std::cell::Cell::new(0),
            approval_shown: std::cell::Cell::new(None),
            help_rows: std::cell::Cell::new((1, 0)),
            approval_grace: APPROVAL_GRACE,
            approval_review: None,
            approval_seen: HashMap::new(),
            approval_later: None,
            now_minute: 0,
            now_secs: 0,
            pending: HashMap::new(),
            next_ticket: 1,
            detail_ticket: 0,
            datasets_ticket: 0,
            out: Vec::new(),
            dirty_highlight: false,
        };
        app.style_editor();
        app
    }

    /// How often the screen needs a tick: often while something animates or a prompt waits to
    /// take keys, once a second while a call runs or a prompt counts down, else not at all.
    pub fn tick_interval(&self) -> Option<std::time::Duration> {
        use std::time::Duration;
        if self.running.is_some()
            || self.export.is_some()
            || self.approval_view() == (ApprovalView::Prompt { armed: false })
        {
            return Some(Duration::from_millis(100));
        }
        let running_call = self
            .calls
            .iter()
            .any(|c| c.outcome == crate::types::events::Outcome::Running);
        (running_call || !self.approvals.is_empty()).then_some(Duration::from_secs(1))
    }

    /// The first requests: everything the panes show.
    pub fn start(&mut self) -> Vec<(u64, Request)> {
        self.send(Purpose::Session, Request::Session);
        self.send(Purpose::Servers, Request::Servers);
        self.send(Purpose::Calls, Request::Calls { limit: 5000 });
        self.send(Purpose::Approvals, Request::Approvals);
        self.refresh_catalog();
        std::mem::take(&mut self.out)
    }

    fn refresh_catalog(&mut self) {
        self.send(Purpose::Datasets, Request::Datasets);
        self.send(Purpose::Blobs, Request::Blobs);
        self.send(Purpose::Memories, Request::Memories);
    }

    fn send(&mut self, purpose: Purpose, req: Request) -> u64 {
        let t = self.next_ticket;
        self.next_ticket += 1;
        if matches!(purpose, Purpose::CallDetail(_) | Purpose::DatasetDetail(_)) {
            self.detail_ticket = t;
        }
        self.pending.insert(t, purpose);
        self.out.push((t, req));
        t
    }

    pub fn set_status(&mut self, text: impl Into<String>, kind: StatusKind) {
        self.status = Some((text.into(), kind));
    }

    /// Applies one message; returns the requests to send.
    pub fn update(&mut self, msg: Msg) -> Vec<(u64, Request)> {
        match msg {
            Msg::Key(k) => self.on_key(k),
            Msg::Mouse(m) => self.on_mouse(m),
            Msg::Paste(text) => self.on_paste(&text),
            Msg::Resize(w, h) => {
                self.size = (w, h);
                self.ensure_pages();
                self.rescroll_editor();
            }
            Msg::Event(ev) => self.on_event(ev.event),
            Msg::Reply(t, r) => self.on_reply(t, r),
            Msg::Action(a) => self.apply(a),
            Msg::Tick => {
                self.spinner = self.spinner.wrapping_add(1);
                // A running call's elapsed time moves on in Detail.
                if matches!(&self.detail, Detail::Call(r) if r.summary.outcome == crate::types::events::Outcome::Running)
                {
                    self.rebuild_detail_lines();
                }
            }
            Msg::SessionEnded => {
                for s in &mut self.servers {
                    s.state = crate::types::events::ServerState::Stopped;
                }
                self.set_status(
                    "the session ended: what is on screen stays readable; q quits",
                    StatusKind::Error,
                );
            }
            Msg::WorkerPanicked(what) => self.set_status(
                format!("internal error in loom (details in the log): {what}"),
                StatusKind::Error,
            ),
        }
        if self.dirty_highlight {
            self.dirty_highlight = false;
            self.highlighter.apply_sql(&mut self.editor, &self.theme);
            if let Some(e) = &self.query_error
                && let Some((l, c)) = e.at
            {
                self.editor
                    .custom_highlight(((l, c), (l, c + 1)), self.theme.error, 255);
            }
        }
        std::mem::take(&mut self.out)
    }

    // ----- keys -------------------------------------------------------------------------

    /// Contexts a key is looked up in, most specific first.
    pub fn contexts(&self) -> Vec<Context> {
        if self.approval_view() == (ApprovalView::Prompt { armed: true }) {
            // A prompt that may decide comes first; while a denial reason is typed, keys are text.
            return if self.deny_reason.is_some() {
                vec![Context::Filter]
            } else {
                vec![Context::Approval, Context::Global]
            };
        }
        match &self.overlay {
            Overlay::Help { .. } => vec![Context::Help, Context::Global],
            Overlay::Palette(_) => vec![Context::Palette, Context::Global],
            Overlay::Describe(_) => vec![Context::Describe, Context::Global],
            Overlay::Filter => vec![Context::Filter],
            Overlay::Confirm(_) => vec![Context::Confirm, Context::Global],
            Overlay::Pager(p) if p.typing.is_some() => vec![Context::Filter],
            Overlay::Pager(_) => vec![Context::Pager, Context::Global],
            Overlay::None if self.row_filter.is_some() => vec![Context::Filter],
            Overlay::None => {
                if self.focus == Pane::Editor {
                    if self.completion.is_some() {
                        vec![Context::Completion, Context::Editor, Context::Global]
                    } else {
                        vec![Context::Editor, Context::Global]
                    }
                } else {
                    vec![self.focus.context(), Context::Navigation, Context::Global]
                }
            }
        }
    }
}
