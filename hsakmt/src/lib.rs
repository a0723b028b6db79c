//! hsakmt: the C ABI of libhsakmt, as a drop-in `libhsakmt.so.1`.
//!
//! Every exported function is a thin forward: legacy names call the `Ctx`
//! form on the primary context; the `Ctx` form converts pointers and
//! layouts and calls kfd-context. Build with `--features abi-current`
//! (default: the newest upstream headers, legacy + Ctx symbols) or
//! `--no-default-features --features abi-rocm-5-2` (Debian's 5.2.3 ABI).

#![allow(non_snake_case)]

// The export macro's first users land with kfd-context.
#[allow(unused_macros)]
#[macro_use]
mod export;
pub mod border;
