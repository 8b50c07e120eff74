/*
 * guard_look.c
 *		What the guard's worker reads of the backends at a look (guard_look.h):
 *		each client backend's and parallel worker's status and private
 *		memory, and each group's own dynamic shared memory.
 */
#include "server/compat.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/backend_status.h"

#include "guard/guard_look.h"
#include "rules/dsm_groups.h"
#include "rules/guard_rules.h"
#include "server/dsm_segments.h"
#include "server/settings.h"


static guard_kind
kind_of(PgBackendStatus *st, int32 *leader)
{
	PGPROC	   *proc;

	*leader = st->st_procpid;
	switch (st->st_backendType)
	{
		case B_BACKEND:
			return GUARD_KIND_CLIENT;
		case B_AUTOVAC_LAUNCHER:
		case B_AUTOVAC_WORKER:
			return GUARD_KIND_AUTOVACUUM;
		case B_WAL_SENDER:
			return GUARD_KIND_WALSENDER;
		case B_BG_WORKER:
			/* a parallel worker counts with its leader; other workers never */
			proc = BackendPidGetProc(st->st_procpid);
			if (proc == NULL || proc->lockGroupLeader == NULL || proc->lockGroupLeader == proc)
				return GUARD_KIND_BGWORKER;
			*leader = proc->lockGroupLeader->pid;
			return GUARD_KIND_PARALLEL;
		default:
			return GUARD_KIND_OTHER;
	}
}

static guard_state
state_of(const PgBackendStatus *st)
{
	switch (st->st_state)
	{
		case STATE_RUNNING:
		case STATE_FASTPATH:
			return GUARD_STATE_RUNNING;
		case STATE_IDLE:
			return GUARD_STATE_IDLE;
		case STATE_IDLEINTRANSACTION:
		case STATE_IDLEINTRANSACTION_ABORTED:
			return GUARD_STATE_IDLE_IN_XACT;
		default:
			return GUARD_STATE_OTHER;
	}
}

/*
 * Each group's own dynamic shared memory (rules/dsm_groups.h): the
 * segments mapped by its processes alone. This worker, and at the full
 * reads every other process of pg_stat_activity (the sampler, autovacuum,
 * the launchers), count as groups of their own: what they map too (the
 * control segment, the statistics area's) is shared, even where one
 * parallel query runs alone.
 *
 * Reading a process's segments costs about 20 us (PROCMAP_QUERY), so every
 * process's are read once a second (a full read); at the looks between,
 * only those of parallel groups (a leader and its workers: where a
 * statement's DSM grows), with the segments the full read found shared
 * passed back as a group of their own. The others' figures are then left
 * unread (-1), and guard_memory_apply() keeps their last.
 */
