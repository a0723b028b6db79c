//! The amdkfd uapi (`include/uapi/linux/kfd_ioctl.h`).
#![allow(non_camel_case_types)]

use crate::ioctl::PlainArgs;

/// `KFD_IOCTL_MAJOR_VERSION`.
pub const KFD_IOCTL_MAJOR_VERSION: u32 = 1;

/// `struct kfd_ioctl_get_version_args`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct kfd_ioctl_get_version_args {
    /// Major version of the ioctl interface (out).
    pub major_version: u32,
    /// Minor version of the ioctl interface (out).
    pub minor_version: u32,
}
// SAFETY: two plain u32 fields.
unsafe impl PlainArgs for kfd_ioctl_get_version_args {}

crate::ioctls! {
    table KFD_IOCTLS;
    /// Query the ioctl interface version. Any KFD version.
    AMDKFD_IOC_GET_VERSION: ior(b'K', 0x01, kfd_ioctl_get_version_args);
}
