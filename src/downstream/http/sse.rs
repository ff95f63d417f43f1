//! Reading a downstream server's replies: a JSON body or a `text/event-stream`, chunk by
//! chunk within `max_downstream_message_bytes`, each event fed to the connection as raw bytes,
//! with the stream's position (last event id, `retry`) kept for a resumption. Never sends.

use super::*;

/// How a reply stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SseEnd {
    /// The request's answer arrived (or the stream belongs to no request).
    Answered,
    /// It ended, or broke, before the answer.
    Dropped,
    /// An event passed the size limit; the request was failed.
    CutOff,
}

/// Where a stream was when it dropped: the last event id and the server's reconnect delay.
#[derive(Debug, Default)]
pub(super) struct StreamPosition {
    pub(super) last_id: Option<HeaderValue>,
    retry: Option<Duration>,
    /// Data events read so far, over every stream this position followed.
    pub(super) events: u64,
}

impl StreamPosition {
    pub(super) fn delay(&self) -> Duration {
        self.retry.unwrap_or(RETRY_DEFAULT)
    }
}

/// The server's `retry` field (milliseconds), within loom's bounds.
pub fn bounded_retry(millis: u64) -> Duration {
    Duration::from_millis(millis).clamp(RETRY_MIN, RETRY_MAX)
}

/// An SSE `id` as a `Last-Event-ID` value: none when empty (the server reset it) or when it
/// could not travel in a header.
pub(super) fn event_id_header(id: &[u8]) -> Option<HeaderValue> {
    if id.is_empty() || id.len() > 1024 {
        return None;
    }
    HeaderValue::from_bytes(id).ok()
}

pub(super) fn is_event_stream(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/event-stream"))
}

/// The JSON-RPC response with `id` in a reply that is JSON or an event stream; what else the
/// stream carries is dropped (only loom's own renewal reads replies this way).
pub(super) async fn reply_to(
    resp: reqwest::Response,
    id: &str,
    limit: usize,
) -> Result<serde_json::Value, ReplyError> {
    let is_reply = |bytes: &[u8]| {
        serde_json::from_slice::<serde_json::Value>(bytes)
            .ok()
            .filter(|v| v["id"] == id)
    };
    let found = if is_event_stream(&resp) {
        let mut parser = SseParser::new(limit);
        let mut stream = resp.bytes_stream();
        let mut found = None;
        'read: while let Some(Ok(chunk)) = stream.next().await {
            for item in parser.feed(&chunk) {
                if let SseItem::Event(data) = item
                    && let Some(v) = is_reply(&data)
                {
                    found = Some(v);
                    break 'read;
                }
            }
        }
        found
    } else {
        match read_body(resp, limit).await {
            Ok(b) => is_reply(&b),
            Err(_) => None,
        }
    };
    let reply = found.ok_or_else(|| ReplyError::NoAnswer(id.to_owned()))?;
    if reply.get("error").is_some() {
        let text: String = reply["error"].to_string().chars().take(300).collect();
        return Err(ReplyError::Refused(text));
    }
    Ok(reply)
}

/// Why a body was not read whole.
pub(super) enum BodyError {
    /// It passed the limit; reading stopped there. The first bytes are kept to tell which
    /// request it answered.
    TooLarge {
        prefix: Vec<u8>,
    },
    Read(reqwest::Error),
}

/// How much of a cut-off message is kept to find its id.
pub(super) const PREFIX_KEPT: usize = 4096;

