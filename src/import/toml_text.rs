//! TOML text for `loom import`: basic strings, keys and lists written so the file reads as it
//! means (everything a terminal could act on escaped), and comment lines kept to one line.

use crate::terminal_text;
use std::fmt::Write as _;

/// A TOML basic string: quotes, backslashes and every character a terminal could act on
/// (controls, bidirectional overrides) escaped, so the file reads as it means.
pub(super) fn quoted(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\t' => o.push_str("\\t"),
            '\r' => o.push_str("\\r"),
            c if c.is_control() || terminal_text::is_unsafe(c) => {
                let _ = write!(o, "\\u{:04X}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A TOML key: bare when it can be.
pub(super) fn key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_owned()
    } else {
        quoted(k)
    }
}

pub(super) fn list(items: &[String]) -> String {
    let q: Vec<String> = items.iter().map(|s| quoted(s)).collect();
    format!("[{}]", q.join(", "))
}

/// Text for a comment line: line breaks become spaces, and what a terminal could act on is
/// escaped.
pub(super) fn one_line(s: &str) -> String {
    terminal_text::line(s).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_strings_read_back_as_written() {
        for s in [
            "\"",
            "a\\b",
            "line\nbreak\ttab",
            "\u{7f}\u{1b}[31m",
            "日本語 ✓",
            "'single'",
            "\"\"\"",
        ] {
            let t: toml::Table = format!("k = {}", quoted(s)).parse().expect(s);
            assert_eq!(t["k"].as_str(), Some(s));
        }
    }
}
