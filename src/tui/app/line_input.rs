//! One line of text being typed: the palette's filter, the Traffic filter, the grid's search
//! and row filter, the pager's search, the keys menu's filter, a denial reason, a new memory's
//! key and the export file name all are a `LineInput`, so every such field takes the same
//! keys: a cursor (`left`/`right`, `home`/`end`, `ctrl-left`/`ctrl-right` by word), `ctrl-a`
//! selects the whole text (typing then replaces it, `backspace` clears it), `ctrl-u` deletes
//! to the start, `ctrl-k` to the end, `ctrl-w` (or `alt-backspace`) the word before the
//! cursor. Text recalled into a field (the last search, a default file name) arrives
//! selected. The cursor is a byte offset kept on a character boundary; it never draws, but
//! hands out the spans a draw function shows.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Style;
use ratatui::text::Span;

/// The keys every one-line field takes, for help texts: (keys, what they do).
pub const LINE_KEYS: &[(&str, &str)] = &[
    ("ctrl-a", "select all (typing replaces it)"),
    ("ctrl-u", "delete to the start"),
    ("ctrl-k", "delete to the end"),
    ("ctrl-w/alt-backspace", "delete the word before"),
    ("left/right/home/end", "move"),
];

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineInput {
    text: String,
    /// Byte offset of the cursor, on a character boundary.
    cursor: usize,
    /// The whole text is selected: what is typed replaces it.
    selected: bool,
}

impl LineInput {
    /// `text` with the cursor at its end.
    pub fn new(text: impl Into<String>) -> LineInput {
        let text = text.into();
        LineInput {
            cursor: text.len(),
            text,
            selected: false,
        }
    }

    /// `text` selected, so that typing replaces it and `backspace` clears it (a recalled
    /// search, a proposed file name).
    pub fn selected(text: impl Into<String>) -> LineInput {
        let mut l = LineInput::new(text);
        l.selected = !l.text.is_empty();
        l
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn into_string(self) -> String {
        self.text
    }

    pub fn is_selected(&self) -> bool {
        self.selected
    }

    pub fn clear(&mut self) {
        *self = LineInput::default();
    }

    /// Pasted text: one line (line breaks become spaces, other control characters go),
    /// replacing the selection.
    pub fn paste(&mut self, text: &str) {
        let clean: String = text
            .chars()
            .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
            .filter(|c| !c.is_control())
            .collect();
        self.take_selection();
        self.text.insert_str(self.cursor, &clean);
        self.cursor += clean.len();
    }

    /// A key for the field; says whether it took it (a key it does not know is left to the
    /// caller, a chord it does not know is never text).
    pub fn input(&mut self, k: &KeyEvent) -> bool {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        let alt = k.modifiers.contains(KeyModifiers::ALT);
        match k.code {
            KeyCode::Char('a') if ctrl => self.selected = !self.text.is_empty(),
            KeyCode::Char('u') if ctrl => {
                if !self.take_selection() {
                    self.text.replace_range(..self.cursor, "");
                    self.cursor = 0;
                }
            }
            KeyCode::Char('k') if ctrl => {
                if !self.take_selection() {
                    self.text.truncate(self.cursor);
                }
            }
            KeyCode::Char('w') if ctrl => self.delete_word(),
            KeyCode::Backspace if ctrl || alt => self.delete_word(),
            // Other chords are commands, never text; nor is a control character.
            KeyCode::Char(c) if ctrl || alt || c.is_control() => return false,
            KeyCode::Char(c) => {
                self.take_selection();
                self.text.insert(self.cursor, c);
                self.cursor += c.len_utf8();
            }
            KeyCode::Backspace => {
                if !self.take_selection()
                    && let Some(c) = self.text[..self.cursor].chars().next_back()
                {
                    self.cursor -= c.len_utf8();
                    self.text.remove(self.cursor);
                }
            }
            KeyCode::Delete => {
                if !self.take_selection() && self.cursor < self.text.len() {
                    self.text.remove(self.cursor);
                }
            }
            KeyCode::Left if ctrl => {
                self.cursor = self.word_start();
                self.selected = false;
            }
            KeyCode::Right if ctrl => {
                self.cursor = self.word_end();
                self.selected = false;
            }
            KeyCode::Left => {
                self.cursor = if self.selected {
                    0
                } else {
                    self.text[..self.cursor]
                        .chars()
                        .next_back()
                        .map_or(0, |c| self.cursor - c.len_utf8())
                };
                self.selected = false;
            }
            KeyCode::Right => {
                self.cursor = if self.selected {
                    self.text.len()
                } else {
                    self.text[self.cursor..]
                        .chars()
                        .next()
                        .map_or(self.cursor, |c| self.cursor + c.len_utf8())
                };
                self.selected = false;
            }
            KeyCode::Home => {
                self.cursor = 0;
                self.selected = false;
            }
            KeyCode::End => {
                self.cursor = self.text.len();
                self.selected = false;
            }
            _ => return false,
        }
        true
    }

    /// The text as drawn: the cursor mark `▏` where the cursor is, the selection in `selection`.
    pub fn spans(&self, style: Style, selection: Style) -> Vec<Span<'static>> {
        if self.selected {
            return vec![
                Span::styled(self.text.clone(), selection),
                Span::styled("▏", style),
            ];
        }
        vec![
            Span::styled(self.text[..self.cursor].to_owned(), style),
            Span::styled("▏", style),
            Span::styled(self.text[self.cursor..].to_owned(), style),
        ]
    }

