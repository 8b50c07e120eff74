/*
 * test_reuse.c
 *		Unit tests of when a process's figures may be reused (TAP; run by
 *		`make unit`).
 *
 * Fixtures: linux-6.18-vmstat was captured from /proc/vmstat;
 * handmade/vmstat-moved gives each counter its own power of two, so a sum
 * tells exactly which counters went into it; linux-6.18-threads/stat is a
 * python3 with four threads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "linux/pagemap.h"
#include "rules/reuse.h"
#include "procfile.h"
#include "tap.h"

#include <fcntl.h>

/* The counters of a 6.18 kernel's /proc/vmstat that count moved pages */
static const char *const moved[] = {
	"pgsteal_kswapd", "pgsteal_direct", "pgsteal_khugepaged", "pgsteal_proactive",
	"pgsteal_anon", "pgsteal_file", "pgdemote_kswapd", "pgdemote_direct",
	"pgdemote_khugepaged", "pgdemote_proactive", "pgpromote_success", "pswpout", "zswpout",
	"thp_split_page", "thp_split_page_failed", "thp_split_pmd",
	"thp_split_pud", "thp_deferred_split_page", "thp_underused_split_page",
	"thp_collapse_alloc", "thp_migration_split", "drop_pagecache", "drop_slab", "pswpin", "pglazyfreed",
};

/* Counters and near names that count no moved page */
static const char *const still[] = {
	"pgsteal", "pgsteal_", "pgdemote", "pgpromote_candidate", "pgpromote_successes", "pswpinx",
	"zswpin", "zswpwb", "pgmigrate_success", "pgmigrate_fail", "thp_collapse_alloc_failed", "thp_split_",
	"thp_migration_success", "thp_fault_alloc", "thp_deferred_split_page_x", "nr_free_pages",
	"pgscan_kswapd", "pgfault", "numa_pages_migrated", "drop_pagecache_x", "PGSTEAL_FILE",
	"workingset_refault_file", "",
};

static int
listed(const char *name)
{
	for (size_t i = 0; i < sizeof(moved) / sizeof(moved[0]); i++)
		if (strcmp(moved[i], name) == 0)
			return 1;
	return 0;
}

/* The sum of the listed counters in a vmstat text, read without reuse.c */
static uint64_t
sum_listed(const char *text, int *nfound)
{
	const char *p = text;
	uint64_t	sum = 0;
	char		name[128];
	unsigned long long v;
	int			used;

	*nfound = 0;
	while (sscanf(p, "%127s %llu%n", name, &v, &used) == 2)
	{
		/* reclaim's totals count too where the kernel does not split them */
		int			total = strncmp(name, "pgsteal_", 8) == 0 && strcmp(name, "pgsteal_anon") != 0 &&
			strcmp(name, "pgsteal_file") != 0;

		if (listed(name) && !(total && strstr(text, "\npgsteal_anon ")))
		{
			sum += v;
			(*nfound)++;
		}
		p += used;
	}
	return sum;
}

static void
test_moved_counter(void)
{
	for (size_t i = 0; i < sizeof(moved) / sizeof(moved[0]); i++)
		ok(reuse_moved_counter(moved[i], strlen(moved[i])), "counter: %s moves pages", moved[i]);
	for (size_t i = 0; i < sizeof(still) / sizeof(still[0]); i++)
		ok(!reuse_moved_counter(still[i], strlen(still[i])), "counter: '%s' does not", still[i]);
	/* the length given is the key */
	ok(reuse_moved_counter("pgsteal_file 12", 12), "counter: the length bounds the key");
	ok(!reuse_moved_counter("pswpout", 4), "counter: 'pswp' of pswpout is not pswpout");
	ok(!reuse_moved_counter("thp_collapse_alloc_failed", 19),
	   "counter: 'thp_collapse_alloc_' is not thp_collapse_alloc");
	ok(reuse_moved_counter("thp_collapse_alloc_failed", 18),
	   "counter: the first 18 bytes of thp_collapse_alloc_failed are thp_collapse_alloc");
}

