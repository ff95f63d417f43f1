//! The traffic pane: the calls shown under the filter, scrolling, and jumping to what a call
//! produced.

use super::*;
use crate::types::events::Outcome;

impl App {
    /// Calls that pass the filter, newest first.
    pub fn visible_calls(&self) -> Vec<&CallSummary> {
        let f = self.filter.to_lowercase();
        self.calls
            .iter()
            .rev()
            .filter(|c| {
                f.is_empty()
                    || [
                        c.server.as_str(),
                        &c.tool,
                        c.outcome.as_str(),
                        c.caller.as_str(),
                        &c.arguments,
                    ]
                    .iter()
                    .any(|s| s.to_lowercase().contains(&f))
                    || c.reference
                        .as_deref()
                        .is_some_and(|r| r.to_lowercase().contains(&f))
            })
            .collect()
    }

    /// The first visible call row, so the selection stays on screen.
    pub fn traffic_scroll(&self) -> usize {
        let rows = crate::tui::ui::traffic_rows(self.size, self.zoom.then_some(self.focus));
        self.traffic_sel.saturating_sub(rows.saturating_sub(1))
    }

    pub(super) fn select_call(&mut self) {
        let call = self.visible_calls().get(self.traffic_sel).map(|c| c.call);
        if let Some(call) = call {
            if matches!(&self.detail, Detail::Call(r) if r.summary.call == call && r.summary.outcome != Outcome::Running)
            {
                return;
            }
            self.send(Purpose::CallDetail(call), Request::CallDetail { call });
        }
    }

    pub(super) fn jump_to_reference(&mut self) {
        let reference = match &self.detail {
            Detail::Call(r) => r.summary.reference.clone().map(|x| (r.summary.outcome, x)),
            _ => None,
        }
        .or_else(|| {
            self.visible_calls()
                .get(self.traffic_sel)
                .and_then(|c| c.reference.clone().map(|r| (c.outcome, r)))
        });
        let Some((outcome, reference)) = reference else {
            self.set_status(
                "this call made no dataset or parked text",
                StatusKind::Error,
            );
            return;
        };
        if outcome == Outcome::Parked {
            self.section = Section::Blobs;
            if let Some(i) = self.blobs.iter().position(|b| b.key == reference) {
                self.catalog_sel[1] = i;
            }
        } else {
            self.section = Section::Datasets;
            if let Some(i) = self.datasets.iter().position(|d| d.dataset == reference) {
                self.catalog_sel[0] = i;
            }
        }
        self.focus = Pane::Catalog;
        match outcome {
            Outcome::Parked => self.open_catalog_item(),
            _ => self.show_dataset(reference),
        }
    }
}
