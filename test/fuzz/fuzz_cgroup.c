/*
 * fuzz_cgroup.c - libFuzzer target: finding the memory cgroup from the texts
 * of /proc/self/cgroup and /proc/self/mountinfo (the input split at its first
 * NUL byte). Invariants: no crash, no UB; a found cgroup has a version, a
 * NUL-terminated directory under its mount point. The whole input is also
 * parsed as a sysfs size ("491520K"): no overflow, a multiple of 1024 with
 * a K suffix.
 */
#include <stdlib.h>
#include <string.h>

#include "linux/sysmem.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *) data;
	const char *nul = memchr(s, '\0', size);
	size_t		clen = nul ? (size_t) (nul - s) : size;
	sysmem_cgroup cg;
	int64_t		bytes = sysmem_parse_size(s, size);

	if (bytes > 0 && size > 0 && s[size - 1] == 'K' && bytes % 1024 != 0)
		abort();

	if (sysmem_parse_cgroup(s, clen, nul ? nul + 1 : s + size,
							nul ? size - clen - 1 : 0, &cg) == 0)
	{
		if ((cg.version != 1 && cg.version != 2) ||
			memchr(cg.dir, '\0', sizeof(cg.dir)) == NULL ||
			strncmp(cg.dir, cg.mount, strlen(cg.mount)) != 0)
			abort();
	}
	return 0;
}
