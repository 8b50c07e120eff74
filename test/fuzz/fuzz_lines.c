/*
 * fuzz_lines.c - libFuzzer target: the "Key: value" parsers (status, smaps,
 * meminfo) fed arbitrary bytes in arbitrary chunk sizes (the first byte
 * picks the chunk size). Invariants: no crash, no UB, and a figure is
 * either negative (none) or a non-negative byte count.
 */
#include <stdlib.h>
#include <string.h>

#include "procfs.h"
#include "sysmem.h"

static void
feed(const uint8_t *data, size_t size, size_t chunk, procfs_line_fn fn, void *arg)
{
	procfs_lines lb;

	procfs_lines_init(&lb, fn, arg);
	for (size_t off = 0; off < size; off += chunk)
		procfs_lines_feed(&lb, (const char *) data + off, size - off < chunk ? size - off : chunk);
	procfs_lines_finish(&lb);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t		chunk;
	procfs_status st;
	procfs_smaps sm;
	sysmem_meminfo mi;

	if (size == 0)
		return 0;
	chunk = 1 + data[0] % 64;
	data++;
	size--;
	procfs_status_init(&st);
	feed(data, size, chunk, procfs_status_line, &st);
	procfs_smaps_init(&sm);
	feed(data, size, chunk, procfs_smaps_line, &sm);
	sysmem_meminfo_init(&mi);
	feed(data, size, chunk, sysmem_meminfo_line, &mi);
	if (st.vm_rss < -2 || sm.pss < -2 || mi.mem_total < -2)
		abort();
	(void) procfs_status_count(&st);
	(void) procfs_smaps_count(&sm);
	return 0;
}
