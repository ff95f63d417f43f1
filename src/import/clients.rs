//! The client formats `loom import` reads: where each client keeps its server list
//! (`mcpServers`, VS Code's `servers`, Zed's `context_servers`, Claude Code's per-project
//! lists) and Zed's older entry shape. It only finds entries; converting one is `entry`'s.

use serde_json::{Map, Value};

/// The server object of a client config, in file order.
pub(super) fn server_list(root: &Value) -> Option<&Map<String, Value>> {
    let o = root.as_object()?;
    o.get("mcpServers")
        .or_else(|| o.get("servers"))
        .or_else(|| o.get("mcp").and_then(|m| m.get("servers")))
        .or_else(|| o.get("context_servers"))
        .and_then(Value::as_object)
}

/// Zed's older entry shape (`"command": {"path", "args", "env"}`) in the common one.
pub(super) fn zed_entry(entry: &Value) -> Value {
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

/// Claude Code's per-project server lists (`projects.<path>.mcpServers`) that hold servers.
pub(super) fn projects_with_servers(root: &Value) -> Vec<String> {
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

/// The command that imports one project's servers from Claude Code's `~/.claude.json`.
pub(super) fn project_command(label: &str, project: &str) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let key = serde_json::to_string(project).unwrap_or_default();
    format!(
        "jq {} {} | loom import -",
        quote(&format!(".projects[{key}]")),
        quote(label)
    )
}
