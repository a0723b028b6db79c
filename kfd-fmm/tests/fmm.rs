//! The memory manager on kfd-sim: every public call and its bad inputs.

mod common;

use std::os::fd::AsFd;

use common::*;
use kfd_fmm::{
    FmmError, FmmOptions, MemFlags, MemMapFlags, PointerType, SvmAttr, SvmFlags, PAGE_SIZE,
};
use kfd_sys::testing::Cause;
use kfd_sys::Errno;

const MIB: u64 = 1 << 20;
/// A preset whose VRAM is host-visible (large BAR).
const LARGE_BAR: &str = "mi300x";

fn cause(e: FmmError) -> String {
    e.cause()
}

#[test]
fn init_reports_apertures_and_teardown_leaves_nothing() {
    let (sim, fmm) = primary("mi210");
    let g = gpu_node(&fmm);
    assert_eq!(fmm.gpu_ids().len(), 1);
    assert_eq!(fmm.options().guard_pages, 1);
    assert!(fmm.is_dgpu());
    assert_eq!(fmm.kfd_version().0, 1);
    let svm = fmm.svm_aperture().expect("SVM aperture");
    assert!(svm.base < svm.limit);
    let ap = fmm.node_apertures(g).unwrap();
    assert_eq!(ap.gpu_id, fmm.gpu_ids()[0]);
    assert!(ap.lds.base < ap.lds.limit && ap.scratch.base < ap.scratch.limit);
    assert!(ap.gpuvm.is_none(), "gfx9 GPUVM is the SVM range");
    let mmio = fmm.mmio_address(g).expect("MMIO page mapped");
    assert_eq!(ap.mmio.unwrap().base, mmio);
    assert!(fmm.warnings().is_empty(), "{:?}", fmm.warnings());
    assert!(fmm.render_node(ap.gpu_id).is_some());
    // The MMIO page is the only object: a BO mapped on the GPU.
    assert_eq!(fmm.object_count(), 1);
    assert_eq!(live_bos(&sim), 1);
    let info = fmm.pointer_nodes(mmio).unwrap();
    assert_eq!(info.mapped, vec![g]);
    assert_eq!(
        cause(fmm.node_apertures(0).unwrap_err()),
        "NotAGpuNode",
        "CPU node"
    );
    assert_eq!(
        cause(fmm.node_apertures(7).unwrap_err()),
        "InvalidNode",
        "no such node"
    );
    teardown(sim, fmm);
}

#[test]
fn reserved_svm_apertures() {
    let opts = FmmOptions {
        reserve_svm: true,
        ..FmmOptions::primary()
    };
    let (sim, fmm) = primary_with(LARGE_BAR, opts);
    let svm = fmm.svm_aperture().unwrap();
    assert!(svm.limit < 1 << 40, "reservation is capped at 1 TiB");
    let g = gpu_node(&fmm);
    let coherent = fmm
        .alloc_memory(0, 2 * PAGE_SIZE, MemFlags::HOST_ACCESS, None)
        .unwrap();
    let coarse = fmm
        .alloc_memory(
            0,
            2 * PAGE_SIZE,
            MemFlags::HOST_ACCESS | MemFlags::COARSE_GRAIN,
            None,
        )
        .unwrap();
    assert!(coherent < coarse, "the coherent aperture comes first");
    let vram = fmm
        .alloc_memory(g, MIB, MemFlags::NON_PAGED | MemFlags::HOST_ACCESS, None)
        .unwrap();
    fmm.map_to_gpu(vram, MIB).unwrap();
    fmm.unmap_from_gpu(vram).unwrap();
    for a in [coherent, coarse, vram] {
        fmm.free_memory(a).unwrap();
    }
    teardown(sim, fmm);
}

#[test]
fn vram_with_host_access_round_trip() {
    let (sim, fmm) = primary(LARGE_BAR);
    let g = gpu_node(&fmm);
    let buf = fmm
        .alloc_buffer(g, 2 * MIB, 0, MemFlags::NON_PAGED | MemFlags::HOST_ACCESS)
        .unwrap();
    assert!(buf.is_cpu_accessible());
    assert_eq!(buf.addr() % (2 * MIB), 0, "big buffers are 2 MiB aligned");
    buf.write(100, b"vram!").unwrap();
    let mut out = [0u8; 5];
    buf.read(100, &mut out).unwrap();
    assert_eq!(&out, b"vram!");
    assert!(buf.write(2 * MIB - 2, b"xyz").is_err(), "past the end");
    let word = buf.atomic_u64(64).unwrap();
    word.store(41, std::sync::atomic::Ordering::Release);
    assert_eq!(word.fetch_add(1, std::sync::atomic::Ordering::AcqRel), 41);
    assert_eq!(buf.load_u64(64).unwrap(), 42, "the same memory");
    buf.store_u32(68, 1).unwrap();
    assert_eq!(buf.load_u64(64).unwrap(), 42 | 1 << 32);
    assert!(matches!(
        buf.store_u32(66, 1),
        Err(FmmError::UnalignedAddress(_))
    ));
    assert!(matches!(
        buf.atomic_u64(4),
        Err(FmmError::UnalignedAddress(a)) if a == buf.addr() + 4
    ));
    assert!(matches!(
        buf.atomic_u64(2 * MIB - 4),
        Err(FmmError::RangeOutsideObject { .. })
    ));
    assert_eq!(buf.map().unwrap(), 0, "GPU VA = CPU VA");
    let info = fmm.pointer_info(buf.addr() + 12345).unwrap();
    assert_eq!(info.kind, PointerType::Allocated);
    assert_eq!(info.node, g);
    assert_eq!(info.gpu_address, buf.addr());
    assert_eq!(info.cpu_address, buf.addr());
    assert_eq!(info.size, 2 * MIB);
    let gpus = fmm.gpu_ids().len();
    assert_eq!(info.mapped_count as usize, gpus);
    let mapped = fmm.pointer_nodes(buf.addr()).unwrap().mapped;
    assert_eq!(mapped.len(), gpus);
    assert!(mapped.contains(&g));
    assert!(info.mem_flags.contains(MemFlags::HOST_ACCESS));
    fmm.set_user_data(buf.addr(), 0xfeed).unwrap();
    assert_eq!(fmm.pointer_info(buf.addr()).unwrap().user_data, 0xfeed);
    buf.unmap().unwrap();
    assert!(fmm.pointer_nodes(buf.addr()).unwrap().mapped.is_empty());
    // Unmapping again is a no-op, as in the C library.
    buf.unmap().unwrap();
    drop(buf);
    assert_eq!(
        live_bos(&sim),
        fmm.gpu_ids().len(),
        "only the MMIO pages are left"
    );
    teardown(sim, fmm);
}

