//! Flag words: the hsakmt `HsaMemFlags` / `HsaMemMapFlags` bit layouts as
//! `bitflags`, the kernel's allocation flags, and the translation between
//! them.

bitflags::bitflags! {
    /// `HsaMemFlags`: what kind of memory an allocation asks for.
    ///
    /// The bit positions are those of `hsakmttypes.h` (bits 0..=17 exist in
    /// 5.2.3; 18..=24 were added later). The C layer passes the raw word
    /// through [`MemFlags::from_bits_retain`].
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct MemFlags: u32 {
        /// Non-paged memory: VRAM on a GPU node, GTT (not userptr) for
        /// system memory.
        const NON_PAGED = 1 << 0;
        /// The two-bit `CachePolicy` field (see [`CachePolicy`]).
        const CACHE_POLICY = 0b11 << 1;
        /// Read-only for the GPU.
        const READ_ONLY = 1 << 3;
        /// The two-bit `PageSize` field (see [`MemFlags::page_size`]).
        const PAGE_SIZE = 0b11 << 4;
        /// The CPU can access the memory (VRAM through the large BAR).
        const HOST_ACCESS = 1 << 6;
        /// Do not substitute another memory kind when the preferred one runs out.
        const NO_SUBSTITUTE = 1 << 7;
        /// GDS memory (not supported by this implementation, as upstream).
        const GDS_MEMORY = 1 << 8;
        /// Scratch backing memory.
        const SCRATCH = 1 << 9;
        /// Full atomic access.
        const ATOMIC_ACCESS_FULL = 1 << 10;
        /// Partial atomic access.
        const ATOMIC_ACCESS_PARTIAL = 1 << 11;
        /// Executable.
        const EXECUTE_ACCESS = 1 << 12;
        /// Coarse-grained coherence (cached, not coherent with the host).
        const COARSE_GRAIN = 1 << 13;
        /// AQL queue memory: the ring is mapped twice back to back.
        const AQL_QUEUE_MEMORY = 1 << 14;
        /// Allocate at the address the caller passes.
        const FIXED_ADDRESS = 1 << 15;
        /// Do not bind system memory to the preferred NUMA node.
        const NO_NUMA_BIND = 1 << 16;
        /// Uncached (MTYPE UC).
        const UNCACHED = 1 << 17;
        /// Allocate memory only, without a virtual address (handle aperture).
        const NO_ADDRESS = 1 << 18;
        /// Reserve a virtual address only, without memory.
        const ONLY_ADDRESS = 1 << 19;
        /// Extended coherence (MTYPE CC across XGMI).
        const EXTENDED_COHERENT = 1 << 20;
        /// GTT memory even on a GPU node.
        const GTT_ACCESS = 1 << 21;
        /// Physically contiguous VRAM (best effort; KFD 1.16+).
        const CONTIGUOUS = 1 << 22;
        /// Executable by the blit kernels.
        const EXECUTE_BLIT = 1 << 23;
        /// Queue object memory.
        const QUEUE_OBJECT = 1 << 24;
    }
}

/// Values of the two-bit `CachePolicy` field of [`MemFlags`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CachePolicy {
    /// `HSA_CACHING_CACHED`.
    Cached = 0,
    /// `HSA_CACHING_NONCACHED`.
    NonCached = 1,
    /// `HSA_CACHING_WRITECOMBINED`.
    WriteCombined = 2,
    /// `HSA_CACHING_RESERVED`.
    Reserved = 3,
}

impl MemFlags {
    /// The page size the `PageSize` field selects (4 KiB, 64 KiB, 2 MiB, 1 GiB).
    pub fn page_size(self) -> u64 {
        match (self.bits() >> 4) & 0b11 {
            0 => 4 << 10,
            1 => 64 << 10,
            2 => 2 << 20,
            _ => 1 << 30,
        }
    }

    /// The `CachePolicy` field.
    pub fn cache_policy(self) -> CachePolicy {
        match (self.bits() >> 1) & 0b11 {
            0 => CachePolicy::Cached,
            1 => CachePolicy::NonCached,
            2 => CachePolicy::WriteCombined,
            _ => CachePolicy::Reserved,
        }
    }

    /// These flags with the `CachePolicy` field set to `policy`.
    pub fn with_cache_policy(self, policy: CachePolicy) -> Self {
        MemFlags::from_bits_retain((self.bits() & !(0b11 << 1)) | ((policy as u32) << 1))
    }

    /// Flags for ordinary host-accessible system memory.
    pub fn system() -> Self {
        MemFlags::HOST_ACCESS
    }

