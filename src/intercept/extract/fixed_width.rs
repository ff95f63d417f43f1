//! Aligned fixed-width tables (`ps`, `kubectl get`, `docker ps`) and `[TAG] name` listings
//! (server-filesystem's `list_directory`).
//!
//! A fixed-width table is read by the edges of its header words, measured in display columns
//! (terminals align by width, not by characters). Each column is a field that its header word
//! sits in: at the field's start when the column is left-aligned, at its end when it is
//! right-aligned, so every non-empty cell overlaps its header word, and a token that overlaps no
//! header word is the overflow of a neighbour: a long left-aligned value running right, or a
//! long right-aligned one running left (`Mon Dec  7 01:14:32 2026` under `STARTED`). Which
//! neighbour it belongs to is decided only from evidence that cannot mislead: a column proven
//! left-aligned cannot take text left of its header, one proven right-aligned none right of
//! it, and an empty cell takes nothing. A token over two header words, a tab, or overflow that
//! could belong to either neighbour makes the whole text not a table: it is parked instead.
//! Cells keep their inner spacing exactly; the last column takes the rest of its line,
//! trailing spaces included (unless every line is padded to one width).

use super::{Found, good_header, lines, record};
use unicode_width::UnicodeWidthChar;

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

/// A run of non-space characters: its display columns `[start, end)` and its bytes.
#[derive(Debug, Clone, Copy)]
struct Token {
    start: usize,
    end: usize,
    bytes: (usize, usize),
}

/// The tokens of a line with their display columns; `None` for a tab (its width depends on
/// the terminal, so no column edge can be trusted).
fn tokens(line: &str) -> Option<(Vec<Token>, usize)> {
    let mut out: Vec<Token> = Vec::new();
    let mut col = 0;
    let mut open: Option<Token> = None;
    for (i, c) in line.char_indices() {
        if c == '\t' {
            return None;
        }
        let w = c.width().unwrap_or(0);
        if c == ' ' {
            out.extend(open.take());
        } else {
            let t = open.get_or_insert(Token {
                start: col,
                end: col,
                bytes: (i, i),
            });
            t.end = col + w;
            t.bytes.1 = i + c.len_utf8();
        }
        col += w;
    }
    out.extend(open);
    Some((out, col))
}

/// Header words as `(start, end, name)` in display columns: each space-separated word, or
/// (`joined`) words one space apart taken as one (`CONTAINER ID`).
fn header_words(h: &str, joined: bool) -> Option<Vec<(usize, usize, String)>> {
    let (toks, _) = tokens(h)?;
    let mut words: Vec<(usize, usize, String)> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let first = toks[i];
        let mut last = first;
        while joined && i + 1 < toks.len() && toks[i + 1].start == last.end + 1 {
            i += 1;
            last = toks[i];
        }
        let name = h.get(first.bytes.0..last.bytes.1)?.to_owned();
        words.push((first.start, last.end, name));
        i += 1;
    }
    Some(words)
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

/// Where a token stands against the header words.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Place {
    /// Over header word `i` (for the last word: anywhere from its start on).
    Over(usize),
    /// Between header words `i` and `i + 1`, over neither.
    Gap(usize),
}

fn place(t: &Token, words: &[(usize, usize, String)]) -> Option<Place> {
    let last = words.len() - 1;
    let mut over = None;
    for (i, (s, e, _)) in words.iter().enumerate() {
        let hit = if i == last {
            t.end > *s
        } else {
            t.start < *e && t.end > *s
        };
        if hit {
            if over.is_some() {
                // Over two header words: no edge separates them.
                return None;
            }
            over = Some(i);
        }
    }
    if let Some(i) = over {
        return Some(Place::Over(i));
    }
    // Left of the first word: the first column's overflow, as nothing else is there.
    if t.end <= words[0].0 {
        return Some(Place::Over(0));
    }
    let gap = words
        .windows(2)
        .position(|w| t.start >= w[0].1 && t.end <= w[1].0)?;
    Some(Place::Gap(gap))
}

/// What the rows prove of one column's alignment.
#[derive(Default, Clone, Copy)]
struct Alignment {
    /// Some cell's text over the header starts elsewhere than the header: not left-aligned.
    start_moves: bool,
    /// Some cell's text over the header ends elsewhere than the header: not right-aligned.
    end_moves: bool,
}

impl Alignment {
    /// A left-aligned column's cells start where its header does; one whose ends move too
    /// cannot be right-aligned, so it is left-aligned.
    fn left(self) -> bool {
        !self.start_moves && self.end_moves
    }
    fn right(self) -> bool {
        self.start_moves && !self.end_moves
    }
}

