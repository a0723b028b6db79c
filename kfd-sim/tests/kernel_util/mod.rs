//! Helpers shared by the kernel-model tests.
#![allow(dead_code)]

use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use kfd_sim::Sim;
use kfd_sys::ioctl::{ioctl, Ioctl};
use kfd_sys::kfd::*;
use kfd_sys::{Driver, Errno};

/// One simulated process with /dev/kfd open and every GPU's VM acquired.
pub struct Proc {
    pub sim: Sim,
    pub kfd: OwnedFd,
    pub renders: Vec<OwnedFd>,
    pub gpus: Vec<u32>,
}

pub fn gpu_ids(sim: &Sim) -> Vec<u32> {
    sim.topology().gpus().map(|(_, n)| n.gpu_id).collect()
}

pub fn minors(sim: &Sim) -> Vec<u32> {
    sim.topology()
        .gpus()
        .map(|(_, n)| n.properties.get_or_zero("drm_render_minor") as u32)
        .collect()
}

/// Issues a typed ioctl on `fd`.
pub fn io<T>(sim: &Sim, fd: &impl AsFd, req: Ioctl<T>, arg: &mut T) -> Result<i32, Errno> {
    // SAFETY: tests only pass pointers to live buffers (or deliberately
    // unmapped addresses, which the simulator turns into EFAULT).
    unsafe { ioctl(sim, fd.as_fd(), req, arg) }
}

/// Issues a raw request number with a raw argument pointer.
pub fn raw(sim: &Sim, fd: &impl AsFd, req: u32, arg: *mut libc::c_void) -> Result<i32, Errno> {
    // SAFETY: see `io`.
    unsafe { sim.ioctl(fd.as_fd(), req as libc::c_ulong, arg) }
}

impl Proc {
    /// Opens kfd and the render nodes and acquires every VM.
    pub fn open(sim: &Sim) -> Proc {
        let kfd = sim.open_kfd().expect("open kfd");
        let gpus = gpu_ids(sim);
        let mut renders = Vec::new();
        for (g, m) in gpus.iter().zip(minors(sim)) {
            let r = sim.open_render_node(m).expect("open render");
            let mut a = kfd_ioctl_acquire_vm_args {
                drm_fd: r.as_raw_fd() as u32,
                gpu_id: *g,
            };
            io(sim, &kfd, AMDKFD_IOC_ACQUIRE_VM, &mut a).expect("acquire vm");
            renders.push(r);
        }
        Proc {
            sim: sim.clone(),
            kfd,
            renders,
            gpus,
        }
    }

    pub fn gpu(&self) -> u32 {
        self.gpus[0]
    }

    pub fn alloc(&self, gpu: u32, va: u64, size: u64, flags: u32) -> Result<(u64, u64), Errno> {
        let mut a = kfd_ioctl_alloc_memory_of_gpu_args {
            va_addr: va,
            size,
            handle: 0,
            mmap_offset: 0,
            gpu_id: gpu,
            flags,
        };
        io(&self.sim, &self.kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a)?;
        Ok((a.handle, a.mmap_offset))
    }

    pub fn userptr(&self, gpu: u32, addr: u64, size: u64) -> Result<u64, Errno> {
        let mut a = kfd_ioctl_alloc_memory_of_gpu_args {
            va_addr: addr,
            size,
            handle: 0,
            mmap_offset: addr,
            gpu_id: gpu,
            flags: KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
        };
        io(&self.sim, &self.kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a)?;
        Ok(a.handle)
    }

    pub fn free(&self, handle: u64) -> Result<i32, Errno> {
        let mut a = kfd_ioctl_free_memory_of_gpu_args { handle };
        io(&self.sim, &self.kfd, AMDKFD_IOC_FREE_MEMORY_OF_GPU, &mut a)
    }

    /// Maps on `gpus`; returns (result, n_success).
    pub fn map(&self, handle: u64, gpus: &[u32], n_success: u32) -> (Result<i32, Errno>, u32) {
        let mut a = kfd_ioctl_map_memory_to_gpu_args {
            handle,
            device_ids_array_ptr: gpus.as_ptr() as u64,
            n_devices: gpus.len() as u32,
            n_success,
        };
        let r = io(&self.sim, &self.kfd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mut a);
        (r, a.n_success)
    }

    pub fn unmap(&self, handle: u64, gpus: &[u32], n_success: u32) -> (Result<i32, Errno>, u32) {
        let mut a = kfd_ioctl_unmap_memory_from_gpu_args {
            handle,
            device_ids_array_ptr: gpus.as_ptr() as u64,
            n_devices: gpus.len() as u32,
            n_success,
        };
        let r = io(
            &self.sim,
            &self.kfd,
            AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU,
            &mut a,
        );
        (r, a.n_success)
    }

