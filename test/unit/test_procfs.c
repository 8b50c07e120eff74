/*
 * test_procfs.c
 *		Unit tests of the /proc parsers and readers (TAP; run by `make unit`).
 *
 * Fixtures: test/fixtures/linux-*-* were captured from PostgreSQL processes
 * by scripts/capture-fixtures (the process stopped, so smaps and
 * smaps_rollup describe one moment); test/fixtures/handmade holds variants
 * no kernel should produce. The live tests read this test's own processes.
 */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/keys.h"
#include "linux/procfs.h"
#include "linux/reading.h"
#include "linux/titles.h"
#include "procfile.h"
#include "tap.h"

#define KB(n) ((int64_t) (n) * 1024)

/* Feeds a buffer to a line parser in chunks of the given size. */
static void
feed(const char *buf, size_t len, size_t chunk, procfs_line_fn fn, void *arg)
{
	procfs_lines lb;

	procfs_lines_init(&lb, fn, arg);
	for (size_t off = 0; off < len; off += chunk)
		procfs_lines_feed(&lb, buf + off, len - off < chunk ? len - off : chunk);
	procfs_lines_finish(&lb);
}

/* Feeds a whole fixture file to a line parser. */
static void
parse_fixture(const char *rel, procfs_line_fn fn, void *arg)
{
	size_t		len;
	char	   *buf = slurp(rel, &len);

	feed(buf, len, len ? len : 1, fn, arg);
	free(buf);
}

static procfs_status
status_of(const char *rel)
{
	procfs_status st;
	procfs_fieldset fs = keys_fieldset(&keys_status, &st);

	procfs_fields_init(&fs);
	parse_fixture(rel, procfs_fields_line, &fs);
	return st;
}

static procfs_smaps
smaps_of(const char *rel)
{
	procfs_smaps sm;
	procfs_fieldset fs = keys_fieldset(&keys_smaps, &sm);

	procfs_fields_init(&fs);
	parse_fixture(rel, procfs_fields_line, &fs);
	return sm;
}

static void
test_captured_status(void)
{
	procfs_status st = status_of("linux-6.18-backend/status");
	procfs_fieldset fs = keys_fieldset(&keys_status, &st);

	is_i64(st.vm_peak, KB(224604), "status: VmPeak");
	is_i64(st.vm_hwm, KB(37280), "status: VmHWM");
	is_i64(st.vm_rss, KB(34380), "status: VmRSS");
	is_i64(st.rss_anon, KB(3836), "status: RssAnon");
	is_i64(st.rss_file, KB(8496), "status: RssFile");
	is_i64(st.rss_shmem, KB(22048), "status: RssShmem");
	is_i64(st.vm_pte, KB(188), "status: VmPTE");
	is_i64(st.vm_swap, 0, "status: VmSwap 0 is a figure, not missing");
	is_i64(st.hugetlb, 0, "status: HugetlbPages");
	is_i64(st.ppid, 4304, "status: PPid is a bare number");
	is_i64(st.rss_anon + st.rss_file + st.rss_shmem, st.vm_rss,
		   "status: RssAnon + RssFile + RssShmem = VmRSS");
	is_i64(st.threads, 1, "status: Threads is a bare number");
	is_i64(st.kill_pending, 0, "status: SigPnd without SIGKILL");
	is_i64(st.kill_pending_shared, 0, "status: ShdPnd without SIGKILL");
	is_i64(procfs_fields_count(&fs), 13, "status: all 13 fields found");
}

/* SigPnd and ShdPnd: whether SIGKILL (9: bit 8 of the hex mask) is pending */
static int64_t
kill_pending_of(const char *line)
{
	procfs_status st;
	procfs_fieldset fs = keys_fieldset(&keys_status, &st);

	procfs_fields_init(&fs);
	procfs_fields_line(&fs, line, strlen(line));
	return st.kill_pending;
}

static void
test_kill_pending(void)
{
	is_i64(kill_pending_of("SigPnd:\t0000000000000100"), 1, "kill pending: SIGKILL alone");
	is_i64(kill_pending_of("SigPnd:\t0000000000004102"), 1, "kill pending: SIGKILL among others (2, 9, 15)");
	is_i64(kill_pending_of("SigPnd:\tfffffffffffffeff"), 0, "kill pending: every signal but SIGKILL");
	is_i64(kill_pending_of("SigPnd:\t0000000000000000"), 0, "kill pending: none");
	is_i64(kill_pending_of("SigPnd:\t100"), 1, "kill pending: a short mask");
	is_i64(kill_pending_of("SigPnd:\t0000000000000100\r"), 1, "kill pending: a trailing CR");
	is_i64(kill_pending_of("SigPnd:\tFFFFFFFFFFFFFFFF"), 1, "kill pending: upper case");
	is_i64(kill_pending_of("SigPnd:\t00000000000000100"), PROCFS_INVALID, "kill pending: 17 digits is no mask");
	is_i64(kill_pending_of("SigPnd:\t"), PROCFS_INVALID, "kill pending: no digits is no mask");
	is_i64(kill_pending_of("SigPnd:\t01x0"), PROCFS_INVALID, "kill pending: a non-hex digit");
	is_i64(kill_pending_of("SigPnd:\t100 kB"), PROCFS_INVALID, "kill pending: a unit is no mask");
}

