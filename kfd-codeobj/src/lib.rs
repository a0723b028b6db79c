//! kfd-codeobj: AMDGPU HSA code objects without a runtime.
//!
//! A code object is what `clang -target amdgcn-amd-amdhsa` or
//! `hipcc --genco` writes: an ELF64 shared object for one GPU processor,
//! whose `NT_AMDGPU_METADATA` note (msgpack) describes its kernels and
//! whose read-only data holds one 64-byte kernel descriptor per kernel.
//! This crate reads one (code object v4, v5 and v6), without KFD or ROCr:
//!
//! - [`CodeObject::parse`] checks the ELF header and decodes the target
//!   id ([`TargetId`], e.g. `gfx90a:xnack-`), the metadata ([`Metadata`]:
//!   kernels, their segment sizes and register counts, their arguments
//!   with [`ValueKind`]) and where each kernel descriptor (`<name>.kd`) is.
//! - [`CodeObject::load`] / [`CodeObject::load_into`] build the load image
//!   for a GPU address: the `PT_LOAD` segments at their virtual addresses
//!   ([`Layout`]), the dynamic relocations applied (`R_AMDGPU_RELATIVE64`,
//!   `ABS64`, `ABS32`, `ABS32_LO`, `ABS32_HI`), and each kernel's
//!   descriptor address and contents ([`LoadedKernel`], a
//!   [`kfd_sys::hsa::kernel_descriptor_t`]).
//! - [`KernargBuilder`] builds a kernel's argument buffer: explicit
//!   arguments set by index with size checks, hidden ones filled from a
//!   [`Dispatch`] (grid and workgroup sizes: block counts, group sizes,
//!   remainders, grid dimensions; global offsets 0; others given or 0).
//!
//! Malformed input (truncated files, the wrong machine or ABI, a bad
//! note, a kernel without its descriptor) is an [`Error`] naming the
//! cause, never a panic.
#![forbid(unsafe_code)]

mod codeobj;
mod error;
mod kernarg;
mod load;
mod metadata;
mod target;

pub use codeobj::{
    CodeObject, CodeObjectVersion, Kernel, Relocation, RelocationKind, RelocationSymbol, Segment,
};
pub use error::Error;
pub use kernarg::{Dispatch, Kernarg, KernargBuilder};
pub use load::{Layout, LoadedImage, LoadedKernel};
pub use metadata::{KernelArg, KernelMetadata, Metadata, ValueKind};
pub use target::{Feature, TargetId};
