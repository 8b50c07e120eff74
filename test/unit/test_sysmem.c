/*
 * test_sysmem.c
 *		Unit tests of the system and cgroup readers (TAP; run by `make unit`).
 *
 * Fixtures: test/fixtures/linux-6.18-meminfo (captured) and
 * handmade/meminfo-distinct (every field a value of its own); test/fixtures/cgroup
 * holds /proc/self/cgroup and mountinfo texts of a v1 hybrid host, a v2
 * host, a v2 container and a v2 subtree mount, and directory trees of
 * cgroup files, some incomplete, for the readers.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/keys.h"
#include "linux/sysmem.h"
#include "procfile.h"
#include "tap.h"

/* Parses a /proc/self/cgroup + mountinfo pair of fixtures. */
static int
find(const char *cgroup, const char *mountinfo, sysmem_cgroup *cg)
{
	size_t		cl, ml;
	char	   *c = slurp(cgroup, &cl);
	char	   *m = slurp(mountinfo, &ml);
	int			rc = sysmem_parse_cgroup(c, cl, m, ml, cg);

	free(c);
	free(m);
	return rc;
}

/* Parses a meminfo fixture. */
static void
meminfo_of(const char *rel, sysmem_meminfo *mi)
{
	size_t		len;
	char	   *buf = slurp(rel, &len);
	procfs_fieldset fs = keys_fieldset(&keys_meminfo, mi);
	procfs_lines lb;

	procfs_fields_init(&fs);
	procfs_lines_init(&lb, procfs_fields_line, &fs);
	procfs_lines_feed(&lb, buf, len);
	procfs_lines_finish(&lb);
	free(buf);
}

#define KIB(n) (INT64_C(n) * 1024)

/*
 * Every field at the exact value its fixture holds: a key mapped to a
 * neighbour (MemAvailable to MemFree, PageTables to SecPageTables) fails.
 * The captured file has swap and huge pages at 0; the handmade one gives
 * each field a value of its own.
 */
static void
test_meminfo(void)
{
	sysmem_meminfo mi;

	meminfo_of("linux-6.18-meminfo", &mi);
	is_i64(mi.mem_total, KIB(24684096), "meminfo: MemTotal in bytes");
	is_i64(mi.mem_available, KIB(24171824), "meminfo: MemAvailable (not MemFree's 22363512 kB)");
	is_i64(mi.page_tables, KIB(5848), "meminfo: PageTables");
	is_i64(mi.kernel_stack, KIB(2268), "meminfo: KernelStack");
	is_i64(mi.shmem, KIB(8788), "meminfo: Shmem");
	is_i64(mi.committed_as, KIB(99924), "meminfo: Committed_AS");
	is_i64(mi.commit_limit, KIB(12342048), "meminfo: CommitLimit");
	is_i64(mi.hugepages_total, 0, "meminfo: HugePages_Total is a count, not kB");
	is_i64(mi.hugepagesize, KIB(2048), "meminfo: Hugepagesize");

	meminfo_of("handmade/meminfo-distinct", &mi);
	ok(mi.mem_total == KIB(16000000) && mi.mem_available == KIB(9000002) &&
	   mi.page_tables == KIB(60008) && mi.kernel_stack == KIB(5007) && mi.shmem == KIB(400006),
	   "meminfo distinct: MemTotal, MemAvailable, PageTables, KernelStack, Shmem");
	ok(mi.commit_limit == KIB(12000010) && mi.committed_as == KIB(8000011) &&
	   mi.swap_total == KIB(4000012) && mi.swap_free == KIB(3000013),
	   "meminfo distinct: CommitLimit, Committed_AS, SwapTotal, SwapFree");
	ok(mi.hugepages_total == 514 && mi.hugepages_free == 315 && mi.hugepages_rsvd == 116 &&
	   mi.hugepages_surp == 17 && mi.hugepagesize == KIB(2048) && mi.anon_hugepages == KIB(204800),
	   "meminfo distinct: HugePages_Total, _Free, _Rsvd, _Surp (counts), Hugepagesize, AnonHugePages");

	ok(sysmem_read_meminfo(&mi) == PROCFS_OK && mi.mem_total > 0, "meminfo: this machine's");
}

