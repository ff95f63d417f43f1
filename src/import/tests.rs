use super::{Imported, import, strip_jsonc};
use crate::config::{Config, TransportSpec};
use proptest::prelude::*;
use serde_json::Value;
use std::path::Path;

fn parsed(out: &Imported) -> Config {
    Config::parse(&out.toml, Path::new("/proj"), "imported").unwrap_or_else(|e| {
        panic!("the import does not load: {e}\n{}", out.toml);
    })
}

/// A stdio server's command, args, env and passthrough names.
type Stdio = (String, Vec<String>, Vec<(String, String)>, Vec<String>);

fn stdio(cfg: &Config, name: &str) -> Stdio {
    match &cfg.server(name).expect(name).transport {
        TransportSpec::Stdio {
            command,
            args,
            env,
            env_passthrough,
            ..
        } => (
            command.clone(),
            args.clone(),
            env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            env_passthrough.clone(),
        ),
        other => panic!("{name} is not stdio: {other:?}"),
    }
}

#[test]
fn claude_desktop_servers_become_loom_servers_and_credentials_stay_out() {
    let src = r#"{
      "mcpServers": {
        "filesystem": {
          "command": "npx",
          "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]
        },
        "GitHub Server": {
          "command": "docker",
          "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
          "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_supersecret", "LOG_LEVEL": "debug" }
        },
        "remote": {
          "type": "http",
          "url": "https://mcp.example.com/mcp",
          "headers": { "Authorization": "Bearer ${env:EXAMPLE_TOKEN}", "X-Team": "blue" }
        }
      }
    }"#;
    let out = import(src, "claude_desktop_config.json").expect("imports");
    assert_eq!((out.servers, out.commented), (3, 0), "{}", out.toml);
    assert!(!out.toml.contains("ghp_supersecret"), "{}", out.toml);
    let cfg = parsed(&out);
    let names: Vec<&str> = cfg.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["filesystem", "github_server", "remote"]);
    let (command, args, _, _) = stdio(&cfg, "filesystem");
    assert_eq!(command, "npx");
    assert_eq!(args[2], "/Users/me/Desktop");
    let (_, _, env, passthrough) = stdio(&cfg, "github_server");
    assert_eq!(env, [("LOG_LEVEL".to_owned(), "debug".to_owned())]);
    assert_eq!(passthrough, ["GITHUB_PERSONAL_ACCESS_TOKEN"]);
    assert!(
        out.notes.iter().any(|n| n.starts_with("github_server:")
            && n.contains("export GITHUB_PERSONAL_ACCESS_TOKEN")),
        "{:?}",
        out.notes
    );
    match &cfg.server("remote").unwrap().transport {
        TransportSpec::Http {
            url,
            headers,
            bearer_token_env,
            ..
        } => {
            assert_eq!(url, "https://mcp.example.com/mcp");
            assert_eq!(bearer_token_env.as_deref(), Some("EXAMPLE_TOKEN"));
            assert_eq!(headers.get("X-Team").map(String::as_str), Some("blue"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn vs_code_jsonc_with_comments_trailing_commas_and_workspace_folder() {
    let src = r#"// VS Code's .vscode/mcp.json
    {
      "inputs": [{ "type": "promptString", "id": "tok", "password": true }],
      "servers": {
        /* the repo's files */
        "fs": {
          "type": "stdio",
          "command": "npx",
          "args": ["-y", "server-filesystem", "${workspaceFolder}/docs", "a // not a comment", "b /* nor this */",],
        },
        "api": {
          "type": "http",
          "url": "https://api.example.com/mcp",
          "headers": { "Authorization": "Bearer ${input:tok}", },
        },
      },
    }"#;
    let out = import(src, ".vscode/mcp.json").expect("imports");
    let cfg = parsed(&out);
    let (_, args, _, _) = stdio(&cfg, "fs");
    assert_eq!(
        args,
        [
            "-y",
            "server-filesystem",
            "./docs",
            "a // not a comment",
            "b /* nor this */"
        ]
    );
    match &cfg.server("api").unwrap().transport {
        TransportSpec::Http {
            bearer_token_env, ..
        } => assert_eq!(bearer_token_env.as_deref(), Some("API_TOKEN")),
        other => panic!("{other:?}"),
    }
    assert!(
        out.notes.iter().any(|n| n.contains("export API_TOKEN")),
        "{:?}",
        out.notes
    );
}

#[test]
fn what_loom_cannot_serve_is_kept_commented_out_with_its_reason() {
    let src = r#"{ "mcpServers": {
        "old": { "type": "sse", "url": "https://old.example.com/sse" },
        "off": { "command": "uvx", "args": ["mcp-server-time"], "disabled": true },
        "loom": { "command": "/usr/local/bin/loom", "args": ["serve", "-c", "x.toml"] },
        "plain": { "url": "http://far.example.com/mcp", "headers": { "Authorization": "Bearer abc" } },
        "nothing": { "description": "no transport" },
        "time": { "command": "uvx", "args": ["mcp-server-time"], "alwaysAllow": ["now"] }
    } }"#;
    let out = import(src, "cline_mcp_settings.json").expect("imports");
    let cfg = parsed(&out);
    let live: Vec<&str> = cfg.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(live, ["time"], "{}", out.toml);
    assert_eq!(out.commented, 5);
    for (name, why) in [
        ("old", "HTTP+SSE"),
        ("off", "disabled"),
        ("srv_loom", "loom itself"),
        ("plain", "clear text"),
        ("nothing", "neither"),
    ] {
        assert!(
            out.notes
                .iter()
                .any(|n| n.starts_with(&format!("{name}:")) && n.contains(why)),
            "{name}: {:?}",
            out.notes
        );
        assert!(
            out.toml.contains(&format!("# name = \"{name}\"")),
            "{name} is kept: {}",
            out.toml
        );
    }
    assert!(
        !out.toml.contains("abc"),
        "the token stays out: {}",
        out.toml
    );
    assert!(
        out.notes
            .iter()
            .any(|n| n.starts_with("time:") && n.contains("alwaysAllow")),
        "{:?}",
        out.notes
    );
}

#[test]
fn credentials_in_command_lines_urls_and_values_never_reach_the_file() {
    let src = r#"{ "mcpServers": {
        "pg": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-postgres", "postgresql://app:Hunter2xx@db/prod"] },
        "brave": { "command": "npx", "args": ["brave-mcp", "--api-key=BSAsecretvalue1"] },
        "gh": { "command": "docker", "args": ["run", "-e", "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghcr.io/github/github-mcp-server"] },
        "flag": { "command": "tool", "args": ["--token", "plainsecretvalue2"] },
        "remote": { "command": "npx", "args": ["mcp-remote", "https://x.example/mcp", "--header", "Authorization: Bearer sk-remote-secret-3"] },
        "smithery": { "url": "https://server.smithery.ai/x/mcp?api_key=smitherysecret4" },
        "userinfo": { "url": "https://user:pw5secret@h.example/mcp" },
        "dsn": { "command": "db-mcp", "env": { "DATABASE_URL": "postgres://u:pw6secret@db/x", "MYSQL_PWD": "pw7secret", "MODE": "ro" } },
        "hdr": { "url": "https://h.example/mcp", "headers": { "X-Custom": "Bearer sk-hdr-secret-8" } }
    } }"#;
    let out = import(src, "c.json").expect("imports");
    for secret in [
        "Hunter2xx",
        "BSAsecretvalue1",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "plainsecretvalue2",
        "sk-remote-secret-3",
        "smitherysecret4",
        "pw5secret",
        "pw6secret",
        "pw7secret",
        "sk-hdr-secret-8",
    ] {
        assert!(!out.toml.contains(secret), "{secret} in:\n{}", out.toml);
        assert!(
            !out.notes.iter().any(|n| n.contains(secret)),
            "{secret} in {:?}",
            out.notes
        );
    }
    let cfg = parsed(&out);
    let live: Vec<&str> = cfg.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(live, ["dsn", "hdr"], "{}", out.toml);
    let (_, _, env, passthrough) = stdio(&cfg, "dsn");
    assert_eq!(env, [("MODE".to_owned(), "ro".to_owned())]);
    assert_eq!(passthrough, ["DATABASE_URL", "MYSQL_PWD"]);
    for name in [
        "pg", "brave", "gh", "flag", "remote", "smithery", "userinfo",
    ] {
        assert!(
            out.notes
                .iter()
                .any(|n| n.starts_with(&format!("{name}: kept commented out"))
                    && n.contains("credential")),
            "{name}: {:?}",
            out.notes
        );
    }
}

