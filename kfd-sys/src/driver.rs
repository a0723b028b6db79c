//! The `Driver` boundary: the one place where a process meets the kernel.

use std::fmt;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::Errno;

/// Path of the KFD character device.
pub const KFD_DEVICE_PATH: &str = "/dev/kfd";

/// Path of the KFD topology tree, relative to the driver's root.
pub const KFD_TOPOLOGY_PATH: &str = crate::sysfs::TOPOLOGY_DIR;

/// The first DRM render-node minor number (`/dev/dri/renderD128`).
pub const DRM_RENDER_MINOR_BASE: u32 = 128;

/// The last valid DRM render-node minor number.
pub const DRM_RENDER_MINOR_MAX: u32 = 255;

/// Path of a DRM render node.
pub fn render_node_path(minor: u32) -> PathBuf {
    PathBuf::from(format!("/dev/dri/renderD{minor}"))
}

/// How a process reaches the KFD: opening `/dev/kfd` and render nodes,
/// issuing ioctls on them, and reading sysfs/procfs below a root.
///
/// The real implementation is [`NixDriver`]; `kfd-sim` provides another.
/// Both hand out real file descriptors (the simulator backs them with
/// memfds), so `mmap` of a descriptor works natively for either and is not
/// part of this trait.
pub trait Driver: Send + Sync + fmt::Debug {
    /// Opens the KFD device read-write and close-on-exec.
    fn open_kfd(&self) -> Result<OwnedFd, Errno>;

    /// Opens the DRM render node with the given minor (128..=255)
    /// read-write and close-on-exec.
    fn open_render_node(&self, minor: u32) -> Result<OwnedFd, Errno>;

    /// Issues `ioctl(fd, request, arg)`.
    ///
    /// Returns the non-negative result of the call, or the errno it failed
    /// with. Does not retry; see [`crate::ioctl::ioctl`] for that.
    ///
    /// # Safety
    ///
    /// `arg` must point to memory valid for reads and writes of the size
    /// encoded in `request`, and every user pointer embedded in it must be
    /// valid for what the kernel does with it for this request.
    unsafe fn ioctl(
        &self,
        fd: BorrowedFd<'_>,
        request: libc::c_ulong,
        arg: *mut libc::c_void,
    ) -> Result<i32, Errno>;

    /// Releases a descriptor obtained from this driver. The kernel tears
    /// the file's state down when its last reference goes away; a driver
    /// that models the kernel needs to see the close to do the same.
    fn close(&self, fd: OwnedFd) {
        drop(fd);
    }

    /// The directory below which `sys/...` and `proc/...` are read
    /// (`/` for the real machine).
    fn root(&self) -> &Path;

    /// The KFD topology directory below [`Driver::root`].
    fn topology_path(&self) -> PathBuf {
        self.root().join(KFD_TOPOLOGY_PATH)
    }
}

/// The real kernel driver: `open(2)` and `ioctl(2)` on the host's devices.
#[derive(Debug, Clone)]
pub struct NixDriver {
    root: PathBuf,
    kfd_path: PathBuf,
}

impl Default for NixDriver {
    fn default() -> Self {
        NixDriver::new()
    }
}

impl NixDriver {
    /// The host's `/dev/kfd`, with sysfs at `/`.
    pub fn new() -> Self {
        NixDriver {
            root: PathBuf::from("/"),
            kfd_path: PathBuf::from(KFD_DEVICE_PATH),
        }
    }

    /// A driver that opens `kfd_path` instead of `/dev/kfd` and reads sysfs
    /// below `root`. Used to test error paths (a missing device) without
    /// hardware.
    pub fn with_paths(root: impl Into<PathBuf>, kfd_path: impl Into<PathBuf>) -> Self {
        NixDriver {
            root: root.into(),
            kfd_path: kfd_path.into(),
        }
    }

    fn open_rw(path: &Path) -> Result<OwnedFd, Errno> {
        use nix::fcntl::{open, OFlag};
        use nix::sys::stat::Mode;
        let fd = open(path, OFlag::O_RDWR | OFlag::O_CLOEXEC, Mode::empty())?;
        Ok(fd)
    }
}

impl Driver for NixDriver {
    fn open_kfd(&self) -> Result<OwnedFd, Errno> {
        Self::open_rw(&self.kfd_path)
    }

    fn open_render_node(&self, minor: u32) -> Result<OwnedFd, Errno> {
        if !(DRM_RENDER_MINOR_BASE..=DRM_RENDER_MINOR_MAX).contains(&minor) {
            return Err(Errno::EINVAL);
        }
        Self::open_rw(&render_node_path(minor))
    }

    unsafe fn ioctl(
        &self,
        fd: BorrowedFd<'_>,
        request: libc::c_ulong,
        arg: *mut libc::c_void,
    ) -> Result<i32, Errno> {
        // SAFETY: `fd` is a live descriptor (borrowed); the caller guarantees
        // that `arg` is valid for this request.
        let r = unsafe { libc::ioctl(fd.as_raw_fd(), request, arg) };
        if r < 0 {
            Err(Errno::last())
        } else {
            Ok(r)
        }
    }

    fn root(&self) -> &Path {
        &self.root
    }
}

/// Duplicates a descriptor (close-on-exec), as libdrm does with render fds.
pub fn dup_cloexec(fd: BorrowedFd<'_>) -> Result<OwnedFd, Errno> {
    // SAFETY: F_DUPFD_CLOEXEC on a live descriptor has no memory effects.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) };
    if r < 0 {
        return Err(Errno::last());
    }
    // SAFETY: `r` is a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(r) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_device_is_enoent() {
        let d = NixDriver::with_paths("/", "/nonexistent/kfd");
        assert_eq!(d.open_kfd().unwrap_err(), Errno::ENOENT);
        assert_eq!(d.open_render_node(12).unwrap_err(), Errno::EINVAL);
    }

    #[test]
    fn ioctl_on_non_kfd_fd_fails_cleanly() {
        let d = NixDriver::new();
        let f = std::fs::File::open("/dev/null").unwrap();
        let fd = std::os::fd::AsFd::as_fd(&f);
        let mut arg = [0u64; 1];
        // SAFETY: `arg` is valid for the 8 bytes the request encodes.
        let r = unsafe { d.ioctl(fd, 0x8008_4b01, arg.as_mut_ptr().cast()) };
        assert_eq!(r.unwrap_err(), Errno::ENOTTY);
        assert_eq!(
            d.topology_path(),
            Path::new("/sys/devices/virtual/kfd/kfd/topology")
        );
    }
}