static void
test_sum_moved(void)
{
	size_t		len;
	char	   *buf;
	int			n;

	buf = slurp("handmade/vmstat-moved", &len);
	is_i64((int64_t) reuse_sum_moved(buf, len), (int64_t) sum_listed(buf, &n),
		   "sum: the hand-made vmstat, against the list");
	is_i64(n, 20, "sum: the hand-made vmstat has 24 listed counters, 4 of them reclaim's totals");
	/*
	 * bits 0..23 are the moved counters, 24.. the others (but pswpin, bit
	 * 27); bits 0..3 reclaim's totals; bit 13 is pgmigrate_success, which
	 * moves no figure (test_migration())
	 */
	is_i64((int64_t) reuse_sum_moved(buf, len), (INT64_C(1) << 24) - 1 - 15 - 8192 + (INT64_C(1) << 27),
		   "sum: exactly the moved counters' bits, without reclaim's totals nor pgmigrate_success");
	{
		uint64_t	anon, file;

		reuse_sum_moved_by_kind(buf, len, &anon, &file);
		is_i64((int64_t) file, 32 + 4194304 + 8388608,
			   "by kind: file is pgsteal_file, drop_pagecache and drop_slab");
		is_i64((int64_t) anon, (INT64_C(1) << 24) - 1 - 15 - 8192 - (32 + 4194304 + 8388608) + (INT64_C(1) << 27),
			   "by kind: anon is the rest");
	}
	free(buf);
	{
		uint64_t	anon, file;
		const char *old_kernel = "pgsteal_kswapd 5\npgsteal_direct 2\npswpout 1\n";
		const char *split = "pgsteal_kswapd 5\npgsteal_anon 1\npgsteal_file 4\n";

		reuse_sum_moved_by_kind(old_kernel, strlen(old_kernel), &anon, &file);
		ok(anon == 8 && file == 0, "by kind: without pgsteal_anon, reclaim's totals are anonymous");
		reuse_sum_moved_by_kind(split, strlen(split), &anon, &file);
		ok(anon == 1 && file == 4, "by kind: with it, the totals are left out");
		{
			const char *no_swap = "pgsteal_kswapd 5\npgsteal_anon 0\npgsteal_file 5\n";

			reuse_sum_moved_by_kind(no_swap, strlen(no_swap), &anon, &file);
			ok(anon == 0 && file == 5, "by kind: a pgsteal_anon of 0 (no swap) still splits them");
		}
		ok(reuse_moved_counter("pgsteal_file", 12) == REUSE_MOVES_FILE &&
		   reuse_moved_counter("pgsteal_anon", 12) == REUSE_MOVES_ANON &&
		   reuse_moved_counter("pgsteal_kswapd", 14) == REUSE_MOVES_ANY &&
		   reuse_moved_counter("thp_split_pmd", 13) == REUSE_MOVES_ANON &&
		   reuse_moved_counter("drop_pagecache", 14) == REUSE_MOVES_FILE,
		   "kind: file, anon, either");
	}

	buf = slurp("linux-6.18-vmstat", &len);
	is_i64((int64_t) reuse_sum_moved(buf, len), (int64_t) sum_listed(buf, &n),
		   "sum: the captured vmstat, against the list");
	is_i64(n, 21, "sum: the captured vmstat has the 25 listed counters, 4 of them reclaim's totals");
	/* pswpin 10671 + pswpout 20374 + pgsteal_anon 16166 + pgsteal_file 19974739 + drop_pagecache 1 +
	 * drop_slab 2 + thp_collapse_alloc 21 + thp_deferred_split_page 964 + thp_split_pmd 964 */
	is_i64((int64_t) reuse_sum_moved(buf, len), 20023902, "sum: the captured vmstat's figure");
	/* a cut text: counters past the cut are not read */
	ok(reuse_sum_moved(buf, (size_t) (strstr(buf, "pgsteal_file ") - buf)) ==
	   20023902 - 19974739 - 1 - 2 - 21 - 964 - 964,
	   "sum: the length bounds the text");
	free(buf);

#define SUM(text) ((int64_t) reuse_sum_moved(text, strlen(text)))
	is_i64(SUM(""), 0, "sum: empty");
	is_i64(SUM("pswpout 5"), 5, "sum: no final newline");
	is_i64(SUM("pswpout 5\npswpout 7\n"), 12, "sum: a repeated counter adds");
	is_i64(SUM("pswpout  5 \n"), 5, "sum: blanks around the number");
	is_i64(SUM("pswpout -5\npswpout 5 kB\npswpout 99999999999999999999\npswpout\npswpout\t5\n"
			   "pswpout x\n"), 0,
		   "sum: a negative number, a unit, past INT64_MAX, no value, a tab, a word: none counts");
	is_i64(SUM("\xff\x01 3\n\npswpout 4\n"), 4, "sum: garbage, then a counter");
	/* unsigned: two INT64_MAX and 2 wrap to 0, with no trap */
	is_i64(SUM("pswpout 9223372036854775807\nzswpout 9223372036854775807\ndrop_slab 2\n"), 0,
		   "sum: wraps modulo 2^64");
#undef SUM
}

