//! Open/close of the primary context, secondary contexts, the version.

use hsakmt_sys::common::HsaVersionInfo;
use kfd_context::{primary, primary::Opened, Context};
use kfd_topology::SnapshotOptions;

use crate::border::{check_mut, st, write_out, Kmt};
use crate::ctx::{self, HsaKFDContext};
use crate::generation;

export! {
    /// `hsaKmtOpenKFDCtx`: opens the primary context, or counts one more
    /// reference to it (then `KERNEL_ALREADY_OPENED`, the open still
    /// counted, as in C). The primary's handle is stored in `*pCtx`
    /// (`pCtx` may be NULL).
    ctx fn hsaKmtOpenKFDCtx(pCtx: *mut *mut HsaKFDContext) {
        if !pCtx.is_null() {
            check_mut(pCtx, st::INVALID_PARAMETER)?;
        }
        // A first open reads HSAKMT_DEBUG_LEVEL before anything else, as
        // C; a nested open reads nothing.
        let mut logged = false;
        // Only a first open hands out the context (a nested one takes no
        // reference to it).
        let (first, how) = primary::open_first_with_lazy(|| {
            crate::log::init_from_env();
            logged = true;
            generation::primary_options()
        })
        .kmt()?;
        if let Some(c) = first {
            if !logged {
                // A context kept by the last close, taken up again.
                crate::log::init_from_env();
            }
            if generation::PROFILE.border.memory_at_open {
                // 5.2.3 sets up its apertures inside the open (a failure
                // there fails the open and closes the descriptor).
                let opts = SnapshotOptions::from_env(generation::PROFILE.topology);
                if let Err(e) = c.init_memory_with(&opts).kmt() {
                    drop(c);
                    let _ = primary::close();
                    return Err(e);
                }
            }
        }
        if !pCtx.is_null() {
            // SAFETY: checked non-NULL and aligned above; an OUT argument.
            unsafe { write_out(pCtx, ctx::primary_ptr(), st::INVALID_PARAMETER)? };
        }
        match how {
            Opened::First => Ok(()),
            Opened::Again => Err(st::ALREADY_OPENED),
        }
    }

    /// `hsaKmtCloseKFDCtx`: drops one reference to the primary context
    /// (it takes no context); the last one tears it down. In a forked
    /// child, the references inherited from the parent can be closed
    /// (success, nothing torn down), as with the C library. Secondary
    /// contexts stay open, but every `Ctx` call on them returns 20 until
    /// the primary is opened again.
    ctx fn hsaKmtCloseKFDCtx() {
        let left = match primary::close() {
            Ok(left) => left,
            Err(e) => {
                // A forked child closing what it inherited: success, as in C.
                if primary::release_inherited() {
                    return Ok(());
                }
                return Err(e).kmt();
            }
        };
        if left == 0 {
            // Torn down with what it kept, unless kept for the next open:
            // that one starts without the border state of this one.
            if let Some(c) = primary::kept() {
                crate::state::forget(&c);
            }
        }
        Ok(())
    }

    /// `hsaKmtOpenSecondaryKFDCtx`: opens a new, isolated context (its own
    /// `/dev/kfd` descriptor and kernel process). Needs the primary open
    /// (else 20). The caller takes its topology snapshot with
    /// `hsaKmtAcquireSystemPropertiesCtx`. A NULL `pCtx` is
    /// `INVALID_PARAMETER` (C writes through it). A failing
    /// CREATE_PROCESS is `ERROR` (C returns success without a context).
    ctx fn hsaKmtOpenSecondaryKFDCtx(pCtx: *mut *mut HsaKFDContext) {
        check_mut(pCtx, st::INVALID_PARAMETER)?;
        ctx::check_open()?;
        let p = ctx::primary()?;
        let c = Context::open_secondary_with(p.driver().clone(), generation::primary_options()).kmt()?;
        let handle = match ctx::register_secondary(c) {
            Ok(h) => h,
            Err(c) => {
                ctx::teardown(c);
                return Err(st::NO_MEMORY);
            }
        };
        // SAFETY: checked non-NULL and aligned above; an OUT argument.
        unsafe { write_out(pCtx, handle, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtCloseSecondaryKFDCtx`: tears a secondary context down
    /// (queues, events, memory, descriptor). NULL, the primary's handle,
    /// or a pointer that is not a live secondary → `INVALID_PARAMETER`.
    /// No open check (as in C).
    ctx fn hsaKmtCloseSecondaryKFDCtx(ctx: *mut HsaKFDContext) {
        if ctx.is_null() || ctx == ctx::primary_ptr() {
            return Err(st::INVALID_PARAMETER);
        }
        let c = ctx::unregister_secondary(ctx).ok_or(st::INVALID_PARAMETER)?;
        ctx::teardown(c);
        Ok(())
    }

    /// `hsaKmtOpenKFD`: [`hsaKmtOpenKFDCtx`] without the handle.
    all fn hsaKmtOpenKFD() {
        // SAFETY: NULL is an accepted `pCtx`.
        unsafe { hsaKmtOpenKFDCtx::body(std::ptr::null_mut()) }
    }

    /// `hsaKmtCloseKFD`: [`hsaKmtCloseKFDCtx`].
    all fn hsaKmtCloseKFD() {
        // SAFETY: no arguments.
        unsafe { hsaKmtCloseKFDCtx::body() }
    }

    /// `hsaKmtGetVersion`: the KFD ioctl interface version of the primary
    /// context. 20 when closed; a NULL `VersionInfo` is
    /// `INVALID_PARAMETER` (C writes through it).
    all fn hsaKmtGetVersion(VersionInfo: *mut HsaVersionInfo) {
        let v = ctx::primary()?.version();
        let info = HsaVersionInfo {
            KernelInterfaceMajorVersion: v.major,
            KernelInterfaceMinorVersion: v.minor,
        };
        // SAFETY: an OUT argument; checked by `write_out`.
        unsafe { write_out(VersionInfo, info, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtModelEnabled`: always false (no hardware model here).
    newest fn hsaKmtModelEnabled(enable: *mut bool) {
        // SAFETY: an OUT argument; checked by `write_out`.
        unsafe { write_out(enable, false, st::INVALID_PARAMETER) }
    }
}
