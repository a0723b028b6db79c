//! Conformance: a C libhsakmt and ours, side by side, diffed.
//!
//! `cargo xtask conformance` builds kfd-sim, our libhsakmt of the chosen
//! ABI generation and the `kfd-conformance` binary, then runs
//! `kfd-conformance run`. That parent process spawns itself as a child
//! (`kfd-conformance child`) once per library and scenario group — one
//! library per process, with `LD_PRELOAD=libkfd_sim.so` on the simulator —
//! and each child loads its library by path ([`api::Api::load`]), runs the
//! scenarios ([`scenarios`]) and writes what it observes as text lines
//! ([`cx`]). The parent then compares the two sides scenario by scenario
//! ([`parent`]): statuses, every output struct field, pointers by
//! relation, side effects (memory patterns, event states, queue
//! resources), and, on the simulator, the normalised ioctl trace of each
//! scenario ([`trace`]). Known differences live in one reviewed file
//! ([`intended`]); the result goes to stdout, `report.md` and
//! `report.json` ([`report`]).
//!
//! # Example: one library, one scenario, in a child
//!
//! ```no_run
//! use conformance::{abi::AbiKind, child, cx::Env};
//!
//! let args = child::ChildArgs {
//!     abi: AbiKind::Rocm52,
//!     lib: "/usr/lib/x86_64-linux-gnu/libhsakmt.so.1".into(),
//!     scenarios: vec!["openclose/refcount".into()],
//!     out: "/tmp/refcount.out".into(),
//!     trace: None,
//!     env: Env { hardware: false, preset: "mi210".into() },
//! };
//! child::run(&args).unwrap();
//! let text = std::fs::read_to_string("/tmp/refcount.out").unwrap();
//! assert!(text.contains("R\tclose-below-zero\t"));
//! ```

pub mod abi;
pub mod api;
pub mod child;
pub mod cx;
pub mod fuzz;
pub mod intended;
pub mod parent;
pub mod report;
pub mod scenarios;
pub mod spawn;
pub mod trace;
