/*
 * sampler.c
 *		The background worker that keeps the memory history.
 *
 * At its start it loads the history's file into the ring (history_file.c),
 * once per shared memory, and writes down the crash restarts the
 * postmaster handed over (crashes.c). Then, every
 * pg_procmem.sample_interval, it takes a sample: the cheap figures of every
 * process of the server (procmem_walk(), as pg_procmem_backends: never PSS)
 * with who each one is (pg_stat_activity's sources), and the machine's;
 * appends it to the ring in shared memory (history_ring.c) and to the file,
 * and writes nothing else. The ring's lock is held only to copy one sample
 * in; no backend ever waits for the sampler.
 *
 * The interval is kept on the monotonic clock: a step of the wall clock,
 * back or forth, neither stops nor hurries sampling, and samples are
 * numbered in the order they were taken whatever their times say.
 */
#include "compat.h"

#include <signal.h>
#include <time.h>

#include "access/xact.h"
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "portability/instr_time.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/acl.h"
#include "utils/backend_status.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "connections.h"
#include "contexts.h"
#include "crashes.h"
#include "history_file.h"
#include "history_ring.h"
#include "members.h"
#include "sampler.h"
#include "sysmem.h"
#include "walk.h"

PGDLLEXPORT void procmem_sampler_main(Datum arg);

/* pg_procmem.sample_interval, ms; 0: no sampling */
static int	sample_interval_ms = 10000;

/* Who a process is, from its backend status (pid first: procmem_pid_cmp) */
typedef struct who
{
	int32		pid;
	int32		leader_pid;
	int64		backend_start;
	int64		query_start;
	int64		query_id;
	const char *backend_type;
	const char *datname;
	const char *usename;
	const char *appname;
	const char *state;
	const char *query;
} who;

/* One sample being taken */
typedef struct sample_state
{
	who		   *who;
	int			nwho;
	procmem_context_total *contexts;	/* procmem_contexts_totals() */
	int			ncontexts;
	history_entry *e;
	uint32		n;
	uint32		cap;
	TimestampTz at;
} sample_state;

static sysmem_cgroup cgroup;
static bool cgroup_known = false;

/* The SIGTERM that ends the loop came from the postmaster: it shuts down */
static volatile sig_atomic_t stopped_by_postmaster = false;

static const char *
state_name(BackendState s)
{
	switch (s)
	{
		case STATE_IDLE:
			return "idle";
		case STATE_RUNNING:
			return "active";
		case STATE_IDLEINTRANSACTION:
			return "idle in transaction";
		case STATE_FASTPATH:
			return "fastpath function call";
		case STATE_IDLEINTRANSACTION_ABORTED:
			return "idle in transaction (aborted)";
		case STATE_DISABLED:
			return "disabled";
		default:
			return "";
	}
}

/*
 * Who every process with a backend status is (what pg_stat_activity shows),
 * sorted by pid. The names need the catalogs: a short transaction, which
 * also ends the backend status snapshot. The statement text is copied
 * whatever the settings say: whether it may be kept is each backend's own
 * setting, read after it (sample_process()).
 */
