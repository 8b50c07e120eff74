/*
 * contexts.c
 *		Every backend's memory-context totals, published to shared memory.
 *
 * With pg_procmem in shared_preload_libraries, each process with a PGPROC
 * owns one slot. It writes its totals there itself, at safe moments only
 * (never from a signal handler or while servicing an interrupt):
 *
 *	- before ExecutorEnd releases a query's memory, so a sort's or a hash's
 *	  memory is still counted;
 *	- after a utility command (CREATE INDEX, VACUUM ...);
 *	- at transaction commit and abort (an ERROR skips ExecutorEnd; by the
 *	  abort callbacks the failed query's portal memory is already gone, so
 *	  a query that fails is seen only at its previous publication).
 *
 * Walking every context costs tens of microseconds, so publication is rate
 * limited (pg_procmem.publish_interval), except that a query whose own
 * memory reached pg_procmem.publish_threshold publishes at once: that is
 * how peaks are caught. The peak is the largest total ever published.
 *
 * Slots are read without locks, st_changecount style: a writer makes the
 * counter odd, writes, makes it even; a reader retries until it copied a
 * slot between two equal, even readings.
 *
 * A backend also says in its slot whether its statement text may be kept
 * (pg_procmem.keep_statement_text, as its role, its database or its session
 * set it), as soon as that differs from what it started with: the sampler,
 * which sees only the server's setting, reads it there.
 *
 * And who it is and what it runs with (say_who()), at each statement's
 * start and after each utility command (a SET): its user, database and
 * application, its statement's start, length and whether it has bytes the
 * postmaster's copy of it folds, and its memory settings with their
 * sources. The sampler keeps the settings with each sample; when a process
 * is killed, the postmaster copies its slot (procmem_contexts_dead()), so
 * that a crash row names who ran what, sampled or not.
 */
#include "server/compat.h"

#include "access/twophase.h"
#include "access/xact.h"
#include "commands/dbcommands.h"
#include "executor/executor.h"
#include "mb/pg_wchar.h"
#include "postmaster/bgworker.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "utils/backend_status.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "server/contexts.h"
#include "server/hooks.h"
#include "server/members.h"
#include "server/memory_settings.h"
#include "server/plan_memory.h"
#include "server/shmem.h"

typedef struct contexts_shared
{
	int			nslots;
	context_slot slots[FLEXIBLE_ARRAY_MEMBER];
} contexts_shared;

static contexts_shared *shared = NULL;
bool		procmem_keep_statement_text = true;
static int	publish_interval_ms = 1000;
static int	publish_threshold_kb = 4096;
static TimestampTz last_publish = 0;
static bool last_was_big = false;	/* the next point publishes too: memory falls */
static bool exit_callback_registered = false;
/* The test-only hook (contexts.h), looked up in _PG_init: NULL unless preloaded */
static void **slot_hook = NULL;

/* Its user and database, as pg_stat_activity names them; looked up once */
static char my_usename[NAMEDATALEN];
static char my_datname[NAMEDATALEN];
static bool names_known = false;

/* What this backend said last in its slot's who (say_who()) */
static TimestampTz said_start = 0;
static int32 said_plan = 0;
static history_settings said_settings;
static char said_appname[NAMEDATALEN];

static int
slot_count(void)
{
	/* every PGPROC: backends, auxiliary processes, prepared transactions */
	return procmem_max_backends() + NUM_AUXILIARY_PROCS + max_prepared_xacts;
}

static Size
shared_size(void)
{
	return add_size(offsetof(contexts_shared, slots),
					mul_size(slot_count(), sizeof(context_slot)));
}

/* A new struct: every slot empty */
static void
contexts_shmem_init(void *part)
{
	contexts_shared *s = part;

	s->nslots = slot_count();
	for (int i = 0; i < s->nslots; i++)
	{
		memset(&s->slots[i], 0, sizeof(context_slot));
		s->slots[i].keep_text = -1;
		pg_atomic_init_u32(&s->slots[i].changecount, 0);
	}
}

/*
 * The PGPROCs, as this process attached them: the postmaster's crash path
 * reads them through its own pointer, never one shared memory holds (a
 * backend that scribbled on shared memory before it crashed must not take
 * the postmaster with it).
 */
