/*
 * kmt_smoke: exercises Debian's libhsakmt (the C thunk) on the kfd-sim
 * LD_PRELOAD simulator. Built and run by kfd-sim/tests/preload_kmt.rs.
 *
 * Usage: kmt_smoke MODE [ARG]
 *   smoke          every check below (first GPU node)
 *   topology       open, print the topology, close
 *   probe          open + topology snapshot + close (to count the ioctls
 *                  the library issues before the first user allocation)
 *   fault          one VRAM allocation (expected to fail by injection),
 *                  then one that succeeds; prints the status codes
 *   isolate BYTE   VRAM buffer: must start zeroed, is filled with BYTE,
 *                  must still hold only BYTE after a pause (run two at once)
 *   dmabuf-send    raw KFD ioctls: a GTT buffer filled with a pattern through
 *                  the render-node mapping, exported as a dma-buf and sent
 *                  over a UNIX socket to a child process (this program,
 *                  exec'ed as "dmabuf-recv FD"), which must see the pattern
 *   dmabuf-recv FD receives the dma-buf, registers it with
 *                  hsaKmtRegisterGraphicsHandleToNodes and checks its bytes,
 *                  then maps it to the GPU and writes it with an SDMA
 *                  queue (bounded wait on the fence and on a memory-
 *                  exception event, which a GPU fault would set)
 *
 * Prints "OK <check>" / "FAIL <check>: ..." lines and "ALL OK" at the end;
 * the exit status is the number of failed checks (at most 100).
 */
#include <errno.h>
#include <fcntl.h>
#include <hsakmt.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define MIB (1024ull * 1024ull)

static HsaSystemProperties sys_props;
static uint32_t gpu_node = UINT32_MAX;

static void print_topology(void)
{
	unsigned cpus = 0, gpus = 0;
	for (uint32_t n = 0; n < sys_props.NumNodes; n++) {
		HsaNodeProperties p;
		HSAKMT_STATUS s = hsaKmtGetNodeProperties(n, &p);
		CHECK(s == HSAKMT_STATUS_SUCCESS, "node_properties", "node %u status %d", n, s);
		if (s != HSAKMT_STATUS_SUCCESS)
			continue;
		char name[64] = {0};
		for (int i = 0; i < 63 && p.MarketingName[i]; i++)
			name[i] = (char)p.MarketingName[i];
		if (p.NumFComputeCores) {
			gpus++;
			if (gpu_node == UINT32_MAX)
				gpu_node = n;
		}
		if (p.NumCPUCores)
			cpus++;
		printf("node %u: cpu_cores=%u simds=%u gfx=%u.%u.%u wave=%u mem_banks=%u caches=%u links=%u "
		       "device_id=0x%x name=%s\n",
		       n, p.NumCPUCores, p.NumFComputeCores, p.EngineId.ui32.Major, p.EngineId.ui32.Minor,
		       p.EngineId.ui32.Stepping, p.WaveFrontSize, p.NumMemoryBanks, p.NumCaches, p.NumIOLinks,
		       p.DeviceId, name);

		if (p.NumMemoryBanks) {
			HsaMemoryProperties *m = calloc(p.NumMemoryBanks, sizeof(*m));
			s = hsaKmtGetNodeMemoryProperties(n, p.NumMemoryBanks, m);
			CHECK(s == HSAKMT_STATUS_SUCCESS, "memory_properties", "node %u status %d", n, s);
			free(m);
		}
		if (p.NumCaches) {
			HsaCacheProperties *c = calloc(p.NumCaches, sizeof(*c));
			s = hsaKmtGetNodeCacheProperties(n, p.CComputeIdLo ? p.CComputeIdLo : p.FComputeIdLo,
							 p.NumCaches, c);
			CHECK(s == HSAKMT_STATUS_SUCCESS, "cache_properties", "node %u status %d", n, s);
			/* CPU caches in the library's order, with their siblings. */
			for (uint32_t i = 0; s == HSAKMT_STATUS_SUCCESS && !p.NumFComputeCores && i < p.NumCaches;
			     i++) {
				printf("cache %u.%u: level=%u size=%u type=0x%x proc=%u siblings=", n, i,
				       c[i].CacheLevel, c[i].CacheSize, c[i].CacheType.Value, c[i].ProcessorIdLow);
				const char *sep = "";
				for (int b = 0; b < HSA_CPU_SIBLINGS; b++) {
					if (c[i].SiblingMap[b]) {
						printf("%s%d", sep, b);
						sep = ",";
					}
				}
				printf("\n");
			}
			free(c);
		}
		if (p.NumIOLinks) {
			HsaIoLinkProperties *l = calloc(p.NumIOLinks, sizeof(*l));
			s = hsaKmtGetNodeIoLinkProperties(n, p.NumIOLinks, l);
			CHECK(s == HSAKMT_STATUS_SUCCESS, "io_link_properties", "node %u status %d", n, s);
			free(l);
		}
	}
	printf("topology: nodes=%u cpus=%u gpus=%u\n", sys_props.NumNodes, cpus, gpus);
}

