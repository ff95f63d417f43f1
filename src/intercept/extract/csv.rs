//! CSV and TSV with RFC 4180 quoting: quoted fields may hold delimiters, doubled quotes and
//! newlines. Every record must have as many fields as the first. The first record is the
//! header only when it reads as names (distinct, short, none of them a number or a date, none
//! repeated below in its own column); otherwise the columns are `column_1…` and every line is
//! a row, so a headerless listing (`dpkg-query -W`, `du -ak`) loses none. A short note above
//! the table (`[Reading 3001 lines from start …]`) is kept as context.

use super::{Found, good_header, record};
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

/// Whether the first record names the columns. It does only when it reads as names: short,
/// distinct, none of them a value (a number, a date), and none repeated as a value below it
/// in its own column. Otherwise it is the first row, and every line is kept as one.
fn names_columns(first: &[String], data: &[Vec<String>]) -> bool {
    let names: Vec<String> = first.iter().map(|h| h.trim().to_owned()).collect();
    good_header(&names)
        && names.iter().all(|h| header_like(h) && !value_like(h))
        && !names
            .iter()
            .enumerate()
            .any(|(i, h)| data.iter().any(|r| r.get(i).is_some_and(|v| v.trim() == h)))
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
    if names_columns(first, data) {
        let header: Vec<String> = first.iter().map(|h| h.trim().to_owned()).collect();
        let records = data.iter().map(|r| record(&header, r.clone())).collect();
        return Found::records(records, context, rung);
    }
    // No header: the table must still look like one, or prose with commas would pass.
    if !headerless_ok(&rows, delim) {
        return None;
    }
    let header: Vec<String> = (1..=width).map(|i| format!("column_{i}")).collect();
    context.insert(
        "header".into(),
        Value::String("none: every line is a row, columns are column_1…".into()),
    );
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