static void
test_captured_smaps(void)
{
	procfs_smaps r = smaps_of("linux-6.18-backend/smaps_rollup");
	procfs_smaps s = smaps_of("linux-6.18-backend/smaps");
	int64_t		parts = r.pss_anon + r.pss_file + r.pss_shmem;

	is_i64(r.pss, KB(24149), "smaps_rollup: Pss");
	is_i64(r.pss_anon, KB(2128), "smaps_rollup: Pss_Anon");
	is_i64(r.pss_file, KB(3546), "smaps_rollup: Pss_File");
	is_i64(r.pss_shmem, KB(18474), "smaps_rollup: Pss_Shmem");
	is_i64(r.private_clean, KB(1980), "smaps_rollup: Private_Clean");
	is_i64(r.private_dirty, KB(17080), "smaps_rollup: Private_Dirty");
	is_i64(r.swap_pss, 0, "smaps_rollup: SwapPss");
	ok(parts <= r.pss && parts >= r.pss - KB(3),
	   "smaps_rollup: Pss_Anon + Pss_File + Pss_Shmem = Pss, give or take kB rounding");

	/* the same moment summed over every mapping of smaps */
	is_i64(s.private_clean, r.private_clean, "smaps summed: Private_Clean");
	is_i64(s.private_dirty, r.private_dirty, "smaps summed: Private_Dirty");
	/* each mapping's Pss is rounded down to a kB; the rollup rounds once */
	ok(s.pss <= r.pss && s.pss > r.pss - KB(1000),
	   "smaps summed: Pss within per-mapping rounding of smaps_rollup's");
	ok(s.pss_anon < 0, "smaps summed: no Pss_Anon per mapping, so none in the sum");
}

static void
test_chunking(void)
{
	const char *files[] = {"linux-6.18-backend/status", "linux-6.18-backend/smaps"};

	for (int f = 0; f < 2; f++)
	{
		size_t		len;
		char	   *buf = slurp(files[f], &len);
		size_t		chunks[] = {1, 2, 3, 7, 64, 511, 512, 513, 4096};
		int			same = 1;
		procfs_status st0, st;
		procfs_smaps sm0, sm;

		procfs_fieldset st0_fs = keys_fieldset(&keys_status, &st0), sm0_fs = keys_fieldset(&keys_smaps, &sm0);
		procfs_fieldset st_fs = keys_fieldset(&keys_status, &st), sm_fs = keys_fieldset(&keys_smaps, &sm);

		procfs_fields_init(&st0_fs);
		procfs_fields_init(&sm0_fs);
		feed(buf, len, len, procfs_fields_line, &st0_fs);
		feed(buf, len, len, procfs_fields_line, &sm0_fs);
		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++)
		{
			procfs_fields_init(&st_fs);
			procfs_fields_init(&sm_fs);
			feed(buf, len, chunks[c], procfs_fields_line, &st_fs);
			feed(buf, len, chunks[c], procfs_fields_line, &sm_fs);
			same &= memcmp(&st, &st0, sizeof(st)) == 0 &&
				memcmp(&sm, &sm0, sizeof(sm)) == 0;
		}
		ok(same, "%s: the same figures whatever the read chunk size", files[f]);
		free(buf);
	}
}

static void
test_handmade(void)
{
	procfs_status st;
	procfs_smaps sm;

	st = status_of("handmade/status-old-kernel");
	is_i64(st.vm_rss, KB(34380), "old kernel status: VmRSS still read");
	ok(st.rss_anon == PROCFS_MISSING && st.rss_file == PROCFS_MISSING &&
	   st.rss_shmem == PROCFS_MISSING && st.hugetlb == PROCFS_MISSING,
	   "old kernel status: absent fields are missing, not 0");

	st = status_of("handmade/status-odd");
	is_i64(st.vm_rss, KB(1), "odd status: a known key after unknown look-alikes");
	is_i64(st.vm_pte, KB(12), "odd status: trailing blank and CR tolerated");
	ok(st.rss_anon < 0, "odd status: a unit other than kB is rejected");
	ok(st.rss_file < 0, "odd status: a negative value is rejected");
	is_i64(st.rss_shmem, KB(3), "odd status: no blank before kB is fine");

	st = status_of("handmade/status-truncated");
	is_i64(st.vm_rss, KB(34380), "truncated status: lines before the cut");
	ok(st.vm_pte < 0, "truncated status: the cut line (no unit) is rejected");
	ok(st.vm_swap == PROCFS_MISSING, "truncated status: lines after the cut are missing");

	st = status_of("handmade/status-huge");
	is_i64(st.vm_rss, INT64_C(9007199254740991) * 1024,
		   "huge status: the largest kB figure that fits in bytes");
	ok(st.vm_pte < 0, "huge status: one kB more overflows and is rejected");
	ok(st.vm_swap < 0, "huge status: a 23-digit figure is rejected");
	ok(st.vm_hwm < 0, "huge status: 2^64-1 is rejected");
	is_i64(st.ppid, INT64_MAX, "huge status: a bare INT64_MAX fits");

	sm = smaps_of("handmade/smaps-overflow");
	ok(sm.private_dirty < 0, "smaps: a sum that overflows is rejected, not wrapped");
	is_i64(sm.pss, KB(3), "smaps: other sums unaffected");

	sm = smaps_of("handmade/smaps_rollup-4.14");
	ok(sm.pss_anon == PROCFS_MISSING && sm.pss_shmem == PROCFS_MISSING,
	   "smaps_rollup before 5.3: no Pss_Anon/Pss_Shmem");
	is_i64(sm.pss, KB(24149), "smaps_rollup before 5.3: Pss still read");

	st = status_of("handmade/garbage");
	is_i64(st.vm_rss, KB(12), "garbage: survives, and a valid line after it is read");
}

