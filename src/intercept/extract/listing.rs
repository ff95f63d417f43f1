//! Two listings whose columns are stated rather than guessed.
//!
//! A *ruled* table (`dpkg -l`, SQL*Plus, `sqlcmd`) has a ruler under its header: runs of `=`
//! (or of `-` when the ruler has no `=`) whose extents are the columns. A row is cut at those
//! extents, and a character where the ruler has a gap makes the whole text not a table (a
//! value ran into its neighbour). A short legend above the header is kept as context.
//!
//! A *long listing* (`ls -l`) has no header but a fixed grammar per line: mode, links, owner,
//! group, size, a date of three words, the name, and for a link ` -> ` its target. Every line
//! must read so (a `total N` line may open it); a link whose name or target holds ` -> ` again
//! cannot be split and makes it not a table.

use super::{Found, good_header, lines, record};
use serde_json::{Map, Value};
use unicode_width::UnicodeWidthChar;

/// Lines at most above a ruled table's header kept as its legend.
const LEGEND_LINES: usize = 4;

/// The byte ranges of a line's display columns `[start, end)`: `None` when the line has a tab,
/// whose width the terminal decides.
fn column_bytes(line: &str) -> Option<Vec<usize>> {
    // cols[k] = byte offset where display column k starts; one entry past the end.
    let mut cols = Vec::with_capacity(line.len() + 1);
    for (i, c) in line.char_indices() {
        if c == '\t' {
            return None;
        }
        for _ in 0..c.width().unwrap_or(0) {
            cols.push(i);
        }
    }
    cols.push(line.len());
    Some(cols)
}

/// The text of display columns `[s, e)` of a line, clamped to its end; `None` when a wide
/// character straddles an edge.
fn slice(line: &str, cols: &[usize], s: usize, e: Option<usize>) -> Option<String> {
    let last = cols.len() - 1;
    let at = |k: usize| -> Option<usize> {
        if k >= last {
            return Some(line.len());
        }
        // Inside a wide character: its start repeats; an edge there cuts it.
        if k > 0 && cols[k] == cols[k - 1] {
            return None;
        }
        Some(cols[k])
    };
    let (bs, be) = (at(s)?, e.map_or(Some(line.len()), at)?);
    line.get(bs..be.max(bs)).map(str::to_owned)
}

/// The column extents a ruler line states, or `None` if the line is no ruler.
fn ruler(line: &str) -> Option<Vec<(usize, usize)>> {
    let t = line.trim_end();
    if t.is_empty() || !t.chars().all(|c| matches!(c, '-' | '=' | '+' | ' ')) {
        return None;
    }
    let body = |c: char| {
        if t.contains('=') {
            matches!(c, '=' | '+')
        } else {
            c == '-'
        }
    };
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut open: Option<usize> = None;
    for (k, c) in t.chars().enumerate() {
        match (body(c), open) {
            (true, None) => open = Some(k),
            (false, Some(s)) => {
                out.push((s, k));
                open = None;
            }
            _ => {}
        }
    }
    if let Some(s) = open {
        out.push((s, t.chars().count()));
    }
    // A horizontal rule (`-----`) is one run, not a ruler of columns; a dash or two in a row
    // of text is no ruler either.
    (out.len() >= 2 && out.iter().all(|(s, e)| e - s >= 3)).then_some(out)
}

/// The cells of `line` at the ruler's extents; `None` when text sits in a gap of the ruler.
fn ruled_cells(line: &str, extents: &[(usize, usize)]) -> Option<Vec<String>> {
    let cols = column_bytes(line)?;
    let mut cells = Vec::with_capacity(extents.len());
    for (i, &(s, e)) in extents.iter().enumerate() {
        let next = extents.get(i + 1).map(|x| x.0);
        // The gap after this column must be blank.
        if let Some(n) = next {
            let gap = slice(line, &cols, e, Some(n))?;
            if !gap.chars().all(|c| c == ' ') {
                return None;
            }
        }
        let end = if next.is_some() { Some(e) } else { None };
        cells.push(slice(line, &cols, s, end)?.trim().to_owned());
    }
    Some(cells)
}

pub fn ruled(text: &str) -> Option<Found> {
    let all = lines(text);
    let (at, extents) = all
        .iter()
        .enumerate()
        .skip(1)
        .take(LEGEND_LINES + 1)
        .find_map(|(i, l)| Some((i, ruler(l)?)))?;
    let names = ruled_cells(all.get(at - 1)?, &extents)?;
    // The ruler rules a header: every column has a name or a mark over it.
    if names.iter().any(String::is_empty) {
        return None;
    }
    // A name of punctuation only (`||/`, dpkg's status flags) names no column.
    let header: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if n.chars().any(char::is_alphanumeric) {
                n.clone()
            } else {
                format!("column_{}", i + 1)
            }
        })
        .collect();
    let rows = all.get(at + 1..)?;
    if !good_header(&header) || rows.len() < 2 {
        return None;
    }
    let mut records = Vec::with_capacity(rows.len());
    for l in rows {
        records.push(record(&header, ruled_cells(l, &extents)?));
    }
    let mut context = Map::new();
    let legend = all.get(..at - 1)?;
    if !legend.is_empty() {
        context.insert("text_before".into(), Value::String(legend.join("\n")));
    }
    Found::records(records, context, "ruled")
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `drwxr-xr-x`, `-rw-r--r--.`, `lrwxrwxrwx@`: a type and nine permission letters.
fn mode(s: &str) -> bool {
    let s = s.strip_suffix(['.', '+', '@']).unwrap_or(s);
    let b = s.as_bytes();
    b.len() == 10 && b"-dlcbpsD?".contains(&b[0]) && b[1..].iter().all(|c| b"rwxsStTl-".contains(c))
}

