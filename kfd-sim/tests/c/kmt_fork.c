/*
 * kmt_fork: fork() with Debian's libhsakmt on the kfd-sim LD_PRELOAD
 * simulator. Built and run by kfd-sim/tests/preload_fork.rs.
 *
 * The parent opens KFD (the library, plus a raw /dev/kfd of its own) and
 * allocates; a helper thread keeps issuing ioctls and closes through the
 * simulator while the parent forks, so the fork lands while it holds the
 * simulator's locks. The child:
 *   - gets EBADF from an ioctl on the parent's raw kfd descriptor (the
 *     kernel's "Using KFD FD in wrong process"), and the library reports
 *     its inherited context closed;
 *   - closes and reopens KFD through the library, which must work, and
 *     allocates and frees memory;
 *   - opens /dev/kfd raw itself: GET_VERSION works on it.
 * The parent's context is untouched afterwards. Each child runs under an
 * alarm, so a deadlock fails the test instead of hanging it.
 *
 * Prints "OK <check>" / "FAIL <check>: ..." lines and "ALL OK" at the end;
 * the exit status is the number of failed checks (at most 100).
 */
#include <errno.h>
#include <fcntl.h>
#include <hsakmt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* From the kernel's kfd_ioctl.h (which needs the DRM headers). */
struct kfd_ioctl_get_version_args {
	uint32_t major_version;
	uint32_t minor_version;
};
#define AMDKFD_IOC_GET_VERSION _IOR('K', 0x01, struct kfd_ioctl_get_version_args)

#include "check.h"

static atomic_int stop;
static int parent_kfd = -1;

/* Keeps the simulator busy: ioctls (file table, trace) and dup/close
 * (file table, descriptor scan) on the parent's raw kfd descriptor. */
static void *churn(void *unused)
{
	(void)unused;
	while (!atomic_load(&stop)) {
		struct kfd_ioctl_get_version_args v;
		memset(&v, 0, sizeof(v));
		ioctl(parent_kfd, AMDKFD_IOC_GET_VERSION, &v);
		int d = dup(parent_kfd);
		if (d >= 0)
			close(d);
	}
	return NULL;
}

static HsaMemFlags host_flags(void)
{
	HsaMemFlags f;
	memset(&f, 0, sizeof(f));
	f.ui32.HostAccess = 1;
	return f;
}

/* The child's checks; returns the number of failures. */
static int child(void)
{
	HsaVersionInfo v;
	HsaSystemProperties sys;
	struct kfd_ioctl_get_version_args kv;
	void *p = NULL;
	int r, e;

	alarm(20);
	failures = 0;
	memset(&kv, 0, sizeof(kv));
	errno = 0;
	r = ioctl(parent_kfd, AMDKFD_IOC_GET_VERSION, &kv);
	e = errno;
	CHECK(r == -1 && e == EBADF, "child_parent_fd_ebadf", "ioctl %d errno %d", r, e);
	r = hsaKmtGetVersion(&v);
	CHECK(r == HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED, "child_inherited_closed",
	      "status %d", r);
	r = hsaKmtCloseKFD();
	CHECK(r == HSAKMT_STATUS_SUCCESS || r == HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED,
	      "child_close", "status %d", r);
	r = hsaKmtOpenKFD();
	CHECK(r == HSAKMT_STATUS_SUCCESS, "child_reopen", "status %d", r);
	r = hsaKmtGetVersion(&v);
	CHECK(r == HSAKMT_STATUS_SUCCESS && v.KernelInterfaceMajorVersion == 1, "child_version",
	      "status %d major %u", r, v.KernelInterfaceMajorVersion);
	r = hsaKmtAcquireSystemProperties(&sys);
	CHECK(r == HSAKMT_STATUS_SUCCESS && sys.NumNodes >= 2, "child_topology",
	      "status %d nodes %u", r, sys.NumNodes);
	r = hsaKmtAllocMemory(0, 4096, host_flags(), &p);
	CHECK(r == HSAKMT_STATUS_SUCCESS && p, "child_alloc", "status %d", r);
	if (r == HSAKMT_STATUS_SUCCESS) {
		memset(p, 0x5a, 4096);
		r = hsaKmtFreeMemory(p, 4096);
		CHECK(r == HSAKMT_STATUS_SUCCESS, "child_free", "status %d", r);
	}
	r = hsaKmtReleaseSystemProperties();
	CHECK(r == HSAKMT_STATUS_SUCCESS, "child_release_topology", "status %d", r);
	r = hsaKmtCloseKFD();
	CHECK(r == HSAKMT_STATUS_SUCCESS, "child_close_again", "status %d", r);

	int own = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	CHECK(own >= 0, "child_open_raw", "errno %d", errno);
	memset(&kv, 0, sizeof(kv));
	r = ioctl(own, AMDKFD_IOC_GET_VERSION, &kv);
	CHECK(r == 0 && kv.major_version == 1, "child_raw_version", "ioctl %d errno %d", r, errno);
	close(own);
	close(parent_kfd);
	return failures;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	HsaVersionInfo v;
	HsaSystemProperties sys;
	void *p = NULL;
	pthread_t t;
	int r;

	r = hsaKmtOpenKFD();
	CHECK(r == HSAKMT_STATUS_SUCCESS, "parent_open", "status %d", r);
	r = hsaKmtAcquireSystemProperties(&sys);
	CHECK(r == HSAKMT_STATUS_SUCCESS, "parent_topology", "status %d", r);
	r = hsaKmtAllocMemory(0, 4096, host_flags(), &p);
	CHECK(r == HSAKMT_STATUS_SUCCESS, "parent_alloc", "status %d", r);
	parent_kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	CHECK(parent_kfd >= 0, "parent_open_raw", "errno %d", errno);
	pthread_create(&t, NULL, churn, NULL);

	for (int i = 0; i < rounds; i++) {
		int status = 0;
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			int f = child();
			_exit(f > 100 ? 100 : f);
		}
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child_exit",
		      "round %d status %#x (signal %d)", i, status,
		      WIFSIGNALED(status) ? WTERMSIG(status) : 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			break;
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);

	r = hsaKmtGetVersion(&v);
	CHECK(r == HSAKMT_STATUS_SUCCESS, "parent_version", "status %d", r);
	r = hsaKmtFreeMemory(p, 4096);
	CHECK(r == HSAKMT_STATUS_SUCCESS, "parent_free", "status %d", r);
	close(parent_kfd);
	r = hsaKmtReleaseSystemProperties();
	CHECK(r == HSAKMT_STATUS_SUCCESS, "parent_release_topology", "status %d", r);
	r = hsaKmtCloseKFD();
	CHECK(r == HSAKMT_STATUS_SUCCESS, "parent_close", "status %d", r);
	if (failures == 0)
		printf("ALL OK\n");
	return failures > 100 ? 100 : failures;
}
