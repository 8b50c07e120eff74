/*
 * system.c
 *		SQL-callable functions: the machine's memory, the server's cgroup, and
 *		its shared memory. The views built on them live in the install script.
 */
#include "server/compat.h"

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "storage/proc.h"
#include "utils/builtins.h"

#include "linux/keys.h"
#include "linux/pagemap.h"
#include "linux/sysmem.h"
#include "rules/dsm_groups.h"
#include "server/dsm_segments.h"
#include "server/members.h"
#include "server/rows.h"
#include "server/walk.h"

PG_FUNCTION_INFO_V1(pg_procmem_system_info);
PG_FUNCTION_INFO_V1(pg_procmem_shared_memory);
PG_FUNCTION_INFO_V1(pg_procmem_machine_info);
PG_FUNCTION_INFO_V1(pg_procmem_cgroup_memory);

/* Result columns, in every released shape (see rows.h) */
#define SYSTEM_INFO_NCOLS_V1_0 37	/* 1.0.0 to 1.2.0 */
static const int system_info_shapes[] = {SYSTEM_INFO_NCOLS_V1_0};
#define SHARED_MEMORY_NCOLS_V1_0 6	/* 1.0.0, 1.1.0 */
#define SHARED_MEMORY_NCOLS_V1_2 7	/* + main_segment_resident_exact */
#define SHARED_MEMORY_NCOLS SHARED_MEMORY_NCOLS_V1_2
static const int shared_memory_shapes[] = {SHARED_MEMORY_NCOLS_V1_0, SHARED_MEMORY_NCOLS_V1_2};
#define MACHINE_INFO_NCOLS_V1_1 12	/* 1.1.0, 1.2.0 */
static const int machine_info_shapes[] = {MACHINE_INFO_NCOLS_V1_1};
#define CGROUP_MEMORY_NCOLS_V1_3 16	/* 1.3.0 */
static const int cgroup_memory_shapes[] = {CGROUP_MEMORY_NCOLS_V1_3};

/* "6.18.44-foo" -> 60018: major * 10000 + minor, or -1. */
static int64
kernel_version_num(const char *release)
{
	int			major, minor;

	if (sscanf(release, "%d.%d", &major, &minor) != 2)
		return -1;
	return (int64) major * 10000 + minor;
}

/*
 * pg_procmem_system_info() - one row: /proc/meminfo, the vm and THP
 * settings, and the memory cgroup the server runs in.
 */
