//! kfd-sync: the concurrency protocols kfd-rs wrote by hand, kept apart
//! from the ABI crates and checked by a model checker.
//!
//! - [`rcu`]: [`RcuCell`], a published `Option<Arc<T>>` that readers
//!   borrow with two plain stores and a load (the open primary context,
//!   read on every call of the C border).
//! - [`count`]: [`OpenCount`], an open count whose nested opens and
//!   closes take no lock while only the owner's lock takes it to or from
//!   0 (the primary context's open count).
//! - [`seq`]: [`SeqWords`], a few words under a sequence lock, read
//!   without a lock or a read-modify-write (answers asked again and
//!   again, kept beside the locked structure that made them).
//!
//! Every protocol here has a [loom](https://docs.rs/loom) model in
//! `tests/loom.rs`, which explores every interleaving and every memory
//! ordering the C++11 model allows of a few threads: `cargo xtask loom`
//! (`RUSTFLAGS="--cfg loom" cargo test -p kfd-sync --test loom
//! --release`) runs them, and `cargo xtask ci` does too. Under `--cfg
//! loom` the atomics, locks and thread-locals are loom's and the
//! `membarrier` path is off (readers take the fence that is the fallback
//! on kernels without `membarrier`); the stress tests cover the
//! `membarrier` path on the real machine.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use kfd_sync::RcuCell;
//!
//! static CURRENT: RcuCell<String> = RcuCell::new();
//!
//! CURRENT.store(Some(Arc::new("gpu 1".to_string())));
//! {
//!     let guard = CURRENT.read().expect("published");
//!     // Unpublished while this thread reads: the value stays alive until
//!     // the guard is dropped.
//!     CURRENT.store(None);
//!     assert_eq!(&*guard, "gpu 1");
//! }
//! assert!(CURRENT.read().is_none());
//! ```

pub mod count;
pub mod rcu;
pub mod seq;
mod shim;

pub use count::OpenCount;
pub use rcu::{Call, RcuCell, ReadGuard};
pub use seq::SeqWords;
