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

#include "rules/guard_policy.h"
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
	r.used[1] = 900LL << 20;
	r.limit[1] = 1000LL << 20;
	is_i64(guard_over(&r, 90, 0, &used, &limit), 1, "over: at the threshold exactly (900 of 1000 MB at 90%%) is over");
	r.used[1] = (900LL << 20) - 1;
	is_i64(guard_over(&r, 90, 0, &used, &limit), -1, "over: a byte under it is not");
	r.nsources = 0;
	is_i64(guard_over(&r, 1, 0, &used, &limit), -1, "over: no source, nothing over");
}

#define MB(x) ((int64_t) (x) << 20)

static void
test_kinds(void)
{
	ok(guard_may_act_on(GUARD_KIND_CLIENT) && guard_may_act_on(GUARD_KIND_PARALLEL),
	   "kinds: client backends and parallel workers are acted on");
	ok(!guard_may_act_on(GUARD_KIND_AUTOVACUUM), "kinds: never an autovacuum worker");
	ok(!guard_may_act_on(GUARD_KIND_WALSENDER), "kinds: never a WAL sender");
	ok(!guard_may_act_on(GUARD_KIND_BGWORKER), "kinds: never another background worker");
	ok(!guard_may_act_on(GUARD_KIND_OTHER), "kinds: never an auxiliary process");
}

static void
test_groups(void)
{
	guard_candidate c[] = {
		{100, 100, GUARD_KIND_CLIENT, GUARD_STATE_RUNNING, MB(50), 0, 0, 0},
		{200, 200, GUARD_KIND_CLIENT, GUARD_STATE_RUNNING, MB(30), 0, 0, MB(10)},	/* a parallel leader ... */
		{201, 200, GUARD_KIND_PARALLEL, GUARD_STATE_RUNNING, MB(30), 0, 0, MB(10)},	/* ... and its two workers */
		{202, 200, GUARD_KIND_PARALLEL, GUARD_STATE_RUNNING, -1, 0, 0, MB(10)},	/* unreadable */
		{300, 300, GUARD_KIND_CLIENT, GUARD_STATE_IDLE, MB(80), 0, 0, 0},	/* idle, the largest alone */
		{400, 999, GUARD_KIND_PARALLEL, GUARD_STATE_RUNNING, MB(500), 0, 0, 0},	/* a worker whose leader is not a candidate */
		{500, 500, GUARD_KIND_CLIENT, GUARD_STATE_RUNNING, MB(80), 0, 0, 0},	/* as large as 300: the lower pid first */
		{600, 600, GUARD_KIND_AUTOVACUUM, GUARD_STATE_RUNNING, MB(900), 0, 0, 0},	/* autovacuum: never */
		{700, 700, GUARD_KIND_BGWORKER, GUARD_STATE_RUNNING, MB(900), 0, 0, 0},	/* another worker: never */
	};
	guard_group g[9];
	int			n = guard_group_candidates(c, 9, g);

	is_i64(n, 4, "groups: four client backends lead; the orphan worker, autovacuum and the other worker left out");
	is_i64(g[0].leader, 300, "groups: the largest first (a tie goes to the lower pid)");
	is_i64(g[1].leader, 500, "groups: then the other of 80 MB");
	is_i64(g[2].leader, 200, "groups: a leader with its workers counts as one, 60 MB and 10 MB of its own DSM");
	is_i64(g[2].held, MB(60), "groups: ... their private memory summed, the unreadable one as nothing");
	is_i64(g[2].dsm, MB(10), "groups: ... their own DSM once");
	is_i64(g[2].members, 3, "groups: ... three processes");
	is_i64(g[3].leader, 100, "groups: the smallest last");
	ok(g[0].state == GUARD_STATE_IDLE && g[2].state == GUARD_STATE_RUNNING, "groups: the leader's state");
	ok(g[0].baseline == -1 && !g[0].canceled && !g[0].ended && !g[0].settling,
	   "groups: nothing known yet of their past");
	is_i64(guard_group_candidates(c, 0, g), 0, "groups: none from nothing");
	c[1].group_dsm = MB(900);
	n = guard_group_candidates(c, 9, g);
	is_i64(g[0].leader, 200, "groups: ranked by private memory and own DSM together");
}

