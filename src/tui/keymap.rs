//! Keys → actions. One `Action` vocabulary serves the keymap, the help screen, the footer and
//! tests. The default keymap is embedded TOML (`assets/keymap.toml`); a user file overrides
//! single keys per context. Help and footer are generated from the keymap, so they can never
//! drift from the bindings.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde::Deserialize;
use std::collections::BTreeMap;

macro_rules! actions {
    ($($variant:ident = $name:literal : $help:literal,)*) => {
        /// Everything a key press, a mouse click or a test can ask the workbench to do.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Action { $($variant,)* }

        impl Action {
            pub const ALL: &'static [Action] = &[$(Action::$variant,)*];
            pub fn name(self) -> &'static str {
                match self { $(Action::$variant => $name,)* }
            }
            pub fn help(self) -> &'static str {
                match self { $(Action::$variant => $help,)* }
            }
            pub fn from_name(name: &str) -> Option<Action> {
                match name { $($name => Some(Action::$variant),)* _ => None }
            }
        }
    };
}

actions! {
    Quit = "quit": "quit loom",
    FocusNext = "focus_next": "next pane",
    FocusPrev = "focus_prev": "previous pane",
    FocusServers = "focus_servers": "Servers pane",
    FocusTraffic = "focus_traffic": "Traffic pane",
    FocusDetail = "focus_detail": "Detail pane",
    FocusCatalog = "focus_catalog": "Catalog pane",
    FocusEditor = "focus_editor": "SQL editor",
    FocusResults = "focus_results": "Results grid",
    Help = "help": "keys",
    Palette = "palette": "tool palette",
    Zoom = "zoom": "zoom pane",
    ToggleTheme = "toggle_theme": "dark/light theme",
    Up = "up": "up",
    Down = "down": "down",
    Left = "left": "left",
    Right = "right": "right",
    Top = "top": "first",
    Bottom = "bottom": "last",
    PageUp = "page_up": "page up",
    PageDown = "page_down": "page down",
    Open = "open": "open",
    Close = "close": "close",
    Confirm = "confirm": "confirm",
    ToggleStderr = "toggle_stderr": "stderr",
    ToggleFollow = "toggle_follow": "follow",
    Filter = "filter": "filter",
    ClearFilter = "clear_filter": "clear filter",
    JumpToDataset = "jump_to_dataset": "go to dataset",
    CopyDetail = "copy_detail": "copy JSON",
    NextSection = "next_section": "next group",
    PrevSection = "prev_section": "previous group",
    InsertName = "insert_name": "insert name in editor",
    EditMemory = "edit_memory": "edit memory",
    TogglePin = "toggle_pin": "pin/unpin",
    DeleteMemory = "delete_memory": "delete memory",
    MemoryHistory = "memory_history": "memory history",
    NewMemory = "new_memory": "new memory",
    Save = "save": "save",
    Describe = "describe": "describe + charts",
    QueryDataset = "query_dataset": "query it",
    RunQuery = "run_query": "run statement",
    CancelQuery = "cancel_query": "cancel query",
    HistoryPrev = "history_prev": "older query",
    HistoryNext = "history_next": "newer query",
    Complete = "complete": "complete name",
    CopyCell = "copy_cell": "copy cell",
    CopyRow = "copy_row": "copy row",
    CopyAll = "copy_all": "copy result (TSV)",
    ExportCsv = "export_csv": "export CSV…",
    ExportJson = "export_json": "export JSON…",
    MarkRows = "mark_rows": "mark rows (for export)",
    ToggleWrap = "toggle_wrap": "wrap long cells",
    ServerLog = "server_log": "server log",
    Restart = "restart": "restart / re-enable server",
    Arrange = "arrange": "room for watching / querying / by focus",
    ApproveOnce = "approve_once": "approve once",
    ApproveSession = "approve_session": "approve for session",
    Deny = "deny": "deny",
    ReviewApproval = "review_approval": "review a waiting call",
    CancelCall = "cancel_call": "cancel call",
    Search = "search": "search",
    NextMatch = "next_match": "next match",
    PrevMatch = "prev_match": "previous match",
    Retry = "retry": "try again",
    Sort = "sort": "sort by column",
    FilterRows = "filter_rows": "rows containing…",
    Narrower = "narrower": "narrower column",
    Wider = "wider": "wider column",
    CompleteOrIndent = "complete_or_indent": "complete or indent",
    HistoryBrowser = "history_browser": "query history",
    UseQuery = "use_query": "put in the editor",
    Undo = "undo": "undo",
    Redo = "redo": "redo",
    SelectAll = "select_all": "select all (typing replaces it)",
    DeleteToLineEnd = "delete_to_line_end": "delete to the end of the line",
    DeleteWord = "delete_word": "delete the word before",
    Newline = "newline": "new line",
    NewTab = "new_tab": "new tab",
    CloseTab = "close_tab": "close tab",
    NextTab = "next_tab": "next tab",
    PrevTab = "prev_tab": "previous tab",
    Tab1 = "tab_1": "tab 1",
    Tab2 = "tab_2": "tab 2",
    Tab3 = "tab_3": "tab 3",
    Tab4 = "tab_4": "tab 4",
    Tab5 = "tab_5": "tab 5",
    Tab6 = "tab_6": "tab 6",
    Tab7 = "tab_7": "tab 7",
    Tab8 = "tab_8": "tab 8",
    Tab9 = "tab_9": "tab 9",
}

