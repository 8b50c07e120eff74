/*
 * contexts.h
 *		Every backend's memory-context totals in shared memory
 *		(shared_preload_libraries mode).
 */
#ifndef PROCMEM_CONTEXTS_H
#define PROCMEM_CONTEXTS_H

/* GUCs always; hooks and shared memory when preloaded. From _PG_init. */
extern void procmem_contexts_init(void);

/*
 * Every live process's published total, for the sampler: an opaque array
 * sorted by pid (palloc'd, NULL without the shared memory), and a lookup.
 */
extern void *procmem_contexts_totals(int *n);
extern int64 procmem_contexts_total_of(const void *totals, int n, int32 pid);

#endif							/* PROCMEM_CONTEXTS_H */