#[test]
fn vram_variants() {
    let (sim, fmm) = primary("mi210");
    let g = gpu_node(&fmm);
    let np = MemFlags::NON_PAGED;
    for flags in [
        np,
        np | MemFlags::NO_SUBSTITUTE,
        np | MemFlags::CONTIGUOUS,
        np | MemFlags::UNCACHED,
        np | MemFlags::COARSE_GRAIN,
        np | MemFlags::EXTENDED_COHERENT,
        np | MemFlags::READ_ONLY | MemFlags::EXECUTE_ACCESS,
    ] {
        let b = fmm.alloc_buffer(g, 64 * 1024, 0, flags).unwrap();
        assert!(!b.is_cpu_accessible(), "{flags:?}");
        assert!(b.write(0, b"x").is_err());
        b.map().unwrap();
    }
    // Alignment variant.
    let a = fmm
        .alloc_memory_align(g, PAGE_SIZE, 4 * MIB, np, None)
        .unwrap();
    assert_eq!(a % (4 * MIB), 0);
    fmm.free_memory(a).unwrap();
    // Fixed address: reuse the address just freed.
    let f = fmm
        .alloc_memory(g, PAGE_SIZE, np | MemFlags::FIXED_ADDRESS, Some(a))
        .unwrap();
    assert_eq!(f, a);
    assert!(
        fmm.alloc_memory(g, PAGE_SIZE, np | MemFlags::FIXED_ADDRESS, Some(a))
            .is_err(),
        "taken"
    );
    fmm.free_memory(f).unwrap();
    // Address-less memory: lives in the handle aperture, cannot be mapped.
    let h = fmm
        .alloc_memory(g, MIB, np | MemFlags::NO_ADDRESS, None)
        .unwrap();
    assert!(h >= 1 << 56);
    assert_eq!(cause(fmm.map_to_gpu(h, MIB).unwrap_err()), "NotMappable");
    assert_eq!(fmm.pointer_info(h).unwrap().kind, PointerType::Allocated);
    fmm.free_memory(h).unwrap();
    // Address-only reservation: no BO.
    let bos = live_bos(&sim);
    let r = fmm
        .alloc_memory(g, MIB, np | MemFlags::ONLY_ADDRESS, None)
        .unwrap();
    assert_eq!(live_bos(&sim), bos);
    assert_eq!(
        fmm.pointer_info(r + 5).unwrap().kind,
        PointerType::ReservedAddr
    );
    assert_eq!(fmm.pointer_info(r).unwrap().node, 0, "no memory, no node");
    assert_eq!(cause(fmm.map_to_gpu(r, MIB).unwrap_err()), "NotMappable");
    fmm.free_memory(r).unwrap();
    teardown(sim, fmm);
}

#[test]
fn system_memory_kinds() {
    let (sim, fmm) = primary("mi210");
    // Paged (userptr-backed), GTT (non-paged), coarse and uncached GTT.
    for flags in [
        MemFlags::HOST_ACCESS,
        MemFlags::HOST_ACCESS | MemFlags::NON_PAGED,
        MemFlags::HOST_ACCESS | MemFlags::NON_PAGED | MemFlags::COARSE_GRAIN,
        MemFlags::HOST_ACCESS | MemFlags::NON_PAGED | MemFlags::UNCACHED,
    ] {
        let b = fmm.alloc_buffer(0, 3 * PAGE_SIZE, 0, flags).unwrap();
        assert!(b.is_cpu_accessible(), "{flags:?}");
        b.write(PAGE_SIZE, &[7; 16]).unwrap();
        let mut o = [0; 16];
        b.read(PAGE_SIZE, &mut o).unwrap();
        assert_eq!(o, [7; 16]);
        b.map().unwrap();
        assert_eq!(fmm.pointer_info(b.addr()).unwrap().node, 0);
    }
    // GTT on a GPU node (GTTAccess) and non-paged memory without host access.
    let g = gpu_node(&fmm);
    let b = fmm
        .alloc_buffer(
            g,
            PAGE_SIZE,
            0,
            MemFlags::NON_PAGED | MemFlags::GTT_ACCESS | MemFlags::HOST_ACCESS,
        )
        .unwrap();
    assert!(b.is_cpu_accessible());
    let n = fmm
        .alloc_buffer(0, PAGE_SIZE, 0, MemFlags::NON_PAGED)
        .unwrap();
    assert!(!n.is_cpu_accessible());
    drop((b, n));
    teardown(sim, fmm);
}

#[test]
fn aql_queue_memory_is_mapped_twice() {
    let (sim, fmm) = primary(LARGE_BAR);
    let size = 4 * PAGE_SIZE;
    let flags = MemFlags::HOST_ACCESS | MemFlags::NON_PAGED | MemFlags::AQL_QUEUE_MEMORY;
    let b = fmm.alloc_buffer(0, size, 0, flags).unwrap();
    b.write(8, b"ring").unwrap();
    let info = fmm.pointer_info(b.addr()).unwrap();
    assert_eq!(info.size, 2 * size, "the VA range covers both copies");
    // SAFETY: the second copy is a live shared mapping of the same pages.
    let mirror = unsafe { std::slice::from_raw_parts((b.addr() + size + 8) as *const u8, 4) };
    assert_eq!(mirror, b"ring");
    // VRAM with host access gets the mirror too.
    let g = gpu_node(&fmm);
    let v = fmm.alloc_buffer(g, size, 0, flags).unwrap();
    v.write(0, b"vr").unwrap();
    // SAFETY: as above.
    let vm = unsafe { std::slice::from_raw_parts((v.addr() + size) as *const u8, 2) };
    assert_eq!(vm, b"vr");
    drop((b, v));
    teardown(sim, fmm);
}

#[test]
fn alloc_bad_inputs_give_the_c_status() {
    let (sim, fmm) = primary("mi210");
    let g = gpu_node(&fmm);
    let np = MemFlags::NON_PAGED;
    let e = |r: kfd_fmm::Result<u64>| cause(r.unwrap_err());
    assert_eq!(e(fmm.alloc_memory(g, 0, np, None)), "BadSize", "zero size");
    assert_eq!(
        e(fmm.alloc_memory(g, 100, np, None)),
        "BadSize",
        "unaligned size"
    );
    let p64k = MemFlags::from_bits_retain(np.bits() | (1 << 4));
    assert_eq!(
        e(fmm.alloc_memory(g, PAGE_SIZE, p64k, None)),
        "BadSize",
        "not a multiple of 64 KiB pages"
    );
    assert_eq!(
        e(fmm.alloc_memory(9, PAGE_SIZE, np, None)),
        "InvalidNode",
        "unknown node"
    );
    assert_eq!(
        e(fmm.alloc_memory_align(g, PAGE_SIZE, 3 * PAGE_SIZE, np, None)),
        "BadAlignment",
        "alignment not a power of two"
    );
    assert_eq!(
        e(fmm.alloc_memory_align(g, PAGE_SIZE, 1024, np, None)),
        "BadAlignment",
        "alignment below a page"
    );
    assert_eq!(
        e(fmm.alloc_memory(g, PAGE_SIZE, np | MemFlags::FIXED_ADDRESS, None)),
        "InvalidArgument",
        "fixed without address"
    );
    // Upstream allows CoarseGrain with Uncached (memory.c rejects only
    // ExtendedCoherent with either).
    let cu = fmm
        .alloc_memory(
            g,
            PAGE_SIZE,
            np | MemFlags::COARSE_GRAIN | MemFlags::UNCACHED,
            None,
        )
        .expect("CoarseGrain with Uncached is allowed");
    fmm.free_memory(cu).unwrap();
    assert_eq!(
        e(fmm.alloc_memory(
            g,
            PAGE_SIZE,
            np | MemFlags::COARSE_GRAIN | MemFlags::EXTENDED_COHERENT,
            None
        )),
        "ConflictingFlags"
    );
    assert_eq!(
        e(fmm.alloc_memory(
            g,
            PAGE_SIZE,
            np | MemFlags::UNCACHED | MemFlags::EXTENDED_COHERENT,
            None
        )),
        "ConflictingFlags"
    );
    // OnlyAddress with NoAddress: see only_address_system_memory_per_rule.
    assert_eq!(
        e(fmm.alloc_memory_align(g, PAGE_SIZE, 2 * PAGE_SIZE, MemFlags::SCRATCH, None)),
        "NotImplemented",
        "aligned scratch"
    );
    // More VRAM than the device has: NO_MEMORY; more GTT than possible: ERROR.
    assert_eq!(e(fmm.alloc_memory(g, 1 << 40, np, None)), "AllocFailed");
    // Contiguous needs KFD 1.16.
    // A second context of the same process without CREATE_PROCESS would
    // share the kernel process, whose VMs are taken: ACQUIRE_VM says EBUSY.
    let e2 = kfd_fmm::Fmm::new(open_kfd(&sim), nodes_of(&sim), FmmOptions::primary()).unwrap_err();
    assert!(
        matches!(
            e2,
            FmmError::Ioctl {
                errno: Errno::EBUSY,
                ..
            }
        ),
        "{e2}"
    );
    // Contiguous needs KFD 1.16 (checked in another simulated process).
    let other = sim.new_os_process();
    other.set_version_minor(15);
    let old = kfd_fmm::Fmm::new(open_kfd(&other), nodes_of(&other), FmmOptions::primary()).unwrap();
    assert_eq!(
        cause(
            old.alloc_memory(g, PAGE_SIZE, np | MemFlags::CONTIGUOUS, None)
                .unwrap_err()
        ),
        "KfdTooOld"
    );
    drop(old);
    other.set_version_minor(u32::MAX);
    teardown(sim, fmm);
}

