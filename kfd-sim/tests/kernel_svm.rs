//! Kernel model: SVM attributes over an interval map.

mod kernel_util;

use kernel_util::*;
use kfd_sim::Sim;
use kfd_sys::kfd::*;
use kfd_sys::Errno;

fn svm(
    p: &Proc,
    op: u32,
    start: u64,
    size: u64,
    attrs: &mut [kfd_ioctl_svm_attribute],
) -> Result<i32, Errno> {
    let mut buf = vec![0u8; 24 + attrs.len() * 8];
    buf[0..8].copy_from_slice(&start.to_ne_bytes());
    buf[8..16].copy_from_slice(&size.to_ne_bytes());
    buf[16..20].copy_from_slice(&op.to_ne_bytes());
    buf[20..24].copy_from_slice(&(attrs.len() as u32).to_ne_bytes());
    for (i, a) in attrs.iter().enumerate() {
        buf[24 + i * 8..28 + i * 8].copy_from_slice(&a.r#type.to_ne_bytes());
        buf[28 + i * 8..32 + i * 8].copy_from_slice(&a.value.to_ne_bytes());
    }
    let r = raw(
        &p.sim,
        &p.kfd,
        svm_request(attrs.len()),
        buf.as_mut_ptr().cast(),
    );
    for (i, a) in attrs.iter_mut().enumerate() {
        a.r#type = u32::from_ne_bytes(buf[24 + i * 8..28 + i * 8].try_into().unwrap());
        a.value = u32::from_ne_bytes(buf[28 + i * 8..32 + i * 8].try_into().unwrap());
    }
    r
}

fn at(t: u32, v: u32) -> kfd_ioctl_svm_attribute {
    kfd_ioctl_svm_attribute {
        r#type: t,
        value: v,
    }
}

/// Sets the preferred location of `[base, base + len)` to `gpu` (making
/// or splitting SVM ranges).
fn prefer(p: &Proc, base: u64, len: u64, gpu: u32) {
    svm(
        p,
        KFD_IOCTL_SVM_OP_SET_ATTR,
        base,
        len,
        &mut [at(KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, gpu)],
    )
    .unwrap();
}

#[test]
fn split_and_get_mixed() {
    let sim = Sim::preset("mi300x").unwrap();
    let p = Proc::open(&sim);
    let g = p.gpu();
    let g2 = p.gpus[1];
    let base = anon(64 * 4096) as u64;
    let ranges = |sim: &Sim| sim.live_objects().processes[0].svm_ranges;
    // One range of 16 pages.
    prefer(&p, base, 16 * 4096, g);
    assert_eq!(ranges(&sim), 1);
    // Setting the same value again splits nothing.
    prefer(&p, base + 4096, 4096, g);
    assert_eq!(ranges(&sim), 1);
    // A different value in the middle splits it in three.
    svm(
        &p,
        KFD_IOCTL_SVM_OP_SET_ATTR,
        base + 4 * 4096,
        4 * 4096,
        &mut [at(KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, g2)],
    )
    .unwrap();
    assert_eq!(ranges(&sim), 3);
    // A range extending past the end adds a new range for the gap.
    svm(
        &p,
        KFD_IOCTL_SVM_OP_SET_ATTR,
        base + 14 * 4096,
        4 * 4096,
        &mut [at(KFD_IOCTL_SVM_ATTR_SET_FLAGS, KFD_IOCTL_SVM_FLAG_GPU_RO)],
    )
    .unwrap();
    assert_eq!(ranges(&sim), 5);
    // Uniform sub-range.
    let mut q = [
        at(KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, 0),
        at(KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, 0),
        at(KFD_IOCTL_SVM_ATTR_GRANULARITY, 0),
        at(KFD_IOCTL_SVM_ATTR_SET_FLAGS, 0),
        at(KFD_IOCTL_SVM_ATTR_CLR_FLAGS, 0),
        at(KFD_IOCTL_SVM_ATTR_ACCESS, g),
    ];
    svm(
        &p,
        KFD_IOCTL_SVM_OP_GET_ATTR,
        base + 4 * 4096,
        2 * 4096,
        &mut q,
    )
    .unwrap();
    assert_eq!(q[0].value, g2);
    assert_eq!(q[1].value, KFD_IOCTL_SVM_LOCATION_UNDEFINED);
    assert_eq!(q[2].value, 9);
    assert_eq!(
        q[3].value,
        KFD_IOCTL_SVM_FLAG_HOST_ACCESS | KFD_IOCTL_SVM_FLAG_COHERENT
    );
    assert_eq!(q[5].r#type, KFD_IOCTL_SVM_ATTR_NO_ACCESS);
    // GET rewrote the ACCESS entry's type; NO_ACCESS is not a valid GET
    // attribute, exactly as with the kernel.
    assert_eq!(
        svm(&p, KFD_IOCTL_SVM_OP_GET_ATTR, base, 4096, &mut q),
        Err(Errno::EINVAL)
    );
    q[5] = at(KFD_IOCTL_SVM_ATTR_ACCESS, g);
    // Mixed preferred location: undefined; flags AND / ~OR.
    svm(&p, KFD_IOCTL_SVM_OP_GET_ATTR, base, 18 * 4096, &mut q).unwrap();
    assert_eq!(q[0].value, KFD_IOCTL_SVM_LOCATION_UNDEFINED);
    assert_eq!(q[3].value & KFD_IOCTL_SVM_FLAG_GPU_RO, 0);
    assert_eq!(
        !q[4].value & KFD_IOCTL_SVM_FLAG_GPU_RO,
        KFD_IOCTL_SVM_FLAG_GPU_RO
    );
    // Access attributes.
    svm(
        &p,
        KFD_IOCTL_SVM_OP_SET_ATTR,
        base,
        2 * 4096,
        &mut [at(KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE, g)],
    )
    .unwrap();
    let mut a = [
        at(KFD_IOCTL_SVM_ATTR_ACCESS, g),
        at(KFD_IOCTL_SVM_ATTR_ACCESS, g2),
    ];
    svm(&p, KFD_IOCTL_SVM_OP_GET_ATTR, base, 2 * 4096, &mut a).unwrap();
    assert_eq!(a[0].r#type, KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE);
    assert_eq!(a[1].r#type, KFD_IOCTL_SVM_ATTR_NO_ACCESS);
    // Granularity is clamped to 0x3f.
    svm(
        &p,
        KFD_IOCTL_SVM_OP_SET_ATTR,
        base + 20 * 4096,
        4096,
        &mut [at(KFD_IOCTL_SVM_ATTR_GRANULARITY, 200)],
    )
    .unwrap();
    let mut gq = [at(KFD_IOCTL_SVM_ATTR_GRANULARITY, 0)];
    svm(
        &p,
        KFD_IOCTL_SVM_OP_GET_ATTR,
        base + 20 * 4096,
        4096,
        &mut gq,
    )
    .unwrap();
    assert_eq!(gq[0].value, 0x3f);
    // BO allocations may not overlap SVM ranges.
    assert_eq!(p.alloc(g, base, 4096, GTT), Err(Errno(libc::EADDRINUSE)));
    p.close();
    assert!(sim.live_objects().is_empty());
}

#[test]
fn svm_argument_checks() {
    let sim = Sim::preset("mi210").unwrap();
    let p = Proc::open(&sim);
    let g = p.gpu();
    let base = anon(16 * 4096) as u64;
    let pref = |v| [at(KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, v)];
    let set = KFD_IOCTL_SVM_OP_SET_ATTR;
    assert_eq!(
        svm(&p, set, base + 1, 4096, &mut pref(g)),
        Err(Errno::EINVAL)
    );
    assert_eq!(svm(&p, set, base, 100, &mut pref(g)), Err(Errno::EINVAL));
    assert_eq!(svm(&p, set, 0, 4096, &mut pref(g)), Err(Errno::EINVAL));
    assert_eq!(svm(&p, set, base, 0, &mut pref(g)), Err(Errno::EINVAL));
    assert_eq!(
        svm(&p, set, base, 4096, &mut pref(0x1234)),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        svm(&p, set, base, 4096, &mut [at(99, 0)]),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        svm(
            &p,
            set,
            base,
            4096,
            &mut [at(
                KFD_IOCTL_SVM_ATTR_PREFETCH_LOC,
                KFD_IOCTL_SVM_LOCATION_UNDEFINED
            )]
        ),
        Err(Errno::EINVAL)
    );
    // Unmapped memory.
    assert_eq!(svm(&p, set, 0x1000, 4096, &mut pref(g)), Err(Errno::EFAULT));
    // GET of set-only attribute types.
    assert_eq!(
        svm(
            &p,
            KFD_IOCTL_SVM_OP_GET_ATTR,
            base,
            4096,
            &mut [at(KFD_IOCTL_SVM_ATTR_NO_ACCESS, g)]
        ),
        Err(Errno::EINVAL)
    );
    // Default attributes where no range exists.
    let mut q = [
        at(KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, 0),
        at(KFD_IOCTL_SVM_ATTR_GRANULARITY, 0),
    ];
    svm(&p, KFD_IOCTL_SVM_OP_GET_ATTR, base, 4096, &mut q).unwrap();
    assert_eq!(
        (q[0].value, q[1].value),
        (KFD_IOCTL_SVM_LOCATION_UNDEFINED, 9)
    );
    // An unknown op: the kernel's svm_ioctl returns a positive EINVAL.
    assert_eq!(svm(&p, 7, base, 4096, &mut pref(g)), Ok(libc::EINVAL));
    p.close();
}

#[test]
fn unmapped_memory_leaves_its_svm_range() {
    // The kernel drops an SVM range when its memory is unmapped; the model
    // catches up when an allocation would clash with the range.
    let sim = Sim::preset("mi210").unwrap();
    let p = Proc::open(&sim);
    let g = p.gpu();
    let base = anon(8 * 4096) as u64;
    prefer(&p, base, 8 * 4096, g);
    assert_eq!(p.alloc(g, base, 4096, GTT), Err(Errno(libc::EADDRINUSE)));
    // Unmap the upper half: only the lower half still clashes.
    // SAFETY: our own anonymous test mapping, no references into it.
    unsafe { libc::munmap((base + 4 * 4096) as *mut libc::c_void, 4 * 4096) };
    let (h, _) = p.alloc(g, base + 4 * 4096, 4096, GTT).unwrap();
    assert_eq!(sim.live_objects().processes[0].svm_ranges, 1);
    assert_eq!(
        p.alloc(g, base + 3 * 4096, 4096, GTT),
        Err(Errno(libc::EADDRINUSE))
    );
    p.free(h).unwrap();
    // SAFETY: as above.
    unsafe { libc::munmap(base as *mut libc::c_void, 4 * 4096) };
    p.close();
    assert!(sim.live_objects().is_empty());
}

/// kfdtest PartialUnmapSysMemTest's memory pattern in-process: an SVM
/// range loses four pages in the middle to `munmap`, new memory is mapped
/// in the hole and registered as userptr memory. The kernel's MMU notifier
/// dropped the pages at `munmap` time; `Sim::cpu_unmapped` is that
/// notifier (the LD_PRELOAD library calls it from `munmap`). Without it the
/// re-mapped hole still belongs to the range: EADDRINUSE.
#[test]
fn partial_munmap_then_userptr_in_the_hole() {
    let sim = Sim::preset("mi210").unwrap();
    let p = Proc::open(&sim);
    let g = p.gpu();
    let base = anon(16 * 4096) as u64;
    prefer(&p, base, 16 * 4096, g);
    let hole = base + 2 * 4096;
    // SAFETY: part of our own anonymous test mapping, no references into it.
    let r = unsafe { libc::munmap(hole as *mut libc::c_void, 4 * 4096) };
    assert_eq!(r, 0);
    assert_eq!(sim.cpu_unmapped(hole, 4 * 4096), 4);
    // SAFETY: maps fresh anonymous memory exactly over the hole just made.
    let q = unsafe {
        libc::mmap(
            hole as *mut libc::c_void,
            4 * 4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
            -1,
            0,
        )
    };
    assert_eq!(q as u64, hole);
    let h = p.userptr(g, hole, 4 * 4096).expect("userptr in the hole");
    assert_eq!(p.map(h, &[g], 0).0, Ok(0));
    // The range was split in two around the hole; both halves keep their
    // attributes.
    assert_eq!(sim.live_objects().processes[0].svm_ranges, 2);
    let mut q = [at(KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, 0)];
    svm(
        &p,
        KFD_IOCTL_SVM_OP_GET_ATTR,
        base + 8 * 4096,
        8 * 4096,
        &mut q,
    )
    .unwrap();
    assert_eq!(q[0].value, g);
    // Unmapping memory no range covers removes nothing.
    assert_eq!(sim.cpu_unmapped(base + 64 * 4096 * 1024, 4096), 0);
    assert_eq!(p.unmap(h, &[g], 0).0, Ok(0));
    p.free(h).unwrap();
    // SAFETY: our own test mapping.
    unsafe { libc::munmap(base as *mut libc::c_void, 16 * 4096) };
    assert_eq!(sim.cpu_unmapped(base, 16 * 4096), 12);
    assert_eq!(sim.live_objects().processes[0].svm_ranges, 0);
    p.close();
    assert!(sim.live_objects().is_empty());
}

/// The granularity a kernel stores: kernels up to KFD ioctl 1.13 keep the
/// value as given in the range's byte (kfdtest 5.2.3 SetGetAttributesTest
/// sets 0xFF and reads 0xFF back); since the late-2023 fix for a shift out
/// of bounds (1.14 onwards) `svm_range_apply_attrs` clamps it to 0x3F.
#[test]
fn svm_granularity_is_stored_as_the_kernel_of_the_version_does() {
    for (minor, want) in [(13, 0xff), (14, 0x3f), (KFD_IOCTL_MINOR_VERSION, 0x3f)] {
        let sim = Sim::preset("mi210").unwrap();
        sim.set_version_minor(minor);
        let p = Proc::open(&sim);
        let base = anon(4 * 4096) as u64;
        svm(
            &p,
            KFD_IOCTL_SVM_OP_SET_ATTR,
            base,
            4 * 4096,
            &mut [at(KFD_IOCTL_SVM_ATTR_GRANULARITY, 0xff)],
        )
        .unwrap();
        let mut q = [at(KFD_IOCTL_SVM_ATTR_GRANULARITY, 0)];
        svm(&p, KFD_IOCTL_SVM_OP_GET_ATTR, base, 4 * 4096, &mut q).unwrap();
        assert_eq!(q[0].value, want, "ioctl minor {minor}");
        // A value in range is stored as given by every version.
        svm(
            &p,
            KFD_IOCTL_SVM_OP_SET_ATTR,
            base,
            4096,
            &mut [at(KFD_IOCTL_SVM_ATTR_GRANULARITY, 0x20)],
        )
        .unwrap();
        svm(&p, KFD_IOCTL_SVM_OP_GET_ATTR, base, 4096, &mut q).unwrap();
        assert_eq!(q[0].value, 0x20, "ioctl minor {minor}");
        p.close();
    }
}
