//! The keys of every text area (the SQL editor, the palette's arguments, a memory's content).
//! Editing commands are keymap actions (`[text]`: select all, undo, redo, delete to the line's
//! end, delete the word before, a new line), so `?` lists exactly the keys that work; of the
//! keys no action takes, a text area gets only typing and moving. tui-textarea's own emacs
//! chords never reach it: `ctrl-j` (a stray line feed, as some terminals send for
//! ctrl/shift-enter or an unbracketed paste) is a new line, never "delete to the line's
//! start", and a chord that is not in `?` does nothing. It never draws.

use crate::tui::keymap::Action;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tui_textarea::TextArea;

/// An editing command of a text area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEdit {
    SelectAll,
    Undo,
    Redo,
    DeleteToLineEnd,
    DeleteWord,
    Newline,
}

impl TextEdit {
    /// The command an action names, if it is one.
    pub fn of(a: Action) -> Option<TextEdit> {
        Some(match a {
            Action::SelectAll => TextEdit::SelectAll,
            Action::Undo => TextEdit::Undo,
            Action::Redo => TextEdit::Redo,
            Action::DeleteToLineEnd => TextEdit::DeleteToLineEnd,
            Action::DeleteWord => TextEdit::DeleteWord,
            Action::Newline => TextEdit::Newline,
            _ => return None,
        })
    }
}

impl super::App {
    /// An editing command for the text area in use: the palette's arguments, a memory's
    /// content or the SQL editor.
    pub(super) fn edit_text(&mut self, e: TextEdit) {
        use super::{Overlay, Pane};
        match &mut self.overlay {
            Overlay::Palette(p) => p.edit(e),
            Overlay::Memory(m) => m.edit_text(e),
            Overlay::None if self.focus == Pane::Editor => {
                self.editor.edit(e, &self.catalog.datasets)
            }
            _ => {}
        }
    }
}

/// Carries out an editing command on `area`; says whether the text changed.
pub fn apply_edit(area: &mut TextArea<'_>, e: TextEdit) -> bool {
    match e {
        TextEdit::SelectAll => {
            area.select_all();
            false
        }
        TextEdit::Undo => area.undo(),
        TextEdit::Redo => area.redo(),
        TextEdit::DeleteToLineEnd => area.delete_line_by_end(),
        TextEdit::DeleteWord => area.delete_word(),
        TextEdit::Newline => {
            area.insert_newline();
            true
        }
    }
}

/// A key no action took: typed text and moves of the cursor (with `shift` the selection grows,
/// with `ctrl` or `alt` a move goes by word). Says whether the text changed.
pub fn type_key(area: &mut TextArea<'_>, k: KeyEvent) -> bool {
    let chord = k
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    match k.code {
        // Some terminals send backspace as ctrl-h.
        KeyCode::Char('h') if k.modifiers == KeyModifiers::CONTROL => area.delete_char(),
        KeyCode::Char(_) | KeyCode::Tab | KeyCode::Backspace | KeyCode::Delete if chord => false,
        KeyCode::Char(_) | KeyCode::Enter | KeyCode::Tab | KeyCode::Backspace | KeyCode::Delete => {
            area.input_without_shortcuts(k)
        }
        KeyCode::Up
        | KeyCode::Down
        | KeyCode::Left
        | KeyCode::Right
        | KeyCode::Home
        | KeyCode::End
        | KeyCode::PageUp
        | KeyCode::PageDown => area.input(k),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    /// The report's keys: `SELECT 'taband` then a line feed (ctrl-j to the terminal) left
    /// only what came after; no chord outside the keymap deletes anything.
    #[test]
    fn no_unlisted_chord_deletes_text() {
        let mut a = TextArea::new(vec!["SELECT 'taband".into()]);
        a.move_cursor(tui_textarea::CursorMove::End);
        for c in ['j', 'd', 'k', 'w', 'v', 'x', 'y', 'm'] {
            type_key(&mut a, key(KeyCode::Char(c), KeyModifiers::CONTROL));
            type_key(&mut a, key(KeyCode::Char(c), KeyModifiers::ALT));
        }
        assert_eq!(a.lines(), ["SELECT 'taband"]);
        type_key(&mut a, key(KeyCode::Left, KeyModifiers::NONE));
        type_key(&mut a, key(KeyCode::Char('X'), KeyModifiers::SHIFT));
        assert_eq!(a.lines(), ["SELECT 'tabanXd"]);
    }

    #[test]
    fn select_all_then_backspace_clears_and_undo_brings_it_back() {
        let mut a = TextArea::new(vec!["SELECT 1".into(), "FROM t".into()]);
        apply_edit(&mut a, TextEdit::SelectAll);
        type_key(&mut a, key(KeyCode::Backspace, KeyModifiers::NONE));
        assert_eq!(a.lines(), [""]);
        apply_edit(&mut a, TextEdit::Undo);
        assert_eq!(a.lines(), ["SELECT 1", "FROM t"]);
        apply_edit(&mut a, TextEdit::SelectAll);
        type_key(&mut a, key(KeyCode::Char('x'), KeyModifiers::NONE));
        assert_eq!(a.lines(), ["x"]);
    }
}
