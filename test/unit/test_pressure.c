/*
 * test_pressure.c
 *		Unit tests of the pressure watch (TAP; run by `make unit`).
 *
 * The assessment is driven with hand-made readings through
 * pressure_add_reading(); figures are in arbitrary units (a limit of 1000
 * makes a share in per mille). memory.stat fixtures: cgroup/linux-6.18-v1
 * was captured from this test's machine (v1 memory controller, no limit);
 * cgroup/v1-limited is that capture with a hand-made 16 MB limit;
 * cgroup/v2-pressure is hand-made in the layout of a 6.18 kernel's v2
 * memory.stat (the machine the tests were written on has its memory
 * controller on v1); cgroup/v2-slab is its pg.slice level with 512 MB of
 * reclaimable slab (dentries, inodes), one level with a 1.5 GB limit.
 * Pressure stall: linux-6.18-pressure-memory was captured from this test's
 * machine (/proc/pressure/memory); v2-pressure's postgres level has a
 * hand-made memory.pressure of a cgroup stalled 12.5% of the time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linux/keys.h"
#include "linux/psi.h"
#include "rules/pressure.h"
#include "procfile.h"
#include "tap.h"

static pressure_watch w;
static const pressure_thresholds usual = {75, 90, 0};
/* the sampler's: the cgroup's stall raises high too */
static const pressure_thresholds stall_on = {75, 90, 1};

/* Adds a reading of the machine (used0 of limit0) and up to two cgroup levels */
static void
add3(int64_t at, int n, int64_t used0, int64_t limit0, int64_t used1, int64_t limit1,
	 int64_t used2, int64_t limit2)
{
	pressure_reading r;

	memset(&r, 0, sizeof(r));
	r.at_ms = at;
	r.nsources = n;
	r.used[0] = used0;
	r.limit[0] = limit0;
	r.used[1] = used1;
	r.limit[1] = limit1;
	r.used[2] = used2;
	r.limit[2] = limit2;
	pressure_add_reading(&w, &r);
}

/* A machine-only reading, assessed with the usual thresholds */
static const pressure_state *
machine(int64_t at, int64_t used, int64_t limit)
{
	add3(at, 1, used, limit, 0, 0, 0, 0);
	pressure_assess(&w, &usual);
	return &w.state;
}

static void
fresh(void)
{
	pressure_watch_init(&w);
}

static void
test_names(void)
{
	ok(strcmp(pressure_level_name(PRESSURE_HIGH), "high") == 0 &&
	   strcmp(pressure_level_name(PRESSURE_CRITICAL), "critical") == 0 &&
	   pressure_level_name(PRESSURE_NONE) == NULL, "names: levels");
	ok(strcmp(pressure_source_name(PRESSURE_FROM_MACHINE), "machine") == 0 &&
	   strcmp(pressure_source_name(PRESSURE_FROM_CGROUP), "cgroup") == 0 &&
	   pressure_source_name(PRESSURE_FROM_NONE) == NULL, "names: sources");
}

static void
test_thresholds(void)
{
	const pressure_state *s;
	pressure_thresholds low = {50, 60, 0};
	pressure_thresholds upside_down = {80, 10, 0};

	fresh();
	add3(0, 1, 500, 1000, 0, 0, 0, 0);
	pressure_assess(&w, &upside_down);
	ok(w.state.level == PRESSURE_NONE, "thresholds: a critical one below the high one is the high one (50%%)");
	fresh();
	add3(0, 1, 800, 1000, 0, 0, 0, 0);
	pressure_assess(&w, &upside_down);
	ok(w.state.level == PRESSURE_CRITICAL, "thresholds: ... so 80%% is critical");

	fresh();
	pressure_assess(&w, &usual);
	ok(w.state.level == PRESSURE_NONE && w.state.now == PRESSURE_NONE &&
	   w.state.source == PRESSURE_FROM_NONE && w.state.used == -1 && w.state.limit == -1,
	   "thresholds: no reading, no pressure");

	fresh();
	s = machine(1000, 749, 1000);
	ok(s->level == PRESSURE_NONE && s->now == PRESSURE_NONE && s->source == PRESSURE_FROM_MACHINE &&
	   s->used == 749, "thresholds: 74.9%% is no pressure (the source nearest its limit is named)");
	is_i64(s->ms_to_limit, -1, "thresholds: one reading has no growth");

	fresh();
	s = machine(1000, 750, 1000);
	ok(s->level == PRESSURE_HIGH && s->now == PRESSURE_HIGH, "thresholds: 75%% is high");
	ok(s->source == PRESSURE_FROM_MACHINE && s->used == 750 && s->limit == 1000,
	   "thresholds: its source and figures");

	fresh();
	s = machine(1000, 899, 1000);
	ok(s->level == PRESSURE_HIGH, "thresholds: 89.9%% is high");

	fresh();
	s = machine(1000, 900, 1000);
	ok(s->level == PRESSURE_CRITICAL && s->now == PRESSURE_CRITICAL, "thresholds: 90%% is critical");

	fresh();
	s = machine(1000, 1200, 1000);
	ok(s->level == PRESSURE_CRITICAL && s->used == 1200, "thresholds: past the limit is critical");

	/* the thresholds given are the ones used */
	fresh();
	add3(1000, 1, 550, 1000, 0, 0, 0, 0);
	pressure_assess(&w, &low);
	ok(w.state.level == PRESSURE_HIGH, "thresholds: 55%% is high at a 50%% threshold");
	fresh();
	add3(1000, 1, 600, 1000, 0, 0, 0, 0);
	pressure_assess(&w, &low);
	ok(w.state.level == PRESSURE_CRITICAL, "thresholds: 60%% is critical at a 60%% one");
}