static int open_and_snapshot(void)
{
	HSAKMT_STATUS s = hsaKmtOpenKFD();
	CHECK(s == HSAKMT_STATUS_SUCCESS, "open", "status %d", s);
	if (s != HSAKMT_STATUS_SUCCESS)
		return -1;
	HsaVersionInfo v;
	s = hsaKmtGetVersion(&v);
	CHECK(s == HSAKMT_STATUS_SUCCESS && v.KernelInterfaceMajorVersion == 1, "version", "status %d major %u", s,
	      v.KernelInterfaceMajorVersion);
	s = hsaKmtAcquireSystemProperties(&sys_props);
	CHECK(s == HSAKMT_STATUS_SUCCESS && sys_props.NumNodes > 0, "system_properties", "status %d nodes %u", s,
	      sys_props.NumNodes);
	return s == HSAKMT_STATUS_SUCCESS ? 0 : -1;
}

static void close_kfd(void)
{
	HSAKMT_STATUS s = hsaKmtReleaseSystemProperties();
	CHECK(s == HSAKMT_STATUS_SUCCESS, "release_system_properties", "status %d", s);
	s = hsaKmtCloseKFD();
	CHECK(s == HSAKMT_STATUS_SUCCESS, "close", "status %d", s);
}

static HsaMemFlags vram_flags(void)
{
	HsaMemFlags f = {0};
	f.ui32.PageSize = HSA_PAGE_SIZE_4KB;
	f.ui32.HostAccess = 1;
	f.ui32.NonPaged = 1;
	f.ui32.NoSubstitute = 1;
	return f;
}

static HsaMemFlags system_flags(void)
{
	HsaMemFlags f = {0};
	f.ui32.PageSize = HSA_PAGE_SIZE_4KB;
	f.ui32.HostAccess = 1;
	return f;
}

