//! The catalog pane: sections of datasets, blobs and memories, opening an item, charts and the
//! describe view.

use super::*;

impl App {
    pub fn section_len(&self) -> usize {
        match self.section {
            Section::Datasets => self.datasets.len(),
            Section::Blobs => self.blobs.len(),
            Section::Memories => self.memories.len(),
        }
    }

    pub fn selected_dataset(&self) -> Option<String> {
        if self.section != Section::Datasets {
            return None;
        }
        self.datasets
            .get(self.catalog_sel[0])
            .map(|d| d.dataset.clone())
    }

    pub(super) fn show_dataset(&mut self, dataset: String) {
        self.send(
            Purpose::DatasetDetail(dataset.clone()),
            Request::Describe { dataset },
        );
    }

    pub(super) fn open_catalog_item(&mut self) {
        let i = self.catalog_sel[self.section.index()];
        match self.section {
            Section::Datasets => {
                if let Some(d) = self.datasets.get(i) {
                    let name = d.dataset.clone();
                    self.show_dataset(name);
                }
            }
            Section::Blobs => {
                if let Some(b) = self.blobs.get(i) {
                    self.set_detail(Detail::Blob(b.clone()));
                }
            }
            Section::Memories => {
                if let Some(m) = self.memories.get(i) {
                    self.set_detail(Detail::Memory(m.clone()));
                }
            }
        }
    }

    pub(super) fn request_chart(&mut self, dataset: String, column: String) {
        self.send(
            Purpose::Chart(dataset.clone(), column.clone()),
            Request::Chart {
                table: dataset,
                column,
                bins: 12,
            },
        );
    }

    /// Asks for the selected column's chart in the describe view if it is not there yet.
    pub(super) fn chart_for_selection(&mut self) {
        let want = match &self.overlay {
            Overlay::Describe(d) => d
                .describe
                .as_ref()
                .and_then(|v| v.columns.get(d.selected))
                .map(|c| c.name.as_str())
                .filter(|c| !d.requested.contains(*c))
                .map(|c| (d.dataset.clone(), c.to_owned())),
            _ => None,
        };
        if let Some((dataset, column)) = want {
            if let Overlay::Describe(d) = &mut self.overlay {
                d.requested.insert(column.clone());
            }
            self.request_chart(dataset, column);
        }
    }

    /// `r` in the describe view: asks again for the selected column's chart.
    pub(super) fn retry_chart(&mut self) {
        if let Overlay::Describe(d) = &mut self.overlay
            && let Some(c) = d.describe.as_ref().and_then(|v| v.columns.get(d.selected))
        {
            let name = c.name.clone();
            d.chart_errors.remove(&name);
            d.requested.remove(&name);
        }
        self.chart_for_selection();
    }

    pub(super) fn open_describe(&mut self, dataset: String) {
        self.overlay = Overlay::Describe(Box::new(Describe {
            dataset: dataset.clone(),
            describe: None,
            charts: HashMap::new(),
            chart_errors: HashMap::new(),
            requested: HashSet::new(),
            selected: 0,
        }));
        self.send(
            Purpose::Describe(dataset.clone()),
            Request::Describe { dataset },
        );
    }

    /// A dataset left the session: it leaves the catalog at once, and whatever showed it
    /// (Detail, the describe view) says so instead of offering a table that is gone.
    pub(super) fn dataset_dropped(
        &mut self,
        dataset: String,
        reason: crate::types::data::DropReason,
    ) {
        let listed = self.datasets.iter().position(|d| d.dataset == dataset);
        if let Some(i) = listed {
            self.datasets.remove(i);
            if self.catalog_sel[0] > i {
                self.catalog_sel[0] -= 1;
            }
            self.catalog_sel[0] = self.catalog_sel[0].min(self.datasets.len().saturating_sub(1));
        }
        let shown = matches!(&self.detail, Detail::Dataset { dataset: d, .. } if *d == dataset);
        if shown {
            self.set_detail(Detail::Empty);
        }
        let described = matches!(&self.overlay, Overlay::Describe(d) if d.dataset == dataset);
        if described {
            self.overlay = Overlay::None;
        }
        if listed.is_some() || shown || described {
            let why = match reason {
                crate::types::data::DropReason::Dropped => "dropped",
                crate::types::data::DropReason::Evicted => "evicted to stay within memory_budget",
            };
            self.set_status(format!("{dataset} was {why}"), StatusKind::Info);
        }
        // A listing asked for before the drop may still hold it; this one cannot.
        self.send(Purpose::Datasets, Request::Datasets);
    }
}