static void
test_moved_equal(void)
{
	reuse_moved a = {100, 3, 5, 7, 11};
	reuse_moved b = a;
	reuse_moved none = {100, 3, -1, -1, -1};
	reuse_moved none2 = none;
	reuse_moved m;
	procfs_result res;

	ok(reuse_moved_equal(&a, &b) && reuse_anon_unmoved(&a, &b), "equal: the same readings");
	b.anon++;
	ok(!reuse_moved_equal(&a, &b) && !reuse_anon_unmoved(&a, &b), "equal: anon moved");
	b = a;
	b.file++;
	ok(!reuse_moved_equal(&a, &b) && reuse_anon_unmoved(&a, &b), "equal: file moved, anon did not");
	b = a;
	b.ksm_shared++;
	ok(!reuse_moved_equal(&a, &b) && !reuse_anon_unmoved(&a, &b), "equal: KSM pages_shared moved");
	b = a;
	b.ksm_sharing--;
	ok(!reuse_moved_equal(&a, &b) && !reuse_anon_unmoved(&a, &b), "equal: KSM pages_sharing moved");
	b = a;
	b.ksm_scanned++;
	ok(!reuse_moved_equal(&a, &b) && !reuse_anon_unmoved(&a, &b),
	   "equal: ksmd scanned (a merge and an unmerge can leave the levels)");
	ok(reuse_moved_equal(&none, &none2), "equal: without KSM");
	none2.ksm_shared = 0;
	ok(!reuse_moved_equal(&none, &none2), "equal: KSM appeared");

	/* read first: the arguments of ok() are evaluated in no set order */
	memset(&m, 0, sizeof(m));
	res = reuse_read_moved(&m);
	ok(res == PROCFS_OK && m.anon + m.file > 0 && m.ksm_shared >= -1 && m.ksm_sharing >= -1 &&
	   m.ksm_scanned >= -1, "equal: this machine's (%llu anon, %llu file moved)",
	   (unsigned long long) m.anon, (unsigned long long) m.file);
}

/* reuse_process_unchanged() with a mark now of sched and no child */
static int
unchanged(const reuse_mark *then, int64_t then_ms, const procfs_stat *id,
		  const procfs_schedstat *sched, int64_t now_ms)
{
	reuse_mark	now;

	memset(&now, 0, sizeof(now));
	now.sched = *sched;
	now.childless = 1;
	return reuse_process_unchanged(then, then_ms, id, &now, now_ms);
}

