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
//! end, and its inode), then among the descriptors (`/proc/PID/fd`) of every process in the
//! tree. Whatever cannot be decided (a socket the kernel does not list, one no process holds
//! any more, a process of the tree whose descriptors cannot be read) is [`Ancestry::Unknown`],
//! and callers refuse it. This module only reads `/proc`; it never signals or changes a process.

use crate::config::is_loopback;
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

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
        let stat = match std::fs::read(format!("/proc/{p}/stat")) {
            Ok(s) => s,
            Err(e) => return Ancestry::Unknown(format!("/proc/{p}/stat: {e}")),
        };
        match crate::downstream::guard::parent_pid(&stat) {
            Some(ppid) => p = ppid,
            None => return Ancestry::Unknown(format!("/proc/{p}/stat has no parent pid")),
        }
    }
    Ancestry::Unknown("the parent chain does not end".into())
}

/// One row of `/proc/net/tcp{,6}`: a socket's two ends and its inode (0 when no process holds
/// it any more).
#[derive(Debug, Clone, PartialEq, Eq)]
struct TcpRow {
    local: SocketAddr,
    remote: SocketAddr,
    inode: u64,
}

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

/// The inode of the peer's socket of the connection whose ends are `local` (ours) and `remote`
/// (the peer's), when the peer is on this machine; `None` when the kernel lists no such socket.
fn peer_socket(local: SocketAddr, remote: SocketAddr) -> std::io::Result<Option<u64>> {
    let (local, remote) = (canonical(local), canonical(remote));
    let mut read_any = false;
    let mut found = None;
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
            found = Some(row.inode);
            break;
        }
    }
    if !read_any {
        return Err(std::io::Error::other("/proc/net/tcp cannot be read"));
    }
    Ok(found)
}

/// Every process of this machine, split into `root`'s tree (`root` first, then each
/// descendant with whether it is `root`'s own child) and the rest, from one scan of /proc.
struct Processes {
    tree: Vec<(u32, bool)>,
    others: Vec<u32>,
}

fn processes(root: u32) -> std::io::Result<Processes> {
    let mut parent = HashMap::new();
    for e in std::fs::read_dir("/proc")?.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        // A process that ended during the scan is simply not there.
        if let Ok(stat) = std::fs::read(format!("/proc/{pid}/stat"))
            && let Some(ppid) = crate::downstream::guard::parent_pid(&stat)
        {
            parent.insert(pid, ppid);
        }
    }
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

/// Whether process `pid` holds the socket `inode`; an error when its descriptors cannot be
/// read (a process that has just ended holds nothing).
fn holds(pid: u32, inode: u64) -> Result<bool, String> {
    let dir = match std::fs::read_dir(format!("/proc/{pid}/fd")) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(format!("the descriptors of process {pid} ({e})")),
    };
    let want = format!("socket:[{inode}]");
    Ok(dir
        .flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == want.as_str())))
}

/// Where the process at the other end of a TCP connection stands relative to `root` (this
/// session's process): `local` is the connection's end in this process, `remote` the peer's.
/// A peer on another machine is `Unrelated`; a peer on this one is looked for by its socket's
/// inode among the descriptors of `root`'s tree.
///
/// A process of the tree whose descriptors cannot be read (one that made itself non-dumpable,
/// or runs a set-user-id program) could be the peer; the peer is then `Unrelated` only when it
/// is found in a process outside the tree. `root`'s own children are the exception: loom
/// started them itself (the guards of its servers, its seal self-test), they are non-dumpable
/// as loom is, and orphans are never re-parented to `root` (each server's guard is their
/// subreaper), so what they hold is what loom gave them.
pub fn tcp_peer(local: SocketAddr, remote: SocketAddr, root: u32) -> Ancestry {
    let inode = match peer_socket(local, remote) {
        Ok(Some(inode)) => inode,
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
        match holds(pid, inode) {
            Ok(true) => return Ancestry::Descendant,
            Ok(false) => {}
            Err(_) if own_child => {}
            Err(why) => unreadable = Some(why),
        }
    }
    let Some(why) = unreadable else {
        return Ancestry::Unrelated;
    };
    if all.others.iter().any(|&pid| holds(pid, inode) == Ok(true)) {
        return Ancestry::Unrelated;
    }
    Ancestry::Unknown(format!(
        "the peer's socket is in no process loom can inspect, and loom cannot read {why}, a process of this session"
    ))
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

#[cfg(test)]
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

    /// The invariant, by the shape of the process holding the other end: it is placed as its
    /// parent links place it, whoever made the connection's socket.
    #[test]
    fn the_peer_of_a_connection_is_placed_as_the_process_holding_it_is() {
        use std::io::Read;
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
            let mut holder = std::process::Command::new("bash")
                .args(["-c", script])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let mut connected = [0u8; 1];
            holder
                .stdout
                .as_mut()
                .unwrap()
                .read_exact(&mut connected)
                .unwrap();
            let (server, remote) = listener.accept().unwrap();
            let local = server.local_addr().unwrap();
            assert_eq!(tcp_peer(local, remote, root), want, "{shape}");
            let _ = holder.kill();
            let _ = holder.wait();
        }
        let _ = sibling.kill();
        let _ = sibling.wait();
    }

    proptest! {
        #[test]
        fn proc_tables_never_panic_the_reader(text in ".{0,400}", a in any::<String>()) {
            let _ = tcp_rows(&text);
            let _ = proc_addr(&a);
            let _ = tcp_rows(&format!("header\n   0: {a} {a} 01 0 0 0 1000 0 {a}\n"));
        }
    }
}
