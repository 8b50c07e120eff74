/*
 * history_shmem.h
 *		The memory history in shared memory (history.c), as the sampler
 *		(sampler.c) and the SQL functions use it.
 */
#ifndef PROCMEM_HISTORY_SHMEM_H
#define PROCMEM_HISTORY_SHMEM_H

#include "utils/timestamp.h"

#include "history.h"

/*
 * In the data directory's pg_stat_tmp: pg_basebackup and pg_rewind leave
 * that directory's files out, so a standby made from a base backup does not
 * take the primary's history (and an "unclean stop") for its own.
 */
#define HISTORY_FILE		"pg_stat_tmp/pg_procmem.history"
#define HISTORY_FILE_TMP	"pg_stat_tmp/pg_procmem.history.tmp"

/* The setting; hooks and shared memory when preloaded. From _PG_init. */
extern void procmem_history_init(void);

/* Appends one sample (its system entry first) to the ring. */
extern void history_append_sample(const history_entry *e, uint32 n);

/*
 * The ring's entries (only the system entries if only_system), oldest
 * first, from its oldest complete sample on (palloc'd), and the crashes it
 * saw. lock false: only for the ring's one writer.
 */
extern history_entry *history_copy(uint32 *n, bool only_system, bool lock);
extern history_crash *history_crashes(uint32 *n, bool lock);

/* What the ring holds */
extern Size history_ring_bytes(void);

/* When shared memory was initialized; client connections since then. */
extern TimestampTz history_run_started(void);
extern uint64 history_connections(void);

/* The sampler's setting; the worker registered when preloaded (sampler.c). */
extern void procmem_sampler_init(void);

#endif							/* PROCMEM_HISTORY_SHMEM_H */
