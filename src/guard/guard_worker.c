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
#include "lib/stringinfo.h"
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

#include "guard/guard_look.h"
#include "guard/guard_store.h"
#include "rules/dsm_groups.h"
#include "rules/guard_policy.h"
#include "rules/guard_rules.h"
#include "server/clock.h"
#include "server/contexts.h"
#include "server/dsm_segments.h"
#include "server/settings.h"

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
static int	guard_terminate_wait_ms = 5000;
static int	guard_lookahead_s = 5;

/* with nothing left to act on, the backends are looked at again this often */
#define GUARD_STUCK_RECHECK_MS	1000
/*
 * Within this many points of the threshold, the backends are looked at
 * once a second: what each session holds between statements, and its
 * statement's growth, are known when the threshold is passed
 */
#define GUARD_NEAR_POINTS		10
#define GUARD_NEAR_LOOK_MS		1000
/* the most actions at one look, at the critical level */
#define GUARD_CRITICAL_BURST	8
/* sessions a warning names */
#define GUARD_SESSIONS_NAMED	3
/* an incident ends once the memory stayed under the threshold this long (its warnings said again) */
#define GUARD_INCIDENT_QUIET_MS	10000

/* A backend the guard signalled, while it settles and what it gives back is measured */
typedef struct signalled
{
	int32		pid;			/* 0: a free entry */
	int64		backend_start;
	int32		what;
	TimestampTz acted_at;		/* its action's */
	int64		held;			/* its group's total when signalled */
	int64		keeps;			/* a cancel: its session's part */
	int64		used_at;		/* the source's use then */
	int64		at_ms;			/* monotonic */
	TimestampTz statement;		/* the statement canceled */
	bool		settled;
	bool		landed;			/* its backend took the request (a cancel landed) */
	bool		measured;		/* what it gave back is final (or a later action's) */
	int64		last_held;		/* at the look before */
} signalled;

#define GUARD_WATCHED 32

typedef struct guard_worker
{
	pressure_watch watch;
	guard_memory memory;
	signalled	watched[GUARD_WATCHED];
	int64		assumed;		/* dry_run: what the groups it would have acted on
								 * held, since the memory last was below */
	int64		last_look_ms;
	guard_look_dsm dsm;			/* what the DSM reads keep between looks */
	/* the incident: from the threshold passed until under it GUARD_INCIDENT_QUIET_MS */
	int64		under_since_ms;	/* 0: over (or never) */
	int32		sessions_named[GUARD_SESSIONS_NAMED];	/* the sessions the warning
															 * named this incident
															 * (0: none) */
	bool		nothing_said;	/* the warning that nothing is worth acting on */
	bool		stuck;			/* nothing was worth acting on at the last look ... */
	int64		stuck_used;		/* ... at that use */
	int64		stuck_ms;		/* ... and time (monotonic) */
} guard_worker;

/* --- following what it signalled ------------------------------------------ */

/*
 * Follows the backends signalled lately, at a look (guard_settled()): what
 * each gave back is measured for GUARD_MEASURE_MS, or until a later action
 * on the same backend (whose figure it is then). Marks the groups acted on
 * in the look. Returns what those still settling hold that their action
 * frees (guard_pending()): given back soon.
 */
