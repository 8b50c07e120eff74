/*
 * history_ring.c
 *		The memory history's ring of entries in shared memory
 *		(shared_preload_libraries mode).
 *
 * One writer, the sampler, which appends a whole sample under the ring's
 * lock (a copy of its entries, nothing else), and which loads the file into
 * the ring before its first sample without holding the lock while it reads:
 * the slots it fills leave the ring first and join it once their CRC holds.
 * Readers copy a chunk of entries at a time under the lock in shared mode,
 * so a reader's memory is a chunk, whatever the ring's size, and the
 * sampler never waits for more than one chunk's copy.
 */
#include "server/compat.h"

#include "access/xact.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "history/history_ring.h"
#include "server/shmem.h"

typedef struct ring_shared
{
	LWLock	   *lock;
	TimestampTz run_started;
	uint64		oldest;			/* the oldest position still in the ring */
	uint64		end;			/* the position the next entry gets */
	uint64		newest;			/* the newest sample's start (the end: none) */
	int64		last_number;	/* the newest sample's number; 0: none */
	uint32		capacity;
	history_entry slots[FLEXIBLE_ARRAY_MEMBER];
} ring_shared;

static ring_shared *ring = NULL;

/* pg_procmem.history_size, kB */
static int	history_size_kb = 32 * 1024;

/* This transaction's reads stop here (history_cursor_open), at this sample */
static bool pinned = false;
static uint64 pinned_end;
static uint64 pinned_newest;
static bool xact_callback_registered = false;

static uint32
capacity_for_setting(void)
{
	return (uint32) Max(((int64) history_size_kb * 1024) / (int64) sizeof(history_entry), 16);
}

static Size
ring_shmem_size(void)
{
	return add_size(offsetof(ring_shared, slots),
					mul_size(capacity_for_setting(), sizeof(history_entry)));
}

/* A new ring: empty, a new run. The slots are not touched (nor made resident). */
static void
ring_shmem_init(void *part)
{
	ring_shared *r = part;

	memset(r, 0, offsetof(ring_shared, slots));
	r->lock = &(GetNamedLWLockTranche("pg_procmem history"))->lock;
	r->run_started = GetCurrentTimestamp();
	r->capacity = capacity_for_setting();
}

static void
ring_shmem_attached(void *part, bool found)
{
	ring = part;
}

static const procmem_shmem_part ring_part = {
	"pg_procmem history", ring_shmem_size, 1, ring_shmem_init, ring_shmem_attached
};

void
procmem_history_ring_init(void)
{
	/* a PGC_POSTMASTER setting can only be defined at server start */
	if (!process_shared_preload_libraries_in_progress)
		return;
	DefineCustomIntVariable("pg_procmem.history_size",
							"Memory for the memory history in shared memory.",
							"The file that keeps it across restarts holds up to 1.5 times as much (the ring and 4 MB for a small ring).",
							&history_size_kb, 32 * 1024, 64, INT_MAX / 2,
							PGC_POSTMASTER, GUC_UNIT_KB, NULL, NULL, NULL);
	procmem_shmem_register(&ring_part);
}

bool
history_ring_exists(void)
{
	return ring != NULL;
}

uint32
history_ring_capacity(void)
{
	return ring->capacity;
}

Size
history_ring_bytes(void)
{
	return (Size) ring->capacity * sizeof(history_entry);
}

TimestampTz
history_run_started(void)
{
	return ring->run_started;
}

static inline history_entry *
slot(uint64 pos)
{
	return &ring->slots[pos % ring->capacity];
}

/* The first position a write of n entries at the end leaves in the ring */
static uint64
oldest_after(uint32 n)
{
	uint64		new_end = ring->end + n;

	return new_end > ring->capacity ? Max(ring->oldest, new_end - ring->capacity) : ring->oldest;
}

/* --- the writer ----------------------------------------------------------- */

