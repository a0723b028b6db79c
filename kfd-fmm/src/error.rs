//! The memory manager's error type.

use kfd_sys::ioctl::IoctlInfo;
use kfd_sys::Errno;

/// Why a memory-manager operation failed: the cause, with the errno and
/// the kernel request where the kernel refused.
///
/// Where one cause arises in different situations that callers tell
/// apart (an address this context does not know, when freeing it, when
/// mapping or sharing it, or when querying it), each situation is a
/// variant of its own ([`FmmError::NotRegistered`],
/// [`FmmError::NoSuchObject`], [`FmmError::UnknownPointer`]). Which C
/// status a failure becomes is the `hsakmt` border's decision.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FmmError {
    /// The node id is not a node of this context's topology.
    #[error("node {0} does not exist")]
    InvalidNode(u32),
    /// The node exists but the operation needs a GPU node (or a GPU-backed id).
    #[error("node {0} is not a GPU node")]
    NotAGpuNode(u32),
    /// An argument is out of range or malformed.
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
    /// The size is zero or not a multiple of the page size in use.
    #[error("size {size:#x} is zero or not a multiple of the page size {page:#x}")]
    BadSize {
        /// The size passed.
        size: u64,
        /// The page size it must be a multiple of.
        page: u64,
    },
    /// The alignment is below the page size or not a power of two.
    #[error("alignment {0:#x} is below the page size or not a power of two")]
    BadAlignment(u64),
    /// An address that must be page aligned is not.
    #[error("address {0:#x} is not page aligned")]
    UnalignedAddress(u64),
    /// Two flags that cannot be combined were both set.
    #[error("contradicting flags: {0}")]
    ConflictingFlags(&'static str),
    /// Free or deregister of an address this context did not allocate or
    /// register, including a second free of the same address.
    #[error("address {0:#x} is not allocated or registered in this context")]
    NotRegistered(u64),
    /// Free, unmap or deregister by address of memory that an RAII handle
    /// ([`crate::Buffer`]) owns: only the handle may release it (the
    /// caller did not allocate or register it through the address-based
    /// API).
    #[error("memory at {0:#x} is owned by a buffer handle; only its owner releases it")]
    OwnedByHandle(u64),
    /// Map, share or export of an address that is not (inside) an object
    /// of this context.
    #[error("no memory object of this context at {0:#x}")]
    NoSuchObject(u64),
    /// Pointer query, user data, or a node-list map on an address this
    /// context does not know.
    #[error("unknown pointer {0:#x}")]
    UnknownPointer(u64),
    /// The object is an address-only reservation or a handle-only
    /// allocation and cannot be mapped.
    #[error("object at {0:#x} has no memory or no address to map")]
    NotMappable(u64),
    /// A node to map to is not among the nodes the memory was registered to.
    #[error("node with gpu_id {0:#x} is not registered for this memory")]
    NodeNotRegistered(u32),
    /// Registration of an address inside memory that is not user memory
    /// (an allocation of this context).
    #[error("memory at {0:#x} is not user memory")]
    NotUserMemory(u64),
    /// The memory is already registered to a different set of nodes.
    #[error("memory at {0:#x} is already registered to other nodes")]
    AlreadyRegistered(u64),
    /// The range runs past the end of the object it starts in.
    #[error("range {addr:#x}+{size:#x} runs past the end of its object")]
    RangeOutsideObject {
        /// Start of the range.
        addr: u64,
        /// Size of the range.
        size: u64,
    },
    /// The context, device or kernel does not support the operation.
    #[error("not supported: {0}")]
    NotSupported(&'static str),
    /// The operation needs a newer KFD ioctl interface.
    #[error("needs KFD ioctl interface 1.{need}, kernel has 1.{have}")]
    KfdTooOld {
        /// Minimum minor version.
        need: u32,
        /// The kernel's minor version.
        have: u32,
    },
    /// The C library does not implement this either.
    #[error("not implemented: {0}")]
    NotImplemented(&'static str),
    /// No room for the request in an address space: the range is used up,
    /// a fixed range is taken or lies outside it, or the kernel would not
    /// reserve it.
    #[error("no room in the {aperture} address space")]
    NoAddressSpace {
        /// The address space asked.
        aperture: AddressSpace,
    },
    /// Scratch memory of a GPU asked for a second time: a GPU has one
    /// scratch backing range until it is freed.
    #[error("scratch memory of GPU {gpu_id:#x} is already allocated")]
    ScratchInUse {
        /// The GPU's gpu_id.
        gpu_id: u32,
    },
    /// An allocation larger than the address space (above
    /// [`crate::MAX_ALLOC_SIZE`]), refused before any size arithmetic.
    #[error("{kind} allocation larger than the virtual address space")]
    TooBig {
        /// The kind of memory asked for.
        kind: MemoryKind,
    },
    /// System memory of an APU (plain anonymous memory) asked with
    /// something only GPU objects have.
    #[error("APU system memory cannot have {0}")]
    ApuSystemMemory(&'static str),
    /// System memory asked for on a dGPU system without any GPU to make
    /// the buffer object through.
    #[error("no GPU to allocate system memory through")]
    NoGpu,
    /// `NoSubstitute` memory could not be bound to its NUMA node (no NUMA
    /// support, a node the machine lacks, `NoNUMABind`, or `mbind`
    /// refused).
    #[error("NoSubstitute memory cannot be bound to NUMA node {node}")]
    NumaBind {
        /// The node asked for.
        node: u32,
    },
    /// A share handle is malformed or from a stale exporter.
    #[error("invalid share handle: {0}")]
    BadShareHandle(&'static str),
    /// A null address (FreeMemory, MapMemoryToGPU*).
    #[error("null address")]
    NullAddress,
    /// The operation cannot be done on this object or in this state.
    #[error("failed: {0}")]
    Failed(&'static str),
    /// The kernel refused host-accessible VRAM on a GPU whose VRAM the
    /// topology reports as not host-visible (a small PCI BAR).
    #[error(
        "device memory allocation failed: {errno}: node {node}'s VRAM is not host-visible \
         (a small PCI BAR): allocate it without HOST_ACCESS and copy through system memory"
    )]
    VramNotHostVisible {
        /// The node asked for.
        node: u32,
        /// What the kernel said.
        errno: Errno,
    },
    /// The kernel refused to free memory that is still mapped to a GPU
    /// (`EBUSY` from `AMDKFD_IOC_FREE_MEMORY_OF_GPU`).
    #[error("memory at {0:#x} is still mapped to a GPU: unmap it before freeing it")]
    StillMapped(u64),
    /// The kernel (or mmap) refused to create a buffer.
    #[error("{} allocation failed: {errno}", if *.device { "device memory" } else { "system memory" })]
    AllocFailed {
        /// True for device memory (VRAM, scratch), false for system memory.
        device: bool,
        /// What the kernel (or mmap) said.
        errno: Errno,
    },
    /// A GPU's render node could not be opened.
    #[error("opening render node {minor} failed: {errno}")]
    RenderNode {
        /// The render minor.
        minor: u32,
        /// The errno.
        errno: Errno,
    },
    /// A kernel request failed.
    #[error("{request} failed: {errno}")]
    Ioctl {
        /// The request.
        request: IoctlInfo,
        /// What the kernel said.
        errno: Errno,
    },
    /// An mmap/munmap of device memory failed.
    #[error("{what} failed: {errno}")]
    Mmap {
        /// What was being mapped.
        what: &'static str,
        /// The errno.
        errno: Errno,
    },
}

/// The kind of memory an allocation asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryKind {
    /// VRAM (device memory).
    Device,
    /// System memory (GTT, userptr-backed or plain host memory).
    System,
    /// Scratch (device memory of a GPU's scratch aperture).
    Scratch,
}

impl std::fmt::Display for MemoryKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MemoryKind::Device => "device memory",
            MemoryKind::System => "system memory",
            MemoryKind::Scratch => "scratch memory",
        })
    }
}