/* One group, as guard_decide() gets them */
static guard_group
grp(int32_t leader, guard_state state, int64_t held, int64_t dsm, int64_t baseline, int64_t grew)
{
	guard_group g;

	memset(&g, 0, sizeof(g));
	g.leader = leader;
	g.members = 1;
	g.state = state;
	g.held = held;
	g.dsm = dsm;
	g.baseline = baseline;
	g.grew = grew;
	g.growth_known = grew >= 0;
	if (grew < 0)
		g.grew = 0;
	return g;
}

static void
test_parts(void)
{
	guard_group g = grp(1, GUARD_STATE_RUNNING, MB(1100), MB(40), MB(1000), 0);

	is_i64(guard_statement_part(&g), MB(140), "parts: a statement holds what its session holds beyond its baseline, and its DSM");
	is_i64(guard_session_part(&g), MB(1000), "parts: the session holds its baseline");
	g.baseline = -1;
	is_i64(guard_statement_part(&g), MB(1140), "parts: no baseline known: all it holds is the statement's");
	is_i64(guard_session_part(&g), 0, "parts: ... and the session's is not known");
	g = grp(1, GUARD_STATE_IDLE_IN_XACT, MB(966), 0, MB(966), 0);
	is_i64(guard_statement_part(&g), 0, "parts: idle in transaction: no statement to cancel");
	is_i64(guard_session_part(&g), MB(966), "parts: ... all it holds is the session's");
	g = grp(1, GUARD_STATE_RUNNING, MB(500), 0, MB(800), 0);
	is_i64(guard_statement_part(&g), 0, "parts: a session that gave back since it was idle: its statement holds nothing");
	is_i64(guard_session_part(&g), MB(500), "parts: ... and the session no more than it holds");
}

