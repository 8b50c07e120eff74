/*
 * reuse.c
 *		When a process's figures from the last sample are still its figures
 *		(reuse.h).
 */
#include "linux/sysmem.h"
#include "rules/reuse.h"

#include <string.h>

/* Counter names, whole or (ending in '_') as a prefix, and what they move */
typedef struct moved_counter
{
	const char *name;
	reuse_moves moves;
} moved_counter;

static const moved_counter moved_counters[] = {
	{"pgsteal_anon", REUSE_MOVES_ANON}, /* reclaim, by kind (Linux >= 5.8) */
	{"pgsteal_file", REUSE_MOVES_FILE},
	{"pgsteal_", REUSE_MOVES_ANY},	/* kswapd, direct, khugepaged, proactive */
	{"pgdemote_", REUSE_MOVES_ANON},	/* demotion to a slower memory tier */
	{"pgpromote_success", REUSE_MOVES_ANON},
	{"pswpout", REUSE_MOVES_ANON},
	{"pswpin", REUSE_MOVES_ANON},	/* swapoff brings pages back into sleepers */
	{"pglazyfreed", REUSE_MOVES_ANON},	/* MADV_FREE'd pages reclaimed, counted as file */
	{"zswpout", REUSE_MOVES_ANON},
	/*
	 * Not pgmigrate_success: migration (compaction, NUMA balancing) moves a
	 * page to another frame under the same mappings, and changes no figure
	 * (test_reuse.c moves a stopped process's pages and compares); a host
	 * compacting every few seconds stopped all reuse. A THP split on the
	 * way is thp_migration_split.
	 */
	{"thp_split_", REUSE_MOVES_ANON},	/* page, pmd, pud */
	{"thp_deferred_split_page", REUSE_MOVES_ANON},
	{"thp_underused_split_page", REUSE_MOVES_ANON},
	{"thp_collapse_alloc", REUSE_MOVES_ANON},	/* khugepaged, MADV_COLLAPSE */
	{"thp_migration_split", REUSE_MOVES_ANON},
	{"drop_pagecache", REUSE_MOVES_FILE},
	{"drop_slab", REUSE_MOVES_FILE},
};

static int
matches(const char *key, size_t len, const char *name)
{
	size_t		n = strlen(name);

	if (name[n - 1] == '_')
		return len > n && memcmp(key, name, n) == 0;
	return len == n && memcmp(key, name, n) == 0;
}

reuse_moves
reuse_moved_counter(const char *key, size_t len)
{
	for (size_t i = 0; i < sizeof(moved_counters) / sizeof(moved_counters[0]); i++)
		if (matches(key, len, moved_counters[i].name))
			return moved_counters[i].moves;
	return REUSE_MOVES_NONE;
}

void
reuse_sum_moved_by_kind(const char *buf, size_t len, uint64_t *anon, uint64_t *file)
{
	const char *p = buf;
	const char *end = buf + len;
	const char *line;
	size_t		llen;
	uint64_t	any = 0;
	int			by_kind = 0;

	*anon = *file = 0;
	while ((line = procfs_next_line(&p, end, &llen)) != NULL)
	{
		const char *sp = memchr(line, ' ', llen);
		reuse_moves moves;
		int64_t		v;

		/* the kernel counts reclaim by kind: its key is there, whatever its value */
		if (sp != NULL && matches(line, (size_t) (sp - line), "pgsteal_anon"))
			by_kind = 1;
		if (sp == NULL ||
			(moves = reuse_moved_counter(line, (size_t) (sp - line))) == REUSE_MOVES_NONE ||
			procfs_parse_int(sp + 1, llen - (size_t) (sp + 1 - line), &v) != 0 || v <= 0)
			continue;
		if (moves == REUSE_MOVES_ANON)
			*anon += (uint64_t) v;
		else if (moves == REUSE_MOVES_FILE)
			*file += (uint64_t) v;
		else
			any += (uint64_t) v;
	}
	/* reclaim's totals count file pages too: anon's own where the kernel has it */
	if (!by_kind)
		*anon += any;
}

uint64_t
reuse_sum_moved(const char *buf, size_t len)
{
	uint64_t	anon, file;

	reuse_sum_moved_by_kind(buf, len, &anon, &file);
	return anon + file;
}

