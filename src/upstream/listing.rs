//! The tool listing a client sees, by listing mode: every tool whole (`full`), cut to what a
//! call needs (`compact`: the first sentence of each description, schemas without prose), or only pinned and promoted tools with `loom_find_tools` and
//! `loom_call` to reach the rest (`search`). Every tool stays callable by its exposed name
//! whatever the listing shows. The same decision feeds `tools/list`, the workbench's Tools
//! section (with each tool's cost in tokens and the reason it is listed) and the primer.

use super::tools::{self, LoomTool};
use crate::config::{Config, ListingMode};
use crate::downstream::ServedTool;
use crate::session::listing::ListingState;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Why a tool is in the listing, or that it is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Listed {
    /// Listed because the mode lists every tool (full or compact).
    ByMode,
    /// Pinned in the config (`pin`).
    Pinned,
    /// Pinned by a person in the workbench, for this session.
    PinnedByPerson,
    /// Found and called while unlisted, and kept since (`promote`).
    Promoted,
    /// One of the few loom tools a model needs unprompted.
    Core,
    /// `loom_find_tools` and `loom_call`, listed while anything is not.
    Finder,
    /// Not listed: found with `loom_find_tools`, called by name or with `loom_call`.
    Hidden,
}

impl Listed {
    pub fn is_listed(self) -> bool {
        self != Listed::Hidden
    }

    pub fn words(self) -> &'static str {
        match self {
            Listed::ByMode => "listed",
            Listed::Pinned => "pinned in the config",
            Listed::PinnedByPerson => "pinned this session",
            Listed::Promoted => "promoted",
            Listed::Core => "core",
            Listed::Finder => "finds the rest",
            Listed::Hidden => "not listed",
        }
    }
}

/// One tool's place in a client's listing.
#[derive(Debug, Clone)]
pub struct Placed {
    /// `loom` for loom's own tools.
    pub server: String,
    pub exposed: String,
    /// The name its server gave it (loom's own: the exposed name).
    pub original: String,
    pub listed: Listed,
    /// The definition as listed (compact in compact mode), or whole when hidden.
    pub tool: Value,
    /// The definition as `full` would list it.
    pub full: Value,
}

/// The first paragraph of a description: up to its first blank line.
pub fn first_paragraph(text: &str) -> &str {
    let t = text.trim();
    let end = t
        .find("\n\n")
        .or_else(|| t.find("\r\n\r\n"))
        .unwrap_or(t.len());
    t[..end].trim_end()
}

/// The description a compact listing gives: the first sentence of the first paragraph (what
/// the tool does; the rest is usually how and when), cut to [`COMPACT_DESCRIPTION`]
/// characters.
pub fn compact_description(text: &str) -> String {
    let para = first_paragraph(text);
    let end = para
        .char_indices()
        .find(|&(i, c)| {
            let after = i + c.len_utf8();
            matches!(c, '.' | '!' | '?')
                && (after == para.len() || para[after..].starts_with(char::is_whitespace))
        })
        .map_or(para.len(), |(i, c)| i + c.len_utf8());
    let sentence = &para[..end];
    if sentence.chars().count() <= COMPACT_DESCRIPTION {
        return sentence.to_owned();
    }
    sentence
        .chars()
        .take(COMPACT_DESCRIPTION)
        .collect::<String>()
        + "…"
}

/// Characters of description a compact listing keeps at most.
const COMPACT_DESCRIPTION: usize = 160;

/// Schema keywords that are prose for a reader, or about the schema itself, not constraints a
/// caller must meet.
const PROSE: [&str; 7] = [
    "description",
    "title",
    "examples",
    "$comment",
    "markdownDescription",
    "$schema",
    "$id",
];

/// Removes prose from a JSON Schema (every nested schema too), keeping names, types,
/// `required`, `enum`, defaults and bounds. `additionalProperties: false` goes at the top and
/// in properties (a caller that sends only the listed members meets it without being told),
/// but stays in the branches of `anyOf`/`oneOf`/`allOf`, where it decides which branch a value
/// matches. `$schema` stays when it names draft 4 or older (whose `exclusiveMinimum` means
/// something else), `$id` when a `$ref` may resolve against it.
pub fn without_prose(schema: &mut Value) {
    let has_ref = schema.to_string().contains("\"$ref\"");
    strip(schema, false, has_ref);
}

