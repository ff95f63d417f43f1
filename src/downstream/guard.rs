//! The process guard: no child outlives loom, not even after `kill -9`.
//!
//! Each stdio server runs under `loom __guard -- CMD ARGS…`, a tiny process that starts the real
//! server in a new process group and holds the read end of a pipe whose write end only loom
//! holds. When loom dies, however it dies, the kernel closes that write end; the guard sees end
//! of file and kills the server's whole process group (so `npx` wrappers and their `node`
//! children go too). The guard forwards SIGTERM/SIGINT/SIGHUP to the group, and kills the group
//! when the server exits, so stragglers never linger. It must never write to stdout.
//!
//! The guard is the child subreaper of everything the server starts: a descendant that
//! double-forks (and perhaps calls `setsid` to leave the group) is re-parented to the guard, not
//! to init, so it stays a descendant of loom (the session socket refuses it) and is killed with
//! the rest: when the guard ends it kills every process below it, one by one, until it has no
//! children left. While it runs it reaps those adopted orphans so none stays a zombie.
//!
//! Once the server runs, the guard lets go of its own copies of the server's stdin and stdout
//! (they become `/dev/null`): the server alone holds them, so a server that closes its stdout
//! is seen by loom as end of file at once, not kept open by the guard.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::os::unix::process::ExitStatusExt;
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
    if let Err(e) = become_subreaper() {
        eprintln!("loom guard: cannot become the subreaper of `{cmd}`: {e}");
        return 1;
    }
    let mut command = std::process::Command::new(cmd);
    command.args(args).process_group(0);
    let child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("loom: cannot start `{cmd}`: {e}");
            return 127;
        }
    };
    let server = child.id() as i32;
    release_server_pipes();
    // The server is waited for below with waitpid(-1), which also reaps adopted orphans.
    drop(child);
    CHILD_PGID.store(server, Ordering::SeqCst);
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
        // loom is gone: everything below the guard goes, and the guard with it.
        kill_descendants(server);
        std::process::exit(137);
    });
    let status = loop {
        let mut raw: libc::c_int = 0;
        // SAFETY: waitpid writes the status of one of our own children into `raw`.
        let pid = unsafe { libc::waitpid(-1, &mut raw, 0) };
        if pid == server {
            break ExitStatus::from_raw(raw);
        }
        if pid < 0 {
            match io::Error::last_os_error().raw_os_error() {
                Some(libc::EINTR) => continue,
                _ => {
                    kill_descendants(server);
                    return 1;
                }
            }
        }
        // An adopted orphan ended; it is reaped, and the wait goes on.
    };
    kill_descendants(server);
    exit_code(status)
}

/// Makes the guard the subreaper of everything the server starts, before the server starts,
/// so no descendant can be orphaned past the guard (Linux). macOS has no subreaper: an orphan
/// goes to launchd, so a descendant that double-forks and leaves the process group with
/// `setsid` escapes the guard there (the README says so); the rest of the group is killed as
/// on Linux, and so is every descendant still linked to the guard by its parents.
fn become_subreaper() -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with integer arguments only.
        if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Points the guard's own stdin and stdout at `/dev/null`, so the pipes to loom are held by the
/// server alone: when it closes its stdout, loom reads end of file.
fn release_server_pipes() {
    // SAFETY: open/dup2/close on descriptors this process owns; nothing else in the guard reads
    // or writes fds 0 and 1.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null < 0 {
            // Without /dev/null, closing is still better than holding the pipes.
            libc::close(0);
            libc::close(1);
            return;
        }
        libc::dup2(null, 0);
        libc::dup2(null, 1);
        libc::close(null);
    }
}

/// Kills the server's process group and then every process below the guard, reaping each, until
/// the guard has no children. Orphans of killed processes are re-parented to the guard (it is
/// their subreaper), so each round finds them; the loop ends when waitpid says there is no child.
fn kill_descendants(server_pgid: i32) {
    let me = std::process::id();
    loop {
        kill_group(server_pgid);
        for pid in descendants_of(me) {
            // SAFETY: plain syscall; ESRCH (already gone) is fine.
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGKILL);
            }
        }
        let mut raw: libc::c_int = 0;
        // SAFETY: reaps one of our own children, blocking until one ends.
        let pid = unsafe { libc::waitpid(-1, &mut raw, 0) };
        if pid < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            // ECHILD: nothing below the guard is left.
            return;
        }
    }
}

/// Every process whose chain of parents reaches `root`, from one listing of the machine's
/// processes. A process that cannot be read is skipped this round; the caller loops until no
/// child is left.
fn descendants_of(root: u32) -> Vec<u32> {
    let parent = parents();
    let mut out = Vec::new();
    for &pid in parent.keys() {
        let mut p = pid;
        for _ in 0..4096 {
            match parent.get(&p) {
                Some(&pp) if pp == root => {
                    out.push(pid);
                    break;
                }
                Some(&pp) if pp > 1 => p = pp,
                _ => break,
            }
        }
    }
    out
}

/// Every process of this machine that can be read now, with its parent: from `/proc` on
/// Linux, from the kernel's process table (`proc_listallpids`, `proc_pidinfo`) on macOS. A
/// process that ended during the listing is simply not there.
pub fn parents() -> std::collections::HashMap<u32, u32> {
    all_pids()
        .into_iter()
        .filter_map(|pid| Some((pid, parent_of(pid).ok()?)))
        .collect()
}

/// The pids of every process of this machine.
#[cfg(target_os = "linux")]
pub fn all_pids() -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .collect()
}

