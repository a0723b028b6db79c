//! hsakmt: the C ABI of libhsakmt, as a drop-in `libhsakmt.so.1`.
//!
//! # Example
//!
//! The exports are ordinary `unsafe extern "C"` functions in the rlib,
//! so Rust can call them the way a C program does. Here the primary
//! context is given a simulated MI210 (`kfd-sim`) instead of `/dev/kfd`;
//! a C program reaches the simulator through its LD_PRELOAD library
//! instead (see the README).
//!
//! ```
//! use std::{ffi::c_void, ptr, sync::Arc};
//! use hsakmt::generation::abi::{HsaMemFlags, HsaSystemProperties, HsaVersionInfo};
//! use hsakmt::memory::{hsaKmtAllocMemory, hsaKmtFreeMemory, hsaKmtMapMemoryToGPU, hsaKmtUnmapMemoryToGPU};
//! use hsakmt::openclose::{hsaKmtCloseKFD, hsaKmtGetVersion, hsaKmtOpenKFD};
//! use hsakmt::topology::hsaKmtAcquireSystemProperties;
//!
//! kfd_context::primary::set_driver(Arc::new(kfd_sim::Sim::preset("mi210")?))?;
//! let mut version = HsaVersionInfo::default();
//! let mut system = HsaSystemProperties::default();
//! let mut flags = HsaMemFlags::default();
//! flags.set_NonPaged(1);
//! flags.set_HostAccess(1);
//! let mut buf: *mut c_void = ptr::null_mut();
//! // SAFETY: every pointer argument points to a live local of the type
//! // the prototype names; `buf` is used only between alloc and free.
//! unsafe {
//!     assert_eq!(hsaKmtOpenKFD().0, 0); // HSAKMT_STATUS_SUCCESS
//!     assert_eq!(hsaKmtGetVersion(&mut version).0, 0);
//!     assert_eq!(hsaKmtAcquireSystemProperties(&mut system).0, 0);
//!     assert_eq!(system.NumNodes, 2); // a CPU and a GPU
//!     // 1 MiB of VRAM on node 1, mapped to the GPU, written by the CPU.
//!     assert_eq!(hsaKmtAllocMemory(1, 1 << 20, flags, &mut buf).0, 0);
//!     assert_eq!(hsaKmtMapMemoryToGPU(buf, 1 << 20, ptr::null_mut()).0, 0);
//!     buf.cast::<u32>().write(0xdead_beef);
//!     assert_eq!(hsaKmtUnmapMemoryToGPU(buf).0, 0);
//!     assert_eq!(hsaKmtFreeMemory(buf, 1 << 20).0, 0);
//!     assert_eq!(hsaKmtCloseKFD().0, 0);
//!     // Closed: KERNEL_IO_CHANNEL_NOT_OPENED.
//!     assert_eq!(hsaKmtGetVersion(&mut version).0, 20);
//! }
//! assert_eq!(version.KernelInterfaceMajorVersion, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `examples/c_abi.rs` also lists the nodes and queries the pointer.
//!
//! # Overview
//!
//! The library exports the hsakmt API over the Rust crates of kfd-rs:
//! `Ctx` functions (`hsaKmtAllocMemoryCtx(ctx, ...)`) are the border
//! implementation: they look the `HsaKFDContext *` up ([`ctx`]), convert
//! pointers and struct layouts, call `kfd-context` and its sub-contexts,
//! and turn errors into the C library's `HSAKMT_STATUS`. Legacy names
//! (`hsaKmtAllocMemory(...)`) are one-line forwards to the `Ctx` form on
//! the primary context.
//!
//! Three builds, one source (see [`generation`]):
//!
//! - `--features newest` (default): every function of the newest
//!   upstream `hsakmt.h` and `hsakmtctx.h`, with their struct layouts;
//! - `--no-default-features --features rocm-5.2`: exactly the 67
//!   functions of Debian's libhsakmt 5.2.3 with the 5.2.3 layouts, so
//!   Debian's ROCr 5.2.3 and rocminfo run on it;
//! - `--no-default-features --features rocm-6.2`: exactly the 88
//!   functions of Debian 13's libhsakmt 6.2.4 with its layouts.
//!
//! Every export carries the `HSAKMT_1` version; the SONAME is
//! `libhsakmt.so.1`. No panic crosses the border ([`border::guard`]).
//! `HSAKMT_DEBUG_LEVEL` (3..=7) enables logging to stderr ([`log`]); the
//! other `HSA_*` switches are read by `kfd-context` when the primary
//! context opens.

#![allow(non_snake_case)]
#![allow(clippy::missing_safety_doc)]

#[macro_use]
mod export;
pub mod amdgpu;
#[cfg(feature = "newest")]
pub mod bo;
pub mod border;
pub mod convert;
pub mod ctx;
pub mod generation;
pub mod log;
pub mod profile;
#[cfg(any(feature = "rocm-5.2", feature = "rocm-6.2"))]
mod prototypes;
mod state;
pub mod status;

pub mod debug;
#[cfg(feature = "dtif")]
pub mod dtif;
pub mod events;
pub mod memory;
pub mod openclose;
pub mod perf;
pub mod queues;
#[cfg(feature = "newest")]
pub mod render;
#[cfg(feature = "newest")]
mod sim_doorbell;
pub mod svm;
pub mod topology;