void
history_ring_append(const history_entry *e, uint32 n)
{
	uint32		first;

	Assert(n >= 1 && n <= ring->capacity && e[0].kind == HISTORY_SYSTEM);
	LWLockAcquire(ring->lock, LW_EXCLUSIVE);
	ring->oldest = oldest_after(n);
	first = Min(n, ring->capacity - (uint32) (ring->end % ring->capacity));
	memcpy(slot(ring->end), e, sizeof(history_entry) * first);
	if (first < n)
		memcpy(ring->slots, e + first, sizeof(history_entry) * (n - first));
	ring->newest = ring->end;
	ring->end += n;
	ring->last_number = e[0].u.sys.sample;
	LWLockRelease(ring->lock);
}

void
history_ring_clear(void)
{
	LWLockAcquire(ring->lock, LW_EXCLUSIVE);
	/* positions go on: a reader's cursor from before sees them gone */
	ring->oldest = ring->newest = ring->end;
	ring->last_number = 0;
	LWLockRelease(ring->lock);
}

void
history_ring_reserve(uint32 n, history_entry **a, uint32 *na, history_entry **b)
{
	Assert(n >= 1 && n <= ring->capacity);
	LWLockAcquire(ring->lock, LW_EXCLUSIVE);
	ring->oldest = oldest_after(n);
	LWLockRelease(ring->lock);
	*a = slot(ring->end);
	*na = Min(n, ring->capacity - (uint32) (ring->end % ring->capacity));
	*b = *na < n ? ring->slots : NULL;
}

void
history_ring_commit(uint32 n)
{
	LWLockAcquire(ring->lock, LW_EXCLUSIVE);
	ring->last_number = slot(ring->end)->u.sys.sample;
	ring->newest = ring->end;
	ring->end += n;
	LWLockRelease(ring->lock);
}

uint64
history_ring_end(void)
{
	return ring->end;
}

const history_entry *
history_ring_entry(uint64 pos)
{
	return slot(pos);
}

/* The first system entry at or after pos, or the end */
static uint64
system_from(uint64 pos)
{
	while (pos < ring->end && slot(pos)->kind != HISTORY_SYSTEM)
		pos++;
	return pos;
}

uint64
history_ring_first_sample(void)
{
	return system_from(ring->oldest);
}

uint64
history_ring_next_sample(uint64 pos)
{
	/* a sample's entries follow its system entry; kept says how many */
	return system_from(Min(pos + 1 + (uint32) Max(slot(pos)->u.sys.kept, 0), ring->end));
}

int64
history_ring_last_number(void)
{
	return ring->last_number;
}

/* --- readers -------------------------------------------------------------- */

static void
unpin(XactEvent event, void *arg)
{
	pinned = false;
}

/* The end (and newest sample) this transaction's reads stop at */
static void
pin(void)
{
	if (pinned)
		return;
	if (!xact_callback_registered)
	{
		RegisterXactCallback(unpin, NULL);
		xact_callback_registered = true;
	}
	LWLockAcquire(ring->lock, LW_SHARED);
	pinned_end = ring->end;
	pinned_newest = ring->newest;
	LWLockRelease(ring->lock);
	pinned = IsTransactionState();
}

void
history_cursor_open(history_cursor *c)
{
	pin();
	c->pos = 0;
	c->upto = pinned_end;
	c->in_sample = false;
}

void
history_cursor_open_newest(history_cursor *c)
{
	pin();
	/* gone since (the ring turned over in this transaction): no rows */
	c->pos = pinned_newest;
	c->upto = pinned_end;
	c->in_sample = false;
}

uint32
history_cursor_read(history_cursor *c, history_entry *buf, uint32 max, bool only_system)
{
	uint32		n = 0;

	LWLockAcquire(ring->lock, LW_SHARED);
	if (c->pos < ring->oldest)
	{
		/* overwritten since: on from the oldest whole sample */
		c->pos = ring->oldest;
		c->in_sample = false;
	}
	while (c->pos < c->upto && n < max)
	{
		const history_entry *e = slot(c->pos);

		if (e->kind == HISTORY_SYSTEM)
		{
			c->in_sample = true;
			buf[n++] = *e;
			/* only the system entries: straight to the next sample's */
			c->pos += only_system ? 1 + (uint32) Max(e->u.sys.kept, 0) : 1;
		}
		else
		{
			if (c->in_sample && !only_system)
				buf[n++] = *e;
			c->pos++;
		}
	}
	LWLockRelease(ring->lock);
	return n;
}
