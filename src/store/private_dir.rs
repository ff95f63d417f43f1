//! Loom's private temporary folder, where the engine spills: 0700, removed on exit. A loom
//! killed by a signal it cannot catch leaves its folder behind, spill files and all, so every
//! folder holds a lock file its process keeps locked for life, and each store that opens
//! removes the folders whose lock the kernel hands out: their owner is gone, whatever pid
//! namespace it lived in and whichever pid it had.

use std::fs::File;
use std::path::{Path, PathBuf};

/// What every private folder's name starts with.
const PREFIX: &str = "loom-store-";
/// The lock file inside a folder; it appears only once locked.
const LOCK: &str = "owner.lock";

/// A private folder that lives as long as its owner; dropped, it is removed.
#[derive(Debug)]
pub struct PrivateDir {
    // Field order matters: the folder is removed before the lock is let go, so no sweeper
    // ever removes a folder that is still being torn down by its owner.
    dir: tempfile::TempDir,
    _lock: File,
}

impl PrivateDir {
    /// Creates a private folder in the system's temporary folder, after removing those whose
    /// owners are gone.
    pub fn create() -> std::io::Result<PrivateDir> {
        let parent = std::env::temp_dir();
        let removed = sweep(&parent);
        if removed > 0 {
            tracing::info!(
                removed,
                "removed private folders left by loom processes that were killed"
            );
        }
        create_in(&parent)
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Creates a locked private folder in `parent`. The lock file is made and locked under another
/// name and then renamed into place, so a sweeper never sees an unlocked `owner.lock`.
fn create_in(parent: &Path) -> std::io::Result<PrivateDir> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix(PREFIX)
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(parent)?;
    let staging = dir.path().join(format!("{LOCK}.new"));
    let lock = File::options()
        .write(true)
        .create_new(true)
        .open(&staging)?;
    lock.try_lock().map_err(std::io::Error::other)?;
    std::fs::rename(&staging, dir.path().join(LOCK))?;
    Ok(PrivateDir { dir, _lock: lock })
}

/// The folders in `parent` that look like loom's and belong to this user.
fn candidates(parent: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    let uid = crate::folders::uid();
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(PREFIX))
        .filter(|e| {
            // Not followed: a symlink named like a folder of ours is never a candidate.
            std::fs::symlink_metadata(e.path()).is_ok_and(|m| m.is_dir() && m.uid() == uid)
        })
        .map(|e| e.path())
        .collect()
}

/// Removes the folders in `parent` whose owner is gone: those whose lock file this process can
/// lock. A folder without a lock file, or one that cannot be opened, is left alone. Returns how
/// many were removed.
fn sweep(parent: &Path) -> usize {
    let mut removed = 0;
    for dir in candidates(parent) {
        let Ok(lock) = File::open(dir.join(LOCK)) else {
            continue;
        };
        if lock.try_lock().is_err() {
            continue;
        }
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => removed += 1,
            Err(e) => tracing::warn!(
                folder = %dir.display(),
                error = %e,
                "cannot remove a private folder left by a killed loom"
            ),
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_folder_is_kept_and_an_abandoned_one_is_removed() {
        let parent = tempfile::tempdir().unwrap();
        let live = create_in(parent.path()).unwrap();
        assert!(live.path().join(LOCK).is_file());
        let abandoned = create_in(parent.path()).unwrap();
        // An owner killed by SIGKILL: its folder stays, its lock is let go by the kernel.
        let PrivateDir { dir, _lock } = abandoned;
        let left = dir.keep();
        drop(_lock);
        std::fs::write(left.join("spill.tmp"), vec![0u8; 4096]).unwrap();
        // Neither a folder without a lock nor another name is touched.
        let foreign = parent.path().join(format!("{PREFIX}foreign"));
        std::fs::create_dir(&foreign).unwrap();
        let other = parent.path().join("loom-0");
        std::fs::create_dir(&other).unwrap();
        std::fs::File::create(other.join(LOCK)).unwrap();

        assert_eq!(sweep(parent.path()), 1);
        assert!(!left.exists());
        assert!(live.path().join(LOCK).is_file());
        assert!(foreign.is_dir() && other.is_dir());
        assert_eq!(sweep(parent.path()), 0);

        let kept = live.path().to_path_buf();
        drop(live);
        assert!(!kept.exists());
    }

    #[test]
    fn a_symlink_named_like_a_folder_is_never_followed() {
        let parent = tempfile::tempdir().unwrap();
        let target = tempfile::tempdir().unwrap();
        std::fs::File::create(target.path().join(LOCK)).unwrap();
        std::os::unix::fs::symlink(target.path(), parent.path().join(format!("{PREFIX}link")))
            .unwrap();
        assert_eq!(sweep(parent.path()), 0);
        assert!(target.path().join(LOCK).is_file());
    }
}
