//! Moving the selection in the focused pane, up and down and sideways.

use super::*;

impl App {
    pub(super) fn move_selection(&mut self, a: Action) {
        let page = (self.size.1 / 3).max(3) as i64;
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
        if !self.approvals.is_empty() {
            self.scroll_approval(delta);
            return;
        }
        match &mut self.overlay {
            Overlay::Help { scroll } => {
                *scroll = (*scroll as i64 + delta).clamp(0, 500) as u16;
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
            Overlay::Filter => return,
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
                    let n = g.result.rows;
                    if n > 0 {
                        g.row = (g.row as i64).saturating_add(delta).clamp(0, n as i64 - 1) as u64;
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