static void
test_process_unchanged(void)
{
	size_t		len;
	char	   *buf;
	procfs_stat id;
	procfs_stat base;
	procfs_schedstat sched = {49464430, 36};
	procfs_schedstat s2;
	reuse_mark then;
	const int64_t t0 = 1000000;

	memset(&base, 0, sizeof(base));
	base.state = 'S';
	base.ppid = 19354;
	base.threads = 1;
	base.starttime = 3492926;
	/* the captured python3's: it reaped children that faulted and ran */
	base.reaped.cminflt = 6512;
	base.reaped.cutime = 4;
	memset(&then, 0, sizeof(then));
	then.starttime = 3492926;
	then.threads = 1;
	then.reaped = base.reaped;
	then.sched = sched;
	then.childless = 1;

	ok(unchanged(&then, t0, &base, &sched, t0 + 1000), "unchanged: asleep, the same");
	ok(unchanged(&then, t0, &base, &sched, t0), "unchanged: read at the same ms");
	/* by value: a figure is reused for 2 minutes at most (docs/history.md) */
	ok(unchanged(&then, t0, &base, &sched, t0 + 119999), "unchanged: 119,999 ms after");
	ok(!unchanged(&then, t0, &base, &sched, t0 + 120000), "unchanged: not 120,000 ms after");
	ok(!unchanged(&then, t0, &base, &sched, t0 - 1), "unchanged: not before it was read");
	then.threads = 2;
	ok(!unchanged(&then, t0, &base, &sched, t0 + 1000),
	   "unchanged: not when it had two threads at the read (one since gone ran unseen)");
	then.threads = 1;
	{
		procfs_schedstat zeros = {0, 0};
		reuse_mark z = then;

		z.sched = zeros;
		ok(!unchanged(&z, t0, &base, &zeros, t0 + 1000),
		   "unchanged: not on a kernel that shows 0 0 0 (no sched_info)");
	}

	id = base;
	id.starttime++;
	ok(!unchanged(&then, t0, &id, &sched, t0 + 1000), "unchanged: another start time");
	id = base;
	id.state = 'R';
	ok(!unchanged(&then, t0, &id, &sched, t0 + 1000), "unchanged: running");
	id.state = 'D';
	ok(!unchanged(&then, t0, &id, &sched, t0 + 1000), "unchanged: in disk sleep");
	id.state = 'T';
	ok(!unchanged(&then, t0, &id, &sched, t0 + 1000), "unchanged: stopped");
	id.state = 'Z';
	ok(!unchanged(&then, t0, &id, &sched, t0 + 1000), "unchanged: a zombie");
	id = base;
	id.threads = 2;
	ok(!unchanged(&then, t0, &id, &sched, t0 + 1000), "unchanged: two threads");
	id.threads = PROCFS_MISSING;
	ok(!unchanged(&then, t0, &id, &sched, t0 + 1000), "unchanged: threads unknown");

	s2 = sched;
	s2.runtime_ns++;
	ok(!unchanged(&then, t0, &base, &s2, t0 + 1000), "unchanged: 1 ns more on a CPU");
	s2 = sched;
	s2.timeslices++;
	ok(!unchanged(&then, t0, &base, &s2, t0 + 1000), "unchanged: one timeslice more");
	/* a child reaped since: what it faulted and ran was added to these */
	id = base;
	id.reaped.cminflt++;
	ok(!unchanged(&then, t0, &id, &sched, t0 + 1000),
	   "unchanged: not when a reaped child's minor faults were added (cminflt)");
	id = base;
	id.reaped.cutime++;
	ok(!unchanged(&then, t0, &id, &sched, t0 + 1000),
	   "unchanged: not when a reaped child's user time was added (cutime)");
	id = base;
	id.reaped.cstime++;
	ok(!unchanged(&then, t0, &id, &sched, t0 + 1000),
	   "unchanged: not when a reaped child's system time was added (cstime)");
	/* a child then or now, alive or a zombie: its children file listed it */
	{
		reuse_mark	now;

		memset(&now, 0, sizeof(now));
		now.sched = sched;
		now.childless = 1;
		ok(reuse_process_unchanged(&then, t0, &base, &now, t0 + 1000), "children: none then, none now");
		now.childless = 0;
		ok(!reuse_process_unchanged(&then, t0, &base, &now, t0 + 1000),
		   "children: one now (or its file unreadable): not reused");
		now.childless = 1;
		then.childless = 0;
		ok(!reuse_process_unchanged(&then, t0, &base, &now, t0 + 1000),
		   "children: one at the read, none now (exited, reaped unseen): not reused");
		then.childless = 1;
	}
	/* ppid is no condition: the start time names the process */
	id = base;
	id.ppid = 1;
	ok(unchanged(&then, t0, &id, &sched, t0 + 1000), "unchanged: ppid is no condition");

	buf = slurp("linux-6.18-threads/stat", &len);
	ok(procfs_parse_stat(buf, len, &id) == 0 && id.state == 'S' && id.starttime == then.starttime &&
	   !unchanged(&then, t0, &id, &sched, t0 + 1000),
	   "unchanged: the captured sleeping python3 has four threads: never reused");
	id.threads = 1;
	ok(unchanged(&then, t0, &id, &sched, t0 + 1000),
	   "unchanged: the same with one thread would be");
	free(buf);
}