    pub fn create_event(
        &self,
        ty: u32,
        auto_reset: bool,
        page: u64,
    ) -> Result<kfd_ioctl_create_event_args, Errno> {
        let mut a = kfd_ioctl_create_event_args {
            event_page_offset: page,
            event_type: ty,
            auto_reset: auto_reset as u32,
            ..Default::default()
        };
        io(&self.sim, &self.kfd, AMDKFD_IOC_CREATE_EVENT, &mut a)?;
        Ok(a)
    }

    pub fn set_event(&self, id: u32) -> Result<i32, Errno> {
        let mut a = kfd_ioctl_set_event_args {
            event_id: id,
            pad: 0,
        };
        io(&self.sim, &self.kfd, AMDKFD_IOC_SET_EVENT, &mut a)
    }

    pub fn reset_event(&self, id: u32) -> Result<i32, Errno> {
        let mut a = kfd_ioctl_reset_event_args {
            event_id: id,
            pad: 0,
        };
        io(&self.sim, &self.kfd, AMDKFD_IOC_RESET_EVENT, &mut a)
    }

    pub fn destroy_event(&self, id: u32) -> Result<i32, Errno> {
        let mut a = kfd_ioctl_destroy_event_args {
            event_id: id,
            pad: 0,
        };
        io(&self.sim, &self.kfd, AMDKFD_IOC_DESTROY_EVENT, &mut a)
    }

    /// Waits; returns (result, wait_result).
    pub fn wait(&self, ids: &[u32], all: bool, timeout: u32) -> (Result<i32, Errno>, u32) {
        let mut data: Vec<kfd_event_data> = ids
            .iter()
            .map(|id| kfd_event_data {
                event_id: *id,
                ..Default::default()
            })
            .collect();
        self.wait_data(&mut data, all, timeout)
    }

    pub fn wait_data(
        &self,
        data: &mut [kfd_event_data],
        all: bool,
        timeout: u32,
    ) -> (Result<i32, Errno>, u32) {
        let mut a = kfd_ioctl_wait_events_args {
            events_ptr: data.as_mut_ptr() as u64,
            num_events: data.len() as u32,
            wait_for_all: all as u32,
            timeout,
            wait_result: 99,
        };
        let r = io(&self.sim, &self.kfd, AMDKFD_IOC_WAIT_EVENTS, &mut a);
        (r, a.wait_result)
    }

    /// Closes every descriptor through the driver.
    pub fn close(self) {
        for r in self.renders {
            self.sim.close(r);
        }
        self.sim.close(self.kfd);
    }
}

/// mmap of a simulated descriptor.
pub fn map_fd(fd: &impl AsRawFd, offset: u64, len: usize) -> *mut u8 {
    // SAFETY: a fresh shared mapping at a kernel-chosen address.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            offset as libc::off_t,
        )
    };
    assert_ne!(
        p,
        libc::MAP_FAILED,
        "mmap failed: {}",
        std::io::Error::last_os_error()
    );
    p.cast()
}

pub fn unmap_fd(p: *mut u8, len: usize) {
    // SAFETY: unmapping a mapping made by `map_fd`.
    unsafe { libc::munmap(p.cast(), len) };
}

/// `DBG_TRAP` arguments enabling the debugger on `pid` with
/// `exception_mask`, the runtime info written to `rinfo` and events sent
/// to the pipe end `dbg_fd`.
#[allow(dead_code)] // not every test binary that includes this module debugs
pub fn dbg_trap_enable(
    pid: u32,
    exception_mask: u64,
    rinfo: &mut kfd_runtime_info,
    dbg_fd: &impl AsRawFd,
) -> kfd_ioctl_dbg_trap_args {
    let mut d = kfd_ioctl_dbg_trap_args {
        pid,
        op: KFD_IOC_DBG_TRAP_ENABLE,
        ..Default::default()
    };
    d.u.enable = kfd_ioctl_dbg_trap_enable_args {
        exception_mask,
        rinfo_ptr: rinfo as *mut _ as u64,
        rinfo_size: std::mem::size_of::<kfd_runtime_info>() as u32,
        dbg_fd: dbg_fd.as_raw_fd() as u32,
    };
    d
}

