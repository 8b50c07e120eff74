/*
 * fuzz_pressure.c - libFuzzer target: the pressure watch's assessment fed
 * readings made of the input (per reading: a clock step, which may go back,
 * the number of sources, and each source's use and limit, any int64_t).
 * Invariants: no crash, no UB (a division by a zero stretch, a cast past
 * int64_t); the level held is at least the level now; a level names a
 * source, and a level now that source's readable figures; the time to the
 * limit is -1 or more; the cgroup's stall (two bytes after the sources)
 * raises high, never critical, with no figures of use, and only where the
 * thresholds use it; a level held above the newest reading's names its
 * own source. The guard's test
 * of the same reading: a source it names is one of the reading's, over the
 * threshold, with its figures.
 */
#include <stdlib.h>
#include <string.h>

#include "rules/guard_rules.h"
#include "rules/pressure.h"

static pressure_watch w;

static int64_t
take(const uint8_t **p, const uint8_t *end, int n)
{
	uint64_t	v = 0;

	for (int i = 0; i < n && *p < end; i++, (*p)++)
		v = (v << 8) | **p;
	/* small numbers are the interesting ones: shift the rest down */
	return n == 8 ? (int64_t) v : (int64_t) v - (INT64_C(1) << (8 * n - 1));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data;
	const uint8_t *end = data + size;
	pressure_thresholds t;
	int64_t		at = 0;

	if (size < 2)
		return 0;
	t.high_pct = p[0] % 101;
	t.critical_pct = t.high_pct + p[1] % (101 - t.high_pct);
	t.use_stall = (p[1] & 0x80) != 0;
	p += 2;
	pressure_watch_init(&w);
	while (p < end)
	{
		pressure_reading r;
		int			wide = *p & 0x80;	/* full int64_t figures, else 2 bytes */

		memset(&r, 0, sizeof(r));
		r.nsources = 1 + (*p & 0x7f) % PRESSURE_MAX_SOURCES;
		p++;
		at += take(&p, end, 2);
		r.at_ms = at;
		for (int i = 0; i < r.nsources; i++)
		{
			r.used[i] = take(&p, end, wide ? 8 : 2);
			r.limit[i] = take(&p, end, wide ? 8 : 2);
		}
		r.stall_full = (int32_t) take(&p, end, 2);	/* -32768..32767 hundredths */
		pressure_add_reading(&w, &r);
		pressure_assess(&w, &t);
		{
			int64_t		used = -5, limit = -5;
			int64_t		override = take(&p, end, 2);
			int			i = guard_over(&r, t.high_pct, override, &used, &limit);

			if (i >= r.nsources || i < -1 ||
				(i >= 0 && (used != r.used[i] || limit <= 0 || used < 0 ||
							(double) used * 100.0 < (double) t.high_pct * (double) limit * (1 - 1e-9))) ||
				(i < 0 && (used != -5 || limit != -5)))
				abort();
		}
		if (w.state.level < w.state.now || w.state.ms_to_limit < -1 ||
			(w.state.level != PRESSURE_NONE && w.state.source == PRESSURE_FROM_NONE) ||
			(w.state.now != PRESSURE_NONE && w.state.level == w.state.now &&
			 w.state.source != PRESSURE_FROM_CGROUP_STALL && (w.state.used < 0 || w.state.limit <= 0)) ||
			(!t.use_stall && w.state.source == PRESSURE_FROM_CGROUP_STALL) ||
			(w.state.source == PRESSURE_FROM_CGROUP_STALL &&
			 (w.state.now == PRESSURE_CRITICAL || w.state.used != -1 || w.state.limit != -1)))
			abort();
	}
	return 0;
}
