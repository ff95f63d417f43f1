//! What a 2026-07-28 server's result looks like to a client of an older era: the members that
//! era added to every result (`resultType`, the caching hints `ttlMs`/`cacheScope`, the
//! server's own `serverInfo` in `_meta`, which may hold kilobytes of base64 icons) are left
//! out, and a `structuredContent` that is not an object (older eras allow only objects) goes,
//! so a legacy client gets what a legacy server would have sent. Everything else stays as the
//! server wrote it, in its order; a result with none of these members is returned untouched.

use super::META_SERVER_INFO;
use super::members::{Members, members, object};
use serde_json::value::RawValue;
use std::borrow::Cow;

/// The result as a legacy client should get it. Input that is not a JSON object is returned
/// as it is (it is the server's, and no member of it is loom's to remove). Only the top-level
/// members are read (and `_meta`'s): every other value is copied as its text.
pub fn for_legacy_client(raw: Box<RawValue>) -> Box<RawValue> {
    let text = raw.get();
    let Some(Members(members)) = members(text) else {
        return raw;
    };
    let mut changed = false;
    let mut kept: Vec<(&str, Cow<str>)> = Vec::with_capacity(members.len());
    for (key, value) in &members {
        let v = value.get();
        // What a legacy client gets of the member: its text, another text, or nothing.
        let keep = match key.as_ref() {
            // An `input_required` result is never complete: it is answered by rounds, not here.
            "resultType" if serde_json::from_str::<Cow<str>>(v).is_ok_and(|t| t == "complete") => {
                None
            }
            "ttlMs" | "cacheScope" => None,
            // Older eras allow only an object here.
            "structuredContent" if !v.trim_start().starts_with('{') => None,
            "_meta" => match without_server_info(v) {
                None => Some(Cow::Borrowed(v)),
                Some(rest) => rest.map(Cow::Owned),
            },
            _ => Some(Cow::Borrowed(v)),
        };
        changed |= !matches!(keep, Some(Cow::Borrowed(_)));
        kept.extend(keep.map(|k| (key.as_ref(), k)));
    }
    if !changed {
        return raw;
    }
    let out = object(kept.iter().map(|(k, v)| (*k, v.as_ref())), text.len());
    RawValue::from_string(out).unwrap_or(raw)
}

/// A `_meta` object without the server's `serverInfo`: `None` when it has none (or is not an
/// object), `Some(None)` when nothing else is left.
fn without_server_info(meta: &str) -> Option<Option<String>> {
    let Members(members) = members(meta)?;
    if !members.iter().any(|(k, _)| k == META_SERVER_INFO) {
        return None;
    }
    let rest: Vec<(&str, &str)> = members
        .iter()
        .filter(|(k, _)| k != META_SERVER_INFO)
        .map(|(k, v)| (k.as_ref(), v.get()))
        .collect();
    Some((!rest.is_empty()).then(|| object(rest, meta.len())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, Value};

    /// Top-level members only 2026-07-28 results carry.
    const MODERN_MEMBERS: [&str; 3] = ["resultType", "ttlMs", "cacheScope"];

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).expect("test JSON")
    }

    #[test]
    fn a_modern_result_loses_its_eras_members_and_keeps_the_rest_in_order() {
        let out = for_legacy_client(raw(
            r#"{"content":[{"text":"12:00","type":"text"}],"isError":false,"resultType":"complete","ttlMs":0,"cacheScope":"private","structuredContent":{"result":"12:00"},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","icons":[{"src":"data:..."}]},"vendor/x":1}}"#,
        ));
        assert_eq!(
            out.get(),
            r#"{"content":[{"text":"12:00","type":"text"}],"isError":false,"structuredContent":{"result":"12:00"},"_meta":{"vendor/x":1}}"#
        );
        let out = for_legacy_client(raw(
            r#"{"contents":[],"resultType":"complete","structuredContent":[1,2],"_meta":{"io.modelcontextprotocol/serverInfo":{}}}"#,
        ));
        assert_eq!(out.get(), r#"{"contents":[]}"#);
    }

    #[test]
    fn a_result_without_them_stays_byte_for_byte() {
        for text in [
            r#"{"content":[{"type":"text","text":"caf\u00e9"}],  "structuredContent":{"z":1,"a":[1.0,2e3]}}"#,
            r#"{"content":[],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}"#,
            r#"{"resultType":"input_required","inputRequests":{}}"#,
            r#"[1,2]"#,
            r#""text""#,
        ] {
            assert_eq!(for_legacy_client(raw(text)).get(), text);
        }
    }

    fn members() -> impl proptest::strategy::Strategy<Value = Vec<(String, String)>> {
        use proptest::prelude::*;
        let key = prop_oneof![
            Just("resultType".to_owned()),
            Just("ttlMs".to_owned()),
            Just("cacheScope".to_owned()),
            Just("structuredContent".to_owned()),
            Just("_meta".to_owned()),
            ".{0,8}",
        ];
        let value = prop_oneof![
            Just(r#""complete""#.to_owned()),
            Just("0".to_owned()),
            Just("[1,{}]".to_owned()),
            Just(r#"{"io.modelcontextprotocol/serverInfo":{}}"#.to_owned()),
            Just(r#"{"io.modelcontextprotocol/serverInfo":1,"k":null}"#.to_owned()),
            Just("null".to_owned()),
            ".{0,8}".prop_map(|s| serde_json::to_string(&s).unwrap_or_default()),
        ];
        proptest::collection::vec((key, value), 0..8)
    }

    proptest::proptest! {
        #[test]
        fn any_result_is_handled_without_a_panic_and_keeps_every_other_member(members in members()) {
            let body: Vec<String> = members
                .iter()
                .map(|(k, v)| format!("{}:{v}", serde_json::to_string(k).unwrap_or_default()))
                .collect();
            let text = format!("{{{}}}", body.join(","));
            let Ok(input) = RawValue::from_string(text) else { return Ok(()) };
            let before: Map<String, Value> = serde_json::from_str(input.get()).unwrap_or_default();
            let out: Map<String, Value> =
                serde_json::from_str(for_legacy_client(input).get()).expect("still an object");
            for (k, v) in &before {
                let modern = MODERN_MEMBERS.contains(&k.as_str()) || k == "structuredContent" || k == "_meta";
                if !modern {
                    proptest::prop_assert_eq!(out.get(k), Some(v));
                }
            }
            proptest::prop_assert!(out.get("_meta").is_none_or(|m| m.get(META_SERVER_INFO).is_none()));
            proptest::prop_assert!(out.get("resultType").is_none_or(|r| r != "complete"));
        }
    }
}