/* alloc + map + CPU write/read + unmap + free */
static void memory_roundtrip(const char *what, uint32_t node, HsaMemFlags flags, uint8_t pattern)
{
	char name[64];
	void *p = NULL;
	uint64_t size = 2 * MIB;
	HSAKMT_STATUS s = hsaKmtAllocMemory(node, size, flags, &p);
	snprintf(name, sizeof(name), "%s_alloc", what);
	CHECK(s == HSAKMT_STATUS_SUCCESS && p, name, "status %d", s);
	if (s != HSAKMT_STATUS_SUCCESS || !p)
		return;
	uint64_t gpuva = 0;
	s = hsaKmtMapMemoryToGPU(p, size, &gpuva);
	snprintf(name, sizeof(name), "%s_map", what);
	CHECK(s == HSAKMT_STATUS_SUCCESS, name, "status %d", s);
	memset(p, pattern, size);
	int bad = 0;
	for (uint64_t i = 0; i < size; i += 4093)
		bad |= ((uint8_t *)p)[i] != pattern;
	snprintf(name, sizeof(name), "%s_cpu_rw", what);
	CHECK(!bad, name, "read back differs");
	s = hsaKmtUnmapMemoryToGPU(p);
	snprintf(name, sizeof(name), "%s_unmap", what);
	CHECK(s == HSAKMT_STATUS_SUCCESS, name, "status %d", s);
	s = hsaKmtFreeMemory(p, size);
	snprintf(name, sizeof(name), "%s_free", what);
	CHECK(s == HSAKMT_STATUS_SUCCESS, name, "status %d", s);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *set_later(void *arg)
{
	usleep(100 * 1000);
	hsaKmtSetEvent((HsaEvent *)arg);
	return NULL;
}

static void events(void)
{
	HsaEventDescriptor d = {0};
	d.EventType = HSA_EVENTTYPE_SIGNAL;
	d.NodeId = gpu_node;
	d.SyncVar.SyncVar.UserData = NULL;
	d.SyncVar.SyncVarSize = sizeof(HSAuint64);
	HsaEvent *ev = NULL;
	HSAKMT_STATUS s = hsaKmtCreateEvent(&d, false, false, &ev);
	CHECK(s == HSAKMT_STATUS_SUCCESS && ev, "event_create", "status %d", s);
	if (!ev)
		return;

	double t0 = now_ms();
	s = hsaKmtWaitOnEvent(ev, 50);
	double dt = now_ms() - t0;
	CHECK(s == HSAKMT_STATUS_WAIT_TIMEOUT && dt >= 40, "event_wait_timeout", "status %d after %.1f ms", s, dt);

	s = hsaKmtSetEvent(ev);
	CHECK(s == HSAKMT_STATUS_SUCCESS, "event_set", "status %d", s);
	s = hsaKmtWaitOnEvent(ev, 1000);
	CHECK(s == HSAKMT_STATUS_SUCCESS, "event_wait_signaled", "status %d", s);
	/* auto-reset: the wait consumed the signal */
	s = hsaKmtWaitOnEvent(ev, 10);
	CHECK(s == HSAKMT_STATUS_WAIT_TIMEOUT, "event_auto_reset", "status %d", s);

	pthread_t t;
	pthread_create(&t, NULL, set_later, ev);
	t0 = now_ms();
	s = hsaKmtWaitOnEvent(ev, 5000);
	dt = now_ms() - t0;
	pthread_join(t, NULL);
	CHECK(s == HSAKMT_STATUS_SUCCESS && dt >= 50 && dt < 4000, "event_cross_thread", "status %d after %.1f ms",
	      s, dt);

	s = hsaKmtDestroyEvent(ev);
	CHECK(s == HSAKMT_STATUS_SUCCESS, "event_destroy", "status %d", s);
}

static void queue(const char *what, HSA_QUEUE_TYPE type)
{
	char name[64];
	uint64_t ring_size = 64 * 1024;
	void *ring = NULL, *ptrs = NULL;
	HSAKMT_STATUS s = hsaKmtAllocMemory(0, ring_size, system_flags(), &ring);
	HSAKMT_STATUS s2 = hsaKmtAllocMemory(0, 4096, system_flags(), &ptrs);
	snprintf(name, sizeof(name), "%s_queue_buffers", what);
	CHECK(s == HSAKMT_STATUS_SUCCESS && s2 == HSAKMT_STATUS_SUCCESS, name, "status %d/%d", s, s2);
	if (!ring || !ptrs)
		return;
	hsaKmtMapMemoryToGPU(ring, ring_size, NULL);
	hsaKmtMapMemoryToGPU(ptrs, 4096, NULL);
	memset(ptrs, 0, 4096);

	HsaQueueResource q;
	memset(&q, 0, sizeof(q));
	q.Queue_read_ptr_aql = (HSAuint64 *)ptrs;
	q.Queue_write_ptr_aql = (HSAuint64 *)((char *)ptrs + 64);
	s = hsaKmtCreateQueue(gpu_node, type, 100, HSA_QUEUE_PRIORITY_NORMAL, ring, ring_size, NULL, &q);
	snprintf(name, sizeof(name), "%s_queue_create", what);
	CHECK(s == HSAKMT_STATUS_SUCCESS && q.QueueDoorBell, name, "status %d doorbell %p", s,
	      (void *)q.Queue_DoorBell);
	if (s == HSAKMT_STATUS_SUCCESS) {
		s = hsaKmtDestroyQueue(q.QueueId);
		snprintf(name, sizeof(name), "%s_queue_destroy", what);
		CHECK(s == HSAKMT_STATUS_SUCCESS, name, "status %d", s);
	}
	hsaKmtUnmapMemoryToGPU(ring);
	hsaKmtUnmapMemoryToGPU(ptrs);
	hsaKmtFreeMemory(ring, ring_size);
	hsaKmtFreeMemory(ptrs, 4096);
}

static void svm(void)
{
	size_t size = 4 * MIB;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "svm_mmap", "mmap failed");
	if (p == MAP_FAILED)
		return;
	HSA_SVM_ATTRIBUTE set[] = {
		{HSA_SVM_ATTR_PREFERRED_LOC, gpu_node},
		{HSA_SVM_ATTR_SET_FLAGS, HSA_SVM_FLAG_HOST_ACCESS | HSA_SVM_FLAG_COHERENT},
		{HSA_SVM_ATTR_GRANULARITY, 9},
	};
	HSAKMT_STATUS s = hsaKmtSVMSetAttr(p, size, 3, set);
	CHECK(s == HSAKMT_STATUS_SUCCESS, "svm_set_attr", "status %d", s);
	HSA_SVM_ATTRIBUTE get[] = {
		{HSA_SVM_ATTR_PREFERRED_LOC, 0},
		{HSA_SVM_ATTR_SET_FLAGS, 0},
		{HSA_SVM_ATTR_GRANULARITY, 0},
	};
	s = hsaKmtSVMGetAttr(p, size, 3, get);
	CHECK(s == HSAKMT_STATUS_SUCCESS && get[0].value == gpu_node &&
		      (get[1].value & (HSA_SVM_FLAG_HOST_ACCESS | HSA_SVM_FLAG_COHERENT)) ==
			      (HSA_SVM_FLAG_HOST_ACCESS | HSA_SVM_FLAG_COHERENT) &&
		      get[2].value == 9,
	      "svm_get_attr", "status %d preferred %u flags 0x%x granularity %u", s, get[0].value, get[1].value,
	      get[2].value);
	/* a sub-range keeps the attributes (split) */
	s = hsaKmtSVMGetAttr((char *)p + MIB, MIB, 3, get);
	CHECK(s == HSAKMT_STATUS_SUCCESS && get[0].value == gpu_node && get[2].value == 9, "svm_get_attr_subrange",
	      "status %d preferred %u granularity %u", s, get[0].value, get[2].value);
	munmap(p, size);
}

