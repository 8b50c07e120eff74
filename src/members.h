/*
 * members.h
 *		Which processes belong to this PostgreSQL server.
 */
#ifndef PROCMEM_MEMBERS_H
#define PROCMEM_MEMBERS_H

#include <sys/types.h>

/* Errors out unless this backend's /proc shows this server's processes. */
extern void procmem_check_proc_visible(void);

/*
 * Candidate pids, sorted and unique: the postmaster, every pid found in
 * ProcGlobal->allProcs, and the postmaster's children. A candidate is not
 * yet a member: a PGPROC can hold the pid of a backend that exited (before
 * PostgreSQL 17) which may since belong to any process. Membership is
 * settled per process by procmem_sample_read()'s parent check.
 */
extern pid_t *procmem_candidates(int *n);

/* True when pid is the postmaster or a live child of it. */
extern bool procmem_is_member(pid_t pid);

/* True when pid has a PGPROC (so pg_stat_activity knows its type). */
extern bool procmem_has_pgproc(pid_t pid);

/*
 * backend_type for a process without a PGPROC, from its process title into
 * out: "logger", "stats collector", a bgworker's name, ...
 */
extern void procmem_title_type(pid_t pid, char *out, size_t outsz);

#endif							/* PROCMEM_MEMBERS_H */
