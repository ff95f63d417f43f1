//! Markdown (GFM) tables: a header row, a delimiter row (cells of dashes, each with an optional
//! alignment colon at either end: `---`, `:--`, `--:`, `:-:`), and rows with as many cells.
//! Leading and trailing pipes are optional and `\|` is a pipe inside a cell. The delimiter row
//! anchors the table, so a title line with a pipe in it is not mistaken for the header. A few
//! short lines around the table (a title, a closing count) are kept as context; a table lost in
//! prose is not a table. Cells, the header's included, are read as markdown inline text, as a
//! renderer would show them: a backslash before ASCII punctuation escapes it (`customer\_id`
//! is `customer_id`), a code span is its content, and an entity reference (`&amp;`, `&#123;`,
//! `&#x1F600;`) is the character it names. Emphasis and links stay as written.

use super::{Found, Records, good_header, lines, record};
use crate::intercept::table::Tier;
use serde_json::{Map, Value};

/// Lines at most before or after the table that are kept as context.
const AROUND_LINES: usize = 3;

/// The cells of a table row, as markdown; `None` for a line with no unescaped pipe (not a
/// row). `\|` is a pipe inside a cell; `\\` is kept whole, so the backslash it stands for
/// escapes nothing after it.
fn raw_cells(line: &str) -> Option<Vec<String>> {
    let t = line.trim();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut pipes = 0;
    // Whether the row's last character was an unescaped pipe, which only closes the row.
    let mut closed = false;
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        closed = false;
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '\\' if chars.peek() == Some(&'\\') => {
                cur.push_str("\\\\");
                chars.next();
            }
            '|' => {
                pipes += 1;
                closed = true;
                out.push(std::mem::take(&mut cur).trim().to_owned());
            }
            c => cur.push(c),
        }
    }
    if pipes == 0 {
        return None;
    }
    out.push(cur.trim().to_owned());
    // An unescaped pipe at either end only opens or closes the row: it leaves an empty first
    // or last piece, which is not a cell.
    if t.starts_with('|') {
        out.remove(0);
    }
    if closed && !out.is_empty() {
        out.pop();
    }
    Some(out)
}

/// The cells of a table row as the text they show.
fn cells(line: &str) -> Option<Vec<String>> {
    Some(raw_cells(line)?.iter().map(|c| inline_text(c)).collect())
}

/// A cell's markdown as the text it shows: backslash escapes, code spans and entity
/// references resolved (CommonMark 6.1, 6.2, 2.4); everything else as written.
pub(super) fn inline_text(md: &str) -> String {
    let b = md.as_bytes();
    let mut out = String::with_capacity(md.len());
    let mut i = 0;
    while i < md.len() {
        match b[i] {
            b'\\' if b.get(i + 1).is_some_and(u8::is_ascii_punctuation) => {
                out.push(char::from(b[i + 1]));
                i += 2;
            }
            b'`' => {
                let run = b[i..].iter().take_while(|&&c| c == b'`').count();
                match code_span(md, i, run) {
                    Some((content, end)) => {
                        out.push_str(&content);
                        i = end;
                    }
                    None => {
                        // No closing run of the same length: the backticks are literal.
                        out.push_str(&md[i..i + run]);
                        i += run;
                    }
                }
            }
            b'&' => match entity(&md[i..]) {
                Some((c, len)) => {
                    out.push_str(&c);
                    i += len;
                }
                None => {
                    out.push('&');
                    i += 1;
                }
            },
            _ => {
                // Copy up to the next byte that may start a construct; those are all ASCII, so
                // the cut is on a character boundary.
                let next = b[i + 1..]
                    .iter()
                    .position(|c| matches!(c, b'\\' | b'`' | b'&'))
                    .map_or(md.len(), |p| i + 1 + p);
                out.push_str(&md[i..next]);
                i = next;
            }
        }
    }
    out
}

