/*
 * guard_look.h
 *		A look of the guard's worker at the backends (guard_look.c): who may
 *		be acted on, what each holds, folded into groups with what the
 *		worker remembers of each (rules/guard_policy.h).
 */
#ifndef PROCMEM_GUARD_LOOK_H
#define PROCMEM_GUARD_LOOK_H

#include "utils/backend_status.h"

#include "rules/guard_policy.h"

/* every process's DSM is read this often; only parallel groups' between */
#define GUARD_DSM_FULL_MS		1000
#define GUARD_SHARED_KEPT		256

/* What the DSM reads keep between looks */
typedef struct guard_look_dsm
{
	int64		full_ms;		/* the last full read of the processes' DSM */
	uint64		shared[GUARD_SHARED_KEPT];	/* the segments it found shared */
	int			nshared;
} guard_look_dsm;

/* The client backends and their parallel workers, as one look found them */
typedef struct guard_look
{
	int			n;
	guard_candidate *cand;
	PgBackendStatus **status;	/* each candidate's */
	int			ngroups;
	guard_group *groups;		/* leaders with their workers, largest first */
	int			nothers;
	int32	   *others;			/* the other processes of pg_stat_activity (their DSM
								 * maps tell shared segments, read_group_dsm()) */
} guard_look;


/*
 * What each client backend and parallel worker holds, folded into groups
 * by leader (largest first), with what the worker remembers of each
 * (memory, at now). In the caller's transaction, whose snapshot of the
 * backends' status the look points into.
 */
extern void guard_look_at_backends(guard_look *look, guard_look_dsm *dsm, guard_memory *memory, int64 now);

/* The group a leader leads in a look; -1: not in it (gone) */
extern int	guard_look_group(const guard_look *look, int32 leader, int64 backend_start);

/* The status of group g's leader */
extern PgBackendStatus *guard_look_leader(const guard_look *look, int g);

/* What a group holds: its private memory and its own DSM */
extern int64 guard_look_total(const guard_group *g);

#endif							/* PROCMEM_GUARD_LOOK_H */
