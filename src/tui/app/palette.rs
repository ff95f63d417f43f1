//! The tool palette (an overlay): it owns the filter, the chosen tool and the arguments being
//! typed, prefilled from the tool's schema and checked against it before anything is sent.
//! A required argument still holding the placeholder it was prefilled with, or a tool that may
//! destroy something, is asked about (`y` calls, `n` goes back) before it is sent: two
//! `enter`s must never fire a destructive call with a made-up value.
//! Listing the tools and calling one are the app's (`App::send`); it never draws.

use super::keys::edit_line;
use super::navigation::step;
use super::*;
use crate::tui::highlight::LineCache;

pub enum PaletteStage {
    Pick,
    Edit {
        tool: Value,
        args: Box<TextArea<'static>>,
    },
}

/// The palette's state.
pub struct Palette {
    pub filter: LineInput,
    pub selected: usize,
    pub stage: PaletteStage,
    pub error: Option<String>,
    /// Where the arguments stop being JSON (row, byte in the row), marked in the text.
    pub error_at: Option<(usize, usize)>,
    /// The arguments' colours must be applied again before the next frame.
    pub(super) dirty: bool,
    /// The arguments' highlighting, line by line, from the frames before.
    pub(super) colours: LineCache,
    /// Required arguments prefilled with a placeholder of their type (not a schema default):
    /// a value still equal to it was not typed by the person.
    placeholders: Vec<(String, Value)>,
    /// The question asked before the call is sent (placeholders left, a destructive tool);
    /// while it is asked, `y` sends and `n`/`esc` goes back to the arguments.
    pub question: Option<String>,
}

impl Palette {
    fn new() -> Palette {
        Palette {
            filter: LineInput::default(),
            selected: 0,
            stage: PaletteStage::Pick,
            error: None,
            error_at: None,
            dirty: false,
            colours: LineCache::default(),
            placeholders: Vec::new(),
            question: None,
        }
    }

    /// The tools whose name or description holds the filter: those whose name holds it first
    /// (a name that starts with it, or has it after a `_`/`-`, before the rest), then those
    /// whose description does, each in the order listed.
    pub fn matches(&self, tools: &[Value]) -> Vec<Value> {
        let f = self.filter.to_lowercase();
        let text = |t: &Value, k: &str| t[k].as_str().unwrap_or_default().to_lowercase();
        let rank = |t: &Value| -> Option<u8> {
            if f.is_empty() {
                return Some(0);
            }
            let name = text(t, "name");
            match name.find(&f) {
                Some(_)
                    if name.starts_with(&f)
                        || name.match_indices(&f).any(|(i, _)| {
                            matches!(name[..i].chars().last(), Some('_' | '-' | '.'))
                        }) =>
                {
                    Some(0)
                }
                Some(_) => Some(1),
                None => text(t, "description").contains(&f).then_some(2),
            }
        };
        let mut ranked: Vec<(u8, &Value)> = tools
            .iter()
            .filter_map(|t| rank(t).map(|r| (r, t)))
            .collect();
        // Stable: the listing's order within a rank.
        ranked.sort_by_key(|(r, _)| *r);
        ranked.into_iter().map(|(_, t)| t.clone()).collect()
    }

    /// Whether arguments are being typed: then plain keys are text.
    pub(super) fn editing(&self) -> bool {
        matches!(self.stage, PaletteStage::Edit { .. })
    }

    /// Whether the arguments typed are a whole JSON object (`enter` sends them then).
    pub(super) fn arguments_complete(&self) -> bool {
        match &self.stage {
            PaletteStage::Edit { args, .. } => {
                serde_json::from_str::<serde_json::Map<String, Value>>(&args.lines().join("\n"))
                    .is_ok()
            }
            PaletteStage::Pick => false,
        }
    }

    pub(super) fn move_by(&mut self, delta: i64, tools: &[Value]) {
        self.selected = step(self.selected, self.matches(tools).len(), delta);
    }

