//! Real-client programs for `cargo xtask clients`.
//!
//! `kfd-rocr-client` loads the HSA runtime (`libhsa-runtime64.so.1`, any
//! ROCr from 5.2 to 7.x) at run time, walks agents, regions, memory
//! pools, allocations, queues and signals ([`probe`]) and prints a report
//! with no address, pid or time in it, so a run with the C libhsakmt and
//! one with ours can be compared byte for byte. On stderr it names the
//! thunk library it has mapped ([`thunk`]).
//!
//! `kfd-ipc-client` shares GPU and system memory with a second process
//! of itself through ROCr's IPC API ([`ipc`]), the path on which ROCr 7.x
//! calls the libdrm_amdgpu buffer-object entry points of a DTIF thunk.

pub mod hsa;
pub mod ipc;
pub mod probe;
pub mod session;
pub mod thunk;