/* kfdtest PartialUnmapSysMemTest's memory pattern: an SVM range of 16
 * pages loses 4 pages in the middle to munmap; new memory mapped in the
 * hole must register as a userptr buffer (the kernel's MMU notifier
 * dropped those pages from the range), and the rest keeps its attributes. */
static void svm_partial_unmap(void)
{
	size_t page = 4096, size = 16 * page;
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "unmap_mmap", "mmap failed");
	if (p == MAP_FAILED)
		return;
	HSA_SVM_ATTRIBUTE set[] = {
		{HSA_SVM_ATTR_PREFERRED_LOC, gpu_node},
		{HSA_SVM_ATTR_SET_FLAGS, HSA_SVM_FLAG_HOST_ACCESS | HSA_SVM_FLAG_COHERENT},
	};
	HSAKMT_STATUS s = hsaKmtSVMSetAttr(p, size, 2, set);
	CHECK(s == HSAKMT_STATUS_SUCCESS, "unmap_svm_set_attr", "status %d", s);
	char *hole = p + 2 * page;
	size_t hole_size = 4 * page;
	CHECK(munmap(hole, hole_size) == 0, "unmap_partial_munmap", "errno %d", errno);
	char *q = mmap(hole, hole_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	CHECK(q == hole, "unmap_remap_hole", "mmap gave %p for %p", (void *)q, (void *)hole);
	if (q == hole) {
		memset(q, 0x3c, hole_size);
		s = hsaKmtRegisterMemory(q, hole_size);
		CHECK(s == HSAKMT_STATUS_SUCCESS, "unmap_register_in_hole", "status %d", s);
		if (s == HSAKMT_STATUS_SUCCESS) {
			HSAuint64 va = 0;
			s = hsaKmtMapMemoryToGPU(q, hole_size, &va);
			CHECK(s == HSAKMT_STATUS_SUCCESS, "unmap_map_hole", "status %d", s);
			if (s == HSAKMT_STATUS_SUCCESS)
				hsaKmtUnmapMemoryToGPU(q);
			hsaKmtDeregisterMemory(q);
		}
	}
	HSA_SVM_ATTRIBUTE get[] = {{HSA_SVM_ATTR_PREFERRED_LOC, 0}};
	s = hsaKmtSVMGetAttr(p + 8 * page, 8 * page, 1, get);
	CHECK(s == HSAKMT_STATUS_SUCCESS && get[0].value == gpu_node, "unmap_rest_keeps_attributes",
	      "status %d preferred %u", s, get[0].value);
	munmap(p, size);
}

