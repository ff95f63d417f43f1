//! Memories as the person at the workbench: the editor overlay (`MemoryEditor`) owns the key
//! being typed for a new memory, the content being written and the version it started from;
//! writing, pinning, deleting and reading the history are requests the app sends as the human,
//! and their replies land here. A write always carries the version the person was shown, so a
//! change made meanwhile by anyone is refused by the engine, never overwritten, and the text
//! being written is never thrown away by a refusal. When the refusal is because the memory
//! moved on, the person chooses: `ctrl-s` again writes theirs over the newer version,
//! [`RELOAD_MEMORY_KEY`] loads the newer one (`ctrl-u` brings theirs back). It never draws.

use super::keys::edit_line;
use super::*;

/// The key that loads the newer version after a refused save. A chord the text area leaves
/// alone (it takes ctrl-r as redo), so it is never text.
pub const RELOAD_MEMORY_KEY: (char, &str) = ('l', "ctrl-l");

/// What the memory editor takes now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryStage {
    /// A new memory's key (`enter` goes on to the content).
    Key,
    Content,
}

/// The memory editor overlay.
pub struct MemoryEditor {
    /// The memory's key: typed into `key_input` for a new one, fixed once the content begins.
    pub key: String,
    /// A new memory's key as it is typed.
    pub key_input: LineInput,
    pub stage: MemoryStage,
    pub content: Box<TextArea<'static>>,
    pub tags: Vec<String>,
    pub pinned: bool,
    /// The version the text started from (0: none yet); a save is refused if it moved.
    pub if_version: u64,
    /// Why the last save was refused; the text stays as it was.
    pub error: Option<String>,
    /// A save was sent and has not been answered.
    pub saving: bool,
    /// A save was refused: the listing says whether the memory moved on meanwhile.
    pub(super) checking: bool,
    /// The newer version a save was refused for: `ctrl-s` writes over it, ctrl-l loads it.
    pub conflict: Option<MemoryView>,
    /// Undo steps from the text as it is to the text right after loading the newer version
    /// (negative: undone past it), while that load is still in the undo history. Loading is
    /// two edits to the text area (clear, insert); one `ctrl-u` must take both back, or the
    /// person sees an empty editor where the hint promised their text.
    loaded_at: Option<i64>,
}

