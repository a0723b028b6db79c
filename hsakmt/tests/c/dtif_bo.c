/*
 * kfd-rs test program for libdtif.so's libdrm entry points (compiled by
 * tests/c_api.rs against hsakmt/include and libdrm's amdgpu.h, linked to
 * the dtif build, run on kfd-sim's LD_PRELOAD library).
 *
 * What ROCr 7.x does with them, and libdrm's contract for each: a dma-buf
 * of VRAM imported on the GPU's device handle, its creation info and
 * metadata, KMS and dma-buf exports, a CPU mapping that shows the
 * buffer's bytes, GPU VA map/unmap, reference-counted free, the errors
 * of bad input; amdgpu_query_gpu_info's register field; DtifCreate's
 * count. Prints "dtif bo ok" at the end.
 */
#include <hsakmt/hsakmtctx.h>

#include <libdrm/amdgpu.h>
#include <libdrm/amdgpu_drm.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIB (1u << 20)

#define EXPECT(expr, want)                                                   \
	do {                                                                 \
		long got_ = (long)(expr);                                    \
		if (got_ != (long)(want)) {                                  \
			fprintf(stderr, "%s:%d: %s returned %ld, expected %ld\n", \
				__FILE__, __LINE__, #expr, got_, (long)(want)); \
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

/* libdtif.so's own entry points (not in any header). */
void *DtifCreate(const char *client);
void DtifDestroy(void);

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

int main(void)
{
	HsaKFDContext *ctx = NULL;
	HsaSystemProperties sys;
	HsaMemFlags flags;
	void *dev = NULL, *buf = NULL;
	int fd = -1;
	HSAuint64 offset = 0;

	/* The platform: counted, NULL for no client. */
	TRUE_OR_DIE(DtifCreate("HSA") != NULL);
	TRUE_OR_DIE(DtifCreate(NULL) == NULL && errno == EINVAL);

	EXPECT(hsaKmtOpenKFDCtx(&ctx), HSAKMT_STATUS_SUCCESS);
	EXPECT(hsaKmtAcquireSystemPropertiesCtx(ctx, &sys), HSAKMT_STATUS_SUCCESS);
	HSAuint32 gpu = find_gpu(ctx, sys.NumNodes);
	EXPECT(hsaKmtGetAMDGPUDeviceHandleCtx(ctx, gpu, &dev), HSAKMT_STATUS_SUCCESS);

	/* Register fields of the GPU info: GB_ADDR_CONFIG of the preset. */
	struct amdgpu_gpu_info gi;
	memset(&gi, 0, sizeof(gi));
	EXPECT(amdgpu_query_gpu_info(dev, &gi), 0);
	EXPECT(gi.asic_id, 0x740f);
	EXPECT(gi.gb_addr_cfg, 0x2a114042);

	/* 1 MiB of CPU-visible VRAM with a pattern, exported as a dma-buf. */
	memset(&flags, 0, sizeof(flags));
	flags.ui32.NonPaged = 1;
	flags.ui32.HostAccess = 1;
	EXPECT(hsaKmtAllocMemoryCtx(ctx, gpu, MIB, flags, &buf), HSAKMT_STATUS_SUCCESS);
	EXPECT(hsaKmtMapMemoryToGPUCtx(ctx, buf, MIB, NULL), HSAKMT_STATUS_SUCCESS);
	memcpy((char *)buf + 4096, "shared bytes", 12);
	EXPECT(hsaKmtExportDMABufHandleCtx(ctx, buf, MIB, &fd, &offset), HSAKMT_STATUS_SUCCESS);
	EXPECT(offset, 0);

	/* Import twice: one buffer object, two references. */
	struct amdgpu_bo_import_result res, again;
	EXPECT(amdgpu_bo_import(dev, amdgpu_bo_handle_type_dma_buf_fd, fd, &res), 0);
	EXPECT(res.alloc_size, MIB);
	EXPECT(amdgpu_bo_import(dev, amdgpu_bo_handle_type_dma_buf_fd, fd, &again), 0);
	TRUE_OR_DIE(again.buf_handle == res.buf_handle);
	amdgpu_bo_handle bo = res.buf_handle;

	/* Creation info and metadata. */
	struct amdgpu_bo_info info;
	memset(&info, 0xff, sizeof(info));
	EXPECT(amdgpu_bo_query_info(bo, &info), 0);
	EXPECT(info.alloc_size, MIB);
	EXPECT(info.phys_alignment, 4096);
	EXPECT(info.preferred_heap, AMDGPU_GEM_DOMAIN_VRAM);
	TRUE_OR_DIE(info.alloc_flags & AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED);
	EXPECT(info.metadata.size_metadata, 0);
	struct amdgpu_bo_metadata md;
	memset(&md, 0, sizeof(md));
	md.flags = 5;
	md.tiling_info = 6;
	md.size_metadata = 4;
	md.umd_metadata[0] = 0x12345678;
	EXPECT(amdgpu_bo_set_metadata(bo, &md), 0);
	EXPECT(amdgpu_bo_query_info(bo, &info), 0);
	EXPECT(info.metadata.size_metadata, 4);
	EXPECT(info.metadata.umd_metadata[0], 0x12345678);
	EXPECT(info.metadata.umd_metadata[1], 0);
	EXPECT(info.metadata.flags, 5);
	EXPECT(info.metadata.tiling_info, 6);
	md.size_metadata = 300;
	EXPECT(amdgpu_bo_set_metadata(bo, &md), -EINVAL);

	/* Exports. */
	uint32_t shared = 0;
	EXPECT(amdgpu_bo_export(bo, amdgpu_bo_handle_type_kms, &shared), 0);
	TRUE_OR_DIE(shared != 0);
	EXPECT(amdgpu_bo_export(bo, amdgpu_bo_handle_type_dma_buf_fd, &shared), 0);
	TRUE_OR_DIE((int)shared > 2);
	close((int)shared);
	EXPECT(amdgpu_bo_export(bo, amdgpu_bo_handle_type_gem_flink_name, &shared), -EACCES);
	EXPECT(amdgpu_bo_export(bo, (enum amdgpu_bo_handle_type)9, &shared), -EINVAL);
	EXPECT(amdgpu_bo_export(bo, amdgpu_bo_handle_type_kms, NULL), -EINVAL);

	/* The CPU mapping shows the buffer, both ways; a second map is the
	 * same address. */
	void *cpu = NULL, *cpu2 = NULL;
	EXPECT(amdgpu_bo_cpu_map(bo, &cpu), 0);
	TRUE_OR_DIE(cpu != NULL && cpu != buf);
	TRUE_OR_DIE(memcmp((char *)cpu + 4096, "shared bytes", 12) == 0);
	memcpy((char *)cpu + 8192, "from the map", 12);
	TRUE_OR_DIE(memcmp((char *)buf + 8192, "from the map", 12) == 0);
	EXPECT(amdgpu_bo_cpu_map(bo, &cpu2), 0);
	TRUE_OR_DIE(cpu2 == cpu);

	/* GPU VA, as ROCr maps imported system memory: at the CPU address. */
	uint64_t va = (uint64_t)(uintptr_t)cpu;
	EXPECT(amdgpu_bo_va_op(bo, 0, MIB - 100, va, 0, AMDGPU_VA_OP_MAP), 0);
	EXPECT(amdgpu_bo_va_op(bo, 0, 4096, va, 0, AMDGPU_VA_OP_MAP), -EINVAL);
	EXPECT(amdgpu_bo_va_op(bo, 0, MIB, va, 0, AMDGPU_VA_OP_UNMAP), 0);
	EXPECT(amdgpu_bo_va_op(bo, 0, MIB, va, 0, AMDGPU_VA_OP_UNMAP), -ENOENT);
	EXPECT(amdgpu_bo_va_op(bo, 0, MIB, va, 0, 7), -EINVAL);

	/* Bad input: errors, never a crash. */
	struct amdgpu_bo_import_result bad;
	EXPECT(amdgpu_bo_import(dev, amdgpu_bo_handle_type_kms, 1, &bad), -EPERM);
	EXPECT(amdgpu_bo_import(dev, amdgpu_bo_handle_type_gem_flink_name, 1, &bad), -EACCES);
	EXPECT(amdgpu_bo_import(dev, (enum amdgpu_bo_handle_type)9, 1, &bad), -EINVAL);
	EXPECT(amdgpu_bo_import(dev, amdgpu_bo_handle_type_dma_buf_fd, fd, NULL), -EINVAL);
	EXPECT(amdgpu_bo_import((amdgpu_device_handle)(uintptr_t)0x1000,
				amdgpu_bo_handle_type_dma_buf_fd, fd, &bad), -EINVAL);
	int pipefd[2];
	TRUE_OR_DIE(pipe(pipefd) == 0);
	TRUE_OR_DIE(amdgpu_bo_import(dev, amdgpu_bo_handle_type_dma_buf_fd, pipefd[0], &bad) < 0);
	close(pipefd[0]);
	close(pipefd[1]);
	EXPECT(amdgpu_bo_query_info(bo, NULL), -EINVAL);
	EXPECT(amdgpu_bo_cpu_map(bo, NULL), -EINVAL);
	EXPECT(amdgpu_bo_set_metadata(bo, NULL), -EINVAL);
	EXPECT(amdgpu_bo_query_info((amdgpu_bo_handle)(uintptr_t)0x1000, &info), -EINVAL);

	/* Two references: the first free keeps the object, the second frees
	 * it (and its CPU mapping); then it is unknown. */
	EXPECT(amdgpu_bo_free(bo), 0);
	EXPECT(amdgpu_bo_query_info(bo, &info), 0);
	EXPECT(amdgpu_bo_free(bo), 0);
	EXPECT(amdgpu_bo_free(bo), -EINVAL);
	EXPECT(amdgpu_bo_query_info(bo, &info), -EINVAL);

	close(fd);
	EXPECT(hsaKmtUnmapMemoryToGPUCtx(ctx, buf), HSAKMT_STATUS_SUCCESS);
	EXPECT(hsaKmtFreeMemoryCtx(ctx, buf, MIB), HSAKMT_STATUS_SUCCESS);
	EXPECT(hsaKmtReleaseSystemPropertiesCtx(ctx), HSAKMT_STATUS_SUCCESS);
	EXPECT(hsaKmtCloseKFDCtx(), HSAKMT_STATUS_SUCCESS);
	DtifDestroy();
	printf("dtif bo ok\n");
	return 0;
}