static void
test_stat(void)
{
	procfs_stat st;
	size_t		len;
	char	   *buf;

	buf = slurp("linux-6.18-backend/stat", &len);
	ok(procfs_parse_stat(buf, len, &st) == 0, "stat: parsed");
	ok(st.state == 'T', "stat: state");
	is_i64(st.ppid, 4304, "stat: ppid");
	is_i64((int64_t) st.starttime, 34840, "stat: starttime (field 22)");
	is_i64(st.threads, 1, "stat: threads (field 20) of a backend");
	free(buf);

	buf = slurp("handmade/stat-odd-comm", &len);
	ok(procfs_parse_stat(buf, len, &st) == 0 && st.state == 'S' && st.ppid == 4304 &&
	   st.starttime == 34840, "stat: comm with blanks and parentheses");
	free(buf);

	buf = slurp("handmade/stat-truncated", &len);
	ok(procfs_parse_stat(buf, len, &st) != 0, "stat: truncated before starttime fails");
	free(buf);
	ok(procfs_parse_stat("", 0, &st) != 0, "stat: empty fails");
	ok(procfs_parse_stat("1 (x) S", 7, &st) != 0, "stat: no ppid fails");
}

/* Parses a literal stat line. */
static int
parse_stat_text(const char *text, procfs_stat *st)
{
	return procfs_parse_stat(text, strlen(text), st);
}

/*
 * stat's threads (field 20), and /proc/<pid>/schedstat. The fixture
 * linux-6.18-threads was read from a python3 sleeping with three threads
 * beside its main one (its status says Threads: 4).
 */
/* /proc/<pid>/statm: resident and file or shared pages, against this process's status */
static void
test_statm(void)
{
	procfs_statm m = {-1, -1};
	int64_t		page = sysconf(_SC_PAGESIZE);
	procfs_status st;
	procfs_fieldset fs = keys_fieldset(&keys_status, &st);

	ok(procfs_parse_statm("100 25 3 1 0 40 0\n", 19, &m) == 0 && m.resident == 25 * page &&
	   m.shared == 3 * page, "statm: the second and third fields, in pages");
	ok(procfs_parse_statm("100 25\n", 7, &m) != 0, "statm: two fields fail");
	ok(procfs_parse_statm("100 x 3\n", 8, &m) != 0, "statm: a word fails");
	ok(procfs_parse_statm("100 2 3\n", 8, &m) != 0, "statm: more shared than resident fails");
	ok(procfs_parse_statm("1 9223372036854775807 0\n", 24, &m) != 0,
	   "statm: pages past INT64_MAX bytes fail");
	procfs_fields_init(&fs);
	/* twice: the first status read may fault in pages the second sees */
	(void) procfs_read_lines(getpid(), "status", procfs_fields_line, &fs);
	ok(procfs_read_statm(getpid(), &m) == PROCFS_OK &&
	   procfs_read_lines(getpid(), "status", procfs_fields_line, &fs) == PROCFS_OK &&
	   m.resident > 0 && llabs(m.resident - st.vm_rss) <= 64 * 1024 &&
	   llabs((m.resident - m.shared) - st.rss_anon) <= 64 * 1024,
	   "statm: this process's resident set is its VmRSS, less the shared its RssAnon (%lld, %lld)",
	   (long long) m.resident, (long long) st.vm_rss);
}