impl MemoryEditor {
    fn area(lines: Vec<String>, th: &Theme) -> Box<TextArea<'static>> {
        let mut a = TextArea::new(lines);
        a.set_style(th.base);
        a.set_cursor_line_style(ratatui::style::Style::default());
        Box::new(a)
    }

    /// A new memory: its key first.
    fn new_memory(th: &Theme) -> MemoryEditor {
        MemoryEditor {
            key: String::new(),
            key_input: LineInput::default(),
            stage: MemoryStage::Key,
            content: Self::area(Vec::new(), th),
            tags: Vec::new(),
            pinned: false,
            if_version: 0,
            error: None,
            saving: false,
            checking: false,
            conflict: None,
            loaded_at: None,
        }
    }

    /// `m` as it is now, its content ready to edit, the cursor at its end (where a note is
    /// most often added).
    fn edit(m: &MemoryView, th: &Theme) -> MemoryEditor {
        let mut content = Self::area(m.content.lines().map(str::to_owned).collect(), th);
        content.move_cursor(tui_textarea::CursorMove::Bottom);
        content.move_cursor(tui_textarea::CursorMove::End);
        MemoryEditor {
            key: m.key.clone(),
            key_input: LineInput::default(),
            stage: MemoryStage::Content,
            content,
            tags: m.tags.clone(),
            pinned: m.pinned,
            if_version: m.version,
            error: None,
            saving: false,
            checking: false,
            conflict: None,
            loaded_at: None,
        }
    }

    /// The save was refused because `newer` was written meanwhile: the person chooses.
    fn conflicted(&mut self, newer: MemoryView) {
        let key = crate::terminal_text::line(&self.key).into_owned();
        self.error = Some(format!(
            "Not saved: {key} was changed by {} while you edited it (now version {}; you \
             started from {}). ctrl-s again saves yours over it · {} loads theirs · esc \
             leaves it as it is",
            crate::terminal_text::line(&newer.author),
            newer.version,
            self.if_version,
            RELOAD_MEMORY_KEY.1
        ));
        self.checking = false;
        self.conflict = Some(newer);
    }

    /// The reload key after a refused save: the newer version replaces the text as an edit,
    /// so `ctrl-u` brings the person's back. Says whether there was one to load.
    pub(super) fn load_newer(&mut self) -> Option<u64> {
        let newer = self.conflict.take()?;
        self.content.select_all();
        self.content.insert_str(&newer.content);
        self.content.cancel_selection();
        self.loaded_at = Some(0);
        self.if_version = newer.version;
        self.tags = newer.tags;
        self.pinned = newer.pinned;
        self.error = None;
        Some(newer.version)
    }

    pub fn text(&self) -> String {
        self.content.lines().join("\n")
    }

    /// A key the keymap did not take: it edits the key or the content.
    pub(super) fn input(&mut self, k: KeyEvent) {
        // The choice after a refused save stays said while the person edits on.
        if self.conflict.is_none() {
            self.error = None;
        }
        match self.stage {
            MemoryStage::Key => edit_line(&mut self.key_input, k),
            MemoryStage::Content => self.edit_content(k),
        }
    }

    /// A key for the content: typing and moving.
    fn edit_content(&mut self, k: KeyEvent) {
        if super::text_keys::type_key(&mut self.content, k) {
            self.edited();
        }
    }

    /// An editing command of the keymap's `[text]` on the content. Undo and redo step over
    /// the loading of a newer version as one step (see `loaded_at`).
    pub(super) fn edit_text(&mut self, e: super::text_keys::TextEdit) {
        use super::text_keys::{TextEdit, apply_edit};
        if self.stage != MemoryStage::Content {
            return;
        }
        if self.conflict.is_none() {
            self.error = None;
        }
        match (self.loaded_at, e) {
            (Some(0), TextEdit::Undo) => {
                self.content.undo();
                self.content.undo();
                self.loaded_at = Some(-2);
            }
            (Some(-2), TextEdit::Redo) => {
                self.content.redo();
                self.content.redo();
                self.loaded_at = Some(0);
            }
            (at, TextEdit::Undo) => {
                if self.content.undo() {
                    self.loaded_at = at.map(|n| n - 1);
                }
            }
            (at, TextEdit::Redo) => {
                if self.content.redo() {
                    self.loaded_at = at.map(|n| n + 1);
                }
            }
            (_, e) => {
                if apply_edit(&mut self.content, e) {
                    self.edited();
                }
            }
        }
    }

    /// The content changed by an edit (not undo or redo): the load of a newer version moves
    /// one step further down the undo history.
    fn edited(&mut self) {
        self.loaded_at = match self.loaded_at {
            // An edit after undoing past the load drops it from the redo history; one too many
            // above it pushes it out of the undo history.
            Some(at) if at >= 0 && at + 3 < self.content.max_histories() as i64 => Some(at + 1),
            _ => None,
        };
    }

    pub(super) fn paste(&mut self, text: &str) {
        match self.stage {
            MemoryStage::Key => self.key_input.paste(text),
            MemoryStage::Content => {
                self.content.insert_str(text);
            }
        }
    }
}

/// A memory's versions as the pager shows them: newest first, who wrote each and when,
/// deletions marked. Outside text is escaped line by line.
pub fn history_text(versions: &[MemoryView]) -> String {
    let mut out = Vec::new();
    for v in versions.iter().rev() {
        let mut head = format!("version {} · ", v.version);
        if v.deleted {
            head.push_str(&format!("DELETED by {} · {}", v.author, v.at));
        } else {
            head.push_str(&format!("{} · {}", v.author, v.at));
            if v.pinned {
                head.push_str(" · pinned");
            }
            if !v.tags.is_empty() {
                head.push_str(&format!(" · tags: {}", v.tags.join(", ")));
            }
        }
        out.push(crate::terminal_text::line(&head).into_owned());
        if !v.deleted {
            out.extend(
                v.content
                    .lines()
                    .map(|l| format!("    {}", crate::terminal_text::line(l))),
            );
        }
        out.push(String::new());
    }
    out.join("\n")
}

impl App {
    /// `n`: a new memory, its key first.
    pub(super) fn new_memory(&mut self) {
        self.overlay = Overlay::Memory(Box::new(MemoryEditor::new_memory(&self.theme)));
    }