impl Action {
    /// The editor tab an `alt-N` action shows, from 0.
    pub fn tab_index(self) -> Option<usize> {
        const TABS: [Action; 9] = [
            Action::Tab1,
            Action::Tab2,
            Action::Tab3,
            Action::Tab4,
            Action::Tab5,
            Action::Tab6,
            Action::Tab7,
            Action::Tab8,
            Action::Tab9,
        ];
        TABS.iter().position(|t| *t == self)
    }
}

/// A key as the keymap names it: `ctrl-e`, `f5`, `G`, `backtab`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeySpec(String);

impl KeySpec {
    pub fn from_event(k: &KeyEvent) -> Option<KeySpec> {
        let base = match k.code {
            KeyCode::Char(' ') => "space".to_owned(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::F(n) => format!("f{n}"),
            KeyCode::Enter => "enter".into(),
            KeyCode::Esc => "esc".into(),
            KeyCode::Tab => "tab".into(),
            KeyCode::BackTab => "backtab".into(),
            KeyCode::Backspace => "backspace".into(),
            KeyCode::Delete => "delete".into(),
            KeyCode::Up => "up".into(),
            KeyCode::Down => "down".into(),
            KeyCode::Left => "left".into(),
            KeyCode::Right => "right".into(),
            KeyCode::Home => "home".into(),
            KeyCode::End => "end".into(),
            KeyCode::PageUp => "pageup".into(),
            KeyCode::PageDown => "pagedown".into(),
            KeyCode::Insert => "insert".into(),
            _ => return None,
        };
        let mut s = String::new();
        if k.modifiers.contains(KeyModifiers::CONTROL) {
            s.push_str("ctrl-");
        }
        if k.modifiers.contains(KeyModifiers::ALT) {
            s.push_str("alt-");
        }
        // A shifted character already says so by its case; shift only names other keys.
        let is_char = matches!(k.code, KeyCode::Char(c) if c != ' ');
        if k.modifiers.contains(KeyModifiers::SHIFT) && !is_char && k.code != KeyCode::BackTab {
            s.push_str("shift-");
        }
        // ctrl-A and ctrl-a are the same key to a terminal.
        if k.modifiers.contains(KeyModifiers::CONTROL) && is_char {
            s.push_str(&base.to_lowercase());
        } else {
            s.push_str(&base);
        }
        Some(KeySpec(s))
    }

    /// A key no text input takes as text: a `ctrl-`/`alt-` chord or a function key.
    pub fn is_chord(&self) -> bool {
        self.0.starts_with("ctrl-")
            || self.0.starts_with("alt-")
            || (self.0.len() > 1 && self.0.starts_with('f') && self.0[1..].parse::<u8>().is_ok())
    }

    pub fn parse(text: &str) -> Result<KeySpec, KeyError> {
        let t = text.trim();
        if t.is_empty() {
            return Err(KeyError::Empty);
        }
        let mut rest = t;
        let mut prefix = String::new();
        for m in ["ctrl-", "alt-", "shift-"] {
            if rest.len() > m.len() && rest.to_ascii_lowercase().starts_with(m) {
                prefix.push_str(m);
                rest = &rest[m.len()..];
            }
        }
        let named = [
            "space",
            "enter",
            "esc",
            "tab",
            "backtab",
            "backspace",
            "delete",
            "up",
            "down",
            "left",
            "right",
            "home",
            "end",
            "pageup",
            "pagedown",
            "insert",
        ];
        let lower = rest.to_ascii_lowercase();
        let base = if rest.chars().count() == 1 {
            if prefix.starts_with("ctrl-") {
                lower
            } else {
                rest.to_owned()
            }
        } else if named.contains(&lower.as_str())
            || (lower.starts_with('f')
                && lower[1..]
                    .parse::<u8>()
                    .is_ok_and(|n| (1..=24).contains(&n)))
        {
            lower
        } else {
            return Err(KeyError::Unknown(text.to_owned()));
        };
        Ok(KeySpec(format!("{prefix}{base}")))
    }

    pub fn label(&self) -> &str {
        &self.0
    }
}

/// A key name that names no key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("empty key")]
    Empty,
    #[error("unknown key `{0}`")]
    Unknown(String),
}