static void
test_find_cgroup(void)
{
	sysmem_cgroup cg;

	ok(find("cgroup/cgroup-v1-hybrid", "cgroup/mountinfo-v1-hybrid", &cg) == 0 &&
	   cg.version == 1 && strcmp(cg.dir, "/sys/fs/cgroup/memory/docker/abc") == 0,
	   "cgroup: a hybrid host uses the v1 memory controller (%s)", cg.dir);
	ok(find("cgroup/cgroup-v2", "cgroup/mountinfo-v2", &cg) == 0 && cg.version == 2 &&
	   strcmp(cg.dir, "/sys/fs/cgroup/system.slice/postgresql.service") == 0 &&
	   strcmp(cg.mount, "/sys/fs/cgroup") == 0,
	   "cgroup: v2 host (%s)", cg.dir);
	ok(find("cgroup/cgroup-v2-container", "cgroup/mountinfo-v2-container", &cg) == 0 &&
	   cg.version == 2 && strcmp(cg.dir, "/sys/fs/cgroup") == 0,
	   "cgroup: a container's namespace root is the mount itself (%s)", cg.dir);
	ok(find("cgroup/cgroup-v2-subtree", "cgroup/mountinfo-v2-subtree", &cg) == 0 &&
	   strcmp(cg.dir, "/host cg/c1") == 0,
	   "cgroup: a subtree mount, escaped mount point (%s)", cg.dir);
	ok(find("cgroup/cgroup-v1-no-memory", "cgroup/mountinfo-v1-hybrid", &cg) != 0 && cg.version == 0,
	   "cgroup: no memory controller anywhere: not found");
	ok(find("cgroup/cgroup-v2", "cgroup/mountinfo-v2-subtree", &cg) != 0,
	   "cgroup: a path outside the mounted subtree: not found");
	ok(sysmem_parse_cgroup("", 0, "", 0, &cg) != 0, "cgroup: empty files: not found");
}

/* The climb from a cgroup to its hierarchy's mount, one level a step */
static void
test_cgroup_parent(void)
{
	sysmem_cgroup cg;
	char		dir[1024];
	int			up;

	memset(&cg, 0, sizeof(cg));
	snprintf(cg.mount, sizeof(cg.mount), "/sys/fs/cgroup");
	snprintf(dir, sizeof(dir), "/sys/fs/cgroup/system.slice/pg.service");
	up = sysmem_cgroup_parent(&cg, dir);
	ok(up && strcmp(dir, "/sys/fs/cgroup/system.slice") == 0, "climb: to the parent (%s)", dir);
	up = sysmem_cgroup_parent(&cg, dir);
	ok(up && strcmp(dir, "/sys/fs/cgroup") == 0, "climb: to the mount (%s)", dir);
	up = sysmem_cgroup_parent(&cg, dir);
	ok(!up && strcmp(dir, "/sys/fs/cgroup") == 0, "climb: the mount is the top, dir as it was");
	/* a dir beside the mount (never given): it stops there all the same */
	snprintf(cg.mount, sizeof(cg.mount), "/host cg");
	snprintf(dir, sizeof(dir), "/host cg2");
	ok(!sysmem_cgroup_parent(&cg, dir), "climb: nothing above the mount's own length");
	snprintf(dir, sizeof(dir), "/host cgx/c1");
	ok(sysmem_cgroup_parent(&cg, dir) && strcmp(dir, "/host cgx") == 0 && !sysmem_cgroup_parent(&cg, dir),
	   "climb: a slash before the mount's end stops it (%s)", dir);
}

