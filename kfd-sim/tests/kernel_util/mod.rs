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
