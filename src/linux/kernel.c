/*
 * kernel.c
 *		The kernel's own memory for one process (no PostgreSQL headers).
 */
#include "linux/kernel.h"
#include "linux/sysmem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The memory cgroup charges each object its slab slot plus an obj_cgroup pointer */
#define MEMCG_OBJ_POINTER 8

/*
 * Each cache's name in /sys/kernel/slab (the first that exists), and its
 * slab_size on Linux 6.18, x86_64, as measured for bench/results/kernel.md:
 * the fallback for a server that cannot read /sys/kernel/slab (root-only).
 */
static const struct
{
	const char *names[2];
	int64_t		fallback;
} caches[KC_NCACHES] = {
	[KC_TASK] = {{"task_struct"}, 5888},
	[KC_PID] = {{"pid"}, 192},
	[KC_MM] = {{"mm_struct"}, 1600},
	[KC_SIGNAL] = {{"signal_cache"}, 1152},
	[KC_SIGHAND] = {{"sighand_cache"}, 2112},
	[KC_FILES] = {{"files_cache"}, 704},
	[KC_FS] = {{"fs_cache"}, 64},
	[KC_CRED] = {{"cred", "cred_jar"}, 192},
	[KC_VMA] = {{"vm_area_struct"}, 192},
	[KC_ANON_VMA] = {{"anon_vma"}, 104},
	[KC_ANON_VMA_CHAIN] = {{"anon_vma_chain"}, 64},
	[KC_FILP] = {{"filp"}, 192},
};

int64_t
kernel_thread_stack(int64_t kernel_stack, int64_t threads)
{
	double		mean;
	int64_t		size = 4096;

	if (kernel_stack <= 0 || threads <= 0)
		return 0;
	mean = (double) kernel_stack / (double) threads;
	/* the power of two nearest the mean, on a log scale */
	while ((double) size * 1.5 < mean && size < (INT64_C(1) << 30))
		size *= 2;
	/*
	 * Linux has used 8 to 32 kB (64 kB at most with KASAN on some arches):
	 * anything else means the two files disagree about what they count (a
	 * container's lxcfs virtualises loadavg but not meminfo).
	 */
	return (size >= 8192 && size <= 65536) ? size : 0;
}

/* The host's thread count: the second figure of /proc/loadavg's "1/125" */
static int64_t
host_threads(void)
{
	char		buf[128];
	size_t		len;
	const char *slash;

	if (procfs_read_path("/proc/loadavg", buf, sizeof(buf), &len) != PROCFS_OK)
		return 0;
	slash = strchr(buf, '/');
	return slash ? strtoll(slash + 1, NULL, 10) : 0;
}

/* THREAD_SIZE as the host's KernelStack and thread count say, or 0 */
static int64_t
host_thread_stack(void)
{
	sysmem_meminfo mi;

	return sysmem_read_meminfo(&mi) == PROCFS_OK ?
		kernel_thread_stack(mi.kernel_stack, host_threads()) : 0;
}

/* 8 kB PGDs where page-table isolation keeps a user copy (Meltdown) */
static int64_t
pgd_size(void)
{
	char		buf[256];
	size_t		len;

	if (procfs_read_path("/sys/devices/system/cpu/vulnerabilities/meltdown",
						 buf, sizeof(buf), &len) == PROCFS_OK && strstr(buf, "PTI"))
		return 8192;
	return 4096;
}

void
kernel_sizes_fallback(kernel_sizes *ks)
{
	memset(ks, 0, sizeof(*ks));
	ks->thread_stack = KERNEL_FALLBACK_STACK;
	ks->pgd = 4096;
	for (int c = 0; c < KC_NCACHES; c++)
		ks->object[c] = caches[c].fallback + MEMCG_OBJ_POINTER;
}

void
kernel_sizes_read(kernel_sizes *ks)
{
	int64_t		stack;

	kernel_sizes_fallback(ks);
	for (int c = 0; c < KC_NCACHES; c++)
		for (int i = 0; i < 2 && caches[c].names[i]; i++)
		{
			char		path[128];
			char		buf[32];
			size_t		len;
			int64_t		v;

			snprintf(path, sizeof(path), "/sys/kernel/slab/%s/slab_size", caches[c].names[i]);
			if (procfs_read_path(path, buf, sizeof(buf), &len) == PROCFS_OK &&
				procfs_parse_int(buf, len, &v) == 0 && v > 0)
			{
				ks->object[c] = v + MEMCG_OBJ_POINTER;
				ks->from_kernel |= 1u << c;
				break;
			}
		}
	stack = host_thread_stack();
	if (stack > 0)
	{
		ks->thread_stack = stack;
		ks->stack_from_kernel = true;
	}
	ks->pgd = pgd_size();
}

const kernel_sizes *
kernel_sizes_get(void)
{
	static kernel_sizes sizes;
	static bool known;

	if (!known)
	{
		kernel_sizes_read(&sizes);
		known = true;
	}
	else if (sizes.stack_from_kernel && sizes.thread_stack < KERNEL_FALLBACK_STACK)
	{
		/*
		 * Exited threads not yet reaped count in loadavg without a stack: a
		 * burst of them (a third of the host's) halved the estimate, for the
		 * life of the process. They only ever lower it, so below the usual
		 * size it is read again at each use and the largest one kept.
		 */
		int64_t		stack = host_thread_stack();

		if (stack > sizes.thread_stack)
			sizes.thread_stack = stack;
	}
	return &sizes;
}

int64_t
kernel_memory(const kernel_sizes *ks, const kernel_counts *c)
{
	const int64_t *o = ks->object;
	int64_t		per_thread = ks->thread_stack + o[KC_TASK] + o[KC_PID];
	int64_t		per_process = ks->pgd + o[KC_MM] + o[KC_SIGNAL] + o[KC_SIGHAND] +
		o[KC_FILES] + o[KC_FS] + o[KC_CRED];

	if (c->threads <= 0 || c->mappings < 0 || c->anon_mappings < 0 ||
		c->files < 0 || c->ancestors < 0)
		return -1;
	return c->threads * per_thread + per_process +
		c->mappings * o[KC_VMA] +
		c->anon_mappings * (o[KC_ANON_VMA] + (1 + c->ancestors) * o[KC_ANON_VMA_CHAIN]) +
		c->files * o[KC_FILP];
}