    /// The text as one string with the cursor mark in it, for a line drawn as plain text.
    pub fn with_cursor(&self) -> String {
        if self.selected {
            return format!("{}▏", self.text);
        }
        format!(
            "{}▏{}",
            &self.text[..self.cursor],
            &self.text[self.cursor..]
        )
    }

    /// Deletes the whole text if it is selected; says whether it was.
    fn take_selection(&mut self) -> bool {
        if !std::mem::take(&mut self.selected) {
            return false;
        }
        self.text.clear();
        self.cursor = 0;
        true
    }

    fn delete_word(&mut self) {
        if self.take_selection() {
            return;
        }
        let start = self.word_start();
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Where the word before the cursor starts (spaces before the cursor are skipped first).
    fn word_start(&self) -> usize {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end();
        trimmed
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map_or(0, |(i, c)| i + c.len_utf8())
    }

    /// Where the word after the cursor ends.
    fn word_end(&self) -> usize {
        let after = &self.text[self.cursor..];
        let skip = after.len() - after.trim_start().len();
        let rest = &after[skip..];
        let word = rest.find(char::is_whitespace).unwrap_or(rest.len());
        self.cursor + skip + word
    }
}

impl std::ops::Deref for LineInput {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

impl std::fmt::Display for LineInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl From<&str> for LineInput {
    fn from(s: &str) -> LineInput {
        LineInput::new(s)
    }
}

impl From<String> for LineInput {
    fn from(s: String) -> LineInput {
        LineInput::new(s)
    }
}

impl PartialEq<str> for LineInput {
    fn eq(&self, other: &str) -> bool {
        self.text == other
    }
}

impl PartialEq<&str> for LineInput {
    fn eq(&self, other: &&str) -> bool {
        self.text == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    fn typed(l: &mut LineInput, s: &str) {
        for c in s.chars() {
            l.input(&key(KeyCode::Char(c), KeyModifiers::NONE));
        }
    }

    #[test]
    fn a_selected_text_is_replaced_by_typing_and_cleared_by_backspace() {
        let mut l = LineInput::selected("weber");
        typed(&mut l, "777");
        assert_eq!(l, "777");
        let mut l = LineInput::selected("_loom_result_9");
        l.input(&key(KeyCode::Backspace, KeyModifiers::NONE));
        assert_eq!(l, "");
        // Moving keeps the text and ends the selection.
        let mut l = LineInput::selected("abc");
        l.input(&key(KeyCode::Left, KeyModifiers::NONE));
        typed(&mut l, "x");
        assert_eq!(l, "xabc");
    }

    #[test]
    fn ctrl_keys_clear_delete_words_and_select_all() {
        let ctrl = |c| key(KeyCode::Char(c), KeyModifiers::CONTROL);
        let mut l = LineInput::new("select from orders");
        l.input(&ctrl('w'));
        assert_eq!(l, "select from ");
        l.input(&ctrl('w'));
        assert_eq!(l, "select ");
        l.input(&key(KeyCode::Left, KeyModifiers::NONE));
        l.input(&ctrl('k'));
        assert_eq!(l, "select");
        l.input(&key(KeyCode::Left, KeyModifiers::NONE));
        l.input(&ctrl('u'));
        assert_eq!(l, "t");
        let mut l = LineInput::new("weber");
        l.input(&ctrl('a'));
        typed(&mut l, "zz");
        assert_eq!(l, "zz");
        // A chord it does not know is not text.
        assert!(!l.input(&ctrl('x')));
        assert_eq!(l, "zz");
    }

    #[test]
    fn the_cursor_moves_over_wide_characters_and_inserts_where_it_is() {
        let mut l = LineInput::new("a📌é");
        l.input(&key(KeyCode::Left, KeyModifiers::NONE));
        l.input(&key(KeyCode::Left, KeyModifiers::NONE));
        typed(&mut l, "-");
        assert_eq!(l, "a-📌é");
        l.input(&key(KeyCode::Delete, KeyModifiers::NONE));
        assert_eq!(l, "a-é");
        l.input(&key(KeyCode::Home, KeyModifiers::NONE));
        typed(&mut l, ">");
        assert_eq!(l.with_cursor(), ">▏a-é");
    }

    proptest! {
        /// No key sequence and no paste panics it or leaves the cursor off a boundary.
        #[test]
        fn no_keys_panic_it(start in ".{0,12}", keys in proptest::collection::vec((0u8..14, any::<char>(), any::<bool>()), 0..40), paste in ".{0,8}") {
            let mut l = LineInput::selected(start);
            for (k, c, ctrl) in keys {
                let code = match k {
                    0 => KeyCode::Backspace,
                    1 => KeyCode::Delete,
                    2 => KeyCode::Left,
                    3 => KeyCode::Right,
                    4 => KeyCode::Home,
                    5 => KeyCode::End,
                    6 => KeyCode::Char('w'),
                    7 => KeyCode::Char('u'),
                    8 => KeyCode::Char('k'),
                    9 => KeyCode::Char('a'),
                    _ => KeyCode::Char(c),
                };
                let m = if ctrl { KeyModifiers::CONTROL } else { KeyModifiers::NONE };
                l.input(&key(code, m));
                prop_assert!(l.as_str().is_char_boundary(l.cursor));
            }
            l.paste(&paste);
            prop_assert!(l.as_str().is_char_boundary(l.cursor));
            let _ = l.spans(Style::default(), Style::default());
        }
    }
}
