//! Deciding what to do with a tool result, a resource read or a prompt (see `shape`): pass it
//! through untouched, or find the rows in it. Error results, results with non-text parts and
//! results under the token threshold always pass through; so does anything ambiguous. Nothing
//! here may fail loudly: every problem is a pass-through.

pub mod extract;
pub mod redact;
pub mod shape;
pub mod table;
pub mod tokens;

use serde_json::Value;
use serde_json::value::RawValue;
pub use shape::Shape;
pub use table::Table;

/// What to do with one result.
#[derive(Debug)]
pub enum Decision {
    /// Forward the original bytes; the reason is for the log and the workbench.
    Pass(&'static str),
    /// Rows were found: ingest them and answer with an envelope.
    Table { table: Table, tokens: usize },
    /// Large text that is not a table: to be parked.
    Text { text: String, tokens: usize },
    /// Several tables side by side in one result (see `extract::multi`): one dataset each,
    /// and one envelope for them all.
    Tables {
        tables: Vec<extract::multi::NamedTable>,
        tokens: usize,
    },
}

/// Looks at a `tools/call` result and decides.
pub fn decide(result: &RawValue, threshold: usize) -> Decision {
    decide_as(Shape::Tool, result, threshold)
}

/// Looks at an answer of `shape` and decides, by the same rules whatever the method.
pub fn decide_as(shape: Shape, result: &RawValue, threshold: usize) -> Decision {
    // A token is at least one byte of JSON on average (CJK: three bytes, ~one token), so a
    // result shorter than the threshold in bytes can never exceed it: skip parsing.
    if result.get().len() < threshold {
        return Decision::Pass("small");
    }
    let Ok(v) = serde_json::from_str::<Value>(result.get()) else {
        return Decision::Pass("unparseable");
    };
    if shape.is_error(&v) {
        return Decision::Pass("error result");
    }
    let texts = match shape.texts(&v) {
        Ok(texts) => texts,
        Err(why) => return Decision::Pass(why),
    };
    let structured = shape.structured(&v);
    let mut tokens: usize = texts.iter().map(|t| tokens::estimate(t)).sum();
    // `structuredContent` is the same result as the text blocks (the spec asks a server that
    // sends it to send its text too), and a client shows the model one of them: the larger
    // counts, not both.
    if let Some(s) = structured {
        tokens = tokens.max(tokens::estimate(&s.to_string()));
    }
    if tokens < threshold {
        return Decision::Pass("below threshold");
    }
    if let Some(table) = extract::find_rows(structured, &texts).and_then(extract::Found::into_table)
    {
        return Decision::Table { table, tokens };
    }
    if let Some(tables) = extract::multi::tables(structured, &texts) {
        return Decision::Tables { tables, tokens };
    }
    if texts.is_empty() {
        return Decision::Pass("structured content that is not a table");
    }
    Decision::Text {
        text: joined(&texts),
        tokens,
    }
}

/// Text blocks as one parked text.
fn joined(texts: &[&str]) -> String {
    texts.join("\n\n")
}

/// A result's text as it would be parked, when it is all text: for a table that could not be
/// stored, which is then parked rather than forwarded whole.
pub fn text_of(result: &RawValue) -> Option<String> {
    text_of_as(Shape::Tool, result)
}

/// [`text_of`] for an answer of `shape`.
pub fn text_of_as(shape: Shape, result: &RawValue) -> Option<String> {
    let v = serde_json::from_str::<Value>(result.get()).ok()?;
    let texts = shape.texts(&v).ok()?;
    (!texts.is_empty()).then(|| joined(&texts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(v: Value) -> Box<RawValue> {
        serde_json::value::to_raw_value(&v).unwrap()
    }

    fn big_rows(n: usize) -> String {
        let rows: Vec<Value> = (0..n).map(|i| serde_json::json!({ "id": i, "name": format!("item {i}"), "price": i as f64 * 1.5 })).collect();
        Value::Array(rows).to_string()
    }

    #[test]
    fn a_result_said_twice_is_counted_once() {
        // tree-sitter's `list_files`: the text block and `structuredContent` hold the same
        // list, together over the threshold, each under it.
        let files: Vec<String> = (0..120)
            .map(|i| format!("src/module_{i}/file.rs"))
            .collect();
        let text = serde_json::to_string(&files).unwrap();
        let one = tokens::estimate(&text);
        assert!(one < 2000 && 2 * one > 2000, "{one}");
        let r = raw(serde_json::json!({
            "content": [{ "type": "text", "text": text }],
            "structuredContent": { "result": files },
        }));
        assert!(matches!(
            decide(&r, 2000),
            Decision::Pass("below threshold")
        ));
        // Over the threshold alone, it is still read (from `structuredContent`).
        let big: Vec<String> = (0..400)
            .map(|i| format!("src/module_{i}/file.rs"))
            .collect();
        let r = raw(serde_json::json!({
            "content": [{ "type": "text", "text": serde_json::to_string(&big).unwrap() }],
            "structuredContent": { "result": big },
        }));
        assert!(matches!(decide(&r, 2000), Decision::Table { .. }));
    }

    #[test]
    fn gates() {
        let text = big_rows(500);
        let ok = raw(serde_json::json!({ "content": [{ "type": "text", "text": text }] }));
        assert!(matches!(decide(&ok, 2000), Decision::Table { .. }));
        let err = raw(
            serde_json::json!({ "content": [{ "type": "text", "text": text }], "isError": true }),
        );
        assert!(matches!(decide(&err, 2000), Decision::Pass("error result")));
        let image = raw(
            serde_json::json!({ "content": [{ "type": "text", "text": text }, { "type": "image", "data": "AAAA", "mimeType": "image/png" }] }),
        );
        assert!(matches!(
            decide(&image, 2000),
            Decision::Pass("non-text content")
        ));
        let small =
            raw(serde_json::json!({ "content": [{ "type": "text", "text": big_rows(3) }] }));
        assert!(matches!(decide(&small, 2000), Decision::Pass(_)));
        let prose = raw(
            serde_json::json!({ "content": [{ "type": "text", "text": "All work and no play makes Jack a dull boy. ".repeat(500) }] }),
        );
        assert!(matches!(decide(&prose, 2000), Decision::Text { .. }));
    }

    #[test]
    fn reads_and_prompts_meet_the_same_gates() {
        let rows = big_rows(500);
        let read = raw(
            serde_json::json!({ "contents": [{ "uri": "x://t", "mimeType": "application/json", "text": rows }] }),
        );
        assert!(matches!(
            decide_as(Shape::Resource, &read, 2000),
            Decision::Table { .. }
        ));
        // Read as a tool result, the same answer has no content blocks: nothing to find.
        assert!(matches!(decide(&read, 2000), Decision::Pass(_)));
        let with_blob = raw(serde_json::json!({ "contents": [
            { "uri": "x://t", "text": rows },
            { "uri": "x://i", "mimeType": "image/png", "blob": "AAAA".repeat(2000) },
        ] }));
        assert!(matches!(
            decide_as(Shape::Resource, &with_blob, 2000),
            Decision::Pass("non-text content")
        ));
        let small =
            raw(serde_json::json!({ "contents": [{ "uri": "x://t", "text": big_rows(3) }] }));
        assert!(matches!(
            decide_as(Shape::Resource, &small, 2000),
            Decision::Pass(_)
        ));
        let prose = "All work and no play makes Jack a dull boy. ".repeat(500);
        let prompt = raw(
            serde_json::json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": prose } }] }),
        );
        match decide_as(Shape::Prompt, &prompt, 2000) {
            Decision::Text { text, .. } => assert_eq!(text, prose),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            text_of_as(Shape::Prompt, &prompt).as_deref(),
            Some(prose.as_str())
        );
        let image = raw(serde_json::json!({ "messages": [
            { "role": "user", "content": { "type": "text", "text": prose } },
            { "role": "user", "content": { "type": "image", "data": "AAAA", "mimeType": "image/png" } },
        ] }));
        assert!(matches!(
            decide_as(Shape::Prompt, &image, 2000),
            Decision::Pass("non-text content")
        ));
    }
}
