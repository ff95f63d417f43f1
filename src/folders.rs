//! Where loom keeps things on this machine, decided in one place: the per-user data folder
//! (`$XDG_DATA_HOME/loom`, else `~/.local/share/loom`) for memories, parked blobs and SQL
//! history, and the per-user runtime folder (`$XDG_RUNTIME_DIR/loom`, else `/tmp/loom-<uid>`)
//! for session sockets. An empty variable counts as unset, as the XDG specification says.

use std::path::PathBuf;

fn var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// loom's per-user data folder, when the environment names a home at all.
pub fn data_dir() -> Option<PathBuf> {
    var("XDG_DATA_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".local/share")))
        .map(|base| base.join("loom"))
}

/// The effective user id.
pub fn uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// loom's per-user runtime folder (not created here).
pub fn runtime_dir() -> PathBuf {
    match var("XDG_RUNTIME_DIR") {
        Some(d) => d.join("loom"),
        None => PathBuf::from(format!("/tmp/loom-{}", uid())),
    }
}
