//! The simulator's doorbell hook.
//!
//! On kfd-sim a doorbell page is a memfd mapping the simulator cannot
//! trap, so its queue engine polls. When the simulator is preloaded it
//! also exports `kfd_sim_ring_doorbell(int kfd_fd, uint32_t queue_id)`
//! (kfd-sim `preload/exports.rs`), which makes the engine look at that
//! queue at once. `hsaKmtQueueRingDoorbell` calls it right after the
//! doorbell store, as the newest ROCr's DTIF path rings every AQL
//! doorbell through that function. On hardware (no preload) the symbol
//! is absent and the store alone is the whole ring.

use std::ffi::c_int;
use std::os::fd::RawFd;
use std::sync::OnceLock;

/// `kfd_sim_ring_doorbell`'s C signature.
type RingHook = unsafe extern "C" fn(c_int, u32) -> c_int;

/// The hook, looked up once per process (`dlsym(RTLD_DEFAULT)`); `None`
/// when no simulator is preloaded.
fn hook() -> Option<RingHook> {
    static HOOK: OnceLock<Option<RingHook>> = OnceLock::new();
    *HOOK.get_or_init(|| {
        // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name reads
        // no memory of ours beyond the name; it returns NULL or the
        // address of the named symbol.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"kfd_sim_ring_doorbell".as_ptr()) };
        if p.is_null() {
            None
        } else {
            // SAFETY: the symbol of that name is kfd-sim's
            // `extern "C" fn(c_int, u32) -> c_int` (nothing else in a
            // process defines it); a data pointer and a function pointer
            // have the same size and representation on the targets this
            // library is built for.
            Some(unsafe { std::mem::transmute::<*mut libc::c_void, RingHook>(p) })
        }
    })
}

/// Tells the simulator (if one is preloaded) that queue `queue_id` of
/// the `/dev/kfd` open as `kfd_fd` was rung. Its answer is not the
/// caller's: the doorbell store already happened, and a simulator that
/// does not know the queue polls it anyway.
pub(crate) fn notify(kfd_fd: RawFd, queue_id: u32) {
    if let Some(ring) = hook() {
        // SAFETY: the hook takes two integers and no pointers; kfd-sim
        // documents it as safe to call from any thread.
        let _ = unsafe { ring(kfd_fd, queue_id) };
    }
}
