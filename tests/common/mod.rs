//! Test harness: the real `loom` binary driven over stdio by a raw JSON-RPC client, configs in
//! temporary folders, and the pinned real peers installed by `scripts/install-test-peers.sh`.
#![allow(dead_code)]

use serde_json::{Value, json};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;

pub const LOOM: &str = env!("CARGO_BIN_EXE_loom");

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A file under `.peers/`; fails the test (never skips) when the peer is not installed.
pub fn peer(rel: &str) -> PathBuf {
    let p = root().join(".peers").join(rel);
    assert!(
        p.exists(),
        "test peer {} is missing: run scripts/test.sh (it installs the pinned peers)",
        p.display()
    );
    p
}

pub fn everything_js() -> PathBuf {
    peer("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

pub fn filesystem_js() -> PathBuf {
    peer("node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
}

pub fn memory_js() -> PathBuf {
    peer("node/node_modules/@modelcontextprotocol/server-memory/dist/index.js")
}

pub fn venv_python() -> PathBuf {
    peer("venv/bin/python")
}

pub fn testserver() -> String {
    root()
        .join("tests/fixtures/testserver.py")
        .display()
        .to_string()
}

/// A config file in its own temporary folder.
pub struct TempConfig {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl TempConfig {
    pub fn new(toml: &str) -> TempConfig {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("loom.toml");
        std::fs::write(&path, toml).expect("write config");
        TempConfig { dir, path }
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// The session a test's `loom serve` opened, read from its runtime folder.
pub async fn session_entry(cfg: &TempConfig) -> loom::frontend::socket::SessionEntry {
    let dir = cfg.dir.path().join("loom");
    wait_until(
        &format!("a session file in {}", dir.display()),
        async || {
            std::fs::read_dir(&dir).ok()?.flatten().find_map(|e| {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "json") {
                    serde_json::from_str::<loom::frontend::socket::SessionEntry>(
                        &std::fs::read_to_string(&p).ok()?,
                    )
                    .ok()
                } else {
                    None
                }
            })
        },
    )
    .await
}

/// The built-in sample server behind loom, with extra top-level and server settings; exports
/// and memories stay in the config's folder.
pub fn sample_config(extra_top: &str, extra_server: &str) -> TempConfig {
    TempConfig::new(&format!(
        "{extra_top}\nexport_dir = \"exports\"\nmemory_file = \"memories.jsonl\"\n[[servers]]\nname = \"sample\"\ncommand = {LOOM:?}\nargs = [\"sample-server\"]\n{extra_server}\n"
    ))
}

/// TOML for one stdio server running the test server with `flags`.
pub fn testserver_entry(name: &str, flags: &[&str]) -> String {
    let mut args = vec![format!("{:?}", testserver())];
    args.extend(flags.iter().map(|f| format!("{f:?}")));
    format!(
        "[[servers]]\nname = \"{name}\"\ncommand = \"python3\"\nargs = [{}]\n",
        args.join(", ")
    )
}

pub struct RawClient {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::UnboundedReceiver<String>,
    backlog: VecDeque<String>,
    next_id: u64,
    pub stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl RawClient {
    pub fn spawn(config: &Path) -> RawClient {
        Self::spawn_with(config, &[])
    }

    pub fn spawn_with(config: &Path, env: &[(&str, &str)]) -> RawClient {
        // Each test's sessions live apart, so `loom connect` and `loom sessions` find only its own.
        let run = config
            .parent()
            .unwrap_or(Path::new("."))
            .display()
            .to_string();
        let mut all = vec![("XDG_RUNTIME_DIR", run.as_str())];
        all.extend_from_slice(env);
        let config = config.display().to_string();
        Self::spawn_args(&["serve", "-c", &config, "--log-level", "info"], &all)
    }

    /// `loom <args>` speaking MCP on its stdio (`serve`, `connect`).
    pub fn spawn_args(args: &[&str], env: &[(&str, &str)]) -> RawClient {
        Self::spawn_command(tokio::process::Command::new(LOOM), args, env)
    }

    /// Like `spawn_args`, through `cmd`: loom itself or a wrapper that ends by running it.
    pub fn spawn_command(
        mut cmd: tokio::process::Command,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> RawClient {
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn loom");
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut r = BufReader::new(stdout).lines();
            while let Ok(Some(l)) = r.next_line().await {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let log2 = log.clone();
        tokio::spawn(async move {
            let mut r = BufReader::new(stderr).lines();
            while let Ok(Some(l)) = r.next_line().await {
                let mut g = log2.lock().unwrap();
                g.push_str(&l);
                g.push('\n');
            }
        });
        RawClient {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            backlog: VecDeque::new(),
            next_id: 1,
            stderr: log,
        }
    }

    pub async fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).await.expect("write");
        stdin.write_all(b"\n").await.expect("write");
        stdin.flush().await.expect("flush");
    }

    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next line from loom, or None after `timeout`.
    pub async fn next_line(&mut self, timeout: Duration) -> Option<String> {
        if let Some(l) = self.backlog.pop_front() {
            return Some(l);
        }
        tokio::time::timeout(timeout, self.lines.recv())
            .await
            .ok()
            .flatten()
    }

    /// Waits for a line matching `pred`, keeping the others for later.
    pub async fn wait_for(&mut self, timeout: Duration, pred: impl Fn(&Value) -> bool) -> String {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut kept = VecDeque::new();
        // Look at the backlog first.
        while let Some(l) = self.backlog.pop_front() {
            if serde_json::from_str::<Value>(&l).is_ok_and(|v| pred(&v)) {
                kept.extend(self.backlog.drain(..));
                self.backlog = kept;
                return l;
            }
            kept.push_back(l);
        }
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match tokio::time::timeout(left, self.lines.recv()).await {
                Ok(Some(l)) => {
                    if serde_json::from_str::<Value>(&l).is_ok_and(|v| pred(&v)) {
                        self.backlog = kept;
                        return l;
                    }
                    kept.push_back(l);
                }
                _ => {
                    let seen: Vec<_> = kept.iter().cloned().collect();
                    panic!(
                        "timed out; lines seen: {seen:#?}\nloom stderr:\n{}",
                        self.stderr.lock().unwrap()
                    );
                }
            }
        }
    }

    /// Sends a request and returns the raw response line.
    pub async fn request_raw(&mut self, method: &str, params: Value, timeout: Duration) -> String {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.send_raw(&msg.to_string()).await;
        self.wait_for(timeout, |v| {
            v["id"] == json!(id) && v.get("method").is_none()
        })
        .await
    }

    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let line = self
            .request_raw(method, params, Duration::from_secs(30))
            .await;
        serde_json::from_str(&line).expect("response is JSON")
    }

    pub fn next_request_id(&self) -> u64 {
        self.next_id
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        let msg = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        self.send_raw(&msg.to_string()).await;
    }

    pub async fn initialize(&mut self) -> Value {
        self.initialize_with(json!({})).await
    }

    pub async fn initialize_with(&mut self, capabilities: Value) -> Value {
        let r = self
            .request(
                "initialize",
                json!({ "protocolVersion": "2025-06-18", "capabilities": capabilities, "clientInfo": { "name": "raw-test", "version": "0" } }),
            )
            .await;
        self.notify("notifications/initialized", json!({})).await;
        r
    }

    /// Every exposed tool, loom's own included.
    pub async fn all_tool_names(&mut self) -> Vec<String> {
        let r = self.request("tools/list", json!({})).await;
        r["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// The downstream servers' tools (without loom's own `loom_*` tools).
    pub async fn tool_names(&mut self) -> Vec<String> {
        self.all_tool_names()
            .await
            .into_iter()
            .filter(|n| !n.starts_with("loom_"))
            .collect()
    }

    pub async fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request(
            "tools/call",
            json!({ "name": name, "arguments": arguments }),
        )
        .await
    }

    /// Waits for loom to exit, returning whether it did within `timeout`.
    pub async fn wait_exit(&mut self, timeout: Duration) -> bool {
        tokio::time::timeout(timeout, self.child.wait())
            .await
            .is_ok()
    }
}

/// The text of the first content block of a `tools/call` response.
pub fn text_of(resp: &Value) -> String {
    resp["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

pub fn is_error_result(resp: &Value) -> bool {
    resp["result"]["isError"] == json!(true)
}

/// Whether a process with this pid is alive (and not a zombie).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.split_whitespace().nth(2).is_none_or(|s| s != "Z"),
        Err(_) => false,
    }
}

pub async fn eventually(timeout: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + timeout;
    while tokio::time::Instant::now() < deadline {
        if f() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    f()
}

/// How long [`wait_until`] waits for a state before failing: generous, so a slow or busy
/// machine is never taken for a bug; a test that passes never waits this long.
pub const STATE_DEADLINE: Duration = Duration::from_secs(60);

/// Polls `check` until it yields a value, and fails the test naming `what` it waited for if
/// that never happens within [`STATE_DEADLINE`]. For states loom announces no event for; a
/// test never sleeps to let something happen, it waits for the state that shows it did.
pub async fn wait_until<T>(what: &str, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = tokio::time::Instant::now() + STATE_DEADLINE;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "gave up after {STATE_DEADLINE:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Crashes the test server `t` (its `t_crash` tool), then again once it has restarted.
pub async fn crash_twice(c: &mut RawClient) {
    c.call("t_crash", json!({})).await;
    wait_until("the restarted server to crash again", async || {
        let r = c.call("t_crash", json!({})).await;
        text_of(&r)
            .contains("failed during tools/call")
            .then_some(())
    })
    .await;
}

/// Runs `tests/py/client_check.py` (the Python MCP SDK as a client) with `args`; what it saw.
pub async fn python_client_check(args: &[&std::ffi::OsStr]) -> Value {
    let mut cmd = tokio::process::Command::new(venv_python());
    cmd.arg(root().join("tests/py/client_check.py")).args(args);
    client_script_output(cmd, "python runs", args).await
}

/// The one JSON object a client script printed; its stderr when it failed.
async fn client_script_output(
    mut cmd: tokio::process::Command,
    runs: &str,
    args: &[&std::ffi::OsStr],
) -> Value {
    let out = cmd.output().await.expect(runs);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// What the Python client saw, checked the same way whatever carried it.
pub fn check_python_client_saw(v: &Value, expected_version: &str) {
    assert_eq!(v["protocol_version"], expected_version, "{v}");
    assert!(
        v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "sample_list_orders")
    );
    assert!(v["weather"].as_str().unwrap().starts_with("Lima"));
    assert_eq!(v["count"], "counted to 3");
    assert_eq!(v["progress"].as_array().unwrap().len(), 3, "{v}");
    assert_eq!(v["customers"], 3);
    assert_eq!(v["orders"]["kind"], "dataset", "{v}");
    assert_eq!(v["orders"]["rows"], 1000, "{v}");
    assert_eq!(
        v["prompts"],
        json!(["sample_triage_orders", "sample_review_logs", "loom"])
    );
    assert!(v["readme"].as_str().unwrap().starts_with("# Sample server"));
}

/// The TypeScript SDKs' folder (`.peers/node/node_modules`), checked to hold both SDKs.
pub fn node_modules() -> PathBuf {
    peer("node/node_modules/@modelcontextprotocol/sdk/package.json");
    peer("node/node_modules/@modelcontextprotocol/client/package.json");
    peer("node/node_modules")
}

/// Runs `tests/js/client_check.mjs` (a TypeScript SDK as a client; see its header for the
/// arguments) with `node` from PATH; what it saw.
pub async fn node_client_check(args: &[&std::ffi::OsStr]) -> Value {
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg(root().join("tests/js/client_check.mjs"))
        .arg(node_modules())
        .args(args);
    client_script_output(
        cmd,
        "`node` (Node.js 20 or newer) on PATH runs the TypeScript SDK clients",
        args,
    )
    .await
}

/// `loom serve --http 127.0.0.1:0` on `cfg` with a bearer token, stdin held open (closing it
/// would end the stdio client); its stderr is kept for failure messages.
pub struct LoomOverHttp {
    pub child: Child,
    /// `http://127.0.0.1:PORT/mcp`, as loom announced it.
    pub url: String,
    pub token: String,
    pub stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl LoomOverHttp {
    pub async fn start(cfg: &TempConfig, token: &str) -> LoomOverHttp {
        Self::start_with(cfg, token, &["--http", "127.0.0.1:0"]).await
    }

    /// `loom serve -c CONFIG ARGS`, where the arguments or the config ask for HTTP.
    pub async fn start_with(cfg: &TempConfig, token: &str, args: &[&str]) -> LoomOverHttp {
        let mut child = tokio::process::Command::new(LOOM)
            .args(["serve", "--log-level", "info", "-c"])
            .arg(&cfg.path)
            .args(args)
            .env("XDG_RUNTIME_DIR", cfg.dir.path())
            .env("LOOM_HTTP_TOKEN", token)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn loom serve --http");
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let (url_tx, url_rx) = tokio::sync::oneshot::channel();
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let log = stderr.clone();
        tokio::spawn(async move {
            let mut url_tx = Some(url_tx);
            while let Ok(Some(l)) = lines.next_line().await {
                if let Some(url) = l.strip_prefix("loom: MCP over HTTP at ")
                    && let Some(tx) = url_tx.take()
                {
                    // "… at URL (open: no token required)" names the URL first.
                    let _ = tx.send(url.split(' ').next().unwrap_or(url).to_owned());
                }
                let mut g = log.lock().unwrap();
                g.push_str(&l);
                g.push('\n');
            }
        });
        let url = tokio::time::timeout(STATE_DEADLINE, url_rx)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_else(|| {
                panic!(
                    "loom never announced its HTTP address; stderr:\n{}",
                    stderr.lock().unwrap()
                )
            });
        LoomOverHttp {
            child,
            url,
            token: token.to_owned(),
            stderr,
        }
    }
}

/// A node MCP server serving streamable HTTP on a free loopback port, killed on drop:
/// server-everything, or the TypeScript SDK reference server of `tests/js/reference_server.mjs`.
pub struct NodeOverHttp {
    pub child: Child,
    pub port: u16,
}

impl NodeOverHttp {
    /// server-everything (`PORT` names its port).
    pub async fn everything() -> NodeOverHttp {
        let js = everything_js();
        NodeOverHttp::start("server-everything", |port| {
            let mut cmd = tokio::process::Command::new("node");
            cmd.arg(&js)
                .arg("streamableHttp")
                .env("PORT", port.to_string());
            cmd
        })
        .await
    }

    /// The suite's fixtures on the official TypeScript SDK 1.x (`tests/js/reference_server.mjs`).
    pub async fn reference() -> NodeOverHttp {
        let modules = node_modules();
        NodeOverHttp::start("the reference server", |port| {
            let mut cmd = tokio::process::Command::new("node");
            cmd.arg(root().join("tests/js/reference_server.mjs"))
                .arg(&modules)
                .arg(port.to_string());
            cmd
        })
        .await
    }

    async fn start(name: &str, command: impl Fn(u16) -> tokio::process::Command) -> NodeOverHttp {
        // The port is free when asked for but may be taken before node binds it: then node
        // exits, and another port is tried.
        for _ in 0..5 {
            let port = {
                let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
                l.local_addr().expect("its address").port()
            };
            let mut child = command(port)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .unwrap_or_else(|e| {
                    panic!("`node` (Node.js 20 or newer) on PATH runs {name}: {e}")
                });
            let listening = wait_until(&format!("{name} to listen or exit"), async || {
                if !matches!(child.try_wait(), Ok(None)) {
                    return Some(false);
                }
                tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .ok()
                    .map(|_| true)
            })
            .await;
            if listening {
                return NodeOverHttp { child, port };
            }
        }
        panic!("{name} did not start over HTTP on any of five free ports")
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

/// The next approval an attached workbench's feed announces (within 30 s).
pub async fn next_approval(
    feed: &mut loom::frontend::engine::EventFeed,
) -> loom::session::approvals::ApprovalRequest {
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(30), feed.live.recv())
            .await
            .expect("an approval request in time")
            .expect("feed open");
        if let loom::session::Event::ApprovalRequested(r) = ev.event {
            return r;
        }
    }
}

/// Decides approval `approval` as a person at an attached workbench does.
pub async fn decide(
    eng: &impl loom::frontend::engine::Engine,
    approval: u64,
    decision: loom::session::approvals::Decision,
) {
    eng.request(loom::frontend::engine::Request::Approve { approval, decision })
        .await
        .expect("the decision is taken");
}

/// The `result` member of a response line, as its exact text (for byte-for-byte checks).
pub fn result_text(line: &str) -> String {
    let members: std::collections::HashMap<String, Box<serde_json::value::RawValue>> =
        serde_json::from_str(line).expect("a JSON-RPC response");
    members
        .get("result")
        .unwrap_or_else(|| panic!("no result in {line}"))
        .get()
        .to_owned()
}