static void clocks(void)
{
	HsaClockCounters a, b;
	HSAKMT_STATUS s = hsaKmtGetClockCounters(gpu_node, &a);
	usleep(1000);
	HSAKMT_STATUS s2 = hsaKmtGetClockCounters(gpu_node, &b);
	CHECK(s == HSAKMT_STATUS_SUCCESS && s2 == HSAKMT_STATUS_SUCCESS && a.SystemClockFrequencyHz > 0 &&
		      b.SystemClockCounter > a.SystemClockCounter && b.GPUClockCounter >= a.GPUClockCounter,
	      "clock_counters", "status %d/%d freq %llu sys %llu->%llu", s, s2,
	      (unsigned long long)a.SystemClockFrequencyHz, (unsigned long long)a.SystemClockCounter,
	      (unsigned long long)b.SystemClockCounter);
}

static int finish(void)
{
	if (failures == 0)
		printf("ALL OK\n");
	else
		printf("FAILED %d\n", failures);
	return failures > 100 ? 100 : failures;
}

/* The few KFD uapi definitions dmabuf-send needs (linux/kfd_ioctl.h
 * needs the kernel's drm/drm.h, and older copies lack EXPORT_DMABUF). */
struct sim_acquire_vm_args {
	uint32_t drm_fd;
	uint32_t gpu_id;
};
struct sim_alloc_args {
	uint64_t va_addr;
	uint64_t size;
	uint64_t handle;
	uint64_t mmap_offset;
	uint32_t gpu_id;
	uint32_t flags;
};
struct sim_free_args {
	uint64_t handle;
};
struct sim_export_dmabuf_args {
	uint64_t handle;
	uint32_t flags;
	uint32_t dmabuf_fd;
};
#define SIM_IOC_ACQUIRE_VM _IOW('K', 0x15, struct sim_acquire_vm_args)
#define SIM_IOC_ALLOC _IOWR('K', 0x16, struct sim_alloc_args)
#define SIM_IOC_FREE _IOW('K', 0x17, struct sim_free_args)
#define SIM_IOC_EXPORT_DMABUF _IOWR('K', 0x24, struct sim_export_dmabuf_args)
#define SIM_ALLOC_GTT (1u << 1)
#define SIM_ALLOC_WRITABLE (1u << 31)

#define DMABUF_SIZE (1 * MIB)

/* Where the receiver's SDMA queue writes, and what. */
#define DMABUF_SDMA_OFFSET 256
static const uint32_t dmabuf_sdma_words[4] = {0xfeedf00du, 27, 0x5a5a5a5au, 0xc0ffee00u};

static uint8_t pattern(uint64_t i)
{
	return (uint8_t)(i * 7 + (i >> 12) + 1);
}

