//! Memory: allocation, registration, GPU mapping, sharing, pointer info.

use std::ffi::c_void;
use std::os::fd::{BorrowedFd, IntoRawFd};
use std::ptr::addr_of_mut;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::MutexGuard;

use hsakmt_sys::common::{HsaGpuTileConfig, HsaMemoryRange, HsaSharedMemoryHandle};
use kfd_context::Context;
use kfd_fmm::{Fmm, MemFlags, PointerInfo, PointerNodes, ShareHandle};
use kfd_sys::sync::lock;

use crate::amdgpu::Owner;
use crate::border::{check_mut, read_in, slice_in, slice_mut, st, write_out, Kmt, KmtResult};
use crate::convert;
use crate::ctx::{self, HsaKFDContext};
use crate::generation::{self, abi};
use crate::profile::ProcessVm;
use crate::state::{self, MemoryState};

/// The registered and mapped node lists of one memory object as C reads
/// them through `HsaPointerInfo`: the C library keeps them with the
/// object, so a pointer it handed out stays valid as long as the object
/// lives; these do too.
///
/// They hold the lists of one generation of the object
/// ([`kfd_fmm::PointerInfo::generation`]); a query that finds a newer one
/// rewrites them in place (atomic stores: a C reader of an earlier answer
/// sees whole entries, never torn ones). A list longer than its array
/// gets a new array and the old one is kept until the object goes, so no
/// pointer handed out dangles while the object lives. Arrays have room
/// for every GPU from the start, so a mapping change keeps its array.
#[derive(Debug, Default)]
pub(crate) struct NodeArrays {
    /// The generation the lists are of (0: none yet).
    generation: u64,
    registered: NodeArray,
    mapped: NodeArray,
    retired: Vec<Box<[AtomicU32]>>,
}

/// One node list of [`NodeArrays`]: `len` entries at the start of `entries`.
#[derive(Debug, Default)]
struct NodeArray {
    entries: Box<[AtomicU32]>,
    len: usize,
}

impl NodeArray {
    /// Stores `nodes` (a larger array, of at least `room` entries,
    /// replaces the current one, which moves to `retired`).
    fn store(&mut self, nodes: &[u32], room: usize, retired: &mut Vec<Box<[AtomicU32]>>) {
        if nodes.len() > self.entries.len() {
            let bigger = (0..nodes.len().max(2 * self.entries.len()).max(room))
                .map(|_| AtomicU32::new(0))
                .collect();
            let old = std::mem::replace(&mut self.entries, bigger);
            if !old.is_empty() {
                retired.push(old);
            }
        }
        for (slot, &node) in self.entries.iter().zip(nodes) {
            slot.store(node, Ordering::Relaxed);
        }
        self.len = nodes.len();
    }

    /// The list for C: its first entry (NULL when empty) and its length.
    fn c_parts(&self) -> (*mut u32, u32) {
        if self.len == 0 {
            return (std::ptr::null_mut(), 0);
        }
        // `AtomicU32` has the size and alignment of `u32`; C only reads.
        (self.entries.as_ptr() as *mut u32, self.len as u32)
    }
}

impl NodeArrays {
    /// Rewrites the lists to those of `nodes`' generation (arrays made
    /// for `gpus` GPUs).
    fn store(&mut self, nodes: &PointerNodes, gpus: usize) {
        self.registered
            .store(&nodes.registered, gpus, &mut self.retired);
        self.mapped.store(&nodes.mapped, gpus, &mut self.retired);
        self.generation = nodes.info.generation;
    }
}

/// Puts the node lists into the C answer `out` of a query of `addr`
/// that found `object` at `generation` with a list that is not empty:
/// the lists are the context's [`NodeArrays`] of the object, rewritten
/// from the memory manager's lists only when the object's generation is
/// newer than theirs (then the whole answer is rewritten from that one
/// look at the object, which may have changed since).
///
/// # Safety
///
/// `out` is checked (non-NULL, aligned) and valid for a read and a
/// write of `abi::HsaPointerInfo` (an OUT argument already written).
unsafe fn put_node_arrays(
    c: &Context,
    fmm: &Fmm,
    addr: u64,
    (object, generation): (u64, u64),
    out: *mut abi::HsaPointerInfo,
) -> KmtResult {
    let kept = state::kept(c)?;
    // Kept for the next query of the object (`keep_lists`) under this
    // lock, which serialises the writers.
    let mut h = lock(&kept.memory);
    if let Some(a) = h.nodes.get(&object).filter(|a| a.generation == generation) {
        let lists = (a.registered.c_parts(), a.mapped.c_parts());
        keep_lists(kept, object, generation, lists);
        // SAFETY: the caller's contract.
        unsafe { write_lists(out, lists.0, lists.1) };
        return Ok(());
    }
    let nodes = fmm.pointer_nodes(addr).kmt()?;
    let a = h.nodes.entry(nodes.info.object).or_default();
    a.store(&nodes, fmm.gpu_ids().len());
    let lists = (a.registered.c_parts(), a.mapped.c_parts());
    keep_lists(kept, nodes.info.object, nodes.info.generation, lists);
    // SAFETY: the caller's contract.
    unsafe { put_pointer_info(out, &nodes.info, lists.0, lists.1) };
    Ok(())
}

/// Writes the whole C answer into `out`, field by field from registers.
/// (A value built on the stack and copied would be read back with wider
/// loads than the stores that made it, which the CPU cannot forward: a
/// stall per load on every query.)
///
/// # Safety
///
/// `out` is non-NULL, aligned and valid for a write of
/// `abi::HsaPointerInfo`.
#[inline(always)]
unsafe fn put_pointer_info(
    out: *mut abi::HsaPointerInfo,
    info: &PointerInfo,
    registered: CList,
    mapped: CList,
) {
    // SAFETY: the caller's contract; fields of a packed struct, written
    // unaligned.
    unsafe {
        addr_of_mut!((*out).Type)
            .write_unaligned(abi::HSA_POINTER_TYPE(convert::pointer_type(info.kind)));
        addr_of_mut!((*out).Node).write_unaligned(info.node);
        addr_of_mut!((*out).MemFlags).write_unaligned(abi::HsaMemFlags(info.mem_flags.bits()));
        addr_of_mut!((*out).CPUAddress).write_unaligned(info.cpu_address as usize as *mut c_void);
        addr_of_mut!((*out).GPUAddress).write_unaligned(info.gpu_address);
        addr_of_mut!((*out).SizeInBytes).write_unaligned(info.size);
        addr_of_mut!((*out).UserData).write_unaligned(info.user_data as usize as *mut c_void);
        write_lists(out, registered, mapped);
    }
}

/// A C node list: its first entry and its length.
type CList = (*mut u32, u32);

