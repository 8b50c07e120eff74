/*
 * test_guard.c
 *		Unit tests of the memory guard's decisions (guard_rules.h): what a
 *		backend holds, which source is over the threshold, whom to act on
 *		first, and sizes as the messages say them (TAP; run by `make unit`).
 *
 * Fixtures: linux-6.18-idle-backend holds the statm and status of one idle
 * backend, read one after the other: what the guard counts from statm is
 * its status's RssAnon.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rules/guard_rules.h"
#include "procfile.h"
#include "tap.h"

/* RssAnon from a status text, in bytes */
static long long
rss_anon(const char *status)
{
	const char *p = strstr(status, "RssAnon:");

	return p ? atoll(p + 8) * 1024 : -1;
}

static void
test_held(void)
{
	size_t		len, slen;
	char	   *statm = slurp("linux-6.18-idle-backend/statm", &len);
	char	   *status = slurp("linux-6.18-idle-backend/status", &slen);

	is_i64(guard_held_from_statm(statm, len, 4096), rss_anon(status),
		   "held: statm's resident minus shared pages is the same read's RssAnon");
	is_i64(guard_held_from_statm(statm, len, 4096), (4356 - 3683) * 4096LL,
		   "held: (4356 - 3683) pages of 4 kB");
	is_i64(guard_held_from_statm("10 7 2 1 0 1 0\n", 15, 65536), 5 * 65536LL,
		   "held: in the page size given (64 kB pages)");
	is_i64(guard_held_from_statm("10 2 7 1 0 1 0\n", 15, 4096), -1,
		   "held: more shared than resident pages is not a statm line");
	is_i64(guard_held_from_statm("10 7", 4, 4096), -1, "held: two numbers are not enough");
	is_i64(guard_held_from_statm("", 0, 4096), -1, "held: an empty read is nothing");
	is_i64(guard_held_from_statm("x 7 2", 5, 4096), -1, "held: a word is not a number");
	is_i64(guard_held_from_statm("10 7 2", 6, 0), -1, "held: no page size, no figure");
	is_i64(guard_held_from_statm("1 99999999999999999999 2", 24, 4096), -1,
		   "held: a number past int64 is refused, not wrapped");
	is_i64(guard_held_from_statm("1 4611686018427387904 0", 23, 4096), -1,
		   "held: pages whose bytes pass int64 are refused");
	/* the read may stop anywhere: only len bytes are looked at */
	is_i64(guard_held_from_statm("10 7 29", 5, 4096), -1, "held: only len bytes are read");
	free(statm);
	free(status);

	/* the worker's read: the same figure, from the file */
	ok(guard_held_now(getpid()) > 0, "held now: this process holds memory of its own");
	is_i64(guard_held_now(INT32_MAX), -1, "held now: a process that is not there is -1");
}

