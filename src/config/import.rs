//! `loom import`: a client's MCP server list (the `mcpServers` JSON of Claude Desktop, Claude
//! Code's `.mcp.json`, Cursor, Windsurf and Cline, or the `servers` of VS Code's `mcp.json`,
//! comments and trailing commas allowed) as `loom.toml` text. Pure: text in, text and notes
//! out; it reads no file and no environment.
//!
//! It fails closed. A credential is never written into the config: a secret-looking
//! environment value becomes an `env_passthrough` name, a bearer token a `bearer_token_env`,
//! each with a note saying what to export. What loom cannot serve as written (the old HTTP+SSE
//! transport, a disabled entry, loom itself, a block loom's own validation refuses) is kept
//! commented out under the reason, never dropped, so nothing in the source is lost silently.

use super::{Config, RESERVED_NAME, valid_env_name};
use serde_json::{Map, Value};
use std::fmt::Write as _;
use std::path::Path;

/// What an import made.
#[derive(Debug)]
pub struct Imported {
    /// The `loom.toml` text: a header, then one `[[servers]]` block per entry of the source.
    pub toml: String,
    /// Servers written as live blocks.
    pub servers: usize,
    /// Entries kept only as comments (loom cannot serve them as written).
    pub commented: usize,
    /// What a person should know or do, one line each, server first.
    pub notes: Vec<String>,
}

/// Why nothing could be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{label} is not JSON (comments and trailing commas are allowed): {message}")]
    NotJson { label: String, message: String },
    #[error(
        "{label} has no server list: expected an `mcpServers` object (Claude Desktop, Claude Code, Cursor, Windsurf, Cline) or a `servers` object (VS Code)"
    )]
    NoServers { label: String },
}

/// Keys of a source entry that loom reads; others are named in a note.
const KNOWN_KEYS: &[&str] = &[
    "type",
    "transportType",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "serverUrl",
    "headers",
    "disabled",
];

/// Converts the client config `text` (named `label` in messages) to `loom.toml` text.
pub fn import(text: &str, label: &str) -> Result<Imported, ImportError> {
    let json = strip_jsonc(text);
    let root: Value = serde_json::from_str(&json).map_err(|e| ImportError::NotJson {
        label: label.to_owned(),
        message: e.to_string(),
    })?;
    let servers = server_list(&root).ok_or_else(|| ImportError::NoServers {
        label: label.to_owned(),
    })?;
    let mut out = Imported {
        toml: String::new(),
        servers: 0,
        commented: 0,
        notes: Vec::new(),
    };
    let _ = writeln!(
        out.toml,
        "# Imported by `loom import` from {}.\n# Check it with `loom check -c <this file>`; every key is in loom's README.",
        one_line(label)
    );
    let mut taken: Vec<String> = Vec::new();
    for (source_name, entry) in servers {
        let name = loom_name(source_name, &taken);
        taken.push(name.clone());
        let block = convert(source_name, &name, entry);
        for n in &block.notes {
            out.notes.push(format!("{name}: {n}"));
        }
        out.toml.push('\n');
        if name != *source_name {
            let _ = writeln!(out.toml, "# \"{}\" in the source", one_line(source_name));
        }
        for n in &block.notes {
            let _ = writeln!(out.toml, "# {}", one_line(n));
        }
        // The block must pass loom's own validation on its own; else it is kept commented out
        // under the problems, so a bad entry never makes the whole file refuse to load.
        let refused = block.skip.clone().or_else(|| {
            Config::parse(&block.lines.join("\n"), Path::new("."), "the block")
                .err()
                .map(|e| e.to_string())
        });
        match refused {
            None => {
                out.servers += 1;
                for l in &block.lines {
                    let _ = writeln!(out.toml, "{l}");
                }
            }
            Some(why) => {
                out.commented += 1;
                out.notes
                    .push(format!("{name}: kept commented out: {}", one_line(&why)));
                let _ = writeln!(out.toml, "# Commented out: {}", one_line(&why));
                for l in &block.lines {
                    let _ = writeln!(out.toml, "# {l}");
                }
            }
        }
    }
    Ok(out)
}

