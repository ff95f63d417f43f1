//! How much one client query may grow loom. DuckDB's `memory_limit` bounds only its buffer
//! manager: the strings and lists a query builds (`repeat`, `||`, `list_value`, `range` as a
//! list) are allocated outside it, and one expression can ask for gigabytes before the engine
//! next looks for an interrupt. So while a client query runs, loom holds it to a ceiling of its
//! resident size at the start plus `memory_limit` plus [`HEADROOM`], two ways:
//!
//! - the query's watchdog reads loom's resident size (`/proc/self/statm`) at every tick and
//!   interrupts the query once it is past the ceiling (growth across many rows);
//! - an allocation of [`LARGE`] or more that the engine asks for (C or C++ code: loom's own Rust
//!   allocations are never refused) fails as out of memory when it would take loom past the
//!   ceiling (one huge value). loom defines `malloc`, `calloc` and `realloc` for that, passing
//!   every call on to the C library's own;
//! - smaller allocations of [`COUNTED`] or more are added up, and every [`STEP`] of them the
//!   resident size is read again, as for a large one: many values of just under a megabyte
//!   built in one expression (`list_transform(range(500), x -> repeat('x', 900000))`), where
//!   no interrupt lands, are stopped within a step of the ceiling. Once loom is found past it,
//!   every counted allocation fails until the query ends. What the step adds up is counted on
//!   top of the resident size it was read with (it may not be resident yet), so threads
//!   allocating at once cannot all pass through one gap.
//!
//! Outside client queries nothing is refused. This module must never allocate on the paths the
//! allocator calls, nor lock anything there.
//!
//! The allocation bound needs the C library's own entry points (`__libc_malloc`), so it holds
//! with glibc on Linux only. On macOS the watchdog's bound holds (the resident size is read
//! through `proc_pidinfo`), and a value built inside one expression is stopped only at the
//! engine's next interrupt: the README says so.

use std::cell::Cell;
#[cfg(all(target_os = "linux", target_env = "gnu"))]
use std::os::raw::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a query may grow loom by beyond `memory_limit`: the engine's own bookkeeping, a
/// chunk's worth of values in flight, loom's result handling.
pub const HEADROOM: u64 = 256 << 20;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
/// Allocations this large are checked against the ceiling; smaller ones are left to the
/// watchdog (checking each would cost more than they do).
pub const LARGE: usize = 1 << 20;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
/// Allocations this large are added up toward the next read of the resident size (smaller
/// ones are the engine's bookkeeping, and its buffer manager bounds its data).
pub const COUNTED: usize = 16 << 10;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
/// Every this many bytes of counted allocations, the resident size is read again.
pub const STEP: u64 = 8 << 20;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
/// Bytes of counted allocations since the resident size was last read.
static SINCE: AtomicU64 = AtomicU64::new(0);

/// loom was found past the ceiling: every counted allocation fails until the query ends.
static OVER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The ceiling allocations are held to now, in bytes of resident size; 0 when no client
/// query runs.
static CEILING: AtomicU64 = AtomicU64::new(0);

/// How many allocations were refused since loom started.
static REFUSED: AtomicU64 = AtomicU64::new(0);

/// Running client queries and the highest ceiling among them (published in `CEILING`).
static RUNNING: std::sync::Mutex<(usize, u64)> = std::sync::Mutex::new((0, 0));

thread_local! {
    /// This thread is inside loom's own (Rust) allocator: its allocations are never refused.
    static IN_RUST: Cell<bool> = const { Cell::new(false) };
}

/// loom's resident size in bytes, read without allocating; `None` if the kernel will not say.
#[cfg(target_os = "linux")]
pub fn resident_bytes() -> Option<u64> {
    let mut buf = [0u8; 128];
    // SAFETY: plain system calls on a buffer of our own, the descriptor closed on every path.
    let n = unsafe {
        let fd = libc::open(
            c"/proc/self/statm".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return None;
        }
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        n
    };
    let text = buf.get(..usize::try_from(n).ok()?)?;
    // statm: size resident shared text lib data dt, in pages.
    let mut fields = text.split(|b| *b == b' ');
    fields.next()?;
    let pages = fields.next()?.iter().try_fold(0u64, |acc, b| {
        b.is_ascii_digit()
            .then(|| acc.checked_mul(10)?.checked_add(u64::from(b - b'0')))
            .flatten()
    })?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages.checked_mul(u64::try_from(page).ok()?)
}

/// loom's resident size in bytes, from the kernel's task information (Mach's resident size,
/// through `proc_pidinfo`), read without allocating; `None` if the kernel will not say.
#[cfg(target_os = "macos")]
pub fn resident_bytes() -> Option<u64> {
    // SAFETY: proc_pidinfo fills a proc_taskinfo of ours, of the size it is told.
    unsafe {
        let mut info: libc::proc_taskinfo = std::mem::zeroed();
        let size = std::mem::size_of::<libc::proc_taskinfo>() as libc::c_int;
        let n = libc::proc_pidinfo(
            libc::getpid(),
            libc::PROC_PIDTASKINFO,
            0,
            (&mut info as *mut libc::proc_taskinfo).cast(),
            size,
        );
        (n == size).then_some(info.pti_resident_size)
    }
}

/// One client query held to a ceiling, from its start until this is dropped.
pub(super) struct Held {
    pub ceiling: u64,
    refused_before: u64,
}

