/*
 * guard_store.h
 *		What the guard's worker shares with the store of requests and
 *		actions (guard_store.c): the rest of the store is guard.h's, for
 *		the backends, the sampler and the SQL functions.
 */
#ifndef PROCMEM_GUARD_STORE_H
#define PROCMEM_GUARD_STORE_H

#include "guard/guard.h"

/*
 * How long what a signalled backend gives back is measured: the worker
 * measures it this long (guard_measuring_ms()), and the store takes the
 * figure as final a little after (the history file's second record of the
 * action).
 */
#define GUARD_MEASURE_MS	2000
/* ... a terminate's, until its session exits, this long at most */
#define GUARD_TERMINATE_MEASURE_MS	30000

/*
 * How long what an action gave back is measured at most: a cancel's,
 * pg_procmem.guard_terminate_wait, GUARD_MEASURE_MS if longer; a
 * terminate's, GUARD_TERMINATE_MEASURE_MS; the worker stops sooner when
 * the backend is gone (guard_worker.c)
 */
extern int	guard_measuring_ms(int32 what);

/* Registers the store's part of shared memory (shmem.h); from procmem_guard_init() */
extern void guard_store_register(void);

/* Whether the store is in shared memory (pg_procmem was preloaded) */
extern bool guard_store_attached(void);

/*
 * Leaves a request for its backend's log hook (guard_backend.c), in place
 * of an older one for that pid; requests older than 10 s are dropped.
 */
extern void guard_put_request(const guard_request *req);

/* Whether the request asked of pid at that time still waits for its backend */
extern bool guard_request_waiting(int32 pid, TimestampTz at);

/*
 * The worker's slot: one guard runs. Claim: false when another live guard
 * holds it. Release: an on_shmem_exit callback. Running: whether a guard's
 * process holds it and is alive.
 */
extern bool guard_claim_worker(void);
extern void guard_release_worker(int code, Datum arg);
extern bool guard_worker_running(void);

#endif							/* PROCMEM_GUARD_STORE_H */
