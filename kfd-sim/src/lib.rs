//! kfd-sim: a model of the amdkfd kernel driver at its ABI.
//!
//! Used two ways: in-process, [`Sim`] implements the kfd-sys
//! [`Driver`](kfd_sys::Driver) so Rust tests build a simulated machine in one
//! line; and as `libkfd_sim.so`, an `LD_PRELOAD` library that interposes the
//! libc entry points for `/dev/kfd`, the render nodes and the KFD sysfs
//! paths so unmodified C libhsakmt, ROCr and rocminfo run on it.

pub mod drm;
pub mod kernel;
mod preload;
pub mod presets;
mod sim;
pub mod sysfs;
pub mod topology;

pub use sim::Sim;