impl Held {
    /// Holds the query about to start to loom's resident size now plus `allowance`.
    ///
    /// Queries running at once share one ceiling, set when the first of them starts: one
    /// started while another has grown loom does not raise it.
    pub(super) fn start(allowance: u64) -> Held {
        let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        if running.0 == 0 {
            running.1 = resident_bytes().unwrap_or(0).saturating_add(allowance);
            OVER.store(false, Ordering::SeqCst);
        }
        running.0 += 1;
        let ceiling = running.1;
        CEILING.store(ceiling, Ordering::SeqCst);
        Held {
            ceiling,
            refused_before: REFUSED.load(Ordering::SeqCst),
        }
    }

    /// Whether loom is past this query's ceiling now.
    pub(super) fn passed(&self) -> bool {
        resident_bytes().is_some_and(|r| r > self.ceiling)
    }

    /// Whether an allocation was refused while this query ran (the engine then fails it as out
    /// of memory).
    pub(super) fn refused_any(&self) -> bool {
        REFUSED.load(Ordering::SeqCst) != self.refused_before
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        running.0 = running.0.saturating_sub(1);
        if running.0 == 0 {
            running.1 = 0;
            OVER.store(false, Ordering::SeqCst);
        }
        CEILING.store(running.1, Ordering::SeqCst);
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
/// Whether an allocation of `size` bytes by the engine must fail now.
fn refuse(size: usize) -> bool {
    if size < COUNTED || IN_RUST.with(Cell::get) {
        return false;
    }
    let ceiling = CEILING.load(Ordering::Relaxed);
    if ceiling == 0 {
        return false;
    }
    let over = OVER.load(Ordering::Relaxed) || {
        let since = SINCE
            .fetch_add(size as u64, Ordering::Relaxed)
            .saturating_add(size as u64);
        if size < LARGE && since < STEP {
            return false;
        }
        SINCE.store(0, Ordering::Relaxed);
        let over = resident_bytes().is_some_and(|r| r.saturating_add(since) > ceiling);
        if over {
            OVER.store(true, Ordering::Relaxed);
        }
        over
    };
    if over {
        REFUSED.fetch_add(1, Ordering::SeqCst);
        // SAFETY: errno is this thread's own.
        unsafe { *libc::__errno_location() = libc::ENOMEM };
    }
    over
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
unsafe extern "C" {
    fn __libc_malloc(size: usize) -> *mut c_void;
    fn __libc_calloc(n: usize, size: usize) -> *mut c_void;
    fn __libc_realloc(p: *mut c_void, size: usize) -> *mut c_void;
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
/// The C library's `malloc`, unless the engine asks past a query's ceiling.
///
/// # Safety
/// As the C library's `malloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
    if refuse(size) {
        return std::ptr::null_mut();
    }
    // SAFETY: the C library's own allocator, called as malloc would be.
    unsafe { __libc_malloc(size) }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
/// The C library's `calloc`, unless the engine asks past a query's ceiling.
///
/// # Safety
/// As the C library's `calloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn calloc(n: usize, size: usize) -> *mut c_void {
    if refuse(n.saturating_mul(size)) {
        return std::ptr::null_mut();
    }
    // SAFETY: as above.
    unsafe { __libc_calloc(n, size) }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
/// The C library's `realloc`, unless the engine asks past a query's ceiling (the old block is
/// then left as it was, as a failed realloc does).
///
/// # Safety
/// As the C library's `realloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn realloc(p: *mut c_void, size: usize) -> *mut c_void {
    if refuse(size) {
        return std::ptr::null_mut();
    }
    // SAFETY: as above.
    unsafe { __libc_realloc(p, size) }
}

/// loom's own allocator: the system's, with its calls marked so the ceiling never refuses them
/// (a refused Rust allocation would abort loom).
pub struct RustHeap;

struct Marked(bool);

impl Marked {
    fn new() -> Marked {
        Marked(IN_RUST.with(|f| f.replace(true)))
    }
}

impl Drop for Marked {
    fn drop(&mut self) {
        IN_RUST.with(|f| f.set(self.0));
    }
}

// SAFETY: every call is passed on to `System` unchanged.
unsafe impl std::alloc::GlobalAlloc for RustHeap {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let _m = Marked::new();
        // SAFETY: as the caller promised for `layout`.
        unsafe { std::alloc::System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        let _m = Marked::new();
        // SAFETY: as above.
        unsafe { std::alloc::System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: as above.
        unsafe { std::alloc::System.dealloc(p, layout) }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        let _m = Marked::new();
        // SAFETY: as above.
        unsafe { std::alloc::System.realloc(p, layout, size) }
    }
}

#[global_allocator]
static HEAP: RustHeap = RustHeap;

#[cfg(test)]
mod tests {
    use super::{Held, resident_bytes};

    #[test]
    fn the_resident_size_is_read_and_a_generous_hold_is_not_passed() {
        let r = resident_bytes().expect("statm");
        assert!(r > 1 << 20, "{r}");
        let held = Held::start(64 << 30);
        assert!(held.ceiling > r && !held.passed());
        // loom's own allocations go through the marked allocator and are served.
        let v = vec![7u8; 8 << 20];
        assert_eq!(v[(8 << 20) - 1], 7);
    }
}
