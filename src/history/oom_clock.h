/*
 * oom_clock.h
 *		The sampler's reads of the OOM kill counter, kept in shared memory
 *		for the postmaster's crash path (oom_clock.c; rules/oom_window.h
 *		says why).
 */
#ifndef PROCMEM_OOM_CLOCK_H
#define PROCMEM_OOM_CLOCK_H

#include "rules/oom_window.h"

/* Its shared memory, from _PG_init (preloaded only) */
extern void procmem_oom_clock_init(void);

/* In the sampler: finds the counter (the server's memory cgroup's, else the machine's) */
extern void oom_clock_start(void);

/* In the sampler: reads the counter now and keeps the read */
extern void oom_clock_tick(void);

/* The counter now, as oom_clock_tick() reads it (-1: unreadable); *machine: which */
extern int64 oom_clock_read_now(int *machine);

/*
 * In the postmaster, when it logs a child's exit: a copy of the reads, one
 * read that does not retry (the sampler may be writing: then false, as
 * without the shared memory). Bounded, no allocation.
 */
extern bool oom_clock_copy(oom_reads *out);

#endif							/* PROCMEM_OOM_CLOCK_H */
