//! The SQL editor: running the statement under the cursor, history, completion.

use super::*;

impl App {
    pub(super) fn style_editor(&mut self) {
        self.editor.set_style(self.theme.base);
        self.editor
            .set_cursor_line_style(ratatui::style::Style::default());
        self.editor.set_line_number_style(self.theme.muted);
        self.editor.set_placeholder_style(self.theme.muted);
    }

    pub(super) fn run_statement_under_cursor(&mut self) {
        let text = self.editor.lines().join("\n");
        let (sql, origin) = match self.editor.selection_range() {
            Some((a, b)) => {
                let lines = self.editor.lines();
                (slice_range(lines, a, b), a)
            }
            None => statement_at(&text, self.editor.cursor()),
        };
        if sql.trim().is_empty() {
            self.set_status("no statement under the cursor", StatusKind::Error);
            return;
        }
        self.run_sql(sql, origin);
    }

    pub(super) fn run_sql(&mut self, sql: String, origin: (usize, usize)) {
        if self.running.is_some() {
            self.set_status(
                "a query is already running (ctrl-c cancels it)",
                StatusKind::Error,
            );
            return;
        }
        let sql = sql.trim().to_owned();
        self.remember(&sql);
        self.query_error = None;
        self.statement_origin = origin;
        self.statement_sql = sql.clone();
        self.pending_view = None;
        self.dirty_highlight = true;
        let t = self.send(Purpose::Query, Request::Query { sql });
        self.running = Some(Running {
            ticket: t,
            started: Instant::now(),
        });
        self.set_status("running…", StatusKind::Info);
    }

    pub(super) fn remember(&mut self, sql: &str) {
        if self.history.last().map(String::as_str) == Some(sql) {
            return;
        }
        self.history.push(sql.to_owned());
        self.history_pos = None;
        if let Some(path) = &self.history_file {
            save_history(path, sql);
        }
    }

    pub(super) fn walk_history(&mut self, older: bool) {
        if self.history.is_empty() {
            return;
        }
        let n = self.history.len();
        let pos = match (self.history_pos, older) {
            (None, true) => {
                // What the person was writing comes back when they walk past the newest.
                self.history_draft = Some(self.editor_text());
                n - 1
            }
            (None, false) => return,
            (Some(p), true) => p.saturating_sub(1),
            (Some(p), false) if p + 1 >= n => {
                self.history_pos = None;
                let draft = self.history_draft.take().unwrap_or_default();
                self.replace_editor_text(&draft);
                return;
            }
            (Some(p), false) => p + 1,
        };
        let text = self.history[pos].clone();
        self.replace_editor_text(&text);
        self.history_pos = Some(pos);
    }

    /// After a resize the editor scrolls no further than its cursor needs: text that now fits
    /// is shown from the top again.
    pub(super) fn rescroll_editor(&mut self) {
        if self.editor.is_selecting() {
            return;
        }
        let (row, col) = self.editor.cursor();
        self.editor.scroll((-i16::MAX, -i16::MAX));
        self.editor.move_cursor(tui_textarea::CursorMove::Jump(
            u16::try_from(row).unwrap_or(u16::MAX),
            u16::try_from(col).unwrap_or(u16::MAX),
        ));
    }

    /// The editor's whole text.
    pub fn editor_text(&self) -> String {
        self.editor.lines().join("\n")
    }

    /// Puts `text` in the editor as an edit, so undo (`ctrl-u`) brings back what was there;
    /// the cursor goes to the end.
    pub(super) fn replace_editor_text(&mut self, text: &str) {
        self.editor.select_all();
        self.editor.insert_str(text);
        self.editor.cancel_selection();
        self.editor.move_cursor(tui_textarea::CursorMove::Bottom);
        self.editor.move_cursor(tui_textarea::CursorMove::End);
        self.completion = None;
        self.query_error = None;
        self.dirty_highlight = true;
    }

