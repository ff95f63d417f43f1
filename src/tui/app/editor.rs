//! The SQL editor pane: it owns the text area in view, its tabs (`tabs.rs`), the history
//! (`history.rs`; walked with ctrl-up/down, a draft kept while walking), where the last
//! statement of the tab failed, the completion list and whether the highlighting must be
//! applied again. Running a statement is the app's, as it reaches Results and sends a
//! request; the editor never sends requests and never draws.

use super::history::{HistoryEntry, PendingRun};
use super::navigation::step;
use super::tabs::Tabs;
use super::*;
use crate::tui::highlight::LineCache;

/// What an empty editor says.
pub(super) const PLACEHOLDER: &str =
    "SELECT … — ctrl-space completes names · the traffic is table loom_calls";

/// An empty text area as a new tab has it.
pub(super) fn blank_area() -> TextArea<'static> {
    let mut area = TextArea::default();
    area.set_placeholder_text(PLACEHOLDER);
    area
}

/// The last statement a tab ran failed; `at` is where, when the engine said (line and
/// column in the editor, from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorMark {
    pub at: Option<(usize, usize)>,
}

/// Names offered for the word before the cursor.
pub struct Completion {
    pub items: Vec<String>,
    pub selected: usize,
    /// Characters before the cursor that the chosen item replaces.
    pub prefix_len: usize,
}

/// The SQL editor pane's state.
pub struct EditorPane {
    /// The text of the tab in view (the others are parked in `tabs`).
    pub area: TextArea<'static>,
    /// Where the tab in view's last statement failed.
    pub error: Option<ErrorMark>,
    pub tabs: Tabs,
    pub history: Vec<HistoryEntry>,
    pub(super) history_pos: Option<usize>,
    /// The text being written when the person started walking the history.
    pub(super) history_draft: Option<String>,
    pub history_file: Option<PathBuf>,
    /// The statement the engine runs now, recorded when its outcome arrives.
    pub(super) pending_run: Option<PendingRun>,
    pub completion: Option<Completion>,
    /// The last edit was an undo: redo (`alt-r`) has something to bring back.
    pub redo_available: bool,
    /// The highlighting must be applied again (the text, the cursor or the theme changed).
    pub(super) dirty: bool,
    /// The highlighting of every line, from the frames before: a keystroke re-parses only the
    /// lines it changed.
    pub colours: LineCache,
    /// When (the runtime's clock) the text first changed since the tabs were last saved: a
    /// draft is saved a few seconds later, so a crash or `kill -9` loses little.
    pub(super) draft_since: Option<u64>,
    /// The text changed since the tabs were saved.
    pub(super) unsaved: bool,
}

/// Seconds after a change to the editor's text before the draft is saved.
pub const DRAFT_SAVE_SECS: u64 = 5;

impl EditorPane {
    pub(super) fn new() -> EditorPane {
        EditorPane {
            area: blank_area(),
            error: None,
            tabs: Tabs::default(),
            history: Vec::new(),
            history_pos: None,
            history_draft: None,
            history_file: None,
            pending_run: None,
            completion: None,
            redo_available: false,
            dirty: false,
            colours: LineCache::default(),
            draft_since: None,
            unsaved: false,
        }
    }

    pub(super) fn style(&mut self, th: &Theme) {
        self.area.set_style(th.base);
        self.area
            .set_cursor_line_style(ratatui::style::Style::default());
        self.area.set_line_number_style(th.muted);
        self.area.set_placeholder_style(th.muted);
    }

