/*
 * members.h
 *		Which processes belong to this PostgreSQL server.
 */
#ifndef PROCMEM_MEMBERS_H
#define PROCMEM_MEMBERS_H

#include <sys/types.h>

#include "linux/procfs.h"

struct PGPROC;

/*
 * The pid of the live process a PGPROC belongs to, or 0: a PGPROC keeps
 * the pid of an exited process before PostgreSQL 17, but not its latch.
 */
extern pid_t procmem_pgproc_live_pid(const struct PGPROC *proc);

/*
 * Whether this backend's /proc shows this server's processes; when it does
 * not, says why at elevel (ERROR: does not return).
 */
extern bool procmem_check_proc_visible(int elevel);

/*
 * Orders pids, or structs whose first member is a pid (pid_t is int32 on
 * Linux): for qsort() and bsearch().
 */
extern int	procmem_pid_cmp(const void *a, const void *b);

/*
 * Candidate pids, sorted and unique: the postmaster, every pid found in
 * ProcGlobal->allProcs, and the postmaster's children. A candidate is not
 * yet a member: a PGPROC can hold the pid of a backend that exited (before
 * PostgreSQL 17) which may since belong to any process. Membership is
 * settled per process by procmem_member().
 */
extern pid_t *procmem_candidates(int *n);

typedef enum procmem_membership
{
	MEMBER_NO = 0,				/* alive, not this server's */
	MEMBER_GONE,				/* no such live process */
	MEMBER_POSTMASTER,
	MEMBER_PGPROC,				/* a child with a PGPROC */
	MEMBER_CHILD,				/* a child without one (logger, ...) */
	MEMBER_HIDDEN				/* the postmaster or a child with a PGPROC,
								 * alive, whose /proc entry we cannot read */
} procmem_membership;

/* What membership checks compare with, read once per call. */
typedef struct procmem_members
{
	bool		pm_exe_known;
	uint64_t	pm_dev;			/* the postmaster's executable */
	uint64_t	pm_ino;
	pid_t	   *pgproc_pids;	/* sorted: pids holding a PGPROC now */
	int			n_pgproc;
} procmem_members;

/*
 * Reads what the checks compare with: the postmaster's executable, and the
 * pids that hold a PGPROC, in one pass over ProcGlobal (a lookup per pid
 * would scan the proc array once per process).
 */
extern void procmem_members_begin(procmem_members *m);
extern void procmem_members_end(procmem_members *m);

/* Whether pid held a PGPROC when procmem_members_begin() looked. */
extern bool procmem_has_pgproc(const procmem_members *m, pid_t pid);

/*
 * Whether pid is one of this server's processes now: the postmaster, or a
 * live child of it running the postmaster's executable (or, where that
 * cannot be read, holding a PGPROC). *id gets the identity (start time)
 * to compare once the process has been read. A process that is ours by
 * PostgreSQL's own records (the postmaster, a PGPROC) but whose /proc entry
 * is hidden from us (hidepid, a non-dumpable process) is MEMBER_HIDDEN:
 * still a row, with its memory unknown.
 */
extern procmem_membership procmem_member(const procmem_members *m, pid_t pid,
										  procfs_stat *id);

/*
 * backend_type for a process without a PGPROC, from its process title
 * (/proc/PID/cmdline): "logger", "stats collector", a bgworker's name, ...
 */
extern void procmem_title_type(const char *cmdline, size_t len, char *out, size_t outsz);

#endif							/* PROCMEM_MEMBERS_H */
