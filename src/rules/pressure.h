/*
 * pressure.h
 *		The pressure watch: how close the server is to running out of memory,
 *		from a few small reads (no PostgreSQL headers).
 *
 * Two places can run out: the memory cgroup the server is in (each level,
 * up to its hierarchy's root, with a limit of its own) and the machine.
 * Each is a *source*: what it uses that the kernel cannot reclaim, against
 * what it may use:
 *
 *	cgroup v2	memory.current - (file - shmem) - slab_reclaimable, of memory.max
 *	cgroup v1	usage_in_bytes - (total_cache - total_shmem), of limit_in_bytes
 *	machine		MemTotal - MemAvailable, of MemTotal
 *
 * A cgroup level's is sysmem_cgroup_unreclaimable() (linux/sysmem.h), the
 * figure the room of pg_procmem_headroom is counted from too; sysmem.c says
 * why those terms. In short: page cache, active or inactive, and
 * reclaimable slab are not pressure: the kernel reclaims them before it
 * kills (and MemAvailable counts both as available). Anonymous memory,
 * shared memory (which the kernel counts as file pages too), page tables
 * and the rest of what the kernel holds for the processes are.
 *
 * A source is at PRESSURE_HIGH when its use passes the high threshold, or
 * when at its growth over the last second it would reach its limit within
 * PRESSURE_HORIZON_MS; at PRESSURE_CRITICAL past the critical threshold or
 * within PRESSURE_CRITICAL_HORIZON_MS. The server's own cgroup (v2) is at
 * PRESSURE_HIGH too when its memory.pressure says every task of it stalled
 * on memory PRESSURE_STALL_PCT of the last ten seconds or more (linux/psi.h):
 * the kernel reclaiming and refaulting while under the limit's threshold.
 * Never critical, and the guard's watch does not read it (use_stall 0): a
 * stall names no statement, and canceling one frees nothing a thrashing
 * page cache needs. The machine's stall is not a signal at all: other tenants
 * cause it (as systemd-oomd, which acts on a cgroup's own stall only). The watch's level is its worst
 * source's, and a level once reached holds for PRESSURE_HOLD_MS after its
 * cause last held: a hog that pauses between two allocations keeps it.
 *
 * The sampler ticks the watch every pg_procmem.pressure_watch_interval and
 * samples faster while the level is raised; the guard (a later piece) is
 * meant to tick the same watch.
 */
#ifndef PROCMEM_PRESSURE_H
#define PROCMEM_PRESSURE_H

#include <stdint.h>

#include "linux/sysmem.h"

typedef enum pressure_level
{
	PRESSURE_NONE = 0,
	PRESSURE_HIGH = 1,
	PRESSURE_CRITICAL = 2
} pressure_level;

typedef enum pressure_source_kind
{
	PRESSURE_FROM_NONE = 0,
	PRESSURE_FROM_MACHINE = 1,
	PRESSURE_FROM_CGROUP = 2,
	PRESSURE_FROM_CGROUP_STALL = 3	/* its memory.pressure, not its use */
} pressure_source_kind;

#define PRESSURE_HORIZON_MS				10000
#define PRESSURE_CRITICAL_HORIZON_MS	2000
#define PRESSURE_HOLD_MS				5000
/* the growth is measured over the readings of this last stretch */
#define PRESSURE_RATE_WINDOW_MS			1000
/* ... once it is at least this long (ticks late after a long sample) */
#define PRESSURE_RATE_MIN_MS			200
/* the cgroup's levels with a limit are looked up again this often */
#define PRESSURE_LEVELS_REFRESH_MS		10000
/*
 * The server's cgroup's "full" avg10 (percent) that raises PRESSURE_HIGH:
 * 10% is a second of the last ten in which nothing of the server ran for
 * want of memory. systemd-oomd kills a cgroup at 60% over 30 s
 * (ManagedOOMMemoryPressureLimit): this only samples more often, earlier.
 */
#define PRESSURE_STALL_PCT				10

/* the machine, and at most this many cgroup levels with a limit */
#define PRESSURE_MAX_SOURCES	9
#define PRESSURE_RECENT			32		/* readings kept for the growth */

/* One reading of every source */
typedef struct pressure_reading
{
	int64_t		at_ms;			/* the caller's monotonic clock */
	int			nsources;
	int64_t		used[PRESSURE_MAX_SOURCES];	/* negative: unreadable now */
	int64_t		limit[PRESSURE_MAX_SOURCES];
	int32_t		stall_full;		/* the server's cgroup's full avg10, hundredths
								 * of a percent; negative: unread (or v1) */
} pressure_reading;

