//! Raw ABI of the AMD KFD (amdkfd) driver.
//!
//! # Example
//!
//! Open the KFD through a [`Driver`], ask for its ioctl interface version
//! and issue a typed request. The driver here is a simulated MI210
//! (`kfd-sim`); with [`NixDriver`] instead it is this machine's
//! `/dev/kfd`, and the rest of the code stays the same.
//!
//! ```
//! use std::sync::Arc;
//! use kfd_sys::{kfd, DeviceFile, Driver};
//!
//! let driver: Arc<dyn Driver> = Arc::new(kfd_sim::Sim::preset("mi210")?);
//! let kfd = DeviceFile::open_kfd(driver)?;
//! let (major, minor) = kfd.kfd_version()?; // AMDKFD_IOC_GET_VERSION
//! println!("KFD ioctl interface {major}.{minor}");
//!
//! // The request constant fixes the argument type; `ioctl_plain` is safe
//! // because the struct carries no pointers for the kernel to follow.
//! let mut apertures = kfd::kfd_ioctl_get_process_apertures_args::default();
//! kfd.ioctl_plain(kfd::AMDKFD_IOC_GET_PROCESS_APERTURES, &mut apertures)?;
//! assert_eq!(apertures.num_of_nodes, 1); // one GPU
//! let gpu = apertures.process_apertures[0];
//! assert!(gpu.gpuvm_base < gpu.gpuvm_limit);
//!
//! let mut clocks = kfd::kfd_ioctl_get_clock_counters_args {
//!     gpu_id: gpu.gpu_id,
//!     ..Default::default()
//! };
//! kfd.ioctl_plain(kfd::AMDKFD_IOC_GET_CLOCK_COUNTERS, &mut clocks)?;
//! assert!(clocks.gpu_clock_counter > 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `examples/version.rs` does the same for any preset (or, with `--real`,
//! this machine's GPUs).
//!
//! # Contents
//!
//! This crate holds types and numbers only, no logic:
//!
//! - [`kfd`]: the `kfd_ioctl.h` uapi — argument structs, typed request
//!   constants ([`ioctl::Ioctl`]), flags, enums and mmap offset encodings;
//! - [`drm`]: the amdgpu DRM uapi subset used on render nodes, and
//!   [`drm::query_device_info`] (`AMDGPU_INFO_DEV_INFO`);
//! - [`sysfs`]: property names of the KFD topology tree;
//! - [`hsa`]: the user-mode queue ABI the GPU consumes (AQL packets,
//!   `amd_queue_t`, `amd_signal_t`, kernel descriptors), with byte views;
//! - [`pm4`] and [`sdma`]: the command packets of compute (PM4) and SDMA
//!   queues, built for a ring producer and decoded for the simulated
//!   engines ([`packet`]: their dword view and errors);
//! - safe forms of the requests whose arguments carry user pointers:
//!   [`memory`] (allocation, GPU mapping, apertures, dma-bufs, SVM, tile
//!   config), [`queue`] (create/update, CU masks, wave state), [`event`]
//!   (waits), [`dbg_trap`] (`AMDKFD_IOC_DBG_TRAP` and the older debugger
//!   requests), [`spm`] (`AMDKFD_IOC_RLC_SPM`) and [`pc_sample`]
//!   (`AMDKFD_IOC_PC_SAMPLE`): they take Rust buffers and are the one
//!   place that argues the kernel is told their true addresses and sizes;
//! - owned mappings ([`mapping`]): address-space reservations and CPU
//!   mappings that unmap themselves, with checked atomic accessors; and
//!   the few other system calls the crates above need ([`mman`],
//!   [`process`]: `madvise`, `mincore`, `pidfd_*`, `fstat`, `fcntl`);
//! - [`sync`]: the one way the workspace takes a mutex ([`sync::lock`],
//!   which carries on through poisoning);
//! - the [`Driver`] boundary (open `/dev/kfd` and render nodes, issue
//!   ioctls, read sysfs below a root), with [`NixDriver`] for the real
//!   kernel; `kfd-sim` implements the same trait.
//!
//! The C types of the hsakmt library (`hsakmttypes.h`) are not here: they
//! live in the `hsakmt-sys` crate, one module per library generation.

pub mod dbg_trap;
pub mod driver;
pub mod drm;
pub mod errno;
pub mod event;
pub mod file;
pub mod hash;
pub mod hsa;
pub mod ioctl;
pub mod kfd;
pub mod mapping;
pub mod memory;
pub mod mman;
pub mod packet;
pub mod pc_sample;
pub mod pm4;
pub mod process;
pub mod queue;
pub mod sdma;
pub mod spm;
pub mod sync;
pub mod sysfs;
#[doc(hidden)]
pub mod testing;

pub use driver::{Driver, NixDriver};
pub use errno::Errno;
pub use file::{CloseWatch, DeviceFile, DeviceKind, KfdVersionCell};
pub use mman::PAGE_SIZE;

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