#[test]
fn variables_in_a_command_line_are_expanded_by_sh_as_the_client_did() {
    let src = r#"{ "mcpServers": {
        "brave": { "command": "npx", "args": ["-y", "brave-search", "--api-key", "${BRAVE_API_KEY}", "--dir=${HOME}/it's here", "${LEVEL:-info}"] },
        "vs": { "command": "node", "args": ["${input:script}"] }
    } }"#;
    let out = import(src, ".mcp.json").expect("imports");
    let cfg = parsed(&out);
    let (command, args, _, passthrough) = stdio(&cfg, "brave");
    assert_eq!(command, "sh");
    assert_eq!(args[0], "-c");
    assert_eq!(passthrough, ["BRAVE_API_KEY", "HOME", "LEVEL"]);
    // The line the shell runs expands exactly those variables and keeps the rest literal.
    let line = &args[1];
    let echo = std::process::Command::new("sh")
        .args(["-c", &line.replacen("exec 'npx'", "printf '%s|'", 1)])
        .env_clear()
        .env("BRAVE_API_KEY", "k $(touch /tmp/never) 'q'")
        .env("HOME", "/home/me")
        .output()
        .expect("sh");
    assert_eq!(
        String::from_utf8_lossy(&echo.stdout),
        "-y|brave-search|--api-key|k $(touch /tmp/never) 'q'|--dir=/home/me/it's here|info|",
        "{line}"
    );
    assert!(out.servers == 1 && out.commented == 1, "{}", out.toml);
    assert!(
        out.notes
            .iter()
            .any(|n| n.starts_with("vs: kept commented out") && n.contains("${input:script}")),
        "{:?}",
        out.notes
    );
}

