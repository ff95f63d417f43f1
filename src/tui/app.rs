//! The workbench's state and its one reducer. `App::update` takes a message (a key, a mouse
//! event, an event from the session, a reply to an earlier request, a tick) and changes the
//! state, returning the requests to send to the Engine API; it never draws and never waits.
//! Tests drive it with messages and read the state or the drawn screen.

use super::clipboard::Clipboard;
use super::highlight::Highlighter;
use super::keymap::{Action, Context, KeySpec, Keymap};
use super::theme::Theme;
use crate::frontend::engine::{BlobView, DatasetView, Reply, Request, ServerView, SessionInfo};
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
}

/// A query result shown in the grid: rows arrive a page at a time, only around the view.
pub struct Grid {
    pub result: ResultTable,
    pub pages: HashMap<u64, Page>,
    requested: HashSet<u64>,
    pub row: u64,
    pub col: usize,
    pub top: u64,
    pub left: usize,
    pub widths: Vec<u16>,
}

/// Rows per page fetched for the grid.
pub const PAGE_ROWS: u64 = 200;

/// Most rows a whole result may have to be copied to the clipboard; beyond, export it.
pub const COPY_ALL_MAX: u64 = 10_000;

impl Grid {
    fn new(result: ResultTable) -> Grid {
        let widths = result
            .columns
            .iter()
            .map(|(n, t)| (n.chars().count().max(t.chars().count().min(16)) as u16).clamp(4, 40))
            .collect();
        Grid {
            result,
            pages: HashMap::new(),
            requested: HashSet::new(),
            row: 0,
            col: 0,
            top: 0,
            left: 0,
            widths,
        }
    }

    pub fn cell(&self, row: u64, col: usize) -> Option<Option<&str>> {
        let page = self.pages.get(&(row / PAGE_ROWS))?;
        let r = page.get((row % PAGE_ROWS) as usize)?;
        Some(r.get(col).and_then(|c| c.as_deref()))
    }

    pub fn row_cells(&self, row: u64) -> Option<&Vec<Option<String>>> {
        self.pages
            .get(&(row / PAGE_ROWS))?
            .get((row % PAGE_ROWS) as usize)
    }

    /// Fits the column widths to a sample of values (the first page).
    fn fit(&mut self, page: &Page) {
        for (i, w) in self.widths.iter_mut().enumerate() {
            let widest = page
                .iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.as_deref().map_or(4, |s| s.chars().count().min(60)))
                .max()
                .unwrap_or(0) as u16;
            *w = (*w).max(widest).clamp(4, 40);
        }
    }
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
    requested: HashSet<String>,
    pub selected: usize,
}

pub enum Overlay {
    None,
    Help { scroll: u16 },
    Palette(Palette),
    Describe(Box<Describe>),
    Filter,
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
    pub focus: Pane,
    pub zoom: bool,
    pub overlay: Overlay,
    pub quit: bool,
    /// Drawn as the title: `loom tui` or `loom attach <pid>`.
    pub title: String,
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
    pub history_file: Option<PathBuf>,
    pub completion: Option<Completion>,
    pub running: Option<Running>,
    pub query_error: Option<QueryError>,
    /// Where the running statement starts in the editor, to place the engine's error.
    statement_origin: (usize, usize),
    pub grid: Option<Grid>,
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
    Reply(u64, Result<Reply, String>),
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
}

