//! loom's own log file when the terminal is taken (`loom tui`, `loom attach`): private (0600,
//! created that way), and created only when the first line is written, so a session that logs
//! nothing leaves no empty file behind. It never writes to the terminal.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

/// A log file opened on the first write. A file that cannot be opened is retried on the next
/// write rather than failing the process: the workbench must not die for want of a log.
#[derive(Debug)]
pub struct LazyLogFile {
    path: PathBuf,
    file: Option<File>,
}

impl LazyLogFile {
    pub fn new(path: PathBuf) -> LazyLogFile {
        LazyLogFile { path, file: None }
    }

    fn open(&mut self) -> std::io::Result<&mut File> {
        if self.file.is_none() {
            let f = OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(&self.path)?;
            self.file = Some(f);
        }
        self.file
            .as_mut()
            .ok_or_else(|| std::io::Error::other("log file not open"))
    }
}

impl Write for LazyLogFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        self.open()?.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.file.as_mut() {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn no_file_until_a_line_is_written_then_private() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("loom-1.log");
        let mut log = LazyLogFile::new(path.clone());
        log.flush().expect("flush without a file");
        assert!(!path.exists(), "nothing logged, no file");
        log.write_all(b"WARN something\n").expect("write");
        let meta = std::fs::metadata(&path).expect("created on first write");
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "WARN something\n"
        );
    }
}