/// The column each gap token goes to, as a cut position per gap: tokens ending at or before
/// the cut go left. `None` when the evidence allows more than one reading.
fn cuts(
    rows: &[Vec<(Token, Place)>],
    words: &[(usize, usize, String)],
    align: &[Alignment],
) -> Option<Vec<usize>> {
    let mut out = Vec::with_capacity(words.len().saturating_sub(1));
    for g in 0..words.len() - 1 {
        let (lo, hi) = (words[g].1, words[g + 1].0);
        // Bounds every reading must respect.
        let mut min_cut = lo;
        let mut max_cut = hi;
        let mut any_gap = false;
        for row in rows {
            let gap: Vec<&Token> = row
                .iter()
                .filter(|(_, p)| *p == Place::Gap(g))
                .map(|(t, _)| t)
                .collect();
            let (Some(first), Some(last)) = (gap.first(), gap.last()) else {
                continue;
            };
            any_gap = true;
            let has = |c: usize| row.iter().any(|(_, p)| *p == Place::Over(c));
            if !has(g) {
                max_cut = max_cut.min(first.start);
            }
            if !has(g + 1) {
                min_cut = min_cut.max(last.end);
            }
            if align[g + 1].left() {
                min_cut = min_cut.max(last.end);
            }
            if align[g].right() {
                max_cut = max_cut.min(first.start);
            }
        }
        if !any_gap {
            out.push(lo);
            continue;
        }
        if min_cut > max_cut {
            return None;
        }
        // Every cut in [min_cut, max_cut] that no token crosses; they must all read alike.
        let crosses = |c: usize| rows.iter().flatten().any(|(t, _)| t.start < c && t.end > c);
        let readings: Vec<usize> = (min_cut..=max_cut).filter(|&c| !crosses(c)).collect();
        let (&first, &last) = (readings.first()?, readings.last()?);
        let between = rows
            .iter()
            .flatten()
            .any(|(t, p)| *p == Place::Gap(g) && t.start >= first && t.end <= last);
        if between {
            return None;
        }
        out.push(first);
    }
    Some(out)
}

/// A header whose words are two or more spaces apart may hold single spaces inside a name
/// (`CONTAINER ID`): that reading is tried first, and each word alone (`PID TTY`) when a
/// joined name sits over cells of several words.
pub fn aligned(text: &str) -> Option<Found> {
    let all = lines(text);
    if all.len() < 3 {
        return None;
    }
    let joined = header_words(all[0], true)?;
    let single = header_words(all[0], false)?;
    if joined.len() != single.len()
        && let Some(found) = by_header(&all, joined)
    {
        return Some(found);
    }
    by_header(&all, single)
}

/// The table under the header `words`, or `None`.
fn by_header(all: &[&str], words: Vec<(usize, usize, String)>) -> Option<Found> {
    let header: Vec<String> = words.iter().map(|(_, _, w)| w.clone()).collect();
    if !header_ok(&header) {
        return None;
    }
    let n = words.len();
    let mut rows: Vec<Vec<(Token, Place)>> = Vec::with_capacity(all.len() - 1);
    let mut widths = Vec::with_capacity(all.len() - 1);
    for l in &all[1..] {
        let (toks, width) = tokens(l)?;
        let placed: Option<Vec<(Token, Place)>> = toks
            .into_iter()
            .map(|t| Some((t, place(&t, &words)?)))
            .collect();
        rows.push(placed?);
        widths.push(width);
    }
    let mut align = vec![Alignment::default(); n];
    for row in &rows {
        // Each column's first and last token over its header, in one pass (tokens are in order).
        let mut edges: Vec<Option<(usize, usize)>> = vec![None; n];
        for (t, p) in row {
            if let Place::Over(c) = *p {
                let e = edges[c].get_or_insert((t.start, t.end));
                e.1 = t.end;
            }
        }
        for ((a, edge), (s, e, _)) in align.iter_mut().zip(edges).zip(&words) {
            if let Some((first, last)) = edge {
                a.start_moves |= first != *s;
                a.end_moves |= last != *e;
            }
        }
    }
    // A column is left- or right-aligned: one whose cells move at both ends is not a column
    // of this table (a joined name over several columns, a centred header).
    if align.iter().any(|a| a.start_moves && a.end_moves) {
        return None;
    }
    let cut = cuts(&rows, &words, &align)?;
    // Every line padded to one width: the padding is not the last column's.
    let padded = widths.windows(2).all(|w| w[0] == w[1]);
    let mut records = Vec::with_capacity(rows.len());
    for (row, line) in rows.iter().zip(&all[1..]) {
        let mut spans: Vec<Option<(usize, usize)>> = vec![None; n];
        for (t, p) in row {
            let c = match *p {
                Place::Over(c) => c,
                Place::Gap(g) if t.end <= cut[g] => g,
                Place::Gap(g) => g + 1,
            };
            let span = spans[c].get_or_insert(t.bytes);
            span.0 = span.0.min(t.bytes.0);
            span.1 = span.1.max(t.bytes.1);
        }
        // Columns hold their tokens in order: a later column's text starts after an earlier
        // one's ends, or the edges were not where the header says.
        let mut end = 0;
        for s in spans.iter().flatten() {
            if s.0 < end {
                return None;
            }
            end = s.1;
        }
        let mut cells = Vec::with_capacity(n);
        for (c, span) in spans.iter().enumerate() {
            let cell = match span {
                None => "",
                Some((s, _)) if c == n - 1 && !padded => line.get(*s..)?,
                Some((s, e)) => line.get(*s..*e)?,
            };
            // A multi-word header over a multi-word cell: the header's single spaces may
            // have been column gaps after all.
            if words[c].2.contains(' ') && cell.split_whitespace().count() >= 2 {
                return None;
            }
            cells.push(cell.to_owned());
        }
        records.push(record(&header, cells));
    }
    Found::text(records, "fixed_width")
}
