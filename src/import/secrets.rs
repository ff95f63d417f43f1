//! Credential detection for `loom import`: whether a value (a token's shape, a URL's password,
//! a bearer string) or a name (`GITHUB_TOKEN`, `--api-key`) says it is a secret, which command
//! line arguments hold one, and a URL with its secrets removed. It decides; it writes nothing.

use crate::intercept::redact::redact_str;

/// What replaces a credential in a block kept commented out.
pub(super) const REMOVED: &str = "<credential removed>";

/// Whether a value says it is a credential: loom's redaction masks something in it (a known
/// token shape, a bearer string, a URL's password or secret query parameter, `password=…`).
pub(super) fn secret_value(value: &str) -> bool {
    redact_str(value) != value || reqwest::Url::parse(value).is_ok_and(|u| u.password().is_some())
}

/// Whether an environment variable, flag or header name says it holds a credential: one of
/// its words (split at `_`, `-` and camelCase) is a secret's (`GITHUB_TOKEN`, `--api-key`,
/// `apiKey`), unless the name is about one rather than one itself (`--no-auth`,
/// `--key-file`, `TOKEN_ENV`, `SESSION_TIMEOUT`); `MAX_TOKENS`, `AUTHOR` and `MONKEY` are not.
pub(super) fn looks_secret(name: &str) -> bool {
    const SECRET: &[&str] = &[
        "KEY",
        "APIKEY",
        "TOKEN",
        "SECRET",
        "SECRETS",
        "PASSWORD",
        "PASSWD",
        "PASS",
        "PWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "CREDENTIALS",
        "AUTH",
        "COOKIE",
        "DSN",
        "JWT",
        "PAT",
        "SESSION",
    ];
    const ABOUT_ONE: &[&str] = &[
        "FILE", "PATH", "DIR", "ENV", "TYPE", "MODE", "NAME", "TIMEOUT", "ID", "URL", "HOST",
        "PORT", "USER", "USERNAME", "METHOD", "PROVIDER", "HEADER", "VAR", "COMMAND", "CMD",
    ];
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        word.push(c.to_ascii_uppercase());
    }
    words.extend((!word.is_empty()).then_some(word));
    let (Some(first), Some(last)) = (words.first(), words.last()) else {
        return false;
    };
    if ["NO", "DISABLE", "SKIP", "WITHOUT"].contains(&first.as_str())
        || ABOUT_ONE.contains(&last.as_str())
    {
        return false;
    }
    words.iter().any(|w| SECRET.contains(&w.as_str()))
}

/// A value no one keeps secret: empty, a number, a yes or no, or a path (a key's file, not the
/// key).
pub(super) fn harmless(value: &str) -> bool {
    let v = value.trim();
    v.is_empty()
        || v.parse::<f64>().is_ok()
        || ["true", "false", "yes", "no", "on", "off", "none"]
            .iter()
            .any(|w| v.eq_ignore_ascii_case(w))
        || ["/", "./", "../", "~/"].iter().any(|p| v.starts_with(p))
}

/// The args that hold a credential, with why: a value whose shape says so (`ghp_…`, a URL
/// with a password), `--token=…` or `API_KEY=…` (docker's `-e`) with a value, an
/// `Authorization: …` header, or the value after `--token`. A `${VAR}` is not a credential
/// (the shell fills it in), but a default written after it is.
pub(super) fn secret_args(args: &[String]) -> Vec<(usize, &'static str)> {
    let mut found = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| args[p].as_str());
        if let Some(why) = secret_arg(prev, a) {
            found.push((i, why));
        }
    }
    found
}

fn secret_arg(prev: Option<&str>, arg: &str) -> Option<&'static str> {
    let seen = without_references(arg);
    let setting = seen.split_once('=').filter(|(k, _)| {
        let name = k.trim_start_matches('-');
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
    });
    if let Some((k, v)) = setting {
        return if secret_value(v) {
            Some("a secret-looking value")
        } else if looks_secret(k) && !harmless(v) {
            Some("a secret-named setting")
        } else {
            None
        };
    }
    // `Name: value`, not a URL's `scheme://`.
    let header = seen.split_once(':').filter(|(name, value)| {
        !name.is_empty()
            && !value.starts_with("//")
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    });
    if let Some((name, value)) = header {
        let token = value
            .trim()
            .split_once(' ')
            .map_or(value.trim(), |(_, t)| t.trim());
        return if (name.eq_ignore_ascii_case("authorization") || looks_secret(name))
            && !token.is_empty()
            || secret_value(value)
        {
            Some("a credential header")
        } else {
            None
        };
    }
    if secret_value(&seen) {
        return Some("a secret-looking value");
    }
    let after_secret_flag = prev
        .is_some_and(|p| p.starts_with('-') && !p.contains('=') && looks_secret(p))
        && !arg.starts_with("--");
    (after_secret_flag && !harmless(&seen)).then_some("the value of a secret-named flag")
}

/// `text` as a reader sees what it holds: each `${VAR}` gone (the shell fills it in), a
/// default written after one (`${VAR:-default}`) kept.
fn without_references(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        out.push_str(&rest[..start]);
        let inner = &rest[start + 2..start + len];
        if let Some((_, default)) = inner.split_once(":-") {
            out.push_str(default);
        }
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    out
}

/// A URL with its user information and secrets replaced.
pub(super) fn redact_url(url: &str) -> String {
    let masked = redact_str(url);
    match reqwest::Url::parse(&masked) {
        Ok(mut u) if !u.username().is_empty() || u.password().is_some() => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.to_string()
        }
        _ => masked,
    }
}
