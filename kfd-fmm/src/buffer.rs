//! RAII buffers.

use std::sync::Arc;

use kfd_sys::mapping::Mapping;
use kfd_sys::Errno;

use crate::error::{FmmError, Result};
use crate::flags::{MemFlags, MemMapFlags};
use crate::fmm::Fmm;

/// An allocation that is unmapped from GPUs and freed when dropped.
///
/// Built on the address-based calls of [`Fmm`]; holds the memory manager
/// alive through an `Arc`. [`Buffer::free`] releases it and returns the
/// error if the kernel refuses; a drop that fails records the error with
/// the memory manager ([`Fmm::take_drop_failures`]).
///
/// # Ownership
///
/// The memory manager marks the object as owned by this handle: the
/// address-based [`Fmm::free_memory`], [`Fmm::unmap_from_gpu`] and
/// [`Fmm::deregister_memory`] refuse it with [`FmmError::OwnedByHandle`]
/// (status `MEMORY_NOT_REGISTERED`), so the memory cannot go away, or be
/// replaced by another allocation, while the buffer points to it. Only
/// the buffer releases it ([`Buffer::unmap`], drop), unless
/// [`Buffer::into_raw`] hands it back to the address-based API.
///
/// # Concurrency
///
/// A `Buffer` is `Send` and `Sync`. [`Buffer::write`] and [`Buffer::read`]
/// take `&self` and copy through the buffer's CPU mapping
/// ([`kfd_sys::mapping::Mapping`]) with relaxed atomic accesses, one per
/// aligned 64-bit word, so calls racing on the same bytes from several
/// threads are not a data race (no undefined behaviour), but they are not
/// atomic as a whole: a read that races a write may see any mix of old
/// and new words. Order them with the usual tools (a lock, a channel, or
/// a release/acquire flag) when that matters. The GPU and other processes
/// that map the same memory are outside this model, as for any shared
/// memory; accesses through the CPU address ([`Buffer::cpu_address`])
/// must be atomic too to race with `read`/`write`.
#[derive(Debug)]
pub struct Buffer {
    fmm: Arc<Fmm>,
    addr: u64,
    size: u64,
    flags: MemFlags,
    /// The CPU mapping, when the CPU can read the buffer (shared with the
    /// memory manager's object; released before the object is freed).
    view: Option<Arc<Mapping>>,
    writable: bool,
    owned: bool,
    /// The kernel keeps the buffer ([`Buffer::mark_kernel_held`]).
    kernel_held: bool,
}

impl Fmm {
    /// Allocates a [`Buffer`] (see [`Fmm::alloc_memory_align`]).
    pub fn alloc_buffer(
        self: &Arc<Self>,
        node: u32,
        size: u64,
        align: u64,
        flags: MemFlags,
    ) -> Result<Buffer> {
        let addr = self.alloc_owned(node, size, align, flags)?;
        Ok(self.adopt(addr, size, flags))
    }

    /// Allocates the doorbell page(s) of a GPU as [`Fmm::alloc_doorbell`]
    /// does, held by a [`Buffer`]: only the buffer can unmap and free it.
    pub fn alloc_doorbell_buffer(
        self: &Arc<Self>,
        node: u32,
        size: u64,
        mmap_offset: u64,
    ) -> Result<Buffer> {
        let addr = self.doorbell_impl(node, size, mmap_offset, true)?;
        Ok(self.adopt(addr, size, MemFlags::NON_PAGED | MemFlags::HOST_ACCESS))
    }

    fn adopt(self: &Arc<Self>, addr: u64, size: u64, flags: MemFlags) -> Buffer {
        let (view, writable) = self.cpu_access(addr);
        Buffer {
            fmm: self.clone(),
            addr,
            size,
            flags,
            view,
            writable,
            owned: true,
            kernel_held: false,
        }
    }
}

impl Buffer {
    /// The (CPU and, except for userptrs, GPU) address.
    pub fn addr(&self) -> u64 {
        self.addr
    }

    /// The size requested.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The allocation flags.
    pub fn flags(&self) -> MemFlags {
        self.flags
    }

    /// The memory manager this buffer belongs to.
    pub fn fmm(&self) -> &Arc<Fmm> {
        &self.fmm
    }

    /// True when the CPU can read and write the buffer.
    pub fn is_cpu_accessible(&self) -> bool {
        self.view.is_some()
    }

    /// The address the CPU reaches the buffer at (to hand to a C API or
    /// the kernel), or `None` if the CPU cannot access it. This crate
    /// reads and writes it through [`Buffer::read`], [`Buffer::write`] and
    /// the word accessors; accesses through the address race with the GPU
    /// like any shared memory.
    pub fn cpu_address(&self) -> Option<u64> {
        self.view.as_ref().map(|_| self.addr)
    }

    /// The buffer's CPU mapping (for the kernel requests that write into
    /// it), or [`FmmError::NotSupported`] if the CPU cannot access it.
    pub fn mapping(&self) -> Result<&Mapping> {
        self.view
            .as_deref()
            .ok_or(FmmError::NotSupported("the CPU cannot access this buffer"))
    }

    /// Maps the buffer to all GPUs (or the ones it is registered to).
    pub fn map(&self) -> Result<u64> {
        self.fmm.map_to_gpu(self.addr, self.size)
    }

    /// Maps the buffer to exactly the GPUs of `nodes` (the alternate GPU
    /// VA as [`Fmm::map_to_gpu_nodes`] reports it).
    pub fn map_to_nodes(&self, nodes: &[u32]) -> Result<Option<u64>> {
        self.fmm
            .map_to_gpu_nodes(self.addr, self.size, nodes, MemMapFlags::empty())
    }