static void
test_growth(void)
{
	const pressure_state *s;

	/* 3000 -> 3500 of 8500 in 1 s: 5000 left at 0.5 a ms, 10 s */
	fresh();
	machine(0, 3000, 8500);
	s = machine(1000, 3500, 8500);
	ok(s->level == PRESSURE_HIGH && s->now == PRESSURE_HIGH && s->source == PRESSURE_FROM_MACHINE,
	   "growth: 41%% used, the limit in 10 s, is high");
	is_i64(s->ms_to_limit, 10000, "growth: ms to the limit");

	/* 3000 -> 3499: 5001 left at 0.499 a ms, 10022 ms */
	fresh();
	machine(0, 3000, 8500);
	s = machine(1000, 3499, 8500);
	ok(s->level == PRESSURE_NONE && s->now == PRESSURE_NONE, "growth: the limit past 10 s is none");
	is_i64(s->ms_to_limit, 10022, "growth: ms to the limit, past the horizon");

	/* 1000 -> 1500 of 2500: 1000 left at 0.5 a ms, 2 s, at 60% */
	fresh();
	machine(0, 1000, 2500);
	s = machine(1000, 1500, 2500);
	ok(s->level == PRESSURE_CRITICAL, "growth: 60%% used, the limit in 2 s, is critical");
	is_i64(s->ms_to_limit, 2000, "growth: ms to the limit, critical");

	/* 1000 -> 1499: 1001 left at 0.499 a ms, 2006 ms */
	fresh();
	machine(0, 1000, 2500);
	s = machine(1000, 1499, 2500);
	ok(s->level == PRESSURE_HIGH, "growth: the limit just past 2 s is high");
	is_i64(s->ms_to_limit, 2006, "growth: ms to the limit, just past 2 s");

	/* shrinking or flat: no growth */
	fresh();
	machine(0, 700, 1000);
	s = machine(1000, 600, 1000);
	ok(s->level == PRESSURE_NONE && s->ms_to_limit == -1, "growth: shrinking is none");
	fresh();
	machine(0, 700, 1000);
	s = machine(1000, 700, 1000);
	ok(s->level == PRESSURE_NONE && s->ms_to_limit == -1, "growth: flat is none");
}

static void
test_growth_window(void)
{
	const pressure_state *s;

	/* 199 ms apart: too short a stretch to measure the growth */
	fresh();
	machine(0, 400, 1000);
	s = machine(199, 700, 1000);
	ok(s->level == PRESSURE_NONE && s->ms_to_limit == -1,
	   "window: readings less than %d ms apart have no growth", PRESSURE_RATE_MIN_MS);
	/* 200 ms apart: 300 left at 1.5 a ms */
	fresh();
	machine(0, 400, 1000);
	s = machine(200, 700, 1000);
	ok(s->level == PRESSURE_CRITICAL && s->ms_to_limit == 200,
	   "window: readings %d ms apart have", PRESSURE_RATE_MIN_MS);

	/* the oldest reading within the last second is the start */
	fresh();
	machine(0, 400, 1000);
	machine(500, 700, 1000);
	s = machine(1000, 700, 1000);
	ok(s->level == PRESSURE_CRITICAL && s->ms_to_limit == 1000,
	   "window: growth from the oldest reading of the last second (not the newest before)");

	/* a growth older than the window is gone */
	fresh();
	machine(0, 100, 1000);
	machine(1100, 500, 1000);
	s = machine(2100, 500, 1000);
	ok(s->level == PRESSURE_NONE && s->ms_to_limit == -1,
	   "window: growth more than a second ago does not count");

	/* the limit changed between the readings */
	fresh();
	machine(0, 400, 1000);
	s = machine(1000, 700, 1001);
	ok(s->level == PRESSURE_NONE && s->ms_to_limit == -1, "window: a changed limit has no growth");

	/* unreadable at the start of the window */
	fresh();
	machine(0, -1, 1000);
	s = machine(1000, 700, 1000);
	ok(s->level == PRESSURE_NONE && s->ms_to_limit == -1,
	   "window: growth from an unreadable reading does not count");

	/* a clock that went back: nothing later than now counts */
	fresh();
	machine(0, 100, 1000);
	machine(5000, 100, 1000);
	s = machine(1000, 700, 1000);
	ok(s->level == PRESSURE_NONE && s->ms_to_limit == -1,
	   "window: a later reading ends it (the one before it does not start it)");

	/* the ring wraps: 40 readings, the newest 32 kept */
	fresh();
	for (int i = 0; i < 40; i++)
		machine(i * 100, 100, 1000);
	s = machine(4000, 700, 1000);
	ok(w.nrecent == PRESSURE_RECENT && s->level == PRESSURE_CRITICAL && s->ms_to_limit == 500,
	   "window: after the ring wraps (300 left at 0.6 a ms)");

	/*
	 * A limit far beyond the memory (a v2 memory.max set to 4 EiB): growing
	 * slowly it is years away, not negative (a double past INT64_MAX cast to
	 * an int64_t)
	 */
	fresh();
	machine(0, 1000, INT64_C(1) << 62);
	s = machine(1000, 1001, INT64_C(1) << 62);
	ok(s->level == PRESSURE_NONE && s->ms_to_limit > 0,
	   "window: a far limit at a slow growth is far, not negative (%lld)", (long long) s->ms_to_limit);
}