    /// Flags for non-paged (GTT) system memory the CPU can access.
    pub fn gtt() -> Self {
        MemFlags::NON_PAGED | MemFlags::HOST_ACCESS
    }

    /// Flags for VRAM on a GPU node (no CPU access).
    pub fn vram() -> Self {
        MemFlags::NON_PAGED
    }
}

bitflags::bitflags! {
    /// `HsaMemMapFlags`: the 4th argument of `hsaKmtMapMemoryToGPUNodes`
    /// in 5.2.3. Its bits do **not** line up with [`MemFlags`].
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct MemMapFlags: u32 {
        /// The two-bit `CachePolicy` field.
        const CACHE_POLICY = 0b11 << 1;
        /// Map read-only.
        const READ_ONLY = 1 << 3;
        /// The two-bit `PageSize` field.
        const PAGE_SIZE = 0b11 << 4;
        /// Host access.
        const HOST_ACCESS = 1 << 6;
        /// Migrate on access.
        const MIGRATE = 1 << 7;
        /// Probe.
        const PROBE = 1 << 8;
    }
}

pub use kfd_sys::kfd::{AllocMemFlags, SvmFlags};

/// The kernel flags every allocation derives from its [`MemFlags`]
/// (the part shared by VRAM and system memory). `always_executable` is
/// 5.2.3's rule (every allocation executable, the runtime could not ask
/// for it); the newest library sets EXECUTABLE only for ExecuteAccess.
pub(crate) fn hsa_to_ioc(flags: MemFlags, always_executable: bool) -> AllocMemFlags {
    let mut ioc = AllocMemFlags::empty();
    if flags.contains(MemFlags::AQL_QUEUE_MEMORY) {
        ioc |= AllocMemFlags::AQL_QUEUE_MEM | AllocMemFlags::UNCACHED;
    }
    if !flags.contains(MemFlags::READ_ONLY) {
        ioc |= AllocMemFlags::WRITABLE;
    }
    if always_executable || flags.contains(MemFlags::EXECUTE_ACCESS) {
        ioc |= AllocMemFlags::EXECUTABLE;
    }
    ioc
}

/// The [`MemFlags`] upstream records for an object it only knows by its
/// kernel flags (imported buffers).
pub(crate) fn ioc_to_hsa(ioc: AllocMemFlags) -> MemFlags {
    let mut f = MemFlags::empty();
    if !ioc.contains(AllocMemFlags::WRITABLE) {
        f |= MemFlags::READ_ONLY;
    }
    if !ioc.contains(AllocMemFlags::COHERENT) {
        f |= MemFlags::COARSE_GRAIN;
    }
    if ioc.contains(AllocMemFlags::PUBLIC) {
        f |= MemFlags::HOST_ACCESS;
    }
    f
}

/// An SVM attribute (`HSA_SVM_ATTRIBUTE`) with node ids (not gpu ids) in
/// the location and access variants, as the hsakmt API takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SvmAttr {
    /// Preferred location: a node id, or `None` for "undefined".
    PreferredLoc(Option<u32>),
    /// Prefetch location: a node id (a CPU node means system memory).
    PrefetchLoc(u32),
    /// The node may access the range (mapped on fault or prefetch).
    Access(u32),
    /// The node accesses the range in place (always mapped).
    AccessInPlace(u32),
    /// The node may not access the range.
    NoAccess(u32),
    /// Set these flags.
    SetFlags(SvmFlags),
    /// Clear these flags.
    ClrFlags(SvmFlags),
    /// Migration granularity, log2 of pages.
    Granularity(u32),
    /// An attribute type this crate does not know, passed through.
    Other {
        /// The raw type.
        type_: u32,
        /// The raw value.
        value: u32,
    },
}

/// `HSA_SVM_ATTR_*` type numbers.
pub(crate) mod svm_attr {
    pub const PREFERRED_LOC: u32 = 0;
    pub const PREFETCH_LOC: u32 = 1;
    pub const ACCESS: u32 = 2;
    pub const ACCESS_IN_PLACE: u32 = 3;
    pub const NO_ACCESS: u32 = 4;
    pub const SET_FLAGS: u32 = 5;
    pub const CLR_FLAGS: u32 = 6;
    pub const GRANULARITY: u32 = 7;
}

/// The node id the hsakmt API uses for "no node" (`INVALID_NODEID`).
pub const INVALID_NODEID: u32 = 0xffff_ffff;