static void
test_memory(void)
{
	guard_memory m;
	guard_group g[1];

	memset(&m, 0, sizeof(m));
	g[0] = grp(42, GUARD_STATE_IDLE, MB(300), 0, -1, 0);
	g[0].backend_start = 7;
	is_i64(guard_memory_apply(&m, g, 1, 1000), 0, "memory: a look remembered");
	is_i64(g[0].baseline, MB(300), "memory: an idle backend's all is its baseline");
	g[0] = grp(42, GUARD_STATE_RUNNING, MB(320), 0, -1, 0);
	g[0].backend_start = 7;
	g[0].statement = 5;
	guard_memory_apply(&m, g, 1, 1050);
	ok(g[0].baseline == MB(300) && g[0].growth_known && g[0].grew == MB(20),
	   "memory: a new statement grew from the session's baseline, known at once (%lld)", (long long) g[0].grew);
	g[0].held = MB(320);
	guard_memory_apply(&m, g, 1, 1600);
	guard_memory_apply(&m, g, 1, 2200);
	guard_memory_apply(&m, g, 1, 2700);
	ok(g[0].growth_known && g[0].grew == 0, "memory: a statement that stopped growing, over the last second: grew 0");
	g[0].held = MB(400);
	guard_memory_apply(&m, g, 1, 3300);
	ok(g[0].grew == MB(80), "memory: ... growing again: 80 MB over the last second");
	/* a pid reused: another backend, new since the look 50 ms before */
	g[0] = grp(42, GUARD_STATE_RUNNING, MB(100), 0, -1, 0);
	g[0].backend_start = 8;
	g[0].statement = 9;
	guard_memory_apply(&m, g, 1, 3350);
	ok(g[0].baseline == -1 && g[0].growth_known && g[0].grew == MB(100),
	   "memory: a pid reused is another backend, new since the last look: it grew all it holds");
	/* ... the same, first seen at a look 1.5 s after the one before: it may have been there then */
	g[0].backend_start = 10;
	guard_memory_apply(&m, g, 1, 4850);
	ok(g[0].baseline == -1 && !g[0].growth_known, "memory: a backend first seen after a gap: nothing known of it");
	g[0].held = MB(150);
	guard_memory_apply(&m, g, 1, 4950);
	ok(!g[0].growth_known, "memory: not known after 100 ms");
	guard_memory_apply(&m, g, 1, 5060);
	ok(g[0].growth_known && g[0].grew == MB(50), "memory: its growth known after %d ms (%lld)", GUARD_GROWTH_MIN_MS,
	   (long long) g[0].grew);
	guard_memory_note_cancel(&m, 42, 10);
	guard_memory_set_baseline(&m, 42, 10, MB(90));
	guard_memory_apply(&m, g, 1, 5100);
	is_i64(g[0].baseline, MB(90), "memory: what a canceled statement's backend keeps is its session's");
	is_i64(g[0].cancels, 1, "memory: its cancels counted");
	g[0].held = MB(60);
	guard_memory_apply(&m, g, 1, 5105);
	is_i64(g[0].baseline, MB(60), "memory: a statement holding less than the baseline lowers it (it freed the session's)");
	g[0].held = MB(150);
	/* its DSM read at one look, not at the next */
	g[0].dsm = MB(30);
	guard_memory_apply(&m, g, 1, 5110);
	g[0].dsm = -1;
	guard_memory_apply(&m, g, 1, 5120);
	is_i64(g[0].dsm, MB(30), "memory: a group's DSM not read at a look is its last read's");
	g[0].dsm = 0;
	guard_memory_apply(&m, g, 1, 5130);
	/* a backend that was not there at the look 50 ms before */
	{
		guard_group two[2];

		two[0] = g[0];
		two[1] = grp(77, GUARD_STATE_RUNNING, MB(60), MB(200), -1, 0);
		two[1].backend_start = 3;
		two[1].statement = 4;
		guard_memory_apply(&m, two, 2, 5150);
		ok(two[1].growth_known && two[1].grew == MB(260),
		   "memory: a backend new since the look 50 ms before grew all it holds, its DSM too (%lld)",
		   (long long) two[1].grew);
		two[1].leader = 78;
		guard_memory_apply(&m, two, 2, 5150 + 2 * GUARD_GROWTH_WINDOW_MS);
		ok(!two[1].growth_known, "memory: ... not after a look over a second before: it may have been there");
	}
	g[0].held = MB(150);
	guard_memory_apply(&m, g, 1, 7150 + 10001);
	ok(g[0].baseline == -1 && !g[0].growth_known,
	   "memory: what was known of a backend not looked at for 10 s is stale: forgotten");
	guard_memory_apply(&m, g, 0, 7150 + 20002);
	is_i64(m.n, 0, "memory: a backend not seen for 10 s is forgotten");
	guard_memory_free(&m);
}

static guard_situation
at(int64_t used, int critical, int terminate)
{
	guard_situation s;

	memset(&s, 0, sizeof(s));
	s.used = used;
	s.limit = MB(1500);
	s.threshold_pct = 90;			/* 1350 MB */
	s.critical = critical;
	s.terminate = terminate;
	return s;
}

