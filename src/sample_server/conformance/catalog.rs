//! What the conformance fixture offers, as data: its tools, prompts, resources and templates
//! with the exact names, URIs and contents the official suite's scenarios ask for, and the
//! small media files its image and audio fixtures return. Nothing here sends or decides.

use serde_json::{Value, json};

/// A 1×1 red PNG, made for this fixture.
pub const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC";
/// Eight samples of silence, 16-bit mono at 8 kHz, as a WAV file made for this fixture.
pub const WAV_BASE64: &str =
    "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA";

pub const STATIC_TEXT_URI: &str = "test://static-text";
pub const STATIC_BINARY_URI: &str = "test://static-binary";
pub const WATCHED_URI: &str = "test://watched-resource";
pub const TEMPLATE_URI: &str = "test://template/{id}/data";
const TEMPLATE_PREFIX: &str = "test://template/";
const TEMPLATE_SUFFIX: &str = "/data";

/// The tool that only exists while `test_trigger_tool_change` has switched it on.
pub const DYNAMIC_TOOL: &str = "test_dynamic_tool";
/// The prompt that only exists while `test_trigger_prompt_change` has switched it on.
pub const DYNAMIC_PROMPT: &str = "test_dynamic_prompt";

fn no_args() -> Value {
    json!({ "type": "object", "properties": {} })
}

fn tool(name: &str, description: &str) -> Value {
    json!({ "name": name, "description": description, "inputSchema": no_args() })
}

fn tool_with(name: &str, description: &str, arg: &str, arg_description: &str) -> Value {
    json!({
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": { arg: { "type": "string", "description": arg_description } },
            "required": [arg],
        },
    })
}

/// Every tool, in a fixed order (2026-07-28 asks for a deterministic `tools/list`).
pub fn tools(dynamic_tool: bool) -> Vec<Value> {
    let mut all = vec![
        tool("test_simple_text", "Returns one text block."),
        tool("test_image_content", "Returns a PNG image."),
        tool("test_audio_content", "Returns a WAV clip."),
        tool(
            "test_embedded_resource",
            "Returns an embedded text resource.",
        ),
        tool(
            "test_multiple_content_types",
            "Returns text, an image and an embedded resource.",
        ),
        tool(
            "test_tool_with_logging",
            "Logs three info messages while it runs.",
        ),
        tool(
            "test_logging_tool",
            "Logs three info messages while it runs (only at a level the request set).",
        ),
        tool(
            "test_tool_with_progress",
            "Reports progress 0, 50 and 100 of 100.",
        ),
        tool("test_error_handling", "Always fails, as a tool error."),
        tool_with(
            "test_sampling",
            "Asks the client's model to answer a prompt.",
            "prompt",
            "The prompt to send to the model",
        ),
        tool_with(
            "test_elicitation",
            "Asks the user for a username and an email address.",
            "message",
            "The message to show the user",
        ),
        tool(
            "test_elicitation_sep1034_defaults",
            "Asks the user with a form whose fields all have defaults (SEP-1034).",
        ),
        tool(
            "test_elicitation_sep1330_enums",
            "Asks the user with every enum form of SEP-1330.",
        ),
        tool(
            "test_missing_capability",
            "Needs the client's sampling capability.",
        ),
        tool(
            "test_streaming_elicitation",
            "Needs the user's confirmation before it answers.",
        ),
        tool(
            "test_trigger_tool_change",
            "Adds or removes test_dynamic_tool, and says so to listeners.",
        ),
        tool(
            "test_trigger_prompt_change",
            "Adds or removes test_dynamic_prompt, and says so to listeners.",
        ),
        tool(
            "test_trigger_resource_update",
            "Announces an update of test://watched-resource to its subscribers.",
        ),
        tool(
            "test_input_required_result_elicitation",
            "Asks for the user's name (key user_name).",
        ),
        tool(
            "test_input_required_result_sampling",
            "Asks the model for the capital of France (key capital_question).",
        ),
        tool(
            "test_input_required_result_list_roots",
            "Asks for the client's roots (key client_roots).",
        ),
        tool(
            "test_input_required_result_request_state",
            "Asks for a confirmation and checks the request state it issued.",
        ),
        tool(
            "test_input_required_result_multiple_inputs",
            "Asks for a name, a greeting and the roots at once.",
        ),
        tool(
            "test_input_required_result_multi_round",
            "Asks for a name, then for a colour, in two rounds.",
        ),
        tool(
            "test_input_required_result_tampered_state",
            "Asks for a confirmation; refuses a request state that was changed.",
        ),
        tool(
            "test_input_required_result_capabilities",
            "Asks only through the capabilities the client declared.",
        ),
    ];
    if dynamic_tool {
        all.push(tool(
            DYNAMIC_TOOL,
            "Exists while test_trigger_tool_change has added it.",
        ));
    }
    all
}