static void
read_who(sample_state *st)
{
	MemoryContext sample_cxt = CurrentMemoryContext;
	int			n;

	StartTransactionCommand();
	/* what is kept must outlive the transaction's memory */
	MemoryContextSwitchTo(sample_cxt);
	n = pgstat_fetch_stat_numbackends();
	st->who = palloc0(sizeof(who) * Max(n, 1));
	for (int i = 1; i <= n; i++)
	{
		LocalPgBackendStatus *l = procmem_local_beentry(i);
		PgBackendStatus *b;
		who		   *w;
		PGPROC	   *proc;
		const char *bgw_type;

		if (l == NULL || l->backendStatus.st_procpid <= 0)
			continue;
		b = &l->backendStatus;
		w = &st->who[st->nwho++];
		w->pid = b->st_procpid;
		w->backend_start = b->st_proc_start_timestamp;
		w->query_start = b->st_activity_start_timestamp;
		w->query_id = (int64) b->st_query_id;
		/* a background worker by its own type, as pg_stat_activity names it */
		bgw_type = b->st_backendType == B_BG_WORKER ? GetBackgroundWorkerTypeByPid(w->pid) : NULL;
		w->backend_type = pstrdup(bgw_type ? bgw_type : GetBackendTypeDesc(b->st_backendType));
		w->datname = OidIsValid(b->st_databaseid) ? get_database_name(b->st_databaseid) : NULL;
		w->usename = OidIsValid(b->st_userid) ? GetUserNameFromId(b->st_userid, true) : NULL;
		w->appname = pstrdup(b->st_appname);
		w->state = state_name(b->st_state);
		w->query = pgstat_clip_activity(b->st_activity_raw);
		/* a parallel worker's leader, as pg_stat_activity finds it */
		proc = b->st_backendType == B_BG_WORKER ? BackendPidGetProc(w->pid) : NULL;
		if (proc && proc->lockGroupLeader && proc->lockGroupLeader != proc)
			w->leader_pid = proc->lockGroupLeader->pid;
	}
	CommitTransactionCommand();
	MemoryContextSwitchTo(sample_cxt);
	qsort(st->who, st->nwho, sizeof(who), procmem_pid_cmp);
}

static void
copy_text(char *dst, size_t sz, const char *src)
{
	history_copy_text(dst, sz, src ? src : "", src ? strlen(src) : 0);
}

static history_entry *
new_entry(sample_state *st, history_kind kind, int32 pid)
{
	history_entry *e;

	if (st->n == st->cap)
	{
		st->cap *= 2;
		st->e = repalloc_huge(st->e, sizeof(history_entry) * st->cap);
	}
	e = &st->e[st->n++];
	memset(e, 0, sizeof(*e));
	e->sampled_at = st->at;
	e->kind = kind;
	e->pid = pid;
	return e;
}

/*
 * Whether a backend's statement text may be kept: its own
 * pg_procmem.keep_statement_text where it published one (a role's or a
 * session's setting), else the server's.
 */
static bool
text_allowed(const procmem_context_total *t)
{
	return t && t->keep_text >= 0 ? t->keep_text != 0 : procmem_keep_statement_text;
}

/* A procmem_visit_fn: one process's entry */
static bool
sample_process(void *dest, pid_t pid, procmem_membership kind,
			   const procfs_stat *id, const procmem_options *opt)
{
	sample_state *st = dest;
	procmem_options o = *opt;
	procmem_reading s;
	history_entry *e;
	history_process *p;
	who			key = {.pid = pid};
	who		   *w;
	const procmem_context_total *t;

	w = bsearch(&key, st->who, st->nwho, sizeof(who), procmem_pid_cmp);
	/* no backend status (a child without a PGPROC, or one just started): its title */
	o.want_cmdline = (w == NULL && kind != MEMBER_POSTMASTER && kind != MEMBER_HIDDEN);
	if (!procmem_read_member(pid, kind, id, &o, &s))
		return false;
	t = procmem_contexts_find(st->contexts, st->ncontexts, pid);
	e = new_entry(st, HISTORY_PROCESS, pid);
	p = &e->u.proc;
	p->overhead = s.overhead;
	p->private_anon = s.anon.exclusive;
	p->page_tables = s.status.vm_pte;
	p->rss = s.status.vm_rss;
	p->swap = s.status.vm_swap;
	p->oom_score = (s.unreadable & (1u << PROCMEM_FILE_OOM_SCORE)) || s.oom_score > PG_INT32_MAX ?
		HISTORY_NO_SCORE : (int32) s.oom_score;
	p->context_bytes = t ? t->bytes : -1;
	if (t)
		p->settings = t->settings;

	if (w)
	{
		p->backend_start = w->backend_start;
		p->query_start = w->query_start;
		p->query_id = w->query_id;
		p->leader_pid = w->leader_pid;
		copy_text(p->backend_type, sizeof(p->backend_type), w->backend_type);
		copy_text(p->datname, sizeof(p->datname), w->datname);
		copy_text(p->usename, sizeof(p->usename), w->usename);
		copy_text(p->application_name, sizeof(p->application_name), w->appname);
		copy_text(p->state, sizeof(p->state), w->state);
		if (text_allowed(t))
			copy_text(p->query, sizeof(p->query), w->query);
	}
	else if (pid == PostmasterPid)
		copy_text(p->backend_type, sizeof(p->backend_type), "postmaster");
	else if (o.want_cmdline)
	{
		char		title[128];

		procmem_title_type(s.cmdline, s.cmdline_len, title, sizeof(title));
		copy_text(p->backend_type, sizeof(p->backend_type), title);
	}
	return true;
}