static int dmabuf_send(const char *self)
{
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "send_socketpair", "errno %d", errno);
	fcntl(sv[0], F_SETFD, FD_CLOEXEC);
	pid_t child = fork();
	if (child == 0) {
		char fdarg[16];
		close(sv[0]);
		snprintf(fdarg, sizeof(fdarg), "%d", sv[1]);
		execl(self, self, "dmabuf-recv", fdarg, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);

	int kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	int drm = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
	CHECK(kfd >= 0 && drm >= 0, "send_open", "kfd %d drm %d", kfd, drm);
	unsigned gpu_id = 0;
	FILE *f = fopen("/sys/class/kfd/kfd/topology/nodes/1/gpu_id", "r");
	CHECK(f && fscanf(f, "%u", &gpu_id) == 1 && gpu_id, "send_gpu_id", "no gpu_id");
	if (f)
		fclose(f);
	struct sim_acquire_vm_args vm = {.drm_fd = (uint32_t)drm, .gpu_id = gpu_id};
	CHECK(ioctl(kfd, SIM_IOC_ACQUIRE_VM, &vm) == 0, "send_acquire_vm", "errno %d", errno);
	struct sim_alloc_args al = {
		.va_addr = 0x100000000ull,
		.size = DMABUF_SIZE,
		.gpu_id = gpu_id,
		.flags = SIM_ALLOC_GTT | SIM_ALLOC_WRITABLE,
	};
	CHECK(ioctl(kfd, SIM_IOC_ALLOC, &al) == 0, "send_alloc", "errno %d", errno);
	uint8_t *p = mmap(NULL, DMABUF_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, drm, (off_t)al.mmap_offset);
	CHECK(p != MAP_FAILED, "send_mmap", "errno %d", errno);
	if (p != MAP_FAILED)
		for (uint64_t i = 0; i < DMABUF_SIZE; i++)
			p[i] = pattern(i);
	struct sim_export_dmabuf_args ex = {.handle = al.handle, .flags = O_CLOEXEC};
	CHECK(ioctl(kfd, SIM_IOC_EXPORT_DMABUF, &ex) == 0, "send_export", "errno %d", errno);

	char byte = 'd';
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	memset(&ctl, 0, sizeof(ctl));
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	int dfd = (int)ex.dmabuf_fd;
	memcpy(CMSG_DATA(c), &dfd, sizeof(int));
	CHECK(sendmsg(sv[0], &msg, 0) == 1, "send_dmabuf_fd", "errno %d", errno);
	/* The receiver writes back; wait for it, 20 s at most (then kill it). */
	int status = -1;
	pid_t r = 0;
	for (int ms = 0; ms < 20000 && (r = waitpid(child, &status, WNOHANG)) == 0; ms += 10)
		usleep(10000);
	if (r == 0) {
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
	}
	CHECK(r == child, "send_child_finished", "still running after 20 s: killed");
	CHECK(r == child && WIFEXITED(status) && WEXITSTATUS(status) == 0, "send_child_ok", "child status %d", status);
	if (p != MAP_FAILED) {
		CHECK(p[100] == 0xee, "send_sees_receiver_write", "byte %#x", p[100]);
		CHECK(!memcmp(p + DMABUF_SDMA_OFFSET, dmabuf_sdma_words, sizeof(dmabuf_sdma_words)),
		      "send_sees_receiver_sdma_write", "first byte %#x", p[DMABUF_SDMA_OFFSET]);
		munmap(p, DMABUF_SIZE);
	}
	close(dfd);
	struct sim_free_args fr = {.handle = al.handle};
	CHECK(ioctl(kfd, SIM_IOC_FREE, &fr) == 0, "send_free", "errno %d", errno);
	close(drm);
	close(kfd);
	close(sv[0]);
	return finish();
}

/* The receiver's GPU writes into the imported buffer at `va`: SDMA
 * WRITE (op 2) of four dwords, FENCE (op 5) of the event id into the
 * event's slot, TRAP (op 6). The memory-exception event is manual-reset,
 * so it is still set after the wait if a GPU fault woke it. */
