/*
 * fuzz_lines.c - libFuzzer target: the "Key: value" parsers (status, smaps,
 * meminfo) and the "key value" ones of a memory cgroup (memory.stat and
 * memory.events, v1 and v2) fed arbitrary bytes in arbitrary chunk sizes
 * (the first byte picks the chunk size). Invariants: no crash, no UB, and a
 * figure is either negative (none: -1, invalid: -2) or a non-negative byte
 * count; so is the cgroup's kernel memory added up from its parts. The
 * pressure stall parser (psi.h) on the same bytes: -1 or 0..10000.
 */
#include <stdlib.h>
#include <string.h>

#include "linux/keys.h"
#include "linux/procfs.h"
#include "linux/psi.h"
#include "linux/sysmem.h"

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
	const procfs_keys *cgroup_keys[] = {&keys_cgroup_v2_stat, &keys_cgroup_v2_events, &keys_cgroup_v1_stat};

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
	{
		psi_memory psi;
		int			whole = psi_parse((const char *) data, size, &psi);

		if (psi.some_avg10 < -1 || psi.some_avg10 > 10000 || psi.full_avg10 < -1 || psi.full_avg10 > 10000 ||
			(whole == 0) != (psi.some_avg10 >= 0 && psi.full_avg10 >= 0))
			abort();
	}
	(void) procfs_fields_count(&status);
	(void) procfs_fields_count(&smaps);
	for (int version = 1; version <= 2; version++)
	{
		sysmem_cgroup cg = {.version = version};
		sysmem_cgmem cm;

		sysmem_cgmem_init(&cm);
		for (size_t k = version == 1 ? 2 : 0; k < (version == 1 ? 3 : 2); k++)
		{
			procfs_fieldset fs = keys_fieldset(cgroup_keys[k], &cm);

			feed(data, size, chunk, procfs_fields_line, &fs);
		}
#define CGMEM_CHECK(name) if (cm.name < -2) abort();
		SYSMEM_CGMEM_FIELDS(CGMEM_CHECK)
#undef CGMEM_CHECK
		if (sysmem_cgmem_kernel(&cg, &cm) < -2)
			abort();
	}
	return 0;
}
