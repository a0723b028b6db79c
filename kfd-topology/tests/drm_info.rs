//! The DRM identity of GPU nodes: `AMDGPU_INFO_DEV_INFO` on the render node
//! through the driver, and the sysfs `revision` fallback when the query
//! fails.

mod common;

use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::Path;

use kfd_sim::Sim;
use kfd_sys::drm::DRM_IOCTL_AMDGPU_INFO;
use kfd_sys::{Driver, Errno};
use kfd_topology::{Devices, DriverDevices, Rules, SnapshotOptions, Topology};

/// The simulator with `AMDGPU_INFO` answering `EINVAL`, as a driver without
/// the render-node DRM path does.
#[derive(Debug)]
struct NoDrmInfo(Sim);

impl Driver for NoDrmInfo {
    fn open_kfd(&self) -> Result<OwnedFd, Errno> {
        self.0.open_kfd()
    }

    fn open_render_node(&self, minor: u32) -> Result<OwnedFd, Errno> {
        self.0.open_render_node(minor)
    }

    unsafe fn ioctl(
        &self,
        fd: BorrowedFd<'_>,
        request: libc::c_ulong,
        arg: *mut libc::c_void,
    ) -> Result<i32, Errno> {
        if request == libc::c_ulong::from(DRM_IOCTL_AMDGPU_INFO.request()) {
            return Err(Errno::EINVAL);
        }
        // SAFETY: forwarded contract of Driver::ioctl.
        unsafe { self.0.ioctl(fd, request, arg) }
    }

    fn close(&self, fd: OwnedFd) {
        self.0.close(fd)
    }

    fn root(&self) -> &Path {
        self.0.root()
    }
}

fn options(rules: Rules) -> SnapshotOptions {
    SnapshotOptions {
        rules,
        ..SnapshotOptions::default()
    }
}

#[test]
fn dev_info_comes_from_the_render_node() {
    for &name in kfd_sim::presets::NAMES {
        let sim = Sim::preset(name).unwrap();
        let topo = Topology::snapshot_with(&sim, &options(common::rocm52())).unwrap();
        for gpu in topo.gpu_nodes() {
            let p = &gpu.properties;
            let info = DriverDevices(&sim)
                .drm_device_info(p.drm_render_minor)
                .unwrap_or_else(|| panic!("{name}: node {} has DEV_INFO", gpu.id));
            assert_eq!(info.device_id, u32::from(p.device_id), "{name}");
            assert!(info.family.is_some_and(|f| f != 0), "{name}");
            // Only the APU preset has the fusion bit.
            assert_eq!(info.fusion, Some(name == "apu"), "{name}");
        }
    }
}

#[test]
fn a_failing_dev_info_query_falls_back_to_sysfs() {
    for &name in kfd_sim::presets::NAMES {
        let no_drm = NoDrmInfo(Sim::preset(name).unwrap());
        let minors: Vec<u32> = no_drm
            .0
            .topology()
            .nodes
            .iter()
            .filter(|n| n.gpu_id != 0)
            .map(|n| n.properties.get_or_zero("drm_render_minor") as u32)
            .collect();
        for &m in &minors {
            assert_eq!(DriverDevices(&no_drm).drm_device_info(m), None, "{name}");
        }
        // The marketing name is the same either way: the PCI revision in
        // sysfs is the one DEV_INFO reports.
        for rules in [common::rocm52(), Rules::default()] {
            let via_sysfs = Topology::snapshot_with(&no_drm, &options(rules)).unwrap();
            let via_drm = Topology::snapshot_with(&no_drm.0, &options(rules)).unwrap();
            assert_eq!(via_sysfs.num_nodes(), via_drm.num_nodes(), "{name}");
            for (a, b) in via_sysfs.gpu_nodes().zip(via_drm.gpu_nodes()) {
                assert_eq!(a.properties, b.properties, "{name}");
                assert_eq!(
                    a.derived.marketing_name, b.derived.marketing_name,
                    "{name}: node {}",
                    a.id
                );
                assert!(
                    !a.derived.marketing_name.is_empty(),
                    "{name}: node {}",
                    a.id
                );
            }
        }
    }
}