/// The pids of every process of this machine.
#[cfg(target_os = "macos")]
pub fn all_pids() -> Vec<u32> {
    // SAFETY: a null buffer asks for the count; the second call fills a buffer of ours.
    unsafe {
        let n = libc::proc_listallpids(std::ptr::null_mut(), 0);
        if n <= 0 {
            return Vec::new();
        }
        // Room for processes started between the two calls.
        let mut pids = vec![0 as libc::pid_t; n as usize + 64];
        let bytes = (pids.len() * std::mem::size_of::<libc::pid_t>()) as libc::c_int;
        let n = libc::proc_listallpids(pids.as_mut_ptr().cast(), bytes);
        pids.truncate(n.max(0) as usize);
        pids.into_iter()
            .filter(|p| *p > 0)
            .map(|p| p as u32)
            .collect()
    }
}

/// The parent of process `pid`, or why it cannot be read.
#[cfg(target_os = "linux")]
pub fn parent_of(pid: u32) -> Result<u32, String> {
    let stat =
        std::fs::read(format!("/proc/{pid}/stat")).map_err(|e| format!("/proc/{pid}/stat: {e}"))?;
    parent_pid(&stat).ok_or_else(|| format!("/proc/{pid}/stat has no parent pid"))
}

/// The parent of process `pid`, or why it cannot be read.
#[cfg(target_os = "macos")]
pub fn parent_of(pid: u32) -> Result<u32, String> {
    // SAFETY: proc_pidinfo fills a proc_bsdinfo of ours, of the size it is told.
    unsafe {
        let mut info: libc::proc_bsdinfo = std::mem::zeroed();
        let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
        let n = libc::proc_pidinfo(
            pid as libc::c_int,
            libc::PROC_PIDTBSDINFO,
            0,
            (&mut info as *mut libc::proc_bsdinfo).cast(),
            size,
        );
        if n != size {
            return Err(format!("process {pid}: {}", io::Error::last_os_error()));
        }
        Ok(info.pbi_ppid)
    }
}

/// The parent pid in the text of `/proc/<pid>/stat` (after the last `)`, which ends the
/// command name even when the name holds `)` itself).
pub fn parent_pid(stat: &[u8]) -> Option<u32> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(stat.get(close + 1..)?).ok()?;
    rest.split_whitespace().nth(1)?.parse::<u32>().ok()
}

fn exit_code(status: ExitStatus) -> i32 {
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// Makes loom's own process non-dumpable, so processes of the same user (its servers and
/// anything they start) cannot read `/proc/<loom>/environ`, where the tokens `bearer_token_env`
/// names live, nor its memory, nor attach a debugger. The kernel resets the flag at exec, so
/// servers themselves are unaffected. Called first thing in `main`.
///
/// On macOS the same promise rests on `ptrace(PT_DENY_ATTACH)` (no debugger attaches, and
/// `task_for_pid` already needs privileges there), but not on the environment: any process of
/// the user can read another's (`ps -E`), so there a token belongs in `bearer_token_command`,
/// not in loom's environment (the README says so).
pub fn forbid_inspection() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with integer arguments only; failure leaves the default, logged below.
    let failed = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0;
    #[cfg(target_os = "macos")]
    // SAFETY: ptrace of this process with PT_DENY_ATTACH takes no address or data.
    let failed = unsafe { libc::ptrace(libc::PT_DENY_ATTACH, 0, std::ptr::null_mut(), 0) } != 0;
    if failed {
        eprintln!(
            "loom: cannot keep other processes from inspecting loom: {}",
            io::Error::last_os_error()
        );
    }
}

/// The loom side of a guarded child: holding this keeps the child alive; dropping it kills it.
pub struct Lifeline {
    _write: OwnedFd,
}

/// Prepares `command` (which runs `loom __guard -- …`) to receive the lifeline pipe on fd 3.
pub fn attach_lifeline(command: &mut tokio::process::Command) -> io::Result<(Lifeline, OwnedFd)> {
    let (read, write) = cloexec_pipe()?;
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

/// A pipe whose two ends are closed at exec. Linux makes it so atomically (`pipe2`); macOS
/// has no `pipe2`, so the flag is set just after: a server another thread starts in that
/// instant may inherit an end, and holds it only until its own guard ends it with loom.
fn cloexec_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    #[cfg(target_os = "linux")]
    // SAFETY: pipe2 fills two descriptors we then own.
    let made = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == 0;
    #[cfg(not(target_os = "linux"))]
    // SAFETY: pipe fills two descriptors we then own.
    let made = unsafe { libc::pipe(fds.as_mut_ptr()) } == 0;
    if !made {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned here.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    #[cfg(not(target_os = "linux"))]
    for fd in [&read, &write] {
        // SAFETY: fcntl on a descriptor owned here.
        if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok((read, write))
}

/// Sends `sig` to the guard, which forwards it to the server's process group.
pub fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: plain syscall on a pid we spawned.
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

#[cfg(test)]
mod tests {
    use super::parent_pid;

    #[test]
    fn the_parent_pid_is_read_after_the_last_parenthesis() {
        assert_eq!(parent_pid(b"42 (a) b) S 7 42 42 0"), Some(7));
        assert_eq!(parent_pid(b"42 (sleep) S 1 42"), Some(1));
        assert_eq!(parent_pid(b"42 (no close S 1"), None);
        assert_eq!(parent_pid(b"42 (x) S"), None);
        assert_eq!(parent_pid(b"42 (x) S \xff"), None);
    }
}
