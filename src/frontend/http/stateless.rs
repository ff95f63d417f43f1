//! Stateless 2026-07-28 requests: no session; each request carries its protocol version, the
//! client's capabilities and log level in `_meta`, and mirrors its method and target in the
//! `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers, which must match the body. Each
//! request is served by a client of its own, so nothing one request declares leaks into
//! another. The answer is JSON, or an event stream when the request sends progress or logs
//! before it ends; closing that stream cancels the request.

use super::{Asked, Body, State, event_stream, full, refuse, rpc_error};
use crate::jsonrpc::code;
use crate::protocol::{self, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
use crate::types::events::Caller;
use crate::upstream::ClientSession;
use bytes::Bytes;
use hyper::{Response, StatusCode};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::mpsc;

/// What a request that fails the transport's checks is answered with.
struct Rejected {
    status: StatusCode,
    code: i64,
    message: String,
    data: Option<Value>,
}

fn mismatch(message: String) -> Rejected {
    Rejected {
        status: StatusCode::BAD_REQUEST,
        code: protocol::HEADER_MISMATCH,
        message,
        data: None,
    }
}

/// A header value as the client meant it: `=?base64?…?=` is decoded (values that are not
/// plain visible ASCII travel that way).
fn header_text(raw: &str) -> Option<String> {
    use base64::Engine;
    match raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b64) => base64::engine::general_purpose::STANDARD
            .decode(b64)
            .ok()
            .and_then(|b| String::from_utf8(b).ok()),
        None => Some(raw.to_owned()),
    }
}

/// The checks of the revision, in its order: the version header, the `_meta` keys, the two
/// versions agreeing and supported, then the method and name headers.
fn check(asked: &Asked, method: &str, params: &Value) -> Result<(), Rejected> {
    for name in ["mcp-protocol-version", "mcp-method", "mcp-name"] {
        if asked.headers.get_all(name).iter().count() > 1 {
            return Err(mismatch(format!(
                "the {name} header was sent more than once"
            )));
        }
    }
    let Some(header_version) = asked.header("mcp-protocol-version") else {
        return Err(mismatch(
            "the MCP-Protocol-Version header is required".into(),
        ));
    };
    let meta = params.get("_meta");
    let missing: Vec<&str> = [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES]
        .into_iter()
        .filter(|k| meta.and_then(|m| m.get(*k)).is_none())
        .collect();
    if !missing.is_empty() {
        return Err(Rejected {
            status: StatusCode::BAD_REQUEST,
            code: code::INVALID_PARAMS,
            message: format!("invalid params: _meta lacks {}", missing.join(", ")),
            data: None,
        });
    }
    let version = meta
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if version != header_version {
        return Err(mismatch(format!(
            "the MCP-Protocol-Version header ({header_version}) does not match _meta ({version})"
        )));
    }
    if version != protocol::V_2026_07_28 {
        return Err(Rejected {
            status: StatusCode::BAD_REQUEST,
            code: protocol::UNSUPPORTED_PROTOCOL_VERSION,
            message: format!("unsupported protocol version \"{version}\""),
            data: Some(json!({ "supported": [protocol::V_2026_07_28], "requested": version })),
        });
    }
    match asked.header("mcp-method").and_then(header_text) {
        Some(m) if m == method => {}
        Some(m) => {
            return Err(mismatch(format!(
                "the Mcp-Method header ({m}) does not match the body ({method})"
            )));
        }
        None => return Err(mismatch("the Mcp-Method header is required".into())),
    }
    let target = match method {
        "tools/call" | "prompts/get" => params.get("name"),
        "resources/read" => params.get("uri"),
        _ => None,
    }
    .and_then(Value::as_str);
    if let Some(target) = target {
        match asked.header("mcp-name").and_then(header_text) {
            Some(n) if n == target => {}
            Some(n) => {
                return Err(mismatch(format!(
                    "the Mcp-Name header ({n}) does not match the body ({target})"
                )));
            }
            None => return Err(mismatch("the Mcp-Name header is required".into())),
        }
    }
    Ok(())
}

