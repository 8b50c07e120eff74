/*
 * guard.c
 *		The memory guard's worker: cancels the statement of the client
 *		backend holding the most memory when the server's memory passes its
 *		threshold, then the next, until below; ends sessions when cancels do
 *		not suffice and pg_procmem.guard_terminate allows it.
 *
 * With pg_procmem.guard on (or dry_run), the sampler starts this worker
 * (procmem_guard_ensure_worker()); it stops by itself when the setting goes
 * back to off. Every pg_procmem.guard_interval it takes a reading of the
 * pressure watch (pressure.h): the memory the kernel cannot reclaim in each
 * of the server's cgroup levels with a limit, and the machine's (against
 * pg_procmem.guard_limit when set). Past pg_procmem.guard_threshold of a
 * limit, it reads what each client backend and parallel worker holds
 * (guard_rules.h), and signals the leader of the largest group running a
 * statement: a cancel, as pg_cancel_backend(). It then waits for that
 * backend to settle (to give back half of what it held, to exit, or
 * GUARD_SETTLE_MS) before it picks the next. Never the postmaster,
 * auxiliary processes, autovacuum, WAL senders or other background
 * workers: only client backends, with their parallel workers.
 *
 * Before it signals, it leaves a request in shared memory; the backend's
 * log hook (guard_backend.c) finds it and turns the cancel's error into
 * the guard's own. Each action is kept in a ring here, for
 * pg_procmem_guard_actions.
 */
#include "server/compat.h"

#include <signal.h>

#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "portability/instr_time.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/spin.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "guard/guard.h"
#include "linux/procfs.h"
#include "rules/guard_rules.h"
#include "server/clock.h"
#include "server/contexts.h"
#include "server/rows.h"
#include "server/shmem.h"

PGDLLEXPORT void procmem_guard_main(Datum arg);

PG_FUNCTION_INFO_V1(pg_procmem_guard_log);

typedef enum guard_mode
{
	GUARD_OFF = 0,
	GUARD_DRY_RUN,
	GUARD_ON
} guard_mode;

static const struct config_enum_entry guard_modes[] = {
	{"off", GUARD_OFF, false},
	{"dry_run", GUARD_DRY_RUN, false},
	{"on", GUARD_ON, false},
	{NULL, 0, false}
};

static int	guard = GUARD_OFF;
static int	guard_threshold = 90;
static int	guard_limit_mb = 0;
static int	guard_interval_ms = 50;
static bool guard_terminate = false;

/* How long a signalled backend has to give memory back before the next is picked */
#define GUARD_SETTLE_MS		500
/* ... or, once its cancel landed, a fall of less than this over a look is none */
#define GUARD_STILL_BYTES	(1024 * 1024)
/*
 * A statement or a session holding less is never acted on: a backend holds
 * a few MB at rest, and ending it gives back next to nothing (while an idle
 * session holds the memory, the guard would cancel every short statement
 * there is, a DBA's looking for the holder included).
 */
#define GUARD_MIN_HELD		((int64) 16 * 1024 * 1024)
/*
 * ... nor a running statement holding less than this fraction of what the
 * largest client backend holds (an idle session holding 1 GB: statements
 * under 128 MB are spared; that session is ended, or the guard says so)
 */
#define GUARD_SMALLER		8
/* with nothing left to act on, the backends are looked at again this often */
#define GUARD_STUCK_RECHECK_MS	1000
/* ... and how long what it gives back is measured */
#define GUARD_MEASURE_MS	2000
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

/* --- the requests and the actions, shared with the backends ----------- */

static int	action_cmp(const void *x, const void *y);

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
		found = r->asked_at >= stmt_start &&
			!TimestampDifferenceExceeds(r->asked_at, GetCurrentTimestamp(), GUARD_REQUEST_MAX_AGE_MS);
		if (found)
			*out = *r;
		r->pid = 0;
		break;
	}
	SpinLockRelease(&shared->mutex);
	return found;
}

static void
put_request(const guard_request *req)
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
	return TimestampDifferenceExceeds(a->at, now, GUARD_MEASURE_MS + 500);
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

/* --- the worker --------------------------------------------------------- */

/* A backend the guard signalled, while it settles and what it gives back is measured */
typedef struct signalled
{
	int32		pid;
	int32		what;
	TimestampTz acted_at;		/* its action's */
	int64		held;			/* its group's, when signalled */
	int64		at_ms;			/* monotonic */
	TimestampTz query_start;	/* the statement canceled */
	bool		settled;
	bool		landed;			/* its backend took the request: the cancel landed */
	int64		last_held;		/* what it held at the last look */
} signalled;