static void
test_threads_and_schedstat(void)
{
	procfs_stat st;
	procfs_schedstat ss;
	size_t		len;
	char	   *buf;
	/* fields 3..22, field 20 (threads) = 7 and 22 (starttime) = 99 */
	const char *head22 = "1 (x) S 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 7 0 99";

	buf = slurp("linux-6.18-threads/stat", &len);
	ok(procfs_parse_stat(buf, len, &st) == 0 && st.state == 'S', "threads: stat parsed");
	is_i64(st.threads, 4, "threads: field 20 of a multi-threaded process");
	is_i64((int64_t) st.faults, 2905 + 0, "faults: minflt (field 10) + majflt (field 12)");
	ok(st.reaped.cminflt == 6512 && st.reaped.cutime == 4 && st.reaped.cstime == 0,
	   "reaped: cminflt, cutime, cstime (fields 11, 16, 17) of a python3 that reaped children");
	is_i64(st.ppid, 19354, "threads: ppid");
	is_i64((int64_t) st.starttime, 3492926, "threads: starttime");
	is_i64((int64_t) st.start_brk, INT64_C(93856156295168), "threads: start_brk (field 47)");
	free(buf);

	ok(parse_stat_text(head22, &st) == 0, "threads: 22 fields are enough");
	is_i64(st.threads, 7, "threads: field 20 of a minimal line");
	is_i64((int64_t) st.faults, 8 + 10, "faults: fields 10 and 12 of a minimal line");
	is_i64((int64_t) st.starttime, 99, "threads: starttime of a minimal line");
	ok(st.reaped.cminflt == 9 && st.reaped.cutime == 14 && st.reaped.cstime == 15,
	   "reaped: fields 11, 16 and 17 of a minimal line, not their neighbours");
	ok(parse_stat_text("1 (x) S 2 3 4 5 6 7 8 9 10 11 12 13 x 15 16 17 7 0 99", &st) != 0,
	   "reaped: a word in field 16 fails");
	ok(parse_stat_text("1 (x) S 2 3 4 5 6 7 8 -9 10 11 12 13 14 15 16 17 7 0 99", &st) != 0,
	   "reaped: a negative field 11 fails");
	ok(parse_stat_text("1 (x) S 2 3 4 5 6 7 8 9 10 11 12 13 14 99999999999999999999 16 17 7 0 99",
					   &st) != 0, "reaped: field 17 past INT64_MAX fails");
	ok(parse_stat_text("1 (x) S 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 7 0 99", &st) == 0 &&
	   parse_stat_text("1 (x) S 2 3 4 5 6 7 8 0 10 0 12 13 0 0 16 17 7 0 99", &st) == 0 &&
	   st.reaped.cminflt == 0 && st.reaped.cutime == 0 && st.reaped.cstime == 0,
	   "reaped: zeros, after a line of other figures");
	ok(parse_stat_text("1 (x) S 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 7 0", &st) != 0,
	   "threads: 21 fields fail");
	ok(parse_stat_text("1 (x) S 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 many 0 99", &st) != 0,
	   "threads: a word in field 20 fails");
	ok(parse_stat_text("1 (x) S 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 -4 0 99", &st) != 0,
	   "threads: a negative field 20 fails");
	ok(parse_stat_text("1 (x) S 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 9223372036854775808 0 99",
					   &st) != 0, "threads: field 20 past INT64_MAX fails");
	ok(parse_stat_text("1 (x) S 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 9223372036854775807 0 99",
					   &st) == 0 && st.threads == INT64_MAX, "threads: field 20 at INT64_MAX");
	/* a field we skip may be anything, even a huge number */
	ok(parse_stat_text("1 (x) S 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 99999999999999999999999 3 0 99",
					   &st) == 0 && st.threads == 3, "threads: a skipped field may be huge");
	ok(parse_stat_text("1 (a) b) R 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 5 0 99\n", &st) == 0 &&
	   st.state == 'R' && st.threads == 5, "threads: counted after the last ')'");

	buf = slurp("linux-6.18-threads/schedstat", &len);
	ok(procfs_parse_schedstat(buf, len, &ss) == 0, "schedstat: parsed");
	is_i64((int64_t) ss.runtime_ns, 49464430, "schedstat: time on a CPU (ns, field 1)");
	is_i64((int64_t) ss.timeslices, 36, "schedstat: timeslices (field 3, not the wait of field 2)");
	free(buf);

	ok(procfs_parse_schedstat("5 6 7\n", 6, &ss) == 0 && ss.runtime_ns == 5 && ss.timeslices == 7,
	   "schedstat: a short line");
	ok(procfs_parse_schedstat("0 0 0\n", 6, &ss) == 0 && ss.runtime_ns == 0 && ss.timeslices == 0,
	   "schedstat: zeros (no sched_info)");
	ok(procfs_parse_schedstat("9223372036854775807 1 9223372036854775807", 41, &ss) == 0 &&
	   ss.runtime_ns == (uint64_t) INT64_MAX && ss.timeslices == (uint64_t) INT64_MAX,
	   "schedstat: INT64_MAX");
	ok(procfs_parse_schedstat("9223372036854775808 1 2", 23, &ss) != 0,
	   "schedstat: past INT64_MAX fails");
	ok(procfs_parse_schedstat("5 6", 3, &ss) != 0, "schedstat: two fields fail");
	ok(procfs_parse_schedstat("5 6 ", 4, &ss) != 0, "schedstat: two fields and a blank fail");
	ok(procfs_parse_schedstat("", 0, &ss) != 0, "schedstat: empty fails");
	ok(procfs_parse_schedstat("5 x 7", 5, &ss) != 0, "schedstat: a word fails");
	ok(procfs_parse_schedstat("-5 6 7", 6, &ss) != 0, "schedstat: a negative number fails");
	/* the length bounds the parse: "5 6 7" cut after "5 6" */
	ok(procfs_parse_schedstat("5 6 7", 3, &ss) != 0, "schedstat: the length bounds it");
	ss.runtime_ns = ss.timeslices = 42;
	ok(procfs_parse_schedstat("5 6", 3, &ss) != 0 && ss.runtime_ns == 42 && ss.timeslices == 42,
	   "schedstat: a failed parse leaves its target");

	ok(procfs_read_schedstat(0, &ss) == PROCFS_OK && ss.runtime_ns > 0 && ss.timeslices > 0,
	   "schedstat: this process's");
	ok(procfs_read_stat(0, &st) == PROCFS_OK && st.threads == 1, "threads: this process has one");
	ok(procfs_read_schedstat(0x7ffffff0, &ss) == PROCFS_GONE, "schedstat: no such process is gone");
}