/* What the watch makes of its readings (pressure_assess) */
typedef struct pressure_state
{
	pressure_level level;		/* held, as the sampler acts on it */
	pressure_level now;			/* what the newest reading shows alone */
	pressure_source_kind source;	/* the source of the worst now, or of the hold;
									 * at no pressure, the one nearest its limit */
	int64_t		used;			/* that source's, at the newest reading */
	int64_t		limit;
	int64_t		ms_to_limit;	/* at its growth; negative: not growing */
} pressure_state;

typedef struct pressure_thresholds
{
	int			high_pct;		/* pg_procmem.pressure_threshold */
	int			critical_pct;	/* pg_procmem.pressure_critical */
	int			use_stall;		/* the cgroup's stall raises high (the
								 * sampler's watch; not the guard's, which
								 * acts on use alone and reads no more) */
} pressure_thresholds;

typedef struct pressure_watch
{
	/* the cgroup: its version, and its levels with a limit, itself first */
	sysmem_cgroup cgroup;
	int			cgroup_known;
	int			nlevels;
	char		level_dir[PRESSURE_MAX_SOURCES - 1][1024];
	int64_t		levels_found_ms;	/* when they were looked up; 0: never */
	/* the newest readings, a ring */
	pressure_reading recent[PRESSURE_RECENT];
	int			nrecent;
	int			newest;
	/* the hold: until when each raised level stands */
	int64_t		hold_until[3];
	int			hold_index[3];	/* the source that raised it */
	pressure_state state;
} pressure_watch;

/* A watch of the cgroup the calling process is in (none found: the machine only). */
extern void pressure_watch_init(pressure_watch *w);

/*
 * Reads every source and assesses the level at now_ms (a monotonic clock in
 * ms): the meminfo read, and per cgroup level two small files and
 * memory.stat.
 */
extern const pressure_state *pressure_watch_tick(pressure_watch *w, int64_t now_ms,
												 const pressure_thresholds *t);

/*
 * The assessment alone, from readings already in the ring (the unit tests
 * feed it readings): sets w->state.
 */
extern void pressure_assess(pressure_watch *w, const pressure_thresholds *t);

/* Adds a reading to the ring, as pressure_watch_tick() does. */
extern void pressure_add_reading(pressure_watch *w, const pressure_reading *r);

/*
 * Sampling under pressure: while the level is raised the sampler samples
 * every pg_procmem.pressure_sample_interval, at the critical level four
 * times as often; but it starts a sample no sooner than the last one's end
 * plus three times the CPU time that one took, which keeps it under a
 * quarter of one core. The CPU time, not the wall time: on a busy machine a
 * sample waits for a core (70-117 ms of CPU took 380-1,470 ms at a load of
 * 36 on two cores), and three times the wall time thinned the samples to
 * one every 1.1-4.4 s while memory ran out.
 */
typedef struct pressure_last_sample
{
	int64_t		start_ms;		/* the caller's monotonic clock; 0: none yet */
	int64_t		end_ms;
	int64_t		cpu_us;			/* the sampler's CPU time for it */
} pressure_last_sample;

/*
 * At least this long between one sample's end and the next one's start
 * under pressure, whatever the last one's CPU time: a sample can cost next
 * to no CPU (every figure reused) while its reads waited, which no CPU clock
 * counts: on the processes it read (a read takes the process's mmap lock,
 * and holds its memory until it ends: the OOM killer's victim frees nothing
 * meanwhile) or on the disk. The gap gives those processes some time
 * between two samples; it is below the shortest interval the settings allow
 * (100 ms at the critical level: 25 ms).
 */
#define PRESSURE_SAMPLE_GAP_MS	20

/*
 * When the next sample is due, in the caller's monotonic ms at now_ms:
 * grid_ms, the regular interval's next (0: at once), or sooner at a raised
 * level, every every_ms (pg_procmem.pressure_sample_interval) from the last
 * sample's start, a quarter of it at the critical level, but no sooner than
 * its end plus max(3 x its CPU time, PRESSURE_SAMPLE_GAP_MS). A slow sample
 * never delays the grid.
 */
extern int64_t pressure_sample_due(int64_t now_ms, int64_t grid_ms,
								   const pressure_last_sample *last,
								   pressure_level level, int every_ms);

/* What one cgroup level can reclaim, from its memory.stat text (v2 or v1) */
typedef struct pressure_cgroup_stat
{
	int64_t		file;			/* page cache, shared memory included (v1: total_cache) */
	int64_t		shmem;			/* v1: total_shmem */
	int64_t		slab_reclaimable;	/* v2 only (v1: 0) */
} pressure_cgroup_stat;

extern void pressure_parse_cgroup_stat(const char *buf, size_t len, int version,
									   pressure_cgroup_stat *out);

extern const char *pressure_level_name(pressure_level l);
extern const char *pressure_source_name(pressure_source_kind k);

#endif							/* PROCMEM_PRESSURE_H */