    /// Whether a question waits for `y` or `n` before the call is sent.
    pub(super) fn asking(&self) -> bool {
        self.question.is_some()
    }

    /// `esc` while typing arguments goes back to the list (from a question, to the
    /// arguments); says whether it did.
    pub(super) fn back(&mut self) -> bool {
        if self.question.take().is_some() {
            return true;
        }
        if !self.editing() {
            return false;
        }
        self.stage = PaletteStage::Pick;
        self.error = None;
        self.error_at = None;
        true
    }

    /// A key the keymap did not take: it edits the filter or the arguments.
    pub(super) fn input(&mut self, k: KeyEvent) {
        // A question takes only its own keys: nothing typed then reaches the arguments.
        if self.asking() {
            return;
        }
        match &mut self.stage {
            PaletteStage::Pick => {
                edit_line(&mut self.filter, k);
                self.selected = 0;
            }
            PaletteStage::Edit { args, .. } => {
                super::text_keys::type_key(args, k);
                self.error = None;
                self.error_at = None;
                self.dirty = true;
            }
        }
    }

    /// An editing command of the keymap's `[text]` on the arguments.
    pub(super) fn edit(&mut self, e: super::text_keys::TextEdit) {
        if self.asking() {
            return;
        }
        if let PaletteStage::Edit { args, .. } = &mut self.stage {
            super::text_keys::apply_edit(args, e);
            self.error = None;
            self.error_at = None;
            self.dirty = true;
        }
    }

    /// Colours the arguments again if they changed since the last frame.
    pub(super) fn highlight_if_dirty(&mut self, h: &Highlighter, th: &Theme) {
        if !std::mem::take(&mut self.dirty) {
            return;
        }
        if let PaletteStage::Edit { args, .. } = &mut self.stage {
            h.apply_json(args, th, &mut self.colours);
            if let Some((row, at)) = self.error_at {
                let len = args.lines().get(row).map_or(0, String::len);
                let start = at.min(len);
                let end = args.lines().get(row).map_or(start, |line| {
                    line[start..]
                        .chars()
                        .next()
                        .map_or(start, |c| start + c.len_utf8())
                });
                // Past the end of the row there is no character to mark.
                if start < end {
                    args.custom_highlight(((row, start), (row, end)), th.error, 255);
                }
            }
        }
    }

    pub(super) fn paste(&mut self, text: &str) {
        if self.asking() {
            return;
        }
        if let PaletteStage::Edit { args, .. } = &mut self.stage {
            args.insert_str(text);
            self.dirty = true;
        }
    }

    /// `enter` on the list: the selected tool, its arguments prefilled, the cursor at the end
    /// of the first value, ready to edit it (inside its quotes when it is a string, so what
    /// is typed stays JSON).
    fn pick(&mut self, tools: &[Value]) {
        let Some(tool) = self.matches(tools).get(self.selected).cloned() else {
            return;
        };
        let (prefill, placeholders) = prefill(&tool);
        self.placeholders = placeholders;
        let lines: Vec<String> = prefill.lines().map(str::to_owned).collect();
        let cursor = match lines.get(1) {
            Some(l) if lines.len() > 2 => {
                let value = l.strip_suffix(',').unwrap_or(l);
                let n = value.chars().count();
                // Inside an empty list or object, or a string's quotes: what is typed belongs
                // there.
                let inside = value.ends_with('"') || value.ends_with("[]") || value.ends_with("{}");
                (1, if inside { n - 1 } else { n })
            }
            // No arguments (`{}`): between the braces.
            _ => (0, 1.min(lines.first().map_or(0, |l| l.chars().count()))),
        };
        let mut args = TextArea::new(lines);
        args.move_cursor(tui_textarea::CursorMove::Jump(
            cursor.0 as u16,
            cursor.1 as u16,
        ));
        args.set_cursor_line_style(ratatui::style::Style::default());
        self.stage = PaletteStage::Edit {
            tool,
            args: Box::new(args),
        };
        self.dirty = true;
    }

