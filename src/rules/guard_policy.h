/*
 * guard_policy.h
 *		The memory guard's policy, in plain C (no PostgreSQL headers): whom
 *		it may act on, what each statement and each session holds, which is
 *		growing, and the one action to take at a look. The worker
 *		(guard_worker.c) only reads the figures and acts; docs/guard.md says
 *		the policy in words.
 *
 * Over the threshold, what the server uses is made of statements (what a
 * cancel gives back), sessions (what a backend holds between statements:
 * temp_buffers, caches, a transaction left open; only its end gives it
 * back) and everything else. So each group (a client backend and its
 * parallel workers) has two parts:
 *
 *	statement	while it runs one: its private memory beyond what the
 *				session held when last seen between statements, plus the
 *				group's own dynamic shared memory (a parallel hash join's
 *				hash table), never the DSM several groups share
 *	session		what its backend held when last seen between statements
 *				(idle: all it holds)
 *
 * A statement is *innocent* when it is not growing and its cancel would not
 * bring the use under the threshold: it is never canceled. Below the
 * critical level, a statement holding less than an eighth of the largest
 * holder is spared too (a DBA's query while an idle session holds 1 GB); at
 * the critical level (or when the growth reaches the limit within
 * pg_procmem.guard_lookahead) that rule is off, and a growing statement is
 * worth a cancel from GUARD_CRITICAL_FLOOR on, in a session the guard has
 * not canceled before (a session that holds memory between small
 * statements is not canceled again and again). Sessions are ended only
 * where pg_procmem.guard_terminate allows it, never one whose running
 * statement a cancel would stop, and never one twice. A statement that
 * defied its cancel (a handler caught it, and it grew on) is canceled
 * again, or at the critical level ended, guard_terminate or not: nothing
 * else stops it.
 *
 * While signalled backends give memory back (pending), the guard acts again
 * only if the use minus what they still hold is over the threshold, or, at
 * the critical level, on a statement still growing.
 */
#ifndef PROCMEM_GUARD_POLICY_H
#define PROCMEM_GUARD_POLICY_H

#include <stdint.h>

/* A statement or a session holding less is never acted on (a backend holds a few MB at rest) */
#define GUARD_MIN_HELD		((int64_t) 16 * 1024 * 1024)
/* ... nor, below the critical level, a statement under this fraction of the largest holder */
#define GUARD_SMALLER		8
/* at the critical level, a growing statement holding this much is worth a cancel (170 growing to 10 MB each) */
#define GUARD_CRITICAL_FLOOR	((int64_t) 4 * 1024 * 1024)
/* a statement that grew less than this over the last second is not growing */
#define GUARD_GROWING_BYTES	((int64_t) 1024 * 1024)
/* growth is measured over the looks of the last second, at least this long */
#define GUARD_GROWTH_WINDOW_MS	1000
#define GUARD_GROWTH_MIN_MS		200

/* What a process is, as the worker maps PostgreSQL's backend types */
typedef enum guard_kind
{
	GUARD_KIND_OTHER = 0,		/* auxiliary processes, the postmaster */
	GUARD_KIND_CLIENT,			/* a client backend */
	GUARD_KIND_PARALLEL,		/* a parallel worker (of a leader) */
	GUARD_KIND_AUTOVACUUM,		/* an autovacuum worker or launcher */
	GUARD_KIND_WALSENDER,
	GUARD_KIND_BGWORKER			/* another background worker */
} guard_kind;

/* Whether the guard may act on (or count with its leader) a process of this kind */
extern int	guard_may_act_on(guard_kind kind);

/* What a backend is doing, from its status */
typedef enum guard_state
{
	GUARD_STATE_OTHER = 0,		/* starting, disabled, unknown */
	GUARD_STATE_RUNNING,		/* a statement (or a fast-path call) */
	GUARD_STATE_IDLE,
	GUARD_STATE_IDLE_IN_XACT	/* in a transaction (aborted too) */
} guard_state;

/* A process the guard may act on, as its worker found it */
typedef struct guard_candidate
{
	int32_t		pid;
	int32_t		leader;			/* a parallel worker's leader; else its own pid */
	guard_kind	kind;
	guard_state state;			/* its leader's is the group's */
	int64_t		held;			/* guard_held_now(); negative: unreadable */
	int64_t		backend_start;	/* opaque: a pid reused is another backend */
	int64_t		statement;		/* opaque: its statement's start (a new one, another) */
	int64_t		group_dsm;		/* its group's own dynamic shared memory (dsm_groups.h);
								 * -1: not read at this look */
} guard_candidate;