/// Keeps `lists` as those of `object` at `generation`, the object asked
/// about last, for [`last_lists`] (under the lock of the context's
/// memory state, which serialises the writers).
fn keep_lists(kept: &state::Kept, object: u64, generation: u64, lists: (CList, CList)) {
    let ((r, nr), (m, nm)) = lists;
    kept.last_nodes.write([
        object.wrapping_add(1),
        generation,
        r as usize as u64,
        u64::from(nr),
        m as usize as u64,
        u64::from(nm),
    ]);
}

/// The node lists of `object` if it was the object asked about last and
/// still has `generation` ([`keep_lists`]): read without the lock (a
/// buffer asked about again and again).
#[inline]
fn last_lists(kept: &state::Kept, object: u64, generation: u64) -> Option<(CList, CList)> {
    let [_, g, registered, n_registered, mapped, n_mapped] =
        kept.last_nodes.read_if(object.wrapping_add(1))?;
    (g == generation).then_some((
        (registered as usize as *mut u32, n_registered as u32),
        (mapped as usize as *mut u32, n_mapped as u32),
    ))
}

/// Writes the node lists (first entry and count of each) into the C
/// answer `out`.
///
/// # Safety
///
/// `out` is non-NULL, aligned and valid for a write of
/// `abi::HsaPointerInfo`.
#[inline(always)]
unsafe fn write_lists(
    out: *mut abi::HsaPointerInfo,
    (registered, n_registered): (*mut u32, u32),
    (mapped, n_mapped): (*mut u32, u32),
) {
    // SAFETY: the caller's contract; fields of a packed struct, written
    // unaligned.
    unsafe {
        addr_of_mut!((*out).NRegisteredNodes).write_unaligned(n_registered);
        addr_of_mut!((*out).NMappedNodes).write_unaligned(n_mapped);
        addr_of_mut!((*out).RegisteredNodes).write_unaligned(registered);
        addr_of_mut!((*out).MappedNodes).write_unaligned(mapped);
    }
}

/// The graphics metadata and node arrays this context keeps for C
/// ([`MemoryState`]).
fn held(c: &Context) -> KmtResult<MutexGuard<'_, MemoryState>> {
    Ok(lock(&state::kept(c)?.memory))
}

fn forget_object(c: &Context, addr: u64) {
    if let Ok(k) = state::kept(c) {
        let mut h = lock(&k.memory);
        h.metadata.remove(&addr);
        if h.nodes.remove(&addr).is_some() {
            // The lists of the last object asked about may be these.
            k.last_nodes.write([0; 6]);
        }
    }
}

/// The most node ids a `NumberOfNodes`/`NodeArray` pair may name: the C
/// library's `validate_nodeid_array` takes the count as a 32-bit value
/// (a larger one is truncated there: a multiple of 2^32 becomes 0 → 3,
/// anything else makes it read fewer ids than it later uses).
const MAX_NODE_IDS: u64 = u32::MAX as u64;

/// The node list of the `NumberOfNodes`/`NodeArray` pair (the C
/// library's `validate_nodeid_array`: 0 nodes or a NULL array → 3; so is
/// a count above [`MAX_NODE_IDS`], before the array is read).
///
/// # Safety
///
/// `nodes` must be valid for `n` reads when non-NULL and `n` is within
/// [`MAX_NODE_IDS`].
unsafe fn node_list<'a>(n: u64, nodes: *const u32) -> KmtResult<&'a [u32]> {
    if n == 0 || nodes.is_null() || n > MAX_NODE_IDS {
        return Err(st::INVALID_PARAMETER);
    }
    // SAFETY: forwarded contract; the count is checked against the limit.
    unsafe {
        slice_in(
            nodes,
            n as usize,
            MAX_NODE_IDS as usize,
            st::INVALID_PARAMETER,
        )
    }
}

/// As [`node_list`], but an absent list (0 and NULL) is no list.
///
/// # Safety
///
/// As [`node_list`].
unsafe fn optional_node_list<'a>(n: u64, nodes: *const u32) -> KmtResult<&'a [u32]> {
    if n == 0 && nodes.is_null() {
        Ok(&[])
    } else {
        // SAFETY: forwarded contract.
        unsafe { node_list(n, nodes) }
    }
}

/// The body of the AllocMemory functions, in the C library's order: the
/// memory manager's plan (its checks of the node, alignment and size: 5/3),
/// then the out-pointer (NULL → 3), which is read for `FixedAddress`
/// (NULL there → 3) and otherwise set to NULL before allocating, as C.
fn alloc(
    c: &Context,
    node: u32,
    size: u64,
    align: u64,
    flags: u32,
    out: *mut *mut c_void,
) -> KmtResult {
    let fmm = c.fmm().kmt()?;
    let flags = MemFlags::from_bits_retain(flags);
    let plan = fmm.plan_alloc(node, size, align, flags).kmt()?;
    let out = check_mut(out, st::INVALID_PARAMETER)?;
    let fixed = if flags.contains(MemFlags::FIXED_ADDRESS) {
        // SAFETY: checked non-NULL and aligned; IN/OUT argument.
        let a = unsafe { out.read() } as u64;
        if a == 0 {
            return Err(st::INVALID_PARAMETER);
        }
        Some(a)
    } else {
        // SAFETY: as above; C clears the OUT value before allocating.
        unsafe { out.write(std::ptr::null_mut()) };
        None
    };
    let addr = fmm
        .alloc_planned(&plan, fixed)
        .kmt_as(crate::status::memory::alloc(plan.kind()))?;
    // SAFETY: checked above; IN/OUT argument.
    unsafe { write_out(out, addr as usize as *mut c_void, st::INVALID_PARAMETER) }
}

