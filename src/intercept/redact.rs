//! Redaction of tool arguments before they are stored as provenance or kept in the call log:
//! secrets never reach the store, the envelope, the model or an attached workbench.
//!
//! Three rules, applied together, failing closed (a false alarm costs a masked value, a miss
//! costs a secret):
//! - a key that names a secret loses everything beneath it (every leaf of a nested value);
//!   so does the value of a header pair (`["Authorization", "…"]`, `{"name": "Cookie",
//!   "value": "…"}`);
//! - a string that holds JSON is parsed and redacted as JSON (a request body inside an
//!   argument), then written back compact;
//! - in any other string, values that look like a secret are masked wherever they appear:
//!   token formats (JWTs, `sk-…`, `sk_live_…`, `ghp_…`, `glpat-…`, `xox?-…`, `AIza…`, AWS
//!   keys, PEM private keys), bearer/basic credentials, `user:pass@` in URLs, and
//!   `name=value` / `name: value` pairs whose name is a secret's (URL query parameters such as
//!   `client_secret=` or `X-Amz-Signature=`, `Password=` in connection strings, header lines).
//!
//! It must never panic on any input: every slice comes from a regex match or a parser.

use regex::{Captures, Regex};
use serde_json::{Map, Value};
use std::sync::LazyLock;

pub const MASK: &str = "[redacted]";
/// The replacements that keep a header's name and a URL's scheme ([`MASK`] after them).
const HEADER_MASKED: &str = "${1}[redacted]";
const USERINFO_MASKED: &str = "${1}[redacted]@";

/// How many levels of JSON-inside-a-string are unpacked; deeper strings get the text rules.
const MAX_STRING_JSON_DEPTH: usize = 4;

/// A key names a secret when it holds one of these anywhere (`refreshToken` lowercased to
/// `refreshtoken`), or has one of [`SECRET_KEYS_WORD`] as a word. Together they decide as the
/// tests' `SECRET_KEYS` rule does: its names longer than four characters match anywhere, and
/// one holding another (`access_token` holds `token`) is left to the one it holds.
const SECRET_KEYS_WITHIN: &[&[u8]] = &[
    b"token",
    b"secret",
    b"password",
    b"passwd",
    b"passphrase",
    b"apikey",
    b"api_key",
    b"authorization",
    b"cookie",
    b"credential",
    b"session",
    b"private",
    b"signature",
    b"bearer",
];

/// The first letters of [`SECRET_KEYS_WITHIN`]: where a name within may start.
const WITHIN_STARTS: [bool; 256] = {
    let mut starts = [false; 256];
    let mut i = 0;
    while i < SECRET_KEYS_WITHIN.len() {
        starts[SECRET_KEYS_WITHIN[i][0] as usize] = true;
        i += 1;
    }
    starts
};

/// Short names that mark a secret only as a word of a key (`db_pwd`, `key_id`, not `monkey`).
const SECRET_KEYS_WORD: &[&[u8]] = &[b"pwd", b"key", b"auth", b"sig"];

fn secret_key(k: &str) -> bool {
    // The key lowercased with `-`, ` ` and `.` as `_`: on the stack for a short ASCII key (this
    // runs for every key of every call's arguments), else as a string (a non-ASCII letter may
    // lowercase to an ASCII one: the Kelvin sign to `k`).
    let mut buf = [0u8; 64];
    if k.len() <= buf.len() && k.is_ascii() {
        let key = &mut buf[..k.len()];
        for (to, b) in key.iter_mut().zip(k.bytes()) {
            *to = match b {
                b'-' | b' ' | b'.' => b'_',
                b => b.to_ascii_lowercase(),
            };
        }
        return secret_key_normalised(key);
    }
    let k: String = k
        .chars()
        .flat_map(char::to_lowercase)
        .map(|c| if matches!(c, '-' | ' ' | '.') { '_' } else { c })
        .collect();
    secret_key_normalised(k.as_bytes())
}

/// [`secret_key`] of a key already lowercased and with `_` for its separators.
fn secret_key_normalised(k: &[u8]) -> bool {
    let word = |s: &[u8]| {
        k == s
            || k.strip_suffix(s).is_some_and(|rest| rest.ends_with(b"_"))
            || k.strip_prefix(s).is_some_and(|rest| rest.starts_with(b"_"))
    };
    SECRET_KEYS_WORD.iter().any(|s| word(s))
        || (0..k.len()).any(|i| {
            let rest = &k[i..];
            WITHIN_STARTS[usize::from(rest[0])]
                && SECRET_KEYS_WITHIN.iter().any(|s| rest.starts_with(s))
        })
}

