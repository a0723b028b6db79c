//! Render-node buffer-object ioctls on imported dma-bufs: GEM metadata
//! (seen by an importer on another machine, i.e. another preloaded OS
//! process), GEM_OP creation info, GEM_VA mappings and GEM_MMAP offsets
//! that map the object's pages.

mod kernel_util;

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use kernel_util::*;
use kfd_sim::drm::{GEM_MMAP_BASE, GEM_MMAP_STRIDE};
use kfd_sim::Sim;
use kfd_sys::drm::*;
use kfd_sys::kfd::*;
use kfd_sys::{Driver, Errno};

const LEN: u64 = 1 << 20;

fn export(p: &Proc, handle: u64) -> OwnedFd {
    let mut ex = kfd_ioctl_export_dmabuf_args {
        handle,
        flags: libc::O_CLOEXEC as u32,
        dmabuf_fd: 0,
    };
    io(&p.sim, &p.kfd, AMDKFD_IOC_EXPORT_DMABUF, &mut ex).unwrap();
    // SAFETY: the ioctl handed us this descriptor.
    unsafe { OwnedFd::from_raw_fd(ex.dmabuf_fd as i32) }
}

fn gem_handle(p: &Proc, fd: &OwnedFd) -> u32 {
    let mut ph = drm_prime_handle {
        handle: 0,
        flags: 0,
        fd: fd.as_raw_fd(),
    };
    io(&p.sim, &p.renders[0], DRM_IOCTL_PRIME_FD_TO_HANDLE, &mut ph).unwrap();
    ph.handle
}

fn metadata(p: &Proc, op: u32, handle: u32, data: &[u8]) -> Result<drm_amdgpu_gem_metadata, Errno> {
    let mut m = drm_amdgpu_gem_metadata {
        handle,
        op,
        ..Default::default()
    };
    m.data.flags = 0x11;
    m.data.tiling_info = 0x22;
    m.data.data_size_bytes = data.len() as u32;
    for (i, b) in data.iter().enumerate() {
        m.data.data[i / 4] |= u32::from(*b) << (8 * (i % 4));
    }
    io(&p.sim, &p.renders[0], DRM_IOCTL_AMDGPU_GEM_METADATA, &mut m)?;
    Ok(m)
}

fn va(p: &Proc, op: u32, handle: u32, addr: u64, offset: u64, size: u64) -> Result<i32, Errno> {
    let mut v = drm_amdgpu_gem_va {
        handle,
        operation: op,
        flags: AMDGPU_VM_PAGE_READABLE | AMDGPU_VM_PAGE_WRITEABLE,
        va_address: addr,
        offset_in_bo: offset,
        map_size: size,
        ..Default::default()
    };
    io(&p.sim, &p.renders[0], DRM_IOCTL_AMDGPU_GEM_VA, &mut v)
}

/// Whether this kernel has user xattrs on memfds (Linux 6.6+): then
/// metadata crosses OS processes with the dma-buf.
fn memfd_xattrs() -> bool {
    // SAFETY: a plain memfd_create with a static name.
    let fd = unsafe { libc::memfd_create(c"kfd-sim-xattr-probe".as_ptr(), libc::MFD_CLOEXEC) };
    assert!(fd >= 0);
    // SAFETY: `fd` is ours; key and value are valid for the call.
    let r = unsafe { libc::fsetxattr(fd, c"user.probe".as_ptr(), c"1".as_ptr().cast(), 1, 0) };
    // SAFETY: closing our own descriptor.
    unsafe { libc::close(fd) };
    r == 0
}

