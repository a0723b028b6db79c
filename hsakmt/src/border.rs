//! The C border: every exported function runs inside [`guard`], so no
//! panic unwinds into C, and pointer arguments are checked before use.

use std::panic::{catch_unwind, AssertUnwindSafe};

use kfd_sys::hsakmt::HSAKMT_STATUS;

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
