//! kfd-bench: the same microbenchmarks against Debian's C libhsakmt and
//! ours, on kfd-sim, side by side (`cargo xtask bench`).
//!
//! The parent ([`parent`]) spawns this binary as a child
//! (`kfd-bench child`) once per repetition, group of operations and
//! library — one library per process, `LD_PRELOAD=libkfd_sim.so`, the C
//! library and ours alternating which goes first. Each child ([`child`])
//! first times the floor (a bare `GET_VERSION` ioctl into the simulator
//! through the preload, before any library is loaded), then loads its
//! library by path with the conformance crate's [`conformance::api::Api`]
//! and runs its group ([`ops`]): each operation is warmed up, calibrated
//! to a batch size, and sampled batch by batch until its time budget is
//! spent. Samples go to stdout ([`proto`]); the parent pools them per
//! operation, parameter and library, and prints the median and the
//! p10–p90 spread of each, with the ratio C/ours ([`report`]); it also
//! writes `report.json`, `report.md` (the page `docs/benchmarks.md` is
//! made from, with the method and [`machine`]) and `scaling.svg`
//! ([`svg`]).
//!
//! `kfd-bench instructions` ([`instr`]) counts instructions per call
//! instead of timing: each operation's child runs under callgrind at two
//! batch sizes, and the per-object counts ([`callgrind`]) show the
//! library's own cost apart from the simulated kernel's.
//!
//! An operation whose first call answers `HSAKMT_STATUS_NOT_SUPPORTED`
//! (11), or whose symbol is missing, is reported as "unsupported" and never
//! timed.
//!
//! # Example: one child, by hand
//!
//! ```no_run
//! use std::time::Duration;
//! use conformance::abi::AbiKind;
//! use kfd_bench::child::{self, Budget, ChildConfig, Live};
//!
//! // Run under LD_PRELOAD=libkfd_sim.so (the parent sets it up).
//! child::run(&ChildConfig {
//!     abi: AbiKind::Rocm52,
//!     lib: "/usr/lib/x86_64-linux-gnu/libhsakmt.so.1".into(),
//!     group: "queues".into(),
//!     preset: "mi210".into(),
//!     levels: vec![0],
//!     live: Live::Vram,
//!     budget: Budget {
//!         per_op: Duration::from_millis(100),
//!         max_samples: 20,
//!         min_samples: 3,
//!         count_ioctls: false,
//!         fixed_batch: None,
//!     },
//!     only: None,
//! })
//! .unwrap();
//! ```

pub mod callgrind;
pub mod child;
pub mod instr;
pub mod machine;
pub mod ops;
pub mod parent;
pub mod proto;
pub mod report;
pub mod stats;
pub mod svg;