static void
test_hold(void)
{
	const pressure_state *s;

	fresh();
	machine(0, 800, 1000);
	s = machine(100, 100, 1000);
	ok(s->level == PRESSURE_HIGH && s->now == PRESSURE_NONE, "hold: high holds after its cause ends");
	ok(s->source == PRESSURE_FROM_MACHINE && s->used == 100 && s->limit == 1000 &&
	   s->ms_to_limit == -1, "hold: the held source's figures, as they are now");
	s = machine(PRESSURE_HOLD_MS - 1, 100, 1000);
	ok(s->level == PRESSURE_HIGH, "hold: still %d ms after", PRESSURE_HOLD_MS - 1);
	s = machine(PRESSURE_HOLD_MS, 100, 1000);
	ok(s->level == PRESSURE_NONE && s->now == PRESSURE_NONE && s->source == PRESSURE_FROM_MACHINE,
	   "hold: dropped %d ms after", PRESSURE_HOLD_MS);

	/* the hold is from the cause's last reading */
	fresh();
	machine(0, 800, 1000);
	machine(3000, 800, 1000);
	s = machine(3000 + PRESSURE_HOLD_MS - 1, 100, 1000);
	ok(s->level == PRESSURE_HIGH, "hold: from the last reading that raised it");

	/* critical, then high for 3 s, then nothing */
	fresh();
	machine(0, 950, 1000);
	s = machine(3000, 800, 1000);
	ok(s->level == PRESSURE_CRITICAL && s->now == PRESSURE_HIGH, "hold: critical held over high");
	s = machine(3100, 100, 1000);
	ok(s->level == PRESSURE_CRITICAL && s->now == PRESSURE_NONE, "hold: critical held over none");
	s = machine(PRESSURE_HOLD_MS, 100, 1000);
	ok(s->level == PRESSURE_HIGH, "hold: critical's ends, high's stands (from 3 s)");
	s = machine(3000 + PRESSURE_HOLD_MS - 1, 100, 1000);
	ok(s->level == PRESSURE_HIGH, "hold: high's still stands");
	s = machine(3000 + PRESSURE_HOLD_MS, 100, 1000);
	ok(s->level == PRESSURE_NONE, "hold: then it drops");

	/* raised from growth alone, held the same */
	fresh();
	machine(0, 1000, 2500);
	machine(1000, 1500, 2500);
	s = machine(1500, 1500, 2500);
	ok(s->level == PRESSURE_CRITICAL && s->now == PRESSURE_NONE, "hold: a growth-raised level holds");
}

static void
test_sources(void)
{
	const pressure_state *s = &w.state;

	/* cgroup level 2 is critical, level 1 high, the machine easy */
	fresh();
	add3(1000, 3, 500, 1000, 800, 1000, 950, 1000);
	pressure_assess(&w, &usual);
	ok(s->level == PRESSURE_CRITICAL && s->source == PRESSURE_FROM_CGROUP && s->used == 950 &&
	   s->limit == 1000, "sources: the critical cgroup level wins");

	fresh();
	add3(1000, 3, 950, 1000, 800, 1000, 1700, 2000);
	pressure_assess(&w, &usual);
	ok(s->level == PRESSURE_CRITICAL && s->source == PRESSURE_FROM_MACHINE && s->used == 950 &&
	   s->limit == 1000, "sources: the critical machine wins");

	/* the same level: the larger share */
	fresh();
	add3(1000, 3, 800, 1000, 1700, 2000, 100, 1000);
	pressure_assess(&w, &usual);
	ok(s->level == PRESSURE_HIGH && s->source == PRESSURE_FROM_CGROUP && s->used == 1700 &&
	   s->limit == 2000, "sources: at one level, the cgroup's 85%% over the machine's 80%%");
	fresh();
	add3(1000, 3, 860, 1000, 1700, 2000, 100, 1000);
	pressure_assess(&w, &usual);
	ok(s->level == PRESSURE_HIGH && s->source == PRESSURE_FROM_MACHINE && s->used == 860,
	   "sources: at one level, the machine's 86%% over the cgroup's 85%%");

	/* a cgroup level raised by its growth alone, the machine easy */
	fresh();
	add3(0, 2, 100, 1000, 3000, 8500, 0, 0);
	add3(1000, 2, 100, 1000, 3500, 8500, 0, 0);
	pressure_assess(&w, &usual);
	ok(s->level == PRESSURE_HIGH && s->source == PRESSURE_FROM_CGROUP && s->used == 3500 &&
	   s->ms_to_limit == 10000, "sources: a cgroup level high from its growth");

	/* unreadable sources and levels without a limit are left out */
	fresh();
	add3(1000, 3, -1, 1000, 800, 1000, 990, -1);
	pressure_assess(&w, &usual);
	ok(s->level == PRESSURE_HIGH && s->source == PRESSURE_FROM_CGROUP && s->used == 800,
	   "sources: an unreadable machine and a level without a limit are left out");
	fresh();
	add3(1000, 3, 950, 1000, -1, 1000, -2, 1000);
	pressure_assess(&w, &usual);
	ok(s->level == PRESSURE_CRITICAL && s->source == PRESSURE_FROM_MACHINE && s->used == 950,
	   "sources: unreadable cgroup levels are left out");
	fresh();
	add3(1000, 1, -1, -1, 0, 0, 0, 0);
	pressure_assess(&w, &usual);
	ok(s->level == PRESSURE_NONE && s->source == PRESSURE_FROM_NONE, "sources: nothing readable");

	/* only nsources count: a stale figure past them is not a source */
	fresh();
	add3(1000, 1, 100, 1000, 990, 1000, 990, 1000);
	pressure_assess(&w, &usual);
	ok(s->level == PRESSURE_NONE, "sources: figures past nsources are not read");

	/* held from a cgroup level, while the machine is easy */
	fresh();
	add3(0, 2, 100, 1000, 950, 1000, 0, 0);
	pressure_assess(&w, &usual);
	add3(100, 2, 300, 1000, 200, 1000, 0, 0);
	pressure_assess(&w, &usual);
	ok(s->level == PRESSURE_CRITICAL && s->now == PRESSURE_NONE && s->source == PRESSURE_FROM_CGROUP &&
	   s->used == 200, "sources: a hold names the level that raised it, as it is now");

	/* held from a cgroup level that is gone (the levels looked up again) */
	add3(2000, 1, 300, 1000, 0, 0, 0, 0);
	pressure_assess(&w, &usual);
	ok(s->level == PRESSURE_CRITICAL && s->now == PRESSURE_NONE && s->source == PRESSURE_FROM_CGROUP &&
	   s->used == -1 && s->limit == -1, "sources: a hold names a level gone since, without figures");
}