fn strip(schema: &mut Value, in_branch: bool, has_ref: bool) {
    let Value::Object(m) = schema else { return };
    for k in PROSE {
        let keep = match k {
            "$schema" => m
                .get(k)
                .and_then(Value::as_str)
                .is_some_and(|d| d.contains("draft-04") || d.contains("draft-03")),
            "$id" => has_ref,
            _ => false,
        };
        if !keep {
            m.remove(k);
        }
    }
    if !in_branch && m.get("additionalProperties") == Some(&Value::Bool(false)) {
        m.remove("additionalProperties");
    }
    for key in ["properties", "$defs", "definitions", "patternProperties"] {
        if let Some(Value::Object(children)) = m.get_mut(key) {
            for child in children.values_mut() {
                strip(child, false, has_ref);
            }
        }
    }
    for key in [
        "items",
        "additionalProperties",
        "not",
        "contains",
        "if",
        "then",
        "else",
    ] {
        if let Some(child) = m.get_mut(key) {
            strip(child, false, has_ref);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(children)) = m.get_mut(key) {
            for child in children {
                strip(child, key != "prefixItems", has_ref);
            }
        }
    }
}

/// A tool as `compact` lists it: its name, the first sentence of its description and its
/// input schema without prose; `execution` stays when the tool must run as a task. Titles,
/// annotations, icons and `_meta` go: nothing a client needs to call it.
pub fn compact(tool: &Value) -> Value {
    let mut out = Map::new();
    let Value::Object(t) = tool else {
        return tool.clone();
    };
    if let Some(name) = t.get("name") {
        out.insert("name".into(), name.clone());
    }
    if let Some(d) = t.get("description").and_then(Value::as_str) {
        out.insert("description".into(), Value::String(compact_description(d)));
    }
    if let Some(schema) = t.get("inputSchema") {
        let mut schema = schema.clone();
        without_prose(&mut schema);
        out.insert("inputSchema".into(), schema);
    }
    if let Some(exec) = t.get("execution")
        && exec.get("taskSupport").and_then(Value::as_str) == Some("required")
    {
        out.insert("execution".into(), exec.clone());
    }
    Value::Object(out)
}

/// What decides one client's listing.
pub struct Inputs<'a> {
    pub config: &'a Config,
    /// The connection's own mode (`loom connect --listing`, `?listing=`), over the config's.
    pub connection: Option<ListingMode>,
    pub state: &'a ListingState,
}

impl Inputs<'_> {
    fn mode_of(&self, server: Option<&str>) -> ListingMode {
        self.connection
            .or_else(|| {
                server
                    .and_then(|s| self.config.server(s))
                    .and_then(|s| s.listing)
            })
            .unwrap_or(self.config.listing)
    }
}

fn form(mode: ListingMode, tool: &Value) -> Value {
    match mode {
        ListingMode::Compact => compact(tool),
        _ => tool.clone(),
    }
}

/// Every tool, downstream ones first, each placed: listed (and why) or hidden.
/// Whether and why one tool is listed: a downstream tool of `server` with its `original` name,
/// or (with `None`) one of loom's own. `loom_find_tools` and `loom_call` come out hidden here;
/// [`place`] lists them when anything else is hidden.
pub fn decide(inputs: &Inputs, exposed: &str, downstream: Option<(&str, &str)>) -> Listed {
    match downstream {
        Some((server, original)) => {
            let pinned = inputs
                .config
                .server(server)
                .is_some_and(|spec| spec.pin.matches(original));
            if pinned {
                Listed::Pinned
            } else if inputs.state.is_pinned(exposed) {
                Listed::PinnedByPerson
            } else if inputs.mode_of(Some(server)) != ListingMode::Search {
                Listed::ByMode
            } else if inputs.state.is_promoted(exposed) {
                Listed::Promoted
            } else {
                Listed::Hidden
            }
        }
        None => match tools::spec(exposed).map(|s| s.tool) {
            None | Some(LoomTool::FindTools | LoomTool::Call) => Listed::Hidden,
            Some(_) if inputs.mode_of(None) == ListingMode::Full => Listed::ByMode,
            Some(t) if t.is_core() => Listed::Core,
            Some(_) if inputs.state.is_pinned(exposed) => Listed::PinnedByPerson,
            Some(_) if inputs.state.is_promoted(exposed) => Listed::Promoted,
            Some(_) => Listed::Hidden,
        },
    }
}

