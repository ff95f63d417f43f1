//! Editor tabs: up to nine buffers, each with its own text, cursor, undo, error mark and place
//! in the history walk. The tab in view lives in `EditorPane`'s own fields, so the rest of the
//! workbench reads one editor; the others are parked here and swapped in whole. It owns the
//! tabs file (`editor-tabs.json` beside the history): written atomically (a private temporary
//! file renamed over it), read at start. A broken file is reported and set aside, never fatal,
//! and closing a tab never loses text the history does not hold. It never draws and never
//! sends requests.

use super::*;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The most tabs: one digit (`alt-1` … `alt-9`) reaches each.
pub const MAX_TABS: usize = 9;

/// Everything of a tab that is swapped in and out of view.
#[derive(Default)]
pub(super) struct TabState {
    pub(super) area: TextArea<'static>,
    pub(super) error: Option<ErrorMark>,
    pub(super) history_pos: Option<usize>,
    pub(super) history_draft: Option<String>,
}

struct Slot {
    /// Stays the tab's while others open and close: a statement's error finds its tab by it.
    id: u64,
    /// Names the tab in the tabs file, which other workbenches write too.
    uid: String,
    /// The tab's state while another is in view; a blank while it is in view itself.
    parked: TabState,
}

/// The editor's tabs and which is in view.
pub struct Tabs {
    slots: Vec<Slot>,
    current: usize,
    next_id: u64,
    /// Where the tabs are saved; none in tests and without a history file.
    pub file: Option<PathBuf>,
    /// The tabs of the file this workbench has seen (read or written): one it saw there and
    /// no longer holds it closed; one it never saw another workbench opened, and is kept.
    seen: std::collections::HashSet<String>,
}

impl Default for Tabs {
    fn default() -> Tabs {
        Tabs {
            slots: vec![Slot {
                id: 1,
                uid: new_uid(),
                parked: TabState::default(),
            }],
            current: 0,
            next_id: 2,
            file: None,
            seen: Default::default(),
        }
    }
}

impl Tabs {
    /// How many tabs there are: always at least one.
    pub fn count(&self) -> usize {
        self.slots.len()
    }

    /// The tab in view, from 0.
    pub fn current(&self) -> usize {
        self.current
    }

    pub(super) fn current_id(&self) -> u64 {
        self.slots.get(self.current).map_or(0, |s| s.id)
    }
}

/// What the editor's title shows of a tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TabLabel {
    /// From 1, as `alt-N` reaches it.
    pub number: usize,
    pub current: bool,
    /// Its last statement failed.
    pub failed: bool,
}

/// The tabs file: each tab's text and cursor, and which is in view.
#[derive(Serialize, Deserialize)]
pub struct TabsFile {
    #[serde(default)]
    current: usize,
    tabs: Vec<SavedTab>,
}

#[derive(Serialize, Deserialize)]
struct SavedTab {
    /// Which tab it is, whoever wrote the file (older files have none: each gets one).
    #[serde(default)]
    uid: String,
    text: String,
    /// Line and column, from 0.
    #[serde(default)]
    cursor: (usize, usize),
}

/// Why the tabs file was not read.
#[derive(Debug, thiserror::Error)]
pub enum TabsFileError {
    #[error("cannot be read ({0})")]
    Read(std::io::Error),
    #[error("is not a tabs file ({0})")]
    Parse(serde_json::Error),
}

/// A name for a new tab no other workbench's tab has.
fn new_uid() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{:x}-{nanos:x}-{n:x}", std::process::id())
}

/// The tabs file beside the history file.
pub fn tabs_file_beside(history: &Path) -> PathBuf {
    history.with_file_name("editor-tabs.json")
}

/// The tabs file at `path`; none when there is none yet.
pub fn read_tabs_file(path: &Path) -> Result<Option<TabsFile>, TabsFileError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(TabsFileError::Read(e)),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(TabsFileError::Parse)
}