#[test]
fn metadata_travels_with_the_dmabuf() {
    let m1 = Sim::preset("mi210").unwrap();
    let m2 = Sim::preset("mi210").unwrap();
    let a = Proc::open(&m1);
    let b = Proc::open(&m2);
    let g = a.gpu();
    let (h, _) = a.alloc(g, 0x2000_0000, LEN, VRAM).unwrap();
    let fd = export(&a, h);
    let ga = gem_handle(&a, &fd);
    // Nothing set yet.
    let got = metadata(&a, AMDGPU_GEM_METADATA_OP_GET_METADATA, ga, &[]).unwrap();
    assert_eq!((got.data.data_size_bytes, got.data.flags), (0, 0));
    metadata(
        &a,
        AMDGPU_GEM_METADATA_OP_SET_METADATA,
        ga,
        &[0x78, 0x56, 0x34, 0x12, 9],
    )
    .unwrap();
    let got = metadata(&a, AMDGPU_GEM_METADATA_OP_GET_METADATA, ga, &[]).unwrap();
    assert_eq!(got.data.data_size_bytes, 5);
    assert_eq!(got.data.data[0], 0x1234_5678);
    assert_eq!((got.data.flags, got.data.tiling_info), (0x11, 0x22));
    // The importer on the other machine.
    let gb = gem_handle(&b, &fd);
    let seen = metadata(&b, AMDGPU_GEM_METADATA_OP_GET_METADATA, gb, &[]).unwrap();
    if memfd_xattrs() {
        assert_eq!(seen.data.data[0], 0x1234_5678);
        assert_eq!(seen.data.data_size_bytes, 5);
    } else {
        assert_eq!(seen.data.data_size_bytes, 0);
    }
    // Errors: unknown handle, op, too much data.
    assert_eq!(
        metadata(&a, AMDGPU_GEM_METADATA_OP_GET_METADATA, 999, &[]).err(),
        Some(Errno::ENOENT)
    );
    assert_eq!(metadata(&a, 7, ga, &[]).err(), Some(Errno::EINVAL));
    let mut big = drm_amdgpu_gem_metadata {
        handle: ga,
        op: AMDGPU_GEM_METADATA_OP_SET_METADATA,
        ..Default::default()
    };
    big.data.data_size_bytes = 257;
    assert_eq!(
        io(
            &a.sim,
            &a.renders[0],
            DRM_IOCTL_AMDGPU_GEM_METADATA,
            &mut big
        ),
        Err(Errno::EINVAL)
    );
    // SET with no data clears it and keeps the flags.
    let mut clear = drm_amdgpu_gem_metadata {
        handle: ga,
        op: AMDGPU_GEM_METADATA_OP_SET_METADATA,
        ..Default::default()
    };
    io(
        &a.sim,
        &a.renders[0],
        DRM_IOCTL_AMDGPU_GEM_METADATA,
        &mut clear,
    )
    .unwrap();
    let got = metadata(&a, AMDGPU_GEM_METADATA_OP_GET_METADATA, ga, &[]).unwrap();
    assert_eq!(
        (
            got.data.data_size_bytes,
            got.data.flags,
            got.data.tiling_info
        ),
        (0, 0x11, 0)
    );
    m1.close(fd);
    a.free(h).unwrap();
    a.close();
    b.close();
    assert!(m1.live_objects().is_empty(), "{:?}", m1.live_objects());
    assert!(m2.live_objects().is_empty(), "{:?}", m2.live_objects());
}

