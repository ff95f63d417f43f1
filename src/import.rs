//! `loom import`: a client's MCP server list (the `mcpServers` JSON of Claude Desktop, Claude
//! Code's `.mcp.json`, Cursor, Windsurf and Cline, or the `servers` of VS Code's `mcp.json`,
//! comments and trailing commas allowed) as `loom.toml` text. Pure: text in, text and notes
//! out; it reads no file and no environment.
//!
//! It fails closed. A credential is never written into the config, whether a name says so
//! (`…_TOKEN`) or the value does (`ghp_…`, a URL with a password, a bearer string): a secret
//! environment value becomes an `env_passthrough` name and a bearer token a
//! `bearer_token_env`, each with a note saying what to export; a secret in a command line or a
//! URL keeps its block commented out, the secret replaced. `${VAR}` in a command line, which
//! clients expand, is expanded by `sh` the same way. What loom cannot serve as written (the old
//! HTTP+SSE transport, a disabled entry, loom itself, a block loom's own validation refuses)
//! is kept commented out under the reason, never dropped, so nothing is lost silently.

use crate::config::{Config, RESERVED_NAME, valid_env_name};
use crate::intercept::redact::redact_str;
use crate::terminal_text;
use serde_json::{Map, Value};
use std::collections::HashSet;
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
        "{label} has no server list: expected an `mcpServers` object (Claude Desktop, Claude Code, Cursor, Windsurf, Cline), a `servers` object (VS Code) or `context_servers` (Zed)"
    )]
    NoServers { label: String },
    #[error(
        "{label} keeps its servers per project (Claude Code's ~/.claude.json); import one project's: {}",
        projects.iter().map(|p| project_command(label, p)).collect::<Vec<_>>().join("  or  ")
    )]
    OnlyProjects {
        label: String,
        projects: Vec<String>,
    },
}

/// The command that imports one project's servers from Claude Code's `~/.claude.json`.
fn project_command(label: &str, project: &str) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let key = serde_json::to_string(project).unwrap_or_default();
    format!(
        "jq {} {} | loom import -",
        quote(&format!(".projects[{key}]")),
        quote(label)
    )
}

/// Claude Code's per-project server lists (`projects.<path>.mcpServers`) that hold servers.
fn projects_with_servers(root: &Value) -> Vec<String> {
    root.get("projects")
        .and_then(Value::as_object)
        .map(|ps| {
            ps.iter()
                .filter(|(_, p)| {
                    p.get("mcpServers")
                        .and_then(Value::as_object)
                        .is_some_and(|m| !m.is_empty())
                })
                .map(|(path, _)| path.clone())
                .collect()
        })
        .unwrap_or_default()
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
    "enabled",
];

/// What replaces a credential in a block kept commented out.
const REMOVED: &str = "<credential removed>";

