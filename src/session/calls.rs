//! The call log: every tool call any caller made in this session, newest last, with the
//! request and the response it got (responses cut at a size cap so a burst of huge results
//! cannot exhaust memory). Events carry only the summary; a front end asks for the detail.
//! Every attacher can read it, so a request is redacted on the way in (as provenance is):
//! the log never holds a secret from a request, whoever logs the call.

pub use crate::types::events::{CallRecord, CallSummary};

use crate::downstream::connection::lock;
pub use crate::intercept::redact::Redacted;
#[cfg(test)]
use crate::types::events::Outcome;
use std::collections::VecDeque;
use std::sync::Mutex;

/// Largest response text kept per call.
pub const RESPONSE_CAP: usize = 512 * 1024;
/// Most text kept over all calls; the oldest records go first.
const TOTAL_CAP: usize = 48 * 1024 * 1024;
/// Most calls kept; the oldest go first.
pub const MAX_CALLS: usize = 5000;

#[derive(Default)]
pub struct CallLog {
    inner: Mutex<(VecDeque<CallRecord>, usize)>,
}

/// Cuts `text` to at most `cap` bytes on a character boundary, saying how much was left out.
pub fn cap_text(text: &str, cap: usize) -> String {
    if text.len() <= cap {
        return text.to_owned();
    }
    let mut end = cap;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n… cut at {cap} bytes of {} (the whole response went to the caller)",
        &text[..end],
        text.len()
    )
}

impl CallLog {
    /// Logs a call's start; `request` (the call's `params`) comes redacted.
    pub fn started(&self, mut summary: CallSummary, request: Redacted) {
        let request = request.into_string();
        summary.arguments = crate::intercept::redact::redact_str(&summary.arguments);
        let mut g = lock(&self.inner);
        g.1 += request.len();
        g.0.push_back(CallRecord {
            summary,
            request,
            response: String::new(),
        });
        Self::trim(&mut g);
    }

    /// Logs a call's end; the arguments stay as `started` kept them (redacted), whatever
    /// `summary` says.
    pub fn finished(&self, summary: CallSummary, response: &str) {
        self.finished_capped(summary, cap_text(response, RESPONSE_CAP));
    }

    /// `finished` with the response already cut to `RESPONSE_CAP` (`cap_text`).
    pub fn finished_capped(&self, mut summary: CallSummary, response: String) {
        let mut g = lock(&self.inner);
        let len = response.len();
        // Recent calls are at the back: search from there.
        if let Some(r) =
            g.0.iter_mut()
                .rev()
                .find(|r| r.summary.call == summary.call)
        {
            summary.arguments = std::mem::take(&mut r.summary.arguments);
            r.summary = summary;
            r.response = response;
            g.1 += len;
        }
        Self::trim(&mut g);
    }

    fn trim(g: &mut (VecDeque<CallRecord>, usize)) {
        while (g.1 > TOTAL_CAP || g.0.len() > MAX_CALLS) && g.0.len() > 1 {
            if let Some(old) = g.0.pop_front() {
                g.1 -= old.request.len() + old.response.len();
            }
        }
    }

    /// The most recent `n` calls, oldest first.
    pub fn recent(&self, n: usize) -> Vec<CallSummary> {
        let g = lock(&self.inner);
        let skip = g.0.len().saturating_sub(n);
        g.0.iter().skip(skip).map(|r| r.summary.clone()).collect()
    }

    /// The server call `call` went to, while the log still holds it.
    pub fn server_of(&self, call: u64) -> Option<String> {
        lock(&self.inner)
            .0
            .iter()
            .rev()
            .find(|r| r.summary.call == call)
            .map(|r| r.summary.server.clone())
    }

