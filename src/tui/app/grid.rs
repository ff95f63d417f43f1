//! The results grid: a result table read a page at a time (only the pages near the view stay),
//! the selected cell, column widths, and copying a cell, a row or the whole result. The grid
//! owns its rows and selection; asking for pages and the clipboard are the app's. It never
//! draws.

use super::*;

/// A query result shown in the grid: rows arrive a page at a time, only around the view.
pub struct Grid {
    pub result: ResultTable,
    pub pages: HashMap<u64, Page>,
    pub(super) requested: HashSet<u64>,
    pub row: u64,
    pub col: usize,
    pub top: u64,
    pub left: usize,
    pub widths: Vec<u16>,
    /// Columns the person sized (`<`/`>`): fitting leaves them alone.
    pub fixed_width: HashSet<usize>,
    /// The sort and filter this grid shows over the result the person ran, if any.
    pub view: Option<super::view::GridView>,
    /// One end of a range of marked rows (`v`); the cursor is the other.
    pub mark: Option<u64>,
    /// Long cells wrap over a few lines instead of being cut (`w`).
    pub wrap: bool,
    /// The statement the person ran for it (empty when not from the editor): an export is
    /// named after what it read.
    pub sql: String,
}

/// Rows per page fetched for the grid.
pub const PAGE_ROWS: u64 = 200;

/// Most rows a whole result may have to be copied to the clipboard; beyond, export it.
pub const COPY_ALL_MAX: u64 = 10_000;

impl Grid {
    pub(super) fn new(result: ResultTable) -> Grid {
        let widths = result
            .columns
            .iter()
            .map(|(n, t)| (n.chars().count().max(t.chars().count().min(16)) as u16).clamp(4, 40))
            .collect();
        Grid {
            result,
            pages: HashMap::new(),
            requested: HashSet::new(),
            row: 0,
            col: 0,
            top: 0,
            left: 0,
            widths,
            fixed_width: HashSet::new(),
            view: None,
            mark: None,
            wrap: false,
            sql: String::new(),
        }
    }

    /// The marked rows as `(offset, count)`, when a mark is set.
    pub fn marked(&self) -> Option<(u64, u64)> {
        let mark = self.mark?;
        let (lo, hi) = (mark.min(self.row), mark.max(self.row));
        Some((lo, hi - lo + 1))
    }

    pub fn cell(&self, row: u64, col: usize) -> Option<Option<&str>> {
        let page = self.pages.get(&(row / PAGE_ROWS))?;
        let r = page.get((row % PAGE_ROWS) as usize)?;
        Some(r.get(col).and_then(|c| c.as_deref()))
    }

    pub fn row_cells(&self, row: u64) -> Option<&Vec<Option<String>>> {
        self.pages
            .get(&(row / PAGE_ROWS))?
            .get((row % PAGE_ROWS) as usize)
    }

    /// Fits the column widths to the rows on screen (and the header): a column is as wide as
    /// its widest visible value, up to `max` columns, so short columns leave room to long ones.
    pub(super) fn fit(&mut self, top: u64, rows: u64, max: u16) {
        for (i, w) in self.widths.iter_mut().enumerate() {
            if self.fixed_width.contains(&i) {
                continue;
            }
            let (name, ty) = &self.result.columns[i];
            let header = name.chars().count().max(ty.chars().count().min(16));
            let widest = (top..top + rows)
                .filter_map(|r| {
                    let page = self.pages.get(&(r / PAGE_ROWS))?;
                    page.get((r % PAGE_ROWS) as usize)?.get(i).cloned()
                })
                .map(|c| {
                    c.map_or(4, |s| {
                        crate::tui::ui::display_width(&crate::tui::ui::shown_cell(ty, &s))
                    })
                })
                .max()
                .unwrap_or(0);
            *w = (header.max(widest) as u16).clamp(4, max.max(4));
        }
    }

    /// A new view of the same result as `old`: the person stays on their column, and widths
    /// they set stay.
    pub(super) fn keep_place_of(&mut self, old: &Grid) {
        if old.result.columns != self.result.columns {
            return;
        }
        self.col = old.col;
        self.left = old.left;
        for &i in &old.fixed_width {
            self.widths[i] = old.widths[i];
        }
        self.fixed_width = old.fixed_width.clone();
        self.wrap = old.wrap;
    }

