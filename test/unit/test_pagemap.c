/*
 * test_pagemap.c
 *		Unit tests of the maps/pagemap reader (TAP; run by `make unit`).
 *
 * The maps fixture is the mapping headers of the captured smaps (same
 * moment). The live tests fork a child with known memory, stop it, and read
 * it through every combination of the optional kernel interfaces: all must
 * agree, and agree with the child's own smaps_rollup.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/pagemap.h"
#include "procfile.h"
#include "tap.h"

#define MB(n) ((int64_t) (n) * 1024 * 1024)

typedef struct maps_tally
{
	int			lines;
	int			parsed;
	int			shared;
	int			wanted_scan;
	int			wanted_noscan;
} maps_tally;

static void
tally_line(void *arg, const char *line, size_t len)
{
	maps_tally *t = arg;
	procfs_vma	vma;

	t->lines++;
	if (procfs_parse_maps_line(line, len, &vma) != 0)
		return;
	t->parsed++;
	t->shared += vma.shared;
	t->wanted_scan += pagemap_vma_wanted(&vma, 1);
	t->wanted_noscan += pagemap_vma_wanted(&vma, 0);
}

static void
test_maps_fixture(void)
{
	size_t		len;
	char	   *buf = slurp("linux-6.18-backend/maps", &len);
	maps_tally	t = {0};
	procfs_lines lb;

	/* in reads of 4 kB, as from the file */
	procfs_lines_init(&lb, tally_line, &t);
	for (size_t off = 0; off < len; off += 4096)
		procfs_lines_feed(&lb, buf + off, len - off < 4096 ? len - off : 4096);
	procfs_lines_finish(&lb);
	free(buf);

	is_i64(t.parsed, 246, "maps fixture: every one of 246 lines parsed");
	is_i64(t.shared, 6, "maps fixture: 6 shared mappings (shared memory, DSM)");
	is_i64(t.wanted_scan, 197,
		   "maps fixture: 197 to read (not shared, not text, not [vsyscall])");
	is_i64(t.wanted_noscan, 197, "maps fixture: no PROT_NONE region here");
}

