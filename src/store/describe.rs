//! A dataset described for a person: its catalog entry, every column's stats and top values,
//! sample rows, fresh join hints, provenance and context, as one typed structure. The store
//! builds it, the Engine API carries it (in process and over the session socket) and the
//! workbench draws it, so a field renamed on one side is a compile error on the other. It is
//! never scraped from a model-facing tool's text; the envelope is a separate rendering.

use super::{DatasetMeta, Description, Profile, Result, Store};

/// Sample rows a description carries.
pub const DESCRIBE_SAMPLES: usize = 10;

impl Description {
    pub fn new(meta: DatasetMeta, profile: Profile) -> Description {
        Description {
            dataset: meta.dataset_ref,
            kind: meta.kind,
            rows: meta.rows,
            pinned: meta.pinned,
            created: meta.created,
            columns: profile.columns,
            sample_rows: profile.samples,
            join_hints: profile.join_hints,
            provenance: meta.provenance,
            context: meta.context,
        }
    }
}

impl Store {
    /// The full description of a dataset, join hints computed against the datasets there now.
    pub fn describe(&self, r: &str) -> Result<Description> {
        let meta = self.dataset(r)?;
        let profile = self.profile(r, DESCRIBE_SAMPLES)?;
        Ok(Description::new(meta, profile))
    }
}