/* The system entry: the machine and the server's cgroup */
static void
sample_system(history_system *sys)
{
	sysmem_meminfo mi;
	sysmem_cgmem cg;

	sysmem_read_meminfo(&mi);
	sysmem_cgmem_init(&cg);
	if (cgroup_known)
		sysmem_read_cgmem(&cgroup, &cg);
	sys->run_started = history_run_started();
	sys->postmaster_started = PgStartTime;
	sys->sample = history_ring_last_number() + 1;
	sys->mem_total = mi.mem_total;
	sys->mem_available = mi.mem_available;
	sys->swap_used = mi.swap_total >= 0 && mi.swap_free >= 0 ? mi.swap_total - mi.swap_free : -1;
	sys->page_tables = mi.page_tables;
	sys->hugepages_total = mi.hugepages_total;
	sys->hugepages_free = mi.hugepages_free;
	sys->cgroup_usage = cg.usage;
	sys->cgroup_limit = cg.limit;
	sys->cgroup_oom_kills = cg.oom_kill;
	sys->connections = procmem_connections();
}

static int
overhead_desc(const void *a, const void *b)
{
	int64		x = ((const history_entry *) a)->u.proc.overhead;
	int64		y = ((const history_entry *) b)->u.proc.overhead;

	return (x < y) - (x > y);
}

/*
 * A sample larger than the ring keeps its system entry and the processes
 * holding the most, as many as fit; said once in the log.
 */
static void
fit_ring(sample_state *st)
{
	static bool said = false;
	uint32		capacity = history_ring_capacity();

	if (st->n > capacity)
	{
		if (!said)
			ereport(LOG,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("a sample of the memory history does not fit pg_procmem.history_size"),
					 errdetail("It has %u processes; the history keeps the %u holding the most.",
							   st->n - 1, capacity - 1),
					 errhint("Raise pg_procmem.history_size.")));
		said = true;
		qsort(st->e + 1, st->n - 1, sizeof(history_entry), overhead_desc);
		st->n = capacity;
	}
	st->e[0].u.sys.kept = (int32) (st->n - 1);
}

static void
take_sample(MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	sample_state st;
	procmem_options opt = procmem_current_options(false);
	instr_time	start, end;
	struct timespec cpu_start, cpu_end;
	static bool hidden_said = false;

	INSTR_TIME_SET_CURRENT(start);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_start);
	memset(&st, 0, sizeof(st));
	st.at = GetCurrentTimestamp();
	st.cap = 256;
	st.e = palloc(sizeof(history_entry) * st.cap);
	new_entry(&st, HISTORY_SYSTEM, 0);
	read_who(&st);
	st.contexts = procmem_contexts_totals(&st.ncontexts);
	/* where /proc hides the server, the system figures only: said once */
	if (procmem_check_proc_visible(hidden_said ? DEBUG1 : LOG))
		procmem_walk(sample_process, &st, &opt);
	else
		hidden_said = true;
	sample_system(&st.e[0].u.sys);
	st.e[0].u.sys.processes = (int32) (st.n - 1);
	fit_ring(&st);
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_end);
	/* its own CPU: the wall time also counts waiting for a busy machine */
	st.e[0].u.sys.sample_us = (int64) (cpu_end.tv_sec - cpu_start.tv_sec) * 1000000 +
		(cpu_end.tv_nsec - cpu_start.tv_nsec) / 1000;
	st.e[0].u.sys.sample_wall_us = INSTR_TIME_GET_MICROSEC(end);

	history_ring_append(st.e, st.n);
	history_file_append_sample(st.e, st.n);
	MemoryContextSwitchTo(old);
	MemoryContextReset(cxt);
}