pub const SQL_KEYWORDS: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP BY",
    "ORDER BY",
    "HAVING",
    "LIMIT",
    "OFFSET",
    "JOIN",
    "LEFT JOIN",
    "INNER JOIN",
    "ON",
    "USING",
    "AS",
    "AND",
    "OR",
    "NOT",
    "IN",
    "IS NULL",
    "IS NOT NULL",
    "DISTINCT",
    "COUNT",
    "SUM",
    "AVG",
    "MIN",
    "MAX",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "WITH",
    "UNION ALL",
    "DESCRIBE",
    "SUMMARIZE",
    "EXPLAIN",
    "LIKE",
    "ILIKE",
    "BETWEEN",
    "CAST",
    "DESC",
    "ASC",
    "QUALIFY",
    "OVER",
    "PARTITION BY",
];

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
            focus: Pane::Traffic,
            zoom: false,
            overlay: Overlay::None,
            quit: false,
            title: "loom tui".into(),
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
            history_file: None,
            completion: None,
            running: None,
            query_error: None,
            statement_origin: (0, 0),
            grid: None,
            status: None,
            export: None,
            spinner: 0,
            tools: Vec::new(),
            approvals: Vec::new(),
            deny_reason: None,
            drawn_approval: std::cell::Cell::new(None),
            approval_scroll: (0, 0),
            approval_scroll_max: std::cell::Cell::new(0),
            now_minute: 0,
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
            }
            Msg::Event(ev) => self.on_event(ev.event),
            Msg::Reply(t, r) => self.on_reply(t, r),
            Msg::Action(a) => self.apply(a),
            Msg::Tick => self.spinner = self.spinner.wrapping_add(1),
            Msg::SessionEnded => {
                for s in &mut self.servers {
                    s.state = "stopped".into();
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
        if !self.approvals.is_empty() {
            // A waiting call comes first; while a denial reason is typed, keys are text.
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

    fn on_key(&mut self, k: KeyEvent) {
        if let Some(spec) = KeySpec::from_event(&k) {
            let editing_args = matches!(
                &self.overlay,
                Overlay::Palette(Palette {
                    stage: PaletteStage::Edit { .. },
                    ..
                })
            );
            for ctx in self.contexts() {
                // While arguments are being typed, plain keys belong to the text.
                if editing_args
                    && ctx == Context::Palette
                    && !k.modifiers.contains(KeyModifiers::CONTROL)
                    && k.code != KeyCode::Esc
                {
                    continue;
                }
                if let Some(a) = self.keymap.lookup(ctx, &spec) {
                    self.apply(a);
                    return;
                }
            }
        }
        // Not bound: text input where there is some.
        if let Some(reason) = &mut self.deny_reason {
            edit_line(reason, k.code);
            return;
        }
        match &mut self.overlay {
            Overlay::Filter => {
                edit_line(&mut self.filter, k.code);
                self.traffic_sel = 0;
                self.select_call();
                return;
            }
            Overlay::Palette(p) => {
                match &mut p.stage {
                    PaletteStage::Pick => {
                        edit_line(&mut p.filter, k.code);
                        p.selected = 0;
                    }
                    PaletteStage::Edit { args, .. } => {
                        args.input(k);
                        p.error = None;
                    }
                }
                return;
            }
            Overlay::None => {}
            _ => return,
        }
        if self.focus == Pane::Editor {
            let edited = self.editor.input(k);
            // Moving the cursor or the selection also re-applies the colours: they are cut
            // out of the selection so that it stays visible.
            self.dirty_highlight = true;
            if edited {
                self.history_pos = None;
                if self.completion.is_some() {
                    self.open_completion(false);
                }
            }
        }
    }

    fn on_paste(&mut self, text: &str) {
        match &mut self.overlay {
            Overlay::Palette(Palette {
                stage: PaletteStage::Edit { args, .. },
                ..
            }) => {
                args.insert_str(text);
            }
            Overlay::Filter => self.filter.push_str(text),
            Overlay::None if self.focus == Pane::Editor => {
                self.editor.insert_str(text);
                self.dirty_highlight = true;
            }
            _ => {}
        }
    }

    // ----- mouse ------------------------------------------------------------------------

    fn on_mouse(&mut self, m: MouseEvent) {
        if !matches!(self.overlay, Overlay::None) {
            match m.kind {
                MouseEventKind::ScrollDown => self.apply(Action::Down),
                MouseEventKind::ScrollUp => self.apply(Action::Up),
                _ => {}
            }
            return;
        }
        let layout = super::ui::layout(
            Rect::new(0, 0, self.size.0, self.size.1),
            self.zoom.then_some(self.focus),
        );
        let pos = Position::new(m.column, m.row);
        let Some((pane, rect)) = layout.panes().into_iter().find(|(_, r)| r.contains(pos)) else {
            return;
        };
        match m.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                self.focus_pane(pane);
                // The first inner row is 1 below the border; the grid has a header row too.
                let inner_row = m.row.saturating_sub(rect.y + 1) as usize;
                match pane {
                    Pane::Servers => {
                        self.server_sel = inner_row.min(self.servers.len().saturating_sub(1))
                    }
                    Pane::Traffic => {
                        // Traffic lists calls below a header line and the sparkline.
                        let first = super::ui::traffic::LIST_TOP;
                        if inner_row >= first {
                            let n = self.visible_calls().len();
                            let idx = self.traffic_scroll() + inner_row - first;
                            if idx < n {
                                self.traffic_sel = idx;
                                self.follow = idx == 0;
                                self.select_call();
                            }
                        }
                    }
                    Pane::Catalog => {
                        let first = 1; // the section tabs
                        if inner_row >= first {
                            let idx = inner_row - first;
                            if idx < self.section_len() {
                                self.catalog_sel[self.section.index()] = idx;
                                self.open_catalog_item();
                            }
                        }
                    }
                    Pane::Results => {
                        if let Some(g) = &mut self.grid
                            && inner_row >= 1
                        {
                            let r = g.top + (inner_row - 1) as u64;
                            if r < g.result.rows {
                                g.row = r;
                            }
                        }
                    }
                    _ => {}
                }
            }
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                let prev = self.focus;
                self.focus = pane;
                let a = if m.kind == MouseEventKind::ScrollDown {
                    Action::Down
                } else {
                    Action::Up
                };
                for _ in 0..3 {
                    self.apply(a);
                }
                self.focus = prev;
            }
            _ => {}
        }
    }

    // ----- actions ----------------------------------------------------------------------

    pub fn apply(&mut self, a: Action) {
        match a {
            Action::Quit => self.quit = true,
            Action::Help => {
                self.overlay = match self.overlay {
                    Overlay::Help { .. } => Overlay::None,
                    _ => Overlay::Help { scroll: 0 },
                }
            }
            Action::Palette => self.open_palette(),
            Action::Zoom => self.zoom = !self.zoom,
            Action::ToggleTheme => {
                let next = if self.theme_name == "dark" {
                    "light"
                } else {
                    "dark"
                };
                if let Some(t) = Theme::builtin(next) {
                    self.theme = t;
                    self.theme_name = next.into();
                    self.style_editor();
                    self.dirty_highlight = true;
                    self.rebuild_detail_lines();
                    self.set_status(format!("theme: {next}"), StatusKind::Info);
                }
            }
            Action::FocusNext | Action::FocusPrev if matches!(self.overlay, Overlay::None) => {
                let i = Pane::ORDER
                    .iter()
                    .position(|p| *p == self.focus)
                    .unwrap_or(0);
                let n = Pane::ORDER.len();
                let j = if a == Action::FocusNext {
                    (i + 1) % n
                } else {
                    (i + n - 1) % n
                };
                self.focus_pane(Pane::ORDER[j]);
            }
            Action::FocusNext | Action::FocusPrev => {}
            Action::FocusServers => self.focus_pane(Pane::Servers),
            Action::FocusTraffic => self.focus_pane(Pane::Traffic),
            Action::FocusDetail => self.focus_pane(Pane::Detail),
            Action::FocusCatalog => self.focus_pane(Pane::Catalog),
            Action::FocusEditor => self.focus_pane(Pane::Editor),
            Action::FocusResults => self.focus_pane(Pane::Results),
            Action::Close if self.deny_reason.is_some() => self.deny_reason = None,
            Action::Confirm if self.deny_reason.is_some() => {
                let reason = self.deny_reason.take().filter(|r| !r.trim().is_empty());
                self.settle(crate::types::events::Decision::Deny { reason });
            }
            Action::Close => self.close_overlay(),
            Action::Confirm => self.confirm(),
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => self.move_selection(a),
            Action::Left | Action::Right => self.move_sideways(a == Action::Right),
            Action::Open => match self.focus {
                Pane::Traffic => self.focus_pane(Pane::Detail),
                Pane::Catalog => self.open_catalog_item(),
                _ => {}
            },
            Action::ToggleStderr => self.show_stderr = !self.show_stderr,
            Action::ToggleFollow => {
                self.follow = !self.follow;
                if self.follow {
                    self.traffic_sel = 0;
                    self.select_call();
                }
            }
            Action::Filter => self.overlay = Overlay::Filter,
            Action::ClearFilter => {
                self.filter.clear();
                self.traffic_sel = 0;
            }
            Action::JumpToDataset => self.jump_to_reference(),
            Action::CopyDetail => {
                let text = match &self.detail {
                    Detail::Call(r) => format!("{}\n{}", pretty(&r.request), pretty(&r.response)),
                    Detail::Dataset { describe, .. } => {
                        serde_json::to_string_pretty(describe).unwrap_or_default()
                    }
                    Detail::Blob(b) => b.key.clone(),
                    Detail::Memory(m) => m.content.clone(),
                    Detail::Empty => String::new(),
                };
                if !text.is_empty() {
                    self.copy(&text, "detail");
                }
            }
            Action::NextSection | Action::PrevSection => {
                let i = self.section.index();
                let j = if a == Action::NextSection {
                    (i + 1) % 3
                } else {
                    (i + 2) % 3
                };
                self.section = Section::ORDER[j];
            }
            Action::Describe => {
                if let Some(d) = self.selected_dataset() {
                    self.open_describe(d);
                }
            }
            Action::QueryDataset => {
                let target = match &self.overlay {
                    Overlay::Describe(d) => Some(d.dataset.clone()),
                    _ => self.selected_dataset(),
                };
                if let Some(d) = target {
                    self.overlay = Overlay::None;
                    let sql = format!("SELECT * FROM {d};");
                    self.editor = TextArea::new(vec![sql.clone()]);
                    self.style_editor();
                    self.dirty_highlight = true;
                    self.run_sql(sql, (0, 0));
                    self.focus_pane(Pane::Results);
                }
            }
            Action::RunQuery => self.run_statement_under_cursor(),
            Action::CancelQuery => {
                if self.running.is_some() {
                    self.send(Purpose::Cancel, Request::CancelQuery);
                    self.set_status("cancelling the query…", StatusKind::Info);
                }
            }
            Action::HistoryPrev | Action::HistoryNext => {
                self.walk_history(a == Action::HistoryPrev)
            }
            Action::Complete => self.open_completion(true),
            Action::CopyCell | Action::CopyRow | Action::CopyAll => self.copy_grid(a),
            Action::ExportCsv | Action::ExportJson => {
                let format = if a == Action::ExportCsv {
                    "csv"
                } else {
                    "json"
                };
                let table = match (&self.overlay, self.focus) {
                    (Overlay::Describe(d), _) => Some(d.dataset.clone()),
                    (_, Pane::Results) => self.grid.as_ref().map(|g| g.result.table.clone()),
                    (_, Pane::Catalog) => self.selected_dataset(),
                    _ => None,
                };
                match table {
                    Some(table) => {
                        self.export = Some(ExportState {
                            table: table.clone(),
                            rows: 0,
                            total: 0,
                        });
                        self.send(
                            Purpose::Export,
                            Request::Export {
                                table,
                                format: format.into(),
                            },
                        );
                        self.set_status(format!("exporting {format}…"), StatusKind::Info);
                    }
                    None => self.set_status(
                        "nothing to export here: select a dataset or run a query",
                        StatusKind::Error,
                    ),
                }
            }
            Action::ApproveOnce => self.settle(crate::types::events::Decision::Once),
            Action::ApproveSession => self.settle(crate::types::events::Decision::Session),
            Action::Deny if !self.approvals.is_empty() => self.deny_reason = Some(String::new()),
            Action::Deny => {}
        }
    }

    /// Scrolls the approval prompt on screen; a prompt for another call starts at the top.
    fn scroll_approval(&mut self, delta: i64) {
        let Some(shown) = self
            .drawn_approval
            .get()
            .or_else(|| self.approvals.first().map(|a| a.approval))
        else {
            return;
        };
        let current = if self.approval_scroll.0 == shown {
            self.approval_scroll.1
        } else {
            0
        };
        let max = self.approval_scroll_max.get() as i64;
        let next = (current as i64).saturating_add(delta).clamp(0, max) as usize;
        self.approval_scroll = (shown, next);
    }

    /// Sends the decision on the oldest waiting call.
    fn settle(&mut self, decision: crate::types::events::Decision) {
        let shown = self.drawn_approval.get();
        let Some(i) = self
            .approvals
            .iter()
            .position(|a| shown == Some(a.approval))
        else {
            self.set_status(
                "that call was already decided elsewhere; look again",
                StatusKind::Error,
            );
            return;
        };
        let req = self.approvals.remove(i);
        let what = match &decision {
            crate::types::events::Decision::Once => "approved once".to_owned(),
            crate::types::events::Decision::Session => "approved for this session".to_owned(),
            crate::types::events::Decision::Deny { reason: Some(r) } => {
                format!("denied ({r})")
            }
            crate::types::events::Decision::Deny { reason: None } => "denied".to_owned(),
        };
        self.send(
            Purpose::Approve,
            Request::Approve {
                approval: req.approval,
                decision,
            },
        );
        self.set_status(format!("{}: {what}", req.tool), StatusKind::Info);
    }

    fn focus_pane(&mut self, p: Pane) {
        self.focus = p;
        self.completion = None;
        if p == Pane::Traffic && matches!(self.detail, Detail::Empty) {
            self.select_call();
        }
    }

    fn close_overlay(&mut self) {
        if matches!(self.overlay, Overlay::None) {
            self.completion = None;
        }
        if let Overlay::Palette(Palette {
            stage: PaletteStage::Edit { .. },
            ..
        }) = &self.overlay
        {
            // Esc in the argument editor goes back to the list first.
            if let Overlay::Palette(p) = &mut self.overlay {
                p.stage = PaletteStage::Pick;
                p.error = None;
            }
            return;
        }
        self.overlay = Overlay::None;
    }

    fn confirm(&mut self) {
        if self.completion.is_some() && matches!(self.overlay, Overlay::None) {
            self.accept_completion();
            return;
        }
        match std::mem::replace(&mut self.overlay, Overlay::None) {
            Overlay::Filter => {
                self.traffic_sel = 0;
                self.select_call();
            }
            Overlay::Palette(mut p) => {
                match &p.stage {
                    PaletteStage::Pick => {
                        if let Some(tool) = self.palette_matches(&p.filter).get(p.selected).cloned()
                        {
                            let prefill = prefill_arguments(&tool);
                            let lines: Vec<String> = prefill.lines().map(str::to_owned).collect();
                            // The cursor waits at the end of the first value, ready to edit it.
                            let cursor = match lines.get(1) {
                                Some(l) if lines.len() > 2 => {
                                    let n = l.chars().count();
                                    (1, if l.ends_with(',') { n - 1 } else { n })
                                }
                                _ => (0, lines.first().map_or(0, |l| l.chars().count())),
                            };
                            let mut args = TextArea::new(lines);
                            args.move_cursor(tui_textarea::CursorMove::Jump(
                                cursor.0 as u16,
                                cursor.1 as u16,
                            ));
                            args.set_cursor_line_style(ratatui::style::Style::default());
                            p.stage = PaletteStage::Edit {
                                tool,
                                args: Box::new(args),
                            };
                        }
                    }
                    PaletteStage::Edit { tool, args } => {
                        let text = args.lines().join("\n");
                        match validate_arguments(tool, &text) {
                            Ok(arguments) => {
                                let name = tool["name"].as_str().unwrap_or_default().to_owned();
                                self.send(
                                    Purpose::CallTool(name.clone()),
                                    Request::CallTool {
                                        name: name.clone(),
                                        arguments,
                                    },
                                );
                                self.set_status(format!("calling {name}…"), StatusKind::Info);
                                self.focus_pane(Pane::Traffic);
                                return;
                            }
                            Err(e) => p.error = Some(e),
                        }
                    }
                }
                self.overlay = Overlay::Palette(p);
            }
            other => self.overlay = other,
        }
    }

    fn move_selection(&mut self, a: Action) {
        let page = (self.size.1 / 3).max(3) as i64;
        let delta: i64 = match a {
            Action::Up => -1,
            Action::Down => 1,
            Action::PageUp => -page,
            Action::PageDown => page,
            Action::Top => i64::MIN / 2,
            _ => i64::MAX / 2,
        };
        let step = |cur: usize, len: usize| -> usize {
            if len == 0 {
                return 0;
            }
            (cur as i64 + delta).clamp(0, len as i64 - 1) as usize
        };
        if !self.approvals.is_empty() {
            self.scroll_approval(delta);
            return;
        }
        match &mut self.overlay {
            Overlay::Help { scroll } => {
                *scroll = (*scroll as i64 + delta).clamp(0, 500) as u16;
                return;
            }
            Overlay::Palette(p) => {
                let filter = p.filter.clone();
                let n = self.palette_matches(&filter).len();
                if let Overlay::Palette(p) = &mut self.overlay {
                    p.selected = step(p.selected, n);
                }
                return;
            }
            Overlay::Describe(d) => {
                let n = d.describe.as_ref().map_or(0, |v| v.columns.len());
                d.selected = step(d.selected, n);
                self.chart_for_selection();
                return;
            }
            Overlay::Filter => return,
            Overlay::None => {}
        }
        if let Some(c) = &mut self.completion {
            c.selected = step(c.selected, c.items.len());
            return;
        }
        match self.focus {
            Pane::Servers => self.server_sel = step(self.server_sel, self.servers.len()),
            Pane::Traffic => {
                let n = self.visible_calls().len();
                self.traffic_sel = step(self.traffic_sel, n);
                self.follow = self.traffic_sel == 0;
                self.select_call();
            }
            Pane::Detail => {
                let n = self.detail_lines.len();
                self.detail_scroll = step(self.detail_scroll, n.max(1));
            }
            Pane::Catalog => {
                let n = self.section_len();
                let i = self.section.index();
                self.catalog_sel[i] = step(self.catalog_sel[i], n);
                self.open_catalog_item();
            }
            Pane::Results => {
                if let Some(g) = &mut self.grid {
                    let n = g.result.rows;
                    if n > 0 {
                        g.row = (g.row as i64).saturating_add(delta).clamp(0, n as i64 - 1) as u64;
                    }
                }
                self.ensure_pages();
            }
            Pane::Editor => {}
        }
    }

    fn move_sideways(&mut self, right: bool) {
        match self.focus {
            Pane::Results => {
                if let Some(g) = &mut self.grid {
                    let n = g.result.columns.len();
                    if right && g.col + 1 < n {
                        g.col += 1;
                    } else if !right && g.col > 0 {
                        g.col -= 1;
                    }
                }
            }
            Pane::Catalog => self.apply(if right {
                Action::NextSection
            } else {
                Action::PrevSection
            }),
            _ => {}
        }
    }

    // ----- traffic ----------------------------------------------------------------------

    /// Calls that pass the filter, newest first.
    pub fn visible_calls(&self) -> Vec<&CallSummary> {
        let f = self.filter.to_lowercase();
        self.calls
            .iter()
            .rev()
            .filter(|c| {
                f.is_empty()
                    || [&c.server, &c.tool, &c.outcome, &c.caller, &c.arguments]
                        .iter()
                        .any(|s| s.to_lowercase().contains(&f))
                    || c.reference
                        .as_deref()
                        .is_some_and(|r| r.to_lowercase().contains(&f))
            })
            .collect()
    }

    /// The first visible call row, so the selection stays on screen.
    pub fn traffic_scroll(&self) -> usize {
        let rows = super::ui::traffic_rows(self.size, self.zoom.then_some(self.focus));
        self.traffic_sel.saturating_sub(rows.saturating_sub(1))
    }

    fn select_call(&mut self) {
        let call = self.visible_calls().get(self.traffic_sel).map(|c| c.call);
        if let Some(call) = call {
            if matches!(&self.detail, Detail::Call(r) if r.summary.call == call && r.summary.outcome != "running")
            {
                return;
            }
            self.send(Purpose::CallDetail(call), Request::CallDetail { call });
        }
    }

    fn jump_to_reference(&mut self) {
        let reference = match &self.detail {
            Detail::Call(r) => r
                .summary
                .reference
                .clone()
                .map(|x| (r.summary.outcome.clone(), x)),
            _ => None,
        }
        .or_else(|| {
            self.visible_calls()
                .get(self.traffic_sel)
                .and_then(|c| c.reference.clone().map(|r| (c.outcome.clone(), r)))
        });
        let Some((outcome, reference)) = reference else {
            self.set_status(
                "this call made no dataset or parked text",
                StatusKind::Error,
            );
            return;
        };
        if outcome == "parked" {
            self.section = Section::Blobs;
            if let Some(i) = self.blobs.iter().position(|b| b.key == reference) {
                self.catalog_sel[1] = i;
            }
        } else {
            self.section = Section::Datasets;
            if let Some(i) = self.datasets.iter().position(|d| d.dataset == reference) {
                self.catalog_sel[0] = i;
            }
        }
        self.focus = Pane::Catalog;
        match outcome.as_str() {
            "parked" => self.open_catalog_item(),
            _ => self.show_dataset(reference),
        }
    }

    // ----- catalog ----------------------------------------------------------------------

    pub fn section_len(&self) -> usize {
        match self.section {
            Section::Datasets => self.datasets.len(),
            Section::Blobs => self.blobs.len(),
            Section::Memories => self.memories.len(),
        }
    }

    pub fn selected_dataset(&self) -> Option<String> {
        if self.section != Section::Datasets {
            return None;
        }
        self.datasets
            .get(self.catalog_sel[0])
            .map(|d| d.dataset.clone())
    }

    fn show_dataset(&mut self, dataset: String) {
        self.send(
            Purpose::DatasetDetail(dataset.clone()),
            Request::Describe { dataset },
        );
    }

    fn open_catalog_item(&mut self) {
        let i = self.catalog_sel[self.section.index()];
        match self.section {
            Section::Datasets => {
                if let Some(d) = self.datasets.get(i) {
                    let name = d.dataset.clone();
                    self.show_dataset(name);
                }
            }
            Section::Blobs => {
                if let Some(b) = self.blobs.get(i) {
                    self.set_detail(Detail::Blob(b.clone()));
                }
            }
            Section::Memories => {
                if let Some(m) = self.memories.get(i) {
                    self.set_detail(Detail::Memory(m.clone()));
                }
            }
        }
    }

    fn request_chart(&mut self, dataset: String, column: String) {
        self.send(
            Purpose::Chart(dataset.clone(), column.clone()),
            Request::Chart {
                table: dataset,
                column,
                bins: 12,
            },
        );
    }

    /// Asks for the selected column's chart in the describe view if it is not there yet.
    fn chart_for_selection(&mut self) {
        let want = match &self.overlay {
            Overlay::Describe(d) => d
                .describe
                .as_ref()
                .and_then(|v| v.columns.get(d.selected))
                .map(|c| c.name.as_str())
                .filter(|c| !d.requested.contains(*c))
                .map(|c| (d.dataset.clone(), c.to_owned())),
            _ => None,
        };
        if let Some((dataset, column)) = want {
            if let Overlay::Describe(d) = &mut self.overlay {
                d.requested.insert(column.clone());
            }
            self.request_chart(dataset, column);
        }
    }

    fn open_describe(&mut self, dataset: String) {
        self.overlay = Overlay::Describe(Box::new(Describe {
            dataset: dataset.clone(),
            describe: None,
            charts: HashMap::new(),
            requested: HashSet::new(),
            selected: 0,
        }));
        self.send(
            Purpose::Describe(dataset.clone()),
            Request::Describe { dataset },
        );
    }

    // ----- detail -----------------------------------------------------------------------

    fn set_detail(&mut self, d: Detail) {
        let same_item = match (&self.detail, &d) {
            (Detail::Call(a), Detail::Call(b)) => a.summary.call == b.summary.call,
            (Detail::Dataset { dataset: a, .. }, Detail::Dataset { dataset: b, .. }) => a == b,
            _ => false,
        };
        if !same_item {
            self.detail_scroll = 0;
        }
        self.detail = d;
        self.rebuild_detail_lines();
    }

    /// Highlighting is done once per change, not per frame.
    fn rebuild_detail_lines(&mut self) {
        let th = &self.theme;
        let h = &self.highlighter;
        let heading = |t: String| Line::styled(t, th.title);
        self.detail_lines = match &self.detail {
            Detail::Empty => Vec::new(),
            Detail::Call(r) => {
                let s = &r.summary;
                let mut lines = vec![heading(format!(
                    "#{} {} → {}/{} · {} · {} ms",
                    s.call, s.caller, s.server, s.tool, s.outcome, s.millis
                ))];
                if let Some(d) = &s.decision {
                    lines.push(Line::styled(format!("approval: {d}"), th.warning));
                }
                if let Some(reference) = &s.reference {
                    lines.push(Line::styled(
                        format!("{} → {reference}   (o: go to it)", s.outcome),
                        th.accent,
                    ));
                }
                lines.push(Line::styled(
                    format!(
                        "in {} B ≈{} tok → out {} B ≈{} tok",
                        s.bytes_in, s.tokens_in, s.bytes_out, s.tokens_out
                    ),
                    th.muted,
                ));
                lines.push(heading("request".into()));
                lines.extend(h.json_lines(&pretty(&r.request), th));
                lines.push(heading("response".into()));
                lines.extend(response_lines(&r.response, h, th));
                lines
            }
            Detail::Dataset { dataset, describe } => dataset_lines(dataset, describe, th),
            Detail::Blob(b) => vec![
                heading(format!("parked {}", b.key)),
                Line::raw(b.summary.clone()),
                Line::styled(
                    format!(
                        "{} chars, {} lines, kept until {}",
                        b.chars, b.lines, b.expires
                    ),
                    th.muted,
                ),
                Line::raw(""),
                Line::styled(
                    "The model reads it with loom_fetch (offset/length or a pattern).".to_owned(),
                    th.muted,
                ),
            ],
            Detail::Memory(m) => {
                let mut lines = vec![
                    heading(format!("memory {} v{}", m.key, m.version)),
                    Line::styled(
                        format!(
                            "by {} at {}{}{}",
                            m.author,
                            m.at,
                            if m.pinned { " · pinned" } else { "" },
                            if m.tags.is_empty() {
                                String::new()
                            } else {
                                format!(" · tags: {}", m.tags.join(", "))
                            }
                        ),
                        th.muted,
                    ),
                ];
                lines.extend(m.content.lines().map(|l| Line::raw(l.to_owned())));
                lines
            }
        };
    }

    // ----- editor -----------------------------------------------------------------------

    fn style_editor(&mut self) {
        self.editor.set_style(self.theme.base);
        self.editor
            .set_cursor_line_style(ratatui::style::Style::default());
        self.editor.set_line_number_style(self.theme.muted);
        self.editor.set_placeholder_style(self.theme.muted);
    }

    fn run_statement_under_cursor(&mut self) {
        let text = self.editor.lines().join("\n");
        let (sql, origin) = match self.editor.selection_range() {
            Some((a, b)) => {
                let lines = self.editor.lines();
                (slice_range(lines, a, b), a)
            }
            None => statement_at(&text, self.editor.cursor()),
        };
        if sql.trim().is_empty() {
            self.set_status("no statement under the cursor", StatusKind::Error);
            return;
        }
        self.run_sql(sql, origin);
    }

    fn run_sql(&mut self, sql: String, origin: (usize, usize)) {
        if self.running.is_some() {
            self.set_status(
                "a query is already running (ctrl-c cancels it)",
                StatusKind::Error,
            );
            return;
        }
        let sql = sql.trim().to_owned();
        self.remember(&sql);
        self.query_error = None;
        self.statement_origin = origin;
        self.dirty_highlight = true;
        let t = self.send(Purpose::Query, Request::Query { sql });
        self.running = Some(Running {
            ticket: t,
            started: Instant::now(),
        });
        self.set_status("running…", StatusKind::Info);
    }

    fn remember(&mut self, sql: &str) {
        if self.history.last().map(String::as_str) == Some(sql) {
            return;
        }
        self.history.push(sql.to_owned());
        self.history_pos = None;
        if let Some(path) = &self.history_file {
            save_history(path, sql);
        }
    }

    fn walk_history(&mut self, older: bool) {
        if self.history.is_empty() {
            return;
        }
        let n = self.history.len();
        let pos = match (self.history_pos, older) {
            (None, true) => n - 1,
            (None, false) => return,
            (Some(p), true) => p.saturating_sub(1),
            (Some(p), false) if p + 1 >= n => {
                self.history_pos = None;
                self.editor = TextArea::default();
                self.style_editor();
                return;
            }
            (Some(p), false) => p + 1,
        };
        self.history_pos = Some(pos);
        let lines: Vec<String> = self.history[pos].lines().map(str::to_owned).collect();
        self.editor = TextArea::new(lines);
        self.editor.move_cursor(tui_textarea::CursorMove::Bottom);
        self.editor.move_cursor(tui_textarea::CursorMove::End);
        self.style_editor();
        self.dirty_highlight = true;
    }

    /// Names the editor can complete: datasets, their columns, SQL keywords.
    fn completion_candidates(&self) -> Vec<String> {
        let mut all: Vec<String> = self.datasets.iter().map(|d| d.dataset.clone()).collect();
        for d in &self.datasets {
            for (c, _) in &d.columns {
                let quoted = if c
                    .chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_')
                {
                    c.clone()
                } else {
                    format!("\"{}\"", c.replace('"', "\"\""))
                };
                if !all.contains(&quoted) {
                    all.push(quoted);
                }
            }
        }
        all.extend(SQL_KEYWORDS.iter().map(|k| (*k).to_owned()));
        all
    }

    fn open_completion(&mut self, explicit: bool) {
        let (row, col) = self.editor.cursor();
        let line = self.editor.lines().get(row).cloned().unwrap_or_default();
        let before: String = line.chars().take(col).collect();
        let prefix: String = before
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.' || *c == '"')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let p = prefix.trim_start_matches('"').to_lowercase();
        if p.is_empty() && !explicit {
            self.completion = None;
            return;
        }
        let items: Vec<String> = self
            .completion_candidates()
            .into_iter()
            .filter(|c| {
                c.trim_start_matches('"').to_lowercase().starts_with(&p) && c.len() > p.len()
            })
            .take(50)
            .collect();
        if items.is_empty() {
            self.completion = None;
            if explicit {
                self.set_status("no completion", StatusKind::Info);
            }
            return;
        }
        if explicit && items.len() == 1 {
            self.completion = Some(Completion {
                items,
                selected: 0,
                prefix_len: prefix.chars().count(),
            });
            self.accept_completion();
            return;
        }
        self.completion = Some(Completion {
            items,
            selected: 0,
            prefix_len: prefix.chars().count(),
        });
    }

    fn accept_completion(&mut self) {
        let Some(c) = self.completion.take() else {
            return;
        };
        let Some(item) = c.items.get(c.selected) else {
            return;
        };
        self.editor.delete_str(0);
        for _ in 0..c.prefix_len {
            self.editor.delete_char();
        }
        self.editor.insert_str(item);
        self.dirty_highlight = true;
    }

    // ----- results ----------------------------------------------------------------------

    /// Rows the grid can show at the current size.
    pub fn grid_rows(&self) -> u64 {
        super::ui::grid_rows(self.size, self.zoom.then_some(self.focus)) as u64
    }

    /// Keeps the selected row on screen and asks for the pages the view needs.
    fn ensure_pages(&mut self) {
        let rows = self.grid_rows().max(1);
        let Some(g) = &mut self.grid else { return };
        if g.row < g.top {
            g.top = g.row;
        } else if g.row >= g.top + rows {
            g.top = g.row + 1 - rows;
        }
        let first = g.top / PAGE_ROWS;
        let last = (g.top + rows) / PAGE_ROWS;
        // Only pages near the view stay cached.
        g.pages.retain(|p, _| *p + 2 >= first && *p <= last + 2);
        self.request_pages(first..=last);
    }

    /// Asks for the grid's pages in `pages` that it neither has nor awaits.
    fn request_pages(&mut self, pages: impl IntoIterator<Item = u64>) {
        let Some(g) = &mut self.grid else { return };
        let want: Vec<u64> = pages
            .into_iter()
            .filter(|p| {
                p * PAGE_ROWS < g.result.rows && !g.pages.contains_key(p) && g.requested.insert(*p)
            })
            .collect();
        let table = g.result.table.clone();
        for p in want {
            self.send(
                Purpose::Rows(table.clone(), p),
                Request::Rows {
                    table: table.clone(),
                    offset: p * PAGE_ROWS,
                    limit: PAGE_ROWS,
                },
            );
        }
    }

    fn copy_grid(&mut self, a: Action) {
        let Some(g) = &self.grid else {
            self.set_status("no result to copy: run a query first", StatusKind::Error);
            return;
        };
        match a {
            Action::CopyCell => match g.cell(g.row, g.col) {
                Some(v) => {
                    let text = v.unwrap_or("").to_owned();
                    self.copy(&text, "cell");
                }
                None => self.set_status("that row is still loading", StatusKind::Error),
            },
            Action::CopyRow => match g.row_cells(g.row) {
                Some(cells) => {
                    let text = tsv_row(cells);
                    self.copy(&text, "row");
                }
                None => self.set_status("that row is still loading", StatusKind::Error),
            },
            _ => {
                // The whole result: every row must be loaded; large results go to a file.
                let total = g.result.rows;
                let loaded: u64 = g.pages.values().map(|p| p.len() as u64).sum();
                if total > COPY_ALL_MAX || loaded < total {
                    if total > COPY_ALL_MAX {
                        self.set_status(
                            format!("{total} rows is too many for the clipboard: export with x (CSV) or X (JSON)"),
                            StatusKind::Error,
                        );
                    } else {
                        self.set_status("rows are still loading; try again", StatusKind::Error);
                        let pages = total.div_ceil(PAGE_ROWS);
                        self.request_pages(0..pages);
                    }
                    return;
                }
                let mut text = g
                    .result
                    .columns
                    .iter()
                    .map(|(n, _)| n.clone())
                    .collect::<Vec<_>>()
                    .join("\t");
                for r in 0..total {
                    if let Some(cells) = g.row_cells(r) {
                        text.push('\n');
                        text.push_str(&tsv_row(cells));
                    }
                }
                self.copy(&text, &format!("result ({total} rows)"));
            }
        }
    }

    fn copy(&mut self, text: &str, what: &str) {
        let backend = self.clipboard.copy(text);
        let msg = super::clipboard::status_message(what, text.len(), backend);
        self.set_status(msg, StatusKind::Success);
    }

    // ----- palette ----------------------------------------------------------------------

    fn open_palette(&mut self) {
        if self.tools.is_empty() {
            self.send(Purpose::Tools, Request::Tools);
        }
        self.overlay = Overlay::Palette(Palette {
            filter: String::new(),
            selected: 0,
            stage: PaletteStage::Pick,
            error: None,
        });
    }

    pub fn palette_matches(&self, filter: &str) -> Vec<Value> {
        let f = filter.to_lowercase();
        self.tools
            .iter()
            .filter(|t| {
                f.is_empty()
                    || t["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_lowercase()
                        .contains(&f)
                    || t["description"]
                        .as_str()
                        .unwrap_or_default()
                        .to_lowercase()
                        .contains(&f)
            })
            .cloned()
            .collect()
    }

    // ----- the session's events and replies ---------------------------------------------

    fn on_event(&mut self, ev: Event) {
        match ev {
            Event::ServerState { .. } => {
                self.send(Purpose::Servers, Request::Servers);
                self.tools.clear();
            }
            Event::ServerStderr { server, line } => {
                if let Some(s) = self.servers.iter_mut().find(|s| s.name == server) {
                    s.stderr.push(line);
                    if s.stderr.len() > 200 {
                        s.stderr.remove(0);
                    }
                }
            }
            Event::CallStarted(c) | Event::CallFinished(c) => {
                let call = c.call;
                let finished = c.outcome != "running";
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
                if !self.approvals.iter().any(|a| a.approval == req.approval) {
                    self.approvals.push(req);
                }
            }
            Event::ApprovalSettled { approval, .. } => {
                self.approvals.retain(|a| a.approval != approval);
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

    /// A dataset left the session: it leaves the catalog at once, and whatever showed it
    /// (Detail, the describe view) says so instead of offering a table that is gone.
    fn dataset_dropped(&mut self, dataset: String, reason: crate::types::data::DropReason) {
        let listed = self.datasets.iter().position(|d| d.dataset == dataset);
        if let Some(i) = listed {
            self.datasets.remove(i);
            if self.catalog_sel[0] > i {
                self.catalog_sel[0] -= 1;
            }
            self.catalog_sel[0] = self.catalog_sel[0].min(self.datasets.len().saturating_sub(1));
        }
        let shown = matches!(&self.detail, Detail::Dataset { dataset: d, .. } if *d == dataset);
        if shown {
            self.set_detail(Detail::Empty);
        }
        let described = matches!(&self.overlay, Overlay::Describe(d) if d.dataset == dataset);
        if described {
            self.overlay = Overlay::None;
        }
        if listed.is_some() || shown || described {
            let why = match reason {
                crate::types::data::DropReason::Dropped => "dropped",
                crate::types::data::DropReason::Evicted => "evicted to stay within memory_budget",
            };
            self.set_status(format!("{dataset} was {why}"), StatusKind::Info);
        }
        // A listing asked for before the drop may still hold it; this one cannot.
        self.send(Purpose::Datasets, Request::Datasets);
    }

    fn on_reply(&mut self, ticket: u64, r: Result<Reply, String>) {
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
                self.grid = Some(Grid::new(result));
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
                    if page == 0 {
                        g.fit(&rows);
                    }
                    g.pages.insert(page, rows);
                }
            }
            (Purpose::Export, Reply::Exported { path, rows }) => {
                self.export = None;
                self.set_status(
                    format!("exported {rows} rows to {path}"),
                    StatusKind::Success,
                );
            }
            (Purpose::Tools, Reply::Tools { tools }) => self.tools = tools,
            (Purpose::Approvals, Reply::Approvals { approvals }) => {
                // Calls that waited before this workbench came (the backlog may not reach back).
                for a in approvals {
                    if !self.approvals.iter().any(|x| x.approval == a.approval) {
                        self.approvals.push(a);
                    }
                }
                self.approvals.sort_by_key(|a| a.approval);
            }
            (Purpose::CallTool(name), Reply::ToolResult { result }) => {
                let is_error = result["isError"] == Value::Bool(true);
                let what = result["structuredContent"]["ref"]
                    .as_str()
                    .map(|r| format!(": dataset {r} (o opens it)"))
                    .or_else(|| {
                        result["structuredContent"]["key"]
                            .as_str()
                            .map(|k| format!(": parked {k}"))
                    })
                    .unwrap_or_default();
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
            _ => {}
        }
    }

    fn on_failure(&mut self, purpose: Purpose, ticket: u64, e: String) {
        match purpose {
            Purpose::Query => {
                if self.running.as_ref().is_some_and(|r| r.ticket == ticket) {
                    self.running = None;
                }
                let at = error_position(&e).map(|(l, c)| {
                    let (ol, oc) = self.statement_origin;
                    if l == 0 { (ol, oc + c) } else { (ol + l, c) }
                });
                self.query_error = Some(QueryError {
                    message: e.clone(),
                    at,
                });
                self.dirty_highlight = true;
                let first = e.lines().next().unwrap_or_default().to_owned();
                self.set_status(format!("query failed: {first}"), StatusKind::Error);
                self.focus = Pane::Editor;
            }
            Purpose::Rows(table, page) => {
                let current = self.grid.as_ref().is_some_and(|g| g.result.table == table);
                if current && e.contains("no dataset named") {
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
            _ => self.set_status(e, StatusKind::Error),
        }
    }
}

/// Typing into a one-line input.
fn edit_line(line: &mut String, code: KeyCode) {
    match code {
        KeyCode::Char(c) => line.push(c),
        KeyCode::Backspace => {
            line.pop();
        }
        _ => {}
    }
}

fn pretty(text: &str) -> String {
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| text.to_owned())
}

/// The response as a reader wants it: a text block that holds JSON is unfolded.
/// A tool result as a reader wants it: each text block as its own lines (an envelope or a
/// parked pointer reads as written), structured content and anything else as pretty JSON.
fn response_lines(response: &str, h: &Highlighter, th: &Theme) -> Vec<Line<'static>> {
    let Ok(Value::Object(mut v)) = serde_json::from_str::<Value>(response) else {
        return h.json_lines(&pretty(response), th);
    };
    let mut lines = Vec::new();
    if let Some(Value::Array(blocks)) = v.remove("content") {
        for b in blocks {
            match b["text"].as_str() {
                Some(text) if b["type"] == "text" => {
                    lines.push(Line::styled("─ text".to_owned(), th.muted));
                    if serde_json::from_str::<Value>(text).is_ok() {
                        lines.extend(h.json_lines(&pretty(text), th));
                    } else {
                        lines.extend(text.lines().map(|l| Line::raw(l.to_owned())));
                    }
                }
                _ => {
                    lines.push(Line::styled(
                        format!("─ {}", b["type"].as_str().unwrap_or("block")),
                        th.muted,
                    ));
                    lines.extend(h.json_lines(&pretty(&b.to_string()), th));
                }
            }
        }
    }
    if !v.is_empty() {
        lines.push(Line::styled("─ result".to_owned(), th.muted));
        lines.extend(h.json_lines(&pretty(&Value::Object(v).to_string()), th));
    }
    lines
}

fn dataset_lines(dataset: &str, d: &Description, th: &Theme) -> Vec<Line<'static>> {
    use ratatui::text::Span;
    let mut lines = vec![Line::styled(
        format!("{dataset} · {} rows", d.rows),
        th.title,
    )];
    if let Some(p) = &d.provenance {
        lines.push(Line::styled(
            format!("from {}/{} at {} ({})", p.server, p.tool, p.at, p.rung),
            th.muted,
        ));
        if let Some(a) = &p.arguments {
            lines.push(Line::styled(format!("arguments {a}"), th.muted));
        }
    }
    lines.push(Line::styled("columns".to_owned(), th.title));
    for c in &d.columns {
        let mut spans = vec![
            Span::styled(format!("{:<22}", c.name), th.function),
            Span::styled(format!("{:<12}", c.ty), th.keyword),
        ];
        let mut facts = Vec::new();
        if c.null_fraction > 0.0 {
            facts.push(format!("null {:.0}%", c.null_fraction * 100.0));
        }
        facts.push(format!("~{} distinct", c.distinct));
        if let (Some(lo), Some(hi)) = (&c.min, &c.max) {
            facts.push(format!("{} … {}", scalar(lo), scalar(hi)));
        }
        if !c.top.is_empty() {
            facts.push(format!("top {}", top_text(&c.top, 3)));
        }
        spans.push(Span::styled(facts.join(" · "), th.muted));
        lines.push(Line::from(spans));
    }
    if !d.join_hints.is_empty() {
        lines.push(Line::styled("join hints".to_owned(), th.title));
        for h in &d.join_hints {
            lines.push(Line::raw(format!("  {}", hint_text(h))));
        }
    }
    if !d.context.is_empty() {
        lines.push(Line::styled("context".to_owned(), th.title));
        for (k, v) in &d.context {
            lines.push(Line::raw(format!("  {k}: {}", scalar(v))));
        }
    }
    if !d.sample_rows.is_empty() {
        lines.push(Line::styled("sample rows".to_owned(), th.title));
        for r in d.sample_rows.iter().take(10) {
            lines.push(Line::raw(format!("  {r}")));
        }
    }
    lines.push(Line::styled(
        "d: describe with charts · s: query it · x/X: export".to_owned(),
        th.muted,
    ));
    lines
}