/// Every prompt, in a fixed order.
pub fn prompts(dynamic_prompt: bool) -> Vec<Value> {
    let mut all = vec![
        json!({ "name": "test_simple_prompt", "description": "A prompt without arguments." }),
        json!({
            "name": "test_prompt_with_arguments",
            "description": "A prompt that quotes its two arguments.",
            "arguments": [
                { "name": "arg1", "description": "First test argument", "required": true },
                { "name": "arg2", "description": "Second test argument", "required": true },
            ],
        }),
        json!({
            "name": "test_prompt_with_embedded_resource",
            "description": "A prompt that embeds a resource.",
            "arguments": [
                { "name": "resourceUri", "description": "URI of the resource to embed", "required": true },
            ],
        }),
        json!({ "name": "test_prompt_with_image", "description": "A prompt with an image." }),
        json!({
            "name": "test_input_required_result_prompt",
            "description": "A prompt that first asks the user for its context.",
        }),
    ];
    if dynamic_prompt {
        all.push(json!({
            "name": DYNAMIC_PROMPT,
            "description": "Exists while test_trigger_prompt_change has added it.",
        }));
    }
    all
}

pub fn resources() -> Vec<Value> {
    vec![
        json!({
            "uri": STATIC_TEXT_URI, "name": "static-text", "mimeType": "text/plain",
            "description": "A fixed text resource.",
        }),
        json!({
            "uri": STATIC_BINARY_URI, "name": "static-binary", "mimeType": "image/png",
            "description": "A fixed binary resource (a PNG image).",
        }),
        json!({
            "uri": WATCHED_URI, "name": "watched-resource", "mimeType": "text/plain",
            "description": "A resource to subscribe to; test_trigger_resource_update announces updates.",
        }),
    ]
}

pub fn resource_templates() -> Vec<Value> {
    vec![json!({
        "uriTemplate": TEMPLATE_URI, "name": "template-data", "mimeType": "application/json",
        "description": "Data for one id.",
    })]
}

/// The contents of a resource, or `None` when no resource has this URI.
pub fn read(uri: &str) -> Option<Value> {
    let content = match uri {
        STATIC_TEXT_URI => json!({
            "uri": uri, "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }),
        STATIC_BINARY_URI => json!({ "uri": uri, "mimeType": "image/png", "blob": PNG_BASE64 }),
        WATCHED_URI => json!({
            "uri": uri, "mimeType": "text/plain", "text": "The watched resource, as it is now.",
        }),
        _ => {
            let id = template_id(uri)?;
            let data =
                json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") });
            json!({ "uri": uri, "mimeType": "application/json", "text": data.to_string() })
        }
    };
    Some(json!({ "contents": [content] }))
}

/// The `{id}` of a URI that fills `test://template/{id}/data`.
fn template_id(uri: &str) -> Option<&str> {
    let id = uri
        .strip_prefix(TEMPLATE_PREFIX)?
        .strip_suffix(TEMPLATE_SUFFIX)?;
    (!id.is_empty() && !id.contains('/')).then_some(id)
}

/// The candidates `completion/complete` offers for one argument, or `None` for an unknown
/// reference or argument.
pub fn completion_candidates(reference: &Value, argument: &str) -> Option<&'static [&'static str]> {
    match (reference["type"].as_str()?, argument) {
        ("ref/prompt", "arg1" | "arg2")
            if reference["name"].as_str() == Some("test_prompt_with_arguments") =>
        {
            Some(&["paris", "park", "party", "test", "testing"])
        }
        ("ref/resource", "id") if reference["uri"].as_str() == Some(TEMPLATE_URI) => {
            Some(&["1", "42", "123"])
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_ids_are_one_non_empty_segment() {
        assert_eq!(template_id("test://template/123/data"), Some("123"));
        assert_eq!(template_id("test://template//data"), None);
        assert_eq!(template_id("test://template/1/2/data"), None);
        assert_eq!(template_id("test://template/123"), None);
        let read = read("test://template/123/data").unwrap();
        let text = read["contents"][0]["text"].as_str().unwrap();
        let parsed: Value = serde_json::from_str(text).unwrap();
        assert_eq!(
            parsed,
            json!({ "id": "123", "templateTest": true, "data": "Data for ID: 123" })
        );
        assert!(super::read("test://nonexistent").is_none());
    }

    #[test]
    fn names_follow_the_tool_name_rules_and_do_not_repeat() {
        let all = tools(true);
        let mut names: Vec<&str> = all.iter().filter_map(|t| t["name"].as_str()).collect();
        for n in &names {
            assert!(
                (1..=128).contains(&n.len())
                    && n.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)),
                "{n}"
            );
        }
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count);
        assert_eq!(tools(false).len() + 1, count);
    }

    #[test]
    fn the_media_decode_to_the_formats_they_claim() {
        let png = decode_base64(PNG_BASE64);
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let wav = decode_base64(WAV_BASE64);
        assert_eq!((&wav[..4], &wav[8..12]), (&b"RIFF"[..], &b"WAVE"[..]));
    }

    fn decode_base64(s: &str) -> Vec<u8> {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut bits = 0u32;
        let mut n = 0;
        let mut out = Vec::new();
        for c in s.bytes().filter(|c| *c != b'=') {
            let v = ALPHABET.iter().position(|a| *a == c).unwrap() as u32;
            bits = (bits << 6) | v;
            n += 6;
            if n >= 8 {
                n -= 8;
                out.push((bits >> n) as u8);
            }
        }
        out
    }
}