/*
 * Loads the file and writes down the crashes, before the first sample. New
 * crash rows get a rewrite, which puts the crash rows first in the file: a
 * record torn at its end (a machine crash) must not take them along.
 */
static void
start_history(void)
{
	if (crashes_note(history_file_load()) > 0)
		history_file_rewrite();
	else
		history_file_start();
}

static int64
monotonic_ms(void)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	return (int64) INSTR_TIME_GET_MILLISEC(now);
}

/*
 * SIGTERM, as SignalHandlerForShutdownRequest, noting who sent it: the
 * postmaster when the server shuts down, a backend for
 * pg_terminate_backend() (after which the sampler starts again, and the
 * run goes on).
 */
static void
sampler_sigterm(int signo, siginfo_t *info, void *context)
{
	int			save_errno = errno;

	if (info != NULL && info->si_pid == PostmasterPid)
		stopped_by_postmaster = true;
	ShutdownRequestPending = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

void
procmem_sampler_main(Datum arg)
{
	MemoryContext cxt;
	int64		next = 0;		/* monotonic ms */
	struct sigaction term;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	memset(&term, 0, sizeof(term));
	term.sa_sigaction = sampler_sigterm;
	term.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&term.sa_mask);
	sigaction(SIGTERM, &term, NULL);
	/* pg_cancel_backend() cancels nothing here: it must not end the history */
	pqsignal(SIGINT, SIG_IGN);
	BackgroundWorkerUnblockSignals();
	/* no database: the names it needs are in shared catalogs */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("pg_procmem sampler");

	cxt = AllocSetContextCreate(TopMemoryContext, "pg_procmem sample", ALLOCSET_DEFAULT_SIZES);
	cgroup_known = sysmem_find_cgroup(&cgroup) == 0;
	start_history();

	while (!ShutdownRequestPending)
	{
		long		timeout = -1;
		int			events = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			next = 0;			/* a new interval counts from now */
		}
		if (sample_interval_ms > 0)
		{
			int64		now = monotonic_ms();

			if (now >= next)
			{
				take_sample(cxt);
				/* on the interval's grid: a slow sample does not shift the next */
				next = (next == 0 ? now : next) + sample_interval_ms;
				if (next <= monotonic_ms())
					next = monotonic_ms() + sample_interval_ms;
			}
			timeout = (long) Max(next - monotonic_ms(), 1);
			events |= WL_TIMEOUT;
		}
		(void) WaitLatch(MyLatch, events, timeout, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		/* barriers (DROP DATABASE waits for every process to absorb one) */
		CHECK_FOR_INTERRUPTS();
	}
	/*
	 * A clean stop, when the server shuts down: the next start knows it was
	 * not killed. Ended by pg_terminate_backend(), the run goes on: no stop.
	 */
	if (stopped_by_postmaster)
		history_file_append_stop();
	history_file_close();

	/*
	 * Exit code 1: the postmaster starts the sampler again unless it is
	 * shutting down (pg_terminate_backend() must not end the history). The
	 * new sampler goes on with the ring and the file as they are.
	 */
	proc_exit(1);
}

void
procmem_sampler_init(void)
{
	BackgroundWorker w;

	DefineCustomIntVariable("pg_procmem.sample_interval",
							"Time between two samples of the memory history.",
							"0 turns sampling off.",
							&sample_interval_ms, 10000, 0, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	if (!process_shared_preload_libraries_in_progress)
		return;
	memset(&w, 0, sizeof(w));
	w.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	w.bgw_start_time = BgWorkerStart_ConsistentState;
	w.bgw_restart_time = 5;
	strlcpy(w.bgw_library_name, "pg_procmem", sizeof(w.bgw_library_name));
	strlcpy(w.bgw_function_name, "procmem_sampler_main", sizeof(w.bgw_function_name));
	strlcpy(w.bgw_name, "pg_procmem sampler", sizeof(w.bgw_name));
	strlcpy(w.bgw_type, "pg_procmem sampler", sizeof(w.bgw_type));
	RegisterBackgroundWorker(&w);
}
