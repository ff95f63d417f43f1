//! Where a legacy HTTP session's messages go: the JSON reply a POST waits for, the event stream
//! a POST opened for its request, or the session's GET stream. Every event carries an id unique
//! in the session, and the last [`REPLAYABLE`] are kept, so a client whose stream dropped
//! reconnects with `Last-Event-ID` and misses nothing of that stream. Messages that no stream
//! can take yet are kept (bounded) for the next GET stream.

use bytes::Bytes;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use tokio::sync::{mpsc, oneshot};

/// Events kept for replay after a dropped stream.
pub const REPLAYABLE: usize = 1000;
/// Messages kept while no stream is open to take them.
const KEPT_FOR_STREAM: usize = 1000;

/// How a request's response reaches its client.
enum Waiter {
    /// The POST waits for it and answers with JSON.
    Json(oneshot::Sender<String>),
    /// It ends the POST's event stream with this id.
    Stream(u64),
}

struct Stream {
    /// The connection reading the stream now; `None` while it is dropped (resumable).
    live: Option<mpsc::Sender<Bytes>>,
    /// A POST's stream ends with its response; a GET stream never ends by itself.
    done: bool,
    is_get: bool,
}

/// One SSE event as it goes on the wire.
pub fn event(seq: u64, line: &str) -> Bytes {
    Bytes::from(format!("id: {seq}\nevent: message\n{}\n", data_lines(line)))
}

/// `line` as SSE `data:` fields, one per line it holds (a line break inside would otherwise
/// end the field, or the event), each ending in a newline.
pub fn data_lines(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    for part in line.split(['\n', '\r']) {
        out.push_str("data: ");
        out.push_str(part);
        out.push('\n');
    }
    out
}

/// The first event of a stream (2025-11-25, SEP-1699): an id to resume from, and how long to
/// wait before reconnecting; no data.
pub fn priming(seq: u64) -> Bytes {
    Bytes::from(format!("id: {seq}\nretry: 1000\ndata: \n\n"))
}

#[derive(Default)]
pub struct Outbox {
    next_seq: u64,
    next_stream: u64,
    /// (event id, stream id, message), oldest first.
    sent: VecDeque<(u64, u64, String)>,
    streams: HashMap<u64, Stream>,
    /// The stream of the newest GET, which takes messages tied to no request.
    get_stream: Option<u64>,
    /// POST streams in the order they opened.
    post_streams: Vec<u64>,
    waiting: HashMap<String, Waiter>,
    /// Progress tokens of requests answered on a stream → that stream.
    progress: HashMap<String, u64>,
    kept: VecDeque<String>,
    /// Whether streams start with a priming event (the session speaks 2025-11-25).
    priming: bool,
}

/// What [`Outbox::resume`] found for a `Last-Event-ID`.
pub enum Resumed {
    /// The stream's events after that id, and whether more will come.
    Stream { replay: Vec<Bytes>, open: bool },
    /// The id is not one this session sent or still keeps.
    Unknown,
}

impl Outbox {
    /// An outbox whose streams start with a priming event when `priming` (2025-11-25).
    pub fn new(priming: bool) -> Outbox {
        Outbox {
            priming,
            ..Outbox::default()
        }
    }

    fn seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    /// Streams with a reader now (what the per-session bound counts).
    pub fn live_streams(&self) -> usize {
        self.streams
            .values()
            .filter(|s| s.live.as_ref().is_some_and(|tx| !tx.is_closed()))
            .count()
    }

    /// Whether anything still waits on this session (a response or an open stream).
    pub fn busy(&self) -> bool {
        !self.waiting.is_empty() || self.live_streams() > 0
    }

    /// Whether a request with this id (its JSON text) is still waiting for its response.
    pub fn is_waiting(&self, id: &str) -> bool {
        self.waiting.contains_key(id)
    }

    /// A POST that answers with JSON: the receiver gets the response line.
    pub fn wait_json(&mut self, id: String) -> oneshot::Receiver<String> {
        let (tx, rx) = oneshot::channel();
        self.waiting.insert(id, Waiter::Json(tx));
        rx
    }

    /// A POST that answers with an event stream; `progress` is its request's progress token.
    pub fn open_post_stream(
        &mut self,
        id: String,
        progress: Option<String>,
    ) -> mpsc::Receiver<Bytes> {
        let (tx, rx) = mpsc::channel(super::STREAM_QUEUE);
        let stream = self.new_stream(tx, false);
        self.waiting.insert(id, Waiter::Stream(stream));
        if let Some(token) = progress {
            self.progress.insert(token, stream);
        }
        self.post_streams.push(stream);
        rx
    }

    /// A new GET stream: it replaces the previous one and first takes what was kept.
    pub fn open_get_stream(&mut self) -> mpsc::Receiver<Bytes> {
        let (tx, rx) = mpsc::channel(super::STREAM_QUEUE);
        if let Some(old) = self.get_stream.take() {
            self.streams.remove(&old);
        }
        let stream = self.new_stream(tx, true);
        self.get_stream = Some(stream);
        for line in std::mem::take(&mut self.kept) {
            self.emit(stream, line);
        }
        rx
    }

