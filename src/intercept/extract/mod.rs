//! Finding rows in a tool result, rung by rung: `structuredContent`; JSON in text (one fenced
//! block allowed); one JSON object per text block; NDJSON; CSV/TSV; markdown tables; `Key:
//! value` record blocks; ruled tables (`dpkg -l`) and long listings (`ls -l`); aligned
//! fixed-width tables and `[TAG] name` listings. Each rung either
//! accounts for every row or declines: ambiguity is a pass-through, never a guess.

mod csv;
mod fixed_width;
mod json;
mod json_rows;
mod listing;
mod markdown;
pub mod multi;
mod records;

use super::table::{Table, Tier};
use serde_json::{Map, Value};

/// Rows found: records still to be typed, or a table the fast JSON reader typed directly.
pub enum Found {
    Records(Records),
    Typed(Table),
}

/// Records plus how to read their cells.
pub struct Records {
    pub records: Vec<Map<String, Value>>,
    pub tier: Tier,
    pub context: Map<String, Value>,
    pub rung: &'static str,
}

impl Found {
    fn text(records: Vec<Map<String, Value>>, rung: &'static str) -> Option<Found> {
        Found::records(records, Map::new(), rung)
    }

    /// Text-tier records with the context found around them.
    fn records(
        records: Vec<Map<String, Value>>,
        context: Map<String, Value>,
        rung: &'static str,
    ) -> Option<Found> {
        (!records.is_empty()).then_some(Found::Records(Records {
            records,
            tier: Tier::Text,
            context,
            rung,
        }))
    }

    /// Which extraction rung found the rows.
    pub fn rung(&self) -> &'static str {
        match self {
            Found::Records(r) => r.rung,
            Found::Typed(t) => t.rung,
        }
    }

    /// Scalars that wrapped the rows.
    pub fn context(&self) -> &Map<String, Value> {
        match self {
            Found::Records(r) => &r.context,
            Found::Typed(t) => &t.context,
        }
    }

    /// How many rows were found.
    pub fn rows(&self) -> usize {
        match self {
            Found::Records(r) => r.records.len(),
            Found::Typed(t) => t.rows(),
        }
    }

    pub fn into_table(self) -> Option<Table> {
        match self {
            Found::Records(r) => Table::from_records(r.records, r.tier, r.context, r.rung),
            Found::Typed(t) => Some(t),
        }
    }
}

/// Tries every rung on a result's `structuredContent` and text blocks.
pub fn find_rows(structured: Option<&Value>, texts: &[&str]) -> Option<Found> {
    if let Some(s) = structured
        && let Some(found) = json::rows_in_value(s.clone(), "structuredContent")
    {
        return Some(found);
    }
    if texts.len() == 1 {
        return find_in_text(texts[0]);
    }
    if texts.len() > 1 {
        return json::one_object_per_block(texts);
    }
    None
}

/// The text rungs, in order, on one text.
pub fn find_in_text(text: &str) -> Option<Found> {
    json::in_text(text)
        .or_else(|| json::ndjson(text))
        .or_else(|| csv::parse(text))
        .or_else(|| markdown::parse(text))
        .or_else(|| records::parse(text))
        .or_else(|| listing::ruled(text))
        .or_else(|| listing::long_listing(text))
        .or_else(|| fixed_width::tagged(text))
        .or_else(|| fixed_width::aligned(text))
}

/// Non-empty lines with their text, for the line-based rungs.
fn lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| !l.trim().is_empty())
        .collect()
}

/// A record from parallel header/value lists, as string cells.
fn record(header: &[String], values: Vec<String>) -> Map<String, Value> {
    header
        .iter()
        .cloned()
        .zip(values.into_iter().map(Value::String))
        .collect()
}

/// What the context says of a table read without a header row.
const NO_HEADER: &str = "none: every line is a row, columns are column_1…";

/// A cell that reads as a value, never as a column's name: a number, a date or time, a
/// boolean, or nothing at all.
fn value_like(cell: &str) -> bool {
    let c = cell.trim();
    if c.is_empty() || c.eq_ignore_ascii_case("true") || c.eq_ignore_ascii_case("false") {
        return true;
    }
    let digits = c.strip_prefix(['-', '+']).unwrap_or(c);
    let numeric = !digits.is_empty()
        && digits.starts_with(|ch: char| ch.is_ascii_digit() || ch == '.')
        && digits
            .chars()
            .all(|ch| ch.is_ascii_digit() || matches!(ch, '.' | ',' | '_' | 'e' | 'E' | '-' | '+'));
    let dated = c.len() >= 8
        && c.starts_with(|ch: char| ch.is_ascii_digit())
        && c.chars().all(|ch| {
            ch.is_ascii_digit() || matches!(ch, '-' | '/' | ':' | 'T' | ' ' | '.' | 'Z' | '+')
        });
    numeric || dated
}

/// Whether a first row names the columns below it: distinct names, none of them a value (a
/// number, a date), none repeated as a value below it in its own column (`repeated(col,
/// name)`). Otherwise it is the first row of data.
fn reads_as_names(first: &[String], repeated: impl Fn(usize, &str) -> bool) -> bool {
    good_header(first)
        && first.iter().all(|h| !value_like(h))
        && !first.iter().enumerate().any(|(i, h)| repeated(i, h))
}

/// Header names must be present and distinct for rows to be read by them.
fn good_header(header: &[String]) -> bool {
    let mut seen = std::collections::HashSet::new();
    header.len() >= 2
        && header
            .iter()
            .all(|h| !h.trim().is_empty() && seen.insert(h.to_lowercase()))
}

#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;