/// Writes `bytes` to `path` through a private temporary file beside it, renamed over it once
/// complete: a crash leaves the old file or the new one, never half of one.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    crate::folders::create_private_dirs(dir)?;
    crate::folders::write_private(dir, path, ".editor-tabs-", bytes)
}

/// A text area holding `text` with the cursor at `cursor` (moved back inside the text).
fn area_with(text: &str, cursor: (usize, usize)) -> TextArea<'static> {
    let lines: Vec<String> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_owned())
        .collect();
    let mut area = TextArea::new(lines);
    area.set_placeholder_text(super::editor::PLACEHOLDER);
    let clamp = |n: usize| u16::try_from(n).unwrap_or(u16::MAX);
    area.move_cursor(tui_textarea::CursorMove::Jump(
        clamp(cursor.0),
        clamp(cursor.1),
    ));
    area
}

impl EditorPane {
    /// Swaps the state in view with tab `i`'s parked state.
    fn swap_with(&mut self, i: usize) {
        let Some(slot) = self.tabs.slots.get_mut(i) else {
            return;
        };
        let mut st = std::mem::take(&mut slot.parked);
        std::mem::swap(&mut self.area, &mut st.area);
        std::mem::swap(&mut self.error, &mut st.error);
        std::mem::swap(&mut self.history_pos, &mut st.history_pos);
        std::mem::swap(&mut self.history_draft, &mut st.history_draft);
        slot.parked = st;
        self.completion = None;
        self.redo_available = false;
        self.dirty = true;
    }

    /// Opens an empty tab after the others and shows it; false when there are `MAX_TABS`.
    pub(super) fn new_tab(&mut self) -> bool {
        if self.tabs.count() >= MAX_TABS {
            return false;
        }
        self.swap_with(self.tabs.current);
        let id = self.tabs.next_id;
        self.tabs.next_id += 1;
        self.tabs.slots.push(Slot {
            id,
            uid: new_uid(),
            parked: TabState {
                area: super::editor::blank_area(),
                ..Default::default()
            },
        });
        self.tabs.current = self.tabs.count() - 1;
        self.swap_with(self.tabs.current);
        true
    }

    /// Shows tab `i` (from 0); false when there is no such tab or it is in view.
    pub(super) fn switch_tab(&mut self, i: usize) -> bool {
        if i >= self.tabs.count() || i == self.tabs.current {
            return false;
        }
        self.swap_with(self.tabs.current);
        self.tabs.current = i;
        self.swap_with(i);
        true
    }

    /// Drops the tab in view and shows its neighbour; the last tab stays.
    pub(super) fn close_current_tab(&mut self) -> bool {
        if self.tabs.count() <= 1 {
            return false;
        }
        self.tabs.slots.remove(self.tabs.current);
        self.tabs.current = self.tabs.current.min(self.tabs.count() - 1);
        self.swap_with(self.tabs.current);
        // What came out of view was the closed tab's.
        if let Some(slot) = self.tabs.slots.get_mut(self.tabs.current) {
            slot.parked = TabState::default();
        }
        true
    }

    /// Marks where the statement that tab `id` ran failed (`at`, when the engine said).
    pub(super) fn mark_error(&mut self, id: u64, at: Option<(usize, usize)>) {
        let mark = Some(ErrorMark { at });
        if id == self.tabs.current_id() {
            self.error = mark;
            self.dirty = true;
        } else if let Some(slot) = self.tabs.slots.iter_mut().find(|s| s.id == id) {
            slot.parked.error = mark;
            // Coloured again when it comes into view.
        }
    }

