/*
 * reuse_cache.h
 *		The sampler's cache of each process's last fresh read, reused while
 *		nothing can have changed its figures (rules/reuse.h says when), and
 *		pg_procmem.check_reuse, its test-only check (reuse_cache.c).
 */
#ifndef PROCMEM_REUSE_CACHE_H
#define PROCMEM_REUSE_CACHE_H

#include "linux/dsm.h"
#include "rules/history_format.h"
#include "rules/reuse.h"
#include "server/members.h"

/* The DSM segments a read keeps: a process that maps more is read afresh */
#define PROCMEM_CACHED_DSM		8
#define PROCMEM_CACHED_NO_REUSE	(-2)

/* What a process's last fresh read found */
typedef struct procmem_cached
{
	int32		pid;			/* first: procmem_pid_cmp */
	reuse_mark	mark;			/* taken just before the read */
	int64		read_ms;		/* monotonic */
	int64		overhead;
	int64		private_anon;
	int64		page_tables;
	int64		rss;
	int64		swap;
	char		title[HISTORY_TYPE_LEN];	/* from its cmdline, when read */
	/* the DSM segments it maps: it maps no other while it does not run */
	int32		dsm_n;			/* -1: unknown; PROCMEM_CACHED_NO_REUSE: too many to keep */
	uint64		dsm_id[PROCMEM_CACHED_DSM];
	uint32		dsm_handle[PROCMEM_CACHED_DSM];
} procmem_cached;

/* What pg_procmem.check_reuse compares, over one sample */
typedef struct procmem_reuse_check
{
	int			checked;
	int			over_8k;
	int			over_64k;
	int64		largest;
	int32		largest_pid;
	const char *largest_field;
} procmem_reuse_check;

/* One sample's use of the cache (the sample's own arrays: sample.c) */
typedef struct procmem_reuse_pass
{
	int64		at_ms;			/* the sample's time, monotonic */
	/* whether the server's and the machine's conditions hold */
	bool		may_reuse;
	bool		reread_rss;		/* ... but file pages moved: rss is read again */
	procmem_cached *reads;		/* this sample's, for the next: one per entry */
	procmem_membership *kinds;	/* ... and how each process is a member */
	procmem_reuse_check check;
} procmem_reuse_pass;

/* pg_procmem.check_reuse: reusable processes are read afresh too */
extern bool procmem_check_reuse;

/* pg_procmem.sample_reuse and pg_procmem.check_reuse; from procmem_sampler_init(). */
extern void procmem_reuse_cache_init(void);

/* The cache's memory, in the sampler at its start. */
extern void procmem_reuse_cache_start(void);

/* Figures read another way are not reused: the next sample reads every process. */
extern void procmem_reuse_cache_forget(void);

/* At a sample's start (at_ms, monotonic): whether the conditions hold, into the pass. */
extern void procmem_reuse_begin(procmem_reuse_pass *pass, int64 at_ms);

/*
 * The last sample's read of pid, where it is still the process's figures;
 * its mark is left in *mark either way, for a fresh read to keep. *gone:
 * the process has gone.
 */
extern const procmem_cached *procmem_reuse_find(const procmem_reuse_pass *pass, pid_t pid,
												procmem_membership kind, const procfs_stat *id,
												reuse_mark *mark, bool *gone);

/*
 * Keeps an entry's figures (and its title, and the DSM segments it maps,
 * dsm_mapped.n -1: unknown) in its read, for the next sample.
 */
extern void procmem_reuse_remember(procmem_cached *c, const history_process *p, const char *title,
								   const dsm_mapped *mapped);

/* The DSM segments a read kept, into *mapped */
extern void procmem_reuse_mapped(const procmem_cached *c, dsm_mapped *mapped);

/* pg_procmem.check_reuse: how far the figures reuse would have given are from a fresh read */
extern void procmem_reuse_check_one(procmem_reuse_pass *pass, int32 pid, const procmem_cached *c,
									const history_process *p);

/*
 * At the walk's end: whether what was reused stands, the conditions having
 * held through the walk with no process started or exited (true when
 * nothing could be reused). e: the sample's n entries, the system's first.
 */
extern bool procmem_reuse_held(const procmem_reuse_pass *pass, const history_entry *e, uint32 n);

/*
 * Keeps the sample's reads (n entries, the system's first) for the next;
 * held: what procmem_reuse_held() said, the reused entries read again if
 * not. Logs pg_procmem.check_reuse's findings.
 */
extern void procmem_reuse_end(const procmem_reuse_pass *pass, uint32 n, bool held);

#endif							/* PROCMEM_REUSE_CACHE_H */
