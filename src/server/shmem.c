/*
 * shmem.c
 *		pg_procmem's structs in shared memory, requested together from
 *		shmem_request_hook (at once on 14: compat.h) and created or attached
 *		together from shmem_startup_hook, under AddinShmemInitLock as every
 *		add-in's.
 */
#include "server/compat.h"

#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "server/shmem.h"

/*
 * contexts.c, connections.c, history_ring.c, oom_clock.c, crashes.c,
 * history_file.c, guard_store.c; one to spare
 */
#define MAX_PARTS 8

static const procmem_shmem_part *parts[MAX_PARTS];
static int	nparts = 0;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	for (int i = 0; i < nparts; i++)
	{
		RequestAddinShmemSpace(parts[i]->size());
		if (parts[i]->lwlocks > 0)
			RequestNamedLWLockTranche(parts[i]->name, parts[i]->lwlocks);
	}
}

/*
 * The first process to get here (the postmaster) creates each struct; any
 * other attaches to it. What a part does next runs outside the lock.
 */
static void
shmem_startup(void)
{
	void	   *part[MAX_PARTS];
	bool		found[MAX_PARTS];

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	for (int i = 0; i < nparts; i++)
	{
		part[i] = ShmemInitStruct(parts[i]->name, parts[i]->size(), &found[i]);
		if (!found[i])
			parts[i]->init(part[i]);
	}
	LWLockRelease(AddinShmemInitLock);
	for (int i = 0; i < nparts; i++)
		parts[i]->attached(part[i], found[i]);
}

void
procmem_shmem_register(const procmem_shmem_part *part)
{
	if (nparts >= MAX_PARTS)
		elog(ERROR, "more shared memory parts than MAX_PARTS");
	parts[nparts++] = part;
}

void
procmem_shmem_install(void)
{
	if (nparts == 0)
		return;					/* not preloaded: no shared memory */
	procmem_request_shmem(shmem_request, &prev_shmem_request_hook);
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = shmem_startup;
}

void
procmem_shmem_missing(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("pg_procmem must be loaded via \"shared_preload_libraries\""),
			 errdetail("Other backends' memory contexts and the memory history are kept in shared memory, which only a preloaded pg_procmem sets up."),
			 errhint("Add pg_procmem to shared_preload_libraries and restart the server.")));
}