static void
test_decide(void)
{
	guard_situation s;
	guard_decision d;
	guard_group g[4];

	/* under, and at the threshold exactly */
	s = at(MB(1349), 0, 0);
	g[0] = grp(1, GUARD_STATE_RUNNING, MB(500), 0, 0, MB(50));
	guard_decide(&s, g, 1, &d);
	is_i64(d.verdict, GUARD_UNDER, "decide: under the threshold, nothing");
	s = at(MB(1350), 0, 0);
	guard_decide(&s, g, 1, &d);
	ok(d.verdict == GUARD_DO_CANCEL && d.group == 0, "decide: at the threshold exactly, it acts");
	is_i64(guard_critical_pct(90), 95, "decide: the critical level of 90%% is 95%%");
	is_i64(guard_critical_pct(50), 75, "decide: ... of 50%%, 75%%");

	/* an idle session holding 966 MB and a statement growing to 100 MB */
	g[0] = grp(10, GUARD_STATE_IDLE_IN_XACT, MB(966), 0, MB(966), 0);
	g[1] = grp(20, GUARD_STATE_RUNNING, MB(100), 0, MB(5), MB(30));
	s = at(MB(1400), 0, 0);
	guard_decide(&s, g, 2, &d);
	ok(d.verdict == GUARD_NOTHING_WORTH && d.worth == MB(966) / 8,
	   "decide: below the critical level, a statement under an eighth of the largest holder is spared");
	ok(d.largest_session == 0 && d.sessions == MB(966) && d.largest_running == 1,
	   "decide: ... the idle session named as holding the most between statements");
	s.critical = 1;
	guard_decide(&s, g, 2, &d);
	ok(d.verdict == GUARD_DO_CANCEL && d.group == 1,
	   "decide: at the critical level the growing statement is canceled whatever the idle session holds");
	s.terminate = 1;
	s.critical = 0;
	guard_decide(&s, g, 2, &d);
	ok(d.verdict == GUARD_DO_TERMINATE && d.group == 0,
	   "decide: with guard_terminate on, the idle session is ended (it gives back the most)");
	g[0].ended = 1;
	guard_decide(&s, g, 2, &d);
	ok(d.verdict == GUARD_NOTHING_WORTH && d.group == -1, "decide: a session is never ended twice");

	/* innocent: not growing, and its cancel would leave the use over */
	g[0] = grp(10, GUARD_STATE_IDLE, MB(966), 0, MB(966), 0);
	g[1] = grp(20, GUARD_STATE_RUNNING, MB(110), 0, MB(5), 0);
	s = at(MB(1480), 1, 0);
	guard_decide(&s, g, 2, &d);
	ok(d.verdict == GUARD_NOTHING_WORTH, "decide: at the critical level, a statement not growing whose cancel would "
	   "leave the use over the threshold is innocent");
	g[2] = grp(30, GUARD_STATE_RUNNING, MB(40), 0, MB(5), MB(20));
	guard_decide(&s, g, 3, &d);
	ok(d.verdict == GUARD_DO_CANCEL && d.group == 2, "decide: ... the smaller growing one is canceled instead");
	g[1].held = MB(400);
	s.used = MB(1480);
	guard_decide(&s, g, 2, &d);
	ok(d.verdict == GUARD_DO_CANCEL && d.group == 1,
	   "decide: a statement not growing whose cancel brings the use under is no innocent");
	g[1] = grp(20, GUARD_STATE_RUNNING, MB(110), 0, -1, -1);
	guard_decide(&s, g, 2, &d);
	ok(d.verdict == GUARD_NOTHING_WORTH && d.growth_unknown,
	   "decide: a statement whose growth is not known yet is not canceled unless its cancel suffices; look again");

	/* a session hog: a tiny statement in a session holding 1 GB, canceled once before */
	g[0] = grp(10, GUARD_STATE_RUNNING, MB(1010), 0, MB(1000), MB(2));
	s = at(MB(1400), 1, 0);
	guard_decide(&s, g, 1, &d);
	ok(d.verdict == GUARD_DO_CANCEL && d.group == 0,
	   "decide: at the critical level a growing statement of %d MB is worth a cancel, once",
	   (int) (GUARD_CRITICAL_FLOOR >> 20));
	g[0].cancels = 1;
	guard_decide(&s, g, 1, &d);
	ok(d.verdict == GUARD_NOTHING_WORTH && d.largest_session == 0,
	   "decide: a session holding memory between small statements: its statement is not canceled");
	s.terminate = 1;
	guard_decide(&s, g, 1, &d);
	ok(d.verdict == GUARD_DO_TERMINATE && d.group == 0, "decide: ... it is ended where allowed");
	/* never terminate a running statement a cancel would stop */
	g[0] = grp(10, GUARD_STATE_RUNNING, MB(1200), 0, MB(10), MB(50));
	g[0].canceled = 1;
	guard_decide(&s, g, 1, &d);
	ok(d.verdict == GUARD_NOTHING_WORTH, "decide: a statement canceled already is not ended instead");

	/* a statement that caught its cancel and grew on */
	g[0] = grp(10, GUARD_STATE_RUNNING, MB(1200), 0, MB(10), MB(50));
	g[0].canceled = 1;
	g[0].defied = 1;
	s = at(MB(1400), 0, 0);
	guard_decide(&s, g, 1, &d);
	ok(d.verdict == GUARD_DO_CANCEL && d.group == 0, "decide: a statement that defied its cancel is canceled again");
	s.critical = 1;
	guard_decide(&s, g, 1, &d);
	ok(d.verdict == GUARD_DO_TERMINATE && d.group == 0,
	   "decide: ... at the critical level its session is ended, guard_terminate off or not");
	g[0].ended = 1;
	guard_decide(&s, g, 1, &d);
	ok(d.verdict != GUARD_DO_TERMINATE, "decide: ... once");

	/* many small statements growing at the critical level (170 growing to 10 MB each) */
	for (int k = 0; k < 4; k++)
		g[k] = grp(100 + k, GUARD_STATE_RUNNING, MB(10) + k, 0, MB(3), MB(2));
	s = at(MB(1480), 1, 0);
	guard_decide(&s, g, 4, &d);
	ok(d.verdict == GUARD_DO_CANCEL && d.group == 3,
	   "decide: at the critical level, statements under 16 MB that grow are canceled, largest first");
	s.critical = 0;
	s.used = MB(1400);
	guard_decide(&s, g, 4, &d);
	is_i64(d.verdict, GUARD_NOTHING_WORTH, "decide: ... below it they are spared");

	/* what signalled backends give back */
	g[0] = grp(10, GUARD_STATE_RUNNING, MB(600), 0, MB(5), MB(50));
	g[1] = grp(20, GUARD_STATE_RUNNING, MB(300), 0, MB(5), 0);
	g[2] = grp(30, GUARD_STATE_RUNNING, MB(300), 0, MB(5), MB(100));
	g[0].settling = 1;
	s = at(MB(1400), 0, 0);
	s.pending = MB(590);
	guard_decide(&s, g, 3, &d);
	is_i64(d.verdict, GUARD_WAIT, "decide: while what a cancel gives back brings the use under, it waits");
	s.critical = 1;
	guard_decide(&s, g, 3, &d);
	ok(d.verdict == GUARD_DO_CANCEL && d.group == 2,
	   "decide: ... but at the critical level a statement still growing is canceled");
	s.pending = 0;
	s.critical = 0;
	guard_decide(&s, g, 3, &d);
	ok(d.verdict == GUARD_DO_CANCEL && d.group == 2,
	   "decide: a settling group is not picked again; of two others as large, the growing one");

	/* the parallel hash join: its hash table in DSM */
	g[0] = grp(10, GUARD_STATE_RUNNING, MB(150), 0, MB(5), 0);	/* a superuser's report */
	g[1] = grp(20, GUARD_STATE_RUNNING, MB(40), MB(300), MB(5), MB(60));
	g[1].members = 5;
	s = at(MB(560), 0, 0);
	s.limit = MB(1100);
	s.threshold_pct = 50;
	guard_decide(&s, g, 2, &d);
	ok(d.verdict == GUARD_DO_CANCEL && d.group == 1,
	   "decide: a parallel hash join's DSM counts: it is canceled, not the report beside it");
	g[0] = grp(10, GUARD_STATE_RUNNING, MB(150), 0, MB(5), 0);
	g[1] = grp(20, GUARD_STATE_RUNNING, MB(40), 0, MB(5), MB(60));
	s.used = MB(900);
	guard_decide(&s, g, 2, &d);
	ok(d.verdict == GUARD_DO_CANCEL && d.group == 1,
	   "decide: the report is innocent (not growing, its cancel would leave 750 MB over 550 MB)");
}