static void
test_cgroup_stat(void)
{
	size_t		len;
	char	   *buf;
	pressure_cgroup_stat st;
	const char *v1 = "cgroup/linux-6.18-v1/memory.stat";
	const char *v2 = "cgroup/v2-pressure/sys/fs/cgroup/pg.slice/memory.stat";

	buf = slurp(v1, &len);
	pressure_parse_cgroup_stat(buf, len, 1, &st);
	ok(st.file == 2097152 && st.shmem == 0, "stat v1: total_cache, total_shmem (captured)");
	is_i64(st.slab_reclaimable, 0, "stat v1: no slab_reclaimable");
	pressure_parse_cgroup_stat(buf, len, 2, &st);
	ok(st.file == PROCFS_MISSING && st.slab_reclaimable == PROCFS_MISSING,
	   "stat v1 read as v2: no file, no slab_reclaimable (so no use)");
	free(buf);

	buf = slurp(v2, &len);
	pressure_parse_cgroup_stat(buf, len, 2, &st);
	ok(st.file == 524288000 && st.shmem == 134217728, "stat v2: file, shmem");
	is_i64(st.slab_reclaimable, 18874368, "stat v2: slab_reclaimable (not slab, not slab_unreclaimable)");
	pressure_parse_cgroup_stat(buf, len, 1, &st);
	ok(st.file == PROCFS_MISSING && st.shmem == PROCFS_MISSING && st.slab_reclaimable == 0,
	   "stat v2 read as v1: no total_cache");
	free(buf);

	buf = slurp("cgroup/v1/sys/fs/cgroup/memory/docker/abc/memory.stat", &len);
	pressure_parse_cgroup_stat(buf, len, 1, &st);
	ok(st.file == 2227154944 && st.shmem == 14643200, "stat v1: another kernel's totals");
	free(buf);

#define PARSE(text, version) pressure_parse_cgroup_stat(text, strlen(text), version, &st)
	PARSE("cache 1\ntotal_cache 2\nshmem 3\ntotal_shmem 4\n", 1);
	ok(st.file == 2 && st.shmem == 4, "stat v1: the hierarchical figures, not the cgroup's own");
	PARSE("", 2);
	ok(st.file == PROCFS_MISSING && st.slab_reclaimable == PROCFS_MISSING, "stat v2: empty");
	PARSE("file 5\nfile 7\nslab_reclaimable 3", 2);
	ok(st.file == 5 && st.slab_reclaimable == 3,
	   "stat v2: the first of a repeated key; no final newline");
	PARSE("file 99999999999999999999\nslab_reclaimable 9223372036854775807\n", 2);
	ok(st.file == PROCFS_INVALID && st.slab_reclaimable == INT64_MAX,
	   "stat v2: past INT64_MAX is invalid, INT64_MAX is not");
	PARSE("file -5\nslab_reclaimable 4 kB\n", 2);
	ok(st.file == PROCFS_INVALID && st.slab_reclaimable == PROCFS_INVALID,
	   "stat v2: a negative number, a unit are invalid");
	PARSE("file\nslab_reclaimable\t4\nfilex 4\n file 4\n", 2);
	ok(st.file == PROCFS_MISSING && st.slab_reclaimable == PROCFS_MISSING,
	   "stat v2: no value, a tab, a longer key, a leading blank: none is the key");
	PARSE("\x01\xff garbage\n\n\nfile 12 \n", 2);
	ok(st.file == 12, "stat v2: garbage lines, then a valid one");
#undef PARSE
}

/* Points the watch at fixture levels (as find_levels would), with a machine */
static void
at_levels(int version, const char *a, const char *b)
{
	fresh();
	w.cgroup.version = version;
	w.cgroup_known = 1;
	w.levels_found_ms = 1000;	/* looked up: not again before 11 s */
	snprintf(w.level_dir[0], sizeof(w.level_dir[0]), "%s/%s", fixtures, a);
	w.nlevels = 1;
	if (b)
	{
		snprintf(w.level_dir[1], sizeof(w.level_dir[1]), "%s/%s", fixtures, b);
		w.nlevels = 2;
	}
}

static void
test_tick_files(void)
{
	const pressure_reading *r;
	const pressure_state *s;
	pressure_thresholds never = {101, 101, 0};
	sysmem_meminfo mi;

	at_levels(2, "cgroup/v2-pressure/sys/fs/cgroup/pg.slice/postgres",
			  "cgroup/v2-pressure/sys/fs/cgroup/pg.slice");
	pressure_watch_tick(&w, 1000, &never);
	r = &w.recent[w.newest];
	is_i64(r->nsources, 3, "tick v2: the machine and two levels");
	ok(r->used[1] == 0 && r->limit[1] == 400000000,
	   "tick v2: a level whose reclaimable part passes its use uses 0");
	is_i64(r->used[2], INT64_C(734003200) - (524288000 - 134217728) - 18874368,
		   "tick v2: memory.current - (file - shmem) - slab_reclaimable");
	is_i64(r->limit[2], INT64_C(1073741824), "tick v2: memory.max");
	ok(sysmem_read_meminfo(&mi) == PROCFS_OK && r->limit[0] == mi.mem_total && r->used[0] > 0 &&
	   r->used[0] <= r->limit[0], "tick: the machine's MemTotal, and a use within it");

	at_levels(1, "cgroup/linux-6.18-v1", "cgroup/v1-limited");
	pressure_watch_tick(&w, 1000, &never);
	r = &w.recent[w.newest];
	ok(r->used[1] == PROCFS_MISSING && r->limit[1] == PROCFS_MISSING,
	   "tick v1: a captured unlimited level (9223372036854771712) has no limit");
	is_i64(r->used[2], INT64_C(13000704) - 2097152, "tick v1: usage_in_bytes - (total_cache - total_shmem)");
	is_i64(r->limit[2], 16777216, "tick v1: limit_in_bytes");

	at_levels(2, "cgroup/no-such-dir", NULL);
	pressure_watch_tick(&w, 1000, &never);
	r = &w.recent[w.newest];
	ok(r->nsources == 2 && r->used[1] == PROCFS_MISSING, "tick: a missing level is unreadable");

	/* this process's own: whatever its cgroup, the machine is read */
	fresh();
	s = pressure_watch_tick(&w, 1000, &usual);
	r = &w.recent[w.newest];
	ok(w.levels_found_ms == 1000 && r->nsources == 1 + w.nlevels && r->used[0] > 0,
	   "tick: this process's watch (%d cgroup levels, level %d)", w.nlevels, (int) s->level);
}

