/*
 * kfd-rs hsakmt test program for the Ctx API (compiled by tests/c_api.rs
 * against hsakmt/include and linked to the abi-current build).
 *
 *   ctx_api tenants   primary refcount, three secondary contexts with
 *                     memory, events and queues each, isolation, close
 *                     order, everything freed
 */
#include <hsakmt/hsakmtctx.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096u

#define EXPECT(expr, want)                                                   \
	do {                                                                 \
		HSAKMT_STATUS got_ = (expr);                                 \
		if (got_ != (HSAKMT_STATUS)(want)) {                         \
			fprintf(stderr, "%s:%d: %s returned %d, expected %d\n",  \
				__FILE__, __LINE__, #expr, (int)got_, (int)(want)); \
			exit(1);                                             \
		}                                                            \
	} while (0)

#define TRUE_OR_DIE(cond)                                                    \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: %s is false\n", __FILE__,    \
				__LINE__, #cond);                            \
			exit(1);                                             \
		}                                                            \
	} while (0)

struct tenant {
	HsaKFDContext *ctx;
	HSAuint32 gpu;
	void *buf;
	void *ring;
	HsaEvent *event;
	HSA_QUEUEID queue;
};

/* The first node with SIMDs (NumFComputeCores is at offset 4 in every
 * layout of HsaNodeProperties). */
static HSAuint32 find_gpu(HsaKFDContext *ctx, HSAuint32 num_nodes)
{
	for (HSAuint32 n = 0; n < num_nodes; n++) {
		uint64_t props[HSAKMT_CTX_SIZEOF_NODE_PROPERTIES / 8 + 1];
		uint32_t simds;

		EXPECT(hsaKmtGetNodePropertiesCtx(ctx, n, props), HSAKMT_STATUS_SUCCESS);
		memcpy(&simds, (char *)props + 4, sizeof(simds));
		if (simds)
			return n;
	}
	fprintf(stderr, "no GPU node\n");
	exit(1);
}

static void *alloc_mapped(HsaKFDContext *ctx, HSAuint64 size)
{
	HsaMemFlags flags;
	void *p = NULL;
	HSAuint64 alt = 0;

	memset(&flags, 0, sizeof(flags));
	flags.ui32.HostAccess = 1;
	flags.ui32.NonPaged = 1;
	EXPECT(hsaKmtAllocMemoryCtx(ctx, 0, size, flags, &p), HSAKMT_STATUS_SUCCESS);
	TRUE_OR_DIE(p != NULL);
	EXPECT(hsaKmtMapMemoryToGPUCtx(ctx, p, size, &alt), HSAKMT_STATUS_SUCCESS);
	memset(p, 0x5a, size);
	return p;
}

static void set_up(struct tenant *t)
{
	HsaSystemProperties sys;
	HsaEventDescriptor desc;
	uint64_t res[HSAKMT_CTX_SIZEOF_QUEUE_RESOURCE / 8 + 1];
	HsaPointerInfo info;

	EXPECT(hsaKmtAcquireSystemPropertiesCtx(t->ctx, &sys), HSAKMT_STATUS_SUCCESS);
	TRUE_OR_DIE(sys.NumNodes >= 2);
	t->gpu = find_gpu(t->ctx, sys.NumNodes);

	t->buf = alloc_mapped(t->ctx, 4 * PAGE);
	t->ring = alloc_mapped(t->ctx, PAGE);
	EXPECT(hsaKmtQueryPointerInfoCtx(t->ctx, t->buf, &info), HSAKMT_STATUS_SUCCESS);
	TRUE_OR_DIE(info.Type == HSA_POINTER_ALLOCATED);
	TRUE_OR_DIE(info.SizeInBytes == 4 * PAGE);

	memset(&desc, 0, sizeof(desc));
	desc.EventType = HSA_EVENTTYPE_SIGNAL;
	desc.NodeId = t->gpu;
	EXPECT(hsaKmtCreateEventCtx(t->ctx, &desc, true, false, &t->event), HSAKMT_STATUS_SUCCESS);
	EXPECT(hsaKmtWaitOnEventCtx(t->ctx, t->event, 0), HSAKMT_STATUS_WAIT_TIMEOUT);
	EXPECT(hsaKmtSetEventCtx(t->ctx, t->event), HSAKMT_STATUS_SUCCESS);
	EXPECT(hsaKmtWaitOnEventCtx(t->ctx, t->event, 1000), HSAKMT_STATUS_SUCCESS);
	EXPECT(hsaKmtResetEventCtx(t->ctx, t->event), HSAKMT_STATUS_SUCCESS);

	memset(res, 0, sizeof(res));
	EXPECT(hsaKmtCreateQueueCtx(t->ctx, t->gpu, HSA_QUEUE_COMPUTE, 100,
				    HSA_QUEUE_PRIORITY_NORMAL, t->ring, PAGE, NULL, res),
	       HSAKMT_STATUS_SUCCESS);
	t->queue = res[0];
	TRUE_OR_DIE(t->queue != 0);
	TRUE_OR_DIE(res[1] != 0); /* doorbell */
}

