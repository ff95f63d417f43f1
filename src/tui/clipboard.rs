//! Copying text out of the workbench. The chain is the system clipboard (one `arboard`
//! instance, created on the first copy and kept for the app's lifetime, because on X11 and
//! Wayland the copying process itself serves the data), then an OSC 52 escape sequence to the
//! terminal (works over ssh and in tmux with `set-clipboard on`), then loom's own register.
//! Every copy also lands in the register, and the caller learns which backend took the text so
//! the status line can say so honestly. Copied text is written by others (cells, tool results),
//! so control characters are stripped before it reaches any backend: pasted into a terminal,
//! `ESC[201~` would end a bracketed paste and run the rest as typed. This module never panics
//! for lack of a display, never writes OSC 52 to a stdout that is not a terminal, and never
//! reads the clipboard.

use std::fmt;
use std::io::{IsTerminal, Write};

use crossterm::clipboard::CopyToClipboard;

/// Largest text sent through OSC 52. Terminals and multiplexers silently drop longer
/// sequences, so above this the copy falls through to the register instead of claiming a
/// success that never happened.
pub const OSC52_MAX_BYTES: usize = 100_000;

/// Where a copy ended up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The operating system's clipboard, through arboard.
    System,
    /// An OSC 52 sequence written to the terminal, which may or may not honour it.
    Osc52,
    /// Only loom's in-app register.
    Register,
}

impl Backend {
    pub fn label(&self) -> &'static str {
        match self {
            Backend::System => "system clipboard",
            Backend::Osc52 => "terminal (OSC 52)",
            Backend::Register => "loom register",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// The system clipboard is opened lazily: most sessions never copy, and opening it costs an
/// X11/Wayland connection.
enum SystemClipboard {
    Disabled,
    Untried,
    Open(arboard::Clipboard),
    Unavailable,
}

/// The copy chain. Keep one for the app's lifetime: dropping it may take the system
/// clipboard's contents with it on X11/Wayland.
pub struct Clipboard {
    system: SystemClipboard,
    osc52: Option<Box<dyn Write + Send>>,
    register: Option<String>,
}

impl fmt::Debug for Clipboard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let system = match self.system {
            SystemClipboard::Disabled => "disabled",
            SystemClipboard::Untried => "untried",
            SystemClipboard::Open(_) => "open",
            SystemClipboard::Unavailable => "unavailable",
        };
        f.debug_struct("Clipboard")
            .field("system", &system)
            .field("osc52", &self.osc52.is_some())
            .field("register_bytes", &self.register.as_ref().map(String::len))
            .finish()
    }
}

impl Default for Clipboard {
    fn default() -> Clipboard {
        Clipboard::new()
    }
}

impl Clipboard {
    /// The real chain: system clipboard, then OSC 52 on stdout if stdout is a terminal, then
    /// the register.
    pub fn new() -> Clipboard {
        let stdout = std::io::stdout();
        let osc52: Option<Box<dyn Write + Send>> = if stdout.is_terminal() {
            Some(Box::new(stdout))
        } else {
            None
        };
        Clipboard::chain(true, osc52)
    }

    /// Only the register: deterministic, for tests and for a front end with no terminal.
    pub fn memory() -> Clipboard {
        Clipboard::chain(false, None)
    }

    /// No system clipboard; OSC 52 goes into `writer`, then the register.
    pub fn with_osc52_writer(writer: Box<dyn Write + Send>) -> Clipboard {
        Clipboard::chain(false, Some(writer))
    }

    fn chain(system: bool, osc52: Option<Box<dyn Write + Send>>) -> Clipboard {
        Clipboard {
            system: if system {
                SystemClipboard::Untried
            } else {
                SystemClipboard::Disabled
            },
            osc52,
            register: None,
        }
    }