/// Values that look like a secret wherever they stand.
const VALUE_PATTERNS_SOURCE: &[&str] = &[
    // PEM private keys, whole or cut off before their END line.
    r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----.*?(?:-----END [A-Z0-9 ]*-----|\z)",
    r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}",
    r"\bsk-[A-Za-z0-9_-]{16,}",
    r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}",
    r"\bwhsec_[A-Za-z0-9]{16,}",
    r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{16,}",
    r"\bglpat-[A-Za-z0-9_-]{16,}",
    r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
    r"\bAIza[0-9A-Za-z_-]{30,}",
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    r"\bnpm_[A-Za-z0-9]{30,}",
    r"\bhf_[A-Za-z0-9]{30,}",
    r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}",
    r"(?i)\bbasic\s+[A-Za-z0-9+/=]{8,}",
];

static VALUE_PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    VALUE_PATTERNS_SOURCE
        .iter()
        .filter_map(|p| Regex::new(p).ok())
        .collect()
});

/// `scheme://user:pass@host` (the user may be empty: `redis://:pass@host`).
const URL_USERINFO_SOURCE: &str = r"([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s:@]*:[^/\s@]+@";
static URL_USERINFO: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(URL_USERINFO_SOURCE).ok());

/// `name=value` or `name: value` where the name is a secret's, the name optionally quoted
/// (`"password": "…"` in JSON text that did not parse, `\"password\":\"…\"` escaped once more),
/// the value quoted or bare up to a delimiter. An authorization value keeps its scheme word
/// (`Token abc`) inside the match. The secret names are in the pattern itself, so an
/// innocent `name: value` never swallows a secret one after it. Narrower than [`secret_key`]:
/// in prose and SQL, `key = 5` or `auth: none` are not secrets.
const NAME_VALUE_SOURCE: &str = r#"(?ix)
        \b(?P<name>
            [a-z0-9_.-]*
            (?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key
              |authorization|credentials?|signature|cookie|session[_-]?id)
            [a-z0-9_.-]*
          | pwd | pass
          | [a-z0-9_.-]*[_-](?:key|sig)
        )
        (?P<sep>\\?["']?\s*[:=]\s*)
        (?P<value>
            \[redacted\]
          | \\"(?:[^"\\]|\\[^"])*\\"
          | "(?:[^"\\]|\\.)*"
          | '[^']*'
          | (?:(?:bearer|basic|token|digest|negotiate|apikey)\s+)?[^\s"',;&\#}\])<>]+
        )"#;
static NAME_VALUE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(NAME_VALUE_SOURCE).ok());

/// One URL query (or connection-string) parameter: `?name=value`, `&name=value`, `;name=value`.
/// A parameter is plainly a name, so the broad [`secret_key`] list applies (`key=`, `sig=`).
const QUERY_PARAM_SOURCE: &str = r"(?P<lead>[?&;])(?P<name>[^=&#;?\s]{1,64})=(?P<value>[^&#;\s]*)";
static QUERY_PARAM: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(QUERY_PARAM_SOURCE).ok());

/// The whole value of a header line (`Authorization: …`, `Cookie: …`) up to the line's end.
const HEADER_LINE_SOURCE: &str = r"(?im)^(\s*(?:proxy-authorization|authorization|cookie|set-cookie|x-api-key|api-key|x-auth-token|x-amz-security-token)\s*:[ \t]*)[^\r\n]+";
static HEADER_LINE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(HEADER_LINE_SOURCE).ok());

/// The longest text the one scan is tried on. Over every rule at once it cannot skip ahead to
/// a rule's fixed letters as each rule alone does, so a long text (a pasted file, a long
/// non-ASCII line) is quicker rule by rule; a small call's arguments are far below this.
const ONE_SCAN_MAX: usize = 4096;
/// Every text rule at once: a text none of them matches is left as it is after one scan
/// (the common case: a city, a path, a query), instead of one scan per rule. The rules apply
/// in turn and the first to change the text must match it as given, so this decides exactly.
/// `None` when it cannot be built, and then every rule is tried.
static ANY_RULE: LazyLock<Option<regex::RegexSet>> = LazyLock::new(|| {
    let fixed = [
        HEADER_LINE_SOURCE,
        URL_USERINFO_SOURCE,
        QUERY_PARAM_SOURCE,
        NAME_VALUE_SOURCE,
    ];
    regex::RegexSet::new(VALUE_PATTERNS_SOURCE.iter().chain(&fixed)).ok()
});