static void
test_numbers_and_titles(void)
{
	int64_t		v = 0;
	char		out[64];
	size_t		len;
	char	   *buf;

	ok(procfs_parse_int("666\n", 4, &v) == 0 && v == 666, "int: oom_score");
	ok(procfs_parse_int("-1000\n", 6, &v) == 0 && v == -1000, "int: negative oom_score_adj");
	ok(procfs_parse_int("", 0, &v) != 0, "int: empty fails");
	ok(procfs_parse_int("-", 1, &v) != 0, "int: a lone sign fails");
	ok(procfs_parse_int("12a", 3, &v) != 0, "int: trailing garbage fails");
	ok(procfs_parse_int("99999999999999999999", 20, &v) != 0, "int: overflow fails");

	buf = slurp("linux-6.18-logger/cmdline", &len);
	titles_to_type(buf, len, "fixture", 0, out, sizeof(out));
	ok(strcmp(out, "logger") == 0, "title: cluster_name prefix and NUL padding removed (%s)", out);
	titles_to_type(buf, len, "", 0, out, sizeof(out));
	ok(strcmp(out, TITLES_UNKNOWN_CHILD) == 0,
	   "title: an unknown cluster_name prefix is not taken for a type (%s)", out);
	titles_to_type(buf, len, "fixture", 0, out, 4);
	ok(strcmp(out, "log") == 0, "title: cut to the output size");
	free(buf);
	titles_to_type("/usr/lib/postgresql/15/bin/postgres\0-D\0/x", 41, NULL, 0, out, sizeof(out));
	ok(strcmp(out, TITLES_UNKNOWN_CHILD) == 0,
	   "title: a child still carrying the postmaster's command line (%s)", out);
}

/* a title as the kernel shows it: NUL-padded, no cluster_name */
static void
title_flags_is(const char *title, unsigned flags, const char *type)
{
	char		cmdline[128] = {0};
	char		out[64];

	snprintf(cmdline, sizeof(cmdline), "postgres: %s", title);
	titles_to_type(cmdline, sizeof(cmdline), NULL, flags, out, sizeof(out));
	ok(strcmp(out, type) == 0, "title \"%s\"%s is %s (%s)", title,
	   flags ? " (one name before 17)" : "", type, out);
}

static void
title_is(const char *title, const char *type)
{
	title_flags_is(title, 0, type);
}

