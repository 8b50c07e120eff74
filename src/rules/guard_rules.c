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
		if (share * 100.0 >= (double) threshold_pct && (best < 0 || share > best_share))
		{
			best = i;
			best_share = share;
			*used = r->used[i];
			*limit = l;
		}
	}
	return best;
}

static int
group_cmp(const void *a, const void *b)
{
	const guard_group *x = a;
	const guard_group *y = b;

	if (x->held != y->held)
		return x->held > y->held ? -1 : 1;
	return (x->leader > y->leader) - (x->leader < y->leader);
}

int
guard_group_candidates(const guard_candidate *c, int n, guard_group *out)
{
	int			ngroups = 0;

	/* leaders first: a group exists only where its leader is a candidate */
	for (int i = 0; i < n; i++)
	{
		if (c[i].leader != c[i].pid)
			continue;
		out[ngroups].leader = c[i].pid;
		out[ngroups].members = 1;
		out[ngroups].held = c[i].held > 0 ? c[i].held : 0;
		out[ngroups].active = c[i].active;
		ngroups++;
	}
	for (int i = 0; i < n; i++)
	{
		if (c[i].leader == c[i].pid)
			continue;
		for (int g = 0; g < ngroups; g++)
			if (out[g].leader == c[i].leader)
			{
				out[g].members++;
				if (c[i].held > 0)
					out[g].held += c[i].held;
				break;
			}
	}
	qsort(out, (size_t) ngroups, sizeof(guard_group), group_cmp);
	return ngroups;
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
