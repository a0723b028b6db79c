//! The only place the preload layer talks to the simulator ([`Sim`]).

use std::collections::HashMap;
use std::ffi::{c_int, c_ulong, c_void};
use std::io;
use std::os::fd::IntoRawFd;
use std::path::Path;
use std::sync::{Arc, Mutex};

use kfd_sys::Errno;

use super::Device;
use crate::drm::{DrmFile, NoGem};
use crate::kernel::{FaultPlan, FileId, FileKind};
use crate::topology::Topology;
use crate::Sim;

/// The simulator as the interposers see it.
#[derive(Debug)]
pub(crate) struct Backend {
    sim: Sim,
    /// The process that created the simulator (a forked child must not
    /// remove the render root at its exit).
    creator: u32,
    /// DRM state per open render file (by file identity, so dups share it).
    drm: Mutex<HashMap<FileId, Arc<DrmFile>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Backend {
    pub fn new(topology: Topology) -> io::Result<Backend> {
        Ok(Backend {
            sim: Sim::new(topology)?,
            creator: std::process::id(),
            drm: Mutex::new(HashMap::new()),
        })
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
        if let Some(FileKind::Render { minor }) = self.sim.file_kind(fd) {
            // Render nodes: the DRM ioctls libdrm issues (crate::drm).
            let id = crate::kernel::memfd::file_id(fd).ok()?;
            let file = {
                let mut map = lock(&self.drm);
                match map.get(&id) {
                    Some(f) => f.clone(),
                    None => {
                        let f = Arc::new(DrmFile::new(self.sim.topology(), minor)?);
                        map.insert(id, f.clone());
                        f
                    }
                }
            };
            // SAFETY: forwarded contract.
            return Some(unsafe {
                file.ioctl(self.sim.topology(), &NoGem, request, arg)
            });
        }
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
        let render = matches!(self.sim.file_kind(fd), Some(FileKind::Render { .. }));
        self.sim.on_close(fd);
        if render && self.sim.file_kind(fd).is_none() {
            if let Ok(id) = crate::kernel::memfd::file_id(fd) {
                lock(&self.drm).remove(&id);
            }
        }
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
    /// files, VRAM in use per GPU.
    pub fn summary_line(&self) -> String {
        let s = self.sim.live_objects();
        let procs: Vec<String> = s
            .processes
            .iter()
            .map(|p| {
                format!(
                    "[os_pid={} secondary={} bos={} queues={} events={} svm_ranges={}]",
                    p.os_pid, p.secondary, p.bos, p.queues, p.events, p.svm_ranges
                )
            })
            .collect();
        format!(
            "processes={} files={} vram_used={:?} leak_free={} {}",
            s.processes.len(),
            s.files,
            s.vram_used,
            s.is_empty(),
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