/// Every tool, downstream ones first, each placed: listed (and why) or hidden.
pub fn place(inputs: &Inputs, served: Vec<ServedTool>) -> Vec<Placed> {
    let mut out = Vec::with_capacity(served.len() + tools::TOOLS.len());
    for s in served {
        let mode = inputs.mode_of(Some(&s.server));
        let exposed = s.tool["name"].as_str().unwrap_or_default().to_owned();
        let listed = decide(inputs, &exposed, Some((&s.server, &s.original)));
        let tool = if listed.is_listed() {
            form(mode, &s.tool)
        } else {
            s.tool.clone()
        };
        out.push(Placed {
            server: s.server,
            exposed,
            original: s.original,
            listed,
            tool,
            full: s.tool,
        });
    }
    let mode = inputs.mode_of(None);
    let mut hidden = out.iter().any(|p| !p.listed.is_listed());
    for spec in tools::TOOLS {
        let full = tools::definition(spec);
        let listed = decide(inputs, spec.name(), None);
        hidden |= !listed.is_listed() && !matches!(spec.tool, LoomTool::FindTools | LoomTool::Call);
        out.push(Placed {
            server: "loom".into(),
            exposed: spec.name().to_owned(),
            original: spec.name().to_owned(),
            listed,
            tool: if listed.is_listed() {
                form(mode, &full)
            } else {
                full.clone()
            },
            full,
        });
    }
    // The finder and the generic call are listed exactly when something is not.
    if hidden {
        for p in out.iter_mut() {
            if matches!(p.exposed.as_str(), "loom_find_tools" | "loom_call") {
                p.listed = Listed::Finder;
                p.tool = p.full.clone();
            }
        }
    }
    out
}

/// The `tools/list` of a placement.
pub fn listing(placed: &[Placed]) -> Vec<Value> {
    placed
        .iter()
        .filter(|p| p.listed.is_listed())
        .map(|p| p.tool.clone())
        .collect()
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod prose_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prose_goes_and_what_decides_a_match_stays() {
        let mut schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object", "description": "prose", "additionalProperties": false,
            "properties": {
                "target": { "description": "which", "oneOf": [
                    { "type": "object", "properties": { "a": { "type": "string", "title": "A" } },
                      "required": ["a"], "additionalProperties": false },
                    { "type": "object", "properties": { "b": { "type": "integer" } },
                      "additionalProperties": false } ] },
                "n": { "type": "number", "minimum": 0, "examples": [1] } },
            "required": ["target"] });
        without_prose(&mut schema);
        assert_eq!(
            schema,
            json!({ "type": "object", "properties": {
                "target": { "oneOf": [
                    { "type": "object", "properties": { "a": { "type": "string" } },
                      "required": ["a"], "additionalProperties": false },
                    { "type": "object", "properties": { "b": { "type": "integer" } },
                      "additionalProperties": false } ] },
                "n": { "type": "number", "minimum": 0 } },
                "required": ["target"] })
        );
        // Draft 4's dialect and an `$id` a `$ref` resolves against are kept.
        let mut old = json!({ "$schema": "http://json-schema.org/draft-04/schema#",
            "$id": "https://x/s", "properties": { "p": { "$ref": "#/definitions/p" } },
            "definitions": { "p": { "type": "integer", "minimum": 0, "exclusiveMinimum": true } } });
        let before = old.clone();
        without_prose(&mut old);
        assert_eq!(old, before);
    }
}
