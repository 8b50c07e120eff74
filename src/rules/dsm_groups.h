/*
 * dsm_groups.h
 *		Whose DSM segments are whose: a process's, its parallel group's, and
 *		the server's shared ones (no PostgreSQL headers).
 *
 * A parallel query (a leader and its workers: one group, named by the
 * leader's pid) maps the segments of its hash tables and sorts; so does
 * nobody else. Other segments are mapped by processes of several groups:
 * the control segment, the statistics system's shared area (15+), the DSM
 * registry (17+). So a segment mapped by one group only is that group's
 * (counted once, however many of its processes map it), and one mapped by
 * several is shared: shown, but never charged to a query. A segment no
 * process maps is nobody's (dsm_leftover, below, says when it is left over).
 */
#ifndef PROCMEM_DSM_GROUPS_H
#define PROCMEM_DSM_GROUPS_H

#include "linux/dsm.h"

/* One process: its group, the segments it maps */
typedef struct dsm_member
{
	int32_t		group;			/* the leader's pid; its own for a process
								 * that is in no parallel query */
	const dsm_mapped *mapped;	/* n -1: unknown */
} dsm_member;

/*
 * What the segments of the table a process maps hold, and (segments, may be
 * NULL) how many of them; -1 where its mappings are unknown, or more than
 * it could keep
 */
extern int64_t dsm_mapped_bytes(const dsm_table *t, const dsm_mapped *m, int *segments);

/* What the segments add up to, each counted once */
typedef struct dsm_totals
{
	int64_t		mapped;			/* bytes of every segment some process maps */
	int32_t		segments;
	int64_t		shared;			/* ... of those mapped by several groups */
	int32_t		shared_segments;
	int64_t		unmapped;		/* bytes of the segments nobody maps */
	int32_t		unmapped_segments;
} dsm_totals;

/*
 * For n members: mapped[i], the bytes of the segments member i maps, and
 * group_own[i], those of its group's own segments (equal for every member
 * of a group); -1 where its mappings are unknown (group_own: where every
 * member's is). in_use[k] (may be NULL; t->n of them) is set to 1 for each
 * segment some member maps. Returns -1 when out of memory (nothing set).
 */
extern int	dsm_groups_sum(const dsm_table *t, const dsm_member *m, int n, int64_t *mapped,
						   int64_t *group_own, dsm_totals *totals, uint8_t *in_use);

/*
 * Segments the server was seen mapping, and since when nobody maps them:
 * those nobody has mapped for after_ms are left over (a process killed
 * before it removed them). Only segments seen mapped count: every cluster
 * on the host (of the same OS user) has files in /dev/shm.
 */
typedef struct dsm_seen_segment
{
	uint64_t	id;
	uint32_t	handle;			/* with id: a new file with a reused inode is another */
	int64_t		last_mapped_ms;
} dsm_seen_segment;

typedef struct dsm_leftover
{
	dsm_seen_segment *seen;		/* malloc'd: dsm_leftover_free */
	int			n;
	int			cap;
} dsm_leftover;

/*
 * Before a sample's sums: the segments seen mapped that still exist join
 * the table (a posix segment nobody maps now is not learned from a mapping:
 * dsm.h), so that dsm_leftover_update() can tell them.
 */
extern void dsm_leftover_recall(const dsm_leftover *l, dsm_table *t);

/*
 * At a sample (now_ms, monotonic; in_use as dsm_groups_sum() set it):
 * remembers the segments mapped now, forgets those gone, and adds up those
 * left over into *bytes and *segments, the n largest of them, largest
 * first, into ids and handles (the rest 0).
 */
extern void dsm_leftover_update(dsm_leftover *l, const dsm_table *t, const uint8_t *in_use,
								int64_t now_ms, int64_t after_ms, int64_t *bytes,
								int32_t *segments, uint64_t *ids, uint32_t *handles, int n);
extern void dsm_leftover_free(dsm_leftover *l);

/*
 * Segments an earlier sampler saw mapped (its last sample's, across a crash
 * restart), as if last mapped at now_ms; n ids and their handles (0 ids
 * skipped). Before the first dsm_leftover_update().
 */
extern void dsm_leftover_seed(dsm_leftover *l, const uint64_t *ids, const uint32_t *handles, int n,
							  int64_t now_ms);

/*
 * The n largest segments some process maps (in_use), largest first, into
 * ids and handles; the rest 0. Returns how many.
 */
extern int	dsm_largest_in_use(const dsm_table *t, const uint8_t *in_use, uint64_t *ids,
							   uint32_t *handles, int n);

/*
 * The ids of the segments mapped by members of two groups or more (shared),
 * up to max of them, into ids (sorted); returns how many, or -1 when out
 * of memory. A reader that reads some members only (the guard, between two
 * full looks) passes them back as a member of a group of its own: they are
 * then shared in its sums too.
 */
extern int	dsm_shared_ids(const dsm_member *m, int n, uint64_t *ids, int max);

#endif							/* PROCMEM_DSM_GROUPS_H */