    /// `e`: the selected memory's content in the editor overlay.
    pub(super) fn edit_memory(&mut self) {
        let Some(m) = self.catalog.selected_memory() else {
            self.set_status("select a memory to edit", StatusKind::Info);
            return;
        };
        let editor = MemoryEditor::edit(m, &self.theme);
        self.overlay = Overlay::Memory(Box::new(editor));
    }

    pub(super) fn memory_editor_mut(&mut self) -> Option<&mut MemoryEditor> {
        match &mut self.overlay {
            Overlay::Memory(m) => Some(m),
            _ => None,
        }
    }

    /// `enter` on a new memory's key: on to its content, unless the key is empty or taken.
    pub(super) fn memory_key_entered(&mut self) {
        let taken: Vec<String> = self
            .catalog
            .memories
            .iter()
            .map(|m| m.key.clone())
            .collect();
        let Some(m) = self.memory_editor_mut() else {
            return;
        };
        let key = m.key_input.trim().to_owned();
        if key.is_empty() {
            m.error = Some("type the memory's key first".into());
        } else if taken.contains(&key) {
            m.error = Some(format!(
                "a memory called {} exists: esc, then e on it edits it",
                crate::terminal_text::line(&key)
            ));
        } else {
            m.key = key;
            m.stage = MemoryStage::Content;
            m.error = None;
        }
    }

    /// `ctrl-s`: writes the memory as the person, if it is still at the version shown.
    pub(super) fn save_memory(&mut self) {
        let Some(m) = self.memory_editor_mut() else {
            return;
        };
        if m.stage == MemoryStage::Key {
            self.memory_key_entered();
            return;
        }
        if m.saving {
            return;
        }
        // After a refusal for a newer version, a second ctrl-s writes over that version.
        if let Some(newer) = m.conflict.take() {
            m.if_version = newer.version;
            m.error = None;
        }
        m.saving = true;
        let req = Request::MemorySet {
            key: m.key.clone(),
            content: m.text(),
            tags: m.tags.clone(),
            pinned: m.pinned,
            if_version: Some(m.if_version),
        };
        let key = m.key.clone();
        self.send(Purpose::MemorySaved(key), req);
    }

    /// `p`: pins or unpins the selected memory, its content and tags as they are.
    pub(super) fn toggle_memory_pin(&mut self) {
        let Some(m) = self.catalog.selected_memory().cloned() else {
            self.set_status("select a memory to pin", StatusKind::Info);
            return;
        };
        self.send(
            Purpose::MemoryPinned(m.key.clone(), !m.pinned),
            Request::MemorySet {
                key: m.key,
                content: m.content,
                tags: m.tags,
                pinned: !m.pinned,
                if_version: Some(m.version),
            },
        );
    }

    /// `D`: asks, then deletes the selected memory (its history stays).
    pub(super) fn ask_to_delete_memory(&mut self) {
        let Some(key) = self.catalog.selected_memory().map(|m| m.key.clone()) else {
            self.set_status("select a memory to delete", StatusKind::Info);
            return;
        };
        self.overlay = Overlay::Confirm(Confirm {
            question: format!(
                "Delete memory {}? The model no longer sees it; its history stays (H).",
                crate::terminal_text::line(&key)
            ),
            yes: Confirmed::DeleteMemory(key),
        });
    }

    pub(super) fn delete_memory(&mut self, key: String) {
        self.send(
            Purpose::MemoryDeleted(key.clone()),
            Request::MemoryDelete { key },
        );
    }

    /// `H`: every version of the selected memory, in the pager once it arrives.
    pub(super) fn show_memory_history(&mut self) {
        let Some(key) = self.catalog.selected_memory().map(|m| m.key.clone()) else {
            self.set_status("select a memory to read its history", StatusKind::Info);
            return;
        };
        self.send(
            Purpose::MemoryHistory(key.clone()),
            Request::MemoryHistory { key },
        );
        self.set_status("loading the history…", StatusKind::Info);
    }