static void
test_title_types(void)
{
	/* captured from PostgreSQL 15 with cluster_name = fixture */
	static const char *const captured[][2] = {
		{"client-local", "client backend"},
		{"client-tcp", "client backend"},
		{"parallel-worker", "parallel worker"},
		{"walsender", "walsender"},
		{"logical-replication-launcher", "logical replication launcher"},
	};

	for (size_t i = 0; i < sizeof(captured) / sizeof(captured[0]); i++)
	{
		char		path[64];
		char		out[64];
		size_t		len;
		char	   *buf;

		snprintf(path, sizeof(path), "titles/%s", captured[i][0]);
		buf = slurp(path, &len);
		titles_to_type(buf, len, "fixture", 0, out, sizeof(out));
		ok(strcmp(out, captured[i][1]) == 0, "title %s: %s (%s)", captured[i][0], captured[i][1], out);
		free(buf);
	}
	/* a connection: names may hold spaces; hosts are names or addresses */
	title_is("alice my db 10.0.0.1(5432) idle", "client backend");
	title_is("alice postgres db.example.com(40112) idle in transaction", "client backend");
	title_is("alice postgres [local]", "client backend");
	title_is("walsender repl 10.0.0.2(40000) streaming 0/3000148", "walsender");
	title_is("startup recovering 000000010000000000000003", "startup");
	title_is("autovacuum worker", "autovacuum worker");
	title_is("logical replication apply worker for subscription 16390", "logical replication apply worker");
	title_is("io worker 2", "io worker");
	/* 19's titles */
	title_is("syslogger", "logger");
	title_is("logical replication sequencesync worker for subscription 16640", "logical replication sequencesync worker");
	title_is("REPACK decoding worker for relation \"r\"", "REPACK decoding worker");
	/* as pg_stat_activity names it (bgw_type), not as the title does */
	title_is("logical replication parallel apply worker for subscription 16640  waiting",
			 "logical replication parallel worker");
	title_is("pg_procmem sampler", "pg_procmem sampler");
	/* before 17, pg_stat_activity has one name for the workers of a subscription */
	title_flags_is("logical replication apply worker for subscription 16390", TITLES_ONE_LR_WORKER,
				   "logical replication worker");
	title_flags_is("logical replication tablesync worker for subscription 16390 sync 16384",
				   TITLES_ONE_LR_WORKER, "logical replication worker");
	title_flags_is("logical replication parallel apply worker for subscription 16390",
				   TITLES_ONE_LR_WORKER, "logical replication parallel worker");
	title_flags_is("logical replication launcher", TITLES_ONE_LR_WORKER, "logical replication launcher");
	title_flags_is("logical replication worker for subscription 16390 sync 16384", TITLES_ONE_LR_WORKER,
				   "logical replication worker");
	title_is("sysloggers", TITLES_UNKNOWN_CHILD);
	/* a connection whose user is named like a type is still a connection */
	title_is("checkpointer postgres [local] idle", "client backend");
	/* anything else is one fixed word, never the title's own text */
	title_is("pg_cron launcher", TITLES_UNKNOWN_CHILD);
	title_is("checkpointer2", TITLES_UNKNOWN_CHILD);
	title_is("a b host(54x32) idle", TITLES_UNKNOWN_CHILD);
	title_is("a b (5432) idle", TITLES_UNKNOWN_CHILD);
	/*
	 * Titles cut short: a postmaster started with a short command line and
	 * an empty environment has only that much room for its children's
	 * titles, so a connection's address word (and more) is lost.
	 */
	title_is("app_user_with_a_long_name", TITLES_UNKNOWN_CHILD);
	title_is("app_user_with_a_long_name sales", TITLES_UNKNOWN_CHILD);
	title_is("app_user_with_a_long_name sales [loc", TITLES_UNKNOWN_CHILD);
	title_is("app_user_with_a_long_name sales 10.0.0.7(5", TITLES_UNKNOWN_CHILD);
	title_is("a_cluster_name_long_enough_to_cut: app_user sal", TITLES_UNKNOWN_CHILD);
	{
		/* longer than the 256 bytes read: the address lies beyond */
		char		cmdline[600];
		char		out[64];
		int			n = snprintf(cmdline, sizeof(cmdline), "postgres: %0300d sales [local] idle", 7);

		titles_to_type(cmdline, (size_t) n, NULL, 0, out, sizeof(out));
		ok(strcmp(out, TITLES_UNKNOWN_CHILD) == 0, "title: past the bytes read (%s)", out);
		/*
		 * ... and a user named as a type: log_hostname and a long host
		 * name push the address past the bytes read (pg_procmem reads 255)
		 */
		for (int user = 0; user < 4; user++)
		{
			static const char *const users[] = {"logger", "syslogger", "checkpointer", "startup"};

			n = snprintf(cmdline, sizeof(cmdline), "postgres: %s sales %0250d.example.com(5432) idle", users[user], 7);
			titles_to_type(cmdline, 255, NULL, 0, out, sizeof(out));
			ok(strcmp(out, TITLES_UNKNOWN_CHILD) == 0, "title cut short, user %s: no type (%s)", users[user], out);
		}
		/* a short title in a long ps area is not cut: NULs follow it */
		memset(cmdline, 0, sizeof(cmdline));
		strcpy(cmdline, "postgres: logger");
		titles_to_type(cmdline, 255, NULL, 0, out, sizeof(out));
		ok(strcmp(out, "logger") == 0, "title: NUL padding to the bytes read is no cut (%s)", out);
	}
	/* user text in a worker's title that looks like a client's address */
	title_is("REPACK decoding worker for relation \"a b(1) c\"", "REPACK decoding worker");
	title_is("REPACK decoding worker for relation \"[local]\"", "REPACK decoding worker");
}

static void
count_line(void *arg, const char *line, size_t len)
{
	(void) line;
	(void) len;
	(*(int *) arg)++;
}

static void
test_lines(void)
{
	char		buf[2000];
	procfs_status st;
	procfs_fieldset fs;
	int			n = 0;
	procfs_lines lb;

	memset(buf, 'x', sizeof(buf));
	memcpy(buf, "VmPTE:\t1 kB", 11);
	memcpy(buf + 1985, "\nVmRSS:\t5 kB\n", 13);
	fs = keys_fieldset(&keys_status, &st);
	procfs_fields_init(&fs);
	feed(buf, 1998, 100, procfs_fields_line, &fs);
	ok(st.vm_pte == PROCFS_MISSING, "lines: an over-long line is dropped whole");
	is_i64(st.vm_rss, KB(5), "lines: the line after it is read");

	procfs_lines_init(&lb, count_line, &n);
	procfs_lines_feed(&lb, "a\nb\n\nc", 6);
	procfs_lines_finish(&lb);
	is_i64(n, 4, "lines: empty lines count, a last line without newline counts");

	{
		const char *text = "ab\n\nc";
		const char *p = text;
		const char *line;
		size_t		len;
		char		seen[32] = "";

		while ((line = procfs_next_line(&p, text + 5, &len)) != NULL)
			snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), "[%.*s]", (int) len, line);
		ok(strcmp(seen, "[ab][][c]") == 0, "next_line: every line of a buffer, the last without newline (%s)",
		   seen);
		p = text;
		ok(procfs_next_line(&p, text, &len) == NULL, "next_line: an empty buffer has no line");
	}
}