    /// Moves the selected row by `delta`; a page key (`paging`) turns the view by exactly
    /// what it shows (`page` rows), so the next page starts right after the last row seen.
    pub(super) fn move_by(&mut self, delta: i64, page: i64, paging: bool) {
        let n = self.result.rows as i64;
        if n == 0 {
            return;
        }
        if paging {
            let max_top = (n - page).max(0);
            self.top = (self.top as i64).saturating_add(delta).clamp(0, max_top) as u64;
        }
        self.row = (self.row as i64).saturating_add(delta).clamp(0, n - 1) as u64;
    }

    pub(super) fn move_sideways(&mut self, right: bool) {
        let n = self.result.columns.len();
        if right && self.col + 1 < n {
            self.col += 1;
        } else if !right && self.col > 0 {
            self.col -= 1;
        }
    }

    /// A click on inner row `row` of the pane (row 0 is the header).
    pub(super) fn click(&mut self, row: usize) {
        if row >= 1 {
            let r = self.top + (row - 1) as u64;
            if r < self.result.rows {
                self.row = r;
            }
        }
    }

    /// `<` / `>`: narrows or widens the selected column; fitting leaves it alone from then on.
    pub(super) fn resize_column(&mut self, wider: bool) {
        if let Some(w) = self.widths.get_mut(self.col) {
            *w = if wider {
                w.saturating_add(4).min(400)
            } else {
                w.saturating_sub(4).max(4)
            };
            self.fixed_width.insert(self.col);
        }
    }

    /// The selected value whole (JSON pretty-printed) and its title; `None` while its row
    /// loads.
    pub(super) fn cell_text(&self) -> Option<(String, String)> {
        let value = self.cell(self.row, self.col)?;
        let (name, ty) = &self.result.columns[self.col];
        let text = match value {
            None => "NULL".to_owned(),
            Some(v) => match serde_json::from_str::<Value>(v) {
                Ok(j @ (Value::Object(_) | Value::Array(_))) => {
                    serde_json::to_string_pretty(&j).unwrap_or_else(|_| v.to_owned())
                }
                _ => v.to_owned(),
            },
        };
        let title = format!("{name} ({}) · row {}", ty.to_lowercase(), self.row + 1);
        Some((title, text))
    }

    /// Keeps the selected row among the `rows` on screen; returns the pages the view needs.
    /// Only pages near the view stay cached.
    fn keep_in_view(&mut self, rows: u64) -> std::ops::RangeInclusive<u64> {
        if self.row < self.top {
            self.top = self.row;
        } else if self.row >= self.top + rows {
            self.top = self.row + 1 - rows;
        }
        let first = self.top / PAGE_ROWS;
        let last = (self.top + rows) / PAGE_ROWS;
        self.pages.retain(|p, _| *p + 2 >= first && *p <= last + 2);
        first..=last
    }

    /// The pages in `pages` it neither has nor awaits; they count as awaited now.
    fn missing_pages(&mut self, pages: impl IntoIterator<Item = u64>) -> Vec<u64> {
        pages
            .into_iter()
            .filter(|p| {
                p * PAGE_ROWS < self.result.rows
                    && !self.pages.contains_key(p)
                    && self.requested.insert(*p)
            })
            .collect()
    }

    pub(super) fn page_arrived(&mut self, page: u64, rows: Page) {
        self.requested.remove(&page);
        self.pages.insert(page, rows);
    }

    /// Rows loaded so far.
    fn loaded(&self) -> u64 {
        self.pages.values().map(|p| p.len() as u64).sum()
    }

    /// The whole result as tab-separated text under a header of column names.
    fn tsv(&self) -> String {
        let mut text = self
            .result
            .columns
            .iter()
            .map(|(n, _)| n.clone())
            .collect::<Vec<_>>()
            .join("\t");
        for r in 0..self.result.rows {
            if let Some(cells) = self.row_cells(r) {
                text.push('\n');
                text.push_str(&tsv_row(cells));
            }
        }
        text
    }
}

impl App {
    /// Rows the grid can show at the current size.
    pub fn grid_rows(&self) -> u64 {
        crate::tui::ui::grid_rows(self.size, self.plan()) as u64
    }

