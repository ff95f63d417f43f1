//! Actions: the one small reducer every key, click and palette command goes through. Each arm
//! routes to the pane (or overlay) the action concerns, by the action and the pane that has
//! focus; the work itself lives in the pane's own file. It never draws.

use super::*;

impl App {
    pub fn apply(&mut self, a: Action) {
        match a {
            Action::Quit => self.ask_to_quit(),
            Action::Help => self.toggle_menu(),
            Action::Palette => self.open_palette(),
            Action::Arrange => self.cycle_arrangement(),
            Action::Zoom => {
                self.zoom = !self.zoom;
                self.editor.rescroll();
                self.ensure_pages();
            }
            Action::ToggleTheme => self.toggle_theme(),
            Action::FocusNext | Action::FocusPrev if matches!(self.overlay, Overlay::None) => {
                self.cycle_focus(a == Action::FocusNext)
            }
            Action::FocusNext | Action::FocusPrev => {}
            Action::FocusServers => self.focus_pane(Pane::Servers),
            Action::FocusTraffic => self.focus_pane(Pane::Traffic),
            Action::FocusDetail => self.focus_pane(Pane::Detail),
            Action::FocusCatalog => self.focus_pane(Pane::Catalog),
            Action::FocusEditor => self.focus_pane(Pane::Editor),
            Action::FocusResults => self.focus_pane(Pane::Results),
            Action::Close if self.approvals.deny_reason.is_some() => {
                self.approvals.deny_reason = None
            }
            Action::Confirm if self.approvals.deny_reason.is_some() => {
                let reason = self
                    .approvals
                    .deny_reason
                    .take()
                    .map(LineInput::into_string)
                    .filter(|r| !r.trim().is_empty());
                self.settle(crate::types::events::Decision::Deny { reason });
            }
            Action::Close if self.approval_view() == (ApprovalView::Prompt { armed: true }) => {
                self.approvals.set_aside()
            }
            Action::Close if matches!(&self.overlay, Overlay::Pager(p) if p.typing.is_some()) => {
                if let Some(p) = self.pager_mut() {
                    p.typing = None;
                }
            }
            Action::Confirm if matches!(&self.overlay, Overlay::Pager(p) if p.typing.is_some()) => {
                self.pager_run_search()
            }
            Action::Close if self.results.prompt.is_some() => self.results.prompt = None,
            Action::Confirm if self.results.prompt.is_some() => self.apply_grid_prompt(),
            Action::Close | Action::Confirm if matches!(&self.overlay, Overlay::Help(m) if m.typing) => {
                if let Some(m) = self.menu_mut() {
                    m.typing = false;
                    if a == Action::Close {
                        m.filter.clear();
                        m.selected = 0;
                    }
                }
            }
            Action::Confirm if matches!(self.overlay, Overlay::Help(_)) => self.run_menu_item(),
            Action::Close => self.close_overlay(),
            Action::ReviewApproval => self.review_approval(),
            Action::CancelCall => self.cancel_call(),
            Action::Retry => self.retry_chart(),
            Action::Sort => self.sort_by_column(),
            Action::CompleteOrIndent => self.complete_or_indent(),
            Action::FilterRows => self.start_row_filter(),
            Action::MarkRows => self.mark_rows(),
            Action::ServerLog => self.open_server_log(),
            Action::Restart => self.ask_restart(),
            Action::ToggleFollow if matches!(self.overlay, Overlay::Pager(_)) => {
                if let Some(p) = self.pager_mut() {
                    p.follow = !p.follow;
                    p.keep_at_end();
                }
            }
            Action::ToggleWrap => {
                if let Some(g) = &mut self.results.grid {
                    g.wrap = !g.wrap;
                }
            }
            Action::Narrower | Action::Wider => {
                if let Some(g) = &mut self.results.grid {
                    g.resize_column(a == Action::Wider);
                }
            }
            Action::Search
                if matches!(self.overlay, Overlay::None) && self.focus == Pane::Results =>
            {
                self.start_grid_search()
            }
            Action::NextMatch | Action::PrevMatch
                if matches!(self.overlay, Overlay::None) && self.focus == Pane::Results =>
            {
                self.grid_search_jump(a == Action::NextMatch)
            }
            Action::Search => {
                if let Some(m) = self.menu_mut() {
                    m.typing = true;
                } else if let Some(p) = self.pager_mut() {
                    p.start_search();
                }
            }
            Action::NextMatch | Action::PrevMatch => {
                if let Some(p) = self.pager_mut() {
                    p.jump(a == Action::NextMatch);
                }
            }
            Action::Confirm => self.confirm(),
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => self.move_selection(a),
            Action::Left | Action::Right => self.move_sideways(a == Action::Right),
            Action::Open | Action::Describe | Action::QueryDataset
                if self.focus == Pane::Catalog
                    && self.catalog.selected_blob().is_some()
                    && matches!(self.overlay, Overlay::None) =>
            {
                // Parked text opens in the pager, whichever of the offered keys is pressed.
                if let Some(key) = self.catalog.selected_blob().map(|b| b.key.clone()) {
                    self.open_pager(key);
                }
            }
            Action::Open => match self.focus {
                Pane::Traffic => self.focus_pane(Pane::Detail),
                Pane::Detail => {
                    if let Some(name) = self.detail.shown_tool() {
                        self.open_palette_on(&name);
                    }
                }
                Pane::Catalog => self.activate_catalog_node(),
                Pane::Results => self.open_cell(),
                _ => {}
            },
            Action::ToggleStderr => self.servers.show_stderr = !self.servers.show_stderr,
            Action::ToggleFollow => {
                if self.traffic.toggle_follow() {
                    self.select_call();
                }
            }
            Action::Filter => self.overlay = Overlay::Filter,
            Action::ClearFilter => self.traffic.clear_filter(),
            Action::JumpToDataset => self.jump_to_reference(),
            Action::CopyDetail if matches!(self.overlay, Overlay::Pager(_)) => {
                if let Some(text) = self.pager_text() {
                    self.copy(&text, "parked text");
                }
            }
            Action::CopyDetail => {
                let text = self.detail.copy_text();
                if !text.is_empty() {
                    self.copy(&text, "detail");
                }
            }
            Action::NextSection | Action::PrevSection => {
                self.catalog.next_group(a == Action::NextSection);
                self.open_catalog_item();
            }
            Action::InsertName => self.insert_catalog_name(),
            Action::EditMemory => self.edit_memory(),
            Action::TogglePin => {
                let tool = match self.focus {
                    Pane::Detail => self.detail.shown_tool(),
                    _ => self.catalog.selected_tool().map(|t| t.name.clone()),
                };
                match tool {
                    Some(name) => {
                        self.send(Purpose::PinTool(name.clone()), Request::PinTool { name });
                    }
                    None if self.focus == Pane::Catalog => self.toggle_memory_pin(),
                    None => {}
                }
            }
            Action::DeleteMemory => self.ask_to_delete_memory(),
            Action::MemoryHistory => self.show_memory_history(),
            Action::NewMemory => self.new_memory(),
            Action::Save => self.save_memory(),
            Action::Describe => {
                if let Some(d) = self.catalog.selected_dataset() {
                    self.open_describe(d);
                }
            }
            Action::QueryDataset => {
                let target = match &self.overlay {
                    Overlay::Describe(d) => Some(d.dataset.clone()),
                    _ => self.catalog.selected_dataset(),
                };
                if let Some(d) = target {
                    self.overlay = Overlay::None;
                    let sql = format!("SELECT * FROM {};", crate::tui::sql::quote_ident(&d));
                    self.open_query(&sql);
                    self.run_sql(sql, (0, 0));
                    self.focus_pane(Pane::Results);
                }
            }
            Action::RunQuery if matches!(self.overlay, Overlay::History(_)) => {
                self.use_history(true)
            }
            Action::RunQuery => self.run_statement_under_cursor(),
            Action::HistoryBrowser => self.open_history(),
            Action::UseQuery => self.use_history(false),
            Action::Undo
            | Action::Redo
            | Action::SelectAll
            | Action::DeleteToLineEnd
            | Action::DeleteWord
            | Action::Newline => {
                if let Some(e) = super::text_keys::TextEdit::of(a) {
                    self.edit_text(e);
                }
            }
            Action::NewTab => self.new_tab(),
            Action::CloseTab => self.close_tab(),
            Action::NextTab | Action::PrevTab => self.cycle_tab(a == Action::NextTab),
            Action::Tab1
            | Action::Tab2
            | Action::Tab3
            | Action::Tab4
            | Action::Tab5
            | Action::Tab6
            | Action::Tab7
            | Action::Tab8
            | Action::Tab9 => {
                if let Some(i) = a.tab_index() {
                    self.switch_tab(i)
                }
            }
            Action::CancelQuery => self.cancel_query(),
            Action::HistoryPrev | Action::HistoryNext => {
                self.walk_history(a == Action::HistoryPrev)
            }
            Action::Complete => self.open_completion(true),
            Action::CopyCell | Action::CopyRow | Action::CopyAll => self.copy_grid(a),
            Action::ExportCsv | Action::ExportJson => self.export(if a == Action::ExportCsv {
                "csv"
            } else {
                "json"
            }),
            Action::ApproveOnce => self.settle(crate::types::events::Decision::Once),
            Action::ApproveSession => self.settle(crate::types::events::Decision::Session),
            Action::Deny if !self.approvals.waiting.is_empty() => {
                self.approvals.deny_reason = Some(LineInput::default())
            }
            Action::Deny => {}
        }
    }

