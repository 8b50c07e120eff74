/*
 * guard_store.c
 *		The guard's store in shared memory: the requests its worker leaves
 *		for the backends it signals, the ring of its actions, and the slot
 *		that lets one worker run.
 *
 * Before it signals a backend, the worker leaves a request here; the
 * backend's log hook (guard_backend.c) takes it and turns the cancel's
 * error into the guard's own. Each action, the worker's or a backend's own
 * limit's, is kept in a ring of the last GUARD_ACTIONS_KEPT, for
 * pg_procmem_guard_actions and the history file, which the sampler writes
 * (history_file.c) and loads back here at a start. One spinlock guards it
 * all.
 */
#include "server/compat.h"

#include <signal.h>

#include "miscadmin.h"
#include "storage/spin.h"
#include "utils/timestamp.h"

#include "guard/guard_store.h"
#include "rules/guard_rules.h"
#include "rules/pressure.h"
#include "server/shmem.h"

/* requests not taken by then are dropped (the backend was idle) */
#define GUARD_REQUEST_MAX_AGE_MS	10000

#define GUARD_REQUESTS	16
#define GUARD_ACTIONS	GUARD_ACTIONS_KEPT

/* What the history file has of an action (the sampler writes it, history_file.c) */
#define ACTION_WRITTEN	0x01	/* a first record */
#define ACTION_FINAL	0x02	/* ... and the one with what it gave back */

typedef struct guard_shared
{
	slock_t		mutex;
	int32		worker_pid;		/* the running guard's; 0: none */
	guard_request requests[GUARD_REQUESTS];
	int64		last_number;	/* the last action's number */
	int64		stored;			/* actions stored: the ring holds the last GUARD_ACTIONS */
	history_guard_action actions[GUARD_ACTIONS];
	uint8		written[GUARD_ACTIONS];	/* ACTION_* */
} guard_shared;

static guard_shared *shared = NULL;

static Size
guard_size(void)
{
	return sizeof(guard_shared);
}

static void
guard_init_shared(void *part)
{
	guard_shared *s = part;

	memset(s, 0, sizeof(*s));
	SpinLockInit(&s->mutex);
}

static void
guard_attached(void *part, bool found)
{
	shared = part;
}

static const procmem_shmem_part guard_part = {
	"pg_procmem guard", guard_size, 0, guard_init_shared, guard_attached
};

void
guard_store_register(void)
{
	procmem_shmem_register(&guard_part);
}

bool
guard_store_attached(void)
{
	return shared != NULL;
}

/* --- the requests --------------------------------------------------------- */

bool
guard_take_request(int32 pid, int32 what, TimestampTz stmt_start, guard_request *out)
{
	bool		found = false;

	if (shared == NULL)
		return false;
	SpinLockAcquire(&shared->mutex);
	for (int i = 0; i < GUARD_REQUESTS; i++)
	{
		guard_request *r = &shared->requests[i];

		if (r->pid != pid || r->what != what)
			continue;
		/*
		 * asked of a statement (or, for a terminate, a backend of that pid)
		 * that has ended, or too long ago: not this one's
		 */
		found = guard_request_applies(r->asked_at, stmt_start, GetCurrentTimestamp(),
									  (int64) GUARD_REQUEST_MAX_AGE_MS * 1000);
		if (found)
			*out = *r;
		r->pid = 0;
		break;
	}
	SpinLockRelease(&shared->mutex);
	return found;
}

void
guard_put_request(const guard_request *req)
{
	TimestampTz now = GetCurrentTimestamp();
	int			free_at = -1;

	SpinLockAcquire(&shared->mutex);
	for (int i = 0; i < GUARD_REQUESTS; i++)
	{
		guard_request *r = &shared->requests[i];

		/* a request older than its use (the backend was idle): dropped */
		if (r->pid != 0 && TimestampDifferenceExceeds(r->asked_at, now, GUARD_REQUEST_MAX_AGE_MS))
			r->pid = 0;
		if (r->pid == req->pid || (r->pid == 0 && free_at < 0))
			free_at = i;
	}
	/* full: the oldest goes (16 backends signalled within 10 s, none reporting) */
	if (free_at < 0)
	{
		free_at = 0;
		for (int i = 1; i < GUARD_REQUESTS; i++)
			if (shared->requests[i].asked_at < shared->requests[free_at].asked_at)
				free_at = i;
	}
	shared->requests[free_at] = *req;
	SpinLockRelease(&shared->mutex);
}

bool
guard_request_waiting(int32 pid, TimestampTz at)
{
	bool		waiting = false;

	SpinLockAcquire(&shared->mutex);
	for (int i = 0; i < GUARD_REQUESTS; i++)
		if (shared->requests[i].pid == pid && shared->requests[i].asked_at == at)
			waiting = true;
	SpinLockRelease(&shared->mutex);
	return waiting;
}

/* --- the actions ---------------------------------------------------------- */

/* In the order they were taken: by time, then number */
static int
action_cmp(const void *x, const void *y)
{
	const history_guard_action *a = x;
	const history_guard_action *b = y;

	if (a->at != b->at)
		return a->at < b->at ? -1 : 1;
	return (a->number > b->number) - (a->number < b->number);
}

