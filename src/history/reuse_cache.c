/*
 * reuse_cache.c
 *		The sampler's cache of each process's last fresh read: a process
 *		that cannot have changed since (rules/reuse.h) keeps that read's
 *		figures at a fraction of its cost. pg_procmem.check_reuse, for the
 *		tests, reads every reusable process afresh too and logs how far
 *		the two differ.
 *
 * A sample reuses only while the server's and the machine's conditions
 * hold from the last sample to its start (procmem_reuse_begin()), and
 * what it reused stands only if they still hold at its walk's end, with
 * the same processes as the last sample (procmem_reuse_held()); else the
 * sampler reads the reused processes again.
 */
#include "server/compat.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "history/reuse_cache.h"

/* pg_procmem.sample_reuse; pg_procmem.check_reuse, for the tests */
static bool sample_reuse = true;
bool		procmem_check_reuse = false;

/* The last sample's reads, sorted by pid */
typedef struct reuse_state
{
	MemoryContext cxt;			/* lives as long as the sampler */
	procmem_cached *last;
	int			nlast;
	bool		valid;			/* last may serve the next sample */
	reuse_postmaster pm;		/* the postmaster, at the last sample */
	reuse_moved moved;			/* the machine's counters, likewise */
} reuse_state;

static reuse_state reuse;

