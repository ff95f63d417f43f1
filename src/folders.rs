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

/// Writes `bytes` to `path` through a uniquely named temporary file in `dir` (`tempfile` creates
/// it 0600 with `O_EXCL`; its name starts with `prefix`), renamed over `path` once complete: no
/// one else can read it at any moment, and a crash leaves the old file or the new one, never half.
pub fn write_private(
    dir: &std::path::Path,
    path: &std::path::Path,
    prefix: &str,
    bytes: &[u8],
) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let mut tmp = tempfile::Builder::new()
        .prefix(prefix)
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o600))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_data()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Creates `dir` and any missing parents readable by the user only (0700, by `mkdir`'s own
/// mode, so no moment exists at which another user can list them), as the README promises of
/// every folder loom makes; a folder that already exists is left as it is (it may be one the
/// user made, with the mode they chose).
pub fn create_private_dirs(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
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