/*
 * One "unreclaimable" figure (issue 44): the pressure watch's used
 * (read_level: pressure_parse_cgroup_stat()) and the room of
 * pg_procmem_system / pg_procmem_headroom (walk_limits: sysmem.c's keys)
 * are both sysmem_cgroup_unreclaimable(), from the same memory.stat text.
 */

/* The figure from text by each path's parser: the watch's, and sysmem's keys */
static void
both_paths(const char *text, int version, int64_t usage, int64_t *watch, int64_t *room_path)
{
	pressure_cgroup_stat st;
	sysmem_cgmem m;
	procfs_fieldset fs = keys_fieldset(version == 2 ? &keys_cgroup_v2_stat : &keys_cgroup_v1_stat, &m);
	const char *p = text;
	const char *end = text + strlen(text);
	const char *line;
	size_t		llen;

	pressure_parse_cgroup_stat(text, strlen(text), version, &st);
	*watch = sysmem_cgroup_unreclaimable(usage, st.file, st.shmem, st.slab_reclaimable);
	sysmem_cgmem_init(&m);
	while ((line = procfs_next_line(&p, end, &llen)) != NULL)
		procfs_fields_line(&fs, line, llen);
	*room_path = sysmem_cgroup_unreclaimable(usage, m.file, m.shmem, m.slab_reclaimable);
}

static void
test_one_figure(void)
{
	int64_t		a,
				b;
	const pressure_reading *r;
	pressure_thresholds never = {101, 101, 0};
	sysmem_cgroup cg;
	sysmem_cgmem m;

	/* the helper alone */
	is_i64(sysmem_cgroup_unreclaimable(1000, 300, 100, 50), 1000 - 200 - 50,
		   "unreclaimable: usage - (file - shmem) - slab_reclaimable");
	is_i64(sysmem_cgroup_unreclaimable(1000, 300, 100, PROCFS_MISSING), 800,
		   "unreclaimable: no slab_reclaimable (v1, an old v2) is none reclaimable");
	is_i64(sysmem_cgroup_unreclaimable(1000, 300, 100, PROCFS_INVALID), 800,
		   "unreclaimable: an unusable slab_reclaimable is none reclaimable");
	is_i64(sysmem_cgroup_unreclaimable(1000, 300, 100, 900), 0,
		   "unreclaimable: slab_reclaimable past what is left: 0, never below");
	is_i64(sysmem_cgroup_unreclaimable(1000, 1500, 100, 0), 0, "unreclaimable: page cache past usage: 0");
	is_i64(sysmem_cgroup_unreclaimable(INT64_MAX, INT64_MAX, 0, INT64_MAX), 0,
		   "unreclaimable: INT64_MAX terms do not overflow");
	ok(sysmem_cgroup_unreclaimable(PROCFS_MISSING, 300, 100, 0) == PROCFS_MISSING &&
	   sysmem_cgroup_unreclaimable(1000, PROCFS_MISSING, 100, 0) == PROCFS_MISSING &&
	   sysmem_cgroup_unreclaimable(1000, 300, PROCFS_INVALID, 0) == PROCFS_MISSING &&
	   sysmem_cgroup_unreclaimable(1000, 100, 300, 0) == PROCFS_MISSING,
	   "unreclaimable: unknown without usage, file or shmem, or with shmem past file");

	/* the same text, by the watch's parser and by sysmem's keys */
	both_paths("anon 100\nfile 300\nshmem 100\nslab_reclaimable 50\nslab 60\n", 2, 1000, &a, &b);
	ok(a == 750 && b == 750, "one figure, v2 text: watch %lld, room's %lld", (long long) a, (long long) b);
	both_paths("file 300\nshmem 100\nslab_unreclaimable 5\nslab_reclaimable 700\nslab 705\n", 2, 1000, &a, &b);
	ok(a == 100 && b == 100, "one figure, v2 text, slab_reclaimable large: watch %lld, room's %lld",
	   (long long) a, (long long) b);
	both_paths("file 300\nshmem 100\nslab_reclaimable 900\n", 2, 1000, &a, &b);
	ok(a == 0 && b == 0, "one figure, v2 text, slab_reclaimable past the rest: both 0");
	both_paths("file 300\nshmem 100\nslab 60\n", 2, 1000, &a, &b);
	ok(a == 800 && b == 800, "one figure, v2 text without slab_reclaimable: watch %lld, room's %lld",
	   (long long) a, (long long) b);
	both_paths("cache 1\nshmem 2\nslab_reclaimable 400\ntotal_cache 300\ntotal_shmem 100\n", 1, 1000, &a, &b);
	ok(a == 800 && b == 800, "one figure, v1 text: the totals, no slab subtracted: watch %lld, room's %lld",
	   (long long) a, (long long) b);

	/*
	 * The same files read by each path: the watch's tick (read_level) and
	 * sysmem_read_cgmem (walk_limits), on a one-level cgroup: room = limit - used
	 */
	at_levels(2, "cgroup/v2-slab", NULL);
	pressure_watch_tick(&w, 1000, &never);
	r = &w.recent[w.newest];
	is_i64(r->used[1], INT64_C(1231028224) - (524288000 - 134217728) - 536870912,
		   "one figure, v2 files: the watch takes 512 MB of slab_reclaimable out");
	memset(&cg, 0, sizeof(cg));
	cg.version = 2;
	snprintf(cg.mount, sizeof(cg.mount), "%s/cgroup/v2-slab", fixtures);
	snprintf(cg.dir, sizeof(cg.dir), "%s", cg.mount);
	sysmem_read_cgmem(&cg, &m);
	is_i64(m.slab_reclaimable, 536870912, "one figure, v2 files: memory.stat slab_reclaimable read");
	is_i64(m.room, r->limit[1] - r->used[1], "one figure, v2 files: room = memory.max - the watch's used");
	ok(m.tight_room == m.room && m.tight_limit == r->limit[1], "one figure, v2 files: the tightest level's too");

	at_levels(1, "cgroup/v1-limited", NULL);
	pressure_watch_tick(&w, 1000, &never);
	r = &w.recent[w.newest];
	memset(&cg, 0, sizeof(cg));
	cg.version = 1;
	snprintf(cg.mount, sizeof(cg.mount), "%s/cgroup/v1-limited", fixtures);
	snprintf(cg.dir, sizeof(cg.dir), "%s", cg.mount);
	sysmem_read_cgmem(&cg, &m);
	ok(r->used[1] == INT64_C(13000704) - 2097152 && m.room == r->limit[1] - r->used[1],
	   "one figure, v1 files: room %lld = limit_in_bytes - the watch's used %lld",
	   (long long) m.room, (long long) r->used[1]);
}