/// The server object of a client config, in file order.
fn server_list(root: &Value) -> Option<&Map<String, Value>> {
    let o = root.as_object()?;
    o.get("mcpServers")
        .or_else(|| o.get("servers"))
        .or_else(|| o.get("mcp").and_then(|m| m.get("servers")))
        .and_then(Value::as_object)
}

/// One entry, converted: its lines, why it cannot be served as written, and notes.
struct Block {
    lines: Vec<String>,
    skip: Option<String>,
    notes: Vec<String>,
}

fn convert(source_name: &str, name: &str, entry: &Value) -> Block {
    let mut b = Block {
        lines: vec!["[[servers]]".into(), format!("name = {}", quoted(name))],
        skip: None,
        notes: Vec::new(),
    };
    let Some(e) = entry.as_object() else {
        b.skip = Some("the entry is not an object".into());
        return b;
    };
    let ignored: Vec<&str> = e
        .keys()
        .map(String::as_str)
        .filter(|k| !KNOWN_KEYS.contains(k))
        .collect();
    if !ignored.is_empty() {
        b.notes.push(format!(
            "not carried over (loom has no such key): {}",
            ignored.join(", ")
        ));
    }
    if e.get("disabled").and_then(Value::as_bool) == Some(true) {
        b.skip = Some("disabled in the source".into());
    }
    let kind = e
        .get("type")
        .or_else(|| e.get("transportType"))
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase);
    let url = e
        .get("url")
        .or_else(|| e.get("serverUrl"))
        .and_then(Value::as_str);
    match (kind.as_deref(), e.get("command"), url) {
        (Some("sse"), _, _) => {
            if let Some(u) = url {
                b.lines.push(format!("url = {}", quoted(u)));
            }
            b.skip.get_or_insert_with(|| {
                "the old HTTP+SSE transport (2024-11-05); loom speaks streamable HTTP: if the server also serves it, point url at that endpoint (often /mcp) and uncomment".into()
            });
        }
        (_, Some(command), _) => stdio(&mut b, source_name, command, e),
        (_, None, Some(u)) => http(&mut b, name, u, e),
        _ => {
            b.skip
                .get_or_insert_with(|| "neither a `command` nor a `url`".into());
        }
    }
    b
}

fn stdio(b: &mut Block, source_name: &str, command: &Value, e: &Map<String, Value>) {
    let Some(command) = command.as_str() else {
        b.skip = Some("`command` is not a string".into());
        return;
    };
    let args: Vec<String> = match e.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect(),
        Some(_) => {
            b.skip = Some("`args` is not a list".into());
            Vec::new()
        }
    };
    let is_loom = Path::new(command).file_name().and_then(|f| f.to_str()) == Some("loom")
        && args.first().is_some_and(|a| a == "serve" || a == "connect");
    if is_loom {
        b.skip = Some(format!(
            "\"{}\" is loom itself; loom in front of loom would call itself",
            one_line(source_name)
        ));
    }
    let command = workspace(command, b);
    let args: Vec<String> = args.iter().map(|a| workspace(a, b)).collect();
    if command.contains('/') && !Path::new(&command).is_absolute() {
        b.notes.push(format!(
            "the command {} is relative: loom resolves it against this file's folder",
            one_line(&command)
        ));
    }
    for s in std::iter::once(&command).chain(&args) {
        if let Some(v) = unexpanded(s) {
            b.notes.push(format!(
                "{v} is not expanded by loom: write the value in its place"
            ));
        }
    }
    b.lines.push(format!("command = {}", quoted(&command)));
    if !args.is_empty() {
        b.lines.push(format!("args = {}", list(&args)));
    }
    if let Some(cwd) = e.get("cwd").and_then(Value::as_str) {
        let cwd = workspace(cwd, b);
        b.lines.push(format!("cwd = {}", quoted(&cwd)));
    }
    let mut env: Vec<(String, String)> = Vec::new();
    let mut passthrough: Vec<String> = Vec::new();
    if let Some(vars) = e.get("env").and_then(Value::as_object) {
        for (k, v) in vars {
            let value = match v {
                Value::String(s) => s.clone(),
                Value::Null => continue,
                other => other.to_string(),
            };
            if let Some(from) = reference(&value) {
                passthrough.push(k.clone());
                if from != *k {
                    b.notes.push(format!(
                        "{k} came from ${{{from}}}: loom passes {k} through from its own environment, so export {k} before starting loom"
                    ));
                }
            } else if looks_secret(k) && !value.is_empty() {
                passthrough.push(k.clone());
                b.notes.push(format!(
                    "{k} looks like a credential, so its value is not written here: export {k} before starting loom (it is passed through)"
                ));
            } else {
                if let Some(v) = unexpanded(&value) {
                    b.notes.push(format!(
                        "{k} holds {v}, which loom does not expand: write the value in its place"
                    ));
                }
                env.push((k.clone(), value));
            }
        }
    }
    if !env.is_empty() {
        let fields: Vec<String> = env
            .iter()
            .map(|(k, v)| format!("{} = {}", key(k), quoted(v)))
            .collect();
        b.lines.push(format!("env = {{ {} }}", fields.join(", ")));
    }
    if !passthrough.is_empty() {
        b.lines
            .push(format!("env_passthrough = {}", list(&passthrough)));
    }
}