/// `value (count)` for the first `n` top values.
pub(crate) fn top_text(top: &[(Value, u64)], n: usize) -> String {
    top.iter()
        .take(n)
        .map(|(v, count)| format!("{} ({count})", scalar(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A join hint as a person reads it: the join, then how much of each side the other holds.
pub(crate) fn hint_text(h: &crate::types::data::JoinHint) -> String {
    format!(
        "{} = {}.{}  ({:.0}% found there, {:.0}% of theirs here)",
        h.column,
        h.other,
        h.other_column,
        h.this_in_other * 100.0,
        h.other_in_this * 100.0
    )
}

pub(crate) fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn tsv_row(cells: &[Option<String>]) -> String {
    cells
        .iter()
        .map(|c| c.as_deref().unwrap_or("").replace(['\t', '\n', '\r'], " "))
        .collect::<Vec<_>>()
        .join("\t")
}

/// The text between two (row, col) positions of the editor.
fn slice_range(lines: &[String], a: (usize, usize), b: (usize, usize)) -> String {
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate().take(b.0 + 1).skip(a.0) {
        let chars: Vec<char> = l.chars().collect();
        let from = if i == a.0 { a.1.min(chars.len()) } else { 0 };
        let to = if i == b.0 {
            b.1.min(chars.len())
        } else {
            chars.len()
        };
        if i > a.0 {
            out.push('\n');
        }
        out.extend(&chars[from..to.max(from)]);
    }
    out
}

/// The `;`-separated statement that holds the cursor, and where it starts in the editor.
pub fn statement_at(text: &str, cursor: (usize, usize)) -> (String, (usize, usize)) {
    // Statement boundaries, ignoring `;` inside quotes and comments.
    let mut bounds = vec![0usize];
    let b = text.as_bytes();
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                b'\'' | b'"' => quote = Some(c),
                b'-' if b.get(i + 1) == Some(&b'-') => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                }
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    i += 2;
                    while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                        i += 1;
                    }
                    i += 1;
                }
                b';' => bounds.push(i + 1),
                _ => {}
            },
        }
        i += 1;
    }
    bounds.push(text.len() + 1);
    // The cursor as a byte offset.
    let mut offset = 0;
    for (n, line) in text.split('\n').enumerate() {
        if n == cursor.0 {
            offset += line
                .char_indices()
                .nth(cursor.1)
                .map(|(o, _)| o)
                .unwrap_or(line.len());
            break;
        }
        offset += line.len() + 1;
    }
    let mut pick = (0, text.len());
    for w in bounds.windows(2) {
        let (s, e) = (w[0], (w[1] - 1).min(text.len()));
        // A cursor right after a `;` belongs to the statement it ends.
        if offset >= s && offset <= e {
            pick = (s, e);
            if !text[s..e].trim().is_empty() {
                break;
            }
        }
    }
    // An empty pick (cursor on a blank line after the last `;`) takes the previous statement.
    if text[pick.0..pick.1].trim().is_empty() {
        for w in bounds.windows(2).rev() {
            let (s, e) = (w[0], (w[1] - 1).min(text.len()));
            if e <= offset && !text[s..e].trim().is_empty() {
                pick = (s, e);
                break;
            }
        }
    }
    let stmt = &text[pick.0..pick.1];
    let lead = stmt.len() - stmt.trim_start().len();
    let start = pick.0 + lead;
    let row = text[..start].matches('\n').count();
    let line_start = text[..start].rfind('\n').map_or(0, |p| p + 1);
    let col = text[line_start..start].chars().count();
    (
        stmt.trim().trim_end_matches(';').trim().to_owned(),
        (row, col),
    )
}

