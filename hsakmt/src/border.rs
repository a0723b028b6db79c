//! The C border: every exported function runs inside [`guard`], so no
//! panic unwinds into C, and pointer arguments are checked before use.

use std::panic::{catch_unwind, AssertUnwindSafe};

use hsakmt_sys::HSAKMT_STATUS;

/// Shorthand for the status type every export returns.
pub type Status = HSAKMT_STATUS;

/// The result type of an export body: `Err` carries the status to return.
pub type KmtResult<T = ()> = Result<T, Status>;

/// Runs an export body; a panic becomes `HSAKMT_STATUS_ERROR`.
pub fn guard(body: impl FnOnce() -> KmtResult) -> Status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => HSAKMT_STATUS::HSAKMT_STATUS_SUCCESS,
        Ok(Err(status)) => status,
        Err(_) => HSAKMT_STATUS::HSAKMT_STATUS_ERROR,
    }
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
}

/// Turns the status of another export (a forward) back into a result.
pub fn fwd(status: Status) -> KmtResult {
    if status == st::SUCCESS {
        Ok(())
    } else {
        Err(status)
    }
}

/// Errors of the Rust API that know their C status.
pub trait ToStatus: std::fmt::Display {
    /// The `HSAKMT_STATUS` the C library returns for this cause.
    fn to_status(&self) -> Status;
}

macro_rules! to_status {
    ($($t:ty),*) => {$(
        impl ToStatus for $t {
            fn to_status(&self) -> Status {
                self.status()
            }
        }
    )*};
}

to_status!(
    kfd_context::ContextError,
    kfd_fmm::FmmError,
    kfd_event::EventError,
    kfd_queue::QueueError,
    kfd_debug::Error,
    kfd_perf::Error
);

/// `Result<T, E>` of the Rust API to the border's result: the error
/// becomes its C status (and is logged at the debug level).
pub trait Kmt<T> {
    /// Converts, logging the error at `HSAKMT_DEBUG_LEVEL` 7.
    fn kmt(self) -> KmtResult<T>;
}

impl<T, E: ToStatus> Kmt<T> for Result<T, E> {
    fn kmt(self) -> KmtResult<T> {
        self.map_err(|e| {
            let s = e.to_status();
            crate::log::debug(format_args!("hsakmt: {e} (status {})\n", s.0));
            s
        })
    }
}

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

/// Borrows a C array of `n` elements (an empty slice for `n == 0`,
/// whatever the pointer).
///
/// # Safety
///
/// When `n > 0` and `p` is non-NULL and aligned, `p` must be valid for
/// reads of `n` elements for the lifetime `'a`, and not written meanwhile.
pub unsafe fn slice_in<'a, T>(p: *const T, n: usize, status: Status) -> KmtResult<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    let p = check_ptr(p, status)?;
    // SAFETY: non-NULL and aligned (checked); the caller guarantees `n`
    // readable elements (the C API's array contract).
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
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
