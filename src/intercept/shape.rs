//! The kinds of answer loom may replace: a tool's result, a resource read and a prompt. They
//! differ in where their text sits and in the shape any answer to that method must have, so a
//! replacement (an envelope or a pointer, written as a tool result) is dressed here in the
//! shape of the answer it replaces: a `resources/read` answer stays a ReadResourceResult, a
//! `prompts/get` answer a GetPromptResult. Only all-text answers are ever replaced; anything
//! else (a blob, an image, an embedded resource, a shape loom does not know) is left alone.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

/// Which method's answer a result is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `tools/call`: `{content: [blocks], structuredContent?, isError?}`.
    Tool,
    /// `resources/read`: `{contents: [{uri, mimeType?, text | blob}]}`.
    Resource,
    /// `prompts/get`: `{description?, messages: [{role, content: block}]}`.
    Prompt,
}

impl Shape {
    /// The shape of `method`'s answer, for the methods whose answers loom may replace.
    pub fn of_method(method: &str) -> Option<Shape> {
        match method {
            "tools/call" => Some(Shape::Tool),
            "resources/read" => Some(Shape::Resource),
            "prompts/get" => Some(Shape::Prompt),
            _ => None,
        }
    }

    pub fn method(self) -> &'static str {
        match self {
            Shape::Tool => "tools/call",
            Shape::Resource => "resources/read",
            Shape::Prompt => "prompts/get",
        }
    }

    /// What provenance and the call log name the answer by: a tool's name; the method and the
    /// URI or prompt name otherwise (`resources/read memory://knowledge-graph`), so that a
    /// dataset made from a read is never taken for one made by a tool of that name.
    pub fn label(self, target: &str) -> String {
        match self {
            Shape::Tool => target.to_owned(),
            other => format!("{} {target}", other.method()),
        }
    }

    /// What a dataset made from this answer is named after (before the store makes it a
    /// name): the server and the tool, the prompt, or the resource's URI without its scheme.
    pub fn dataset_base(self, server: &str, target: &str) -> String {
        let target = match self {
            Shape::Resource => target.split_once("://").map_or(target, |(_, rest)| rest),
            Shape::Tool | Shape::Prompt => target,
        };
        format!("{server}_{target}")
    }

    /// Whether the answer reports a failure: only a tool's result can (`isError`); a failed
    /// read or prompt is a JSON-RPC error, never a result.
    pub(super) fn is_error(self, v: &Value) -> bool {
        self == Shape::Tool && v.get("isError").and_then(Value::as_bool) == Some(true)
    }

    /// The structured half of the answer (tools only).
    pub(super) fn structured(self, v: &Value) -> Option<&Value> {
        match self {
            Shape::Tool => v.get("structuredContent").filter(|s| !s.is_null()),
            Shape::Resource | Shape::Prompt => None,
        }
    }

    /// Every text of the answer in order, or why the answer is not all text (the reason the
    /// log shows for passing it through).
    pub(super) fn texts(self, v: &Value) -> Result<Vec<&str>, &'static str> {
        let items = |key: &str| {
            v.get(key)
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default()
        };
        match self {
            Shape::Tool => items("content")
                .iter()
                .map(text_block)
                .collect::<Option<_>>()
                .ok_or("non-text content"),
            Shape::Resource => items("contents")
                .iter()
                .map(
                    |c| match (c.get("text").and_then(Value::as_str), c.get("blob")) {
                        (Some(t), None) => Some(t),
                        _ => None,
                    },
                )
                .collect::<Option<_>>()
                .ok_or("non-text content"),
            Shape::Prompt => {
                let messages = items("messages");
                let texts = messages
                    .iter()
                    .map(|m| m.get("content").and_then(text_block))
                    .collect::<Option<Vec<_>>>()
                    .ok_or("non-text content")?;
                // One message stands for all of them only when they all speak for one role:
                // a conversation's turns are not run together.
                let mut roles = messages
                    .iter()
                    .map(|m| m.get("role").and_then(Value::as_str));
                let first = roles.next().flatten();
                if (first.is_none() && !messages.is_empty()) || roles.any(|r| r != first) {
                    return Err("a prompt whose messages speak for different roles");
                }
                Ok(texts)
            }
        }
    }

    /// `replacement` (an envelope or a pointer, as a tool result) as an answer of this shape,
    /// made in place of `original`: for a read, one text content under the original's URI;
    /// for a prompt, one message of the original's role, with its description. `None` when
    /// the original is not this shape after all (the caller then forwards it untouched).
    pub fn dress(self, replacement: Value, original: &RawValue) -> Option<Value> {
        let text = || {
            replacement
                .get("content")?
                .get(0)?
                .get("text")?
                .as_str()
                .map(str::to_owned)
        };
        match self {
            Shape::Tool => Some(replacement),
            Shape::Resource => {
                let read: ReadFrame = serde_json::from_str(original.get()).ok()?;
                let uri = read.contents.into_iter().next()?.uri?;
                Some(
                    json!({ "contents": [{ "uri": uri, "mimeType": "text/plain", "text": text()? }] }),
                )
            }
            Shape::Prompt => {
                let prompt: PromptFrame = serde_json::from_str(original.get()).ok()?;
                let role = prompt.messages.into_iter().next()?.role?;
                let mut out = Map::new();
                if let Some(d) = prompt.description {
                    out.insert("description".into(), d);
                }
                out.insert(
                    "messages".into(),
                    json!([{ "role": role, "content": { "type": "text", "text": text()? } }]),
                );
                Some(Value::Object(out))
            }
        }
    }
}