    /// Colours the text again if it changed, and marks where the engine placed an error.
    /// Called once per frame, however many keys arrived since the last one.
    pub(super) fn highlight_if_dirty(&mut self, h: &Highlighter, th: &Theme) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        h.apply_sql(&mut self.area, th, &mut self.colours);
        if let Some((l, c)) = self.error.and_then(|e| e.at) {
            // The mark is a character column (as Results says it); highlights count bytes.
            let line = self.area.lines().get(l).map_or("", String::as_str);
            let start = line.char_indices().nth(c).map_or(line.len(), |(b, _)| b);
            let end = line[start..]
                .chars()
                .next()
                .map_or(start + 1, |ch| start + ch.len_utf8());
            self.area
                .custom_highlight(((l, start), (l, end)), th.error, 255);
        }
    }

    /// The editor's whole text.
    pub fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    /// The selection, else the statement under the cursor, and where it starts.
    pub(super) fn statement_under_cursor(&self) -> (String, (usize, usize)) {
        match self.area.selection_range() {
            Some((a, b)) => (slice_range(self.area.lines(), a, b), a),
            None => statement_at(&self.text(), self.area.cursor()),
        }
    }

    /// Puts the next older (or newer) statement of the history in the editor; past the newest,
    /// what the person was writing comes back. Says whether the text changed.
    pub(super) fn walk_history(&mut self, older: bool) -> bool {
        if self.history.is_empty() {
            return false;
        }
        let n = self.history.len();
        let pos = match (self.history_pos, older) {
            (None, true) => {
                self.history_draft = Some(self.text());
                n - 1
            }
            (None, false) => return false,
            (Some(p), true) => p.saturating_sub(1),
            (Some(p), false) if p + 1 >= n => {
                self.history_pos = None;
                let draft = self.history_draft.take().unwrap_or_default();
                self.replace_text(&draft);
                return true;
            }
            (Some(p), false) => p + 1,
        };
        let text = self.history[pos].sql.clone();
        self.replace_text(&text);
        self.history_pos = Some(pos);
        true
    }

    /// After a resize the editor scrolls no further than its cursor needs: text that now fits
    /// is shown from the top again.
    pub(super) fn rescroll(&mut self) {
        if self.area.is_selecting() {
            return;
        }
        let (row, col) = self.area.cursor();
        self.area.scroll((-i16::MAX, -i16::MAX));
        self.area.move_cursor(tui_textarea::CursorMove::Jump(
            u16::try_from(row).unwrap_or(u16::MAX),
            u16::try_from(col).unwrap_or(u16::MAX),
        ));
    }

    /// Puts `text` in the editor as an edit, so undo (`ctrl-u`) brings back what was there;
    /// the cursor goes to the end.
    fn replace_text(&mut self, text: &str) {
        self.redo_available = false;
        self.area.select_all();
        self.area.insert_str(text);
        self.area.cancel_selection();
        self.area.move_cursor(tui_textarea::CursorMove::Bottom);
        self.area.move_cursor(tui_textarea::CursorMove::End);
        self.completion = None;
        self.dirty = true;
    }

    /// Replaces the text with a query of the person's choosing (`s` on a dataset). What they
    /// had written is never lost: it joins the history (ctrl-up) and undo brings it back.
    pub(super) fn open_query(&mut self, sql: &str, at: u64) {
        let draft = self.text();
        let draft = draft.trim();
        if !draft.is_empty() && draft != sql.trim() {
            let draft = draft.to_owned();
            self.remember(&draft, at);
        }
        self.replace_text(sql);
        self.history_pos = None;
    }

    /// A key the keymap did not take: it edits the text.
    pub(super) fn input(&mut self, k: KeyEvent, datasets: &[DatasetView]) {
        // ctrl-home and ctrl-end go to the start and end of the whole text, as in every
        // editor (the text area alone takes them as home and end of the line).
        let whole = match k.code {
            KeyCode::Home if k.modifiers.contains(KeyModifiers::CONTROL) => {
                Some(tui_textarea::CursorMove::Top)
            }
            KeyCode::End if k.modifiers.contains(KeyModifiers::CONTROL) => {
                Some(tui_textarea::CursorMove::Bottom)
            }
            _ => None,
        };
        if let Some(to) = whole {
            if k.modifiers.contains(KeyModifiers::SHIFT) {
                if !self.area.is_selecting() {
                    self.area.start_selection();
                }
            } else {
                self.area.cancel_selection();
            }
            self.area.move_cursor(to);
            let end = if to == tui_textarea::CursorMove::Top {
                tui_textarea::CursorMove::Head
            } else {
                tui_textarea::CursorMove::End
            };
            self.area.move_cursor(end);
            self.dirty = true;
            return;
        }
        let edited = super::text_keys::type_key(&mut self.area, k);
        self.after_edit(edited, false, datasets);
    }

    /// An editing command of the keymap's `[text]` (select all, undo, redo…).
    pub(super) fn edit(&mut self, e: super::text_keys::TextEdit, datasets: &[DatasetView]) {
        use super::text_keys::TextEdit;
        let edited = super::text_keys::apply_edit(&mut self.area, e);
        match e {
            TextEdit::Undo => self.redo_available = edited || self.redo_available,
            // What redo brought back may have more behind it; the next redo says.
            TextEdit::Redo => self.redo_available = edited,
            _ => {}
        }
        self.after_edit(
            edited,
            matches!(e, TextEdit::Undo | TextEdit::Redo),
            datasets,
        );
    }

    /// After a key or a command: colours again; an edit ends a walk through the history and
    /// narrows the completion list.
    fn after_edit(&mut self, edited: bool, undoing: bool, datasets: &[DatasetView]) {
        if edited && !undoing {
            self.redo_available = false;
        }
        if edited {
            self.unsaved = true;
        }
        // Moving the cursor or the selection also re-applies the colours: they are cut out of
        // the selection so that it stays visible.
        self.dirty = true;
        if edited {
            self.history_pos = None;
            if self.completion.is_some() {
                self.complete(false, datasets);
            }
        }
    }

    pub(super) fn paste(&mut self, text: &str) {
        self.unsaved = true;
        self.redo_available = false;
        self.area.insert_str(text);
        self.dirty = true;
    }

    /// Offers the names that complete the word before the cursor (`explicit`: asked for, so a
    /// single one is taken at once). Says whether there was any.
    pub(super) fn complete(&mut self, explicit: bool, datasets: &[DatasetView]) -> bool {
        let (row, col) = self.area.cursor();
        let line = self.area.lines().get(row).cloned().unwrap_or_default();
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
            return true;
        }
        let items: Vec<String> = completion_candidates(datasets)
            .into_iter()
            .filter(|c| {
                c.trim_start_matches('"').to_lowercase().starts_with(&p) && c.len() > p.len()
            })
            .take(50)
            .collect();
        if items.is_empty() {
            self.completion = None;
            return false;
        }
        let single = items.len() == 1;
        self.completion = Some(Completion {
            items,
            selected: 0,
            prefix_len: prefix.chars().count(),
        });
        if explicit && single {
            self.accept_completion();
        }
        true
    }

    /// `tab`: completes the word before the cursor, or indents where there is none (after a
    /// space or at the start of a line). Says whether a completion was found or none needed.
    pub(super) fn complete_or_indent(&mut self, datasets: &[DatasetView]) -> bool {
        let (row, col) = self.area.cursor();
        let line = self.area.lines().get(row).cloned().unwrap_or_default();
        let word_before = line
            .chars()
            .take(col)
            .last()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '"');
        if word_before {
            return self.complete(true, datasets);
        }
        self.area.insert_str("    ");
        self.dirty = true;
        true
    }

    pub(super) fn accept_completion(&mut self) {
        let Some(c) = self.completion.take() else {
            return;
        };
        let Some(item) = c.items.get(c.selected) else {
            return;
        };
        self.area.delete_str(0);
        for _ in 0..c.prefix_len {
            self.area.delete_char();
        }
        self.area.insert_str(item);
        self.dirty = true;
    }

    /// Moves the completion's selection; says whether a completion list was open.
    pub(super) fn move_completion(&mut self, delta: i64) -> bool {
        let Some(c) = &mut self.completion else {
            return false;
        };
        c.selected = step(c.selected, c.items.len(), delta);
        true
    }
}

