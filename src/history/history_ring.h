/*
 * history_ring.h
 *		The memory history's ring of entries in shared memory
 *		(history_ring.c): the sampler appends whole samples, readers copy
 *		them out a chunk at a time.
 *
 * Entries have positions: the n-th entry ever appended is at position n,
 * in slot n % capacity. The ring holds the positions from its oldest to its
 * end; the first of them may be the tail of a sample whose start was
 * overwritten, which nobody reads.
 */
#ifndef PROCMEM_HISTORY_RING_H
#define PROCMEM_HISTORY_RING_H

#include "utils/timestamp.h"

#include "rules/history_format.h"

/* pg_procmem.history_size and the ring's shared memory; from _PG_init. */
extern void procmem_history_ring_init(void);

/* Whether there is a ring (pg_procmem was preloaded). */
extern bool history_ring_exists(void);

/* Entries the ring holds, and their bytes */
extern uint32 history_ring_capacity(void);
extern Size history_ring_bytes(void);

/* When this shared memory was initialized (a run of the server) */
extern TimestampTz history_run_started(void);

/* --- the sampler, the ring's only writer ---------------------------------- */

/* Appends one whole sample (its system entry first, kept set; n <= capacity). */
extern void history_ring_append(const history_entry *e, uint32 n);

/* Empties the ring (before loading the file again). */
extern void history_ring_clear(void);

/*
 * Room for n entries at the ring's end, in one or two pieces (*b NULL when
 * one): the entries they overwrite leave the ring now; the new ones join it
 * at history_ring_commit(n).
 */
extern void history_ring_reserve(uint32 n, history_entry **a, uint32 *na, history_entry **b);
extern void history_ring_commit(uint32 n);

/*
 * Reading in place, without the lock (the writer only): the first whole
 * sample's position (its system entry) and the next one's; the end when
 * there is none.
 */
extern uint64 history_ring_end(void);
extern uint64 history_ring_first_sample(void);
extern uint64 history_ring_next_sample(uint64 pos);
extern const history_entry *history_ring_entry(uint64 pos);

/* The number the newest sample in the ring has (0: none). */
extern int64 history_ring_last_number(void);

/* --- readers -------------------------------------------------------------- */

typedef struct history_cursor
{
	uint64		pos;			/* the next position to look at */
	uint64		upto;			/* where this transaction's reads stop */
	bool		in_sample;		/* pos is inside a sample whose start was read */
} history_cursor;

/*
 * A cursor on the ring's whole samples, oldest first, up to the newest
 * sample the first read of this transaction saw: every read within one
 * transaction stops at the same sample (the oldest may have been overwritten
 * meanwhile).
 */
extern void history_cursor_open(history_cursor *c);

/*
 * The same on the newest whole sample alone: the one the transaction's
 * first read saw as the newest (none: no entries).
 */
extern void history_cursor_open_newest(history_cursor *c);

/*
 * Copies the next entries (only the system entries if only_system) into
 * buf, at most max; returns how many (0: no more). Every process entry
 * copied follows its sample's system entry.
 */
extern uint32 history_cursor_read(history_cursor *c, history_entry *buf, uint32 max,
								  bool only_system);

#endif							/* PROCMEM_HISTORY_RING_H */