impl SvmAttr {
    /// The raw `(type, value)` pair, values being node ids.
    pub fn to_raw(self) -> (u32, u32) {
        use svm_attr::*;
        match self {
            SvmAttr::PreferredLoc(n) => (PREFERRED_LOC, n.unwrap_or(INVALID_NODEID)),
            SvmAttr::PrefetchLoc(n) => (PREFETCH_LOC, n),
            SvmAttr::Access(n) => (ACCESS, n),
            SvmAttr::AccessInPlace(n) => (ACCESS_IN_PLACE, n),
            SvmAttr::NoAccess(n) => (NO_ACCESS, n),
            SvmAttr::SetFlags(f) => (SET_FLAGS, f.bits()),
            SvmAttr::ClrFlags(f) => (CLR_FLAGS, f.bits()),
            SvmAttr::Granularity(g) => (GRANULARITY, g),
            SvmAttr::Other { type_, value } => (type_, value),
        }
    }

    /// The attribute from a raw `(type, value)` pair (values being node ids).
    pub fn from_raw(type_: u32, value: u32) -> Self {
        use svm_attr::*;
        match type_ {
            PREFERRED_LOC => SvmAttr::PreferredLoc(if value == INVALID_NODEID {
                None
            } else {
                Some(value)
            }),
            PREFETCH_LOC => SvmAttr::PrefetchLoc(value),
            ACCESS => SvmAttr::Access(value),
            ACCESS_IN_PLACE => SvmAttr::AccessInPlace(value),
            NO_ACCESS => SvmAttr::NoAccess(value),
            SET_FLAGS => SvmAttr::SetFlags(SvmFlags::from_bits_retain(value)),
            CLR_FLAGS => SvmAttr::ClrFlags(SvmFlags::from_bits_retain(value)),
            GRANULARITY => SvmAttr::Granularity(value),
            _ => SvmAttr::Other { type_, value },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_flags_fields() {
        let f = MemFlags::HOST_ACCESS.with_cache_policy(CachePolicy::WriteCombined);
        assert_eq!(f.bits(), 0b100_0100);
        assert_eq!(f.cache_policy(), CachePolicy::WriteCombined);
        assert_eq!(MemFlags::empty().page_size(), 4096);
        assert_eq!(MemFlags::from_bits_retain(1 << 4).page_size(), 65536);
        assert_eq!(MemFlags::from_bits_retain(2 << 4).page_size(), 2 << 20);
        assert_eq!(MemFlags::from_bits_retain(3 << 4).page_size(), 1 << 30);
        // Unknown high bits survive a round trip through the C word.
        assert_eq!(MemFlags::from_bits_retain(1 << 30).bits(), 1 << 30);
    }

    #[test]
    fn translation_to_kernel_flags() {
        let ioc = hsa_to_ioc(MemFlags::AQL_QUEUE_MEMORY, true);
        assert!(ioc.contains(
            AllocMemFlags::AQL_QUEUE_MEM
                | AllocMemFlags::UNCACHED
                | AllocMemFlags::WRITABLE
                | AllocMemFlags::EXECUTABLE
        ));
        let ro = hsa_to_ioc(MemFlags::READ_ONLY, true);
        assert!(!ro.contains(AllocMemFlags::WRITABLE));
        assert!(ro.contains(AllocMemFlags::EXECUTABLE));
        // The newest rule: executable only with ExecuteAccess.
        assert!(!hsa_to_ioc(MemFlags::READ_ONLY, false).contains(AllocMemFlags::EXECUTABLE));
        let x = hsa_to_ioc(MemFlags::EXECUTE_ACCESS, false);
        assert!(x.contains(AllocMemFlags::EXECUTABLE | AllocMemFlags::WRITABLE));
        let back = ioc_to_hsa(AllocMemFlags::PUBLIC | AllocMemFlags::WRITABLE);
        assert_eq!(back, MemFlags::HOST_ACCESS | MemFlags::COARSE_GRAIN);
    }

    #[test]
    fn svm_attr_round_trip() {
        for a in [
            SvmAttr::PreferredLoc(None),
            SvmAttr::PreferredLoc(Some(1)),
            SvmAttr::PrefetchLoc(0),
            SvmAttr::Access(1),
            SvmAttr::AccessInPlace(1),
            SvmAttr::NoAccess(1),
            SvmAttr::SetFlags(SvmFlags::COHERENT),
            SvmAttr::ClrFlags(SvmFlags::GPU_RO),
            SvmAttr::Granularity(9),
            SvmAttr::Other {
                type_: 42,
                value: 7,
            },
        ] {
            let (t, v) = a.to_raw();
            assert_eq!(SvmAttr::from_raw(t, v), a);
        }
    }
}