impl App {
    pub(super) fn run_statement_under_cursor(&mut self) {
        let (sql, origin) = self.editor.statement_under_cursor();
        if sql.trim().is_empty() {
            self.set_status("no statement under the cursor", StatusKind::Error);
            return;
        }
        self.run_sql(sql, origin);
    }

    pub(super) fn walk_history(&mut self, older: bool) {
        if self.editor.walk_history(older) {
            self.results.query_error = None;
            self.editor.error = None;
        }
    }

    /// Puts `sql` in the editor (`s` on a dataset); the last query's error is no longer its.
    pub(super) fn open_query(&mut self, sql: &str) {
        let at = self.clock();
        self.editor.open_query(sql, at);
        self.results.query_error = None;
        self.editor.error = None;
    }

    /// Seconds since the epoch: the runtime's clock, or the system's before its first tick.
    pub(super) fn clock(&self) -> u64 {
        if self.now_secs > 0 {
            self.now_secs
        } else {
            crate::types::time::now_secs()
        }
    }

    /// `ctrl-space` (`explicit`) or typing with the list open: completes the word.
    pub(super) fn open_completion(&mut self, explicit: bool) {
        if !self.editor.complete(explicit, &self.catalog.datasets) && explicit {
            self.set_status("no completion", StatusKind::Info);
        }
    }

    pub(super) fn complete_or_indent(&mut self) {
        if !self.editor.complete_or_indent(&self.catalog.datasets) {
            self.set_status("no completion", StatusKind::Info);
        }
    }
}

/// Names the editor can complete: datasets, their columns, SQL keywords.
fn completion_candidates(datasets: &[DatasetView]) -> Vec<String> {
    let mut all: Vec<String> = datasets.iter().map(|d| d.dataset.clone()).collect();
    for d in datasets {
        for (c, _) in &d.columns {
            let quoted = crate::tui::sql::quote_ident(c);
            if !all.contains(&quoted) {
                all.push(quoted);
            }
        }
    }
    // The call log's table is always there.
    all.push(crate::types::data::CALLS_TABLE.to_owned());
    for (c, _) in crate::types::data::CALLS_TABLE_COLUMNS {
        if !all.iter().any(|a| a == c) {
            all.push((*c).to_owned());
        }
    }
    all.extend(crate::tui::sql::COMPLETIONS.iter().map(|k| (*k).to_owned()));
    all
}
