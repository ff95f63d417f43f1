//! Loom as an HTTP *client* of a downstream server, against a real peer: another loom serving
//! MCP over HTTP (`loom serve --http`) in front of the sample server. Between the two sits a
//! small relay written here that forwards every request as it came and records what passed; to
//! make a situation the peer would not make by itself it may refuse `server/discover` (so the
//! client falls back to a legacy session), refuse the GET stream (so an idle session can
//! expire), hold back a `DELETE`'s answer, or drop a reply stream after its first event (a
//! stream that breaks mid-reply), rewriting the peer's `retry` field.

mod common;

use bytes::Bytes;
use common::{LOOM, LoomOverHttp, TempConfig, sample_config, wait_until};
use http_body_util::{BodyExt, Full, StreamBody, combinators::UnsyncBoxBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response, StatusCode};
use loom::config::Config;
use loom::downstream::connection::{Opening, Reply};
use loom::downstream::{Fleet, ServerState};
use loom::protocol::ClientCapabilities;
use serde_json::{Map, Value, json};
use std::convert::Infallible;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// What the relay changes.
#[derive(Default, Clone)]
struct Rules {
    /// Answer `server/discover` with a plain 400, as a legacy-only server does.
    refuse_discover: bool,
    /// Answer a GET that resumes nothing with 405 (no server stream).
    refuse_get: bool,
    /// Drop the first `tools/call` reply stream after its first event.
    cut_first_call: bool,
    /// Drop the first GET stream after its first event.
    cut_first_get: bool,
    /// Put this in place of the peer's `retry` value.
    retry_ms: Option<u64>,
    /// Answer a DELETE only after this long.
    delay_delete: Option<Duration>,
}

/// One request that passed the relay.
#[derive(Debug, Clone)]
struct Seen {
    http: String,
    /// The JSON-RPC method of a POST.
    rpc: Option<String>,
    headers: hyper::HeaderMap,
    at: Instant,
    /// The peer's status, once answered.
    status: Option<u16>,
    /// When the relay cut the stream, and the id of the last event it let through.
    cut_at: Option<Instant>,
    cut_after: Option<String>,
    client_closed: bool,
    /// When the answer was sent back (a DELETE's).
    done_at: Option<Instant>,
}

struct Relay {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

type Body = UnsyncBoxBody<Bytes, Infallible>;

fn full(status: StatusCode, text: &str) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(text.to_owned())).boxed_unsync());
    *r.status_mut() = status;
    r
}

