//! The catalog pane: it owns the sections of datasets, parked blobs and memories, the
//! selection in each, and which listing of datasets is the newest applied. It keeps every
//! selection inside its list as listings arrive and items leave; opening an item (in Detail, or
//! as a request) is the app's. It never draws.

use super::navigation::step;
use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Section {
    #[default]
    Datasets,
    Blobs,
    Memories,
}

impl Section {
    pub const ORDER: [Section; 3] = [Section::Datasets, Section::Blobs, Section::Memories];
    pub fn index(self) -> usize {
        Section::ORDER.iter().position(|s| *s == self).unwrap_or(0)
    }
}

/// The Catalog pane's state.
#[derive(Default)]
pub struct Catalog {
    pub section: Section,
    pub datasets: Vec<DatasetView>,
    pub blobs: Vec<BlobView>,
    pub memories: Vec<MemoryView>,
    /// Lines of the memory file the engine could not read; shown beside the memory count.
    pub memory_skipped_lines: u64,
    /// The selected row in each section, in `Section::ORDER`.
    pub sel: [usize; 3],
    /// The dataset listing last applied: a reply to an older request that arrives later is
    /// stale (it may still show a dataset whose drop was already seen).
    datasets_ticket: u64,
}

impl Catalog {
    pub fn section_len(&self) -> usize {
        match self.section {
            Section::Datasets => self.datasets.len(),
            Section::Blobs => self.blobs.len(),
            Section::Memories => self.memories.len(),
        }
    }

    /// The selected row of the section shown.
    pub fn selected(&self) -> usize {
        self.sel[self.section.index()]
    }

    pub fn selected_dataset(&self) -> Option<String> {
        if self.section != Section::Datasets {
            return None;
        }
        self.datasets.get(self.sel[0]).map(|d| d.dataset.clone())
    }

    pub fn selected_blob(&self) -> Option<&BlobView> {
        (self.section == Section::Blobs)
            .then(|| self.blobs.get(self.sel[1]))
            .flatten()
    }

    pub fn selected_memory(&self) -> Option<&MemoryView> {
        (self.section == Section::Memories)
            .then(|| self.memories.get(self.sel[2]))
            .flatten()
    }

    pub(super) fn move_by(&mut self, delta: i64) {
        let n = self.section_len();
        let i = self.section.index();
        self.sel[i] = step(self.sel[i], n, delta);
    }

    /// Selects row `idx` of the section shown if there is one; says whether it did.
    pub(super) fn select_row(&mut self, idx: usize) -> bool {
        if idx >= self.section_len() {
            return false;
        }
        self.sel[self.section.index()] = idx;
        true
    }

    pub(super) fn next_section(&mut self, forward: bool) {
        let i = self.section.index();
        let j = if forward { (i + 1) % 3 } else { (i + 2) % 3 };
        self.section = Section::ORDER[j];
    }

    /// Shows the blobs, on `key` if it is listed.
    pub(super) fn select_blob(&mut self, key: &str) {
        self.section = Section::Blobs;
        if let Some(i) = self.blobs.iter().position(|b| b.key == key) {
            self.sel[1] = i;
        }
    }

    /// Shows the datasets, on `dataset` if it is listed.
    pub(super) fn select_dataset(&mut self, dataset: &str) {
        self.section = Section::Datasets;
        if let Some(i) = self.datasets.iter().position(|d| d.dataset == dataset) {
            self.sel[0] = i;
        }
    }

    /// Takes `dataset` off the list, keeping the selection on the same row's item; says
    /// whether it was listed.
    pub(super) fn remove_dataset(&mut self, dataset: &str) -> bool {
        let Some(i) = self.datasets.iter().position(|d| d.dataset == dataset) else {
            return false;
        };
        self.datasets.remove(i);
        if self.sel[0] > i {
            self.sel[0] -= 1;
        }
        self.sel[0] = self.sel[0].min(self.datasets.len().saturating_sub(1));
        true
    }

    /// The listing of request `ticket` arrived; an older one than the last applied is stale.
    /// The selection stays on `shown` (the dataset Detail shows), as a jump may have arrived
    /// before the list knew it.
    pub(super) fn set_datasets(
        &mut self,
        ticket: u64,
        datasets: Vec<DatasetView>,
        shown: Option<&str>,
    ) {
        if ticket < self.datasets_ticket {
            return;
        }
        self.datasets_ticket = ticket;
        self.datasets = datasets;
        if let Some(i) = shown.and_then(|s| self.datasets.iter().position(|d| d.dataset == s)) {
            self.sel[0] = i;
        }
        self.sel[0] = self.sel[0].min(self.datasets.len().saturating_sub(1));
    }

    pub(super) fn set_blobs(&mut self, blobs: Vec<BlobView>) {
        self.blobs = blobs;
        self.sel[1] = self.sel[1].min(self.blobs.len().saturating_sub(1));
    }

    pub(super) fn set_memories(&mut self, memories: Vec<MemoryView>, skipped_lines: u64) {
        self.memories = memories;
        self.memory_skipped_lines = skipped_lines;
        self.sel[2] = self.sel[2].min(self.memories.len().saturating_sub(1));
    }
}

impl App {
    pub(super) fn show_dataset(&mut self, dataset: String) {
        self.send(
            Purpose::DatasetDetail(dataset.clone()),
            Request::Describe { dataset },
        );
    }

    /// Shows the selected item: a dataset's description is asked for, the others are here.
    pub(super) fn open_catalog_item(&mut self) {
        match self.catalog.section {
            Section::Datasets => {
                if let Some(name) = self.catalog.selected_dataset() {
                    self.show_dataset(name);
                }
            }
            Section::Blobs => {
                if let Some(b) = self.catalog.selected_blob().cloned() {
                    self.set_detail(Detail::Blob(b));
                }
            }
            Section::Memories => {
                if let Some(m) = self.catalog.selected_memory().cloned() {
                    self.set_detail(Detail::Memory(m));
                }
            }
        }
    }

    /// A dataset left the session: it leaves the catalog at once, and whatever showed it
    /// (Detail, the describe view) says so instead of offering a table that is gone.
    pub(super) fn dataset_dropped(
        &mut self,
        dataset: String,
        reason: crate::types::data::DropReason,
    ) {
        let listed = self.catalog.remove_dataset(&dataset);
        let shown = self.detail.dataset() == Some(dataset.as_str());
        if shown {
            self.set_detail(Detail::Empty);
        }
        let described = matches!(&self.overlay, Overlay::Describe(d) if d.dataset == dataset);
        if described {
            self.overlay = Overlay::None;
        }
        if listed || shown || described {
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
