/*
 * guard_backend.c
 *		A backend's own memory limit (pg_procmem.max_backend_memory), and
 *		the error a backend reports when the guard, or that limit, canceled
 *		its statement or ended its session.
 *
 * The limit: while a client backend runs a statement, from its parse
 * analysis and planning on (the planner folds constants, so it may run
 * functions that allocate: repeat('x', 1000000000)), a timeout every
 * pg_procmem.backend_check_interval reads /proc/<pid>/statm (one pread of
 * a file kept open: what a signal handler may do) and, when what the
 * backend holds (guard_rules.h) is over the limit, cancels the statement
 * as statement_timeout does. A handler cannot walk memory contexts; the
 * kernel's count is what the OOM killer sees anyway. The timeout sets
 * itself again while the statement runs and stops when the backend is
 * idle (check_backend_memory()).
 *
 * The error: PostgreSQL has no hook in its interrupt handling, so the
 * cancel arrives as any other, "canceling statement due to user request"
 * (57014). A callback in emit_log_hook (hooks.c) turns it into the
 * guard's own error, SQLSTATE 53200 (out_of_memory) with the figures, in
 * the server log and for the client alike, when this backend was asked
 * (the guard's request in shared memory, or the limit's flag here) after
 * its statement began. The hook runs only for messages that reach the
 * server log: docs/guard.md says what the client sees when it does not
 * (log_min_messages above ERROR, an error caught in PL/pgSQL, a user's
 * cancel that lands first).
 *
 * After such a cancel the backend gives its freed heap back to the kernel
 * (malloc_trim()), once the statement's memory is released: at the reset of
 * MessageContext that starts the next command.
 */
#include "server/compat.h"

#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include "access/xact.h"
#include "lib/stringinfo.h"
#include "tcop/tcopprot.h"
#include "utils/backend_status.h"
#include "utils/memutils.h"
#include "storage/fd.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"

#include "guard/guard.h"
#include "rules/guard_rules.h"
#include "server/contexts.h"
#include "server/hooks.h"

/*
 * A statement still over its limit after this many checks in a row caught
 * each cancel (a PL/pgSQL handler): its session is ended, as nothing else
 * stops it (a second at the default interval)
 */
#define GUARD_DEFIED_CHECKS	20

/* pg_procmem.max_backend_memory (MB; 0: none), pg_procmem.backend_check_interval */
static int	max_backend_memory_mb = 0;
static int	backend_check_interval_ms = 50;

static TimeoutId check_timeout = MAX_TIMEOUTS;
static int	statm_fd = -1;
static long page_size = 0;
static volatile sig_atomic_t armed = false;
static volatile int64 limit_bytes = 0;	/* pg_procmem.max_backend_memory, bytes */
static int	armed_interval_ms = 0;

/* Set by the check (in a signal handler) when it canceled the statement */
static volatile sig_atomic_t over_limit = false;
/* checks in a row that found it over the limit; past GUARD_DEFIED_CHECKS, its session ends */
static volatile sig_atomic_t over_checks = 0;
static volatile sig_atomic_t over_terminate = false;
static volatile int64 over_held = 0;
static volatile TimestampTz over_at = 0;

/* The action a cancel recorded (pid and time), whose given-back figure the trim measures */
static TimestampTz trim_at = 0;
static int64 trim_held = 0;
static bool trim_pending = false;
static MemoryContextCallback trim_callback;

/* Whether the backend is between statements, as its status says (not known: no) */
static bool
idle_now(void)
{
	if (MyBEEntry == NULL)
		return false;
	return MyBEEntry->st_state == STATE_IDLE || MyBEEntry->st_state == STATE_IDLEINTRANSACTION ||
		MyBEEntry->st_state == STATE_IDLEINTRANSACTION_ABORTED;
}