/// The text of a text content block.
fn text_block(b: &Value) -> Option<&str> {
    match (
        b.get("type").and_then(Value::as_str),
        b.get("text").and_then(Value::as_str),
    ) {
        (Some("text"), Some(t)) => Some(t),
        _ => None,
    }
}

/// What a replaced read keeps of the original: its first URI (the texts are skipped unread).
#[derive(Deserialize)]
struct ReadFrame {
    contents: Vec<UriOnly>,
}

#[derive(Deserialize)]
struct UriOnly {
    uri: Option<String>,
}

/// What a replaced prompt keeps of the original: its description and its messages' role.
#[derive(Deserialize)]
struct PromptFrame {
    description: Option<Value>,
    messages: Vec<RoleOnly>,
}

#[derive(Deserialize)]
struct RoleOnly {
    role: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(v: &Value) -> Box<RawValue> {
        serde_json::value::to_raw_value(v).unwrap()
    }

    fn envelope(text: &str) -> Value {
        json!({ "content": [{ "type": "text", "text": text }], "structuredContent": { "kind": "dataset" } })
    }

    #[test]
    fn a_read_keeps_its_uri_and_becomes_one_text_content() {
        let original = json!({ "contents": [
            { "uri": "memory://knowledge-graph", "mimeType": "application/json", "text": "{}" },
            { "uri": "memory://other", "text": "x" },
        ] });
        let dressed = Shape::Resource
            .dress(envelope("Dataset `m_1`"), &raw(&original))
            .unwrap();
        assert_eq!(
            dressed,
            json!({ "contents": [{ "uri": "memory://knowledge-graph", "mimeType": "text/plain", "text": "Dataset `m_1`" }] })
        );
        // No URI to keep: not dressed (forwarded untouched instead).
        let nameless = json!({ "contents": [{ "text": "x" }] });
        assert!(
            Shape::Resource
                .dress(envelope("e"), &raw(&nameless))
                .is_none()
        );
        assert!(
            Shape::Resource
                .dress(envelope("e"), &raw(&json!({})))
                .is_none()
        );
    }

    #[test]
    fn a_prompt_keeps_its_description_and_role() {
        let original = json!({ "description": "Fetch a page", "messages": [
            { "role": "user", "content": { "type": "text", "text": "a" } },
            { "role": "user", "content": { "type": "text", "text": "b" } },
        ] });
        let dressed = Shape::Prompt
            .dress(envelope("Parked `b`"), &raw(&original))
            .unwrap();
        assert_eq!(
            dressed,
            json!({ "description": "Fetch a page", "messages": [{ "role": "user", "content": { "type": "text", "text": "Parked `b`" } }] })
        );
        let bare = json!({ "messages": [{ "role": "assistant", "content": { "type": "text", "text": "a" } }] });
        assert_eq!(
            Shape::Prompt.dress(envelope("p"), &raw(&bare)).unwrap(),
            json!({ "messages": [{ "role": "assistant", "content": { "type": "text", "text": "p" } }] })
        );
    }

    #[test]
    fn only_all_text_answers_have_texts() {
        let read =
            json!({ "contents": [{ "uri": "a", "text": "one" }, { "uri": "b", "text": "two" }] });
        assert_eq!(Shape::Resource.texts(&read), Ok(vec!["one", "two"]));
        let blob =
            json!({ "contents": [{ "uri": "a", "text": "one" }, { "uri": "b", "blob": "AAAA" }] });
        assert_eq!(Shape::Resource.texts(&blob), Err("non-text content"));
        let prompt = json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": "hi" } }] });
        assert_eq!(Shape::Prompt.texts(&prompt), Ok(vec!["hi"]));
        let image = json!({ "messages": [
            { "role": "user", "content": { "type": "text", "text": "hi" } },
            { "role": "user", "content": { "type": "image", "data": "AAAA", "mimeType": "image/png" } },
        ] });
        assert_eq!(Shape::Prompt.texts(&image), Err("non-text content"));
        let turns = json!({ "messages": [
            { "role": "user", "content": { "type": "text", "text": "q" } },
            { "role": "assistant", "content": { "type": "text", "text": "a" } },
        ] });
        assert!(Shape::Prompt.texts(&turns).is_err());
        // A read or a prompt has no `isError`: a member of that name is not a failure.
        assert!(!Shape::Resource.is_error(&json!({ "isError": true, "contents": [] })));
        assert!(Shape::Tool.is_error(&json!({ "isError": true, "content": [] })));
    }

    #[test]
    fn names_say_the_method_and_drop_a_uri_scheme() {
        assert_eq!(
            Shape::Resource.label("memory://knowledge-graph"),
            "resources/read memory://knowledge-graph"
        );
        assert_eq!(Shape::Prompt.label("fetch"), "prompts/get fetch");
        assert_eq!(Shape::Tool.label("read_graph"), "read_graph");
        assert_eq!(
            Shape::Resource.dataset_base("memory", "memory://knowledge-graph"),
            "memory_knowledge-graph"
        );
        assert_eq!(Shape::Prompt.dataset_base("fetch", "fetch"), "fetch_fetch");
    }
}