    /// What must be asked before `arguments` are sent: required arguments that still hold
    /// their placeholder, and whether the tool may destroy something. None when nothing.
    fn question_for(&self, arguments: &Value) -> Option<String> {
        let PaletteStage::Edit { tool, .. } = &self.stage else {
            return None;
        };
        let name = tool["name"].as_str().unwrap_or_default();
        let untouched: Vec<String> = self
            .placeholders
            .iter()
            .filter(|(k, v)| arguments.get(k) == Some(v))
            .map(|(k, v)| format!("`{k}` is still the placeholder {v}"))
            .collect();
        let destructive = crate::config::may_destroy(tool.get("annotations"));
        if untouched.is_empty() && !destructive {
            return None;
        }
        let mut q = String::new();
        if !untouched.is_empty() {
            q.push_str(&format!(
                "{}, not a value you typed. ",
                untouched.join(", ")
            ));
        }
        if destructive {
            q.push_str(&format!("{name} may destroy something (destructiveHint). "));
        }
        q.push_str(&format!(
            "Call {name} with {}? y calls · n goes back",
            serde_json::to_string(arguments).unwrap_or_default()
        ));
        Some(q)
    }

    /// `enter` on the arguments: the tool's name and arguments when they pass its schema;
    /// otherwise the error is kept to be shown (under the arguments, where the person looks,
    /// with the place JSON broke marked) and nothing is returned.
    fn checked_call(&mut self) -> Option<(String, Value)> {
        let PaletteStage::Edit { tool, args } = &self.stage else {
            return None;
        };
        let text = args.lines().join("\n");
        match validate_arguments(tool, &text) {
            Ok(arguments) => {
                let name = tool["name"].as_str().unwrap_or_default().to_owned();
                Some((name, arguments))
            }
            Err(e) => {
                self.error = Some(e.to_string());
                // serde_json counts lines and bytes from 1; an error at the end has column 0.
                self.error_at = serde_json::from_str::<Value>(&text)
                    .err()
                    .filter(|e| e.line() > 0)
                    .map(|e| (e.line() - 1, e.column().saturating_sub(1)));
                self.dirty = true;
                None
            }
        }
    }
}

impl App {
    pub(super) fn open_palette(&mut self) {
        self.want_tools();
        self.overlay = Overlay::Palette(Box::new(Palette::new()));
    }

    /// `enter` on a tool in the catalog: the palette with that tool picked, its arguments
    /// prefilled (the list, filtered to its name, if it is no longer listed).
    pub(super) fn open_palette_on(&mut self, name: &str) {
        let mut p = Palette::new();
        p.filter = name.into();
        if let Some(i) = p
            .matches(&self.tools)
            .iter()
            .position(|t| t["name"].as_str() == Some(name))
        {
            p.selected = i;
            p.pick(&self.tools);
        }
        self.want_tools();
        self.overlay = Overlay::Palette(Box::new(p));
    }

    /// The palette needs the tool list: asks for it unless it is here or already asked for.
    fn want_tools(&mut self) {
        if self.tools.is_empty() && !self.tools_on_the_way() {
            self.send(Purpose::Tools, Request::Tools);
        }
    }

    /// `enter` in the palette: picks the tool, or calls it with the arguments typed (after
    /// asking, when they hold placeholders or the tool may destroy something; `y` answers).
    pub(super) fn confirm_palette(&mut self, mut p: Box<Palette>) {
        if !p.editing() {
            p.pick(&self.tools);
        } else if let Some((name, arguments)) = p.checked_call() {
            if !p.asking()
                && let Some(q) = p.question_for(&arguments)
            {
                p.question = Some(q);
                self.overlay = Overlay::Palette(p);
                return;
            }
            self.send(
                Purpose::CallTool(name.clone()),
                Request::CallTool {
                    name: name.clone(),
                    arguments,
                },
            );
            self.set_status(format!("calling {name}…"), StatusKind::Info);
            self.focus_pane(Pane::Traffic);
            return;
        } else if let (Some(e), PaletteStage::Edit { tool, .. }) = (&p.error, &p.stage) {
            let name = tool["name"].as_str().unwrap_or_default();
            self.set_status(format!("not sent to {name}: {e}"), StatusKind::Error);
            self.palette_status = true;
        }
        self.overlay = Overlay::Palette(p);
    }
}

