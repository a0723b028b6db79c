//! NUMA binding of paged system memory (the C library's
//! `bind_mem_to_numa`).
//!
//! Paged system memory (anonymous pages registered as a userptr BO) is
//! bound to the NUMA node the allocation named, with `mbind`:
//! `MPOL_BIND` when the caller set [`MemFlags::NO_SUBSTITUTE`] (the pages
//! must come from that node), `MPOL_PREFERRED` otherwise; always with
//! `MPOL_F_STATIC_NODES`. A binding the kernel refuses with `EPERM` (a
//! seccomp filter, as in docker) is ignored, and so is any refusal of a
//! preferred-node policy; a refused `MPOL_BIND` fails the allocation.
//!
//! What happens when no binding can be made (`NoNUMABind`, no NUMA support,
//! one NUMA node, a node id beyond the last) depends on the library
//! ([`FmmRules::numa_bind_strict`](crate::FmmRules::numa_bind_strict)):
//! 5.2.3 and 6.2.4 skip the binding; the newest library fails a
//! `NoSubstitute` allocation (the caller asked for pages of that node and
//! none can be promised) and skips it otherwise.
//!
//! The node count is what libnuma's `numa_max_node` reads: the `node<N>`
//! entries of `/sys/devices/system/node` (under kfd-sim's LD_PRELOAD
//! library, the simulated machine's).

use std::sync::OnceLock;

use kfd_sys::mman;

use crate::error::{FmmError, Result};
use crate::flags::{MemFlags, INVALID_NODEID};

/// Configured NUMA nodes: one more than the highest `node<N>` of
/// `/sys/devices/system/node` (1 when it cannot be read, as libnuma).
fn configured_nodes() -> u32 {
    let Ok(dir) = std::fs::read_dir("/sys/devices/system/node") else {
        return 1;
    };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_prefix("node")?
                .parse::<u32>()
                .ok()
        })
        .max()
        .map_or(1, |m| m.saturating_add(1))
}

/// How paged system memory is to be bound: what the allocation asked
/// for and what the library does when it cannot be had (decided by the
/// allocation planner, carried out by [`Numa::bind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NumaBinding {
    /// The NUMA node the allocation named.
    pub node: u32,
    /// The pages must come from that node (`NoSubstitute`: `MPOL_BIND`,
    /// else `MPOL_PREFERRED`).
    pub must: bool,
    /// The caller asked for no binding (`NoNUMABind`).
    pub skip: bool,
    /// A binding that cannot be made fails `must` memory
    /// ([`FmmRules::numa_bind_strict`](crate::FmmRules::numa_bind_strict)).
    pub strict: bool,
}

impl NumaBinding {
    /// The binding of memory of NUMA node `node` allocated with `flags`,
    /// under the strictness rule `strict`.
    pub fn new(node: u32, flags: MemFlags, strict: bool) -> NumaBinding {
        NumaBinding {
            node,
            must: flags.contains(MemFlags::NO_SUBSTITUTE),
            skip: flags.contains(MemFlags::NO_NUMA_BIND),
            strict,
        }
    }
}

/// What binding needs to know of the machine, read on the first binding
/// and kept for the memory manager's life (libnuma reads its node count
/// once, when it is loaded): whether the kernel has NUMA support, and
/// the configured node count.
#[derive(Debug, Default)]
pub(crate) struct Numa {
    machine: OnceLock<(bool, u32)>,
}

impl Numa {
    fn machine(&self) -> (bool, u32) {
        *self
            .machine
            .get_or_init(|| (mman::numa_available(), configured_nodes()))
    }

    /// Binds `[addr, addr+len)` as `binding` says (see the module docs).
    pub fn bind(&self, addr: u64, len: u64, binding: NumaBinding) -> Result<()> {
        bind_with(addr, len, binding, || self.machine())
    }
}

/// Binds `[addr, addr+len)` as `binding` says, on the machine `machine`
/// describes (NUMA support, node count), asked only when a binding is to
/// be made.
fn bind_with(
    addr: u64,
    len: u64,
    binding: NumaBinding,
    machine: impl FnOnce() -> (bool, u32),
) -> Result<()> {
    let NumaBinding {
        node,
        must,
        skip,
        strict,
    } = binding;
    let cannot = || {
        if strict && must {
            Err(FmmError::NumaBind { node })
        } else {
            Ok(())
        }
    };
    if skip {
        // 5.2.3 and 6.2.4 return at once; the newest library only fails
        // NoSubstitute here.
        return cannot();
    }
    let (available, nodes) = machine();
    if !available {
        return cannot();
    }
    if node >= nodes || node == INVALID_NODEID || nodes <= 1 {
        return cannot();
    }
    let mut mask = vec![0u64; (nodes as usize).div_ceil(64)];
    mask[node as usize / 64] |= 1 << (node % 64);
    let mode = mman::MPOL_F_STATIC_NODES
        | if must {
            mman::MPOL_BIND
        } else {
            mman::MPOL_PREFERRED
        };
    match mman::mbind(
        addr as usize,
        len as usize,
        mode,
        &mask,
        u64::from(nodes) + 1,
    ) {
        Ok(()) => Ok(()),
        Err(e) if e == kfd_sys::Errno::EPERM || !must => Ok(()),
        Err(_) => Err(FmmError::NumaBind { node }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unbindable_memory_fails_only_strict_no_substitute() {
        let m = kfd_sys::mapping::Mapping::anonymous(8192, mman::Prot::READ | mman::Prot::WRITE)
            .unwrap();
        let a = m.addr();
        let numa = Numa::default();
        let bind = |a, l, n, f, s| numa.bind(a, l, NumaBinding::new(n, f, s));
        let beyond = configured_nodes() + 3;
        let ns = MemFlags::NO_SUBSTITUTE;
        assert!(bind(a, 8192, beyond, ns, true).is_err());
        assert!(bind(a, 8192, beyond, ns, false).is_ok());
        assert!(bind(a, 8192, beyond, MemFlags::empty(), true).is_ok());
        assert!(bind(a, 8192, 0, ns | MemFlags::NO_NUMA_BIND, true).is_err());
        assert!(bind(a, 8192, 0, ns | MemFlags::NO_NUMA_BIND, false).is_ok());
        assert!(bind(a, 8192, INVALID_NODEID, MemFlags::empty(), true).is_ok());
        // Node 0 always exists: bindable on a NUMA machine, and on a
        // single-node one (nothing to bind) strict NoSubstitute fails.
        let single = configured_nodes() <= 1 || !mman::numa_available();
        assert_eq!(bind(a, 8192, 0, ns, true).is_err(), single);
        assert!(bind(a, 8192, 0, MemFlags::empty(), true).is_ok());
    }
}
