//! The C border: every exported function runs inside [`guard`], so no
//! panic unwinds into C (nor prints to the caller's stderr), and pointer
//! arguments are checked before use. C arrays become slices only through
//! [`slice_in`] and [`slice_mut`], which check the count against the
//! caller's limit first.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

use hsakmt_sys::HSAKMT_STATUS;

/// Shorthand for the status type every export returns.
pub type Status = HSAKMT_STATUS;

/// The result type of an export body: `Err` carries the status to return.
pub type KmtResult<T = ()> = Result<T, Status>;

/// Panics caught by [`guard`] since the library was loaded.
static PANICS: AtomicU64 = AtomicU64::new(0);

static HOOK: Once = Once::new();

/// Wraps the process's panic hook once: a panic inside an export body
/// prints nothing (a C caller's stderr is not ours to write to), except
/// one line at `HSAKMT_DEBUG_LEVEL` 3 or more, as the C library logs its
/// errors; any other panic goes to the hook that was installed before.
/// A host that installs its own hook later replaces this one (its hook
/// then sees export panics too; they are still caught).
fn install_hook() {
    // Installed: one atomic load (`panicking` reads a thread-local).
    if HOOK.is_completed() {
        return;
    }
    if std::thread::panicking() {
        // `set_hook` must not be called while unwinding; the next call
        // of an export installs it.
        return;
    }
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !kfd_sync::Call::inside() {
                return previous(info);
            }
            let env =
                std::env::var("HSAKMT_DEBUG_LEVEL").map_or(-1, |v| crate::log::parse_level(&v));
            if crate::log::level().max(env) >= crate::log::LEVEL_ERR {
                let p = info.payload();
                let msg = p
                    .downcast_ref::<&str>()
                    .copied()
                    .or_else(|| p.downcast_ref::<String>().map(String::as_str))
                    .unwrap_or("(no message)");
                let at = info
                    .location()
                    .map(|l| format!(" at {}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                let msg = msg.replace('\n', " ");
                let _ = std::io::Write::write_fmt(
                    &mut std::io::stderr(),
                    format_args!(
                        "hsakmt: internal error in an entry point (status ERROR): {msg}{at}\n"
                    ),
                );
            }
        }));
    });
}

/// Runs an export body; a panic becomes `HSAKMT_STATUS_ERROR`, silently
/// (the panic hook prints nothing for it) and counted ([`panics_caught`]).
pub fn guard(body: impl FnOnce() -> KmtResult) -> Status {
    install_hook();
    // The call is counted inside the unwind boundary, in the function the
    // body is inlined into: the count's thread-local is the read record
    // of kfd-sync's RCU, which the body's context lookup reads too, so
    // the compiler looks it up once for both (one `__tls_get_addr` call
    // per C call). The count goes down also when the body panics (the
    // `Call` drops while unwinding).
    let r = catch_unwind(AssertUnwindSafe(|| {
        let _call = kfd_sync::Call::enter();
        body()
    }));
    match r {
        Ok(Ok(())) => HSAKMT_STATUS::HSAKMT_STATUS_SUCCESS,
        Ok(Err(status)) => status,
        Err(_) => {
            PANICS.fetch_add(1, Ordering::Relaxed);
            HSAKMT_STATUS::HSAKMT_STATUS_ERROR
        }
    }
}

/// How many panics [`guard`] has turned into `HSAKMT_STATUS_ERROR` in
/// this process (for tests and diagnostics; a correct library keeps it
/// at 0).
pub fn panics_caught() -> u64 {
    PANICS.load(Ordering::Relaxed)
}

/// Checks that `p` is non-NULL and aligned for `T`; `status` is returned
/// otherwise (the C library's status for that argument).
pub fn check_ptr<T>(p: *const T, status: Status) -> KmtResult<*const T> {
    if p.is_null() || (p as usize) % std::mem::align_of::<T>() != 0 {
        Err(status)
    } else {
        Ok(p)
    }
}

/// Mutable-pointer form of [`check_ptr`].
pub fn check_mut<T>(p: *mut T, status: Status) -> KmtResult<*mut T> {
    check_ptr(p as *const T, status).map(|p| p as *mut T)
}

/// Writes `value` through an output pointer after checking it.
///
/// # Safety
///
/// `p`, when non-NULL and aligned, must be valid for a write of `T`
/// (the C caller's contract for an OUT argument).
pub unsafe fn write_out<T>(p: *mut T, value: T, status: Status) -> KmtResult {
    let p = check_mut(p, status)?;
    // SAFETY: non-NULL and aligned (checked); validity is the caller's
    // contract. `write_unaligned` is not needed because alignment holds,
    // and `write` does not drop the (possibly uninitialised) old value.
    unsafe { p.write(value) };
    Ok(())
}

