/*
 * kfd-rs hsakmt fork test (legacy API only, so that the same binary runs
 * on Debian's libhsakmt and on ours): after fork() the child sees the
 * primary context closed until it opens it again, and then still has the
 * parent's topology snapshot. Prints one status per line; tests/c_api.rs
 * diffs the two libraries' output.
 */
#include <hsakmt.h>

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * After a reopen, without AcquireSystemProperties: the topology snapshot
 * duplicated from the parent is still valid (openclose.c keeps it), so
 * node 1 can be queried and used. The structs are passed in buffers big
 * enough for any generation's layout.
 */
static void child_uses_the_snapshot(void)
{
	union { HsaNodeProperties p; char pad[4096]; } np;
	HsaClockCounters cc;
	HsaEventDescriptor desc;
	HsaEvent *event = NULL;
	union { HsaQueueResource q; char pad[1024]; } qr;
	HsaMemFlags flags;
	void *ring = NULL;

	memset(&desc, 0, sizeof(desc));
	desc.EventType = HSA_EVENTTYPE_SIGNAL;
	desc.NodeId = 1;
	memset(&qr, 0, sizeof(qr));
	memset(&flags, 0, sizeof(flags));
	flags.ui32.HostAccess = 1;
	printf("child node properties %d\n", hsaKmtGetNodeProperties(1, &np.p));
	printf("child clock counters %d\n", hsaKmtGetClockCounters(1, &cc));
	printf("child create event %d\n", hsaKmtCreateEvent(&desc, true, false, &event));
	printf("child alloc ring %d\n", hsaKmtAllocMemory(0, 4096, flags, &ring));
	printf("child create queue %d\n",
	       hsaKmtCreateQueue(1, HSA_QUEUE_COMPUTE, 100, HSA_QUEUE_PRIORITY_NORMAL,
				 ring, 4096, NULL, &qr.q));
	printf("child destroy queue %d\n", hsaKmtDestroyQueue(qr.q.QueueId));
	printf("child destroy event %d\n", hsaKmtDestroyEvent(event));
	printf("child free ring %d\n", hsaKmtFreeMemory(ring, 4096));
	printf("child close again %d\n", hsaKmtCloseKFD());
}

int main(void)
{
	HsaVersionInfo v;
	HsaSystemProperties sys;
	HsaMemFlags flags;
	void *p = NULL;
	int status = 0;
	pid_t pid;

	memset(&flags, 0, sizeof(flags));
	flags.ui32.HostAccess = 1;
	printf("parent open %d\n", hsaKmtOpenKFD());
	printf("parent acquire %d\n", hsaKmtAcquireSystemProperties(&sys));
	printf("parent alloc %d\n", hsaKmtAllocMemory(0, 4096, flags, &p));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		printf("child version %d\n", hsaKmtGetVersion(&v));
		printf("child acquire %d\n", hsaKmtAcquireSystemProperties(&sys));
		printf("child alloc %d\n", hsaKmtAllocMemory(0, 4096, flags, &p));
		printf("child close %d\n", hsaKmtCloseKFD());
		printf("child reopen %d\n", hsaKmtOpenKFD());
		child_uses_the_snapshot();
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	printf("child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	printf("parent version %d\n", hsaKmtGetVersion(&v));
	printf("parent free %d\n", hsaKmtFreeMemory(p, 4096));
	printf("parent close %d\n", hsaKmtCloseKFD());
	return 0;
}