#[test]
fn free_and_map_bad_inputs() {
    let sim = kfd_sim::Sim::preset("mi210").unwrap();
    // A context without the SVM API reports unknown addresses.
    let fmm = std::sync::Arc::new(
        kfd_fmm::Fmm::new(
            open_kfd(&sim),
            nodes_of(&sim),
            FmmOptions {
                svm_api_enabled: false,
                ..FmmOptions::primary()
            },
        )
        .unwrap(),
    );
    let g = gpu_node(&fmm);
    let a = fmm.alloc_memory(g, MIB, MemFlags::NON_PAGED, None).unwrap();
    assert_eq!(
        cause(fmm.free_memory(0).unwrap_err()),
        "NullAddress",
        "NULL"
    );
    assert_eq!(
        cause(fmm.free_memory(a + MIB).unwrap_err()),
        "NotRegistered",
        "not an allocation"
    );
    assert_eq!(
        cause(fmm.free_memory(a + 2 * PAGE_SIZE).unwrap_err()),
        "NotRegistered",
        "inside, not the start"
    );
    assert_eq!(
        cause(fmm.map_to_gpu(0, MIB).unwrap_err()),
        "NullAddress",
        "NULL"
    );
    assert_eq!(
        cause(fmm.map_to_gpu(0x1234_5000, MIB).unwrap_err()),
        "NoSuchObject",
        "unknown address"
    );
    // Unknown address: an error without the SVM API (success with it:
    // secondary_context_is_isolated).
    assert_eq!(
        cause(fmm.unmap_from_gpu(0x1234_5000).unwrap_err()),
        "UnknownPointer",
        "unknown address"
    );
    fmm.unmap_from_gpu(0).unwrap(); // NULL is a no-op
    assert_eq!(
        cause(fmm.pointer_info(0x1234_5000).unwrap_err()),
        "UnknownPointer"
    );
    assert_eq!(
        cause(fmm.set_user_data(0x1234_5000, 1).unwrap_err()),
        "UnknownPointer"
    );
    // A mapped buffer cannot be freed (the kernel says EBUSY) and stays.
    fmm.map_to_gpu(a, MIB).unwrap();
    assert_eq!(fmm.free_memory(a).unwrap_err(), FmmError::StillMapped(a));
    fmm.unmap_from_gpu(a).unwrap();
    fmm.free_memory(a).unwrap();
    assert_eq!(
        cause(fmm.free_memory(a).unwrap_err()),
        "NotRegistered",
        "double free"
    );
    assert_eq!(
        cause(fmm.map_to_gpu(a, MIB).unwrap_err()),
        "NoSuchObject",
        "map after free"
    );
    teardown(sim, fmm);
    // The SVM API does not hide an unknown address from a Rust caller ...
    let (sim, fmm) = primary("mi210");
    assert_eq!(
        cause(fmm.free_memory(0x1234_5000).unwrap_err()),
        "NotRegistered"
    );
    teardown(sim, fmm);
    // ... but under the C library's rules freeing one succeeds.
    let (sim, fmm) = primary_with("mi210", c_rules());
    fmm.free_memory(0x1234_5000).unwrap();
    teardown(sim, fmm);
}

#[test]
fn map_to_node_lists() {
    // Registering an allocation to nodes, as 5.2.3 allows.
    let mut opts = userptr_options();
    opts.rules.register_needs_userptr = false;
    let (sim, fmm) = primary_with("mi300x", opts);
    let gpus: Vec<u32> = (0..fmm.nodes().len() as u32)
        .filter(|&n| fmm.nodes()[n as usize].is_gpu())
        .collect();
    assert!(gpus.len() >= 4);
    let b = fmm
        .alloc_buffer(gpus[0], MIB, 0, MemFlags::NON_PAGED)
        .unwrap();
    b.map_to_nodes(&gpus[..3]).unwrap();
    assert_eq!(
        fmm.pointer_nodes(b.addr()).unwrap().mapped,
        gpus[..3].to_vec()
    );
    // Narrowing the list unmaps the others.
    b.map_to_nodes(&gpus[1..2]).unwrap();
    assert_eq!(fmm.pointer_nodes(b.addr()).unwrap().mapped, vec![gpus[1]]);
    // Map to all resumes after the one already mapped.
    b.map().unwrap();
    assert_eq!(
        fmm.pointer_nodes(b.addr()).unwrap().mapped.len(),
        gpus.len()
    );
    b.unmap().unwrap();
    let e = |r: kfd_fmm::Result<Option<u64>>| cause(r.unwrap_err());
    assert_eq!(
        e(fmm.map_to_gpu_nodes(b.addr(), MIB, &[], MemMapFlags::empty())),
        "InvalidArgument",
        "empty list"
    );
    assert_eq!(
        e(fmm.map_to_gpu_nodes(b.addr(), MIB, &[99], MemMapFlags::empty())),
        "InvalidNode",
        "bad node"
    );
    assert_eq!(
        e(fmm.map_to_gpu_nodes(0x5000, MIB, &[gpus[0]], MemMapFlags::empty())),
        "UnknownPointer",
        "unknown address"
    );
    assert_eq!(
        e(fmm.map_to_gpu_nodes(0, MIB, &[gpus[0]], MemMapFlags::empty())),
        "NullAddress",
        "NULL"
    );
    // Registered to two nodes: mapping elsewhere is refused.
    let host = vec![0u8; 4 * PAGE_SIZE as usize];
    let addr = host.as_ptr() as u64;
    fmm.register_memory_to_nodes(addr, host.len() as u64, &gpus[..2])
        .unwrap();
    let info = fmm.pointer_nodes(addr).unwrap();
    assert_eq!(info.registered, gpus[..2].to_vec());
    let gva = fmm.map_to_gpu(addr, host.len() as u64).unwrap();
    assert_eq!(gva & (PAGE_SIZE - 1), addr & (PAGE_SIZE - 1));
    assert_eq!(fmm.pointer_nodes(addr).unwrap().mapped.len(), 2);
    fmm.unmap_from_gpu(addr).unwrap();
    let v = fmm
        .alloc_memory(gpus[0], MIB, MemFlags::NON_PAGED, None)
        .unwrap();
    fmm.register_memory_to_nodes(v, MIB, &gpus[..1]).unwrap();
    assert_eq!(
        e(fmm.map_to_gpu_nodes(v, MIB, &gpus[1..2], MemMapFlags::empty())),
        "NodeNotRegistered",
        "not registered there"
    );
    assert_eq!(
        cause(
            fmm.register_memory_to_nodes(v, MIB, &gpus[1..2])
                .unwrap_err()
        ),
        "AlreadyRegistered",
        "other nodes"
    );
    fmm.register_memory_to_nodes(v, MIB, &gpus[..1]).unwrap(); // same nodes again: fine
    fmm.deregister_memory(v).unwrap();
    assert_eq!(
        cause(fmm.deregister_memory(v).unwrap_err()),
        "NotRegistered",
        "not registered any more"
    );
    fmm.free_memory(v).unwrap();
    fmm.deregister_memory(addr).unwrap();
    drop(b);
    teardown(sim, fmm);
    drop(host);
}