impl Relay {
    async fn start(upstream: &str, rules: Rules) -> Relay {
        loom::init_tls();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        let state = Arc::new((upstream.to_owned(), rules, seen.clone(), client));
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let state = state.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let state = state.clone();
                        async move {
                            let (up, rules, seen, client) = &*state;
                            Ok::<_, Infallible>(relay(req, up, rules, seen, client).await)
                        }
                    });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                });
            }
        });
        Relay { port, seen, task }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn relay(
    req: Request<Incoming>,
    upstream: &str,
    rules: &Rules,
    seen: &Arc<Mutex<Vec<Seen>>>,
    client: &reqwest::Client,
) -> Response<Body> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let rpc = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v["method"].as_str().map(str::to_owned));
    let index = {
        let mut s = seen.lock().unwrap();
        s.push(Seen {
            http: parts.method.to_string(),
            rpc: rpc.clone(),
            headers: parts.headers.clone(),
            at: Instant::now(),
            status: None,
            cut_at: None,
            cut_after: None,
            client_closed: false,
            done_at: None,
        });
        s.len() - 1
    };
    let note = |f: &dyn Fn(&mut Seen)| f(&mut seen.lock().unwrap()[index]);
    if rules.refuse_discover && rpc.as_deref() == Some("server/discover") {
        note(&|s| s.status = Some(400));
        return full(StatusCode::BAD_REQUEST, "Bad Request: unknown method");
    }
    let resuming = parts.headers.contains_key("last-event-id");
    if rules.refuse_get && parts.method == hyper::Method::GET && !resuming {
        note(&|s| s.status = Some(405));
        return full(StatusCode::METHOD_NOT_ALLOWED, "no server stream here");
    }
    let mut forward = client.request(parts.method.clone(), upstream).body(body);
    for (k, v) in &parts.headers {
        if k != hyper::header::HOST && k != hyper::header::CONTENT_LENGTH {
            forward = forward.header(k, v);
        }
    }
    let resp = match forward.send().await {
        Ok(r) => r,
        Err(e) => return full(StatusCode::BAD_GATEWAY, &e.to_string()),
    };
    let status = resp.status().as_u16();
    note(&|s| s.status = Some(status));
    if parts.method == hyper::Method::DELETE
        && let Some(d) = rules.delay_delete
    {
        tokio::time::sleep(d).await;
    }
    let mut out = Response::builder().status(status);
    for (k, v) in resp.headers() {
        if k != hyper::header::CONTENT_LENGTH && k != hyper::header::TRANSFER_ENCODING {
            out = out.header(k, v);
        }
    }
    let earlier = |http: &str, rpc: Option<&str>| {
        seen.lock().unwrap()[..index]
            .iter()
            .any(|s| s.http == http && s.rpc.as_deref() == rpc && s.cut_at.is_some())
    };
    let cut = (rules.cut_first_call
        && rpc.as_deref() == Some("tools/call")
        && !earlier("POST", Some("tools/call")))
        || (rules.cut_first_get
            && parts.method == hyper::Method::GET
            && !resuming
            && !earlier("GET", None));
    let retry_ms = rules.retry_ms;
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(16);
    let seen = seen.clone();
    tokio::spawn(async move {
        let mut stream = resp.bytes_stream();
        let mut pending = Vec::<u8>::new();
        use futures_util::StreamExt;
        while let Some(Ok(chunk)) = stream.next().await {
            pending.extend_from_slice(&chunk);
            // Whole events only, so one can be rewritten or be the last before a cut.
            while let Some(end) = pending.windows(2).position(|w| w == b"\n\n") {
                let event: Vec<u8> = pending.drain(..end + 2).collect();
                let mut text = String::from_utf8_lossy(&event).into_owned();
                if let Some(ms) = retry_ms {
                    text = text
                        .lines()
                        .map(|l| {
                            if l.starts_with("retry:") {
                                format!("retry: {ms}")
                            } else {
                                l.to_owned()
                            }
                        })
                        .collect::<Vec<_>>()
                        .join("\n")
                        + "\n\n";
                }
                if tx.send(Bytes::from(text.clone())).await.is_err() {
                    seen.lock().unwrap()[index].client_closed = true;
                    return;
                }
                if cut {
                    let id = text
                        .lines()
                        .find_map(|l| l.strip_prefix("id:"))
                        .map(|v| v.trim().to_owned());
                    let mut s = seen.lock().unwrap();
                    s[index].cut_at = Some(Instant::now());
                    s[index].cut_after = id;
                    return;
                }
            }
        }
        if !pending.is_empty() && tx.send(Bytes::from(pending)).await.is_err() {
            seen.lock().unwrap()[index].client_closed = true;
        }
        seen.lock().unwrap()[index].done_at = Some(Instant::now());
    });
    let body = StreamBody::new(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|b| (Ok::<_, Infallible>(Frame::data(b)), rx))
    }));
    out.body(body.boxed_unsync())
        .unwrap_or_else(|_| full(StatusCode::BAD_GATEWAY, "bad headers"))
}

/// A fleet of one HTTP server `d` at `url`, its token from `cat TOKEN_FILE`.
async fn fleet(url: &str, token_file: &Path, dir: &Path) -> Arc<Fleet> {
    loom::init_tls();
    let toml = format!(
        "[[servers]]\nname = \"d\"\nurl = \"{url}\"\nbearer_token_command = [\"cat\", {:?}]\nhandshake_timeout = 20\nrestart_backoff = 0.05\n",
        token_file.display().to_string()
    );
    let config = Config::parse(&toml, dir, "loom.toml").expect("config");
    let fleet = Fleet::start(
        Arc::new(config),
        ClientCapabilities::default(),
        Arc::new(|_| {}),
    );
    fleet.wait_startup().await;
    fleet
}

fn status(fleet: &Fleet) -> loom::downstream::ServerStatus {
    fleet.server("d").expect("server d").status()
}

