/*
 * keys.c
 *		Every key pg_procmem reads from the kernel's text files, in one place:
 *		the kernel's name, the member it fills, and whether the kernel writes
 *		it in kB (a value that lacks its unit is no figure). procfs.c and
 *		sysmem.c parse; only the kernel's vocabulary is here. No PostgreSQL
 *		headers.
 */
#include "linux/keys.h"
#include "linux/sysmem_figures.h"

/*
 * The tables below repeat one shape by nature, a row a key the kernel
 * writes: the kernel's name and the member are what differs.
 */
#define KEYS(name, table, sep, sum) \
	const procfs_keys name = {table, PROCFS_NFIELDS(table), sep, sum}

static const procfs_field status[] = {
	PROCFS_FIELD(procfs_status, "VmPeak", vm_peak, 1),
	PROCFS_FIELD(procfs_status, "VmHWM", vm_hwm, 1),
	PROCFS_FIELD(procfs_status, "VmRSS", vm_rss, 1),
	PROCFS_FIELD(procfs_status, "RssAnon", rss_anon, 1),
	PROCFS_FIELD(procfs_status, "RssFile", rss_file, 1),
	PROCFS_FIELD(procfs_status, "RssShmem", rss_shmem, 1),
	PROCFS_FIELD(procfs_status, "VmPTE", vm_pte, 1),
	PROCFS_FIELD(procfs_status, "VmSwap", vm_swap, 1),
	PROCFS_FIELD(procfs_status, "HugetlbPages", hugetlb, 1),
	PROCFS_FIELD(procfs_status, "PPid", ppid, 0),
	PROCFS_FIELD(procfs_status, "Threads", threads, 0),
	PROCFS_FIELD(procfs_status, "SigPnd", kill_pending, PROCFS_SIGKILL_MASK),
	PROCFS_FIELD(procfs_status, "ShdPnd", kill_pending_shared, PROCFS_SIGKILL_MASK),
};
KEYS(keys_status, status, ':', 0);

static const procfs_field smaps[] = {
	PROCFS_FIELD(procfs_smaps, "Pss", pss, 1),
	PROCFS_FIELD(procfs_smaps, "Pss_Anon", pss_anon, 1),
	PROCFS_FIELD(procfs_smaps, "Pss_File", pss_file, 1),
	PROCFS_FIELD(procfs_smaps, "Pss_Shmem", pss_shmem, 1),
	PROCFS_FIELD(procfs_smaps, "Private_Clean", private_clean, 1),
	PROCFS_FIELD(procfs_smaps, "Private_Dirty", private_dirty, 1),
	PROCFS_FIELD(procfs_smaps, "SwapPss", swap_pss, 1),
};
KEYS(keys_smaps, smaps, ':', 1);

static const procfs_field meminfo[] = {
	PROCFS_FIELD(sysmem_meminfo, "MemTotal", mem_total, 1),
	PROCFS_FIELD(sysmem_meminfo, "MemAvailable", mem_available, 1),
	PROCFS_FIELD(sysmem_meminfo, "PageTables", page_tables, 1),
	PROCFS_FIELD(sysmem_meminfo, "KernelStack", kernel_stack, 1),
	PROCFS_FIELD(sysmem_meminfo, "Shmem", shmem, 1),
	PROCFS_FIELD(sysmem_meminfo, "Committed_AS", committed_as, 1),
	PROCFS_FIELD(sysmem_meminfo, "CommitLimit", commit_limit, 1),
	PROCFS_FIELD(sysmem_meminfo, "SwapTotal", swap_total, 1),
	PROCFS_FIELD(sysmem_meminfo, "SwapFree", swap_free, 1),
	PROCFS_FIELD(sysmem_meminfo, "HugePages_Total", hugepages_total, 0),
	PROCFS_FIELD(sysmem_meminfo, "HugePages_Free", hugepages_free, 0),
	PROCFS_FIELD(sysmem_meminfo, "HugePages_Rsvd", hugepages_rsvd, 0),
	PROCFS_FIELD(sysmem_meminfo, "HugePages_Surp", hugepages_surp, 0),
	PROCFS_FIELD(sysmem_meminfo, "Hugepagesize", hugepagesize, 1),
	PROCFS_FIELD(sysmem_meminfo, "AnonHugePages", anon_hugepages, 1),
};
KEYS(keys_meminfo, meminfo, ':', 0);