/* The postmaster: still when it did not run, or ran without a fault or a page freed */
static void
test_postmaster_still(void)
{
	reuse_postmaster then = {500, 4096 * 100};
	reuse_postmaster now = then;
	reuse_postmaster self;
	procfs_result res;

	ok(reuse_postmaster_still(&then, &now), "postmaster: did not run");
	ok(reuse_postmaster_still(&then, &now), "postmaster: ran or not, no fault, the same anonymous pages");
	now.faults++;
	ok(!reuse_postmaster_still(&then, &now), "postmaster: ran and faulted (a copy-on-write write)");
	now.faults = then.faults;
	now.anon -= 4096;
	ok(!reuse_postmaster_still(&then, &now), "postmaster: ran and freed a page");
	now.anon += 8192;
	ok(!reuse_postmaster_still(&then, &now), "postmaster: ran and gained a page");
	now = then;
	now.faults += 3;
	ok(!reuse_postmaster_still(&then, &now),
	   "postmaster: faults with its main thread's schedstat unchanged (another thread's) count");
	now = then;
	now.anon += 4096;
	ok(!reuse_postmaster_still(&then, &now), "postmaster: so do anonymous pages");
	memset(&self, 0, sizeof(self));
	res = reuse_read_postmaster(getpid(), &self);
	ok(res == PROCFS_OK && self.faults > 0 && self.anon > 0,
	   "postmaster: this process's own (%llu faults, %lld anon)",
	   (unsigned long long) self.faults, (long long) self.anon);
}

/*
 * Faults in the pages of a fresh mapping and runs on a CPU for about ms of
 * its own clock, as a forked child touching memory does
 */
static void
touch_and_run(size_t bytes, int ms)
{
	char	   *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct timespec t;

	if (p == MAP_FAILED)
		_exit(2);
	/* a fault per page, not per huge page */
	(void) madvise(p, bytes, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < bytes; i += (size_t) sysconf(_SC_PAGESIZE))
		p[i] = 1;
	do
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	while (t.tv_sec * 1000 + t.tv_nsec / 1000000 < ms);
}

/* A child that touches 4 MB and runs 60 ms once told to (a byte on *go), then exits */
static pid_t
fork_toucher(int *go)
{
	int			fds[2];
	pid_t		kid;
	char		c;

	if (pipe(fds) != 0 || (kid = fork()) < 0)
		return -1;
	if (kid == 0)
	{
		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(1);
		touch_and_run(4 << 20, 60);
		_exit(0);
	}
	close(fds[0]);
	*go = fds[1];
	return kid;
}

static void
tell(int go)
{
	char		c = 0;

	if (write(go, &c, 1) != 1)
		ok(0, "children: the child told to go");
	close(go);
}

/* This process's mark now, as if it had slept since then (the same schedstat) */
static void
mark_now(const reuse_mark *then, procfs_stat *id, reuse_mark *now)
{
	procfs_read_stat(0, id);
	reuse_mark_take(getpid(), id, now);
	id->state = 'S';
	now->sched = then->sched;
}

/*
 * A process with a child is never reused: this one forks children that
 * touch memory, run and exit. The one that is waited for is listed alive
 * and exited (a zombie) until reaped, and then its faults and times are
 * this process's cminflt, cutime and cstime; the one exiting while SIGCHLD
 * is ignored leaves nothing behind, and was seen at the read before.
 */