#[test]
fn gem_op_reports_the_kfd_allocation() {
    let sim = Sim::preset("mi210").unwrap();
    let a = Proc::open(&sim);
    let g = a.gpu();
    for (flags, domains, domain_flags) in [
        (
            VRAM,
            AMDGPU_GEM_DOMAIN_VRAM,
            AMDGPU_GEM_CREATE_VRAM_WIPE_ON_RELEASE,
        ),
        (
            VRAM | KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC,
            AMDGPU_GEM_DOMAIN_VRAM,
            AMDGPU_GEM_CREATE_VRAM_WIPE_ON_RELEASE | AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED,
        ),
        (GTT, AMDGPU_GEM_DOMAIN_GTT, 0),
    ] {
        let (h, _) = a.alloc(g, 0x2000_0000, 5000, flags).unwrap();
        let fd = export(&a, h);
        let gh = gem_handle(&a, &fd);
        let mut info = drm_amdgpu_gem_create_in::default();
        let mut op = drm_amdgpu_gem_op {
            handle: gh,
            op: AMDGPU_GEM_OP_GET_GEM_CREATE_INFO,
            value: &mut info as *mut _ as u64,
        };
        // SAFETY: `value` points at a live drm_amdgpu_gem_create_in.
        unsafe {
            kfd_sys::ioctl::ioctl(
                &sim,
                std::os::fd::AsFd::as_fd(&a.renders[0]),
                DRM_IOCTL_AMDGPU_GEM_OP,
                &mut op,
            )
        }
        .unwrap();
        assert_eq!(
            (
                info.bo_size,
                info.alignment,
                info.domains,
                info.domain_flags
            ),
            (8192, 4096, domains, domain_flags),
            "{flags:#x}"
        );
        op.op = AMDGPU_GEM_OP_SET_PLACEMENT;
        op.value = AMDGPU_GEM_DOMAIN_GTT | 0x100;
        io(&sim, &a.renders[0], DRM_IOCTL_AMDGPU_GEM_OP, &mut op).unwrap();
        op.op = AMDGPU_GEM_OP_GET_GEM_CREATE_INFO;
        op.value = &mut info as *mut _ as u64;
        io(&sim, &a.renders[0], DRM_IOCTL_AMDGPU_GEM_OP, &mut op).unwrap();
        assert_eq!(info.domains, AMDGPU_GEM_DOMAIN_GTT);
        op.value = 8;
        assert_eq!(
            io(&sim, &a.renders[0], DRM_IOCTL_AMDGPU_GEM_OP, &mut op),
            Err(Errno::EFAULT)
        );
        op.op = 9;
        assert_eq!(
            io(&sim, &a.renders[0], DRM_IOCTL_AMDGPU_GEM_OP, &mut op),
            Err(Errno::EINVAL)
        );
        op.handle = 999;
        assert_eq!(
            io(&sim, &a.renders[0], DRM_IOCTL_AMDGPU_GEM_OP, &mut op),
            Err(Errno::ENOENT)
        );
        let mut close = drm_gem_close { handle: gh, pad: 0 };
        io(&sim, &a.renders[0], DRM_IOCTL_GEM_CLOSE, &mut close).unwrap();
        sim.close(fd);
        a.free(h).unwrap();
    }
    a.close();
    assert!(sim.live_objects().is_empty());
}

#[test]
fn gem_va_maps_unmaps_clears_and_replaces() {
    let sim = Sim::preset("navi31").unwrap();
    let a = Proc::open(&sim);
    let g = a.gpu();
    let (h, _) = a.alloc(g, 0x2000_0000, LEN, GTT).unwrap();
    let fd = export(&a, h);
    let gh = gem_handle(&a, &fd);
    let base = 0x7000_0000u64;
    va(&a, AMDGPU_VA_OP_MAP, gh, base, 0, LEN).unwrap();
    // Overlap, alignment, size, range, reserved and hole addresses, op.
    assert_eq!(
        va(&a, AMDGPU_VA_OP_MAP, gh, base + 4096, 0, 4096),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        va(&a, AMDGPU_VA_OP_MAP, gh, base + LEN + 1, 0, 4096),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        va(&a, AMDGPU_VA_OP_MAP, gh, base + LEN, 0, 0),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        va(&a, AMDGPU_VA_OP_MAP, gh, base + LEN, 4096, LEN),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        va(&a, AMDGPU_VA_OP_MAP, gh, 0x1000, 0, 4096),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        va(&a, AMDGPU_VA_OP_MAP, gh, 1 << 47, 0, 4096),
        Err(Errno::EINVAL)
    );
    assert_eq!(va(&a, 9, gh, base, 0, 4096), Err(Errno::EINVAL));
    assert_eq!(
        va(&a, AMDGPU_VA_OP_MAP, 999, base + LEN, 0, 4096),
        Err(Errno::ENOENT)
    );
    let mut bad_flags = drm_amdgpu_gem_va {
        handle: gh,
        operation: AMDGPU_VA_OP_MAP,
        flags: 1 << 20,
        va_address: base + LEN,
        map_size: 4096,
        ..Default::default()
    };
    assert_eq!(
        io(&sim, &a.renders[0], DRM_IOCTL_AMDGPU_GEM_VA, &mut bad_flags),
        Err(Errno::EINVAL)
    );
    // UNMAP needs the start of a mapping.
    assert_eq!(
        va(&a, AMDGPU_VA_OP_UNMAP, gh, base + 4096, 0, 0),
        Err(Errno::ENOENT)
    );
    // CLEAR cuts a page out of the middle, REPLACE maps over a range.
    va(&a, AMDGPU_VA_OP_CLEAR, 0, base + 8192, 0, 4096).unwrap();
    let drm_maps = |p: &Proc| sim_va(&sim, p);
    assert_eq!(
        drm_maps(&a),
        [(base, 0, 8192), (base + 12288, 12288, LEN - 12288)]
    );
    va(&a, AMDGPU_VA_OP_REPLACE, gh, base + 4096, 0, 8192).unwrap();
    assert_eq!(
        drm_maps(&a),
        [
            (base, 0, 4096),
            (base + 4096, 0, 8192),
            (base + 12288, 12288, LEN - 12288)
        ]
    );
    va(&a, AMDGPU_VA_OP_UNMAP, gh, base, 0, 0).unwrap();
    // Closing the handle drops its mappings.
    let mut close = drm_gem_close { handle: gh, pad: 0 };
    io(&sim, &a.renders[0], DRM_IOCTL_GEM_CLOSE, &mut close).unwrap();
    assert!(drm_maps(&a).is_empty());
    sim.close(fd);
    a.free(h).unwrap();
    a.close();
    assert!(sim.live_objects().is_empty());
}

