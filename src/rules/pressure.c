/*
 * pressure.c
 *		The pressure watch (pressure.h): a few small reads, and what they say.
 */
#include "linux/procfs.h"
#include "linux/psi.h"
#include "rules/pressure.h"

#include <stdio.h>
#include <string.h>

#ifndef Max
#define Max(a, b) ((a) > (b) ? (a) : (b))
#endif
#ifndef Min
#define Min(a, b) ((a) < (b) ? (a) : (b))
#endif

const char *
pressure_level_name(pressure_level l)
{
	switch (l)
	{
		case PRESSURE_HIGH:
			return "high";
		case PRESSURE_CRITICAL:
			return "critical";
		default:
			return NULL;
	}
}

const char *
pressure_source_name(pressure_source_kind k)
{
	switch (k)
	{
		case PRESSURE_FROM_MACHINE:
			return "machine";
		case PRESSURE_FROM_CGROUP:
			return "cgroup";
		case PRESSURE_FROM_CGROUP_STALL:
			return "cgroup stall";
		default:
			return NULL;
	}
}

static const procfs_field stat_v2_fields[] = {
	PROCFS_FIELD(pressure_cgroup_stat, "file", file, 0),
	PROCFS_FIELD(pressure_cgroup_stat, "shmem", shmem, 0),
	PROCFS_FIELD(pressure_cgroup_stat, "slab_reclaimable", slab_reclaimable, 0),
};

/* v1: the hierarchical figures, which count the cgroup's children too */
static const procfs_field stat_v1_fields[] = {
	PROCFS_FIELD(pressure_cgroup_stat, "total_cache", file, 0),
	PROCFS_FIELD(pressure_cgroup_stat, "total_shmem", shmem, 0),
};

static procfs_fieldset
stat_fieldset(int version, pressure_cgroup_stat *out)
{
	procfs_fieldset fs;

	memset(&fs, 0, sizeof(fs));
	fs.fields = version == 2 ? stat_v2_fields : stat_v1_fields;
	fs.n = version == 2 ? PROCFS_NFIELDS(stat_v2_fields) : PROCFS_NFIELDS(stat_v1_fields);
	fs.sep = ' ';
	fs.target = out;
	return fs;
}

void
pressure_parse_cgroup_stat(const char *buf, size_t len, int version, pressure_cgroup_stat *out)
{
	procfs_fieldset fs = stat_fieldset(version, out);
	const char *p = buf;
	const char *end = buf + len;
	const char *line;
	size_t		llen;

	procfs_fields_init(&fs);
	out->slab_reclaimable = version == 2 ? PROCFS_MISSING : 0;
	while ((line = procfs_next_line(&p, end, &llen)) != NULL)
		procfs_fields_line(&fs, line, llen);
	if (version != 2)
		out->slab_reclaimable = 0;
}

/*
 * The levels of the cgroup, from its own directory up to its hierarchy's
 * mount, the mount included (sysmem_cgroup_parent(); a host's root has no
 * limit file), at most PRESSURE_MAX_SOURCES - 1 of them, the deepest:
 * every level is read for its limit at every tick, so that a limit set
 * anywhere counts at once.
 */
static void
find_levels(pressure_watch *w, int64_t now_ms)
{
	char		dir[1024];

	w->levels_found_ms = now_ms;
	w->nlevels = 0;
	w->cgroup_known = sysmem_find_cgroup(&w->cgroup) == 0 &&
		(w->cgroup.version == 1 || w->cgroup.version == 2);
	if (!w->cgroup_known)
		return;
	snprintf(dir, sizeof(dir), "%s", w->cgroup.dir);
	do
		snprintf(w->level_dir[w->nlevels++], sizeof(w->level_dir[0]), "%s", dir);
	while (w->nlevels < PRESSURE_MAX_SOURCES - 1 && sysmem_cgroup_parent(&w->cgroup, dir));
}

void
pressure_watch_init(pressure_watch *w)
{
	memset(w, 0, sizeof(*w));
	w->newest = -1;
}

