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
//!
//! One idea per file: `clients` finds the server list, `entry` turns one entry into a block
//! (`stdio` and `http` by kind), `secrets` decides what is a credential, `shell` handles
//! `${VAR}`, `naming` gives loom names, `toml_text` writes TOML and `jsonc` reads VS Code's JSON.

mod clients;
mod entry;
mod http;
mod jsonc;
mod naming;
mod secrets;
mod shell;
mod stdio;
mod toml_text;

pub use jsonc::strip_jsonc;

use crate::config::Config;
use clients::{project_command, projects_with_servers, server_list, zed_entry};
use entry::convert;
use naming::Names;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;
use toml_text::one_line;

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

#[cfg(test)]
mod tests;