Datum
pg_procmem_system_info(PG_FUNCTION_ARGS)
{
	Datum		values[SYSTEM_INFO_NCOLS_V1_0];
	bool		nulls[SYSTEM_INFO_NCOLS_V1_0];
	sysmem_meminfo mi;
	sysmem_cgroup cg;
	sysmem_cgmem cm;
	struct utsname un;
	char		thp[32];
	int64		v;
	int			i = 0;

	memset(nulls, 0, sizeof(nulls));
	sysmem_read_meminfo(&mi);
	sysmem_find_cgroup(&cg);
	sysmem_read_cgmem(&cg, &cm);

	put_int8(values, nulls, i++, mi.mem_total);
	put_int8(values, nulls, i++, mi.mem_available);
	put_int8(values, nulls, i++, mi.page_tables);
	put_int8(values, nulls, i++, mi.kernel_stack);
	put_int8(values, nulls, i++, mi.shmem);
	put_int8(values, nulls, i++, mi.committed_as);
	put_int8(values, nulls, i++, mi.commit_limit);
	put_int8(values, nulls, i++, mi.swap_total);
	put_int8(values, nulls, i++, mi.swap_free);
	put_int8(values, nulls, i++, mi.hugepages_total);
	put_int8(values, nulls, i++, mi.hugepages_free);
	put_int8(values, nulls, i++, mi.hugepages_rsvd);
	put_int8(values, nulls, i++, mi.hugepages_surp);
	put_int8(values, nulls, i++, mi.hugepagesize);
	put_int8(values, nulls, i++, mi.anon_hugepages);
	v = sysmem_read_int("/proc/sys/vm/overcommit_memory");
	put_int4(values, nulls, i++, v, v < 0);
	sysmem_read_mode("/sys/kernel/mm/transparent_hugepage/enabled", thp, sizeof(thp));
	put_text(values, nulls, i++, thp);
	if (uname(&un) == 0)
	{
		put_text(values, nulls, i++, un.release);
		v = kernel_version_num(un.release);
		put_int4(values, nulls, i++, v, v < 0);
	}
	else
	{
		nulls[i++] = true;
		nulls[i++] = true;
	}
	put_int4(values, nulls, i++, cg.version, cg.version <= 0);
	put_text(values, nulls, i++, cg.version > 0 ? cg.path : NULL);
	put_int8(values, nulls, i++, cm.usage);
	put_int8(values, nulls, i++, cm.limit);
	put_int8(values, nulls, i++, cm.effective_limit);
	put_int8(values, nulls, i++, cm.room);
	put_int8(values, nulls, i++, cm.high);
	put_int8(values, nulls, i++, cm.swap_usage);
	put_int8(values, nulls, i++, cm.anon);
	put_int8(values, nulls, i++, cm.file);
	put_int8(values, nulls, i++, cm.shmem);
	put_int8(values, nulls, i++, cm.pagetables);
	put_int8(values, nulls, i++, cm.kernel_stack);
	put_int8(values, nulls, i++, cm.kernel);
	put_int8(values, nulls, i++, cm.sock);
	put_int8(values, nulls, i++, cm.oom);
	put_int8(values, nulls, i++, cm.oom_kill);
	put_int8(values, nulls, i++, cm.failcnt);
	Assert(i == SYSTEM_INFO_NCOLS_V1_0);
	PG_RETURN_DATUM(one_row(fcinfo, system_info_shapes, lengthof(system_info_shapes), values, nulls));
}

/*
 * The DSM segments this server's processes map (dsm_segments.h), each
 * counted once; for dynamic_shared_memory_type = mmap the unmapped ones too
 * (pg_dynshmem is this data directory's own: a file there is ours, mapped
 * or not; /dev/shm and System V segments are every cluster's on the host).
 * Returns false when some process's mappings could not be read, or the
 * segments listed.
 */
static bool
dsm_usage(int64 *count, int64 *bytes)
{
	procmem_members m;
	/* in the context: its reset frees what the table holds (dsm_segments.h) */
	dsm_table  *t = palloc(sizeof(dsm_table));
	pid_t	   *pids;
	int			n, nmembers = 0;
	dsm_member *members;
	dsm_mapped *mapped;
	int64	   *each, *own;
	dsm_totals	totals;
	bool		known;
	bool		use_query = !(procmem_current_options(false).pagemap_flags & PAGEMAP_NO_PROCMAP_QUERY);

	if (!procmem_dsm_table_read(t))
		return false;
	procmem_members_begin(&m);
	pids = procmem_candidates(&n);
	members = palloc(sizeof(dsm_member) * Max(n, 1));
	mapped = palloc(sizeof(dsm_mapped) * Max(n, 1));
	known = true;
	for (int i = 0; i < n && known; i++)
	{
		procfs_stat id;
		procmem_membership kind;

		CHECK_FOR_INTERRUPTS();
		kind = procmem_member(&m, pids[i], &id);
		if (kind == MEMBER_HIDDEN)
			known = false;
		if (kind != MEMBER_POSTMASTER && kind != MEMBER_PGPROC && kind != MEMBER_CHILD)
			continue;
		/* a segment only it maps would be missed */
		if (dsm_read_mapped(pids[i], t, &mapped[nmembers], use_query) == PROCFS_UNREADABLE)
			known = false;
		members[nmembers].group = pids[i];
		members[nmembers].mapped = &mapped[nmembers];
		nmembers++;
	}
	procmem_members_end(&m);
	each = palloc(sizeof(int64) * Max(nmembers, 1));
	own = palloc(sizeof(int64) * Max(nmembers, 1));
	known = known && dsm_groups_sum(t, members, nmembers, (int64_t *) each, (int64_t *) own,
									&totals, NULL) == 0;
	if (known)
	{
		*count = totals.segments;
		*bytes = totals.mapped;
		if (t->kind == DSM_KIND_MMAP)
		{
			*count += totals.unmapped_segments;
			*bytes += totals.unmapped;
		}
	}
	pfree(pids);
	return known;
}