/* One level's use the kernel cannot reclaim (sysmem_cgroup_unreclaimable()), and its limit (negative: none) */
static void
read_level(const pressure_watch *w, const char *dir, int64_t *used, int64_t *limit)
{
	int			v2 = w->cgroup.version == 2;
	char		path[1280];
	char		buf[8192];
	size_t		len;
	int64_t		usage;
	pressure_cgroup_stat st;

	*used = PROCFS_MISSING;
	*limit = sysmem_read_limit(dir, v2 ? "memory.max" : "memory.limit_in_bytes");
	if (*limit <= 0)
		return;
	usage = sysmem_read_limit(dir, v2 ? "memory.current" : "memory.usage_in_bytes");
	snprintf(path, sizeof(path), "%s/memory.stat", dir);
	if (usage < 0 || procfs_read_path(path, buf, sizeof(buf), &len) != PROCFS_OK)
		return;
	pressure_parse_cgroup_stat(buf, len, w->cgroup.version, &st);
	/* the room's figure too (walk_limits() in sysmem.c): one definition, there */
	*used = sysmem_cgroup_unreclaimable(usage, st.file, st.shmem, st.slab_reclaimable);
}

void
pressure_add_reading(pressure_watch *w, const pressure_reading *r)
{
	w->newest = (w->newest + 1) % PRESSURE_RECENT;
	w->recent[w->newest] = *r;
	if (w->nrecent < PRESSURE_RECENT)
		w->nrecent++;
}

const pressure_state *
pressure_watch_tick(pressure_watch *w, int64_t now_ms, const pressure_thresholds *t)
{
	pressure_reading r;
	sysmem_meminfo mi;

	if (w->levels_found_ms == 0 || now_ms - w->levels_found_ms >= PRESSURE_LEVELS_REFRESH_MS)
		find_levels(w, now_ms);
	memset(&r, 0, sizeof(r));
	r.at_ms = now_ms;
	r.used[0] = r.limit[0] = PROCFS_MISSING;
	if (sysmem_read_meminfo(&mi) == PROCFS_OK && mi.mem_total > 0 && mi.mem_available >= 0)
	{
		r.used[0] = mi.mem_total > mi.mem_available ? mi.mem_total - mi.mem_available : 0;
		r.limit[0] = mi.mem_total;
	}
	r.nsources = 1;
	for (int i = 0; i < w->nlevels; i++, r.nsources++)
		read_level(w, w->level_dir[i], &r.used[r.nsources], &r.limit[r.nsources]);
	r.stall_full = -1;
	if (t->use_stall && w->cgroup_known && w->cgroup.version == 2)
	{
		psi_memory stall;

		if (psi_read_cgroup(&w->cgroup, &stall) == 0)
			r.stall_full = stall.full_avg10;
	}
	pressure_add_reading(w, &r);
	pressure_assess(w, t);
	return &w->state;
}

/* hold_index[] of a level the cgroup's stall raised */
#define STALL_INDEX (-2)

/* The oldest reading at most PRESSURE_RATE_WINDOW_MS before the newest */
static const pressure_reading *
window_start(const pressure_watch *w)
{
	const pressure_reading *now = &w->recent[w->newest];
	const pressure_reading *then = NULL;

	for (int k = 1; k < w->nrecent; k++)
	{
		const pressure_reading *r = &w->recent[(w->newest - k + PRESSURE_RECENT) % PRESSURE_RECENT];

		if (now->at_ms - r->at_ms > PRESSURE_RATE_WINDOW_MS || r->at_ms > now->at_ms)
			break;
		then = r;
	}
	if (then && now->at_ms - then->at_ms < PRESSURE_RATE_MIN_MS)
		return NULL;
	return then;
}

