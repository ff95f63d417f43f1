//! The process guard: no child outlives loom, not even after `kill -9`.
//!
//! Each stdio server runs under `loom __guard -- CMD ARGS…`, a tiny process that starts the real
//! server in a new process group and holds the read end of a pipe whose write end only loom
//! holds. When loom dies, however it dies, the kernel closes that write end; the guard sees end
//! of file and kills the server's whole process group (so `npx` wrappers and their `node`
//! children go too). The guard forwards SIGTERM/SIGINT/SIGHUP to the group, and kills the group
//! when the server exits, so stragglers never linger. It must never write to stdout.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicI32, Ordering};

/// The descriptor the guard finds its lifeline pipe on.
const LIFELINE_FD: RawFd = 3;
pub const GUARD_ARG: &str = "__guard";

static CHILD_PGID: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward_signal(sig: libc::c_int) {
    let pgid = CHILD_PGID.load(Ordering::SeqCst);
    if pgid > 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe {
            libc::kill(-pgid, sig);
        }
    }
}

fn kill_group(pgid: i32) {
    if pgid > 0 {
        // SAFETY: plain syscall; ESRCH (group already gone) is fine.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

/// Entry point of `loom __guard -- CMD ARGS…`; returns the exit code.
pub fn run_guard(argv: &[String]) -> i32 {
    let Some((cmd, args)) = argv.split_first() else {
        eprintln!("loom guard: no command given");
        return 2;
    };
    let mut command = std::process::Command::new(cmd);
    command.args(args).process_group(0);
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("loom: cannot start `{cmd}`: {e}");
            return 127;
        }
    };
    let pgid = child.id() as i32;
    CHILD_PGID.store(pgid, Ordering::SeqCst);
    // SAFETY: installing a handler that only calls kill(2).
    unsafe {
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::signal(sig, forward_signal as *const () as libc::sighandler_t);
        }
    }
    std::thread::spawn(move || {
        // SAFETY: fd 3 was placed here by loom for this purpose and nobody else uses it.
        let mut buf = [0u8; 16];
        loop {
            let n = unsafe { libc::read(LIFELINE_FD, buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            if n <= 0 {
                break;
            }
        }
        kill_group(pgid);
    });
    let status = loop {
        match child.wait() {
            Ok(s) => break s,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => {
                kill_group(pgid);
                return 1;
            }
        }
    };
    kill_group(pgid);
    exit_code(status)
}

fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// The loom side of a guarded child: holding this keeps the child alive; dropping it kills it.
pub struct Lifeline {
    _write: OwnedFd,
}

/// Prepares `command` (which runs `loom __guard -- …`) to receive the lifeline pipe on fd 3.
pub fn attach_lifeline(command: &mut tokio::process::Command) -> io::Result<(Lifeline, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 fills two descriptors we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned here.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let read_fd = read.as_raw_fd();
    // SAFETY: only async-signal-safe calls (dup2, fcntl) between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if read_fd == LIFELINE_FD {
                let flags = libc::fcntl(read_fd, libc::F_GETFD);
                if flags < 0 || libc::fcntl(read_fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0 {
                    return Err(io::Error::last_os_error());
                }
            } else if libc::dup2(read_fd, LIFELINE_FD) < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok((Lifeline { _write: write }, read))
}

/// Sends `sig` to the guard, which forwards it to the server's process group.
pub fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: plain syscall on a pid we spawned.
    unsafe {
        libc::kill(pid as i32, sig);
    }
}
