//! Aligned fixed-width tables (`ps`, `kubectl get`, `docker ps`) and `[TAG] name` listings
//! (server-filesystem's `list_directory`). Columns come from the header: where header words
//! are two or more spaces apart, cells are cut at the header's positions (so empty cells stay
//! empty); otherwise whitespace splits cells and the last column takes the rest of the line.

use super::{Found, good_header, lines, record};

/// `[FILE] name` / `[DIR] name` lines, all of them.
pub fn tagged(text: &str) -> Option<Found> {
    let all = lines(text);
    if all.len() < 2 {
        return None;
    }
    let header = vec!["type".to_owned(), "name".to_owned()];
    let mut records = Vec::with_capacity(all.len());
    for l in all {
        let rest = l.strip_prefix('[')?;
        let (tag, name) = rest.split_once("] ")?;
        if tag.is_empty()
            || !tag.chars().all(|c| c.is_ascii_uppercase() || c == '_')
            || name.is_empty()
        {
            return None;
        }
        records.push(record(&header, vec![tag.to_owned(), name.to_owned()]));
    }
    Found::text(records, "tagged_listing")
}

/// Start positions (in chars) of header words, and whether every gap is two spaces or more.
fn header_words(h: &str) -> (Vec<(usize, String)>, bool) {
    let chars: Vec<char> = h.chars().collect();
    let mut words: Vec<(usize, String)> = Vec::new();
    let mut wide_gaps = true;
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == ' ' {
            i += 1;
            continue;
        }
        let start = i;
        // A header word may hold single spaces ("CONTAINER ID") only when gaps are wide.
        while i < chars.len() && !(chars[i] == ' ' && chars.get(i + 1).is_none_or(|c| *c == ' ')) {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        if let Some((prev_start, prev)) = words.last() {
            let gap = start - (*prev_start + prev_len(prev));
            if gap < 2 {
                wide_gaps = false;
            }
        }
        words.push((start, word));
    }
    (words, wide_gaps)
}

fn prev_len(s: &str) -> usize {
    s.chars().count()
}

/// Headers of `ps`, `kubectl` and `docker` are capitalised words (`NAME`, `%CPU`, `CONTAINER
/// ID`); requiring that keeps ordinary text from being read as a table.
fn header_ok(words: &[String]) -> bool {
    good_header(words)
        && words.iter().all(|w| {
            w.chars().any(|c| c.is_ascii_uppercase())
                && w.chars().all(|c| {
                    c.is_ascii_uppercase()
                        || c.is_ascii_digit()
                        || matches!(c, '%' | '_' | '-' | ' ' | '(' | ')' | '/' | '.')
                })
        })
}

/// Cuts rows at the header words' positions; `None` when a cell straddles a boundary or a
/// multi-word header sits over multi-word cells (then the gaps were single spaces after all).
fn by_positions(
    words: &[(usize, String)],
    rows: &[&str],
) -> Option<Vec<serde_json::Map<String, serde_json::Value>>> {
    let header: Vec<String> = words.iter().map(|(_, w)| w.clone()).collect();
    let starts: Vec<usize> = words.iter().map(|(s, _)| *s).collect();
    let mut records = Vec::new();
    for l in rows {
        let chars: Vec<char> = l.chars().collect();
        if starts[1..]
            .iter()
            .any(|&s| s < chars.len() && s > 0 && chars[s - 1] != ' ')
        {
            return None;
        }
        let mut cells = Vec::with_capacity(starts.len());
        for (i, &s) in starts.iter().enumerate() {
            let e = starts
                .get(i + 1)
                .copied()
                .unwrap_or(chars.len())
                .min(chars.len());
            let cell: String = if s < chars.len() {
                chars[s..e].iter().collect()
            } else {
                String::new()
            };
            let cell = cell.trim().to_owned();
            if header[i].contains(' ') && cell.split_whitespace().count() >= 2 {
                return None;
            }
            cells.push(cell);
        }
        records.push(record(&header, cells));
    }
    Some(records)
}

pub fn aligned(text: &str) -> Option<Found> {
    let all = lines(text);
    if all.len() < 3 {
        return None;
    }
    let (words, wide) = header_words(all[0]);
    if wide && words.len() >= 2 {
        let header: Vec<String> = words.iter().map(|(_, w)| w.clone()).collect();
        if header_ok(&header)
            && let Some(records) = by_positions(&words, &all[1..])
        {
            return Found::text(records, "fixed_width");
        }
    }
    // Single-space gaps (`ps`): split on whitespace; the last column takes the rest.
    let header: Vec<String> = all[0].split_whitespace().map(str::to_owned).collect();
    if !header_ok(&header) {
        return None;
    }
    let n = header.len();
    let mut records = Vec::new();
    for l in &all[1..] {
        let mut parts: Vec<&str> = l.split_whitespace().collect();
        if parts.len() < n {
            return None;
        }
        let last = parts.split_off(n - 1).join(" ");
        let mut cells: Vec<String> = parts.into_iter().map(str::to_owned).collect();
        cells.push(last);
        records.push(record(&header, cells));
    }
    Found::text(records, "fixed_width")
}