static int64
follow_signalled(guard_worker *gw, guard_look *look, int64 used, int64 now)
{
	int64		pending = 0;

	for (int i = 0; i < GUARD_WATCHED; i++)
	{
		signalled  *s = &gw->watched[i];
		int			g = s->pid ? guard_look_group(look, s->pid, s->backend_start) : -1;
		guard_follow f;

		if (s->pid == 0)
			continue;
		memset(&f, 0, sizeof(f));
		f.terminate = s->what == GUARD_TERMINATE || s->what == GUARD_WOULD_TERMINATE;
		f.held = s->held;
		f.keeps = s->keeps;
		f.held_now = g >= 0 ? guard_look_total(&look->groups[g]) : -1;
		f.last_held = s->last_held;
		f.elapsed_ms = now - s->at_ms;
		f.used_at = s->used_at;
		f.used_now = used;
		if (s->what == GUARD_CANCEL && !s->landed && !guard_request_waiting(s->pid, s->acted_at))
			s->landed = true;
		f.landed = s->landed;
		/* dry_run did nothing: what it gave back is not the guard's */
		if (!s->measured && (s->what == GUARD_CANCEL || s->what == GUARD_TERMINATE))
		{
			int64		back = f.held_now < 0 ? s->held : Max(s->held - f.held_now, 0);

			/* a canceled statement's session that then ends frees the rest: not the cancel's doing */
			if (!f.terminate)
				back = Min(back, Max(s->held - s->keeps, 0));
			guard_set_given_back(s->pid, s->acted_at, back);
		}
		if (f.held_now < 0 || f.elapsed_ms >= guard_measuring_ms(s->what))
			s->measured = true;
		if (!s->settled && guard_settled(&f, guard_terminate_wait_ms))
		{
			s->settled = true;
			/* what a canceled statement's backend still holds is its session's */
			if (!f.terminate && g >= 0 && s->landed)
				guard_memory_set_baseline(&gw->memory, s->pid, s->backend_start, look->groups[g].held);
		}
		/* dry_run: what it would have freed counts as done (gw->assumed) */
		if (!s->settled && (s->what == GUARD_CANCEL || s->what == GUARD_TERMINATE))
			pending += guard_pending(&f);
		s->last_held = f.held_now;
		if (g >= 0)
		{
			guard_group *grp = &look->groups[g];

			if (f.terminate)
				grp->ended = true;
			else if (s->statement == grp->statement)
			{
				grp->canceled = true;
				/*
				 * settled, its parallel workers gone, and holding more than
				 * when canceled: a handler caught it. While its workers are
				 * there it is unwinding (a parallel hash join's abort waits
				 * for them, and they grew on for seconds on a busy machine)
				 */
				if (s->settled && s->what == GUARD_CANCEL && grp->members == 1 &&
					guard_look_total(grp) > s->held + GUARD_MIN_HELD)
					grp->defied = true;
			}
			if (!s->settled)
				grp->settling = true;
		}
		/* gone, or done with: a cancel once its statement ended; a terminate stays until it exits */
		if (g < 0 || (s->settled && s->measured && !f.terminate && s->statement != look->groups[g].statement))
			s->pid = 0;
	}
	return pending;
}

/* Follows the backend an action signalled (dry_run: would have), in place of a free or the oldest entry */
static void
watch_signalled(guard_worker *gw, const history_guard_action *a, const guard_group *g, int64 now)
{
	signalled  *s;
	int			slot = -1;

	for (int i = 0; i < GUARD_WATCHED; i++)
	{
		/* an earlier action's figure stops here: what follows is this one's */
		if (gw->watched[i].pid == a->pid && gw->watched[i].backend_start == g->backend_start)
			gw->watched[i].measured = true;
		if (gw->watched[i].pid == 0 && slot < 0)
			slot = i;
	}
	if (slot < 0)
	{
		slot = 0;
		for (int i = 1; i < GUARD_WATCHED; i++)
			if (gw->watched[i].at_ms < gw->watched[slot].at_ms)
				slot = i;
	}
	s = &gw->watched[slot];
	memset(s, 0, sizeof(*s));
	s->pid = a->pid;
	s->backend_start = g->backend_start;
	s->what = a->what;
	s->acted_at = a->at;
	s->held = guard_look_total(g);
	s->keeps = guard_session_part(g);
	s->used_at = a->used;
	s->at_ms = now;
	s->statement = g->statement;
	s->last_held = -1;
}

int
guard_measuring_ms(int32 what)
{
	/*
	 * a cancel's for the terminate wait: a parallel query's workers can take
	 * seconds to exit on a busy machine, and its DSM is freed only then (a
	 * parallel hash join's 815 MB were not back 2 s after its cancel); a
	 * terminate's until the session exits (6,000 temporary tables to drop
	 * took over 5 s beside a CI run), which ends its measuring at once
	 */
	if (what == GUARD_TERMINATE || what == GUARD_WOULD_TERMINATE)
		return Max(GUARD_TERMINATE_MEASURE_MS, guard_terminate_wait_ms);
	return Max(GUARD_MEASURE_MS, guard_terminate_wait_ms);
}

/* --- acting ---------------------------------------------------------------- */