fn mask_value(caps: &Captures<'_>) -> String {
    let name = caps.name("name").map_or("", |m| m.as_str());
    let sep = caps.name("sep").map_or("", |m| m.as_str());
    let value = caps.name("value").map_or("", |m| m.as_str());
    let masked = if value.starts_with("\\\"") {
        format!("\\\"{MASK}\\\"")
    } else if value.starts_with('"') {
        format!("\"{MASK}\"")
    } else if value.starts_with('\'') {
        format!("'{MASK}'")
    } else {
        MASK.to_owned()
    };
    format!("{name}{sep}{masked}")
}

fn mask_param(caps: &Captures<'_>) -> String {
    let whole = caps.get(0).map_or("", |m| m.as_str());
    let lead = caps.name("lead").map_or("", |m| m.as_str());
    let name = caps.name("name").map_or("", |m| m.as_str());
    let value = caps.name("value").map_or("", |m| m.as_str());
    if value.is_empty() || !secret_key(name) {
        return whole.to_owned();
    }
    format!("{lead}{name}={MASK}")
}

/// `s` with every secret-looking value masked (the text rules only; see [`redact`]).
pub fn redact_str(s: &str) -> String {
    if s.len() <= ONE_SCAN_MAX && ANY_RULE.as_ref().is_some_and(|set| !set.is_match(s)) {
        return s.to_owned();
    }
    redact_each_rule(s)
}

/// [`redact_str`] without the one-scan check: each rule in turn.
fn redact_each_rule(s: &str) -> String {
    use std::borrow::Cow;
    // Each rule copies the text only when it masks something.
    let mut out: Cow<'_, str> = Cow::Borrowed(s);
    fn apply<'a>(out: Cow<'a, str>, re: &Regex, with: impl regex::Replacer) -> Cow<'a, str> {
        let changed = match re.replace_all(&out, with) {
            Cow::Borrowed(_) => None,
            Cow::Owned(changed) => Some(changed),
        };
        changed.map_or(out, Cow::Owned)
    }
    for re in VALUE_PATTERNS.iter() {
        out = apply(out, re, MASK);
    }
    if let Some(re) = HEADER_LINE.as_ref() {
        out = apply(out, re, HEADER_MASKED);
    }
    if let Some(re) = URL_USERINFO.as_ref() {
        out = apply(out, re, USERINFO_MASKED);
    }
    if let Some(re) = QUERY_PARAM.as_ref() {
        out = apply(out, re, mask_param);
    }
    if let Some(re) = NAME_VALUE.as_ref() {
        out = apply(out, re, mask_value);
    }
    out.into_owned()
}

/// Text that has been through redaction: only this module makes one, so a holder of it (the
/// call log) knows without looking again that it carries no secret.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Redacted(String);

impl Redacted {
    /// `v` redacted, as compact JSON.
    pub fn json(v: &Value) -> Redacted {
        Redacted(redact(v).to_string())
    }

    /// An object redacted, as compact JSON and as the value (for a reader of its parts),
    /// without a copy of the object made first (a call's params, on every call's path).
    pub fn object_and_value(m: &Map<String, Value>) -> (Redacted, Value) {
        let value = Value::Object(redact_object(m, 0));
        (Redacted(value.to_string()), value)
    }