static void recv_sdma_write(uint64_t va)
{
	HSAKMT_STATUS s = hsaKmtMapMemoryToGPU((void *)(uintptr_t)va, DMABUF_SIZE, NULL);
	CHECK(s == HSAKMT_STATUS_SUCCESS, "recv_map_to_gpu", "status %d", s);
	HsaEventDescriptor d;
	memset(&d, 0, sizeof(d));
	d.EventType = HSA_EVENTTYPE_SIGNAL;
	d.NodeId = gpu_node;
	HsaEvent *done = NULL, *fault = NULL;
	HSAKMT_STATUS s1 = hsaKmtCreateEvent(&d, false, false, &done);
	d.EventType = HSA_EVENTTYPE_MEMORY;
	HSAKMT_STATUS s2 = hsaKmtCreateEvent(&d, true, false, &fault);
	CHECK(s1 == HSAKMT_STATUS_SUCCESS && s2 == HSAKMT_STATUS_SUCCESS, "recv_events", "status %d/%d", s1, s2);
	void *ring = NULL, *ptrs = NULL;
	s1 = hsaKmtAllocMemory(0, 4096, system_flags(), &ring);
	s2 = hsaKmtAllocMemory(0, 4096, system_flags(), &ptrs);
	CHECK(s1 == HSAKMT_STATUS_SUCCESS && s2 == HSAKMT_STATUS_SUCCESS, "recv_queue_buffers", "status %d/%d", s1,
	      s2);
	if (s != HSAKMT_STATUS_SUCCESS || !done || !fault || !ring || !ptrs)
		goto out;
	hsaKmtMapMemoryToGPU(ring, 4096, NULL);
	hsaKmtMapMemoryToGPU(ptrs, 4096, NULL);
	memset(ring, 0, 4096);
	memset(ptrs, 0, 4096);
	HsaQueueResource q;
	memset(&q, 0, sizeof(q));
	q.Queue_read_ptr_aql = (HSAuint64 *)ptrs;
	q.Queue_write_ptr_aql = (HSAuint64 *)((char *)ptrs + 64);
	s = hsaKmtCreateQueue(gpu_node, HSA_QUEUE_SDMA, 100, HSA_QUEUE_PRIORITY_NORMAL, ring, 4096, NULL, &q);
	CHECK(s == HSAKMT_STATUS_SUCCESS, "recv_sdma_queue", "status %d", s);
	if (s != HSAKMT_STATUS_SUCCESS)
		goto out;
	uint64_t dst = va + DMABUF_SDMA_OFFSET, slot = done->EventData.HWData2;
	uint32_t id = done->EventId;
	uint32_t cmds[] = {
		2, (uint32_t)dst, (uint32_t)(dst >> 32), 3,
		dmabuf_sdma_words[0], dmabuf_sdma_words[1], dmabuf_sdma_words[2], dmabuf_sdma_words[3],
		5, (uint32_t)slot, (uint32_t)(slot >> 32), id,
		6, id,
	};
	memcpy(ring, cmds, sizeof(cmds));
	uint64_t wptr = sizeof(cmds);
	__atomic_store_n((uint64_t *)q.Queue_write_ptr_aql, wptr, __ATOMIC_RELEASE);
	if (q.Queue_DoorBell)
		__atomic_store_n((uint64_t *)q.Queue_DoorBell, wptr, __ATOMIC_RELEASE);
	HsaEvent *both[2] = {done, fault};
	s = hsaKmtWaitOnMultipleEvents(both, 2, false, 5000);
	CHECK(s == HSAKMT_STATUS_SUCCESS, "recv_sdma_woken", "wait status %d", s);
	s = hsaKmtWaitOnEvent(fault, 0);
	CHECK(s == HSAKMT_STATUS_WAIT_TIMEOUT, "recv_sdma_no_gpu_fault", "memory exception at %#llx",
	      (unsigned long long)fault->EventData.EventData.MemoryAccessFault.VirtualAddress);
	hsaKmtDestroyQueue(q.QueueId);
out:
	if (ring) {
		hsaKmtUnmapMemoryToGPU(ring);
		hsaKmtFreeMemory(ring, 4096);
	}
	if (ptrs) {
		hsaKmtUnmapMemoryToGPU(ptrs);
		hsaKmtFreeMemory(ptrs, 4096);
	}
	if (done)
		hsaKmtDestroyEvent(done);
	if (fault)
		hsaKmtDestroyEvent(fault);
	if (s1 == HSAKMT_STATUS_SUCCESS)
		hsaKmtUnmapMemoryToGPU((void *)(uintptr_t)va);
}