/* Points a cgroup at a fixture directory tree. */
static void
at(sysmem_cgroup *cg, int version, const char *mount, const char *rel)
{
	memset(cg, 0, sizeof(*cg));
	cg->version = version;
	snprintf(cg->mount, sizeof(cg->mount), "%s/%s", fixtures, mount);
	snprintf(cg->dir, sizeof(cg->dir), "%s/%s%s", fixtures, mount, rel);
}

static void
test_cgroup_files(void)
{
	sysmem_cgroup cg;
	sysmem_cgmem m;

	at(&cg, 2, "cgroup/v2/sys/fs/cgroup", "/system.slice/postgresql.service");
	sysmem_read_cgmem(&cg, &m);
	is_i64(m.usage, 536870912, "v2: memory.current");
	is_i64(m.limit, INT64_C(4294967296), "v2: memory.max");
	is_i64(m.effective_limit, INT64_C(2147483648), "v2: the parent's smaller limit is the effective one");
	is_i64(m.room, INT64_C(536870912),
		   "v2: room is the parent's: its 2 GB limit less its 1.5 GB usage, not ours");
	ok(m.tight_limit == INT64_C(2147483648) && m.tight_room == m.room,
	   "v2: the tightest level is the parent (a quarter of its limit left)");
	ok(m.high == PROCFS_MISSING, "v2: memory.high 'max' is no limit, not a number");
	is_i64(m.anon, 104857600, "v2: memory.stat anon");
	ok(m.file == 314572800 && m.shmem == 209715200 && m.pagetables == 8388608 &&
	   m.kernel_stack == 1048576 && m.kernel == 20971520 && m.sock == 4096,
	   "v2: memory.stat file, shmem, pagetables, kernel_stack, kernel, sock");
	ok(m.oom == 2 && m.oom_kill == 1, "v2: memory.events oom, oom_kill");
	ok(m.failcnt == PROCFS_MISSING, "v2: no failcnt");

	/* 1 GB limit nearly empty, under a 100 GB parent 91% full */
	at(&cg, 2, "cgroup/v2-room/sys/fs/cgroup", "/big/pg");
	sysmem_read_cgmem(&cg, &m);
	is_i64(m.effective_limit, INT64_C(1073741824), "v2 room: the smallest limit is ours");
	is_i64(m.room, INT64_C(1073741824) - INT64_C(104857600), "v2 room: ours has the least room");
	is_i64(m.tight_limit, INT64_C(107374182400), "v2 room: but the tightest level is the parent, 91%% full");
	is_i64(m.tight_room, INT64_C(107374182400) - INT64_C(97710505984), "v2 room: with its room");

	at(&cg, 2, "cgroup/v2-partial", "/pg");
	sysmem_read_cgmem(&cg, &m);
	is_i64(m.usage, 1234, "v2 partial: memory.current read");
	ok(m.limit == PROCFS_MISSING && m.effective_limit == PROCFS_MISSING && m.anon == PROCFS_MISSING &&
	   m.oom_kill == PROCFS_MISSING, "v2 partial: missing files are missing figures");

	at(&cg, 1, "cgroup/v1/sys/fs/cgroup/memory", "/docker/abc");
	sysmem_read_cgmem(&cg, &m);
	is_i64(m.usage, INT64_C(2404716544), "v1: memory.usage_in_bytes");
	ok(m.limit == PROCFS_MISSING, "v1: 9223372036854771712 is no limit");
	is_i64(m.effective_limit, INT64_C(1073741824), "v1: hierarchical_memory_limit");
	is_i64(m.room, INT64_C(1073741824) - (INT64_C(2404716544) - (INT64_C(2227154944) - 14643200)) < 0 ? 0 :
		   INT64_C(1073741824) - (INT64_C(2404716544) - (INT64_C(2227154944) - 14643200)),
		   "v1: a limit set out of sight is counted against our own usage, page cache aside");
	ok(m.tight_limit == INT64_C(1073741824) && m.tight_room == m.room,
	   "v1: the tightest level is that limit out of sight");
	ok(m.anon == 34934784 && m.file == INT64_C(2227154944) && m.shmem == 14643200,
	   "v1: total_rss, total_cache, total_shmem (hierarchical figures)");
	ok(m.kernel == 142344192 && m.failcnt == 7 && m.oom_kill == 4,
	   "v1: kmem usage, failcnt, oom_kill");
	ok(m.pagetables == PROCFS_MISSING && m.high == PROCFS_MISSING, "v1: no pagetables, no high");

	at(&cg, 0, "cgroup/nowhere", "");
	sysmem_read_cgmem(&cg, &m);
	ok(m.usage == PROCFS_MISSING && m.limit == PROCFS_MISSING, "no cgroup: nothing");
}

