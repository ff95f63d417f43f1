//! A request's line for one server, written in one pass: the params as the caller built them,
//! with the per-request protocol `_meta` that server's era takes.
//!
//! For a 2026-07-28 server every request says the protocol version, what the client can do and
//! who it is (`io.modelcontextprotocol/…` members of `_meta`), and the log level when one is
//! set; a legacy server hears none of these. The members loom adds are the same for every
//! request on a connection, so their text is written once ([`Stamp::new`]) and copied in, and
//! the params are serialized straight into the line: no `Value`s are built and dropped per
//! request (17k → 6k instructions per small call, BENCHMARKS.md). A test holds the text to the
//! one the params stamped as values would give.

use crate::jsonrpc;
use crate::protocol::{self, ClientCapabilities, Era};
use serde_json::{Map, Value};
use std::ops::Range;

/// The members a connection adds to each request's `_meta`, as text.
pub struct Stamp {
    /// `"…/clientCapabilities":{…}` for this connection's client capabilities.
    caps: Vec<u8>,
    /// `"…/clientInfo":{…}`.
    info: Vec<u8>,
}

impl Stamp {
    pub fn new(caps: &ClientCapabilities) -> Stamp {
        let text = |key: &str, value: &Value| {
            let mut text = Vec::new();
            member(&mut text, &mut true, key);
            push_json(&mut text, value);
            text
        };
        Stamp {
            caps: text(protocol::META_CLIENT_CAPABILITIES, &caps.to_value()),
            info: text(
                protocol::META_CLIENT_INFO,
                &super::connection::client_info(),
            ),
        }
    }

    /// `{"jsonrpc":"2.0","id":ID,"method":METHOD,"params":…}`, and where the params are in it.
    /// `log_level` is the connection's (a request's own `_meta` level wins over it).
    pub fn request_line(
        &self,
        era: Era,
        log_level: Option<&str>,
        id: u64,
        method: &str,
        params: Option<&Map<String, Value>>,
    ) -> (String, Range<usize>) {
        let mut head = String::with_capacity(160);
        jsonrpc::message_head(&mut head, Some(&id.to_string()), method);
        let mut line = head.into_bytes();
        line.extend_from_slice(b",\"params\":");
        let start = line.len();
        self.params(&mut line, era, log_level, params);
        let end = line.len();
        line.push(b'}');
        // Only JSON text and UTF-8 strings went in.
        let line = String::from_utf8(line)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        (line, start..end)
    }

    /// The params object: each member as it is, `_meta` where it stands (or last when the
    /// request has none and the era adds some), stamped.
    fn params(
        &self,
        out: &mut Vec<u8>,
        era: Era,
        log_level: Option<&str>,
        params: Option<&Map<String, Value>>,
    ) {
        out.push(b'{');
        let mut first = true;
        let mut stamped = false;
        for (key, value) in params.into_iter().flatten() {
            if key == "_meta" {
                // A `_meta` that is not an object is passed on as it is, unstamped.
                stamped = true;
                if let Value::Object(own) = value {
                    self.meta(out, &mut first, era, log_level, Some(own));
                    continue;
                }
            }
            member(out, &mut first, key);
            push_json(out, value);
        }
        if !stamped {
            self.meta(out, &mut first, era, log_level, None);
        }
        out.push(b'}');
    }

    /// `"_meta":{…}`: the request's own members that are not the protocol's, then (for a modern
    /// server) the protocol's; nothing at all when that leaves it empty.
    fn meta(
        &self,
        out: &mut Vec<u8>,
        first: &mut bool,
        era: Era,
        log_level: Option<&str>,
        own: Option<&Map<String, Value>>,
    ) {
        let mut others = own
            .into_iter()
            .flatten()
            .filter(|(k, _)| !k.starts_with(protocol::META_PREFIX))
            .peekable();
        if era != Era::Modern && others.peek().is_none() {
            return;
        }
        member(out, first, "_meta");
        out.push(b'{');
        let mut inner = true;
        for (key, value) in others {
            member(out, &mut inner, key);
            push_json(out, value);
        }
        if era == Era::Modern {
            member(out, &mut inner, protocol::META_PROTOCOL_VERSION);
            push_json(out, protocol::V_2026_07_28);
            // A 2026-07-28 client's request says what that client can do and what it wants
            // logged, for that request only: a modern server hears exactly that.
            let own_of = |key: &str| own.and_then(|m| m.get(key));
            match own_of(protocol::META_CLIENT_CAPABILITIES) {
                Some(caps) => {
                    member(out, &mut inner, protocol::META_CLIENT_CAPABILITIES);
                    push_json(out, caps);
                }
                None => {
                    out.push(b',');
                    out.extend_from_slice(&self.caps);
                }
            }
            out.push(b',');
            out.extend_from_slice(&self.info);
            match own_of(protocol::META_LOG_LEVEL) {
                Some(level) => {
                    member(out, &mut inner, protocol::META_LOG_LEVEL);
                    push_json(out, level);
                }
                None => {
                    if let Some(level) = log_level {
                        member(out, &mut inner, protocol::META_LOG_LEVEL);
                        push_json(out, level);
                    }
                }
            }
        }
        out.push(b'}');
    }
}

/// `,"key":` (no comma before the first member).
fn member(out: &mut Vec<u8>, first: &mut bool, key: &str) {
    if !std::mem::take(first) {
        out.push(b',');
    }
    push_json(out, key);
    out.push(b':');
}

