//! kfd-fmm: the GPU memory manager of one KFD context.
//!
//! # Example
//!
//! Allocate host-visible VRAM on a simulated MI210 (`kfd-sim`; with
//! [`kfd_sys::NixDriver`] instead, on this machine's GPU), map it to the
//! GPU, write and read it through the CPU, and ask what the pointer is:
//!
//! ```
//! use std::sync::Arc;
//! use kfd_fmm::{Fmm, FmmOptions, MemFlags, PointerType};
//! use kfd_sys::{DeviceFile, Driver};
//!
//! let sim = kfd_sim::Sim::preset("mi210")?;
//! let topology = kfd_topology::Topology::snapshot(&sim)?;
//! let driver: Arc<dyn Driver> = Arc::new(sim.clone());
//! let kfd = Arc::new(DeviceFile::open_kfd(driver)?);
//! let fmm = Arc::new(Fmm::from_topology(kfd, &topology, FmmOptions::primary())?);
//!
//! // 1 MiB of VRAM on node 1 (the GPU); unmapped and freed on drop.
//! let buf = fmm.alloc_buffer(1, 1 << 20, 0, MemFlags::NON_PAGED | MemFlags::HOST_ACCESS)?;
//! buf.map()?;
//! buf.write(4096, b"hello")?;
//! let mut back = [0u8; 5];
//! buf.read(4096, &mut back)?;
//! assert_eq!(&back, b"hello");
//!
//! let info = fmm.pointer_info(buf.addr() + 4096)?;
//! assert_eq!(info.kind, PointerType::Allocated);
//! assert_eq!((info.gpu_address, info.size), (buf.addr(), 1 << 20));
//! assert_eq!(info.mapped_count, 1);
//! assert_eq!(fmm.pointer_nodes(buf.addr())?.mapped, [1]);
//! drop(buf);
//! assert!(fmm.pointer_info(info.gpu_address).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `examples/vram.rs` does the same and prints each step.
//!
//! # Overview
//!
//! This is the Rust counterpart of libhsakmt's `fmm.c` / `memory.c` /
//! `svm.c`, built around the context model of the design: an [`Fmm`] is
//! created per context from that context's `/dev/kfd` file and topology,
//! owns its render nodes, apertures and buffers, and frees all of it when
//! dropped. Nothing is global; two `Fmm`s in one process (say a primary
//! and a secondary context) never see each other's memory.
//!
//! - [`Fmm::new`] does what the C thunk's `fmm_init_process_apertures`
//!   does: GET_PROCESS_APERTURES(_NEW), ACQUIRE_VM per GPU, the SVM range
//!   (mmap-managed on GPUs that address the whole canonical range, else a
//!   `PROT_NONE` reservation split into a coherent and a non-coherent
//!   aperture), SET_MEMORY_POLICY, and the MMIO remap page of each gfx9+
//!   GPU.
//! - Address-based calls mirror the C API one to one (`alloc_memory`,
//!   `free_memory`, `map_to_gpu`, ...) for the `hsakmt` ABI layer;
//!   [`Buffer`] wraps an allocation in RAII for Rust users.
//! - The other sub-contexts of a context hold their buffers directly:
//!   [`Fmm::alloc_exec`] (event page, queue buffers),
//!   [`Fmm::alloc_doorbell_page`] and [`Fmm::alloc_svm_area`] (a queue's
//!   save area in SVM memory).
//! - Every error is an [`FmmError`] naming the cause (with the errno and
//!   the kernel request where the kernel refused); the C status each
//!   C function returns for it is decided at the `hsakmt` border.

//!
//! This crate has no `unsafe` code: address space and CPU mappings are
//! `kfd_sys::mapping` values that unmap themselves, requests with user
//! pointers go through the safe forms of `kfd_sys::memory`, and the few
//! other system calls through `kfd_sys::mman` and `kfd_sys::process`.

#![forbid(unsafe_code)]

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod aperture;
mod buffer;
mod device;
mod error;
mod flags;
mod fmm;
mod gem;
mod numa;
mod objects;
mod share;
mod va;

pub use buffer::Buffer;
pub use device::{ExecAlloc, SvmArea};
pub use error::{AddressSpace, FmmError, MemoryKind, Result};
pub use flags::{
    AllocMemFlags, CachePolicy, MemFlags, MemMapFlags, SvmAttr, SvmFlags, INVALID_NODEID,
};
/// The SVM calls as the C library makes them, on a KFD descriptor and a
/// topology snapshot (no memory manager needed).
pub use fmm::svm::{check_svm_range, svm_fault_page, svm_get_attr, svm_set_attr};
pub use fmm::{
    AllocPlan, DropFailure, Fmm, FmmOptions, FmmRules, GraphicsResource, NodeApertures, NodeDesc,
    PointerInfo, PointerNodes, PointerType, Range, RenderNodes, ShareVia,
};
pub use gem::{GemBuffer, VaAccess};
/// The GFX IP version of [`NodeDesc::gfx`]: kfd-topology's, re-exported.
pub use kfd_topology::GfxVersion;
pub use share::ShareHandle;
pub use va::VaAllocator;

pub(crate) use kfd_sys::sync::lock;

/// The page size the memory manager works in (x86-64 and the GPUs: 4 KiB).
pub use kfd_sys::PAGE_SIZE;

/// The largest size any allocation, registration or reservation may have:
/// the 47-bit canonical user address space of x86-64 (and of the GPUs'
/// SVM range). Bigger requests fail up front with the status the C library
/// reports when the memory cannot be had (see [`Fmm::alloc_memory_align`]),
/// before any size is added to an address or padding.
pub const MAX_ALLOC_SIZE: u64 = 1 << 47;

#[cfg(target_endian = "big")]
compile_error!("kfd-fmm lays out the SVM ioctl for little-endian targets only");
