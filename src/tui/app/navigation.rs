//! Moving the selection in the focused pane, up and down and sideways.

use super::*;

impl App {
    /// Rows a page key moves: what the focused view shows, so paging never skips a row.
    pub(super) fn page_rows(&self) -> usize {
        let zoom = self.zoom.then_some(self.focus);
        if matches!(self.overlay, Overlay::Help { .. }) {
            return self.help_rows.get().0.max(1);
        }
        let rows = match self.focus {
            Pane::Traffic => crate::tui::ui::traffic_rows(self.size, zoom),
            Pane::Results => crate::tui::ui::grid_rows(self.size, zoom),
            pane => {
                let area = ratatui::layout::Rect::new(0, 0, self.size.0, self.size.1);
                (crate::tui::ui::layout(area, zoom).rect(pane).height as usize).saturating_sub(2)
            }
        };
        rows.max(1)
    }

    pub(super) fn move_selection(&mut self, a: Action) {
        let page = self.page_rows() as i64;
        let delta: i64 = match a {
            Action::Up => -1,
            Action::Down => 1,
            Action::PageUp => -page,
            Action::PageDown => page,
            Action::Top => i64::MIN / 2,
            _ => i64::MAX / 2,
        };
        let step = |cur: usize, len: usize| -> usize {
            if len == 0 {
                return 0;
            }
            (cur as i64 + delta).clamp(0, len as i64 - 1) as usize
        };
        if self.approval_view() == (ApprovalView::Prompt { armed: true }) {
            self.scroll_approval(delta);
            return;
        }
        let (help_visible, help_total) = self.help_rows.get();
        match &mut self.overlay {
            Overlay::Help { scroll } => {
                let max = help_total.saturating_sub(help_visible) as i64;
                *scroll = (*scroll as i64).saturating_add(delta).clamp(0, max) as u16;
                return;
            }
            Overlay::Palette(p) => {
                let filter = p.filter.clone();
                let n = self.palette_matches(&filter).len();
                if let Overlay::Palette(p) = &mut self.overlay {
                    p.selected = step(p.selected, n);
                }
                return;
            }
            Overlay::Describe(d) => {
                let n = d.describe.as_ref().map_or(0, |v| v.columns.len());
                d.selected = step(d.selected, n);
                self.chart_for_selection();
                return;
            }
            Overlay::Pager(_) => {
                self.scroll_pager(a);
                return;
            }
            Overlay::Filter | Overlay::Confirm(_) => return,
            Overlay::None => {}
        }
        if let Some(c) = &mut self.completion {
            c.selected = step(c.selected, c.items.len());
            return;
        }
        match self.focus {
            Pane::Servers => self.server_sel = step(self.server_sel, self.servers.len()),
            Pane::Traffic => {
                let n = self.visible_calls().len();
                self.traffic_sel = step(self.traffic_sel, n);
                self.follow = self.traffic_sel == 0;
                self.select_call();
            }
            Pane::Detail => {
                let n = self.detail_lines.len();
                self.detail_scroll = step(self.detail_scroll, n.max(1));
            }
            Pane::Catalog => {
                let n = self.section_len();
                let i = self.section.index();
                self.catalog_sel[i] = step(self.catalog_sel[i], n);
                self.open_catalog_item();
            }
            Pane::Results => {
                if let Some(g) = &mut self.grid {
                    let n = g.result.rows as i64;
                    if n > 0 {
                        if matches!(a, Action::PageUp | Action::PageDown) {
                            // A page turns the view by exactly what it shows: the next page
                            // starts right after the last row seen.
                            let max_top = (n - page).max(0);
                            g.top = (g.top as i64).saturating_add(delta).clamp(0, max_top) as u64;
                        }
                        g.row = (g.row as i64).saturating_add(delta).clamp(0, n - 1) as u64;
                    }
                }
                self.ensure_pages();
            }
            Pane::Editor => {}
        }
    }

    pub(super) fn move_sideways(&mut self, right: bool) {
        match self.focus {
            Pane::Results => {
                if let Some(g) = &mut self.grid {
                    let n = g.result.columns.len();
                    if right && g.col + 1 < n {
                        g.col += 1;
                    } else if !right && g.col > 0 {
                        g.col -= 1;
                    }
                }
            }
            Pane::Catalog => self.apply(if right {
                Action::NextSection
            } else {
                Action::PrevSection
            }),
            _ => {}
        }
    }
}
