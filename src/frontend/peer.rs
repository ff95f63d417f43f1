//! Who is on the other end of a local connection, and whether this session started it. The
//! session socket and the HTTP surface refuse loom's own process tree (its servers and
//! everything they start): a server may not call the other servers' tools, approve calls or
//! read datasets as a client. Each stdio server runs under a guard that is its subreaper, so a
//! descendant that double-forks or calls `setsid` is re-parented to the guard and stays in the
//! tree; the parent links in `/proc` are the whole answer.
//!
//! A Unix socket names its peer's pid in the kernel's credentials. A TCP connection does not:
//! its peer, when it is on this machine, is found from the kernel's socket tables
//! (`/proc/net/tcp`, `/proc/net/tcp6`: the socket whose local end is the connection's remote
//! end, and its inode), then among the descriptor tables of every thread (`/proc/PID/task/TID/fd`)
//! of every process in the tree, and, when none holds it, of the processes outside. A peer is
//! placed only where its socket is found: whatever cannot be decided (a socket the kernel does
//! not list, one no process holds while loom looks, one held only where loom cannot look) is
//! [`Ancestry::Unknown`], and callers refuse it. This module only reads `/proc`; it never
//! signals or changes a process.

use crate::config::is_loopback;
#[cfg(target_os = "linux")]
use std::collections::HashMap;
use std::net::SocketAddr;
#[cfg(target_os = "linux")]
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Where a connecting process stands relative to this session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ancestry {
    /// Neither this process nor started by it.
    Unrelated,
    /// This process or one it started (directly or further down).
    Descendant,
    /// The kernel's answer could not be read or does not decide; callers refuse.
    Unknown(String),
}

/// Whether `pid` is `ancestor` or one of its descendants, by the parent links in /proc. A link
/// that cannot be read or parsed, or a chain longer than any real one, is `Unknown`.
pub fn ancestry(pid: u32, ancestor: u32) -> Ancestry {
    let mut p = pid;
    for _ in 0..4096 {
        if p == ancestor {
            return Ancestry::Descendant;
        }
        if p <= 1 {
            return Ancestry::Unrelated;
        }
        match crate::downstream::guard::parent_of(p) {
            Ok(ppid) => p = ppid,
            Err(why) => return Ancestry::Unknown(why),
        }
    }
    Ancestry::Unknown("the parent chain does not end".into())
}

#[cfg(target_os = "linux")]
/// One row of `/proc/net/tcp{,6}`: a socket's two ends and its inode (0 when no process holds
/// it any more).
#[derive(Debug, Clone, PartialEq, Eq)]
struct TcpRow {
    local: SocketAddr,
    remote: SocketAddr,
    inode: u64,
}

#[cfg(target_os = "linux")]
/// An address as `/proc/net/tcp{,6}` prints it: the address's 32-bit words in hex, each in the
/// machine's byte order, a colon, then the port in hex.
fn proc_addr(text: &str) -> Option<SocketAddr> {
    let (ip, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        let hex = ip.get(i * 8..i * 8 + 8)?;
        Some(u32::from_str_radix(hex, 16).ok()?.to_ne_bytes())
    };
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for i in 0..4 {
                bytes[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip.to_canonical(), port))
}

#[cfg(target_os = "linux")]
/// The rows of one `/proc/net/tcp{,6}` text; lines that do not parse are skipped.
fn tcp_rows(text: &str) -> Vec<TcpRow> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            Some(TcpRow {
                local: proc_addr(f.get(1)?)?,
                remote: proc_addr(f.get(2)?)?,
                inode: f.get(9)?.parse().ok()?,
            })
        })
        .collect()
}

fn canonical(a: SocketAddr) -> SocketAddr {
    SocketAddr::new(a.ip().to_canonical(), a.port())
}

#[cfg(target_os = "linux")]
/// The peer's socket of the connection whose ends are `local` (ours) and `remote` (the
/// peer's), when the peer is on this machine; `None` when the kernel lists no such socket.
fn peer_socket(local: SocketAddr, remote: SocketAddr) -> std::io::Result<Option<TcpRow>> {
    let (local, remote) = (canonical(local), canonical(remote));
    let mut read_any = false;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        // A kernel without IPv6 has no tcp6 table; one table read is enough to answer.
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        read_any = true;
        if let Some(row) = tcp_rows(&text)
            .into_iter()
            .find(|r| r.local == remote && r.remote == local)
        {
            return Ok(Some(row));
        }
    }
    if !read_any {
        return Err(std::io::Error::other("/proc/net/tcp cannot be read"));
    }
    Ok(None)
}