void
pressure_assess(pressure_watch *w, const pressure_thresholds *t)
{
	const pressure_reading *now;
	const pressure_reading *then;
	pressure_state best;
	double		best_share = -1;
	int			best_i = -1;

	memset(&best, 0, sizeof(best));
	best.used = best.limit = best.ms_to_limit = -1;
	if (w->nrecent == 0)
	{
		w->state = best;
		return;
	}
	now = &w->recent[w->newest];
	then = window_start(w);
	for (int i = 0; i < now->nsources; i++)
	{
		int64_t		used = now->used[i];
		int64_t		limit = now->limit[i];
		int64_t		ms_to = -1;
		double		share;
		pressure_level l = PRESSURE_NONE;

		if (used < 0 || limit <= 0)
			continue;
		share = (double) used * 100.0 / (double) limit;
		/* the growth, where the same source with the same limit was read then */
		if (then && i < then->nsources && then->used[i] >= 0 && then->limit[i] == limit &&
			used > then->used[i])
		{
			double		per_ms = (double) (used - then->used[i]) / (double) (now->at_ms - then->at_ms);
			double		ms = (double) (limit - used) / per_ms;

			/* a far limit at a slow growth can be past INT64_MAX ms (a cast of that is undefined) */
			ms_to = used >= limit ? 0 : ms >= (double) INT64_MAX ? INT64_MAX : (int64_t) ms;
		}
		/* a critical threshold below the high one is the high one */
		if (share >= Max(t->critical_pct, t->high_pct) ||
			(ms_to >= 0 && ms_to <= PRESSURE_CRITICAL_HORIZON_MS))
			l = PRESSURE_CRITICAL;
		else if (share >= t->high_pct || (ms_to >= 0 && ms_to <= PRESSURE_HORIZON_MS))
			l = PRESSURE_HIGH;
		if (l > best.now || (l == best.now && share > best_share))
		{
			best.now = l;
			best.source = i == 0 ? PRESSURE_FROM_MACHINE : PRESSURE_FROM_CGROUP;
			best.used = used;
			best.limit = limit;
			best.ms_to_limit = ms_to;
			best_share = share;
			best_i = i;
		}
	}
	/* the server's cgroup stalled: high, where nothing else raised it */
	if (t->use_stall && best.now == PRESSURE_NONE && now->stall_full >= PRESSURE_STALL_PCT * 100)
	{
		best.now = PRESSURE_HIGH;
		best.source = PRESSURE_FROM_CGROUP_STALL;
		best.used = best.limit = best.ms_to_limit = -1;
		best_i = STALL_INDEX;
	}
	for (int l = PRESSURE_HIGH; l <= PRESSURE_CRITICAL; l++)
		if ((int) best.now >= l)
		{
			w->hold_until[l] = now->at_ms + PRESSURE_HOLD_MS;
			w->hold_index[l] = best_i;
		}
	best.level = PRESSURE_NONE;
	for (int l = PRESSURE_CRITICAL; l >= PRESSURE_HIGH; l--)
		if (w->hold_until[l] > now->at_ms)
		{
			int			i = w->hold_index[l];

			best.level = (pressure_level) l;
			/*
			 * held above what the newest reading shows: the source that
			 * raised it, with its figures as they are now (none when the
			 * cgroup's levels were looked up again since and it is no longer
			 * one): a level always names what raised it
			 */
			if ((int) best.now < l && i >= 0)
			{
				best.source = i == 0 ? PRESSURE_FROM_MACHINE : PRESSURE_FROM_CGROUP;
				best.used = i < now->nsources ? now->used[i] : -1;
				best.limit = i < now->nsources ? now->limit[i] : -1;
				best.ms_to_limit = -1;
			}
			else if ((int) best.now < l && i == STALL_INDEX)
			{
				best.source = PRESSURE_FROM_CGROUP_STALL;
				best.used = best.limit = best.ms_to_limit = -1;
			}
			break;
		}
	w->state = best;
}

int64_t
pressure_sample_due(int64_t now_ms, int64_t grid_ms, const pressure_last_sample *last,
					pressure_level level, int every_ms)
{
	int64_t		due = grid_ms == 0 ? now_ms : grid_ms;
	int64_t		every;
	int64_t		gap;

	if (level == PRESSURE_NONE || last->start_ms == 0)
		return due;
	every = level == PRESSURE_CRITICAL ? Max(every_ms / 4, 1) : Max(every_ms, 1);
	/* in ms, rounded up */
	gap = Max((3 * Max(last->cpu_us, 0) + 999) / 1000, PRESSURE_SAMPLE_GAP_MS);
	return Max(Min(due, last->start_ms + every), last->end_ms + gap);
}
