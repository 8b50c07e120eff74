/*
 * guard_worker.c
 *		The memory guard's worker: cancels the statement of the client
 *		backend holding the most memory when the server's memory passes its
 *		threshold, then the next, until below; ends sessions when cancels do
 *		not suffice and pg_procmem.guard_terminate allows it. Its settings
 *		are defined here.
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
 * Before it signals, it leaves a request in the store (guard_store.c); the
 * backend's log hook (guard_backend.c) finds it and turns the cancel's
 * error into the guard's own. Each action is kept in the store's ring, for
 * pg_procmem_guard_actions.
 */
#include "server/compat.h"

#include <signal.h>

#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/backend_status.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "guard/guard_store.h"
#include "rules/guard_rules.h"
#include "server/clock.h"
#include "server/contexts.h"

PGDLLEXPORT void procmem_guard_main(Datum arg);

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

/* The client backends and their parallel workers, as one look found them */
typedef struct guard_look
{
	int			n;
	guard_candidate *cand;
	PgBackendStatus **status;	/* each candidate's */
	int			ngroups;
	guard_group *groups;		/* leaders with their workers, largest first */
} guard_look;

/* --- following what it signalled ------------------------------------------ */

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
		held = guard_held_now(s->pid);
		back = held < 0 ? s->held : Max(s->held - held, 0);
		/* dry_run did nothing: what it gave back is not the guard's */
		if (s->what == GUARD_CANCEL || s->what == GUARD_TERMINATE)
			guard_set_given_back(s->pid, s->acted_at, back);
		if (!s->settled && (held < 0 || back * 2 >= s->held || now - s->at_ms >= GUARD_SETTLE_MS ||
							(s->landed && held >= s->last_held - GUARD_STILL_BYTES)))
			s->settled = true;
		if (s->what == GUARD_CANCEL && !s->landed && !guard_request_waiting(s->pid, s->acted_at))
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

/* Follows the backend an action signalled (dry_run: would have), in place of the oldest */
static void
watch_signalled(guard_worker *gw, const history_guard_action *a, int64 now)
{
	signalled  *s;
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
	s = &gw->watched[slot];
	memset(s, 0, sizeof(*s));
	s->pid = a->pid;
	s->what = a->what;
	s->acted_at = a->at;
	s->held = a->held;
	s->at_ms = now;
	s->query_start = a->query_start;
	s->last_held = -1;
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

/* --- acting ---------------------------------------------------------------- */

/*
 * What each client backend and parallel worker holds, folded into groups
 * by leader (guard_rules.h). In the worker's transaction, whose snapshot of
 * the backends' status the look points into.
 */
static void
look_at_backends(guard_look *look)
{
	int			nback = pgstat_fetch_stat_numbackends();

	look->n = 0;
	look->cand = palloc0(sizeof(guard_candidate) * Max(nback, 1));
	look->status = palloc0(sizeof(PgBackendStatus *) * Max(nback, 1));
	look->groups = palloc0(sizeof(guard_group) * Max(nback, 1));
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
		look->cand[look->n].pid = st->st_procpid;
		look->cand[look->n].leader = leader;
		look->cand[look->n].held = guard_held_now(st->st_procpid);
		look->cand[look->n].active = st->st_state == STATE_RUNNING || st->st_state == STATE_FASTPATH;
		look->status[look->n] = st;
		look->n++;
	}
	look->ngroups = guard_group_candidates(look->cand, look->n, look->groups);
}

/* The status of group g's leader (a group exists only where its leader is a candidate) */
static PgBackendStatus *
leader_status(const guard_look *look, int g)
{
	PgBackendStatus *b = NULL;

	for (int i = 0; i < look->n; i++)
		if (look->cand[i].pid == look->groups[g].leader)
			b = look->status[i];
	return b;
}

/*
 * The group to act on: the largest running a statement that holds worth
 * and that the guard has not canceled yet; when none is left, and
 * pg_procmem.guard_terminate is on, the largest session holding
 * GUARD_MIN_HELD that it has not ended (*terminate). -1: none.
 */
static int
pick_group(const guard_worker *gw, const guard_look *look, int64 worth, bool *terminate)
{
	*terminate = false;
	for (int g = 0; g < look->ngroups; g++)
		if (look->groups[g].active && look->groups[g].held >= worth &&
			!acted_on(gw, look->groups[g].leader,
					  leader_status(look, g)->st_activity_start_timestamp, false))
			return g;
	if (!guard_terminate)
		return -1;
	*terminate = true;
	for (int g = 0; g < look->ngroups; g++)
		if (look->groups[g].held >= GUARD_MIN_HELD && !acted_on(gw, look->groups[g].leader, 0, true))
			return g;
	return -1;
}

/* The action on a group, but for who its backend is (describe()) */
static void
new_action(history_guard_action *a, const guard_group *g, bool terminate, int source,
		   int64 used, int64 limit)
{
	memset(a, 0, sizeof(*a));
	a->at = GetCurrentTimestamp();
	a->pid = g->leader;
	a->what = guard == GUARD_ON ? (terminate ? GUARD_TERMINATE : GUARD_CANCEL) :
		(terminate ? GUARD_WOULD_TERMINATE : GUARD_WOULD_CANCEL);
	a->why = GUARD_SERVER_LIMIT;
	a->processes = g->members;
	a->held = g->held;
	a->limit = limit;
	a->used = used;
	a->given_back = -1;
	a->threshold_pct = guard_threshold;
	a->source = source == 0 ? PRESSURE_FROM_MACHINE : PRESSURE_FROM_CGROUP;
}

