//! MCP over streamable HTTP: what a client that connects by URL pays for loom. A keep-alive
//! HTTP/1.1 client (hyper, one TCP connection per session) makes small `tools/call`s straight to
//! server-everything over HTTP, then through `loom serve --http` in front of the same server,
//! then through `loom serve --http` in front of the built-in sample server over stdio (loom's
//! own cost, without Node). For each path: the latency of sequential calls on one session
//! (p50/p99; "added" is loom minus direct), and calls per second with 16 sessions calling at
//! once for a fixed time after a warm-up, with the CPU each process spent per call. Two stdio
//! references run beside them so the HTTP front end can be told from the proxy core. loom's
//! resident memory (`VmRSS`, `VmHWM`) is read from `/proc`.
//!
//! `cargo bench --bench http` runs the full measurement; under `cargo test` a short pass keeps
//! the harness working. server-everything must be installed (`scripts/install-test-peers.sh`);
//! without it the bench fails and says so.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::TcpStream;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const LOOM: &str = env!("CARGO_BIN_EXE_loom");
const TOKEN: &str = "bench-token-0123456789abcdef";
const PROTOCOL: &str = "2025-11-25";
const CLIENTS: usize = 16;

type Fallible<T> = Result<T, String>;

/// How long each part runs: the full measurement, or the short pass `cargo test` makes.
struct Plan {
    warm_calls: usize,
    calls: usize,
    warm_up: Duration,
    window: Duration,
}

impl Plan {
    fn new(full: bool) -> Plan {
        if full {
            Plan {
                warm_calls: 300,
                calls: 3000,
                warm_up: Duration::from_secs(1),
                window: Duration::from_secs(5),
            }
        } else {
            Plan {
                warm_calls: 5,
                calls: 30,
                warm_up: Duration::from_millis(100),
                window: Duration::from_millis(300),
            }
        }
    }
}

/// A small tool call and a piece of text its result must contain.
#[derive(Clone)]
struct Call {
    tool: String,
    arguments: Value,
    expect: &'static str,
}

/// One MCP session over one keep-alive HTTP/1.1 connection.
struct HttpSession {
    sender: SendRequest<Full<Bytes>>,
    host: String,
    token: Option<&'static str>,
    session: Option<String>,
    version: Option<String>,
    next: u64,
}

impl HttpSession {
    async fn open(addr: SocketAddr, token: Option<&'static str>) -> Fallible<HttpSession> {
        let tcp = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect to {addr}: {e}"))?;
        // What a real client does (reqwest sets it by default); requests go out at once.
        tcp.set_nodelay(true)
            .map_err(|e| format!("TCP_NODELAY: {e}"))?;
        let (sender, conn) = http1::handshake(TokioIo::new(tcp))
            .await
            .map_err(|e| format!("HTTP handshake with {addr}: {e}"))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut s = HttpSession {
            sender,
            host: addr.to_string(),
            token,
            session: None,
            version: None,
            next: 1,
        };
        let init = s
            .request(
                "initialize",
                json!({ "protocolVersion": PROTOCOL, "capabilities": {},
                        "clientInfo": { "name": "loom-bench", "version": "0" } }),
            )
            .await?;
        s.version = Some(
            init["protocolVersion"]
                .as_str()
                .unwrap_or(PROTOCOL)
                .to_owned(),
        );
        let (status, _, _) = s
            .post(
                Method::POST,
                json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string(),
            )
            .await?;
        if status != StatusCode::ACCEPTED && status != StatusCode::OK {
            return Err(format!("notifications/initialized answered {status}"));
        }
        Ok(s)
    }