static void
test_children(void)
{
	int			has;
	int			files = procfs_has_child(getpid(), &has) == PROCFS_OK;
	procfs_stat before, id;
	reuse_mark	then, now;
	siginfo_t	info;
	pid_t		kid;
	int			go;

	ok(procfs_read_stat(0, &before) == PROCFS_OK &&
	   reuse_mark_take(getpid(), &before, &then) == PROCFS_OK, "children: this process's mark");
	if (!files)
	{
		ok(!then.childless, "children: a kernel without the children files: never childless");
		skip(9, "the kernel has no /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN)");
		return;
	}
	ok(then.childless, "children: none yet");
	mark_now(&then, &id, &now);
	ok(reuse_process_unchanged(&then, 0, &id, &now, 1), "children: none since: reused");

	if ((kid = fork_toucher(&go)) < 0)
		return;
	mark_now(&then, &id, &now);
	ok(!now.childless && !reuse_process_unchanged(&then, 0, &id, &now, 1),
	   "children: a live child: not reused");
	tell(go);
	/* a zombie until reaped, as under a backend that does not wait */
	waitid(P_PID, kid, &info, WEXITED | WNOWAIT);
	mark_now(&then, &id, &now);
	ok(!now.childless && !reuse_process_unchanged(&then, 0, &id, &now, 1),
	   "children: an exited child not yet reaped: not reused");
	ok(memcmp(&id.reaped, &before.reaped, sizeof(procfs_reaped)) == 0,
	   "children: not reaped, its faults and times are not this process's yet");
	waitpid(kid, NULL, 0);
	mark_now(&then, &id, &now);
	ok(id.reaped.cminflt >= before.reaped.cminflt + (4 << 20) / sysconf(_SC_PAGESIZE) &&
	   id.reaped.cutime + id.reaped.cstime > before.reaped.cutime + before.reaped.cstime,
	   "children: reaped, its 4 MB's faults and its 60 ms are this process's (cminflt %llu to %llu, "
	   "cutime + cstime %llu to %llu ticks)",
	   (unsigned long long) before.reaped.cminflt, (unsigned long long) id.reaped.cminflt,
	   (unsigned long long) (before.reaped.cutime + before.reaped.cstime),
	   (unsigned long long) (id.reaped.cutime + id.reaped.cstime));
	ok(now.childless && !reuse_process_unchanged(&then, 0, &id, &now, 1),
	   "children: reaped, none left, but what the reaping left differs: not reused");

	/* SIGCHLD ignored: the child is gone at its exit, with no trace here */
	signal(SIGCHLD, SIG_IGN);
	if ((kid = fork_toucher(&go)) < 0)
		return;
	procfs_read_stat(0, &before);
	reuse_mark_take(getpid(), &before, &then);
	ok(!then.childless, "children: read with a live child");
	tell(go);
	/* returns when it is gone: ECHILD */
	waitpid(kid, NULL, 0);
	signal(SIGCHLD, SIG_DFL);
	mark_now(&then, &id, &now);
	ok(now.childless && memcmp(&id.reaped, &before.reaped, sizeof(procfs_reaped)) == 0,
	   "children: it exited, no zombie, nothing reaped");
	ok(!reuse_process_unchanged(&then, 0, &id, &now, 1),
	   "children: but it was there at the read: not reused");
}

/* The frame numbers of n pages from p in pid's memory (root sees them) */
static int
frames(pid_t pid, const char *p, size_t n, uint64_t *out)
{
	char		path[64];
	int			fd;
	ssize_t		got;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int) pid);
	if ((fd = open(path, O_RDONLY)) < 0)
		return -1;
	got = pread(fd, out, n * 8, (off_t) ((uintptr_t) p / (uintptr_t) sysconf(_SC_PAGESIZE) * 8));
	close(fd);
	for (size_t i = 0; i < n; i++)
		out[i] &= (UINT64_C(1) << 55) - 1;
	return got == (ssize_t) (n * 8) ? 0 : -1;
}

/* Where the migration test's child maps its 64 MB (clear of ASan's allocator at 0x6000...), and how many pages */
#define MIGRATION_AT	((uintptr_t) 0x700000000000)
#define MIGRATION_PAGES	16384

/*
 * The migration test's child: this program run again (a fresh address
 * space, sharing no page with the test, whose own writes would otherwise
 * make shared pages the child's), its 64 MB touched, then stopped.
 */
static int
migration_child(void)
{
	size_t		bytes = MIGRATION_PAGES * (size_t) sysconf(_SC_PAGESIZE);
	char	   *p = mmap((void *) MIGRATION_AT, bytes, PROT_READ | PROT_WRITE,
						 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p != (char *) MIGRATION_AT)
		return 2;
	(void) madvise(p, bytes, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < bytes; i += (size_t) sysconf(_SC_PAGESIZE))
		p[i] = 1;
	raise(SIGSTOP);
	return 0;
}