    /// A memory was written, pinned or deleted: the listing is asked for again (the session's
    /// change event asks too; an older engine may not send one) and the status says what.
    pub(super) fn memory_changed(&mut self, purpose: &Purpose, memory: MemoryView) {
        let key = crate::terminal_text::line(&memory.key).into_owned();
        let (text, editor_done) = match purpose {
            Purpose::MemorySaved(_) => (
                format!("memory {key} saved: version {}", memory.version),
                true,
            ),
            Purpose::MemoryPinned(_, true) => (format!("memory {key} pinned"), false),
            Purpose::MemoryPinned(_, false) => (format!("memory {key} unpinned"), false),
            _ => (
                format!("memory {key} deleted (H still shows its history)"),
                false,
            ),
        };
        if editor_done && matches!(&self.overlay, Overlay::Memory(m) if m.key == memory.key) {
            self.overlay = Overlay::None;
        }
        if !memory.deleted {
            // The written version is known now: listed, selected and shown in Detail at once,
            // a new memory included (the listing asked for below confirms it).
            self.catalog.put_memory(memory.clone());
            self.catalog.select_memory(&memory.key);
            self.set_detail(Detail::Memory(memory));
        }
        self.set_status(text, StatusKind::Success);
        self.send(Purpose::Memories, Request::Memories);
    }

    /// A memory request was refused: a save keeps the text and shows why in the editor.
    pub(super) fn memory_refused(&mut self, purpose: &Purpose, error: String) {
        let (key, what) = match purpose {
            Purpose::MemorySaved(k) => (k, "not saved"),
            Purpose::MemoryPinned(k, _) => (k, "not changed"),
            Purpose::MemoryDeleted(k) => (k, "not deleted"),
            _ => return,
        };
        let key = key.clone();
        let saving = matches!(purpose, Purpose::MemorySaved(_));
        if let Some(m) = self.memory_editor_mut().filter(|m| m.key == key) {
            m.saving = false;
            m.error = Some(error.clone());
            // Whether it moved on meanwhile is read from the listing, not from the words.
            m.checking = saving;
        }
        let shown = crate::terminal_text::line(&key).into_owned();
        self.set_status(format!("memory {shown} {what}: {error}"), StatusKind::Error);
        if saving {
            self.check_memory_conflict(false);
            self.send(Purpose::Memories, Request::Memories);
        }
    }

    /// After a refused save: when the listing holds a newer version than the editor started
    /// from, the person is told and offered the choice. `listed`: the listing is fresh, so an
    /// unchanged version means the refusal had another reason.
    fn check_memory_conflict(&mut self, listed: bool) {
        let Some(m) = self.memory_editor_mut().filter(|m| m.checking) else {
            return;
        };
        let key = m.key.clone();
        let started = m.if_version;
        let newer = self
            .catalog
            .memories
            .iter()
            .find(|c| c.key == key && c.version != started)
            .cloned();
        let Some(m) = self.memory_editor_mut() else {
            return;
        };
        match newer {
            Some(newer) => {
                m.conflicted(newer);
                let text = m.error.clone().unwrap_or_default();
                self.set_status(text, StatusKind::Error);
            }
            None if listed => m.checking = false,
            None => {}
        }
    }

    /// The reload key in the memory editor: loads the version a save was refused for.
    pub(super) fn reload_memory(&mut self) {
        let Some(m) = self.memory_editor_mut() else {
            return;
        };
        let key = crate::terminal_text::line(&m.key).into_owned();
        if let Some(version) = m.load_newer() {
            self.set_status(
                format!("memory {key}: version {version} loaded; ctrl-u brings your text back"),
                StatusKind::Info,
            );
        }
    }

    /// The history arrived: it opens in the pager.
    pub(super) fn memory_history_arrived(&mut self, key: &str, versions: &[MemoryView]) {
        let title = format!(
            "history of memory {} · {}",
            crate::terminal_text::line(key),
            crate::tui::ui::plural(versions.len() as u64, "version")
        );
        self.open_text(title, &history_text(versions));
        self.status = None;
    }

    /// The listing arrived: a refused save learns why, and Detail, when it shows a memory,
    /// shows its newest version.
    pub(super) fn memories_listed(&mut self) {
        self.check_memory_conflict(true);
        let Detail::Memory(shown) = &self.detail.shown else {
            return;
        };
        let newest = self
            .catalog
            .memories
            .iter()
            .find(|m| m.key == shown.key)
            .cloned();
        match newest {
            Some(m) if m != *shown => self.set_detail(Detail::Memory(m)),
            Some(_) => {}
            None => self.set_detail(Detail::Empty),
        }
    }
}