#[test]
fn a_bom_loom_behind_flags_and_bidi_text_are_handled() {
    let src = "\u{feff}{\"mcpServers\": {\"me\": {\"command\": \"/usr/bin/loom\", \"args\": [\"-c\", \"x.toml\", \"serve\"]}, \"bidi\": {\"command\": \"tool\", \"args\": [\"a\u{202e}b\"]}, \"h\": {\"url\": \"https://h.example/mcp\", \"env\": {\"A\": \"1\"}}}}";
    let out = import(src, "bom.json").expect("a BOM is not an error");
    assert!(
        out.notes
            .iter()
            .any(|n| n.starts_with("me: kept commented out") && n.contains("loom itself")),
        "{:?}",
        out.notes
    );
    assert!(!out.toml.contains('\u{202e}'), "{}", out.toml);
    let cfg = parsed(&out);
    let (_, args, _, _) = stdio(&cfg, "bidi");
    assert_eq!(args, ["a\u{202e}b"], "escaped in the file, the same value");
    assert!(
        out.notes
            .iter()
            .any(|n| n.starts_with("h:") && n.contains("not used by this kind of server): env")),
        "{:?}",
        out.notes
    );
}

#[test]
fn no_server_list_and_not_json_are_clear_errors() {
    let e = import("{\"other\": 1}", "x.json").unwrap_err().to_string();
    assert!(e.contains("mcpServers") && e.contains("x.json"), "{e}");
    let e = import("{\"mcpServers\": ", "y.json")
        .unwrap_err()
        .to_string();
    assert!(e.contains("not JSON") && e.contains("y.json"), "{e}");
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,12}",
        "[a-zA-Z_$\\{\\}:/\\\\\"' \\n\\t-]{0,16}",
        Just("${workspaceFolder}".to_owned()),
        Just("${env:HOME}".to_owned()),
        Just("Bearer ${X}".to_owned()),
    ]
}

