//! Starting a stdio server under the process guard and wiring its pipes: stdout lines to the
//! connection, stderr lines to the log and the event bus (the SDK 1.x echo of loom's discover
//! probe collapsed, see `probe_echo`), frames from the connection to stdin.
//! stdout of the child never reaches loom's own stdout.

use super::connection::{Connection, InboundSink, Outbound, StdioFrame};
use super::guard::{self, Lifeline};
use crate::jsonrpc::{Line, LineReader};
use crate::protocol::ClientCapabilities;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// A running stdio child: its guard's pid and the lifeline that keeps it alive.
pub struct StdioProcess {
    pub pid: u32,
    lifeline: Option<Lifeline>,
}

impl StdioProcess {
    /// Asks the server's process group to stop (SIGTERM, forwarded by the guard).
    pub fn terminate(&self) {
        guard::signal(self.pid, libc::SIGTERM);
    }

    /// Kills the whole process group at once.
    pub fn kill(&mut self) {
        self.lifeline = None;
    }
}

impl Drop for StdioProcess {
    fn drop(&mut self) {
        // Dropping the lifeline makes the guard kill the group; nothing is left behind.
        self.lifeline = None;
    }
}

pub struct StdioLaunch<'a> {
    pub server: &'a str,
    pub command: &'a str,
    pub args: &'a [String],
    pub env: &'a BTreeMap<std::ffi::OsString, std::ffi::OsString>,
    pub cwd: &'a Path,
    pub max_line: usize,
    pub client_caps: ClientCapabilities,
    pub inbound: InboundSink,
}

pub type StderrSink = Arc<dyn Fn(&str) + Send + Sync>;

static LOOM_EXECUTABLE: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Names the loom binary that runs the process guard, for a program that embeds loom's
/// library (its own executable is not loom). Without it, the running executable is used.
pub fn set_loom_executable(path: std::path::PathBuf) {
    let _ = LOOM_EXECUTABLE.set(path);
}

/// Why a stdio server's process could not be started; the text goes to the server's log and
/// status, where a person reads what to fix.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("cannot find loom's own executable: {0}")]
    NoExecutable(std::io::Error),
    #[error("working folder {0} does not exist")]
    NoFolder(std::path::PathBuf),
    #[error("cannot create lifeline pipe: {0}")]
    Lifeline(std::io::Error),
    #[error("cannot start `{command}`: {why}")]
    Start {
        command: String,
        why: std::io::Error,
    },
    #[error("child pipes missing")]
    NoPipes,
}

fn loom_executable() -> Result<std::path::PathBuf, SpawnError> {
    match LOOM_EXECUTABLE.get() {
        Some(p) => Ok(p.clone()),
        None => std::env::current_exe().map_err(SpawnError::NoExecutable),
    }
}

pub fn spawn(
    launch: StdioLaunch<'_>,
    on_stderr: StderrSink,
) -> Result<(Arc<Connection>, StdioProcess), SpawnError> {
    let exe = loom_executable()?;
    if !launch.cwd.is_dir() {
        return Err(SpawnError::NoFolder(launch.cwd.to_path_buf()));
    }
    // `loom` always means this very binary, so configs work from a build folder too.
    let program = if launch.command == "loom" {
        exe.display().to_string()
    } else {
        launch.command.to_owned()
    };
    let mut cmd = tokio::process::Command::new(exe);
    cmd.arg(guard::GUARD_ARG)
        .arg("--")
        .arg(&program)
        .args(launch.args)
        .env_clear()
        .envs(launch.env)
        .current_dir(launch.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let (lifeline, guard_end) = guard::attach_lifeline(&mut cmd).map_err(SpawnError::Lifeline)?;
    let mut child = cmd.spawn().map_err(|why| SpawnError::Start {
        command: launch.command.to_owned(),
        why,
    })?;
    drop(guard_end);
    let pid = child.id().unwrap_or(0);
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(SpawnError::NoPipes);
    };

    let (frames_tx, mut frames_rx) = mpsc::unbounded_channel::<StdioFrame>();
    let conn = Connection::new(
        launch.server,
        Outbound::Stdio(frames_tx),
        launch.client_caps,
        launch.inbound,
    );

    tokio::spawn(async move {
        while let Some(frame) = frames_rx.recv().await {
            match frame {
                StdioFrame::Line(mut line) => {
                    line.push('\n');
                    if stdin.write_all(line.as_bytes()).await.is_err()
                        || stdin.flush().await.is_err()
                    {
                        break;
                    }
                }
                StdioFrame::CloseStdin => break,
            }
        }
    });

    let stderr_tail = Arc::new(std::sync::Mutex::new(String::new()));
    {
        let tail = stderr_tail.clone();
        tokio::spawn(async move {
            let mut lines = LineReader::new(BufReader::new(stderr), 64 * 1024);
            let mut echo = super::probe_echo::ProbeEcho::default();
            while let Ok(Some(line)) = lines.next_line().await {
                let text = match &line {
                    Line::Complete(b) => String::from_utf8_lossy(b).into_owned(),
                    Line::TooLong { prefix, len } => {
                        format!("{}… ({len} bytes)", String::from_utf8_lossy(prefix))
                    }
                };
                for text in echo.push(text) {
                    on_stderr(&text);
                    *super::connection::lock(&tail) = text;
                }
            }
            for text in echo.finish() {
                on_stderr(&text);
                *super::connection::lock(&tail) = text;
            }
        });
    }

    let (eof_tx, eof_rx) = tokio::sync::oneshot::channel::<()>();
    {
        let conn = conn.clone();
        let limit = launch.max_line;
        tokio::spawn(async move {
            let mut lines = LineReader::new(BufReader::with_capacity(256 * 1024, stdout), limit);
            loop {
                match lines.next_line().await {
                    Ok(Some(Line::Complete(bytes))) => conn.handle_incoming(&bytes),
                    Ok(Some(Line::TooLong { prefix, len })) => {
                        conn.handle_oversize(&prefix, len, limit)
                    }
                    Ok(None) | Err(_) => break,
                }
            }
            let _ = eof_tx.send(());
        });
    }

    {
        let conn = conn.clone();
        tokio::spawn(async move {
            let describe = |status: std::io::Result<std::process::ExitStatus>| {
                let tail = super::connection::lock(&stderr_tail).clone();
                let mut why = match status {
                    Ok(s) => match s.code() {
                        Some(127) => "could not be started".to_owned(),
                        Some(c) => format!("exited with code {c}"),
                        None => format!("was killed ({s})"),
                    },
                    Err(e) => format!("could not be waited for: {e}"),
                };
                if !tail.is_empty() {
                    why.push_str(&format!(" (last stderr: {tail})"));
                }
                why
            };
            tokio::select! {
                status = child.wait() => {
                    // Give the stderr reader a moment to record the last words.
                    tokio::time::sleep(Duration::from_millis(30)).await;
                    conn.close(&format!("server process {}", describe(status)));
                }
                _ = eof_rx => {
                    let status = tokio::time::timeout(Duration::from_secs(1), child.wait()).await;
                    tokio::time::sleep(Duration::from_millis(30)).await;
                    match status {
                        Ok(s) => conn.close(&format!("server process {}", describe(s))),
                        // Still running, but nothing it says can reach loom: a failure like an
                        // exit (the supervisor drops the process, which kills its group).
                        Err(_) => conn.close(
                            "server closed its stdout but kept running, so no reply can reach loom",
                        ),
                    }
                    let _ = child.wait().await;
                }
            }
        });
    }

    Ok((
        conn,
        StdioProcess {
            pid,
            lifeline: Some(lifeline),
        },
    ))
}