#define GUARD_WATCHED 32

typedef struct guard_worker
{
	pressure_watch watch;
	signalled	watched[GUARD_WATCHED];
	int64		assumed;		/* dry_run: what the groups it would have acted on
								 * held, since the memory last was below */
	bool		stuck_said;		/* ... and that nothing was left to act on */
	int64		stuck_used;		/* ... at that use */
	int64		stuck_ms;		/* ... and time (monotonic) */
} guard_worker;

/* What a process holds now (guard_rules.h); -1 when it is gone or unreadable */
static int64
held_now(pid_t pid)
{
	procfs_statm m;

	return procfs_read_statm(pid, &m) == PROCFS_OK ? m.resident - m.shared : -1;
}

/* Whether a request the guard made is still waiting for its backend to report it */
static bool
request_waiting(int32 pid, TimestampTz at)
{
	bool		waiting = false;

	SpinLockAcquire(&shared->mutex);
	for (int i = 0; i < GUARD_REQUESTS; i++)
		if (shared->requests[i].pid == pid && shared->requests[i].asked_at == at)
			waiting = true;
	SpinLockRelease(&shared->mutex);
	return waiting;
}

/*
 * Follows the backends signalled lately: a backend has settled once it
 * gave back half of what it held, or exited, or its cancel landed (it took
 * the request) and what it holds stopped falling over a look (a session's
 * temp_buffers: a cancel frees nothing of them, and the guard goes on to
 * end sessions at once), or GUARD_SETTLE_MS passed. What it gave back is
 * measured for GUARD_MEASURE_MS. Returns whether one is still settling (the
 * guard waits for it before it picks the next).
 */
static bool
follow_signalled(guard_worker *gw, int64 now)
{
	bool		settling = false;

	for (int i = 0; i < GUARD_WATCHED; i++)
	{
		signalled  *s = &gw->watched[i];
		int64		held;
		int64		back;

		if (s->pid == 0)
			continue;
		held = held_now(s->pid);
		back = held < 0 ? s->held : Max(s->held - held, 0);
		/* dry_run did nothing: what it gave back is not the guard's */
		if (s->what == GUARD_CANCEL || s->what == GUARD_TERMINATE)
			guard_set_given_back(s->pid, s->acted_at, back);
		if (!s->settled && (held < 0 || back * 2 >= s->held || now - s->at_ms >= GUARD_SETTLE_MS ||
							(s->landed && held >= s->last_held - GUARD_STILL_BYTES)))
			s->settled = true;
		if (s->what == GUARD_CANCEL && !s->landed && !request_waiting(s->pid, s->acted_at))
			s->landed = true;
		s->last_held = held;
		if (held < 0 || now - s->at_ms >= GUARD_MEASURE_MS)
			s->pid = 0;
		else if (!s->settled)
			settling = true;
	}
	return settling;
}

/* Whether the guard already acted on this backend's statement (or session) */
static bool
acted_on(const guard_worker *gw, int32 pid, TimestampTz query_start, bool terminate)
{
	for (int i = 0; i < GUARD_WATCHED; i++)
	{
		const signalled *s = &gw->watched[i];

		if (s->pid != pid)
			continue;
		if (s->what == GUARD_TERMINATE || s->what == GUARD_WOULD_TERMINATE)
			return true;
		if (!terminate && s->query_start == query_start)
			return true;
	}
	return false;
}

static void
watch_signalled(guard_worker *gw, const signalled *s)
{
	int			slot = 0;

	for (int i = 0; i < GUARD_WATCHED; i++)
	{
		if (gw->watched[i].pid == 0)
		{
			slot = i;
			break;
		}
		if (gw->watched[i].at_ms < gw->watched[slot].at_ms)
			slot = i;
	}
	gw->watched[slot] = *s;
}

/*
 * Who the backend is, for the action's row and the log: from the names
 * each backend publishes in its slot (contexts.c), never the catalog, whose
 * locks could hold the guard (and so its next action) for as long as
 * someone holds them.
 */