/// A size: bytes, a human size (`4.0K`), or a device's `major, minor` (two words).
fn size_words(words: &[&str]) -> Option<usize> {
    let first = words.first()?;
    if let Some(major) = first.strip_suffix(',') {
        return (digits(major) && words.get(1).is_some_and(|m| digits(m))).then_some(2);
    }
    let num = first.trim_end_matches(['K', 'M', 'G', 'T', 'P', 'E', 'k']);
    let ok = !num.is_empty()
        && num.starts_with(|c: char| c.is_ascii_digit())
        && num.chars().all(|c| c.is_ascii_digit() || c == '.');
    ok.then_some(1)
}

/// A date of three words: `Feb 17  2023`, `Dec  7 11:18`, or `2023-02-17 10:11` (two words).
fn date_words(words: &[&str]) -> Option<usize> {
    let (a, b) = (words.first()?, words.get(1)?);
    let time = |s: &str| {
        s.split_once(':')
            .is_some_and(|(h, m)| digits(h) && digits(m) && h.len() <= 2 && m.len() == 2)
    };
    if MONTHS.contains(a) {
        let c = words.get(2)?;
        let day = digits(b) && b.len() <= 2;
        return (day && ((digits(c) && c.len() == 4) || time(c))).then_some(3);
    }
    let iso = a.len() == 10
        && a.bytes().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                c == b'-'
            } else {
                c.is_ascii_digit()
            }
        });
    (iso && time(b)).then_some(2)
}

/// One `ls -l` line as its cells: mode, links, owner, group, size, modified, name, target.
fn long_line(line: &str) -> Option<[String; 8]> {
    // Words with their byte ends, so the name is taken from the line as written.
    let mut words: Vec<(&str, usize)> = Vec::new();
    let mut rest = line;
    let mut offset = 0;
    while words.len() < 10 {
        let start = rest.len() - rest.trim_start_matches(' ').len();
        let w_len = rest[start..].find(' ').unwrap_or(rest.len() - start);
        if w_len == 0 {
            break;
        }
        let w = &rest[start..start + w_len];
        words.push((w, offset + start + w_len));
        offset += start + w_len;
        rest = &line[offset..];
    }
    let ws: Vec<&str> = words.iter().map(|(w, _)| *w).collect();
    if ws.len() < 7 || !mode(ws[0]) || !digits(ws[1]) {
        return None;
    }
    let size_n = size_words(&ws[4..])?;
    let date_at = 4 + size_n;
    let date_n = date_words(ws.get(date_at..)?)?;
    let date_end = words.get(date_at + date_n - 1)?.1;
    let size_end = words.get(date_at - 1)?.1;
    // One space separates the date from the name, which may itself begin with spaces.
    let name_all = line.get(date_end..)?.strip_prefix(' ')?;
    if name_all.is_empty() {
        return None;
    }
    let (name, target) = if ws[0].starts_with('l') {
        let mut parts = name_all.split(" -> ");
        let (n, t) = (parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        (n.to_owned(), t.to_owned())
    } else {
        (name_all.to_owned(), String::new())
    };
    let size = line.get(words[3].1..size_end)?.trim().to_owned();
    let modified = line.get(size_end..date_end)?.trim().to_owned();
    Some([
        ws[0].to_owned(),
        ws[1].to_owned(),
        ws[2].to_owned(),
        ws[3].to_owned(),
        size,
        modified,
        name,
        target,
    ])
}

pub fn long_listing(text: &str) -> Option<Found> {
    let all = lines(text);
    let (total, entries) = match all.first()?.strip_prefix("total ") {
        Some(n) if size_words(&[n.trim()]).is_some() => (Some(all[0]), all.get(1..)?),
        _ => (None, &all[..]),
    };
    if entries.len() < 2 {
        return None;
    }
    let header: Vec<String> = [
        "mode", "links", "owner", "group", "size", "modified", "name", "target",
    ]
    .map(str::to_owned)
    .to_vec();
    let parsed: Option<Vec<[String; 8]>> = entries.iter().map(|l| long_line(l)).collect();
    let parsed = parsed?;
    let links = parsed.iter().any(|p| !p[7].is_empty());
    let keep = if links { 8 } else { 7 };
    let records = parsed
        .into_iter()
        .map(|p| record(&header[..keep], p.into_iter().take(keep).collect()))
        .collect();
    let mut context = Map::new();
    if let Some(t) = total {
        context.insert("text_before".into(), Value::String(t.to_owned()));
    }
    Found::records(records, context, "long_listing")
}