    pub fn tab_labels(&self) -> Vec<TabLabel> {
        self.tabs
            .slots
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let current = i == self.tabs.current;
                TabLabel {
                    number: i + 1,
                    current,
                    failed: if current {
                        self.error.is_some()
                    } else {
                        s.parked.error.is_some()
                    },
                }
            })
            .collect()
    }

    /// Each tab's text, in order (the one in view as it is now).
    pub fn tab_texts(&self) -> Vec<String> {
        (0..self.tabs.count())
            .map(|i| self.tab_area(i).lines().join("\n"))
            .collect()
    }

    fn tab_area(&self, i: usize) -> &TextArea<'static> {
        match self.tabs.slots.get(i) {
            Some(s) if i != self.tabs.current => &s.parked.area,
            _ => &self.area,
        }
    }

    /// What to write over `on_disk` (the file as it is now): this workbench's tabs, then the
    /// tabs another workbench opened there that this one never saw, so neither loses the other's
    /// text. A tab this one saw and closed is left out.
    fn merged_with(&mut self, on_disk: Option<TabsFile>) -> TabsFile {
        let mut tabs: Vec<SavedTab> = (0..self.tabs.count())
            .map(|i| {
                let a = self.tab_area(i);
                SavedTab {
                    uid: self.tabs.slots[i].uid.clone(),
                    text: a.lines().join("\n"),
                    cursor: a.cursor(),
                }
            })
            .collect();
        for t in on_disk.map(|f| f.tabs).unwrap_or_default() {
            let theirs = !t.uid.is_empty()
                && !self.tabs.seen.contains(&t.uid)
                && !tabs.iter().any(|m| m.uid == t.uid);
            if theirs {
                tabs.push(t);
            }
        }
        self.tabs.seen = tabs.iter().map(|t| t.uid.clone()).collect();
        TabsFile {
            current: self.tabs.current,
            tabs,
        }
    }

    /// Puts the saved tabs in place of what the editor holds; says how many were left out.
    fn restore(&mut self, file: TabsFile) -> usize {
        let total = file.tabs.len();
        let states: Vec<(String, TabState)> = file
            .tabs
            .iter()
            .take(MAX_TABS)
            .map(|t| {
                let uid = if t.uid.is_empty() {
                    new_uid()
                } else {
                    t.uid.clone()
                };
                (
                    uid,
                    TabState {
                        area: area_with(&t.text, t.cursor),
                        ..Default::default()
                    },
                )
            })
            .collect();
        self.tabs.seen = file.tabs.iter().map(|t| t.uid.clone()).collect();
        if states.is_empty() {
            return 0;
        }
        let n = states.len();
        self.tabs.slots = states
            .into_iter()
            .zip(1..)
            .map(|((uid, parked), id)| Slot { id, uid, parked })
            .collect();
        self.tabs.next_id = n as u64 + 1;
        self.tabs.current = file.current.min(n - 1);
        self.area = TextArea::default();
        self.error = None;
        self.history_pos = None;
        self.history_draft = None;
        self.swap_with(self.tabs.current);
        total - n
    }
}

impl App {
    /// `ctrl-n`: an empty tab.
    pub(super) fn new_tab(&mut self) {
        if !self.editor.new_tab() {
            self.set_status(
                format!("at most {MAX_TABS} tabs: ctrl-w closes one"),
                StatusKind::Info,
            );
            return;
        }
        self.tab_shown();
    }

    /// `alt-N`: tab `i` (from 0).
    pub(super) fn switch_tab(&mut self, i: usize) {
        if i >= self.editor.tabs.count() {
            self.set_status(
                format!("no tab {} (ctrl-n opens one)", i + 1),
                StatusKind::Info,
            );
            return;
        }
        if self.editor.switch_tab(i) {
            self.tab_shown();
        }
    }