/*
 * What a cgroup is made of and went through: a Kubernetes container after
 * an OOM kill (Linux 6.x files, as Documentation/admin-guide/cgroup-v2.rst
 * lists them), a Linux 5.10 one (no kernel field, no memory.peak), v1.
 */
static void
test_cgroup_makeup(void)
{
	sysmem_cgroup cg;
	sysmem_cgmem m;

	at(&cg, 2, "cgroup/v2-oom/sys/fs/cgroup", "/kubepods.slice/pod-pg/postgres");
	sysmem_read_cgmem(&cg, &m);
	ok(m.peak == PROCFS_MISSING && m.oom_group == PROCFS_MISSING,
	   "v2 oom: sysmem_read_cgmem leaves memory.peak and memory.oom.group unread");
	sysmem_read_cgmem_events(&cg, &m);
	is_i64(m.peak, INT64_C(1073741824), "v2 oom: memory.peak");
	is_i64(m.oom_group, 1, "v2 oom: memory.oom.group");
	ok(m.high_events == 0 && m.max_events == 1473 && m.oom == 3 && m.oom_kill == 1,
	   "v2 oom: memory.events high, max, oom, oom_kill (not low, not oom_group_kill)");
	ok(m.file_dirty == 4194304 && m.file_writeback == 1048576,
	   "v2 oom: memory.stat file_dirty, file_writeback (not file_mapped)");
	ok(m.slab == 100663296 && m.percpu == 1048576 && m.vmalloc == 4096,
	   "v2 oom: memory.stat slab (not slab_reclaimable), percpu, vmalloc");
	is_i64(sysmem_cgmem_kernel(&cg, &m), INT64_C(125829120) + 8192, "v2 oom: kernel memory is kernel + sock");
	ok(m.usage - (m.anon + m.file + sysmem_cgmem_kernel(&cg, &m)) < 16777216,
	   "v2 oom: anon + file + kernel memory add up to memory.current, within 16 MB");

	at(&cg, 2, "cgroup/v2-5.10/sys/fs/cgroup", "/system.slice/postgresql.service");
	sysmem_read_cgmem(&cg, &m);
	sysmem_read_cgmem_events(&cg, &m);
	ok(m.kernel == PROCFS_MISSING && m.vmalloc == PROCFS_MISSING, "v2 5.10: no kernel, no vmalloc field");
	is_i64(sysmem_cgmem_kernel(&cg, &m), INT64_C(10485760) + 983040 + 4194304 + 524288 + 12288,
		   "v2 5.10: kernel memory is slab + kernel_stack + pagetables + percpu + sock");
	ok(m.peak == PROCFS_MISSING && m.oom_group == 0, "v2 5.10: no memory.peak; memory.oom.group 0");
	ok(m.high == 805306368 && m.high_events == 12 && m.max_events == 0 && m.limit == PROCFS_MISSING,
	   "v2 5.10: memory.high and its events; memory.max 'max' is no limit");
	m.slab = PROCFS_MISSING;
	ok(sysmem_cgmem_kernel(&cg, &m) == PROCFS_MISSING, "v2: without slab, kernel memory is unknown");

	at(&cg, 1, "cgroup/v1/sys/fs/cgroup/memory", "/docker/abc");
	sysmem_read_cgmem(&cg, &m);
	sysmem_read_cgmem_events(&cg, &m);
	is_i64(m.peak, INT64_C(2415919104), "v1: memory.max_usage_in_bytes is the peak");
	ok(m.oom_group == PROCFS_MISSING && m.high_events == PROCFS_MISSING && m.max_events == PROCFS_MISSING,
	   "v1: no oom.group, no memory.events");
	ok(m.file_dirty == 1048576 && m.file_writeback == 0, "v1: total_dirty, total_writeback");
	is_i64(sysmem_cgmem_kernel(&cg, &m), 142344192, "v1: kernel memory is memory.kmem.usage_in_bytes");

	at(&cg, 2, "cgroup/v2-partial", "/pg");
	sysmem_read_cgmem(&cg, &m);
	sysmem_read_cgmem_events(&cg, &m);
	ok(m.peak == PROCFS_MISSING && m.oom_group == PROCFS_MISSING && sysmem_cgmem_kernel(&cg, &m) == PROCFS_MISSING,
	   "v2 partial: missing files, missing figures");
	at(&cg, 0, "cgroup/nowhere", "");
	sysmem_read_cgmem(&cg, &m);
	sysmem_read_cgmem_events(&cg, &m);
	ok(m.peak == PROCFS_MISSING && sysmem_cgmem_kernel(&cg, &m) == PROCFS_MISSING, "no cgroup: no make-up");
}