#[cfg(target_os = "linux")]
/// Every process of this machine, split into `root`'s tree (`root` first, then each
/// descendant with whether it is `root`'s own child) and the rest, from one scan of /proc.
struct Processes {
    tree: Vec<(u32, bool)>,
    others: Vec<u32>,
}

#[cfg(target_os = "linux")]
fn processes(root: u32) -> std::io::Result<Processes> {
    std::fs::read_dir("/proc")?;
    let parent: HashMap<u32, u32> = crate::downstream::guard::parents();
    let mut tree = vec![(root, false)];
    let mut others = Vec::new();
    for (&pid, &ppid) in &parent {
        if pid == root {
            continue;
        }
        let mut p = pid;
        let mut inside = false;
        for _ in 0..4096 {
            match parent.get(&p) {
                Some(&pp) if pp == root => {
                    inside = true;
                    break;
                }
                Some(&pp) if pp > 1 => p = pp,
                _ => break,
            }
        }
        if inside {
            tree.push((pid, ppid == root));
        } else {
            others.push(pid);
        }
    }
    Ok(Processes { tree, others })
}

#[cfg(target_os = "linux")]
/// Whether the descriptor table at `dir` (a `/proc/.../fd`) holds the socket `inode`; an
/// error when it cannot be read (one that has just gone holds nothing).
fn table_holds(dir: &str, inode: u64) -> Result<bool, String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(format!("{dir} ({e})")),
    };
    let want = format!("socket:[{inode}]");
    Ok(entries
        .flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == want.as_str())))
}