/// The status codes the border returns itself, by their C names.
pub mod st {
    use super::Status;

    /// `HSAKMT_STATUS_SUCCESS`.
    pub const SUCCESS: Status = Status::HSAKMT_STATUS_SUCCESS;
    /// `HSAKMT_STATUS_ERROR`.
    pub const ERROR: Status = Status::HSAKMT_STATUS_ERROR;
    /// `HSAKMT_STATUS_DRIVER_MISMATCH`.
    pub const DRIVER_MISMATCH: Status = Status::HSAKMT_STATUS_DRIVER_MISMATCH;
    /// `HSAKMT_STATUS_INVALID_PARAMETER`.
    pub const INVALID_PARAMETER: Status = Status::HSAKMT_STATUS_INVALID_PARAMETER;
    /// `HSAKMT_STATUS_INVALID_HANDLE`.
    pub const INVALID_HANDLE: Status = Status::HSAKMT_STATUS_INVALID_HANDLE;
    /// `HSAKMT_STATUS_INVALID_NODE_UNIT`.
    pub const INVALID_NODE_UNIT: Status = Status::HSAKMT_STATUS_INVALID_NODE_UNIT;
    /// `HSAKMT_STATUS_NO_MEMORY`.
    pub const NO_MEMORY: Status = Status::HSAKMT_STATUS_NO_MEMORY;
    /// `HSAKMT_STATUS_NOT_IMPLEMENTED`.
    pub const NOT_IMPLEMENTED: Status = Status::HSAKMT_STATUS_NOT_IMPLEMENTED;
    /// `HSAKMT_STATUS_NOT_SUPPORTED`.
    pub const NOT_SUPPORTED: Status = Status::HSAKMT_STATUS_NOT_SUPPORTED;
    /// `HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED`.
    pub const NOT_OPENED: Status = Status::HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED;
    /// `HSAKMT_STATUS_KERNEL_ALREADY_OPENED`.
    pub const ALREADY_OPENED: Status = Status::HSAKMT_STATUS_KERNEL_ALREADY_OPENED;
    /// `HSAKMT_STATUS_BUFFER_TOO_SMALL`.
    pub const BUFFER_TOO_SMALL: Status = Status::HSAKMT_STATUS_BUFFER_TOO_SMALL;
    /// `HSAKMT_STATUS_UNAVAILABLE`.
    pub const UNAVAILABLE: Status = Status::HSAKMT_STATUS_UNAVAILABLE;
    /// `HSAKMT_STATUS_OUT_OF_RESOURCES`.
    pub const OUT_OF_RESOURCES: Status = Status::HSAKMT_STATUS_OUT_OF_RESOURCES;
    /// `HSAKMT_STATUS_WAIT_TIMEOUT`.
    pub const WAIT_TIMEOUT: Status = Status::HSAKMT_STATUS_WAIT_TIMEOUT;
    /// `HSAKMT_STATUS_MEMORY_ALREADY_REGISTERED`.
    pub const MEMORY_ALREADY_REGISTERED: Status = Status::HSAKMT_STATUS_MEMORY_ALREADY_REGISTERED;
    /// `HSAKMT_STATUS_MEMORY_NOT_REGISTERED`.
    pub const MEMORY_NOT_REGISTERED: Status = Status::HSAKMT_STATUS_MEMORY_NOT_REGISTERED;
}

/// Turns the status of another export (a forward) back into a result.
pub fn fwd(status: Status) -> KmtResult {
    if status == st::SUCCESS {
        Ok(())
    } else {
        Err(status)
    }
}

pub use crate::status::{Kmt, ToStatus};

/// Reads an IN argument after checking its pointer.
///
/// # Safety
///
/// `p`, when non-NULL and aligned, must be valid for a read of `T`.
pub unsafe fn read_in<T: Copy>(p: *const T, status: Status) -> KmtResult<T> {
    let p = check_ptr(p, status)?;
    // SAFETY: non-NULL and aligned (checked); validity is the caller's
    // contract for an IN argument.
    Ok(unsafe { p.read() })
}

