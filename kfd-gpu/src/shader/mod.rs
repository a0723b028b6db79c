//! The shader machine: a gfx9 and gfx11 ISA interpreter.
//!
//! Layers, each testable on its own: [`isa`] decodes instruction words
//! into values (opcode tables per target, generated from LLVM), [`wave`]
//! holds a wavefront's registers, the executors (`exec`, one module per
//! instruction family) give each mnemonic its meaning, [`code`] caches
//! decoded pages across dispatches, and [`dispatch`] sets up and runs the
//! waves of every workgroup (LDS, barriers, worker threads); [`coverage()`]
//! counts the mnemonics each target's tables list that have an executor.

pub mod code;
pub mod coverage;
pub mod dispatch;
pub mod exec;
pub mod isa;
pub mod wave;

pub use code::CodeCache;
pub use coverage::{coverage, Coverage};
pub use dispatch::{run, Dispatch, DispatchError, KernelCode, Limits, Stats};
pub use isa::Target;