    async fn post(
        &mut self,
        method: Method,
        body: String,
    ) -> Fallible<(StatusCode, HashMap<String, String>, Bytes)> {
        let mut req = Request::builder()
            .method(method)
            .uri("/mcp")
            .header(HOST, &self.host)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream");
        if let Some(t) = self.token {
            req = req.header(AUTHORIZATION, format!("Bearer {t}"));
        }
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        if let Some(v) = &self.version {
            req = req.header("mcp-protocol-version", v);
        }
        let req = req
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| format!("request: {e}"))?;
        self.sender
            .ready()
            .await
            .map_err(|e| format!("connection closed: {e}"))?;
        let resp = self
            .sender
            .send_request(req)
            .await
            .map_err(|e| format!("HTTP request failed: {e}"))?;
        let (parts, body) = resp.into_parts();
        let headers = parts
            .headers
            .iter()
            .filter_map(|(k, v)| Some((k.as_str().to_owned(), v.to_str().ok()?.to_owned())))
            .collect();
        let bytes = body
            .collect()
            .await
            .map_err(|e| format!("reading the response body: {e}"))?
            .to_bytes();
        Ok((parts.status, headers, bytes))
    }

    /// Sends a request and returns its `result`; a JSON-RPC error is an error.
    async fn request(&mut self, method: &str, params: Value) -> Fallible<Value> {
        let id = self.next;
        self.next += 1;
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let (status, headers, bytes) = self.post(Method::POST, body.to_string()).await?;
        let text = String::from_utf8_lossy(&bytes);
        if status != StatusCode::OK {
            return Err(format!("{method} answered {status}: {text}"));
        }
        if self.session.is_none() {
            self.session = headers.get("mcp-session-id").cloned();
        }
        let sse = headers
            .get("content-type")
            .is_some_and(|c| c.starts_with("text/event-stream"));
        let reply = if sse {
            sse_reply(&text, id)
        } else {
            serde_json::from_str::<Value>(&text).ok()
        };
        let Some(mut reply) = reply else {
            return Err(format!("{method}: no response with id {id} in {text}"));
        };
        if reply.get("error").is_some() {
            return Err(format!("{method} failed: {reply}"));
        }
        Ok(reply["result"].take())
    }

    async fn call(&mut self, call: &Call) -> Fallible<()> {
        let r = self
            .request(
                "tools/call",
                json!({ "name": call.tool, "arguments": call.arguments }),
            )
            .await?;
        let text = r.to_string();
        if r["isError"] == json!(true) || !text.contains(call.expect) {
            return Err(format!("{}: unexpected result {text}", call.tool));
        }
        Ok(())
    }

    async fn tool_names(&mut self) -> Fallible<Vec<String>> {
        let r = self.request("tools/list", json!({})).await?;
        Ok(r["tools"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|t| t["name"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default())
    }

    /// Ends the session, as a well-behaved client does.
    async fn end(mut self) {
        let _ = self.post(Method::DELETE, String::new()).await;
    }
}

/// The response with `id` among a `text/event-stream` body's events.
fn sse_reply(text: &str, id: u64) -> Option<Value> {
    let text = text.replace("\r\n", "\n");
    text.split("\n\n").find_map(|event| {
        let data: Vec<&str> = event
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        let v: Value = serde_json::from_str(&data.join("\n")).ok()?;
        (v["id"] == json!(id) && v.get("method").is_none()).then_some(v)
    })
}

/// An MCP server (or loom) spoken to over its stdin and stdout, for the stdio references.
struct StdioPeer {
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next: u64,
}

impl StdioPeer {
    async fn spawn(args: &[&str], runtime_dir: &Path) -> Fallible<StdioPeer> {
        let mut child = Command::new(LOOM)
            .args(args)
            .env("XDG_RUNTIME_DIR", runtime_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("spawn loom {args:?}: {e}"))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("loom's stdio was not piped".into());
        };
        let mut p = StdioPeer {
            _child: child,
            stdin,
            lines: BufReader::new(stdout).lines(),
            next: 1,
        };
        p.request(
            "initialize",
            json!({ "protocolVersion": PROTOCOL, "capabilities": {},
                    "clientInfo": { "name": "loom-bench", "version": "0" } }),
        )
        .await?;
        p.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await?;
        Ok(p)
    }

    async fn send(&mut self, msg: Value) -> Fallible<()> {
        let line = format!("{msg}\n");
        self.stdin
            .write_all(line.as_bytes())
            .await
            .map_err(|e| format!("write to loom: {e}"))
    }

    async fn request(&mut self, method: &str, params: Value) -> Fallible<Value> {
        let id = self.next;
        self.next += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await?;
        loop {
            let Some(line) = self
                .lines
                .next_line()
                .await
                .map_err(|e| format!("read from loom: {e}"))?
            else {
                return Err(format!("loom closed its stdout before answering {method}"));
            };
            let Ok(mut v) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if v["id"] == json!(id) && v.get("method").is_none() {
                if v.get("error").is_some() {
                    return Err(format!("{method} failed: {v}"));
                }
                return Ok(v["result"].take());
            }
        }
    }

    async fn call(&mut self, call: &Call) -> Fallible<()> {
        let r = self
            .request(
                "tools/call",
                json!({ "name": call.tool, "arguments": call.arguments }),
            )
            .await?;
        let text = r.to_string();
        if r["isError"] == json!(true) || !text.contains(call.expect) {
            return Err(format!("{}: unexpected result {text}", call.tool));
        }
        Ok(())
    }
}