fn any_entry() -> impl Strategy<Value = Value> {
    (
        prop::option::of(prop_oneof![
            Just("stdio"),
            Just("http"),
            Just("sse"),
            Just("streamable-http")
        ]),
        prop::option::of(any_text()),
        prop::collection::vec(any_text(), 0..4),
        prop::collection::btree_map(any_text(), any_text(), 0..4),
        prop::option::of(prop_oneof![
            any_text(),
            Just("https://h.example/mcp".to_owned()),
            Just("http://localhost:9/mcp".to_owned())
        ]),
        prop::collection::btree_map(any_text(), any_text(), 0..3),
        any::<bool>(),
    )
        .prop_map(|(kind, command, args, env, url, headers, disabled)| {
            let mut e = serde_json::Map::new();
            if let Some(k) = kind {
                e.insert("type".into(), k.into());
            }
            if let Some(c) = command {
                e.insert("command".into(), c.into());
            }
            e.insert("args".into(), args.into());
            e.insert("env".into(), serde_json::to_value(env).unwrap());
            if let Some(u) = url {
                e.insert("url".into(), u.into());
            }
            e.insert("headers".into(), serde_json::to_value(headers).unwrap());
            e.insert("disabled".into(), disabled.into());
            Value::Object(e)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever the source holds, the import loads as a config, with exactly the live blocks.
    #[test]
    fn every_import_loads(servers in prop::collection::btree_map(any_text(), any_entry(), 0..6)) {
        let src = serde_json::json!({ "mcpServers": servers }).to_string();
        let out = import(&src, "p.json").expect("a server list imports");
        let cfg = Config::parse(&out.toml, Path::new("/proj"), "p").map_err(|e| {
            TestCaseError::fail(format!("{e}\n{}", out.toml))
        })?;
        prop_assert_eq!(cfg.servers.len(), out.servers);
        prop_assert_eq!(out.servers + out.commented, servers.len());
    }

    /// Any text: an import or a clear error, never a panic.
    #[test]
    fn any_text_never_panics(text in "\\PC{0,200}") {
        let _ = import(&text, "t");
        let _ = strip_jsonc(&text);
    }
}

#[test]
fn claude_code_projects_and_zed_context_servers() {
    let claude = r#"{
        "mcpServers": { "user": { "command": "uvx", "args": ["mcp-server-time"] } },
        "projects": {
            "/home/me/app": { "mcpServers": { "db": { "command": "db-mcp" } } },
            "/home/me/empty": { "mcpServers": {} }
        }
    }"#;
    let out = import(claude, "/home/me/.claude.json").expect("imports");
    assert_eq!(out.servers, 1);
    assert!(
        out.notes.iter().any(|n| n.contains("/home/me/app")
            && n.contains(
                "jq '.projects[\"/home/me/app\"]' '/home/me/.claude.json' | loom import -"
            )),
        "{:?}",
        out.notes
    );
    let only = r#"{ "projects": { "/p": { "mcpServers": { "db": { "command": "db-mcp" } } } } }"#;
    let e = import(only, "c.json").unwrap_err().to_string();
    assert!(
        e.contains("per project") && e.contains("jq '.projects[\"/p\"]' 'c.json'"),
        "{e}"
    );
    // The project's own object imports as it is.
    let project = r#"{ "mcpServers": { "db": { "command": "db-mcp" } }, "allowedTools": [] }"#;
    assert_eq!(import(project, "-").expect("imports").servers, 1);

    let zed = r#"{ "context_servers": {
        "old-style": { "command": { "path": "npx", "args": ["-y", "some-mcp"], "env": { "MODE": "x" } }, "settings": {} },
        "new-style": { "source": "custom", "command": "uvx", "args": ["mcp-server-time"] }
    } }"#;
    let out = import(zed, "settings.json").expect("imports");
    let cfg = parsed(&out);
    let (command, args, env, _) = stdio(&cfg, "old_style");
    assert_eq!((command.as_str(), args.len()), ("npx", 2));
    assert_eq!(env, [("MODE".to_owned(), "x".to_owned())]);
    assert_eq!(stdio(&cfg, "new_style").0, "uvx");
}

