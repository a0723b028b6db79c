//! kfd-gpu: the hardware below kfd-sim's driver model.
//!
//! An AMD GPU as a driver sees it: memory it is handed ([`mem::GpuMemory`],
//! translated once per span and then accessed without system calls) and
//! the shader machine ([`shader`]) that runs kernels: gfx9 (gfx900/902,
//! gfx90a, gfx940/942) and gfx1100 (the core encodings, wave32 and
//! wave64) code, decoded once and interpreted a wave at a
//! time, workgroups spread over threads. The crate knows nothing of the
//! KFD driver model: kfd-sim's command processor hands it dispatches.
//!
//! # Example
//!
//! A kernel that stores 42 at the address in its first kernel argument,
//! run on a flat memory buffer:
//!
//! ```
//! use kfd_gpu::mem::FlatMemory;
//! use kfd_gpu::shader::{self, CodeCache, Dispatch, KernelCode, Limits, Target};
//!
//! let mem = FlatMemory::new(0x10000, 0x10000);
//! // s_load_dwordx2 s[2:3], s[0:1], 0x0 ; v_mov_b32 v1, 42 ;
//! // s_waitcnt lgkmcnt(0) ; v_mov_b32 v2, s2 ; v_mov_b32 v3, s3 ;
//! // global_store_dword v[2:3], v1, off ; s_endpgm
//! let code: [u32; 9] = [
//!     0xc006_0080, 0, 0x7e02_02aa, 0xbf8c_c07f, 0x7e04_0202, 0x7e06_0203,
//!     0xdc70_8000, 0x007f_0102, 0xbf81_0000,
//! ];
//! for (k, w) in code.iter().enumerate() {
//!     mem.store(0x10000 + 4 * k as u64, *w);
//! }
//! mem.store::<u64>(0x11000, 0x12000); // the kernel argument
//! let d = Dispatch {
//!     target: Target::Gfx90a,
//!     code: KernelCode {
//!         entry: 0x10000,
//!         rsrc2: 2 << 1, // two user SGPRs...
//!         properties: 1 << 3, // ...holding the kernarg pointer
//!         ..KernelCode::default()
//!     },
//!     grid: [1, 1, 1],
//!     workgroup: [1, 1, 1],
//!     group_segment_size: 0,
//!     private_segment_size: 0,
//!     kernarg: 0x11000,
//!     packet: 0,
//!     queue: 0,
//!     dispatch_id: 0,
//!     shared_base: 1 << 48,
//!     private_base: 2 << 48,
//!     mem: &mem,
//!     limits: Limits::default(),
//!     stop: &|| false,
//!     clock: &|| 0,
//!     realtime: &|| 0,
//! };
//! shader::run(&d, &CodeCache::new())?;
//! assert_eq!(mem.load::<u32>(0x12000), 42);
//! # Ok::<(), kfd_gpu::shader::DispatchError>(())
//! ```

// Lane loops index several per-lane arrays (sources, results, VGPRs) by
// the same lane number; iterator zips of four arrays read worse.
#![allow(clippy::needless_range_loop)]

pub mod engine;
pub mod mem;
pub mod samples;
pub mod shader;