/// `loom serve --http 127.0.0.1:0` with stdin held open, and the address it serves.
async fn loom_http(config: &Path, runtime_dir: &Path) -> Fallible<(Child, SocketAddr)> {
    let mut child = Command::new(LOOM)
        .args(["serve", "-c"])
        .arg(config)
        .args(["--http", "127.0.0.1:0"])
        .env("XDG_RUNTIME_DIR", runtime_dir)
        .env("LOOM_HTTP_TOKEN", TOKEN)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("spawn loom serve --http: {e}"))?;
    let Some(stderr) = child.stderr.take() else {
        return Err("loom's stderr was not piped".into());
    };
    let mut lines = BufReader::new(stderr).lines();
    let found = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(l)) = lines.next_line().await {
            if let Some(url) = l.strip_prefix("loom: MCP over HTTP at http://") {
                return url.trim_end_matches("/mcp").parse::<SocketAddr>().ok();
            }
        }
        None
    })
    .await;
    let Ok(Some(addr)) = found else {
        return Err("loom serve --http did not say where it serves within 60 s".into());
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((child, addr))
}

/// server-everything over streamable HTTP on a free port, once it accepts connections.
async fn server_everything(js: &Path) -> Fallible<(Child, SocketAddr)> {
    let port = {
        let l =
            std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("a free port: {e}"))?;
        l.local_addr().map_err(|e| e.to_string())?.port()
    };
    let child = Command::new("node")
        .arg(js)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("spawn node (needed for server-everything): {e}"))?;
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(addr).await.is_err() {
        if Instant::now() > deadline {
            return Err(format!(
                "server-everything did not listen on {addr} within 30 s"
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok((child, addr))
}

fn everything_js() -> Fallible<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".peers/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if p.exists() {
        Ok(p)
    } else {
        Err(format!(
            "server-everything is missing at {}: run scripts/install-test-peers.sh (it installs \
             the pinned test peers) and run the bench again",
            p.display()
        ))
    }
}

/// Sequential calls on one session: warm-up, then the timed ones, sorted.
async fn sequential_http(
    addr: SocketAddr,
    token: Option<&'static str>,
    call: &Call,
    plan: &Plan,
) -> Fallible<Vec<Duration>> {
    let mut s = HttpSession::open(addr, token).await?;
    let names = s.tool_names().await?;
    if !names.contains(&call.tool) {
        return Err(format!("no tool {} among {names:?}", call.tool));
    }
    for _ in 0..plan.warm_calls {
        s.call(call).await?;
    }
    let mut times = Vec::with_capacity(plan.calls);
    for _ in 0..plan.calls {
        let t = Instant::now();
        s.call(call).await?;
        times.push(t.elapsed());
    }
    s.end().await;
    times.sort();
    Ok(times)
}

async fn sequential_stdio(
    peer: &mut StdioPeer,
    call: &Call,
    plan: &Plan,
) -> Fallible<Vec<Duration>> {
    peer.request("tools/list", json!({})).await?;
    for _ in 0..plan.warm_calls {
        peer.call(call).await?;
    }
    let mut times = Vec::with_capacity(plan.calls);
    for _ in 0..plan.calls {
        let t = Instant::now();
        peer.call(call).await?;
        times.push(t.elapsed());
    }
    times.sort();
    Ok(times)
}

/// CPU time a process has spent (user + system), from `/proc/PID/stat`.
fn cpu_time(pid: u32) -> Duration {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return Duration::ZERO;
    };
    // Fields after the command name, which is in parentheses and may contain spaces.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<u64>().ok())
        .sum();
    // SAFETY: sysconf only reads a configuration value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_nanos(ticks * 1_000_000_000 / hz)
}

/// The processes below `pid` (loom's guard and its stdio servers).
fn descendants(pid: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().nth(1)?.parse::<u32>().ok());
            if let Some(pp) = ppid {
                parent_of.push((p, pp));
            }
        }
    }
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parent_of
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// `VmRSS` and `VmHWM` of a process, in KiB.
fn memory_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// What 16 sessions calling at once achieved in the window after the warm-up.
struct Throughput {
    calls: usize,
    per_second: f64,
    latencies: Vec<Duration>,
    loom_cpu: Option<Duration>,
    server_cpu: Duration,
    client_cpu: Duration,
}

