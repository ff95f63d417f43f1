//! Text written by others (cell values, column names, tool results, server stderr, engine
//! errors) on its way to a person's terminal outside ratatui. A terminal obeys the control
//! characters in what it prints: an OSC 52 sequence writes the clipboard, OSC 2 retitles the
//! window, CSI sequences clear the screen or move the cursor, and a pasted `ESC[201~` ends a
//! bracketed paste early. Every human-facing output of the command line goes through this one
//! module, so it is escaped the same way everywhere; the clipboard strips instead of escaping.
//! This module never decides *whether* stdout is a terminal for its callers beyond
//! [`Sink`]: byte-faithful output to a file or a pipe is the caller's promise to keep.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether a terminal could act on `c`, or draw text in an order other than the bytes say:
/// C0 and C1 controls and DEL (`char::is_control`), plus the Unicode bidirectional embedding,
/// override and isolate controls that reorder what is shown ("Trojan Source"), and the
/// direction marks (U+200E, U+200F, U+061C), which move neutral characters across a line.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}'
        )
}

fn escaped(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| is_unsafe(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if !is_unsafe(c) || keep(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{1b}' => out.push_str("\\e"),
            // Writing to a String cannot fail.
            _ => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    Cow::Owned(out)
}

/// One line of output (a table cell, a column name, a status line): every unsafe character,
/// newlines and tabs included, shown as a visible escape (`\e`, `\n`, `\u{9b}`).
pub fn line(s: &str) -> Cow<'_, str> {
    escaped(s, |_| false)
}

/// Multi-line text (an error message, a CSV record): newlines and tabs stay, every other
/// unsafe character is shown as a visible escape.
pub fn text(s: &str) -> Cow<'_, str> {
    escaped(s, |c| c == '\n' || c == '\t')
}