static PGPROC *all_procs = NULL;

static void
contexts_shmem_attached(void *part, bool found)
{
	shared = part;
	all_procs = ProcGlobal->allProcs;
}

static const procmem_shmem_part contexts_part = {
	"pg_procmem contexts", shared_size, 0, contexts_shmem_init, contexts_shmem_attached
};

static context_slot *
my_slot(void)
{
	int			n;

	if (shared == NULL || MyProc == NULL)
		return NULL;
	n = procmem_my_procno();
	return (n >= 0 && n < shared->nslots) ? &shared->slots[n] : NULL;
}

/*
 * A write leaves the counter odd until write_end(); inside a critical
 * section, so that an ERROR between the two (which would leave it odd and
 * readers retrying forever) is a PANIC instead, as for PostgreSQL's own
 * st_changecount.
 */
static void
write_begin(context_slot *slot)
{
	START_CRIT_SECTION();
	pg_atomic_fetch_add_u32(&slot->changecount, 1);
	pg_write_barrier();
}

static void
write_end(context_slot *slot)
{
	pg_write_barrier();
	pg_atomic_fetch_add_u32(&slot->changecount, 1);
	END_CRIT_SECTION();
}

/*
 * At exit the slot's figures go (a new owner starts afresh: claim_slot()),
 * but not who it was: pg_stat_activity shows the process, with its last
 * statement, until after this runs, and the sampler must still find its
 * keep_statement_text then.
 */
static void
clear_slot(int code, Datum arg)
{
	context_slot *slot = my_slot();

	if (slot == NULL || slot->pid != MyProcPid)
		return;
	write_begin(slot);
	slot->publications = 0;
	slot->exited = true;
	write_end(slot);
}

/* Makes the slot ours (between write_begin and write_end): one a previous owner left starts afresh */
static void
claim_slot(context_slot *slot)
{
	const char *type;

	/* ours, unless an earlier process with our pid left it (exited, or another start) */
	if (slot->pid == MyProcPid && !slot->exited && slot->backend_start == MyStartTimestamp)
		return;
	slot->pid = MyProcPid;
	slot->backend_start = MyStartTimestamp;
	slot->peak_bytes = 0;
	slot->publications = 0;
	slot->keep_text = -1;
	slot->exited = false;
	memset(&slot->who, 0, sizeof(slot->who));
	said_start = 0;
	said_plan = 0;
	/* a background worker by its own type, as pg_stat_activity names it */
	type = MyBackendType == B_BG_WORKER && MyBgworkerEntry ? MyBgworkerEntry->bgw_type :
		GetBackendTypeDesc(MyBackendType);
	strlcpy(slot->who.backend_type, type, sizeof(slot->who.backend_type));
	if (!exit_callback_registered)
	{
		before_shmem_exit(clear_slot, (Datum) 0);
		exit_callback_registered = true;
	}
}

/*
 * pg_procmem.keep_statement_text changed in this backend (its role's or
 * database's setting at connection, SET, RESET, a reload): said in its slot
 * at once, for the sampler. Nothing here can fail.
 */
static void
keep_text_assign(bool newval, void *extra)
{
	context_slot *slot;

	if (shared == NULL || proc_exit_inprogress || (slot = my_slot()) == NULL)
		return;
	write_begin(slot);
	claim_slot(slot);
	slot->keep_text = newval;
	write_end(slot);
}

/*
 * A byte the postmaster's copy of a statement
 * (pgstat_get_crashed_backend_activity(), through ascii_safe_strlcpy())
 * shows as '?': above 127, or a control character but newline, carriage
 * return and tab.
 */
static inline bool
folded(unsigned char ch)
{
	return ch > 127 || (ch < 32 && ch != '\n' && ch != '\r' && ch != '\t');
}

/* Whether that copy of the first len bytes shows some as '?' */
static bool
folds(const char *text, int len)
{
	for (int i = 0; i < len; i++)
		if (folded((unsigned char) text[i]))
			return true;
	return false;
}

