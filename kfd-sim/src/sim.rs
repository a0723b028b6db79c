//! The simulated machine.

/// A simulated machine (placeholder until the kernel model lands).
#[derive(Debug)]
pub struct Sim {}
