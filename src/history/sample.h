/*
 * sample.h
 *		One sample of the memory history, taken (sample.c): what the
 *		sampler's loop (sampler.c) calls.
 */
#ifndef PROCMEM_SAMPLE_H
#define PROCMEM_SAMPLE_H

#include "rules/pressure.h"

/* pg_procmem.dsm_leftover_after; from procmem_sampler_init(). */
extern void procmem_sample_init(void);

/* Its memory and the server's cgroup, in the sampler at its start. */
extern void procmem_sample_start(void);

/*
 * Takes a sample and appends it to the ring and the file. pressure: the
 * watch's state, NULL when the watch is off; the system entry reads the
 * cgroup where the watch found it. Returns the sampler's CPU time for it,
 * in µs (its sample_ms).
 */
extern int64 procmem_take_sample(const pressure_watch *watch, const pressure_state *pressure);

#endif							/* PROCMEM_SAMPLE_H */