    /// Unmaps the buffer from every GPU.
    pub fn unmap(&self) -> Result<()> {
        self.fmm.unmap_as_owner(self.addr)
    }

    /// The mapping, after checking `[offset, offset + len)` against the
    /// buffer (`write`: and that the CPU may write it).
    fn check(&self, offset: u64, len: usize, write: bool) -> Result<&Mapping> {
        let view = self.mapping()?;
        if write && !self.writable {
            return Err(FmmError::NotSupported("the CPU mapping is read-only"));
        }
        if offset
            .checked_add(len as u64)
            .map_or(true, |end| end > self.size)
        {
            return Err(self.outside(offset, len as u64));
        }
        Ok(view)
    }

    fn outside(&self, offset: u64, len: u64) -> FmmError {
        FmmError::RangeOutsideObject {
            addr: self.addr.wrapping_add(offset),
            size: len,
        }
    }

    /// What a mapping's refusal means for the caller of `offset`/`len`.
    fn refused(&self, offset: u64, len: u64) -> impl FnOnce(Errno) -> FmmError + '_ {
        move |errno| match errno {
            Errno::EACCES => FmmError::NotSupported("the CPU mapping does not allow this access"),
            Errno::EINVAL => FmmError::UnalignedAddress(self.addr.wrapping_add(offset)),
            _ => self.outside(offset, len),
        }
    }

    /// Copies `data` into the buffer at `offset` (word-wise relaxed
    /// atomic stores: see the type's concurrency notes).
    pub fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        let view = self.check(offset, data.len(), true)?;
        let len = data.len() as u64;
        view.write(offset, data).map_err(self.refused(offset, len))
    }

    /// Copies from the buffer at `offset` into `out` (word-wise relaxed
    /// atomic loads: see the type's concurrency notes).
    pub fn read(&self, offset: u64, out: &mut [u8]) -> Result<()> {
        let view = self.check(offset, out.len(), false)?;
        let len = out.len() as u64;
        view.read(offset, out).map_err(self.refused(offset, len))
    }

    /// Reads the aligned 64-bit word at `offset` with one load (memory
    /// the GPU or the kernel writes, such as an event slot).
    pub fn load_u64(&self, offset: u64) -> Result<u64> {
        let view = self.check(offset, 8, false)?;
        view.load_u64(offset).map_err(self.refused(offset, 8))
    }

    /// Stores `v` at `offset` (4-byte aligned) with one release store:
    /// the header word of a packet, published after its body.
    pub fn store_u32(&self, offset: u64, v: u32) -> Result<()> {
        let view = self.check(offset, 4, true)?;
        view.store_u32(offset, v).map_err(self.refused(offset, 4))
    }

    /// The aligned 64-bit word at `offset` as an atomic (memory the GPU
    /// updates too: an HSA signal value, an AQL write index), for
    /// read-modify-write accesses. The buffer must be CPU writable;
    /// [`FmmError::UnalignedAddress`] unless `offset` is 8-byte aligned.
    pub fn atomic_u64(&self, offset: u64) -> Result<&std::sync::atomic::AtomicU64> {
        let view = self.check(offset, 8, true)?;
        view.atomic_u64(offset).map_err(self.refused(offset, 8))
    }

    /// Records that the kernel took the buffer for the rest of its
    /// process (the dGPU event page handed to `CREATE_EVENT`, which the
    /// kernel refuses to free): dropping the buffer then neither unmaps
    /// nor frees it; the memory manager gives back its address range at
    /// teardown ([`Fmm::mark_kernel_held`]).
    pub fn mark_kernel_held(&mut self) -> Result<()> {
        self.fmm.mark_kernel_held(self.addr)?;
        self.kernel_held = true;
        Ok(())
    }

    /// Gives up ownership without freeing; returns the address, which the
    /// address-based API ([`Fmm::free_memory`], ...) can release from now on.
    pub fn into_raw(mut self) -> u64 {
        self.owned = false;
        self.fmm.set_owned(self.addr, false);
        self.addr
    }
}

impl Buffer {
    /// Unmaps the buffer from every GPU and frees it, reporting what the
    /// drop would only record ([`Fmm::take_drop_failures`]). On failure
    /// the memory stays allocated and goes back to the address-based API
    /// ([`Fmm::free_memory`] can try again); memory the kernel holds
    /// ([`Buffer::mark_kernel_held`]) is left to the memory manager's
    /// teardown and is not an error.
    pub fn free(mut self) -> Result<()> {
        let r = self.release();
        self.owned = false;
        r
    }

    /// The release of [`Buffer::free`] and of the drop.
    fn release(&mut self) -> Result<()> {
        // The view goes first: the object's range is reserved again only
        // when its last mapping is gone.
        self.view = None;
        if !self.owned {
            return Ok(());
        }
        if self.kernel_held {
            self.fmm.set_owned(self.addr, false);
            return Ok(());
        }
        let unmapped = self.fmm.unmap_as_owner(self.addr);
        match self.fmm.free_as_owner(self.addr) {
            Ok(()) => unmapped,
            Err(e) => {
                self.fmm.set_owned(self.addr, false);
                Err(e)
            }
        }
    }
}

impl Drop for Buffer {
    /// Releases the buffer as [`Buffer::free`] does; a failure is recorded
    /// with the memory manager ([`Fmm::drop_failure_count`],
    /// [`Fmm::take_drop_failures`]), never dropped silently.
    fn drop(&mut self) {
        if let Err(error) = self.release() {
            self.fmm.note_drop_failure(self.addr, error);
        }
    }
}