/// One bad entry of a keymap file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeymapProblem {
    #[error("unknown context [{}]; contexts: {}", .0, context_names())]
    UnknownContext(String),
    #[error("[{context}] {error}")]
    BadKey { context: String, error: KeyError },
    #[error("[{context}] `{key}`: unknown action `{action}`")]
    UnknownAction {
        context: String,
        key: String,
        action: String,
    },
}

fn context_names() -> String {
    let names: Vec<&str> = Context::ALL.iter().map(|c| c.name()).collect();
    names.join(", ")
}

/// Why a keymap file was refused: not TOML, or every bad entry at once.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeymapError {
    #[error("keymap: {0}")]
    NotToml(String),
    #[error("keymap: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Entries(Vec<KeymapProblem>),
}

/// Where a key is looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Context {
    Global,
    Navigation,
    Servers,
    Traffic,
    Detail,
    Catalog,
    Editor,
    Results,
    Palette,
    Describe,
    Help,
    Completion,
    /// Every text area (the SQL editor, the palette's arguments, a memory's content).
    Text,
    Filter,
    Approval,
    Confirm,
    /// A question that only `y` answers (`enter` does not): the palette's before a call.
    Ask,
    Pager,
    Export,
    History,
    MemoryEditor,
}

impl Context {
    pub const ALL: &'static [Context] = &[
        Context::Global,
        Context::Navigation,
        Context::Servers,
        Context::Traffic,
        Context::Detail,
        Context::Catalog,
        Context::Editor,
        Context::Results,
        Context::Palette,
        Context::Describe,
        Context::Help,
        Context::Completion,
        Context::Text,
        Context::Filter,
        Context::Approval,
        Context::Confirm,
        Context::Ask,
        Context::Pager,
        Context::Export,
        Context::History,
        Context::MemoryEditor,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Context::Global => "global",
            Context::Navigation => "navigation",
            Context::Servers => "servers",
            Context::Traffic => "traffic",
            Context::Detail => "detail",
            Context::Catalog => "catalog",
            Context::Editor => "editor",
            Context::Results => "results",
            Context::Palette => "palette",
            Context::Describe => "describe",
            Context::Help => "help",
            Context::Completion => "completion",
            Context::Text => "text",
            Context::Filter => "filter",
            Context::Approval => "approval",
            Context::Confirm => "confirm",
            Context::Ask => "ask",
            Context::Pager => "pager",
            Context::Export => "export",
            Context::History => "history",
            Context::MemoryEditor => "memory_editor",
        }
    }

    fn from_name(n: &str) -> Option<Context> {
        Context::ALL.iter().copied().find(|c| c.name() == n)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Keymap {
    bindings: BTreeMap<Context, Vec<(KeySpec, Action)>>,
}

const DEFAULT: &str = include_str!("../../assets/keymap.toml");

#[derive(Deserialize)]
struct KeymapFile(BTreeMap<String, BTreeMap<String, String>>);

impl Keymap {
    pub fn default_map() -> Keymap {
        let mut k = Keymap::default();
        // The embedded map is checked by a unit test; a failure here cannot reach users.
        let _ = k.merge(DEFAULT);
        k
    }

    /// Adds or replaces bindings from TOML text; reports every bad entry.
    pub fn merge(&mut self, text: &str) -> Result<(), KeymapError> {
        let file: KeymapFile =
            toml::from_str(text).map_err(|e| KeymapError::NotToml(e.to_string()))?;
        let mut problems = Vec::new();
        for (ctx_name, keys) in file.0 {
            let Some(ctx) = Context::from_name(&ctx_name) else {
                problems.push(KeymapProblem::UnknownContext(ctx_name));
                continue;
            };
            for (key, action) in keys {
                let spec = match KeySpec::parse(&key) {
                    Ok(s) => s,
                    Err(error) => {
                        problems.push(KeymapProblem::BadKey {
                            context: ctx_name.clone(),
                            error,
                        });
                        continue;
                    }
                };
                let Some(a) = Action::from_name(&action) else {
                    problems.push(KeymapProblem::UnknownAction {
                        context: ctx_name.clone(),
                        key,
                        action,
                    });
                    continue;
                };
                let list = self.bindings.entry(ctx).or_default();
                list.retain(|(k, _)| *k != spec);
                list.push((spec, a));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(KeymapError::Entries(problems))
        }
    }

    pub fn lookup(&self, ctx: Context, key: &KeySpec) -> Option<Action> {
        self.bindings
            .get(&ctx)?
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, a)| *a)
    }

    /// The bindings of one context, in file order.
    pub fn bindings(&self, ctx: Context) -> &[(KeySpec, Action)] {
        self.bindings.get(&ctx).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Keys for each action of a context, one entry per action: `("j/down", Action::Down)`.
    pub fn grouped(&self, ctx: Context) -> Vec<(String, Action)> {
        let mut out: Vec<(String, Action)> = Vec::new();
        for (k, a) in self.bindings(ctx) {
            if let Some(e) = out.iter_mut().find(|(_, b)| b == a) {
                e.0.push('/');
                e.0.push_str(k.label());
            } else {
                out.push((k.label().to_owned(), *a));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_keymap_is_valid() {
        let mut k = Keymap::default();
        k.merge(DEFAULT).expect("embedded keymap parses");
        assert_eq!(
            k.lookup(Context::Editor, &KeySpec::parse("ctrl-e").unwrap()),
            Some(Action::RunQuery)
        );
    }

    #[test]
    fn events_and_specs_agree() {
        let ev = |code, m| KeySpec::from_event(&KeyEvent::new(code, m)).unwrap();
        assert_eq!(
            ev(KeyCode::Char('G'), KeyModifiers::SHIFT),
            KeySpec::parse("G").unwrap()
        );
        assert_eq!(
            ev(KeyCode::Char('e'), KeyModifiers::CONTROL),
            KeySpec::parse("ctrl-e").unwrap()
        );
        assert_eq!(
            ev(KeyCode::BackTab, KeyModifiers::SHIFT),
            KeySpec::parse("backtab").unwrap()
        );
        assert_eq!(
            ev(KeyCode::F(5), KeyModifiers::NONE),
            KeySpec::parse("F5").unwrap()
        );
        assert_eq!(
            ev(KeyCode::Char(' '), KeyModifiers::CONTROL),
            KeySpec::parse("ctrl-space").unwrap()
        );
    }

    #[test]
    fn user_overrides_replace_one_key_and_bad_entries_are_all_reported() {
        let mut k = Keymap::default_map();
        k.merge("[editor]\n\"ctrl-r\" = \"run_query\"\n").unwrap();
        let r = KeySpec::parse("ctrl-r").unwrap();
        assert_eq!(k.lookup(Context::Editor, &r), Some(Action::RunQuery));
        let err = k
            .merge(
                "[editr]\n\"x\" = \"quit\"\n[editor]\n\"ctrl-r\" = \"fly\"\n\"nokey\" = \"quit\"\n",
            )
            .unwrap_err();
        let KeymapError::Entries(problems) = &err else {
            panic!("{err}");
        };
        assert_eq!(problems.len(), 3, "{err}");
        let err = err.to_string();
        assert!(err.contains("unknown context [editr]"), "{err}");
        assert!(err.contains("unknown action `fly`"), "{err}");
        assert!(err.contains("unknown key `nokey`"), "{err}");
    }

    #[test]
    fn grouped_lists_every_key_of_an_action() {
        let k = Keymap::default_map();
        let g = k.grouped(Context::Navigation);
        let down = g
            .iter()
            .find(|(_, a)| *a == Action::Down)
            .expect("down bound");
        assert!(down.0.split('/').any(|k| k == "j") && down.0.split('/').any(|k| k == "down"));
    }
}