/*
 * pg_procmem_shared_memory(with_usage) - one row: the main shared memory
 * segment (its size, and how much of it is resident, whoever touched it),
 * the dynamic shared memory segments, and the postmaster's VmPeak. Without
 * with_usage (the huge pages view needs neither) the resident and DSM
 * figures are NULL and cost nothing; the 1.0.0 definition has no argument.
 */
Datum
pg_procmem_shared_memory(PG_FUNCTION_ARGS)
{
	bool		with_usage = PG_NARGS() > 0 ? PG_GETARG_BOOL(0) : true;
	Datum		values[SHARED_MEMORY_NCOLS];
	bool		nulls[SHARED_MEMORY_NCOLS];
	uint64		start, end;
	int			hugetlb;
	int			exact = 0;
	int64		resident = -1;
	int64		dsm_count = 0, dsm_bytes = 0;
	bool		dsm_known = false;
	procfs_status st;
	procfs_fieldset status;
	int			i = 0;

	memset(nulls, 0, sizeof(nulls));
	/* ProcGlobal lives in the main segment: its mapping is the segment */
	if (sysmem_self_mapping(ProcGlobal, &start, &end, &hugetlb) == 0)
	{
		/* hugetlb pages are reserved whole at start: all of it is taken */
		if (hugetlb)
		{
			resident = (int64) (end - start);
			exact = 1;
		}
		else if (with_usage)
			resident = sysmem_resident_estimate((void *) (uintptr_t) start, end - start, &exact);
		put_int8(values, nulls, i++, (int64) (end - start));
		put_int8(values, nulls, i++, with_usage ? resident : -1);
		values[i++] = BoolGetDatum(hugetlb != 0);
	}
	else
	{
		nulls[i++] = true;
		nulls[i++] = true;
		nulls[i++] = true;
	}
	if (with_usage)
		dsm_known = dsm_usage(&dsm_count, &dsm_bytes);
	if (dsm_known)
	{
		values[i++] = Int32GetDatum((int32) Min(dsm_count, PG_INT32_MAX));
		put_int8(values, nulls, i++, dsm_bytes);
	}
	else
	{
		nulls[i++] = true;
		nulls[i++] = true;
	}
	status = keys_fieldset(&keys_status, &st);
	procfs_fields_init(&status);
	(void) procfs_read_lines(PostmasterPid, "status", procfs_fields_line, &status);
	put_int8(values, nulls, i++, st.vm_peak);
	values[i] = BoolGetDatum(exact != 0);
	nulls[i++] = resident < 0 || !with_usage;
	Assert(i == SHARED_MEMORY_NCOLS);
	PG_RETURN_DATUM(one_row(fcinfo, shared_memory_shapes, lengthof(shared_memory_shapes), values, nulls));
}

/* CPUs this process may run on (its affinity mask), else the online ones. */
static int64
usable_cpus(void)
{
	cpu_set_t	set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	return sysconf(_SC_NPROCESSORS_ONLN);
}

/*
 * pg_procmem_machine_info() - one row: the CPUs and their last-level cache,
 * the kernel's writeback, overcommit and swap settings, and the memory
 * cgroup level with the least room for its limit (1.1.0: what
 * pg_procmem_advice needs beyond pg_procmem_system_info).
 */