/* Stores an action in the ring, in place of one with its pid and time (under the lock) */
static void
store(const history_guard_action *a, uint8 written)
{
	int			slot = -1;

	for (int i = 0; i < GUARD_ACTIONS && slot < 0; i++)
		if (shared->actions[i].at == a->at && shared->actions[i].pid == a->pid && a->at != 0)
			slot = i;
	if (slot < 0)
		slot = (int) (shared->stored++ % GUARD_ACTIONS);
	shared->actions[slot] = *a;
	shared->written[slot] = written;
	shared->last_number = Max(shared->last_number, a->number);
}

int64
guard_record_action(history_guard_action *a)
{
	if (shared == NULL)
		return 0;
	SpinLockAcquire(&shared->mutex);
	a->number = shared->last_number + 1;
	store(a, 0);
	SpinLockRelease(&shared->mutex);
	return a->number;
}

void
guard_set_given_back(int32 pid, TimestampTz at, int64 bytes)
{
	if (shared == NULL || at == 0)
		return;
	SpinLockAcquire(&shared->mutex);
	for (int i = 0; i < GUARD_ACTIONS; i++)
	{
		history_guard_action *a = &shared->actions[i];

		if (a->pid == pid && a->at == at && bytes > a->given_back)
			a->given_back = bytes;
	}
	SpinLockRelease(&shared->mutex);
}

int
guard_copy_actions(history_guard_action *out)
{
	int			n = 0;

	if (shared == NULL)
		return -1;
	SpinLockAcquire(&shared->mutex);
	for (int k = 0; k < GUARD_ACTIONS; k++)
		if (shared->actions[k].at != 0)
			out[n++] = shared->actions[k];
	SpinLockRelease(&shared->mutex);
	qsort(out, n, sizeof(history_guard_action), action_cmp);
	return n;
}

/* --- the history file ----------------------------------------------------- */

/* Whether a loaded action is one this code can have written (a file can hold anything) */
static bool
action_sane(const history_guard_action *a)
{
	return a->at > 0 && IS_VALID_TIMESTAMP(a->at) && a->pid > 0 &&
		a->number > 0 && a->number < ((int64) 1 << 40) &&
		a->what >= GUARD_CANCEL && a->what <= GUARD_WOULD_TERMINATE &&
		(a->why == GUARD_SERVER_LIMIT || a->why == GUARD_BACKEND_LIMIT) &&
		a->processes >= 1 && a->held >= 0 && a->limit >= 0 && a->used >= -1 && a->given_back >= -1 &&
		a->threshold_pct >= 0 && a->threshold_pct <= 100 &&
		a->source >= PRESSURE_FROM_NONE && a->source <= PRESSURE_FROM_CGROUP;
}

void
guard_load_action(const history_guard_action *a)
{
	if (shared == NULL || !action_sane(a))
		return;
	SpinLockAcquire(&shared->mutex);
	store(a, ACTION_WRITTEN | ACTION_FINAL);
	SpinLockRelease(&shared->mutex);
}

/* Whether what an action gave back is known for good: its measuring is over */
static bool
settled_for_good(const history_guard_action *a, TimestampTz now)
{
	return TimestampDifferenceExceeds(a->at, now, guard_measuring_ms(a->what) + 500);
}

int
guard_take_unwritten(history_guard_action *out, int max, bool all)
{
	TimestampTz now = GetCurrentTimestamp();
	int			n = 0;

	if (shared == NULL)
		return 0;
	SpinLockAcquire(&shared->mutex);
	for (int i = 0; i < GUARD_ACTIONS && n < max; i++)
	{
		const history_guard_action *a = &shared->actions[i];
		bool		final;

		if (a->at == 0)
			continue;
		final = settled_for_good(a, now);
		if (all || !(shared->written[i] & ACTION_WRITTEN) ||
			(final && !(shared->written[i] & ACTION_FINAL)))
		{
			out[n++] = *a;
			shared->written[i] = ACTION_WRITTEN | (final ? ACTION_FINAL : 0);
		}
	}
	SpinLockRelease(&shared->mutex);
	/* in the order taken: a reload keeps the newest when the ring is full */
	qsort(out, n, sizeof(history_guard_action), action_cmp);
	return n;
}

/* --- the worker's slot ---------------------------------------------------- */

bool
guard_claim_worker(void)
{
	bool		mine;

	SpinLockAcquire(&shared->mutex);
	mine = shared->worker_pid == 0 || shared->worker_pid == MyProcPid ||
		(kill(shared->worker_pid, 0) != 0 && errno == ESRCH);
	if (mine)
		shared->worker_pid = MyProcPid;
	SpinLockRelease(&shared->mutex);
	return mine;
}

void
guard_release_worker(int code, Datum arg)
{
	SpinLockAcquire(&shared->mutex);
	if (shared->worker_pid == MyProcPid)
		shared->worker_pid = 0;
	SpinLockRelease(&shared->mutex);
}

bool
guard_worker_running(void)
{
	int32		running;

	SpinLockAcquire(&shared->mutex);
	running = shared->worker_pid;
	SpinLockRelease(&shared->mutex);
	return running != 0 && kill(running, 0) == 0;
}