    /// `text` redacted: as JSON when it is JSON, by the text rules otherwise.
    pub fn text(text: &str) -> Redacted {
        match serde_json::from_str::<Value>(text) {
            Ok(v) => Redacted::json(&v),
            Err(_) => Redacted(redact_str(text)),
        }
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

/// A copy of `v` with secrets masked.
pub fn redact(v: &Value) -> Value {
    redact_at(v, 0)
}

fn redact_at(v: &Value, depth: usize) -> Value {
    match v {
        Value::Object(m) => Value::Object(redact_object(m, depth)),
        Value::Array(a) => match a.as_slice() {
            // A header pair: ["Authorization", "Bearer …"].
            [Value::String(name), value] if secret_key(name) => {
                Value::Array(vec![Value::String(name.clone()), mask_all(value)])
            }
            _ => Value::Array(a.iter().map(|x| redact_at(x, depth)).collect()),
        },
        Value::String(s) => Value::String(redact_string(s, depth)),
        other => other.clone(),
    }
}

fn redact_object(m: &Map<String, Value>, depth: usize) -> Map<String, Value> {
    let pair_secret = header_pair_object(m);
    let mut out = Map::new();
    for (k, val) in m {
        let masked = if secret_key(k) || (pair_secret && is_value_field(k)) {
            mask_all(val)
        } else {
            redact_at(val, depth)
        };
        out.insert(redact_str(k), masked);
    }
    out
}

/// `{"name": "Authorization", "value": "…"}` and its spellings (HAR, fetch, k8s env).
fn header_pair_object(m: &Map<String, Value>) -> bool {
    ["name", "key", "header", "Name", "Key"]
        .iter()
        .filter_map(|f| m.get(*f).and_then(Value::as_str))
        .any(secret_key)
}

fn is_value_field(k: &str) -> bool {
    matches!(k, "value" | "Value" | "val" | "values")
}

/// A text as loom writes it to disk or shows it: JSON text (an object or array) redacted as
/// JSON, by key and by value as [`redact`] does; anything else by the text rules.
pub fn redact_text(s: &str) -> String {
    redact_string(s, 0)
}

/// A string that is itself JSON (an object or array) is redacted as JSON; anything else by
/// the text rules.
fn redact_string(s: &str, depth: usize) -> String {
    let t = s.trim_start();
    if depth < MAX_STRING_JSON_DEPTH
        && (t.starts_with('{') || t.starts_with('['))
        && let Ok(inner) = serde_json::from_str::<Value>(s)
    {
        return redact_at(&inner, depth + 1).to_string();
    }
    redact_str(s)
}

/// Every leaf under a secret key masked, the shape kept (so a reader sees what was there).
fn mask_all(v: &Value) -> Value {
    match v {
        Value::Null => Value::Null,
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (redact_str(k), mask_all(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(mask_all).collect()),
        _ => Value::String(MASK.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Names that mark a secret anywhere in a JSON key (as a word of it: `db_password`,
    /// `x-api-key`, `refreshToken` lowercased to `refreshtoken` matches by containment for the
    /// longer names).
    const SECRET_KEYS: &[&str] = &[
        "token",
        "secret",
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "key",
        "apikey",
        "api_key",
        "authorization",
        "auth",
        "cookie",
        "credential",
        "credentials",
        "session",
        "private",
        "signature",
        "sig",
        "bearer",
        "access_token",
        "refresh_token",
        "client_secret",
    ];

    /// The rule as first written (a copy of the key and two names made per name).
    fn secret_key_as_written(k: &str) -> bool {
        let k = k.to_lowercase().replace(['-', ' ', '.'], "_");
        SECRET_KEYS.iter().any(|s| {
            k == *s
                || k.ends_with(&format!("_{s}"))
                || k.starts_with(&format!("{s}_"))
                || (s.len() > 4 && k.contains(s))
        })
    }

    #[test]
    fn the_names_split_as_the_rule_reads_them() {
        // A name of four characters or fewer is a word of the key; a longer one may stand
        // anywhere, so a name holding another is decided by the one it holds.
        for s in SECRET_KEYS {
            let b = s.as_bytes();
            if b.len() <= 4 {
                assert!(SECRET_KEYS_WORD.contains(&b), "{s}");
            } else {
                assert!(
                    SECRET_KEYS_WITHIN
                        .iter()
                        .any(|w| b.windows(w.len()).any(|x| x == *w)),
                    "{s}"
                );
            }
        }
        for w in SECRET_KEYS_WITHIN.iter().chain(SECRET_KEYS_WORD) {
            assert!(SECRET_KEYS.iter().any(|s| s.as_bytes() == *w));
        }
        // Longer keys and non-ASCII ones go the other way.
        assert!(secret_key(&format!("{}_token", "x".repeat(70))));
        assert!(secret_key("\u{212A}EY"));
        assert!(!secret_key("monkey"));
    }

    #[test]
    fn the_masks_keep_what_they_say() {
        assert_eq!(HEADER_MASKED, format!("${{1}}{MASK}"));
        assert_eq!(USERINFO_MASKED, format!("${{1}}{MASK}@"));
    }

    proptest::proptest! {
        #[test]
        fn a_secret_key_is_decided_as_the_rule_was_written(
            k in "(?i)[a-z_. \\-]{0,6}(token|secret|pwd|key|auth|sig|session|x|İ|ß|K|password|passwd|passphrase|apikey|api_key|api-key|authorization|cookie|credentials|private|signature|bearer|access_token|refresh_token|client_secret)?[a-z_. \\-]{0,6}"
        ) {
            proptest::prop_assert_eq!(secret_key(&k), secret_key_as_written(&k), "{:?}", k);
        }

        #[test]
        fn any_key_is_decided_as_the_rule_was_written(k in "\\PC{0,24}") {
            proptest::prop_assert_eq!(secret_key(&k), secret_key_as_written(&k), "{:?}", k);
        }

        /// The one scan over every rule leaves a text as it is only where the rules in turn
        /// would: texts made of pieces of secrets, names, separators and plain words.
        #[test]
        fn the_one_scan_decides_as_the_rules_in_turn(
            parts in proptest::collection::vec(proptest::prop_oneof![
                proptest::strategy::Just("password".to_owned()),
                proptest::strategy::Just("Bearer ".to_owned()),
                proptest::strategy::Just("sk-".to_owned()),
                proptest::strategy::Just("eyJ".to_owned()),
                proptest::strategy::Just("https://".to_owned()),
                proptest::strategy::Just("Cookie: ".to_owned()),
                proptest::strategy::Just("-----BEGIN RSA PRIVATE KEY-----".to_owned()),
                proptest::strategy::Just("_key".to_owned()),
                "[?&;=:@ \"'\n]{1,2}",
                "[A-Za-z0-9_.-]{1,20}",
                "\\PC{0,6}",
            ], 0..10)
        ) {
            let text = parts.concat();
            proptest::prop_assert_eq!(redact_str(&text), redact_each_rule(&text), "{:?}", text);
        }
    }

    fn assert_gone(v: &Value, secrets: &[&str]) {
        let text = v.to_string();
        for s in secrets {
            assert!(!text.contains(s), "{s} leaked: {text}");
        }
    }

    #[test]
    fn an_object_is_redacted_as_the_value_holding_it() {
        let params = json!({"name": "t", "arguments": {"password": "hunter2", "q": "sk-ABCDEFGHIJKLMNOPQRST"}});
        let m = params.as_object().expect("object");
        let (text, value) = Redacted::object_and_value(m);
        assert_eq!(value, redact(&params));
        assert_eq!(text, Redacted::json(&params));
        assert!(!text.into_string().contains("hunter2"));
    }

    #[test]
    fn the_one_scan_over_every_rule_compiles() {
        assert!(ANY_RULE.is_some());
        assert_eq!(
            ANY_RULE.as_ref().map(regex::RegexSet::len),
            Some(VALUE_PATTERNS_SOURCE.len() + 4)
        );
        assert_eq!(redact_str("Paris"), "Paris");
        assert_eq!(redact_str("?password=x"), format!("?password={MASK}"));
    }

    #[test]
    fn every_pattern_compiles() {
        // A pattern that failed to compile would be dropped silently and mask nothing.
        assert_eq!(VALUE_PATTERNS.len(), 14);
        assert!(URL_USERINFO.is_some() && NAME_VALUE.is_some());
        assert!(QUERY_PARAM.is_some() && HEADER_LINE.is_some());
    }

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

    #[test]
    fn values_nested_under_a_secret_key() {
        let r = redact(&json!({
            "password": { "v": "hunter2", "more": [ "sw0rdfish", 12345 ] },
            "credentials": { "user": "bob", "pass": "opensesame" },
            "limit": 5,
        }));
        assert_gone(&r, &["hunter2", "sw0rdfish", "12345", "opensesame"]);
        assert_eq!(r["password"]["v"], MASK, "the shape stays readable");
        assert_eq!(r["limit"], 5);
    }

    #[test]
    fn json_inside_strings() {
        let body = json!({ "user": "bob", "password": "hunter2", "inner": json!({"token": "t0ps3cret"}).to_string() });
        let r =
            redact(&json!({ "body": body.to_string(), "raw": "[{\"api_key\": \"k3y-v4lue\"}]" }));
        assert_gone(&r, &["hunter2", "t0ps3cret", "k3y-v4lue"]);
        let inner: Value = serde_json::from_str(r["body"].as_str().unwrap()).unwrap();
        assert_eq!(inner["user"], "bob");
        // JSON that does not parse (cut off) still loses its secret values.
        let r = redact(&json!({ "log": "{\"user\":\"bob\",\"password\":\"hunter2\",\"next\":" }));
        assert_gone(&r, &["hunter2"]);
        let r = redact(&json!({ "log": "sent {\\\"password\\\":\\\"hunter2\\\"} twice" }));
        assert_gone(&r, &["hunter2"]);
    }

    #[test]
    fn header_pairs() {
        let r = redact(&json!({
            "headers": [["Authorization", "Token abc123secret"], ["Accept", "text/html"], ["Cookie", "sid=s3ss10n"]],
            "har": [{ "name": "X-Api-Key", "value": "k3yk3yk3y" }, { "name": "Accept", "value": "*/*" }],
            "raw": "GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Token abc123secret\r\nCookie: sid=s3ss10n\r\n",
        }));
        assert_gone(&r, &["abc123secret", "s3ss10n", "k3yk3yk3y"]);
        assert_eq!(r["headers"][1][1], "text/html");
        assert_eq!(r["har"][1]["value"], "*/*");
        assert!(r["raw"].as_str().unwrap().contains("Host: x"));
    }

    #[test]
    fn url_query_secrets() {
        let r = redact(&json!({
            "a": "https://login.example.com/token?grant_type=client_credentials&client_secret=cl13nts3cr3t&scope=x",
            "b": "https://bucket.s3.amazonaws.com/f?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F2026&X-Amz-Signature=f00dfacef00dface&X-Amz-Security-Token=FwoGZXIvYXdz",
            "c": "https://graph.example.com/me?fields=id&access_token=EAAB4ccess",
            "d": "redis://:r3d1spass@cache:6379/0",
        }));
        assert_gone(
            &r,
            &[
                "cl13nts3cr3t",
                "AKIDEXAMPLE",
                "f00dfacef00dface",
                "FwoGZXIvYXdz",
                "EAAB4ccess",
                "r3d1spass",
            ],
        );
        let a = r["a"].as_str().unwrap();
        assert!(
            a.contains("grant_type=client_credentials") && a.contains("scope=x"),
            "{a}"
        );
        assert!(
            r["b"]
                .as_str()
                .unwrap()
                .contains("X-Amz-Algorithm=AWS4-HMAC-SHA256")
        );
        assert!(r["c"].as_str().unwrap().contains("fields=id"));
    }

    #[test]
    fn common_token_formats() {
        let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END RSA PRIVATE KEY-----";
        let cut_pem = "key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA";
        let r = redact(&json!({
            "stripe": "charge with sk_live_51HxYzAbCdEfGh1234567890",
            "google": "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
            "gitlab": "glpat-xYz123AbC456dEf789gH",
            "slack": ["xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp", "xoxp-12345-67890-abcdef"],
            "pem": pem,
            "cut_pem": cut_pem,
            "conn": "Server=db;User Id=sa;Password=P@ssw0rd!;Database=app",
            "conn2": "host=db user=app password='with spaces' dbname=x",
        }));
        assert_gone(
            &r,
            &[
                "51HxYzAbCdEfGh",
                "SyD-9tSrke72",
                "xYz123AbC456",
                "AbCdEfGhIjKlMnOp",
                "xoxp-12345",
                "MIIEowIBAAKCAQEAu1SU1",
                "b3BlbnNzaC1rZXkt",
                "P@ssw0rd!",
                "with spaces",
            ],
        );
        let conn = r["conn"].as_str().unwrap();
        assert!(
            conn.contains("Server=db;User Id=sa;") && conn.contains(";Database=app"),
            "{conn}"
        );
        assert!(r["conn2"].as_str().unwrap().contains("dbname=x"));
    }

    #[test]
    fn plain_text_and_sql_stay_readable() {
        let q = "SELECT key, count(*) FROM t WHERE region = 'eu' GROUP BY key";
        let r = redact(&json!({ "sql": q, "page": 2, "path": "/srv/app/config.toml" }));
        assert_eq!(r["sql"], q);
        assert_eq!(r["path"], "/srv/app/config.toml");
    }

    #[test]
    fn redaction_is_idempotent_on_its_own_mask() {
        let once = redact(&json!({ "note": "password=hunter2 token: abc", "k": { "secret": 1 } }));
        assert_eq!(redact(&once), once);
    }
}
