//! Issue 27: the SVM calls and the topology snapshot, on the in-process
//! simulator, compiled for the build's generation (`cargo test -p hsakmt
//! --test svm_snapshot`, and with `--no-default-features --features
//! rocm-5.2` / `rocm-6.2`).
//!
//! The C library (5.2.3, 6.2.4 and the newest svm.c alike) translates the
//! node ids of location and access attributes with its snapshot
//! (`hsakmt_validate_nodeid`) and uses nothing else of it: attributes
//! without a node reach the kernel before `AcquireSystemProperties` and
//! after `ReleaseSystemProperties`, attributes naming a node are an
//! invalid node (5) then, before any request. Ours refused every SVM call
//! without a memory manager (newest and 6.2 set it up with the snapshot)
//! and translated nodes with the memory manager's table, which outlives
//! the snapshot.

use std::ffi::c_void;

use hsakmt_sys::common::{HsaSystemProperties, HSA_SVM_ATTRIBUTE};
use kfd_sys::kfd::{
    KFD_IOCTL_SVM_ATTR_ACCESS, KFD_IOCTL_SVM_ATTR_GRANULARITY, KFD_IOCTL_SVM_ATTR_PREFERRED_LOC,
    KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, KFD_IOCTL_SVM_ATTR_SET_FLAGS,
};

mod support;

use support::kmt;

/// `HSA_SVM_FLAG_HOST_ACCESS | HSA_SVM_FLAG_COHERENT`.
const FLAGS: u32 = 0x3;

fn attr(r#type: u32, value: u32) -> HSA_SVM_ATTRIBUTE {
    HSA_SVM_ATTRIBUTE { r#type, value }
}

/// kfdtest's `RegisterSVMRange` attributes for GPU node `g`.
fn four(g: u32) -> [HSA_SVM_ATTRIBUTE; 4] {
    [
        attr(KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, g),
        attr(KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, g),
        attr(KFD_IOCTL_SVM_ATTR_SET_FLAGS, FLAGS),
        attr(KFD_IOCTL_SVM_ATTR_ACCESS, g),
    ]
}

fn set(p: *mut c_void, attrs: &mut [HSA_SVM_ATTRIBUTE]) -> u32 {
    // SAFETY: a live 16 KiB mapping and a live attribute array of that
    // length.
    unsafe { hsakmt::svm::hsaKmtSVMSetAttr(p, 0x4000, attrs.len() as u32, attrs.as_mut_ptr()).0 }
}

fn get(p: *mut c_void, attrs: &mut [HSA_SVM_ATTRIBUTE]) -> u32 {
    // SAFETY: as for `set`.
    unsafe { hsakmt::svm::hsaKmtSVMGetAttr(p, 0x4000, attrs.len() as u32, attrs.as_mut_ptr()).0 }
}

/// How many `AMDKFD_IOC_SVM` requests the simulator has seen.
fn svm_requests(trace: &std::sync::Arc<std::sync::Mutex<Vec<u8>>>) -> usize {
    let t = trace.lock().unwrap();
    String::from_utf8_lossy(&t)
        .lines()
        .filter(|l| l.contains("AMDKFD_IOC_SVM "))
        .count()
}

#[test]
fn svm_calls_need_the_snapshot_only_for_node_ids() {
    let sim = kmt::sim_on("mi210");
    let trace = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    sim.set_trace(SharedBuf(trace.clone()));
    // SAFETY: a fresh private anonymous mapping; unmapped at the end.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            0x4000,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    let g = 1; // mi210's GPU node
               // SAFETY: no arguments.
    assert_eq!(unsafe { hsakmt::openclose::hsaKmtOpenKFD().0 }, 0);

    // No snapshot yet.
    assert_eq!(set(p, &mut [attr(KFD_IOCTL_SVM_ATTR_SET_FLAGS, FLAGS)]), 0);
    assert_eq!(set(p, &mut [attr(KFD_IOCTL_SVM_ATTR_GRANULARITY, 3)]), 0);
    let mut q = [
        attr(KFD_IOCTL_SVM_ATTR_GRANULARITY, 0),
        attr(KFD_IOCTL_SVM_ATTR_SET_FLAGS, 0),
    ];
    assert_eq!(get(p, &mut q), 0);
    assert_eq!((q[0].value, q[1].value & FLAGS), (3, FLAGS));
    assert_eq!(
        svm_requests(&trace),
        3,
        "the node-free calls reach the kernel"
    );
    assert_eq!(set(p, &mut four(g)), 5, "a node without a snapshot");
    let mut q = [attr(KFD_IOCTL_SVM_ATTR_ACCESS, g)];
    assert_eq!(get(p, &mut q), 5);
    assert_eq!(svm_requests(&trace), 3, "refused before any request");

    // With the snapshot: the four attributes reach the kernel.
    let mut sys = HsaSystemProperties::default();
    assert_eq!(
        // SAFETY: a live out struct.
        unsafe { hsakmt::topology::hsaKmtAcquireSystemProperties(&mut sys).0 },
        0
    );
    assert_eq!(set(p, &mut four(g)), 0);
    let mut q = [
        attr(KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, 0),
        attr(KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, 0),
        attr(KFD_IOCTL_SVM_ATTR_ACCESS, g),
    ];
    assert_eq!(get(p, &mut q), 0);
    assert_eq!(
        (q[0].value, q[1].value, q[2].r#type, q[2].value),
        (g, g, KFD_IOCTL_SVM_ATTR_ACCESS, g)
    );
    assert_eq!(svm_requests(&trace), 5);

    // Released: nodes are unknown again, the rest still goes through.
    assert_eq!(
        // SAFETY: no arguments.
        unsafe { hsakmt::topology::hsaKmtReleaseSystemProperties().0 },
        0
    );
    assert_eq!(set(p, &mut four(g)), 5, "a node after the release");
    assert_eq!(set(p, &mut [attr(KFD_IOCTL_SVM_ATTR_SET_FLAGS, FLAGS)]), 0);
    assert_eq!(svm_requests(&trace), 6);

    // SAFETY: our own mapping.
    unsafe { libc::munmap(p, 0x4000) };
    kmt::close_and_check(&sim);
}

/// A `Write` into a shared buffer (the simulator's trace sink).
struct SharedBuf(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for SharedBuf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
