/* The OK/FAIL protocol of the C test programs: each check prints one
 * "OK name" or "FAIL name: details" line (flushed, so a crash keeps what
 * came before), and `failures` counts the failed ones for the exit status.
 */
#ifndef KFD_SIM_TEST_CHECK_H
#define KFD_SIM_TEST_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, name, ...)                                        \
	do {                                                          \
		if (cond) {                                           \
			printf("OK %s\n", name);                      \
		} else {                                              \
			failures++;                                   \
			printf("FAIL %s: ", name);                    \
			printf(__VA_ARGS__);                          \
			printf("\n");                                 \
		}                                                     \
		fflush(stdout);                                       \
	} while (0)

#endif