#[test]
fn userptr_registration() {
    let (sim, fmm) = primary_with("mi210", userptr_options());
    let mut host = vec![0u8; 5 * PAGE_SIZE as usize];
    let addr = host.as_mut_ptr() as u64 + 24; // deliberately unaligned
    let size = 3 * PAGE_SIZE;
    let bos = live_bos(&sim);
    fmm.register_memory(addr, size).unwrap();
    fmm.register_memory(addr, size).unwrap(); // second registration shares the BO
    assert_eq!(live_bos(&sim), bos + 1);
    let info = fmm.pointer_info(addr + 100).unwrap();
    assert_eq!(info.kind, PointerType::RegisteredUser);
    assert_eq!(info.cpu_address, addr);
    assert_eq!(info.size, size);
    assert_eq!(info.gpu_address & (PAGE_SIZE - 1), addr & (PAGE_SIZE - 1));
    let g1 = fmm.map_to_gpu(addr, size).unwrap();
    let g2 = fmm.map_to_gpu(addr, size).unwrap(); // mapping count 2
    assert_eq!(g1, g2);
    assert_eq!(g1, info.gpu_address);
    fmm.unmap_from_gpu(addr).unwrap();
    assert_eq!(
        fmm.pointer_nodes(addr).unwrap().mapped.len(),
        1,
        "still mapped once"
    );
    fmm.unmap_from_gpu(addr).unwrap();
    fmm.deregister_memory(addr).unwrap();
    assert_eq!(live_bos(&sim), bos + 1, "one registration left");
    fmm.deregister_memory(addr).unwrap();
    assert_eq!(live_bos(&sim), bos);
    // With flags.
    fmm.register_memory_with_flags(addr, size, MemFlags::HOST_ACCESS | MemFlags::COARSE_GRAIN)
        .unwrap();
    fmm.deregister_memory(addr).unwrap();
    let e = |r: kfd_fmm::Result<()>| cause(r.unwrap_err());
    assert_eq!(
        e(fmm.register_memory_with_flags(addr, size, MemFlags::empty())),
        "NotSupported",
        "no HostAccess"
    );
    assert_eq!(
        e(fmm.register_memory_with_flags(addr, size, MemFlags::HOST_ACCESS | MemFlags::NON_PAGED)),
        "NotSupported"
    );
    assert_eq!(
        e(fmm.register_memory_with_flags(
            addr,
            size,
            MemFlags::HOST_ACCESS | MemFlags::COARSE_GRAIN | MemFlags::EXTENDED_COHERENT
        )),
        "ConflictingFlags"
    );
    assert_eq!(
        e(fmm.register_memory_to_nodes(addr, size, &[])),
        "InvalidArgument",
        "empty node list"
    );
    assert_eq!(
        e(fmm.register_memory_to_nodes(addr, size, &[42])),
        "InvalidNode",
        "bad node"
    );
    // Unmapped user memory: the kernel refuses to pin it. The one-page
    // hole sits between two reserved pages, so the address space the
    // registration itself reserves (with a guard page on each side) cannot
    // land on it.
    let around = kfd_sys::mman::reserve(3 * PAGE_SIZE as usize).unwrap() as u64;
    let hole = around + PAGE_SIZE;
    // SAFETY: the middle page of our own reservation, given back: the
    // range is now unmapped.
    unsafe { kfd_sys::mman::munmap(hole as usize, PAGE_SIZE as usize) }.unwrap();
    assert_eq!(e(fmm.register_memory(hole, PAGE_SIZE)), "Ioctl");
    // SAFETY: the rest of our reservation, unused.
    unsafe { kfd_sys::mman::munmap(around as usize, 3 * PAGE_SIZE as usize) }.unwrap();
    teardown(sim, fmm);
    drop(host);
}

#[test]
fn scratch_memory() {
    let (sim, fmm) = primary("mi210");
    let g = gpu_node(&fmm);
    let s = fmm
        .alloc_memory(g, 4 * MIB, MemFlags::SCRATCH, None)
        .unwrap();
    assert_eq!(s % 0x10000, 0);
    assert_eq!(
        cause(
            fmm.alloc_memory(g, MIB, MemFlags::SCRATCH, None)
                .unwrap_err()
        ),
        "ScratchInUse",
        "once per GPU"
    );
    let bos = live_bos(&sim);
    fmm.map_to_gpu(s, MIB).unwrap();
    fmm.map_to_gpu(s + MIB, MIB).unwrap();
    assert_eq!(live_bos(&sim), bos + 2);
    fmm.unmap_from_gpu(s).unwrap();
    assert_eq!(live_bos(&sim), bos + 1);
    fmm.free_memory(s).unwrap(); // frees the rest too
    assert_eq!(live_bos(&sim), bos);
    // The range is not scratch any more: memory placed there later is
    // freed as memory, not taken for scratch (its BO goes).
    let b = fmm
        .alloc_memory(g, MIB, MemFlags::FIXED_ADDRESS, Some(s + MIB))
        .unwrap();
    assert_eq!(b, s + MIB);
    assert_eq!(live_bos(&sim), bos + 1);
    fmm.free_memory(b).unwrap();
    assert_eq!(live_bos(&sim), bos);
    assert_eq!(
        cause(
            fmm.alloc_memory(0, MIB, MemFlags::SCRATCH, None)
                .unwrap_err()
        ),
        "NoAddressSpace",
        "CPU node"
    );
    let s2 = fmm.alloc_memory(g, MIB, MemFlags::SCRATCH, None).unwrap();
    fmm.map_to_gpu(s2, MIB).unwrap();
    teardown(sim, fmm); // drop frees mapped scratch
}

#[test]
fn doorbell_page() {
    let (sim, fmm) = primary("mi210");
    let g = gpu_node(&fmm);
    let db = fmm.alloc_doorbell(g, 8192, 0).unwrap();
    fmm.map_to_gpu(db, 8192).unwrap();
    // SAFETY: the doorbell page is mapped read-write.
    unsafe { std::ptr::write_volatile(db as *mut u64, 0x42) };
    let info = fmm.pointer_info(db).unwrap();
    assert!(info
        .mem_flags
        .contains(MemFlags::NON_PAGED | MemFlags::HOST_ACCESS));
    assert_eq!(
        cause(fmm.alloc_doorbell(0, 8192, 0).unwrap_err()),
        "NotAGpuNode",
        "CPU node"
    );
    assert_eq!(cause(fmm.alloc_doorbell(g, 100, 0).unwrap_err()), "BadSize");
    fmm.unmap_from_gpu(db).unwrap();
    fmm.free_memory(db).unwrap();
    teardown(sim, fmm);
}

