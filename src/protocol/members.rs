//! A narrow read of a JSON object: its top-level members in order, each value left as its
//! text, so that a member can be dropped or replaced without building (and printing again)
//! the rest.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// A member's name as written (borrowed unless it held an escape).
struct Key<'a>(Cow<'a, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// The members of a JSON object, in the order written (a repeated name is listed each time).
pub struct Members<'a>(pub Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de> serde::Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some((k, v)) = map.next_entry::<Key<'de>, &'de RawValue>()? {
                    out.push((k.0, v));
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(MembersVisitor)
    }
}

/// The members of `text` when it is a JSON object.
pub fn members(text: &str) -> Option<Members<'_>> {
    serde_json::from_str(text).ok()
}

/// Writes an object of `members` (name, value text) as JSON text.
pub fn object<'a>(
    members: impl IntoIterator<Item = (&'a str, &'a str)>,
    capacity: usize,
) -> String {
    let mut out = String::with_capacity(capacity + 2);
    out.push('{');
    for (i, (k, v)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_string(&mut out, k);
        out.push(':');
        out.push_str(v);
    }
    out.push('}');
    out
}

/// Appends `text` as a JSON string (escaped only when it needs to be).
fn push_string(s: &mut String, text: &str) {
    if text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        s.push('"');
        s.push_str(text);
        s.push('"');
    } else {
        s.push_str(&serde_json::Value::from(text).to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, Value};

    #[test]
    fn members_keep_their_order_text_and_repeats() {
        let m = members(r#" {"b" : [1, 2] ,"a\"q":"x","b":{"c":null}} "#).expect("an object");
        let got: Vec<(&str, &str)> = m.0.iter().map(|(k, v)| (k.as_ref(), v.get())).collect();
        assert_eq!(
            got,
            [("b", "[1, 2]"), ("a\"q", "\"x\""), ("b", r#"{"c":null}"#)]
        );
        assert!(members("[1]").is_none() && members("{").is_none() && members("").is_none());
        let text = object(got.iter().copied(), 40);
        assert_eq!(text, r#"{"b":[1, 2],"a\"q":"x","b":{"c":null}}"#);
    }

    proptest::proptest! {
        /// Any text: no panic; an object's members written back are the same object.
        #[test]
        fn any_text_reads_without_a_panic_and_an_object_writes_back_whole(
            text in ".{0,40}",
            pairs in proptest::collection::vec(("\\PC{0,6}", ".{0,6}"), 0..6),
        ) {
            let _ = members(&text);
            let mut map = Map::new();
            for (k, v) in pairs {
                map.insert(k, Value::String(v));
            }
            let json = serde_json::to_string(&map).unwrap_or_default();
            let m = members(&json).expect("an object");
            let back = object(m.0.iter().map(|(k, v)| (k.as_ref(), v.get())), json.len());
            let again: Map<String, Value> = serde_json::from_str(&back).expect("valid JSON");
            proptest::prop_assert_eq!(again, map);
        }
    }
}
