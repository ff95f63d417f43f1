//! JSON-RPC 2.0 framing for the forwarding path.
//!
//! Only the envelope is parsed (`id`, `method`, and the presence of `params`, `result`, `error`);
//! `params`, `result` and `error` stay as [`RawValue`] so a forwarded `result` is copied byte for
//! byte. This module must never re-serialize a payload it only passes along.

mod framing;
pub mod pending;

pub use framing::{Line, LineReader};

use serde::Deserialize;
use serde_json::value::RawValue;

/// JSON-RPC error codes used by loom (the MCP-specific ones live in `protocol`).
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
}

/// What a request whose id is an object, an array or a boolean is refused with.
pub const UNUSABLE_ID: &str = "invalid request: an id must be a string or a number";

/// One decoded message with its payload left raw.
#[derive(Debug, Deserialize)]
pub struct RawMessage {
    #[serde(default)]
    pub jsonrpc: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub id: Option<Box<RawValue>>,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub params: Option<Box<RawValue>>,
    /// An explicit `"result": null` is a result (it answers a request), not an absent one.
    #[serde(default, deserialize_with = "present")]
    pub result: Option<Box<RawValue>>,
    #[serde(default)]
    pub error: Option<Box<RawValue>>,
}

/// Keeps an explicit `null` (`"id": null`, `"result": null`) distinguishable from an absent
/// member.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Box<RawValue>>, D::Error> {
    Box::<RawValue>::deserialize(d).map(Some)
}

/// What a message is, decided from which envelope members it carries.
#[derive(Debug)]
pub enum Kind {
    Request,
    Notification,
    Response,
    Invalid(&'static str),
}

impl RawMessage {
    pub fn parse(bytes: &[u8]) -> Result<RawMessage, serde_json::Error> {
        serde_json::from_slice(bytes)
    }

    pub fn kind(&self) -> Kind {
        if self.jsonrpc.as_deref() != Some("2.0") {
            return Kind::Invalid("jsonrpc must be \"2.0\"");
        }
        match (
            &self.id,
            &self.method,
            self.result.is_some() || self.error.is_some(),
        ) {
            (Some(id), Some(_), false) if id.get() != "null" => Kind::Request,
            (None, Some(_), false) => Kind::Notification,
            (Some(_), None, true) => Kind::Response,
            (Some(_), Some(_), false) => Kind::Invalid("request id must not be null"),
            _ => Kind::Invalid("not a request, notification or response"),
        }
    }

    /// Whether the message carries an id that is an object, an array or a boolean: JSON-RPC
    /// and MCP allow only strings and numbers (and `null`, which [`RawMessage::kind`] refuses
    /// on its own), so such a message is refused with no id to answer to.
    pub fn has_unusable_id(&self) -> bool {
        self.id.as_deref().is_some_and(|id| {
            matches!(
                id.get().trim_start().as_bytes().first(),
                Some(b'{' | b'[' | b't' | b'f')
            )
        })
    }

    /// The id as a numeric value, when it is one (loom's own outbound ids are numbers).
    pub fn numeric_id(&self) -> Option<u64> {
        self.id.as_ref().and_then(|id| id.get().parse().ok())
    }
}

/// Serializes any `Serialize` value into a raw JSON value.
pub fn to_raw<T: serde::Serialize>(value: &T) -> Box<RawValue> {
    // Serializing plain data (maps, strings, numbers) cannot fail.
    serde_json::value::to_raw_value(value).unwrap_or_else(|_| raw_null())
}

pub fn raw_null() -> Box<RawValue> {
    RawValue::from_string("null".to_owned()).unwrap_or_default()
}

/// `{"jsonrpc":"2.0","id":…,"result":…}` with `result` spliced verbatim.
pub fn response(id: &RawValue, result: &RawValue) -> String {
    let mut s = String::with_capacity(result.get().len() + id.get().len() + 40);
    s.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
    s.push_str(id.get());
    s.push_str(",\"result\":");
    s.push_str(result.get());
    s.push('}');
    s
}

/// `{"jsonrpc":"2.0","id":…,"error":…}` with the error object spliced verbatim.
pub fn error_response_raw(id: &RawValue, error: &RawValue) -> String {
    let mut s = String::with_capacity(error.get().len() + 40);
    s.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
    s.push_str(id.get());
    s.push_str(",\"error\":");
    s.push_str(error.get());
    s.push('}');
    s
}

/// A JSON-RPC error loom answers a request with: a transport or protocol fault (a tool's
/// failure is a result with `isError`, never this).
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<serde_json::Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error with structured `data` for the client.
    pub fn with_data(mut self, data: serde_json::Value) -> RpcError {
        self.data = Some(data);
        self
    }
}