#[test]
fn dmabuf_export_import_and_share() {
    let (sim, fmm) = primary(LARGE_BAR);
    let g = gpu_node(&fmm);
    let b = fmm
        .alloc_buffer(
            g,
            4 * PAGE_SIZE,
            0,
            MemFlags::NON_PAGED | MemFlags::HOST_ACCESS,
        )
        .unwrap();
    b.write(0, b"shared bytes").unwrap();
    let (fd, off) = fmm.export_dmabuf(b.addr() + PAGE_SIZE, PAGE_SIZE).unwrap();
    assert_eq!(off, PAGE_SIZE);
    let e = |r: kfd_fmm::Result<(std::os::fd::OwnedFd, u64)>| cause(r.unwrap_err());
    assert_eq!(
        e(fmm.export_dmabuf(b.addr() + PAGE_SIZE, 4 * PAGE_SIZE)),
        "RangeOutsideObject",
        "past the end"
    );
    assert_eq!(
        e(fmm.export_dmabuf(0x7000, PAGE_SIZE)),
        "NoSuchObject",
        "unknown address"
    );
    // Import it back as a graphics handle.
    let gr = fmm.register_graphics_handle(fd.as_fd(), &[g]).unwrap();
    assert_eq!(gr.size, 4 * PAGE_SIZE);
    assert_eq!(gr.node, g);
    assert_eq!(
        fmm.pointer_info(gr.address).unwrap().kind,
        PointerType::RegisteredGraphics
    );
    assert_eq!(fmm.pointer_nodes(gr.address).unwrap().registered, vec![g]);
    fmm.map_to_gpu(gr.address, gr.size).unwrap();
    fmm.unmap_from_gpu(gr.address).unwrap();
    fmm.deregister_memory(gr.address).unwrap();
    assert_eq!(
        cause(fmm.register_graphics_handle(fd.as_fd(), &[77]).unwrap_err()),
        "InvalidNode"
    );
    drop(fd);
    // Share handle within one context.
    let h = fmm.share_memory(b.addr(), 4 * PAGE_SIZE).unwrap();
    let (addr, size) = fmm.register_shared_handle(&h, &[]).unwrap();
    assert_eq!(size, 4 * PAGE_SIZE);
    assert_eq!(
        fmm.pointer_info(addr).unwrap().kind,
        PointerType::RegisteredShared
    );
    // The import has a CPU view (an mmap of the dma-buf). kfd-sim backs
    // exported dma-bufs with a fresh memfd, so the bytes are not compared.
    // SAFETY: the shared import is mapped read-write for the CPU.
    let _ = unsafe { std::ptr::read_volatile(addr as *const u8) };
    fmm.deregister_memory(addr).unwrap();
    let mut bad = h;
    bad.0[3] ^= 1;
    assert_eq!(
        cause(fmm.register_shared_handle(&bad, &[]).unwrap_err()),
        "BadShareHandle"
    );
    // Not a handle of ours at all: INVALID_PARAMETER, as upstream for a
    // handle with an invalid aperture type.
    let garbage = kfd_fmm::ShareHandle([0xdead_beef; 8]);
    assert_eq!(
        cause(fmm.register_shared_handle(&garbage, &[]).unwrap_err()),
        "InvalidArgument"
    );
    assert_eq!(
        cause(fmm.share_memory(0x7000, PAGE_SIZE).unwrap_err()),
        "NoSuchObject"
    );
    assert_eq!(
        cause(fmm.share_memory(b.addr(), 1 << 44).unwrap_err()),
        "InvalidArgument"
    );
    // dma-buf export needs KFD 1.12.
    drop(b);
    teardown(sim, fmm);
}

#[test]
fn secondary_context_is_isolated() {
    let (sim, primary) = primary(LARGE_BAR);
    let second = secondary(&sim);
    let g = gpu_node(&primary);
    // Different render-node files per context.
    let gpu_id = primary.gpu_ids()[0];
    let (r1, r2) = (
        primary.render_node(gpu_id).unwrap(),
        second.render_node(gpu_id).unwrap(),
    );
    assert!(!std::sync::Arc::ptr_eq(r1, r2));
    let a = primary
        .alloc_buffer(g, MIB, 0, MemFlags::NON_PAGED | MemFlags::HOST_ACCESS)
        .unwrap();
    let b = second
        .alloc_buffer(g, MIB, 0, MemFlags::NON_PAGED | MemFlags::HOST_ACCESS)
        .unwrap();
    a.write(0, b"primary").unwrap();
    b.write(0, b"second!").unwrap();
    // Neither sees the other's buffer.
    assert_eq!(
        cause(second.pointer_info(a.addr()).unwrap_err()),
        "UnknownPointer"
    );
    assert_eq!(
        cause(second.map_to_gpu(a.addr(), MIB).unwrap_err()),
        "NoSuchObject"
    );
    assert_eq!(
        cause(second.free_memory(a.addr()).unwrap_err()),
        "NotRegistered"
    );
    assert_eq!(
        cause(second.set_user_data(a.addr(), 1).unwrap_err()),
        "UnknownPointer"
    );
    assert_eq!(
        cause(primary.pointer_info(b.addr()).unwrap_err()),
        "UnknownPointer"
    );
    // Unknown to either: an error (the C ABI's primary, with the SVM API,
    // makes it a no-op: see unknown_addresses_under_c_rules).
    assert_eq!(
        cause(primary.unmap_from_gpu(b.addr()).unwrap_err()),
        "UnknownPointer"
    );
    assert_eq!(
        cause(second.unmap_from_gpu(a.addr()).unwrap_err()),
        "UnknownPointer"
    );
    // Paged system memory is GTT in the secondary context (no userptr).
    let bos = live_bos(&sim);
    let p = second
        .alloc_buffer(0, PAGE_SIZE, 0, MemFlags::HOST_ACCESS)
        .unwrap();
    p.write(0, b"gtt").unwrap();
    assert_eq!(live_bos(&sim), bos + 1);
    // Explicit sharing works across contexts.
    let h = primary.share_memory(a.addr(), MIB).unwrap();
    let (addr, _) = second.register_shared_handle(&h, &[g]).unwrap();
    assert_eq!(
        second.pointer_info(addr).unwrap().kind,
        PointerType::RegisteredShared
    );
    second.map_to_gpu(addr, MIB).unwrap();
    second.unmap_from_gpu(addr).unwrap();
    second.deregister_memory(addr).unwrap();
    let summary = sim.live_objects();
    assert_eq!(summary.processes.len(), 2);
    assert_eq!(summary.processes.iter().filter(|p| p.secondary).count(), 1);
    drop((a, b, p));
    drop(second);
    teardown(sim, primary);
}

#[test]
fn available_memory_policy_xnack() {
    let (sim, fmm) = primary("mi210");
    let g = gpu_node(&fmm);
    let avail = fmm.available_memory(g).unwrap();
    assert!(avail > 0);
    let b = fmm
        .alloc_buffer(g, 64 * MIB, 0, MemFlags::NON_PAGED)
        .unwrap();
    assert!(fmm.available_memory(g).unwrap() <= avail - 64 * MIB);
    drop(b);
    assert_eq!(cause(fmm.available_memory(12).unwrap_err()), "InvalidNode");
    // Memory policy is Kaveri-only.
    assert_eq!(
        cause(fmm.set_memory_policy(g, 0, 1, 0, 0).unwrap_err()),
        "NotImplemented"
    );
    assert_eq!(
        cause(fmm.set_memory_policy(42, 0, 1, 0, 0).unwrap_err()),
        "InvalidNode"
    );
    // XNACK.
    let on = fmm.xnack_mode().unwrap();
    fmm.set_xnack_mode(!on).unwrap();
    assert_eq!(fmm.xnack_mode().unwrap(), !on);
    fmm.set_xnack_mode(on).unwrap();
    // The simulator counts calls from the first injected rule on.
    sim.inject_fault("SET_XNACK_MODE", 1, Errno::EPERM);
    assert_eq!(cause(fmm.set_xnack_mode(true).unwrap_err()), "NotSupported");
    sim.inject_fault("SET_XNACK_MODE", 2, Errno::EBUSY);
    assert_eq!(cause(fmm.set_xnack_mode(true).unwrap_err()), "Ioctl");
    teardown(sim, fmm);
}

