/*
 * reuse.h
 *		When a process's figures from the last sample are still its figures
 *		(no PostgreSQL headers). docs/overhead.md, "Reused figures", argues
 *		each condition.
 *
 * A process's figures change when it runs, and otherwise only when the
 * kernel or another process moves its pages: reclaim (and swap), THP
 * splits and collapses, migration and compaction, KSM, dropped caches; or
 * when a process it shares pages with (the postmaster, a sibling forked
 * before it) writes or frees them, or exits, which can leave it the last
 * owner of a page (overhead counts exclusive pages). The sampler reuses a
 * process's figures only when none of that can have happened since they
 * were read:
 *
 *	- the process: the same (pid, start time), one thread then and now, asleep ('S'),
 *	  with the same time on a CPU to the nanosecond and the same number of
 *	  times put on one (/proc/PID/schedstat), read at most
 *	  REUSE_MAX_AGE_MS ago; with no child then nor now
 *	  (/proc/PID/task/PID/children, which lists a child that exited until
 *	  it is reaped), and none reaped since (stat's cminflt, cutime and
 *	  cstime): a child that exits leaves the pages it shared copy-on-write
 *	  with its parent the parent's own, without the parent running;
 *	- the server: the postmaster did not touch its memory
 *	  (reuse_postmaster_still()), and no process of the server started or
 *	  exited, since the last sample;
 *	- the machine: none of the counters reuse_moved_counter() names moved;
 *	  where only file pages did (reclaim of page cache, which a busy
 *	  server's machine does all the time), every figure is reused but rss,
 *	  read again.
 */
#ifndef PROCMEM_REUSE_H
#define PROCMEM_REUSE_H

#include <stdint.h>

#include "linux/procfs.h"

/* figures are read afresh at least this often, whatever the conditions say */
#define REUSE_MAX_AGE_MS	120000

/*
 * Whether a /proc/vmstat counter counts pages moved, freed or remapped
 * under processes that need not run for it (reclaim, swap-out, THP splits
 * and collapses, demotion, dropped caches; not migration, which moves a
 * page to another frame and changes no figure), and which: anonymous
 * memory (and shared memory, which reclaim counts with it) changes every
 * figure; file pages only the resident set (rss), which one short read
 * (/proc/PID/statm) gives again. Reclaim's totals (pgsteal_kswapd, ...)
 * are REUSE_MOVES_ANY: anonymous where the kernel has no pgsteal_anon.
 */
typedef enum reuse_moves
{
	REUSE_MOVES_NONE = 0,
	REUSE_MOVES_ANON,
	REUSE_MOVES_FILE,
	REUSE_MOVES_ANY
} reuse_moves;

extern reuse_moves reuse_moved_counter(const char *key, size_t len);

/* The sums of those counters in a /proc/vmstat text, by kind (they only grow) */
extern void reuse_sum_moved_by_kind(const char *buf, size_t len, uint64_t *anon,
									uint64_t *file);
/* ... and both together */
extern uint64_t reuse_sum_moved(const char *buf, size_t len);

/* The machine's: two equal readings, nothing moved in between */
typedef struct reuse_moved
{
	uint64_t	anon;			/* reuse_sum_moved_by_kind() of /proc/vmstat */
	uint64_t	file;
	int64_t		ksm_shared;		/* KSM's pages_shared, pages_sharing: */
	int64_t		ksm_sharing;	/* merges and unmerges; -1 without KSM */
	int64_t		ksm_scanned;	/* pages_scanned (else full_scans): ksmd worked */
} reuse_moved;

extern procfs_result reuse_read_moved(reuse_moved *m);
/* Nothing moved; no anonymous page moved (file pages may have) */
extern int	reuse_moved_equal(const reuse_moved *a, const reuse_moved *b);
extern int	reuse_anon_unmoved(const reuse_moved *a, const reuse_moved *b);

/*
 * The postmaster, as far as its children's pages go. It runs once a minute
 * on its own (its checks of postmaster.pid), and a run that wrote no page
 * and freed none changed no child's figures: a write to a page it shares
 * copy-on-write is a page fault (stat's count is every thread's), and a
 * page it unmaps or discards leaves its anonymous resident set smaller
 * (gaining one without a fault takes MAP_POPULATE or mlock, which it does
 * not do once running). Its forks and its children's exits show as
 * processes that started or exited.
 */
typedef struct reuse_postmaster
{
	uint64_t	faults;			/* stat's minflt + majflt */
	int64_t		anon;			/* statm's resident - shared: RssAnon */
} reuse_postmaster;

extern procfs_result reuse_read_postmaster(pid_t pid, reuse_postmaster *pm);

/* Whether it took no page fault and kept the same anonymous pages */
extern int	reuse_postmaster_still(const reuse_postmaster *then, const reuse_postmaster *now);

/* What a process's reuse compares, from its last fresh read and from now */
typedef struct reuse_mark
{
	uint64_t	starttime;
	int64_t		threads;		/* at the read: a thread since gone ran unseen */
	procfs_reaped reaped;		/* its reaped children's faults and times */
	procfs_schedstat sched;
	int			childless;		/* 1: its children file listed none; 0: it
								 * did, or could not be read */
} reuse_mark;

/*
 * A process's mark now: stat's part from id (just read), then its
 * schedstat and its children file (one short read each; the file is its
 * main thread's, which lists every child of a process of one thread, and a
 * kernel built without CONFIG_PROC_CHILDREN has none: never childless
 * there). Returns schedstat's result: PROCFS_GONE, the process has gone.
 */
extern procfs_result reuse_mark_take(pid_t pid, const procfs_stat *id, reuse_mark *mark);

/*
 * Whether a process whose last fresh read left then, read at then_ms, still
 * has those figures: it has the identity id (stat, just read) and the mark
 * now (reuse_mark_take(), after id), at now_ms. The server's and the
 * machine's conditions are the caller's.
 */
extern int	reuse_process_unchanged(const reuse_mark *then, int64_t then_ms,
									const procfs_stat *id, const reuse_mark *now,
									int64_t now_ms);

#endif							/* PROCMEM_REUSE_H */
