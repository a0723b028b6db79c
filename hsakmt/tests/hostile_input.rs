//! Issue 17's hostile inputs at the C border, on the in-process simulator:
//! huge counts, NULL/unreadable/unwritable pointers, pointers checked
//! before the scalars. Each expected status is the C library's (5.2.3's
//! memory.c, perfctr.c, queues.c; the newest library's where noted).
//! None of them may crash, abort on an allocation or panic
//! (`border::panics_caught` stays 0).
//!
//! Compiled for the build's generation: `cargo test -p hsakmt` (newest)
//! and `cargo test -p hsakmt --no-default-features --features rocm-5.2`.

use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Arc;

use hsakmt::generation::{abi, MapFlagsArg, PROFILE};
use hsakmt::profile::ProcessVm;
use hsakmt_sys::common::{HsaCounter, HsaMemoryRange, HsaPmcTraceRoot};
use serial_test::serial;

mod support;

use support::kmt;

/// Two pages: the first read/write, the second `PROT_NONE`, so an array
/// placed at the end of the first has nothing readable after it.
struct Guarded {
    base: *mut u8,
}

const PAGE: usize = kfd_sys::PAGE_SIZE as usize;

impl Guarded {
    fn new() -> Guarded {
        // SAFETY: a fresh anonymous mapping; nothing else refers to it.
        let base = unsafe {
            libc::mmap(
                null_mut(),
                2 * PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED);
        // SAFETY: the second page of the mapping just made.
        let r =
            unsafe { libc::mprotect((base as usize + PAGE) as *mut c_void, PAGE, libc::PROT_NONE) };
        assert_eq!(r, 0);
        Guarded { base: base.cast() }
    }

    /// `n` zeroed elements of `T` ending where the unreadable page starts.
    fn tail<T>(&self, n: usize) -> *mut T {
        let bytes = n * std::mem::size_of::<T>();
        assert!(bytes <= PAGE);
        let p = (self.base as usize + PAGE - bytes) as *mut T;
        // SAFETY: inside the first (read/write) page.
        unsafe { std::ptr::write_bytes(p.cast::<u8>(), 0, bytes) };
        p
    }

    /// The unreadable, unwritable page.
    fn none<T>(&self) -> *mut T {
        (self.base as usize + PAGE) as *mut T
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.base.cast(), 2 * PAGE) };
    }
}

fn open() -> Arc<kfd_sim::Sim> {
    let (sim, nodes) = kmt::open_on("mi210");
    assert_eq!(nodes, 2);
    sim
}

/// Issue 17 item 1: `NumberOfNodes × 4` overflowed into a slice length.
/// 5.2.3's `validate_nodeid_array` takes a 32-bit count: 1 << 62 is 0
/// there → INVALID_PARAMETER (3), in all four ToNodes functions.
#[test]
#[serial]
fn huge_node_counts_are_invalid_parameters() {
    let sim = open();
    let g = Guarded::new();
    let nodes = g.tail::<u32>(1);
    // SAFETY: `nodes` holds one node id, readable.
    unsafe { nodes.write(1) };
    let buf = kmt::alloc(0x10000);
    let host = kmt::HostBuf::new(0x10000);
    let mut va = 0x5eed_u64;
    let mut addr: *mut c_void = null_mut();
    let mut size = 0u64;
    let handle: hsakmt_sys::common::HsaSharedMemoryHandle = [0; 8];
    let mut info = abi::HsaGraphicsResourceInfo::default();
    for n in [1u64 << 62, 1 << 32, u64::MAX, (1 << 32) + 1] {
        // SAFETY: every pointer is live; the counts are the bad input.
        unsafe {
            let s = hsakmt::memory::hsaKmtMapMemoryToGPUNodes(
                buf,
                0x10000,
                &mut va,
                MapFlagsArg::default(),
                n,
                nodes,
            );
            assert_eq!(s.0, 3, "MapMemoryToGPUNodes count {n:#x}");
            let s = hsakmt::memory::hsaKmtRegisterMemoryToNodes(host.0, 0x10000, n, nodes);
            assert_eq!(s.0, 3, "RegisterMemoryToNodes count {n:#x}");
            let s = hsakmt::memory::hsaKmtRegisterSharedHandleToNodes(
                &handle, &mut addr, &mut size, n, nodes,
            );
            assert_eq!(s.0, 3, "RegisterSharedHandleToNodes count {n:#x}");
            let s = hsakmt::memory::hsaKmtRegisterGraphicsHandleToNodes(0, &mut info, n, nodes);
            assert_eq!(s.0, 3, "RegisterGraphicsHandleToNodes count {n:#x}");
        }
    }
    assert_eq!(va, 0x5eed, "AlternateVAGPU written");
    // 5.2.3 validates the graphics node list whatever it is; 6.2.4 and
    // the newest library only a list that is given (then the bad dma-buf
    // fd: 1).
    let want = if PROFILE.border.graphics_node_list_required {
        3
    } else {
        1
    };
    // SAFETY: live info; no node list.
    let s = unsafe {
        hsakmt::memory::hsaKmtRegisterGraphicsHandleToNodes(
            u32::MAX as u64,
            &mut info,
            0,
            null_mut(),
        )
    };
    assert_eq!(s.0, want);
    kmt::free(buf, 0x10000);
    drop(host);
    kmt::close_and_check(&sim);
}