/// Arguments prefilled from a tool's input schema: required ones (their default, else a
/// placeholder of their type) and optional ones only when the schema gives their default.
pub fn prefill_arguments(tool: &Value) -> String {
    prefill(tool).0
}

/// The prefilled arguments, and the required ones that got a placeholder (not a default).
fn prefill(tool: &Value) -> (String, Vec<(String, Value)>) {
    let mut placeholders = Vec::new();
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
            } else {
                let v = if let Some(e) = p["enum"].as_array().and_then(|e| e.first()) {
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
                placeholders.push((name.clone(), v.clone()));
                v
            };
            obj.insert(name.clone(), v);
        }
    }
    let text = serde_json::to_string_pretty(&Value::Object(obj)).unwrap_or_else(|_| "{}".into());
    (text, placeholders)
}

/// Why typed arguments cannot be sent as they are; the text is what the person reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgumentsError {
    #[error("not valid JSON: {0}")]
    NotJson(String),
    #[error("arguments must be a JSON object")]
    NotAnObject,
    #[error("missing required argument `{0}`")]
    Missing(String),
    #[error("unknown argument `{0}`")]
    Unknown(String),
    #[error("argument `{name}` must be {expected}")]
    WrongType { name: String, expected: String },
    #[error("argument `{name}` must be one of {allowed}")]
    NotAllowed { name: String, allowed: String },
}

/// Checks typed arguments against the tool's schema before anything is sent.
pub fn validate_arguments(tool: &Value, text: &str) -> Result<Value, ArgumentsError> {
    let v: Value = serde_json::from_str(if text.trim().is_empty() { "{}" } else { text })
        .map_err(|e| ArgumentsError::NotJson(e.to_string()))?;
    let Value::Object(args) = &v else {
        return Err(ArgumentsError::NotAnObject);
    };
    let schema = &tool["inputSchema"];
    for r in schema["required"].as_array().into_iter().flatten() {
        if let Some(name) = r.as_str()
            && !args.contains_key(name)
        {
            return Err(ArgumentsError::Missing(name.to_owned()));
        }
    }
    if let Some(props) = schema["properties"].as_object() {
        for (k, val) in args {
            let Some(p) = props.get(k) else {
                if schema["additionalProperties"] == Value::Bool(false) {
                    return Err(ArgumentsError::Unknown(k.clone()));
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
                return Err(ArgumentsError::WrongType {
                    name: k.clone(),
                    expected: p["type"].as_str().unwrap_or("of another type").to_owned(),
                });
            }
            if let Some(e) = p["enum"].as_array()
                && !e.contains(val)
            {
                return Err(ArgumentsError::NotAllowed {
                    name: k.clone(),
                    allowed: Value::Array(e.clone()).to_string(),
                });
            }
        }
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The palette lists tools whose name holds the filter (at a word's start first) before those
    /// whose description merely mentions it.
    #[test]
    fn the_palette_ranks_names_before_descriptions() {
        let mut p = Palette::new();
        p.filter = "long".into();
        let tools = vec![
            serde_json::json!({ "name": "everything_get-structured-content", "description": "returns content along with its schema" }),
            serde_json::json!({ "name": "everything_belongings", "description": "x" }),
            serde_json::json!({ "name": "everything_trigger-long-running-operation", "description": "a long operation" }),
            serde_json::json!({ "name": "other", "description": "nothing" }),
        ];
        let names: Vec<String> = p
            .matches(&tools)
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            names,
            [
                "everything_trigger-long-running-operation",
                "everything_belongings",
                "everything_get-structured-content"
            ]
        );
    }
}