/// The checks every C array passes before it becomes a slice: `n` at most
/// `max` (the limit of the C function, which must keep `n` elements
/// within `isize::MAX` bytes), then, for `n > 0`, a non-NULL pointer
/// aligned for `T`. `None` for an empty array (whatever the pointer).
fn array_ptr<T>(p: *const T, n: usize, max: usize, status: Status) -> KmtResult<Option<*const T>> {
    let bytes = n.checked_mul(std::mem::size_of::<T>().max(1));
    if n > max || !matches!(bytes, Some(b) if b <= isize::MAX as usize) {
        return Err(status);
    }
    if n == 0 {
        return Ok(None);
    }
    check_ptr(p, status).map(Some)
}

/// Borrows a C array of `n` elements (IN). `n > max` → `status`, before
/// the pointer is looked at; an empty slice for `n == 0`, whatever the
/// pointer; NULL or misaligned otherwise → `status`.
///
/// # Safety
///
/// When the checks pass and `n > 0`, `p` must be valid for reads of `n`
/// elements for the lifetime `'a`, and not written meanwhile (the C
/// API's array contract).
pub unsafe fn slice_in<'a, T>(
    p: *const T,
    n: usize,
    max: usize,
    status: Status,
) -> KmtResult<&'a [T]> {
    match array_ptr(p, n, max, status)? {
        None => Ok(&[]),
        // SAFETY: non-NULL, aligned, and `n` elements fit in `isize`
        // (checked); the caller guarantees `n` readable elements.
        Some(p) => Ok(unsafe { std::slice::from_raw_parts(p, n) }),
    }
}

/// [`slice_in`] for an IN/OUT array, borrowed mutably.
///
/// # Safety
///
/// When the checks pass and `n > 0`, `p` must be valid for reads and
/// writes of `n` elements for the lifetime `'a`, and not accessed
/// otherwise meanwhile.
pub unsafe fn slice_mut<'a, T>(
    p: *mut T,
    n: usize,
    max: usize,
    status: Status,
) -> KmtResult<&'a mut [T]> {
    match array_ptr(p as *const T, n, max, status)? {
        None => Ok(&mut []),
        // SAFETY: as in `slice_in`, for reads and writes.
        Some(p) => Ok(unsafe { std::slice::from_raw_parts_mut(p as *mut T, n) }),
    }
}

