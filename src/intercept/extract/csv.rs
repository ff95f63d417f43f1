//! CSV and TSV with RFC 4180 quoting: quoted fields may hold delimiters, doubled quotes and
//! newlines. Every record must have as many fields as the first. The first record is the
//! header only when it reads as names (distinct, short, none of them a number or a date, none
//! repeated below in its own column); otherwise the columns are `column_1…` and every line is
//! a row, so a headerless listing (`dpkg-query -W`, `du -ak`) loses none. A short note above
//! the table (`[Reading 3001 lines from start …]`) is kept as context.

use super::{Found, NO_HEADER, reads_as_names, record, value_like};
use serde_json::{Map, Value};

/// Splits `text` into records of fields; `None` on an unterminated quote.
fn split(text: &str, delim: char) -> Option<Vec<Vec<String>>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    let mut at_start = true;
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    field.push('"');
                    chars.next();
                } else {
                    quoted = false;
                }
            } else {
                field.push(c);
            }
            continue;
        }
        match c {
            '"' if at_start => {
                quoted = true;
                at_start = false;
            }
            c if c == delim => {
                record.push(std::mem::take(&mut field));
                at_start = true;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                record.push(std::mem::take(&mut field));
                if !(record.len() == 1 && record[0].is_empty()) {
                    records.push(std::mem::take(&mut record));
                } else {
                    record.clear();
                }
                at_start = true;
            }
            c => {
                field.push(c);
                at_start = false;
            }
        }
    }
    if quoted {
        return None;
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    Some(records)
}

fn header_like(h: &str) -> bool {
    let h = h.trim();
    h.chars().count() <= 60
        && h.split_whitespace().count() <= 4
        && !h.ends_with(['.', '!', '?', ':'])
}

/// A line above a table that is a note about it, not a malformed row: it has no delimiter,
/// or is bracketed, a comment or a title (`[…]`, `# …`, `Contents of x.csv:`).
fn note_like(line: &str, delim: char) -> bool {
    let l = line.trim();
    !l.is_empty()
        && (!l.contains(delim) || l.starts_with(['[', '#', '(']) || l.ends_with([':', ']', ')']))
}

/// Lines at most before the table that are kept as context rather than read: a note such as
/// `[Reading 3001 lines from start …]` that a file reader puts above the file.
const PREAMBLE_LINES: usize = 2;

pub fn parse(text: &str) -> Option<Found> {
    let body = text.trim_matches('\n');
    // A short note above the table is context; the table is what follows it.
    for skip in 0..=PREAMBLE_LINES {
        let mut parts = body.splitn(skip + 1, '\n');
        let preamble: Vec<&str> = parts.by_ref().take(skip).collect();
        if preamble.len() < skip {
            return None;
        }
        let rest = if skip == 0 { body } else { parts.next()? };
        if let Some(found) = table(rest, &preamble) {
            return Some(found);
        }
    }
    None
}

/// The CSV or TSV that `text` is, with `preamble` lines above it kept as context.
fn table(text: &str, preamble: &[&str]) -> Option<Found> {
    let first = text.lines().find(|l| !l.trim().is_empty())?;
    let delim = if first.contains('\t') {
        '\t'
    } else if first.contains(',') {
        ','
    } else {
        return None;
    };
    let rows = split(text.trim_matches('\n'), delim)?;
    let width = rows.first()?.len();
    if width < 2 || rows.len() < 3 || rows.iter().any(|r| r.len() != width) {
        return None;
    }
    // A preamble line that splits into as many fields as the table is part of it, not a note.
    if !preamble.iter().all(|p| note_like(p, delim)) {
        return None;
    }
    let (first, data) = rows.split_first()?;
    let mut context = Map::new();
    if !preamble.is_empty() {
        context.insert("text_before".into(), Value::String(preamble.join("\n")));
    }
    let rung = if delim == '\t' { "tsv" } else { "csv" };
    let names: Vec<String> = first.iter().map(|h| h.trim().to_owned()).collect();
    let repeated = |col: usize, name: &str| {
        data.iter()
            .any(|r| r.get(col).is_some_and(|v| v.trim() == name))
    };
    if reads_as_names(&names, repeated) && names.iter().all(|h| header_like(h)) {
        let header: Vec<String> = first.iter().map(|h| h.trim().to_owned()).collect();
        let records = data.iter().map(|r| record(&header, r.clone())).collect();
        return Found::records(records, context, rung);
    }
    // No header: the table must still look like one, or prose with commas would pass.
    if !headerless_ok(&rows, delim) {
        return None;
    }
    let header: Vec<String> = (1..=width).map(|i| format!("column_{i}")).collect();
    context.insert("header".into(), Value::String(NO_HEADER.into()));
    let records = rows.iter().map(|r| record(&header, r.clone())).collect();
    Found::records(records, context, rung)
}

/// A table without a header row is read only where it cannot be prose: tab-separated, or
/// comma-separated with some column whose every cell is a value (a number, a date).
fn headerless_ok(rows: &[Vec<String>], delim: char) -> bool {
    let width = rows.first().map_or(0, Vec::len);
    let short = rows
        .iter()
        .flatten()
        .all(|c| !c.contains('\n') && c.chars().count() <= 400);
    short
        && (delim == '\t'
            || (0..width).any(|i| {
                rows.iter().all(|r| {
                    r.get(i)
                        .is_some_and(|c| !c.trim().is_empty() && value_like(c))
                })
            }))
}