static void
describe(history_guard_action *a, PgBackendStatus *b, const procmem_context_total *totals,
		 int ntotals)
{
	const procmem_context_total *t = procmem_contexts_find(totals, ntotals, a->pid);
	bool		keep = t && t->keep_text >= 0 ? t->keep_text != 0 : procmem_keep_statement_text;
	procmem_slot_who who;
	procmem_slot_found found = SLOT_TORN;

	a->backend_start = b->st_proc_start_timestamp;
	a->query_start = b->st_activity_start_timestamp;
	for (int tries = 0; tries < 3 && found == SLOT_TORN; tries++)
		found = procmem_contexts_dead(a->pid, &who);
	if (found == SLOT_READ)
	{
		history_copy_cstr(a->usename, sizeof(a->usename), who.usename);
		history_copy_cstr(a->datname, sizeof(a->datname), who.datname);
	}
	history_copy_cstr(a->application_name, sizeof(a->application_name), b->st_appname);
	if (keep)
		history_copy_cstr(a->query, sizeof(a->query), pgstat_clip_activity(b->st_activity_raw));
}

static const char *
what_name(int32 what)
{
	switch (what)
	{
		case GUARD_CANCEL:
			return "cancel";
		case GUARD_TERMINATE:
			return "terminate";
		case GUARD_WOULD_CANCEL:
			return "would cancel";
		case GUARD_WOULD_TERMINATE:
			return "would terminate";
	}
	return NULL;
}

/*
 * Over the threshold with nothing the guard may act on: no running
 * statement holding worth (GUARD_MIN_HELD, and a GUARD_SMALLER-th of the
 * largest holder's) it has not canceled yet, and no session it may end.
 * Says who holds the most.
 */
static void
say_stuck(int source, int64 used, int64 limit, int64 worth, const guard_group *largest)
{
	char		used_s[32], limit_s[32], held_s[32], worth_s[32];

	guard_format_bytes(used_s, sizeof(used_s), used);
	guard_format_bytes(limit_s, sizeof(limit_s), limit);
	guard_format_bytes(worth_s, sizeof(worth_s), worth);
	if (largest)
		guard_format_bytes(held_s, sizeof(held_s), largest->held);
	ereport(WARNING,
			(errmsg("pg_procmem guard: the %s's memory is at %s of its %s limit, and no running statement holds %s or more to cancel",
					pressure_source_name(source == 0 ? PRESSURE_FROM_MACHINE : PRESSURE_FROM_CGROUP),
					used_s, limit_s, worth_s),
			 largest ? errdetail("The largest client backend, PID %d, holds %s%s.", largest->leader, held_s,
								 largest->active ? " in a statement already canceled" : " while idle") : 0,
			 guard_terminate ?
			 errhint("Sessions holding less than %d MB are not ended.", (int) (GUARD_MIN_HELD / (1024 * 1024))) :
			 errhint("Memory a cancel does not free (temp_buffers, caches, a transaction left open) needs the session ended: pg_procmem.guard_terminate lets the guard end the largest.")));
}

/*
 * Picks the group to act on and acts: a cancel of the largest running a
 * statement the guard has not canceled yet; when none is left, and
 * pg_procmem.guard_terminate is on, the end of the largest session.
 */
