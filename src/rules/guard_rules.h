/*
 * guard_rules.h
 *		The memory guard's decisions, in plain C (no PostgreSQL headers):
 *		when the server is over its threshold, whom to act on first, and the
 *		figure a backend holds.
 *
 * The guard's worker (guard_worker.c) cancels the statement of the client
 * backend that holds the most memory, a parallel query counting as one (its
 * leader and its workers), when the memory the kernel cannot reclaim passes
 * pg_procmem.guard_threshold of its limit; the per-backend limit
 * (guard_backend.c) cancels a backend's own statement past
 * pg_procmem.max_backend_memory. Both count what a backend *holds* the
 * same way: its anonymous resident memory, /proc/PID/statm's resident
 * minus shared pages (RssAnon): what ending its statement or its session
 * can give back. It is one short read, safe from a signal handler.
 */
#ifndef PROCMEM_GUARD_RULES_H
#define PROCMEM_GUARD_RULES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rules/pressure.h"

/*
 * What a backend holds, from the text of its /proc/PID/statm and the page
 * size: resident minus shared pages, in bytes; -1 when the text is not a
 * statm line. Async-signal-safe: no allocation, no locale, no libc state.
 */
extern int64_t guard_held_from_statm(const char *buf, size_t len, long page);

/* ... read from /proc/PID/statm now (the guard's worker); -1 when gone or unreadable */
extern int64_t guard_held_now(pid_t pid);

/*
 * Which source of a pressure reading is over threshold_pct of its limit
 * (the one with the largest share when several are), or -1. The server's
 * limit is its cgroup's (each level with one); the machine (source 0)
 * counts where no cgroup level has a limit, against its total, or where
 * limit_override (pg_procmem.guard_limit) is set, against that: the
 * machine's use is every program's, not the server's alone.
 */
extern int	guard_over(const pressure_reading *r, int threshold_pct, int64_t limit_override,
					   int64_t *used, int64_t *limit);

/* A process the guard may act on, as its worker found it (guard_worker.c) */
typedef struct guard_candidate
{
	int32_t		pid;
	int32_t		leader;			/* a parallel worker's leader; else its own pid */
	int64_t		held;			/* guard_held_now(); negative: unreadable */
	int			active;			/* running a statement */
} guard_candidate;

/* A leader and its parallel workers, counted as one */
typedef struct guard_group
{
	int32_t		leader;
	int			members;
	int64_t		held;			/* the sum of what its members hold (readable ones) */
	int			active;			/* its leader runs a statement */
} guard_group;

/*
 * Folds candidates into groups by leader, largest first (ties: lower pid
 * first); a worker whose leader is not among them is left out (the leader
 * is not a client backend, or is gone). Returns the number of groups, at
 * most n.
 */
extern int	guard_group_candidates(const guard_candidate *c, int n, guard_group *out);

/* "2.9 GB", "512 MB", "800 kB", "12 bytes": a size as a message says it */
extern void guard_format_bytes(char *buf, size_t size, int64_t bytes);

#endif							/* PROCMEM_GUARD_RULES_H */
