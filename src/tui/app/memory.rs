//! Memories as the person at the workbench: the editor overlay (`MemoryEditor`) owns the key
//! being typed for a new memory, the content being written and the version it started from;
//! writing, pinning, deleting and reading the history are requests the app sends as the human,
//! and their replies land here. A write always carries the version the person was shown, so a
//! change made meanwhile by anyone is refused by the engine, never overwritten, and the text
//! being written is never thrown away by a refusal. It never draws.

use super::keys::edit_line;
use super::*;

/// What the memory editor takes now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryStage {
    /// A new memory's key (`enter` goes on to the content).
    Key,
    Content,
}

/// The memory editor overlay.
pub struct MemoryEditor {
    pub key: String,
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
            stage: MemoryStage::Key,
            content: Self::area(Vec::new(), th),
            tags: Vec::new(),
            pinned: false,
            if_version: 0,
            error: None,
            saving: false,
        }
    }

    /// `m` as it is now, its content ready to edit.
    fn edit(m: &MemoryView, th: &Theme) -> MemoryEditor {
        MemoryEditor {
            key: m.key.clone(),
            stage: MemoryStage::Content,
            content: Self::area(m.content.lines().map(str::to_owned).collect(), th),
            tags: m.tags.clone(),
            pinned: m.pinned,
            if_version: m.version,
            error: None,
            saving: false,
        }
    }

    pub fn text(&self) -> String {
        self.content.lines().join("\n")
    }

    /// A key the keymap did not take: it edits the key or the content.
    pub(super) fn input(&mut self, k: KeyEvent) {
        self.error = None;
        match self.stage {
            MemoryStage::Key => edit_line(&mut self.key, k),
            MemoryStage::Content => {
                self.content.input(k);
            }
        }
    }

    pub(super) fn paste(&mut self, text: &str) {
        match self.stage {
            MemoryStage::Key => self.key.push_str(&text.replace(['\n', '\r'], " ")),
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
        let key = m.key.trim().to_owned();
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
            self.catalog.select_memory(&memory.key);
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
        if let Some(m) = self.memory_editor_mut().filter(|m| m.key == key) {
            m.saving = false;
            m.error = Some(error.clone());
        }
        let key = crate::terminal_text::line(&key).into_owned();
        self.set_status(format!("memory {key} {what}: {error}"), StatusKind::Error);
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

    /// The listing arrived: Detail, when it shows a memory, shows its newest version.
    pub(super) fn memories_listed(&mut self) {
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