/* The method choice, on figures as a failed read leaves them. */
static void
test_overhead_methods(void)
{
	procmem_reading s;
	procmem_method m;

	memset(&s, 0, sizeof(s));
	s.status.vm_pte = KB(100);
	s.status.rss_anon = KB(3000);
	s.anon.exclusive = KB(1000);
	s.kernel = KB(110);
	is_i64(procmem_overhead(&s, PROCMEM_METHOD_AUTO, &m), KB(1210), "method auto: pagemap when read");
	ok(m == PROCMEM_METHOD_PAGEMAP_KERNEL && strcmp(procmem_method_name(m), "pagemap+kernel") == 0,
	   "method auto: says pagemap+kernel");
	s.kernel = PROCFS_MISSING;	/* its open files could not be read */
	is_i64(procmem_overhead(&s, PROCMEM_METHOD_AUTO, &m), KB(1100),
		   "method auto: pagemap without the kernel's share when that is unknown");
	ok(m == PROCMEM_METHOD_PAGEMAP, "method auto: and says pagemap");
	is_i64(procmem_overhead(&s, PROCMEM_METHOD_RSS_ANON, &m), KB(3100), "method rss_anon: RssAnon + VmPTE");
	ok(m == PROCMEM_METHOD_RSS_ANON, "method rss_anon: says rss_anon");

	s.anon.exclusive = PROCFS_MISSING;	/* pagemap could not be read */
	is_i64(procmem_overhead(&s, PROCMEM_METHOD_AUTO, &m), KB(3100), "method auto: falls back to rss_anon");
	ok(m == PROCMEM_METHOD_RSS_ANON, "method auto: and says so");
	ok(procmem_overhead(&s, PROCMEM_METHOD_PAGEMAP, &m) < 0 && m == PROCMEM_METHOD_AUTO,
	   "method pagemap forced: no figure, no method");
	ok(procmem_method_name(m) == NULL, "no method has no name");

	s.status.vm_pte = PROCFS_MISSING;	/* status could not be read */
	ok(procmem_overhead(&s, PROCMEM_METHOD_AUTO, &m) < 0 && m == PROCMEM_METHOD_AUTO,
	   "no page tables: no overhead by any method");
	s.status.vm_pte = INT64_MAX;
	s.anon.exclusive = KB(1);
	ok(procmem_overhead(&s, PROCMEM_METHOD_AUTO, &m) < 0, "a sum that overflows is no figure");
}

