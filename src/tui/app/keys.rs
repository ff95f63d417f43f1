//! Keys and pastes: a bound key becomes an action for the reducer; any other key is text for
//! whatever takes text now (the denial reason, the row filter, an overlay, the SQL editor),
//! which handles it itself.

use super::*;

impl App {
    pub(super) fn on_key(&mut self, k: KeyEvent) {
        if let Some(spec) = KeySpec::from_event(&k) {
            self.answer_too_early(&spec);
            let (editing_args, complete) = match &self.overlay {
                Overlay::Palette(p) => (p.editing(), p.arguments_complete()),
                _ => (false, false),
            };
            for ctx in self.contexts() {
                // While arguments are being typed, plain keys belong to the text; `enter`
                // sends them once they are a whole JSON object, before that it starts a line.
                if editing_args
                    && ctx == Context::Palette
                    && !k.modifiers.contains(KeyModifiers::CONTROL)
                    && k.code != KeyCode::Esc
                    && !(k.code == KeyCode::Enter && k.modifiers.is_empty() && complete)
                {
                    continue;
                }
                if let Some(a) = self.keymap.lookup(ctx, &spec) {
                    self.apply(a);
                    return;
                }
            }
            // The approval key works while anything is typed (the banner offers it there): a
            // chord, never text, so it is never taken from what is being typed.
            if spec.is_chord()
                && self.keymap.lookup(Context::Global, &spec) == Some(Action::ReviewApproval)
            {
                self.review_approval();
                return;
            }
        }
        // Not bound: text input where there is some.
        if let Some(reason) = &mut self.approvals.deny_reason {
            edit_line(reason, k);
            return;
        }
        if let Some(prompt) = &mut self.results.prompt {
            edit_line(prompt.text_mut(), k);
            return;
        }
        if self.history_input(k) {
            return;
        }
        match &mut self.overlay {
            Overlay::Filter => {
                edit_line(&mut self.traffic.filter, k);
                self.follow_newest();
                return;
            }
            Overlay::Palette(p) => {
                p.input(k);
                return;
            }
            Overlay::Pager(p) => {
                if let Some(t) = &mut p.typing {
                    edit_line(t, k);
                }
                return;
            }
            Overlay::Help(m) => {
                if m.typing {
                    m.type_key(k);
                }
                return;
            }
            Overlay::Export(d) => {
                d.input(&k);
                return;
            }
            Overlay::Memory(m) if m.stage == MemoryStage::Key && k.code == KeyCode::Enter => {
                self.memory_key_entered();
                return;
            }
            Overlay::Memory(m)
                if m.conflict.is_some()
                    && k.code == KeyCode::Char(super::memory::RELOAD_MEMORY_KEY.0)
                    && k.modifiers == KeyModifiers::CONTROL =>
            {
                self.reload_memory();
                return;
            }
            Overlay::Memory(m) => {
                m.input(k);
                return;
            }
            Overlay::None => {}
            _ => return,
        }
        if self.focus == Pane::Editor {
            self.editor.input(k, &self.catalog.datasets);
        }
    }

    pub(super) fn on_paste(&mut self, text: &str) {
        if self.history_paste(text) {
            return;
        }
        match &mut self.overlay {
            Overlay::Palette(p) => p.paste(text),
            Overlay::Filter => self.traffic.filter.paste(text),
            Overlay::Export(d) => d.paste(text),
            Overlay::Memory(m) => m.paste(text),
            Overlay::Pager(p) => {
                if let Some(t) = &mut p.typing {
                    t.paste(text);
                }
            }
            Overlay::None if self.focus == Pane::Editor => self.editor.paste(text),
            _ => {}
        }
    }
}

/// A character typed with `ctrl` or `alt`: a command, not text. (On the Unix terminals loom
/// runs on, AltGr characters such as `@` arrive with neither.)
pub(super) fn is_chord(k: &KeyEvent) -> bool {
    k.modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
}

/// Typing into a one-line input: the keys every field shares (see [`LineInput`]); a chord it
/// does not know (`ctrl-x`, `alt-x`) is never text.
pub(super) fn edit_line(line: &mut LineInput, k: KeyEvent) {
    line.input(&k);
}
