/*
 * dsm_segments.c
 *		This server's DSM segments, and its processes' parallel groups.
 */
#include "server/compat.h"

#include <unistd.h>

#include "miscadmin.h"
#include "storage/dsm_impl.h"
#include "storage/pg_shmem.h"
#include "storage/proc.h"

#include "server/dsm_segments.h"
#include "server/members.h"

static void
free_table(void *arg)
{
	dsm_table_free((dsm_table *) arg);
}

bool
procmem_dsm_table_read(dsm_table *t)
{
	MemoryContextCallback *cb;
	dsm_kind	kind;
	const char *dir = NULL;
	const char *prefix = NULL;

	memset(t, 0, sizeof(*t));
	t->dirfd = -1;
	switch (dynamic_shared_memory_type)
	{
		case DSM_IMPL_POSIX:
			kind = DSM_KIND_POSIX;
			dir = "/dev/shm";
			prefix = "PostgreSQL.";
			break;
		case DSM_IMPL_SYSV:
			kind = DSM_KIND_SYSV;
			break;
		case DSM_IMPL_MMAP:
			kind = DSM_KIND_MMAP;
			/* the data directory is the working directory: ours alone */
			dir = PG_DYNSHMEM_DIR;
			prefix = PG_DYNSHMEM_MMAP_FILE_PREFIX;
			break;
		default:
			return false;
	}
	/* malloc'd (plain C) and learned into during the walk: freed with the context, an ERROR too */
	cb = palloc(sizeof(MemoryContextCallback));
	cb->func = free_table;
	cb->arg = t;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, cb);
	/* the main segment's small System V segment (its key: UsedShmemSegID) is not a DSM segment */
	return dsm_table_read(t, kind, dir, prefix, geteuid(), (int64_t) (uint32) UsedShmemSegID) == 0;
}

procmem_leader *
procmem_leaders(int *n)
{
	uint32		nprocs = ProcGlobal->allProcCount;
	procmem_leader *l = palloc(sizeof(procmem_leader) * Max(nprocs, 1));
	int			count = 0;

	for (uint32 i = 0; i < nprocs; i++)
	{
		PGPROC	   *proc = &ProcGlobal->allProcs[i];
		/* as pg_stat_activity reads it: unlocked, a stale value is harmless */
		PGPROC	   *leader = proc->lockGroupLeader;
		pid_t		pid = proc->pid;
		pid_t		lpid;

		if (pid <= 0 || leader == NULL || leader == proc)
			continue;
		lpid = leader->pid;
		if (lpid <= 0 || lpid == pid)
			continue;
		l[count].pid = pid;
		l[count].leader = lpid;
		count++;
	}
	qsort(l, count, sizeof(procmem_leader), procmem_pid_cmp);
	*n = count;
	return l;
}

int32
procmem_group_of(const procmem_leader *l, int n, int32 pid)
{
	procmem_leader key = {pid, 0};
	const procmem_leader *found = n > 0 ?
		bsearch(&key, l, n, sizeof(procmem_leader), procmem_pid_cmp) : NULL;

	return found ? found->leader : pid;
}
