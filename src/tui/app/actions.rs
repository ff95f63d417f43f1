//! Actions: what each key, click or palette command does, routed by the action and the pane
//! that has focus to the pane's own file.

use super::*;

impl App {
    pub fn apply(&mut self, a: Action) {
        match a {
            Action::Quit => self.ask_to_quit(),
            Action::Help => {
                self.overlay = match self.overlay {
                    Overlay::Help { .. } => Overlay::None,
                    _ => Overlay::Help { scroll: 0 },
                }
            }
            Action::Palette => self.open_palette(),
            Action::Zoom => {
                self.zoom = !self.zoom;
                self.rescroll_editor();
                self.ensure_pages();
            }
            Action::ToggleTheme => {
                let next = if self.theme_name == "dark" {
                    "light"
                } else {
                    "dark"
                };
                if let Some(t) = Theme::builtin(next) {
                    self.theme = t;
                    self.theme_name = next.into();
                    self.style_editor();
                    self.dirty_highlight = true;
                    self.rebuild_detail_lines();
                    self.set_status(format!("theme: {next}"), StatusKind::Info);
                }
            }
            Action::FocusNext | Action::FocusPrev if matches!(self.overlay, Overlay::None) => {
                let i = Pane::ORDER
                    .iter()
                    .position(|p| *p == self.focus)
                    .unwrap_or(0);
                let n = Pane::ORDER.len();
                let j = if a == Action::FocusNext {
                    (i + 1) % n
                } else {
                    (i + n - 1) % n
                };
                self.focus_pane(Pane::ORDER[j]);
            }
            Action::FocusNext | Action::FocusPrev => {}
            Action::FocusServers => self.focus_pane(Pane::Servers),
            Action::FocusTraffic => self.focus_pane(Pane::Traffic),
            Action::FocusDetail => self.focus_pane(Pane::Detail),
            Action::FocusCatalog => self.focus_pane(Pane::Catalog),
            Action::FocusEditor => self.focus_pane(Pane::Editor),
            Action::FocusResults => self.focus_pane(Pane::Results),
            Action::Close if self.deny_reason.is_some() => self.deny_reason = None,
            Action::Confirm if self.deny_reason.is_some() => {
                let reason = self.deny_reason.take().filter(|r| !r.trim().is_empty());
                self.settle(crate::types::events::Decision::Deny { reason });
            }
            Action::Close if self.approval_view() == (ApprovalView::Prompt { armed: true }) => {
                self.approval_set_aside()
            }
            Action::Close if matches!(&self.overlay, Overlay::Pager(p) if p.typing.is_some()) => {
                if let Some(p) = self.pager_mut() {
                    p.typing = None;
                }
            }
            Action::Confirm if matches!(&self.overlay, Overlay::Pager(p) if p.typing.is_some()) => {
                self.pager_run_search()
            }
            Action::Close if self.row_filter.is_some() => self.row_filter = None,
            Action::Confirm if self.row_filter.is_some() => self.apply_row_filter(),
            Action::Close => self.close_overlay(),
            Action::ReviewApproval => self.review_approval(),
            Action::CancelCall => self.cancel_call(),
            Action::Retry => self.retry_chart(),
            Action::Sort => self.sort_by_column(),
            Action::CompleteOrIndent => self.complete_or_indent(),
            Action::FilterRows => self.start_row_filter(),
            Action::Narrower | Action::Wider => self.resize_column(a == Action::Wider),
            Action::Search => self.pager_search(),
            Action::NextMatch | Action::PrevMatch => self.pager_jump(a == Action::NextMatch),
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
                    && self.section == Section::Blobs
                    && matches!(self.overlay, Overlay::None) =>
            {
                // Parked text opens in the pager, whichever of the offered keys is pressed.
                let i = self.catalog_sel[self.section.index()];
                if let Some(b) = self.blobs.get(i) {
                    let key = b.key.clone();
                    self.open_pager(key);
                }
            }
            Action::Open => match self.focus {
                Pane::Traffic => self.focus_pane(Pane::Detail),
                Pane::Catalog => self.open_catalog_item(),
                Pane::Results => self.open_cell(),
                _ => {}
            },
            Action::ToggleStderr => self.show_stderr = !self.show_stderr,
            Action::ToggleFollow => {
                self.follow = !self.follow;
                if self.follow {
                    self.traffic_sel = 0;
                    self.select_call();
                }
            }
            Action::Filter => self.overlay = Overlay::Filter,
            Action::ClearFilter => {
                self.filter.clear();
                self.traffic_sel = 0;
            }
            Action::JumpToDataset => self.jump_to_reference(),
            Action::CopyDetail if matches!(self.overlay, Overlay::Pager(_)) => {
                if let Some(text) = self.pager_text() {
                    self.copy(&text, "parked text");
                }
            }
            Action::CopyDetail => {
                let text = match &self.detail {
                    Detail::Call(r) => format!("{}\n{}", pretty(&r.request), pretty(&r.response)),
                    Detail::Dataset { describe, .. } => {
                        serde_json::to_string_pretty(describe).unwrap_or_default()
                    }
                    Detail::Blob(b) => b.key.clone(),
                    Detail::Memory(m) => m.content.clone(),
                    Detail::Empty => String::new(),
                };
                if !text.is_empty() {
                    self.copy(&text, "detail");
                }
            }
            Action::NextSection | Action::PrevSection => {
                let i = self.section.index();
                let j = if a == Action::NextSection {
                    (i + 1) % 3
                } else {
                    (i + 2) % 3
                };
                self.section = Section::ORDER[j];
            }
            Action::Describe => {
                if let Some(d) = self.selected_dataset() {
                    self.open_describe(d);
                }
            }
            Action::QueryDataset => {
                let target = match &self.overlay {
                    Overlay::Describe(d) => Some(d.dataset.clone()),
                    _ => self.selected_dataset(),
                };
                if let Some(d) = target {
                    self.overlay = Overlay::None;
                    let sql = format!("SELECT * FROM {d};");
                    self.open_query(&sql);
                    self.run_sql(sql, (0, 0));
                    self.focus_pane(Pane::Results);
                }
            }
            Action::RunQuery => self.run_statement_under_cursor(),
            Action::CancelQuery => {
                if self.running.is_some() {
                    self.send(Purpose::Cancel, Request::CancelQuery);
                    self.set_status("cancelling the query…", StatusKind::Info);
                }
            }
            Action::HistoryPrev | Action::HistoryNext => {
                self.walk_history(a == Action::HistoryPrev)
            }
            Action::Complete => self.open_completion(true),
            Action::CopyCell | Action::CopyRow | Action::CopyAll => self.copy_grid(a),
            Action::ExportCsv | Action::ExportJson => {
                let format = if a == Action::ExportCsv {
                    "csv"
                } else {
                    "json"
                };
                let table = match (&self.overlay, self.focus) {
                    (Overlay::Describe(d), _) => Some(d.dataset.clone()),
                    (_, Pane::Results) => self.grid.as_ref().map(|g| g.result.table.clone()),
                    (_, Pane::Catalog) => self.selected_dataset(),
                    _ => None,
                };
                match table {
                    Some(table) => {
                        self.export = Some(ExportState {
                            table: table.clone(),
                            rows: 0,
                            total: 0,
                        });
                        self.send(
                            Purpose::Export,
                            Request::Export {
                                table,
                                format: format.into(),
                                options: Default::default(),
                            },
                        );
                        self.set_status(format!("exporting {format}…"), StatusKind::Info);
                    }
                    None => self.set_status(
                        "nothing to export here: select a dataset or run a query",
                        StatusKind::Error,
                    ),
                }
            }
            Action::ApproveOnce => self.settle(crate::types::events::Decision::Once),
            Action::ApproveSession => self.settle(crate::types::events::Decision::Session),
            Action::Deny if !self.approvals.is_empty() => self.deny_reason = Some(String::new()),
            Action::Deny => {}
        }
    }

