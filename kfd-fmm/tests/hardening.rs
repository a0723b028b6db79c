//! Regression tests for memory-safety fixes (sizes that wrap, memory freed
//! under a live `Buffer`, guard pages) and for the behaviour switches
//! ([`FmmRules`]) that differ between the C libraries.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use kfd_fmm::{
    AllocMemFlags, Buffer, FmmError, FmmOptions, FmmRules, MemFlags, MemoryKind, VaAllocator,
    MAX_ALLOC_SIZE, PAGE_SIZE,
};
use kfd_sys::testing::Cause;

fn cause(e: FmmError) -> String {
    e.cause()
}

/// The simulator's ioctl trace, as text.
#[derive(Clone, Default)]
struct Trace(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Trace {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Trace {
    /// The first ALLOC_MEMORY_OF_GPU line and the flags it carries.
    fn first_alloc(&self) -> (String, AllocMemFlags) {
        let text = self.text();
        let line = text
            .lines()
            .find(|l| l.contains("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU"))
            .expect("traced")
            .to_string();
        let bits: u32 = line
            .split("flags: ")
            .nth(1)
            .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse().ok())
            .expect("flags in the trace");
        (line, AllocMemFlags::from_bits_retain(bits))
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
    fn count(&self, name: &str) -> usize {
        self.text()
            .lines()
            .filter(|l| l.contains(&format!("{name} ")) || l.contains(&format!("{name}(")))
            .count()
    }
}

/// True if every page of the range is mapped (any protection).
fn mapped(addr: u64, len: u64) -> bool {
    let mut v = vec![0u8; len.div_ceil(PAGE_SIZE) as usize];
    // SAFETY: mincore only reads page tables and writes one byte per page
    // into `v`, which has room for all of them.
    unsafe { libc::mincore(addr as *mut libc::c_void, len as usize, v.as_mut_ptr()) == 0 }
}

/// Primary-context options with one or more rules changed from the
/// newest library's.
fn with_rules(change: impl FnOnce(&mut FmmRules)) -> FmmOptions {
    let mut o = FmmOptions::primary();
    change(&mut o.rules);
    o
}

/// Sizes near 2^64 used to wrap in the padding arithmetic and reach
/// munmap with a range covering the thread's stack (SIGSEGV; a panic in
/// debug builds). Now each path reports the C library's status for an
/// impossible allocation, and nothing is left behind.
#[test]
fn huge_sizes_fail_with_the_c_status_and_unmap_nothing() {
    for reserve_svm in [false, true] {
        let opts = FmmOptions {
            reserve_svm,
            ..c_rules()
        };
        let (sim, fmm) = primary_with("mi210", opts);
        let g = gpu_node(&fmm);
        let objects = fmm.object_count();
        let huge = 0u64.wrapping_sub(512 * PAGE_SIZE);
        // The review's reproducer: refused before any size arithmetic,
        // naming the kind of memory (the C border gives system memory
        // ERROR, VRAM and scratch NO_MEMORY).
        let too_big = |kind| format!("TooBig({kind:?})");
        let e = |r: kfd_fmm::Result<u64>| match r.unwrap_err() {
            FmmError::TooBig { kind } => too_big(kind),
            other => cause(other),
        };
        let system = too_big(MemoryKind::System);
        assert_eq!(
            e(fmm.alloc_memory(0, huge, MemFlags::HOST_ACCESS, None)),
            system
        );
        assert_eq!(
            e(fmm.alloc_memory(g, huge, MemFlags::HOST_ACCESS, None)),
            system
        );
        let gtt = MemFlags::NON_PAGED | MemFlags::HOST_ACCESS | MemFlags::GTT_ACCESS;
        assert_eq!(e(fmm.alloc_memory(g, huge, gtt, None)), system);
        let device = too_big(MemoryKind::Device);
        assert_eq!(
            e(fmm.alloc_memory(g, huge, MemFlags::NON_PAGED, None)),
            device
        );
        let aql = MemFlags::NON_PAGED | MemFlags::AQL_QUEUE_MEMORY;
        assert_eq!(e(fmm.alloc_memory(g, 1 << 63, aql, None)), device);
        // Not above the limit, but its ring's double mapping is.
        assert_eq!(
            e(fmm.alloc_memory(g, MAX_ALLOC_SIZE, aql, None)),
            "NoAddressSpace"
        );
        assert_eq!(
            e(fmm.alloc_memory(g, huge, MemFlags::SCRATCH, None)),
            too_big(MemoryKind::Scratch)
        );
        // OnlyAddress goes down the system memory path (the newest
        // library's rule, the default).
        let only = MemFlags::NON_PAGED | MemFlags::ONLY_ADDRESS;
        assert_eq!(e(fmm.alloc_memory(g, huge, only, None)), system);
        // An alignment of 2^63 cannot be padded for either.
        assert_eq!(
            e(fmm.alloc_memory_align(g, PAGE_SIZE, 1 << 63, MemFlags::NON_PAGED, None)),
            "NoAddressSpace"
        );
        // Registration: ERROR, before any ioctl.
        let ee = |r: kfd_fmm::Result<()>| cause(r.unwrap_err());
        assert_eq!(ee(fmm.register_memory(0x10_0000, huge)), "Failed");
        assert_eq!(ee(fmm.register_memory(u64::MAX - 100, 200)), "Failed");
        // A range that wraps is not an SVM range.
        assert_eq!(
            ee(fmm.map_to_gpu(u64::MAX - 10, 100).map(|_| ())),
            "InvalidArgument"
        );
        assert!(fmm.alloc_svm_area(huge, g).is_err());
        assert!(fmm.alloc_svm_area(u64::MAX, g).is_err());
        let exec = |size| kfd_fmm::ExecAlloc {
            size,
            node_id: g,
            non_paged: true,
            device_local: false,
            uncached: false,
        };
        assert!(fmm.alloc_exec(&exec(u64::MAX)).is_err());
        assert!(fmm.alloc_exec(&exec(huge)).is_err());
        assert!(fmm.alloc_doorbell(g, huge, 0).is_err());
        // The stack is still there.
        let probe = [7u8; 64];
        assert_eq!(std::hint::black_box(&probe)[63], 7);
        assert_eq!(fmm.object_count(), objects);
        teardown(sim, fmm);
    }
    // The VA allocator ignores a range that would wrap.
    let mut va = VaAllocator::new(0x1000, 0xffff);
    va.free(u64::MAX, 2);
    assert_eq!(va.free_bytes(), 0xf000);
}

/// A buffer's accessors with offsets that wrap report an error (the error
/// path used to add them to the address: a debug-build panic).
#[test]
fn buffer_offsets_that_wrap_are_errors() {
    let (sim, fmm) = primary("mi210");
    let buf = fmm
        .alloc_buffer(0, PAGE_SIZE, 0, MemFlags::HOST_ACCESS)
        .unwrap();
    let mut b = [0u8; 2];
    assert_eq!(
        cause(buf.read(u64::MAX, &mut b).unwrap_err()),
        "RangeOutsideObject"
    );
    assert_eq!(
        cause(buf.write(u64::MAX - 1, &b).unwrap_err()),
        "RangeOutsideObject"
    );
    drop(buf);
    teardown(sim, fmm);
}

/// `free_memory` by address used to free the memory of a live `Buffer`;
/// its writes then landed in whatever was mapped there next, and its drop
/// freed a new allocation at the same address.
#[test]
fn address_based_release_refuses_memory_a_buffer_owns() {
    let (sim, fmm) = primary("mi210");
    let g = gpu_node(&fmm);
    let objects = fmm.object_count();
    let kinds = [
        (0, MemFlags::HOST_ACCESS),
        (0, MemFlags::NON_PAGED | MemFlags::HOST_ACCESS),
        (g, MemFlags::NON_PAGED),
        (g, MemFlags::NON_PAGED | MemFlags::ONLY_ADDRESS),
        (g, MemFlags::SCRATCH),
    ];
    for (node, flags) in kinds {
        let buf = fmm.alloc_buffer(node, 16 * PAGE_SIZE, 0, flags).unwrap();
        let a = buf.addr();
        assert_eq!(
            cause(fmm.free_memory(a).unwrap_err()),
            "OwnedByHandle",
            "{flags:?}"
        );
        if !flags.contains(MemFlags::SCRATCH) {
            assert!(matches!(
                fmm.unmap_from_gpu(a),
                Err(FmmError::OwnedByHandle(x)) if x == a
            ));
            assert_eq!(
                cause(fmm.deregister_memory(a).unwrap_err()),
                "OwnedByHandle"
            );
            assert!(fmm.pointer_info(a).is_ok(), "still there");
        }
        if buf.is_cpu_accessible() {
            buf.write(8, b"alive").unwrap();
            let mut out = [0u8; 5];
            buf.read(8, &mut out).unwrap();
            assert_eq!(&out, b"alive");
        }
        drop(buf);
        assert_eq!(fmm.object_count(), objects, "{flags:?}: freed by its owner");
    }
    // A stale address cannot take a new allocation at the same place
    // away from its buffer either.
    let first = fmm
        .alloc_buffer(0, PAGE_SIZE, 0, MemFlags::HOST_ACCESS)
        .unwrap();
    let a = first.addr();
    drop(first);
    let second = fmm
        .alloc_buffer(0, PAGE_SIZE, 0, MemFlags::HOST_ACCESS)
        .unwrap();
    assert!(fmm.free_memory(a).is_err() || second.addr() != a);
    second.write(0, b"x").unwrap();
    // Handing the memory back to the address-based API.
    let raw = second.into_raw();
    fmm.free_memory(raw).unwrap();
    // Doorbells held by a buffer.
    let db: Buffer = fmm.alloc_doorbell_buffer(g, 8192, 0).unwrap();
    fmm.map_to_gpu(db.addr(), 8192).unwrap();
    assert_eq!(
        cause(fmm.free_memory(db.addr()).unwrap_err()),
        "OwnedByHandle"
    );
    assert_eq!(
        cause(fmm.unmap_from_gpu(db.addr()).unwrap_err()),
        "OwnedByHandle"
    );
    db.write(0, &7u64.to_le_bytes()).unwrap();
    drop(db);
    assert_eq!(fmm.object_count(), objects);
    teardown(sim, fmm);
}

/// `read` and `write` race from several threads through `&Buffer` (it is
/// `Sync`): every byte access is atomic, so this is defined behaviour and
/// each byte read is one of the values written.
#[test]
fn concurrent_reads_and_writes_through_shared_buffers() {
    let (sim, fmm) = primary("mi210");
    let buf = fmm
        .alloc_buffer(0, PAGE_SIZE, 0, MemFlags::HOST_ACCESS)
        .unwrap();
    std::thread::scope(|s| {
        for v in [0x11u8, 0x22] {
            let buf = &buf;
            s.spawn(move || {
                for _ in 0..200 {
                    buf.write(0, &[v; 256]).unwrap();
                }
            });
        }
        let buf = &buf;
        s.spawn(move || {
            let mut out = [0u8; 256];
            for _ in 0..200 {
                buf.read(0, &mut out).unwrap();
                assert!(out.iter().all(|b| [0, 0x11, 0x22].contains(b)));
            }
        });
    });
    drop(buf);
    teardown(sim, fmm);
}

/// Read-only APU system memory is mapped without write permission; a
/// buffer refuses to write it instead of faulting.
#[test]
fn read_only_apu_memory_is_not_written() {
    // An APU whose GPU node also has CPU cores: not a dGPU system.
    let sim = kfd_sim::Sim::preset("apu").unwrap();
    let mut nodes = nodes_of(&sim);
    for n in nodes.iter_mut().filter(|n| n.is_gpu()) {
        n.cpu_cores = 4;
    }
    let fmm = Arc::new(kfd_fmm::Fmm::new(open_kfd(&sim), nodes, FmmOptions::primary()).unwrap());
    assert!(!fmm.is_dgpu());
    let buf = fmm
        .alloc_buffer(0, PAGE_SIZE, 0, MemFlags::HOST_ACCESS | MemFlags::READ_ONLY)
        .unwrap();
    assert!(buf.is_cpu_accessible());
    assert_eq!(cause(buf.write(0, b"x").unwrap_err()), "NotSupported");
    let mut out = [1u8; 4];
    buf.read(0, &mut out).unwrap();
    assert_eq!(out, [0; 4]);
    drop(buf);
    teardown(sim, fmm);
}

/// In mmap-managed apertures the guard pages around an allocation are
/// unmapped with the alignment padding, as in the C library (5.2.3 and
/// the newest `mmap_aperture_allocate_aligned`): the object's reservation
/// is exactly its size, one VMA per object, and freeing gives back just
/// that range.
#[test]
fn guard_pages_are_released_in_mmap_apertures() {
    let (sim, fmm) = primary("mi210");
    assert_eq!(fmm.options().guard_pages, 1);
    for (node, flags) in [
        (0, MemFlags::HOST_ACCESS),
        (gpu_node(&fmm), MemFlags::NON_PAGED),
    ] {
        let a = fmm.alloc_memory(node, 4 * PAGE_SIZE, flags, None).unwrap();
        assert!(mapped(a, 4 * PAGE_SIZE), "the object is reserved");
        assert!(!mapped(a - PAGE_SIZE, PAGE_SIZE), "leading guard unmapped");
        assert!(
            !mapped(a + 4 * PAGE_SIZE, PAGE_SIZE),
            "trailing guard unmapped"
        );
        fmm.free_memory(a).unwrap();
        assert!(!mapped(a, 4 * PAGE_SIZE), "freed with the object");
    }
    teardown(sim, fmm);
}

/// `default_map_all_gpus` (5.2.3) maps the MMIO remap page onto every GPU
/// (no node list: the default mapping set).
#[test]
fn mmio_pages_are_mapped_on_all_gpus() {
    let (sim, fmm) = primary_with("mi300x", with_rules(|r| r.default_map_all_gpus = true));
    let gpus: Vec<u32> = (0..fmm.nodes().len() as u32)
        .filter(|&n| fmm.nodes()[n as usize].is_gpu())
        .collect();
    assert!(gpus.len() > 1);
    for &g in &gpus {
        let mmio = fmm.mmio_address(g).expect("mapped");
        let mut on = fmm.pointer_nodes(mmio).unwrap().mapped;
        on.sort();
        assert_eq!(on, gpus);
    }
    teardown(sim, fmm);
}

/// By default (the newest library) each GPU's MMIO remap page is mapped
/// onto that GPU's usable peers: itself and the GPUs with an io link to it.
#[test]
fn mmio_pages_are_mapped_on_usable_peers() {
    for preset in ["mi300x", "large64"] {
        let sim = kfd_sim::Sim::preset(preset).expect("preset");
        let d: Arc<dyn kfd_sys::Driver> = Arc::new(sim.clone());
        let topo = kfd_topology::Topology::snapshot(&*d).expect("snapshot");
        let fmm = Arc::new(
            kfd_fmm::Fmm::from_topology(open_kfd(&sim), &topo, FmmOptions::primary()).expect("fmm"),
        );
        let mut checked = 0;
        for n in &topo.nodes {
            if n.gpu_id == 0 {
                continue;
            }
            let mut want: Vec<u32> = vec![n.id];
            for m in &topo.nodes {
                if m.gpu_id != 0 && m.io_links.iter().any(|l| l.node_to == n.id) {
                    want.push(m.id);
                }
            }
            want.sort();
            want.dedup();
            let mmio = fmm.mmio_address(n.id).expect("mapped");
            let mut on = fmm.pointer_nodes(mmio).unwrap().mapped;
            on.sort();
            assert_eq!(on, want, "{preset} node {}", n.id);
            checked += want.len();
        }
        let gpus = topo.nodes.iter().filter(|n| n.gpu_id != 0).count();
        if preset == "mi300x" {
            assert_eq!(checked, gpus * gpus, "mi300x GPUs all reach each other");
        } else {
            assert_eq!(checked, gpus, "large64 GPUs have no peer links");
        }
        teardown(sim, fmm);
    }
}

/// Without `refuse_extended_coherent_mixes` (5.2.3) CoarseGrain with Uncached
/// drops COHERENT and adds UNCACHED and ExtendedCoherent with Uncached is
/// allowed; with it (newest) the latter is refused (status 3). Both check
/// the node before the size.
#[test]
fn flag_combination_rule() {
    let (sim, fmm) = primary_with(
        "mi210",
        with_rules(|r| r.refuse_extended_coherent_mixes = false),
    );
    let g = gpu_node(&fmm);
    let trace = Trace::default();
    sim.set_trace(trace.clone());
    let f = MemFlags::NON_PAGED | MemFlags::COARSE_GRAIN | MemFlags::UNCACHED;
    let a = fmm.alloc_memory(g, PAGE_SIZE, f, None).unwrap();
    let (line, ioc) = trace.first_alloc();
    assert!(ioc.contains(AllocMemFlags::UNCACHED), "{line}");
    assert!(!ioc.contains(AllocMemFlags::COHERENT), "{line}");
    fmm.free_memory(a).unwrap();
    let ext = MemFlags::NON_PAGED | MemFlags::EXTENDED_COHERENT | MemFlags::UNCACHED;
    fmm.free_memory(fmm.alloc_memory(g, PAGE_SIZE, ext, None).unwrap())
        .unwrap();
    assert_eq!(
        cause(fmm.alloc_memory(9, 0, f, None).unwrap_err()),
        "InvalidNode"
    );
    teardown(sim, fmm);

    let (sim, fmm) = primary("mi210");
    assert_eq!(
        cause(fmm.alloc_memory(g, PAGE_SIZE, ext, None).unwrap_err()),
        "ConflictingFlags"
    );
    assert_eq!(
        cause(fmm.alloc_memory(9, 0, ext, None).unwrap_err()),
        "InvalidNode"
    );
    // The newest library allows CoarseGrain with Uncached ...
    fmm.free_memory(fmm.alloc_memory(g, PAGE_SIZE, f, None).unwrap())
        .unwrap();
    teardown(sim, fmm);
    // ... 6.2.4 refuses it too.
    let (sim, fmm) = primary_with("mi210", with_rules(|r| r.refuse_coarse_uncached = true));
    assert_eq!(
        cause(fmm.alloc_memory(g, PAGE_SIZE, f, None).unwrap_err()),
        "ConflictingFlags"
    );
    assert_eq!(
        cause(fmm.alloc_memory(9, 0, f, None).unwrap_err()),
        "InvalidNode"
    );
    teardown(sim, fmm);
}

/// Without `refuse_empty_registration` (every C library: 5.2.3, 6.2.4
/// and the newest) a NULL address or an empty range goes on to the
/// kernel's userptr allocation; with it, it is refused before any ioctl.
/// The status is ERROR either way.
#[test]
fn empty_registrations_go_to_the_kernel_without_the_rule() {
    let mut host = vec![0u8; 2 * PAGE_SIZE as usize];
    let addr = (host.as_mut_ptr() as u64 + PAGE_SIZE - 1) & !(PAGE_SIZE - 1);
    let refuse = with_rules(|r| r.refuse_empty_registration = true);
    for (opts, ioctls) in [(FmmOptions::primary(), 1), (refuse, 0)] {
        let (sim, fmm) = primary_with("mi210", opts);
        let objects = fmm.object_count();
        for (a, size) in [(0, PAGE_SIZE), (addr, 0)] {
            let trace = Trace::default();
            sim.set_trace(trace.clone());
            // The kernel's refusal, or ours before any request (ERROR
            // at the C border either way).
            let refused_by = if ioctls == 1 { "Ioctl" } else { "Failed" };
            assert_eq!(cause(fmm.register_memory(a, size).unwrap_err()), refused_by);
            assert_eq!(
                trace.count("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU"),
                ioctls,
                "{a:#x}+{size:#x}: {}",
                trace.text()
            );
        }
        assert_eq!(fmm.object_count(), objects);
        teardown(sim, fmm);
    }
    drop(host);
}

/// `ShareVia::RocmIpc` (5.2.3, 6.2.4) shares memory through the ROCm-only
/// IPC export (0x81) and fails with ERROR where the kernel lacks it; no
/// dma-buf is exported.
#[test]
fn share_memory_uses_the_ipc_export() {
    let (sim, fmm) = primary_with(
        "mi210",
        with_rules(|r| r.share = kfd_fmm::ShareVia::RocmIpc),
    );
    let buf = fmm
        .alloc_buffer(0, 4 * PAGE_SIZE, 0, MemFlags::HOST_ACCESS)
        .unwrap();
    let trace = Trace::default();
    sim.set_trace(trace.clone());
    assert_eq!(
        cause(fmm.share_memory(buf.addr(), 4 * PAGE_SIZE).unwrap_err()),
        "Ioctl"
    );
    // The simulator has no name for the ROCm-only request (nr 0x81).
    let text = trace.text();
    assert_eq!(
        text.lines().filter(|l| l.contains("nr=0x81")).count(),
        1,
        "{text}"
    );
    assert_eq!(trace.count("AMDKFD_IOC_EXPORT_DMABUF"), 0);
    assert_eq!(
        cause(fmm.share_memory(0x7000, PAGE_SIZE).unwrap_err()),
        "NoSuchObject"
    );
    assert_eq!(
        cause(fmm.share_memory(buf.addr(), 1 << 44).unwrap_err()),
        "InvalidArgument"
    );
    drop(buf);
    teardown(sim, fmm);
}

/// The newest rules try the IPC export first and, where the kernel lacks
/// it, share a dma-buf instead: one 0x81 request, then the export, and a
/// handle that imports.
#[test]
fn share_memory_falls_back_to_a_dma_buf() {
    let (sim, fmm) = primary("mi210");
    let g = 1;
    let buf = fmm
        .alloc_buffer(
            g,
            4 * PAGE_SIZE,
            0,
            MemFlags::NON_PAGED | MemFlags::HOST_ACCESS,
        )
        .unwrap();
    let trace = Trace::default();
    sim.set_trace(trace.clone());
    let h = fmm.share_memory(buf.addr(), 4 * PAGE_SIZE).unwrap();
    let text = trace.text();
    let ipc = text.find("nr=0x81").expect("IPC export tried");
    let dmabuf = text
        .find("AMDKFD_IOC_EXPORT_DMABUF")
        .expect("dma-buf export");
    assert!(ipc < dmabuf, "{text}");
    let (addr, size) = fmm.register_shared_handle(&h, &[]).unwrap();
    assert_eq!(size, 4 * PAGE_SIZE);
    fmm.deregister_memory(addr).unwrap();
    drop(buf);
    teardown(sim, fmm);
}

/// A forged share handle: ERROR without `refuse_unmarked_share_handles`
/// (5.2.3 crashes on it), INVALID_PARAMETER with it (newest).
#[test]
fn garbage_share_handle_rule() {
    let garbage = kfd_fmm::ShareHandle([0xdead_beef; 8]);
    let (sim, fmm) = primary_with(
        "mi210",
        with_rules(|r| r.refuse_unmarked_share_handles = false),
    );
    assert_eq!(
        cause(fmm.register_shared_handle(&garbage, &[]).unwrap_err()),
        "BadShareHandle"
    );
    teardown(sim, fmm);
    let (sim, fmm) = primary("mi210");
    assert_eq!(
        cause(fmm.register_shared_handle(&garbage, &[]).unwrap_err()),
        "InvalidArgument"
    );
    teardown(sim, fmm);
}

/// With the SVM API on and `register_through_svm` (6.2.4 and newest),
/// user memory no object covers is registered as an SVM range: one
/// AMDKFD_IOC_SVM, no BO, unknown to pointer queries; maps go through
/// SVM ACCESS_IN_PLACE and report the CPU address; if the SVM request
/// fails, a userptr BO is made instead. Registering inside an allocation
/// is refused with INVALID_HANDLE (`register_needs_userptr`).
#[test]
fn user_memory_registered_through_svm() {
    let (sim, fmm) = primary_with("mi300x", c_rules());
    let host = vec![0u8; 8 * PAGE_SIZE as usize];
    let addr = (host.as_ptr() as u64 + PAGE_SIZE - 1) & !(PAGE_SIZE - 1);
    let bos = live_bos(&sim);
    let trace = Trace::default();
    sim.set_trace(trace.clone());
    fmm.register_memory(addr, 4 * PAGE_SIZE).unwrap();
    assert_eq!(trace.count("AMDKFD_IOC_SVM"), 1, "{}", trace.text());
    assert_eq!(live_bos(&sim), bos);
    assert!(fmm.pointer_info(addr).is_err());
    assert_eq!(fmm.map_to_gpu(addr + 8, 4 * PAGE_SIZE).unwrap(), addr + 8);
    let g = gpu_node(&fmm);
    let mapped = fmm
        .map_to_gpu_nodes(addr, PAGE_SIZE, &[g], kfd_fmm::MemMapFlags::empty())
        .unwrap();
    assert_eq!(mapped, Some(addr));
    assert_eq!(trace.count("AMDKFD_IOC_SVM"), 3, "{}", trace.text());
    fmm.unmap_from_gpu(addr).unwrap();
    fmm.deregister_memory(addr).unwrap();

    // The SVM request fails: a userptr BO after all.
    let other = addr + 6 * PAGE_SIZE;
    sim.inject_fault("SVM", 1, kfd_sys::Errno::EINVAL);
    fmm.register_memory(other, PAGE_SIZE).unwrap();
    assert_eq!(live_bos(&sim), bos + 1);
    assert!(fmm.pointer_info(other).is_ok());
    fmm.deregister_memory(other).unwrap();

    // Inside an allocation: refused.
    let buf = fmm
        .alloc_buffer(0, 4 * PAGE_SIZE, 0, MemFlags::HOST_ACCESS)
        .unwrap();
    assert_eq!(
        cause(fmm.register_memory(buf.addr(), 4 * PAGE_SIZE).unwrap_err()),
        "NotUserMemory"
    );
    drop(buf);
    drop(host);
    teardown(sim, fmm);
}

/// MapMemoryToGPUNodes of VRAM allocated with NoAddress (memory for the
/// GEM API, no GPU address) or OnlyAddress (no memory): 6.2.4 and the
/// newest library refuse both as not mappable (INVALID_PARAMETER) before
/// their aperture check; 5.2.3's order (aperture first) fails NoAddress
/// on the aperture (ERROR). (upstream kfdtest
/// KFDMemoryTest.VA_VRAM_Only_AllocTest.)
#[test]
fn map_to_nodes_refuses_memory_without_address_first() {
    use kfd_fmm::MemMapFlags;
    for (first, expected) in [(true, "NotMappable"), (false, "Failed")] {
        let (sim, fmm) = primary_with(
            "mi210",
            with_rules(|r| r.map_nodes_refuses_unbacked_first = first),
        );
        let g = 1;
        let flags = MemFlags::NON_PAGED | MemFlags::NO_ADDRESS;
        let a = fmm.alloc_memory(g, 4 * PAGE_SIZE, flags, None).unwrap();
        assert_eq!(
            cause(
                fmm.map_to_gpu_nodes(a, 4 * PAGE_SIZE, &[g], MemMapFlags::empty())
                    .unwrap_err()
            ),
            expected,
            "refuses unbacked first: {first}"
        );
        fmm.free_memory(a).unwrap();
        let v = fmm
            .alloc_memory(
                g,
                4 * PAGE_SIZE,
                MemFlags::NON_PAGED | MemFlags::ONLY_ADDRESS,
                None,
            )
            .unwrap();
        assert_eq!(
            cause(
                fmm.map_to_gpu_nodes(v, 4 * PAGE_SIZE, &[g], MemMapFlags::empty())
                    .unwrap_err()
            ),
            "NotMappable"
        );
        fmm.free_memory(v).unwrap();
        teardown(sim, fmm);
    }
}

/// MapMemoryToGPU of memory registered to no nodes: 6.2.4 and the newest
/// library map an object of a GPU node onto that GPU's usable peers (on
/// large64, whose GPUs have no io links to each other: the GPU alone);
/// `default_map_all_gpus` (5.2.3) onto every GPU.
#[test]
fn unregistered_gpu_memory_maps_onto_usable_peers() {
    for (all, expect_all) in [(false, false), (true, true)] {
        let (sim, fmm) = primary_with("large64", with_rules(|r| r.default_map_all_gpus = all));
        let g = gpu_node(&fmm);
        let gpus = fmm.nodes().iter().filter(|n| n.is_gpu()).count();
        let b = fmm
            .alloc_buffer(g, PAGE_SIZE, 0, MemFlags::NON_PAGED)
            .unwrap();
        b.map().unwrap();
        let mapped = fmm.pointer_nodes(b.addr()).unwrap().mapped;
        if expect_all {
            assert_eq!(mapped.len(), gpus);
        } else {
            assert_eq!(mapped, vec![g]);
        }
        drop(b);
        teardown(sim, fmm);
    }
}

/// AllocMemoryHostGtt: system memory of a CPU node, made as a GTT BO of
/// the anchor GPU (never a userptr, whatever the paged-memory rule),
/// CPU-mapped; the node roles are checked, and forms without memory or
/// with an address of their own are refused.
#[test]
fn host_gtt_memory_is_a_gtt_bo_of_the_anchor_gpu() {
    let (sim, fmm) = primary_with("mi210", userptr_options());
    let g = gpu_node(&fmm);
    let trace = Trace::default();
    sim.set_trace(trace.clone());
    let a = fmm
        .alloc_host_gtt(0, g, 4 * PAGE_SIZE, MemFlags::empty())
        .unwrap();
    let (line, ioc) = trace.first_alloc();
    assert!(ioc.contains(AllocMemFlags::GTT), "{line}");
    assert!(!ioc.contains(AllocMemFlags::USERPTR), "{line}");
    let info = fmm.pointer_info(a).unwrap();
    assert_eq!(info.node, 0);
    assert_eq!(info.size, 4 * PAGE_SIZE);
    assert!(info.mem_flags.contains(MemFlags::NON_PAGED));
    assert!(mapped(a, 4 * PAGE_SIZE), "CPU-mapped");
    fmm.free_memory(a).unwrap();
    let none = MemFlags::empty();
    assert_eq!(
        cause(fmm.alloc_host_gtt(g, g, PAGE_SIZE, none).unwrap_err()),
        "InvalidNode"
    );
    assert_eq!(
        cause(fmm.alloc_host_gtt(0, 0, PAGE_SIZE, none).unwrap_err()),
        "NotAGpuNode"
    );
    assert_eq!(
        cause(fmm.alloc_host_gtt(0, 99, PAGE_SIZE, none).unwrap_err()),
        "InvalidNode"
    );
    for f in [
        MemFlags::SCRATCH,
        MemFlags::ONLY_ADDRESS,
        MemFlags::FIXED_ADDRESS,
    ] {
        assert_eq!(
            cause(fmm.alloc_host_gtt(0, g, PAGE_SIZE, f).unwrap_err()),
            "ConflictingFlags"
        );
    }
    assert_eq!(
        cause(fmm.alloc_host_gtt(0, g, 100, none).unwrap_err()),
        "BadSize"
    );
    sim.clear_trace();
    teardown(sim, fmm);
}
