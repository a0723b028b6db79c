//! hsakmt: the C ABI of libhsakmt, as a drop-in `libhsakmt.so.1`.
//!
//! The library exports the hsakmt API over the Rust crates of kfd-rs:
//! `Ctx` functions (`hsaKmtAllocMemoryCtx(ctx, ...)`) are the border
//! implementation: they look the `HsaKFDContext *` up ([`ctx`]), convert
//! pointers and struct layouts, call `kfd-context` and its sub-contexts,
//! and turn errors into the C library's `HSAKMT_STATUS`. Legacy names
//! (`hsaKmtAllocMemory(...)`) are one-line forwards to the `Ctx` form on
//! the primary context.
//!
//! Two builds, one source (see [`generation::abi`]):
//!
//! - `--features newest` (default): every function of the newest
//!   upstream `hsakmt.h` and `hsakmtctx.h`, with their struct layouts;
//! - `--no-default-features --features rocm-5.2`: exactly the 67
//!   functions of Debian's libhsakmt 5.2.3 with the 5.2.3 layouts, so
//!   Debian's ROCr 5.2.3 and rocminfo run on it.
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
pub mod border;
pub mod convert;
pub mod ctx;
pub mod generation;
pub mod log;

pub mod debug;
pub mod events;
pub mod memory;
pub mod openclose;
pub mod perf;
pub mod queues;
pub mod svm;
pub mod topology;