/* Its first bytes as that copy shows them: which statement the slot speaks of */
static void
ascii_head(char *head, int size, const char *text, int len)
{
	int			n = Min(len, size - 1);

	for (int i = 0; i < n; i++)
		head[i] = folded((unsigned char) text[i]) ? '?' : text[i];
	memset(head + n, 0, size - n);
}

/*
 * Says in the slot who this backend is and what it runs with, at a
 * statement's start and after a utility command (and, at a transaction's
 * end, the settings it will have after it: after_xact): when
 * the statement, the memory settings or the application name changed since
 * it last said (a function's queries, run within the statement, say
 * nothing new but the sorts and hashes of their plans: at an executor
 * start, plan is the one about to run). Nothing here can fail.
 */
static void
say_who(const history_settings *after_xact, const PlannedStmt *plan)
{
	context_slot *slot;
	TimestampTz start = GetCurrentStatementStartTimestamp();
	/* the client's statement, as pgstat's activity holds it (not a function's query) */
	const char *text = debug_query_string;
	history_settings settings;
	int32		plan_flags;
	const char *app = application_name ? application_name : "";

	if (shared == NULL || proc_exit_inprogress || (slot = my_slot()) == NULL)
		return;
	/* the catalogs, once, in a transaction (not in the critical section below) */
	if (!names_known && IsTransactionState())
	{
		const char *u = OidIsValid(GetSessionUserId()) ? GetUserNameFromId(GetSessionUserId(), true) : NULL;
		const char *d = OidIsValid(MyDatabaseId) ? get_database_name(MyDatabaseId) : NULL;

		strlcpy(my_usename, u ? u : "", sizeof(my_usename));
		strlcpy(my_datname, d ? d : "", sizeof(my_datname));
		names_known = true;
	}
	if (after_xact)
		settings = *after_xact;
	else
		procmem_memory_settings(&settings);
	/*
	 * A new statement's plans from its start; the queries its functions run
	 * add their kinds, never "known" to a statement whose own are not
	 */
	if (start != said_start)
		plan_flags = plan ? procmem_plan_memory(plan) : 0;
	else if (plan != NULL &&
			 (plan->commandType == CMD_UTILITY || (said_plan & CRASH_PLAN_MEMORY) != CRASH_PLAN_MEMORY))
	{
		int32		more = procmem_plan_memory(plan);

		/* a utility run within it that is not known makes it not known (CREATE INDEX in a DO) */
		plan_flags = (more & CRASH_PLAN_KNOWN) ? said_plan | (more & CRASH_PLAN_MEMORY) :
			said_plan & ~CRASH_PLAN_KNOWN;
	}
	else
		plan_flags = said_plan;
	if (start == said_start && slot->pid == MyProcPid && plan_flags == said_plan &&
		memcmp(&settings, &said_settings, sizeof(settings)) == 0 &&
		strncmp(app, said_appname, sizeof(said_appname)) == 0)
		return;
	write_begin(slot);
	claim_slot(slot);
	if (start != said_start && text != NULL)
	{
		int			len = strlen(text);
		/* what the postmaster's copy of it holds: no more */
		int			kept = Min(len, Min(pgstat_track_activity_query_size, HISTORY_CRASH_QUERY_LEN) - 1);

		slot->who.query_len = len;
		slot->who.query_folded = folds(text, kept);
		ascii_head(slot->who.query_head, sizeof(slot->who.query_head), text, kept);
	}
	else if (start != said_start)
	{
		slot->who.query_len = 0;
		slot->who.query_folded = false;
		memset(slot->who.query_head, 0, sizeof(slot->who.query_head));
	}
	slot->who.query_start = start;
	slot->who.plan_flags = plan_flags;
	slot->who.settings = settings;
	memcpy(slot->who.usename, my_usename, sizeof(my_usename));
	memcpy(slot->who.datname, my_datname, sizeof(my_datname));
	strlcpy(slot->who.appname, app, sizeof(slot->who.appname));
	write_end(slot);
	said_start = start;
	said_plan = plan_flags;
	said_settings = settings;
	strlcpy(said_appname, app, sizeof(said_appname));
}

