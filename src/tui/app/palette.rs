//! The tool palette: choosing a tool, prefilled and validated arguments.

use super::*;

impl App {
    pub(super) fn open_palette(&mut self) {
        if self.tools.is_empty() {
            self.send(Purpose::Tools, Request::Tools);
        }
        self.overlay = Overlay::Palette(Palette {
            filter: String::new(),
            selected: 0,
            stage: PaletteStage::Pick,
            error: None,
        });
    }

    pub fn palette_matches(&self, filter: &str) -> Vec<Value> {
        let f = filter.to_lowercase();
        self.tools
            .iter()
            .filter(|t| {
                f.is_empty()
                    || t["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_lowercase()
                        .contains(&f)
                    || t["description"]
                        .as_str()
                        .unwrap_or_default()
                        .to_lowercase()
                        .contains(&f)
            })
            .cloned()
            .collect()
    }
}

/// Arguments prefilled from a tool's input schema: required ones (their default, else a
/// placeholder of their type) and optional ones only when the schema gives their default.
pub fn prefill_arguments(tool: &Value) -> String {
    let schema = &tool["inputSchema"];
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut obj = serde_json::Map::new();
    if let Some(props) = schema["properties"].as_object() {
        for (name, p) in props {
            // An optional argument is left out unless the schema gives its default: an example
            // value (an enum's first member, a zero) would silently narrow the call.
            if !required.contains(&name.as_str()) && p.get("default").is_none() {
                continue;
            }
            let v = if let Some(d) = p.get("default") {
                d.clone()
            } else if let Some(e) = p["enum"].as_array().and_then(|e| e.first()) {
                e.clone()
            } else {
                match p["type"].as_str() {
                    Some("integer") | Some("number") => Value::from(0),
                    Some("boolean") => Value::Bool(false),
                    Some("array") => Value::Array(Vec::new()),
                    Some("object") => Value::Object(Default::default()),
                    _ => Value::String(String::new()),
                }
            };
            obj.insert(name.clone(), v);
        }
    }
    serde_json::to_string_pretty(&Value::Object(obj)).unwrap_or_else(|_| "{}".into())
}

/// Checks typed arguments against the tool's schema before anything is sent.
pub fn validate_arguments(tool: &Value, text: &str) -> Result<Value, String> {
    let v: Value = serde_json::from_str(if text.trim().is_empty() { "{}" } else { text })
        .map_err(|e| format!("not valid JSON: {e}"))?;
    let Value::Object(args) = &v else {
        return Err("arguments must be a JSON object".into());
    };
    let schema = &tool["inputSchema"];
    for r in schema["required"].as_array().into_iter().flatten() {
        if let Some(name) = r.as_str()
            && !args.contains_key(name)
        {
            return Err(format!("missing required argument `{name}`"));
        }
    }
    if let Some(props) = schema["properties"].as_object() {
        for (k, val) in args {
            let Some(p) = props.get(k) else {
                if schema["additionalProperties"] == Value::Bool(false) {
                    return Err(format!("unknown argument `{k}`"));
                }
                continue;
            };
            let ok = match p["type"].as_str() {
                Some("string") => val.is_string(),
                Some("integer") => val.is_i64() || val.is_u64(),
                Some("number") => val.is_number(),
                Some("boolean") => val.is_boolean(),
                Some("array") => val.is_array(),
                Some("object") => val.is_object(),
                _ => true,
            };
            if !ok {
                return Err(format!(
                    "argument `{k}` must be {}",
                    p["type"].as_str().unwrap_or("of another type")
                ));
            }
            if let Some(e) = p["enum"].as_array()
                && !e.contains(val)
            {
                return Err(format!(
                    "argument `{k}` must be one of {}",
                    Value::Array(e.clone())
                ));
            }
        }
    }
    Ok(v)
}