#[test]
fn old_kernel_minor_versions() {
    let sim = kfd_sim::Sim::preset("mi210").unwrap();
    sim.set_version_minor(4);
    let fmm = std::sync::Arc::new(
        kfd_fmm::Fmm::new(open_kfd(&sim), nodes_of(&sim), FmmOptions::primary()).unwrap(),
    );
    let g = gpu_node(&fmm);
    assert_eq!(cause(fmm.available_memory(g).unwrap_err()), "KfdTooOld");
    assert_eq!(cause(fmm.xnack_mode().unwrap_err()), "KfdTooOld");
    assert_eq!(
        cause(fmm.svm_set_attr(0x10_0000, PAGE_SIZE, &[]).unwrap_err()),
        "KfdTooOld"
    );
    let b = fmm
        .alloc_buffer(g, PAGE_SIZE, 0, MemFlags::NON_PAGED)
        .unwrap();
    assert_eq!(
        cause(fmm.export_dmabuf(b.addr(), PAGE_SIZE).unwrap_err()),
        "KfdTooOld"
    );
    assert_eq!(
        cause(fmm.share_memory(b.addr(), PAGE_SIZE).unwrap_err()),
        "KfdTooOld"
    );
    drop(b);
    teardown(sim, fmm);
}

#[test]
fn svm_attributes() {
    let (sim, fmm) = primary("mi210");
    let g = gpu_node(&fmm);
    let len = 16 * PAGE_SIZE as usize;
    let mem = kfd_sys::mman::reserve(len).unwrap() as u64;
    // SAFETY: our own reservation, made accessible.
    unsafe {
        libc::mprotect(
            mem as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
        );
    }
    let size = len as u64;
    fmm.svm_set_attr(
        mem,
        size,
        &[
            SvmAttr::PreferredLoc(Some(g)),
            SvmAttr::Access(g),
            SvmAttr::SetFlags(SvmFlags::COHERENT | SvmFlags::HOST_ACCESS),
            SvmAttr::Granularity(9),
        ],
    )
    .unwrap();
    let mut q = [
        SvmAttr::PreferredLoc(None),
        SvmAttr::Access(g),
        SvmAttr::Granularity(0),
    ];
    fmm.svm_get_attr(mem, size, &mut q).unwrap();
    assert_eq!(q[0], SvmAttr::PreferredLoc(Some(g)));
    assert!(
        matches!(q[1], SvmAttr::Access(n) | SvmAttr::AccessInPlace(n) if n == g),
        "{:?}",
        q[1]
    );
    assert_eq!(q[2], SvmAttr::Granularity(9));
    fmm.svm_set_attr(
        mem,
        size,
        &[SvmAttr::PreferredLoc(None), SvmAttr::PrefetchLoc(0)],
    )
    .unwrap();
    let e = |r: kfd_fmm::Result<()>| cause(r.unwrap_err());
    assert_eq!(e(fmm.svm_set_attr(0, size, &[])), "InvalidArgument", "NULL");
    assert_eq!(
        e(fmm.svm_set_attr(mem, 0, &[])),
        "InvalidArgument",
        "zero size"
    );
    assert_eq!(
        e(fmm.svm_set_attr(mem + 8, size, &[])),
        "UnalignedAddress",
        "unaligned start"
    );
    assert_eq!(
        e(fmm.svm_set_attr(mem, 100, &[])),
        "BadSize",
        "unaligned size"
    );
    assert_eq!(
        e(fmm.svm_set_attr(mem, size, &[SvmAttr::Access(33)])),
        "InvalidNode",
        "bad node"
    );
    assert_eq!(
        e(fmm.svm_set_attr(mem, size, &[SvmAttr::Access(0)])),
        "NotAGpuNode",
        "CPU node for access"
    );
    let mut bad = [SvmAttr::NoAccess(0)];
    assert_eq!(
        cause(fmm.svm_get_attr(mem, size, &mut bad).unwrap_err()),
        "NotAGpuNode"
    );
    // Memory that is no object is not mapped behind a Rust caller's back
    // (the C ABI's primary maps it as an SVM range: see
    // unknown_addresses_under_c_rules).
    assert_eq!(
        cause(fmm.map_to_gpu(mem, size).unwrap_err()),
        "NoSuchObject"
    );
    // SAFETY: our own reservation.
    unsafe { kfd_sys::mman::munmap(mem as usize, len) }.unwrap();
    teardown(sim, fmm);
}

/// An APU whose GPU node also has CPU cores: not a dGPU system.
fn apu() -> (kfd_sim::Sim, std::sync::Arc<kfd_fmm::Fmm>) {
    apu_with(FmmOptions::primary())
}

fn apu_with(opts: FmmOptions) -> (kfd_sim::Sim, std::sync::Arc<kfd_fmm::Fmm>) {
    let sim = kfd_sim::Sim::preset("apu").unwrap();
    let mut nodes = nodes_of(&sim);
    for n in nodes.iter_mut().filter(|n| n.is_gpu()) {
        n.cpu_cores = 4;
    }
    let fmm = std::sync::Arc::new(kfd_fmm::Fmm::new(open_kfd(&sim), nodes, opts).unwrap());
    assert!(!fmm.is_dgpu());
    (sim, fmm)
}

#[test]
fn apu_system_memory_is_plain_cpu_memory() {
    let (sim, fmm) = apu();
    let bos = live_bos(&sim);
    let b = fmm
        .alloc_buffer(0, 2 * PAGE_SIZE, 0, MemFlags::HOST_ACCESS)
        .unwrap();
    b.write(0, b"apu").unwrap();
    assert_eq!(
        live_bos(&sim),
        bos,
        "no kernel object for APU system memory"
    );
    b.map().unwrap();
    let g = gpu_node(&fmm);
    b.map_to_nodes(&[g]).unwrap();
    fmm.register_memory(b.addr(), PAGE_SIZE).unwrap(); // no-op on APUs
    assert_eq!(
        cause(
            fmm.register_memory_to_nodes(b.addr(), PAGE_SIZE, &[g])
                .unwrap_err()
        ),
        "NotSupported"
    );
    assert_eq!(
        cause(
            fmm.register_memory_with_flags(b.addr(), PAGE_SIZE, MemFlags::HOST_ACCESS)
                .unwrap_err()
        ),
        "NotSupported"
    );
    // An address no object covers is an error for a Rust caller; under
    // the C library's rules it is system memory the GPU reaches anyway.
    assert_eq!(
        cause(fmm.deregister_memory(0x5000).unwrap_err()),
        "NotRegistered"
    );
    assert_eq!(
        cause(fmm.unmap_from_gpu(0x5000).unwrap_err()),
        "UnknownPointer"
    );
    assert_eq!(
        cause(fmm.map_to_gpu(0x5000, PAGE_SIZE).unwrap_err()),
        "NoSuchObject"
    );
    let (c_sim, c) = apu_with(c_rules());
    c.deregister_memory(0x5000).unwrap();
    c.unmap_from_gpu(0x5000).unwrap();
    assert_eq!(c.map_to_gpu(0x5000, PAGE_SIZE).unwrap(), 0);
    teardown(c_sim, c);
    let v = fmm
        .alloc_buffer(g, MIB, 0, MemFlags::NON_PAGED | MemFlags::HOST_ACCESS)
        .unwrap();
    v.map().unwrap();
    drop((b, v));
    teardown(sim, fmm);
}

