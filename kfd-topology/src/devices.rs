//! What a snapshot needs from the devices: whether a render node opens,
//! and the DRM identity libdrm reads for the marketing name.

use std::collections::BTreeMap;
use std::fmt;
use std::os::fd::AsFd;

use kfd_sys::drm::{drm_amdgpu_info_device, AMDGPU_IDS_FLAGS_FUSION};
use kfd_sys::{Driver, Errno};

/// The DRM device information libdrm's `amdgpu_device_initialize` reads
/// (`AMDGPU_INFO_DEV_INFO`), as far as the topology uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DrmDeviceInfo {
    /// PCI device id.
    pub device_id: u32,
    /// PCI revision (the second key of `amdgpu.ids`).
    pub pci_rev: u32,
    /// amdgpu family id, if known.
    pub family: Option<u32>,
    /// The `AMDGPU_IDS_FLAGS_FUSION` flag (an APU), if known.
    pub fusion: Option<bool>,
}

/// Access to the render nodes during a snapshot.
pub trait Devices: fmt::Debug {
    /// Opens (and closes again) render node `minor`. The C library keeps
    /// a GPU node when this succeeds, drops it on ENOENT or EPERM, and
    /// fails on any other errno.
    fn probe_render_node(&self, minor: u32) -> Result<(), Errno>;

    /// The DRM device information behind render node `minor`, or `None`
    /// when it cannot be queried (the snapshot then falls back to the PCI
    /// `revision` file in sysfs).
    fn drm_device_info(&self, minor: u32) -> Option<DrmDeviceInfo> {
        let _ = minor;
        None
    }
}

/// [`Devices`] through a kfd-sys [`Driver`].
///
/// DRM device information comes from `AMDGPU_INFO_DEV_INFO` on the render
/// node ([`kfd_sys::drm::query_device_info_on`]), as libdrm's
/// `amdgpu_device_initialize` reads it; when the node does not open or the
/// query fails (any errno, e.g. `EINVAL` from a driver without the DRM
/// path), the snapshot falls back to the PCI `revision` file in sysfs.
#[derive(Debug, Clone, Copy)]
pub struct DriverDevices<'a>(pub &'a dyn Driver);

impl Devices for DriverDevices<'_> {
    fn probe_render_node(&self, minor: u32) -> Result<(), Errno> {
        let fd = self.0.open_render_node(minor)?;
        self.0.close(fd);
        Ok(())
    }

    fn drm_device_info(&self, minor: u32) -> Option<DrmDeviceInfo> {
        let fd = self.0.open_render_node(minor).ok()?;
        let info = kfd_sys::drm::query_device_info_on(self.0, fd.as_fd());
        self.0.close(fd);
        info.ok().map(DrmDeviceInfo::from)
    }
}

impl From<drm_amdgpu_info_device> for DrmDeviceInfo {
    /// The fields libdrm takes from `AMDGPU_INFO_DEV_INFO`: `device_id`
    /// and `pci_rev` (the `amdgpu.ids` keys), `family`, and the fusion bit
    /// of `ids_flags`.
    fn from(d: drm_amdgpu_info_device) -> Self {
        DrmDeviceInfo {
            device_id: d.device_id,
            pci_rev: d.pci_rev,
            family: Some(d.family),
            fusion: Some(d.ids_flags & AMDGPU_IDS_FLAGS_FUSION != 0),
        }
    }
}

/// [`Devices`] for fixture trees: every render node opens unless listed in
/// `failures`; DRM information comes from `drm_info`.
#[derive(Debug, Clone, Default)]
pub struct FixtureDevices {
    /// Minors whose open fails, with the errno.
    pub failures: BTreeMap<u32, Errno>,
    /// DRM information per minor.
    pub drm_info: BTreeMap<u32, DrmDeviceInfo>,
}

impl FixtureDevices {
    /// All render nodes open; no DRM information.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes opening `minor` fail with `errno`.
    pub fn fail(mut self, minor: u32, errno: Errno) -> Self {
        self.failures.insert(minor, errno);
        self
    }
}

impl Devices for FixtureDevices {
    fn probe_render_node(&self, minor: u32) -> Result<(), Errno> {
        match self.failures.get(&minor) {
            Some(&e) => Err(e),
            None => Ok(()),
        }
    }

    fn drm_device_info(&self, minor: u32) -> Option<DrmDeviceInfo> {
        self.drm_info.get(&minor).copied()
    }
}