/// A JSON-RPC error response built by loom itself.
pub fn error_response(
    id: &RawValue,
    code: i64,
    message: &str,
    data: Option<serde_json::Value>,
) -> String {
    let mut err = serde_json::json!({ "code": code, "message": message });
    if let Some(data) = data {
        err["data"] = data;
    }
    error_response_raw(id, &to_raw(&err))
}

pub fn request(id: &RawValue, method: &str, params: Option<&RawValue>) -> String {
    message(Some(id.get()), method, params)
}

pub fn notification(method: &str, params: Option<&RawValue>) -> String {
    message(None, method, params)
}

fn message(id: Option<&str>, method: &str, params: Option<&RawValue>) -> String {
    let mut s = String::with_capacity(64 + params.map_or(0, |p| p.get().len()));
    message_head(&mut s, id, method);
    if let Some(p) = params {
        s.push_str(",\"params\":");
        s.push_str(p.get());
    }
    s.push('}');
    s
}

/// `{"jsonrpc":"2.0","id":ID,"method":METHOD` (no id for a notification): a message up to its
/// params, which the caller writes (with a leading comma) before the closing brace.
pub fn message_head(out: &mut String, id: Option<&str>, method: &str) {
    out.push_str("{\"jsonrpc\":\"2.0\"");
    if let Some(id) = id {
        out.push_str(",\"id\":");
        out.push_str(id);
    }
    out.push_str(",\"method\":");
    out.push_str(&serde_json::Value::from(method).to_string());
}

/// The id of a request that did not parse (bytes that are not UTF-8 inside a string, say),
/// read from its lossy text, so the error answer reaches the request that is waiting for it.
/// Only a request's id is returned, and never one that the lossy reading changed.
pub fn request_id_lenient(bytes: &[u8]) -> Option<Box<RawValue>> {
    let text = String::from_utf8_lossy(bytes);
    let msg = RawMessage::parse(text.as_bytes()).ok()?;
    match msg.kind() {
        Kind::Request => msg
            .id
            .filter(|id| !id.get().contains(char::REPLACEMENT_CHARACTER)),
        _ => None,
    }
}

/// The numeric id of a response that did not parse (bytes that are not UTF-8, an escape serde
/// refuses), read from its lossy text, so the request it answers can be failed at once. Only
/// the id is taken from that text, never the result.
pub fn response_id_lenient(bytes: &[u8]) -> Option<u64> {
    let text = String::from_utf8_lossy(bytes);
    let msg = RawMessage::parse(text.as_bytes()).ok()?;
    match msg.kind() {
        Kind::Response => msg.numeric_id(),
        _ => None,
    }
}

