//! Owned device files: a descriptor together with the driver it came from.

use std::fmt;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, OnceLock, Weak};

use crate::ioctl::{Ioctl, PlainArgs};
use crate::{Driver, Errno};

/// What kind of device a [`DeviceFile`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceKind {
    /// `/dev/kfd`.
    Kfd,
    /// `/dev/dri/renderD<minor>`.
    Render {
        /// The render-node minor (128..=255).
        minor: u32,
    },
}

/// An open `/dev/kfd` or render-node descriptor plus the [`Driver`] that
/// opened it. Ioctls go through that driver; dropping the file hands the
/// descriptor back to the driver's [`Driver::close`], so a simulated kernel
/// sees the close exactly like the real one.
///
/// Sub-contexts hold an `Arc<DeviceFile>`: two contexts in one process
/// never share a file by accident, because each opens its own.
pub struct DeviceFile {
    driver: Arc<dyn Driver>,
    fd: Option<OwnedFd>,
    kind: DeviceKind,
    /// Dropped only after [`Drop::drop`] has handed the descriptor back:
    /// what a [`CloseWatch`] watches.
    open: Arc<()>,
}

/// Tells whether a [`DeviceFile`] is closed, without keeping it open
/// ([`DeviceFile::close_watch`]).
///
/// A file lives as long as any of its holders (the sub-contexts share
/// one); a caller that must not open the device again before the old
/// file's close has reached the driver (a second `/dev/kfd` of the same
/// process shares the first one's kernel process until then) waits on
/// this.
#[derive(Debug, Clone)]
pub struct CloseWatch(Weak<()>);

impl CloseWatch {
    /// Whether the file is closed: its descriptor went back to the driver
    /// and the driver's close has returned.
    pub fn is_closed(&self) -> bool {
        self.0.strong_count() == 0
    }
}

impl DeviceFile {
    /// Opens `/dev/kfd` through `driver`.
    pub fn open_kfd(driver: Arc<dyn Driver>) -> Result<DeviceFile, Errno> {
        let fd = driver.open_kfd()?;
        Ok(DeviceFile {
            driver,
            fd: Some(fd),
            kind: DeviceKind::Kfd,
            open: Arc::new(()),
        })
    }

    /// Opens the render node with `minor` through `driver`.
    pub fn open_render_node(driver: Arc<dyn Driver>, minor: u32) -> Result<DeviceFile, Errno> {
        let fd = driver.open_render_node(minor)?;
        Ok(DeviceFile {
            driver,
            fd: Some(fd),
            kind: DeviceKind::Render { minor },
            open: Arc::new(()),
        })
    }

    /// The driver this file belongs to.
    pub fn driver(&self) -> &Arc<dyn Driver> {
        &self.driver
    }

    /// What device this is.
    pub fn kind(&self) -> DeviceKind {
        self.kind
    }

    /// A watch that tells when this file is closed (the last holder
    /// dropped it and the driver's close returned).
    pub fn close_watch(&self) -> CloseWatch {
        CloseWatch(Arc::downgrade(&self.open))
    }

    /// Issues a typed ioctl on this file (retrying on EINTR/EAGAIN).
    ///
    /// # Safety
    ///
    /// As [`crate::ioctl::ioctl`]: every user pointer embedded in `arg`
    /// must be valid for what the kernel does with it for this request.
    pub unsafe fn ioctl<T>(&self, request: Ioctl<T>, arg: &mut T) -> Result<i32, Errno> {
        // SAFETY: forwarded contract.
        unsafe { crate::ioctl::ioctl(&*self.driver, self.as_fd(), request, arg) }
    }

    /// Issues a typed ioctl whose argument has no embedded pointers.
    pub fn ioctl_plain<T: PlainArgs>(&self, request: Ioctl<T>, arg: &mut T) -> Result<i32, Errno> {
        crate::ioctl::ioctl_plain(&*self.driver, self.as_fd(), request, arg)
    }

