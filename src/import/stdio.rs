//! A stdio entry as loom's `command`, `args`, `cwd`, `env` and `env_passthrough`: a credential
//! in the command line keeps the block commented out, a secret environment value becomes a
//! name passed through, and a command line with `${VAR}` runs under `sh -c`.

use super::entry::Block;
use super::secrets::{REMOVED, harmless, looks_secret, secret_args, secret_value};
use super::shell::{Expansion, expand_with_shell, reference, unexpanded};
use super::toml_text::{key, list, one_line, quoted};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::path::Path;

pub(super) fn stdio(b: &mut Block, source_name: &str, command: &Value, e: &Map<String, Value>) {
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
