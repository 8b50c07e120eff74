/*
 * members.c
 *		Which processes belong to this PostgreSQL server.
 */
#include "server/compat.h"

#include <signal.h>

#include "storage/proc.h"
#include "utils/guc.h"

#include "linux/procfs.h"
#include "linux/reading.h"
#include "linux/titles.h"
#include "server/members.h"

bool
procmem_check_proc_visible(int elevel)
{
	procfs_stat self;

	/* PostmasterPid is 0 in a standalone backend: nothing to go by */
	if (!IsUnderPostmaster)
	{
		ereport(elevel,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("pg_procmem needs a running postmaster"),
				 errdetail("This is a single-user backend.")));
		return false;
	}
	if (procfs_read_stat(0, &self) != PROCFS_OK)
	{
		ereport(elevel,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("could not read /proc/self/stat"),
				 errhint("pg_procmem needs a mounted /proc.")));
		return false;
	}
	if (self.ppid != PostmasterPid)
	{
		ereport(elevel,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("/proc does not show this server's processes"),
				 errdetail("/proc/self/stat names parent %lld, but the postmaster is PID %d.",
						   (long long) self.ppid, (int) PostmasterPid),
				 errhint("Is /proc mounted from another PID namespace?")));
		return false;
	}
	return true;
}

int
procmem_pid_cmp(const void *a, const void *b)
{
	int32		x = *(const int32 *) a;
	int32		y = *(const int32 *) b;

	return (x > y) - (x < y);
}

pid_t *
procmem_candidates(int *n)
{
	uint32		nprocs = ProcGlobal->allProcCount;
	/* children: backends, auxiliary processes, dead-end and no-PGPROC ones */
	int			child_cap = 2 * (int) nprocs + 64;
	pid_t	   *pids = palloc((1 + nprocs + child_cap) * sizeof(pid_t));
	int			count = 0;
	int			nchildren;
	int			out;

	pids[count++] = PostmasterPid;
	for (uint32 i = 0; i < nprocs; i++)
	{
		/* an int read is atomic; a stale value is weeded out later */
		pid_t		pid = ProcGlobal->allProcs[i].pid;

		if (pid > 0)
			pids[count++] = pid;
	}
	nchildren = procfs_children(PostmasterPid, pids + count, child_cap);
	if (nchildren > 0)
		count += nchildren;

	qsort(pids, count, sizeof(pid_t), procmem_pid_cmp);
	out = 0;
	for (int i = 0; i < count; i++)
		if (out == 0 || pids[out - 1] != pids[i])
			pids[out++] = pids[i];
	*n = out;
	return pids;
}

/*
 * Whether a PGPROC belongs to a live process: its pid, and the latch the
 * process owns until it gives the PGPROC back (before PostgreSQL 17 the
 * pid stays in a PGPROC after its process has exited; the latch does not).
 * Plain int reads: a stale answer is caught by the identity checks.
 */
pid_t
procmem_pgproc_live_pid(const PGPROC *proc)
{
	pid_t		pid = proc->pid;

	return (pid > 0 && proc->procLatch.owner_pid == pid) ? pid : 0;
}

void
procmem_members_begin(procmem_members *m)
{
	uint32		nprocs = ProcGlobal->allProcCount;
	uint64_t	dev = 0, ino = 0;

	m->pm_exe_known = procfs_exe_id(PostmasterPid, &dev, &ino) == PROCFS_OK;
	m->pm_dev = dev;
	m->pm_ino = ino;

	m->pgproc_pids = palloc(Max(nprocs, 1) * sizeof(pid_t));
	m->n_pgproc = 0;
	for (uint32 i = 0; i < nprocs; i++)
	{
		pid_t		pid = procmem_pgproc_live_pid(&ProcGlobal->allProcs[i]);

		if (pid > 0)
			m->pgproc_pids[m->n_pgproc++] = pid;
	}
	qsort(m->pgproc_pids, m->n_pgproc, sizeof(pid_t), procmem_pid_cmp);
}

void
procmem_members_end(procmem_members *m)
{
	pfree(m->pgproc_pids);
	m->pgproc_pids = NULL;
	m->n_pgproc = 0;
}

bool
procmem_has_pgproc(const procmem_members *m, pid_t pid)
{
	return bsearch(&pid, m->pgproc_pids, m->n_pgproc, sizeof(pid_t), procmem_pid_cmp) != NULL;
}

/* Whether a live process holds a PGPROC with this pid, looked up now. */
static bool
pgproc_live_now(pid_t pid)
{
	for (uint32 i = 0; i < ProcGlobal->allProcCount; i++)
		if (procmem_pgproc_live_pid(&ProcGlobal->allProcs[i]) == pid)
			return true;
	return false;
}

/*
 * /proc would not show pid: is it nevertheless a live process of ours? The
 * postmaster, or a process holding a PGPROC, that exists (kill with signal
 * 0 sends nothing), still holding its PGPROC afterwards (so that its pid
 * was not given to another program in between).
 */
static bool
hidden_but_ours(const procmem_members *m, pid_t pid)
{
	if (pid != PostmasterPid && !procmem_has_pgproc(m, pid))
		return false;
	if (kill(pid, 0) != 0)
		return false;
	return pid == PostmasterPid || pgproc_live_now(pid);
}

procmem_membership
procmem_member(const procmem_members *m, pid_t pid, procfs_stat *id)
{
	uint64_t	dev, ino;
	bool		pgproc;
	procfs_result res;

	if (pid <= 0)
		return MEMBER_NO;
	res = procfs_read_stat(pid, id);
	if (res != PROCFS_OK)
		return hidden_but_ours(m, pid) ? MEMBER_HIDDEN : MEMBER_GONE;
	if (procfs_stat_dead(id))
		return MEMBER_GONE;
	if (pid == PostmasterPid)
		return MEMBER_POSTMASTER;
	if (id->ppid != PostmasterPid)
		return MEMBER_NO;

	pgproc = procmem_has_pgproc(m, pid);
	/* forked, never exec'd: the same executable as the postmaster */
	if (m->pm_exe_known)
	{
		res = procfs_exe_id(pid, &dev, &ino);
		if (res == PROCFS_GONE)
			return MEMBER_GONE;
		if (res == PROCFS_OK && (dev != m->pm_dev || ino != m->pm_ino))
			return MEMBER_NO;
		/* unreadable (not dumpable): only a PGPROC vouches for it */
		if (res != PROCFS_OK && !pgproc)
			return MEMBER_NO;
	}
	return pgproc ? MEMBER_PGPROC : MEMBER_CHILD;
}

void
procmem_title_type(const char *cmdline, size_t len, char *out, size_t outsz)
{
	titles_to_type(cmdline, len, cluster_name, PROCMEM_TITLE_FLAGS, out, outsz);
}