procfs_result
reuse_read_moved(reuse_moved *m)
{
	char		buf[16384];
	size_t		len;
	procfs_result res = procfs_read_path("/proc/vmstat", buf, sizeof(buf), &len);

	if (res != PROCFS_OK)
		return res;
	reuse_sum_moved_by_kind(buf, len, &m->anon, &m->file);
	m->ksm_shared = sysmem_read_int("/sys/kernel/mm/ksm/pages_shared");
	m->ksm_sharing = sysmem_read_int("/sys/kernel/mm/ksm/pages_sharing");
	/* levels: a merge and an unmerge can leave them as they were; ksmd's work cannot */
	m->ksm_scanned = sysmem_read_int("/sys/kernel/mm/ksm/pages_scanned");
	if (m->ksm_scanned < 0)
		m->ksm_scanned = sysmem_read_int("/sys/kernel/mm/ksm/full_scans");
	return PROCFS_OK;
}

int
reuse_moved_equal(const reuse_moved *a, const reuse_moved *b)
{
	return reuse_anon_unmoved(a, b) && a->file == b->file;
}

int
reuse_anon_unmoved(const reuse_moved *a, const reuse_moved *b)
{
	return a->anon == b->anon && a->ksm_shared == b->ksm_shared &&
		a->ksm_sharing == b->ksm_sharing && a->ksm_scanned == b->ksm_scanned;
}

procfs_result
reuse_read_postmaster(pid_t pid, reuse_postmaster *pm)
{
	procfs_stat st;
	procfs_statm m;
	procfs_result res;

	if ((res = procfs_read_stat(pid, &st)) != PROCFS_OK ||
		(res = procfs_read_statm(pid, &m)) != PROCFS_OK)
		return res;
	pm->faults = st.faults;
	pm->anon = m.resident - m.shared;
	return PROCFS_OK;
}

int
reuse_postmaster_still(const reuse_postmaster *then, const reuse_postmaster *now)
{
	/*
	 * Faults and anonymous pages always: schedstat is the main thread's,
	 * and a thread of the postmaster (a preloaded library's) runs unseen
	 * there; stat's faults count every thread's.
	 */
	return now->faults == then->faults && now->anon == then->anon;
}

procfs_result
reuse_mark_take(pid_t pid, const procfs_stat *id, reuse_mark *mark)
{
	procfs_result res;
	int			has;

	memset(mark, 0, sizeof(*mark));
	mark->starttime = id->starttime;
	mark->threads = id->threads;
	mark->reaped = id->reaped;
	res = procfs_read_schedstat(pid, &mark->sched);
	if (res == PROCFS_OK)
		mark->childless = procfs_has_child(pid, &has) == PROCFS_OK && !has;
	return res;
}

/*
 * No child can have changed the process's pages: copy-on-write pages it
 * shares with a child become its own, without it running, when the child
 * writes them or exits. A child forked since the last read made it run
 * (schedstat); one there at that read is seen then, whatever became of it
 * (one that exited stays listed until reaped, but a parent that ignores
 * SIGCHLD leaves none to list). Reaping one, it ran; its cminflt, cutime
 * and cstime show that too.
 */
static int
no_child(const reuse_mark *then, const procfs_stat *id, const reuse_mark *now)
{
	return then->childless && now->childless &&
		id->reaped.cminflt == then->reaped.cminflt && id->reaped.cutime == then->reaped.cutime &&
		id->reaped.cstime == then->reaped.cstime;
}

int
reuse_process_unchanged(const reuse_mark *then, int64_t then_ms, const procfs_stat *id,
						const reuse_mark *now, int64_t now_ms)
{
	const procfs_schedstat *sched = &now->sched;

	/* a kernel without sched_info shows 0 0 0 for everyone: no proof there */
	return id->starttime == then->starttime &&
		id->state == 'S' && id->threads == 1 && then->threads == 1 &&
		sched->runtime_ns != 0 && sched->runtime_ns == then->sched.runtime_ns &&
		sched->timeslices == then->sched.timeslices && no_child(then, id, now) &&
		now_ms >= then_ms && now_ms - then_ms < REUSE_MAX_AGE_MS;
}
