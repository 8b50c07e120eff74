/*
 * guard.h
 *		The memory guard: cancels the statement holding the most memory
 *		before the server reaches its limit (its worker, guard_worker.c),
 *		and a backend's own limit (guard_backend.c); the requests and
 *		actions they share live in guard_store.c. docs/guard.md says what it
 *		does and what it cannot do.
 */
#ifndef PROCMEM_GUARD_H
#define PROCMEM_GUARD_H

#include "rules/history_format.h"

/* What the guard asked of a backend, until that backend reports it */
typedef struct guard_request
{
	int32		pid;			/* 0: a free entry */
	int32		what;			/* GUARD_CANCEL or GUARD_TERMINATE */
	TimestampTz asked_at;		/* its action's at */
	int64		held;			/* what was compared: a cancel's statement, a terminate's session */
	int64		dsm;			/* ... of which its group's own dynamic shared memory */
	int64		sessions;		/* what sessions held between statements then */
	int32		session_pid;	/* the largest of them (not the one asked); 0: none */
	int64		session_held;
	int64		used;
	int64		limit;
	int32		threshold_pct;
	int32		source;			/* pressure_source_kind */
	int32		processes;		/* the leader and its parallel workers */
} guard_request;

/* The actions kept in shared memory (and in a rewritten history file) */
#define GUARD_ACTIONS_KEPT	128

/* Settings, shared memory and the log hook; from _PG_init. */
extern void procmem_guard_init(void);
extern void procmem_guard_backend_init(void);

/*
 * From the sampler's loop: starts the guard's worker when pg_procmem.guard
 * is on (or dry_run) and none runs; it stops by itself when turned off.
 */
extern void procmem_guard_ensure_worker(void);

/*
 * The request the guard made of this backend (pid) for this kind of
 * error, if any, taken out of the list: true when there was one, asked
 * after stmt_start (the statement's start; for a terminate, the backend's)
 * and within the last 10 s.
 */
extern bool guard_take_request(int32 pid, int32 what, TimestampTz stmt_start, guard_request *out);

/* Keeps an action (number set here, returned); 0 when not preloaded. */
extern int64 guard_record_action(history_guard_action *a);

/* How much an action's process gave back, once measured (pid and at name the action) */
extern void guard_set_given_back(int32 pid, TimestampTz at, int64 bytes);

/*
 * The actions kept, oldest first, copied into out (room for
 * GUARD_ACTIONS_KEPT): how many, or -1 when not preloaded.
 */
extern int	guard_copy_actions(history_guard_action *out);

/* --- the history file (history_file.c, the sampler) --- */

/* An action the file held, as loaded: in place of one with its pid and at */
extern void guard_load_action(const history_guard_action *a);

/*
 * Up to max actions the file needs: new ones, and those whose given-back
 * figure is now known for good (all: every action kept, for a rewrite).
 * Each is marked as written.
 */
extern int	guard_take_unwritten(history_guard_action *out, int max, bool all);

#endif							/* PROCMEM_GUARD_H */