/// The HTTP status that goes with a JSON-RPC error the revision gives one to.
fn status_of(response: &str) -> StatusCode {
    let code = serde_json::from_str::<Value>(response)
        .ok()
        .and_then(|v| v.pointer("/error/code").and_then(Value::as_i64));
    match code {
        Some(code::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(
            code::PARSE_ERROR
            | code::INVALID_REQUEST
            | protocol::HEADER_MISMATCH
            | protocol::MISSING_CLIENT_CAPABILITY
            | protocol::UNSUPPORTED_PROTOCOL_VERSION,
        ) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// Whether a line the client wrote is the response to `id`.
fn answers(line: &str, id: &Value) -> bool {
    serde_json::from_str::<Value>(line)
        .ok()
        .is_some_and(|v| v.get("method").is_none() && v.get("id") == Some(id))
}

/// Closes a request's client when the exchange is dropped before its answer: the client went
/// away, so the request is cancelled.
struct CancelOnDrop(Option<Arc<ClientSession>>);

impl CancelOnDrop {
    fn done(mut self) {
        if let Some(c) = self.0.take() {
            c.close();
        }
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            tracing::debug!("an HTTP client closed its request's stream; cancelling it");
            c.close();
        }
    }
}

/// Whether a message without a session is a 2026-07-28 request: by its version header or its
/// `_meta`.
pub(super) fn is_modern(asked: &Asked, msg: &Value) -> bool {
    asked.header("mcp-protocol-version") == Some(protocol::V_2026_07_28)
        || msg.pointer("/params/_meta").is_some_and(|m| {
            m.get(META_PROTOCOL_VERSION).is_some() || m.get(META_CLIENT_CAPABILITIES).is_some()
        })
}

pub(super) async fn post(
    state: &Arc<State>,
    asked: &Asked,
    msg: &Value,
    body: Bytes,
) -> Response<Body> {
    let params = msg.get("params").cloned().unwrap_or(Value::Null);
    if !is_modern(asked, msg) {
        tracing::debug!("refused a POST with no session and no 2026-07-28 _meta");
        return refuse(
            StatusCode::BAD_REQUEST,
            "Mcp-Session-Id is required after initialize (or send a 2026-07-28 request, with its _meta)",
        );
    }
    let id = msg.get("id").cloned();
    let method = msg.get("method").and_then(Value::as_str);
    let (Some(id), Some(method)) = (id, method) else {
        // Notifications are accepted; a 2026-07-28 client sends no responses.
        return match method {
            Some(_) => full(StatusCode::ACCEPTED, "text/plain", ""),
            None => rpc_error(
                StatusCode::BAD_REQUEST,
                msg.get("id").unwrap_or(&Value::Null),
                code::INVALID_REQUEST,
                "a 2026-07-28 client sends requests and notifications only",
                None,
            ),
        };
    };
    if let Err(r) = check(asked, method, &params) {
        tracing::debug!("refused a 2026-07-28 {method}: {}", r.message);
        return rpc_error(r.status, &id, r.code, &r.message, r.data);
    }
    if protocol::removed_in_modern(method) {
        return rpc_error(
            StatusCode::NOT_FOUND,
            &id,
            code::METHOD_NOT_FOUND,
            &format!("method not found: {method} (removed in 2026-07-28)"),
            None,
        );
    }
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let client = ClientSession::new(state.session.clone(), tx, Caller::Model);
    super::configure(&client, asked);
    let guard = CancelOnDrop(Some(client.clone()));
    client.handle_line(&body).await;
    // Until something other than the answer comes, the reply can still be plain JSON.
    let first = loop {
        let Some(line) = rx.recv().await else {
            return rpc_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                &id,
                code::INTERNAL_ERROR,
                "loom ended before it answered",
                None,
            );
        };
        if answers(&line, &id) {
            guard.done();
            return full(status_of(&line), "application/json", line);
        }
        if asked.takes_stream {
            break line;
        }
        // A client that takes only JSON gets the answer alone.
    };
    let (events, body_rx) = mpsc::channel::<Bytes>(super::STREAM_QUEUE);
    let _ = events.try_send(sse(&first));
    tokio::spawn(async move {
        loop {
            let line = tokio::select! {
                line = rx.recv() => line,
                // The client closed the stream (noticed at once, not at the next message): the
                // guard cancels the request.
                () = events.closed() => return,
            };
            let Some(line) = line else { break };
            let last = answers(&line, &id);
            // A client that stops reading for STUCK with events waiting is let go (the guard
            // cancels its request), rather than held in memory without bound.
            match tokio::time::timeout(STUCK, events.send(sse(&line))).await {
                Ok(Ok(())) => {}
                _ => return,
            }
            if last {
                break;
            }
        }
        guard.done();
    });
    event_stream(body_rx)
}

/// How long a request's stream may wait for its reader to take an event.
const STUCK: std::time::Duration = std::time::Duration::from_secs(30);

/// One event of a request's stream (2026-07-28 streams are not resumable: no ids).
fn sse(line: &str) -> Bytes {
    Bytes::from(format!(
        "event: message\n{}\n",
        super::outbox::data_lines(line)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::{HeaderMap, HeaderName, HeaderValue};

    fn asked(headers: &[(&str, &str)]) -> Asked {
        let mut h = HeaderMap::new();
        for (k, v) in headers {
            h.insert(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        Asked {
            remote: "127.0.0.1:1".parse().unwrap(),
            takes_stream: true,
            listing: None,
            mode: None,
            notices: Vec::new(),
            headers: h,
        }
    }

    fn meta(version: &str) -> Value {
        json!({ "name": "echo", "_meta": {
            META_PROTOCOL_VERSION: version, META_CLIENT_CAPABILITIES: {} } })
    }

    #[test]
    fn headers_must_match_the_body_in_the_revisions_order() {
        let ok = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "echo"),
        ];
        assert!(check(&asked(&ok), "tools/call", &meta("2026-07-28")).is_ok());
        let code_of = |h: &[(&str, &str)], p: &Value| check(&asked(h), "tools/call", p).err();
        let r = code_of(&ok[1..], &meta("2026-07-28")).unwrap();
        assert_eq!((r.status, r.code), (StatusCode::BAD_REQUEST, -32020));
        let r = code_of(&ok, &json!({ "name": "echo" })).unwrap();
        assert_eq!(r.code, -32602);
        let r = code_of(&ok, &meta("2025-11-25")).unwrap();
        assert_eq!(r.code, -32020, "header and _meta disagree");
        let old = [
            ("mcp-protocol-version", "2099-01-01"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "echo"),
        ];
        let r = code_of(&old, &meta("2099-01-01")).unwrap();
        assert_eq!(r.code, -32022);
        assert_eq!(r.data.unwrap()["supported"][0], "2026-07-28");
        let wrong_name = [ok[0], ok[1], ("mcp-name", "other")];
        assert_eq!(
            code_of(&wrong_name, &meta("2026-07-28")).unwrap().code,
            -32020
        );
        let b64 = [ok[0], ok[1], ("mcp-name", "=?base64?ZWNobw==?=")];
        assert!(
            code_of(&b64, &meta("2026-07-28")).is_none(),
            "base64 form decoded"
        );
        let no_method = [ok[0], ok[2]];
        assert_eq!(
            code_of(&no_method, &meta("2026-07-28")).unwrap().code,
            -32020
        );
    }

    #[test]
    fn error_codes_map_to_the_statuses_the_revision_gives() {
        let with =
            |c: i64| format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":{c},"message":"m"}}}}"#);
        assert_eq!(status_of(&with(-32601)), StatusCode::NOT_FOUND);
        for c in [-32020, -32021, -32022, -32600] {
            assert_eq!(status_of(&with(c)), StatusCode::BAD_REQUEST, "{c}");
        }
        assert_eq!(
            status_of(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            StatusCode::OK
        );
    }
}