/*
 * Leaves the request for the backend's log hook, then signals the backend:
 * its whole process group, as pg_cancel_backend(). False when it is no
 * longer a live backend: nothing was done.
 */
static bool
signal_leader(const history_guard_action *a, bool terminate)
{
	guard_request req;
	int			sig = terminate ? SIGTERM : SIGINT;

	memset(&req, 0, sizeof(req));
	req.pid = a->pid;
	req.what = a->what;
	req.asked_at = a->at;
	req.held = a->held;
	req.used = a->used;
	req.limit = a->limit;
	req.threshold_pct = a->threshold_pct;
	req.source = a->source;
	req.processes = a->processes;
	guard_put_request(&req);
	return BackendPidGetProc(a->pid) != NULL &&
		(kill(-a->pid, sig) == 0 || kill(a->pid, sig) == 0);
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
	const procmem_context_total *t = procmem_contexts_find(totals, ntotals, a->pid,
														   b->st_proc_start_timestamp);
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
	if (procmem_contexts_text_allowed(t))
		history_copy_cstr(a->query, sizeof(a->query), pgstat_clip_activity(b->st_activity_raw));
}

/* The server log's line of an action */
static void
log_action(const history_guard_action *a, const PgBackendStatus *b, bool terminate)
{
	char		held_s[32], used_s[32], limit_s[32];
	char		workers[48];

	guard_format_bytes(held_s, sizeof(held_s), a->held);
	guard_format_bytes(used_s, sizeof(used_s), a->used);
	guard_format_bytes(limit_s, sizeof(limit_s), a->limit);
	snprintf(workers, sizeof(workers), a->processes > 1 ? " and its %d parallel workers" : "", a->processes - 1);
	ereport(LOG,
			(errmsg("pg_procmem guard: %s%s of PID %d, which%s held %s, because the %s's memory reached %s of its %s limit",
					guard == GUARD_ON ? "" : "would ",
					terminate ? (guard == GUARD_ON ? "terminated the session" : "terminate the session") :
					(guard == GUARD_ON ? "canceled the statement" : "cancel the statement"),
					a->pid, workers, held_s, pressure_source_name(a->source), used_s, limit_s),
			 errdetail("pg_procmem.guard_threshold is %d%%; user \"%s\", database \"%s\", application \"%s\"; %s: %s",
					   guard_threshold, a->usename, a->datname, a->application_name,
					   b->st_state == STATE_RUNNING || b->st_state == STATE_FASTPATH ? "statement" : "its last statement",
					   a->query[0] ? a->query : "(not kept)")));
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
	guard_look	look;
	int64		worth;
	int			pick;
	bool		terminate;
	history_guard_action a;
	PgBackendStatus *b;
	procmem_context_total *totals;
	int			ntotals;

	StartTransactionCommand();
	look_at_backends(&look);
	/* a statement worth canceling: not one far smaller than the largest holder */
	worth = Max(GUARD_MIN_HELD, look.ngroups > 0 ? look.groups[0].held / GUARD_SMALLER : 0);
	pick = pick_group(gw, &look, worth, &terminate);
	if (pick < 0)
	{
		/* nothing to act on: said once while the memory stays over */
		if (!gw->stuck_said)
			say_stuck(source, used, limit, worth, look.ngroups > 0 ? &look.groups[0] : NULL);
		gw->stuck_said = true;
		gw->stuck_used = used;
		gw->stuck_ms = now;
		CommitTransactionCommand();
		return;
	}
	b = leader_status(&look, pick);
	new_action(&a, &look.groups[pick], terminate, source, used, limit);

	/*
	 * The signal first: naming the backend must not delay it. The request
	 * goes before it, for the backend's log hook to find.
	 */
	if (guard == GUARD_ON && !signal_leader(&a, terminate))
	{
		/* gone meanwhile: nothing was done */
		CommitTransactionCommand();
		return;
	}
	totals = procmem_contexts_totals(&ntotals);
	describe(&a, b, totals, ntotals);
	guard_record_action(&a);
	if (guard != GUARD_ON)
		gw->assumed += a.held;
	watch_signalled(gw, &a, now);
	log_action(&a, b, terminate);
	CommitTransactionCommand();
}

/* --- its loop and its lifecycle -------------------------------------------- */

/* The worker's entry point, named in procmem_guard_ensure_worker()'s registration */
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
	/* another guard runs: this one stops (the sampler started two) */
	if (!guard_store_attached() || !guard_claim_worker())
		proc_exit(0);
	on_shmem_exit(guard_release_worker, (Datum) 0);

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

	if (guard == GUARD_OFF || !guard_store_attached())
		return;
	if (handle != NULL && GetBackgroundWorkerPid(handle, &pid) != BGWH_STOPPED)
		return;
	if (guard_worker_running())
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
		guard_store_register();
}