    pub(super) fn focus_pane(&mut self, p: Pane) {
        self.focus = p;
        self.completion = None;
        if p == Pane::Traffic && matches!(self.detail, Detail::Empty) {
            self.select_call();
        }
    }

    pub(super) fn close_overlay(&mut self) {
        if matches!(self.overlay, Overlay::None) {
            self.completion = None;
        }
        if let Overlay::Palette(Palette {
            stage: PaletteStage::Edit { .. },
            ..
        }) = &self.overlay
        {
            // Esc in the argument editor goes back to the list first.
            if let Overlay::Palette(p) = &mut self.overlay {
                p.stage = PaletteStage::Pick;
                p.error = None;
            }
            return;
        }
        self.overlay = Overlay::None;
    }

    pub(super) fn confirm(&mut self) {
        if self.completion.is_some() && matches!(self.overlay, Overlay::None) {
            self.accept_completion();
            return;
        }
        match std::mem::replace(&mut self.overlay, Overlay::None) {
            Overlay::Confirm(c) => self.confirmed(c.yes),
            Overlay::Filter => {
                self.traffic_sel = 0;
                self.select_call();
            }
            Overlay::Palette(mut p) => {
                match &p.stage {
                    PaletteStage::Pick => {
                        if let Some(tool) = self.palette_matches(&p.filter).get(p.selected).cloned()
                        {
                            let prefill = prefill_arguments(&tool);
                            let lines: Vec<String> = prefill.lines().map(str::to_owned).collect();
                            // The cursor waits at the end of the first value, ready to edit it.
                            let cursor = match lines.get(1) {
                                Some(l) if lines.len() > 2 => {
                                    let n = l.chars().count();
                                    (1, if l.ends_with(',') { n - 1 } else { n })
                                }
                                _ => (0, lines.first().map_or(0, |l| l.chars().count())),
                            };
                            let mut args = TextArea::new(lines);
                            args.move_cursor(tui_textarea::CursorMove::Jump(
                                cursor.0 as u16,
                                cursor.1 as u16,
                            ));
                            args.set_cursor_line_style(ratatui::style::Style::default());
                            p.stage = PaletteStage::Edit {
                                tool,
                                args: Box::new(args),
                            };
                        }
                    }
                    PaletteStage::Edit { tool, args } => {
                        let text = args.lines().join("\n");
                        match validate_arguments(tool, &text) {
                            Ok(arguments) => {
                                let name = tool["name"].as_str().unwrap_or_default().to_owned();
                                self.send(
                                    Purpose::CallTool(name.clone()),
                                    Request::CallTool {
                                        name: name.clone(),
                                        arguments,
                                    },
                                );
                                self.set_status(format!("calling {name}…"), StatusKind::Info);
                                self.focus_pane(Pane::Traffic);
                                return;
                            }
                            Err(e) => p.error = Some(e),
                        }
                    }
                }
                self.overlay = Overlay::Palette(p);
            }
            other => self.overlay = other,
        }
    }
}