async fn up(fleet: &Fleet) {
    wait_until("server d to be up", async || {
        (status(fleet).state == ServerState::Up).then_some(())
    })
    .await;
}

async fn call(fleet: &Fleet, method: &str, params: Value) -> Reply {
    let conn = fleet
        .server("d")
        .expect("server d")
        .connection()
        .expect("a live connection");
    let Value::Object(params) = params else {
        panic!("params")
    };
    conn.call(method, Some(params), Duration::from_secs(20))
        .await
}

fn result(reply: Reply) -> Value {
    match reply {
        Reply::Result(r) => serde_json::from_str(r.get()).expect("JSON"),
        other => panic!("no result: {other:?}"),
    }
}

fn weather() -> Value {
    json!({ "name": "sample_get_weather", "arguments": { "city": "Lima" } })
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A downstream loom serving HTTP in front of the sample server.
async fn peer(extra_top: &str, token: &str, args: &[&str]) -> (LoomOverHttp, TempConfig) {
    let cfg = sample_config(extra_top, "");
    let mut all = vec!["--http"];
    all.extend_from_slice(if args.is_empty() {
        &["127.0.0.1:0"][..]
    } else {
        args
    });
    (LoomOverHttp::start_with(&cfg, token, &all).await, cfg)
}

/// The server refuses the token: `loom check` says "needs auth" with the server's challenge at
/// once, not after a crash loop and a delisting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_token_is_needs_authentication_with_the_challenge_in_loom_check() {
    let (down, _down_cfg) = peer("", "right-token-0123456789", &[]).await;
    let cfg = TempConfig::new("");
    let token = cfg.file("token");
    std::fs::write(&token, "wrong-token\n").unwrap();
    std::fs::write(
        &cfg.path,
        format!(
            "[[servers]]\nname = \"d\"\nurl = \"{}\"\nbearer_token_command = [\"cat\", {:?}]\nmax_restarts = 1\nrestart_backoff = 0.05\n",
            down.url,
            token.display().to_string()
        ),
    )
    .unwrap();
    let out = tokio::process::Command::new(LOOM)
        .args(["check", "-c"])
        .arg(&cfg.path)
        .output()
        .await
        .expect("loom check");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("d "))
        .unwrap_or_else(|| panic!("no line for d: {stdout}"));
    assert!(line.contains("needs auth"), "{line}");
    assert!(
        line.contains("WWW-Authenticate: Bearer realm=\"loom\", error=\"invalid_token\""),
        "{line}"
    );
    assert!(!line.contains("wrong-token"), "the token leaked: {line}");
    // With the right token, the same config is up.
    std::fs::write(&token, "right-token-0123456789\n").unwrap();
    let out = tokio::process::Command::new(LOOM)
        .args(["check", "-c"])
        .arg(&cfg.path)
        .output()
        .await
        .expect("loom check");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A token that expires is made again by the token command on the 401, and the call goes
