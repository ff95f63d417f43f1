//! Keys and pastes: routed to the overlay, the focused pane's editor or the keymap's actions.

use super::*;

impl App {
    pub(super) fn on_key(&mut self, k: KeyEvent) {
        if let Some(spec) = KeySpec::from_event(&k) {
            let editing_args = matches!(
                &self.overlay,
                Overlay::Palette(Palette {
                    stage: PaletteStage::Edit { .. },
                    ..
                })
            );
            // `enter` sends the arguments once they are a whole JSON object; before that it
            // starts a new line.
            let complete = match &self.overlay {
                Overlay::Palette(Palette {
                    stage: PaletteStage::Edit { args, .. },
                    ..
                }) => {
                    serde_json::from_str::<serde_json::Map<String, Value>>(&args.lines().join("\n"))
                        .is_ok()
                }
                _ => false,
            };
            for ctx in self.contexts() {
                // While arguments are being typed, plain keys belong to the text.
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
        }
        // Not bound: text input where there is some.
        if let Some(reason) = &mut self.deny_reason {
            edit_line(reason, k.code);
            return;
        }
        if let Some(text) = &mut self.row_filter {
            edit_line(text, k.code);
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
            Overlay::Pager(p) => {
                if let Some(t) = &mut p.typing {
                    edit_line(t, k.code);
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

    pub(super) fn on_paste(&mut self, text: &str) {
        match &mut self.overlay {
            Overlay::Palette(Palette {
                stage: PaletteStage::Edit { args, .. },
                ..
            }) => {
                args.insert_str(text);
            }
            Overlay::Filter => self.filter.push_str(text),
            Overlay::Pager(p) => {
                if let Some(t) = &mut p.typing {
                    t.push_str(&text.replace(['\n', '\r'], " "));
                }
            }
            Overlay::None if self.focus == Pane::Editor => {
                self.editor.insert_str(text);
                self.dirty_highlight = true;
            }
            _ => {}
        }
    }
}

/// Typing into a one-line input.
pub(super) fn edit_line(line: &mut String, code: KeyCode) {
    match code {
        KeyCode::Char(c) => line.push(c),
        KeyCode::Backspace => {
            line.pop();
        }
        _ => {}
    }
}