static void
act(guard_worker *gw, int source, int64 used, int64 limit, int64 now)
{
	guard_candidate *cand;
	guard_group *groups;
	PgBackendStatus **status;
	procmem_context_total *totals;
	int			ntotals;
	int			n = 0;
	int			ngroups;
	int			nback;
	int			pick = -1;
	bool		terminate = false;
	int64		worth;
	history_guard_action a;
	guard_request req;
	signalled	s;
	PgBackendStatus *b = NULL;
	char		held_s[32], used_s[32], limit_s[32];
	char		workers[48];

	StartTransactionCommand();
	nback = pgstat_fetch_stat_numbackends();
	cand = palloc0(sizeof(guard_candidate) * Max(nback, 1));
	status = palloc0(sizeof(PgBackendStatus *) * Max(nback, 1));
	groups = palloc0(sizeof(guard_group) * Max(nback, 1));
	for (int i = 1; i <= nback; i++)
	{
		LocalPgBackendStatus *l = procmem_local_beentry(i);
		PgBackendStatus *st;
		int32		leader;

		if (l == NULL || l->backendStatus.st_procpid <= 0)
			continue;
		st = &l->backendStatus;
		if (st->st_backendType == B_BACKEND)
			leader = st->st_procpid;
		else if (st->st_backendType == B_BG_WORKER)
		{
			/* a parallel worker counts with its leader; other workers never */
			PGPROC	   *proc = BackendPidGetProc(st->st_procpid);

			if (proc == NULL || proc->lockGroupLeader == NULL || proc->lockGroupLeader == proc)
				continue;
			leader = proc->lockGroupLeader->pid;
		}
		else
			continue;
		cand[n].pid = st->st_procpid;
		cand[n].leader = leader;
		cand[n].held = held_now(st->st_procpid);
		cand[n].active = st->st_state == STATE_RUNNING || st->st_state == STATE_FASTPATH;
		status[n] = st;
		n++;
	}
	ngroups = guard_group_candidates(cand, n, groups);
	/* a statement worth canceling: not one far smaller than the largest holder */
	worth = ngroups > 0 ? Max(GUARD_MIN_HELD, groups[0].held / GUARD_SMALLER) : GUARD_MIN_HELD;
	for (int g = 0; g < ngroups && pick < 0; g++)
	{
		for (int i = 0; i < n; i++)
			if (cand[i].pid == groups[g].leader)
				b = status[i];
		if (groups[g].active && groups[g].held >= worth &&
			!acted_on(gw, groups[g].leader, b->st_activity_start_timestamp, false))
			pick = g;
	}
	if (pick < 0 && guard_terminate)
	{
		terminate = true;
		for (int g = 0; g < ngroups && pick < 0; g++)
		{
			for (int i = 0; i < n; i++)
				if (cand[i].pid == groups[g].leader)
					b = status[i];
			if (groups[g].held >= GUARD_MIN_HELD && !acted_on(gw, groups[g].leader, 0, true))
				pick = g;
		}
	}
	if (pick < 0)
	{
		/* nothing to act on: said once while the memory stays over */
		if (!gw->stuck_said)
			say_stuck(source, used, limit, worth, ngroups > 0 ? &groups[0] : NULL);
		gw->stuck_said = true;
		gw->stuck_used = used;
		gw->stuck_ms = now;
		CommitTransactionCommand();
		return;
	}
	for (int i = 0; i < n; i++)
		if (cand[i].pid == groups[pick].leader)
			b = status[i];

	memset(&a, 0, sizeof(a));
	a.at = GetCurrentTimestamp();
	a.pid = groups[pick].leader;
	a.what = guard == GUARD_ON ? (terminate ? GUARD_TERMINATE : GUARD_CANCEL) :
		(terminate ? GUARD_WOULD_TERMINATE : GUARD_WOULD_CANCEL);
	a.why = GUARD_SERVER_LIMIT;
	a.processes = groups[pick].members;
	a.held = groups[pick].held;
	a.limit = limit;
	a.used = used;
	a.given_back = -1;
	a.threshold_pct = guard_threshold;
	a.source = source == 0 ? PRESSURE_FROM_MACHINE : PRESSURE_FROM_CGROUP;

	/*
	 * The signal first: naming the backend must not delay it. The request
	 * goes before it, for the backend's log hook to find.
	 */
	if (guard == GUARD_ON)
	{
		memset(&req, 0, sizeof(req));
		req.pid = a.pid;
		req.what = a.what;
		req.asked_at = a.at;
		req.held = a.held;
		req.used = used;
		req.limit = limit;
		req.threshold_pct = guard_threshold;
		req.source = a.source;
		req.processes = a.processes;
		put_request(&req);
		/* still a live backend; the whole process group, as pg_cancel_backend() */
		if (BackendPidGetProc(a.pid) == NULL ||
			(kill(-a.pid, terminate ? SIGTERM : SIGINT) != 0 &&
			 kill(a.pid, terminate ? SIGTERM : SIGINT) != 0))
		{
			/* gone meanwhile: nothing was done */
			CommitTransactionCommand();
			return;
		}
	}
	totals = procmem_contexts_totals(&ntotals);
	describe(&a, b, totals, ntotals);
	guard_record_action(&a);

	memset(&s, 0, sizeof(s));
	s.pid = a.pid;
	s.what = a.what;
	s.acted_at = a.at;
	s.last_held = -1;
	if (guard != GUARD_ON)
		gw->assumed += a.held;
	s.held = a.held;
	s.at_ms = now;
	s.query_start = a.query_start;
	watch_signalled(gw, &s);

	guard_format_bytes(held_s, sizeof(held_s), a.held);
	guard_format_bytes(used_s, sizeof(used_s), used);
	guard_format_bytes(limit_s, sizeof(limit_s), limit);
	snprintf(workers, sizeof(workers), a.processes > 1 ? " and its %d parallel workers" : "", a.processes - 1);
	ereport(LOG,
			(errmsg("pg_procmem guard: %s%s of PID %d, which%s held %s, because the %s's memory reached %s of its %s limit",
					guard == GUARD_ON ? "" : "would ",
					terminate ? (guard == GUARD_ON ? "terminated the session" : "terminate the session") :
					(guard == GUARD_ON ? "canceled the statement" : "cancel the statement"),
					a.pid, workers, held_s, pressure_source_name(a.source), used_s, limit_s),
			 errdetail("pg_procmem.guard_threshold is %d%%; user \"%s\", database \"%s\", application \"%s\"; %s: %s",
					   guard_threshold, a.usename, a.datname, a.application_name,
					   b->st_state == STATE_RUNNING || b->st_state == STATE_FASTPATH ? "statement" : "its last statement",
					   a.query[0] ? a.query : "(not kept)")));
	CommitTransactionCommand();
}