/// Writes `values` to a C array (OUT), at most `values.len()` elements.
///
/// # Safety
///
/// When `values` is not empty, `p` (checked non-NULL and aligned) must be
/// valid for writes of `values.len()` elements.
pub unsafe fn write_array<T: Copy>(p: *mut T, values: &[T], status: Status) -> KmtResult {
    if values.is_empty() {
        return Ok(());
    }
    let p = check_mut(p, status)?;
    for (i, v) in values.iter().enumerate() {
        // SAFETY: `i < values.len()`, within the array the caller
        // guarantees; aligned because `p` is.
        unsafe { p.add(i).write(*v) };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panic_becomes_error_status() {
        let s = guard(|| panic!("boom"));
        assert_eq!(s, HSAKMT_STATUS::HSAKMT_STATUS_ERROR);
        let s = guard(|| Err(HSAKMT_STATUS::HSAKMT_STATUS_INVALID_PARAMETER));
        assert_eq!(s, HSAKMT_STATUS::HSAKMT_STATUS_INVALID_PARAMETER);
        assert_eq!(guard(|| Ok(())), HSAKMT_STATUS::HSAKMT_STATUS_SUCCESS);
    }

    #[test]
    fn array_counts_are_checked_before_the_pointer() {
        let bad = HSAKMT_STATUS::HSAKMT_STATUS_INVALID_PARAMETER;
        let nomem = HSAKMT_STATUS::HSAKMT_STATUS_NO_MEMORY;
        let v = [1u32, 2, 3, 4];
        // SAFETY: every call either fails its checks (nothing is read) or
        // names elements of `v`.
        unsafe {
            assert_eq!(slice_in(v.as_ptr(), 4, 4, bad), Ok(&v[..]));
            assert_eq!(slice_in(v.as_ptr(), 5, 4, nomem), Err(nomem));
            assert_eq!(slice_in(std::ptr::null::<u32>(), 0, 4, bad), Ok(&[][..]));
            assert_eq!(slice_in(std::ptr::null::<u32>(), 1, 4, bad), Err(bad));
            assert_eq!(
                slice_in((v.as_ptr() as usize + 1) as *const u32, 1, 4, bad),
                Err(bad)
            );
            // The count of issue 17 (1 << 62 node ids): 2^64 bytes.
            assert_eq!(slice_in(v.as_ptr(), 1 << 62, usize::MAX, bad), Err(bad));
            assert_eq!(
                slice_in(v.as_ptr(), usize::MAX / 4 + 1, usize::MAX, bad),
                Err(bad)
            );
            let mut w = [0u64; 2];
            let m = slice_mut(w.as_mut_ptr(), 2, 2, bad).unwrap();
            m[1] = 9;
            assert_eq!(w, [0, 9]);
        }
    }

    /// Every slice the library makes from a C pointer goes through the
    /// checked helpers above: outside this file's `slice_in` and
    /// `slice_mut`, no source line of the crate builds one.
    #[test]
    fn no_unchecked_slice_from_a_raw_pointer() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = vec![src];
        let mut offenders = Vec::new();
        let mut scanned = 0;
        while let Some(p) = files.pop() {
            if p.is_dir() {
                files.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
                continue;
            }
            if p.extension().map_or(true, |e| e != "rs") {
                continue;
            }
            scanned += 1;
            let text = std::fs::read_to_string(&p).unwrap();
            let is_border = p.file_name().is_some_and(|n| n == "border.rs");
            let mut current_fn = String::new();
            for (i, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                if let Some(rest) = code.split("fn ").nth(1).filter(|_| code.contains("fn ")) {
                    current_fn = rest
                        .split(['<', '('])
                        .next()
                        .unwrap_or("")
                        .trim()
                        .to_string();
                }
                // The needle is split so this test does not find itself.
                let needle = concat!("from_raw", "_parts");
                if code.contains(needle) {
                    let allowed =
                        is_border && (current_fn == "slice_in" || current_fn == "slice_mut");
                    if !allowed {
                        offenders.push(format!("{}:{}: {}", p.display(), i + 1, line.trim()));
                    }
                }
            }
        }
        assert!(scanned > 10, "only {scanned} source files found");
        assert!(
            offenders.is_empty(),
            "slices from raw pointers outside border::slice_in/slice_mut:\n{}",
            offenders.join("\n")
        );
    }

    /// The child half of [`export_panics_print_nothing`]: runs only when
    /// that test starts this binary with `HSAKMT_PANIC_CHILD` set.
    #[test]
    fn export_panic_child() {
        let Ok(mode) = std::env::var("HSAKMT_PANIC_CHILD") else {
            return;
        };
        let before = panics_caught();
        // A forwarded export: two guards deep.
        let s = guard(|| fwd(guard(|| panic!("boom inside an export"))));
        assert_eq!(s, HSAKMT_STATUS::HSAKMT_STATUS_ERROR);
        assert_eq!(panics_caught(), before + 1);
        if mode == "outside" {
            // Not inside an export: the host's (default) hook prints it.
            let _ = std::panic::catch_unwind(|| panic!("boom outside"));
        }
    }

    /// No panic message of an export body reaches stderr (the C caller's);
    /// `HSAKMT_DEBUG_LEVEL=3` logs one error line instead; panics outside
    /// exports still reach the hook that was there before.
    #[test]
    fn export_panics_print_nothing() {
        let run = |mode: &str, level: Option<&str>| {
            let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
            cmd.args([
                "--exact",
                "border::tests::export_panic_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("HSAKMT_PANIC_CHILD", mode)
            .env_remove("HSAKMT_DEBUG_LEVEL")
            .env_remove("RUST_BACKTRACE");
            if let Some(l) = level {
                cmd.env("HSAKMT_DEBUG_LEVEL", l);
            }
            let out = cmd.output().unwrap();
            assert!(out.status.success(), "child failed: {out:?}");
            String::from_utf8_lossy(&out.stderr).into_owned()
        };
        let quiet = run("inside", None);
        assert!(
            !quiet.contains("boom") && !quiet.contains("panicked"),
            "stderr: {quiet}"
        );
        let logged = run("inside", Some("3"));
        assert_eq!(
            logged
                .matches("hsakmt: internal error in an entry point")
                .count(),
            1,
            "stderr: {logged}"
        );
        assert!(!logged.contains("panicked at"), "stderr: {logged}");
        let outside = run("outside", None);
        assert!(
            outside.contains("boom outside") && !outside.contains("boom inside"),
            "stderr: {outside}"
        );
    }

    #[test]
    fn pointer_checks() {
        let bad = HSAKMT_STATUS::HSAKMT_STATUS_INVALID_PARAMETER;
        assert_eq!(check_ptr::<u64>(std::ptr::null(), bad), Err(bad));
        assert_eq!(check_ptr::<u64>(3 as *const u64, bad), Err(bad));
        let mut x = 0u64;
        // SAFETY: `x` is a valid, aligned u64.
        unsafe { write_out(&mut x, 7, bad) }.unwrap();
        assert_eq!(x, 7);
    }
}
