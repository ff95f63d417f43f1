//! The mouse: a click is tested against where each pane was last drawn, focuses that pane and
//! selects what is under it (the pane's own `click` or `select_row`); the wheel scrolls it.

use super::*;

impl App {
    pub(super) fn on_mouse(&mut self, m: MouseEvent) {
        if !matches!(self.overlay, Overlay::None) {
            match m.kind {
                MouseEventKind::ScrollDown => self.apply(Action::Down),
                MouseEventKind::ScrollUp => self.apply(Action::Up),
                _ => {}
            }
            return;
        }
        // The panes as last drawn; before the first frame, as they would be drawn now.
        let mut panes = self.drawn.borrow().clone();
        if panes.is_empty() {
            panes = crate::tui::ui::layout(Rect::new(0, 0, self.size.0, self.size.1), self.plan())
                .panes();
        }
        let pos = Position::new(m.column, m.row);
        let Some((pane, rect)) = panes.into_iter().find(|(_, r)| r.contains(pos)) else {
            return;
        };
        match m.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                self.focus_pane(pane);
                // The first inner row is 1 below the border; the grid has a header row too.
                let inner_row = m.row.saturating_sub(rect.y + 1) as usize;
                match pane {
                    Pane::Servers => self.servers.click(inner_row),
                    Pane::Traffic => {
                        // Traffic lists calls below a header line and the sparkline.
                        let first = crate::tui::ui::traffic::LIST_TOP;
                        if inner_row >= first
                            && self
                                .traffic
                                .select_row(self.traffic_scroll() + inner_row - first)
                        {
                            self.select_call();
                        }
                    }
                    Pane::Catalog => {
                        let row = self.catalog.top.get() + inner_row;
                        if self.catalog.select_row(row) {
                            self.open_catalog_item();
                        }
                    }
                    Pane::Results => {
                        if let Some(g) = &mut self.results.grid {
                            g.click(inner_row);
                        }
                    }
                    _ => {}
                }
            }
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                let prev = self.focus;
                self.focus = pane;
                let a = if m.kind == MouseEventKind::ScrollDown {
                    Action::Down
                } else {
                    Action::Up
                };
                for _ in 0..3 {
                    self.apply(a);
                }
                self.focus = prev;
            }
            _ => {}
        }
    }
}
