/*
 * guard_rules.h
 *		The memory guard's decisions, in plain C (no PostgreSQL headers):
 *		when the server is over its threshold, the figure a backend holds,
 *		which request is a statement's, and when a signalled backend settled.
 *
 * The guard's worker (guard_worker.c) acts when the memory the kernel
 * cannot reclaim passes pg_procmem.guard_threshold of its limit (whom it
 * acts on: guard_policy.h); the per-backend limit (guard_backend.c)
 * cancels a backend's own statement past pg_procmem.max_backend_memory.
 * Both count what a backend *holds* the same way: its anonymous resident memory, /proc/PID/statm's resident
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

/*
 * Whether a request the guard left for a backend is its current
 * statement's (times in one clock, max_age in its unit): asked at or after
 * the statement's start (a request for a statement that ended before the
 * signal landed must not relabel a later cancel, a statement_timeout's),
 * and not older than max_age.
 */
extern int	guard_request_applies(int64_t asked_at, int64_t stmt_start, int64_t now, int64_t max_age);

/* A backend the guard signalled, as it follows it */
typedef struct guard_follow
{
	int			terminate;		/* a terminate (else a cancel) */
	int64_t		held;			/* what it held when signalled */
	int64_t		keeps;			/* ... of which a cancel leaves it: its session's */
	int64_t		held_now;		/* negative: gone */
	int64_t		last_held;		/* at the look before; negative: none */
	int64_t		elapsed_ms;		/* since the signal */
	int			landed;			/* its backend took the request (the cancel landed) */
	int64_t		used_at;		/* the source's use when signalled */
	int64_t		used_now;
} guard_follow;

/* How long a canceled statement has to give memory back before the next is picked */
#define GUARD_SETTLE_MS		500
/* ... or, once its cancel landed, a fall of less than this over a look is none */
#define GUARD_STILL_BYTES	(1024 * 1024)

/*
 * Whether a signalled backend has settled: what its action frees (a
 * cancel: what it held beyond its session's; a terminate: all) has left
 * the source's use, half of it at least. A group's own figure falls before
 * the kernel has the memory back (a parallel query's workers leave its
 * lock group as they start to exit; its DSM is freed when the last of
 * them detaches), so that alone is not enough. Or: a cancel after
 * GUARD_SETTLE_MS, or once it landed and its group stopped falling while
 * still holding over half of it (a session's temp_buffers: a cancel frees
 * nothing of them); a terminate after terminate_wait_ms
 * (pg_procmem.guard_terminate_wait: a session with 1 GB of temp_buffers
 * took 3 s to exit).
 */
extern int	guard_settled(const guard_follow *f, int64_t terminate_wait_ms);

/*
 * What a settling backend's action is still to free: what it frees, less
 * what the source's use has fallen since (given back soon, so not counted
 * against the threshold)
 */
extern int64_t guard_pending(const guard_follow *f);

/* "2.9 GB", "512 MB", "800 kB", "12 bytes": a size as a message says it */
extern void guard_format_bytes(char *buf, size_t size, int64_t bytes);

#endif							/* PROCMEM_GUARD_RULES_H */