/// `LINE n:` and the caret below it in a DuckDB error, as a 0-based line and column.
pub fn error_position(message: &str) -> Option<(usize, usize)> {
    let lines: Vec<&str> = message.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if let Some(rest) = l.trim_start().strip_prefix("LINE ") {
            let (num, _) = rest.split_once(':')?;
            let line: usize = num.trim().parse().ok()?;
            let prefix_len = l.find(':')? + 2;
            let caret = lines.get(i + 1)?.find('^')?;
            let col = caret.saturating_sub(prefix_len);
            // DuckDB shows a window of a long line with "..." in front; then the column is unknown.
            if l.get(prefix_len..)
                .is_some_and(|rest| rest.starts_with("..."))
            {
                return Some((line.saturating_sub(1), 0));
            }
            return Some((line.saturating_sub(1), col));
        }
    }
    None
}

/// Arguments prefilled from a tool's input schema: required ones with a placeholder of their type.
pub fn prefill_arguments(tool: &Value) -> String {
    let schema = &tool["inputSchema"];
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut obj = serde_json::Map::new();
    if let Some(props) = schema["properties"].as_object() {
        for (name, p) in props {
            if !required.contains(&name.as_str()) && props.len() > 4 {
                continue;
            }
            let v = if let Some(d) = p.get("default") {
                d.clone()
            } else if let Some(e) = p["enum"].as_array().and_then(|e| e.first()) {
                e.clone()
            } else {
                match p["type"].as_str() {
                    Some("integer") | Some("number") => Value::from(0),
                    Some("boolean") => Value::Bool(false),
                    Some("array") => Value::Array(Vec::new()),
                    Some("object") => Value::Object(Default::default()),
                    _ => Value::String(String::new()),
                }
            };
            obj.insert(name.clone(), v);
        }
    }
    serde_json::to_string_pretty(&Value::Object(obj)).unwrap_or_else(|_| "{}".into())
}