/// Reads a body chunk by chunk, stopping as soon as it passes `limit` bytes; what was read of
/// an oversize body is dropped except its first bytes, and the rest is never fetched.
pub(super) async fn read_body(resp: reqwest::Response, limit: usize) -> Result<Vec<u8>, BodyError> {
    if resp.content_length().is_some_and(|n| n > limit as u64) {
        return Err(BodyError::TooLarge { prefix: Vec::new() });
    }
    let mut body = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(BodyError::Read)?;
        if body.len() + chunk.len() > limit {
            body.truncate(PREFIX_KEPT);
            let room = PREFIX_KEPT - body.len();
            body.extend_from_slice(chunk.get(..room.min(chunk.len())).unwrap_or_default());
            return Err(BodyError::TooLarge { prefix: body });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Feeds each SSE event to the connection, and keeps `pos` (last event id, `retry`) for a
/// resumption. An event over `limit` is cut off while it streams; on a request's own stream
/// (`request` is its id) that ends the stream and fails the request, on the standalone GET
/// stream the event is skipped and reading goes on. After a request's answer the stream is
/// read for `ANSWERED_GRACE` more (the server should end it; what it sends meanwhile is still
/// handled), then dropped: a server that holds it open never holds a task and a socket.
pub(super) async fn read_sse(
    resp: reqwest::Response,
    conn: &Arc<Connection>,
    limit: usize,
    request: Option<u64>,
    pos: &mut StreamPosition,
) -> SseEnd {
    let mut parser = SseParser::new(limit);
    let mut stream = resp.bytes_stream();
    let mut answered = request.is_none();
    let mut deadline: Option<tokio::time::Instant> = None;
    loop {
        let next = match deadline {
            Some(at) => match tokio::time::timeout_at(at, stream.next()).await {
                Ok(next) => next,
                Err(_) => break,
            },
            None => stream.next().await,
        };
        let Some(Ok(chunk)) = next else { break };
        for item in parser.feed(&chunk) {
            match item {
                SseItem::Event(data) => {
                    pos.events += 1;
                    if let Some(id) = request
                        && !answered
                    {
                        answered = answers(&data, id);
                        if answered {
                            deadline = Some(tokio::time::Instant::now() + ANSWERED_GRACE);
                        }
                    }
                    conn.handle_incoming(&data);
                }
                SseItem::LastId(id) => pos.last_id = event_id_header(&id),
                SseItem::Retry(ms) => pos.retry = Some(bounded_retry(ms)),
                SseItem::TooLarge { prefix } => {
                    conn.handle_cut_off(&prefix, limit, request);
                    if request.is_some() {
                        return SseEnd::CutOff;
                    }
                }
            }
        }
    }
    if answered {
        SseEnd::Answered
    } else {
        SseEnd::Dropped
    }
}

/// What the SSE parser yields.
#[derive(Debug, PartialEq)]
pub enum SseItem {
    /// One event's joined `data` lines.
    Event(Vec<u8>),
    /// The event just ended set the last event id (empty: the server reset it).
    LastId(Vec<u8>),
    /// The server's reconnect delay, in milliseconds (`retry`).
    Retry(u64),
    /// An event (or a line) passed the limit; its first bytes, and the rest is skipped.
    TooLarge { prefix: Vec<u8> },
}

/// Room for a field name (`data: `, `event: `…) on a line, beyond an event's limit.
pub(super) const FIELD_SLACK: usize = 6;

/// Incremental `text/event-stream` parser yielding each event's joined `data` lines. No event
/// it yields is over `limit` bytes, and it never holds more than that (plus a field name)
/// however the stream is chunked: an event is cut off the moment it passes the limit.
pub struct SseParser {
    line: Vec<u8>,
    data: Vec<u8>,
    limit: usize,
    /// Inside an event that was cut off: bytes are dropped until the event ends.
    skipping: bool,
    /// The `id` of the event being read.
    id: Option<Vec<u8>>,
    /// The last line ended with a CR: an LF right after it ends no other line.
    after_cr: bool,
    /// At the stream's start: how much of a UTF-8 BOM was read (held back, as it is dropped).
    bom: Option<usize>,
}

/// The byte order mark a stream may start with, which is not part of its first line.
pub(super) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The value of an SSE field line `name: value` (one leading space dropped), or of a bare
/// `name` line (empty).
pub(super) fn field<'l>(line: &'l [u8], name: &[u8]) -> Option<&'l [u8]> {
    let rest = line.strip_prefix(name)?;
    if rest.is_empty() {
        return Some(rest);
    }
    let value = rest.strip_prefix(b":")?;
    Some(value.strip_prefix(b" ").unwrap_or(value))
}