/*
 * The check, from the SIGALRM handler: one pread, no allocation, no lock.
 * It sets itself again while the statement runs, and stops once the
 * backend is idle: an idle session gets no wake-ups, and the next statement
 * sets it again. (A timeout that repeats by itself, enable_timeout_every()
 * from 15 on, cannot be stopped from its own handler: so a one-shot
 * timeout, set again by hand, on every version.) Each look over the limit
 * cancels again: a cancel caught in PL/pgSQL does not stop the next.
 */
static void
check_backend_memory(void)
{
	char		buf[128];
	ssize_t		n;

	if (!armed)
		return;
	if (idle_now() || limit_bytes <= 0)
	{
		armed = false;
		return;
	}
	n = pread(statm_fd, buf, sizeof(buf), 0);
	if (n > 0)
	{
		int64		held = guard_held_from_statm(buf, (size_t) n, page_size);

		if (held > limit_bytes)
		{
			over_held = held;
			over_at = GetCurrentTimestamp();
			over_limit = true;
			if (++over_checks >= GUARD_DEFIED_CHECKS)
			{
				/* its cancels caught: the session ends, as pg_terminate_backend() */
				over_terminate = true;
				kill(MyProcPid, SIGTERM);
			}
			else
				/* as statement_timeout cancels (ignored at the prompt) */
				kill(MyProcPid, SIGINT);
		}
		else
			over_checks = 0;
	}
	enable_timeout_after(check_timeout, armed_interval_ms);
}

/*
 * Sets the check going as a statement is analyzed, planned or started,
 * unless it runs: error recovery stops every timeout (a failed
 * subtransaction too), so whether it runs is asked of the timeout, not
 * remembered.
 */
static void
arm(void)
{
	char		path[64];

	/* a WAL sender too: a replication=database connection runs SQL */
	if (limit_bytes <= 0 || (MyBackendType != B_BACKEND && MyBackendType != B_WAL_SENDER))
		return;
	if (check_timeout != MAX_TIMEOUTS && get_timeout_active(check_timeout))
		return;
	if (statm_fd < 0)
	{
		snprintf(path, sizeof(path), "/proc/%d/statm", (int) MyProcPid);
		/* kept open for the life of the backend: one read a check */
		statm_fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (statm_fd < 0)
		{
			ereport(WARNING,
					(errcode_for_file_access(),
					 errmsg("could not open \"%s\": %m", path),
					 errdetail("pg_procmem.max_backend_memory is not checked in this session.")));
			limit_bytes = 0;
			return;
		}
		ReserveExternalFD();
		page_size = sysconf(_SC_PAGESIZE);
	}
	if (check_timeout == MAX_TIMEOUTS)
		check_timeout = RegisterTimeout(USER_TIMEOUT, check_backend_memory);
	armed_interval_ms = backend_check_interval_ms;
	over_limit = false;
	over_checks = 0;
	armed = true;
	enable_timeout_after(check_timeout, armed_interval_ms);
}

/* Before an executor start or a utility command (a cached plan is not planned again) */
static void
arm_start(const PlannedStmt *plan)
{
	arm();
}

static void
disarm(void)
{
	if (!armed)
		return;
	armed = false;
	disable_timeout(check_timeout, false);
}

/* The limit as set now: a SET (or a function's SET) takes effect at once */
static void
assign_max_backend_memory(int newval, void *extra)
{
	limit_bytes = (int64) newval * 1024 * 1024;
}

/*
 * With track_activities off the status says nothing of idleness: the check
 * stops at each transaction's end instead (a COMMIT inside a procedure
 * stops it too, until the next statement of the procedure's that is
 * planned or starts an executor).
 */
static void
guard_xact_callback(XactEvent event, void *arg)
{
	if (!pgstat_track_activities &&
		(event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT || event == XACT_EVENT_PREPARE))
		disarm();
}

