//! Markdown (GFM) tables: a header row, a delimiter row (cells of dashes, each with an optional
//! alignment colon at either end: `---`, `:--`, `--:`, `:-:`), and rows with as many cells.
//! Leading and trailing pipes are optional and `\|` is a pipe inside a cell. The delimiter row
//! anchors the table, so a title line with a pipe in it is not mistaken for the header. A few
//! short lines around the table (a title, a closing count) are kept as context; a table lost in
//! prose is not a table.

use super::{Found, Records, good_header, lines, record};
use crate::intercept::table::Tier;
use serde_json::{Map, Value};

/// Lines at most before or after the table that are kept as context.
const AROUND_LINES: usize = 3;

/// The cells of a table row; `None` for a line with no unescaped pipe (not a row).
fn cells(line: &str) -> Option<Vec<String>> {
    let t = line.trim();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut pipes = 0;
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '|' => {
                pipes += 1;
                out.push(std::mem::take(&mut cur).trim().to_owned());
            }
            c => cur.push(c),
        }
    }
    if pipes == 0 {
        return None;
    }
    out.push(cur.trim().to_owned());
    // An unescaped pipe at either end only closes the row: it leaves an empty first or last
    // piece, which is not a cell.
    if t.starts_with('|') {
        out.remove(0);
    }
    if t.ends_with('|') && !t.ends_with("\\|") && !out.is_empty() {
        out.pop();
    }
    Some(out)
}

fn is_delimiter_cell(c: &str) -> bool {
    let c = c.strip_prefix(':').unwrap_or(c);
    let c = c.strip_suffix(':').unwrap_or(c);
    !c.is_empty() && c.bytes().all(|b| b == b'-')
}

fn is_delimiter_row(cells: &[String]) -> bool {
    !cells.is_empty() && cells.iter().all(|c| is_delimiter_cell(c))
}

/// The text of `lines` as one context value, when there are few enough of them.
fn around(lines: &[&str]) -> Option<Option<Value>> {
    match lines.len() {
        0 => Some(None),
        n if n <= AROUND_LINES => Some(Some(Value::String(lines.join("\n")))),
        _ => None,
    }
}

pub fn parse(text: &str) -> Option<Found> {
    let all = lines(text);
    // The first delimiter row that sits under a header of as many cells.
    let (start, header) = (1..all.len()).find_map(|i| {
        let delim = cells(all.get(i)?)?;
        if !is_delimiter_row(&delim) {
            return None;
        }
        let header = cells(all.get(i - 1)?)?;
        (header.len() == delim.len()).then_some((i - 1, header))
    })?;
    if !good_header(&header) {
        return None;
    }
    let mut records = Vec::new();
    let mut end = start + 2;
    while let Some(line) = all.get(end) {
        match cells(line) {
            Some(c) if c.len() == header.len() => records.push(record(&header, c)),
            Some(_) => return None,
            None => break,
        }
        end += 1;
    }
    // Text around the table (a title, a closing line) is fine and kept; a table lost in prose
    // is not a table.
    let table_chars: usize = all.get(start..end)?.iter().map(|l| l.len()).sum();
    let total: usize = all.iter().map(|l| l.len()).sum();
    if records.len() < 2 || table_chars * 5 < total * 4 {
        return None;
    }
    let mut context = Map::new();
    if let Some(before) = around(all.get(..start)?)? {
        context.insert("text_before".into(), before);
    }
    if let Some(after) = around(all.get(end..)?)? {
        context.insert("text_after".into(), after);
    }
    Some(Found::Records(Records {
        records,
        tier: Tier::Text,
        context,
        rung: "markdown",
    }))
}