/* A last sample started at start, wall ms long, of cpu_us µs of CPU */
static pressure_last_sample
took(int64_t start, int64_t wall, int64_t cpu_us)
{
	pressure_last_sample l = {start, start + wall, cpu_us};

	return l;
}

/* The next sample's time under pressure: from the last sample's end, and its CPU time */
static void
test_sample_spacing(void)
{
	const int64_t t0 = 100000;
	const int64_t grid = t0 + 10000;	/* the regular interval's next, 10 s on */
	pressure_last_sample none = {0, 0, 0};
	pressure_last_sample l;
	int64_t		due;

	/* the busy machine of issue 42: a core was hard to get, the CPU time small */
	l = took(t0, 380, 70000);
	due = pressure_sample_due(t0 + 380, grid, &l, PRESSURE_HIGH, 1000);
	is_i64(due, t0 + 1000,
		   "spacing: 380 ms of wall for 70 ms of CPU still samples every second (3 x the wall: 1,140 ms)");
	l = took(t0, 1470, 117000);
	due = pressure_sample_due(t0 + 1470, grid, &l, PRESSURE_HIGH, 1000);
	is_i64(due, t0 + 1470 + 351, "spacing: 1,470 ms of wall for 117 ms of CPU: its end plus 3 x 117 ms");
	ok(due - t0 < 3 * 1470, "spacing: ... sooner than 3 x its wall time (%lld ms)", (long long) (due - t0));
	l = took(t0, 380, 70000);
	due = pressure_sample_due(t0 + 380, grid, &l, PRESSURE_CRITICAL, 1000);
	is_i64(due, t0 + 380 + 210, "spacing: critical, the busy machine: its end plus 3 x its CPU, not 3 x its wall");

	/* a sample slow by its CPU spaces the next */
	l = took(t0, 450, 400000);
	due = pressure_sample_due(t0 + 450, grid, &l, PRESSURE_HIGH, 1000);
	is_i64(due, t0 + 450 + 1200, "spacing: 400 ms of CPU: the next 1,200 ms after its end");
	ok(due > t0 + 1000, "spacing: ... later than the pressure interval");
	/* 3 x the CPU time, rounded up to a ms */
	l = took(t0, 300, 7001);
	is_i64(pressure_sample_due(t0 + 300, grid, &l, PRESSURE_CRITICAL, 100), t0 + 300 + 22,
		   "spacing: 7.001 ms of CPU: 22 ms after its end (3 x, rounded up)");

	/* the floor */
	l = took(t0, 10, 0);
	due = pressure_sample_due(t0 + 10, grid, &l, PRESSURE_CRITICAL, 100);
	is_i64(due, t0 + 10 + PRESSURE_SAMPLE_GAP_MS, "spacing: no CPU at all: the floor after its end");
	ok(due > t0 + 25, "spacing: ... later than a quarter of 100 ms from its start");
	l = took(t0, 10, 6000);
	is_i64(pressure_sample_due(t0 + 10, grid, &l, PRESSURE_CRITICAL, 100), t0 + 10 + PRESSURE_SAMPLE_GAP_MS,
		   "spacing: 6 ms of CPU (3 x: 18 ms): the floor");
	l = took(t0, 10, 7000);
	is_i64(pressure_sample_due(t0 + 10, grid, &l, PRESSURE_CRITICAL, 100), t0 + 10 + 21,
		   "spacing: 7 ms of CPU: 21 ms, past the floor");
	l = took(t0, 10, -1);
	is_i64(pressure_sample_due(t0 + 10, grid, &l, PRESSURE_CRITICAL, 100), t0 + 10 + PRESSURE_SAMPLE_GAP_MS,
		   "spacing: a CPU time unknown (negative): the floor");
	ok(PRESSURE_SAMPLE_GAP_MS < 100 / 4, "spacing: the floor is below the shortest interval (25 ms)");

	/* no pressure: the grid, whatever the last sample took */
	l = took(t0, 1470, 900000);
	is_i64(pressure_sample_due(t0 + 1470, grid, &l, PRESSURE_NONE, 1000), grid,
		   "spacing: no pressure: the grid, after a slow sample too");
	l = took(t0, 5, 1000);
	is_i64(pressure_sample_due(t0 + 5, grid, &l, PRESSURE_NONE, 1000), grid,
		   "spacing: no pressure: the grid, after a quick one");
	is_i64(pressure_sample_due(t0, 0, &l, PRESSURE_NONE, 1000), t0, "spacing: no grid yet: at once");
	is_i64(pressure_sample_due(t0, grid, &none, PRESSURE_HIGH, 1000), grid,
		   "spacing: pressure before any sample: the grid");
	/* the grid first where it comes sooner, and still no sooner than the spacing */
	l = took(t0, 100, 10000);
	is_i64(pressure_sample_due(t0 + 100, t0 + 400, &l, PRESSURE_HIGH, 1000), t0 + 400,
		   "spacing: the grid when it comes before the pressure interval");
	l = took(t0, 100, 200000);
	is_i64(pressure_sample_due(t0 + 100, t0 + 400, &l, PRESSURE_HIGH, 1000), t0 + 100 + 600,
		   "spacing: ... but not before the spacing after a slow sample");

	/* the critical level four times as often */
	l = took(t0, 30, 20000);
	is_i64(pressure_sample_due(t0 + 30, grid, &l, PRESSURE_HIGH, 1000), t0 + 1000, "spacing: high: every 1 s");
	is_i64(pressure_sample_due(t0 + 30, grid, &l, PRESSURE_CRITICAL, 1000), t0 + 250,
		   "spacing: critical: every 250 ms, four times as often");
	is_i64(pressure_sample_due(t0 + 30, grid, &l, PRESSURE_CRITICAL, 2000), t0 + 500,
		   "spacing: critical at 2 s: every 500 ms");
}