/* `other` cannot see or touch `t`'s objects. (On the primary context,
 * whose SVM API is on, mapping an unknown address is an SVM request, as in
 * the C library, so the map check is for secondary contexts.) */
static void check_isolated(struct tenant *t, struct tenant *other, int other_is_secondary)
{
	HsaPointerInfo info;
	HSAuint32 mask = 0xffffffff;

	EXPECT(hsaKmtSetEventCtx(other->ctx, t->event), HSAKMT_STATUS_INVALID_HANDLE);
	EXPECT(hsaKmtDestroyEventCtx(other->ctx, t->event), HSAKMT_STATUS_INVALID_HANDLE);
	EXPECT(hsaKmtDestroyQueueCtx(other->ctx, t->queue), HSAKMT_STATUS_INVALID_PARAMETER);
	EXPECT(hsaKmtSetQueueCUMaskCtx(other->ctx, t->queue, 32, &mask), HSAKMT_STATUS_INVALID_PARAMETER);
	EXPECT(hsaKmtQueryPointerInfoCtx(other->ctx, t->buf, &info), HSAKMT_STATUS_ERROR);
	if (other_is_secondary)
		EXPECT(hsaKmtMapMemoryToGPUCtx(other->ctx, t->buf, 4 * PAGE, NULL), HSAKMT_STATUS_INVALID_PARAMETER);
}

/* Secondary contexts have no SVM API: freeing a foreign address fails. */
static void check_foreign_free(struct tenant *t, struct tenant *secondary)
{
	EXPECT(hsaKmtFreeMemoryCtx(secondary->ctx, t->buf, 4 * PAGE), HSAKMT_STATUS_MEMORY_NOT_REGISTERED);
}

static void still_works(struct tenant *t)
{
	HsaPointerInfo info;

	EXPECT(hsaKmtSetEventCtx(t->ctx, t->event), HSAKMT_STATUS_SUCCESS);
	EXPECT(hsaKmtWaitOnEventCtx(t->ctx, t->event, 1000), HSAKMT_STATUS_SUCCESS);
	EXPECT(hsaKmtResetEventCtx(t->ctx, t->event), HSAKMT_STATUS_SUCCESS);
	EXPECT(hsaKmtQueryPointerInfoCtx(t->ctx, t->buf, &info), HSAKMT_STATUS_SUCCESS);
	TRUE_OR_DIE(((unsigned char *)t->buf)[7] == 0x5a);
}

static void tear_down(struct tenant *t)
{
	EXPECT(hsaKmtDestroyQueueCtx(t->ctx, t->queue), HSAKMT_STATUS_SUCCESS);
	EXPECT(hsaKmtDestroyEventCtx(t->ctx, t->event), HSAKMT_STATUS_SUCCESS);
	EXPECT(hsaKmtUnmapMemoryToGPUCtx(t->ctx, t->buf), HSAKMT_STATUS_SUCCESS);
	EXPECT(hsaKmtFreeMemoryCtx(t->ctx, t->buf, 4 * PAGE), HSAKMT_STATUS_SUCCESS);
	EXPECT(hsaKmtUnmapMemoryToGPUCtx(t->ctx, t->ring), HSAKMT_STATUS_SUCCESS);
	EXPECT(hsaKmtFreeMemoryCtx(t->ctx, t->ring, PAGE), HSAKMT_STATUS_SUCCESS);
}

