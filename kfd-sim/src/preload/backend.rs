//! The only place the preload layer talks to the simulator ([`Sim`]).

use std::ffi::{c_int, c_ulong, c_void};
use std::io;
use std::os::fd::IntoRawFd;
use std::path::Path;

use kfd_sys::Errno;

use super::Device;
use crate::kernel::{FaultPlan, FileKind};
use crate::topology::Topology;
use crate::Sim;

/// The simulator as the interposers see it.
#[derive(Debug)]
pub(crate) struct Backend {
    sim: Sim,
    /// The process that created the simulator (a forked child must not
    /// remove the render root at its exit).
    creator: u32,
}

impl Backend {
    pub fn new(topology: Topology) -> io::Result<Backend> {
        Ok(Backend {
            sim: Sim::new(topology)?,
            creator: std::process::id(),
        })
    }

    /// The kernel model (tests hold its locks across a fork).
    #[cfg(test)]
    pub fn machine(&self) -> &crate::kernel::Machine {
        self.sim.machine()
    }

    pub fn root(&self) -> &Path {
        self.sim.root()
    }

    pub fn open_kfd(&self) -> Result<c_int, Errno> {
        self.sim.open_kfd_raw().map(IntoRawFd::into_raw_fd)
    }

    pub fn open_render(&self, minor: u32) -> Result<c_int, Errno> {
        self.sim.open_render_raw(minor).map(IntoRawFd::into_raw_fd)
    }

    /// # Safety
    ///
    /// As for `ioctl(2)`.
    pub unsafe fn ioctl(
        &self,
        fd: c_int,
        request: c_ulong,
        arg: *mut c_void,
    ) -> Option<Result<i32, Errno>> {
        // One path for every simulated file, the same the in-process
        // Driver takes: kfd ioctls to the kernel model, render-node ioctls
        // to the file's `drm::DrmFile` with the model's GEM objects.
        // SAFETY: forwarded contract.
        unsafe { self.sim.ioctl_fd(fd, request, arg) }
    }

    pub fn device_of(&self, fd: c_int) -> Option<Device> {
        match self.sim.file_kind(fd)? {
            FileKind::Kfd => Some(Device::Kfd),
            FileKind::Render { minor } => Some(Device::Render(minor)),
            _ => None,
        }
    }

    pub fn on_close(&self, fd: c_int) {
        self.sim.on_close(fd);
    }

    /// The explicit doorbell ring of a queue.
    pub fn ring_doorbell(&self, fd: c_int, queue_id: u32) -> Result<(), Errno> {
        self.sim.ring_doorbell(fd, queue_id)
    }

    /// The real file and offset of an mmap at a GEM offset of a render
    /// node, see [`Sim::gem_mmap_target`].
    pub fn gem_mmap_target(
        &self,
        fd: c_int,
        offset: u64,
        len: u64,
    ) -> Option<Result<crate::GemMmapTarget, Errno>> {
        self.sim.gem_mmap_target(fd, offset, len)
    }

    /// The MMU notifier: `[addr, addr + len)` was unmapped.
    pub fn cpu_unmapped(&self, addr: u64, len: u64) {
        self.sim.cpu_unmapped(addr, len);
    }

    pub fn set_trace(&self, w: Box<dyn io::Write + Send>) {
        self.sim.set_trace(w);
    }

    pub fn set_faults(&self, plan: &str) -> Result<(), String> {
        let plan = FaultPlan::parse(plan).map_err(|e| e.to_string())?;
        self.sim.inject_faults(plan);
        Ok(())
    }

    /// One line: live kernel processes and their objects, open simulated
    /// files, VRAM in use per GPU; `leak_free` is [`Summary::is_empty`]
    /// (nothing left, files included), `kernel_objects_free` is
    /// [`Summary::kernel_objects_empty`] (no BO, queue, event, SVM range or
    /// VRAM, whatever descriptors are still open).
    ///
    /// [`Summary::is_empty`]: crate::kernel::Summary::is_empty
    /// [`Summary::kernel_objects_empty`]: crate::kernel::Summary::kernel_objects_empty
    pub fn summary_line(&self) -> String {
        let s = self.sim.live_objects();
        let procs: Vec<String> = s
            .processes
            .iter()
            .map(|p| {
                format!(
                    "[os_pid={} secondary={} bos={} queues={} events={} svm_ranges={} busy_queues={} failed_queues={}]",
                    p.os_pid,
                    p.secondary,
                    p.bos,
                    p.queues,
                    p.events,
                    p.svm_ranges,
                    p.busy_queues,
                    p.failed_queues
                )
            })
            .collect();
        format!(
            "processes={} files={} vram_used={:?} leak_free={} kernel_objects_free={} {}",
            s.processes.len(),
            s.files,
            s.vram_used,
            s.is_empty(),
            s.kernel_objects_empty(),
            procs.join(" ")
        )
    }

    /// Process exit: the `OnceLock` never drops the simulator, so remove the
    /// render root here (only in the process that made it).
    pub fn at_exit(&self) {
        if std::process::id() == self.creator {
            let _ = std::fs::remove_dir_all(self.root());
        }
    }
}