/// A close-on-exec pipe (read end, write end).
pub fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into `fds`.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: fresh descriptors we own.
    unsafe {
        (
            std::os::fd::FromRawFd::from_raw_fd(fds[0]),
            std::os::fd::FromRawFd::from_raw_fd(fds[1]),
        )
    }
}

/// Anonymous read-write memory (for userptr and SVM).
pub fn anon(len: usize) -> *mut u8 {
    // SAFETY: a fresh private anonymous mapping.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    p.cast()
}

pub const VRAM: u32 = KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
pub const GTT: u32 = KFD_IOC_ALLOC_MEM_FLAGS_GTT | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;

/// A GTT (or VRAM) buffer object mapped on one GPU and mapped for the CPU
/// at the same address (GPU VA = CPU VA, as the thunk arranges it).
pub struct GpuBuf {
    pub va: u64,
    pub size: u64,
    pub handle: u64,
    gpu: u32,
}

impl GpuBuf {
    /// Allocates `size` bytes (page multiple) with `flags` on `gpu`.
    pub fn new(p: &Proc, gpu: u32, size: u64, flags: u32) -> GpuBuf {
        // Reserve an address range, then put the BO's pages there.
        // SAFETY: a fresh private reservation at a kernel-chosen address.
        let va = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size as usize,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(va, libc::MAP_FAILED);
        let va = va as u64;
        let (handle, offset) = p.alloc(gpu, va, size, flags).expect("alloc BO");
        let dev = p.gpus.iter().position(|g| *g == gpu).unwrap();
        // SAFETY: replaces our own reservation with a shared mapping of the
        // BO's pages in the render memfd.
        let r = unsafe {
            libc::mmap(
                va as *mut libc::c_void,
                size as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                p.renders[dev].as_raw_fd(),
                offset as libc::off_t,
            )
        };
        assert_eq!(r as u64, va, "mmap BO");
        assert_eq!(p.map(handle, &[gpu], 0).0, Ok(0));
        GpuBuf {
            va,
            size,
            handle,
            gpu,
        }
    }

    /// The byte at `off` as a pointer.
    pub fn ptr(&self, off: u64) -> *mut u8 {
        assert!(off < self.size);
        (self.va + off) as *mut u8
    }

    /// Reads a `u32` at `off` (volatile: the GPU model writes it).
    pub fn u32(&self, off: u64) -> u32 {
        // SAFETY: inside the mapping, 4-byte aligned by the callers.
        unsafe { std::ptr::read_volatile(self.ptr(off).cast::<u32>()) }
    }

    /// Reads a `u64` at `off`.
    pub fn u64(&self, off: u64) -> u64 {
        // SAFETY: inside the mapping, 8-byte aligned by the callers.
        unsafe { std::ptr::read_volatile(self.ptr(off).cast::<u64>()) }
    }

    /// Writes a `u32` at `off`.
    pub fn set_u32(&self, off: u64, v: u32) {
        // SAFETY: as for `u32`.
        unsafe { std::ptr::write_volatile(self.ptr(off).cast::<u32>(), v) }
    }

    /// Writes a `u64` at `off`.
    pub fn set_u64(&self, off: u64, v: u64) {
        // SAFETY: as for `u64`.
        unsafe { std::ptr::write_volatile(self.ptr(off).cast::<u64>(), v) }
    }

    /// Writes `data` at `off`.
    pub fn write(&self, off: u64, data: &[u8]) {
        assert!(off + data.len() as u64 <= self.size);
        // SAFETY: inside the mapping; nothing else refers to these bytes.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr(off), data.len()) }
    }

    /// Reads `len` bytes at `off`.
    pub fn read(&self, off: u64, len: usize) -> Vec<u8> {
        assert!(off + len as u64 <= self.size);
        let mut v = vec![0u8; len];
        // SAFETY: as for `write`.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr(off), v.as_mut_ptr(), len) };
        v
    }

    /// Drops the CPU mapping only (the BO goes with its process).
    pub fn forget(self) {
        // SAFETY: our own mapping of the BO; no references into it remain.
        unsafe { libc::munmap(self.va as *mut libc::c_void, self.size as usize) };
    }

    /// Unmaps and frees the BO.
    pub fn free(self, p: &Proc) {
        assert_eq!(p.unmap(self.handle, &[self.gpu], 0).0, Ok(0));
        // SAFETY: our own mapping of the BO; no references into it remain.
        unsafe { libc::munmap(self.va as *mut libc::c_void, self.size as usize) };
        p.free(self.handle).unwrap();
    }
}

/// Polls `cond` every millisecond for up to `secs` seconds.
pub fn wait_until(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    cond()
}