static void
test_maps_lines(void)
{
	procfs_vma	v;
	const char *text = "55d1c6d2e000-55d1c6d56000 r-xp 00001000 fd:01 1234567 /usr/lib/postgresql/15/bin/postgres";
	const char *anonx = "7f4913dd0000-7f4913dd2000 r-xp 00000000 00:00 0";
	const char *none = "7f0000000000-7f0000400000 ---p 00000000 00:00 0";
	const char *relro = "55d1c6d56000-55d1c6d58000 r--p 00029000 fd:01 1234567 /usr/lib/x";
	const char *bad[] = {
		"", "zz-10 rw-p 0 00:00 0", "10-20 rw-q 0 00:00 0", "20-10 rw-p 0 00:00 0",
		"10-20 rw-p 0 00:00", "10-20 rw-p 0 0000 0", "10-20 rw-p 0 00:00 x",
		"10000000000000000-20000000000000000 rw-p 0 00:00 0", "10-20 rw", "10-"
	};
	int			rejected = 0;

	ok(procfs_parse_maps_line(text, strlen(text), &v) == 0 && v.inode == 1234567 &&
	   v.executable && !v.writable && !v.shared && v.start == 0x55d1c6d2e000,
	   "maps line: program text");
	ok(!pagemap_vma_wanted(&v, 1), "program text is not read");
	ok(procfs_parse_maps_line(anonx, strlen(anonx), &v) == 0 && pagemap_vma_wanted(&v, 1),
	   "anonymous executable memory (JIT code) is read");
	ok(procfs_parse_maps_line(relro, strlen(relro), &v) == 0 && pagemap_vma_wanted(&v, 0),
	   "read-only private file data (RELRO, copy-on-write) is read");
	ok(procfs_parse_maps_line(none, strlen(none), &v) == 0 &&
	   pagemap_vma_wanted(&v, 1) && !pagemap_vma_wanted(&v, 0),
	   "PROT_NONE: scanned with PAGEMAP_SCAN, skipped without");
	{
		const char *spaced = "7f00-7f10 rw-s 00000000 00:01 42      /dev/shm/a b (deleted)";

		ok(procfs_parse_maps_line(text, strlen(text), &v) == 0 && v.path_len == 35 &&
		   memcmp(v.path, "/usr/lib/postgresql/15/bin/postgres", 35) == 0, "maps line: the path");
		ok(procfs_parse_maps_line(spaced, strlen(spaced), &v) == 0 && v.path_len == 22 &&
		   memcmp(v.path, "/dev/shm/a b (deleted)", 22) == 0,
		   "maps line: a path with spaces, after the padding");
		ok(procfs_parse_maps_line(anonx, strlen(anonx), &v) == 0 && v.path_len == 0 &&
		   v.path == anonx + strlen(anonx), "maps line: no path is an empty one at the end");
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		rejected += procfs_parse_maps_line(bad[i], strlen(bad[i]), &v) != 0;
	is_i64(rejected, (int64_t) (sizeof(bad) / sizeof(bad[0])), "malformed maps lines are rejected");
}

static void
test_entries(void)
{
	uint64_t	e[] = {
		0,						/* not present */
		PM_ENTRY_PRESENT | PM_ENTRY_EXCLUSIVE,	/* private anon */
		PM_ENTRY_PRESENT,		/* anon shared copy-on-write (or zero page) */
		PM_ENTRY_PRESENT | PM_ENTRY_FILE | PM_ENTRY_EXCLUSIVE,	/* page cache */
		PM_ENTRY_SWAPPED | PM_ENTRY_EXCLUSIVE,	/* in swap, not RAM */
		PM_ENTRY_PRESENT | PM_ENTRY_EXCLUSIVE | 0x12345,	/* PFN bits ignored */
	};
	pagemap_anon a;

	memset(&a, 0, sizeof(a));
	pagemap_count_entries(e, sizeof(e) / sizeof(e[0]), 4096, &a.exclusive, &a.shared);
	is_i64(a.exclusive, 2 * 4096, "entries: present exclusive anonymous pages");
	is_i64(a.shared, 4096, "entries: present shared anonymous pages");
}

/* Touches n bytes so that every page is present. */
static char *
touched(size_t n)
{
	char	   *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
	{
		printf("Bail out! mmap failed\n");
		exit(1);
	}
	madvise(p, n, MADV_NOHUGEPAGE);
	memset(p, 1, n);
	return p;
}

static int
kernel_at_least(int major, int minor)
{
	struct utsname u;
	int			ma = 0,
				mi = 0;

	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return 0;
	return ma > major || (ma == major && mi >= minor);
}

static void
test_live(void)
{
	char	   *inherited = touched(MB(8));
	pid_t		child;
	pagemap_anon a[4];
	int			same = 1;
	int64_t		anonymous;
	procfs_result res;
	procfs_result res_f[4];

	child = fork();
	if (child == 0)
	{
		char	   *own = touched(MB(4));

		memset(inherited, 2, MB(1));	/* copy-on-write: 1 MB becomes ours */
		(void) own;
		raise(SIGSTOP);
		_exit(0);
	}
	waitpid(child, NULL, WUNTRACED);	/* stopped: its memory holds still */

	/*
	 * The parent keeps running: each page it writes that it still shares
	 * with the child (stack, stdio buffers) becomes the child's alone. A
	 * first round through every path makes those writes; the second
	 * round, with nothing printed in between, then holds still.
	 */
	for (int round = 0; round < 2; round++)
		for (unsigned f = 0; f < 4; f++)
			if (!(f & PAGEMAP_NO_SCAN) || !pread_path_too_slow())
				res_f[f] = pagemap_read_anon(child, f, NULL, &a[f]);
	for (unsigned f = 0; f < 4; f++)
		if ((f & PAGEMAP_NO_SCAN) && pread_path_too_slow())
			skip(1, ASAN_SKIPS_PREAD);
		else
			ok(res_f[f] == PROCFS_OK, "live: read with%s PAGEMAP_SCAN, with%s PROCMAP_QUERY",
			   f & PAGEMAP_NO_SCAN ? "out" : "", f & PAGEMAP_NO_PROCMAP_QUERY ? "out" : "");
	if (getenv("PROCMEM_UNDER_VALGRIND"))
	{
		/* valgrind's own memory moves under both processes: no figure holds */
		skip(6, "memory figures under valgrind");
	}
	else if (pread_path_too_slow())
	{
		/* the figures of the paths compared, one by one, where the pread path is not read */
		skip(6, ASAN_SKIPS_PREAD);
	}
	else
	{
		for (unsigned f = 1; f < 4; f++)
			same &= a[f].exclusive == a[0].exclusive;
		ok(same, "live: every path finds the same exclusive memory (%lld kB)",
		   (long long) a[0].exclusive / 1024);
		ok(a[0].exclusive >= MB(5) && a[0].exclusive <= MB(6),
		   "live: exclusive = 4 MB allocated + 1 MB copied on write + a little");
		ok(a[0].shared >= MB(7) - 65536, "live: the 7 MB still shared with the parent are shared");
		ok(a[0].shared == a[2].shared, "live: both PAGEMAP_SCAN paths agree on shared");
		ok(a[1].shared >= a[0].shared, "live: without PAGEMAP_SCAN, zero-page mappings may add to shared");
		anonymous = proc_field(child, "smaps_rollup", "Anonymous");
		ok(anonymous > 0 && a[0].exclusive + a[0].shared <= anonymous + 65536 &&
		   a[0].exclusive + a[0].shared >= anonymous - 65536,
		   "live: exclusive + shared = smaps_rollup Anonymous (%lld kB), within 64 kB",
		   (long long) anonymous / 1024);
	}
	ok(a[0].used_scan == kernel_at_least(6, 7) && a[0].used_query == kernel_at_least(6, 11),
	   "live: PAGEMAP_SCAN (6.7) and PROCMAP_QUERY (6.11) used exactly where the kernel has them");
	if (pread_path_too_slow())
		skip(1, ASAN_SKIPS_PREAD);
	else
		ok(!a[3].used_scan && !a[3].used_query, "live: both can be turned off");

	kill(child, SIGKILL);
	{
		siginfo_t	info;

		waitid(P_PID, child, &info, WEXITED | WNOWAIT);	/* a zombie, not reaped */
	}
	res = pagemap_read_anon(child, 0, NULL, &a[0]);
	ok(res != PROCFS_OK, "live: a zombie's anonymous memory is not reported (%d)", (int) res);
	waitpid(child, NULL, 0);
	res = pagemap_read_anon(child, 0, NULL, &a[0]);
	is_i64(res, PROCFS_GONE, "live: a reaped pid is gone");
	munmap(inherited, MB(8));
}

int
main(int argc, char **argv)
{
	fixtures = argc > 1 ? argv[1] : "test/fixtures";
	test_maps_fixture();
	test_maps_lines();
	test_entries();
	test_live();
	return tap_done();
}
