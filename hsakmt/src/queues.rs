//! Queues: create (legacy, Ext, V2), update, destroy, CU masks, info,
//! GWS, trap handlers, doorbells.

use std::ffi::c_void;
use std::sync::Arc;

use hsakmt_sys::common::HSA_QUEUE_PRIORITY;
use kfd_context::Context;
use kfd_queue::{QueueKind, QueueRequest, Queues};

use crate::border::{check_mut, slice_in, st, write_out, Kmt, KmtResult};
use crate::ctx::{self, HsaKFDContext};
use crate::generation::{self, abi};

fn queues_of(c: &Context) -> KmtResult<&Arc<Queues>> {
    c.queues().kmt()
}

/// The body of the CreateQueue functions. As the C library, the scalar
/// arguments are checked first — the priority (3), the node (5), then
/// the queue type (`kind`'s error, 3) — and only then is the
/// `QueueResource` read or written (NULL → 3).
#[allow(clippy::too_many_arguments)]
fn create(
    ctx: *mut HsaKFDContext,
    node: u32,
    kind: KmtResult<QueueKind>,
    percentage: u32,
    priority: HSA_QUEUE_PRIORITY,
    ring: *mut c_void,
    ring_size: u64,
    metadata_size: u64,
    event: *mut abi::HsaEvent,
    resource: *mut abi::HsaQueueResource,
) -> KmtResult {
    let c = ctx::resolve(ctx)?;
    if kfd_queue::kfd_priority(priority.0).is_none() {
        return Err(st::INVALID_PARAMETER);
    }
    c.topology()
        .kmt()?
        .validate_node(node)
        .map_err(|_| st::INVALID_NODE_UNIT)?;
    let kind = kind?;
    let res = check_mut(resource, st::INVALID_PARAMETER)?;
    let mut req = QueueRequest::new(node, kind, ring as u64, ring_size);
    req.percentage = percentage;
    req.priority = priority.0;
    req.metadata_size = metadata_size;
    if !event.is_null() {
        // The C library ignores the event argument; a live event of this
        // context is reported in the save-area header on queue errors.
        c.events().kmt()?;
        if let Ok(e) = crate::events::waitable(&c, event) {
            req.error_event_id = e.id();
        }
    }
    // SAFETY: checked non-NULL and aligned; the caller's IN/OUT struct of
    // this generation's size (only that much is read).
    let mut r = unsafe { res.read() };
    let req = generation::queue_request(req, &r);
    let q = queues_of(&c)?.create(&req).kmt()?;
    generation::store_queue_resource(&q.resource(), &mut r);
    // SAFETY: as above; written back with the same size.
    unsafe { write_out(res, r, st::INVALID_PARAMETER) }
}