/* Gives the freed heap back, and measures what the backend gave back */
static void
trim_heap(void *arg)
{
	char		buf[128];
	ssize_t		n;

	trim_pending = false;
	malloc_trim(0);
	if (statm_fd >= 0 && trim_at != 0 && (n = pread(statm_fd, buf, sizeof(buf), 0)) > 0)
	{
		int64		held = guard_held_from_statm(buf, (size_t) n, page_size);

		if (held >= 0)
			guard_set_given_back(MyProcPid, trim_at, Max(trim_held - held, 0));
	}
	trim_at = 0;
}

static void
trim_after_abort(TimestampTz at, int64 held)
{
	MemoryContext cxt = MessageContext ? MessageContext : TopTransactionContext;

	trim_at = at;
	trim_held = held;
	if (trim_pending || cxt == NULL)
		return;
	trim_callback.func = trim_heap;
	trim_callback.arg = NULL;
	MemoryContextRegisterResetCallback(cxt, &trim_callback);
	trim_pending = true;
}

/* "2GB", as the setting was written */
static const char *
limit_as_set(void)
{
	const char *v = GetConfigOptionByName("pg_procmem.max_backend_memory", NULL, true);

	return v ? v : "?";
}

/* This backend's statement was canceled past its own limit: the row and the error */
static void
report_backend_limit(ErrorData *edata, bool terminate)
{
	history_guard_action a;
	char		held_s[32];
	const char *usename, *datname;

	guard_format_bytes(held_s, sizeof(held_s), over_held);
	memset(&a, 0, sizeof(a));
	a.at = over_at;
	a.pid = MyProcPid;
	a.what = terminate ? GUARD_TERMINATE : GUARD_CANCEL;
	a.why = GUARD_BACKEND_LIMIT;
	a.processes = 1;
	a.held = over_held;
	a.limit = limit_bytes;
	a.used = -1;
	a.given_back = -1;
	if (MyBEEntry)
	{
		a.backend_start = MyBEEntry->st_proc_start_timestamp;
		a.query_start = MyBEEntry->st_activity_start_timestamp;
	}
	procmem_contexts_my_names(&usename, &datname);
	strlcpy(a.usename, usename, sizeof(a.usename));
	strlcpy(a.datname, datname, sizeof(a.datname));
	strlcpy(a.application_name, application_name ? application_name : "", sizeof(a.application_name));
	if (procmem_keep_statement_text && debug_query_string)
		history_copy_text(a.query, sizeof(a.query), debug_query_string, strlen(debug_query_string));
	(void) guard_record_action(&a);

	edata->sqlerrcode = ERRCODE_OUT_OF_MEMORY;
	edata->message = terminate ?
		psprintf("terminating connection because this backend held %s, over pg_procmem.max_backend_memory (%s), through %d cancels its statement caught",
				 held_s, limit_as_set(), GUARD_DEFIED_CHECKS - 1) :
		psprintf("canceling statement because this backend held %s, over pg_procmem.max_backend_memory (%s)",
				 held_s, limit_as_set());
	edata->detail = NULL;
	edata->hint = pstrdup("What a backend holds is its anonymous resident memory (RssAnon in /proc/PID/status).");
	if (!terminate)
		trim_after_abort(a.at, over_held);
}

