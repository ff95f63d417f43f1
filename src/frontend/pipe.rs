//! loom's own stdin and stdout on the reactor. tokio's `stdin()`/`stdout()` hand every read and
//! write to a blocking thread, which costs two thread wake-ups per message each way: most of what
//! loom added to a small call. When fd 0 or 1 is a pipe or a socket (as an MCP client launches
//! loom), it is made non-blocking and polled by the reactor like any other pipe; its flags are put
//! back when loom lets go of it, so whoever shares the file description sees it as it was. A
//! terminal, a regular file or `/dev/null` keeps tokio's blocking path: a terminal's flags are
//! shared with the shell, and epoll refuses files.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A borrowed standard descriptor (never closed here) and the flags it had.
struct Borrowed {
    fd: RawFd,
    flags: libc::c_int,
}

impl AsRawFd for Borrowed {
    fn as_raw_fd(&self) -> RawFd {
        self.fd
    }
}

impl Drop for Borrowed {
    fn drop(&mut self) {
        // SAFETY: fcntl on a descriptor this process holds open for its whole life.
        unsafe {
            libc::fcntl(self.fd, libc::F_SETFL, self.flags);
        }
    }
}

/// A standard descriptor on the reactor.
pub struct Pipe {
    inner: AsyncFd<Borrowed>,
}

/// Whether `fd` is a pipe or a socket.
fn is_pipe_or_socket(fd: RawFd) -> bool {
    // SAFETY: fstat writes into the zeroed struct it is given and reads nothing else.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return false;
    }
    let kind = st.st_mode & libc::S_IFMT;
    kind == libc::S_IFIFO || kind == libc::S_IFSOCK
}

impl Pipe {
    /// `fd` on the reactor, when it is a pipe or a socket and can be made non-blocking.
    fn open(fd: RawFd) -> Option<Pipe> {
        if !is_pipe_or_socket(fd) {
            return None;
        }
        // SAFETY: F_GETFL/F_SETFL on a standard descriptor; failure is reported by -1.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 {
            return None;
        }
        if unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
            return None;
        }
        // From here on the drop of `Borrowed` restores the flags, whatever happens (a refused
        // registration hands it back and drops it too).
        // SAFETY: `fd` is a standard descriptor, open for the whole life of the process (and, in
        // the tests, closed only after the `Pipe` is dropped); it is never replaced meanwhile.
        unsafe { AsyncFd::register(Borrowed { fd, flags }) }
            .ok()
            .map(|inner| Pipe { inner })
    }
}

impl AsyncRead for Pipe {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.inner.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            let got = guard.try_io(|inner| {
                // SAFETY: reads at most `unfilled.len()` bytes into memory `unfilled` owns.
                let n = unsafe {
                    libc::read(
                        inner.get_ref().fd,
                        unfilled.as_mut_ptr().cast(),
                        unfilled.len(),
                    )
                };
                if n < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(n as usize)
                }
            });
            match got {
                Ok(Ok(n)) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => continue,
            }
        }
    }
}

impl AsyncWrite for Pipe {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.inner.poll_write_ready(cx))?;
            let put = guard.try_io(|inner| {
                // SAFETY: writes at most `data.len()` bytes from memory `data` owns.
                let n =
                    unsafe { libc::write(inner.get_ref().fd, data.as_ptr().cast(), data.len()) };
                if n < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(n as usize)
                }
            });
            match put {
                Ok(Ok(n)) => return Poll::Ready(Ok(n)),
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => continue,
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Nothing is buffered here: a write is in the pipe when it returns.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// loom's stdin: on the reactor when it is a pipe or a socket, else tokio's blocking reader.
pub fn stdin() -> Pin<Box<dyn AsyncRead + Send>> {
    match Pipe::open(libc::STDIN_FILENO) {
        Some(p) => Box::pin(p),
        None => Box::pin(tokio::io::stdin()),
    }
}

/// loom's stdout: on the reactor when it is a pipe or a socket, else tokio's blocking writer.
pub fn stdout() -> Pin<Box<dyn AsyncWrite + Send>> {
    match Pipe::open(libc::STDOUT_FILENO) {
        Some(p) => Box::pin(p),
        None => Box::pin(tokio::io::stdout()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn pipe_pair() -> (RawFd, RawFd) {
        let mut fds = [0; 2];
        // SAFETY: pipe writes two descriptors into the array it is given.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        (fds[0], fds[1])
    }

    #[tokio::test]
    async fn a_pipe_is_polled_and_gets_its_flags_back() {
        let (r, w) = pipe_pair();
        let before = unsafe { libc::fcntl(r, libc::F_GETFL) };
        {
            let mut reader = Pipe::open(r).expect("a pipe goes on the reactor");
            let mut writer = Pipe::open(w).expect("a pipe goes on the reactor");
            assert_ne!(
                unsafe { libc::fcntl(r, libc::F_GETFL) } & libc::O_NONBLOCK,
                0
            );
            // More than a pipe holds, so the writer must wait for the reader.
            let big = vec![b'x'; 1 << 20];
            let want = big.clone();
            let write = tokio::spawn(async move {
                writer.write_all(&big).await.unwrap();
            });
            let mut got = vec![0u8; want.len()];
            reader.read_exact(&mut got).await.unwrap();
            write.await.unwrap();
            assert_eq!(got, want);
        }
        assert_eq!(unsafe { libc::fcntl(r, libc::F_GETFL) }, before);
        unsafe {
            libc::close(r);
            libc::close(w);
        }
    }

    #[test]
    fn a_regular_file_stays_on_the_blocking_path() {
        let f = tempfile::tempfile().unwrap();
        assert!(!is_pipe_or_socket(f.as_raw_fd()));
    }
}
