//! How the screen is shared between watching (Traffic and Detail large) and querying (the
//! editor and Results large): fixed either way, or chosen by the focused pane. The person's
//! choice is kept in a small preferences file beside the query history, written whole (a temp
//! file renamed over it) so a crash never leaves half of it; a missing or broken file means
//! the default, said once in the status line, never an error.

use super::*;
use crate::tui::ui::Plan;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrangement {
    /// Traffic and Detail take the upper half: for watching an agent work.
    #[default]
    Watch,
    /// The editor and Results take most of the screen: for querying.
    Query,
    /// Querying room while the editor or Results has focus, watching room otherwise.
    ByFocus,
}

impl Arrangement {
    fn next(self) -> Arrangement {
        match self {
            Arrangement::Watch => Arrangement::Query,
            Arrangement::Query => Arrangement::ByFocus,
            Arrangement::ByFocus => Arrangement::Watch,
        }
    }

    fn words(self) -> &'static str {
        match self {
            Arrangement::Watch => "room for watching (Traffic and Detail large)",
            Arrangement::Query => "room for querying (SQL and Results large)",
            Arrangement::ByFocus => "room follows focus (querying in SQL and Results)",
        }
    }
}

/// What the workbench remembers between runs.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Preferences {
    pub layout: Arrangement,
}

/// The preferences file beside the history file.
pub fn preferences_file(history_file: &std::path::Path) -> Option<PathBuf> {
    Some(history_file.parent()?.join("workbench.json"))
}

/// Why the preferences file was not used (the defaults are, and the person is told this).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreferencesError {
    #[error("{path} is not readable ({why}); using defaults")]
    Broken { path: String, why: String },
    #[error("cannot read {path} ({why}); using defaults")]
    Unreadable { path: String, why: String },
}

/// Reads the preferences; a missing file is the defaults, a broken one says why.
pub fn load_preferences(path: &std::path::Path) -> Result<Preferences, PreferencesError> {
    let shown = || path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| PreferencesError::Broken {
            path: shown(),
            why: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Preferences::default()),
        Err(e) => Err(PreferencesError::Unreadable {
            path: shown(),
            why: e.to_string(),
        }),
    }
}

fn save_preferences(path: &std::path::Path, prefs: &Preferences) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        crate::folders::create_private_dirs(dir)?;
    }
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(prefs).map_err(std::io::Error::other)?;
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

impl App {
    /// How the screen is shared out now.
    pub fn plan(&self) -> Plan {
        let query_room = match self.arrangement {
            Arrangement::Watch => false,
            Arrangement::Query => true,
            Arrangement::ByFocus => matches!(self.focus, Pane::Editor | Pane::Results),
        };
        Plan {
            zoom: self.zoom.then_some(self.focus),
            query_room,
            servers: u16::try_from(self.servers.list.len()).unwrap_or(u16::MAX),
        }
    }

    /// `+`: the next arrangement, remembered for the next run.
    pub(super) fn cycle_arrangement(&mut self) {
        self.arrangement = self.arrangement.next();
        self.editor.rescroll();
        self.ensure_pages();
        let mut text = format!("layout: {}", self.arrangement.words());
        if let Some(path) = &self.prefs_file {
            let prefs = Preferences {
                layout: self.arrangement,
            };
            if let Err(e) = save_preferences(path, &prefs) {
                text = format!("{text}; not remembered: {e}");
            }
        }
        self.set_status(text, StatusKind::Info);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preferences_round_trip_and_a_broken_file_means_the_defaults_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("loom").join("workbench.json");
        assert_eq!(load_preferences(&path), Ok(Preferences::default()));
        let prefs = Preferences {
            layout: Arrangement::ByFocus,
        };
        save_preferences(&path, &prefs).unwrap();
        assert_eq!(load_preferences(&path), Ok(prefs));
        std::fs::write(&path, "{\"layout\": \"sideways\"").unwrap();
        let err = load_preferences(&path).unwrap_err().to_string();
        assert!(err.contains("using defaults"), "{err}");
    }
}