    /// The KFD ioctl interface version `(major, minor)` of this file
    /// (`AMDKFD_IOC_GET_VERSION`). Not cached; see [`KfdVersionCell`].
    pub fn kfd_version(&self) -> Result<(u32, u32), Errno> {
        let mut v = crate::kfd::kfd_ioctl_get_version_args::default();
        self.ioctl_plain(crate::kfd::AMDKFD_IOC_GET_VERSION, &mut v)?;
        Ok((v.major_version, v.minor_version))
    }
}

/// The KFD ioctl interface version of a file, queried once: it cannot
/// change while the file is open. Sub-contexts keep one each (it can be
/// created already known, [`KfdVersionCell::known`]).
#[derive(Debug, Default)]
pub struct KfdVersionCell(OnceLock<(u32, u32)>);

impl KfdVersionCell {
    /// A cell holding `major.minor` already.
    pub fn known(major: u32, minor: u32) -> KfdVersionCell {
        KfdVersionCell(OnceLock::from((major, minor)))
    }

    /// The version `(major, minor)`, from the cell or else queried from
    /// `file` ([`DeviceFile::kfd_version`]) and kept. A failed query is
    /// not kept.
    pub fn get(&self, file: &DeviceFile) -> Result<(u32, u32), Errno> {
        if let Some(v) = self.0.get() {
            return Ok(*v);
        }
        let v = file.kfd_version()?;
        Ok(*self.0.get_or_init(|| v))
    }
}

impl AsFd for DeviceFile {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd
            .as_ref()
            .expect("descriptor is present until drop")
            .as_fd()
    }
}

impl fmt::Debug for DeviceFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceFile")
            .field("kind", &self.kind)
            .field("fd", &self.fd)
            .finish()
    }
}

impl Drop for DeviceFile {
    fn drop(&mut self) {
        if let Some(fd) = self.fd.take() {
            self.driver.close(fd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NixDriver;

    #[test]
    fn open_missing_device_reports_errno() {
        let d: Arc<dyn Driver> = Arc::new(NixDriver::with_paths("/", "/nonexistent/kfd"));
        assert_eq!(DeviceFile::open_kfd(d).unwrap_err(), Errno::ENOENT);
    }

    #[test]
    fn ioctl_goes_through_driver() {
        // /dev/null stands in for a device: the ioctl reaches the kernel
        // and fails with ENOTTY, proving the descriptor and driver are used.
        let d: Arc<dyn Driver> = Arc::new(NixDriver::with_paths("/", "/dev/null"));
        let f = DeviceFile::open_kfd(d).unwrap();
        assert_eq!(f.kind(), DeviceKind::Kfd);
        let mut v = crate::kfd::kfd_ioctl_get_version_args::default();
        assert_eq!(
            f.ioctl_plain(crate::kfd::AMDKFD_IOC_GET_VERSION, &mut v)
                .unwrap_err(),
            Errno::ENOTTY
        );
        assert_eq!(f.kfd_version().unwrap_err(), Errno::ENOTTY);
        let cell = KfdVersionCell::default();
        assert_eq!(cell.get(&f), Err(Errno::ENOTTY), "a failure is not kept");
        assert_eq!(KfdVersionCell::known(1, 17).get(&f), Ok((1, 17)));
    }

    /// The watch says closed only once the last holder dropped the file,
    /// and it does not keep the file open itself.
    #[test]
    fn a_close_watch_sees_the_last_holder_go() {
        let d: Arc<dyn Driver> = Arc::new(NixDriver::with_paths("/", "/dev/null"));
        let f = Arc::new(DeviceFile::open_kfd(d).unwrap());
        let watch = f.close_watch();
        let other = Arc::clone(&f);
        drop(f);
        assert!(!watch.is_closed(), "another holder keeps it open");
        drop(other);
        assert!(watch.is_closed());
        assert!(watch.clone().is_closed());
    }
}
