//! A legacy client in front of a 2026-07-28 server: the server does not send requests to the
//! client; it answers a call with `input_required` (the questions, and its own `requestState`).
//! A legacy client would not understand that, so loom asks the client each question as the real
//! request (`elicitation/create`, `sampling/createMessage`, `roots/list`) and retries the call
//! with the answers. The retry is part of the same call: not approved, logged or counted again.

use super::*;

/// What an `input_required` result asks: the questions by key, and the server's state.
pub(super) struct InputRequired {
    pub requests: Map<String, Value>,
    pub state: Option<Value>,
}

/// A result's `resultType`, and nothing else of it.
#[derive(serde::Deserialize)]
struct ResultKind<'a> {
    #[serde(rename = "resultType", borrow, default)]
    result_type: Option<std::borrow::Cow<'a, str>>,
}

/// The questions of an `input_required` result; `None` for any other result.
pub(super) fn input_required(raw: &RawValue) -> Option<InputRequired> {
    // Most results are not: their kind alone is read (the rest is skipped, not built), and
    // only an `input_required` one, or one the narrow read cannot decide (a repeated or
    // non-string `resultType`), is read whole.
    if serde_json::from_str::<ResultKind>(raw.get())
        .is_ok_and(|k| k.result_type.as_deref() != Some("input_required"))
    {
        return None;
    }
    let v: Value = serde_json::from_str(raw.get()).ok()?;
    if v.get("resultType").and_then(Value::as_str) != Some("input_required") {
        return None;
    }
    Some(InputRequired {
        requests: v.get("inputRequests")?.as_object()?.clone(),
        state: v.get("requestState").cloned(),
    })
}

impl ClientSession {
    /// Asks the client every question, as requests of its era; the answers by key, or why the
    /// client could not answer (a capability it did not declare, an error it returned, no
    /// answer within `wait`).
    pub(super) async fn ask_client(
        &self,
        requests: &Map<String, Value>,
        wait: std::time::Duration,
    ) -> Result<Map<String, Value>, String> {
        let mut answers = Map::new();
        for (key, request) in requests {
            let method = request["method"].as_str().unwrap_or_default();
            let Some(cap) = protocol::capability_for_server_request(method) else {
                return Err(format!(
                    "the server asked with an unknown method `{method}`"
                ));
            };
            if !lock(&self.caps).has(cap) {
                return Err(format!(
                    "the server needs {method}, and this client did not declare `{cap}`"
                ));
            }
            let ours = jsonrpc::to_raw(&format!(
                "loom-q-{}",
                self.next_id.fetch_add(1, Ordering::Relaxed)
            ));
            let (tx, rx) = oneshot::channel();
            lock(&self.asked).insert(id_key(&ours), tx);
            let params = request.get("params").map(jsonrpc::to_raw);
            self.send(jsonrpc::request(&ours, method, params.as_deref()));
            let answer = tokio::time::timeout(wait, rx).await;
            lock(&self.asked).remove(&id_key(&ours));
            match answer {
                Ok(Ok(Ok(result))) => {
                    answers.insert(key.clone(), result);
                }
                Ok(Ok(Err(error))) => {
                    return Err(format!(
                        "the client answered {method} with an error: {error}"
                    ));
                }
                Ok(Err(_)) => return Err("the client went away before it answered".into()),
                Err(_) => {
                    return Err(format!(
                        "the client did not answer {method} within {wait:?}"
                    ));
                }
            }
        }
        Ok(answers)
    }

    /// A response of the client to a question loom asked it; whether it was one.
    pub(super) fn take_answer(
        &self,
        id: &RawValue,
        result: Option<&RawValue>,
        error: Option<&RawValue>,
    ) -> bool {
        let Some(tx) = lock(&self.asked).remove(&id_key(id)) else {
            return false;
        };
        let parse = |r: &RawValue| serde_json::from_str::<Value>(r.get()).unwrap_or(Value::Null);
        let _ = tx.send(match (result, error) {
            (Some(r), _) => Ok(parse(r)),
            (None, Some(e)) => Err(parse(e)),
            _ => Err(Value::Null),
        });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_input_required_results_ask() {
        let raw = |s: &str| RawValue::from_string(s.to_owned()).unwrap();
        assert!(input_required(&raw(r#"{"content":[]}"#)).is_none());
        assert!(input_required(&raw(r#"{"resultType":"complete"}"#)).is_none());
        let ask = input_required(&raw(
            r#"{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}},"requestState":"s1"}"#,
        ))
        .unwrap();
        assert_eq!(ask.requests.len(), 1);
        assert_eq!(ask.state, Some(json!("s1")));
        // Escaped, repeated or odd kinds are read as the whole result reads them.
        for text in [
            r#"{"resultType":"input_\u0072equired","inputRequests":{}}"#,
            r#"{"resultType":"complete","resultType":"input_required","inputRequests":{}}"#,
        ] {
            assert!(input_required(&raw(text)).is_some(), "{text}");
        }
        assert!(input_required(&raw(r#"{"resultType":7,"inputRequests":{}}"#)).is_none());
    }

    /// The whole result read, as `input_required` read it before the narrow read.
    fn asks_when_read_whole(raw: &RawValue) -> bool {
        serde_json::from_str::<Value>(raw.get()).is_ok_and(|v| {
            v.get("resultType").and_then(Value::as_str) == Some("input_required")
                && v.get("inputRequests").is_some_and(Value::is_object)
        })
    }

    proptest::proptest! {
        /// Any result, with or without a kind (repeated, escaped, of any type), asks exactly
        /// when the whole result says so.
        #[test]
        fn the_narrow_read_decides_as_the_whole_result(
            kinds in proptest::collection::vec(proptest::prop_oneof![
                proptest::strategy::Just(r#""input_required""#),
                proptest::strategy::Just(r#""input_\u0072equired""#),
                proptest::strategy::Just(r#""complete""#),
                proptest::strategy::Just("7"),
                proptest::strategy::Just("null"),
                proptest::strategy::Just(r#"{"a":1}"#),
            ], 0..3),
            asks in proptest::bool::ANY,
            noise in "[a-z\\\"{}:,\\[\\] 0-9]{0,12}",
        ) {
            let mut members: Vec<String> = kinds.iter().map(|k| format!(r#""resultType":{k}"#)).collect();
            if asks {
                members.push(r#""inputRequests":{"a":{"method":"roots/list"}}"#.into());
            }
            members.push(format!(r#""content":[{{"type":"text","text":{}}}]"#, json!(noise)));
            let text = format!("{{{}}}", members.join(","));
            let Ok(raw) = RawValue::from_string(text.clone()) else { return Ok(()) };
            proptest::prop_assert_eq!(input_required(&raw).is_some(), asks_when_read_whole(&raw), "{}", text);
        }
    }
}