/// Converts the client config `text` (named `label` in messages) to `loom.toml` text.
pub fn import(text: &str, label: &str) -> Result<Imported, ImportError> {
    let json = strip_jsonc(text.strip_prefix('\u{feff}').unwrap_or(text));
    let root: Value = serde_json::from_str(&json).map_err(|e| ImportError::NotJson {
        label: label.to_owned(),
        message: e.to_string(),
    })?;
    let projects = projects_with_servers(&root);
    let Some(servers) = server_list(&root) else {
        return Err(if projects.is_empty() {
            ImportError::NoServers {
                label: label.to_owned(),
            }
        } else {
            ImportError::OnlyProjects {
                label: label.to_owned(),
                projects,
            }
        });
    };
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
    for p in &projects {
        out.notes.push(format!(
            "the servers of project {p} are not imported with these: {}",
            project_command(label, p)
        ));
    }
    let mut names = Names::default();
    for (source_name, entry) in servers {
        let entry = &zed_entry(entry);
        let name = names.take(source_name);
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
        .or_else(|| o.get("context_servers"))
        .and_then(Value::as_object)
}

/// Zed's older entry shape (`"command": {"path", "args", "env"}`) in the common one.
fn zed_entry(entry: &Value) -> Value {
    let Some(cmd) = entry.get("command").and_then(Value::as_object) else {
        return entry.clone();
    };
    let mut flat = entry.as_object().cloned().unwrap_or_default();
    flat.remove("command");
    for (from, to) in [("path", "command"), ("args", "args"), ("env", "env")] {
        if let Some(v) = cmd.get(from) {
            flat.insert(to.into(), v.clone());
        }
    }
    Value::Object(flat)
}

/// One entry, converted: its lines, why it cannot be served as written, and notes.
struct Block {
    lines: Vec<String>,
    skip: Option<String>,
    notes: Vec<String>,
}

impl Block {
    /// Keeps the block commented out for `why` (the first reason stays).
    fn refuse(&mut self, why: impl Into<String>) {
        if self.skip.is_none() {
            self.skip = Some(why.into());
        }
    }

    fn note(&mut self, note: String) {
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }
}

fn convert(source_name: &str, name: &str, entry: &Value) -> Block {
    let mut b = Block {
        lines: vec!["[[servers]]".into(), format!("name = {}", quoted(name))],
        skip: None,
        notes: Vec::new(),
    };
    let Some(e) = entry.as_object() else {
        b.refuse("the entry is not an object");
        return b;
    };
    let ignored: Vec<&str> = e
        .keys()
        .map(String::as_str)
        .filter(|k| !KNOWN_KEYS.contains(k))
        .collect();
    if !ignored.is_empty() {
        b.note(format!(
            "not carried over (loom has no such key): {}",
            ignored.join(", ")
        ));
    }
    if e.get("disabled").and_then(Value::as_bool) == Some(true)
        || e.get("enabled").and_then(Value::as_bool) == Some(false)
    {
        b.refuse("disabled in the source");
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
    let used: &[&str] = match (kind.as_deref(), e.get("command"), url) {
        (Some("sse"), _, _) => {
            if let Some(u) = url {
                url_line(&mut b, u);
            }
            b.refuse("the old HTTP+SSE transport (2024-11-05); loom speaks streamable HTTP: if the server also serves it, point url at that endpoint (often /mcp) and uncomment");
            &["url", "serverUrl"]
        }
        (_, Some(command), _) => {
            stdio(&mut b, source_name, command, e);
            &["command", "args", "env", "cwd"]
        }
        (_, None, Some(u)) => {
            http(&mut b, name, u, e);
            &["url", "serverUrl", "headers"]
        }
        _ => {
            b.refuse("neither a `command` nor a `url`");
            &[]
        }
    };
    let unused: Vec<&str> = KNOWN_KEYS
        .iter()
        .filter(|k| !matches!(**k, "type" | "transportType" | "disabled" | "enabled"))
        .filter(|k| e.contains_key(**k) && !used.contains(k))
        .copied()
        .collect();
    if !unused.is_empty() {
        b.note(format!(
            "not carried over (not used by this kind of server): {}",
            unused.join(", ")
        ));
    }
    b
}

fn stdio(b: &mut Block, source_name: &str, command: &Value, e: &Map<String, Value>) {
    let Some(command) = command.as_str() else {
        b.refuse("`command` is not a string");
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
            b.refuse("`args` is not a list");
            Vec::new()
        }
    };
    let is_loom = Path::new(command).file_name().and_then(|f| f.to_str()) == Some("loom")
        && args.iter().any(|a| a == "serve" || a == "connect");
    if is_loom {
        b.refuse(format!(
            "\"{}\" is loom itself; loom in front of loom would call itself",
            one_line(source_name)
        ));
    }
    let mut command = workspace(command, b);
    if secret_value(&command) {
        b.refuse("the command holds a credential, and loom writes none in its config: pass it through the environment, then uncomment");
        command = REMOVED.into();
    }
    let mut args: Vec<String> = args.iter().map(|a| workspace(a, b)).collect();
    for (i, why) in secret_args(&args) {
        b.refuse(format!(
            "args[{i}] holds a credential ({why}), and loom writes none in its config: pass it through the environment (env_passthrough, and `sh -c` with \"$VAR\" in the command line), then uncomment"
        ));
        args[i] = REMOVED.into();
    }
    if command.contains('/') && !Path::new(&command).is_absolute() {
        b.note(format!(
            "the command {} is relative: loom resolves it against this file's folder{}",
            one_line(&command),
            if e.contains_key("cwd") {
                " (the server's own folder, cwd, when sh runs it)"
            } else {
                ""
            }
        ));
    }
    let mut passthrough: Vec<String> = Vec::new();
    let (command, args) = match expand_with_shell(&command, &args) {
        Expansion::None => (command, args),
        Expansion::Shell { line, vars } => {
            b.note(format!(
                "its command line uses {}, which the client expanded: `sh -c` expands it now, from variables passed through (export them before starting loom)",
                vars.iter()
                    .map(|v| format!("${{{v}}}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            passthrough.extend(vars);
            ("sh".to_owned(), vec!["-c".to_owned(), line])
        }
        Expansion::Unknown(v) => {
            b.refuse(format!(
                "its command line uses {v}, which only the client can fill in: write the value in its place, then uncomment"
            ));
            (command, args)
        }
    };
    b.lines.push(format!("command = {}", quoted(&command)));
    if !args.is_empty() {
        b.lines.push(format!("args = {}", list(&args)));
    }
    if let Some(cwd) = e.get("cwd").and_then(Value::as_str) {
        let cwd = workspace(cwd, b);
        if let Some(v) = unexpanded(&cwd) {
            b.refuse(format!(
                "its cwd uses {v}, which loom does not expand: write the folder in its place, then uncomment"
            ));
        }
        b.lines.push(format!("cwd = {}", quoted(&cwd)));
    }
    let mut env: Vec<(String, String)> = Vec::new();
    if let Some(vars) = e.get("env").and_then(Value::as_object) {
        for (k, v) in vars {
            let value = match v {
                Value::String(s) => s.clone(),
                Value::Null => continue,
                other => other.to_string(),
            };
            if let Some(from) = reference(&value) {
                passthrough.push(k.clone());
                if let Some((_, default)) = value.split_once(":-") {
                    let default = default.trim_end_matches('}');
                    let shown = if looks_secret(k) || secret_value(default) {
                        "not shown".to_owned()
                    } else {
                        one_line(default)
                    };
                    b.note(format!(
                        "{k} had a default ({shown}) for when it is unset; loom passes {k} through as it is, so export it"
                    ));
                }
                if from != *k {
                    b.note(format!(
                        "{k} came from ${{{from}}}: loom passes {k} through from its own environment, so export {k} before starting loom"
                    ));
                }
            } else if secret_value(&value) || (looks_secret(k) && !harmless(&value)) {
                passthrough.push(k.clone());
                b.note(format!(
                    "{k} holds a credential, so its value is not written here: export {k} before starting loom (it is passed through)"
                ));
            } else if let Some(v) = unexpanded(&value) {
                passthrough.push(k.clone());
                b.note(format!(
                    "{k} was built from {v}, which loom does not expand: export {k} with its whole value before starting loom (it is passed through)"
                ));
            } else {
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
    let mut seen = HashSet::new();
    passthrough.retain(|v| seen.insert(v.clone()));
    if !passthrough.is_empty() {
        b.lines
            .push(format!("env_passthrough = {}", list(&passthrough)));
    }
}

/// The args that hold a credential, with why: a value whose shape says so (`ghp_…`, a URL
/// with a password), `--token=…` or `API_KEY=…` (docker's `-e`) with a value, an
/// `Authorization: …` header, or the value after `--token`. A `${VAR}` is not a credential
/// (the shell fills it in), but a default written after it is.
fn secret_args(args: &[String]) -> Vec<(usize, &'static str)> {
    let mut found = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| args[p].as_str());
        if let Some(why) = secret_arg(prev, a) {
            found.push((i, why));
        }
    }
    found
}

fn secret_arg(prev: Option<&str>, arg: &str) -> Option<&'static str> {
    let seen = without_references(arg);
    let setting = seen.split_once('=').filter(|(k, _)| {
        let name = k.trim_start_matches('-');
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
    });
    if let Some((k, v)) = setting {
        return if secret_value(v) {
            Some("a secret-looking value")
        } else if looks_secret(k) && !harmless(v) {
            Some("a secret-named setting")
        } else {
            None
        };
    }
    // `Name: value`, not a URL's `scheme://`.
    let header = seen.split_once(':').filter(|(name, value)| {
        !name.is_empty()
            && !value.starts_with("//")
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    });
    if let Some((name, value)) = header {
        let token = value
            .trim()
            .split_once(' ')
            .map_or(value.trim(), |(_, t)| t.trim());
        return if (name.eq_ignore_ascii_case("authorization") || looks_secret(name))
            && !token.is_empty()
            || secret_value(value)
        {
            Some("a credential header")
        } else {
            None
        };
    }
    if secret_value(&seen) {
        return Some("a secret-looking value");
    }
    let after_secret_flag = prev
        .is_some_and(|p| p.starts_with('-') && !p.contains('=') && looks_secret(p))
        && !arg.starts_with("--");
    (after_secret_flag && !harmless(&seen)).then_some("the value of a secret-named flag")
}

/// `text` as a reader sees what it holds: each `${VAR}` gone (the shell fills it in), a
/// default written after one (`${VAR:-default}`) kept.
fn without_references(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        out.push_str(&rest[..start]);
        let inner = &rest[start + 2..start + len];
        if let Some((_, default)) = inner.split_once(":-") {
            out.push_str(default);
        }
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    out
}

/// A value no one keeps secret: empty, a number, a yes or no, or a path (a key's file, not the
/// key).
fn harmless(value: &str) -> bool {
    let v = value.trim();
    v.is_empty()
        || v.parse::<f64>().is_ok()
        || ["true", "false", "yes", "no", "on", "off", "none"]
            .iter()
            .any(|w| v.eq_ignore_ascii_case(w))
        || ["/", "./", "../", "~/"].iter().any(|p| v.starts_with(p))
}

/// How a command line with `${…}` in it is served.
enum Expansion {
    /// Nothing to expand.
    None,
    /// `sh -c LINE`, which expands `vars` from the environment as the client did.
    Shell { line: String, vars: Vec<String> },
    /// A `${…}` that names no environment variable (VS Code's `${input:…}`).
    Unknown(String),
}

fn expand_with_shell(command: &str, args: &[String]) -> Expansion {
    if unexpanded(command).is_none() && args.iter().all(|a| unexpanded(a).is_none()) {
        return Expansion::None;
    }
    let mut vars = Vec::new();
    let mut words = Vec::new();
    for w in std::iter::once(command).chain(args.iter().map(String::as_str)) {
        match shell_word(w, &mut vars) {
            Ok(word) => words.push(word),
            Err(unknown) => return Expansion::Unknown(unknown),
        }
    }
    Expansion::Shell {
        line: format!("exec {}", words.join(" ")),
        vars,
    }
}

/// `text` as one `sh` word: literal parts single-quoted, each `${VAR}` (also `${env:VAR}`,
/// `${VAR:-plain default}`, VS Code's `${userHome}`) double-quoted so the shell expands it and
/// nothing else. Err: a `${…}` that is none of those.
fn shell_word(text: &str, vars: &mut Vec<String>) -> Result<String, String> {
    let mut word = String::new();
    let mut rest = text;
    let literal = |s: &str, word: &mut String| {
        if !s.is_empty() {
            word.push('\'');
            word.push_str(&s.replace('\'', r"'\''"));
            word.push('\'');
        }
    };
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        literal(&rest[..start], &mut word);
        let whole = &rest[start..start + len + 1];
        let inner = &whole[2..whole.len() - 1];
        let inner = inner.strip_prefix("env:").unwrap_or(inner);
        let inner = if inner == "userHome" { "HOME" } else { inner };
        let (var, default) = match inner.split_once(":-") {
            Some((v, d)) => (v, Some(d)),
            None => (inner, None),
        };
        let plain_default = default.is_none_or(|d| {
            d.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._/:@+,=-".contains(c))
        });
        if !valid_env_name(var) || !plain_default {
            return Err(whole.to_owned());
        }
        match default {
            Some(d) => {
                let _ = write!(word, "\"${{{var}:-{d}}}\"");
            }
            None => {
                let _ = write!(word, "\"${{{var}}}\"");
            }
        }
        if !vars.iter().any(|v| v == var) {
            vars.push(var.to_owned());
        }
        rest = &rest[start + len + 1..];
    }
    literal(rest, &mut word);
    if word.is_empty() {
        word.push_str("''");
    }
    Ok(word)
}

/// A `url = …` line; a URL that carries a credential is written with it removed, and the
/// block is kept commented out.
fn url_line(b: &mut Block, url: &str) {
    if secret_value(url) {
        b.refuse("its URL carries a credential (a password, a token in the query or the path), and loom writes none in its config: use the URL without it and bearer_token_env, then uncomment");
        b.lines.push(format!("url = {}", quoted(&redact_url(url))));
        return;
    }
    if let Some(v) = unexpanded(url) {
        b.refuse(format!(
            "its URL uses {v}, which only the client filled in: write the value in its place, then uncomment"
        ));
    }
    b.lines.push(format!("url = {}", quoted(url)));
}

/// A URL with its user information and secrets replaced.
fn redact_url(url: &str) -> String {
    let masked = redact_str(url);
    match reqwest::Url::parse(&masked) {
        Ok(mut u) if !u.username().is_empty() || u.password().is_some() => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.to_string()
        }
        _ => masked,
    }
}

fn http(b: &mut Block, name: &str, url: &str, e: &Map<String, Value>) {
    url_line(b, url);
    let mut headers: Vec<(String, String)> = Vec::new();
    if let Some(hs) = e.get("headers").and_then(Value::as_object) {
        for (k, v) in hs {
            let Some(v) = v.as_str() else {
                b.note(format!("the header {k} is not text: left out"));
                continue;
            };
            if k.eq_ignore_ascii_case("authorization") {
                bearer(b, name, v);
            } else if secret_value(v)
                || (looks_secret(k) && !harmless(v))
                || unexpanded(v).is_some()
            {
                b.note(format!(
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
        b.note(
            "its Authorization header is not a bearer token, which is all loom sends: left out"
                .into(),
        );
        return;
    };
    let var = match reference(token) {
        Some(var) => var,
        None => {
            let var = format!("{}_TOKEN", name.to_ascii_uppercase());
            b.note(format!(
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
    b.note("${workspaceFolder} became \".\": this file's folder, where the server starts".into());
    value
        .replace("${workspaceFolder}/", "./")
        .replace("${workspaceFolder}", ".")
}

/// Whether a value says it is a credential: loom's redaction masks something in it (a known
/// token shape, a bearer string, a URL's password or secret query parameter, `password=…`).
fn secret_value(value: &str) -> bool {
    redact_str(value) != value || reqwest::Url::parse(value).is_ok_and(|u| u.password().is_some())
}

/// Whether an environment variable, flag or header name says it holds a credential: one of
/// its words (split at `_`, `-` and camelCase) is a secret's (`GITHUB_TOKEN`, `--api-key`,
/// `apiKey`), unless the name is about one rather than one itself (`--no-auth`,
/// `--key-file`, `TOKEN_ENV`, `SESSION_TIMEOUT`); `MAX_TOKENS`, `AUTHOR` and `MONKEY` are not.
fn looks_secret(name: &str) -> bool {
    const SECRET: &[&str] = &[
        "KEY",
        "APIKEY",
        "TOKEN",
        "SECRET",
        "SECRETS",
        "PASSWORD",
        "PASSWD",
        "PASS",
        "PWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "CREDENTIALS",
        "AUTH",
        "COOKIE",
        "DSN",
        "JWT",
        "PAT",
        "SESSION",
    ];
    const ABOUT_ONE: &[&str] = &[
        "FILE", "PATH", "DIR", "ENV", "TYPE", "MODE", "NAME", "TIMEOUT", "ID", "URL", "HOST",
        "PORT", "USER", "USERNAME", "METHOD", "PROVIDER", "HEADER", "VAR", "COMMAND", "CMD",
    ];
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        word.push(c.to_ascii_uppercase());
    }
    words.extend((!word.is_empty()).then_some(word));
    let (Some(first), Some(last)) = (words.first(), words.last()) else {
        return false;
    };
    if ["NO", "DISABLE", "SKIP", "WITHOUT"].contains(&first.as_str())
        || ABOUT_ONE.contains(&last.as_str())
    {
        return false;
    }
    words.iter().any(|w| SECRET.contains(&w.as_str()))
}

/// Loom server names given so far, so that each source name gets one of its own.
#[derive(Default)]
struct Names {
    taken: HashSet<String>,
    /// The next suffix to try for each base name (so many clashes stay linear).
    next: std::collections::HashMap<String, usize>,
}

impl Names {
    /// `source` as a loom server name (`^[a-z][a-z0-9_]{0,31}$`, not `loom`, not `loom_*`),
    /// different from every name given before.
    fn take(&mut self, source: &str) -> String {
        let base = loom_name(source);
        let mut name = base.clone();
        let mut i = self.next.get(&base).copied().unwrap_or(2);
        while self.taken.contains(&name) {
            let suffix = format!("_{i}");
            let mut b = base.clone();
            b.truncate(32 - suffix.len());
            name = format!("{}{suffix}", b.trim_end_matches('_'));
            i += 1;
        }
        self.next.insert(base, i);
        self.taken.insert(name.clone());
        name
    }
}

fn loom_name(source: &str) -> String {
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
        if n.len() > 40 {
            break;
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
    n.trim_end_matches('_').to_owned()
}

/// A TOML basic string: quotes, backslashes and every character a terminal could act on
/// (controls, bidirectional overrides) escaped, so the file reads as it means.
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
            c if c.is_control() || terminal_text::is_unsafe(c) => {
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

/// Text for a comment line: line breaks become spaces, and what a terminal could act on is
/// escaped.
fn one_line(s: &str) -> String {
    terminal_text::line(s).into_owned()
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