    /// Copies `text`, without its control characters (newlines and tabs stay), through the
    /// first backend that accepts it; the register always keeps it.
    pub fn copy(&mut self, text: &str) -> Backend {
        let text = crate::terminal_text::strip(text);
        let text = text.as_ref();
        self.register = Some(text.to_string());
        if self.copy_to_system(text) {
            return Backend::System;
        }
        if self.copy_to_osc52(text) {
            return Backend::Osc52;
        }
        Backend::Register
    }

    /// The last copied text.
    pub fn register(&self) -> Option<&str> {
        self.register.as_deref()
    }

    fn copy_to_system(&mut self, text: &str) -> bool {
        if let SystemClipboard::Untried = self.system {
            self.system = match arboard::Clipboard::new() {
                Ok(clipboard) => SystemClipboard::Open(clipboard),
                Err(err) => {
                    tracing::debug!(error = %err, "no system clipboard; falling back");
                    SystemClipboard::Unavailable
                }
            };
        }
        let SystemClipboard::Open(clipboard) = &mut self.system else {
            return false;
        };
        match clipboard.set_text(text) {
            Ok(()) => true,
            Err(err) => {
                // Keep the instance: a failed set is often transient (clipboard busy), and a
                // new instance would drop ownership of what was copied before.
                tracing::debug!(error = %err, "system clipboard refused the text; falling back");
                false
            }
        }
    }

    fn copy_to_osc52(&mut self, text: &str) -> bool {
        if text.len() > OSC52_MAX_BYTES {
            return false;
        }
        let Some(writer) = self.osc52.as_mut() else {
            return false;
        };
        let written = crossterm::execute!(writer, CopyToClipboard::to_clipboard_from(text));
        if let Err(err) = &written {
            tracing::debug!(error = %err, "OSC 52 write failed; falling back");
        }
        written.is_ok()
    }
}

/// The status-line sentence for a copy, e.g. "copied row (123 B) to the system clipboard".
pub fn status_message(what: &str, bytes: usize, backend: Backend) -> String {
    let size = human_bytes(bytes);
    // One pair of brackets: "result (11 rows, 342 B)", "row (123 B)".
    let what = match what.strip_suffix(')') {
        Some(open) if open.contains('(') => format!("{open}, {size})"),
        _ => format!("{what} ({size})"),
    };
    match backend {
        Backend::System => format!("copied {what} to the system clipboard"),
        Backend::Osc52 => format!("sent {what} to the terminal clipboard (OSC 52)"),
        Backend::Register => {
            format!("kept {what} in the loom register; no clipboard was reachable")
        }
    }
}