    pub fn get(&self, call: u64) -> Option<CallRecord> {
        lock(&self.inner)
            .0
            .iter()
            .rev()
            .find(|r| r.summary.call == call)
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_keeps_char_boundaries_and_says_what_was_cut() {
        let t = "é".repeat(10);
        let c = cap_text(&t, 5);
        assert!(c.starts_with("éé\n… cut at 5 bytes of 20"));
        assert_eq!(cap_text("abc", 5), "abc");
    }

    #[test]
    fn requests_are_kept_redacted() {
        let log = CallLog::default();
        let s = CallSummary {
            call: 1,
            arguments: r#"{"q":"x?access_token=t0k3nv4lu3"}"#.into(),
            ..Default::default()
        };
        let request = serde_json::json!({
            "name": "fetch",
            "arguments": {
                "url": "https://api.example.com/v1?access_token=t0k3nv4lu3&page=2",
                "password": { "v": "hunter2" },
                "headers": [["Authorization", "Token abc123secret"]],
                "body": "{\"client_secret\":\"cl13nt\"}",
            }
        });
        log.started(s, Redacted::text(&request.to_string()));
        let r = log.get(1).expect("recorded");
        for secret in ["t0k3nv4lu3", "hunter2", "abc123secret", "cl13nt"] {
            assert!(
                !r.request.contains(secret),
                "{secret} leaked: {}",
                r.request
            );
            assert!(
                !r.summary.arguments.contains(secret),
                "{}",
                r.summary.arguments
            );
        }
        // A finished call keeps its arguments redacted too.
        log.finished(
            CallSummary {
                call: 1,
                outcome: Outcome::Passed,
                arguments: r#"{"q":"x?access_token=t0k3nv4lu3"}"#.into(),
                ..Default::default()
            },
            "ok",
        );
        let done = log.get(1).expect("recorded");
        assert_eq!(done.summary.outcome, Outcome::Passed);
        assert!(
            !done.summary.arguments.contains("t0k3nv4lu3"),
            "{}",
            done.summary.arguments
        );
        let kept: serde_json::Value = serde_json::from_str(&r.request).expect("still JSON");
        assert_eq!(kept["name"], "fetch");
        assert!(
            kept["arguments"]["url"]
                .as_str()
                .unwrap()
                .contains("page=2")
        );
        // Not JSON: the text rules still apply.
        log.started(
            CallSummary {
                call: 2,
                ..Default::default()
            },
            Redacted::text("password=hunter2 {"),
        );
        assert!(!log.get(2).unwrap().request.contains("hunter2"));
    }

    #[test]
    fn log_keeps_request_and_response_and_updates_summary() {
        let log = CallLog::default();
        let s = CallSummary {
            call: 7,
            outcome: Outcome::Running,
            ..Default::default()
        };
        log.started(s.clone(), Redacted::text("{\"a\":1}"));
        log.finished(
            CallSummary {
                outcome: Outcome::Passed,
                ..s
            },
            "{\"content\":[]}",
        );
        let r = log.get(7).expect("recorded");
        assert_eq!(r.summary.outcome, "passed");
        assert_eq!(r.request, "{\"a\":1}");
        assert_eq!(r.response, "{\"content\":[]}");
        assert_eq!(log.recent(10).len(), 1);
    }
}

/// A running call's stopper: run once, by whoever cancels first.
type Stopper = Box<dyn FnOnce() + Send>;

/// How to stop each running tool call, by its number. The front end that runs a call registers a
/// stopper while the call waits or runs and forgets it when the call ends; a person's cancel
/// (from the workbench) takes it and runs it once.
#[derive(Default)]
pub struct Cancels(std::sync::Mutex<std::collections::HashMap<u64, Stopper>>);

impl Cancels {
    fn map(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<u64, Stopper>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn register(&self, call: u64, stop: impl FnOnce() + Send + 'static) {
        self.map().insert(call, Box::new(stop));
    }

    pub fn forget(&self, call: u64) {
        self.map().remove(&call);
    }

    /// Stops `call`; false when it is not running (finished, or never started).
    pub fn cancel(&self, call: u64) -> bool {
        let stop = self.map().remove(&call);
        match stop {
            Some(stop) => {
                stop();
                true
            }
            None => false,
        }
    }
}
