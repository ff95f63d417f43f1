//! `/` in Results: find the rows that contain some text (any case, in any column) and jump
//! between them with `n` and `N`, the rows staying as they are — the row filter (`&`) is what
//! hides the others. The engine finds the rows (one query over the grid's own table, numbered
//! in the order the grid shows them), so a million rows are searched as fast as DuckDB scans;
//! this keeps the hits and the one the view is on. It never draws.

use super::*;

/// The most rows a search reports; beyond, the count says so.
pub const MAX_HITS: u64 = 100_000;

/// A search of the grid and what it found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GridSearch {
    /// The table searched: a newer grid makes the hits stale.
    pub table: String,
    pub text: String,
    /// 0-based row numbers of the grid's table, in order; `None` while the engine looks.
    pub hits: Option<Vec<u64>>,
    /// Which hit the view is on.
    pub current: Option<usize>,
}

impl GridSearch {
    /// The query that numbers the rows of `table` as the grid shows them and keeps those that
    /// contain `text` (any case, `%` and `_` taken literally).
    pub fn sql(table: &str, text: &str) -> String {
        let pattern = format!(
            "%{}%",
            text.replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        format!(
            "SELECT n FROM (SELECT row_number() OVER () - 1 AS n, concat_ws(' ', *COLUMNS(*)) AS line FROM \"{}\") WHERE line ILIKE '{}' ESCAPE '\\' ORDER BY n LIMIT {MAX_HITS}",
            table.replace('"', "\"\""),
            pattern.replace('\'', "''")
        )
    }

    /// Whether row `r` is a hit.
    pub fn is_hit(&self, r: u64) -> bool {
        self.hits
            .as_ref()
            .is_some_and(|h| h.binary_search(&r).is_ok())
    }

    /// The next (or previous) hit from `row`, wrapping; the hit's row.
    fn step_from(&mut self, row: u64, forward: bool) -> Option<u64> {
        let hits = self.hits.as_ref().filter(|h| !h.is_empty())?;
        let n = hits.len();
        let i = match (self.current, forward) {
            (Some(i), true) if hits.get(i) == Some(&row) => (i + 1) % n,
            (Some(i), false) if hits.get(i) == Some(&row) => (i + n - 1) % n,
            // A new search starts at the row the person is on, when it is a hit.
            (None, true) => hits.iter().position(|&h| h >= row).unwrap_or(0),
            // From elsewhere: the first hit after (or before) the row the person is on.
            (_, true) => hits.iter().position(|&h| h > row).unwrap_or(0),
            (_, false) => hits.iter().rposition(|&h| h < row).unwrap_or(n - 1),
        };
        self.current = Some(i);
        hits.get(i).copied()
    }
}

impl App {
    /// `/` in Results: starts typing the text to find.
    pub(super) fn start_grid_search(&mut self) {
        if self.results.grid.is_none() {
            self.set_status("no result to search: run a query first", StatusKind::Error);
            return;
        }
        // The last search of this grid comes back selected: typing replaces it.
        let last = self.results.search.as_ref().map(|s| s.text.clone());
        self.results.prompt = Some(GridPrompt::Search(LineInput::selected(
            last.unwrap_or_default(),
        )));
    }

    /// `enter` on the search: asks the engine for the rows that match.
    pub(super) fn run_grid_search(&mut self, text: String) {
        let Some(g) = &self.results.grid else { return };
        if text.is_empty() {
            self.results.search = None;
            return;
        }
        let table = g.result.table.clone();
        let sql = GridSearch::sql(&table, &text);
        self.results.search = Some(GridSearch {
            table: table.clone(),
            text,
            hits: None,
            current: None,
        });
        self.send(Purpose::SearchQuery(table), Request::Query { sql });
        self.set_status("searching…", StatusKind::Info);
    }

    /// The engine kept the matching row numbers as a result table: read them.
    pub(super) fn search_counted(&mut self, searched: String, result: ResultTable) {
        if self.results.search.as_ref().map(|s| &s.table) != Some(&searched) {
            return;
        }
        self.send(
            Purpose::SearchHits(searched),
            Request::Rows {
                table: result.table,
                offset: 0,
                limit: MAX_HITS,
            },
        );
    }

    /// The matching rows arrived: the view goes to the first after the cursor.
    pub(super) fn search_found(&mut self, searched: String, rows: Page) {
        let Some(s) = self.results.search.as_mut().filter(|s| s.table == searched) else {
            return;
        };
        let hits: Vec<u64> = rows
            .iter()
            .filter_map(|r| r.first()?.as_deref()?.parse().ok())
            .collect();
        let n = hits.len() as u64;
        let text = s.text.clone();
        s.hits = Some(hits);
        if n == 0 {
            self.set_status(format!("no row contains “{text}”"), StatusKind::Info);
            return;
        }
        self.grid_search_jump(true);
        let more = if n >= MAX_HITS { " (the first)" } else { "" };
        let (verb, them) = if n == 1 {
            ("contains", "n and N come back to it")
        } else {
            ("contain", "n and N move between them")
        };
        self.set_status(
            format!("{}{more} {verb} “{text}”: {them}", plural(n, "row")),
            StatusKind::Info,
        );
    }

    /// `n` / `N` in Results: the next or previous row that matched.
    pub(super) fn grid_search_jump(&mut self, forward: bool) {
        let (Some(g), Some(s)) = (self.results.grid.as_mut(), self.results.search.as_mut()) else {
            return;
        };
        if s.table != g.result.table {
            return;
        }
        if let Some(row) = s.step_from(g.row, forward) {
            g.move_by(row as i64 - g.row as i64, 1, false);
        }
        self.ensure_pages();
    }
}

fn plural(n: u64, one: &str) -> String {
    crate::tui::ui::plural(n, one)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_query_numbers_rows_and_takes_wildcards_literally() {
        assert_eq!(
            GridSearch::sql("_loom_result_\"3", "50%_off' --"),
            "SELECT n FROM (SELECT row_number() OVER () - 1 AS n, concat_ws(' ', *COLUMNS(*)) AS line FROM \"_loom_result_\"\"3\") WHERE line ILIKE '%50\\%\\_off'' --%' ESCAPE '\\' ORDER BY n LIMIT 100000"
        );
    }

    #[test]
    fn hits_are_walked_from_where_the_person_is_and_wrap() {
        let mut s = GridSearch {
            hits: Some(vec![3, 10, 40]),
            ..Default::default()
        };
        assert_eq!(
            s.clone().step_from(3, true),
            Some(3),
            "a new search starts here"
        );
        assert_eq!(s.step_from(5, true), Some(10));
        assert_eq!(s.step_from(10, true), Some(40));
        assert_eq!(s.step_from(40, true), Some(3), "wraps");
        assert_eq!(s.step_from(3, false), Some(40), "wraps back");
        assert_eq!(
            s.step_from(20, false),
            Some(10),
            "from elsewhere: the one before"
        );
        assert!(s.is_hit(40) && !s.is_hit(41));
        let mut none = GridSearch {
            hits: Some(vec![]),
            ..Default::default()
        };
        assert_eq!(none.step_from(0, true), None);
    }
}
