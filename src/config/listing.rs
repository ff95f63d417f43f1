//! How tools are listed to clients (`listing`, `pin`, `promote`): every tool's name,
//! description and schema is paid for on every turn, so a config may list tools whole, cut to
//! what calling them needs, or only on demand.

use super::fields::{Fields, Problems};

/// How a server's tools appear in `tools/list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListingMode {
    /// Every tool as the server describes it.
    #[default]
    Full,
    /// Descriptions cut to their first paragraph, schemas without per-property prose.
    Compact,
    /// Only pinned and promoted tools; the rest are found with `loom_find_tools` and called
    /// with `loom_call` or by name.
    Search,
}

impl ListingMode {
    pub const NAMES: [&'static str; 3] = ["full", "compact", "search"];

    pub fn parse(s: &str) -> Option<ListingMode> {
        match s {
            "full" => Some(ListingMode::Full),
            "compact" => Some(ListingMode::Compact),
            "search" => Some(ListingMode::Search),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ListingMode::Full => "full",
            ListingMode::Compact => "compact",
            ListingMode::Search => "search",
        }
    }
}

pub(super) fn read_mode(f: &mut Fields, p: &mut Problems) -> Option<ListingMode> {
    f.one_of("listing", &ListingMode::NAMES, p)
        .and_then(|m| ListingMode::parse(&m))
}
