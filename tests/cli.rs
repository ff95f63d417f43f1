//! The command line where a person meets it, through the real binary: text written by others
//! never reaches a terminal raw (`loom query`, `loom check`, error messages), CSV and JSON stay
//! exact when piped; `loom sessions` removes only loom's own files; a workbench that logged
//! nothing leaves no log file; loom keeps working with an environment variable that is not
//! UTF-8; the stdio server answers malformed and reused request ids correctly; and the private
//! folder of a loom killed by SIGKILL is removed by the next loom, never a live one's.

mod common;

use common::{LOOM, RawClient, TempConfig, sample_config};
use serde_json::{Value, json};
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::ffi::OsStringExt;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// A value that would write the clipboard (OSC 52), retitle the window (OSC 2) and clear the
/// screen (CSI, also as the 8-bit C1 CSI U+009B) if a terminal printed it raw.
const HOSTILE_SQL: &str = "SELECT chr(27) || ']52;c;cHduZWQ=' || chr(7) || 'x' || chr(27) || ']2;owned' || chr(7) || chr(155) || '2J' AS \"h\u{1b}[2J\"";
const HOSTILE_VALUE: &str = "\u{1b}]52;c;cHduZWQ=\u{7}x\u{1b}]2;owned\u{7}\u{9b}2J";

fn has_raw_controls(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    text.chars()
        .any(|c| c.is_control() && c != '\n' && c != '\r' && c != '\t')
}

