//! Redaction of tool arguments before they are stored as provenance: secrets never reach the
//! store, the envelope or the model. Keys that name a secret lose their value; values that look
//! like one (JWTs, `sk-…`, `ghp_…`, bearer strings, credentials in URLs) are masked wherever
//! they appear.

use regex::Regex;
use serde_json::{Map, Value};
use std::sync::LazyLock;

pub const MASK: &str = "[redacted]";

const SECRET_KEYS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "pwd",
    "key",
    "apikey",
    "api_key",
    "authorization",
    "auth",
    "cookie",
    "credential",
    "session",
    "private",
    "signature",
    "bearer",
    "access_token",
    "refresh_token",
    "client_secret",
];

fn secret_key(k: &str) -> bool {
    let k = k.to_lowercase();
    let k = k.replace(['-', ' '], "_");
    SECRET_KEYS.iter().any(|s| {
        k == *s
            || k.ends_with(&format!("_{s}"))
            || k.starts_with(&format!("{s}_"))
            || (s.len() > 4 && k.contains(s))
    })
}

static VALUE_PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}",
        r"\bsk-[A-Za-z0-9_-]{16,}",
        r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{16,}",
        r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
        r"\bAKIA[0-9A-Z]{16}\b",
        r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}",
        r"(?i)\bbasic\s+[A-Za-z0-9+/=]{8,}",
    ]
    .iter()
    .filter_map(|p| Regex::new(p).ok())
    .collect()
});

/// `scheme://user:pass@host` and `?token=…` style query parameters.
static URL_USERINFO: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@").ok());
static URL_QUERY_SECRET: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)([?&](?:access_token|token|api_key|apikey|key|secret|password|sig|signature|auth)=)[^&#\s]+").ok()
});

pub fn redact_str(s: &str) -> String {
    let mut out = s.to_owned();
    for re in VALUE_PATTERNS.iter() {
        out = re.replace_all(&out, MASK).into_owned();
    }
    if let Some(re) = URL_USERINFO.as_ref() {
        out = re.replace_all(&out, format!("${{1}}{MASK}@")).into_owned();
    }
    if let Some(re) = URL_QUERY_SECRET.as_ref() {
        out = re.replace_all(&out, format!("${{1}}{MASK}")).into_owned();
    }
    out
}

/// A copy of `v` with secrets masked.
pub fn redact(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, val) in m {
                let masked = if secret_key(k) && !val.is_null() && !val.is_object() {
                    Value::String(MASK.into())
                } else {
                    redact(val)
                };
                out.insert(k.clone(), masked);
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(redact).collect()),
        Value::String(s) => Value::String(redact_str(s)),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_and_values() {
        let args = json!({
            "query": "select 1",
            "api_key": "abc",
            "Authorization": "Bearer abcdefghijklmnop",
            "nested": { "password": "hunter2", "limit": 5 },
            "url": "https://bob:s3cret@example.com/x?page=2&access_token=zzz",
            "note": "use sk-ABCDEFGHIJKLMNOPQRSTUV and ghp_abcdefghijklmnopqrstuv please",
            "jwt": "eyJhbGciOi.eyJzdWIiOiIx.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        });
        let r = redact(&args);
        let text = r.to_string();
        for secret in [
            "abc\"",
            "abcdefghijklmnop",
            "hunter2",
            "s3cret",
            "zzz",
            "sk-ABCD",
            "ghp_abcd",
            "SflKx",
        ] {
            assert!(!text.contains(secret), "{secret} leaked: {text}");
        }
        assert_eq!(r["query"], "select 1");
        assert_eq!(r["nested"]["limit"], 5);
        assert!(r["url"].as_str().unwrap().contains("page=2"));
    }
}