/// (start, offset, size) of every GEM_VA mapping of the first render node
/// of `p`.
fn sim_va(sim: &Sim, p: &Proc) -> Vec<(u64, u64, u64)> {
    sim.drm_file_va(p.renders[0].as_raw_fd())
        .unwrap()
        .into_iter()
        .map(|(a, m)| (a, m.offset, m.size))
        .collect()
}

#[test]
fn gem_mmap_offsets_map_the_object() {
    let m1 = Sim::preset("mi210").unwrap();
    let m2 = Sim::preset("mi210").unwrap();
    let a = Proc::open(&m1);
    let b = Proc::open(&m2);
    let g = a.gpu();
    let (h, off) = a.alloc(g, 0x2000_0000, LEN, GTT).unwrap();
    let ma = map_fd(&a.renders[0], off, LEN as usize);
    // SAFETY: a live writable mapping of LEN bytes.
    unsafe { std::ptr::copy_nonoverlapping(b"gem pages".as_ptr(), ma.add(4096), 9) };
    let fd = export(&a, h);
    let gb = gem_handle(&b, &fd);
    let mut mm = drm_amdgpu_gem_mmap::default();
    mm.r#in = drm_amdgpu_gem_mmap_in {
        handle: gb,
        _pad: 0,
    };
    io(&m2, &b.renders[0], DRM_IOCTL_AMDGPU_GEM_MMAP, &mut mm).unwrap();
    // SAFETY: the union's output member after a successful ioctl.
    let offset = unsafe { mm.out.addr_ptr };
    assert_eq!(offset, GEM_MMAP_BASE + u64::from(gb) * GEM_MMAP_STRIDE);
    let render = b.renders[0].as_raw_fd();
    let t = m2.gem_mmap_target(render, offset, LEN).unwrap().unwrap();
    let mb = map_fd(&t.fd(), t.offset(), LEN as usize);
    // SAFETY: a live mapping of LEN bytes.
    let seen = unsafe { std::slice::from_raw_parts(mb.add(4096), 9) };
    assert_eq!(seen, b"gem pages");
    // Past the object, no such handle, not a GEM offset, not a render node.
    assert_eq!(
        m2.gem_mmap_target(render, offset, LEN + 4096)
            .unwrap()
            .err(),
        Some(Errno::EINVAL)
    );
    assert_eq!(
        m2.gem_mmap_target(render, offset + GEM_MMAP_STRIDE, 4096)
            .unwrap()
            .err(),
        Some(Errno::EINVAL)
    );
    assert!(m2.gem_mmap_target(render, 0, 4096).is_none());
    assert!(m2
        .gem_mmap_target(b.kfd.as_raw_fd(), offset, 4096)
        .is_none());
    mm.r#in = drm_amdgpu_gem_mmap_in {
        handle: 77,
        _pad: 0,
    };
    assert_eq!(
        io(&m2, &b.renders[0], DRM_IOCTL_AMDGPU_GEM_MMAP, &mut mm),
        Err(Errno::ENOENT)
    );
    drop(t);
    unmap_fd(mb, LEN as usize);
    unmap_fd(ma, LEN as usize);
    m1.close(fd);
    a.free(h).unwrap();
    a.close();
    b.close();
    assert!(m1.live_objects().is_empty());
    assert!(m2.live_objects().is_empty());
}
