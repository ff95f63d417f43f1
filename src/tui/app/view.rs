//! Looking through a result without writing SQL: sort by the selected column (`s`: ascending,
//! descending, off), keep only the rows that contain some text (`/`), and read a long value
//! whole in a cell view (`enter`, JSON pretty-printed); narrowing or widening a column
//! (`<`/`>`) is the grid's own. Sorting and filtering are queries over the result's own table,
//! run by the engine like any other, so a million rows sort as fast as DuckDB does; the editor
//! and its history are left alone.

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

    pub(super) fn is_plain(&self) -> bool {
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
    /// Runs `view` over its base result; the grid shows it when the engine answers.
    fn show_view(&mut self, view: GridView) {
        if self.results.running.is_some() {
            self.set_status("a query is running (ctrl-c cancels it)", StatusKind::Error);
            return;
        }
        let sql = view.sql();
        self.results.begin_view(view);
        self.start_query(sql);
        self.set_status("sorting and filtering…", StatusKind::Info);
    }

    /// `s` in Results: the selected column ascending, then descending, then unsorted.
    pub(super) fn sort_by_column(&mut self) {
        let (Some(mut view), Some(g)) = (self.results.view(), self.results.grid.as_ref()) else {
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

    /// `&` in Results: starts typing the text rows must contain.
    pub(super) fn start_row_filter(&mut self) {
        let Some(g) = &self.results.grid else {
            self.set_status("no result to filter: run a query first", StatusKind::Error);
            return;
        };
        let current = g.view.as_ref().and_then(|v| v.filter.clone());
        self.results.prompt = Some(GridPrompt::Filter(LineInput::selected(
            current.unwrap_or_default(),
        )));
    }

    /// `enter` on the prompt: keeps the rows with that text (empty shows them all), or
    /// searches for it.
    pub(super) fn apply_grid_prompt(&mut self) {
        let text = match self.results.prompt.take() {
            Some(GridPrompt::Filter(text)) => text.into_string(),
            Some(GridPrompt::Search(text)) => return self.run_grid_search(text.into_string()),
            None => return,
        };
        let Some(mut view) = self.results.view() else {
            return;
        };
        view.filter = Some(text).filter(|t| !t.is_empty());
        self.show_view(view);
    }

    /// `enter` in Results: the selected value whole, in the pager.
    pub(super) fn open_cell(&mut self) {
        let Some(g) = &self.results.grid else { return };
        match g.cell_text() {
            Some((title, text)) => self.open_text(title, &text),
            None => self.set_status("that row is still loading", StatusKind::Info),
        }
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