fn loom(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(LOOM)
        .env("XDG_RUNTIME_DIR", dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run loom")
}

/// `loom <args>` with stdout on a pseudo-terminal (util-linux `script`), as a person runs it.
fn loom_on_a_terminal(dir: &std::path::Path, args: &[&str]) -> Vec<u8> {
    // The arguments travel in the environment, so no shell quoting touches them.
    let mut cmd = Command::new("script");
    let mut line = format!("{LOOM:?}");
    for (i, a) in args.iter().enumerate() {
        cmd.env(format!("LOOM_TEST_ARG{i}"), a);
        line.push_str(&format!(" \"$LOOM_TEST_ARG{i}\""));
    }
    let out = cmd
        .env("XDG_RUNTIME_DIR", dir)
        .args(["-qec", &line, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("script (util-linux) runs loom on a pty");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    out.stdout
}

/// `loom serve` on `cfg` with piped stdin and stdout, its temporary files under `tmp`.
fn serve_piped(cfg: &TempConfig, tmp: &std::path::Path) -> std::process::Child {
    Command::new(LOOM)
        .env("XDG_RUNTIME_DIR", cfg.dir.path())
        .env("TMPDIR", tmp)
        .args(["serve", "-c"])
        .arg(&cfg.path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("loom serve")
}

/// A running `loom serve` on the sample config; its session file exists once it has answered.
async fn serving() -> (TempConfig, RawClient) {
    let cfg = sample_config("", "");
    let mut client = RawClient::spawn(&cfg.path);
    client.initialize().await;
    (cfg, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_output_escapes_for_people_and_stays_exact_in_a_pipe() {
    let (cfg, _client) = serving().await;
    let dir = cfg.dir.path();

    // The table is for people: escaped wherever it goes.
    let out = loom(dir, &["query", HOSTILE_SQL]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !has_raw_controls(&out.stdout),
        "{:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("h\\e[2J"), "{table}");
    assert!(
        table.contains("\\e]52;c;cHduZWQ=\\u{7}x\\e]2;owned\\u{7}\\u{9b}2J"),
        "{table}"
    );

    // CSV and JSON into a pipe are the exact values.
    let out = loom(dir, &["query", HOSTILE_SQL, "--format", "csv"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).expect("UTF-8"),
        format!("h\u{1b}[2J\n{HOSTILE_VALUE}\n")
    );
    let out = loom(dir, &["query", HOSTILE_SQL, "--format", "json"]);
    let row: Value = serde_json::from_slice(&out.stdout).expect("one JSON row");
    assert_eq!(row, json!({ "h\u{1b}[2J": HOSTILE_VALUE }));
    // Each value as its type: exact numbers (a 30-digit decimal too), booleans, JSON; the
    // rest as text.
    let typed = "SELECT 1 AS n, 1.5::DOUBLE AS d, 123456789012345678901234567.891::DECIMAL(30,3) AS dec, 170141183460469231731687303715884105727::HUGEINT AS big, true AS b, NULL AS z, 'inf'::DOUBLE AS i, '{\"a\": [1]}'::JSON AS j, DATE '2024-02-29' AS day, '007' AS code";
    let out = loom(dir, &["query", typed, "--format", "json"]);
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(
        text.contains(r#""dec":123456789012345678901234567.891"#)
            && text.contains(r#""big":170141183460469231731687303715884105727"#),
        "exact digits: {text}"
    );
    let row: Value = serde_json::from_str(&text).expect("one JSON row");
    assert_eq!(
        row,
        json!({ "n": 1, "d": 1.5, "dec": serde_json::from_str::<Value>("123456789012345678901234567.891").unwrap(),
            "big": serde_json::from_str::<Value>("170141183460469231731687303715884105727").unwrap(),
            "b": true, "z": null, "i": "Infinity", "j": {"a": [1]}, "day": "2024-02-29", "code": "007" })
    );

    // The same on a terminal: escaped, and the JSON is still JSON with the same value.
    let csv = loom_on_a_terminal(dir, &["query", HOSTILE_SQL, "--format", "csv"]);
    assert!(
        !has_raw_controls(&csv),
        "{:?}",
        String::from_utf8_lossy(&csv)
    );
    assert!(
        String::from_utf8_lossy(&csv).contains("\\e]52;c;cHduZWQ=\\u{7}x"),
        "{}",
        String::from_utf8_lossy(&csv)
    );
    let json_tty = loom_on_a_terminal(dir, &["query", HOSTILE_SQL, "--format", "json"]);
    assert!(
        !has_raw_controls(&json_tty),
        "{:?}",
        String::from_utf8_lossy(&json_tty)
    );
    let row: Value = serde_json::from_slice(&json_tty).expect("JSON on a terminal");
    assert_eq!(row, json!({ "h\u{1b}[2J": HOSTILE_VALUE }));
    let table = loom_on_a_terminal(dir, &["query", HOSTILE_SQL]);
    assert!(
        !has_raw_controls(&table),
        "{:?}",
        String::from_utf8_lossy(&table)
    );
}

#[test]
fn error_messages_quote_what_others_wrote_escaped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = loom(
        dir.path(),
        &["query", "\u{1b}]2;owned\u{7}\u{9b}2J", "SELECT 1"],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no session `\\e]2;owned\\u{7}\\u{9b}2J`"),
        "{err}"
    );
    assert!(!has_raw_controls(&out.stderr), "{err:?}");
}

#[test]
fn check_escapes_server_errors_and_their_stderr() {
    let cfg = TempConfig::new(
        "[[servers]]\nname = \"noisy\"\ncommand = \"sh\"\nargs = [\"-c\", \"printf '\\\\033]2;owned\\\\007\\\\033[2Jgone\\\\n' >&2; exit 3\"]\nhandshake_timeout = 5\n",
    );
    let out = Command::new(LOOM)
        .args(["check", "-c"])
        .arg(&cfg.path)
        .stdin(Stdio::null())
        .output()
        .expect("loom check");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("noisy"), "{text}");
    assert!(
        text.contains("\\e]2;owned\\u{7}\\e[2Jgone"),
        "the stderr is shown, escaped: {text}"
    );
    assert!(!has_raw_controls(&out.stdout), "{text:?}");
}

#[test]
fn a_variable_that_is_not_utf8_does_not_stop_servers_from_starting() {
    let cfg = sample_config("", "");
    let out = Command::new(LOOM)
        .env(
            OsString::from("LOOM_TEST_NOT_UTF8"),
            OsString::from_vec(vec![b'a', 0xff, 0xfe]),
        )
        .env("LANG", OsString::from_vec(vec![b'C', 0xff]))
        .args(["check", "-c"])
        .arg(&cfg.path)
        .stdin(Stdio::null())
        .output()
        .expect("loom check");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("sample") && text.contains("up"), "{text}");
}

#[test]
fn sessions_removes_only_loom_files_in_its_own_folder() {
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path().join("loom");
    std::fs::create_dir_all(&dir).expect("runtime dir");
    // A stale description (its process is gone) that names a file elsewhere as its socket.
    let victim = root.path().join("precious.txt");
    std::fs::write(&victim, "keep me").expect("victim");
    let dead = 999_999u32;
    let entry = json!({
        "pid": dead, "config": "x.toml", "started_at": "2026-01-01T00:00:00Z",
        "servers": [], "socket": victim, "kind": "serve"
    });
    std::fs::write(dir.join(format!("{dead}.json")), entry.to_string()).expect("json");
    // A file named like a socket that is not one.
    let not_a_socket = dir.join("999998.sock");
    std::fs::write(&not_a_socket, "not a socket").expect("file");
    // A real stale socket beside its description is still cleaned up.
    let stale = dir.join("999997.sock");
    drop(std::os::unix::net::UnixListener::bind(&stale).expect("bind"));
    let stale_entry = json!({
        "pid": 999_997, "config": "x.toml", "started_at": "2026-01-01T00:00:00Z",
        "servers": [], "socket": stale, "kind": "serve"
    });
    std::fs::write(dir.join("999997.json"), stale_entry.to_string()).expect("json");

    let out = loom(root.path(), &["sessions"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("no loom session is running"));
    assert_eq!(
        std::fs::read_to_string(&victim).ok().as_deref(),
        Some("keep me"),
        "a path named by a session file was deleted"
    );
    assert!(
        not_a_socket.exists(),
        "a file that is not a socket was deleted"
    );
    assert!(!dir.join(format!("{dead}.json")).exists());
    assert!(!stale.exists() && !dir.join("999997.json").exists());
}

#[test]
fn a_workbench_that_logged_nothing_leaves_no_log_file() {
    let root = tempfile::tempdir().expect("tempdir");
    // `loom attach` sets up the workbench's log exactly as `loom tui` does, then finds no
    // session to attach to.
    let out = loom(root.path(), &["attach"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no loom session is running"));
    let logs: Vec<_> = std::fs::read_dir(root.path().join("loom"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name())
                .filter(|n| n.to_string_lossy().ends_with(".log"))
                .collect()
        })
        .unwrap_or_default();
    assert!(logs.is_empty(), "empty log files left behind: {logs:?}");
}

#[test]
fn a_request_that_is_not_utf8_is_answered_with_its_own_id() {
    let cfg = sample_config("", "");
    let mut child = serve_piped(&cfg, cfg.dir.path());
    let mut stdin = child.stdin.take().expect("stdin");
    let mut line = br#"{"jsonrpc":"2.0","id":"bad-1","method":"tools/call","params":{"name":"sample_get_weather","arguments":{"city":""#.to_vec();
    line.extend_from_slice(&[0xff, 0xfe]);
    line.extend_from_slice(b"\"}}}\n");
    stdin.write_all(&line).expect("write");
    // End of input ends loom after it has answered what it read.
    drop(stdin);
    let out = child.wait_with_output().expect("loom exits");
    let replies: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert_eq!(replies[0]["id"], json!("bad-1"), "{replies:?}");
    assert_eq!(replies[0]["error"]["code"], json!(-32700), "{replies:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reused_request_id_is_refused_and_the_first_request_keeps_running() {
    let (_cfg, mut client) = serving().await;
    let first = json!({ "jsonrpc": "2.0", "id": "dup", "method": "tools/call", "params": {
        "name": "sample_slow_count", "arguments": { "steps": 100, "delay_ms": 50 },
        "_meta": { "progressToken": "first" } } });
    client.send_raw(&first.to_string()).await;
    // The first call is running once its first progress arrives.
    client
        .wait_for(Duration::from_secs(30), |v| {
            v["method"] == "notifications/progress" && v["params"]["progressToken"] == "first"
        })
        .await;
    let second = json!({ "jsonrpc": "2.0", "id": "dup", "method": "tools/call", "params": {
        "name": "sample_slow_count", "arguments": { "steps": 1, "delay_ms": 0 } } });
    client.send_raw(&second.to_string()).await;
    let is_dup = |v: &Value| v["id"] == "dup" && v.get("method").is_none();
    let refused: Value =
        serde_json::from_str(&client.wait_for(Duration::from_secs(30), is_dup).await)
            .expect("JSON");
    assert_eq!(refused["error"]["code"], json!(-32600), "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("in flight")),
        "{refused}"
    );
    let done: Value = serde_json::from_str(&client.wait_for(Duration::from_secs(30), is_dup).await)
        .expect("JSON");
    assert_eq!(
        done["result"]["content"][0]["text"],
        json!("counted to 100"),
        "the first call was not cancelled by the second: {done}"
    );
    // Once answered, the id may be used again.
    let again = json!({ "jsonrpc": "2.0", "id": "dup", "method": "ping" });
    client.send_raw(&again.to_string()).await;
    let pong: Value = serde_json::from_str(&client.wait_for(Duration::from_secs(30), is_dup).await)
        .expect("JSON");
    assert_eq!(pong["result"], json!({}), "{pong}");
}

/// `loom import` as a person uses it: a Claude Desktop config becomes a loom.toml that `loom
/// check` starts, secrets stay out of it, a name with escape codes reaches the terminal
/// escaped, an existing file is never overwritten, and standard input works too.
#[test]
fn import_makes_a_config_that_check_starts() {
    let dir = tempfile::tempdir().expect("dir");
    let src = dir.path().join("claude_desktop_config.json");
    let source = json!({
        "mcpServers": {
            "Sample Orders": { "command": LOOM, "args": ["sample-server"],
                "env": { "ORDERS_API_KEY": "sk-live-123", "REGION": "eu" } },
            "evil\u{1b}]2;owned\u{7}": { "type": "sse", "url": "https://old.example/sse" }
        }
    });
    std::fs::write(&src, source.to_string()).expect("write");
    let toml = dir.path().join("loom.toml");
    let out = loom(
        dir.path(),
        &[
            "import",
            src.to_str().unwrap(),
            "-o",
            toml.to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!has_raw_controls(&out.stderr), "{err:?}");
    assert!(
        err.contains("wrote") && err.contains("1 kept commented out"),
        "{err}"
    );
    assert!(err.contains("export ORDERS_API_KEY"), "{err}");
    let written = std::fs::read_to_string(&toml).expect("written");
    assert!(!written.contains("sk-live-123"), "{written}");
    assert!(!has_raw_controls(written.as_bytes()), "{written:?}");

    let check = loom(dir.path(), &["check", "-c", toml.to_str().unwrap()]);
    let report = String::from_utf8_lossy(&check.stdout);
    assert!(
        check.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&check.stderr)
    );
    assert!(
        report
            .lines()
            .any(|l| l.starts_with("sample_orders") && l.contains("up")),
        "{report}"
    );

    // Never over an existing file: it stays as it was.
    let again = loom(
        dir.path(),
        &[
            "import",
            src.to_str().unwrap(),
            "-o",
            toml.to_str().unwrap(),
        ],
    );
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("never overwrites"));
    assert_eq!(std::fs::read_to_string(&toml).unwrap(), written);

    // From standard input, to standard output.
    let mut child = Command::new(LOOM)
        .args(["import", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"// VS Code\n{\"servers\": {\"t\": {\"command\": \"uvx\", \"args\": [\"mcp-server-time\"],},},}")
        .unwrap();
    let piped = child.wait_with_output().expect("import");
    assert!(piped.status.success());
    let text = String::from_utf8_lossy(&piped.stdout);
    assert!(
        text.contains("name = \"t\"") && text.contains("mcp-server-time"),
        "{text}"
    );

    // Nothing importable: status 1, and a reason.
    let none = dir.path().join("none.json");
    std::fs::write(
        &none,
        r#"{"mcpServers": {"old": {"type": "sse", "url": "https://x/sse"}}}"#,
    )
    .unwrap();
    let out = loom(dir.path(), &["import", none.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no server could be imported"));
}

/// The `loom-store-*` folders in `tmp`.
fn store_folders(tmp: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(tmp)
        .expect("read the temporary folder")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("loom-store-"))
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

#[test]
fn a_killed_loom_leaves_its_private_folder_and_the_next_loom_removes_it() {
    let cfg = sample_config("", "");
    let tmp = tempfile::tempdir().expect("tempdir");
    let serve = || serve_piped(&cfg, tmp.path());
    // A store opens once a query is answered.
    let query = |child: &mut std::process::Child| {
        let mut stdin = child.stdin.take().expect("stdin");
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"loom_query","arguments":{"sql":"SELECT 42 AS answer"}}}"#,
        ] {
            writeln!(stdin, "{line}").expect("write");
        }
        let mut out = std::io::BufReader::new(child.stdout.as_mut().expect("stdout"));
        let mut line = String::new();
        while !line.contains(r#""id":2"#) {
            line.clear();
            let n = std::io::BufRead::read_line(&mut out, &mut line).expect("read");
            assert!(n > 0, "loom serve ended before answering the query");
        }
        assert!(line.contains("42"), "{line}");
        stdin
    };
    let mut live = serve();
    let mut killed = serve();
    let _live_input = query(&mut live);
    let _killed_input = query(&mut killed);
    assert_eq!(store_folders(tmp.path()).len(), 2);
    killed.kill().expect("SIGKILL");
    killed.wait().expect("reaped");
    let before = store_folders(tmp.path());
    assert_eq!(before.len(), 2, "SIGKILL leaves the folder: {before:?}");

    // The next loom to open a store removes the abandoned folder, never the live one's, and
    // its own goes when it exits.
    let mut next = serve();
    drop(query(&mut next));
    assert!(next.wait().expect("loom exits").success());
    let after = store_folders(tmp.path());
    assert_eq!(after.len(), 1, "{after:?}");
    assert!(before.contains(&after[0]));
    live.kill().expect("kill");
    live.wait().expect("reaped");
}