/*
 * Why pgmigrate_success is not a counter that stops reuse: compaction
 * moves a sleeping process's pages to other frames and changes none of its
 * figures (a host compacting its memory every few seconds made the sampler
 * read everything afresh). A stopped process's 64 MB, its frames before
 * and after /proc/sys/vm/compact_memory (root), and its figures: the same.
 */
static void
test_migration(void)
{
	const size_t n = MIGRATION_PAGES;
	const char *p = (const char *) MIGRATION_AT;
	uint64_t   *before = calloc(n, 8),
			   *after = calloc(n, 8);
	pagemap_anon a, b;
	int64_t		rss_a, rss_b, pte_a, pte_b;
	size_t		moved = 0;
	pid_t		child;
	int			fd, status;

	if (before == NULL || after == NULL)
	{
		printf("Bail out! no memory for the migration test\n");
		exit(1);
	}
	if (getenv("PROCMEM_UNDER_VALGRIND"))
	{
		/* /proc/self/exe is valgrind's tool there, not this program */
		skip(2, "migration: under valgrind the child cannot be this program run again");
		goto done;
	}
	if ((child = fork()) == 0)
	{
		execl("/proc/self/exe", "test_reuse", "--migration-child", (char *) NULL);
		_exit(3);
	}
	waitpid(child, &status, WUNTRACED);
	if (!WIFSTOPPED(status))
	{
		skip(2, "migration: the child could not map its 64 MB where it asked");
		goto done;
	}
	if (frames(child, p, n, before) != 0 || before[0] == 0 ||
		(fd = open("/proc/sys/vm/compact_memory", O_WRONLY)) < 0)
	{
		skip(2, "migration: needs root (frame numbers, /proc/sys/vm/compact_memory)");
		goto out;
	}
	close(fd);
	rss_a = proc_field(child, "status", "RssAnon");
	pte_a = proc_field(child, "status", "VmPTE");
	if (pagemap_read_anon(child, 0, NULL, &a) != PROCFS_OK)
		a.exclusive = -1;
	/* compaction moves what lies low in each zone: a few tries at most */
	for (int t = 0; t < 3 && moved == 0; t++)
	{
		if ((fd = open("/proc/sys/vm/compact_memory", O_WRONLY)) >= 0)
		{
			if (write(fd, "1", 1) != 1)
				t = 3;
			close(fd);
		}
		if (frames(child, p, n, after) != 0)
			break;
		for (size_t i = 0; i < n; i++)
			moved += after[i] != before[i];
	}
	if (moved == 0)
	{
		skip(2, "migration: compaction moved none of the child's pages here");
		goto out;
	}
	rss_b = proc_field(child, "status", "RssAnon");
	pte_b = proc_field(child, "status", "VmPTE");
	if (pagemap_read_anon(child, 0, NULL, &b) != PROCFS_OK)
		b.exclusive = -2;
	ok(moved > 0, "migration: compaction moved %zu of the stopped child's %zu pages to other frames", moved, n);
	if (!ok(a.exclusive == b.exclusive && a.shared == b.shared &&
			memcmp(a.part, b.part, sizeof(a.part)) == 0 && a.mappings == b.mappings &&
			rss_a == rss_b && pte_a == pte_b,
			"migration: ... and none of its figures changed: exclusive %lld kB, shared %lld kB, its parts, "
			"RssAnon %lld kB, VmPTE %lld kB (pgmigrate_success need not stop reuse)",
			(long long) b.exclusive / 1024, (long long) b.shared / 1024, (long long) rss_b / 1024,
			(long long) pte_b / 1024))
		printf("# before: exclusive %lld, shared %lld, mappings %lld, RssAnon %lld, VmPTE %lld\n",
			   (long long) a.exclusive, (long long) a.shared, (long long) a.mappings, (long long) rss_a,
			   (long long) pte_a);
out:
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
done:
	free(before);
	free(after);
}

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--migration-child") == 0)
		return migration_child();
	fixtures = argc > 1 ? argv[1] : "test/fixtures";
	test_migration();
	test_moved_counter();
	test_sum_moved();
	test_moved_equal();
	test_process_unchanged();
	test_postmaster_still();
	test_children();
	return tap_done();
}
