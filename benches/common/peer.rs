//! A raw MCP peer over stdio for the benches: `loom serve` or the sample server as a child
//! process, one JSON-RPC request at a time.

// Each bench uses the part it needs.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

pub const LOOM: &str = env!("CARGO_BIN_EXE_loom");

pub struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Peer {
    pub fn spawn(args: &[&str]) -> Peer {
        let mut child = Command::new(LOOM)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn loom");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Peer {
            child,
            stdin,
            stdout,
            next: 1,
        }
    }

    /// Sends a request and waits for the response with the same id.
    pub fn request(&mut self, method: &str, params: &str) -> String {
        let id = self.next;
        self.next += 1;
        writeln!(
            self.stdin,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
        )
        .expect("write");
        self.stdin.flush().expect("flush");
        let want = format!(r#""id":{id},"#);
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line).expect("read") == 0 {
                panic!("peer closed its stdout");
            }
            if line.contains(&want) && !line.contains("\"method\"") {
                return line;
            }
        }
    }

    pub fn initialize(&mut self) {
        self.request("initialize", r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}"#);
        writeln!(
            self.stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .expect("write");
    }

    pub fn rss_kib(&self) -> u64 {
        super::rss_kib(self.child.id())
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Peer {
    /// `tools/call` of `tool` with `arguments`: the whole response and the `result` in it.
    pub fn call(
        &mut self,
        tool: &str,
        arguments: &serde_json::Value,
    ) -> (String, serde_json::Value) {
        let params = serde_json::json!({ "name": tool, "arguments": arguments }).to_string();
        let line = self.request("tools/call", &params);
        let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON-RPC response");
        let result = v
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{tool} failed: {line}"));
        (line, result)
    }
}