static void
test_small_files(void)
{
	char		mode[32];
	int			hugetlb = -1;
	uint64_t	start, end;
	long		ps = sysconf(_SC_PAGESIZE);
	char	   *p;


	is_i64(sysmem_parse_limit("max\n", 4), PROCFS_MISSING, "limit: max");
	is_i64(sysmem_parse_limit("9223372036854771712\n", 20), PROCFS_MISSING, "limit: v1 unlimited");
	is_i64(sysmem_parse_limit("1048576\n", 8), 1048576, "limit: a number");
	ok(sysmem_parse_limit("lots\n", 5) < 0, "limit: garbage");
	ok(sysmem_read_int("/proc/sys/vm/overcommit_memory") >= 0, "sysctl: vm.overcommit_memory");
	ok(sysmem_read_int("/proc/sys/vm/no_such_setting") == PROCFS_MISSING, "sysctl: missing is missing");
	ok(sysmem_read_mode("/sys/kernel/mm/transparent_hugepage/enabled", mode, sizeof(mode)) != 0 ||
	   strcmp(mode, "always") == 0 || strcmp(mode, "madvise") == 0 || strcmp(mode, "never") == 0,
	   "sysfs: the THP mode is the bracketed word (%s)", mode);

	/* residency: a shared anonymous mapping, touched only in part */
	p = mmap(NULL, 64 * ps, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	memset(p, 1, 16 * ps);
	is_i64(sysmem_resident(p, 64 * ps), 16 * ps, "mincore: the touched 16 pages of 64 are resident");
	ok(sysmem_self_mapping(p + ps, &start, &end, &hugetlb) == 0 &&
	   start == (uint64_t) (uintptr_t) p && end == start + 64 * ps && hugetlb == 0,
	   "own mapping found by an address inside it");
	munmap(p, 64 * ps);

}

/*
 * The residency estimate against the exact count on a large shared
 * anonymous mapping: exact up to SYSMEM_RESIDENT_PAGES, then within its
 * stated error for a touched prefix (one boundary: one stratum), touched
 * blocks scattered at random (a sampling error) and nothing touched.
 */
static void
test_resident_estimate(void)
{
	long		ps = sysconf(_SC_PAGESIZE);
	size_t		pages = (size_t) (1 << 30) / (size_t) ps;	/* 1 GB */
	size_t		len = pages * (size_t) ps;
	size_t		stratum = len / SYSMEM_RESIDENT_STRATA;
	char	   *p;
	int			exact;
	int64_t		est, truth;

	if (getenv("PROCMEM_UNDER_VALGRIND"))
	{
		skip(5, "1 GB of touched memory under valgrind");
		return;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
	{
		skip(5, "no 1 GB mapping here");
		return;
	}
	memset(p, 1, (size_t) SYSMEM_RESIDENT_PAGES / 8 * (size_t) ps);
	est = sysmem_resident_estimate(p, (size_t) SYSMEM_RESIDENT_PAGES * (size_t) ps, &exact);
	ok(exact && est == sysmem_resident(p, (size_t) SYSMEM_RESIDENT_PAGES * (size_t) ps),
	   "resident estimate: exact up to %d pages", SYSMEM_RESIDENT_PAGES);

	est = sysmem_resident_estimate(p, len, &exact);
	truth = sysmem_resident(p, len);
	ok(!exact && llabs(est - truth) <= (long long) stratum,
	   "resident estimate: a touched prefix, within one stratum (%lld vs %lld)",
	   (long long) est, (long long) truth);

	memset(p, 1, len * 37 / 100);
	est = sysmem_resident_estimate(p, len, &exact);
	truth = sysmem_resident(p, len);
	ok(llabs(est - truth) <= (long long) stratum,
	   "resident estimate: 37%% touched, within one stratum (%lld vs %lld)",
	   (long long) est, (long long) truth);
	munmap(p, len);

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	est = sysmem_resident_estimate(p, len, &exact);
	ok(p != MAP_FAILED && est == 0, "resident estimate: nothing touched is 0");
	/* 8 kB blocks, each touched with probability 1/2 (a fixed seed) */
	srand(5);
	for (size_t b = 0; b + 1 < pages; b += 2)
		if (rand() & 1)
			p[b * (size_t) ps] = p[(b + 1) * (size_t) ps] = 1;
	est = sysmem_resident_estimate(p, len, &exact);
	truth = sysmem_resident(p, len);
	ok(llabs(est - truth) <= (long long) (len / 100),
	   "resident estimate: blocks touched at random, within 1%% of the range (%lld vs %lld)",
	   (long long) est, (long long) truth);
	munmap(p, len);
}

/* Sizes in sysfs, and the CPU's last-level cache. */
static void
test_cpu_cache(void)
{
	char		dir[1024];
	int			level;

	is_i64(sysmem_parse_size("491520K\n", 8), 491520LL << 10, "size: K");
	is_i64(sysmem_parse_size("32M\n", 4), 32LL << 20, "size: M");
	is_i64(sysmem_parse_size("1G", 2), 1LL << 30, "size: G");
	is_i64(sysmem_parse_size("4096\n", 5), 4096, "size: bytes");
	ok(sysmem_parse_size("K\n", 2) < 0 && sysmem_parse_size("lots", 4) < 0 &&
	   sysmem_parse_size("", 0) < 0 && sysmem_parse_size("9223372036854775807K", 20) < 0,
	   "size: garbage, empty and overflow are missing");

	snprintf(dir, sizeof(dir), "%s/cpu-cache/linux-6.18-epyc", fixtures);
	is_i64(sysmem_read_llc(dir, &level), 491520LL << 10, "captured: the L3 is the last level");
	is_i64(level, 3, "captured: level 3");
	snprintf(dir, sizeof(dir), "%s/cpu-cache/gaps", fixtures);
	is_i64(sysmem_read_llc(dir, &level), 32LL << 20,
		   "hand-made: indexes with gaps; the instruction cache and an unreadable size are skipped");
	is_i64(level, 3, "hand-made: level 3");
	snprintf(dir, sizeof(dir), "%s/cpu-cache/none", fixtures);
	ok(sysmem_read_llc(dir, &level) < 0 && level == -1, "no cache files: missing");
}

int
main(int argc, char **argv)
{
	fixtures = argc > 1 ? argv[1] : "test/fixtures";
	test_meminfo();
	test_find_cgroup();
	test_cgroup_parent();
	test_cgroup_files();
	test_cgroup_makeup();
	test_small_files();
	test_resident_estimate();
	test_cpu_cache();
	return tap_done();
}
