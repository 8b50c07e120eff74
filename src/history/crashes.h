/*
 * crashes.h
 *		Crash restarts (crashes.c): what the postmaster saw of each, and the
 *		crash rows the memory history keeps.
 */
#ifndef PROCMEM_CRASHES_H
#define PROCMEM_CRASHES_H

#include "datatype/timestamp.h"

#include "rules/history_format.h"

/* The crash rows kept (the file keeps them too) */
#define MAX_CRASHES 16

/* The postmaster's log hook and the shared memory; from _PG_init. */
extern void procmem_crashes_init(void);

/* --- the sampler ---------------------------------------------------------- */

/* Empties the list (before loading the file again). */
extern void crashes_clear(void);

/* Keeps a crash row read from the file, with its number. */
extern void crashes_add(const history_crash *c);

/*
 * Once per shared memory, after the file was loaded into the ring: a row
 * for each crash restart the postmaster handed over that the file does not
 * have yet, and for a previous server's last run that ended without a
 * clean stop (tail_open: the file's last sample is followed by neither a
 * stop nor a crash row), each made from the ring's samples of the run that
 * ended, joins the list. Returns how many.
 */
extern int	crashes_note(bool tail_open);

/* --- readers -------------------------------------------------------------- */

/*
 * The server's cgroup's OOM kill counter when the sampler first started in
 * this shared memory (the server's start, or its last crash restart, whose
 * row counts the kills before it), and when: false when unknown (no cgroup
 * counter, or no sampler yet). Readers subtract it from the counter they
 * read anyway (pg_procmem_system_info()).
 */
extern bool crashes_kills_baseline(int64 *kills, TimestampTz *since);

/* The rows kept, oldest first (palloc'd); *n of them. */
extern history_crash *crashes_copy(uint32 *n);

#endif							/* PROCMEM_CRASHES_H */