/* Memory pressure stall (linux/psi.h): the files' text, and the watch's signal */
static void
test_psi_parse(void)
{
	psi_memory m;
	char	   *text;
	size_t		len;
	const struct
	{
		const char *text;
		int			ret;
		int32_t		some;
		int32_t		full;
		const char *what;
	}			cases[] = {
		{"some avg10=100.00 avg60=0 total=1\nfull avg10=0.00 total=0\n", 0, 10000, 0, "100.00 and 0.00"},
		{"full avg10=7 total=0\nsome avg10=1.5 total=0", 0, 150, 700, "either order, no decimals or one"},
		{"some avg10=100.01 total=1\nfull avg10=1.00\n", -1, -1, 100, "past 100%: not a figure"},
		{"some avg10=-1.00\nfull avg10=1.001\n", -1, -1, -1, "a sign, three decimals: not figures"},
		{"some avg60=1.00 total=1\nfull total=2 avg10=3.25\n", -1, -1, 325, "avg10 found anywhere on its line"},
		{"some avg10=1.00 total=1\n", -1, 100, -1, "no full line (a cpu file's shape): not whole"},
		{"somex avg10=1.00\n full avg10=1.00\nfull avg10=\n", -1, -1, -1, "only \"some \" and \"full \" lines"},
		{"", -1, -1, -1, "empty"},
	};

	text = slurp("linux-6.18-pressure-memory", &len);
	ok(psi_parse(text, len, &m) == 0 &&
	   m.some_avg10 == 71 && m.full_avg10 == 15, "psi: the captured file: some 0.71%%, full 0.15%%");
	free(text);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		int			ret = psi_parse(cases[i].text, strlen(cases[i].text), &m);

		ok(ret == cases[i].ret && m.some_avg10 == cases[i].some && m.full_avg10 == cases[i].full,
		   "psi: %s (%d: some %d, full %d)", cases[i].what, ret, m.some_avg10, m.full_avg10);
	}
	for (int bit = 1; bit <= PSI_MISSING_ALL; bit <<= 1)
		ok(psi_missing_reason(bit) != NULL, "psi: missing bit 0x%02x has a reason: %s", bit,
		   psi_missing_reason(bit));
	ok(psi_missing_reason(PSI_MISSING_ALL + 1) == NULL, "psi: no reason for a bit that is none");
}

static void
test_psi_read(void)
{
	sysmem_cgroup cg;
	psi_memory m;
	psi_server s;

	memset(&cg, 0, sizeof(cg));
	is_i64(psi_read_cgroup(&cg, &m), PSI_MISSING_CGROUP_NONE, "psi read: no cgroup found");
	is_i64(psi_read_cgroup(NULL, &m), PSI_MISSING_CGROUP_NONE, "psi read: no cgroup given");
	cg.version = 1;
	is_i64(psi_read_cgroup(&cg, &m), PSI_MISSING_CGROUP_V1, "psi read: cgroup v1 has none per cgroup");
	cg.version = 2;
	snprintf(cg.dir, sizeof(cg.dir), "%s/cgroup/v2-pressure/sys/fs/cgroup/pg.slice/postgres", fixtures);
	ok(psi_read_cgroup(&cg, &m) == 0 && m.some_avg10 == 3147 && m.full_avg10 == 1250,
	   "psi read: a v2 cgroup's memory.pressure (some 31.47%%, full 12.50%%)");
	snprintf(cg.dir, sizeof(cg.dir), "%s/cgroup/v2-slab", fixtures);
	ok(psi_read_cgroup(&cg, &m) == PSI_MISSING_CGROUP_OFF && m.full_avg10 == -1,
	   "psi read: a v2 cgroup without memory.pressure: PSI off");
	/* this machine's own, as the kernel has it: read, or said off (no /proc/pressure) */
	psi_read_server(NULL, &s);
	ok((s.missing & PSI_MISSING_CGROUP_NONE) &&
	   ((s.missing & PSI_MISSING_MACHINE_OFF) ? s.machine.some_avg10 == -1 && access(PSI_MACHINE_PATH, F_OK) != 0 :
		!(s.missing & PSI_MISSING_MACHINE_UNREADABLE) && s.machine.some_avg10 >= s.machine.full_avg10 &&
		s.machine.full_avg10 >= 0 && s.machine.some_avg10 <= 10000),
	   "psi read: this machine's %s (some %d, full %d hundredths)",
	   (s.missing & PSI_MISSING_MACHINE_OFF) ? "is off" : "is read", s.machine.some_avg10, s.machine.full_avg10);
}