/// through without a restart; a token the command cannot renew ends in "needs
/// authentication" with the challenge, never counted as a failure nor delisted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_renewed_by_the_token_command_and_a_refused_one_needs_a_person() {
    let (mut down, down_cfg) = peer("", "token-1-0123456789abcdef", &[]).await;
    let port = down
        .url
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches("/mcp")
        .to_owned();
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "token-1-0123456789abcdef\n").unwrap();
    let fleet = fleet(&down.url, &token, dir.path()).await;
    up(&fleet).await;
    assert!(text(&result(call(&fleet, "tools/call", weather()).await)).contains("Lima"));
    // The server now wants another token, which the command prints.
    let addr = format!("127.0.0.1:{port}");
    down.child.kill().await.unwrap();
    std::fs::write(&token, "token-2-0123456789abcdef\n").unwrap();
    let down2 =
        LoomOverHttp::start_with(&down_cfg, "token-2-0123456789abcdef", &["--http", &addr]).await;
    let r = result(call(&fleet, "tools/call", weather()).await);
    assert!(text(&r).contains("Lima"), "{r}");
    let st = status(&fleet);
    assert_eq!(
        (st.state.clone(), st.restarts),
        (ServerState::Up, 0),
        "{st:?}"
    );
    // And once more, but the command still prints the old token: a person must act.
    drop(down2);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let _down3 =
        LoomOverHttp::start_with(&down_cfg, "token-3-0123456789abcdef", &["--http", &addr]).await;
    let r = call(&fleet, "tools/call", weather()).await;
    assert!(matches!(r, Reply::Lost(_)), "{r:?}");
    wait_until("needs authentication", async || {
        (status(&fleet).state == ServerState::NeedsAuth).then_some(())
    })
    .await;
    // It stays there: nothing is retried or counted while no one acts.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let st = status(&fleet);
    assert_eq!(st.state, ServerState::NeedsAuth);
    assert_eq!(st.restarts, 0);
    let detail = st.last_error.unwrap_or_default();
    assert!(
        detail.contains("needs authentication")
            && detail.contains("WWW-Authenticate: Bearer realm=\"loom\"")
            && !detail.contains("token-2-0123456789abcdef"),
        "{detail}"
    );
    // A call says what to do.
    let why = match fleet.server("d").unwrap().connection() {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a live connection while it needs authentication"),
    };
    assert!(why.contains("needs authentication"), "{why}");
    // The person fixes the token and restarts it: up again.
    std::fs::write(&token, "token-3-0123456789abcdef\n").unwrap();
    fleet.restart("d").expect("restart");
    up(&fleet).await;
    assert!(text(&result(call(&fleet, "tools/call", weather()).await)).contains("Lima"));
    fleet.shutdown().await;
}

/// A legacy session that the server ended for idleness is initialized again when the next
/// request gets its 404, and that request goes once more: no failure, no restart. At
/// shutdown the session is ended with a `DELETE` carrying the version header, and loom waits
/// for its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_session_is_renewed_without_a_restart_and_shutdown_awaits_the_delete() {
    let (down, _down_cfg) = peer("http_idle_timeout = 1", "tok-0123456789abcdef", &[]).await;
    let relay = Relay::start(
        &down.url,
        Rules {
            refuse_discover: true,
            refuse_get: true,
            delay_delete: Some(Duration::from_millis(700)),
            ..Rules::default()
        },
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "tok-0123456789abcdef").unwrap();
    let fleet = fleet(&relay.url(), &token, dir.path()).await;
    up(&fleet).await;
    assert_eq!(status(&fleet).era, Some(loom::protocol::Era::Legacy));
    assert!(text(&result(call(&fleet, "tools/call", weather()).await)).contains("Lima"));
    // The peer ends the idle session (it checks every quarter of its timeout).
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let r = result(call(&fleet, "tools/call", weather()).await);
    assert!(text(&r).contains("Lima"), "{r}");
    let seen = relay.seen();
    let initializes: Vec<_> = seen
        .iter()
        .filter(|s| s.rpc.as_deref() == Some("initialize"))
        .collect();
    assert_eq!(initializes.len(), 2, "{seen:#?}");
    let expired: Vec<_> = seen.iter().filter(|s| s.status == Some(404)).collect();
    assert_eq!(expired.len(), 1, "{seen:#?}");
    assert_eq!(expired[0].rpc.as_deref(), Some("tools/call"));
    // The renewed session announced itself before the request went again.
    let last_call = seen
        .iter()
        .rposition(|s| s.rpc.as_deref() == Some("tools/call"))
        .unwrap();
    let initialized = seen
        .iter()
        .rposition(|s| s.rpc.as_deref() == Some("notifications/initialized"))
        .unwrap();
    assert!(initialized < last_call, "{seen:#?}");
    let st = status(&fleet);
    assert_eq!(
        (st.state.clone(), st.restarts),
        (ServerState::Up, 0),
        "{st:?}"
    );
    // Shutdown: the DELETE is sent with the version header, and its answer awaited.
    fleet.shutdown().await;
    let seen = relay.seen();
    let delete = seen
        .iter()
        .find(|s| s.http == "DELETE")
        .unwrap_or_else(|| panic!("no DELETE: {seen:#?}"));
    assert_eq!(
        delete
            .headers
            .get("mcp-protocol-version")
            .map(|v| v.to_str().unwrap()),
        Some("2025-11-25")
    );
    assert!(delete.headers.contains_key("mcp-session-id"));
    assert_eq!(delete.status, Some(200));
    assert!(
        delete.at.elapsed() >= Duration::from_millis(650),
        "shutdown returned before the DELETE was answered"
    );
}