/* The action on a group, but for who its backend is (describe_who(), describe_query()) */
static void
new_action(history_guard_action *a, const guard_look *look, const guard_decision *d, bool terminate,
		   int source, int64 used, int64 limit)
{
	const guard_group *g = &look->groups[d->group];

	memset(a, 0, sizeof(*a));
	a->at = GetCurrentTimestamp();
	a->pid = g->leader;
	a->what = guard == GUARD_ON ? (terminate ? GUARD_TERMINATE : GUARD_CANCEL) :
		(terminate ? GUARD_WOULD_TERMINATE : GUARD_WOULD_CANCEL);
	a->why = GUARD_SERVER_LIMIT;
	a->processes = g->members;
	/* what ending it frees: all a session holds (an idle one's is its session's) */
	a->held = terminate ? guard_look_total(g) : guard_statement_part(g);
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
signal_leader(const history_guard_action *a, const guard_look *look, const guard_decision *d,
			  bool terminate)
{
	const guard_group *g = &look->groups[d->group];
	guard_request req;
	int			sig = terminate ? SIGTERM : SIGINT;

	memset(&req, 0, sizeof(req));
	req.pid = a->pid;
	req.what = a->what;
	req.asked_at = a->at;
	req.held = a->held;
	req.dsm = terminate ? 0 : g->dsm;
	req.sessions = d->sessions;
	if (d->largest_session >= 0 && d->largest_session != d->group)
	{
		req.session_pid = look->groups[d->largest_session].leader;
		req.session_held = guard_session_part(&look->groups[d->largest_session]);
	}
	req.used = a->used;
	req.limit = a->limit;
	req.threshold_pct = a->threshold_pct;
	req.source = a->source;
	req.processes = a->processes;
	guard_put_request(&req);
	if (BackendPidGetProc(a->pid) == NULL || (kill(-a->pid, sig) != 0 && kill(a->pid, sig) != 0))
		return false;
	/*
	 * A cancel reaches the parallel workers too, as pg_cancel_backend()
	 * would each: each stops growing the group's hash table at its next
	 * interrupt check, not once the leader's abort ends it (they are not in
	 * its process group). The leader reports their error as its own.
	 */
	if (!terminate)
		for (int i = 0; i < look->n; i++)
			if (look->cand[i].kind == GUARD_KIND_PARALLEL && look->cand[i].leader == a->pid &&
				BackendPidGetProc(look->cand[i].pid) != NULL)
				(void) kill(look->cand[i].pid, SIGINT);
	return true;
}

/* The user and database a backend published in its slot (contexts.c); empty when not found */
static void
who_is(int32 pid, char *usename, size_t ulen, char *datname, size_t dlen)
{
	procmem_slot_who who;
	procmem_slot_found found = SLOT_TORN;

	usename[0] = datname[0] = '\0';
	for (int tries = 0; tries < 3 && found == SLOT_TORN; tries++)
		found = procmem_contexts_dead(pid, &who);
	if (found == SLOT_READ)
	{
		history_copy_cstr(usename, ulen, who.usename);
		history_copy_cstr(datname, dlen, who.datname);
	}
}

/*
 * Who the backend is, for the action's row and the log, read before the
 * signal (a session ended takes its slot with it): from the names each
 * backend publishes in its slot (contexts.c), never the catalog, whose
 * locks could hold the guard (and so its next action) for as long as
 * someone holds them.
 */
static void
describe_who(history_guard_action *a, PgBackendStatus *b)
{
	a->backend_start = b->st_proc_start_timestamp;
	a->query_start = b->st_activity_start_timestamp;
	who_is(a->pid, a->usename, sizeof(a->usename), a->datname, sizeof(a->datname));
	history_copy_cstr(a->application_name, sizeof(a->application_name), b->st_appname);
}

/*
 * Its statement's text, where its session keeps it: after the signal (the
 * status is this look's copy), so that reading every backend's slot does
 * not delay it
 */
static void
describe_query(history_guard_action *a, PgBackendStatus *b)
{
	procmem_context_total *totals;
	int			ntotals;

	totals = procmem_contexts_totals(&ntotals);
	if (procmem_contexts_text_allowed(procmem_contexts_find(totals, ntotals, a->pid, b->st_proc_start_timestamp)))
		history_copy_cstr(a->query, sizeof(a->query), pgstat_clip_activity(b->st_activity_raw));
}

/* The server log's line of an action */
static void
log_action(const history_guard_action *a, const PgBackendStatus *b, const guard_group *g, bool terminate)
{
	char		held_s[32], used_s[32], limit_s[32], dsm_s[32];
	char		workers[48];
	char		dsm[64] = "";

	guard_format_bytes(held_s, sizeof(held_s), a->held);
	guard_format_bytes(used_s, sizeof(used_s), a->used);
	guard_format_bytes(limit_s, sizeof(limit_s), a->limit);
	snprintf(workers, sizeof(workers), a->processes > 1 ? " with its %d parallel workers" : "", a->processes - 1);
	if (!terminate && g->dsm > 0)
	{
		guard_format_bytes(dsm_s, sizeof(dsm_s), g->dsm);
		snprintf(dsm, sizeof(dsm), " (%s of it in dynamic shared memory)", dsm_s);
	}
	ereport(LOG,
			(errmsg("pg_procmem guard: %s%s of PID %d, which%s held %s%s%s, because the %s's memory reached %s of its %s limit",
					guard == GUARD_ON ? "" : "would ",
					terminate ? (guard == GUARD_ON ? "terminated the session" : "terminate the session") :
					(guard == GUARD_ON ? "canceled the statement" : "cancel the statement"),
					a->pid, workers, held_s, terminate ? " between statements" : " in its statement", dsm,
					pressure_source_name(a->source), used_s, limit_s),
			 errdetail("pg_procmem.guard_threshold is %d%%; user \"%s\", database \"%s\", application \"%s\"; %s: %s",
					   guard_threshold, a->usename, a->datname, a->application_name,
					   b->st_state == STATE_RUNNING || b->st_state == STATE_FASTPATH ? "statement" : "its last statement",
					   a->query[0] ? a->query : "(not kept)")));
}

static int
session_cmp(const void *x, const void *y)
{
	int64		a = guard_session_part((const guard_group *) x);
	int64		b = guard_session_part((const guard_group *) y);

	return a > b ? -1 : a < b ? 1 : 0;
}

/*
 * Sessions hold memory between statements, which no cancel frees, and the
 * guard may not end them (pg_procmem.guard_terminate off): said once an
 * incident, naming the largest (remembered: a new largest is said again).
 */
static bool
named(const guard_worker *gw, int32 pid)
{
	for (int i = 0; i < GUARD_SESSIONS_NAMED; i++)
		if (gw->sessions_named[i] == pid)
			return true;
	return false;
}

static void
say_sessions(guard_worker *gw, const guard_look *look, const guard_decision *d, int source, int64 used,
			 int64 limit)
{
	guard_group *held = palloc(sizeof(guard_group) * Max(look->ngroups, 1));
	int			n = 0;
	StringInfoData named;
	char		total_s[32], used_s[32], limit_s[32];

	for (int g = 0; g < look->ngroups; g++)
		if (guard_session_part(&look->groups[g]) >= GUARD_MIN_HELD && !look->groups[g].ended)
			held[n++] = look->groups[g];
	qsort(held, n, sizeof(guard_group), session_cmp);
	initStringInfo(&named);
	for (int i = 0; i < n && i < GUARD_SESSIONS_NAMED; i++)
	{
		char		s[32], usename[NAMEDATALEN], datname[NAMEDATALEN];
		int			g = guard_look_group(look, held[i].leader, held[i].backend_start);
		PgBackendStatus *b = g >= 0 ? guard_look_leader(look, g) : NULL;

		gw->sessions_named[i] = held[i].leader;
		guard_format_bytes(s, sizeof(s), guard_session_part(&held[i]));
		who_is(held[i].leader, usename, sizeof(usename), datname, sizeof(datname));
		appendStringInfo(&named, "%sPID %d holds %s (%s, user \"%s\", application \"%s\")",
						 i == 0 ? "" : "; ", held[i].leader, s,
						 held[i].state == GUARD_STATE_IDLE ? "idle" :
						 held[i].state == GUARD_STATE_IDLE_IN_XACT ? "idle in transaction" :
						 "between its statements",
						 usename, b ? b->st_appname : "");
	}
	guard_format_bytes(total_s, sizeof(total_s), d->sessions);
	guard_format_bytes(used_s, sizeof(used_s), used);
	guard_format_bytes(limit_s, sizeof(limit_s), limit);
	ereport(WARNING,
			(errmsg("pg_procmem guard: sessions between statements hold %s of the %s's memory, which is at %s of its %s limit; a cancel frees none of it",
					total_s, pressure_source_name(source == 0 ? PRESSURE_FROM_MACHINE : PRESSURE_FROM_CGROUP),
					used_s, limit_s),
			 errdetail("The largest: %s.", named.data),
			 errhint("Memory held between statements (temp_buffers, caches, a transaction left open) is freed only when the session ends: set idle_in_transaction_session_timeout, or pg_procmem.guard_terminate to let the guard end the largest.")));
}

/* Over the threshold with nothing the guard may act on: said once an incident */
static void
say_nothing(const guard_look *look, const guard_decision *d, int source, int64 used, int64 limit)
{
	char		used_s[32], limit_s[32], held_s[32];
	const guard_group *g = d->largest_running >= 0 ? &look->groups[d->largest_running] : NULL;

	guard_format_bytes(used_s, sizeof(used_s), used);
	guard_format_bytes(limit_s, sizeof(limit_s), limit);
	if (g)
		guard_format_bytes(held_s, sizeof(held_s), guard_statement_part(g));
	ereport(WARNING,
			(errmsg("pg_procmem guard: the %s's memory is at %s of its %s limit, and no running statement is worth canceling",
					pressure_source_name(source == 0 ? PRESSURE_FROM_MACHINE : PRESSURE_FROM_CGROUP),
					used_s, limit_s),
			 g ? errdetail("The largest running statement, PID %d's, holds %s%s.", g->leader, held_s,
						   g->canceled ? ", and was canceled already" :
						   g->growth_known && g->grew < GUARD_GROWING_BYTES ? " and is not growing" : "") :
			 errdetail("No statement is running."),
			 errhint("The guard cancels no statement holding less than %d MB, nor one that is not growing whose cancel would leave the memory over pg_procmem.guard_threshold.",
					 (int) (GUARD_MIN_HELD / (1024 * 1024)))));
}

/* Whether the memory is at the critical level: past it, or reaching the limit within the lookahead */
static bool
critical_now(const guard_worker *gw, int64 used, int64 limit)
{
	const pressure_state *st = &gw->watch.state;

	if ((double) used * 100.0 >= (double) guard_critical_pct(guard_threshold) * (double) limit)
		return true;
	return st->used == used && st->ms_to_limit >= 0 &&
		st->ms_to_limit <= (int64) guard_lookahead_s * 1000;
}

/*
 * Acts on group d->group: a cancel of its statement or the end of its
 * session, said, recorded and followed. What the action frees; 0 when the
 * backend was gone meanwhile (nothing was done).
 */
static int64
act_on(guard_worker *gw, guard_look *look, const guard_decision *d, int source, int64 used, int64 limit,
	   int64 now)
{
	bool		terminate = d->verdict == GUARD_DO_TERMINATE;
	guard_group *g = &look->groups[d->group];
	PgBackendStatus *b = guard_look_leader(look, d->group);
	history_guard_action a;
	int64		frees = terminate ? guard_look_total(g) : guard_statement_part(g);

	new_action(&a, look, d, terminate, source, used, limit);
	describe_who(&a, b);
	/* acted on (or gone): not again at this look */
	g->settling = true;
	if (guard == GUARD_ON && !signal_leader(&a, look, d, terminate))
		return 0;
	describe_query(&a, b);
	guard_record_action(&a);
	if (guard != GUARD_ON)
		gw->assumed += frees;
	watch_signalled(gw, &a, g, now);
	if (!terminate)
		guard_memory_note_cancel(&gw->memory, a.pid, g->backend_start);
	log_action(&a, b, g, terminate);
	if (terminate)
		g->ended = true;
	else
		g->canceled = true;
	g->defied = false;
	return frees;
}

/*
 * A look at the backends, and the action it calls for (guard_policy.h):
 * a cancel of a statement, the end of a session, or a warning. At the
 * critical level, up to GUARD_CRITICAL_BURST actions at one look, each
 * counting what the ones before free: 170 statements growing to 10 MB each
 * outgrow one cancel a look.
 */
static void
look_and_act(guard_worker *gw, int source, int64 used, int64 limit, int64 now, bool over)
{
	guard_look	look;
	guard_situation sit;
	guard_decision d;

	StartTransactionCommand();
	guard_look_at_backends(&look, &gw->dsm, &gw->memory, now);
	gw->last_look_ms = now;
	memset(&sit, 0, sizeof(sit));
	sit.used = used;
	sit.limit = limit;
	sit.threshold_pct = guard_threshold;
	sit.critical = over && critical_now(gw, used, limit);
	sit.pending = follow_signalled(gw, &look, used, now) + gw->assumed;
	sit.terminate = guard_terminate;
	if (!over)
	{
		CommitTransactionCommand();
		return;
	}
	guard_decide(&sit, look.groups, look.ngroups, &d);
	gw->stuck = false;
	/*
	 * said where sessions hold an eighth of the use at least (else they are
	 * not the story), once an incident, unless the largest is one not named
	 */
	if ((d.verdict == GUARD_DO_CANCEL || d.verdict == GUARD_NOTHING_WORTH) && d.largest_session >= 0 &&
		!guard_terminate && d.sessions >= used / GUARD_SMALLER &&
		!named(gw, look.groups[d.largest_session].leader))
	{
		say_sessions(gw, &look, &d, source, used, limit);
		gw->nothing_said = true;	/* it says why nothing is canceled */
	}
	if (d.verdict == GUARD_NOTHING_WORTH)
	{
		if (!gw->nothing_said)
			say_nothing(&look, &d, source, used, limit);
		gw->nothing_said = true;
		/*
		 * the next look in a second, or once the memory grew by
		 * GUARD_MIN_HELD: a statement growing to be worth it shows there
		 * first (at 300 MB/s, 16 MB take 53 ms); a look a tick at 200
		 * running statements cost 17% of a core
		 */
		gw->stuck = !d.growth_unknown;
		gw->stuck_used = used;
		gw->stuck_ms = now;
	}
	for (int n = 0; n < (sit.critical ? GUARD_CRITICAL_BURST : 1); n++)
	{
		if (n > 0)
			guard_decide(&sit, look.groups, look.ngroups, &d);
		if (d.verdict != GUARD_DO_CANCEL && d.verdict != GUARD_DO_TERMINATE)
			break;
		sit.pending += act_on(gw, &look, &d, source, used, limit, now);
	}
	CommitTransactionCommand();
}

/* Whether a signalled backend is still followed: each look then follows it */
static bool
following(const guard_worker *gw)
{
	for (int i = 0; i < GUARD_WATCHED; i++)
		if (gw->watched[i].pid != 0 && (!gw->watched[i].settled || !gw->watched[i].measured))
			return true;
	return false;
}

/*
 * One tick: over the threshold, a look at every tick (but once a second
 * while nothing was worth acting on and nothing grew); near it, a look a
 * second, to know the sessions and growth before it is passed.
 */
static void
guard_tick(guard_worker *gw, int64 now)
{
	pressure_thresholds t;
	int64		used = 0, limit = 0;
	int			source;
	bool		over;

	t.high_pct = guard_threshold;
	t.critical_pct = guard_critical_pct(guard_threshold);
	t.use_stall = 0;			/* the guard acts on use against a limit alone */
	pressure_watch_tick(&gw->watch, now, &t);
	source = guard_over(&gw->watch.recent[gw->watch.newest], guard_threshold,
						(int64) guard_limit_mb * 1024 * 1024, &used, &limit);
	over = source >= 0;
	if (over)
		gw->under_since_ms = 0;
	else
	{
		gw->assumed = 0;
		gw->stuck = false;
		if (gw->under_since_ms == 0)
			gw->under_since_ms = now;
		else if (now - gw->under_since_ms >= GUARD_INCIDENT_QUIET_MS)
		{
			memset(gw->sessions_named, 0, sizeof(gw->sessions_named));
			gw->nothing_said = false;
		}
		/* near: the threshold less GUARD_NEAR_POINTS, of the nearest source */
		source = guard_over(&gw->watch.recent[gw->watch.newest], Max(guard_threshold - GUARD_NEAR_POINTS, 1),
							(int64) guard_limit_mb * 1024 * 1024, &used, &limit);
		if ((source >= 0 && now - gw->last_look_ms >= GUARD_NEAR_LOOK_MS) || following(gw))
			look_and_act(gw, source, used, limit, now, false);
		return;
	}
	if (gw->stuck && used < gw->stuck_used + GUARD_MIN_HELD && now - gw->stuck_ms < GUARD_STUCK_RECHECK_MS &&
		!following(gw))
		return;
	look_and_act(gw, source, used, limit, now, true);
}

/* --- its loop and its lifecycle -------------------------------------------- */

/* The worker's entry point, named in procmem_guard_ensure_worker()'s registration */
void
procmem_guard_main(Datum arg)
{
	static guard_worker gw;

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
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (guard == GUARD_OFF)
			break;
		guard_tick(&gw, procmem_monotonic_ms());

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
							 "Lets the guard end sessions that hold memory between statements, largest first.",
							 "A session whose running statement a cancel would stop is never ended.",
							 &guard_terminate, false,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_procmem.guard_terminate_wait",
							"Time a session the guard ended has to exit before the guard counts its memory as held again.",
							NULL,
							&guard_terminate_wait_ms, 5000, 100, 60000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_procmem.guard_lookahead",
							"The guard acts as at the critical level when the memory's growth over the last second would reach the limit within this time.",
							"At the critical level a growing statement is canceled however small beside the largest holder.",
							&guard_lookahead_s, 5, 0, 600,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	if (process_shared_preload_libraries_in_progress)
		guard_store_register();
}