static void dmabuf_recv(int sock)
{
	char byte = 0;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf)};
	ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	int fd = -1;
	if (n == 1 && c && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	CHECK(fd >= 0, "recv_dmabuf_fd", "n %zd errno %d", n, errno);
	if (fd < 0)
		return;
	HsaGraphicsResourceInfo info;
	memset(&info, 0, sizeof(info));
	HSAKMT_STATUS s = hsaKmtRegisterGraphicsHandleToNodes((HSAuint64)fd, &info, 1, &gpu_node);
	CHECK(s == HSAKMT_STATUS_SUCCESS && info.SizeInBytes == DMABUF_SIZE, "recv_register", "status %d size %llu", s,
	      (unsigned long long)info.SizeInBytes);
	uint8_t *p = mmap(NULL, DMABUF_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED, "recv_mmap", "errno %d", errno);
	if (p != MAP_FAILED) {
		uint64_t bad = 0;
		for (uint64_t i = 0; i < DMABUF_SIZE; i++)
			bad += p[i] != pattern(i);
		CHECK(bad == 0, "recv_sees_sender_bytes", "%llu bytes differ", (unsigned long long)bad);
		p[100] = 0xee;
		munmap(p, DMABUF_SIZE);
	}
	if (s == HSAKMT_STATUS_SUCCESS) {
		recv_sdma_write((uint64_t)(uintptr_t)info.MemoryAddress);
		hsaKmtDeregisterMemory(info.MemoryAddress);
	}
	close(fd);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "smoke";
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (!strcmp(mode, "dmabuf-send"))
		return dmabuf_send(argv[0]);

	if (open_and_snapshot() != 0)
		return finish() ? finish() : 1;

	if (!strcmp(mode, "probe")) {
		close_kfd();
		return finish();
	}
	print_topology();
	CHECK(gpu_node != UINT32_MAX, "gpu_present", "no GPU node");
	if (gpu_node == UINT32_MAX || !strcmp(mode, "topology")) {
		close_kfd();
		return finish();
	}

	if (!strcmp(mode, "fault")) {
		void *p = NULL;
		HSAKMT_STATUS s = hsaKmtAllocMemory(gpu_node, 2 * MIB, vram_flags(), &p);
		printf("fault_alloc_status=%d\n", s);
		CHECK(s != HSAKMT_STATUS_SUCCESS, "fault_alloc_fails", "status %d", s);
		p = NULL;
		s = hsaKmtAllocMemory(gpu_node, 2 * MIB, vram_flags(), &p);
		CHECK(s == HSAKMT_STATUS_SUCCESS, "alloc_after_fault", "status %d", s);
		if (s == HSAKMT_STATUS_SUCCESS)
			hsaKmtFreeMemory(p, 2 * MIB);
		close_kfd();
		return finish();
	}

	if (!strcmp(mode, "svm-unmap")) {
		svm_partial_unmap();
		close_kfd();
		return finish();
	}

	if (!strcmp(mode, "dmabuf-recv")) {
		dmabuf_recv(argc > 2 ? atoi(argv[2]) : -1);
		close_kfd();
		return finish();
	}

	if (!strcmp(mode, "isolate")) {
		uint8_t byte = (uint8_t)strtoul(argc > 2 ? argv[2] : "165", NULL, 0);
		uint64_t size = 4 * MIB;
		void *p = NULL;
		HSAKMT_STATUS s = hsaKmtAllocMemory(gpu_node, size, vram_flags(), &p);
		CHECK(s == HSAKMT_STATUS_SUCCESS, "isolate_alloc", "status %d", s);
		if (s == HSAKMT_STATUS_SUCCESS) {
			hsaKmtMapMemoryToGPU(p, size, NULL);
			int dirty = 0;
			for (uint64_t i = 0; i < size; i++)
				dirty |= ((uint8_t *)p)[i] != 0;
			CHECK(!dirty, "isolate_starts_zeroed", "new VRAM holds someone's data");
			memset(p, byte, size);
			printf("isolate_va=%p\n", p);
			usleep(300 * 1000);
			int foreign = 0;
			for (uint64_t i = 0; i < size; i++)
				foreign |= ((uint8_t *)p)[i] != byte;
			CHECK(!foreign, "isolate_keeps_own_data", "buffer changed under us");
			hsaKmtUnmapMemoryToGPU(p);
			hsaKmtFreeMemory(p, size);
		}
		close_kfd();
		return finish();
	}

	memory_roundtrip("vram", gpu_node, vram_flags(), 0x5a);
	memory_roundtrip("system", 0, system_flags(), 0xa5);
	events();
	queue("compute", HSA_QUEUE_COMPUTE_AQL);
	queue("sdma", HSA_QUEUE_SDMA);
	svm();
	clocks();
	close_kfd();
	return finish();
}