/*
 * Nothing was left to act on, and nothing has grown since: no new look at
 * every backend (a read of each one's statm) at each tick while idle
 * sessions hold the memory; a statement growing by GUARD_MIN_HELD, or a
 * second, and the guard looks again.
 */
static bool
still_stuck(const guard_worker *gw, int64 used, int64 now)
{
	return gw->stuck_said && used < gw->stuck_used + GUARD_MIN_HELD &&
		now - gw->stuck_ms < GUARD_STUCK_RECHECK_MS;
}

/* Another guard runs: this one stops (the sampler started two) */
static bool
claim_worker(void)
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

static void
release_worker(int code, Datum arg)
{
	SpinLockAcquire(&shared->mutex);
	if (shared->worker_pid == MyProcPid)
		shared->worker_pid = 0;
	SpinLockRelease(&shared->mutex);
}

void
procmem_guard_main(Datum arg)
{
	static guard_worker gw;
	pressure_thresholds t;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	/* pg_cancel_backend() cancels nothing here */
	pqsignal(SIGINT, PG_SIG_IGN);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("pg_procmem guard");
	if (shared == NULL || !claim_worker())
		proc_exit(0);
	on_shmem_exit(release_worker, (Datum) 0);

	memset(&gw, 0, sizeof(gw));
	pressure_watch_init(&gw.watch);
	ereport(LOG, (errmsg("pg_procmem guard started (%s, threshold %d%%)",
						 guard == GUARD_ON ? "on" : "dry_run", guard_threshold)));

	while (!ShutdownRequestPending)
	{
		int64		now;
		int64		used = 0, limit = 0;
		int			source;
		bool		settling;

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (guard == GUARD_OFF)
			break;
		now = procmem_monotonic_ms();
		t.high_pct = t.critical_pct = guard_threshold;
		pressure_watch_tick(&gw.watch, now, &t);
		settling = follow_signalled(&gw, now);
		source = guard_over(&gw.watch.recent[gw.watch.newest], guard_threshold,
							(int64) guard_limit_mb * 1024 * 1024, &used, &limit);
		/*
		 * dry_run: what it said it would do counts as done, so that it says
		 * what the guard would do, not what a guard that never acts would
		 */
		if (source < 0)
		{
			gw.assumed = 0;
			gw.stuck_said = false;
		}
		else if (!settling && !still_stuck(&gw, used, now) &&
				 (double) (used - gw.assumed) * 100.0 >= (double) guard_threshold * (double) limit)
			act(&gw, source, used, limit, now);

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 guard_interval_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	ereport(LOG, (errmsg("pg_procmem guard stopped")));
	proc_exit(0);
}

void
procmem_guard_ensure_worker(void)
{
	static BackgroundWorkerHandle *handle = NULL;
	static bool no_slot_said = false;
	BackgroundWorker w;
	pid_t		pid;
	int32		running;

	if (guard == GUARD_OFF || shared == NULL)
		return;
	if (handle != NULL && GetBackgroundWorkerPid(handle, &pid) != BGWH_STOPPED)
		return;
	SpinLockAcquire(&shared->mutex);
	running = shared->worker_pid;
	SpinLockRelease(&shared->mutex);
	if (running != 0 && kill(running, 0) == 0)
		return;
	memset(&w, 0, sizeof(w));
	w.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	w.bgw_start_time = BgWorkerStart_ConsistentState;
	w.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(w.bgw_library_name, "pg_procmem", sizeof(w.bgw_library_name));
	strlcpy(w.bgw_function_name, "procmem_guard_main", sizeof(w.bgw_function_name));
	strlcpy(w.bgw_name, "pg_procmem guard", sizeof(w.bgw_name));
	strlcpy(w.bgw_type, "pg_procmem guard", sizeof(w.bgw_type));
	w.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&w, &handle))
	{
		handle = NULL;
		/* said once until it starts: the sampler tries again at each of its looks */
		if (!no_slot_said)
			ereport(WARNING,
					(errmsg("pg_procmem guard could not start: no background worker slot is free"),
					 errhint("Raise max_worker_processes.")));
		no_slot_said = true;
	}
	else
		no_slot_said = false;
}