/* A reading of the machine and one cgroup level, and the cgroup's stall */
static const pressure_state *
stalled(int64_t at, int64_t used1, int32_t stall)
{
	pressure_reading r;

	memset(&r, 0, sizeof(r));
	r.at_ms = at;
	r.nsources = 2;
	r.used[0] = 100;
	r.limit[0] = 1000;
	r.used[1] = used1;
	r.limit[1] = 1000;
	r.stall_full = stall;
	pressure_add_reading(&w, &r);
	pressure_assess(&w, &stall_on);
	return &w.state;
}

static void
test_stall(void)
{
	const pressure_state *s;

	fresh();
	s = stalled(1000, 100, 999);
	ok(s->level == PRESSURE_NONE, "stall: 9.99%% full is no pressure");
	fresh();
	s = stalled(1000, 100, 1000);
	ok(s->level == PRESSURE_HIGH && s->now == PRESSURE_HIGH && s->source == PRESSURE_FROM_CGROUP_STALL &&
	   s->used == -1 && s->limit == -1 && s->ms_to_limit == -1,
	   "stall: 10%% full raises high, from the cgroup's stall, with no figures of use");
	ok(strcmp(pressure_source_name(s->source), "cgroup stall") == 0, "stall: its source's name, cgroup stall");
	s = stalled(3000, 100, 0);
	ok(s->level == PRESSURE_HIGH && s->now == PRESSURE_NONE && s->source == PRESSURE_FROM_CGROUP_STALL,
	   "stall: gone, the level holds, still named the stall");
	s = stalled(6001, 100, 0);
	ok(s->level == PRESSURE_NONE, "stall: 5 s after, no pressure");
	fresh();
	s = stalled(1000, 950, 10000);
	ok(s->level == PRESSURE_CRITICAL && s->source == PRESSURE_FROM_CGROUP && s->used == 950,
	   "stall: a cgroup past its critical threshold is critical from its use, whatever the stall");
	fresh();
	s = stalled(1000, 800, 10000);
	ok(s->level == PRESSURE_HIGH && s->source == PRESSURE_FROM_CGROUP,
	   "stall: never critical; high from the use where the use says high");
	fresh();
	s = stalled(1000, 100, -1);
	ok(s->level == PRESSURE_NONE, "stall: unread (-1) is none");
	/* a level held above what the newest reading shows names what raised it */
	fresh();
	stalled(1000, 950, 0);
	s = stalled(3000, 100, 2000);
	ok(s->level == PRESSURE_CRITICAL && s->now == PRESSURE_HIGH && s->source == PRESSURE_FROM_CGROUP &&
	   s->used == 100 && s->limit == 1000,
	   "stall: critical held from the cgroup's use, the stall high now: the cgroup named, with its figures");
	/* the guard's watch (use_stall 0): a stall is nothing */
	fresh();
	add3(1000, 2, 100, 1000, 100, 1000, 0, 0);
	w.recent[w.newest].stall_full = 5000;
	pressure_assess(&w, &usual);
	ok(w.state.level == PRESSURE_NONE, "stall: without use_stall (the guard's watch), 50%% full is no pressure");

	/* the tick reads the server's cgroup's memory.pressure (v2 only) */
	at_levels(2, "cgroup/v2-pressure/sys/fs/cgroup/pg.slice/postgres", NULL);
	snprintf(w.cgroup.dir, sizeof(w.cgroup.dir), "%s/cgroup/v2-pressure/sys/fs/cgroup/pg.slice/postgres",
			 fixtures);
	pressure_watch_tick(&w, 1000, &(pressure_thresholds) {101, 101, 0});
	ok(w.recent[w.newest].stall_full == -1, "stall: without use_stall the tick reads no memory.pressure");
	s = pressure_watch_tick(&w, 1500, &(pressure_thresholds) {101, 101, 1});
	ok(w.recent[w.newest].stall_full == 1250 && s->level == PRESSURE_HIGH &&
	   s->source == PRESSURE_FROM_CGROUP_STALL, "stall: a tick reads the cgroup's 12.50%% full: high");
	at_levels(1, "cgroup/linux-6.18-v1", NULL);
	snprintf(w.cgroup.dir, sizeof(w.cgroup.dir), "%s/cgroup/v2-pressure/sys/fs/cgroup/pg.slice/postgres",
			 fixtures);
	pressure_watch_tick(&w, 1000, &(pressure_thresholds) {101, 101, 1});
	ok(w.recent[w.newest].stall_full == -1, "stall: cgroup v1: not read");
}

/* The figures docs/history.md gives, by value: the names alone pass whatever they are */
static void
test_constants(void)
{
	is_i64(PRESSURE_HORIZON_MS, 10000, "constants: high when the growth reaches the limit within 10 s");
	is_i64(PRESSURE_CRITICAL_HORIZON_MS, 2000, "constants: critical when it reaches it within 2 s");
	is_i64(PRESSURE_HOLD_MS, 5000, "constants: a level holds 5 s after its cause");
	is_i64(PRESSURE_RATE_WINDOW_MS, 1000, "constants: growth over the last second");
	is_i64(PRESSURE_RATE_MIN_MS, 200, "constants: ... over 200 ms at least");
	is_i64(PRESSURE_LEVELS_REFRESH_MS, 10000, "constants: the cgroup's levels looked up every 10 s");
	is_i64(PRESSURE_SAMPLE_GAP_MS, 20, "constants: 20 ms at least between two samples");
	is_i64(PRESSURE_STALL_PCT, 10, "constants: high at 10%% full stall of the server's cgroup");
}

int
main(int argc, char **argv)
{
	fixtures = argc > 1 ? argv[1] : "test/fixtures";
	test_constants();
	test_names();
	test_thresholds();
	test_growth();
	test_growth_window();
	test_hold();
	test_sources();
	test_cgroup_stat();
	test_tick_files();
	test_one_figure();
	test_sample_spacing();
	test_psi_parse();
	test_psi_read();
	test_stall();
	return tap_done();
}