/// What is about a credential but is not one (a key's file, a switch that turns auth off, a
/// number of tokens) stays as written, and a `${VAR}` where a credential goes is filled in
/// by the shell, not taken for the credential.
#[test]
fn ordinary_settings_and_variable_credentials_stay_live() {
    let src = r#"{ "mcpServers": {
        "plain": { "command": "srv", "args": ["--max-tokens=4096", "--key-file=/etc/k.pem", "--password-file=/run/secrets/pg", "--no-auth", "/data", "--token-env", "GITHUB_TOKEN", "author=x", "monkey=y", "--session-timeout=30", "--keywords=a,b", "--max-tokens", "512"],
                   "env": { "MAX_TOKENS": "4096", "GIT_AUTHOR_NAME": "me", "DISABLE_AUTH": "true", "GOOGLE_APPLICATION_CREDENTIALS": "/home/me/key.json", "SESSION_TIMEOUT": "30" } },
        "remote": { "command": "npx", "args": ["mcp-remote", "https://x.example/mcp", "--header", "Authorization:${AUTH_HEADER}"] },
        "flags": { "command": "tool", "args": ["--token=${GITHUB_TOKEN}", "-e", "API_KEY=${API_KEY}", "--api-key", "${BRAVE}"] },
        "leaky": { "command": "tool", "args": ["--api-key", "${BRAVE:-abcd1234secret}"] },
        "level": { "command": "tool", "env": { "LOG_LEVEL": "${LOG_LEVEL:-info}", "API_KEY": "${API_KEY:-sk-default-secret-99}" } }
    } }"#;
    let out = import(src, "c.json").expect("imports");
    let cfg = parsed(&out);
    let live: Vec<&str> = cfg.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        live,
        ["plain", "remote", "flags", "level"],
        "{}\n{:?}",
        out.toml,
        out.notes
    );
    let (_, args, env, passthrough) = stdio(&cfg, "plain");
    assert_eq!(args.len(), 13, "{args:?}");
    assert_eq!(env.len(), 5, "{env:?}");
    assert!(passthrough.is_empty(), "{passthrough:?}");
    let (command, args, _, passthrough) = stdio(&cfg, "remote");
    assert_eq!(command, "sh");
    assert!(
        args[1].contains("'Authorization:'\"${AUTH_HEADER}\""),
        "{args:?}"
    );
    assert_eq!(passthrough, ["AUTH_HEADER"]);
    let (_, _, _, passthrough) = stdio(&cfg, "flags");
    assert_eq!(passthrough, ["GITHUB_TOKEN", "API_KEY", "BRAVE"]);
    assert!(!out.toml.contains("abcd1234secret"), "{}", out.toml);
    assert!(!out.toml.contains("sk-default-secret-99"), "{}", out.toml);
    assert!(
        out.notes
            .iter()
            .any(|n| n.starts_with("level:") && n.contains("default (info)")),
        "{:?}",
        out.notes
    );
}
