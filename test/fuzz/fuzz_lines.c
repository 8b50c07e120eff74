/*
 * fuzz_lines.c - libFuzzer target: the "Key: value" parsers (status, smaps,
 * meminfo) fed arbitrary bytes in arbitrary chunk sizes (the first byte
 * picks the chunk size). Invariants: no crash, no UB, and a figure is
 * either negative (none) or a non-negative byte count.
 */
#include <stdlib.h>
#include <string.h>

#include "procfs.h"
#include "keys.h"
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
	procfs_fieldset status = keys_fieldset(&keys_status, &st);
	procfs_fieldset smaps = keys_fieldset(&keys_smaps, &sm);
	procfs_fieldset meminfo = keys_fieldset(&keys_meminfo, &mi);

	if (size == 0)
		return 0;
	chunk = 1 + data[0] % 64;
	data++;
	size--;
	procfs_fields_init(&status);
	feed(data, size, chunk, procfs_fields_line, &status);
	procfs_fields_init(&smaps);
	feed(data, size, chunk, procfs_fields_line, &smaps);
	procfs_fields_init(&meminfo);
	feed(data, size, chunk, procfs_fields_line, &meminfo);
	if (st.vm_rss < -2 || sm.pss < -2 || mi.mem_total < -2)
		abort();
	(void) procfs_fields_count(&status);
	(void) procfs_fields_count(&smaps);
	return 0;
}