fn http(b: &mut Block, name: &str, url: &str, e: &Map<String, Value>) {
    b.lines.push(format!("url = {}", quoted(url)));
    if let Some(v) = unexpanded(url) {
        b.notes.push(format!(
            "the url holds {v}, which loom does not expand: write the value in its place"
        ));
    }
    let mut headers: Vec<(String, String)> = Vec::new();
    if let Some(hs) = e.get("headers").and_then(Value::as_object) {
        for (k, v) in hs {
            let Some(v) = v.as_str() else { continue };
            if k.eq_ignore_ascii_case("authorization") {
                bearer(b, name, v);
            } else if looks_secret(k) || unexpanded(v).is_some() {
                b.notes.push(format!(
                    "the header {k} is left out: it holds a credential or a variable, and loom writes neither in its config (add it by hand if you accept that)"
                ));
            } else {
                headers.push((k.clone(), v.to_owned()));
            }
        }
    }
    if !headers.is_empty() {
        let fields: Vec<String> = headers
            .iter()
            .map(|(k, v)| format!("{} = {}", quoted(k), quoted(v)))
            .collect();
        b.lines
            .push(format!("headers = {{ {} }}", fields.join(", ")));
    }
}

/// An `Authorization` header as loom takes it: a bearer token from an environment variable.
fn bearer(b: &mut Block, name: &str, value: &str) {
    let Some(token) = value
        .split_once(' ')
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim())
    else {
        b.notes.push(
            "its Authorization header is not a bearer token, which is all loom sends: left out"
                .into(),
        );
        return;
    };
    let var = match reference(token) {
        Some(var) => var,
        None => {
            let var = format!("{}_TOKEN", name.to_ascii_uppercase());
            b.notes.push(format!(
                "its bearer token is not written here: export {var} with it before starting loom"
            ));
            var
        }
    };
    b.lines.push(format!("bearer_token_env = {}", quoted(&var)));
}

/// `${VAR}`, `${env:VAR}` or `$VAR` standing alone: the variable it names.
fn reference(value: &str) -> Option<String> {
    let v = value.trim();
    let inner = v
        .strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .map(|r| r.strip_prefix("env:").unwrap_or(r))
        .or_else(|| v.strip_prefix('$'))?;
    // `${VAR:-default}` keeps the variable; its default is for the client's shell only.
    let var = inner.split(":-").next().unwrap_or(inner);
    valid_env_name(var).then(|| var.to_owned())
}

/// A `${…}` left in a value (loom passes values as they are).
fn unexpanded(value: &str) -> Option<String> {
    let start = value.find("${")?;
    let end = value[start..].find('}').map(|e| start + e + 1)?;
    Some(value[start..end].to_owned())
}

