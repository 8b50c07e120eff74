/*
 * fuzz_fields.c - libFuzzer target: the one-line parsers (/proc/PID/stat,
 * integers, process titles, maps lines, cgroup limits). Invariants: no
 * crash, no UB; the title is NUL-terminated within its buffer.
 */
#include <stdlib.h>
#include <string.h>

#include "pagemap.h"
#include "procfs.h"
#include "sysmem.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *) data;
	procfs_stat st;
	int64_t		v;
	char		title[32];
	procfs_vma	vma;

	(void) procfs_parse_stat(s, size, &st);
	(void) procfs_parse_int(s, size, &v);
	procfs_title_to_type(s, size, "main", title, sizeof(title));
	if (memchr(title, '\0', sizeof(title)) == NULL)
		abort();
	if (procfs_parse_maps_line(s, size, &vma) == 0)
	{
		if (vma.start >= vma.end || vma.path < s || vma.path + vma.path_len != s + size)
			abort();
		(void) pagemap_vma_wanted(&vma, 0);
		(void) pagemap_vma_wanted(&vma, 1);
	}
	v = sysmem_parse_limit(s, size);
	if (v < -2)
		abort();
	return 0;
}