/// Item 7: MapMemoryToGPUNodes leaves `AlternateVAGPU` alone for memory
/// that is not a userptr (5.2.3's fmm_map_to_gpu_nodes writes it only
/// for userptrs); AllocMemory and CreateQueue check their scalars
/// before they touch an unwritable out-pointer.
#[test]
#[serial]
fn scalars_are_checked_before_pointers() {
    let sim = open();
    let g = Guarded::new();
    let node = g.tail::<u32>(1);
    // SAFETY: one readable node id.
    unsafe { node.write(1) };
    let buf = kmt::alloc(0x10000);
    let mut va = 0x5eed_u64;
    // SAFETY: live buffer, out word and node list.
    let s = unsafe {
        hsakmt::memory::hsaKmtMapMemoryToGPUNodes(
            buf,
            0x10000,
            &mut va,
            MapFlagsArg::default(),
            1,
            node,
        )
    };
    assert_eq!(s.0, 0);
    assert_eq!(va, 0x5eed, "AlternateVAGPU written for a non-userptr");
    // SAFETY: `buf` is mapped.
    assert_eq!(unsafe { hsakmt::memory::hsaKmtUnmapMemoryToGPU(buf) }.0, 0);
    kmt::free(buf, 0x10000);

    // Every flag set: PageSize 1 GiB, so 64 KiB is a bad size (3), found
    // before the unwritable out-pointer is read for FixedAddress.
    // SAFETY: the out-pointer is never touched on this path (the bad input).
    let s = unsafe {
        hsakmt::memory::hsaKmtAllocMemory(0, 0x10000, abi::HsaMemFlags(0xffff_ffff), g.none())
    };
    assert_eq!(s.0, 3);
    // A bad node (5) before a NULL out-pointer (3), as C.
    // SAFETY: NULL out-pointer, the bad input.
    let s = unsafe { hsakmt::memory::hsaKmtAllocMemory(7, 0x1000, kmt::host_flags(), null_mut()) };
    assert_eq!(s.0, 5);

    let ring = kmt::alloc(0x1000);
    // SAFETY: the resource is unreadable; the node check comes first (5).
    let s = unsafe { kmt::create_queue(0xffff_ffff, 1, 0, ring, null_mut(), g.none()) };
    assert_eq!(s.0, 5);
    // A bad priority (3) before the node (5).
    // SAFETY: as above.
    let s = unsafe { kmt::create_queue(0xffff_ffff, 1, 9, ring, null_mut(), g.none()) };
    assert_eq!(s.0, 3);
    // A bad node (5) before a bad queue type (3).
    // SAFETY: as above.
    let s = unsafe { kmt::create_queue(0xffff_ffff, 77, 0, ring, null_mut(), g.none()) };
    assert_eq!(s.0, 5);
    kmt::free(ring, 0x1000);
    kmt::close_and_check(&sim);
}

