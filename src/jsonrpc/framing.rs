//! Newline-delimited framing with a size limit: a line longer than the limit is skipped (its
//! first bytes are kept so the caller can answer it) instead of growing memory without bound.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// How much of an oversize line is kept for diagnostics.
const KEPT_PREFIX: usize = 4096;

#[derive(Debug)]
pub enum Line {
    Complete(Vec<u8>),
    TooLong { prefix: Vec<u8>, len: usize },
}

pub struct LineReader<R> {
    inner: R,
    limit: usize,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub fn new(inner: R, limit: usize) -> Self {
        LineReader { inner, limit }
    }

    /// The next line without its terminator; `None` at end of input. Empty lines are skipped.
    pub async fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let mut buf = Vec::new();
            let mut len = 0usize;
            let mut too_long = false;
            loop {
                let chunk = self.inner.fill_buf().await?;
                if chunk.is_empty() {
                    if len == 0 {
                        return Ok(None);
                    }
                    break;
                }
                let (part, found) = match memchr::memchr(b'\n', chunk) {
                    Some(i) => (&chunk[..i], Some(i)),
                    None => (chunk, None),
                };
                len += part.len();
                if !too_long {
                    if len > self.limit {
                        too_long = true;
                        let room = KEPT_PREFIX.saturating_sub(buf.len());
                        buf.extend_from_slice(&part[..room.min(part.len())]);
                    } else {
                        buf.extend_from_slice(part);
                    }
                }
                let consumed = found.map_or(part.len(), |i| i + 1);
                self.inner.consume(consumed);
                if found.is_some() {
                    break;
                }
            }
            if too_long {
                buf.truncate(KEPT_PREFIX);
                return Ok(Some(Line::TooLong { prefix: buf, len }));
            }
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            if buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return Ok(Some(Line::Complete(buf)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn splits_skips_blank_and_limits() {
        let input: &[u8] = b"abc\n\n  \nxxxxxxxxxxxx\r\nlast";
        let mut r = LineReader::new(tokio::io::BufReader::with_capacity(3, input), 8);
        assert!(matches!(r.next_line().await.unwrap(), Some(Line::Complete(l)) if l == b"abc"));
        match r.next_line().await.unwrap() {
            Some(Line::TooLong { prefix, len }) => {
                assert_eq!(len, 13);
                assert!(prefix.starts_with(b"xxxx"));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(r.next_line().await.unwrap(), Some(Line::Complete(l)) if l == b"last"));
        assert!(r.next_line().await.unwrap().is_none());
    }
}
