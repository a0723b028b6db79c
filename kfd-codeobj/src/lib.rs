//! kfd-codeobj: AMDGPU HSA code objects without a runtime.
//!
//! A code object is what `clang -target amdgcn-amd-amdhsa` writes (and
//! `hipcc --genco`, inside an offload bundle): an ELF64 shared object for one GPU processor,
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
//! - [`OffloadBundle`] reads the clang offload bundle that `hipcc --genco`
//!   and `clang-offload-bundler` wrap code objects in, and picks the code
//!   object for a target id.
//! - [`KernargBuilder`] builds a kernel's argument buffer: explicit
//!   arguments set by index with size checks, hidden ones filled from a
//!   [`Dispatch`] (grid and workgroup sizes: block counts, group sizes,
//!   remainders, grid dimensions; global offsets 0; others given or 0).
//!
//! # Example
//!
//! The `vector_add(const float *a, const float *b, float *c, uint n)`
//! sample ([`samples`]; gfx90a, code object v5): load it for a GPU
//! address, find its descriptor, build its arguments for 1000 work-items.
//!
//! ```
//! use kfd_codeobj::{CodeObject, Dispatch, KernargBuilder, ValueKind};
//!
//! let co = CodeObject::parse(kfd_codeobj::samples::VECTOR_ADD_GFX90A)?;
//! assert_eq!(co.target().to_string(), "gfx90a");
//!
//! // The image for GPU address `base`: copy `image.bytes()` there.
//! let base = 0x7f00_0000_0000;
//! let image = co.load(base)?;
//! let kernel = image.kernel("vector_add")?;
//! // The dispatch packet's `kernel_object`.
//! assert_eq!(kernel.descriptor_address, base + 0x840);
//! assert_eq!(kernel.descriptor.kernarg_size, 288);
//!
//! let metadata = &kernel.kernel.metadata;
//! assert_eq!(metadata.explicit_args().count(), 4);
//! assert_eq!(metadata.args[4].value_kind, ValueKind::HiddenBlockCountX);
//! let mut args = KernargBuilder::new(metadata);
//! args.set_ptr(0, 0x1000)?.set_ptr(1, 0x2000)?.set_ptr(2, 0x3000)?;
//! args.set_u32(3, 1000)?;
//! let kernarg = args.build(&Dispatch::linear(1000, 256))?;
//! // 3 whole workgroups of 256 (hidden_block_count_x at 32) and one of 232.
//! assert_eq!(kernarg.bytes()[32..36], 3u32.to_le_bytes());
//! assert_eq!(kernarg.bytes()[50..52], 232u16.to_le_bytes());
//! # Ok::<(), kfd_codeobj::Error>(())
//! ```
//!
//! `examples/inspect.rs` prints everything this crate reads from a code
//! object.
//!
//! Malformed input (truncated files, the wrong machine or ABI, a bad
//! note, a kernel without its descriptor) is an [`Error`] naming the
//! cause, never a panic.
#![forbid(unsafe_code)]

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod bundle;
mod codeobj;
mod error;
mod kernarg;
mod load;
mod metadata;
pub mod samples;
mod target;

pub use bundle::{BundleEntry, OffloadBundle};
pub use codeobj::{
    CodeObject, CodeObjectVersion, Kernel, Relocation, RelocationKind, RelocationSymbol, Segment,
};
pub use error::Error;
pub use kernarg::{Dispatch, Kernarg, KernargBuilder};
pub use load::{Layout, LoadedImage, LoadedKernel};
pub use metadata::{KernelArg, KernelMetadata, Metadata, ValueKind};
pub use target::{Feature, TargetId};
