/*
 * oom_window.h
 *		When an OOM kill happened, from the sampler's reads of the OOM kill
 *		counter (oom_window.c). No PostgreSQL headers.
 *
 * The kernel counts an OOM kill when it sends SIGKILL; the victim exits
 * once it has given its memory back, which under load took 1.3 to 2.3 s
 * in the incidents reproduced (docs/history.md). Samples taken in between
 * skip it (its SIGKILL is pending), and show the memory it is giving back
 * as room. So a crash row's figures must come from before the counter rose,
 * not from the last sample before the exit. The sampler reads the counter
 * at each sample's start and end and at each look of the pressure watch;
 * the postmaster copies what it read when it logs a child's exit.
 */
#ifndef PROCMEM_OOM_WINDOW_H
#define PROCMEM_OOM_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

/* The sampler's reads of the counter (times in microseconds, the caller's clock) */
typedef struct oom_reads
{
	int64_t		kills;			/* at the last read; -1: never read */
	int64_t		at;				/* ... when */
	int64_t		kills_before;	/* before the last rise seen; -1: none seen */
	int64_t		before_at;		/* the last read that still had that */
	int64_t		rose_at;		/* the first read that saw the (last) rise */
	int64_t		first_rose_at;	/* ... of the first of rises within OOM_EXIT_WITHIN_US of it */
	int32_t		machine;		/* /proc/vmstat's (no memory cgroup), not a cgroup's */
	int32_t		pad;
} oom_reads;

/* How long a victim may take to exit after the kill it was counted for */
#define OOM_EXIT_WITHIN_US	(60 * INT64_C(1000000))

extern void oom_reads_init(oom_reads *r, int machine);

/* A read: kills at time at (kills < 0, unreadable: nothing changes) */
extern void oom_reads_note(oom_reads *r, int64_t kills, int64_t at);

/* What the reads say of a kill that ended in an exit */
typedef struct oom_window
{
	int			oom;			/* crash_oom (history_format.h) */
	int64_t		after;			/* CRASH_OOM_COUNTED: the kill came after this ... */
	int64_t		by;				/* ... and by this */
	int64_t		kills_before;	/* the counter across it; -1: unknown */
	int64_t		kills_after;
} oom_window;

/*
 * The kill behind an exit at exited_at, from the reads before it and
 * kills_now, the same counter read after it (-1: unknown, or another
 * counter: a cgroup made again starts at 0). Counted when the counter rose
 * after the last read before the exit (the kill: between that read and
 * the exit), or when a rise was seen within OOM_EXIT_WITHIN_US before the
 * exit (between the reads on either side of it). Rises within
 * OOM_EXIT_WITHIN_US of the first of them make one window, from the read
 * before the first to the read after the last: the victim of any of them
 * was killed in it. Not counted when it was read before and after and did not
 * rise. Else unknown.
 */
extern oom_window oom_window_place(const oom_reads *r, int64_t exited_at, int64_t kills_now);

#endif							/* PROCMEM_OOM_WINDOW_H */
