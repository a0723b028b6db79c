//! fork(): the child cannot use the parent's primary context (status 20)
//! until it opens it again; after reopening, everything works, and the
//! parent's context is untouched.
//!
//! The preload simulator refuses every ioctl in a forked child (its
//! machine belongs to the parent), so this test drives the exports
//! in-process on `kfd_sim::Sim`: the child gives the primary a simulator
//! of its own before reopening, as it would get a fresh kernel process
//! from the real KFD. (tests/c_api.rs diffs the preload case against the
//! C library.) One test per binary: the child of a multi-threaded
//! process must not contend for locks other threads may hold.

mod support;

use support::kmt;

use std::ffi::c_void;

use hsakmt::border::Status;
use hsakmt::ctx::HsaKFDContext;
use hsakmt::memory::{hsaKmtAllocMemory, hsaKmtAllocMemoryCtx, hsaKmtFreeMemory};
use hsakmt::openclose::{hsaKmtCloseKFD, hsaKmtGetVersion, hsaKmtOpenKFDCtx};
use hsakmt::topology::hsaKmtAcquireSystemProperties;
use hsakmt_sys::common::{HsaSystemProperties, HsaVersionInfo};

/// The child's checks; returns the first failure.
fn child() -> Result<(), String> {
    let check = |what: &str, got: Status, want: u32| {
        if got.0 == want {
            Ok(())
        } else {
            Err(format!("{what}: {} (want {want})", got.0))
        }
    };
    let mut v = HsaVersionInfo::default();
    let mut sys = HsaSystemProperties::default();
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: valid out-pointers.
    unsafe {
        check("version before reopen", hsaKmtGetVersion(&mut v), 20)?;
        check(
            "acquire before reopen",
            hsaKmtAcquireSystemProperties(&mut sys),
            20,
        )?;
        check(
            "alloc before reopen",
            hsaKmtAllocMemory(0, 4096, kmt::host_flags(), &mut p),
            20,
        )?;
    }
    kmt::sim_on("mi210");
    let mut ctx: *mut HsaKFDContext = std::ptr::null_mut();
    // SAFETY: valid out-pointers; the context handle comes from the library.
    unsafe {
        check("reopen", hsaKmtOpenKFDCtx(&mut ctx), 0)?;
        check("version after reopen", hsaKmtGetVersion(&mut v), 0)?;
        check(
            "acquire after reopen",
            hsaKmtAcquireSystemProperties(&mut sys),
            0,
        )?;
        check(
            "alloc after reopen",
            hsaKmtAllocMemoryCtx(ctx, 0, 4096, kmt::host_flags(), &mut p),
            0,
        )?;
        check("free after reopen", hsaKmtFreeMemory(p, 4096), 0)?;
        check("close", hsaKmtCloseKFD(), 0)?;
    }
    Ok(())
}

#[test]
fn forked_child_must_reopen_the_primary() {
    let sim = kmt::sim_on("mi210");
    let mut sys = HsaSystemProperties::default();
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(hsakmt::openclose::hsaKmtOpenKFD().0, 0);
        assert_eq!(hsaKmtAcquireSystemProperties(&mut sys).0, 0);
        assert_eq!(hsaKmtAllocMemory(0, 4096, kmt::host_flags(), &mut p).0, 0);
    }
    assert!(support::in_forked_child(child), "the child failed");
    // The parent's primary is untouched.
    let mut v = HsaVersionInfo::default();
    // SAFETY: valid out-pointers; `p` was allocated above.
    unsafe {
        assert_eq!(hsaKmtGetVersion(&mut v).0, 0);
        assert_eq!(hsaKmtFreeMemory(p, 4096).0, 0);
        assert_eq!(hsaKmtCloseKFD().0, 0);
        assert_eq!(hsaKmtCloseKFD().0, 20);
    }
    kmt::remove_sysfs(&sim);
}