    /// Replaces the editor's text with a query of the person's choosing (`s` on a dataset). What
    /// they had written is never lost: it joins the history (ctrl-up) and undo brings it back.
    pub(super) fn open_query(&mut self, sql: &str) {
        let draft = self.editor_text();
        let draft = draft.trim();
        if !draft.is_empty() && draft != sql.trim() {
            let draft = draft.to_owned();
            self.remember(&draft);
        }
        self.replace_editor_text(sql);
        self.history_pos = None;
    }

    /// Names the editor can complete: datasets, their columns, SQL keywords.
    pub(super) fn completion_candidates(&self) -> Vec<String> {
        let mut all: Vec<String> = self.datasets.iter().map(|d| d.dataset.clone()).collect();
        for d in &self.datasets {
            for (c, _) in &d.columns {
                let quoted = if c
                    .chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_')
                {
                    c.clone()
                } else {
                    format!("\"{}\"", c.replace('"', "\"\""))
                };
                if !all.contains(&quoted) {
                    all.push(quoted);
                }
            }
        }
        all.extend(crate::tui::sql::COMPLETIONS.iter().map(|k| (*k).to_owned()));
        all
    }

    pub(super) fn open_completion(&mut self, explicit: bool) {
        let (row, col) = self.editor.cursor();
        let line = self.editor.lines().get(row).cloned().unwrap_or_default();
        let before: String = line.chars().take(col).collect();
        let prefix: String = before
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.' || *c == '"')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let p = prefix.trim_start_matches('"').to_lowercase();
        if p.is_empty() && !explicit {
            self.completion = None;
            return;
        }
        let items: Vec<String> = self
            .completion_candidates()
            .into_iter()
            .filter(|c| {
                c.trim_start_matches('"').to_lowercase().starts_with(&p) && c.len() > p.len()
            })
            .take(50)
            .collect();
        if items.is_empty() {
            self.completion = None;
            if explicit {
                self.set_status("no completion", StatusKind::Info);
            }
            return;
        }
        if explicit && items.len() == 1 {
            self.completion = Some(Completion {
                items,
                selected: 0,
                prefix_len: prefix.chars().count(),
            });
            self.accept_completion();
            return;
        }
        self.completion = Some(Completion {
            items,
            selected: 0,
            prefix_len: prefix.chars().count(),
        });
    }

    /// `tab` in the editor: completes the word before the cursor, or indents where there is
    /// none (after a space or at the start of a line). Leaving the editor is `esc`.
    pub(super) fn complete_or_indent(&mut self) {
        let (row, col) = self.editor.cursor();
        let line = self.editor.lines().get(row).cloned().unwrap_or_default();
        let word_before = line
            .chars()
            .take(col)
            .last()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '"');
        if word_before {
            self.open_completion(true);
        } else {
            self.editor.insert_str("    ");
            self.dirty_highlight = true;
        }
    }

    pub(super) fn accept_completion(&mut self) {
        let Some(c) = self.completion.take() else {
            return;
        };
        let Some(item) = c.items.get(c.selected) else {
            return;
        };
        self.editor.delete_str(0);
        for _ in 0..c.prefix_len {
            self.editor.delete_char();
        }
        self.editor.insert_str(item);
        self.dirty_highlight = true;
    }
}

/// Where the SQL history lives when no other place is given.
pub fn default_history_file() -> Option<PathBuf> {
    Some(crate::folders::data_dir()?.join("sql-history.jsonl"))
}

pub fn load_history(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|t| {
            t.lines()
                .filter_map(|l| serde_json::from_str::<String>(l).ok())
                .collect::<Vec<_>>()
        })
        .map(|mut v| {
            let skip = v.len().saturating_sub(1000);
            v.drain(..skip);
            v
        })
        .unwrap_or_default()
}

pub(super) fn save_history(path: &std::path::Path, sql: &str) {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(f, "{}", Value::String(sql.to_owned()));
    }
}