/* The guard canceled this backend's statement or ended its session: what it compared */
static void
report_guard(ErrorData *edata, const guard_request *r)
{
	char		held_s[32], used_s[32], limit_s[32], dsm_s[32], sessions_s[32], largest_s[32];
	const char *source = pressure_source_name(r->source);
	StringInfoData detail;

	guard_format_bytes(held_s, sizeof(held_s), r->held);
	guard_format_bytes(used_s, sizeof(used_s), r->used);
	guard_format_bytes(limit_s, sizeof(limit_s), r->limit);
	guard_format_bytes(dsm_s, sizeof(dsm_s), r->dsm);
	source = source ? source : "server";
	edata->sqlerrcode = ERRCODE_OUT_OF_MEMORY;
	if (r->what == GUARD_TERMINATE)
		edata->message = psprintf("terminating connection because this session held %s between statements, the most of any session, when the %s's memory reached %s of its %s limit",
								  held_s, source, used_s, limit_s);
	else if (r->processes > 1)
		edata->message = psprintf("canceling statement because it and its %d parallel workers held the most memory of the running statements (%s%s%s%s) when the %s's memory reached %s of its %s limit",
								  r->processes - 1, held_s, r->dsm > 0 ? ", " : "", r->dsm > 0 ? dsm_s : "",
								  r->dsm > 0 ? " of it in dynamic shared memory" : "", source, used_s, limit_s);
	else
		edata->message = psprintf("canceling statement because it held the most memory of the running statements (%s%s%s%s) when the %s's memory reached %s of its %s limit",
								  held_s, r->dsm > 0 ? ", " : "", r->dsm > 0 ? dsm_s : "",
								  r->dsm > 0 ? " of it in dynamic shared memory" : "", source, used_s, limit_s);
	initStringInfo(&detail);
	appendStringInfo(&detail, "pg_procmem.guard acts at pg_procmem.guard_threshold (%d%%) of the limit.",
					 r->threshold_pct);
	if (r->what != GUARD_TERMINATE && r->session_pid != 0)
	{
		guard_format_bytes(sessions_s, sizeof(sessions_s), r->sessions);
		guard_format_bytes(largest_s, sizeof(largest_s), r->session_held);
		appendStringInfo(&detail, " Sessions between statements held %s (the largest, PID %d, %s).",
						 sessions_s, r->session_pid, largest_s);
	}
	edata->detail = detail.data;
	edata->hint = NULL;
	if (r->what == GUARD_CANCEL)
		trim_after_abort(0, 0);
}

static void
guard_emit_log(ErrorData *edata)
{
	guard_request r;
	TimestampTz stmt_start = MyBEEntry ? MyBEEntry->st_activity_start_timestamp : 0;

	if (edata->elevel == ERROR && edata->sqlerrcode == ERRCODE_QUERY_CANCELED)
	{
		if (over_limit)
		{
			over_limit = false;
			if (over_at >= stmt_start)
				report_backend_limit(edata, false);
		}
		else if (guard_take_request(MyProcPid, GUARD_CANCEL, stmt_start, &r))
			report_guard(edata, &r);
	}
	else if (edata->elevel == FATAL && edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN && over_terminate)
	{
		over_terminate = false;
		report_backend_limit(edata, true);
	}
	else if (edata->elevel == FATAL && edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN &&
			 guard_take_request(MyProcPid, GUARD_TERMINATE, MyStartTimestamp, &r))
		report_guard(edata, &r);
}

/*
 * The error is rewritten before the log hooks installed before pg_procmem's
 * run (hooks.c): they see the guard's error, as the server log does.
 */
static const procmem_hooks_part guard_hooks = {
	.statement_planning = arm,
	.statement_start = arm_start,
	.log_before = guard_emit_log
};

void
procmem_guard_backend_init(void)
{
	DefineCustomIntVariable("pg_procmem.max_backend_memory",
							"Cancels a statement whose backend holds more memory than this; 0: no limit.",
							"What a backend holds is its anonymous resident memory (RssAnon).",
							&max_backend_memory_mb, 0, 0, INT_MAX,
							PGC_SUSET, GUC_UNIT_MB, NULL, assign_max_backend_memory, NULL);
	DefineCustomIntVariable("pg_procmem.backend_check_interval",
							"Time between two checks of a running statement's backend against pg_procmem.max_backend_memory.",
							NULL,
							&backend_check_interval_ms, 50, 10, 10000,
							PGC_SUSET, GUC_UNIT_MS, NULL, NULL, NULL);
	if (!process_shared_preload_libraries_in_progress)
		return;
	procmem_hooks_register(&guard_hooks);
	RegisterXactCallback(guard_xact_callback, NULL);
}
