/*
 * sysmem.h
 *		The machine's memory and the server's memory cgroup (no PostgreSQL
 *		headers).
 *
 * As everywhere: a figure that could not be read, or that means "no limit",
 * is negative, never 0 and never a huge number.
 */
#ifndef PROCMEM_SYSMEM_H
#define PROCMEM_SYSMEM_H

#include "linux/procfs.h"
#include "linux/sysmem_figures.h"	/* sysmem_meminfo, sysmem_cgmem */

extern procfs_result sysmem_read_meminfo(sysmem_meminfo *mi);

/* The memory cgroup a process is in, and where its files are. */
typedef struct sysmem_cgroup
{
	int			version;		/* 1 or 2; 0: none found */
	char		path[512];		/* as /proc/self/cgroup names it */
	char		dir[1024];		/* its directory, under mount */
	char		mount[512];		/* where its hierarchy is mounted */
} sysmem_cgroup;

/*
 * Finds the memory cgroup from the text of /proc/<pid>/cgroup and
 * /proc/<pid>/mountinfo. On a hybrid host (v1 controllers and a v2
 * hierarchy both mounted) the v1 memory controller's line wins: that is
 * where memory is accounted. Returns 0 when found.
 */
extern int	sysmem_parse_cgroup(const char *cgroup, size_t clen,
								const char *mountinfo, size_t mlen,
								sysmem_cgroup *cg);
extern int	sysmem_find_cgroup(sysmem_cgroup *cg);

/*
 * One step of a climb from the cgroup (dir starts as a copy of cg->dir) up
 * to its hierarchy's mount, the mount included (a container's own cgroup
 * namespace shows its cgroup, and its limit, there): dir becomes its
 * parent's directory. 0 when dir was the mount already, the top: then dir
 * is left as it was. The one climb of sysmem_read_cgmem() and the pressure
 * watch.
 */
extern int	sysmem_cgroup_parent(const sysmem_cgroup *cg, char *dir);

/*
 * What one level of a memory cgroup uses that the kernel cannot reclaim,
 * from its usage (v2 memory.current, v1 memory.usage_in_bytes) and its
 * memory.stat (v2 file, shmem, slab_reclaimable; v1 total_cache,
 * total_shmem, and no slab figure: pass PROCFS_MISSING):
 *
 *	usage - (file - shmem) - slab_reclaimable, never below 0
 *
 * The one definition (why: sysmem.c): the pressure watch's and so the
 * guard's "used" of a cgroup level, and the room of pg_procmem_system,
 * pg_procmem_headroom and the advice (its limit less this). Negative
 * (unknown) when usage, file or shmem is, or shmem passes file; a missing
 * or unusable slab_reclaimable counts as none reclaimable.
 */
extern int64_t sysmem_cgroup_unreclaimable(int64_t usage, int64_t file, int64_t shmem,
										   int64_t slab_reclaimable);

/* Every figure PROCFS_MISSING. */
extern void sysmem_cgmem_init(sysmem_cgmem *m);

extern void sysmem_read_cgmem(const sysmem_cgroup *cg, sysmem_cgmem *m);

/*
 * What the cgroup went through, from files sysmem_read_cgmem() leaves
 * unread (the sampler reads that at every sample and needs none of them):
 * its peak usage and, v2 only, whether an OOM kill takes the whole group.
 */
extern void sysmem_read_cgmem_events(const sysmem_cgroup *cg, sysmem_cgmem *m);

/*
 * The OOM kill counter that counts the server's kills, alone (a small file,
 * read often: the sampler places a kill between two reads of it): the
 * memory cgroup's (v2 memory.events oom_kill, v1 memory.oom_control
 * oom_kill), or with no memory cgroup (cg NULL, or version 0) the
 * machine's, /proc/vmstat oom_kill. *machine says which. PROCFS_MISSING
 * when unknown.
 */
extern int64_t sysmem_read_oom_kills(const sysmem_cgroup *cg, int *machine);

/*
 * Which cgroup cg is, among those made at its path over time: its
 * directory's inode (a container's cgroup made again at a restart has
 * another, and counters that start at 0). 0 when unknown.
 */
extern uint64_t sysmem_cgroup_id(const sysmem_cgroup *cg);

/*
 * The cgroup's kernel memory: v2 kernel plus sock (socket buffers are
 * charged beside it), or before Linux 5.18, which has no kernel field, the
 * sum of its parts (slab, kernel_stack, pagetables, percpu, vmalloc, sock,
 * those there are); v1 memory.kmem.usage_in_bytes. With anon and file it
 * adds up to usage. Negative when unknown.
 */
extern int64_t sysmem_cgmem_kernel(const sysmem_cgroup *cg, const sysmem_cgmem *m);

/* A cgroup limit as written in its file: a number, or "max"/near INT64_MAX (none). */
extern int64_t sysmem_parse_limit(const char *buf, size_t len);

/* A one-number file of a cgroup directory (memory.max, memory.current ...): as sysmem_parse_limit() */
extern int64_t sysmem_read_limit(const char *dir, const char *name);

/* An integer sysctl or sysfs file (vm.overcommit_memory ...), or negative. */
extern int64_t sysmem_read_int(const char *path);

/* A sysfs size ("491520K", "32M", "1024"): bytes, or negative. */
extern int64_t sysmem_parse_size(const char *buf, size_t len);

/*
 * The CPU's last-level cache, from a cache directory such as
 * /sys/devices/system/cpu/cpu0/cache: the largest data or unified cache
 * among index0..index31, its size in bytes (negative if none) and level.
 */
extern int64_t sysmem_read_llc(const char *cache_dir, int *level);

/* The bracketed choice of a sysfs mode file ("always [madvise] never"). */
extern int	sysmem_read_mode(const char *path, char *out, size_t outsz);

/*
 * The mapping of this process that contains addr, from /proc/self/maps:
 * its bounds, and whether it is hugetlb ("anon_hugepage"). 0 when found.
 */
extern int	sysmem_self_mapping(const void *addr, uint64_t *start, uint64_t *end,
								int *hugetlb);

/* Bytes of [addr, addr+len) resident in memory (mincore), or negative. */
extern int64_t sysmem_resident(void *addr, size_t len);

/*
 * The same at a cost that does not grow with len: exact (*exact = 1) up to
 * SYSMEM_RESIDENT_PAGES pages; above, the range is cut into
 * SYSMEM_RESIDENT_STRATA equal strata and one run of consecutive pages at a
 * fixed pseudo-random place in each is read, its resident share standing
 * for its stratum's. A stratum wholly resident or wholly not is exact, so
 * the error comes from the strata where touched and untouched memory meet
 * (at most one stratum, len / SYSMEM_RESIDENT_STRATA, per such boundary);
 * for pages touched here and there it is a sampling error, about
 * 0.3% of len at most (one standard deviation, 8 kB buffers touched at
 * random: 32,768 of them sampled).
 */
#define SYSMEM_RESIDENT_PAGES	65536	/* 256 MB of 4 kB pages */
#define SYSMEM_RESIDENT_STRATA	256
extern int64_t sysmem_resident_estimate(void *addr, size_t len, int *exact);

#endif							/* PROCMEM_SYSMEM_H */
