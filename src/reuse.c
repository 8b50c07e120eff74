/*
 * reuse.c
 *		When a process's figures from the last sample are still its figures
 *		(reuse.h).
 */
#include "reuse.h"
#include "sysmem.h"

#include <string.h>

/* Counter names, whole or (ending in '_') as a prefix */
static const char *const moved_counters[] = {
	"pgsteal_",					/* reclaim: kswapd, direct, khugepaged, anon, file */
	"pgdemote_",				/* demotion to a slower memory tier */
	"pgpromote_success",
	"pswpout",
	"zswpout",
	"pgmigrate_success",		/* compaction, NUMA balancing, hotplug */
	"thp_split_",				/* page, pmd, pud */
	"thp_deferred_split_page",
	"thp_underused_split_page",
	"thp_collapse_alloc",		/* khugepaged, MADV_COLLAPSE */
	"thp_migration_split",
	"drop_pagecache",
	"drop_slab",
};

static int
matches(const char *key, size_t len, const char *name)
{
	size_t		n = strlen(name);

	if (name[n - 1] == '_')
		return len > n && memcmp(key, name, n) == 0;
	return len == n && memcmp(key, name, n) == 0;
}

int
reuse_moved_counter(const char *key, size_t len)
{
	for (size_t i = 0; i < sizeof(moved_counters) / sizeof(moved_counters[0]); i++)
		if (matches(key, len, moved_counters[i]))
			return 1;
	return 0;
}

uint64_t
reuse_sum_moved(const char *buf, size_t len)
{
	const char *p = buf;
	const char *end = buf + len;
	const char *line;
	size_t		llen;
	uint64_t	sum = 0;

	while ((line = procfs_next_line(&p, end, &llen)) != NULL)
	{
		const char *sp = memchr(line, ' ', llen);
		int64_t		v;

		if (sp == NULL || !reuse_moved_counter(line, (size_t) (sp - line)))
			continue;
		if (procfs_parse_int(sp + 1, llen - (size_t) (sp + 1 - line), &v) == 0 && v > 0)
			sum += (uint64_t) v;
	}
	return sum;
}

procfs_result
reuse_read_moved(reuse_moved *m)
{
	char		buf[16384];
	size_t		len;
	procfs_result res = procfs_read_path("/proc/vmstat", buf, sizeof(buf), &len);

	if (res != PROCFS_OK)
		return res;
	m->vmstat = reuse_sum_moved(buf, len);
	m->ksm_shared = sysmem_read_int("/sys/kernel/mm/ksm/pages_shared");
	m->ksm_sharing = sysmem_read_int("/sys/kernel/mm/ksm/pages_sharing");
	return PROCFS_OK;
}

int
reuse_moved_equal(const reuse_moved *a, const reuse_moved *b)
{
	return a->vmstat == b->vmstat && a->ksm_shared == b->ksm_shared &&
		a->ksm_sharing == b->ksm_sharing;
}

int
reuse_process_unchanged(const reuse_mark *then, int64_t then_ms, const procfs_stat *id,
						const procfs_schedstat *sched, int64_t now_ms)
{
	return id->starttime == then->starttime &&
		id->state == 'S' && id->threads == 1 &&
		sched->runtime_ns == then->sched.runtime_ns &&
		sched->timeslices == then->sched.timeslices &&
		now_ms >= then_ms && now_ms - then_ms < REUSE_MAX_AGE_MS;
}