/// Serialized JSON for a terminal: serde_json already escapes C0 controls inside strings, but
/// not DEL, C1 controls or bidi controls; those become `\uXXXX` escapes, so the text stays
/// valid JSON with the same value. Unsafe characters can only occur inside JSON strings.
pub fn json(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if is_unsafe(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{:04x}", u);
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Text for the clipboard: unsafe characters are removed (a pasted `ESC[201~` would end a
/// bracketed paste and run what follows), newlines and tabs stay so rows paste as rows.
pub fn strip(s: &str) -> Cow<'_, str> {
    let keep = |c: char| !is_unsafe(c) || c == '\n' || c == '\t';
    if s.chars().all(keep) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(s.chars().filter(|&c| keep(c)).collect())
}

/// How loom's log formats the fields of every line (the message included), on a terminal and
/// in a log file alike: each value passes through [`line`], so a server's stderr, a tool's
/// name or an engine error quoted in a log line can neither move the cursor (`\r`, CSI),
/// reorder the line (bidi controls), nor forge a line of its own (`\n`). Escaping here, where
/// every line is written, leaves no call site to forget.
pub fn log_fields() -> impl for<'w> tracing_subscriber::fmt::FormatFields<'w> + Send + Sync + 'static
{
    use tracing_subscriber::field::MakeExt;
    tracing_subscriber::fmt::format::debug_fn(|w, field, value| {
        let shown = format!("{value:?}");
        let shown = line(&shown);
        if field.name() == "message" {
            write!(w, "{shown}")
        } else {
            write!(w, "{}={shown}", field.name())
        }
    })
    .delimited(" ")
}

/// Where machine-readable output (CSV, JSON) goes: a terminal gets it escaped, anything else
/// (a file, a pipe) gets the exact bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    Terminal,
    Faithful,
}

impl Sink {
    /// Decided from the kernel's answer for stdout, never from the environment.
    pub fn stdout() -> Sink {
        use std::io::IsTerminal;
        if std::io::stdout().is_terminal() {
            Sink::Terminal
        } else {
            Sink::Faithful
        }
    }

    /// A CSV record for this sink.
    pub fn csv<'a>(&self, record: &'a str) -> Cow<'a, str> {
        match self {
            Sink::Terminal => text(record),
            Sink::Faithful => Cow::Borrowed(record),
        }
    }

    /// A serialized JSON value for this sink.
    pub fn json<'a>(&self, value: &'a str) -> Cow<'a, str> {
        match self {
            Sink::Terminal => json(value),
            Sink::Faithful => Cow::Borrowed(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn escapes_are_visible_and_lines_stay_lines() {
        let hostile = "a\u{1b}]52;c;cHdu\u{7}b\u{1b}[2J\r\n\tc\u{9b}31m\u{7f}\u{202e}d";
        assert_eq!(
            line(hostile),
            "a\\e]52;c;cHdu\\u{7}b\\e[2J\\r\\n\\tc\\u{9b}31m\\u{7f}\\u{202e}d"
        );
        // The direction marks, which reorder neutral characters, are shown too.
        assert_eq!(
            line("a\u{200e}b\u{200f}c\u{61c}"),
            "a\\u{200e}b\\u{200f}c\\u{61c}"
        );
        assert_eq!(
            text(hostile),
            "a\\e]52;c;cHdu\\u{7}b\\e[2J\\r\n\tc\\u{9b}31m\\u{7f}\\u{202e}d"
        );
        assert_eq!(strip(hostile), "a]52;c;cHdub[2J\n\tc31md");
        assert!(matches!(line("plain 日本語 ✓"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_for_a_terminal_keeps_its_value() {
        let value = serde_json::json!({ "k\u{9b}": "x\u{1b}[2J\u{202e}\u{7f}😀" });
        let raw = value.to_string();
        let shown = json(&raw);
        assert!(!shown.chars().any(is_unsafe), "{shown}");
        let back: serde_json::Value = serde_json::from_str(&shown).expect("still JSON");
        assert_eq!(back, value);
    }

    /// Everything one log line writes, through the formatter `loom` installs.
    fn logged(emit: impl FnOnce()) -> String {
        #[derive(Clone, Default)]
        struct Buffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
        impl std::io::Write for Buffer {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buffer = Buffer::default();
        let sink = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .fmt_fields(log_fields())
            .with_ansi(false)
            .with_writer(move || sink.clone())
            .finish();
        tracing::subscriber::with_default(subscriber, emit);
        String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn a_log_line_shows_a_servers_controls_as_escapes() {
        let stderr =
            "AAA\rSPOOF\u{8}\u{9b}31m\u{202e}RLO\u{2066}\u{200f}Z\u{7f}\u{1b}[31mESC\nforged";
        let out = logged(|| {
            let span = tracing::info_span!("server", name = %"x\u{202e}");
            let _g = span.enter();
            tracing::warn!(detail = %stderr, "server failed (last stderr: {stderr})");
        });
        assert_eq!(out.matches('\n').count(), 1, "{out:?}");
        assert!(out.contains("last stderr: AAA\\rSPOOF\\u{8}\\u{9b}31m\\u{202e}RLO\\u{2066}\\u{200f}Z\\u{7f}\\e[31mESC\\nforged)"), "{out}");
        assert!(out.contains("detail=AAA\\r"), "{out}");
        assert!(out.contains("name=x\\u{202e}"), "{out}");
    }

    proptest! {
        #[test]
        fn no_log_line_carries_an_unsafe_character(s in any::<String>()) {
            let out = logged(|| tracing::warn!(field = %s, quoted = ?s, "{s}"));
            let body = out.strip_suffix('\n').unwrap_or(&out);
            prop_assert!(!body.chars().any(is_unsafe), "{:?}", out);
        }

        #[test]
        fn no_unsafe_character_survives(s in any::<String>()) {
            prop_assert!(!line(&s).chars().any(is_unsafe));
            prop_assert!(!text(&s).chars().any(|c| is_unsafe(c) && c != '\n' && c != '\t'));
            prop_assert!(!strip(&s).chars().any(|c| is_unsafe(c) && c != '\n' && c != '\t'));
            let raw = serde_json::Value::String(s.clone()).to_string();
            let shown = json(&raw);
            prop_assert!(!shown.chars().any(is_unsafe));
            let back: String = serde_json::from_str(&shown).expect("still JSON");
            prop_assert_eq!(back, s);
        }
    }
}