#[cfg(target_os = "linux")]
/// Whether any thread of process `pid` holds the socket `inode`. A thread can have a
/// descriptor table of its own (`unshare(CLONE_FILES)`), seen only at
/// `/proc/PID/task/TID/fd`; `leader_only` reads just the process's own table (a fast first
/// pass, for processes where finding it is the point, not missing it).
fn holds(pid: u32, inode: u64, leader_only: bool) -> Result<bool, String> {
    if table_holds(&format!("/proc/{pid}/fd"), inode)? {
        return Ok(true);
    }
    if leader_only {
        return Ok(false);
    }
    let tasks = match std::fs::read_dir(format!("/proc/{pid}/task")) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(format!("the threads of process {pid} ({e})")),
    };
    for task in tasks.flatten() {
        let Some(tid) = task
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if tid != pid && table_holds(&format!("/proc/{pid}/task/{tid}/fd"), inode)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Where the process at the other end of a TCP connection stands relative to `root` (this
/// session's process): `local` is the connection's end in this process, `remote` the peer's.
/// A peer on another machine is `Unrelated`. A peer on this one is placed only from what is
/// found, never from what is not:
///
/// - its socket held by any thread of a process of `root`'s tree is `Descendant`;
/// - otherwise, held by a process outside the tree (whose parent links, read again, still
///   place it outside: a pid reused by a new process of the tree does not count), it is
///   `Unrelated`;
/// - anything else is `Unknown`: a socket no process holds while loom looks (one parked in
///   flight over `SCM_RIGHTS`), one held only where loom cannot look (a process of another
///   user, when loom is not root), tables that cannot be read.
///
/// A process of the tree whose descriptors cannot be read (one that made itself non-dumpable,
/// or runs a set-user-id program) could be the peer, so it is an error unless the socket is
/// found outside. `root`'s own children are the exception: loom started them itself (the
/// guards of its servers, its seal self-test), they are non-dumpable as loom is, and orphans
/// are never re-parented to `root` (each server's guard is their subreaper), so what they hold
/// is what loom gave them.
#[cfg(target_os = "linux")]
pub fn tcp_peer(local: SocketAddr, remote: SocketAddr, root: u32) -> Ancestry {
    let inode = match peer_socket(local, remote) {
        Ok(Some(row)) => row.inode,
        // A local peer is always listed while it is connected: unlisted, it is elsewhere,
        // unless its address says it is here (then it vanished, and cannot be told apart).
        Ok(None) if !is_loopback(remote.ip()) && remote.ip() != local.ip() => {
            return Ancestry::Unrelated;
        }
        Ok(None) => return Ancestry::Unknown("the kernel lists no socket for the peer".into()),
        Err(e) => return Ancestry::Unknown(e.to_string()),
    };
    if inode == 0 {
        return Ancestry::Unknown("no process holds the peer's socket any more".into());
    }
    let all = match processes(root) {
        Ok(p) => p,
        Err(e) => return Ancestry::Unknown(format!("/proc: {e}")),
    };
    let mut unreadable = None;
    for &(pid, own_child) in &all.tree {
        match holds(pid, inode, false) {
            Ok(true) => return Ancestry::Descendant,
            Ok(false) => {}
            Err(_) if own_child => {}
            Err(why) => unreadable = Some(why),
        }
    }
    // Found outside: most clients hold their socket in their own table, so that is read first
    // for every process, and threads' tables only when it was found in none.
    let outside = |leader_only: bool| {
        all.others.iter().any(|&pid| {
            holds(pid, inode, leader_only) == Ok(true) && ancestry(pid, root) == Ancestry::Unrelated
        })
    };
    if outside(true) || outside(false) {
        return Ancestry::Unrelated;
    }
    Ancestry::Unknown(match unreadable {
        Some(why) => format!(
            "the peer's socket is in no process loom can inspect, and loom cannot read {why}, of a process of this session"
        ),
        None => "no process loom can inspect holds the peer's socket".into(),
    })
}

/// Where the process at the other end of a TCP connection stands relative to `root`, on macOS:
/// a peer on another machine is `Unrelated`; one on this machine is placed by
/// [`tcp_peer_by_lsof`] (macOS threads share their process's descriptor table, so a process's
/// sockets are all its threads').
#[cfg(not(target_os = "linux"))]
pub fn tcp_peer(local: SocketAddr, remote: SocketAddr, root: u32) -> Ancestry {
    if !is_loopback(remote.ip()) && remote.ip() != local.ip() {
        return Ancestry::Unrelated;
    }
    tcp_peer_by_lsof(local, remote, root)
}

/// The system's `lsof`, by its absolute path (never looked up on `PATH`, which a server could
/// put a program of its own on).
const LSOF: [&str; 2] = ["/usr/sbin/lsof", "/usr/bin/lsof"];

/// Places a local TCP peer from the processes `lsof` finds holding its socket (on macOS, the
/// kernel's answer through libproc): the socket whose name is `remote->local`. Held by a
/// process of `root`'s tree, the peer is `Descendant`; held only by processes outside it (their
/// parent links read again), `Unrelated`; held by nobody loom can see (a socket in flight, a
/// process of another user), or when `lsof` cannot answer, `Unknown`. Linux places peers from
/// `/proc` itself; a test holds this to the same answers there.
pub fn tcp_peer_by_lsof(local: SocketAddr, remote: SocketAddr, root: u32) -> Ancestry {
    let Some(lsof) = LSOF.iter().find(|p| std::path::Path::new(p).exists()) else {
        return Ancestry::Unknown(
            "lsof, which loom places local peers with here, is missing".into(),
        );
    };
    let (local, remote) = (canonical(local), canonical(remote));
    let out = match std::process::Command::new(lsof)
        .args(["-nP", "-w", "-F", "pn"])
        .arg(format!("-iTCP@{}", remote))
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
    {
        Ok(o) => o,
        Err(e) => return Ancestry::Unknown(format!("lsof did not run: {e}")),
    };
    let holders = lsof_holders(
        &String::from_utf8_lossy(&out.stdout),
        &format!("{remote}->{local}"),
    );
    let mut outside = false;
    let mut unknown = None;
    for pid in holders {
        match ancestry(pid, root) {
            Ancestry::Descendant => return Ancestry::Descendant,
            Ancestry::Unrelated => outside = true,
            Ancestry::Unknown(why) => unknown = Some(why),
        }
    }
    match (outside, unknown) {
        (true, None) => Ancestry::Unrelated,
        (_, Some(why)) => Ancestry::Unknown(format!("a process holding the peer's socket: {why}")),
        (false, None) => {
            Ancestry::Unknown("no process loom can inspect holds the peer's socket".into())
        }
    }
}

/// The pids of `lsof -F pn` output whose open files include one named `name` exactly.
fn lsof_holders(text: &str, name: &str) -> Vec<u32> {
    let mut pid = None;
    let mut found = Vec::new();
    for line in text.lines() {
        if let Some(p) = line.strip_prefix('p') {
            pid = p.parse::<u32>().ok();
        } else if line.strip_prefix('n') == Some(name)
            && let Some(p) = pid
            && !found.contains(&p)
        {
            found.push(p);
        }
    }
    found
}

/// What a surface (`"socket"`, `"HTTP surface"`) answers a peer that may not use it, in
/// words; `None` lets it in.
pub fn refusal(ancestry: Ancestry, surface: &str) -> Option<String> {
    match ancestry {
        Ancestry::Unrelated => None,
        Ancestry::Descendant => Some(format!(
            "refused: processes this session started (its servers) may not use its {surface}"
        )),
        Ancestry::Unknown(what) => Some(format!(
            "refused: cannot tell whether the connecting process was started by this session ({what})"
        )),
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn proc_addresses_read_in_the_machines_byte_order() {
        let v4 = u32::from_ne_bytes([127, 0, 0, 1]);
        let text = format!("{v4:08X}:1CA3");
        assert_eq!(proc_addr(&text), Some("127.0.0.1:7331".parse().unwrap()));
        // An IPv4-mapped address in tcp6 is the IPv4 address.
        let words = [0u32, 0, u32::from_ne_bytes([0, 0, 0xff, 0xff]), v4];
        let text: String = words.iter().map(|w| format!("{w:08X}")).collect();
        assert_eq!(
            proc_addr(&format!("{text}:0050")),
            Some("127.0.0.1:80".parse().unwrap())
        );
        let one = u32::from_ne_bytes([0, 0, 0, 1]);
        let text = format!("000000000000000000000000{one:08X}:0050");
        assert_eq!(proc_addr(&text), Some("[::1]:80".parse().unwrap()));
        for bad in ["", ":", "0100007F", "0100007F:", "0100007G:0050", "01:0050"] {
            assert_eq!(proc_addr(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_child_descends_from_its_parent_and_not_the_other_way() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("spawn sleep");
        let me = std::process::id();
        assert_eq!(ancestry(child.id(), me), Ancestry::Descendant);
        assert_eq!(ancestry(me, me), Ancestry::Descendant);
        assert_eq!(ancestry(me, child.id()), Ancestry::Unrelated);
        let _ = child.kill();
        let _ = child.wait();
    }

    #[test]
    fn an_unreadable_parent_chain_is_unknown_not_unrelated() {
        // A pid above the kernel's limit never exists: its /proc entry cannot be read.
        let gone = u32::MAX - 1;
        assert!(matches!(
            ancestry(gone, std::process::id()),
            Ancestry::Unknown(_)
        ));
    }

    #[test]
    fn a_peer_in_this_process_is_found_and_one_elsewhere_is_not() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, remote) = listener.accept().unwrap();
        let local = server.local_addr().unwrap();
        let me = std::process::id();
        assert_eq!(tcp_peer(local, remote, me), Ancestry::Descendant);
        // A root whose tree does not hold the peer's socket: a sleeping child of ours.
        let mut other = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        assert_eq!(tcp_peer(local, remote, other.id()), Ancestry::Unrelated);
        // A loopback peer the kernel does not list (its port is made up) is not decided.
        let made_up = SocketAddr::new(remote.ip(), 1);
        assert!(matches!(tcp_peer(local, made_up, me), Ancestry::Unknown(_)));
        drop(client);
        let _ = other.kill();
        let _ = other.wait();
    }

    /// Runs `holder`, which connects to `listener` and then writes one byte to its stdout;
    /// the process, and the connection's ends as accepted here (ours, the peer's).
    fn connected(
        listener: &std::net::TcpListener,
        holder: &mut std::process::Command,
    ) -> (std::process::Child, SocketAddr, SocketAddr) {
        use std::io::Read;
        let mut holder = holder
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("the holder runs");
        let mut byte = [0u8; 1];
        holder
            .stdout
            .as_mut()
            .unwrap()
            .read_exact(&mut byte)
            .unwrap();
        let (server, remote) = listener.accept().unwrap();
        (holder, server.local_addr().unwrap(), remote)
    }

    /// The invariant, by the shape of the process holding the other end: it is placed as its
    /// parent links place it, whoever made the connection's socket; and the `lsof` placement
    /// (macOS's) gives the same answers as the `/proc` one.
    #[test]
    fn the_peer_of_a_connection_is_placed_as_the_process_holding_it_is() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let me = std::process::id();
        let mut sibling = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port}; echo x; exec sleep 10");
        let in_child = format!("bash -c '{connect}'; :");
        let shapes: [(&str, &str, u32, Ancestry); 4] = [
            ("a child", &connect, me, Ancestry::Descendant),
            ("a grandchild", &in_child, me, Ancestry::Descendant),
            (
                "a child, for another root",
                &connect,
                sibling.id(),
                Ancestry::Unrelated,
            ),
            (
                "a grandchild, for another root",
                &in_child,
                sibling.id(),
                Ancestry::Unrelated,
            ),
        ];
        for (shape, script, root, want) in shapes {
            let (mut holder, local, remote) = connected(
                &listener,
                std::process::Command::new("bash").args(["-c", script]),
            );
            assert_eq!(tcp_peer(local, remote, root), want, "{shape}");
            assert_eq!(
                tcp_peer_by_lsof(local, remote, root),
                want,
                "{shape}, by lsof"
            );
            let _ = holder.kill();
            let _ = holder.wait();
        }
        let _ = sibling.kill();
        let _ = sibling.wait();
    }

    /// The attacker pass's two walks around the check (issue 45, F1), from a child of this
    /// process: a thread with a descriptor table of its own connects, or the socket is parked
    /// in flight over `SCM_RIGHTS` while loom looks. The first is found where it is; the second
    /// is held by nobody, and nobody is never an outside peer.
    #[test]
    fn a_socket_in_a_threads_own_table_or_in_flight_is_never_taken_for_an_outside_peer() {
        const CONNECT: &str = r#"
import ctypes, socket, sys, threading, time
port, how = int(sys.argv[1]), sys.argv[2]
def run():
    if how == "thread":
        assert ctypes.CDLL(None, use_errno=True).unshare(0x400) == 0  # CLONE_FILES
    s = socket.create_connection(("127.0.0.1", port))
    if how == "parked":
        a, b = socket.socketpair()
        socket.send_fds(a, [b"x"], [s.fileno()])
        s.close()
    sys.stdout.write("x"); sys.stdout.flush()
    time.sleep(10)
t = threading.Thread(target=run); t.start(); t.join()
"#;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port().to_string();
        let me = std::process::id();
        let mut sibling = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        for (how, root, want) in [
            ("thread", me, Some(Ancestry::Descendant)),
            // Held by a thread of a process outside the root's tree: found, so placed.
            ("thread", sibling.id(), Some(Ancestry::Unrelated)),
            ("parked", me, None),
            ("parked", sibling.id(), None),
        ] {
            let (mut holder, local, remote) = connected(
                &listener,
                std::process::Command::new("python3").args(["-c", CONNECT, &port, how]),
            );
            let got = tcp_peer(local, remote, root);
            match want {
                Some(want) => assert_eq!(got, want, "{how}"),
                None => assert!(matches!(got, Ancestry::Unknown(_)), "{how}: {got:?}"),
            }
            let _ = holder.kill();
            let _ = holder.wait();
        }
        let _ = sibling.kill();
        let _ = sibling.wait();
    }

    /// The `lsof` placement finds a peer in this very process, and its reader takes the pid
    /// of the one file named as the peer's socket, nothing else.
    #[test]
    fn lsof_finds_a_peer_here_and_reads_only_the_named_socket() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let me = std::process::id();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, remote) = listener.accept().unwrap();
        let local = server.local_addr().unwrap();
        assert_eq!(tcp_peer_by_lsof(local, remote, me), Ancestry::Descendant);
        drop(client);
        assert_eq!(
            lsof_holders(
                "p12\nf3\nn127.0.0.1:5->127.0.0.1:7\np13\nn127.0.0.1:7->127.0.0.1:5\n",
                "127.0.0.1:5->127.0.0.1:7"
            ),
            vec![12]
        );
        assert!(
            lsof_holders(
                "n127.0.0.1:5->127.0.0.1:7\npx\n",
                "127.0.0.1:5->127.0.0.1:7"
            )
            .is_empty()
        );
    }

    proptest! {
        #[test]
        fn lsof_output_never_panics_the_reader_and_names_only_its_own_pids(
            text in "([pfn][0-9a-z:.>-]{0,12}\n){0,20}",
            name in "[0-9a-z:.>-]{0,12}",
        ) {
            for pid in lsof_holders(&text, &name) {
                let line = format!("p{pid}");
                prop_assert!(text.lines().any(|l| l == line || l.strip_prefix('p').and_then(|p| p.parse::<u32>().ok()) == Some(pid)));
            }
        }

        #[test]
        fn proc_tables_never_panic_the_reader(text in ".{0,400}", a in any::<String>()) {
            let _ = tcp_rows(&text);
            let _ = proc_addr(&a);
            let _ = tcp_rows(&format!("header\n   0: {a} {a} 01 0 0 0 1000 0 {a}\n"));
        }
    }
}