    /// `ctrl-pagedown` / `ctrl-pageup`: the next or previous tab, round the end.
    pub(super) fn cycle_tab(&mut self, forward: bool) {
        let n = self.editor.tabs.count();
        let i = self.editor.tabs.current();
        let j = if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        };
        if self.editor.switch_tab(j) {
            self.tab_shown();
        }
    }

    /// `ctrl-w`: closes the tab in view. Text the history does not hold is asked about, and
    /// kept in the history even then, so no text is lost by a slip of the key.
    pub(super) fn close_tab(&mut self) {
        if self.editor.tabs.count() <= 1 {
            self.set_status("the only tab stays open", StatusKind::Info);
            return;
        }
        let id = self.editor.tabs.current_id();
        if self.editor.in_history(&self.editor.text()) {
            self.tab_closed(id);
            return;
        }
        self.overlay = Overlay::Confirm(Confirm {
            question: format!(
                "Close tab {}? Its text is not in the history yet; it is kept there (ctrl-r finds it).",
                self.editor.tabs.current() + 1
            ),
            yes: Confirmed::CloseTab(id),
        });
    }

    /// Closes tab `id` if it is still the one in view.
    pub(super) fn tab_closed(&mut self, id: u64) {
        if self.editor.tabs.current_id() != id {
            return;
        }
        let n = self.editor.tabs.current() + 1;
        let text = self.editor.text();
        let kept = !self.editor.in_history(&text);
        if kept {
            let at = self.clock();
            self.editor.remember(text.trim(), at);
        }
        if self.editor.close_current_tab() {
            self.tab_shown();
            self.set_status(
                if kept {
                    format!("closed tab {n}; its text is in the history (ctrl-r)")
                } else {
                    format!("closed tab {n}")
                },
                StatusKind::Info,
            );
        }
    }

    /// A tab came into view: in this theme's colours, and saved as it now stands.
    fn tab_shown(&mut self) {
        self.editor.style(&self.theme);
        self.save_tabs();
    }

    /// Writes the tabs file; a failure is said in the status line, and the work goes on.
    pub(super) fn save_tabs(&mut self) {
        self.editor.unsaved = false;
        self.editor.draft_since = None;
        let Some(path) = self.editor.tabs.file.clone() else {
            return;
        };
        // Read again just before writing: another workbench may have saved tabs meanwhile.
        let on_disk = read_tabs_file(&path).ok().flatten();
        let written = serde_json::to_vec_pretty(&self.editor.merged_with(on_disk))
            .map_err(std::io::Error::other)
            .and_then(|bytes| write_atomically(&path, &bytes));
        if let Err(e) = written {
            self.set_status(
                format!("editor tabs not saved to {}: {e}", path.display()),
                StatusKind::Error,
            );
        }
    }

    /// At start: the tabs saved beside the history at `path`. A broken file is said in the
    /// status line and moved aside (so the next save does not overwrite it); the editor starts
    /// with one empty tab.
    pub fn restore_tabs(&mut self, path: PathBuf) {
        match read_tabs_file(&path) {
            Ok(None) => {}
            Ok(Some(file)) => {
                let left_out = self.editor.restore(file);
                self.editor.style(&self.theme);
                if left_out > 0 {
                    // The next save writes only the tabs open: the whole file is kept aside.
                    let all = path.with_extension("json.all");
                    let kept = match std::fs::copy(&path, &all) {
                        Ok(_) => format!("all are kept in {}", all.display()),
                        Err(e) => format!("the others could not be kept ({e})"),
                    };
                    self.set_status(
                        format!(
                            "editor tabs: the first {MAX_TABS} restored, {left_out} more left out; {kept}"
                        ),
                        StatusKind::Info,
                    );
                }
            }
            Err(e) => {
                let aside = path.with_extension("json.broken");
                let name = |p: &Path| {
                    p.file_name()
                        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
                };
                let moved = match std::fs::rename(&path, &aside) {
                    Ok(()) => format!("set aside as {} beside it", name(&aside)),
                    Err(m) => format!("left in place ({m})"),
                };
                self.set_status(
                    format!("editor tabs not restored: {} {e}; {moved}", path.display()),
                    StatusKind::Error,
                );
            }
        }
        self.editor.tabs.file = Some(path);
    }
}