fn push_json<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Writing plain data into a vector cannot fail.
    let _ = serde_json::to_writer(out, value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// The stamp as first written, on values: the reference the text must equal.
    fn stamped_as_values(
        caps: &ClientCapabilities,
        era: Era,
        log_level: Option<&str>,
        params: Option<&Map<String, Value>>,
    ) -> String {
        let mut params = params.cloned().unwrap_or_default();
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            let own_caps = meta.get(protocol::META_CLIENT_CAPABILITIES).cloned();
            let own_level = meta.get(protocol::META_LOG_LEVEL).cloned();
            meta.retain(|k, _| !k.starts_with(protocol::META_PREFIX));
            if era == Era::Modern {
                meta.insert(
                    protocol::META_PROTOCOL_VERSION.into(),
                    json!(protocol::V_2026_07_28),
                );
                meta.insert(
                    protocol::META_CLIENT_CAPABILITIES.into(),
                    own_caps.unwrap_or_else(|| caps.to_value()),
                );
                meta.insert(
                    protocol::META_CLIENT_INFO.into(),
                    super::super::connection::client_info(),
                );
                match (own_level, log_level) {
                    (Some(level), _) => {
                        meta.insert(protocol::META_LOG_LEVEL.into(), level);
                    }
                    (None, Some(level)) => {
                        meta.insert(protocol::META_LOG_LEVEL.into(), json!(level));
                    }
                    (None, None) => {}
                }
            }
            if meta.is_empty() {
                params.shift_remove("_meta");
            }
        }
        serde_json::to_string(&params).unwrap()
    }

    fn caps() -> ClientCapabilities {
        ClientCapabilities::from_value(Some(
            &json!({"sampling": {}, "roots": {"listChanged": true}}),
        ))
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            ".{0,6}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((".{0,4}", inner), 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Keys a request's `_meta` may hold: the protocol's own among any others.
    fn meta_key() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(protocol::META_CLIENT_CAPABILITIES.to_owned()),
            Just(protocol::META_LOG_LEVEL.to_owned()),
            Just(protocol::META_PROTOCOL_VERSION.to_owned()),
            Just(protocol::META_CLIENT_INFO.to_owned()),
            Just("progressToken".to_owned()),
            ".{0,6}",
        ]
    }

    fn params() -> impl Strategy<Value = Option<Map<String, Value>>> {
        let meta = prop_oneof![
            Just(None),
            value().prop_map(Some),
            prop::collection::vec((meta_key(), value()), 0..4)
                .prop_map(|m| Some(Value::Object(m.into_iter().collect()))),
        ];
        let members = prop::collection::vec(
            (prop_oneof![Just("name".to_owned()), ".{0,5}"], value()),
            0..4,
        );
        (members, meta, 0..5usize, any::<bool>()).prop_map(|(members, meta, at, some)| {
            if !some {
                return None;
            }
            let mut m: Map<String, Value> = members.into_iter().collect();
            if let Some(meta) = meta {
                m.shift_insert(at.min(m.len()), "_meta".into(), meta);
            }
            Some(m)
        })
    }

    proptest! {
        #[test]
        fn the_line_is_the_params_stamped_as_values(
            params in params(),
            modern in any::<bool>(),
            level in prop_oneof![Just(None), Just(Some("debug")), Just(Some("a\"b"))],
            id in any::<u64>(),
            method in prop_oneof![Just("tools/call"), Just("x\ny")],
        ) {
            let caps = caps();
            let era = if modern { Era::Modern } else { Era::Legacy };
            let (line, range) = Stamp::new(&caps).request_line(era, level, id, method, params.as_ref());
            let expected = stamped_as_values(&caps, era, level, params.as_ref());
            prop_assert_eq!(&line[range], expected.as_str());
            let whole: Value = serde_json::from_str(&line).unwrap();
            let expected_params: Value = serde_json::from_str(&expected).unwrap();
            prop_assert_eq!(whole, json!({"jsonrpc": "2.0", "id": id, "method": method, "params": expected_params}));
        }
    }

    #[test]
    fn a_modern_request_says_version_capabilities_client_and_level() {
        let caps = caps();
        let params: Map<String, Value> = serde_json::from_value(json!({
            "name": "t",
            "_meta": {"progressToken": 7, "io.modelcontextprotocol/logLevel": "info"}
        }))
        .unwrap();
        let (line, _) = Stamp::new(&caps).request_line(
            Era::Modern,
            Some("debug"),
            3,
            "tools/call",
            Some(&params),
        );
        let v: Value = serde_json::from_str(&line).unwrap();
        let meta = &v["params"]["_meta"];
        assert_eq!(meta["progressToken"], 7);
        assert_eq!(meta[protocol::META_PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(meta[protocol::META_CLIENT_CAPABILITIES], caps.to_value());
        assert_eq!(meta[protocol::META_CLIENT_INFO]["name"], "loom");
        assert_eq!(
            meta[protocol::META_LOG_LEVEL],
            "info",
            "the request's own level wins"
        );
        let (legacy, _) =
            Stamp::new(&caps).request_line(Era::Legacy, Some("debug"), 3, "m", Some(&params));
        let v: Value = serde_json::from_str(&legacy).unwrap();
        assert_eq!(v["params"]["_meta"], json!({"progressToken": 7}));
    }
}