export! {
    /// `hsaKmtSetMemoryPolicyCtx`: Kaveri only; other GPUs → 10 (as C).
    ctx fn hsaKmtSetMemoryPolicyCtx(ctx: *mut HsaKFDContext, Node: u32, DefaultPolicy: u32, AlternatePolicy: u32, MemoryAddressAlternate: *mut c_void, MemorySizeInBytes: u64) {
        let c = ctx::resolve(ctx)?;
        c.fmm().kmt()?.set_memory_policy(Node, DefaultPolicy, AlternatePolicy, MemoryAddressAlternate as u64, MemorySizeInBytes).kmt()
    }

    /// `hsaKmtAllocMemoryCtx`: 20 first (even for a NULL out-pointer);
    /// bad node → 5, bad size → 3; then NULL `MemoryAddress` → 3;
    /// FixedAddress with `*MemoryAddress == NULL` → 3; then the memory
    /// manager's other checks.
    ctx fn hsaKmtAllocMemoryCtx(ctx: *mut HsaKFDContext, PreferredNode: u32, SizeInBytes: u64, MemFlags: abi::HsaMemFlags, MemoryAddress: *mut *mut c_void) {
        let c = ctx::resolve(ctx)?;
        alloc(&c, PreferredNode, SizeInBytes, 0, MemFlags.0, MemoryAddress)
    }

    /// `hsaKmtAllocMemoryAlignCtx`: as [`hsaKmtAllocMemoryCtx`] with an
    /// alignment (0, or a power of two of at least a page).
    ctx fn hsaKmtAllocMemoryAlignCtx(ctx: *mut HsaKFDContext, PreferredNode: u32, SizeInBytes: u64, Alignment: u64, MemFlags: abi::HsaMemFlags, MemoryAddress: *mut *mut c_void) {
        let c = ctx::resolve(ctx)?;
        alloc(&c, PreferredNode, SizeInBytes, Alignment, MemFlags.0, MemoryAddress)
    }

    /// `hsaKmtAllocMemoryHostGttCtx`: system memory on CPU node
    /// `PreferredNode` as a GTT buffer of GPU node `GttAnchorNode`
    /// ([`kfd_fmm::Fmm::alloc_host_gtt`]). Upstream declares it in
    /// hsakmt.h without defining or exporting it, so the statuses follow
    /// `hsaKmtAllocMemory`'s: a bad node (or a GPU as `PreferredNode`, a
    /// CPU as the anchor) → 5, bad size or VRAM-only flags → 3, NULL
    /// `MemoryAddress` → 3 (after the node and size checks), no memory →
    /// 6.
    ctx fn hsaKmtAllocMemoryHostGttCtx(ctx: *mut HsaKFDContext, PreferredNode: u32, GttAnchorNode: u32, SizeInBytes: u64, MemFlags: abi::HsaMemFlags, MemoryAddress: *mut *mut c_void) {
        let c = ctx::resolve(ctx)?;
        let fmm = c.fmm().kmt()?;
        let flags = kfd_fmm::MemFlags::from_bits_retain(MemFlags.0);
        let plan = fmm.plan_alloc(PreferredNode, SizeInBytes, 0, flags).kmt()?;
        let out = check_mut(MemoryAddress, st::INVALID_PARAMETER)?;
        // SAFETY: checked non-NULL and aligned; an OUT argument, cleared
        // first as hsaKmtAllocMemory clears it.
        unsafe { out.write(std::ptr::null_mut()) };
        let addr = fmm
            .alloc_host_gtt_planned(&plan, GttAnchorNode)
            .kmt_as(crate::status::memory::alloc(kfd_fmm::MemoryKind::System))?;
        // SAFETY: as above.
        unsafe { write_out(out, addr as usize as *mut c_void, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtFreeMemoryCtx`: NULL → 1; unknown address → 36 (0 when the
    /// context uses the SVM API), as C.
    ctx fn hsaKmtFreeMemoryCtx(ctx: *mut HsaKFDContext, MemoryAddress: *mut c_void, SizeInBytes: u64) {
        let _ = SizeInBytes;
        let c = ctx::resolve(ctx)?;
        c.fmm().kmt()?.free_memory(MemoryAddress as u64).kmt()?;
        forget_object(&c, MemoryAddress as u64);
        Ok(())
    }

    /// `hsaKmtAvailableMemoryCtx`: VRAM still available on `Node`. 20;
    /// KFD < 1.9 → 11; no snapshot or unknown node → 5; the request
    /// failing (a CPU node: gpu_id 0) → 1. A NULL `AvailableBytes` → 3
    /// before the request (C writes through it after the request).
    ctx fn hsaKmtAvailableMemoryCtx(ctx: *mut HsaKFDContext, Node: u32, AvailableBytes: *mut u64) {
        let c = ctx::resolve(ctx)?;
        c.require_minor(9).kmt()?;
        crate::topology::validate_node(&c, Node)?;
        check_mut(AvailableBytes, st::INVALID_PARAMETER)?;
        let n = c.fmm().kmt()?.available_memory(Node).kmt()?;
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(AvailableBytes, n, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtRegisterMemoryCtx`.
    ctx fn hsaKmtRegisterMemoryCtx(ctx: *mut HsaKFDContext, MemoryAddress: *mut c_void, MemorySizeInBytes: u64) {
        let c = ctx::resolve(ctx)?;
        c.fmm().kmt()?.register_memory(MemoryAddress as u64, MemorySizeInBytes).kmt()
    }

    /// `hsaKmtRegisterMemoryToNodesCtx`: node list checks → 3/5.
    ctx fn hsaKmtRegisterMemoryToNodesCtx(ctx: *mut HsaKFDContext, MemoryAddress: *mut c_void, MemorySizeInBytes: u64, NumberOfNodes: u64, NodeArray: *mut u32) {
        let c = ctx::resolve(ctx)?;
        // SAFETY: the C contract: `NodeArray` holds `NumberOfNodes` ids.
        let nodes = unsafe { node_list(NumberOfNodes, NodeArray) }?;
        c.fmm().kmt()?.register_memory_to_nodes(MemoryAddress as u64, MemorySizeInBytes, nodes).kmt()
    }

    /// `hsaKmtRegisterMemoryWithFlagsCtx`.
    ctx fn hsaKmtRegisterMemoryWithFlagsCtx(ctx: *mut HsaKFDContext, MemoryAddress: *mut c_void, MemorySizeInBytes: u64, MemFlags: abi::HsaMemFlags) {
        let c = ctx::resolve(ctx)?;
        c.fmm().kmt()?.register_memory_with_flags(MemoryAddress as u64, MemorySizeInBytes, kfd_fmm::MemFlags::from_bits_retain(MemFlags.0)).kmt()
    }

    /// `hsaKmtRegisterGraphicsHandleToNodesCtx`: `GraphicsResourceHandle`
    /// is a dma-buf descriptor. NULL info → 3; node list checks when a
    /// list is given.
    ctx fn hsaKmtRegisterGraphicsHandleToNodesCtx(ctx: *mut HsaKFDContext, GraphicsResourceHandle: u64, GraphicsResourceInfo: *mut abi::HsaGraphicsResourceInfo, NumberOfNodes: u64, NodeArray: *mut u32) {
        let c = ctx::resolve(ctx)?;
        register_graphics(&c, GraphicsResourceHandle, GraphicsResourceInfo, NumberOfNodes, NodeArray)
    }

    /// `hsaKmtRegisterGraphicsHandleToNodesExtCtx`: as the non-Ext form;
    /// the registration flags are accepted and ignored.
    ctx fn hsaKmtRegisterGraphicsHandleToNodesExtCtx(ctx: *mut HsaKFDContext, GraphicsResourceHandle: u64, GraphicsResourceInfo: *mut abi::HsaGraphicsResourceInfo, NumberOfNodes: u64, NodeArray: *mut u32, RegisterFlags: u32) {
        let _ = RegisterFlags;
        let c = ctx::resolve(ctx)?;
        register_graphics(&c, GraphicsResourceHandle, GraphicsResourceInfo, NumberOfNodes, NodeArray)
    }

    /// `hsaKmtExportDMABufHandleCtx`: a dma-buf of the allocation that
    /// holds `[MemoryAddress, +MemorySizeInBytes)` and the offset in it.
    ctx fn hsaKmtExportDMABufHandleCtx(ctx: *mut HsaKFDContext, MemoryAddress: *mut c_void, MemorySizeInBytes: u64, DMABufFd: *mut i32, Offset: *mut u64) {
        let c = ctx::resolve(ctx)?;
        check_mut(DMABufFd, st::INVALID_PARAMETER)?;
        check_mut(Offset, st::INVALID_PARAMETER)?;
        let (fd, off) = c.fmm().kmt()?.export_dmabuf(MemoryAddress as u64, MemorySizeInBytes).kmt()?;
        // SAFETY: both checked above; OUT arguments. The descriptor is
        // handed to the caller, who closes it.
        unsafe {
            write_out(Offset, off, st::INVALID_PARAMETER)?;
            write_out(DMABufFd, fd.into_raw_fd(), st::INVALID_PARAMETER)
        }
    }

    /// `hsaKmtShareMemoryCtx`: NULL handle → 3; unknown address → 3.
    ctx fn hsaKmtShareMemoryCtx(ctx: *mut HsaKFDContext, MemoryAddress: *mut c_void, SizeInBytes: u64, SharedMemoryHandle: *mut HsaSharedMemoryHandle) {
        let c = ctx::resolve(ctx)?;
        check_mut(SharedMemoryHandle, st::INVALID_PARAMETER)?;
        let h = c.fmm().kmt()?.share_memory(MemoryAddress as u64, SizeInBytes).kmt()?;
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(SharedMemoryHandle, h.0, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtRegisterSharedHandleCtx`: NULL handle or outputs → 3.
    ctx fn hsaKmtRegisterSharedHandleCtx(ctx: *mut HsaKFDContext, SharedMemoryHandle: *const HsaSharedMemoryHandle, MemoryAddress: *mut *mut c_void, SizeInBytes: *mut u64) {
        let c = ctx::resolve(ctx)?;
        register_shared(&c, SharedMemoryHandle, MemoryAddress, SizeInBytes, &[])
    }

    /// `hsaKmtRegisterSharedHandleToNodesCtx`: as above, mapped to the
    /// given nodes only.
    ctx fn hsaKmtRegisterSharedHandleToNodesCtx(ctx: *mut HsaKFDContext, SharedMemoryHandle: *const HsaSharedMemoryHandle, MemoryAddress: *mut *mut c_void, SizeInBytes: *mut u64, NumberOfNodes: u64, NodeArray: *mut u32) {
        let c = ctx::resolve(ctx)?;
        // SAFETY: the C contract: `NodeArray` holds `NumberOfNodes` ids.
        let nodes = unsafe { optional_node_list(NumberOfNodes, NodeArray) }?;
        register_shared(&c, SharedMemoryHandle, MemoryAddress, SizeInBytes, nodes)
    }

    /// `hsaKmtDeregisterMemoryCtx`: unknown address → 36 (0 with the SVM
    /// API), as C.
    ctx fn hsaKmtDeregisterMemoryCtx(ctx: *mut HsaKFDContext, MemoryAddress: *mut c_void) {
        let c = ctx::resolve(ctx)?;
        let fmm = c.fmm().kmt()?;
        let addr = MemoryAddress as u64;
        // A user pointer's object starts at its GPU address, not here.
        let object = fmm.pointer_info(addr).map(|i| i.object);
        fmm.deregister_memory(addr).kmt()?;
        forget_object(&c, addr);
        // Only once the object is gone (it stays while other
        // registrations of the range remain).
        if let Ok(object) = object {
            if object != addr && fmm.pointer_info(object).is_err() {
                forget_object(&c, object);
            }
        }
        Ok(())
    }

    /// `hsaKmtMapMemoryToGPUCtx`: NULL → 1; unknown address → 3 (5.2.3
    /// turns every nonzero `fmm_map_to_gpu` result into ERROR:
    /// [`crate::profile::Border::map_failures_are_errors`]). `AlternateVAGPU` may
    /// be NULL.
    ctx fn hsaKmtMapMemoryToGPUCtx(ctx: *mut HsaKFDContext, MemoryAddress: *mut c_void, MemorySizeInBytes: u64, AlternateVAGPU: *mut u64) {
        let c = ctx::resolve(ctx)?;
        if !AlternateVAGPU.is_null() {
            check_mut(AlternateVAGPU, st::INVALID_PARAMETER)?;
        }
        let alt = c
            .fmm()
            .kmt()?
            .map_to_gpu(MemoryAddress as u64, MemorySizeInBytes)
            .kmt_as(crate::status::memory::map_to_gpu)?;
        if !AlternateVAGPU.is_null() {
            // SAFETY: checked non-NULL and aligned above; an OUT argument.
            unsafe { write_out(AlternateVAGPU, alt, st::INVALID_PARAMETER)? };
        }
        Ok(())
    }

    /// `hsaKmtMapMemoryToGPUNodesCtx`: NULL address → 1 (5.2.3 checks
    /// that before the open check, and so does the 5.2 build); node list
    /// checks → 3/5. The map flags are decoded per ABI and, as in C,
    /// ignored. `AlternateVAGPU` (optional) is written only where C
    /// writes it: for a userptr, and on an APU mapping to one node.
    ctx fn hsaKmtMapMemoryToGPUNodesCtx(ctx: *mut HsaKFDContext, MemoryAddress: *mut c_void, MemorySizeInBytes: u64, AlternateVAGPU: *mut u64, MemMapFlags: generation::MapFlagsArg, NumberOfNodes: u64, NodeArray: *mut u32) {
        if generation::PROFILE.border.map_nodes_null_before_open && MemoryAddress.is_null() {
            return Err(st::ERROR);
        }
        let c = ctx::resolve(ctx)?;
        if MemoryAddress.is_null() {
            return Err(st::ERROR);
        }
        // SAFETY: the C contract: `NodeArray` holds `NumberOfNodes` ids.
        let nodes = unsafe { node_list(NumberOfNodes, NodeArray) }?;
        let alt = c.fmm().kmt()?.map_to_gpu_nodes(MemoryAddress as u64, MemorySizeInBytes, nodes, generation::map_flags(MemMapFlags)).kmt()?;
        match alt {
            // SAFETY: an OUT argument; checked by `write_out`.
            Some(va) if !AlternateVAGPU.is_null() => unsafe { write_out(AlternateVAGPU, va, st::INVALID_PARAMETER) },
            _ => Ok(()),
        }
    }

    /// `hsaKmtUnmapMemoryToGPUCtx`: NULL is a no-op success, as C.
    ctx fn hsaKmtUnmapMemoryToGPUCtx(ctx: *mut HsaKFDContext, MemoryAddress: *mut c_void) {
        let c = ctx::resolve(ctx)?;
        c.fmm().kmt()?.unmap_from_gpu(MemoryAddress as u64).kmt()
    }

    /// `hsaKmtUnmapGraphicHandleCtx`: as [`hsaKmtUnmapMemoryToGPUCtx`].
    ctx fn hsaKmtUnmapGraphicHandleCtx(ctx: *mut HsaKFDContext, NodeId: u32, FlatMemoryAddress: u64, SizeInBytes: u64) {
        let _ = (NodeId, SizeInBytes);
        let c = ctx::resolve(ctx)?;
        c.fmm().kmt()?.unmap_from_gpu(FlatMemoryAddress).kmt()
    }

    /// `hsaKmtGetAMDGPUDeviceHandleCtx`: the device handle of a GPU node
    /// (see [`crate::amdgpu`]: an opaque token of ours, not a
    /// libdrm_amdgpu device). 20; no snapshot (before the acquire, after
    /// the release: the C library's GPU list lives as long), an unknown
    /// or CPU node → 5; a GPU without an open render node → 4. A NULL
    /// `DeviceHandle` → 3 (C writes through it).
    ctx fn hsaKmtGetAMDGPUDeviceHandleCtx(ctx: *mut HsaKFDContext, NodeId: u32, DeviceHandle: *mut *mut c_void) {
        let c = ctx::resolve(ctx)?;
        let topo = c.topology().kmt()?;
        let node = topo.node(NodeId).filter(|n| n.is_gpu()).ok_or(st::INVALID_NODE_UNIT)?;
        check_mut(DeviceHandle, st::INVALID_PARAMETER)?;
        c.fmm().kmt()?.render_node(node.gpu_id).ok_or(st::INVALID_HANDLE)?;
        let owner = if c.is_primary() { Owner::Primary } else { Owner::Secondary(c.id()) };
        let h = crate::amdgpu::handle(owner, node.properties.drm_render_minor).ok_or(st::NO_MEMORY)?;
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(DeviceHandle, h, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtGetTileConfigCtx`: bad node (or no snapshot) → 5; the
    /// caller's arrays are zeroed, then filled by GET_TILE_CONFIG (a
    /// failing ioctl, e.g. on a CPU node → 1). 5.2.3 has no open check:
    /// with KFD closed it fails the node check (5); 6.2.4 and the newest
    /// library check first (20).
    ctx fn hsaKmtGetTileConfigCtx(ctx: *mut HsaKFDContext, NodeId: u32, config: *mut HsaGpuTileConfig) {
        let c = ctx::resolve_unless(ctx, generation::PROFILE.border.unchecked.tile_config, st::INVALID_NODE_UNIT)?;
        let topo = c.topology().kmt()?;
        let gpu_id = topo.validate_node(NodeId).map_err(|_| st::INVALID_NODE_UNIT)?;
        let cfg = check_mut(config, st::INVALID_PARAMETER)?;
        // SAFETY: checked non-NULL and aligned; IN/OUT argument.
        let mut tc = unsafe { cfg.read() };
        let (nt, nm) = (tc.NumTileConfigs as usize, tc.NumMacroTileConfigs as usize);
        // SAFETY: the C contract: the arrays hold NumTileConfigs and
        // NumMacroTileConfigs entries, not otherwise accessed meanwhile.
        // Each is zeroed once checked, as the C library does.
        let tiles = unsafe { slice_mut(tc.TileConfig, nt, usize::MAX, st::INVALID_PARAMETER) }?;
        tiles.fill(0);
        // SAFETY: as above.
        let macros = unsafe { slice_mut(tc.MacroTileConfig, nm, usize::MAX, st::INVALID_PARAMETER) }?;
        macros.fill(0);
        // Any failure of the request (a CPU node among them) → ERROR.
        let args = c.tile_config(gpu_id, tiles, macros).map_err(|_| st::ERROR)?;
        tc.NumTileConfigs = args.num_tile_configs;
        tc.NumMacroTileConfigs = args.num_macro_tile_configs;
        tc.GbAddrConfig = args.gb_addr_config;
        tc.NumBanks = args.num_banks;
        tc.NumRanks = args.num_ranks;
        // SAFETY: checked above.
        unsafe { write_out(cfg, tc, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtQueryPointerInfoCtx`: NULL info → 3; unknown pointer → 1.
    /// The node arrays (kept in the context's border state) stay valid
    /// until the object is freed or deregistered, or the context closes;
    /// an empty list is NULL, and an object with no list takes no lock of the border.
    /// 5.2.3 has no open check: NULL info → 3, then with KFD closed no
    /// pointer is known → 1.
    ctx fn hsaKmtQueryPointerInfoCtx(ctx: *mut HsaKFDContext, Pointer: *const c_void, PointerInfo: *mut abi::HsaPointerInfo) {
        let unchecked = generation::PROFILE.border.unchecked.pointer_info;
        if unchecked {
            check_mut(PointerInfo, st::INVALID_PARAMETER)?;
        }
        let c = ctx::resolve_unless(ctx, unchecked, st::ERROR)?;
        let out = check_mut(PointerInfo, st::INVALID_PARAMETER)?;
        let fmm = c.fmm().kmt()?;
        let addr = Pointer as u64;
        let info = fmm.pointer_info(addr).kmt()?;
        let none = (std::ptr::null_mut(), 0);
        let has_lists = info.registered_count != 0 || info.mapped_count != 0;
        // The whole answer in one write: without lists, or with the
        // lists kept for the object asked about last.
        let lists = if has_lists {
            last_lists(state::kept(&c)?, info.object, info.generation)
        } else {
            Some((none, none))
        };
        if let Some((registered, mapped)) = lists {
            // SAFETY: checked above; an OUT argument.
            unsafe { put_pointer_info(out, &info, registered, mapped) };
            return Ok(());
        }
        // Else the answer without lists, then the arrays of its
        // generation (made, or found under the lock).
        // SAFETY: checked above; an OUT argument.
        unsafe { put_pointer_info(out, &info, none, none) };
        // SAFETY: checked and written above.
        unsafe { put_node_arrays(&c, fmm, addr, (info.object, info.generation), out) }
    }

    /// `hsaKmtSetMemoryUserDataCtx`: unknown pointer → 1 (5.2.3 has no
    /// open check: with KFD closed no pointer is known → 1).
    ctx fn hsaKmtSetMemoryUserDataCtx(ctx: *mut HsaKFDContext, Pointer: *const c_void, UserData: *mut c_void) {
        let c = ctx::resolve_unless(ctx, generation::PROFILE.border.unchecked.pointer_info, st::ERROR)?;
        c.fmm().kmt()?.set_user_data(Pointer as u64, UserData as u64).kmt()
    }

    /// `hsaKmtReplaceAsanHeaderPageCtx`: the C library implements it only
    /// when built with AMD's GPU address sanitizer (`SANITIZER_AMDGPU`);
    /// every other build, Debian's 6.2.4 among them, returns
    /// `NOT_SUPPORTED` without any check (not even the open check). This
    /// library is such a build.
    ctx fn hsaKmtReplaceAsanHeaderPageCtx(ctx: *mut HsaKFDContext, addr: *mut c_void) {
        let _ = (ctx, addr);
        Err(st::NOT_SUPPORTED)
    }

    /// `hsaKmtReturnAsanHeaderPageCtx`: as
    /// [`hsaKmtReplaceAsanHeaderPageCtx`], `NOT_SUPPORTED` with no check.
    ctx fn hsaKmtReturnAsanHeaderPageCtx(ctx: *mut HsaKFDContext, addr: *mut c_void) {
        let _ = (ctx, addr);
        Err(st::NOT_SUPPORTED)
    }

    /// `hsaKmtMapGraphicHandle`: always `NOT_IMPLEMENTED`, as C.
    all fn hsaKmtMapGraphicHandle(NodeId: u32, GraphicDeviceHandle: u64, GraphicResourceHandle: u64, GraphicResourceOffset: u64, GraphicResourceSize: u64, FlatMemoryAddress: *mut u64) {
        let _ = (NodeId, GraphicDeviceHandle, GraphicResourceHandle, GraphicResourceOffset, GraphicResourceSize, FlatMemoryAddress);
        Err(st::NOT_IMPLEMENTED)
    }

    /// `hsaKmtProcessVMRead`: `NOT_IMPLEMENTED` touching nothing (6.2.4
    /// and the newest library), or what 5.2.3 does
    /// ([`ProcessVm::CrossMemoryCopy`]): NULL arrays or zero counts → 1; then the ROCm-only
    /// AMDKFD_IOC_CROSS_MEMORY_COPY (0x83), remote ranges to local ones;
    /// any failure (upstream kernels lack the request; KFD closed) → 1;
    /// `*SizeCopied` gets the kernel's byte count.
    all fn hsaKmtProcessVMRead(Pid: u32, LocalMemoryArray: *mut HsaMemoryRange, LocalMemoryArrayCount: u64, RemoteMemoryArray: *mut HsaMemoryRange, RemoteMemoryArrayCount: u64, SizeCopied: *mut u64) {
        // SAFETY: the C contract for both arrays and the OUT pointer.
        unsafe { process_vm(Pid, false, (LocalMemoryArray, LocalMemoryArrayCount), (RemoteMemoryArray, RemoteMemoryArrayCount), SizeCopied) }
    }

    /// `hsaKmtProcessVMWrite`: as [`hsaKmtProcessVMRead`], local ranges to
    /// remote ones; 5.2.3 zeroes `*SizeCopied` first.
    all fn hsaKmtProcessVMWrite(Pid: u32, LocalMemoryArray: *mut HsaMemoryRange, LocalMemoryArrayCount: u64, RemoteMemoryArray: *mut HsaMemoryRange, RemoteMemoryArrayCount: u64, SizeCopied: *mut u64) {
        // SAFETY: the C contract for both arrays and the OUT pointer.
        unsafe { process_vm(Pid, true, (LocalMemoryArray, LocalMemoryArrayCount), (RemoteMemoryArray, RemoteMemoryArrayCount), SizeCopied) }
    }

    /// `hsaKmtAisReadWriteFile` (direct file I/O between a file and GPU
    /// memory): `NOT_SUPPORTED`. Its kernel request,
    /// `AMDKFD_IOC_AIS_OP` (0x87), exists only in AMD's out-of-tree
    /// amdgpu-dkms driver, not in Linux nor in the simulator; the C
    /// library's own non-DKMS builds (WSL) return the same.
    newest fn hsaKmtAisReadWriteFile(MemoryAddress: *mut c_void, MemorySizeInBytes: u64, fd: i32, file_offset: i64, AisFlags: u32, SizeCopiedInBytes: *mut u64, status: *mut i32) {
        let _ = (MemoryAddress, MemorySizeInBytes, fd, file_offset, AisFlags, SizeCopiedInBytes, status);
        Err(st::NOT_SUPPORTED)
    }
}

/// The body of `hsaKmtProcessVMRead` (`write == false`) and
/// `hsaKmtProcessVMWrite`. As 5.2.3, the caller's range arrays go to the
/// kernel as they are (`HsaMemoryRange` has the layout of
/// `struct kfd_memory_range`): the library neither reads them nor
/// allocates by their counts; the kernel copies in what it needs (or
/// fails with EFAULT).
///
/// # Safety
///
/// `copied`, when non-NULL and aligned, is valid for a write.
unsafe fn process_vm(
    pid: u32,
    write: bool,
    local: (*mut HsaMemoryRange, u64),
    remote: (*mut HsaMemoryRange, u64),
    copied: *mut u64,
) -> KmtResult {
    if generation::PROFILE.border.process_vm == ProcessVm::NotImplemented {
        return Err(st::NOT_IMPLEMENTED);
    }
    if write && !copied.is_null() {
        // SAFETY: forwarded contract (checked by `write_out`).
        unsafe { write_out(copied, 0, st::ERROR)? };
    }
    if local.0.is_null() || remote.0.is_null() || local.1 == 0 || remote.1 == 0 {
        return Err(st::ERROR);
    }
    const _: () = assert!(
        std::mem::size_of::<HsaMemoryRange>()
            == std::mem::size_of::<kfd_sys::kfd::kfd_memory_range>()
    );
    let (src, dst) = if write {
        (local, remote)
    } else {
        (remote, local)
    };
    // Without an open KFD 5.2.3 issues the request on descriptor 0, which
    // fails.
    let c = ctx::resolve_unless(ctx::primary_ptr(), true, st::ERROR)?;
    // SAFETY: the two arrays are the caller's, announced with the caller's
    // counts, as the C library passes them; the kernel copies them in
    // with its own checks (EFAULT for memory it cannot read) and reads
    // and writes the ranges they name, which the API lets it do.
    let done = unsafe {
        kfd_sys::memory::cross_memory_copy(
            c.kfd(),
            pid,
            write,
            (src.0 as u64, src.1),
            (dst.0 as u64, dst.1),
        )
    };
    if !copied.is_null() {
        // SAFETY: forwarded contract (checked by `write_out`).
        unsafe { write_out(copied, done.bytes_copied, st::ERROR)? };
    }
    done.result.map_err(|_| st::ERROR)
}

fn register_graphics(
    c: &Context,
    handle: u64,
    info: *mut abi::HsaGraphicsResourceInfo,
    n: u64,
    nodes: *mut u32,
) -> KmtResult {
    let info = check_mut(info, st::INVALID_PARAMETER)?;
    // 5.2.3 validates the node list whatever it is (0 nodes or NULL → 3);
    // 6.2.4 and the newest library only a list that is given.
    let nodes = if generation::PROFILE.border.graphics_node_list_required {
        // SAFETY: the C contract: `NodeArray` holds `NumberOfNodes` ids.
        unsafe { node_list(n, nodes) }?
    } else {
        // SAFETY: as above.
        unsafe { optional_node_list(n, nodes) }?
    };
    // A value that is no descriptor fails GET_DMABUF_INFO in the kernel
    // (EBADF), which the C library reports as ERROR.
    let fd = i32::try_from(handle).map_err(|_| st::ERROR)?;
    if fd < 0 {
        return Err(st::ERROR);
    }
    // SAFETY: the handle is a dma-buf descriptor the caller owns and keeps
    // open for the duration of the call (the API's contract); it is only
    // borrowed here.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    let g = c.fmm().kmt()?.register_graphics_handle(fd, nodes).kmt()?;
    let meta: Box<[u8]> = g.metadata.clone().into_boxed_slice();
    // SAFETY: checked above; an OUT argument (read for this generation's
    // size, then written back field by field).
    let mut out = unsafe { info.read() };
    generation::store_graphics_info(&g, meta.as_ptr(), &mut out);
    held(c)?.metadata.insert(g.address, meta);
    // SAFETY: as above.
    unsafe { write_out(info, out, st::INVALID_PARAMETER) }
}

fn register_shared(
    c: &Context,
    handle: *const HsaSharedMemoryHandle,
    addr: *mut *mut c_void,
    size: *mut u64,
    nodes: &[u32],
) -> KmtResult {
    // SAFETY: an IN argument; checked by `read_in`.
    let h = unsafe { read_in(handle, st::INVALID_PARAMETER) }?;
    check_mut(addr, st::INVALID_PARAMETER)?;
    check_mut(size, st::INVALID_PARAMETER)?;
    let (a, s) = c
        .fmm()
        .kmt()?
        .register_shared_handle(&ShareHandle(h), nodes)
        .kmt()?;
    // SAFETY: both checked above; OUT arguments.
    unsafe {
        write_out(addr, a as usize as *mut c_void, st::INVALID_PARAMETER)?;
        write_out(size, s, st::INVALID_PARAMETER)
    }
}

forward! {
    /// `hsaKmtSetMemoryPolicy`.
    all fn hsaKmtSetMemoryPolicy(Node: u32, DefaultPolicy: u32, AlternatePolicy: u32, MemoryAddressAlternate: *mut c_void, MemorySizeInBytes: u64) => hsaKmtSetMemoryPolicyCtx;
    /// `hsaKmtAllocMemory`.
    all fn hsaKmtAllocMemory(PreferredNode: u32, SizeInBytes: u64, MemFlags: abi::HsaMemFlags, MemoryAddress: *mut *mut c_void) => hsaKmtAllocMemoryCtx;
    /// `hsaKmtAllocMemoryAlign`.
    since62 fn hsaKmtAllocMemoryAlign(PreferredNode: u32, SizeInBytes: u64, Alignment: u64, MemFlags: abi::HsaMemFlags, MemoryAddress: *mut *mut c_void) => hsaKmtAllocMemoryAlignCtx;
    /// `hsaKmtAllocMemoryHostGtt`.
    newest fn hsaKmtAllocMemoryHostGtt(PreferredNode: u32, GttAnchorNode: u32, SizeInBytes: u64, MemFlags: abi::HsaMemFlags, MemoryAddress: *mut *mut c_void) => hsaKmtAllocMemoryHostGttCtx;
    /// `hsaKmtFreeMemory`.
    all fn hsaKmtFreeMemory(MemoryAddress: *mut c_void, SizeInBytes: u64) => hsaKmtFreeMemoryCtx;
    /// `hsaKmtAvailableMemory`.
    since62 fn hsaKmtAvailableMemory(Node: u32, AvailableBytes: *mut u64) => hsaKmtAvailableMemoryCtx;
    /// `hsaKmtRegisterMemory`.
    all fn hsaKmtRegisterMemory(MemoryAddress: *mut c_void, MemorySizeInBytes: u64) => hsaKmtRegisterMemoryCtx;
    /// `hsaKmtRegisterMemoryToNodes`.
    all fn hsaKmtRegisterMemoryToNodes(MemoryAddress: *mut c_void, MemorySizeInBytes: u64, NumberOfNodes: u64, NodeArray: *mut u32) => hsaKmtRegisterMemoryToNodesCtx;
    /// `hsaKmtRegisterMemoryWithFlags`.
    all fn hsaKmtRegisterMemoryWithFlags(MemoryAddress: *mut c_void, MemorySizeInBytes: u64, MemFlags: abi::HsaMemFlags) => hsaKmtRegisterMemoryWithFlagsCtx;
    /// `hsaKmtRegisterGraphicsHandleToNodes`.
    all fn hsaKmtRegisterGraphicsHandleToNodes(GraphicsResourceHandle: u64, GraphicsResourceInfo: *mut abi::HsaGraphicsResourceInfo, NumberOfNodes: u64, NodeArray: *mut u32) => hsaKmtRegisterGraphicsHandleToNodesCtx;
    /// `hsaKmtRegisterGraphicsHandleToNodesExt`.
    newest fn hsaKmtRegisterGraphicsHandleToNodesExt(GraphicsResourceHandle: u64, GraphicsResourceInfo: *mut abi::HsaGraphicsResourceInfo, NumberOfNodes: u64, NodeArray: *mut u32, RegisterFlags: u32) => hsaKmtRegisterGraphicsHandleToNodesExtCtx;
    /// `hsaKmtExportDMABufHandle`.
    since62 fn hsaKmtExportDMABufHandle(MemoryAddress: *mut c_void, MemorySizeInBytes: u64, DMABufFd: *mut i32, Offset: *mut u64) => hsaKmtExportDMABufHandleCtx;
    /// `hsaKmtShareMemory`.
    all fn hsaKmtShareMemory(MemoryAddress: *mut c_void, SizeInBytes: u64, SharedMemoryHandle: *mut HsaSharedMemoryHandle) => hsaKmtShareMemoryCtx;
    /// `hsaKmtRegisterSharedHandle`.
    all fn hsaKmtRegisterSharedHandle(SharedMemoryHandle: *const HsaSharedMemoryHandle, MemoryAddress: *mut *mut c_void, SizeInBytes: *mut u64) => hsaKmtRegisterSharedHandleCtx;
    /// `hsaKmtRegisterSharedHandleToNodes`.
    all fn hsaKmtRegisterSharedHandleToNodes(SharedMemoryHandle: *const HsaSharedMemoryHandle, MemoryAddress: *mut *mut c_void, SizeInBytes: *mut u64, NumberOfNodes: u64, NodeArray: *mut u32) => hsaKmtRegisterSharedHandleToNodesCtx;
    /// `hsaKmtDeregisterMemory`.
    all fn hsaKmtDeregisterMemory(MemoryAddress: *mut c_void) => hsaKmtDeregisterMemoryCtx;
    /// `hsaKmtMapMemoryToGPU`.
    all fn hsaKmtMapMemoryToGPU(MemoryAddress: *mut c_void, MemorySizeInBytes: u64, AlternateVAGPU: *mut u64) => hsaKmtMapMemoryToGPUCtx;
    /// `hsaKmtMapMemoryToGPUNodes`.
    all fn hsaKmtMapMemoryToGPUNodes(MemoryAddress: *mut c_void, MemorySizeInBytes: u64, AlternateVAGPU: *mut u64, MemMapFlags: generation::MapFlagsArg, NumberOfNodes: u64, NodeArray: *mut u32) => hsaKmtMapMemoryToGPUNodesCtx;
    /// `hsaKmtUnmapMemoryToGPU`.
    all fn hsaKmtUnmapMemoryToGPU(MemoryAddress: *mut c_void) => hsaKmtUnmapMemoryToGPUCtx;
    /// `hsaKmtUnmapGraphicHandle`.
    all fn hsaKmtUnmapGraphicHandle(NodeId: u32, FlatMemoryAddress: u64, SizeInBytes: u64) => hsaKmtUnmapGraphicHandleCtx;
    /// `hsaKmtGetAMDGPUDeviceHandle`.
    since62 fn hsaKmtGetAMDGPUDeviceHandle(NodeId: u32, DeviceHandle: *mut *mut c_void) => hsaKmtGetAMDGPUDeviceHandleCtx;
    /// `hsaKmtGetTileConfig`.
    all fn hsaKmtGetTileConfig(NodeId: u32, config: *mut HsaGpuTileConfig) => hsaKmtGetTileConfigCtx;
    /// `hsaKmtQueryPointerInfo`.
    all fn hsaKmtQueryPointerInfo(Pointer: *const c_void, PointerInfo: *mut abi::HsaPointerInfo) => hsaKmtQueryPointerInfoCtx;
    /// `hsaKmtSetMemoryUserData`.
    all fn hsaKmtSetMemoryUserData(Pointer: *const c_void, UserData: *mut c_void) => hsaKmtSetMemoryUserDataCtx;
    /// `hsaKmtReplaceAsanHeaderPage`.
    since62 fn hsaKmtReplaceAsanHeaderPage(addr: *mut c_void) => hsaKmtReplaceAsanHeaderPageCtx;
    /// `hsaKmtReturnAsanHeaderPage`.
    since62 fn hsaKmtReturnAsanHeaderPage(addr: *mut c_void) => hsaKmtReturnAsanHeaderPageCtx;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asan_header_pages_are_not_supported_without_any_check() {
        for ctx in [
            ctx::primary_ptr(),
            std::ptr::null_mut(),
            0x10 as *mut HsaKFDContext,
        ] {
            // SAFETY: the address is never looked at.
            let (r, s) = unsafe {
                (
                    hsaKmtReplaceAsanHeaderPageCtx(ctx, 0x1000 as *mut c_void),
                    hsaKmtReturnAsanHeaderPageCtx(ctx, std::ptr::null_mut()),
                )
            };
            assert_eq!((r, s), (st::NOT_SUPPORTED, st::NOT_SUPPORTED));
        }
    }

    /// The node arrays of one object: rewritten in place for each new
    /// generation, NULL while a list is empty, and an array that grows
    /// keeps the old one readable (a C caller may still hold it).
    #[test]
    fn node_arrays_are_rewritten_in_place_and_never_freed_early() {
        let nodes = |generation, registered: &[u32], mapped: &[u32]| PointerNodes {
            info: PointerInfo {
                kind: kfd_fmm::PointerType::Allocated,
                node: 1,
                mem_flags: MemFlags::empty(),
                cpu_address: 0,
                gpu_address: 0x10000,
                size: 0x1000,
                user_data: 0,
                registered_count: registered.len() as u32,
                mapped_count: mapped.len() as u32,
                object: 0x10000,
                generation,
            },
            registered: registered.to_vec(),
            mapped: mapped.to_vec(),
        };
        let read = |(p, n): (*mut u32, u32)| -> Vec<u32> {
            // SAFETY: `c_parts` gives `n` entries that live as long as `a`.
            unsafe { slice_in(p.cast_const(), n as usize, usize::MAX, st::ERROR) }
                .expect("NULL only when empty")
                .to_vec()
        };
        let mut a = NodeArrays::default();
        a.store(&nodes(1, &[], &[1, 2]), 4);
        assert_eq!(a.generation, 1);
        assert!(a.registered.c_parts().0.is_null(), "empty: NULL");
        let mapped = a.mapped.c_parts();
        assert_eq!(read(mapped), [1, 2]);
        a.store(&nodes(2, &[3], &[4, 3, 2, 1]), 4);
        assert_eq!(a.mapped.c_parts().0, mapped.0, "in place, room for 4 GPUs");
        assert_eq!(read(a.mapped.c_parts()), [4, 3, 2, 1]);
        assert_eq!(read(a.registered.c_parts()), [3]);
        a.store(&nodes(3, &[], &[1, 2, 3, 4, 1]), 4);
        let grown = a.mapped.c_parts();
        assert_ne!(grown.0, mapped.0, "a bigger array");
        assert_eq!(read(grown), [1, 2, 3, 4, 1]);
        assert_eq!(read((mapped.0, 4)), [4, 3, 2, 1], "the old one is kept");
        assert_eq!((a.generation, a.retired.len()), (3, 1));
    }
}