Datum
pg_procmem_machine_info(PG_FUNCTION_ARGS)
{
	/* in column order; dirty_*_bytes are bigint, the others fit an integer */
	static const struct
	{
		const char *path;
		bool		bigint;
	}			sysctls[] = {
		{"/proc/sys/vm/dirty_ratio", false},
		{"/proc/sys/vm/dirty_background_ratio", false},
		{"/proc/sys/vm/dirty_bytes", true},
		{"/proc/sys/vm/dirty_background_bytes", true},
		{"/proc/sys/vm/overcommit_ratio", false},
		{"/proc/sys/vm/swappiness", false},
	};
	Datum		values[MACHINE_INFO_NCOLS_V1_1];
	bool		nulls[MACHINE_INFO_NCOLS_V1_1];
	char		defrag[32];
	sysmem_cgroup cg;
	sysmem_cgmem cm;
	int64		v;
	int			level;
	int			i = 0;

	memset(nulls, 0, sizeof(nulls));
	v = usable_cpus();
	put_int4(values, nulls, i++, v, v <= 0);
	v = sysmem_read_llc("/sys/devices/system/cpu/cpu0/cache", &level);
	put_int8(values, nulls, i++, v);
	put_int4(values, nulls, i++, level, level < 0);
	for (int k = 0; k < lengthof(sysctls); k++)
	{
		v = sysmem_read_int(sysctls[k].path);
		if (sysctls[k].bigint)
			put_int8(values, nulls, i++, v);
		else
			put_int4(values, nulls, i++, v, v < 0);
	}
	sysmem_read_mode("/sys/kernel/mm/transparent_hugepage/defrag", defrag, sizeof(defrag));
	put_text(values, nulls, i++, defrag);
	sysmem_find_cgroup(&cg);
	sysmem_read_cgmem(&cg, &cm);
	put_int8(values, nulls, i++, cm.tight_limit);
	put_int8(values, nulls, i++, cm.tight_room);
	Assert(i == MACHINE_INFO_NCOLS_V1_1);
	PG_RETURN_DATUM(one_row(fcinfo, machine_info_shapes, lengthof(machine_info_shapes), values, nulls));
}

/*
 * pg_procmem_cgroup_memory() - one row: the server's memory cgroup, what its
 * usage is made of (anonymous, shmem, page cache, kernel memory) and what it
 * went through (its peak, the times it hit memory.high and its limit, OOM
 * events and kills). v1 has no memory.events: its failcnt stands for max
 * events, and high, oom events and oom.group are NULL.
 */
Datum
pg_procmem_cgroup_memory(PG_FUNCTION_ARGS)
{
	Datum		values[CGROUP_MEMORY_NCOLS_V1_3];
	bool		nulls[CGROUP_MEMORY_NCOLS_V1_3];
	sysmem_cgroup cg;
	sysmem_cgmem cm;
	int			i = 0;

	memset(nulls, 0, sizeof(nulls));
	sysmem_find_cgroup(&cg);
	sysmem_read_cgmem(&cg, &cm);
	sysmem_read_cgmem_events(&cg, &cm);
	put_int4(values, nulls, i++, cg.version, cg.version <= 0);
	put_int8(values, nulls, i++, cm.usage);
	put_int8(values, nulls, i++, cm.limit);
	put_int8(values, nulls, i++, cm.effective_limit);
	put_int8(values, nulls, i++, cm.peak);
	put_int8(values, nulls, i++, cm.high);
	put_int8(values, nulls, i++, cm.anon);
	put_int8(values, nulls, i++, cm.file);
	put_int8(values, nulls, i++, cm.shmem);
	put_int8(values, nulls, i++, procfs_sum(cm.file_dirty, cm.file_writeback));
	put_int8(values, nulls, i++, sysmem_cgmem_kernel(&cg, &cm));
	put_int8(values, nulls, i++, cm.high_events);
	put_int8(values, nulls, i++, cg.version == 1 ? cm.failcnt : cm.max_events);
	put_int8(values, nulls, i++, cm.oom);
	put_int8(values, nulls, i++, cm.oom_kill);
	values[i] = BoolGetDatum(cm.oom_group == 1);
	nulls[i++] = cm.oom_group < 0;
	Assert(i == CGROUP_MEMORY_NCOLS_V1_3);
	PG_RETURN_DATUM(one_row(fcinfo, cgroup_memory_shapes, lengthof(cgroup_memory_shapes), values, nulls));
}