    fn toggle_theme(&mut self) {
        let next = if self.theme_name == "dark" {
            "light"
        } else {
            "dark"
        };
        if let Some(t) = Theme::builtin(next) {
            self.theme = t;
            self.theme_name = next.into();
            self.editor.style(&self.theme);
            self.editor.dirty = true;
            if let Overlay::Palette(p) = &mut self.overlay {
                p.dirty = true;
            }
            self.rebuild_detail_lines();
            self.set_status(format!("theme: {next}"), StatusKind::Info);
        }
    }

    /// The next or previous pane in `Pane::ORDER`.
    fn cycle_focus(&mut self, forward: bool) {
        let i = Pane::ORDER
            .iter()
            .position(|p| *p == self.focus)
            .unwrap_or(0);
        let n = Pane::ORDER.len();
        let j = if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        };
        self.focus_pane(Pane::ORDER[j]);
    }

    pub(super) fn focus_pane(&mut self, p: Pane) {
        self.focus = p;
        self.editor.completion = None;
        if p == Pane::Traffic && matches!(self.detail.shown, Detail::Empty) {
            self.select_call();
        }
    }

    pub(super) fn close_overlay(&mut self) {
        if matches!(self.overlay, Overlay::None) {
            self.editor.completion = None;
        }
        // Why the palette did not send a call is old news once it leaves the arguments.
        if matches!(self.overlay, Overlay::Palette(_)) && self.palette_status {
            self.status = None;
            self.palette_status = false;
        }
        // Esc in the argument editor goes back to the list first.
        if let Overlay::Palette(p) = &mut self.overlay
            && p.back()
        {
            return;
        }
        self.overlay = Overlay::None;
    }

    pub(super) fn confirm(&mut self) {
        if self.editor.completion.is_some() && matches!(self.overlay, Overlay::None) {
            self.editor.accept_completion();
            return;
        }
        match std::mem::replace(&mut self.overlay, Overlay::None) {
            Overlay::Confirm(c) => self.confirmed(c.yes),
            Overlay::Filter => self.follow_newest(),
            Overlay::Palette(p) => self.confirm_palette(p),
            Overlay::Export(d) => self.export_as(&d),
            other => self.overlay = other,
        }
    }
}
