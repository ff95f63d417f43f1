//! Streamable-HTTP downstreams through the real binary, against a loopback server written in
//! Python (`tests/fixtures/httpserver.py`): size limits that hold while a reply streams, and
//! redirects that never carry loom's headers or bodies to another origin.

mod common;

use common::{LOOM, RawClient, TempConfig, eventually, is_error_result, text_of};
use serde_json::{Value, json};
use std::io::BufRead;
use std::path::PathBuf;
use std::time::Duration;

/// The Python loopback server: its two ports (two origins) and the log it writes.
struct HttpPeer {
    child: std::process::Child,
    /// The port of the origin loom is configured with; the other origin only records.
    a: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl HttpPeer {
    fn start() -> HttpPeer {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("http.log");
        let mut child = std::process::Command::new("python3")
            .arg(common::root().join("tests/fixtures/httpserver.py"))
            .arg(&log)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("start python3 tests/fixtures/httpserver.py");
        let mut first = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut first)
            .expect("the server's ports");
        let mut ports = first.split_whitespace().map(|p| p.parse::<u16>());
        let (Some(Ok(a)), Some(Ok(_other_origin))) = (ports.next(), ports.next()) else {
            panic!("the server printed no ports: {first:?}");
        };
        HttpPeer {
            child,
            a,
            log,
            _dir: dir,
        }
    }

    fn entries(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// What the server logged about streaming `tool`, once it knows how that ended.
    async fn streamed(&self, tool: &str) -> Value {
        let mut found = None;
        let ended = eventually(Duration::from_secs(30), || {
            found = self.entries().into_iter().find(|e| e["tool"] == tool);
            found.is_some()
        })
        .await;
        assert!(ended, "the server never finished streaming {tool}");
        found.unwrap_or_default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversize_http_reply_is_cut_off_while_it_streams_and_loom_keeps_serving() {
    let peer = HttpPeer::start();
    let cfg = TempConfig::new(&format!(
        "max_downstream_message_bytes = 1048576\n[[servers]]\nname = \"h\"\nurl = \"http://127.0.0.1:{}/mcp\"\n",
        peer.a
    ));
    let mut c = RawClient::spawn(&cfg.path);
    c.initialize().await;
    let names = c.tool_names().await;
    assert!(names.iter().any(|n| n == "h_huge_json"), "{names:?}");
    for tool in ["huge_json", "huge_sse"] {
        let r = c.call(&format!("h_{tool}"), json!({})).await;
        let said = r.to_string();
        assert!(
            said.contains("max_downstream_message_bytes") && said.contains("cut off"),
            "{tool}: {}",
            said.chars().take(500).collect::<String>()
        );
        // loom stopped reading near the limit: the server could not send its whole reply.
        let log = peer.streamed(tool).await;
        assert_eq!(log["complete"], json!(false), "{tool}: {log}");
        // And loom keeps serving.
        let r = c.call("h_small", json!({})).await;
        assert!(!is_error_result(&r) && text_of(&r) == "small ok", "{r}");
    }
}

async fn check_output(cfg: &TempConfig) -> String {
    let out = tokio::process::Command::new(LOOM)
        .args(["check", "-c"])
        .arg(&cfg.path)
        .env("HOSTED_TOKEN", "tok-9d2e")
        .output()
        .await
        .expect("run loom check");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_are_followed_within_the_origin_and_never_to_another() {
    let peer = HttpPeer::start();
    let cfg = TempConfig::new(&format!(
        "[[servers]]\nname = \"same\"\nurl = \"http://127.0.0.1:{a}/same\"\nheaders = {{ X-Api-Key = \"key-5b7a\" }}\nbearer_token_env = \"HOSTED_TOKEN\"\n\
             [[servers]]\nname = \"cross\"\nurl = \"http://127.0.0.1:{a}/cross\"\nheaders = {{ X-Api-Key = \"key-5b7a\" }}\nbearer_token_env = \"HOSTED_TOKEN\"\n",
        a = peer.a
    ));
    let out = check_output(&cfg).await;
    let line = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(line("same").contains(" up "), "{out}");
    assert!(line("cross").contains("another origin"), "{out}");
    // Nothing reached the other origin: no body, no header, no token.
    let leaked: Vec<Value> = peer
        .entries()
        .into_iter()
        .filter(|e| e["origin"] == "b")
        .collect();
    assert!(leaked.is_empty(), "sent to another origin: {leaked:?}");
}
