//! Kernel model: dma-buf contents. A dma-buf descriptor shows the
//! buffer's bytes (mmap at offset 0), in another simulated OS process of
//! the same machine, in another machine (a second `Sim`, like a second
//! preloaded OS process), and through PRIME on render nodes.

mod kernel_util;

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use kernel_util::*;
use kfd_sim::Sim;
use kfd_sys::drm::{
    drm_gem_close, drm_prime_handle, DRM_CLOEXEC, DRM_IOCTL_GEM_CLOSE,
    DRM_IOCTL_PRIME_FD_TO_HANDLE, DRM_IOCTL_PRIME_HANDLE_TO_FD,
};
use kfd_sys::kfd::*;
use kfd_sys::{Driver, Errno};

const LEN: usize = 1 << 20;

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

fn import(p: &Proc, fd: &OwnedFd, va: u64) -> Result<u64, Errno> {
    let mut im = kfd_ioctl_import_dmabuf_args {
        va_addr: va,
        handle: 0,
        gpu_id: p.gpu(),
        dmabuf_fd: fd.as_raw_fd() as u32,
    };
    io(&p.sim, &p.kfd, AMDKFD_IOC_IMPORT_DMABUF, &mut im)?;
    Ok(im.handle)
}

fn read(p: *const u8, off: usize, n: usize) -> Vec<u8> {
    // SAFETY: callers pass live mappings of at least `off + n` bytes.
    unsafe { std::slice::from_raw_parts(p.add(off), n).to_vec() }
}

fn write(p: *mut u8, off: usize, data: &[u8]) {
    // SAFETY: callers pass live writable mappings of at least
    // `off + data.len()` bytes.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p.add(off), data.len()) };
}

/// Exporter writes through its CPU mapping (made before the export, as
/// libhsakmt does at allocation), importer reads through its own.
#[test]
fn importer_sees_exporter_bytes() {
    for (flags, preset) in [(GTT, "mi210"), (VRAM, "mi210"), (VRAM, "mi300x")] {
        let sim = Sim::preset(preset).unwrap();
        let other = sim.new_os_process();
        let a = Proc::open(&sim);
        let b = Proc::open(&other);
        let g = a.gpu();
        let (h, off) = a.alloc(g, 0x2000_0000, LEN as u64, flags).unwrap();
        let ma = map_fd(&a.renders[0], off, LEN);
        write(ma, 0, b"before export");
        write(ma, LEN - 8, b"the end!");
        let fd = export(&a, h);
        // The exporter's mapping still shows (and writes) the same pages.
        assert_eq!(read(ma, 0, 13), b"before export");
        write(ma, 4096, b"after export");
        let hb = import(&b, &fd, 0x3000_0000).unwrap();
        assert_eq!(b.map(hb, &[g], 0), (Ok(0), 1));
        let mb = map_fd(&fd, 0, LEN);
        assert_eq!(read(mb, 0, 13), b"before export");
        assert_eq!(read(mb, 4096, 12), b"after export");
        assert_eq!(read(mb, LEN - 8, 8), b"the end!");
        // And back: the importer writes, the exporter reads.
        write(mb, 8192, b"from b");
        assert_eq!(read(ma, 8192, 6), b"from b");
        // A second export is the same dma-buf.
        let fd2 = export(&a, h);
        let m2 = map_fd(&fd2, 0, LEN);
        assert_eq!(read(m2, 8192, 6), b"from b");
        unmap_fd(m2, LEN);
        sim.close(fd2);
        // The exporter frees and exits; the pages live on in the importer.
        unmap_fd(ma, LEN);
        a.free(h).unwrap();
        a.close();
        sim.close(fd);
        assert_eq!(read(mb, 4096, 12), b"after export");
        unmap_fd(mb, LEN);
        assert_eq!(b.unmap(hb, &[g], 0).0, Ok(0));
        b.free(hb).unwrap();
        b.close();
        let s = sim.live_objects();
        assert!(s.is_empty(), "{preset}: {s:?}");
    }
}

