/*
 * kfd-rs hsakmt fork test (legacy API only, so that the same binary runs
 * on Debian's libhsakmt and on ours): after fork() the child sees the
 * primary context closed until it opens it again. Prints one status per
 * line; tests/c_api.rs diffs the two libraries' output.
 */
#include <hsakmt.h>

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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