/* cgroup v2 */
static const procfs_field v2_files[] = {
	PROCFS_FIELD(sysmem_cgmem, "memory.current", usage, 0),
	PROCFS_FIELD(sysmem_cgmem, "memory.max", limit, 0),
	PROCFS_FIELD(sysmem_cgmem, "memory.high", high, 0),
	PROCFS_FIELD(sysmem_cgmem, "memory.swap.current", swap_usage, 0),
};
KEYS(keys_cgroup_v2_files, v2_files, ' ', 0);

static const procfs_field v2_stat[] = {
	PROCFS_FIELD(sysmem_cgmem, "anon", anon, 0),
	PROCFS_FIELD(sysmem_cgmem, "file", file, 0),
	PROCFS_FIELD(sysmem_cgmem, "shmem", shmem, 0),
	PROCFS_FIELD(sysmem_cgmem, "pagetables", pagetables, 0),
	PROCFS_FIELD(sysmem_cgmem, "kernel_stack", kernel_stack, 0),
	PROCFS_FIELD(sysmem_cgmem, "kernel", kernel, 0),
	PROCFS_FIELD(sysmem_cgmem, "sock", sock, 0),
	PROCFS_FIELD(sysmem_cgmem, "slab", slab, 0),
	PROCFS_FIELD(sysmem_cgmem, "slab_reclaimable", slab_reclaimable, 0),
	PROCFS_FIELD(sysmem_cgmem, "percpu", percpu, 0),
	PROCFS_FIELD(sysmem_cgmem, "vmalloc", vmalloc, 0),
	PROCFS_FIELD(sysmem_cgmem, "file_dirty", file_dirty, 0),
	PROCFS_FIELD(sysmem_cgmem, "file_writeback", file_writeback, 0),
};
KEYS(keys_cgroup_v2_stat, v2_stat, ' ', 0);

static const procfs_field v2_events[] = {
	PROCFS_FIELD(sysmem_cgmem, "oom", oom, 0),
	PROCFS_FIELD(sysmem_cgmem, "oom_kill", oom_kill, 0),
	PROCFS_FIELD(sysmem_cgmem, "high", high_events, 0),
	PROCFS_FIELD(sysmem_cgmem, "max", max_events, 0),
};
KEYS(keys_cgroup_v2_events, v2_events, ' ', 0);

/* cgroup v1 */
static const procfs_field v1_files[] = {
	PROCFS_FIELD(sysmem_cgmem, "memory.usage_in_bytes", usage, 0),
	PROCFS_FIELD(sysmem_cgmem, "memory.limit_in_bytes", limit, 0),
	PROCFS_FIELD(sysmem_cgmem, "memory.kmem.usage_in_bytes", kernel, 0),
	PROCFS_FIELD(sysmem_cgmem, "memory.failcnt", failcnt, 0),
};
KEYS(keys_cgroup_v1_files, v1_files, ' ', 0);

static const procfs_field v1_stat[] = {
	PROCFS_FIELD(sysmem_cgmem, "total_rss", anon, 0),
	PROCFS_FIELD(sysmem_cgmem, "total_cache", file, 0),
	PROCFS_FIELD(sysmem_cgmem, "total_shmem", shmem, 0),
	PROCFS_FIELD(sysmem_cgmem, "total_dirty", file_dirty, 0),
	PROCFS_FIELD(sysmem_cgmem, "total_writeback", file_writeback, 0),
};
KEYS(keys_cgroup_v1_stat, v1_stat, ' ', 0);

static const procfs_field v1_oom[] = {
	PROCFS_FIELD(sysmem_cgmem, "oom_kill", oom_kill, 0),
};
KEYS(keys_cgroup_v1_oom, v1_oom, ' ', 0);

/* /proc/vmstat: the machine's OOM kill counter (Linux 4.13+), where no memory cgroup counts */
static const procfs_field vmstat_oom[] = {
	PROCFS_FIELD(sysmem_cgmem, "oom_kill", oom_kill, 0),
};
KEYS(keys_vmstat_oom, vmstat_oom, ' ', 0);

procfs_fieldset
keys_fieldset(const procfs_keys *keys, void *target)
{
	procfs_fieldset fs = {keys->fields, keys->n, keys->sep, keys->sum, target};

	return fs;
}