/// VS Code's `${workspaceFolder}`: the folder loom.toml sits in, which is where a stdio
/// server starts unless `cwd` says otherwise.
fn workspace(value: &str, b: &mut Block) -> String {
    if !value.contains("${workspaceFolder}") {
        return value.to_owned();
    }
    let replaced = value
        .replace("${workspaceFolder}/", "./")
        .replace("${workspaceFolder}", ".");
    let note =
        "${workspaceFolder} became \".\": this file's folder, where the server starts".to_owned();
    if !b.notes.contains(&note) {
        b.notes.push(note);
    }
    replaced
}

/// Whether an environment variable or header name says it holds a credential.
fn looks_secret(name: &str) -> bool {
    let n = name.to_ascii_uppercase().replace('-', "_");
    [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "AUTH",
        "COOKIE",
    ]
    .iter()
    .any(|w| n.contains(w))
        || n.ends_with("_PAT")
        || n == "PAT"
}

/// A source name as a loom server name (`^[a-z][a-z0-9_]{0,31}$`, not `loom`, not `loom_*`),
/// different from every name already taken.
fn loom_name(source: &str, taken: &[String]) -> String {
    let mut n = String::new();
    for c in source.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '_'
        };
        if !(c == '_' && n.ends_with('_')) {
            n.push(c);
        }
    }
    let mut n = n.trim_matches('_').to_owned();
    if !n.starts_with(|c: char| c.is_ascii_lowercase()) {
        n.insert_str(0, "s_");
    }
    if n == RESERVED_NAME || n.starts_with("loom_") {
        n.insert_str(0, "srv_");
    }
    n.truncate(32);
    let n = n.trim_end_matches('_').to_owned();
    if !taken.contains(&n) {
        return n;
    }
    (2..)
        .map(|i| {
            let suffix = format!("_{i}");
            let mut base = n.clone();
            base.truncate(32 - suffix.len());
            format!("{}{suffix}", base.trim_end_matches('_'))
        })
        .find(|c| !taken.contains(c))
        .unwrap_or_default()
}

/// A TOML basic string: quotes, backslashes and control characters escaped.
fn quoted(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\t' => o.push_str("\\t"),
            '\r' => o.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(o, "\\u{:04X}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A TOML key: bare when it can be.
fn key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_owned()
    } else {
        quoted(k)
    }
}

fn list(items: &[String]) -> String {
    let q: Vec<String> = items.iter().map(|s| quoted(s)).collect();
    format!("[{}]", q.join(", "))
}

/// Text for a comment line: control characters (line breaks included) become spaces.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// JSON with comments (`//`, `/* */`) and trailing commas, as VS Code writes it, made JSON.
/// Strings are copied as they are; an unterminated comment or string ends the text.
pub fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push('"');
                while let Some(s) = chars.next() {
                    out.push(s);
                    match s {
                        '\\' => {
                            if let Some(esc) = chars.next() {
                                out.push(esc);
                            }
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '/' if skip_comment(&mut chars) => out.push('\n'),
            ',' => {
                // A comma followed only by space and comments before `}` or `]` is dropped.
                if !matches!(next_significant(chars.clone()), Some('}' | ']')) {
                    out.push(',');
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// After a `/`: skips the comment it starts (`//` to the end of its line, `/*` to `*/`);
/// false, having taken nothing, when it starts none.
fn skip_comment(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> bool {
    match chars.peek() {
        Some('/') => {
            chars.find(|s| *s == '\n');
            true
        }
        Some('*') => {
            chars.next();
            let mut prev = '\0';
            for s in chars.by_ref() {
                if prev == '*' && s == '/' {
                    break;
                }
                prev = s;
            }
            true
        }
        _ => false,
    }
}

/// The next character that is neither space nor inside a comment.
fn next_significant(mut chars: std::iter::Peekable<std::str::Chars<'_>>) -> Option<char> {
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '/' if skip_comment(&mut chars) => {}
            c => return Some(c),
        }
    }
    None
}

#[cfg(test)]
mod tests;
