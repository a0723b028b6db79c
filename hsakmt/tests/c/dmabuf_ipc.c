/*
 * kfd-rs hsakmt test (issue 27): VRAM shared with a forked child through
 * hsaKmtShareMemory (the newest build falls back to a dma-buf where the
 * kernel lacks ROCm's IPC ioctl, as kfd-sim does), imported there with
 * hsaKmtRegisterSharedHandle and mapped, then written by an SDMA queue
 * of the child. The parent sees the child's bytes through its own CPU
 * view of the buffer.
 *
 * Every wait is bounded: the child waits for its SDMA fence together
 * with a memory-exception event (a GPU fault on the imported buffer sets
 * that one instead, and the child reports it), and the parent gives the
 * child 20 s before it kills it and fails. Prints "OK name" or
 * "FAIL name: detail" per check; exits 0 when every check passed.
 */
#include <hsakmt.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SIZE (64u * 1024u)
#define RING 4096u

static int failures;

static void check(int ok, const char *who, const char *name, const char *detail, long v)
{
	if (ok) {
		printf("OK %s_%s\n", who, name);
	} else {
		printf("FAIL %s_%s: %s %ld\n", who, name, detail, v);
		failures++;
	}
	fflush(stdout);
}

/* The first node with compute cores. The node properties are read into
 * a buffer big enough for any generation's layout; the leading counts
 * are the same in all of them. */
static HSAuint32 gpu_node(HSAuint32 nodes)
{
	for (HSAuint32 n = 0; n < nodes; n++) {
		union { HsaNodeProperties p; char pad[4096]; } np;
		memset(&np, 0, sizeof(np));
		if (hsaKmtGetNodeProperties(n, &np.p) == HSAKMT_STATUS_SUCCESS &&
		    np.p.NumFComputeCores > 0)
			return n;
	}
	return 0;
}

static HsaMemFlags host_flags(void)
{
	HsaMemFlags f;
	memset(&f, 0, sizeof(f));
	f.ui32.HostAccess = 1;
	return f;
}

static void *host_buffer(HSAuint64 size, int exec)
{
	HsaMemFlags f = host_flags();
	void *p = NULL;
	f.ui32.ExecuteAccess = exec;
	if (hsaKmtAllocMemory(0, size, f, &p) != HSAKMT_STATUS_SUCCESS)
		return NULL;
	if (hsaKmtMapMemoryToGPU(p, size, NULL) != HSAKMT_STATUS_SUCCESS) {
		hsaKmtFreeMemory(p, size);
		return NULL;
	}
	memset(p, 0, size);
	return p;
}

static void free_host(void *p, HSAuint64 size)
{
	if (!p)
		return;
	hsaKmtUnmapMemoryToGPU(p);
	hsaKmtFreeMemory(p, size);
}

static HsaEvent *event(HSAuint32 node, HSA_EVENTTYPE type, bool manual)
{
	HsaEventDescriptor d;
	HsaEvent *e = NULL;
	memset(&d, 0, sizeof(d));
	d.EventType = type;
	d.NodeId = node;
	d.SyncVar.SyncVar.UserData = NULL;
	if (hsaKmtCreateEvent(&d, manual, false, &e) != HSAKMT_STATUS_SUCCESS)
		return NULL;
	return e;
}

/* The child: reopen (a forked child sees the primary closed), import,
 * map, write 16 bytes and fill a page through SDMA, fence and trap. */
