//! Markdown (GFM) tables: a header row, a delimiter row of dashes, and rows with as many cells.
//! The table must be most of the text; a stray pipe in prose is not a table.

use super::{Found, good_header, lines, record};

fn cells(line: &str) -> Option<Vec<String>> {
    let t = line.trim();
    if !t.contains('|') {
        return None;
    }
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    // `\|` is a literal pipe inside a cell.
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '|' => out.push(std::mem::take(&mut cur).trim().to_owned()),
            c => cur.push(c),
        }
    }
    out.push(cur.trim().to_owned());
    Some(out)
}

fn is_delimiter_row(cells: &[String]) -> bool {
    cells.iter().all(|c| {
        let c = c.trim_matches(':');
        c.len() >= 3 && c.bytes().all(|b| b == b'-')
    })
}

pub fn parse(text: &str) -> Option<Found> {
    let all = lines(text);
    let start = all
        .iter()
        .position(|l| l.trim_start().starts_with('|') || l.contains(" | "))?;
    let header = cells(all[start])?;
    let delim = cells(all.get(start + 1)?)?;
    if delim.len() != header.len() || !is_delimiter_row(&delim) || !good_header(&header) {
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
    // Text around the table (a title, a closing line) is fine; a table lost in prose is not.
    let table_chars: usize = all[start..end].iter().map(|l| l.len()).sum();
    let total: usize = all.iter().map(|l| l.len()).sum();
    if records.len() < 2 || table_chars * 5 < total * 4 {
        return None;
    }
    Found::text(records, "markdown")
}
