//! Real-client programs for `cargo xtask clients`.
//!
//! `kfd-rocr-client` loads the HSA runtime (`libhsa-runtime64.so.1`, any
//! ROCr from 5.2 to 7.x) at run time, walks agents, regions, memory
//! pools, allocations, queues and signals ([`probe`]) and prints a report
//! with no address, pid or time in it, so a run with the C libhsakmt and
//! one with ours can be compared byte for byte. On stderr it names the
//! thunk library it has mapped ([`thunk`]). Then it has the runtime
//! finish GPU work on the simulator's engines ([`work`]): async copies of
//! 4 KiB to 64 MiB with the bytes compared, barrier packets and infinite
//! signal waits.

pub mod hsa;
pub mod probe;
pub mod session;
pub mod thunk;
pub mod work;