/* Keeps the TOP_CONTEXTS largest, largest first. */
static void
consider_top(context_entry *top, MemoryContext c, int64 bytes)
{
	int			i = TOP_CONTEXTS;

	while (i > 0 && top[i - 1].bytes < bytes)
		i--;
	if (i == TOP_CONTEXTS)
		return;
	memmove(&top[i + 1], &top[i], (TOP_CONTEXTS - 1 - i) * sizeof(context_entry));
	strlcpy(top[i].name, c->name ? c->name : "", NAMEDATALEN);
	top[i].ident[0] = '\0';
	if (c->ident && procmem_keep_statement_text)
	{
		int			slen = strlen(c->ident);
		/* clipped at a character boundary; never past the string */
		int			len = Min(pg_mbcliplen(c->ident, slen, CONTEXT_IDENT_LEN - 1), Min(slen, CONTEXT_IDENT_LEN - 1));

		memcpy(top[i].ident, c->ident, len);
		top[i].ident[len] = '\0';
	}
	top[i].bytes = bytes;
}

/*
 * Walks every memory context of this process without allocating (it runs
 * in transaction abort too, possibly after running out of memory).
 */
void
procmem_contexts_measure(int64 *total, int64 *freebytes, int32 *count, context_entry *top)
{
	MemoryContext c = TopMemoryContext;

	*total = *freebytes = 0;
	*count = 0;
	memset(top, 0, sizeof(context_entry) * TOP_CONTEXTS);
	while (c != NULL)
	{
		MemoryContextCounters n;

		memset(&n, 0, sizeof(n));
		c->methods->stats(c, NULL, NULL, &n, false);
		*total += n.totalspace;
		*freebytes += n.freespace;
		(*count)++;
		consider_top(top, c, n.totalspace);

		if (c->firstchild)
			c = c->firstchild;
		else
		{
			while (c != TopMemoryContext && c->nextchild == NULL)
				c = c->parent;
			c = (c == TopMemoryContext) ? NULL : c->nextchild;
		}
	}
}

void
procmem_contexts_publish(void)
{
	context_slot *slot = my_slot();
	int64		total, freebytes;
	int32		count;
	context_entry top[TOP_CONTEXTS];

	if (slot == NULL)
		return;
	procmem_contexts_measure(&total, &freebytes, &count, top);
	last_publish = GetCurrentTimestamp();

	write_begin(slot);
	claim_slot(slot);
	slot->published_at = last_publish;
	slot->total_bytes = total;
	slot->free_bytes = freebytes;
	slot->contexts = count;
	if (total > slot->peak_bytes)
	{
		slot->peak_bytes = total;
		slot->peak_at = last_publish;
		memcpy(slot->peak_top, top, sizeof(top));
	}
	if (slot->publications < PG_INT32_MAX)
		slot->publications++;
	memcpy(slot->top, top, sizeof(top));
	write_end(slot);
}

/*
 * Publishes if it is time, or at once when big; and right after a big one,
 * so that the figure falls back when the query's memory is released.
 */
static void
maybe_publish(bool big)
{
	/* exiting: clear_slot may already have run, and must stay last */
	if (shared == NULL || proc_exit_inprogress)
		return;
	if (big || last_was_big || last_publish == 0 ||
		TimestampDifferenceExceeds(last_publish, GetCurrentTimestamp(), publish_interval_ms))
	{
		procmem_contexts_publish();
		last_was_big = big;
	}
}

/* Before each executor start and utility command (hooks.c) */
static void
statement_start(const PlannedStmt *plan)
{
	say_who(NULL, plan);
}

static void
executor_end(QueryDesc *queryDesc)
{
	/* before the executor frees it: this query's memory is still there */
	if (shared != NULL && queryDesc->estate != NULL)
		maybe_publish(MemoryContextMemAllocated(queryDesc->estate->es_query_cxt, true) >=
					  (Size) publish_threshold_kb * 1024);
}

static void
utility_done(void)
{
	/* a SET: said before the next statement runs */
	say_who(NULL, NULL);
	maybe_publish(false);
}

static const procmem_hooks_part contexts_hooks = {
	.statement_start = statement_start,
	.executor_end = executor_end,
	.utility_done = utility_done
};