static void
test_over(void)
{
	pressure_reading r;
	int64_t		used = 0, limit = 0;

	memset(&r, 0, sizeof(r));
	r.nsources = 3;
	r.used[0] = 20LL << 30;		/* the machine: 20 of 24 GB */
	r.limit[0] = 24LL << 30;
	r.used[1] = 1400LL << 20;	/* the server's cgroup: 1.4 of 1.5 GB */
	r.limit[1] = 1536LL << 20;
	r.used[2] = 3LL << 30;		/* its parent: 3 of 8 GB */
	r.limit[2] = 8LL << 30;
	is_i64(guard_over(&r, 90, 0, &used, &limit), 1, "over: the cgroup at 91%% passes 90%%");
	is_i64(used, 1400LL << 20, "over: its use");
	is_i64(limit, 1536LL << 20, "over: its limit");
	is_i64(guard_over(&r, 92, 0, &used, &limit), -1, "over: nothing passes 92%%");
	is_i64(guard_over(&r, 80, 0, &used, &limit), 1,
		   "over: of two sources over 80%%, the one with the larger share");
	r.used[0] = 23LL << 30;		/* the machine at 96%: other programs' */
	r.used[1] = 700LL << 20;	/* the server's cgroup at 46% */
	is_i64(guard_over(&r, 90, 0, &used, &limit), -1,
		   "over: the machine's total does not count where a cgroup limits the server");
	r.limit[1] = r.limit[2] = -1;
	is_i64(guard_over(&r, 90, 0, &used, &limit), 0,
		   "over: ... it does where none does");
	r.used[0] = 20LL << 30;
	r.limit[1] = 1536LL << 20;
	r.used[1] = 1400LL << 20;
	r.limit[2] = 8LL << 30;
	is_i64(guard_over(&r, 90, 21LL << 30, &used, &limit), 0,
		   "over: pg_procmem.guard_limit (21 GB) puts the machine at 95%%");
	is_i64(limit, 21LL << 30, "over: ... and is the limit said");
	r.used[1] = -1;
	is_i64(guard_over(&r, 90, 0, &used, &limit), -1, "over: an unreadable source is not over");
	r.used[1] = 1536LL << 20;
	r.limit[1] = -1;
	is_i64(guard_over(&r, 90, 0, &used, &limit), -1, "over: a level without a limit is not over");
	r.nsources = 0;
	is_i64(guard_over(&r, 1, 0, &used, &limit), -1, "over: no source, nothing over");
}

static void
test_groups(void)
{
	guard_candidate c[] = {
		{100, 100, 50 << 20, 1},	/* a client backend */
		{200, 200, 30 << 20, 1},	/* a parallel leader ... */
		{201, 200, 30 << 20, 1},	/* ... and its two workers */
		{202, 200, -1, 1},		/* unreadable: counts as a member, holds nothing */
		{300, 300, 80 << 20, 0},	/* idle, the largest alone */
		{400, 999, 500 << 20, 1},	/* a worker whose leader is not a candidate */
		{500, 500, 80 << 20, 1},	/* as large as 300: the lower pid first */
	};
	guard_group g[7];
	int			n = guard_group_candidates(c, 7, g);

	is_i64(n, 4, "groups: four leaders, the orphan worker left out");
	is_i64(g[0].leader, 300, "groups: the largest first (a tie goes to the lower pid)");
	is_i64(g[1].leader, 500, "groups: then the other of 80 MB");
	is_i64(g[2].leader, 200, "groups: a leader with its workers counts as one, 60 MB");
	is_i64(g[2].held, 60 << 20, "groups: ... their sum, the unreadable one as nothing");
	is_i64(g[2].members, 3, "groups: ... three processes");
	is_i64(g[3].leader, 100, "groups: the smallest last");
	ok(g[0].active == 0 && g[2].active == 1, "groups: whether the leader runs a statement");
	is_i64(guard_group_candidates(c, 0, g), 0, "groups: none from nothing");
}

static void
test_format(void)
{
	char		b[32];
	struct
	{
		int64_t		bytes;
		const char *want;
	}			cases[] = {
		{0, "0 bytes"},
		{10239, "10239 bytes"},
		{10240, "10 kB"},
		{800 * 1024, "800 kB"},
		{512LL << 20, "512 MB"},
		{1536LL << 20, "1.5 GB"},
		{(int64_t) (2.9 * (1 << 30)), "2.9 GB"},
		{2LL << 30, "2.0 GB"},
		{INT64_MAX, "8192 PB"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		guard_format_bytes(b, sizeof(b), cases[i].bytes);
		ok(strcmp(b, cases[i].want) == 0, "format: %lld bytes say \"%s\" (got \"%s\")",
		   (long long) cases[i].bytes, cases[i].want, b);
	}
	guard_format_bytes(b, 4, 1536LL << 20);
	ok(strlen(b) == 3, "format: cut to the buffer");
}

int
main(int argc, char **argv)
{
	fixtures = argc > 1 ? argv[1] : "test/fixtures";
	test_held();
	test_over();
	test_groups();
	test_format();
	return tap_done();
}
