//! Raw ABI of the AMD KFD (amdkfd) driver.
//!
//! This crate holds types and numbers only, no logic:
//!
//! - [`kfd`]: the `kfd_ioctl.h` uapi — argument structs, typed request
//!   constants ([`ioctl::Ioctl`]), flags, enums and mmap offset encodings;
//! - [`drm`]: the amdgpu DRM uapi subset used on render nodes, and
//!   [`drm::query_device_info`] (`AMDGPU_INFO_DEV_INFO`);
//! - [`sysfs`]: property names of the KFD topology tree;
//! - safe forms of the requests whose arguments carry user pointers:
//!   [`dbg_trap`] (`AMDKFD_IOC_DBG_TRAP` and the older debugger requests),
//!   [`spm`] (`AMDKFD_IOC_RLC_SPM`) and [`pc_sample`]
//!   (`AMDKFD_IOC_PC_SAMPLE`): they take Rust buffers and are the one
//!   place that argues the kernel is told their true addresses and sizes;
//! - the [`Driver`] boundary (open `/dev/kfd` and render nodes, issue
//!   ioctls, read sysfs below a root), with [`NixDriver`] for the real
//!   kernel; `kfd-sim` implements the same trait.
//!
//! The C types of the hsakmt library (`hsakmttypes.h`) are not here: they
//! live in the `hsakmt-sys` crate, one module per library generation.
//!
//! # Example
//!
//! ```no_run
//! use kfd_sys::{ioctl::ioctl_plain, kfd, Driver, NixDriver};
//! use std::os::fd::AsFd;
//!
//! let driver = NixDriver::new();
//! let fd = driver.open_kfd()?;
//! let mut v = kfd::kfd_ioctl_get_version_args::default();
//! ioctl_plain(&driver, fd.as_fd(), kfd::AMDKFD_IOC_GET_VERSION, &mut v)?;
//! println!("KFD ioctl interface {}.{}", v.major_version, v.minor_version);
//! # Ok::<(), kfd_sys::Errno>(())
//! ```

pub mod dbg_trap;
pub mod driver;
pub mod drm;
pub mod errno;
pub mod file;
pub mod ioctl;
pub mod kfd;
pub mod mman;
pub mod pc_sample;
pub mod process;
pub mod spm;
pub mod sysfs;
#[doc(hidden)]
pub mod testing;

pub use driver::{Driver, NixDriver};
pub use errno::Errno;
pub use file::{DeviceFile, DeviceKind, KfdVersionCell};

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