static void
contexts_xact_callback(XactEvent event, void *arg)
{
	/* the transaction's memory is still allocated at these events */
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
			{
				history_settings after;

				/* a SET LOCAL's value goes with the transaction: say what stays */
				if (procmem_memory_settings_after_xact(&after, event == XACT_EVENT_COMMIT))
					say_who(&after, NULL);
			}
			maybe_publish(false);
			break;
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			maybe_publish(false);
			break;
		default:
			break;
	}
}

void
procmem_contexts_init(void)
{
	DefineCustomBoolVariable("pg_procmem.keep_statement_text",
							 "Keeps statement text where pg_procmem would show it.",
							 "The memory history's queries, and the identifiers of the largest memory "
							 "contexts (a prepared statement's or a cached plan's text, from earlier "
							 "statements too, literals included). Off: neither kept nor shown; a role's "
							 "or a database's setting holds for its sessions.",
							 &procmem_keep_statement_text, true,
							 PGC_SUSET, 0, NULL, keep_text_assign, NULL);
	DefineCustomIntVariable("pg_procmem.publish_interval",
							"Minimum time between two publications of a backend's memory-context totals.",
							"A query whose own memory reaches pg_procmem.publish_threshold publishes at once.",
							&publish_interval_ms, 1000, 0, 3600 * 1000,
							PGC_SUSET, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_procmem.publish_threshold",
							"Query memory that makes a backend publish its totals at once, at the end of the query.",
							NULL,
							&publish_threshold_kb, 4096, 0, INT_MAX,
							PGC_SUSET, GUC_UNIT_KB, NULL, NULL, NULL);

	if (!process_shared_preload_libraries_in_progress)
		return;
	/* here, in the postmaster: its log hook must not allocate (14, 15) */
	slot_hook = find_rendezvous_variable(PROCMEM_SLOT_HOOK);
	procmem_shmem_register(&contexts_part);
	procmem_hooks_register(&contexts_hooks);
	RegisterXactCallback(contexts_xact_callback, NULL);
}

/* Copies a slot consistently (see the header comment). */
static void
read_slot(context_slot *slot, context_slot *copy)
{
	for (;;)
	{
		uint32		before = pg_atomic_read_u32(&slot->changecount);
		uint32		after;

		pg_read_barrier();
		memcpy(copy, slot, sizeof(context_slot));
		pg_read_barrier();
		after = pg_atomic_read_u32(&slot->changecount);
		if (before == after && (before & 1) == 0)
			return;
		pg_spin_delay();
		CHECK_FOR_INTERRUPTS();
	}
}

int
procmem_contexts_slots(void)
{
	return shared ? shared->nslots : -1;
}

static bool
slot_unreadable(int32 pid)
{
	return slot_hook != NULL && *slot_hook != NULL && ((procmem_slot_hook_fn) *slot_hook) (pid);
}

/*
 * Slot i, copied consistently: false when it is empty, or its pid is not
 * the live process at the slot's PGPROC (nobody else's figures). An
 * exiting process's slot is read (no figures: publications 0).
 */
bool
procmem_contexts_read(int i, context_slot *copy)
{
	read_slot(&shared->slots[i], copy);
	return copy->pid != 0 && procmem_pgproc_live_pid(&ProcGlobal->allProcs[i]) == copy->pid &&
		!slot_unreadable(copy->pid);
}

/*
 * The published total and the statement-text setting of every process with
 * a PGPROC now, sorted by pid (palloc'd, *n of them); NULL without the
 * shared memory. One whose slot is not its own never said anything
 * (keep_text -1, bytes -1); one whose slot cannot be read is left out.
 */
procmem_context_total *
procmem_contexts_totals(int *n)
{
	procmem_context_total *t;

	*n = 0;
	if (shared == NULL)
		return NULL;
	t = palloc(sizeof(procmem_context_total) * shared->nslots);
	for (int i = 0; i < shared->nslots; i++)
	{
		pid_t		pid = procmem_pgproc_live_pid(&ProcGlobal->allProcs[i]);
		context_slot s;

		if (pid <= 0 || slot_unreadable(pid))
			continue;
		read_slot(&shared->slots[i], &s);
		/* claimed after this read by a process that took the PGPROC since: next time */
		if (procmem_pgproc_live_pid(&ProcGlobal->allProcs[i]) != pid)
			continue;
		t[*n].pid = pid;
		t[*n].backend_start = s.backend_start;
		t[*n].exited = s.exited;
		if (s.pid != pid)
		{
			t[*n].keep_text = -1;
			t[*n].backend_start = 0;
			t[*n].exited = false;
			memset(&t[*n].settings, 0, sizeof(t[*n].settings));
			t[(*n)++].bytes = -1;
			continue;
		}
		t[*n].keep_text = s.keep_text;
		t[*n].settings = s.who.settings;
		t[(*n)++].bytes = s.publications > 0 ? s.total_bytes : -1;
	}
	qsort(t, *n, sizeof(procmem_context_total), procmem_pid_cmp);
	return t;
}

