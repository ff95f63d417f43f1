use super::*;

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, Path::new("/cfg"), "loom.toml")
}

#[test]
fn issue_example_parses() {
    let cfg = parse(
        r#"
token_threshold = 2000
export_dir = "exports"

[[servers]]
name = "fs"
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
env = { LOG_LEVEL = "info" }
env_passthrough = ["HTTPS_PROXY"]
tools.deny = ["write_*", "move_*"]

[[servers]]
name = "hosted"
url = "https://example.com/mcp"
headers = { "X-Tenant-Id" = "acme" }
bearer_token_env = "HOSTED_TOKEN"
"#,
    )
    .unwrap();
    assert_eq!(cfg.servers.len(), 2);
    assert_eq!(cfg.export_dir, Path::new("/cfg/exports"));
    let fs = &cfg.servers[0];
    assert!(!fs.tools.exposes("write_file"));
    assert!(fs.tools.exposes("read_file"));
    match &fs.transport {
        TransportSpec::Stdio {
            command, cwd, env, ..
        } => {
            assert_eq!(command, "npx");
            assert_eq!(cwd, Path::new("/cfg"));
            assert_eq!(env["LOG_LEVEL"], "info");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(&cfg.servers[1].transport, TransportSpec::Http { bearer_token_env: Some(b), .. } if b == "HOSTED_TOKEN")
    );
}

#[test]
fn every_problem_is_listed_with_its_path() {
    let err = parse(
        r#"
token_threshold = "big"
naming = "short"
colour = 1

[[servers]]
name = "Bad-Name"
command = "x"
url = "http://a"

[[servers]]
name = "loom"
url = "ftp://x"
args = ["a"]
tools.allow = "read_*"

[[servers]]
name = "ok"
command = "x"
env = { "1BAD" = "v" }
call_timeout = -1

[[servers]]
name = "ok"
command = "y"
"#,
    )
    .unwrap_err()
    .to_string();
    for needle in [
        "token_threshold: must be an integer",
        "naming: must be one of \"qualified\", \"bare\"",
        "colour: unknown field",
        "servers[0].name: \"Bad-Name\" must match",
        "servers[0]: has both `command`",
        "servers[1].name: \"loom\" is reserved",
        "servers[1].url: must start with http",
        "servers[1].args: only applies to stdio",
        "servers[1].tools.allow: must be an array",
        "servers[2].env.1BAD: is not a valid environment variable name",
        "servers[2].call_timeout: must be between",
        "servers[3].name: \"ok\" is already used by servers[2]",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in:\n{err}");
    }
}

#[test]
fn relative_paths_resolve_against_config_folder() {
    let cfg =
        parse("[[servers]]\nname = \"a\"\ncommand = \"./bin/srv\"\ncwd = \"work\"\n").unwrap();
    match &cfg.servers[0].transport {
        TransportSpec::Stdio { command, cwd, .. } => {
            assert_eq!(command, "/cfg/./bin/srv");
            assert_eq!(cwd, Path::new("/cfg/work"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn secrets_never_in_headers() {
    let err = parse("[[servers]]\nname = \"h\"\nurl = \"https://x/mcp\"\nheaders = { Authorization = \"Bearer abc\" }\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("bearer_token_env"), "{err}");
}

#[test]
fn syntax_errors_are_reported() {
    let err = parse("[[servers]\nname=").unwrap_err().to_string();
    assert!(err.contains("not valid TOML"), "{err}");
}

#[test]
fn globs() {
    assert!(glob_match("write_*", "write_file"));
    assert!(glob_match("*", ""));
    assert!(glob_match("a?c", "abc"));
    assert!(!glob_match("a?c", "ac"));
    assert!(glob_match("*_file", "read_text_file"));
    assert!(!glob_match("read", "read_file"));
}

#[test]
fn a_bearer_token_over_plain_http_is_refused_unless_the_host_is_this_machine() {
    let with = |url: &str| {
        parse(&format!(
            "[[servers]]\nname = \"h\"\nurl = \"{url}\"\nbearer_token_env = \"HOSTED_TOKEN\"\n"
        ))
    };
    for refused in [
        "http://example.com/mcp",
        "http://10.0.0.5:8080/mcp",
        "http://localhost.example.com/mcp",
        "http://127.0.0.1.nip.io/mcp",
        "http://[::ffff:10.0.0.1]/mcp",
    ] {
        let err = with(refused).unwrap_err().to_string();
        assert!(
            err.contains("servers[0].bearer_token_env") && err.contains("https://"),
            "{refused}: {err}"
        );
    }
    for allowed in [
        "https://example.com/mcp",
        "http://localhost:3000/mcp",
        "http://LOCALHOST/mcp",
        "http://127.0.0.1:8080/mcp",
        "http://127.1.2.3/mcp",
        "http://[::1]:9000/mcp",
        "http://[::ffff:127.0.0.1]/mcp",
    ] {
        assert!(with(allowed).is_ok(), "{allowed} was refused");
    }
    // Without a token, plain http to another host stays allowed.
    assert!(parse("[[servers]]\nname = \"h\"\nurl = \"http://example.com/mcp\"\n").is_ok());
}

#[test]
fn a_glob_that_does_not_compile_is_a_config_error_at_its_index() {
    let err = parse(
        "[[servers]]\nname = \"fs\"\ncommand = \"x\"\napprove.deny = [\"write_*\", \"bad_[\"]\npark_never = [\"{a,\"]\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("servers[0].approve.deny[1]: `bad_[` is not a valid glob"),
        "{err}"
    );
    assert!(
        err.contains("servers[0].park_never[0]: `{a,` is not a valid glob"),
        "{err}"
    );
    let ok =
        parse("[[servers]]\nname = \"fs\"\ncommand = \"x\"\napprove.ask = [\"{read,write}_*\"]\n")
            .unwrap();
    let approve = &ok.servers[0].approve;
    assert_eq!(approve.decide("write_file", None), Approval::Ask);
    assert_eq!(approve.decide("list_dir", None), Approval::Allow);
}

#[test]
fn a_bearer_token_command_is_an_argv_list_run_without_a_shell() {
    let cfg = parse(
        "[[servers]]\nname = \"h\"\nurl = \"https://x/mcp\"\nbearer_token_command = [\"./bin/token\", \"--for\", \"x\"]\n",
    )
    .unwrap();
    match &cfg.servers[0].transport {
        TransportSpec::Http {
            bearer_token_command: Some(argv),
            bearer_token_env: None,
            ..
        } => assert_eq!(argv, &["/cfg/./bin/token", "--for", "x"]),
        other => panic!("{other:?}"),
    }
    let with = |value: &str| {
        parse(&format!(
            "[[servers]]\nname = \"h\"\nurl = \"https://x/mcp\"\nbearer_token_command = {value}\n"
        ))
        .unwrap_err()
        .to_string()
    };
    let err = with("\"gcloud auth print-access-token\"");
    assert!(
        err.contains("servers[0].bearer_token_command")
            && err.contains("without a shell")
            && err.contains("sh"),
        "{err}"
    );
    let err = with("[]");
    assert!(err.contains("must not be empty"), "{err}");
    let err = with("[\" \"]");
    assert!(err.contains("bearer_token_command[0]"), "{err}");
    let err = with("[\"tok\", 3]");
    assert!(err.contains("bearer_token_command[1]"), "{err}");
    // One source of the token, and never in clear text to another machine.
    let err = parse(
        "[[servers]]\nname = \"h\"\nurl = \"https://x/mcp\"\nbearer_token_env = \"T\"\nbearer_token_command = [\"tok\"]\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("cannot be combined with `bearer_token_env`"),
        "{err}"
    );
    let err = parse(
        "[[servers]]\nname = \"h\"\nurl = \"http://example.com/mcp\"\nbearer_token_command = [\"tok\"]\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("bearer_token_command") && err.contains("https://"),
        "{err}"
    );
    let err =
        parse("[[servers]]\nname = \"s\"\ncommand = \"x\"\nbearer_token_command = [\"tok\"]\n")
            .unwrap_err()
            .to_string();
    assert!(
        err.contains("only applies to streamable-HTTP servers"),
        "{err}"
    );
}
