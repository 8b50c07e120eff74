/*
 * fuzz_fields.c - libFuzzer target: the one-line parsers (/proc/PID/stat,
 * /proc/PID/schedstat and statm, integers, process titles, maps lines, cgroup
 * limits) and the small whole-file ones (a cgroup's memory.stat as v1 and
 * v2, /proc/vmstat's moved pages). Invariants: no crash, no UB; the title
 * is NUL-terminated within its buffer; a parsed stat has a ppid and a
 * thread count, a parsed schedstat figures within int64_t, statm its shared
 * within its resident, the moved pages by kind their sum, a memory.stat
 * figure is a number or none (-1) or invalid (-2); what a backend holds
 * from statm is -1 or resident minus shared, as procfs_parse_statm() reads it.
 * The input as a line of /proc/sysvipc/shm (a parsed segment has no negative
 * size), and a maps line's mapping offered to a posix DSM table to learn by
 * its name in an empty directory (dsm.h: it learns nothing, and a process's
 * segments stay none).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linux/dsm.h"
#include "linux/pagemap.h"
#include "linux/procfs.h"
#include "linux/sysmem.h"
#include "linux/titles.h"
#include "rules/guard_rules.h"
#include "rules/pressure.h"
#include "rules/reuse.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *) data;
	procfs_stat st;
	int64_t		v;
	char		title[32];
	procfs_vma	vma;
	procfs_schedstat ss;
	procfs_statm sm;
	pressure_cgroup_stat cs;
	uint64_t	anon, file, uid, cuid;
	dsm_segment seg;
	static char dir[] = "/tmp/procmem-fuzz-dsm-XXXXXX";
	static int	made;

	if (procfs_parse_stat(s, size, &st) == 0 && (st.ppid < 0 || st.threads < 0))
		abort();
	if (procfs_parse_schedstat(s, size, &ss) == 0 &&
		(ss.runtime_ns > (uint64_t) INT64_MAX || ss.timeslices > (uint64_t) INT64_MAX))
		abort();
	for (int version = 1; version <= 2; version++)
	{
		pressure_parse_cgroup_stat(s, size, version, &cs);
		if (cs.file < -2 || cs.shmem < -2 || cs.slab_reclaimable < -2 ||
			(version == 1 && cs.slab_reclaimable != 0))
			abort();
	}
	if (procfs_parse_statm(s, size, &sm) == 0 &&
		(sm.resident < 0 || sm.shared < 0 || sm.shared > sm.resident))
		abort();
	v = guard_held_from_statm(s, size, 4096);
	if (v < -1 || (v >= 0 && procfs_parse_statm(s, size, &sm) == 0 && sysconf(_SC_PAGESIZE) == 4096 &&
				   v != sm.resident - sm.shared))
		abort();
	reuse_sum_moved_by_kind(s, size, &anon, &file);
	if (anon + file != reuse_sum_moved(s, size))
		abort();
	(void) procfs_parse_int(s, size, &v);
	titles_to_type(s, size, "main", size & 1 ? TITLES_ONE_LR_WORKER : 0, title, sizeof(title));
	if (memchr(title, '\0', sizeof(title)) == NULL)
		abort();
	if (procfs_parse_maps_line(s, size, &vma) == 0)
	{
		if (vma.start >= vma.end || vma.path < s || vma.path + vma.path_len != s + size)
			abort();
		(void) pagemap_vma_wanted(&vma, 0);
		(void) pagemap_vma_wanted(&vma, 1);
		if (!made)
			made = mkdtemp(dir) != NULL;
		if (made)
		{
			dsm_table	t;
			dsm_mapped	m = {0};

			if (dsm_table_read(&t, DSM_KIND_POSIX, dir, "PostgreSQL.", getuid(), -1) == 0)
			{
				vma.shared = 1;
				vma.dev = t.dev;
				dsm_table_learn(&t, &vma, vma.path, vma.path_len);
				dsm_mapped_meet(&m, &t, &vma);
				if (t.n != 0 || m.n != 0)
					abort();
			}
			dsm_table_free(&t);
		}
	}
	if (dsm_parse_sysv_line(s, size, &seg, &uid, &cuid) == 0 && (seg.size < 0 || seg.bytes < 0))
		abort();
	v = sysmem_parse_limit(s, size);
	if (v < -2)
		abort();
	return 0;
}
