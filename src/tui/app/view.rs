//! Looking through a result without writing SQL: sort by the selected column (`s`: ascending,
//! descending, off), keep only the rows that contain some text (`/`), fit or widen a column
//! (`<`/`>`), and read a long value whole in a cell view (`enter`, JSON pretty-printed). Sorting
//! and filtering are queries over the result's own table, run by the engine like any other, so
//! a million rows sort as fast as DuckDB does; the editor and its history are left alone.

use super::*;

/// How the grid's rows are derived from the result the person ran.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GridView {
    /// The result table the view reads.
    pub base: String,
    /// Column name and whether it sorts descending.
    pub sort: Option<(String, bool)>,
    /// Rows kept: those with this text in any column (any case).
    pub filter: Option<String>,
}

impl GridView {
    /// The query that shows this view of `base`.
    pub fn sql(&self) -> String {
        let mut sql = format!("SELECT * FROM {}", quote(&self.base));
        if let Some(f) = &self.filter {
            let pattern = format!(
                "%{}%",
                f.replace('\\', "\\\\")
                    .replace('%', "\\%")
                    .replace('_', "\\_")
            );
            sql.push_str(&format!(
                " WHERE concat_ws(' ', *COLUMNS(*)) ILIKE {} ESCAPE '\\'",
                literal(&pattern)
            ));
        }
        if let Some((col, desc)) = &self.sort {
            sql.push_str(&format!(
                " ORDER BY {} {} NULLS LAST",
                quote(col),
                if *desc { "DESC" } else { "ASC" }
            ));
        }
        sql
    }

    fn is_plain(&self) -> bool {
        self.sort.is_none() && self.filter.is_none()
    }
}

fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

impl App {
    fn grid_view(&self) -> Option<GridView> {
        let g = self.grid.as_ref()?;
        Some(g.view.clone().unwrap_or_else(|| GridView {
            base: g.result.table.clone(),
            ..Default::default()
        }))
    }

    /// Runs `view` over its base result; the grid shows it when the engine answers.
    fn show_view(&mut self, view: GridView) {
        if self.running.is_some() {
            self.set_status("a query is running (ctrl-c cancels it)", StatusKind::Error);
            return;
        }
        if view.is_plain() {
            self.pending_view = None;
        } else {
            self.pending_view = Some(view.clone());
        }
        let t = self.send(Purpose::Query, Request::Query { sql: view.sql() });
        self.running = Some(Running {
            ticket: t,
            started: Instant::now(),
        });
        self.statement_sql.clear();
        self.set_status("sorting and filtering…", StatusKind::Info);
    }

    /// `s` in Results: the selected column ascending, then descending, then unsorted.
    pub(super) fn sort_by_column(&mut self) {
        let (Some(mut view), Some(g)) = (self.grid_view(), self.grid.as_ref()) else {
            self.set_status("no result to sort: run a query first", StatusKind::Error);
            return;
        };
        let Some((col, _)) = g.result.columns.get(g.col).cloned() else {
            return;
        };
        view.sort = match view.sort {
            Some((c, false)) if c == col => Some((col, true)),
            Some((c, true)) if c == col => None,
            _ => Some((col, false)),
        };
        self.show_view(view);
    }

    /// `/` in Results: starts typing the text rows must contain.
    pub(super) fn start_row_filter(&mut self) {
        if self.grid.is_none() {
            self.set_status("no result to filter: run a query first", StatusKind::Error);
            return;
        }
        let current = self
            .grid
            .as_ref()
            .and_then(|g| g.view.as_ref())
            .and_then(|v| v.filter.clone())
            .unwrap_or_default();
        self.row_filter = Some(current);
    }

    /// `enter` on the row filter: keeps the rows with that text (empty shows them all).
    pub(super) fn apply_row_filter(&mut self) {
        let Some(text) = self.row_filter.take() else {
            return;
        };
        let Some(mut view) = self.grid_view() else {
            return;
        };
        view.filter = Some(text).filter(|t| !t.is_empty());
        self.show_view(view);
    }

    /// `<` / `>`: narrows or widens the selected column.
    pub(super) fn resize_column(&mut self, wider: bool) {
        if let Some(g) = &mut self.grid
            && let Some(w) = g.widths.get_mut(g.col)
        {
            *w = if wider {
                w.saturating_add(4).min(400)
            } else {
                w.saturating_sub(4).max(4)
            };
            g.fixed_width.insert(g.col);
        }
    }

    /// `enter` in Results: the selected value whole, in the pager.
    pub(super) fn open_cell(&mut self) {
        let Some(g) = &self.grid else { return };
        let Some(value) = g.cell(g.row, g.col) else {
            self.set_status("that row is still loading", StatusKind::Info);
            return;
        };
        let (name, ty) = &g.result.columns[g.col];
        let text = match value {
            None => "NULL".to_owned(),
            Some(v) => match serde_json::from_str::<Value>(v) {
                Ok(j @ (Value::Object(_) | Value::Array(_))) => {
                    serde_json::to_string_pretty(&j).unwrap_or_else(|_| v.to_owned())
                }
                _ => v.to_owned(),
            },
        };
        let title = format!("{name} ({}) · row {}", ty.to_lowercase(), g.row + 1);
        self.open_text(title, &text);
    }
}

#[cfg(test)]
mod tests {
    use super::GridView;

    #[test]
    fn names_and_text_are_quoted_and_like_wildcards_taken_literally() {
        let v = GridView {
            base: "_loom_result_3".into(),
            sort: Some(("we\"ird".into(), true)),
            filter: Some("50%_off' OR 1=1 --\\".into()),
        };
        assert_eq!(
            v.sql(),
            "SELECT * FROM \"_loom_result_3\" WHERE concat_ws(' ', *COLUMNS(*)) ILIKE \
             '%50\\%\\_off'' OR 1=1 --\\\\%' ESCAPE '\\' ORDER BY \"we\"\"ird\" DESC NULLS LAST"
        );
        let plain = GridView {
            base: "t".into(),
            ..Default::default()
        };
        assert_eq!(plain.sql(), "SELECT * FROM \"t\"");
    }
}
