//! `${VAR}` in a client's config: which variable a value names, what is left unexpanded, and a
//! command line rewritten as one `sh -c` line that expands the variables the way the client
//! did (and nothing else). A `${…}` only the client can fill in is reported, not guessed.

use crate::config::valid_env_name;
use std::fmt::Write as _;

/// How a command line with `${…}` in it is served.
pub(super) enum Expansion {
    /// Nothing to expand.
    None,
    /// `sh -c LINE`, which expands `vars` from the environment as the client did.
    Shell { line: String, vars: Vec<String> },
    /// A `${…}` that names no environment variable (VS Code's `${input:…}`).
    Unknown(String),
}

pub(super) fn expand_with_shell(command: &str, args: &[String]) -> Expansion {
    if unexpanded(command).is_none() && args.iter().all(|a| unexpanded(a).is_none()) {
        return Expansion::None;
    }
    let mut vars = Vec::new();
    let mut words = Vec::new();
    for w in std::iter::once(command).chain(args.iter().map(String::as_str)) {
        match shell_word(w, &mut vars) {
            Ok(word) => words.push(word),
            Err(unknown) => return Expansion::Unknown(unknown),
        }
    }
    Expansion::Shell {
        line: format!("exec {}", words.join(" ")),
        vars,
    }
}

/// `text` as one `sh` word: literal parts single-quoted, each `${VAR}` (also `${env:VAR}`,
/// `${VAR:-plain default}`, VS Code's `${userHome}`) double-quoted so the shell expands it and
/// nothing else. Err: a `${…}` that is none of those.
fn shell_word(text: &str, vars: &mut Vec<String>) -> Result<String, String> {
    let mut word = String::new();
    let mut rest = text;
    let literal = |s: &str, word: &mut String| {
        if !s.is_empty() {
            word.push('\'');
            word.push_str(&s.replace('\'', r"'\''"));
            word.push('\'');
        }
    };
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        literal(&rest[..start], &mut word);
        let whole = &rest[start..start + len + 1];
        let inner = &whole[2..whole.len() - 1];
        let inner = inner.strip_prefix("env:").unwrap_or(inner);
        let inner = if inner == "userHome" { "HOME" } else { inner };
        let (var, default) = match inner.split_once(":-") {
            Some((v, d)) => (v, Some(d)),
            None => (inner, None),
        };
        let plain_default = default.is_none_or(|d| {
            d.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._/:@+,=-".contains(c))
        });
        if !valid_env_name(var) || !plain_default {
            return Err(whole.to_owned());
        }
        match default {
            Some(d) => {
                let _ = write!(word, "\"${{{var}:-{d}}}\"");
            }
            None => {
                let _ = write!(word, "\"${{{var}}}\"");
            }
        }
        if !vars.iter().any(|v| v == var) {
            vars.push(var.to_owned());
        }
        rest = &rest[start + len + 1..];
    }
    literal(rest, &mut word);
    if word.is_empty() {
        word.push_str("''");
    }
    Ok(word)
}

/// `${VAR}`, `${env:VAR}` or `$VAR` standing alone: the variable it names.
pub(super) fn reference(value: &str) -> Option<String> {
    let v = value.trim();
    let inner = v
        .strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .map(|r| r.strip_prefix("env:").unwrap_or(r))
        .or_else(|| v.strip_prefix('$'))?;
    // `${VAR:-default}` keeps the variable; its default is for the client's shell only.
    let var = inner.split(":-").next().unwrap_or(inner);
    valid_env_name(var).then(|| var.to_owned())
}

/// A `${…}` left in a value (loom passes values as they are).
pub(super) fn unexpanded(value: &str) -> Option<String> {
    let start = value.find("${")?;
    let end = value[start..].find('}').map(|e| start + e + 1)?;
    Some(value[start..end].to_owned())
}