fn human_bytes(bytes: usize) -> String {
    const KIB: f64 = 1024.0;
    let value = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} B")
    } else if value < KIB * KIB {
        format!("{:.1} KiB", value / KIB)
    } else {
        format!("{:.1} MiB", value / (KIB * KIB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer the test can read back after handing it to the clipboard.
    #[derive(Clone, Default)]
    struct SharedBuffer(Arc<Mutex<Vec<u8>>>);

    impl Write for SharedBuffer {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let mut bytes = self
                .0
                .lock()
                .map_err(|_| std::io::Error::other("poisoned"))?;
            bytes.extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl SharedBuffer {
        fn contents(&self) -> String {
            let bytes = self.0.lock().expect("lock").clone();
            String::from_utf8(bytes).expect("OSC 52 output is ASCII")
        }
    }

    struct BrokenWriter;

    impl Write for BrokenWriter {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("terminal gone"))
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Err(std::io::Error::other("terminal gone"))
        }
    }

    #[test]
    fn memory_backend_keeps_the_last_text() {
        let mut clipboard = Clipboard::memory();
        assert_eq!(clipboard.register(), None);
        assert_eq!(clipboard.copy("first"), Backend::Register);
        assert_eq!(clipboard.copy("zweite Zeile ✓"), Backend::Register);
        assert_eq!(clipboard.register(), Some("zweite Zeile ✓"));
    }

    #[test]
    fn osc52_writer_receives_base64_of_the_text() {
        let buffer = SharedBuffer::default();
        let mut clipboard = Clipboard::with_osc52_writer(Box::new(buffer.clone()));
        assert_eq!(clipboard.copy("hello, wörld"), Backend::Osc52);
        // base64("hello, wörld") in UTF-8, written to the "c" (clipboard) selection.
        assert_eq!(buffer.contents(), "\x1b]52;c;aGVsbG8sIHfDtnJsZA==\x1b\\");
        assert_eq!(clipboard.register(), Some("hello, wörld"));
    }

    #[test]
    fn control_characters_never_reach_a_backend() {
        // A cell that would end a bracketed paste and run a command, then retitle the window.
        let hostile = "id\t42\u{1b}[201~rm -rf ~\r\n\u{1b}]2;pwned\u{7}\u{9b}2J";
        let buffer = SharedBuffer::default();
        let mut clipboard = Clipboard::with_osc52_writer(Box::new(buffer.clone()));
        assert_eq!(clipboard.copy(hostile), Backend::Osc52);
        let kept = "id\t42[201~rm -rf ~\n]2;pwned2J";
        assert_eq!(clipboard.register(), Some(kept));
        // The OSC 52 payload is exactly that of the stripped text.
        let clean = SharedBuffer::default();
        Clipboard::with_osc52_writer(Box::new(clean.clone())).copy(kept);
        assert_eq!(buffer.contents(), clean.contents());
        let mut memory = Clipboard::memory();
        memory.copy(hostile);
        assert_eq!(memory.register(), Some(kept));
    }

    #[test]
    fn osc52_failure_and_oversize_fall_back_to_the_register() {
        let mut broken = Clipboard::with_osc52_writer(Box::new(BrokenWriter));
        assert_eq!(broken.copy("x"), Backend::Register);
        assert_eq!(broken.register(), Some("x"));

        let buffer = SharedBuffer::default();
        let mut clipboard = Clipboard::with_osc52_writer(Box::new(buffer.clone()));
        let huge = "a".repeat(OSC52_MAX_BYTES + 1);
        assert_eq!(clipboard.copy(&huge), Backend::Register);
        assert!(
            buffer.contents().is_empty(),
            "oversized text must not be sent"
        );
        assert_eq!(clipboard.register().map(str::len), Some(huge.len()));
    }

    #[test]
    fn system_step_never_panics_without_a_display() {
        // The real chain's first step; on a headless machine arboard fails and the copy falls
        // through to OSC 52 (injected here so no escape reaches the test runner's terminal).
        let buffer = SharedBuffer::default();
        let mut clipboard = Clipboard::chain(true, Some(Box::new(buffer.clone())));
        let backend = clipboard.copy("loom clipboard test");
        assert!(
            matches!(backend, Backend::System | Backend::Osc52),
            "{backend:?}"
        );
        if backend == Backend::Osc52 {
            assert!(buffer.contents().starts_with("\x1b]52;c;"));
        }
        // A second copy reuses the same state instead of reconnecting or panicking.
        assert_eq!(clipboard.copy("again"), backend);
        assert_eq!(clipboard.register(), Some("again"));
    }

    #[test]
    fn status_message_names_size_and_backend() {
        assert_eq!(
            status_message("row", 123, Backend::System),
            "copied row (123 B) to the system clipboard"
        );
        assert_eq!(
            status_message("cell", 2048, Backend::Osc52),
            "sent cell (2.0 KiB) to the terminal clipboard (OSC 52)"
        );
        assert_eq!(
            status_message("result (11 rows)", 342, Backend::Osc52),
            "sent result (11 rows, 342 B) to the terminal clipboard (OSC 52)"
        );
        let message = status_message("query", 3 * 1024 * 1024, Backend::Register);
        assert!(message.contains("3.0 MiB"), "{message}");
        assert!(message.contains("loom register"), "{message}");
        assert_eq!(Backend::Osc52.label(), "terminal (OSC 52)");
        assert_eq!(Backend::Register.to_string(), "loom register");
    }
}
