//! The results pane: it owns the query under way, the last query's error (placed in the editor
//! when the engine said where), the grid of the last result and the view (sort, filter) the
//! running query will show, the row filter being typed, a pending copy-all and an export in
//! progress. Sending the query and exporting are the app's (`App::send`); the pane never
//! draws and never holds an older result next to a newer failure.

use super::*;

/// A query the engine is running.
pub struct Running {
    pub ticket: u64,
    pub started: Instant,
}

/// Why the last query failed.
pub struct QueryError {
    pub message: String,
    /// Line and column in the editor (0-based) when the engine said where.
    pub at: Option<(usize, usize)>,
    /// Cancelled, not failed: said as such, and the tab is not marked.
    pub cancelled: bool,
}

/// An export under way.
pub struct ExportState {
    pub table: String,
    pub rows: u64,
    pub total: u64,
}

/// The Results pane's state.
/// Text typed at the foot of the grid.
#[derive(Debug, Clone, PartialEq)]
pub enum GridPrompt {
    /// The text rows must contain to stay (`&`).
    Filter(LineInput),
    /// The text to find (`/`).
    Search(LineInput),
}

impl GridPrompt {
    pub fn text_mut(&mut self) -> &mut LineInput {
        match self {
            GridPrompt::Filter(t) | GridPrompt::Search(t) => t,
        }
    }
}

#[derive(Default)]
pub struct Results {
    pub running: Option<Running>,
    pub query_error: Option<QueryError>,
    /// Where the running statement starts in the editor, to place the engine's error.
    statement_origin: (usize, usize),
    /// The running statement's text, to read the engine's error position against.
    statement_sql: String,
    pub grid: Option<Grid>,
    /// The sort and filter the running query will show, when it is one.
    pending_view: Option<GridView>,
    /// What is being typed at the foot of the grid: a row filter (`&`) or a search (`/`).
    pub prompt: Option<GridPrompt>,
    /// The last search and what it found.
    pub search: Option<super::grid_search::GridSearch>,
    /// Copy-all was asked for while pages were loading: it runs when the last one arrives.
    pub copy_all_pending: bool,
    pub export: Option<ExportState>,
    /// Why the session let the shown result go, until another is shown.
    pub dropped: Option<String>,
}

impl Results {
    /// The view the grid shows now: its own, or the plain result.
    pub(super) fn view(&self) -> Option<GridView> {
        let g = self.grid.as_ref()?;
        Some(g.view.clone().unwrap_or_else(|| GridView {
            base: g.result.table.clone(),
            ..Default::default()
        }))
    }

    /// A statement from the editor starts at `origin`: errors are placed against it.
    fn begin_statement(&mut self, sql: &str, origin: (usize, usize)) {
        self.query_error = None;
        self.statement_origin = origin;
        self.statement_sql = sql.to_owned();
        self.pending_view = None;
    }

    /// A sort or filter of the grid starts: its result becomes the grid's `view`.
    pub(super) fn begin_view(&mut self, view: GridView) {
        self.pending_view = (!view.is_plain()).then_some(view);
        self.statement_sql.clear();
    }

    /// The result arrived: a new grid. A new view of the same result keeps the person's
    /// column and the widths they set.
    fn show(&mut self, result: ResultTable) {
        self.running = None;
        let mut grid = Grid::new(result);
        grid.view = self.pending_view.take();
        grid.sql = self.statement_sql.clone();
        if grid.view.is_some()
            && let Some(old) = &self.grid
        {
            grid.keep_place_of(old);
            grid.sql = old.sql.clone();
        }
        self.grid = Some(grid);
        self.dropped = None;
        // A search belongs to the rows it searched: a new grid starts without one (no stale
        // `n`/`N`, no old text to append to).
        self.search = None;
    }

