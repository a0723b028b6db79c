/*
 * hsakmtctx.h - the context (Ctx) API of kfd-rs's libhsakmt.so.1.
 *
 * Part of kfd-rs (MIT). Written for kfd-rs; declares the entry points the
 * `newest` build of libhsakmt.so.1 exports next to the legacy ones.
 *
 * Types come from the hsakmt type header installed on the system
 * (<hsakmttypes.h>, included through <hsakmt.h>). Two generations exist:
 *
 *  - the header of the thunk ROCm 7.2.4 links into ROCr (rocm-systems
 *    rocm-7.2.4, with the context API): define
 *    HSAKMT_CTX_NEWEST_TYPES before including this file, and every
 *    prototype below uses its struct types, which have the layouts the
 *    library reads and writes;
 *  - an older header such as Debian's 5.2.3 (the default): the six
 *    structs whose layout grew since (node, cache and IO-link
 *    properties, queue resource, queue info, graphics resource info) are
 *    passed as untyped buffers of at least the HSAKMT_CTX_SIZEOF_* bytes
 *    below, 8-byte aligned (in 7.2.4 only node and IO-link properties
 *    grew; the other four are 5.2.3's sizes); the other types are the
 *    same in both.
 *
 * HsaKFDContext is declared here in any case (C11 and C++ accept the
 * identical typedef of the newest header).
 *
 * Context handles: hsaKmtOpenKFDCtx returns the primary context (one per
 * process, reference counted, closed with hsaKmtCloseKFDCtx);
 * hsaKmtOpenSecondaryKFDCtx opens an isolated context (own /dev/kfd,
 * own GPU address spaces), closed with hsaKmtCloseSecondaryKFDCtx.
 * Call hsaKmtAcquireSystemPropertiesCtx on a context before using it.
 * While the primary is closed (or in a forked child that has not
 * reopened it), every Ctx call returns HSAKMT_STATUS_KERNEL_IO_CHANNEL_
 * NOT_OPENED; an unknown or closed context pointer gives
 * HSAKMT_STATUS_INVALID_PARAMETER.
 */

#ifndef KFD_RS_HSAKMTCTX_H
#define KFD_RS_HSAKMTCTX_H