    /// Fits the grid's columns to the rows now on screen; the widest may take most of the pane.
    pub(super) fn fit_columns(&mut self) {
        let rows = self.grid_rows().max(1);
        let area = ratatui::layout::Rect::new(0, 0, self.size.0, self.size.1);
        let width = crate::tui::ui::layout(area, self.plan()).results.width;
        // Room for the row numbers and borders; one column may use most of the rest.
        let max = width.saturating_sub(10).max(8);
        if let Some(g) = &mut self.results.grid {
            g.fit(g.top, rows, max);
        }
    }

    /// Keeps the selected row on screen and asks for the pages the view needs.
    pub(super) fn ensure_pages(&mut self) {
        let rows = self.grid_rows().max(1);
        let Some(g) = &mut self.results.grid else {
            return;
        };
        let pages = g.keep_in_view(rows);
        self.request_pages(pages);
        self.fit_columns();
    }

    /// Asks for the grid's pages in `pages` that it neither has nor awaits.
    pub(super) fn request_pages(&mut self, pages: impl IntoIterator<Item = u64>) {
        let Some(g) = &mut self.results.grid else {
            return;
        };
        let want = g.missing_pages(pages);
        let table = g.result.table.clone();
        for p in want {
            self.send(
                Purpose::Rows(table.clone(), p),
                Request::Rows {
                    table: table.clone(),
                    offset: p * PAGE_ROWS,
                    limit: PAGE_ROWS,
                },
            );
        }
    }

    pub(super) fn copy_grid(&mut self, a: Action) {
        let Some(g) = &self.results.grid else {
            let why = if self.results.query_error.is_some() {
                "no result to copy: the last query did not finish"
            } else {
                "no result to copy: run a query first"
            };
            self.set_status(why, StatusKind::Error);
            return;
        };
        match a {
            Action::CopyCell => match g.cell(g.row, g.col) {
                Some(v) => {
                    let text = v.unwrap_or("").to_owned();
                    self.copy(&text, "cell");
                }
                None => self.set_status("that row is still loading", StatusKind::Error),
            },
            Action::CopyRow => match g.row_cells(g.row) {
                Some(cells) => {
                    let text = tsv_row(cells);
                    self.copy(&text, "row");
                }
                None => self.set_status("that row is still loading", StatusKind::Error),
            },
            _ => {
                // The whole result: every row must be loaded; large results go to a file.
                let total = g.result.rows;
                let loaded = g.loaded();
                if total > COPY_ALL_MAX {
                    self.results.copy_all_pending = false;
                    self.set_status(
                        format!(
                            "{} are too many for the clipboard: export with x (CSV) or X (JSON)",
                            crate::tui::ui::plural(total, "row")
                        ),
                        StatusKind::Error,
                    );
                    return;
                }
                if loaded < total {
                    // Load every page, then copy: one press is enough.
                    self.results.copy_all_pending = true;
                    self.set_status(
                        format!("loading {total} rows to copy… ({loaded} so far)"),
                        StatusKind::Info,
                    );
                    let pages = total.div_ceil(PAGE_ROWS);
                    self.request_pages(0..pages);
                    return;
                }
                self.results.copy_all_pending = false;
                let text = g.tsv();
                self.copy(
                    &text,
                    &format!("result ({})", crate::tui::ui::plural(total, "row")),
                );
            }
        }
    }

    pub(super) fn copy(&mut self, text: &str, what: &str) {
        let backend = self.clipboard.copy(text);
        let msg = crate::tui::clipboard::status_message(what, text.len(), backend);
        self.set_status(msg, StatusKind::Success);
    }
}

pub(super) fn tsv_row(cells: &[Option<String>]) -> String {
    cells
        .iter()
        .map(|c| c.as_deref().unwrap_or("").replace(['\t', '\n', '\r'], " "))
        .collect::<Vec<_>>()
        .join("\t")
}

/// The text between two (row, col) positions of the editor.
pub(super) fn slice_range(lines: &[String], a: (usize, usize), b: (usize, usize)) -> String {
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate().take(b.0 + 1).skip(a.0) {
        let chars: Vec<char> = l.chars().collect();
        let from = if i == a.0 { a.1.min(chars.len()) } else { 0 };
        let to = if i == b.0 {
            b.1.min(chars.len())
        } else {
            chars.len()
        };
        if i > a.0 {
            out.push('\n');
        }
        out.extend(&chars[from..to.max(from)]);
    }
    out
}
