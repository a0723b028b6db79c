//! The exports on an in-process simulator: opening the primary on a
//! fresh machine, closing it with a leak and panic check, and a few
//! calls most tests make.

use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::{Arc, Once};

use hsakmt::border::Status;
use hsakmt::generation::abi;
use hsakmt_sys::common::{HsaSystemProperties, HSA_QUEUE_PRIORITY};

/// `HostAccess` memory flags.
pub fn host_flags() -> abi::HsaMemFlags {
    let mut f = abi::HsaMemFlags::default();
    f.set_HostAccess(1);
    f
}

/// `NonPaged` (VRAM on a GPU node) with host access.
pub fn vram_flags() -> abi::HsaMemFlags {
    let mut f = host_flags();
    f.set_NonPaged(1);
    f
}

/// A fresh simulator of `preset`, made the primary's driver. Its sysfs
/// tree is rendered under `/dev/shm` when `KFD_SIM_TMPDIR` is unset (a
/// disk-backed temporary directory makes each machine ~100 ms slower).
pub fn sim_on(preset: &str) -> Arc<kfd_sim::Sim> {
    static TMPDIR: Once = Once::new();
    TMPDIR.call_once(|| {
        // The tests of these binaries run one at a time (serial or alone),
        // so nothing reads the environment meanwhile.
        if std::env::var_os("KFD_SIM_TMPDIR").is_none() && std::path::Path::new("/dev/shm").is_dir()
        {
            std::env::set_var("KFD_SIM_TMPDIR", "/dev/shm");
        }
    });
    let sim = Arc::new(kfd_sim::Sim::preset(preset).expect("preset"));
    kfd_context::primary::set_driver(sim.clone()).unwrap();
    sim
}

/// Opens the primary on a fresh simulator of `preset` and takes the
/// snapshot; returns the simulator and the number of nodes.
pub fn open_on(preset: &str) -> (Arc<kfd_sim::Sim>, u32) {
    let sim = sim_on(preset);
    let mut sys = HsaSystemProperties::default();
    // SAFETY: valid out-pointer.
    unsafe {
        assert_eq!(hsakmt::openclose::hsaKmtOpenKFD().0, 0);
        assert_eq!(
            hsakmt::topology::hsaKmtAcquireSystemProperties(&mut sys).0,
            0
        );
    }
    (sim, sys.NumNodes)
}

/// Releases the snapshot and closes the primary; nothing may be left in
/// the simulated kernel, and no export may have panicked.
pub fn close_and_check(sim: &kfd_sim::Sim) {
    // SAFETY: no arguments.
    unsafe {
        hsakmt::topology::hsaKmtReleaseSystemProperties();
        assert_eq!(hsakmt::openclose::hsaKmtCloseKFD().0, 0);
    }
    // Generations since 6.2 keep the closed primary for the next open.
    kfd_context::primary::discard_closed();
    let live = sim.live_objects();
    assert!(live.is_empty(), "left behind: {live:?}");
    assert_eq!(hsakmt::border::panics_caught(), 0, "an export panicked");
    remove_sysfs(sim);
}

/// Removes the sysfs tree of a simulator that stays the primary's driver
/// (the slot is never emptied, so the simulator is not dropped before the
/// test process exits and would leave its tree behind).
pub fn remove_sysfs(sim: &kfd_sim::Sim) {
    let _ = std::fs::remove_dir_all(sim.root());
}

/// `hsaKmtAllocMemory` on node 0 with host access (must succeed).
pub fn alloc(size: u64) -> *mut c_void {
    let mut p: *mut c_void = null_mut();
    // SAFETY: valid out-pointer.
    let s = unsafe { hsakmt::memory::hsaKmtAllocMemory(0, size, host_flags(), &mut p) };
    assert_eq!(s.0, 0, "alloc {size:#x}");
    p
}

/// `hsaKmtFreeMemory` (must succeed).
pub fn free(p: *mut c_void, size: u64) {
    // SAFETY: `p` came from the library.
    let s = unsafe { hsakmt::memory::hsaKmtFreeMemory(p, size) };
    assert_eq!(s.0, 0, "free {p:?}");
}

/// `hsaKmtCreateQueue` of type `ty` on `node` with `priority`, 100 %,
/// on the 4 KiB `ring`.
///
/// # Safety
///
/// `event` and `resource` as the C contract says, or the deliberate bad
/// pointers of a test (the library must reject them).
pub unsafe fn create_queue(
    node: u32,
    ty: u32,
    priority: i64,
    ring: *mut c_void,
    event: *mut abi::HsaEvent,
    resource: *mut abi::HsaQueueResource,
) -> Status {
    let (t, p) = (abi::HSA_QUEUE_TYPE(ty), HSA_QUEUE_PRIORITY(priority));
    // SAFETY: forwarded contract; `ring` is the caller's live buffer.
    unsafe { hsakmt::queues::hsaKmtCreateQueue(node, t, 100, p, ring, 0x1000, event, resource) }
}

/// A page-aligned, zeroed host buffer (for registrations and SVM).
#[derive(Debug)]
pub struct HostBuf(pub *mut c_void, std::alloc::Layout);

impl HostBuf {
    /// `size` bytes (a multiple of 4 KiB).
    pub fn new(size: usize) -> HostBuf {
        let layout = std::alloc::Layout::from_size_align(size, 4096).unwrap();
        // SAFETY: non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!p.is_null());
        HostBuf(p.cast(), layout)
    }
}

impl Drop for HostBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.0.cast(), self.1) };
    }
}