static int tenants(void)
{
	struct tenant primary, sec[3];
	HsaKFDContext *again = NULL;
	HsaSystemProperties sys;

	/* Nothing works before the primary is open, on any context. */
	EXPECT(hsaKmtOpenSecondaryKFDCtx(&sec[0].ctx), HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED);
	EXPECT(hsaKmtCloseKFDCtx(), HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED);

	/* The primary is reference counted: the second open says so. */
	EXPECT(hsaKmtOpenKFDCtx(&primary.ctx), HSAKMT_STATUS_SUCCESS);
	EXPECT(hsaKmtOpenKFDCtx(&again), HSAKMT_STATUS_KERNEL_ALREADY_OPENED);
	TRUE_OR_DIE(again == primary.ctx);
	set_up(&primary);

	for (int i = 0; i < 3; i++) {
		EXPECT(hsaKmtOpenSecondaryKFDCtx(&sec[i].ctx), HSAKMT_STATUS_SUCCESS);
		TRUE_OR_DIE(sec[i].ctx != primary.ctx);
		set_up(&sec[i]);
	}
	for (int i = 0; i < 3; i++)
		TRUE_OR_DIE(sec[i].ctx != sec[(i + 1) % 3].ctx);

	/* Isolation, every pair. */
	for (int i = 0; i < 3; i++) {
		check_isolated(&primary, &sec[i], 1);
		check_isolated(&sec[i], &primary, 0);
		check_isolated(&sec[i], &sec[(i + 1) % 3], 1);
		check_foreign_free(&primary, &sec[i]);
		check_foreign_free(&sec[i], &sec[(i + 1) % 3]);
	}

	/* Bad handles. */
	EXPECT(hsaKmtCloseSecondaryKFDCtx(NULL), HSAKMT_STATUS_INVALID_PARAMETER);
	EXPECT(hsaKmtCloseSecondaryKFDCtx(primary.ctx), HSAKMT_STATUS_INVALID_PARAMETER);
	EXPECT(hsaKmtAcquireSystemPropertiesCtx(NULL, &sys), HSAKMT_STATUS_INVALID_PARAMETER);
	EXPECT(hsaKmtAcquireSystemPropertiesCtx((HsaKFDContext *)&sys, &sys), HSAKMT_STATUS_INVALID_PARAMETER);

	/* Closing one secondary leaves the others and the primary working. */
	tear_down(&sec[1]);
	EXPECT(hsaKmtCloseSecondaryKFDCtx(sec[1].ctx), HSAKMT_STATUS_SUCCESS);
	EXPECT(hsaKmtCloseSecondaryKFDCtx(sec[1].ctx), HSAKMT_STATUS_INVALID_PARAMETER);
	EXPECT(hsaKmtSetEventCtx(sec[1].ctx, sec[1].event), HSAKMT_STATUS_INVALID_PARAMETER);
	still_works(&primary);
	still_works(&sec[0]);
	still_works(&sec[2]);

	/* One close of the two opens: still open. */
	EXPECT(hsaKmtCloseKFDCtx(), HSAKMT_STATUS_SUCCESS);
	still_works(&primary);
	still_works(&sec[0]);

	/* Secondary 0 is closed with live objects: its teardown frees them. */
	EXPECT(hsaKmtCloseSecondaryKFDCtx(sec[0].ctx), HSAKMT_STATUS_SUCCESS);

	tear_down(&primary);
	tear_down(&sec[2]);
	EXPECT(hsaKmtCloseKFDCtx(), HSAKMT_STATUS_SUCCESS);
	/* The open check is process-wide: a surviving secondary is unusable
	 * while the primary is closed, but can still be closed. */
	EXPECT(hsaKmtQueryEventStateCtx(sec[2].ctx, sec[2].event), HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED);
	EXPECT(hsaKmtCloseKFDCtx(), HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED);
	EXPECT(hsaKmtCloseSecondaryKFDCtx(sec[2].ctx), HSAKMT_STATUS_SUCCESS);
	printf("tenants ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "tenants"))
		return tenants();
	fprintf(stderr, "usage: %s tenants\n", argv[0]);
	return 2;
}