bool
procmem_contexts_text_allowed(const procmem_context_total *t)
{
	if (t == NULL)
		return false;
	return t->keep_text >= 0 ? t->keep_text != 0 : procmem_keep_statement_text;
}

const procmem_context_total *
procmem_contexts_find(const procmem_context_total *totals, int n, int32 pid, TimestampTz backend_start)
{
	/* what a process that never claimed its slot said: nothing */
	static procmem_context_total unsaid = {.keep_text = -1, .bytes = -1};
	procmem_context_total key = {.pid = pid};
	const procmem_context_total *t;

	t = totals ? bsearch(&key, totals, n, sizeof(procmem_context_total), procmem_pid_cmp) : NULL;
	/*
	 * a slot an earlier process with this pid left, which this one has not
	 * claimed (an exited one, when the start to tell them apart is unknown)
	 */
	if (t && (backend_start != 0 ? t->backend_start != 0 && t->backend_start != backend_start : t->exited))
	{
		unsaid.pid = pid;
		return &unsaid;
	}
	return t;
}

/*
 * In the postmaster, from its log hook, when a child exited abnormally:
 * the slot of pid, copied with one read that does not retry (the process
 * is gone; a copy torn by a write it was killed in is no copy). Bounded:
 * the slots this postmaster made, each a pid compare. Nothing read is
 * trusted: the texts are cut to their fields.
 */
procmem_slot_found
procmem_contexts_dead(int32 pid, procmem_slot_who *out)
{
	int			n = slot_count();
	bool		has_pgproc = false;

	if (shared == NULL || pid <= 0)
		return SLOT_GONE;
	for (int i = 0; i < n; i++)
	{
		volatile context_slot *slot = &shared->slots[i];
		uint32		before;

		/*
		 * A killed process keeps its PGPROC and its latch; one that exited
		 * cleanly gave them up (on 14 to 16 its pid stays in the PGPROC)
		 */
		if (all_procs == NULL || procmem_pgproc_live_pid(&all_procs[i]) != pid)
			continue;
		has_pgproc = true;
		if (slot->pid != pid)
			continue;
		/* exiting when killed, or an earlier process's with this pid: who it was is not known */
		if (slot->exited)
			return SLOT_GONE;
		if (slot_unreadable(pid))
			return SLOT_TORN;
		before = pg_atomic_read_u32(&shared->slots[i].changecount);
		pg_read_barrier();
		memcpy(out, (const void *) &slot->who, sizeof(*out));
		out->keep_text = slot->keep_text;
		out->backend_start = slot->backend_start;
		pg_read_barrier();
		if ((before & 1) != 0 || pg_atomic_read_u32(&shared->slots[i].changecount) != before ||
			slot->pid != pid)
			return SLOT_TORN;
		out->backend_type[sizeof(out->backend_type) - 1] = '\0';
		out->usename[sizeof(out->usename) - 1] = '\0';
		out->datname[sizeof(out->datname) - 1] = '\0';
		out->appname[sizeof(out->appname) - 1] = '\0';
		out->query_head[sizeof(out->query_head) - 1] = '\0';
		return SLOT_READ;
	}
	return has_pgproc ? SLOT_NONE : SLOT_GONE;
}

/*
 * This backend's user and database names, as it looked them up for its
 * slot (no catalog access: the guard's log hook calls it during an error);
 * empty when not known yet.
 */
void
procmem_contexts_my_names(const char **usename, const char **datname)
{
	*usename = names_known ? my_usename : "";
	*datname = names_known ? my_datname : "";
}