impl SseParser {
    pub fn new(limit: usize) -> SseParser {
        SseParser {
            line: Vec::new(),
            data: Vec::new(),
            limit,
            skipping: false,
            id: None,
            after_cr: false,
            bom: Some(0),
        }
    }

    /// The bytes the parser holds now: the line being read and the event's data so far.
    #[cfg(test)]
    pub(super) fn buffered(&self) -> usize {
        self.line.len() + self.data.len()
    }

    /// The size the event would have if the line being read ended now: its data so far plus
    /// this line's payload (a line of another field counts beyond its name's room).
    fn held(&self) -> usize {
        let line = match self.line.strip_prefix(b"data:") {
            Some(rest) => {
                rest.strip_prefix(b" ").unwrap_or(rest).len() + usize::from(!self.data.is_empty())
            }
            None => self.line.len().saturating_sub(FIELD_SLACK),
        };
        self.data.len() + line
    }

    /// Drops the event being read, keeping its first bytes, and skips the rest of it.
    fn cut_off(&mut self) -> Vec<u8> {
        let mut prefix = std::mem::take(&mut self.data);
        if let Some(rest) = self.line.strip_prefix(b"data:") {
            if !prefix.is_empty() {
                prefix.push(b'\n');
            }
            prefix.extend_from_slice(rest.strip_prefix(b" ").unwrap_or(rest));
        }
        prefix.truncate(PREFIX_KEPT);
        self.line = vec![b'x'];
        self.skipping = true;
        self.id = None;
        prefix
    }

    /// A complete field line of the event being read.
    fn field_line(&mut self, items: &mut Vec<SseItem>) {
        if let Some(rest) = field(&self.line, b"data") {
            if !self.data.is_empty() {
                self.data.push(b'\n');
            }
            self.data.extend_from_slice(rest);
        } else if let Some(id) = field(&self.line, b"id") {
            // An id holding NUL is ignored, as the SSE standard says.
            if !id.contains(&0) {
                self.id = Some(id.to_vec());
            }
        } else if let Some(ms) = field(&self.line, b"retry")
            && !ms.is_empty()
            && ms.iter().all(u8::is_ascii_digit)
        {
            // All digits: only an overflow fails to parse, and that is "as long as it gets".
            let ms = std::str::from_utf8(ms)
                .ok()
                .and_then(|t| t.parse::<u64>().ok())
                .unwrap_or(u64::MAX);
            items.push(SseItem::Retry(ms));
        }
    }

    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseItem> {
        let mut items = Vec::new();
        for &b in chunk {
            if let Some(n) = self.bom {
                if BOM.get(n) == Some(&b) {
                    self.bom = (n + 1 < BOM.len()).then_some(n + 1);
                    continue;
                }
                // No BOM after all: what was held back is the stream's own.
                self.bom = None;
                for &held in BOM.get(..n).unwrap_or_default() {
                    self.byte(held, &mut items);
                }
            }
            self.byte(b, &mut items);
        }
        items
    }

    /// One byte of the stream: a line ends with CRLF, LF or a lone CR.
    fn byte(&mut self, b: u8, items: &mut Vec<SseItem>) {
        let after_cr = std::mem::replace(&mut self.after_cr, false);
        if b == b'\n' && after_cr {
            return;
        }
        if b == b'\r' || b == b'\n' {
            self.after_cr = b == b'\r';
            self.end_line(items);
            return;
        }
        if self.skipping {
            // A line with content keeps the cut-off event going; an empty one ends it.
            self.line.clear();
            self.line.push(b'x');
            return;
        }
        self.line.push(b);
        if self.held() > self.limit {
            items.push(SseItem::TooLarge {
                prefix: self.cut_off(),
            });
        }
    }

    fn end_line(&mut self, items: &mut Vec<SseItem>) {
        if self.line.is_empty() {
            if self.skipping {
                self.skipping = false;
            } else {
                if !self.data.is_empty() {
                    items.push(SseItem::Event(std::mem::take(&mut self.data)));
                }
                if let Some(id) = self.id.take() {
                    items.push(SseItem::LastId(id));
                }
            }
        } else if !self.skipping {
            self.field_line(items);
        }
        self.line.clear();
    }
}