    fn new_stream(&mut self, tx: mpsc::Sender<Bytes>, is_get: bool) -> u64 {
        self.next_stream += 1;
        let id = self.next_stream;
        if self.priming {
            let seq = self.seq();
            let _ = tx.try_send(priming(seq));
            self.remember(seq, id, String::new());
        }
        self.streams.insert(
            id,
            Stream {
                live: Some(tx),
                done: false,
                is_get,
            },
        );
        id
    }

    fn remember(&mut self, seq: u64, stream: u64, line: String) {
        if self.sent.len() == REPLAYABLE {
            self.sent.pop_front();
        }
        self.sent.push_back((seq, stream, line));
    }

    /// Sends `line` on `stream` (kept for replay either way).
    fn emit(&mut self, stream: u64, line: String) {
        let seq = self.seq();
        if let Some(s) = self.streams.get_mut(&stream)
            && let Some(tx) = &s.live
            && tx.try_send(event(seq, &line)).is_err()
        {
            // Gone, or so far behind that it stopped reading: let go (the event stays
            // replayable for a reader that resumes).
            s.live = None;
        }
        self.remember(seq, stream, line);
    }

    /// Ends a POST stream once its response went out: the reader sees the end of the body.
    fn finish(&mut self, stream: u64) {
        if let Some(s) = self.streams.get_mut(&stream) {
            s.done = true;
            s.live = None;
        }
        self.post_streams.retain(|s| *s != stream);
        self.progress.retain(|_, s| *s != stream);
        // Its events stay replayable; the slot goes once none are.
        let kept: std::collections::HashSet<u64> = self.sent.iter().map(|e| e.1).collect();
        self.streams.retain(|id, s| !s.done || kept.contains(id));
    }

    /// A line the MCP client wrote, sent where it belongs.
    pub fn route(&mut self, line: String) {
        let v: Option<Value> = serde_json::from_str(&line).ok();
        let is_response = v.as_ref().is_some_and(|v| v.get("method").is_none());
        if is_response {
            let key = v.as_ref().and_then(|v| v.get("id")).map(Value::to_string);
            match key.and_then(|k| self.waiting.remove(&k)) {
                Some(Waiter::Json(tx)) => {
                    let _ = tx.send(line);
                }
                Some(Waiter::Stream(s)) => {
                    self.emit(s, line);
                    self.finish(s);
                }
                None => self.keep(line),
            }
            return;
        }
        // Progress goes with the request it reports on; anything else during a streamed
        // request most likely belongs to it (the newest); otherwise the GET stream takes it,
        // whether its reader is there or gone for a moment (the event stays replayable).
        let token = v
            .as_ref()
            .filter(|v| v.get("method").and_then(Value::as_str) == Some("notifications/progress"))
            .and_then(|v| v.pointer("/params/progressToken"))
            .map(Value::to_string);
        let target = token
            .and_then(|t| self.progress.get(&t).copied())
            .or_else(|| self.post_streams.last().copied())
            .or_else(|| self.get_stream.filter(|g| self.streams.contains_key(g)));
        match target {
            Some(s) => self.emit(s, line),
            None => self.keep(line),
        }
    }

    fn keep(&mut self, line: String) {
        if self.kept.len() == KEPT_FOR_STREAM {
            self.kept.pop_front();
        }
        self.kept.push_back(line);
    }

    /// A GET with `Last-Event-ID`: the rest of the stream that event was on, and that stream
    /// continues on this connection when it has not ended.
    pub fn resume(&mut self, last: u64, tx: mpsc::Sender<Bytes>) -> Resumed {
        let Some(stream) = self
            .sent
            .iter()
            .find(|(seq, _, _)| *seq == last)
            .map(|e| e.1)
        else {
            return Resumed::Unknown;
        };
        let mut replay: Vec<Bytes> = self
            .sent
            .iter()
            .filter(|(seq, s, line)| *seq > last && *s == stream && !line.is_empty())
            .map(|(seq, _, line)| event(*seq, line))
            .collect();
        let (open, is_get) = match self.streams.get_mut(&stream) {
            Some(s) if !s.done => {
                s.live = Some(tx);
                (true, s.is_get)
            }
            _ => (false, false),
        };
        if open && is_get {
            // The resumed GET stream is the session's again (one it supersedes ends),
            // and what waited for a GET stream follows the replay, in order.
            if let Some(old) = self.get_stream.replace(stream).filter(|o| *o != stream) {
                self.streams.remove(&old);
            }
            for line in std::mem::take(&mut self.kept) {
                let seq = self.seq();
                replay.push(event(seq, &line));
                self.remember(seq, stream, line);
            }
        }
        Resumed::Stream { replay, open }
    }