/// `CLIENTS` sessions, each on its own keep-alive connection, call as fast as they are
/// answered; only calls that start and end inside the window count. `loom` and `servers` are
/// the processes whose CPU time is read at the window's edges.
async fn concurrent(
    addr: SocketAddr,
    token: Option<&'static str>,
    call: &Call,
    plan: &Plan,
    loom: Option<u32>,
    servers: &[u32],
) -> Fallible<Throughput> {
    let mut sessions = Vec::with_capacity(CLIENTS);
    for _ in 0..CLIENTS {
        sessions.push(HttpSession::open(addr, token).await?);
    }
    let start = Instant::now() + Duration::from_millis(50);
    let window_start = start + plan.warm_up;
    let window_end = window_start + plan.window;
    let tasks: Vec<_> = sessions
        .into_iter()
        .map(|mut s| {
            let call = call.clone();
            tokio::spawn(async move {
                tokio::time::sleep_until(start.into()).await;
                let mut times = Vec::new();
                loop {
                    let t = Instant::now();
                    if t >= window_end {
                        break;
                    }
                    s.call(&call).await?;
                    let end = Instant::now();
                    if t >= window_start && end <= window_end {
                        times.push(end - t);
                    }
                }
                s.end().await;
                Ok::<_, String>(times)
            })
        })
        .collect();
    let cpu = |pids: &[u32]| pids.iter().map(|&p| cpu_time(p)).sum::<Duration>();
    tokio::time::sleep_until(window_start.into()).await;
    let me = std::process::id();
    let (loom0, server0, client0) = (loom.map(cpu_time), cpu(servers), cpu_time(me));
    tokio::time::sleep_until(window_end.into()).await;
    let (loom1, server1, client1) = (loom.map(cpu_time), cpu(servers), cpu_time(me));
    let mut latencies = Vec::new();
    for t in tasks {
        latencies.extend(
            t.await
                .map_err(|e| format!("a client task failed: {e}"))??,
        );
    }
    latencies.sort();
    let calls = latencies.len();
    if calls == 0 {
        return Err("no call completed inside the window".into());
    }
    Ok(Throughput {
        calls,
        per_second: calls as f64 / plan.window.as_secs_f64(),
        latencies,
        loom_cpu: loom0.zip(loom1).map(|(a, b)| b.saturating_sub(a)),
        server_cpu: server1.saturating_sub(server0),
        client_cpu: client1.saturating_sub(client0),
    })
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn latency_line(name: &str, t: &[Duration]) {
    println!(
        "  {name:<44} p50 {:8.1} µs   p99 {:8.1} µs",
        us(percentile(t, 0.5)),
        us(percentile(t, 0.99))
    );
}

fn added_line(name: &str, through: &[Duration], direct: &[Duration]) {
    println!(
        "  {name:<44} p50 {:8.1} µs   p99 {:8.1} µs   ({:.2}× at p50)",
        us(percentile(through, 0.5)) - us(percentile(direct, 0.5)),
        us(percentile(through, 0.99)) - us(percentile(direct, 0.99)),
        percentile(through, 0.5).as_secs_f64() / percentile(direct, 0.5).as_secs_f64()
    );
}

fn throughput_line(name: &str, t: &Throughput) {
    let per_call = |d: Duration| us(d) / t.calls as f64;
    let loom = t
        .loom_cpu
        .map_or("-".to_owned(), |d| format!("{:.1} µs", per_call(d)));
    println!(
        "  {name:<44} {:6.0} calls/s   p50 {:8.1} µs   p99 {:8.1} µs",
        t.per_second,
        us(percentile(&t.latencies, 0.5)),
        us(percentile(&t.latencies, 0.99)),
    );
    println!(
        "    CPU per call: loom {loom}, server {:.1} µs, this bench's client {:.1} µs",
        per_call(t.server_cpu),
        per_call(t.client_cpu)
    );
}

async fn run(full: bool) -> Fallible<()> {
    let plan = Plan::new(full);
    let js = everything_js()?;
    let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    let echo = Call {
        tool: "echo".into(),
        arguments: json!({ "message": "hi" }),
        expect: "Echo: hi",
    };
    let weather = Call {
        tool: "get_weather".into(),
        arguments: json!({ "city": "Lisbon" }),
        expect: "Lisbon",
    };
    let prefixed = |c: &Call, server: &str| Call {
        tool: format!("{server}_{}", c.tool),
        ..c.clone()
    };

    // 1. server-everything over HTTP, straight and through loom.
    let (node, node_addr) = server_everything(&js).await?;
    let node_pid = node.id().unwrap_or(0);
    let direct = sequential_http(node_addr, None, &echo, &plan).await?;
    let direct_tp = concurrent(node_addr, None, &echo, &plan, None, &[node_pid]).await?;

    let web_cfg = dir.path().join("web.toml");
    std::fs::write(
        &web_cfg,
        format!(
            "memory_file = \"web-memories.jsonl\"\nexport_dir = \"exports\"\n\
             [[servers]]\nname = \"web\"\nurl = \"http://{node_addr}/mcp\"\n"
        ),
    )
    .map_err(|e| format!("config: {e}"))?;
    let (loom_web, web_addr) = loom_http(&web_cfg, dir.path()).await?;
    let loom_web_pid = loom_web.id().unwrap_or(0);
    let web_call = prefixed(&echo, "web");
    let via_web = sequential_http(web_addr, Some(TOKEN), &web_call, &plan).await?;
    let via_web_tp = concurrent(
        web_addr,
        Some(TOKEN),
        &web_call,
        &plan,
        Some(loom_web_pid),
        &[node_pid],
    )
    .await?;
    let web_memory = memory_kib(loom_web_pid);
    drop(loom_web);
    drop(node);

    // 2. The built-in sample server over stdio behind loom's HTTP surface.
    let sample_cfg = dir.path().join("sample.toml");
    std::fs::write(
        &sample_cfg,
        format!(
            "memory_file = \"sample-memories.jsonl\"\nexport_dir = \"exports\"\n\
             [[servers]]\nname = \"sample\"\ncommand = {LOOM:?}\nargs = [\"sample-server\"]\n"
        ),
    )
    .map_err(|e| format!("config: {e}"))?;
    let (loom_sample, sample_addr) = loom_http(&sample_cfg, dir.path()).await?;
    let loom_sample_pid = loom_sample.id().unwrap_or(0);
    let sample_call = prefixed(&weather, "sample");
    let via_sample = sequential_http(sample_addr, Some(TOKEN), &sample_call, &plan).await?;
    let sequential_memory = memory_kib(loom_sample_pid);
    let below = descendants(loom_sample_pid);
    let via_sample_tp = concurrent(
        sample_addr,
        Some(TOKEN),
        &sample_call,
        &plan,
        Some(loom_sample_pid),
        &below,
    )
    .await?;
    let sample_memory = memory_kib(loom_sample_pid);
    drop(loom_sample);

    // 3. References over stdio: the sample server alone, and loom's stdio surface before it.
    let mut alone = StdioPeer::spawn(&["sample-server"], dir.path()).await?;
    let stdio_direct = sequential_stdio(&mut alone, &weather, &plan).await?;
    drop(alone);
    let cfg = sample_cfg.to_str().ok_or("config path is not UTF-8")?;
    let mut stdio_loom = StdioPeer::spawn(&["serve", "-c", cfg], dir.path()).await?;
    let stdio_through = sequential_stdio(&mut stdio_loom, &sample_call, &plan).await?;
    drop(stdio_loom);

    println!(
        "MCP over HTTP: keep-alive HTTP/1.1 client, small tools/call, {} sequential calls per path",
        plan.calls
    );
    latency_line("direct: server-everything (HTTP) echo", &direct);
    latency_line("loom (HTTP) → server-everything (HTTP)", &via_web);
    added_line("added by loom", &via_web, &direct);
    latency_line("loom (HTTP) → sample-server (stdio)", &via_sample);
    println!("  references over stdio:");
    latency_line("sample-server alone (stdio) get_weather", &stdio_direct);
    latency_line("loom (stdio) → sample-server (stdio)", &stdio_through);
    added_line(
        "loom HTTP surface minus loom stdio surface",
        &via_sample,
        &stdio_through,
    );
    println!(
        "throughput: {CLIENTS} sessions, one keep-alive connection each, {:.1} s after {:.1} s warm-up",
        plan.window.as_secs_f64(),
        plan.warm_up.as_secs_f64()
    );
    throughput_line("direct: server-everything (HTTP)", &direct_tp);
    throughput_line("loom (HTTP) → server-everything (HTTP)", &via_web_tp);
    throughput_line("loom (HTTP) → sample-server (stdio)", &via_sample_tp);
    println!(
        "  ratio loom/direct (server-everything): {:.2}×",
        via_web_tp.per_second / direct_tp.per_second
    );
    println!(
        "loom RSS: → sample-server after the sequential calls {:.1} MiB, after {CLIENTS} clients \
         {:.1} MiB (VmHWM {:.1} MiB); → server-everything after {CLIENTS} clients {:.1} MiB \
         (VmHWM {:.1} MiB)",
        mib(sequential_memory.0),
        mib(sample_memory.0),
        mib(sample_memory.1),
        mib(web_memory.0),
        mib(web_memory.1)
    );
    Ok(())
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    // One thread for the clients, so they never take both cores from the processes measured.
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("http bench: tokio runtime: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = rt.block_on(run(full)) {
        eprintln!("http bench failed: {e}");
        std::process::exit(1);
    }
}
