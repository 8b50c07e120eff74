/*
 * sampler.h
 *		The memory history's background worker (sampler.c).
 */
#ifndef PROCMEM_SAMPLER_H
#define PROCMEM_SAMPLER_H

/* pg_procmem.sample_interval; the worker, when preloaded. From _PG_init. */
extern void procmem_sampler_init(void);

#endif							/* PROCMEM_SAMPLER_H */
