/*
 * shmem.h
 *		pg_procmem's structs in shared memory (shared_preload_libraries
 *		mode): each file that keeps state there registers its part from _PG_init,
 *		shmem.c requests them and creates or attaches them, all together.
 */
#ifndef PROCMEM_SHMEM_H
#define PROCMEM_SHMEM_H

typedef struct procmem_shmem_part
{
	const char *name;			/* of the struct, and of its LWLock tranche */
	Size		(*size) (void);
	int			lwlocks;		/* LWLocks in its tranche; 0: no tranche */
	void		(*init) (void *part);	/* fills a new one (under the lock) */
	void		(*attached) (void *part, bool found);	/* then, in each process */
} procmem_shmem_part;

/* From _PG_init: the registered parts, and then the hooks that set them up */
extern void procmem_shmem_register(const procmem_shmem_part *part);
extern void procmem_shmem_install(void);

/*
 * The ERROR of a function that needs a part that is not there (pg_procmem
 * was not preloaded). Does not return.
 */
extern void procmem_shmem_missing(void);

#endif							/* PROCMEM_SHMEM_H */
