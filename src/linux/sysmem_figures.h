/*
 * sysmem_figures.h
 *		The figures sysmem.c reads from /proc/meminfo and from a memory
 *		cgroup's files, their structs alone (no PostgreSQL headers): below
 *		both keys.c, which names their keys, and sysmem.c, which reads them
 *		with those keys.
 */
#ifndef PROCMEM_SYSMEM_FIGURES_H
#define PROCMEM_SYSMEM_FIGURES_H

#include <stdint.h>

/* /proc/meminfo; bytes, but the HugePages_* counts */
typedef struct sysmem_meminfo
{
	int64_t		mem_total;
	int64_t		mem_available;
	int64_t		page_tables;
	int64_t		kernel_stack;
	int64_t		shmem;
	int64_t		committed_as;
	int64_t		commit_limit;
	int64_t		swap_total;
	int64_t		swap_free;
	int64_t		hugepages_total;	/* pages */
	int64_t		hugepages_free;	/* pages */
	int64_t		hugepages_rsvd;	/* pages */
	int64_t		hugepages_surp;	/* pages */
	int64_t		hugepagesize;
	int64_t		anon_hugepages;
} sysmem_meminfo;

/*
 * A cgroup's memory figures (bytes; oom, oom_kill, failcnt are counts).
 * Listed once, so that the struct is int64_t members only by construction
 * and sysmem_cgmem_init() sets each of them.
 */
#define SYSMEM_CGMEM_FIELDS(X) \
	X(usage)			/* v2 memory.current, v1 memory.usage_in_bytes */ \
	X(limit)			/* memory.max / memory.limit_in_bytes; no limit: -1 */ \
	X(effective_limit)	/* the smallest limit of it and its ancestors */ \
	X(room)				/* the least, over it and its ancestors with a limit, \
						 * of limit - sysmem_cgroup_unreclaimable() */ \
	X(high)				/* v2 memory.high */ \
	X(swap_usage)		/* v2 memory.swap.current */ \
	X(anon)				/* memory.stat anon (v1: total_rss) */ \
	X(file)				/* memory.stat file (v1: total_cache), shmem included */ \
	X(shmem)			/* memory.stat shmem (v1: total_shmem) */ \
	X(pagetables)		/* v2 memory.stat */ \
	X(kernel_stack)		/* v2 memory.stat */ \
	X(kernel)			/* v2 memory.stat kernel, v1 memory.kmem.usage_in_bytes */ \
	X(sock)				/* v2 memory.stat */ \
	X(oom)				/* v2 memory.events oom */ \
	X(oom_kill)			/* memory.events oom_kill / v1 memory.oom_control */ \
	X(failcnt)			/* v1 memory.failcnt */ \
	X(slab)				/* v2 memory.stat (kernel's parts before Linux 5.18) */ \
	X(percpu)			/* v2 memory.stat */ \
	X(vmalloc)			/* v2 memory.stat */ \
	X(slab_reclaimable)	/* v2 memory.stat (v1 has none) */ \
	X(file_dirty)		/* memory.stat file_dirty (v1: total_dirty) */ \
	X(file_writeback)	/* memory.stat file_writeback (v1: total_writeback) */ \
	X(high_events)		/* v2 memory.events high */ \
	X(max_events)		/* v2 memory.events max */ \
	X(peak)				/* sysmem_read_cgmem_events(): v2 memory.peak, \
						 * v1 memory.max_usage_in_bytes */ \
	X(oom_group)		/* sysmem_read_cgmem_events(): v2 memory.oom.group */ \
	X(tight_limit)		/* the level whose room is the smallest share of its \
						 * limit: that limit */ \
	X(tight_room)		/* and that level's room */

#define SYSMEM_CGMEM_MEMBER(name) int64_t name;
typedef struct sysmem_cgmem
{
	SYSMEM_CGMEM_FIELDS(SYSMEM_CGMEM_MEMBER)
} sysmem_cgmem;

#endif							/* PROCMEM_SYSMEM_FIGURES_H */