/* Live: this process and children it forks (real /proc, no mock). */
static void
test_live(void)
{
	procmem_options opt = {.want_pss = true, .method = PROCMEM_METHOD_AUTO};
	procmem_options cheap = {.want_pss = false, .method = PROCMEM_METHOD_RSS_ANON};
	procmem_reading s;
	pid_t		kids[3];
	pid_t		found[64];
	pid_t		dead;
	siginfo_t	info;
	int			n, hits;
	char		buf[64];
	size_t		len;

	ok(procmem_read_process(getpid(), getppid(), NULL, &opt, &s) == READ_OK, "live: own sample");
	ok(s.status.vm_rss > 0 && s.smaps.pss > 0 && s.smaps.pss <= s.status.vm_rss,
	   "live: 0 < pss <= rss");
	ok(s.overhead_method == PROCMEM_METHOD_PAGEMAP_KERNEL && s.overhead > 0 &&
	   s.overhead == s.anon.exclusive + s.status.vm_pte + s.kernel,
	   "live: overhead = exclusive anonymous + page tables + kernel, by pagemap+kernel");
	ok(s.kernel >= KB(16) + KB(4) && s.kernel < KB(1024),
	   "live: the kernel's share is a stack and a PGD at least, below 1 MB (%lld kB)",
	   (long long) s.kernel / 1024);
	ok(s.kcounts.threads == 1 && s.kcounts.mappings > 10 &&
	   s.kcounts.anon_mappings > 0 && s.kcounts.anon_mappings < s.kcounts.mappings &&
	   s.kcounts.files >= 3 && s.kcounts.ancestors == 0,
	   "live: counted from one thread, its mappings and its open files");
	ok(s.kernel == kernel_memory(kernel_sizes_get(), &s.kcounts),
	   "live: kernel is the model of those counts");
	{
		/* the counts against an independent read of the same files */
		int64_t		lines = 0, fds = 0;
		int			c;
		FILE	   *f = fopen("/proc/self/maps", "r");
		DIR		   *d = opendir("/proc/self/fd");
		struct dirent *e;

		while (f && (c = fgetc(f)) != EOF)
			lines += c == '\n';
		if (f)
			fclose(f);
		while (d && (e = readdir(d)) != NULL)
			fds += e->d_name[0] != '.';
		if (d)
			closedir(d);
		/*
		 * the independent reads open a file each, and stdio maps a buffer
		 * (under ASan its allocator maps more): within 16 mappings
		 */
		ok(s.kcounts.mappings >= lines - 16 && s.kcounts.mappings <= lines + 16,
		   "live: mappings = the lines of /proc/self/maps (%lld, %lld)",
		   (long long) s.kcounts.mappings, (long long) lines);
		ok(s.kcounts.files >= fds - 2 && s.kcounts.files <= fds,
		   "live: files = the entries of /proc/self/fd (%lld, %lld)",
		   (long long) s.kcounts.files, (long long) fds);
	}
	ok(s.overhead < KB(256 * 1024), "live: overhead below 256 MB");
	ok(s.anon.exclusive + s.anon.shared <= s.status.rss_anon + KB(256),
	   "live: exclusive + shared anonymous <= RssAnon");
	is_i64(s.unreadable, 0, "live: every file read");
	ok(procmem_read_process(getpid(), getppid(), NULL, &cheap, &s) == READ_OK &&
	   s.overhead_method == PROCMEM_METHOD_RSS_ANON && s.overhead == s.status.rss_anon + s.status.vm_pte &&
	   s.smaps.pss == PROCFS_MISSING && s.anon.exclusive == PROCFS_MISSING,
	   "live: rss_anon method, no PSS: neither pagemap nor smaps_rollup read");
	{
		procfs_stat id;

		/* the caller's identity read stands in for the reading's first */
		ok(procfs_read_stat(0, &id) == PROCFS_OK &&
		   procmem_read_process(getpid(), getppid(), &id, &opt, &s) == READ_OK &&
		   s.stat.starttime == id.starttime, "live: sampled against a given identity");
		id.starttime++;
		ok(procmem_read_process(getpid(), getppid(), &id, &opt, &s) == READ_GONE,
		   "live: a given identity that no longer matches: gone (pid reused)");
	}
	ok(procmem_read_process(getpid(), getppid() + 1, NULL, &opt, &s) == READ_NOT_CHILD,
	   "live: another parent expected: not a child");

	for (int i = 0; i < 3; i++)
		if ((kids[i] = fork()) == 0)
		{
			pause();
			_exit(0);
		}
	n = procfs_children(getpid(), found, 64);
	hits = 0;
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 3; k++)
			hits += found[i] == kids[k];
	is_i64(hits, 3, "children: the children file lists the 3 children");
	n = procfs_children_scan(getpid(), found, 64);
	hits = 0;
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 3; k++)
			hits += found[i] == kids[k];
	is_i64(hits, 3, "children: the /proc scan finds them too");
	ok(procmem_read_process(kids[0], getpid(), NULL, &opt, &s) == READ_OK, "live: a child is sampled");
	{
		int			has = -1;
		int			files = procfs_has_child(kids[0], &has) == PROCFS_OK;

		/* where the kernel has the children files, else none answers */
		ok(files ? has == 0 : has == 0 && procfs_has_child(getpid(), &has) != PROCFS_OK,
		   "has child: a child has none%s", files ? "" : " (no children files on this kernel)");
		ok(procfs_has_child(getpid(), &has) != PROCFS_OK || has == 1, "has child: 3 children");
		ok(procfs_has_child(0, &has) != PROCFS_OK || has == 1, "has child: pid 0 is this process");
	}

	kill(kids[0], SIGKILL);
	/* wait until it is a zombie, without reaping it */
	waitid(P_PID, kids[0], &info, WEXITED | WNOWAIT);
	ok(procmem_read_process(kids[0], getpid(), NULL, &opt, &s) == READ_GONE,
	   "live: a zombie child is gone");
	waitpid(kids[0], NULL, 0);
	dead = kids[0];
	ok(procmem_read_process(dead, getpid(), NULL, &opt, &s) == READ_GONE,
	   "live: a reaped child is gone");
	ok(procfs_read_file(dead, "status", buf, sizeof(buf), &len) == PROCFS_GONE,
	   "read: a reaped pid's file is gone");
	ok(procfs_read_file(0, "no-such-file", buf, sizeof(buf), &len) == PROCFS_GONE,
	   "read: a missing file reports gone");
	ok(procfs_read_file(0, "stat", buf, 8, &len) == PROCFS_OK && len == 7 && buf[7] == '\0',
	   "read: a small buffer is filled and terminated, never overrun");
	{
		int			has = -1;

		ok(procfs_has_child(getpid(), &has) != PROCFS_OK || has == 1,
		   "has child: 2 children left, one reaped");
		for (int i = 1; i < 3; i++)
			kill(kids[i], SIGKILL);
		for (int i = 1; i < 3; i++)
			waitid(P_PID, kids[i], &info, WEXITED | WNOWAIT);
		ok(procfs_has_child(getpid(), &has) != PROCFS_OK || has == 1,
		   "has child: 2 exited children not yet reaped still count");
		for (int i = 1; i < 3; i++)
			waitpid(kids[i], NULL, 0);
		ok(procfs_has_child(getpid(), &has) != PROCFS_OK || has == 0, "has child: all reaped, none");
		ok(procfs_has_child(dead, &has) != PROCFS_OK, "has child: a reaped pid has no file");
	}
}

int
main(int argc, char **argv)
{
	fixtures = argc > 1 ? argv[1] : "test/fixtures";
	test_captured_status();
	test_kill_pending();
	test_captured_smaps();
	test_chunking();
	test_handmade();
	test_stat();
	test_threads_and_schedstat();
	test_numbers_and_titles();
	test_title_types();
	test_lines();
	test_overhead_methods();
	test_live();
	test_statm();
	return tap_done();
}
