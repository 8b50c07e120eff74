/*
 * guard_rules.c
 *		The memory guard's decisions (guard_rules.h).
 */
#include "linux/procfs.h"
#include "rules/guard_rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a backend holds, from its statm: the one definition both reads use */
static int64_t
held_of(const procfs_statm *m)
{
	return m->resident - m->shared;
}

int64_t
guard_held_from_statm(const char *buf, size_t len, long page)
{
	procfs_statm m;

	if (procfs_parse_statm_pages(buf, len, page, &m) != 0)
		return -1;
	return held_of(&m);
}

int64_t
guard_held_now(pid_t pid)
{
	procfs_statm m;

	return procfs_read_statm(pid, &m) == PROCFS_OK ? held_of(&m) : -1;
}

int
guard_over(const pressure_reading *r, int threshold_pct, int64_t limit_override,
		   int64_t *used, int64_t *limit)
{
	int			best = -1;
	double		best_share = 0;
	int			cgroup_limited = 0;

	for (int i = 1; i < r->nsources && i < PRESSURE_MAX_SOURCES; i++)
		if (r->limit[i] > 0)
			cgroup_limited = 1;
	for (int i = 0; i < r->nsources && i < PRESSURE_MAX_SOURCES; i++)
	{
		int64_t		l = (i == 0 && limit_override > 0) ? limit_override : r->limit[i];
		double		share;

		/* the machine's total only where no cgroup limits the server */
		if (i == 0 && limit_override <= 0 && cgroup_limited)
			continue;
		if (r->used[i] < 0 || l <= 0)
			continue;
		share = (double) r->used[i] / (double) l;
		/* at the threshold is over it: used * 100 >= pct * limit, exact in doubles below 2^53 / 100 */
		if ((double) r->used[i] * 100.0 >= (double) threshold_pct * (double) l &&
			(best < 0 || share > best_share))
		{
			best = i;
			best_share = share;
			*used = r->used[i];
			*limit = l;
		}
	}
	return best;
}

int
guard_request_applies(int64_t asked_at, int64_t stmt_start, int64_t now, int64_t max_age)
{
	return asked_at >= stmt_start && now - asked_at <= max_age;
}

/* What an action frees: a terminate, all; a cancel, what its session does not keep */
static int64_t
frees_of(const guard_follow *f)
{
	int64_t		frees = f->terminate ? f->held : f->held - f->keeps;

	return frees > 0 ? frees : 0;
}

/* How far the source's use fell since the signal */
static int64_t
fallen_of(const guard_follow *f)
{
	return f->used_at > f->used_now ? f->used_at - f->used_now : 0;
}

int
guard_settled(const guard_follow *f, int64_t terminate_wait_ms)
{
	int64_t		frees = frees_of(f);
	int64_t		back;

	if (fallen_of(f) * 2 >= frees)
		return 1;
	if (f->terminate)
		return f->elapsed_ms >= terminate_wait_ms;
	if (f->elapsed_ms >= GUARD_SETTLE_MS)
		return 1;
	/* landed, its group no longer falling, and it kept most of it: nothing more is coming */
	back = f->held_now >= 0 && f->held > f->held_now ? f->held - f->held_now : f->held_now < 0 ? f->held : 0;
	return f->landed && f->held_now >= 0 && f->last_held >= 0 &&
		f->held_now >= f->last_held - GUARD_STILL_BYTES && back * 2 < frees;
}

int64_t
guard_pending(const guard_follow *f)
{
	int64_t		left = frees_of(f) - fallen_of(f);

	return left > 0 ? left : 0;
}

void
guard_format_bytes(char *buf, size_t size, int64_t bytes)
{
	static const char *const units[] = {"kB", "MB", "GB", "TB", "PB"};
	double		v = (double) bytes;
	int			u = -1;

	if (bytes < 10 * 1024)
	{
		snprintf(buf, size, "%lld bytes", (long long) bytes);
		return;
	}
	while (v >= 1024.0 && u < 4)
	{
		v /= 1024.0;
		u++;
	}
	/* one decimal below 10 of a unit: 2.9 GB, 512 MB */
	if (v < 9.95)
		snprintf(buf, size, "%.1f %s", v, units[u]);
	else
		snprintf(buf, size, "%.0f %s", v, units[u]);
}