/* A leader and its parallel workers, counted as one */
typedef struct guard_group
{
	int32_t		leader;
	int			members;
	guard_state state;			/* its leader's */
	int64_t		held;			/* private: the sum of what its members hold (readable ones) */
	int64_t		dsm;			/* its own dynamic shared memory; 0: none or unknown;
								 * -1: not read at this look (guard_memory_apply()
								 * sets its last) */
	int64_t		backend_start;	/* its leader's */
	int64_t		statement;
	/* from guard_memory_apply() */
	int64_t		baseline;		/* the leader's private memory between statements; -1: never seen so */
	int64_t		grew;			/* held + dsm, over the last second of its statement */
	int			growth_known;	/* grew is over GUARD_GROWTH_MIN_MS at least */
	int			cancels;		/* the guard's cancels of this backend's statements so far */
	/* from the worker's follow of what it signalled */
	int			canceled;		/* this statement, already */
	int			defied;			/* ... settled, no worker left, and it grew
								 * GUARD_MIN_HELD past what it held then (a handler
								 * caught the cancel) */
	int			ended;			/* this session, already */
	int			settling;		/* signalled, still giving back */
} guard_group;

/*
 * Folds candidates into groups by leader, largest (held + dsm) first (ties:
 * lower pid first); a worker whose leader is not among them is left out
 * (the leader is not a client backend, or is gone), and so is every process
 * the guard may not act on. Returns the number of groups, at most n; each
 * group's remaining fields are zero.
 */
extern int	guard_group_candidates(const guard_candidate *c, int n, guard_group *out);

/* What cancelling the group's statement gives back (0: it runs none) */
extern int64_t guard_statement_part(const guard_group *g);

/* What ending the session gives back beyond a running statement: what it holds between them */
extern int64_t guard_session_part(const guard_group *g);

/*
 * What the worker remembers of each backend across looks: what it held
 * between statements, and a point about a second back for its statement's
 * growth.
 */
typedef struct guard_seen
{
	int32_t		pid;
	int64_t		backend_start;
	int64_t		baseline;		/* -1: never seen between statements */
	int64_t		statement;		/* the statement the points are of */
	int64_t		ref_ms, ref_total;	/* the older point */
	int64_t		mid_ms, mid_total;	/* the newer one */
	int			ref_is_baseline;	/* the older point is the session's baseline (the
									 * statement's start) */
	int64_t		seen_ms;
	int64_t		dsm;			/* its group's own DSM, as last read */
	int			cancels;
} guard_seen;

typedef struct guard_memory
{
	guard_seen *seen;			/* malloc'd: guard_memory_free() */
	int			n;
	int			cap;
	int64_t		last_look_ms;	/* the look before; 0: none */
} guard_memory;

/*
 * At a look at now_ms (monotonic): remembers each group's figures, and sets
 * its baseline, grew and growth_known, and its dsm where it was not read at
 * this look (-1: its last read's, else 0); backends not seen for 10 s are
 * forgotten. A backend that was not there at a look less than
 * GUARD_GROWTH_WINDOW_MS before grew all it holds since: a new connection's
 * statement is growing from its first look. Returns -1 when out of memory
 * (the groups' growth unknown).
 */
extern int	guard_memory_apply(guard_memory *m, guard_group *g, int n, int64_t now_ms);

/* A cancel of one of its statements (a session canceled once is not again for small ones) */
extern void guard_memory_note_cancel(guard_memory *m, int32_t pid, int64_t backend_start);

/* After a cancel settled: what the backend still holds is its session's */
extern void guard_memory_set_baseline(guard_memory *m, int32_t pid, int64_t backend_start, int64_t held);
extern void guard_memory_free(guard_memory *m);

/* The server's memory at a look, as the guard weighs it */
typedef struct guard_situation
{
	int64_t		used;			/* the source over its threshold: what cannot be reclaimed */
	int64_t		limit;
	int			threshold_pct;
	int			critical;		/* at the critical level, or the limit within the lookahead */
	int64_t		pending;		/* what signalled backends still hold, soon given back */
	int			terminate;		/* pg_procmem.guard_terminate */
} guard_situation;

typedef enum guard_verdict
{
	GUARD_UNDER = 0,			/* under the threshold: nothing to do */
	GUARD_WAIT,					/* what signalled backends give back brings it under */
	GUARD_DO_CANCEL,			/* the statement of group */
	GUARD_DO_TERMINATE,			/* the session of group */
	GUARD_NOTHING_WORTH			/* over, with nothing the guard may act on */
} guard_verdict;

typedef struct guard_decision
{
	guard_verdict verdict;
	int			group;			/* the group acted on; -1 */
	int64_t		worth;			/* the smallest statement worth a cancel now */
	int			largest_running;	/* the running statement holding the most; -1 */
	int			largest_session;	/* the session holding the most between statements; -1 */
	int64_t		sessions;		/* what sessions hold between statements, each of
								 * GUARD_MIN_HELD or more */
	int			growth_unknown;	/* a statement's growth is not known yet: look again soon */
} guard_decision;

/* The one action to take at a look, over n groups (as guard_memory_apply() set them) */
extern void guard_decide(const guard_situation *s, const guard_group *g, int n, guard_decision *d);

/* The critical level for a threshold: halfway from it to the limit (90%: 95%) */
extern int	guard_critical_pct(int threshold_pct);

#endif							/* PROCMEM_GUARD_POLICY_H */