    /// The query of `ticket` failed with `message` (or was cancelled). Results shows why
    /// above the grid that was on screen, which stays as it was, said to be the previous
    /// result: a failure or a cancel loses nothing the person was reading. Says whether it was
    /// a statement from the editor (not a sort or filter of the grid).
    fn failed(&mut self, ticket: u64, message: &str) -> bool {
        if self.running.as_ref().is_some_and(|r| r.ticket == ticket) {
            self.running = None;
        }
        let at = error_position(message, &self.statement_sql).map(|(l, c)| {
            let (ol, oc) = self.statement_origin;
            if l == 0 { (ol, oc + c) } else { (ol + l, c) }
        });
        self.query_error = Some(QueryError {
            message: message.to_owned(),
            at,
            cancelled: false,
        });
        self.copy_all_pending = false;
        self.pending_view.take().is_none() && !self.statement_sql.is_empty()
    }

    /// The grid on screen, if it reads `table`.
    pub(super) fn grid_of(&mut self, table: &str) -> Option<&mut Grid> {
        self.grid.as_mut().filter(|g| g.result.table == table)
    }
}

impl App {
    pub(super) fn run_sql(&mut self, sql: String, origin: (usize, usize)) {
        if self.results.running.is_some() {
            self.set_status(
                "a query is already running (ctrl-c cancels it)",
                StatusKind::Error,
            );
            return;
        }
        let sql = sql.trim().to_owned();
        self.results.begin_statement(&sql, origin);
        self.editor.error = None;
        self.editor.dirty = true;
        let ticket = self.start_query(sql.clone());
        let at = self.clock();
        self.editor.record_run(&sql, ticket, at);
        self.save_tabs();
        self.set_status("running…", StatusKind::Info);
    }

    /// Sends `sql` as the query Results waits for; returns its ticket.
    pub(super) fn start_query(&mut self, sql: String) -> u64 {
        let t = self.send(Purpose::Query, Request::Query { sql });
        self.results.running = Some(Running {
            ticket: t,
            started: Instant::now(),
        });
        t
    }

    pub(super) fn cancel_query(&mut self) {
        if self.results.running.is_some() {
            self.send(Purpose::Cancel, Request::CancelQuery);
            self.set_status("cancelling the query…", StatusKind::Info);
        }
    }

    pub(super) fn query_done(&mut self, ticket: u64, result: ResultTable) {
        let millis = result.millis;
        let rows = result.rows;
        self.editor
            .finish_run(ticket, Outcome::Rows(rows), Some(millis));
        self.results.show(result);
        self.ensure_pages();
        self.set_status(
            format!(
                "{} in {} ms",
                crate::tui::ui::plural(rows, "row"),
                crate::tui::ui::count(millis)
            ),
            StatusKind::Success,
        );
        self.send(Purpose::Datasets, Request::Datasets);
    }

    /// The query of `ticket` was cancelled: Results says so, the tab is not marked failed.
    pub(super) fn query_cancelled(&mut self, ticket: u64, e: &str) {
        let statement = self.results.failed(ticket, e);
        if let Some(q) = &mut self.results.query_error {
            q.cancelled = true;
            q.at = None;
        }
        self.editor.dirty = true;
        self.editor.finish_run(ticket, Outcome::Cancelled, None);
        let shown = if self.results.grid.is_some() {
            " (the previous result stays)"
        } else {
            ""
        };
        self.set_status(format!("query cancelled{shown}"), StatusKind::Info);
        if statement {
            self.focus = Pane::Editor;
        }
    }

    pub(super) fn query_failed(&mut self, ticket: u64, e: &str) {
        let statement = self.results.failed(ticket, e);
        self.editor.dirty = true;
        if let Some(tab) = self
            .editor
            .finish_run(ticket, Outcome::Failed(shorten_error(e)), None)
        {
            let at = self.results.query_error.as_ref().and_then(|q| q.at);
            self.editor.mark_error(tab, at);
        }
        let first = e.lines().next().unwrap_or_default().to_owned();
        self.set_status(format!("query failed: {first}"), StatusKind::Error);
        // A sort or filter of the grid failed: the person stays in Results.
        if statement {
            self.focus = Pane::Editor;
        }
    }

