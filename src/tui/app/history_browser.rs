//! The history browser (an overlay, `ctrl-r` in the editor, `f8` anywhere): the SQL history
//! newest first, with when each statement ran, how long it took and its rows or failure,
//! narrowed by what is typed (a substring, any case). It owns the filter and the selection;
//! putting the chosen statement in the editor (the draft kept) or running it is the app's. It
//! never draws and never changes the history.

use super::history::HistoryEntry;
use super::navigation::step;
use super::*;

/// The history browser's state.
pub struct HistoryBrowser {
    pub filter: LineInput,
    /// Which of the matches is selected, from the newest.
    pub selected: usize,
    /// Rows on screen, as last drawn: page keys move by it.
    pub rows: std::cell::Cell<usize>,
}

impl HistoryBrowser {
    fn new() -> HistoryBrowser {
        HistoryBrowser {
            filter: LineInput::default(),
            selected: 0,
            rows: std::cell::Cell::new(10),
        }
    }

    /// Where in `history` the entries holding the filter are, newest first.
    pub fn matches(&self, history: &[HistoryEntry]) -> Vec<usize> {
        let f = self.filter.to_lowercase();
        history
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, e)| f.is_empty() || e.sql.to_lowercase().contains(&f))
            .map(|(i, _)| i)
            .collect()
    }

    /// The selected entry, if anything matches.
    pub fn selected_entry<'h>(&self, history: &'h [HistoryEntry]) -> Option<&'h HistoryEntry> {
        let i = *self.matches(history).get(self.selected)?;
        history.get(i)
    }

    fn move_by(&mut self, delta: i64, len: usize) {
        self.selected = step(self.selected, len, delta);
    }

    /// A key the keymap did not take: text for the filter. A `/` on an empty filter is the
    /// search key of the other views, not text.
    fn input(&mut self, k: KeyEvent) {
        let plain = !super::keys::is_chord(&k);
        if plain && k.code == KeyCode::Char('/') && self.filter.is_empty() {
            return;
        }
        if self.filter.input(&k) {
            self.selected = 0;
        }
    }

    fn paste(&mut self, text: &str) {
        self.filter.paste(&one_line(text));
        self.selected = 0;
    }
}

/// A statement on one line, for a list: runs of white space (line breaks, tabs) become one
/// space, other control characters are shown escaped (`\u{1b}`), never sent to the terminal.
pub fn one_line(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut space = false;
    for c in sql.trim().chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

impl App {
    /// `ctrl-r` / `f8`: the history browser, on the newest statement.
    pub(super) fn open_history(&mut self) {
        self.editor.completion = None;
        self.overlay = Overlay::History(HistoryBrowser::new());
    }

    /// Moves the browser's selection; says whether the browser is open.
    pub(super) fn move_in_history(&mut self, delta: i64) -> bool {
        let Overlay::History(b) = &mut self.overlay else {
            return false;
        };
        let n = b.matches(&self.editor.history).len();
        b.move_by(delta, n);
        true
    }

    /// Typing into the browser's filter; says whether the browser is open.
    pub(super) fn history_input(&mut self, k: KeyEvent) -> bool {
        let Overlay::History(b) = &mut self.overlay else {
            return false;
        };
        b.input(k);
        true
    }

    pub(super) fn history_paste(&mut self, text: &str) -> bool {
        let Overlay::History(b) = &mut self.overlay else {
            return false;
        };
        b.paste(text);
        true
    }

    /// `enter` puts the selected statement in the editor, `ctrl-e` (`run`) also runs it. What
    /// the editor held is kept as `s` on a dataset keeps it (the history and undo).
    pub(super) fn use_history(&mut self, run: bool) {
        let Overlay::History(b) = &self.overlay else {
            return;
        };
        let Some(sql) = b
            .selected_entry(&self.editor.history)
            .map(|e| e.sql.clone())
        else {
            self.set_status(
                "nothing selected: backspace widens the filter",
                StatusKind::Info,
            );
            return;
        };
        self.overlay = Overlay::None;
        self.focus_pane(Pane::Editor);
        let draft = self.editor.text();
        self.open_query(&sql);
        if run {
            self.run_sql(sql, (0, 0));
        } else if !draft.trim().is_empty() && draft.trim() != sql.trim() {
            self.set_status(
                "what was in the editor: ctrl-u (undo) or ctrl-up (history)",
                StatusKind::Info,
            );
        }
    }
}