#[test]
fn from_a_topology_snapshot() {
    let sim = kfd_sim::Sim::preset("mi300x").unwrap();
    let topo = kfd_topology::Topology::snapshot(&sim).unwrap();
    let fmm = std::sync::Arc::new(
        kfd_fmm::Fmm::from_topology(open_kfd(&sim), &topo, FmmOptions::primary()).unwrap(),
    );
    assert_eq!(fmm.nodes().len(), topo.nodes.len());
    assert_eq!(
        fmm.gpu_ids().len(),
        topo.nodes.iter().filter(|n| n.gpu_id != 0).count()
    );
    assert_eq!(fmm.nodes(), &nodes_of(&sim)[..]);
    let g = gpu_node(&fmm);
    let b = fmm
        .alloc_buffer(g, PAGE_SIZE, 0, MemFlags::NON_PAGED | MemFlags::HOST_ACCESS)
        .unwrap();
    b.map().unwrap();
    drop(b);
    teardown(sim, fmm);
}

/// A `Write` into a shared buffer, for the simulator's ioctl trace.
#[derive(Clone, Default)]
struct TraceBuf(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for TraceBuf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl TraceBuf {
    /// Traced lines naming BO `handle`.
    fn lines_with(&self, handle: u64) -> Vec<String> {
        String::from_utf8_lossy(&self.0.lock().unwrap())
            .lines()
            .filter(|l| {
                l.contains(&format!("handle: {handle} "))
                    || l.contains(&format!("handle: {handle},"))
            })
            .map(str::to_string)
            .collect()
    }
}

/// Hands the BO `handle` to the kernel as the event page, as the first
/// CREATE_EVENT of a dGPU process does.
fn make_event_page(fmm: &kfd_fmm::Fmm, handle: u64) {
    let mut a = kfd_sys::kfd::kfd_ioctl_create_event_args {
        event_page_offset: handle,
        event_type: kfd_sys::kfd::KFD_IOC_EVENT_SIGNAL,
        auto_reset: 1,
        ..Default::default()
    };
    fmm.kfd()
        .ioctl_plain(kfd_sys::kfd::AMDKFD_IOC_CREATE_EVENT, &mut a)
        .expect("CREATE_EVENT with a library event page");
}

#[test]
fn bo_handles_by_address() {
    let (sim, fmm) = primary("mi210");
    let flags = MemFlags::HOST_ACCESS | MemFlags::NON_PAGED | MemFlags::UNCACHED;
    let a = fmm.alloc_buffer(0, 8 * PAGE_SIZE, 0, flags).unwrap();
    let b = fmm.alloc_buffer(0, PAGE_SIZE, 0, flags).unwrap();
    let ha = fmm.handle(a.addr()).expect("a BO");
    let hb = fmm.handle(b.addr()).expect("a BO");
    assert_ne!(ha, hb);
    // Only the start of an object names it, as fmm_get_handle.
    assert_eq!(fmm.handle(a.addr() + PAGE_SIZE), None);
    assert_eq!(fmm.handle(0), None);
    assert_eq!(fmm.handle(0x1000), None);
    // An address-only reservation has no BO.
    let r = fmm
        .alloc_memory(
            gpu_node(&fmm),
            2 * MIB,
            MemFlags::NON_PAGED | MemFlags::ONLY_ADDRESS,
            None,
        )
        .unwrap();
    assert_eq!(fmm.handle(r), None);
    fmm.free_memory(r).unwrap();
    // Gone with the object.
    let addr = b.addr();
    drop(b);
    assert_eq!(fmm.handle(addr), None);
    drop(a);
    teardown(sim, fmm);
}

#[test]
fn the_event_page_buffer_is_left_to_the_kernel() {
    let (sim, fmm) = primary("mi210");
    let trace = TraceBuf::default();
    let flags = MemFlags::HOST_ACCESS | MemFlags::NON_PAGED | MemFlags::UNCACHED;
    let page = fmm.alloc_buffer(0, 8 * PAGE_SIZE, 0, flags).unwrap();
    page.map().unwrap();
    let handle = fmm.handle(page.addr()).unwrap();
    make_event_page(&fmm, handle);
    sim.set_trace(trace.clone());
    // The kernel refuses to free it while the process lives; the object
    // stays and its handle still resolves.
    let addr = page.into_raw();
    fmm.unmap_from_gpu(addr).unwrap();
    match fmm.free_memory(addr) {
        Err(FmmError::Ioctl { errno, .. }) => assert_eq!(errno, Errno::EPERM),
        other => panic!("{other:?}"),
    }
    assert_eq!(fmm.handle(addr), Some(handle));
    // Teardown does not ask again (one refused free in all) and leaves
    // nothing once the kfd file closes and the process goes.
    teardown(sim.clone(), fmm);
    assert_eq!(
        trace.lines_with(handle).len(),
        2,
        "{:?}",
        trace.lines_with(handle)
    );
    sim.clear_trace();
}

#[test]
fn a_buffer_marked_kernel_held_is_neither_unmapped_nor_freed_at_teardown() {
    let (sim, fmm) = primary("mi300x");
    let trace = TraceBuf::default();
    let flags = MemFlags::HOST_ACCESS | MemFlags::NON_PAGED | MemFlags::UNCACHED;
    let page = fmm.alloc_buffer(0, 8 * PAGE_SIZE, 0, flags).unwrap();
    page.map().unwrap();
    let handle = fmm.handle(page.addr()).unwrap();
    make_event_page(&fmm, handle);
    let addr = page.into_raw();
    fmm.mark_kernel_held(addr).unwrap();
    assert!(matches!(
        fmm.mark_kernel_held(addr + PAGE_SIZE),
        Err(FmmError::NoSuchObject(_))
    ));
    let other = fmm.alloc_buffer(0, PAGE_SIZE, 0, flags).unwrap();
    let other_handle = fmm.handle(other.addr()).unwrap();
    let _ = other.into_raw();
    sim.set_trace(trace.clone());
    teardown(sim.clone(), fmm);
    assert_eq!(trace.lines_with(handle), Vec::<String>::new());
    // Other leftovers are still freed.
    assert_eq!(trace.lines_with(other_handle).len(), 1);
    sim.clear_trace();
}

/// A pointer's answer names its object and the object's state: the
/// generation stays while the object is unchanged, every change gives a
/// new one, and the node lists of `pointer_nodes` go with the counts and
/// the generation of the same answer.
#[test]
fn pointer_answers_name_the_object_and_its_generation() {
    let (sim, fmm) = primary_with("mi300x", userptr_options());
    let gpus: Vec<u32> = (0..fmm.nodes().len() as u32)
        .filter(|&n| fmm.nodes()[n as usize].is_gpu())
        .collect();
    assert!(gpus.len() >= 4);
    let b = fmm
        .alloc_buffer(gpus[0], MIB, 0, MemFlags::NON_PAGED)
        .unwrap();
    let info = fmm.pointer_info(b.addr() + 5).unwrap();
    assert_eq!((info.registered_count, info.mapped_count), (0, 0));
    assert_eq!(info.kind, PointerType::Allocated);
    assert_eq!((info.object, info.gpu_address), (b.addr(), b.addr()));
    let again = fmm.pointer_info(b.addr() + 5).unwrap();
    assert_eq!(again, info, "unchanged: the same answer, generation too");
    assert_eq!(
        fmm.pointer_info(b.addr()).unwrap(),
        info,
        "any address inside"
    );
    let mut seen = vec![info.generation];
    let mut check = |nodes: &[u32]| {
        let n = fmm.pointer_nodes(b.addr()).unwrap();
        assert_eq!(n.mapped, nodes);
        assert_eq!(n.info.mapped_count as usize, nodes.len());
        assert!(!seen.contains(&n.info.generation), "a new generation");
        seen.push(n.info.generation);
        assert_eq!(
            fmm.pointer_info(b.addr()).unwrap(),
            n.info,
            "the same state"
        );
    };
    b.map_to_nodes(&gpus[..3]).unwrap();
    check(&gpus[..3]);
    b.map_to_nodes(&gpus[1..2]).unwrap();
    check(&gpus[1..2]);
    fmm.set_user_data(b.addr(), 9).unwrap();
    check(&gpus[1..2]);
    b.unmap().unwrap();
    check(&[]);
    // Registered to more nodes than there are GPUs (a repeated node): the
    // registered list reads back as given.
    let host = vec![0u8; 4 * PAGE_SIZE as usize];
    let addr = host.as_ptr() as u64;
    let mut many = gpus.clone();
    many.push(gpus[0]);
    fmm.register_memory_to_nodes(addr, host.len() as u64, &many)
        .unwrap();
    let reg = fmm.pointer_nodes(addr).unwrap();
    assert_eq!(reg.info.kind, PointerType::RegisteredUser);
    assert_eq!(reg.registered, many);
    assert_eq!(reg.info.registered_count as usize, many.len());
    assert_ne!(reg.info.object, b.addr());
    fmm.deregister_memory(addr).unwrap();
    assert_eq!(
        cause(fmm.pointer_nodes(addr).unwrap_err()),
        "UnknownPointer"
    );
    drop(b);
    assert_eq!(
        cause(fmm.pointer_info(0x1234_5000).unwrap_err()),
        "UnknownPointer"
    );
    teardown(sim, fmm);
    drop(host);
}

#[test]
fn apu_system_memory_takes_no_alignment() {
    let (sim, fmm) = apu();
    // The C library's fmm_allocate_host: no alignment on non-dGPU
    // systems, a failed host allocation (ERROR).
    let e = fmm
        .alloc_memory_align(0, PAGE_SIZE, PAGE_SIZE, MemFlags::HOST_ACCESS, None)
        .unwrap_err();
    assert_eq!(cause(e), "ApuSystemMemory");
    let p = fmm
        .alloc_memory_align(0, PAGE_SIZE, 0, MemFlags::HOST_ACCESS, None)
        .unwrap();
    fmm.free_memory(p).unwrap();
    teardown(sim, fmm);
}

#[test]
fn only_address_system_memory_per_rule() {
    for on_host_path in [true, false] {
        let mut opts = FmmOptions::primary();
        opts.rules.only_address_on_host_path = on_host_path;
        let (sim, fmm) = primary_with("mi210", opts);
        let bos = live_bos(&sim);
        let flags = MemFlags::HOST_ACCESS | MemFlags::ONLY_ADDRESS;
        let p = fmm
            .alloc_memory_align(0, 4 * PAGE_SIZE, 0, flags, None)
            .unwrap();
        let info = fmm.pointer_info(p).unwrap();
        if on_host_path {
            // Address space only: no kernel object, no node.
            assert_eq!(live_bos(&sim), bos);
            assert_eq!(info.node, 0);
        } else {
            // 6.2.4: system memory ignores OnlyAddress.
            assert_eq!(live_bos(&sim), bos + 1);
        }
        fmm.free_memory(p).unwrap();
        // OnlyAddress with NoAddress on a GPU node: refused on the VRAM
        // path (6.2.4); the newest library sends it down the system
        // memory path first, which reserves the address space.
        let g = gpu_node(&fmm);
        let both = MemFlags::NON_PAGED | MemFlags::ONLY_ADDRESS | MemFlags::NO_ADDRESS;
        let r = fmm.alloc_memory(g, PAGE_SIZE, both, None);
        if on_host_path {
            fmm.free_memory(r.unwrap()).unwrap();
        } else {
            assert_eq!(cause(r.unwrap_err()), "ConflictingFlags");
        }
        teardown(sim, fmm);
    }
}

/// Issue 24: a double free, an unmap after a free and a map of memory no
/// object covers are errors for a Rust caller of the primary (SVM API
/// on); the C library's rules, which the C ABI opens its contexts with,
/// turn them into SVM semantics.
#[test]
fn unknown_addresses_under_c_rules() {
    let (sim, fmm) = primary("mi210");
    let b = fmm
        .alloc_memory(gpu_node(&fmm), MIB, MemFlags::NON_PAGED, None)
        .unwrap();
    fmm.map_to_gpu(b, MIB).unwrap();
    fmm.unmap_from_gpu(b).unwrap();
    fmm.free_memory(b).unwrap();
    assert_eq!(
        cause(fmm.free_memory(b).unwrap_err()),
        "NotRegistered",
        "double free"
    );
    assert_eq!(
        cause(fmm.unmap_from_gpu(b).unwrap_err()),
        "UnknownPointer",
        "unmap after free"
    );
    teardown(sim, fmm);

    let (sim, fmm) = primary_with("mi210", c_rules());
    let b = fmm
        .alloc_memory(gpu_node(&fmm), MIB, MemFlags::NON_PAGED, None)
        .unwrap();
    fmm.free_memory(b).unwrap();
    fmm.free_memory(b).unwrap();
    fmm.unmap_from_gpu(b).unwrap();
    // Anonymous memory no object covers becomes an SVM range when mapped.
    let len = 4 * PAGE_SIZE as usize;
    let mem = kfd_sys::mman::reserve(len).unwrap() as u64;
    // SAFETY: our own reservation, made accessible.
    unsafe {
        libc::mprotect(
            mem as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
        );
    }
    assert_eq!(fmm.map_to_gpu(mem, len as u64).unwrap(), mem);
    // SAFETY: our own reservation.
    unsafe { kfd_sys::mman::munmap(mem as usize, len) }.unwrap();
    teardown(sim, fmm);
}

/// Issue 24: a buffer whose release the kernel refuses reports it:
/// [`kfd_fmm::Buffer::free`] returns the error, a drop records it with
/// the memory manager; either way the memory stays allocated and the
/// address-based API can free it later.
#[test]
fn buffer_release_failures_are_reported() {
    let (sim, fmm) = primary("mi210");
    let g = gpu_node(&fmm);
    let bos = live_bos(&sim);

    let b = fmm.alloc_buffer(g, MIB, 0, MemFlags::NON_PAGED).unwrap();
    b.map().unwrap();
    let addr = b.addr();
    sim.inject_fault("FREE_MEMORY_OF_GPU", 1, Errno::ENOMEM);
    let e = b.free().unwrap_err();
    assert!(
        matches!(
            e,
            FmmError::Ioctl {
                errno: Errno::ENOMEM,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(live_bos(&sim), bos + 1, "still allocated");
    assert_eq!(
        fmm.drop_failure_count(),
        0,
        "an explicit free reports itself"
    );
    fmm.free_memory(addr).unwrap();
    assert_eq!(live_bos(&sim), bos);

    let b = fmm.alloc_buffer(g, MIB, 0, MemFlags::NON_PAGED).unwrap();
    let addr = b.addr();
    // The simulator counts the calls from its first injected fault: the
    // refused free, the retry, then this buffer's.
    sim.inject_fault("FREE_MEMORY_OF_GPU", 3, Errno::ENOMEM);
    drop(b);
    assert_eq!(fmm.drop_failure_count(), 1);
    let failures = fmm.take_drop_failures();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].addr, addr);
    assert!(matches!(
        failures[0].error,
        FmmError::Ioctl {
            errno: Errno::ENOMEM,
            ..
        }
    ));
    assert!(fmm.take_drop_failures().is_empty(), "taken out");
    assert_eq!(live_bos(&sim), bos + 1);
    fmm.free_memory(addr).unwrap();
    assert_eq!(live_bos(&sim), bos);

    // A buffer that is released cleanly records nothing.
    let b = fmm.alloc_buffer(g, MIB, 0, MemFlags::NON_PAGED).unwrap();
    b.map().unwrap();
    b.free().unwrap();
    drop(fmm.alloc_buffer(g, MIB, 0, MemFlags::NON_PAGED).unwrap());
    assert_eq!(fmm.drop_failure_count(), 1);
    teardown(sim, fmm);
}
