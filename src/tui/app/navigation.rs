//! Moving the selection, up and down and sideways: routed to the prompt, the overlay, the
//! completion list or the focused pane, each of which moves its own selection.

use super::*;

impl App {
    /// Rows a page key moves: what the focused view shows, so paging never skips a row.
    pub(super) fn page_rows(&self) -> usize {
        let zoom = self.plan();
        match &self.overlay {
            Overlay::Help(m) => return m.rows.get().max(1),
            Overlay::History(b) => return b.rows.get().max(1),
            _ => {}
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
        if self.approval_view() == (ApprovalView::Prompt { armed: true }) {
            self.approvals.scroll_by(delta);
            return;
        }
        if self.move_in_history(delta) {
            return;
        }
        let menu_len = match &self.overlay {
            Overlay::Help(m) => m.items(&self.keymap).len(),
            _ => 0,
        };
        match &mut self.overlay {
            Overlay::Help(m) => {
                m.move_by(delta, menu_len);
                return;
            }
            Overlay::Palette(p) => {
                p.move_by(delta, &self.tools);
                return;
            }
            Overlay::Describe(d) => {
                d.move_by(delta);
                self.chart_for_selection();
                return;
            }
            Overlay::Pager(p) => {
                p.scroll(a);
                return;
            }
            Overlay::Export(d) => {
                d.step(delta > 0);
                return;
            }
            Overlay::Filter | Overlay::Confirm(_) | Overlay::History(_) | Overlay::Memory(_) => {
                return;
            }
            Overlay::None => {}
        }
        if self.editor.move_completion(delta) {
            return;
        }
        match self.focus {
            Pane::Servers => self.servers.move_by(delta),
            Pane::Traffic => {
                self.traffic.move_by(delta);
                self.select_call();
            }
            Pane::Detail => self.detail.move_by(delta),
            Pane::Catalog => {
                self.catalog.move_by(delta);
                self.open_catalog_item();
            }
            Pane::Results => {
                if let Some(g) = &mut self.results.grid {
                    let paging = matches!(a, Action::PageUp | Action::PageDown);
                    g.move_by(delta, page, paging);
                }
                self.ensure_pages();
            }
            Pane::Editor => {}
        }
    }

    pub(super) fn move_sideways(&mut self, right: bool) {
        if let Overlay::Export(d) = &mut self.overlay {
            d.sideways(right);
            return;
        }
        match self.focus {
            Pane::Results => {
                if let Some(g) = &mut self.results.grid {
                    g.move_sideways(right);
                }
            }
            Pane::Catalog => self.catalog_sideways(right),
            // l opens a loom_call_each batch into its calls, h closes it.
            Pane::Traffic if self.traffic.open_batch(right) => self.select_call(),
            _ => {}
        }
    }
}

/// `cur` moved by `delta` within a list of `len` (0 when it is empty).
pub(super) fn step(cur: usize, len: usize, delta: i64) -> usize {
    if len == 0 {
        return 0;
    }
    (cur as i64 + delta).clamp(0, len as i64 - 1) as usize
}
