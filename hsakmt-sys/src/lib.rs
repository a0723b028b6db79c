//! The C types of `hsakmttypes.h`, the header of the hsakmt thunk API
//! (libhsakmt), in every ABI generation kfd-rs serves — one module per
//! generation, as kvm-bindings keeps one file per kernel version:
//!
//! - [`rocm_5_2`]: exactly Debian 12's `/usr/include/hsakmttypes.h` from
//!   libhsakmt-dev 5.2.3, the layouts Debian's ROCr 5.2.3 and libhsakmt
//!   5.2.3 were built with.
//! - [`rocm_6_2`]: exactly Debian 13's `/usr/include/hsakmt/hsakmttypes.h`
//!   from libhsakmt-dev 6.2.4 (the last shared libhsakmt ROCm released),
//!   the layouts of Debian 13's libhsakmt and ROCr 6.1.2: 5.2.3's sizes,
//!   with reserved fields and bits named and types added.
//! - [`newest`]: the header of the thunk ROCm 7.2.4 links into ROCr
//!   (rocm-systems `rocm-7.2.4`; no installable copy exists, the layouts
//!   are pinned by hand), which adds fields to `HsaNodeProperties` and
//!   `HsaIoLinkProperties`, new bit fields, new types and the opaque
//!   [`newest::HsaKFDContext`].
//! - [`common`]: every type that is identical in all generations; each
//!   generation module re-exports all of it, so `rocm_5_2::X` and
//!   `newest::X` name the same Rust type when the C types are the same.
//!   Types whose fields differ are declared once by a macro in `common`
//!   with the shared fields, and each generation adds its own.
//! - [`since_6_2`]: the types 6.2.4 introduced that the newest header
//!   keeps unchanged, re-exported by `rocm_6_2` and `newest`.
//!
//! This crate holds types and numbers only. The kernel's uapi is in
//! `kfd-sys`; the library that exports functions over these types is
//! `hsakmt`.
//!
//! # Representation
//!
//! The header wraps everything in `#pragma pack(push, 4)`: 64-bit members
//! are only 4-byte aligned. Structs whose layout or alignment that pragma
//! changes are `#[repr(C, packed(4))]` (fields with 8-byte alignment are
//! read and written by value; references to them are not allowed); the
//! others are plain `#[repr(C)]`.
//!
//! - C enums are `#[repr(transparent)]` integer newtypes with associated
//!   constants (also exported at module level), so any value from C is
//!   valid. `HSA_QUEUE_PRIORITY` is 64 bits wide, as gcc makes it.
//! - Bit-field unions (`HsaMemFlags`, `HSA_CAPABILITY`, ...) are integer
//!   newtypes holding the whole word (the C `Value` member), with a getter
//!   and a `set_` setter per named field and a [`BitField`] table.
//! - Unions of a pointer and an integer that the header leaves anonymous
//!   are stored as the integer member, with pointer accessors; named unions
//!   (`HsaSyncVar::SyncVar`, `HsaEventData::EventData`) are Rust unions.
//!
//! Field names are the C names. Where a doc comment says *in* or *out* it
//! means the direction across the hsakmt API (input to, output of, the
//! thunk function that takes the struct).
//!
//! # Example
//!
//! ```
//! use hsakmt_sys::{newest, rocm_5_2, HSAKMT_STATUS};
//!
//! let mut flags = rocm_5_2::HsaMemFlags::default();
//! flags.set_HostAccess(1);
//! flags.set_CachePolicy(rocm_5_2::HSA_CACHING_WRITECOMBINED.0);
//! assert_eq!(flags.0, 0b100_0100);
//! assert_eq!(core::mem::size_of::<rocm_5_2::HsaNodeProperties>(), 356);
//! assert_eq!(core::mem::size_of::<hsakmt_sys::rocm_6_2::HsaNodeProperties>(), 356);
//! assert_eq!(core::mem::size_of::<newest::HsaNodeProperties>(), 376);
//! assert_eq!(HSAKMT_STATUS::HSAKMT_STATUS_SUCCESS.to_string(), "HSAKMT_STATUS_SUCCESS");
//! ```

#![allow(non_camel_case_types, non_snake_case)]

#[macro_use]
mod macros;
#[macro_use]
pub mod common;
pub mod newest;
pub mod rocm_5_2;
pub mod rocm_6_2;
pub mod since_6_2;

pub use common::HSAKMT_STATUS;
pub use macros::BitField;