/// Finds a numeric `"id"` near the start of a message that was too long to parse, so the request
/// it answers can be failed instead of left waiting.
pub fn sniff_numeric_id(prefix: &[u8]) -> Option<u64> {
    let text = String::from_utf8_lossy(prefix);
    let at = text.find("\"id\"")?;
    let rest = text[at + 4..].trim_start().strip_prefix(':')?.trim_start();
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_is_spliced_verbatim() {
        let line = br#"{"jsonrpc":"2.0","id":7,"result":{"z":1,  "a":"\u00e9","x":[1.0,2]}}"#;
        let msg = RawMessage::parse(line).unwrap();
        assert!(matches!(msg.kind(), Kind::Response));
        let id = RawValue::from_string("\"up-1\"".into()).unwrap();
        let out = response(&id, msg.result.as_deref().unwrap());
        assert_eq!(
            out,
            r#"{"jsonrpc":"2.0","id":"up-1","result":{"z":1,  "a":"\u00e9","x":[1.0,2]}}"#
        );
    }

    #[test]
    fn kinds() {
        let k = |s: &str| RawMessage::parse(s.as_bytes()).unwrap().kind();
        assert!(matches!(
            k(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Kind::Request
        ));
        assert!(matches!(
            k(r#"{"jsonrpc":"2.0","method":"x"}"#),
            Kind::Notification
        ));
        assert!(matches!(
            k(r#"{"jsonrpc":"2.0","id":1,"error":{}}"#),
            Kind::Response
        ));
        assert!(matches!(
            k(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            Kind::Invalid(_)
        ));
        assert!(matches!(k(r#"{"id":1,"method":"ping"}"#), Kind::Invalid(_)));
        // A null result still answers its request.
        let null = RawMessage::parse(br#"{"jsonrpc":"2.0","id":1,"result":null}"#).unwrap();
        assert!(matches!(null.kind(), Kind::Response));
        assert_eq!(null.result.as_deref().map(RawValue::get), Some("null"));
        assert!(matches!(
            k(r#"{"jsonrpc":"2.0","id":1,"method":"x","result":null}"#),
            Kind::Invalid(_)
        ));
    }

    #[test]
    fn a_request_that_is_not_utf8_keeps_its_id() {
        let mut line =
            br#"{"jsonrpc":"2.0","id":"req-7","method":"tools/call","params":{"name":"x"#.to_vec();
        line.extend_from_slice(b"\xff\xfe");
        line.extend_from_slice(br#""}}"#);
        assert!(RawMessage::parse(&line).is_err(), "serde_json refuses it");
        let id = request_id_lenient(&line).expect("id read from lossy text");
        assert_eq!(id.get(), r#""req-7""#);
        // An id that itself held invalid bytes is not guessed.
        let mut bad_id = br#"{"jsonrpc":"2.0","id":"a"#.to_vec();
        bad_id.push(0xff);
        bad_id.extend_from_slice(br#"","method":"ping"}"#);
        assert!(request_id_lenient(&bad_id).is_none());
        // A notification or a response has nothing to answer.
        let mut note = br#"{"jsonrpc":"2.0","method":"x","params":{"a":""#.to_vec();
        note.push(0xff);
        note.extend_from_slice(br#""}}"#);
        assert!(request_id_lenient(&note).is_none());
    }

    #[test]
    fn a_response_that_is_not_utf8_keeps_its_numeric_id() {
        let mut line = br#"{"jsonrpc":"2.0","id":12,"result":{"text":"bad "#.to_vec();
        line.extend_from_slice(b"\xff\xfe");
        line.extend_from_slice(br#""}}"#);
        assert!(RawMessage::parse(&line).is_err(), "serde_json refuses it");
        assert_eq!(response_id_lenient(&line), Some(12));
        // A request is not a response, and an id that is not a number is none of loom's.
        let mut req = br#"{"jsonrpc":"2.0","id":3,"method":"x","params":{"a":""#.to_vec();
        req.push(0xff);
        req.extend_from_slice(br#""}}"#);
        assert_eq!(response_id_lenient(&req), None);
        let mut named = br#"{"jsonrpc":"2.0","id":"a","result":""#.to_vec();
        named.push(0xff);
        named.extend_from_slice(br#""}"#);
        assert_eq!(response_id_lenient(&named), None);
    }

    #[test]
    fn sniffs_id_from_truncated_prefix() {
        assert_eq!(
            sniff_numeric_id(br#"{"jsonrpc":"2.0","id": 42,"result":{"content":[{"#),
            Some(42)
        );
        assert_eq!(sniff_numeric_id(br#"{"jsonrpc":"2.0","result""#), None);
    }

    fn id_fragments() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        proptest::collection::vec(
            prop_oneof![
                Just(br#""id""#.to_vec()),
                Just(b":".to_vec()),
                Just(b" ".to_vec()),
                Just(vec![0xe9]),
                "[0-9]{1,30}".prop_map(String::into_bytes),
                proptest::collection::vec(any::<u8>(), 0..20),
            ],
            0..20,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest::proptest! {
        #[test]
        fn sniffing_an_id_never_panics(raw in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            let _ = sniff_numeric_id(&raw);
        }

        #[test]
        fn sniffing_an_id_near_id_keys_never_panics(raw in id_fragments()) {
            let _ = sniff_numeric_id(&raw);
        }
    }
}
