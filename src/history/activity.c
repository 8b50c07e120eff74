/*
 * activity.c
 *		Who each process of the server is, as pg_stat_activity shows it,
 *		for one sample of the memory history: a snapshot of the backend
 *		statuses, with the names they need from the catalogs.
 */
#include "server/compat.h"

#include "access/xact.h"
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/acl.h"
#include "utils/backend_status.h"
#include "utils/lsyscache.h"

#include "history/activity.h"
#include "server/members.h"

static const char *
state_name(BackendState s)
{
	switch (s)
	{
		case STATE_IDLE:
			return "idle";
		case STATE_RUNNING:
			return "active";
		case STATE_IDLEINTRANSACTION:
			return "idle in transaction";
		case STATE_FASTPATH:
			return "fastpath function call";
		case STATE_IDLEINTRANSACTION_ABORTED:
			return "idle in transaction (aborted)";
		case STATE_DISABLED:
			return "disabled";
		default:
			return "";
	}
}

/*
 * The names need the catalogs: a short transaction, which also ends the
 * backend status snapshot. The statement text is copied whatever the
 * settings say: whether it may be kept is each backend's own setting, read
 * after it (sample.c).
 */
procmem_activity *
procmem_activity_read(int *n)
{
	MemoryContext sample_cxt = CurrentMemoryContext;
	procmem_activity *all;
	int			nbackends;
	int			found = 0;

	StartTransactionCommand();
	/* what is kept must outlive the transaction's memory */
	MemoryContextSwitchTo(sample_cxt);
	nbackends = pgstat_fetch_stat_numbackends();
	all = palloc0(sizeof(procmem_activity) * Max(nbackends, 1));
	for (int i = 1; i <= nbackends; i++)
	{
		LocalPgBackendStatus *l = procmem_local_beentry(i);
		PgBackendStatus *b;
		procmem_activity *w;
		PGPROC	   *proc;
		const char *bgw_type;

		if (l == NULL || l->backendStatus.st_procpid <= 0)
			continue;
		b = &l->backendStatus;
		w = &all[found++];
		w->pid = b->st_procpid;
		w->backend_start = b->st_proc_start_timestamp;
		w->query_start = b->st_activity_start_timestamp;
		w->query_id = (int64) b->st_query_id;
		/* a background worker by its own type, as pg_stat_activity names it */
		bgw_type = b->st_backendType == B_BG_WORKER ? GetBackgroundWorkerTypeByPid(w->pid) : NULL;
		w->backend_type = pstrdup(bgw_type ? bgw_type : GetBackendTypeDesc(b->st_backendType));
		w->datname = OidIsValid(b->st_databaseid) ? get_database_name(b->st_databaseid) : NULL;
		w->usename = OidIsValid(b->st_userid) ? GetUserNameFromId(b->st_userid, true) : NULL;
		w->appname = pstrdup(b->st_appname);
		w->state = state_name(b->st_state);
		w->query = pgstat_clip_activity(b->st_activity_raw);
		/* a parallel worker's leader, as pg_stat_activity finds it */
		proc = b->st_backendType == B_BG_WORKER ? BackendPidGetProc(w->pid) : NULL;
		if (proc && proc->lockGroupLeader && proc->lockGroupLeader != proc)
			w->leader_pid = proc->lockGroupLeader->pid;
	}
	CommitTransactionCommand();
	MemoryContextSwitchTo(sample_cxt);
	qsort(all, found, sizeof(procmem_activity), procmem_pid_cmp);
	*n = found;
	return all;
}

const procmem_activity *
procmem_activity_find(const procmem_activity *all, int n, int32 pid)
{
	procmem_activity key = {.pid = pid};

	return bsearch(&key, all, n, sizeof(procmem_activity), procmem_pid_cmp);
}