export! {
    /// `hsaKmtCreateQueueCtx`: `HSA_QUEUE_SDMA_BY_ENG_ID` → 1 (before the
    /// open check); 20; bad priority → 3; bad node → 5; unknown type →
    /// 3. A NULL `QueueResource` → 3 (C dereferences it).
    ctx fn hsaKmtCreateQueueCtx(ctx: *mut HsaKFDContext, NodeId: u32, Type: abi::HSA_QUEUE_TYPE, QueuePercentage: u32, Priority: HSA_QUEUE_PRIORITY, QueueAddress: *mut c_void, QueueSizeInBytes: u64, Event: *mut abi::HsaEvent, QueueResource: *mut abi::HsaQueueResource) {
        let kind = QueueKind::from_hsa_legacy(Type.0).kmt();
        if let Err(s) = kind {
            if s == st::ERROR {
                return Err(s);
            }
        }
        ctx::check_open()?;
        create(ctx, NodeId, kind, QueuePercentage, Priority, QueueAddress, QueueSizeInBytes, 0, Event, QueueResource)
    }

    /// `hsaKmtCreateQueueExtCtx`: with an SDMA engine id.
    ctx fn hsaKmtCreateQueueExtCtx(ctx: *mut HsaKFDContext, NodeId: u32, Type: abi::HSA_QUEUE_TYPE, QueuePercentage: u32, Priority: HSA_QUEUE_PRIORITY, SdmaEngineId: u32, QueueAddress: *mut c_void, QueueSizeInBytes: u64, Event: *mut abi::HsaEvent, QueueResource: *mut abi::HsaQueueResource) {
        ctx::check_open()?;
        let kind = QueueKind::from_hsa(Type.0, SdmaEngineId).kmt();
        create(ctx, NodeId, kind, QueuePercentage, Priority, QueueAddress, QueueSizeInBytes, 0, Event, QueueResource)
    }

    /// `hsaKmtCreateQueueV2Ctx`: with a metadata ring behind an AQL ring
    /// (KFD 1.19, page aligned).
    ctx fn hsaKmtCreateQueueV2Ctx(ctx: *mut HsaKFDContext, NodeId: u32, Type: abi::HSA_QUEUE_TYPE, QueuePercentage: u32, Priority: HSA_QUEUE_PRIORITY, SdmaEngineId: u32, QueueAddress: *mut c_void, QueueSizeInBytes: u64, MetaDataQueueSizeInBytes: u64, Event: *mut abi::HsaEvent, QueueResource: *mut abi::HsaQueueResource) {
        ctx::check_open()?;
        let kind = QueueKind::from_hsa(Type.0, SdmaEngineId).kmt();
        create(ctx, NodeId, kind, QueuePercentage, Priority, QueueAddress, QueueSizeInBytes, MetaDataQueueSizeInBytes, Event, QueueResource)
    }

    /// `hsaKmtUpdateQueueCtx`: 20; bad priority → 3; queue 0 or unknown
    /// → 3.
    ctx fn hsaKmtUpdateQueueCtx(ctx: *mut HsaKFDContext, QueueId: u64, QueuePercentage: u32, Priority: HSA_QUEUE_PRIORITY, QueueAddress: *mut c_void, QueueSize: u64, Event: *mut abi::HsaEvent) {
        let _ = Event;
        let c = ctx::resolve(ctx)?;
        if kfd_queue::kfd_priority(Priority.0).is_none() {
            return Err(st::INVALID_PARAMETER);
        }
        let queues = queues_of(&c)?;
        let q = queues.lookup(QueueId).kmt()?;
        queues.update(&q, QueuePercentage, Priority.0, QueueAddress as u64, QueueSize).kmt()
    }

    /// `hsaKmtDestroyQueueCtx`: 20; queue 0 or unknown (another
    /// context's) → 3.
    ctx fn hsaKmtDestroyQueueCtx(ctx: *mut HsaKFDContext, QueueId: u64) {
        let c = ctx::resolve(ctx)?;
        let queues = queues_of(&c)?;
        let q = queues.lookup(QueueId).kmt()?;
        queues.destroy(&q).kmt()
    }

    /// `hsaKmtSetQueueCUMaskCtx`: 20; count 0, not a multiple of 32, or a
    /// NULL mask → 3. The kernel uses (and reads) at most the first 1024
    /// bits of a longer mask; so does the library.
    ctx fn hsaKmtSetQueueCUMaskCtx(ctx: *mut HsaKFDContext, QueueId: u64, CUMaskCount: u32, QueueCUMask: *mut u32) {
        let c = ctx::resolve(ctx)?;
        if CUMaskCount == 0 || CUMaskCount % 32 != 0 || QueueCUMask.is_null() {
            return Err(st::INVALID_PARAMETER);
        }
        let words = kfd_queue::cu_mask_words(CUMaskCount);
        // SAFETY: the C contract: `CUMaskCount / 32` mask words, of which
        // the first `words` are read.
        let mask = unsafe { slice_in(QueueCUMask as *const u32, words, words, st::INVALID_PARAMETER) }?;
        let queues = queues_of(&c)?;
        let q = queues.lookup(QueueId).kmt()?;
        queues.set_cu_mask(&q, CUMaskCount, mask).kmt()
    }

    /// `hsaKmtGetQueueInfoCtx`: 20; NULL info or queue 0 → 3; no CWSR
    /// area → 1.
    ctx fn hsaKmtGetQueueInfoCtx(ctx: *mut HsaKFDContext, QueueId: u64, QueueInfo: *mut abi::HsaQueueInfo) {
        let c = ctx::resolve(ctx)?;
        let out = check_mut(QueueInfo, st::INVALID_PARAMETER)?;
        let queues = queues_of(&c)?;
        let q = queues.lookup(QueueId).kmt()?;
        let info = queues.info(&q).kmt()?;
        // SAFETY: checked above; the caller's struct of this generation's
        // size, read and written back whole.
        let mut qi = unsafe { out.read() };
        generation::store_queue_info(&info, &mut qi);
        // SAFETY: as above.
        unsafe { write_out(out, qi, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtAllocQueueGWSCtx`: `firstGWS` is optional, as in C (written
    /// only when non-NULL; a misaligned one → 3).
    ctx fn hsaKmtAllocQueueGWSCtx(ctx: *mut HsaKFDContext, QueueId: u64, nGWS: u32, firstGWS: *mut u32) {
        let c = ctx::resolve(ctx)?;
        if !firstGWS.is_null() {
            check_mut(firstGWS, st::INVALID_PARAMETER)?;
        }
        let queues = queues_of(&c)?;
        let q = queues.lookup(QueueId).kmt()?;
        let first = queues.alloc_gws(&q, nGWS).kmt()?;
        if firstGWS.is_null() {
            return Ok(());
        }
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(firstGWS, first, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtSetTrapHandlerCtx`: 20; bad node → 5.
    ctx fn hsaKmtSetTrapHandlerCtx(ctx: *mut HsaKFDContext, NodeId: u32, TrapHandlerBaseAddress: *mut c_void, TrapHandlerSizeInBytes: u64, TrapBufferBaseAddress: *mut c_void, TrapBufferSizeInBytes: u64) {
        let _ = (TrapHandlerSizeInBytes, TrapBufferSizeInBytes);
        let c = ctx::resolve(ctx)?;
        queues_of(&c)?.set_trap_handler(NodeId, TrapHandlerBaseAddress as u64, TrapBufferBaseAddress as u64).kmt()
    }

    /// `hsaKmtGetKernelQueueId`: the KFD's queue id of a queue of the
    /// primary context. No open check; queue 0, unknown or NULL output →
    /// 3.
    newest fn hsaKmtGetKernelQueueId(QueueId: u64, KernelInternalQueueId: *mut u32) {
        check_mut(KernelInternalQueueId, st::INVALID_PARAMETER)?;
        let c = ctx::lookup(ctx::primary_ptr()).map_err(|_| st::INVALID_PARAMETER)?;
        let q = queues_of(&c)?.lookup(QueueId).kmt()?;
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(KernelInternalQueueId, q.kfd_queue_id(), st::INVALID_PARAMETER) }
    }

    /// `hsaKmtQueueRingDoorbell`: writes `value` to the doorbell of a
    /// queue of the primary context, then tells a preloaded kfd-sim so
    /// its engine runs the queue at once (see `sim_doorbell`). Unknown
    /// queue: the status `lookup` gives every queue call.
    newest fn hsaKmtQueueRingDoorbell(QueueId: u64, value: u64) {
        let c = ctx::primary()?;
        let queues = queues_of(&c)?;
        let q = queues.lookup(QueueId).kmt()?;
        queues.ring_doorbell(&q, value).kmt()?;
        use std::os::fd::{AsFd, AsRawFd};
        crate::sim_doorbell::notify(c.kfd().as_fd().as_raw_fd(), q.kfd_queue_id());
        Ok(())
    }

    /// `hsaKmtReportQueue`: declared but not implemented by any C library
    /// on this platform; `ERROR`, as its header documents.
    newest fn hsaKmtReportQueue(QueueId: u64, QueueReport: *mut hsakmt_sys::common::HsaQueueReport) {
        let _ = (QueueId, QueueReport);
        Err(st::ERROR)
    }

    /// `hsaKmtImportExternalSemaphore` (Windows/DXG): `NOT_SUPPORTED`.
    newest fn hsaKmtImportExternalSemaphore(NodeId: u32, NtHandle: *mut c_void, Type: u32, OutHandle: *mut u64) {
        let _ = (NodeId, NtHandle, Type, OutHandle);
        Err(st::NOT_SUPPORTED)
    }

    /// `hsaKmtDestroyExternalSemaphore` (Windows/DXG): `NOT_SUPPORTED`.
    newest fn hsaKmtDestroyExternalSemaphore(Handle: u64) {
        let _ = Handle;
        Err(st::NOT_SUPPORTED)
    }

    /// `hsaKmtQueueSignalExternalSemaphore` (Windows/DXG): `NOT_SUPPORTED`.
    newest fn hsaKmtQueueSignalExternalSemaphore(QueueId: u64, Handle: u64, Value: u64) {
        let _ = (QueueId, Handle, Value);
        Err(st::NOT_SUPPORTED)
    }

    /// `hsaKmtQueueWaitExternalSemaphore` (Windows/DXG): `NOT_SUPPORTED`.
    newest fn hsaKmtQueueWaitExternalSemaphore(QueueId: u64, Handle: u64, Value: u64) {
        let _ = (QueueId, Handle, Value);
        Err(st::NOT_SUPPORTED)
    }
}

forward! {
    /// `hsaKmtCreateQueue`.
    all fn hsaKmtCreateQueue(NodeId: u32, Type: abi::HSA_QUEUE_TYPE, QueuePercentage: u32, Priority: HSA_QUEUE_PRIORITY, QueueAddress: *mut c_void, QueueSizeInBytes: u64, Event: *mut abi::HsaEvent, QueueResource: *mut abi::HsaQueueResource) => hsaKmtCreateQueueCtx;
    /// `hsaKmtCreateQueueExt`.
    newest fn hsaKmtCreateQueueExt(NodeId: u32, Type: abi::HSA_QUEUE_TYPE, QueuePercentage: u32, Priority: HSA_QUEUE_PRIORITY, SdmaEngineId: u32, QueueAddress: *mut c_void, QueueSizeInBytes: u64, Event: *mut abi::HsaEvent, QueueResource: *mut abi::HsaQueueResource) => hsaKmtCreateQueueExtCtx;
    /// `hsaKmtCreateQueueV2`.
    newest fn hsaKmtCreateQueueV2(NodeId: u32, Type: abi::HSA_QUEUE_TYPE, QueuePercentage: u32, Priority: HSA_QUEUE_PRIORITY, SdmaEngineId: u32, QueueAddress: *mut c_void, QueueSizeInBytes: u64, MetaDataPrefetchSizeInBytes: u64, Event: *mut abi::HsaEvent, QueueResource: *mut abi::HsaQueueResource) => hsaKmtCreateQueueV2Ctx;
    /// `hsaKmtUpdateQueue`.
    all fn hsaKmtUpdateQueue(QueueId: u64, QueuePercentage: u32, Priority: HSA_QUEUE_PRIORITY, QueueAddress: *mut c_void, QueueSize: u64, Event: *mut abi::HsaEvent) => hsaKmtUpdateQueueCtx;
    /// `hsaKmtDestroyQueue`.
    all fn hsaKmtDestroyQueue(QueueId: u64) => hsaKmtDestroyQueueCtx;
    /// `hsaKmtSetQueueCUMask`.
    all fn hsaKmtSetQueueCUMask(QueueId: u64, CUMaskCount: u32, QueueCUMask: *mut u32) => hsaKmtSetQueueCUMaskCtx;
    /// `hsaKmtGetQueueInfo`.
    all fn hsaKmtGetQueueInfo(QueueId: u64, QueueInfo: *mut abi::HsaQueueInfo) => hsaKmtGetQueueInfoCtx;
    /// `hsaKmtAllocQueueGWS`.
    all fn hsaKmtAllocQueueGWS(QueueId: u64, nGWS: u32, firstGWS: *mut u32) => hsaKmtAllocQueueGWSCtx;
    /// `hsaKmtSetTrapHandler`.
    all fn hsaKmtSetTrapHandler(NodeId: u32, TrapHandlerBaseAddress: *mut c_void, TrapHandlerSizeInBytes: u64, TrapBufferBaseAddress: *mut c_void, TrapBufferSizeInBytes: u64) => hsaKmtSetTrapHandlerCtx;
}