/// A reply stream that drops before its answer is resumed with `Last-Event-ID` after the delay
/// the server set in `retry`, and the call gets its answer; the GET stream is opened again
/// when it drops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_stream_resumes_after_the_servers_retry_and_the_get_stream_reopens() {
    let (down, _down_cfg) = peer("", "tok-0123456789abcdef", &[]).await;
    let relay = Relay::start(
        &down.url,
        Rules {
            refuse_discover: true,
            cut_first_call: true,
            cut_first_get: true,
            retry_ms: Some(1500),
            ..Rules::default()
        },
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "tok-0123456789abcdef").unwrap();
    let fleet = fleet(&relay.url(), &token, dir.path()).await;
    up(&fleet).await;
    let r = result(
        call(
            &fleet,
            "tools/call",
            json!({ "name": "sample_slow_count", "arguments": { "steps": 3, "delay_ms": 100 } }),
        )
        .await,
    );
    assert!(text(&r).contains('3'), "{r}");
    let seen = relay.seen();
    let call = seen
        .iter()
        .find(|s| s.rpc.as_deref() == Some("tools/call"))
        .expect("the call");
    let (Some(cut), Some(after)) = (call.cut_at, call.cut_after.clone()) else {
        panic!("the call's stream was not cut after an event with an id: {seen:#?}")
    };
    let resumed: Vec<_> = seen
        .iter()
        .filter(|s| {
            s.http == "GET"
                && s.headers
                    .get("last-event-id")
                    .is_some_and(|v| v.to_str().ok() == Some(after.as_str()))
        })
        .collect();
    assert!(!resumed.is_empty(), "no resumption: {seen:#?}");
    let waited = resumed[0].at - cut;
    assert!(
        waited >= Duration::from_millis(1400),
        "resumed after {waited:?}, not after retry"
    );
    assert_eq!(resumed[0].status, Some(200));
    // The first GET stream was dropped after its first event, and opened again from there:
    // besides the call's resumption, another GET resumes after an event.
    wait_until("the GET stream to be opened again", async || {
        let resumptions = relay
            .seen()
            .into_iter()
            .filter(|s| s.http == "GET" && s.headers.contains_key("last-event-id"))
            .count();
        (resumptions >= 2).then_some(())
    })
    .await;
    assert!(
        relay
            .seen()
            .iter()
            .any(|s| s.http == "GET" && s.cut_at.is_some()),
        "the first GET stream was not cut"
    );
    let st = status(&fleet);
    assert_eq!(
        (st.state.clone(), st.restarts),
        (ServerState::Up, 0),
        "{st:?}"
    );
    fleet.shutdown().await;
}

