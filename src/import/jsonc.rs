//! JSON with comments and trailing commas (VS Code's `mcp.json`) made plain JSON, with the
//! text inside strings copied exactly as it is.

/// JSON with comments (`//`, `/* */`) and trailing commas, as VS Code writes it, made JSON.
/// Strings are copied as they are; an unterminated comment or string ends the text.
pub fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push('"');
                while let Some(s) = chars.next() {
                    out.push(s);
                    match s {
                        '\\' => {
                            if let Some(esc) = chars.next() {
                                out.push(esc);
                            }
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '/' if skip_comment(&mut chars) => out.push('\n'),
            ',' => {
                // A comma followed only by space and comments before `}` or `]` is dropped.
                if !matches!(next_significant(chars.clone()), Some('}' | ']')) {
                    out.push(',');
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// After a `/`: skips the comment it starts (`//` to the end of its line, `/*` to `*/`);
/// false, having taken nothing, when it starts none.
fn skip_comment(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> bool {
    match chars.peek() {
        Some('/') => {
            chars.find(|s| *s == '\n');
            true
        }
        Some('*') => {
            chars.next();
            let mut prev = '\0';
            for s in chars.by_ref() {
                if prev == '*' && s == '/' {
                    break;
                }
                prev = s;
            }
            true
        }
        _ => false,
    }
}

/// The next character that is neither space nor inside a comment.
fn next_significant(mut chars: std::iter::Peekable<std::str::Chars<'_>>) -> Option<char> {
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '/' if skip_comment(&mut chars) => {}
            c => return Some(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;

    /// Text that is mostly what JSONC is made of: strings, slashes, stars and commas.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof!["\\PC{0,12}", "[a-z/*,\"\\\\ \\n]{0,16}"]
    }

    #[test]
    fn strip_jsonc_keeps_strings_whole() {
        let src =
            "{\"a\": \"x // y /* z */ ,}\", // c\n \"b\": [1, 2, /* d */ ], \"e\": \"\\\"//\",}";
        let v: Value = serde_json::from_str(&strip_jsonc(src)).expect("json");
        assert_eq!(v["a"], "x // y /* z */ ,}");
        assert_eq!(v["b"], serde_json::json!([1, 2]));
        assert_eq!(v["e"], "\"//");
    }

    proptest! {
        /// Comments never change what valid JSON means.
        #[test]
        fn plain_json_passes_unchanged(v in prop::collection::btree_map(text(), text(), 0..6)) {
            let text = serde_json::to_string_pretty(&v).unwrap();
            let back: std::collections::BTreeMap<String, String> =
                serde_json::from_str(&strip_jsonc(&text)).unwrap();
            prop_assert_eq!(back, v);
        }
    }
}
