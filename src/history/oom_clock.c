/*
 * oom_clock.c
 *		The sampler's reads of the OOM kill counter (the server's memory
 *		cgroup's memory.events or memory.oom_control, else /proc/vmstat),
 *		kept in shared memory for the postmaster: at each sample's start
 *		and end and at each look of the pressure watch (a small file, read
 *		in microseconds). When the postmaster logs a child's exit, it copies
 *		them (crashes.c); the crash row then places the kill between two
 *		reads, and takes its figures from the last sample before it
 *		(rules/oom_window.h).
 *
 * One writer, the sampler; a counter made odd while it writes, as the
 * contexts' slots (contexts.c). The postmaster reads once and does not
 * retry: a torn copy is none.
 */
#include "server/compat.h"

#include "port/atomics.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "history/oom_clock.h"
#include "linux/sysmem.h"
#include "server/shmem.h"

typedef struct oom_clock_shared
{
	pg_atomic_uint32 changecount;	/* odd while the sampler writes */
	oom_reads	reads;
} oom_clock_shared;

static oom_clock_shared *shared = NULL;

/* The sampler's: where the counter is */
static sysmem_cgroup cgroup;
static bool cgroup_known = false;

static Size
clock_size(void)
{
	return sizeof(oom_clock_shared);
}

static void
clock_init(void *part)
{
	oom_clock_shared *c = part;

	pg_atomic_init_u32(&c->changecount, 0);
	oom_reads_init(&c->reads, 0);
}

static void
clock_attached(void *part, bool found)
{
	shared = part;
}

static const procmem_shmem_part clock_part = {
	"pg_procmem oom clock", clock_size, 0, clock_init, clock_attached
};

void
procmem_oom_clock_init(void)
{
	if (process_shared_preload_libraries_in_progress)
		procmem_shmem_register(&clock_part);
}

void
oom_clock_start(void)
{
	cgroup_known = sysmem_find_cgroup(&cgroup) == 0;
}

int64
oom_clock_read_now(int *machine)
{
	int64		kills = sysmem_read_oom_kills(cgroup_known ? &cgroup : NULL, machine);

	return kills >= 0 ? kills : -1;
}

void
oom_clock_tick(void)
{
	int			machine;
	int64		kills;
	TimestampTz now;
	uint32		count;

	if (shared == NULL)
		return;
	kills = oom_clock_read_now(&machine);
	now = GetCurrentTimestamp();
	/* odd, even if a sampler killed while writing left it odd */
	count = pg_atomic_read_u32(&shared->changecount) | 1;
	pg_atomic_write_u32(&shared->changecount, count);
	pg_write_barrier();
	if (shared->reads.machine != machine)
		oom_reads_init(&shared->reads, machine);	/* another counter: none of it holds */
	oom_reads_note(&shared->reads, kills, now);
	pg_write_barrier();
	pg_atomic_write_u32(&shared->changecount, count + 1);
}

bool
oom_clock_copy(oom_reads *out)
{
	uint32		before;

	if (shared == NULL)
		return false;
	before = pg_atomic_read_u32(&shared->changecount);
	pg_read_barrier();
	memcpy(out, (const void *) &shared->reads, sizeof(*out));
	pg_read_barrier();
	return (before & 1) == 0 && pg_atomic_read_u32(&shared->changecount) == before;
}