/// The code span opened by `run` backticks at `start`: its content and where it ends. The
/// span closes at the next run of exactly as many backticks; one space is stripped from each
/// end when both ends have one and the content is not all spaces.
fn code_span(md: &str, start: usize, run: usize) -> Option<(String, usize)> {
    let b = md.as_bytes();
    let open_end = start + run;
    let mut j = open_end;
    while j < b.len() {
        if b[j] == b'`' {
            let len = b[j..].iter().take_while(|&&c| c == b'`').count();
            if len == run {
                let content = md.get(open_end..j)?;
                let stripped = if content.len() >= 2
                    && content.starts_with(' ')
                    && content.ends_with(' ')
                    && !content.bytes().all(|c| c == b' ')
                {
                    &content[1..content.len() - 1]
                } else {
                    content
                };
                return Some((stripped.to_owned(), j + len));
            }
            j += len;
        } else {
            j += 1;
        }
    }
    None
}

/// Named entities a table cell is likely to hold; an unknown name stays as written.
const ENTITIES: &[(&str, &str)] = &[
    ("amp", "&"),
    ("lt", "<"),
    ("gt", ">"),
    ("quot", "\""),
    ("apos", "'"),
    ("nbsp", "\u{a0}"),
    ("copy", "©"),
    ("reg", "®"),
    ("trade", "™"),
    ("hellip", "…"),
    ("mdash", "—"),
    ("ndash", "–"),
    ("lsquo", "‘"),
    ("rsquo", "’"),
    ("ldquo", "“"),
    ("rdquo", "”"),
    ("laquo", "«"),
    ("raquo", "»"),
    ("euro", "€"),
    ("pound", "£"),
    ("yen", "¥"),
    ("cent", "¢"),
    ("sect", "§"),
    ("para", "¶"),
    ("deg", "°"),
    ("plusmn", "±"),
    ("times", "×"),
    ("divide", "÷"),
    ("middot", "·"),
    ("bull", "•"),
    ("micro", "µ"),
    ("shy", "\u{ad}"),
];

/// The entity reference at the start of `s` (`&name;`, `&#NNN;`, `&#xHH;`): its text and
/// length. Numeric references to no character (0, surrogates, past U+10FFFF) are U+FFFD.
fn entity(s: &str) -> Option<(String, usize)> {
    let body = s.strip_prefix('&')?;
    let end = body.find(';')?;
    let name = body.get(..end)?;
    let len = end + 2;
    if let Some(num) = name.strip_prefix('#') {
        let (digits, radix, max) = match num.strip_prefix(['x', 'X']) {
            Some(hex) => (hex, 16, 6),
            None => (num, 10, 7),
        };
        if digits.is_empty() || digits.len() > max || !digits.chars().all(|c| c.is_digit(radix)) {
            return None;
        }
        let code = u32::from_str_radix(digits, radix).ok()?;
        let c = char::from_u32(code)
            .filter(|&c| c != '\0')
            .unwrap_or('\u{fffd}');
        return Some((c.to_string(), len));
    }
    ENTITIES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| ((*t).to_owned(), len))
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

/// A heading line's text (`## orders`), or `None` for any other line.
fn heading(line: &str) -> Option<String> {
    let t = line.trim();
    let level = t.bytes().take_while(|&b| b == b'#').count();
    let rest = t.get(level..)?;
    if !(1..=6).contains(&level) || !rest.starts_with(' ') {
        return None;
    }
    let name = inline_text(rest.trim().trim_end_matches('#').trim());
    (!name.is_empty()).then_some(name)
}

/// Tables under headings, one each (markitdown's workbook: `## orders`, its table, `##
/// customers`, its table), named by their headings. `None` unless there are two or more and
/// every line is a heading, a line of a table or blank: text between them would be lost.
pub(super) fn sections(text: &str) -> Option<Vec<(String, Found)>> {
    let mut parts: Vec<(String, Vec<&str>)> = Vec::new();
    for line in text.lines() {
        if let Some(name) = heading(line) {
            parts.push((name, Vec::new()));
        } else if let Some((_, body)) = parts.last_mut() {
            body.push(line);
        } else if !line.trim().is_empty() {
            return None;
        }
    }
    if parts.len() < 2 {
        return None;
    }
    parts
        .into_iter()
        .map(|(name, body)| {
            let found = parse(&body.join("\n"))?;
            // Every line of the section is the table's: no text around it to lose.
            if !found.context().is_empty() {
                return None;
            }
            Some((name, found))
        })
        .collect()
}