/// Item 2: `firstGWS` is optional (5.2.3 writes it only when non-NULL).
/// Also the CU mask: the kernel reads at most 1024 bits of a longer mask,
/// and so does the library (a 32-word array, count 0xffffffe0).
#[test]
#[serial]
fn queue_gws_and_cu_mask() {
    let sim = open();
    let ring = kmt::alloc(0x1000);
    let mut q = abi::HsaQueueResource::default();
    // SAFETY: live ring and resource.
    let s = unsafe { kmt::create_queue(1, 1, 0, ring, null_mut(), &mut q) };
    assert_eq!(s.0, 0);
    // SAFETY: NULL `firstGWS` is allowed.
    let r = unsafe { hsakmt::queues::hsaKmtAllocQueueGWS(q.QueueId, 1, null_mut()) }.0;
    assert_eq!(r, 0);
    let g = Guarded::new();
    let mask = g.tail::<u32>(32);
    // SAFETY: 32 readable words; the count's other words are never read.
    unsafe {
        for i in 0..32 {
            mask.add(i).write(u32::MAX);
        }
        assert_eq!(
            hsakmt::queues::hsaKmtSetQueueCUMask(q.QueueId, 0xffff_ffe0, mask).0,
            0
        );
    }
    // SAFETY: the queue just made.
    let r = unsafe { hsakmt::queues::hsaKmtDestroyQueue(q.QueueId) }.0;
    assert_eq!(r, 0);
    kmt::free(ring, 0x1000);
    kmt::close_and_check(&sim);
}

/// Item 3: 5.2.3's PmcRegisterTrace checks the node (5) and its
/// 512-counter limit (NO_MEMORY, 6) before it reads the array; 0x80000000
/// counters used to abort on a 64 GiB allocation.
#[test]
#[serial]
fn pmc_counter_limit_before_the_array() {
    let sim = open();
    let g = Guarded::new();
    let counters = g.tail::<HsaCounter>(4);
    let mut root = HsaPmcTraceRoot::default();
    for n in [513u32, 1000, 0x8000_0000, u32::MAX] {
        // SAFETY: four readable counters; the count is the bad input.
        let s = unsafe { hsakmt::perf::hsaKmtPmcRegisterTrace(1, n, counters, &mut root) };
        assert_eq!(s.0, 6, "{n} counters");
    }
    // SAFETY: as above, with a bad node.
    let s = unsafe { hsakmt::perf::hsaKmtPmcRegisterTrace(9, 1000, counters, &mut root) };
    assert_eq!(s.0, 5);
    kmt::close_and_check(&sim);
}

/// Item 4: 5.2.3's ProcessVMRead/Write hand the caller's arrays to the
/// kernel untouched (it copies them in itself): no allocation by the
/// counts, no read of an unreadable array; the kernel (without the
/// ROCm-only CROSS_MEMORY_COPY) fails → ERROR (1). The newest library
/// does not implement them (NOT_IMPLEMENTED).
#[test]
#[serial]
fn process_vm_counts_are_the_kernels_business() {
    let sim = open();
    let g = Guarded::new();
    let r = g.tail::<HsaMemoryRange>(1);
    let bad: *mut HsaMemoryRange = g.none();
    let want = if PROFILE.border.process_vm == ProcessVm::CrossMemoryCopy {
        1
    } else {
        hsakmt::border::st::NOT_IMPLEMENTED.0
    };
    let pid = std::process::id();
    let mut n = 7u64;
    for (local, lc, remote, rc) in [
        (r, 0x7fff_ffff_ffffu64, r, 1u64),
        (r, u64::MAX, r, u64::MAX - 1),
        (bad, 1, bad, 1),
        (r, 1, bad, u64::MAX),
    ] {
        // SAFETY: live or deliberately unreadable arrays (the kernel
        // copies them, the library does not).
        unsafe {
            assert_eq!(
                hsakmt::memory::hsaKmtProcessVMRead(pid, local, lc, remote, rc, &mut n).0,
                want
            );
            assert_eq!(
                hsakmt::memory::hsaKmtProcessVMWrite(pid, local, lc, remote, rc, &mut n).0,
                want
            );
        }
    }
    kmt::close_and_check(&sim);
}