/// On 2026-07-28 a cancelled call's stream is closed (no `notifications/cancelled` over HTTP),
/// and a name that is not plain ASCII travels in `Mcp-Name` as base64, which the peer accepts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_07_28_a_cancel_closes_the_stream_and_names_travel_base64() {
    let (down, _down_cfg) = peer("", "tok-0123456789abcdef", &[]).await;
    let relay = Relay::start(&down.url, Rules::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "tok-0123456789abcdef").unwrap();
    let fleet = fleet(&relay.url(), &token, dir.path()).await;
    up(&fleet).await;
    assert_eq!(status(&fleet).era, Some(loom::protocol::Era::Modern));
    // A name with a non-ASCII character.
    let reply = call(
        &fleet,
        "resources/read",
        json!({ "uri": "sample://orders/ñ-1" }),
    )
    .await;
    let seen = relay.seen();
    let read = seen
        .iter()
        .find(|s| s.rpc.as_deref() == Some("resources/read"))
        .expect("the read");
    let name = read
        .headers
        .get("mcp-name")
        .expect("Mcp-Name")
        .to_str()
        .unwrap();
    assert!(name.starts_with("=?base64?"), "{name}");
    // The peer checked the header against the body: no header mismatch (-32020).
    if let Reply::Error(e) = &reply {
        assert!(!e.get().contains("-32020"), "{}", e.get());
    }
    assert!(!matches!(reply, Reply::Lost(_)), "{reply:?}");
    // A long call, cancelled: its stream is closed.
    let conn = fleet.server("d").unwrap().connection().unwrap();
    let mut params = Map::new();
    params.insert("name".into(), json!("sample_slow_count"));
    params.insert("arguments".into(), json!({ "steps": 100, "delay_ms": 100 }));
    params.insert("_meta".into(), json!({ "progressToken": "p-1" }));
    let (id, _rx) = conn.send_request("tools/call", Some(params));
    wait_until("the call's first progress", async || {
        relay
            .seen()
            .iter()
            .any(|s| s.rpc.as_deref() == Some("tools/call") && s.status == Some(200))
            .then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    conn.cancel(id, "a person cancelled it");
    wait_until("the relay to see the client close the stream", async || {
        relay
            .seen()
            .iter()
            .any(|s| s.rpc.as_deref() == Some("tools/call") && s.client_closed)
            .then_some(())
    })
    .await;
    assert!(
        !relay
            .seen()
            .iter()
            .any(|s| s.rpc.as_deref() == Some("notifications/cancelled")),
        "notifications/cancelled is stdio-only on 2026-07-28"
    );
    fleet.shutdown().await;
}

/// The Python legacy-era server with sessions (`tests/fixtures/session_server.py`) and its log.
struct SessionPeer {
    child: std::process::Child,
    port: u16,
    log: std::path::PathBuf,
    dir: tempfile::TempDir,
}

impl Drop for SessionPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl SessionPeer {
    fn start(get_mode: &str) -> SessionPeer {
        use std::io::BufRead;
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("server.log");
        let mut child = std::process::Command::new("python3")
            .arg(common::root().join("tests/fixtures/session_server.py"))
            .arg(&log)
            .arg(get_mode)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("start python3 tests/fixtures/session_server.py");
        let mut first = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut first)
            .expect("the server's port");
        let port = first.trim().parse().expect("a port");
        SessionPeer {
            child,
            port,
            log,
            dir,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    async fn fleet(&self) -> Arc<Fleet> {
        let token = self.dir.path().join("token");
        std::fs::write(&token, "tok-0123456789abcdef").unwrap();
        fleet(&self.url(), &token, self.dir.path()).await
    }

    fn entries(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    fn posts_of(&self, tool: &str) -> Vec<Value> {
        self.entries()
            .into_iter()
            .filter(|e| e["tool"] == tool)
            .collect()
    }

    /// How long after it began the server saw loom close the held stream of `tool`.
    async fn closed_after(&self, tool: &str, nth: usize) -> f64 {
        wait_until("the server to see the held stream end", async || {
            self.entries()
                .into_iter()
                .filter(|e| e["held"] == tool)
                .nth(nth)
        })
        .await["closed_after"]
            .as_f64()
            .unwrap_or_else(|| panic!("loom held the {tool} stream to its end"))
    }
}

fn tool(name: &str) -> Value {
    json!({ "name": name, "arguments": {} })
}

fn params(v: Value) -> Map<String, Value> {
    let Value::Object(m) = v else {
        panic!("params")
    };
    m
}

/// A request the server answers 404 even on a fresh session is that request's failure: after
/// one renewal it fails alone (or gets the JSON-RPC reply the 404 carried), and every other
/// call on the connection goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_404_fails_only_that_request_and_the_connection_stays() {
    let peer = SessionPeer::start("405");
    let fleet = peer.fleet().await;
    up(&fleet).await;
    assert_eq!(status(&fleet).era, Some(loom::protocol::Era::Legacy));
    let conn = fleet.server("d").unwrap().connection().unwrap();
    let (_, slow) = conn.send_request("tools/call", Some(params(tool("slow"))));
    tokio::time::sleep(Duration::from_millis(200)).await;
    match call(&fleet, "tools/call", tool("gone")).await {
        Reply::Lost(why) => assert!(
            why.contains("404") && why.contains("no such thing"),
            "{why}"
        ),
        other => panic!("{other:?}"),
    }
    match call(&fleet, "tools/call", tool("gone_rpc")).await {
        Reply::Error(e) => assert!(e.get().contains("gone for good"), "{}", e.get()),
        other => panic!("{other:?}"),
    }
    let slow = slow.await.expect("the slow call's reply");
    assert_eq!(text(&result(slow)), "slow ok");
    assert_eq!(
        text(&result(call(&fleet, "tools/call", tool("small")).await)),
        "small ok"
    );
    // Each went once more on a new session, and no more.
    assert_eq!(peer.posts_of("gone").len(), 2);
    assert_eq!(peer.posts_of("gone_rpc").len(), 2);
    let st = status(&fleet);
    assert_eq!(
        (st.state.clone(), st.restarts),
        (ServerState::Up, 0),
        "{st:?}"
    );
    fleet.shutdown().await;
}

/// A request whose caller stopped waiting while the session was being renewed is not sent
/// again on the new session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_given_up_during_a_session_renewal_is_not_sent_again() {
    let peer = SessionPeer::start("405");
    let fleet = peer.fleet().await;
    up(&fleet).await;
    assert_eq!(
        text(&result(call(&fleet, "tools/call", tool("forget")).await)),
        "forgot"
    );
    let conn = fleet.server("d").unwrap().connection().unwrap();
    let (id, _rx) = conn.send_request("tools/call", Some(params(tool("small"))));
    // The server takes a second to initialize the new session; the caller gives up meanwhile.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(conn.is_waiting(id));
    conn.forget(id);
    wait_until("the new session", async || {
        peer.entries()
            .iter()
            .any(|e| e["rpc"] == "notifications/initialized" && e["session"] == "s-2")
            .then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let smalls = peer.posts_of("small");
    assert_eq!(smalls.len(), 1, "{smalls:?}");
    assert_eq!(smalls[0]["status"], 404);
    // The connection itself is fine.
    assert_eq!(
        text(&result(call(&fleet, "tools/call", tool("small")).await)),
        "small ok"
    );
    fleet.shutdown().await;
}

/// On a legacy session loom closes a request's stream when the call is cancelled (after
/// `notifications/cancelled`), shortly after its answer arrived, and when the connection
/// closes; a server holding streams open never holds loom's tasks and sockets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_reply_streams_close_on_cancel_after_the_answer_and_with_the_connection() {
    let peer = SessionPeer::start("405");
    let fleet = peer.fleet().await;
    up(&fleet).await;
    let conn = fleet.server("d").unwrap().connection().unwrap();
    let (id, _rx) = conn.send_request("tools/call", Some(params(tool("never"))));
    wait_until("the call to reach the server", async || {
        (!peer.posts_of("never").is_empty()).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    conn.cancel(id, "a person cancelled it");
    assert!(peer.closed_after("never", 0).await < 5.0);
    assert!(
        peer.entries()
            .iter()
            .any(|e| e["rpc"] == "notifications/cancelled")
    );
    // Answered, then held open by the server: loom lets go after a short grace.
    assert_eq!(
        text(&result(call(&fleet, "tools/call", tool("hold")).await)),
        "held"
    );
    let after = peer.closed_after("hold", 0).await;
    assert!((2.0..8.0).contains(&after), "closed after {after}s");
    // Still waiting when the connection closes: the stream goes with it.
    let (_, _rx) = conn.send_request("tools/call", Some(params(tool("never"))));
    wait_until("the second call to reach the server", async || {
        (peer.posts_of("never").len() == 2).then_some(())
    })
    .await;
    fleet.shutdown().await;
    assert!(peer.closed_after("never", 1).await < 5.0);
}

/// The GET stream is given up only when the server has none (405); a server error is retried
/// with backoff, and a stream that ends at once without an event counts as a failure, so it
/// is not reopened at the plain retry delay forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_get_stream_retries_errors_with_backoff_and_an_empty_stream_is_a_failure() {
    let erring = SessionPeer::start("503");
    let empty = SessionPeer::start("empty");
    let (erring_fleet, empty_fleet) = tokio::join!(erring.fleet(), empty.fleet());
    up(&erring_fleet).await;
    up(&empty_fleet).await;
    let gets = |peer: &SessionPeer| -> Vec<Value> {
        peer.entries()
            .into_iter()
            .filter(|e| e["http"] == "GET")
            .collect()
    };
    wait_until("a GET stream after two 503s", async || {
        gets(&erring)
            .iter()
            .any(|g| g["status"] == 200)
            .then_some(())
    })
    .await;
    assert_eq!(gets(&erring).len(), 3, "{:?}", gets(&erring));
    // Backoff doubles from the 1 s retry delay: GETs at about 0, 2 and 6 s, not every second.
    let first = wait_until("the first GET", async || {
        gets(&empty).first().and_then(|g| g["t"].as_f64())
    })
    .await;
    wait_until("7 s after the first GET", async || {
        let last = empty.entries().last().and_then(|e| e["t"].as_f64());
        // The log's clock only moves with an entry: a ping makes one.
        let _ = call(&empty_fleet, "ping", json!({})).await;
        last.is_some_and(|t| t - first >= 7.0).then_some(())
    })
    .await;
    let n = gets(&empty)
        .iter()
        .filter(|g| g["t"].as_f64().is_some_and(|t| t - first < 7.0))
        .count();
    assert!((2..=4).contains(&n), "{n} GETs in 7 s: {:?}", gets(&empty));
    erring_fleet.shutdown().await;
    empty_fleet.shutdown().await;
}

/// A password or a key in the configured URL never shows in what loom says about it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_in_the_url_stay_out_of_the_error_text() {
    loom::init_tls();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://user:hunter2@127.0.0.1:{port}/mcp?key=hunter2");
    let conn = loom::downstream::http::connect(loom::downstream::http::HttpLaunch {
        server: "d",
        url: &url,
        headers: &Default::default(),
        bearer_token_env: None,
        bearer_token_command: None,
        max_message: 1 << 20,
        client_caps: ClientCapabilities::default(),
        inbound: Arc::new(|_, _| {}),
    })
    .expect("connect");
    let why = conn
        .handshake(Opening::Discover, Duration::from_secs(5))
        .await
        .expect_err("nothing listens there")
        .to_string();
    assert!(
        why.contains(&format!("cannot reach http://127.0.0.1:{port}/mcp")),
        "{why}"
    );
    assert!(!why.contains("hunter2"), "{why}");
}

/// A legacy HTTP server that forgets loom's session is given a new one, and told again what the
/// old one knew: the resources clients subscribe to and the log level they set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewed_session_is_told_the_subscriptions_and_log_level_again() {
    let peer = SessionPeer::start("405");
    let cfg = common::TempConfig::new(&format!(
        "[[servers]]\nname = \"d\"\nurl = \"{}\"\n",
        peer.url()
    ));
    let mut c = common::RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    let r = c
        .request("resources/subscribe", json!({ "uri": "test://watched" }))
        .await;
    assert!(r.get("result").is_some(), "{r}");
    let r = c
        .request("logging/setLevel", json!({ "level": "debug" }))
        .await;
    assert!(r.get("result").is_some(), "{r}");
    let r = c.call("d_forget", json!({})).await;
    assert!(!common::is_error_result(&r), "{r}");
    // The next call finds the session gone: loom starts a new one and goes on.
    let r = c.call("d_small", json!({})).await;
    assert_eq!(common::text_of(&r), "small ok");
    let told = |rpc: &str| {
        peer.entries()
            .iter()
            .filter(|e| e["rpc"] == rpc && e["status"] == 200)
            .map(|e| e["session"].as_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    };
    wait_until("the new session to be told again", async || {
        (told("resources/subscribe").contains(&"s-2".to_owned())
            && told("logging/setLevel").contains(&"s-2".to_owned()))
        .then_some(())
    })
    .await;
    assert_eq!(told("resources/subscribe"), ["s-1", "s-2"]);
}

/// A server that pretty-prints its JSON answers (line breaks between tokens): the client on
/// loom's stdio still gets each message as one line, the text inside unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pretty_printed_answer_reaches_a_stdio_client_as_one_line() {
    let peer = SessionPeer::start("405");
    let cfg = common::TempConfig::new(&format!(
        "[[servers]]\nname = \"d\"\nurl = \"{}\"\n",
        peer.url()
    ));
    let mut c = common::RawClient::spawn(&cfg.path);
    c.initialize().await;
    c.tool_names().await;
    let r = c.call("d_pretty", json!({})).await;
    assert_eq!(common::text_of(&r), "line one\nline two", "{r}");
}