static void
read_group_dsm(guard_look_dsm *gw, guard_look *look, int64 now)
{
	dsm_table  *t = palloc0(sizeof(dsm_table));	/* freed with the transaction (dsm_segments.h) */
	bool		full = now - gw->full_ms >= GUARD_DSM_FULL_MS;
	int			extra = full ? 1 + look->nothers : 1 + (gw->nshared + DSM_MAX_MAPPED - 1) / DSM_MAX_MAPPED;
	dsm_member *members = palloc0(sizeof(dsm_member) * (look->n + extra));
	dsm_mapped *mapped = palloc0(sizeof(dsm_mapped) * (look->n + extra));
	int		   *index = palloc(sizeof(int) * (look->n + extra));
	bool	   *parallel = palloc0(sizeof(bool) * Max(look->n, 1));
	int64	   *bytes;
	int64	   *own;
	dsm_totals	totals;
	int			n = 0;

	for (int i = 0; i < look->n; i++)
		look->cand[i].group_dsm = -1;
	if (!procmem_dsm_table_read(t))
	{
		for (int i = 0; i < look->n; i++)
			look->cand[i].group_dsm = 0;
		return;
	}
	/* the processes of parallel groups: the workers, and their leaders */
	for (int i = 0; i < look->n; i++)
		if (look->cand[i].kind == GUARD_KIND_PARALLEL)
		{
			parallel[i] = true;
			for (int j = 0; j < look->n; j++)
				if (look->cand[j].pid == look->cand[i].leader)
					parallel[j] = true;
		}
	for (int i = 0; i <= look->n; i++)
	{
		pid_t		pid = i < look->n ? look->cand[i].pid : 0;

		if (i < look->n && !full && !parallel[i])
			continue;
		if (dsm_read_mapped(pid, t, &mapped[n], procmem_pagemap_ioctls) != PROCFS_OK)
			mapped[n].n = -1;
		members[n].group = i < look->n ? look->cand[i].leader : MyProcPid;
		members[n].mapped = &mapped[n];
		index[n++] = i;
	}
	if (full)
	{
		int			found;

		/* the others (the sampler, autovacuum, the launchers...), each a group of its own */
		for (int i = 0; i < look->nothers; i++)
		{
			if (dsm_read_mapped(look->others[i], t, &mapped[n], procmem_pagemap_ioctls) != PROCFS_OK)
				continue;
			members[n].group = look->others[i];
			members[n].mapped = &mapped[n];
			index[n++] = -1;
		}
		found = dsm_shared_ids(members, n, gw->shared, GUARD_SHARED_KEPT);

		gw->nshared = Max(found, 0);
		gw->full_ms = now;
	}
	else
		for (int k = 0; k < gw->nshared; k += DSM_MAX_MAPPED)
		{
			mapped[n].n = Min(DSM_MAX_MAPPED, gw->nshared - k);
			memcpy(mapped[n].id, &gw->shared[k], sizeof(uint64) * mapped[n].n);
			members[n].group = -2;	/* no pid's: the segments found shared */
			members[n].mapped = &mapped[n];
			index[n++] = -1;
		}
	bytes = palloc0(sizeof(int64) * Max(n, 1));
	own = palloc0(sizeof(int64) * Max(n, 1));
	if (dsm_groups_sum(t, members, n, bytes, own, &totals, NULL) != 0)
		return;
	for (int k = 0; k < n; k++)
		if (index[k] >= 0 && index[k] < look->n)
			look->cand[index[k]].group_dsm = own[k] > 0 ? own[k] : 0;
}

/*
 * What each client backend and parallel worker holds, folded into groups
 * by leader, with what the worker remembers of each (guard_policy.h) and
 * what it signalled. In the worker's transaction, whose snapshot of the
 * backends' status the look points into.
 */
void
guard_look_at_backends(guard_look *look, guard_look_dsm *dsm, guard_memory *memory, int64 now)
{
	int			nback = pgstat_fetch_stat_numbackends();

	look->n = 0;
	look->cand = palloc0(sizeof(guard_candidate) * Max(nback, 1));
	look->status = palloc0(sizeof(PgBackendStatus *) * Max(nback, 1));
	look->groups = palloc0(sizeof(guard_group) * Max(nback, 1));
	look->nothers = 0;
	look->others = palloc0(sizeof(int32) * Max(nback, 1));
	for (int i = 1; i <= nback; i++)
	{
		LocalPgBackendStatus *l = procmem_local_beentry(i);
		PgBackendStatus *st;
		guard_candidate *c;

		if (l == NULL || l->backendStatus.st_procpid <= 0)
			continue;
		st = &l->backendStatus;
		c = &look->cand[look->n];
		c->kind = kind_of(st, &c->leader);
		if (!guard_may_act_on(c->kind))
		{
			look->others[look->nothers++] = st->st_procpid;
			continue;
		}
		c->pid = st->st_procpid;
		c->state = state_of(st);
		c->held = guard_held_now(st->st_procpid);
		c->backend_start = st->st_proc_start_timestamp;
		c->statement = st->st_activity_start_timestamp;
		look->status[look->n] = st;
		look->n++;
	}
	read_group_dsm(dsm, look, now);
	look->ngroups = guard_group_candidates(look->cand, look->n, look->groups);
	(void) guard_memory_apply(memory, look->groups, look->ngroups, now);
}

/* The group a leader leads in a look; -1: not in it (gone) */
int
guard_look_group(const guard_look *look, int32 leader, int64 backend_start)
{
	for (int g = 0; g < look->ngroups; g++)
		if (look->groups[g].leader == leader && look->groups[g].backend_start == backend_start)
			return g;
	return -1;
}

/* The status of group g's leader */
PgBackendStatus *
guard_look_leader(const guard_look *look, int g)
{
	for (int i = 0; i < look->n; i++)
		if (look->cand[i].pid == look->groups[g].leader)
			return look->status[i];
	return NULL;
}

int64
guard_look_total(const guard_group *g)
{
	return g->held + g->dsm;
}