    /// The session ended: every reader sees the end of its stream.
    pub fn close(&mut self) {
        self.streams.clear();
        self.waiting.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_break_in_a_message_never_ends_its_event() {
        let e = event(7, "{\"a\":\n1,\r\n\"b\":2}");
        let text = std::str::from_utf8(&e).unwrap();
        assert!(
            text.ends_with("\n\n") && !text[..text.len() - 2].contains("\n\n"),
            "{text:?}"
        );
        let data: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .collect();
        let v: serde_json::Value = serde_json::from_str(&data.join("\n")).unwrap();
        assert_eq!(v["b"], 2);
    }

    fn drain(rx: &mut mpsc::Receiver<Bytes>) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(b) = rx.try_recv() {
            out.push(String::from_utf8(b.to_vec()).unwrap());
        }
        out
    }

    #[test]
    fn a_streamed_request_gets_its_progress_and_response_then_ends() {
        let mut o = Outbox::default();
        let mut get = o.open_get_stream();
        let mut post = o.open_post_stream("7".into(), Some("\"p1\"".into()));
        o.route(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1}}"#.into());
        o.route(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#.into());
        let events = drain(&mut post);
        assert_eq!(events.len(), 2, "{events:?}");
        assert!(events[0].starts_with("id: 1\n") && events[0].contains("progress"));
        assert!(events[1].contains("\"id\":7"));
        assert!(
            post.try_recv().is_err(),
            "the stream ended with its response"
        );
        // Later messages tied to no request go to the GET stream.
        o.route(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.into());
        assert_eq!(drain(&mut get).len(), 1);
        assert!(o.busy(), "an open GET stream is a client still there");
        drop(get);
        assert!(!o.busy(), "a stream nobody reads any more holds nothing");
    }

    #[test]
    fn a_dropped_stream_resumes_from_its_last_event() {
        let mut o = Outbox::default();
        let post = o.open_post_stream("1".into(), Some("\"t\"".into()));
        o.route(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}"#.into());
        drop(post);
        o.route(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":2}}"#.into());
        let (tx, mut rx) = mpsc::channel(64);
        let Resumed::Stream { replay, open } = o.resume(1, tx) else {
            panic!("event 1 is known")
        };
        assert!(open);
        assert_eq!(replay.len(), 1);
        assert!(String::from_utf8_lossy(&replay[0]).contains("\"progress\":2"));
        o.route(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.into());
        assert_eq!(
            drain(&mut rx).len(),
            1,
            "the response arrives on the resumed stream"
        );
        let (tx, _rx) = mpsc::channel(64);
        assert!(matches!(o.resume(99, tx), Resumed::Unknown));
    }

    #[test]
    fn a_get_stream_resumed_after_a_drop_misses_nothing() {
        let mut o = Outbox::new(true);
        let get = o.open_get_stream();
        drop(get);
        for n in ["a", "b", "c"] {
            o.route(format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"n":"{n}"}}}}"#
            ));
        }
        let (tx, mut rx) = mpsc::channel(64);
        let Resumed::Stream { replay, open } = o.resume(1, tx) else {
            panic!("the priming event is known")
        };
        assert!(open);
        let replayed: Vec<String> = replay
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect();
        for n in ["a", "b", "c"] {
            assert!(
                replayed
                    .iter()
                    .any(|e| e.contains(&format!("\"n\":\"{n}\""))),
                "{n}: {replayed:?}"
            );
        }
        o.route(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.into());
        assert_eq!(drain(&mut rx).len(), 1, "and the resumed one goes on");
    }

    #[test]
    fn a_reader_that_stopped_reading_is_let_go() {
        let mut o = Outbox::default();
        let _unread = o.open_get_stream();
        for _ in 0..=super::super::STREAM_QUEUE {
            o.route(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#.into());
        }
        assert_eq!(o.live_streams(), 0, "no longer counted as read");
        assert!(!o.busy(), "so the session can expire");
    }

    #[test]
    fn json_waiters_and_kept_messages() {
        let mut o = Outbox::default();
        let mut rx = o.wait_json("\"a\"".into());
        o.route(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#.into());
        o.route(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#.into());
        assert!(rx.try_recv().unwrap().contains("\"a\""));
        let mut get = o.open_get_stream();
        assert_eq!(drain(&mut get).len(), 1, "the kept message comes first");
    }

    #[test]
    fn priming_gives_every_stream_an_id_to_resume_from() {
        let mut o = Outbox::new(true);
        let mut post = o.open_post_stream("1".into(), None);
        let first = drain(&mut post);
        assert_eq!(first, vec!["id: 1\nretry: 1000\ndata: \n\n".to_owned()]);
        o.route(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.into());
        let (tx, _rx) = mpsc::channel(64);
        let Resumed::Stream { replay, open } = o.resume(1, tx) else {
            panic!()
        };
        assert_eq!(replay.len(), 1);
        assert!(!open, "the stream had ended with its response");
    }
}