/* --- SQL ----------------------------------------------------------------- */

#define GUARD_ACTIONS_NCOLS_V1_3 18
static const int guard_actions_shapes[] = {GUARD_ACTIONS_NCOLS_V1_3};

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

/*
 * pg_procmem_guard_log(missing_ok) - the guard's actions, oldest first (the
 * last GUARD_ACTIONS).
 */
Datum
pg_procmem_guard_log(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = start_result_set(fcinfo, guard_actions_shapes,
											 lengthof(guard_actions_shapes));
	history_guard_action *copy;
	int			n;

	if (shared == NULL)
	{
		if (PG_GETARG_BOOL(0))
			return (Datum) 0;
		procmem_shmem_missing();
	}
	copy = palloc(sizeof(history_guard_action) * GUARD_ACTIONS);
	n = 0;
	SpinLockAcquire(&shared->mutex);
	for (int k = 0; k < GUARD_ACTIONS; k++)
		if (shared->actions[k].at != 0)
			copy[n++] = shared->actions[k];
	SpinLockRelease(&shared->mutex);
	qsort(copy, n, sizeof(history_guard_action), action_cmp);

	for (int k = 0; k < n; k++)
	{
		const history_guard_action *a = &copy[k];
		Datum		values[GUARD_ACTIONS_NCOLS_V1_3];
		bool		nulls[GUARD_ACTIONS_NCOLS_V1_3];
		int			i = 0;

		memset(nulls, 0, sizeof(nulls));
		put_time(values, nulls, i++, a->at);
		put_int8(values, nulls, i++, a->number);
		values[i++] = Int32GetDatum(a->pid);
		put_text(values, nulls, i++, what_name(a->what));
		put_text(values, nulls, i++, a->why == GUARD_SERVER_LIMIT ? "server limit" : "backend limit");
		values[i++] = Int32GetDatum(a->processes);
		put_int8(values, nulls, i++, a->held);
		put_int8(values, nulls, i++, a->limit);
		put_int8(values, nulls, i++, a->used);
		values[i] = Int32GetDatum(a->threshold_pct);
		nulls[i++] = a->threshold_pct == 0;
		put_text(values, nulls, i++, a->why == GUARD_SERVER_LIMIT ? pressure_source_name(a->source) : NULL);
		put_int8(values, nulls, i++, a->given_back);
		put_time(values, nulls, i++, a->backend_start);
		put_time(values, nulls, i++, a->query_start);
		put_field(values, nulls, i++, a->usename, sizeof(a->usename));
		put_field(values, nulls, i++, a->datname, sizeof(a->datname));
		put_field(values, nulls, i++, a->application_name, sizeof(a->application_name));
		put_field(values, nulls, i++, a->query, sizeof(a->query));
		Assert(i == GUARD_ACTIONS_NCOLS_V1_3);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

void
procmem_guard_init(void)
{
	DefineCustomEnumVariable("pg_procmem.guard",
							 "Cancels the statement holding the most memory when the server's memory passes pg_procmem.guard_threshold of its limit.",
							 "dry_run only logs and records what it would do.",
							 &guard, GUARD_OFF, guard_modes,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_procmem.guard_threshold",
							"Percentage of its limit the memory that cannot be reclaimed may reach before the guard acts.",
							NULL,
							&guard_threshold, 90, 10, 99,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_procmem.guard_limit",
							"The machine's memory the guard measures against, in place of its total; 0: the total.",
							"A memory cgroup's limit is always measured against as well.",
							&guard_limit_mb, 0, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_procmem.guard_interval",
							"Time between two looks of the guard at the server's memory.",
							NULL,
							&guard_interval_ms, 50, 10, 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomBoolVariable("pg_procmem.guard_terminate",
							 "Lets the guard end sessions, largest first, when no statement is left to cancel.",
							 NULL,
							 &guard_terminate, false,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	if (process_shared_preload_libraries_in_progress)
		procmem_shmem_register(&guard_part);
}
