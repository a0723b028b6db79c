//! Layouts and request numbers of kfd-sys checked against the system's
//! `/usr/include/linux/kfd_ioctl.h` (linux-libc-dev).

mod common;

use common::Probe;
use kfd_sys::kfd::*;

#[test]
fn kfd_ioctl_layouts_match_system_header() {
    let mut p = Probe::new(&["linux/kfd_ioctl.h"]);
    layout!(p, kfd_ioctl_get_version_args, "struct kfd_ioctl_get_version_args",
        [major_version, minor_version]);
    p.constant("AMDKFD_IOC_GET_VERSION", AMDKFD_IOC_GET_VERSION.request());
    p.constant("KFD_IOCTL_MAJOR_VERSION", KFD_IOCTL_MAJOR_VERSION);
    p.run();
}
