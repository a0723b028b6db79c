//! kfd-sim: a model of the amdkfd kernel driver at its ABI.
//!
//! # Example
//!
//! A simulated MI300X used in-process as a [`kfd_sys::Driver`], with an
//! ioctl trace, an injected fault and the leak check:
//!
//! ```
//! use std::sync::Arc;
//! use kfd_sim::Sim;
//! use kfd_sys::{DeviceFile, Driver, Errno};
//!
//! let sim = Sim::preset("mi300x")?;
//! assert_eq!(sim.topology().nodes.len(), 10); // 2 CPUs + 8 GPUs
//! let trace = std::env::temp_dir().join(format!("kfd-sim-doc-{}.trace", std::process::id()));
//! sim.set_trace(std::fs::File::create(&trace)?);
//!
//! let driver: Arc<dyn Driver> = Arc::new(sim.clone());
//! let kfd = DeviceFile::open_kfd(driver)?; // a kernel process for this file
//! assert_eq!(kfd.kfd_version()?.0, 1);
//! // The first GET_VERSION counted from here fails with EIO.
//! sim.inject_fault("GET_VERSION", 1, Errno::EIO);
//! assert_eq!(kfd.kfd_version(), Err(Errno::EIO));
//! assert_eq!(sim.live_objects().processes.len(), 1);
//! drop(kfd);
//! assert!(sim.live_objects().is_empty()); // nothing leaked
//!
//! sim.clear_trace();
//! let text = std::fs::read_to_string(&trace)?;
//! std::fs::remove_file(&trace)?;
//! assert!(text.lines().any(|l| l.contains("AMDKFD_IOC_GET_VERSION") && l.ends_with("-> -EIO (injected)")));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The same machine runs unmodified programs through the LD_PRELOAD
//! library: `cargo run -p kfd-sim --example run -- --preset mi300x --
//! rocminfo` (`examples/run.rs`).
//!
//! # Overview
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

pub use sim::{GemMmapTarget, Sim};