/// The other caller-sized arrays: SVM attribute lists longer than one
/// request carries (ERROR, nothing read), event-age arrays (used in
/// place), and the PC-sampling capability buffer (bounded).
#[test]
#[serial]
fn other_counts_are_bounded() {
    let sim = open();
    let g = Guarded::new();
    let attrs = g.tail::<hsakmt_sys::common::HSA_SVM_ATTRIBUTE>(1);
    let host = kmt::HostBuf::new(0x10000);
    for n in [2045u32, 0x8000_0000, u32::MAX] {
        // SAFETY: one readable attribute; the count is the bad input.
        unsafe {
            assert_eq!(
                hsakmt::svm::hsaKmtSVMSetAttr(host.0, 0x10000, n, attrs).0,
                1,
                "{n} attributes"
            );
            assert_eq!(
                hsakmt::svm::hsaKmtSVMGetAttr(host.0, 0x10000, n, attrs).0,
                1,
                "{n} attributes"
            );
        }
    }
    #[cfg(feature = "newest")]
    {
        let mut d = hsakmt_sys::common::HsaEventDescriptor::default();
        let mut e: *mut abi::HsaEvent = null_mut();
        // SAFETY: live descriptor and out-pointer.
        let r = unsafe { hsakmt::events::hsaKmtCreateEvent(&mut d, true, true, &mut e) }.0;
        assert_eq!(r, 0);
        // A NULL element ends the wait (INVALID_HANDLE) before the ages
        // are touched, whatever the count says: nothing is copied by it
        // (an unreadable age array used to be copied). Only the newest C
        // library's calloc of the kernel's array of `n` event records
        // comes first: where that much memory cannot be had, NO_MEMORY,
        // as C.
        let list = g.tail::<*mut abi::HsaEvent>(1);
        let ages: *mut u64 = g.none();
        // SAFETY: one readable (NULL) event pointer, the bad input.
        unsafe {
            for n in [1u32, 0x8000_0000] {
                let s = hsakmt::events::hsaKmtWaitOnMultipleEvents_Ext(list, n, true, 0, ages);
                let fits = Vec::<kfd_sys::kfd::kfd_event_data>::new()
                    .try_reserve_exact(n as usize)
                    .is_ok();
                assert_eq!(s.0, if fits { 4 } else { 6 }, "{n} events");
            }
            assert_eq!(hsakmt::events::hsaKmtDestroyEvent(e).0, 0);
        }
        let mut needed = 0u32;
        let info = g.tail::<kfd_perf::PcSamplingInfo>(8);
        // SAFETY: eight writable entries, more than the kernel reports;
        // the buffer offered to it is bounded whatever the size says.
        let s = unsafe {
            hsakmt::perf::hsaKmtPcSamplingQueryCapabilities(1, info.cast(), u32::MAX, &mut needed)
        };
        assert_ne!(s.0, 6, "PcSamplingQueryCapabilities ran out of memory");
    }
    drop(host);
    kmt::close_and_check(&sim);
}

/// Found by the conformance fuzz family: C checks a field or the node
/// before it reads the rest. CreateEvent reads the descriptor's
/// `EventType` first (≥ MAXID → 3); DbgWavefrontControl and
/// DbgAddressWatch validate the node (5) before reading the message or
/// the arrays.
#[test]
#[serial]
fn fields_and_nodes_before_the_data_behind_them() {
    let sim = open();
    let g = Guarded::new();
    let ty = g.tail::<u32>(2);
    let mut e: *mut abi::HsaEvent = null_mut();
    // SAFETY: the first 8 bytes of the descriptor are readable, the rest
    // is the unreadable page (the bad input); C reads only the type.
    unsafe {
        ty.write(0xffff_ffff);
        let s = hsakmt::events::hsaKmtCreateEvent(ty.cast(), true, false, &mut e);
        assert_eq!(s.0, 3);
        let s = hsakmt::debug::hsaKmtDbgWavefrontControl(
            7,
            hsakmt_sys::common::HSA_DBG_WAVEOP(0),
            hsakmt_sys::common::HSA_DBG_WAVEMODE(0),
            0,
            g.none(),
        );
        assert_eq!(s.0, 5);
        let s = hsakmt::debug::hsaKmtDbgAddressWatch(7, 1, g.none(), g.none(), g.none(), g.none());
        assert_eq!(s.0, 5);
    }
    kmt::close_and_check(&sim);
}

/// The event before the age behind it: a pointer that names no event is
/// an invalid handle (4), and the (unreadable) age is never read; the C
/// library fails on the event first too. (The 5.2 ABI has no `_Ext`.)
#[cfg(not(feature = "rocm-5.2"))]
#[test]
#[serial]
fn the_event_before_its_age() {
    let sim = open();
    let g = Guarded::new();
    let unknown = g.tail::<abi::HsaEvent>(1);
    // SAFETY: the event pointer names no event and the age pointer is
    // unreadable: the border must refuse the event without reading either.
    let s = unsafe { hsakmt::events::hsaKmtWaitOnEvent_Ext(unknown, 0, g.none()) };
    assert_eq!(s.0, 4);
    // SAFETY: as above; the event memory is not even mapped.
    let s = unsafe { hsakmt::events::hsaKmtWaitOnEvent_Ext(g.none(), 0, g.none()) };
    assert_eq!(s.0, 4);
    kmt::close_and_check(&sim);
}