/// Two machines in one OS process stand for two preloaded OS processes:
/// a dma-buf descriptor from one is recognised by the other (its memfd
/// name says gpu_id and flags) and shows the same bytes; VRAM stays
/// accounted on the exporting machine.
#[test]
fn dmabuf_crosses_machines() {
    let m1 = Sim::preset("mi210").unwrap();
    let m2 = Sim::preset("mi210").unwrap();
    let a = Proc::open(&m1);
    let b = Proc::open(&m2);
    let g = a.gpu();
    assert_eq!(g, b.gpu());
    let (h, off) = a.alloc(g, 0x2000_0000, LEN as u64, VRAM).unwrap();
    let ma = map_fd(&a.renders[0], off, LEN);
    write(ma, 123, b"machine one");
    let fd = export(&a, h);
    // Not a file of m2 yet: GET_DMABUF_INFO registers it.
    let mut info = kfd_ioctl_get_dmabuf_info_args {
        dmabuf_fd: fd.as_raw_fd() as u32,
        ..Default::default()
    };
    io(&m2, &b.kfd, AMDKFD_IOC_GET_DMABUF_INFO, &mut info).unwrap();
    assert_eq!((info.size, info.gpu_id), (LEN as u64, g));
    assert_eq!(
        info.flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM,
        KFD_IOC_ALLOC_MEM_FLAGS_VRAM
    );
    let hb = import(&b, &fd, 0x3000_0000).unwrap();
    assert_eq!(b.map(hb, &[g], 0), (Ok(0), 1));
    let mb = map_fd(&fd, 0, LEN);
    assert_eq!(read(mb, 123, 11), b"machine one");
    write(mb, 500, b"machine two");
    assert_eq!(read(ma, 500, 11), b"machine two");
    assert!(m1.live_objects().vram_used[0] >= LEN as u64);
    assert_eq!(m2.live_objects().vram_used[0], 0);
    // Memfds that are not dma-bufs of a simulator are refused.
    let plain = b.renders[0].as_raw_fd();
    let mut bad = kfd_ioctl_import_dmabuf_args {
        va_addr: 0x4000_0000,
        handle: 0,
        gpu_id: g,
        dmabuf_fd: plain as u32,
    };
    assert_eq!(
        io(&m2, &b.kfd, AMDKFD_IOC_IMPORT_DMABUF, &mut bad),
        Err(Errno::EINVAL)
    );
    unmap_fd(mb, LEN);
    unmap_fd(ma, LEN);
    assert_eq!(b.unmap(hb, &[g], 0).0, Ok(0));
    b.free(hb).unwrap();
    a.free(h).unwrap();
    m2.close(fd);
    a.close();
    b.close();
    assert!(m1.live_objects().is_empty(), "{:?}", m1.live_objects());
    assert!(m2.live_objects().is_empty(), "{:?}", m2.live_objects());
}

fn prime_fd_to_handle(sim: &Sim, render: &OwnedFd, fd: i32) -> Result<u32, Errno> {
    let mut ph = drm_prime_handle {
        handle: 0,
        flags: 0,
        fd,
    };
    io(sim, render, DRM_IOCTL_PRIME_FD_TO_HANDLE, &mut ph)?;
    Ok(ph.handle)
}

/// PRIME on render nodes through the in-process driver: a GEM handle holds
/// the buffer (even after the exporter freed it and the dma-buf was
/// closed), HANDLE_TO_FD gives a dma-buf with the same bytes.
#[test]
fn prime_import_export_on_render_nodes() {
    let sim = Sim::preset("mi210").unwrap();
    let other = sim.new_os_process();
    let a = Proc::open(&sim);
    let b = Proc::open(&other);
    let g = a.gpu();
    let (h, off) = a.alloc(g, 0x2000_0000, LEN as u64, GTT).unwrap();
    let ma = map_fd(&a.renders[0], off, LEN);
    write(ma, 77, b"prime");
    let fd = export(&a, h);
    let gem = prime_fd_to_handle(&other, &b.renders[0], fd.as_raw_fd()).unwrap();
    // The same object again: the same handle.
    assert_eq!(
        prime_fd_to_handle(&other, &b.renders[0], fd.as_raw_fd()),
        Ok(gem)
    );
    // Not a dma-buf: EBADF.
    assert_eq!(
        prime_fd_to_handle(&other, &b.renders[0], b.kfd.as_raw_fd()),
        Err(Errno::EBADF)
    );
    unmap_fd(ma, LEN);
    a.free(h).unwrap();
    a.close();
    sim.close(fd);
    // Only the GEM handle holds the buffer now.
    let s = sim.live_objects();
    assert_eq!(s.bos(), 0);
    let mut ph = drm_prime_handle {
        handle: gem,
        flags: DRM_CLOEXEC,
        fd: -1,
    };
    io(&other, &b.renders[0], DRM_IOCTL_PRIME_HANDLE_TO_FD, &mut ph).unwrap();
    // SAFETY: the ioctl handed us this descriptor.
    let fd2 = unsafe { OwnedFd::from_raw_fd(ph.fd) };
    let m = map_fd(&fd2, 0, LEN);
    assert_eq!(read(m, 77, 5), b"prime");
    unmap_fd(m, LEN);
    let mut close = drm_gem_close {
        handle: gem,
        pad: 0,
    };
    io(&other, &b.renders[0], DRM_IOCTL_GEM_CLOSE, &mut close).unwrap();
    assert_eq!(
        io(&other, &b.renders[0], DRM_IOCTL_PRIME_HANDLE_TO_FD, &mut ph),
        Err(Errno::ENOENT)
    );
    other.close(fd2);
    b.close();
    let s = sim.live_objects();
    assert!(s.is_empty(), "{s:?}");
}

/// `Summary::kernel_objects_empty` ignores open descriptors;
/// `Summary::is_empty` does not.
#[test]
fn summary_kernel_objects_vs_files() {
    let sim = Sim::preset("mi210").unwrap();
    let a = Proc::open(&sim);
    let g = a.gpu();
    let (h, _) = a.alloc(g, 0x2000_0000, 4096, GTT).unwrap();
    let s = sim.live_objects();
    assert!(!s.kernel_objects_empty() && !s.is_empty());
    a.free(h).unwrap();
    let s = sim.live_objects();
    assert!(s.kernel_objects_empty() && !s.is_empty(), "{s:?}");
    // Close kfd but keep the render node open, like a C program at exit.
    let Proc { kfd, renders, .. } = a;
    sim.close(kfd);
    let s = sim.live_objects();
    assert!(s.processes.is_empty());
    assert_eq!(s.files, renders.len());
    assert!(s.kernel_objects_empty() && !s.is_empty(), "{s:?}");
    for r in renders {
        sim.close(r);
    }
    assert!(sim.live_objects().is_empty());
}