/// An address space memory is placed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressSpace {
    /// The shared virtual address range of CPU and GPUs (system memory,
    /// and device memory of GPUs that address the whole range).
    Svm,
    /// A GPU's own GPUVM aperture (GPUs whose VM does not cover the
    /// canonical address range).
    Gpuvm,
    /// The range that names memory allocated without an address.
    MemHandle,
    /// The scratch backing range of a GPU.
    Scratch,
}

impl std::fmt::Display for AddressSpace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AddressSpace::Svm => "SVM",
            AddressSpace::Gpuvm => "GPUVM",
            AddressSpace::MemHandle => "memory-handle",
            AddressSpace::Scratch => "scratch",
        })
    }
}

impl FmmError {
    pub(crate) fn ioctl(request: IoctlInfo) -> impl FnOnce(Errno) -> FmmError {
        move |errno| FmmError::Ioctl { request, errno }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = FmmError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ioctl_error_names_its_request() {
        let e = FmmError::ioctl(kfd_sys::kfd::AMDKFD_IOC_FREE_MEMORY_OF_GPU.info())(Errno::EINVAL);
        assert_eq!(
            e.to_string(),
            "AMDKFD_IOC_FREE_MEMORY_OF_GPU failed: Invalid argument"
        );
        assert!(matches!(
            e,
            FmmError::Ioctl { request, .. }
                if request == kfd_sys::kfd::AMDKFD_IOC_FREE_MEMORY_OF_GPU.info()
        ));
    }
}