void
procmem_reuse_cache_init(void)
{
	DefineCustomBoolVariable("pg_procmem.sample_reuse",
							 "Reuses a process's figures from the last sample when nothing can have changed them.",
							 NULL,
							 &sample_reuse, true,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("pg_procmem.check_reuse",
							 "Reads every reusable process afresh too, and logs how far the two differ (for the tests).",
							 NULL,
							 &procmem_check_reuse, false,
							 PGC_SIGHUP, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL, NULL, NULL, NULL);
}

void
procmem_reuse_cache_start(void)
{
	int			has;

	reuse.cxt = AllocSetContextCreate(TopMemoryContext, "pg_procmem reused figures", ALLOCSET_DEFAULT_SIZES);
	/* without the children files no process is ever childless (rules/reuse.h) */
	if (sample_reuse && procfs_has_child(getpid(), &has) != PROCFS_OK)
		ereport(LOG,
				(errmsg("pg_procmem reuses no process's figures: the kernel has no /proc/PID/task/TID/children"),
				 errdetail("Without it no process can be shown to have no child; every process is read in full at every sample."),
				 errhint("A kernel built with CONFIG_PROC_CHILDREN has it.")));
}

void
procmem_reuse_cache_forget(void)
{
	reuse.valid = false;
}

/*
 * The server's and the machine's conditions since the last sample: the
 * postmaster did not touch its memory, no anonymous page moved; where file
 * pages moved (reclaim of page cache), rss is read again. What it read is
 * what the next sample compares with.
 */
void
procmem_reuse_begin(procmem_reuse_pass *pass, int64 at_ms)
{
	reuse_postmaster pm;
	reuse_moved moved;
	bool		read = reuse_read_postmaster(PostmasterPid, &pm) == PROCFS_OK &&
		reuse_read_moved(&moved) == PROCFS_OK;
	bool		ok = read && sample_reuse && reuse.valid &&
		reuse_postmaster_still(&reuse.pm, &pm) && reuse_anon_unmoved(&moved, &reuse.moved);

	pass->at_ms = at_ms;
	pass->may_reuse = ok;
	pass->reread_rss = ok && !reuse_moved_equal(&moved, &reuse.moved);
	reuse.valid = false;		/* until this sample is kept for the next */
	if (read)
	{
		reuse.pm = pm;
		reuse.moved = moved;
	}
}

const procmem_cached *
procmem_reuse_find(const procmem_reuse_pass *pass, pid_t pid, procmem_membership kind,
				   const procfs_stat *id, reuse_mark *mark, bool *gone)
{
	procmem_cached key = {.pid = pid};
	const procmem_cached *c;
	procfs_result res;

	*gone = false;
	memset(mark, 0, sizeof(*mark));
	if (!sample_reuse)
		return NULL;
	/* taken before a fresh read: a run during it (a fork) shows at the next sample */
	res = reuse_mark_take(pid, id, mark);
	if (res == PROCFS_GONE)
		*gone = true;
	/*
	 * Never the postmaster: a child writing a page only it and the
	 * postmaster still share leaves the postmaster's copy exclusive, and
	 * children run all the time.
	 */
	if (res != PROCFS_OK || !pass->may_reuse || kind == MEMBER_POSTMASTER)
		return NULL;
	c = bsearch(&key, reuse.last, reuse.nlast, sizeof(procmem_cached), procmem_pid_cmp);
	if (c == NULL || c->dsm_n == PROCMEM_CACHED_NO_REUSE ||
		!reuse_process_unchanged(&c->mark, c->read_ms, id, mark, pass->at_ms))
		return NULL;
	return c;
}

void
procmem_reuse_remember(procmem_cached *c, const history_process *p, const char *title,
					   const dsm_mapped *mapped)
{
	c->overhead = p->overhead;
	c->private_anon = p->private_anon;
	c->page_tables = p->page_tables;
	c->rss = p->rss;
	c->swap = p->swap;
	strlcpy(c->title, title ? title : "", sizeof(c->title));
	if (mapped->n > PROCMEM_CACHED_DSM || mapped->more)
		c->dsm_n = PROCMEM_CACHED_NO_REUSE;
	else
	{
		c->dsm_n = mapped->n;
		for (int k = 0; k < mapped->n; k++)
		{
			c->dsm_id[k] = mapped->id[k];
			c->dsm_handle[k] = mapped->handle[k];
		}
	}
}

void
procmem_reuse_mapped(const procmem_cached *c, dsm_mapped *mapped)
{
	mapped->more = 0;
	mapped->n = c->dsm_n >= 0 ? c->dsm_n : -1;
	for (int k = 0; k < mapped->n; k++)
	{
		mapped->id[k] = c->dsm_id[k];
		mapped->handle[k] = c->dsm_handle[k];
	}
}

void
procmem_reuse_check_one(procmem_reuse_pass *pass, int32 pid, const procmem_cached *c,
						const history_process *p)
{
	const int64 was[] = {c->overhead, c->private_anon, c->page_tables, c->rss, c->swap};
	const int64 is[] = {p->overhead, p->private_anon, p->page_tables, p->rss, p->swap};
	static const char *const names[] = {"overhead", "private_anon", "page_tables", "rss", "swap"};
	procmem_reuse_check *k = &pass->check;
	int64		worst = 0;
	int			w = 0;

	for (int i = 0; i < lengthof(was); i++)
	{
		int64		d = was[i] > is[i] ? was[i] - is[i] : is[i] - was[i];

		if (d > worst)
		{
			worst = d;
			w = i;
		}
	}
	k->checked++;
	k->over_8k += worst > 8192;
	k->over_64k += worst > 65536;
	if (worst > k->largest)
	{
		k->largest = worst;
		k->largest_pid = pid;
		k->largest_field = names[w];
	}
}

/* The same processes as the last sample, none started or exited (pid and start time) */
static bool
same_members(const procmem_reuse_pass *pass, uint32 n)
{
	if (n - 1 != (uint32) reuse.nlast)
		return false;
	for (uint32 i = 1; i < n; i++)
		if (pass->reads[i].pid != reuse.last[i - 1].pid ||
			pass->reads[i].mark.starttime != reuse.last[i - 1].mark.starttime)
			return false;
	return true;
}

/*
 * Whether the server's and the machine's conditions still hold at the
 * walk's end as at its start: the postmaster and the counters as
 * procmem_reuse_begin() read them, and every process visited still the
 * postmaster's child (one that exited after its visit may have left a page
 * to a sibling visited later).
 */
static bool
held_through_walk(const procmem_reuse_pass *pass, const history_entry *e, uint32 n)
{
	reuse_postmaster pm;
	reuse_moved moved;
	pid_t	   *children;
	int			nchildren;
	bool		held;

	if (reuse_read_postmaster(PostmasterPid, &pm) != PROCFS_OK ||
		reuse_read_moved(&moved) != PROCFS_OK ||
		!reuse_postmaster_still(&reuse.pm, &pm) || !reuse_anon_unmoved(&moved, &reuse.moved))
		return false;
	children = palloc(sizeof(pid_t) * (n + 64));
	nchildren = procfs_children(PostmasterPid, children, (int) n + 64);
	held = nchildren >= 0;
	if (held)
		qsort(children, nchildren, sizeof(pid_t), procmem_pid_cmp);
	for (uint32 i = 1; held && i < n; i++)
		held = e[i].pid == PostmasterPid || pass->kinds[i] == MEMBER_HIDDEN ||
			bsearch(&e[i].pid, children, nchildren, sizeof(pid_t), procmem_pid_cmp) != NULL;
	pfree(children);
	return held;
}

bool
procmem_reuse_held(const procmem_reuse_pass *pass, const history_entry *e, uint32 n)
{
	return !pass->may_reuse || (same_members(pass, n) && held_through_walk(pass, e, n));
}

void
procmem_reuse_end(const procmem_reuse_pass *pass, uint32 n, bool held)
{
	const procmem_reuse_check *k = &pass->check;

	if (procmem_check_reuse && k->checked > 0 && held)
		ereport(LOG,
				(errmsg("pg_procmem reuse check: %d reusable, %d more than 8 kB off, %d more than 64 kB off, largest %lld bytes (pid %d, %s)",
						k->checked, k->over_8k, k->over_64k,
						(long long) k->largest, k->largest_pid,
						k->largest_field ? k->largest_field : "-")));
	if (reuse.last)
		pfree(reuse.last);
	reuse.nlast = (int) n - 1;
	reuse.last = MemoryContextAlloc(reuse.cxt, sizeof(procmem_cached) * Max(reuse.nlast, 1));
	memcpy(reuse.last, pass->reads + 1, sizeof(procmem_cached) * reuse.nlast);
	/* checking, the reads kept are not those read again: the next reads all */
	reuse.valid = held || !procmem_check_reuse;
}
