//! CSV and TSV with RFC 4180 quoting: quoted fields may hold delimiters, doubled quotes and
//! newlines. Used only when the header names are distinct and short, and every record has
//! exactly as many fields as the header.

use super::{Found, good_header, record};

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

pub fn parse(text: &str) -> Option<Found> {
    let first = text.lines().find(|l| !l.trim().is_empty())?;
    let delim = if first.contains('\t') {
        '\t'
    } else if first.contains(',') {
        ','
    } else {
        return None;
    };
    let rows = split(text.trim_matches('\n'), delim)?;
    let (header, data) = rows.split_first()?;
    let header: Vec<String> = header.iter().map(|h| h.trim().to_owned()).collect();
    if !good_header(&header) || !header.iter().all(|h| header_like(h)) || data.len() < 2 {
        return None;
    }
    if data.iter().any(|r| r.len() != header.len()) {
        return None;
    }
    let records = data.iter().map(|r| record(&header, r.clone())).collect();
    Found::text(records, if delim == '\t' { "tsv" } else { "csv" })
}