static int child(const HsaSharedMemoryHandle *h, HSAuint32 g)
{
	HsaSystemProperties sys;
	HSAKMT_STATUS s;
	void *mem = NULL, *ring = NULL, *ptrs = NULL;
	HSAuint64 size = 0, alt = 0;
	HsaEvent *done = NULL, *fault = NULL;
	union { HsaQueueResource q; char pad[1024]; } qr;
	int queue = 0;

	check(hsaKmtOpenKFD() == HSAKMT_STATUS_SUCCESS, "child", "open", "status", 0);
	s = hsaKmtAcquireSystemProperties(&sys);
	check(s == HSAKMT_STATUS_SUCCESS, "child", "acquire", "status", s);
	s = hsaKmtRegisterSharedHandle(h, &mem, &size);
	check(s == HSAKMT_STATUS_SUCCESS && mem && size == SIZE, "child", "register_shared_handle",
	      "status", s);
	if (s != HSAKMT_STATUS_SUCCESS)
		goto out;
	s = hsaKmtMapMemoryToGPU(mem, size, &alt);
	check(s == HSAKMT_STATUS_SUCCESS, "child", "map_imported", "status", s);
	done = event(g, HSA_EVENTTYPE_SIGNAL, false);
	/* Manual reset: it stays set for the check after the wait. */
	fault = event(g, HSA_EVENTTYPE_MEMORY, true);
	ring = host_buffer(RING, 1);
	ptrs = host_buffer(4096, 0);
	check(done && fault && ring && ptrs, "child", "queue_resources", "missing", 0);
	if (s != HSAKMT_STATUS_SUCCESS || !done || !fault || !ring || !ptrs)
		goto out;

	memset(&qr, 0, sizeof(qr));
	qr.q.Queue_read_ptr = (HSAuint32 *)ptrs;
	qr.q.Queue_write_ptr = (HSAuint32 *)((char *)ptrs + 64);
	s = hsaKmtCreateQueue(g, HSA_QUEUE_SDMA, 100, HSA_QUEUE_PRIORITY_NORMAL, ring, RING, NULL,
			      &qr.q);
	check(s == HSAKMT_STATUS_SUCCESS, "child", "create_sdma_queue", "status", s);
	if (s != HSAKMT_STATUS_SUCCESS)
		goto out;
	queue = 1;

	/* SDMA packets: WRITE (op 2) of four dwords, constant FILL (op 11,
	 * dword fill) of the second page, FENCE (op 5) of the event id into
	 * the event's slot, TRAP (op 6) with the event id. */
	uint64_t dst = (uint64_t)(uintptr_t)mem;
	uint64_t slot = done->EventData.HWData2;
	uint32_t id = done->EventId;
	uint32_t cmds[] = {
		2, (uint32_t)(dst + 64), (uint32_t)((dst + 64) >> 32), 3,
		0xfeedf00du, 27, 0x5a5a5a5au, 0xc0ffee00u,
		11u | 2u << 30, (uint32_t)(dst + 4096), (uint32_t)((dst + 4096) >> 32), 0x27272727u, 4096 - 1,
		5, (uint32_t)slot, (uint32_t)(slot >> 32), id,
		6, id,
	};
	memcpy(ring, cmds, sizeof(cmds));
	uint64_t wptr = sizeof(cmds);
	__atomic_store_n((uint64_t *)qr.q.Queue_write_ptr, wptr, __ATOMIC_RELEASE);
	if (qr.q.Queue_DoorBell)
		__atomic_store_n((uint64_t *)qr.q.Queue_DoorBell, wptr, __ATOMIC_RELEASE);

	HsaEvent *both[2] = {done, fault};
	s = hsaKmtWaitOnMultipleEvents(both, 2, false, 5000);
	check(s == HSAKMT_STATUS_SUCCESS, "child", "woken", "wait status (7 = timeout)", s);
	/* A GPU fault sets the memory-exception event: the write must not. */
	s = hsaKmtWaitOnEvent(fault, 0);
	check(s == HSAKMT_STATUS_WAIT_TIMEOUT, "child", "no_memory_exception",
	      "memory exception event set: GPU fault", (long)fault->EventData.EventData.MemoryAccessFault.VirtualAddress);
	/* The fence event is auto-reset (the wait above consumed it): the
	 * bytes say whether the work was done. */
	const uint32_t *w = (const uint32_t *)mem;
	check(w[16] == 0xfeedf00du && w[17] == 27 && w[18] == 0x5a5a5a5au && w[19] == 0xc0ffee00u,
	      "child", "sees_sdma_write", "dword", (long)w[16]);
	check(w[1024] == 0x27272727u && w[2047] == 0x27272727u && w[2048] == 0x11111111u,
	      "child", "sees_sdma_fill", "dword", (long)w[1024]);

out:
	if (queue)
		hsaKmtDestroyQueue(qr.q.QueueId);
	free_host(ring, RING);
	free_host(ptrs, 4096);
	if (done)
		hsaKmtDestroyEvent(done);
	if (fault)
		hsaKmtDestroyEvent(fault);
	if (mem) {
		hsaKmtUnmapMemoryToGPU(mem);
		hsaKmtDeregisterMemory(mem);
	}
	hsaKmtReleaseSystemProperties();
	hsaKmtCloseKFD();
	return failures ? 1 : 0;
}

int main(void)
{
	HsaSystemProperties sys;
	HsaSharedMemoryHandle h;
	HsaMemFlags f = host_flags();
	void *p = NULL;
	HSAKMT_STATUS s;
	int status = 0;

	check(hsaKmtOpenKFD() == HSAKMT_STATUS_SUCCESS, "parent", "open", "status", 0);
	s = hsaKmtAcquireSystemProperties(&sys);
	check(s == HSAKMT_STATUS_SUCCESS, "parent", "acquire", "status", s);
	HSAuint32 g = gpu_node(sys.NumNodes);
	check(g != 0, "parent", "gpu_node", "none among", sys.NumNodes);
	f.ui32.NonPaged = 1;
	s = hsaKmtAllocMemory(g, SIZE, f, &p);
	check(s == HSAKMT_STATUS_SUCCESS, "parent", "alloc_vram", "status", s);
	if (s != HSAKMT_STATUS_SUCCESS)
		return 1;
	memset(p, 0x11, SIZE);
	memset(&h, 0, sizeof(h));
	s = hsaKmtShareMemory(p, SIZE, &h);
	check(s == HSAKMT_STATUS_SUCCESS, "parent", "share_memory", "status", s);
	if (s != HSAKMT_STATUS_SUCCESS)
		return 1;

	pid_t pid = fork();
	if (pid == 0)
		_exit(child(&h, g));
	check(pid > 0, "parent", "fork", "pid", pid);

	/* Bounded: 20 s, then the child is killed and the run fails. */
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t r = 0;
	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r != 0)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec > 20) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		usleep(10000);
	}
	check(r == pid, "parent", "child_finished", "hung; killed after 20 s", r);
	check(r == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0, "parent", "child_ok",
	      "wait status", status);
	const uint32_t *w = (const uint32_t *)p;
	check(w[16] == 0xfeedf00du && w[17] == 27 && w[1024] == 0x27272727u, "parent",
	      "sees_child_sdma_write", "dword", (long)w[16]);

	s = hsaKmtFreeMemory(p, SIZE);
	check(s == HSAKMT_STATUS_SUCCESS, "parent", "free", "status", s);
	hsaKmtReleaseSystemProperties();
	hsaKmtCloseKFD();
	return failures ? 1 : 0;
}