#include <stdbool.h>
#include <stdint.h>
#include <hsakmt.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sizes, in bytes, of the six structs as the library reads and writes
 * them (ROCm 7.2.4's layouts). */
#define HSAKMT_CTX_SIZEOF_NODE_PROPERTIES 376
#define HSAKMT_CTX_SIZEOF_CACHE_PROPERTIES 1056
#define HSAKMT_CTX_SIZEOF_IO_LINK_PROPERTIES 52
#define HSAKMT_CTX_SIZEOF_QUEUE_RESOURCE 40
#define HSAKMT_CTX_SIZEOF_QUEUE_INFO 68
#define HSAKMT_CTX_SIZEOF_GRAPHICS_RESOURCE_INFO 32

typedef struct _HsaKFDContext HsaKFDContext;

#ifdef HSAKMT_CTX_NEWEST_TYPES
/* The newest type header: its structs have the library's layouts. */
typedef HsaNodeProperties HsaCtxNodeProperties;
typedef HsaCacheProperties HsaCtxCacheProperties;
typedef HsaIoLinkProperties HsaCtxIoLinkProperties;
typedef HsaQueueResource HsaCtxQueueResource;
typedef HsaQueueInfo HsaCtxQueueInfo;
typedef HsaGraphicsResourceInfo HsaCtxGraphicsResourceInfo;
#else
/* An older type header: six structs are smaller than what the library
 * writes; they are passed as buffers. */
typedef void HsaCtxNodeProperties;
typedef void HsaCtxCacheProperties;
typedef void HsaCtxIoLinkProperties;
typedef void HsaCtxQueueResource;
typedef void HsaCtxQueueInfo;
typedef void HsaCtxGraphicsResourceInfo;
#endif

struct kfd_ioctl_dbg_trap_args;

/* Open / close */
HSAKMT_STATUS HSAKMTAPI hsaKmtOpenKFDCtx(HsaKFDContext **pCtx);
HSAKMT_STATUS HSAKMTAPI hsaKmtCloseKFDCtx(void);
HSAKMT_STATUS HSAKMTAPI hsaKmtOpenSecondaryKFDCtx(HsaKFDContext **pCtx);
HSAKMT_STATUS HSAKMTAPI hsaKmtCloseSecondaryKFDCtx(HsaKFDContext *ctx);

/* Topology */
HSAKMT_STATUS HSAKMTAPI hsaKmtAcquireSystemPropertiesCtx(HsaKFDContext *ctx,
		HsaSystemProperties *SystemProperties);
HSAKMT_STATUS HSAKMTAPI hsaKmtReleaseSystemPropertiesCtx(HsaKFDContext *ctx);
HSAKMT_STATUS HSAKMTAPI hsaKmtGetNodePropertiesCtx(HsaKFDContext *ctx,
		HSAuint32 NodeId, HsaCtxNodeProperties *NodeProperties);
HSAKMT_STATUS HSAKMTAPI hsaKmtGetNodeMemoryPropertiesCtx(HsaKFDContext *ctx,
		HSAuint32 NodeId, HSAuint32 NumBanks,
		HsaMemoryProperties *MemoryProperties);
HSAKMT_STATUS HSAKMTAPI hsaKmtGetNodeCachePropertiesCtx(HsaKFDContext *ctx,
		HSAuint32 NodeId, HSAuint32 ProcessorId, HSAuint32 NumCaches,
		HsaCtxCacheProperties *CacheProperties);
HSAKMT_STATUS HSAKMTAPI hsaKmtGetNodeIoLinkPropertiesCtx(HsaKFDContext *ctx,
		HSAuint32 NodeId, HSAuint32 NumIoLinks,
		HsaCtxIoLinkProperties *IoLinkProperties);

/* Events */
HSAKMT_STATUS HSAKMTAPI hsaKmtCreateEventCtx(HsaKFDContext *ctx,
		HsaEventDescriptor *EventDesc, bool ManualReset, bool IsSignaled,
		HsaEvent **Event);
HSAKMT_STATUS HSAKMTAPI hsaKmtDestroyEventCtx(HsaKFDContext *ctx, HsaEvent *Event);
HSAKMT_STATUS HSAKMTAPI hsaKmtSetEventCtx(HsaKFDContext *ctx, HsaEvent *Event);
HSAKMT_STATUS HSAKMTAPI hsaKmtResetEventCtx(HsaKFDContext *ctx, HsaEvent *Event);
HSAKMT_STATUS HSAKMTAPI hsaKmtQueryEventStateCtx(HsaKFDContext *ctx, HsaEvent *Event);
HSAKMT_STATUS HSAKMTAPI hsaKmtWaitOnEventCtx(HsaKFDContext *ctx, HsaEvent *Event,
		HSAuint32 Milliseconds);
HSAKMT_STATUS HSAKMTAPI hsaKmtWaitOnEvent_ExtCtx(HsaKFDContext *ctx,
		HsaEvent *Event, HSAuint32 Milliseconds, uint64_t *event_age);
HSAKMT_STATUS HSAKMTAPI hsaKmtWaitOnMultipleEventsCtx(HsaKFDContext *ctx,
		HsaEvent *Events[], HSAuint32 NumEvents, bool WaitOnAll,
		HSAuint32 Milliseconds);
HSAKMT_STATUS HSAKMTAPI hsaKmtWaitOnMultipleEvents_ExtCtx(HsaKFDContext *ctx,
		HsaEvent *Events[], HSAuint32 NumEvents, bool WaitOnAll,
		HSAuint32 Milliseconds, uint64_t *event_age);
HSAKMT_STATUS HSAKMTAPI hsaKmtOpenSMICtx(HsaKFDContext *ctx, HSAuint32 NodeId, int *fd);

/* Queues */
HSAKMT_STATUS HSAKMTAPI hsaKmtCreateQueueCtx(HsaKFDContext *ctx,
		HSAuint32 NodeId, HSA_QUEUE_TYPE Type, HSAuint32 QueuePercentage,
		HSA_QUEUE_PRIORITY Priority, void *QueueAddress,
		HSAuint64 QueueSizeInBytes, HsaEvent *Event,
		HsaCtxQueueResource *QueueResource);
HSAKMT_STATUS HSAKMTAPI hsaKmtCreateQueueExtCtx(HsaKFDContext *ctx,
		HSAuint32 NodeId, HSA_QUEUE_TYPE Type, HSAuint32 QueuePercentage,
		HSA_QUEUE_PRIORITY Priority, HSAuint32 SdmaEngineId,
		void *QueueAddress, HSAuint64 QueueSizeInBytes, HsaEvent *Event,
		HsaCtxQueueResource *QueueResource);
HSAKMT_STATUS HSAKMTAPI hsaKmtCreateQueueV2Ctx(HsaKFDContext *ctx,
		HSAuint32 NodeId, HSA_QUEUE_TYPE Type, HSAuint32 QueuePercentage,
		HSA_QUEUE_PRIORITY Priority, HSAuint32 SdmaEngineId,
		void *QueueAddress, HSAuint64 QueueSizeInBytes,
		HSAuint64 MetaDataQueueSizeInBytes, HsaEvent *Event,
		HsaCtxQueueResource *QueueResource);
HSAKMT_STATUS HSAKMTAPI hsaKmtUpdateQueueCtx(HsaKFDContext *ctx,
		HSA_QUEUEID QueueId, HSAuint32 QueuePercentage,
		HSA_QUEUE_PRIORITY Priority, void *QueueAddress, HSAuint64 QueueSize,
		HsaEvent *Event);
HSAKMT_STATUS HSAKMTAPI hsaKmtDestroyQueueCtx(HsaKFDContext *ctx, HSA_QUEUEID QueueId);
HSAKMT_STATUS HSAKMTAPI hsaKmtSetQueueCUMaskCtx(HsaKFDContext *ctx,
		HSA_QUEUEID QueueId, HSAuint32 CUMaskCount, HSAuint32 *QueueCUMask);
HSAKMT_STATUS HSAKMTAPI hsaKmtGetQueueInfoCtx(HsaKFDContext *ctx,
		HSA_QUEUEID QueueId, HsaCtxQueueInfo *QueueInfo);
HSAKMT_STATUS HSAKMTAPI hsaKmtAllocQueueGWSCtx(HsaKFDContext *ctx,
		HSA_QUEUEID QueueId, HSAuint32 nGWS, HSAuint32 *firstGWS);
HSAKMT_STATUS HSAKMTAPI hsaKmtSetTrapHandlerCtx(HsaKFDContext *ctx,
		HSAuint32 NodeId, void *TrapHandlerBaseAddress,
		HSAuint64 TrapHandlerSizeInBytes, void *TrapBufferBaseAddress,
		HSAuint64 TrapBufferSizeInBytes);

/* Memory */
HSAKMT_STATUS HSAKMTAPI hsaKmtSetMemoryPolicyCtx(HsaKFDContext *ctx,
		HSAuint32 Node, HSAuint32 DefaultPolicy, HSAuint32 AlternatePolicy,
		void *MemoryAddressAlternate, HSAuint64 MemorySizeInBytes);
HSAKMT_STATUS HSAKMTAPI hsaKmtAllocMemoryCtx(HsaKFDContext *ctx,
		HSAuint32 PreferredNode, HSAuint64 SizeInBytes, HsaMemFlags MemFlags,
		void **MemoryAddress);
HSAKMT_STATUS HSAKMTAPI hsaKmtAllocMemoryAlignCtx(HsaKFDContext *ctx,
		HSAuint32 PreferredNode, HSAuint64 SizeInBytes, HSAuint64 Alignment,
		HsaMemFlags MemFlags, void **MemoryAddress);
HSAKMT_STATUS HSAKMTAPI hsaKmtAllocMemoryHostGttCtx(HsaKFDContext *ctx,
		HSAuint32 PreferredNode, HSAuint32 GttAnchorNode,
		HSAuint64 SizeInBytes, HsaMemFlags MemFlags, void **MemoryAddress);
HSAKMT_STATUS HSAKMTAPI hsaKmtFreeMemoryCtx(HsaKFDContext *ctx,
		void *MemoryAddress, HSAuint64 SizeInBytes);
HSAKMT_STATUS HSAKMTAPI hsaKmtAvailableMemoryCtx(HsaKFDContext *ctx,
		HSAuint32 Node, HSAuint64 *AvailableBytes);
HSAKMT_STATUS HSAKMTAPI hsaKmtRegisterMemoryCtx(HsaKFDContext *ctx,
		void *MemoryAddress, HSAuint64 MemorySizeInBytes);
HSAKMT_STATUS HSAKMTAPI hsaKmtRegisterMemoryToNodesCtx(HsaKFDContext *ctx,
		void *MemoryAddress, HSAuint64 MemorySizeInBytes,
		HSAuint64 NumberOfNodes, HSAuint32 *NodeArray);
HSAKMT_STATUS HSAKMTAPI hsaKmtRegisterMemoryWithFlagsCtx(HsaKFDContext *ctx,
		void *MemoryAddress, HSAuint64 MemorySizeInBytes, HsaMemFlags MemFlags);
HSAKMT_STATUS HSAKMTAPI hsaKmtRegisterGraphicsHandleToNodesCtx(HsaKFDContext *ctx,
		HSAuint64 GraphicsResourceHandle,
		HsaCtxGraphicsResourceInfo *GraphicsResourceInfo,
		HSAuint64 NumberOfNodes, HSAuint32 *NodeArray);
HSAKMT_STATUS HSAKMTAPI hsaKmtRegisterGraphicsHandleToNodesExtCtx(HsaKFDContext *ctx,
		HSAuint64 GraphicsResourceHandle,
		HsaCtxGraphicsResourceInfo *GraphicsResourceInfo,
		HSAuint64 NumberOfNodes, HSAuint32 *NodeArray,
		HSAuint32 RegisterFlags);
HSAKMT_STATUS HSAKMTAPI hsaKmtExportDMABufHandleCtx(HsaKFDContext *ctx,
		void *MemoryAddress, HSAuint64 MemorySizeInBytes, int *DMABufFd,
		HSAuint64 *Offset);
HSAKMT_STATUS HSAKMTAPI hsaKmtShareMemoryCtx(HsaKFDContext *ctx,
		void *MemoryAddress, HSAuint64 SizeInBytes,
		HsaSharedMemoryHandle *SharedMemoryHandle);
HSAKMT_STATUS HSAKMTAPI hsaKmtRegisterSharedHandleCtx(HsaKFDContext *ctx,
		const HsaSharedMemoryHandle *SharedMemoryHandle,
		void **MemoryAddress, HSAuint64 *SizeInBytes);
HSAKMT_STATUS HSAKMTAPI hsaKmtRegisterSharedHandleToNodesCtx(HsaKFDContext *ctx,
		const HsaSharedMemoryHandle *SharedMemoryHandle,
		void **MemoryAddress, HSAuint64 *SizeInBytes,
		HSAuint64 NumberOfNodes, HSAuint32 *NodeArray);
HSAKMT_STATUS HSAKMTAPI hsaKmtDeregisterMemoryCtx(HsaKFDContext *ctx, void *MemoryAddress);
HSAKMT_STATUS HSAKMTAPI hsaKmtMapMemoryToGPUCtx(HsaKFDContext *ctx,
		void *MemoryAddress, HSAuint64 MemorySizeInBytes,
		HSAuint64 *AlternateVAGPU);
HSAKMT_STATUS HSAKMTAPI hsaKmtMapMemoryToGPUNodesCtx(HsaKFDContext *ctx,
		void *MemoryAddress, HSAuint64 MemorySizeInBytes,
		HSAuint64 *AlternateVAGPU, HsaMemFlags MemFlags,
		HSAuint64 NumberOfNodes, HSAuint32 *NodeArray);
HSAKMT_STATUS HSAKMTAPI hsaKmtUnmapMemoryToGPUCtx(HsaKFDContext *ctx, void *MemoryAddress);
HSAKMT_STATUS HSAKMTAPI hsaKmtUnmapGraphicHandleCtx(HsaKFDContext *ctx,
		HSAuint32 NodeId, HSAuint64 FlatMemoryAddress, HSAuint64 SizeInBytes);
HSAKMT_STATUS HSAKMTAPI hsaKmtGetAMDGPUDeviceHandleCtx(HsaKFDContext *ctx,
		HSAuint32 NodeId, void **DeviceHandle);
HSAKMT_STATUS HSAKMTAPI hsaKmtGetTileConfigCtx(HsaKFDContext *ctx,
		HSAuint32 NodeId, HsaGpuTileConfig *config);
HSAKMT_STATUS HSAKMTAPI hsaKmtQueryPointerInfoCtx(HsaKFDContext *ctx,
		const void *Pointer, HsaPointerInfo *PointerInfo);
HSAKMT_STATUS HSAKMTAPI hsaKmtSetMemoryUserDataCtx(HsaKFDContext *ctx,
		const void *Pointer, void *UserData);
HSAKMT_STATUS HSAKMTAPI hsaKmtReplaceAsanHeaderPageCtx(HsaKFDContext *ctx, void *addr);
HSAKMT_STATUS HSAKMTAPI hsaKmtReturnAsanHeaderPageCtx(HsaKFDContext *ctx, void *addr);

/* SVM and XNACK */
HSAKMT_STATUS HSAKMTAPI hsaKmtSVMSetAttrCtx(HsaKFDContext *ctx,
		void *start_addr, HSAuint64 size, unsigned int nattr,
		HSA_SVM_ATTRIBUTE *attrs);
HSAKMT_STATUS HSAKMTAPI hsaKmtSVMGetAttrCtx(HsaKFDContext *ctx,
		void *start_addr, HSAuint64 size, unsigned int nattr,
		HSA_SVM_ATTRIBUTE *attrs);
HSAKMT_STATUS HSAKMTAPI hsaKmtSetXNACKModeCtx(HsaKFDContext *ctx, HSAint32 enable);
HSAKMT_STATUS HSAKMTAPI hsaKmtGetXNACKModeCtx(HsaKFDContext *ctx, HSAint32 *enable);

/* Debugger (primary context only; secondary contexts get
 * HSAKMT_STATUS_NOT_SUPPORTED) */
HSAKMT_STATUS HSAKMTAPI hsaKmtRuntimeEnableCtx(HsaKFDContext *ctx,
		void *rDebug, bool setupTtmp);
HSAKMT_STATUS HSAKMTAPI hsaKmtRuntimeDisableCtx(HsaKFDContext *ctx);
HSAKMT_STATUS HSAKMTAPI hsaKmtGetRuntimeCapabilitiesCtx(HsaKFDContext *ctx,
		HSAuint32 *caps_mask);
HSAKMT_STATUS HSAKMTAPI hsaKmtDbgEnableCtx(HsaKFDContext *ctx,
		void **runtime_info, HSAuint32 *data_size);
HSAKMT_STATUS HSAKMTAPI hsaKmtDbgDisableCtx(HsaKFDContext *ctx);
HSAKMT_STATUS HSAKMTAPI hsaKmtDbgGetDeviceDataCtx(HsaKFDContext *ctx,
		void **data, HSAuint32 *n_entries, HSAuint32 *entry_size);
HSAKMT_STATUS HSAKMTAPI hsaKmtDbgGetQueueDataCtx(HsaKFDContext *ctx,
		void **data, HSAuint32 *n_entries, HSAuint32 *entry_size,
		bool suspend_queues);
HSAKMT_STATUS HSAKMTAPI hsaKmtCheckRuntimeDebugSupportCtx(HsaKFDContext *ctx);
HSAKMT_STATUS HSAKMTAPI hsaKmtDebugTrapIoctlCtx(HsaKFDContext *ctx,
		struct kfd_ioctl_dbg_trap_args *args, HSA_QUEUEID *Queues,
		HSAuint64 *DebugReturn);

/* Clocks and performance counters */
HSAKMT_STATUS HSAKMTAPI hsaKmtGetClockCountersCtx(HsaKFDContext *ctx,
		HSAuint32 NodeId, HsaClockCounters *Counters);
HSAKMT_STATUS HSAKMTAPI hsaKmtPmcGetCounterPropertiesCtx(HsaKFDContext *ctx,
		HSAuint32 NodeId, HsaCounterProperties **CounterProperties);
HSAKMT_STATUS HSAKMTAPI hsaKmtPmcRegisterTraceCtx(HsaKFDContext *ctx,
		HSAuint32 NodeId, HSAuint32 NumberOfCounters, HsaCounter *Counters,
		HsaPmcTraceRoot *TraceRoot);
HSAKMT_STATUS HSAKMTAPI hsaKmtPmcUnregisterTraceCtx(HsaKFDContext *ctx,
		HSAuint32 NodeId, HSATraceId TraceId);
HSAKMT_STATUS HSAKMTAPI hsaKmtPmcAcquireTraceAccessCtx(HsaKFDContext *ctx,
		HSAuint32 NodeId, HSATraceId TraceId);
HSAKMT_STATUS HSAKMTAPI hsaKmtPmcReleaseTraceAccessCtx(HsaKFDContext *ctx,
		HSAuint32 NodeId, HSATraceId TraceId);

#ifdef __cplusplus
}
#endif

#endif /* KFD_RS_HSAKMTCTX_H */