/// Checks typed arguments against the tool's schema before anything is sent.
pub fn validate_arguments(tool: &Value, text: &str) -> Result<Value, String> {
    let v: Value = serde_json::from_str(if text.trim().is_empty() { "{}" } else { text })
        .map_err(|e| format!("not valid JSON: {e}"))?;
    let Value::Object(args) = &v else {
        return Err("arguments must be a JSON object".into());
    };
    let schema = &tool["inputSchema"];
    for r in schema["required"].as_array().into_iter().flatten() {
        if let Some(name) = r.as_str()
            && !args.contains_key(name)
        {
            return Err(format!("missing required argument `{name}`"));
        }
    }
    if let Some(props) = schema["properties"].as_object() {
        for (k, val) in args {
            let Some(p) = props.get(k) else {
                if schema["additionalProperties"] == Value::Bool(false) {
                    return Err(format!("unknown argument `{k}`"));
                }
                continue;
            };
            let ok = match p["type"].as_str() {
                Some("string") => val.is_string(),
                Some("integer") => val.is_i64() || val.is_u64(),
                Some("number") => val.is_number(),
                Some("boolean") => val.is_boolean(),
                Some("array") => val.is_array(),
                Some("object") => val.is_object(),
                _ => true,
            };
            if !ok {
                return Err(format!(
                    "argument `{k}` must be {}",
                    p["type"].as_str().unwrap_or("of another type")
                ));
            }
            if let Some(e) = p["enum"].as_array()
                && !e.contains(val)
            {
                return Err(format!(
                    "argument `{k}` must be one of {}",
                    Value::Array(e.clone())
                ));
            }
        }
    }
    Ok(v)
}

/// Where the SQL history lives when no other place is given.
pub fn default_history_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))?;
    Some(base.join("loom").join("sql-history.jsonl"))
}

pub fn load_history(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|t| {
            t.lines()
                .filter_map(|l| serde_json::from_str::<String>(l).ok())
                .collect::<Vec<_>>()
        })
        .map(|mut v| {
            let skip = v.len().saturating_sub(1000);
            v.drain(..skip);
            v
        })
        .unwrap_or_default()
}

fn save_history(path: &std::path::Path, sql: &str) {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(f, "{}", Value::String(sql.to_owned()));
    }
}