    /// `x` / `X`: opens the export dialog for what is in view (the described dataset, the
    /// result or its marked rows, the selected dataset), with CSV or JSON first.
    pub(super) fn export(&mut self, format: &str) {
        let marked = match (&self.overlay, self.focus) {
            (Overlay::None, Pane::Results) => self.results.grid.as_ref().and_then(Grid::marked),
            _ => None,
        };
        let table = match (&self.overlay, self.focus) {
            (Overlay::Describe(d), _) => d
                .describe
                .as_ref()
                .map(|x| (d.dataset.clone(), d.dataset.clone(), Some(x.rows))),
            (_, Pane::Results) => self.results.grid.as_ref().map(|g| {
                (
                    g.result.table.clone(),
                    export_stem(&g.result.table, &g.sql),
                    Some(g.result.rows),
                )
            }),
            (_, Pane::Catalog) => self.catalog.selected_dataset().map(|d| {
                let rows = self
                    .catalog
                    .datasets
                    .iter()
                    .find(|v| v.dataset == d)
                    .map(|v| v.rows);
                (d.clone(), d, rows)
            }),
            _ => None,
        };
        let Some((table, stem, rows)) = table else {
            self.set_status(
                "nothing to export here: select a dataset or run a query",
                StatusKind::Error,
            );
            return;
        };
        let count = marked.map(|(_, n)| n).or(rows);
        let export_dir = self
            .session
            .as_ref()
            .map(|s| s.export_dir.clone())
            .unwrap_or_default();
        let mut dialog = ExportDialog::new(&table, &stem, marked, count, &export_dir);
        if format == "json" {
            dialog.cycle(true);
        }
        self.overlay = Overlay::Export(Box::new(dialog));
    }

    /// Writes what the export dialog says, with progress in the status line.
    pub(super) fn export_as(&mut self, dialog: &ExportDialog) {
        self.results.export = Some(ExportState {
            table: dialog.table.clone(),
            rows: 0,
            total: 0,
        });
        self.send(Purpose::Export, dialog.request());
        self.set_status(
            format!("exporting {} as {}…", dialog.table, dialog.file_name()),
            StatusKind::Info,
        );
    }

    /// `v` in Results: marks the row under the cursor as one end of a range of rows (the
    /// cursor is the other end); again, clears the mark.
    pub(super) fn mark_rows(&mut self) {
        let Some(g) = &mut self.results.grid else {
            return;
        };
        g.mark = match g.mark {
            Some(_) => None,
            None => Some(g.row),
        };
        let text = match g.marked() {
            Some(_) => {
                "rows marked from here: move to the other end, then x exports them (v clears)"
            }
            None => "mark cleared",
        };
        self.set_status(text, StatusKind::Info);
    }
}

/// What an export of `table` is named before the person types: a dataset's own name; for a
/// query's result (`_loom_result_N`, a name that says nothing), the first table the statement
/// reads, as `<table>-result`, else `result`.
pub(super) fn export_stem(table: &str, sql: &str) -> String {
    if !table.starts_with("_loom_result_") {
        return table.to_owned();
    }
    let lower = sql.to_ascii_lowercase();
    let from = lower.match_indices("from").map(|(i, _)| i).find(|&i| {
        let before = lower[..i].chars().next_back();
        let after = lower[i + 4..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && after.is_some_and(char::is_whitespace)
    });
    let name: String = from
        .and_then(|i| sql.get(i + 4..))
        .map(|rest| {
            rest.trim_start()
                .trim_start_matches('"')
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .take(60)
                .collect()
        })
        .unwrap_or_default();
    if name.is_empty() {
        "result".to_owned()
    } else {
        format!("{name}-result")
    }
}

#[cfg(test)]
mod stem_tests {
    use super::export_stem;

    #[test]
    fn a_result_is_named_after_what_it_read() {
        assert_eq!(export_stem("orders_1", ""), "orders_1");
        assert_eq!(
            export_stem(
                "_loom_result_9",
                "SELECT c.name FROM sample_list_orders_1 o JOIN x"
            ),
            "sample_list_orders_1-result"
        );
        assert_eq!(
            export_stem("_loom_result_9", "select * from\n\"Ünïcode\" t"),
            "Ünïcode-result"
        );
        assert_eq!(
            export_stem("_loom_result_9", "SELECT 1 AS fromage"),
            "result"
        );
        assert_eq!(
            export_stem("_loom_result_9", "SELECT * FROM range(10)"),
            "range-result"
        );
    }
}