static void
test_follow(void)
{
	guard_follow f;

	memset(&f, 0, sizeof(f));
	f.held = MB(1000);
	f.held_now = MB(990);
	f.last_held = -1;
	f.elapsed_ms = 100;
	f.used_at = MB(1400);
	f.used_now = MB(1410);
	ok(!guard_settled(&f, 5000), "follow: a cancel not landed, 100 ms after, holding all: settling");
	is_i64(guard_pending(&f), MB(1000), "follow: ... all it frees is pending");
	f.elapsed_ms = GUARD_SETTLE_MS;
	ok(guard_settled(&f, 5000), "follow: a cancel has settled after %d ms", GUARD_SETTLE_MS);
	f.elapsed_ms = 100;
	f.used_now = MB(900);
	ok(guard_settled(&f, 5000), "follow: ... or once the source's use fell by half of it");
	f.used_now = MB(1300);
	is_i64(guard_pending(&f), MB(900), "follow: ... what the use has not lost yet is pending");
	f.held_now = MB(10);
	f.used_now = MB(1400);
	f.landed = 1;
	f.last_held = MB(10);
	ok(!guard_settled(&f, 5000),
	   "follow: a group that gave it all back while the use has not fallen (a parallel query's workers "
	   "exiting, its DSM not yet freed): settling");
	f.held_now = -1;
	ok(!guard_settled(&f, 5000), "follow: ... its backend gone too: still settling until the use falls");
	f.held_now = MB(990);
	f.last_held = MB(990);
	ok(guard_settled(&f, 5000), "follow: a cancel that landed and freed nothing, its group no longer falling: settled");
	f.last_held = MB(995);
	f.held_now = MB(800);
	ok(!guard_settled(&f, 5000), "follow: ... not while it still falls");
	f.keeps = MB(700);
	f.used_now = MB(1400);
	is_i64(guard_pending(&f), MB(300), "follow: a cancel frees nothing of what the session keeps");
	f.terminate = 1;
	f.elapsed_ms = 3000;
	f.held_now = MB(990);
	ok(!guard_settled(&f, 5000), "follow: a terminated session 3 s on, not yet exited: settling (wait 5 s)");
	is_i64(guard_pending(&f), MB(1000), "follow: ... all it holds is pending");
	f.elapsed_ms = 5000;
	ok(guard_settled(&f, 5000), "follow: ... settled after the wait");
	f.elapsed_ms = 10;
	f.held_now = -1;
	ok(!guard_settled(&f, 5000), "follow: exited, the use not yet fallen: settling");
	f.used_now = MB(800);
	ok(guard_settled(&f, 5000), "follow: exited and the use fell: settled");

	ok(guard_request_applies(100, 100, 200, 1000), "request: asked at the statement's start applies");
	ok(!guard_request_applies(99, 100, 200, 1000),
	   "request: asked before the statement started (a stale one) never relabels its cancel");
	ok(!guard_request_applies(100, 50, 1101, 1000), "request: too old");
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

/*
 * The figures docs/guard.md gives, by value: a test that used the names
 * alone would pass whatever they were changed to.
 */
static void
test_constants(void)
{
	is_i64(GUARD_MIN_HELD, 16 * 1024 * 1024, "constants: nothing under 16 MB is acted on");
	is_i64(GUARD_SMALLER, 8, "constants: below the critical level, 1/8 of the largest holder");
	is_i64(GUARD_CRITICAL_FLOOR, 4 * 1024 * 1024, "constants: at the critical level, growing statements from 4 MB");
	is_i64(GUARD_GROWING_BYTES, 1024 * 1024, "constants: growing: 1 MB or more over the last second");
	is_i64(GUARD_GROWTH_WINDOW_MS, 1000, "constants: growth over the last second");
	is_i64(GUARD_GROWTH_MIN_MS, 200, "constants: ... over 200 ms at least");
	is_i64(GUARD_SETTLE_MS, 500, "constants: a cancel settles after 500 ms");
	is_i64(GUARD_STILL_BYTES, 1024 * 1024, "constants: it stopped giving back: under 1 MB");
}

int
main(int argc, char **argv)
{
	fixtures = argc > 1 ? argv[1] : "test/fixtures";
	test_constants();
	test_held();
	test_over();
	test_kinds();
	test_groups();
	test_parts();
	test_memory();
	test_decide();
	test_follow();
	test_format();
	return tap_done();
}
