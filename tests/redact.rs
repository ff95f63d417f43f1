//! Redaction as the call log and provenance use it, fed arbitrary input: it never panics, and a
//! secret placed under a secret key, at any depth and in any shape, never comes out.

use loom::intercept::redact::{MASK, redact, redact_str};
use proptest::prelude::*;
use serde_json::{Map, Value};

/// Text with a bias towards the shapes redaction looks for, mixed with arbitrary Unicode.
fn text() -> impl Strategy<Value = String> {
    let fragment = prop_oneof![
        any::<String>(),
        Just("password=".to_owned()),
        Just("Authorization: Bearer ".to_owned()),
        Just("\\\"token\\\":\\\"".to_owned()),
        Just("?client_secret=".to_owned()),
        Just("&X-Amz-Signature=".to_owned()),
        Just("-----BEGIN RSA PRIVATE KEY-----\n".to_owned()),
        Just("-----END RSA PRIVATE KEY-----".to_owned()),
        Just("https://u:p@h/".to_owned()),
        Just("sk_live_".to_owned()),
        Just("{\"password\":".to_owned()),
        Just("[\"Authorization\",".to_owned()),
        Just(MASK.to_owned()),
        "[a-zA-Z0-9_=:;&?\"'\\\\ {}\\[\\]é日🎉-]{0,24}",
    ];
    prop::collection::vec(fragment, 0..6).prop_map(|v| v.concat())
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((text(), inner.clone()), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
            // JSON inside a string, as request bodies arrive.
            inner.prop_map(|v| Value::String(v.to_string())),
        ]
    })
}

const PLANTED: &str = "Zq7plantedSecretValue9";

/// Puts `secret` under a secret-named key somewhere in `v`, wrapped in `shape`.
fn plant(v: Value, path: &[usize], key: &str, shape: u8) -> Value {
    let secret = match shape {
        0 => Value::String(PLANTED.into()),
        1 => serde_json::json!({ "v": PLANTED }),
        2 => serde_json::json!([1, [PLANTED]]),
        _ => serde_json::json!({ "deep": { "deeper": [ { "x": PLANTED } ] } }),
    };
    match (v, path.split_first()) {
        (Value::Object(mut m), Some((i, rest))) if !m.is_empty() => {
            let k = m.keys().nth(i % m.len()).cloned().unwrap_or_default();
            let child = m.remove(&k).unwrap_or(Value::Null);
            m.insert(k, plant(child, rest, key, shape));
            Value::Object(m)
        }
        (Value::Array(mut a), Some((i, rest))) if !a.is_empty() => {
            let n = i % a.len();
            let child = std::mem::take(&mut a[n]);
            a[n] = plant(child, rest, key, shape);
            Value::Array(a)
        }
        _ => {
            let mut m = Map::new();
            m.insert(key.to_owned(), secret);
            Value::Object(m)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn redact_never_panics_on_arbitrary_json(v in json()) {
        let _ = redact(&v);
    }

    #[test]
    fn redact_str_never_panics_on_arbitrary_text(s in text()) {
        let _ = redact_str(&s);
    }

    #[test]
    fn a_secret_under_a_secret_key_never_comes_out(
        v in json(),
        path in prop::collection::vec(any::<usize>(), 0..5),
        key in prop::sample::select(vec!["password", "api_key", "Authorization", "client_secret", "X-Api-Key", "db_password", "refreshToken", "session_id"]),
        shape in 0u8..4,
    ) {
        let planted = plant(v, &path, key, shape);
        let out = redact(&planted).to_string();
        prop_assert!(!out.contains(PLANTED), "{}", out);
    }
}
