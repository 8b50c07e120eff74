/*
 * sampler.c
 *		The background worker that keeps the memory history.
 *
 * Every pg_procmem.sample_interval it takes the cheap figures of every
 * process of the server (procmem_walk(), as pg_procmem_backends: never
 * PSS) with who each one is (pg_stat_activity's sources), appends them to
 * the ring in shared memory (history.c) and to the history file, and
 * writes nothing else. The ring's lock is held only to copy one sample in;
 * no backend ever waits for the sampler.
 *
 * The file: records appended after every sample, no fsync (the kernel
 * keeps written pages when a process dies; a machine crash loses what it
 * had not written back). When it would outgrow 1.5 times the ring, or a
 * write failed, it is rewritten from the ring: a temporary file renamed
 * over it. It is also rewritten at the sampler's start, which replaces a
 * file the postmaster could not load. A full disk costs the file only.
 */
#include "compat.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "access/xact.h"
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "common/file_perm.h"
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
#include "utils/wait_event.h"

#include "contexts.h"
#include "history_shmem.h"
#include "settings.h"
#include "sysmem.h"
#include "walk.h"

PGDLLEXPORT void procmem_sampler_main(Datum arg);

/* pg_procmem.sample_interval, ms; 0: no sampling */
static int	sample_interval_ms = 10000;

/* Who a process is, from its backend status */
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
	void	   *contexts;		/* procmem_contexts_totals() */
	int			ncontexts;
	history_entry *e;
	uint32		n;
	uint32		cap;
	TimestampTz at;
} sample_state;

/* The file, as this sampler has it open */
static int	file_fd = -1;
static Size file_size = 0;
static bool file_failed = false;	/* said once in the log */
static TimestampTz file_retry_at = 0;	/* after a failure, no rewrite before */

static sysmem_cgroup cgroup;
static bool cgroup_known = false;

static int
who_cmp(const void *a, const void *b)
{
	int32		x = ((const who *) a)->pid;
	int32		y = ((const who *) b)->pid;

	return (x > y) - (x < y);
}

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
 * also ends the backend status snapshot.
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
		w->query = procmem_keep_statement_text ? pgstat_clip_activity(b->st_activity_raw) : NULL;
		/* a parallel worker's leader, as pg_stat_activity finds it */
		proc = b->st_backendType == B_BG_WORKER ? BackendPidGetProc(w->pid) : NULL;
		if (proc && proc->lockGroupLeader && proc->lockGroupLeader != proc)
			w->leader_pid = proc->lockGroupLeader->pid;
	}
	CommitTransactionCommand();
	MemoryContextSwitchTo(sample_cxt);
	qsort(st->who, st->nwho, sizeof(who), who_cmp);
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

/* A procmem_visit_fn: one process's entry */
static bool
sample_process(void *dest, pid_t pid, procmem_membership kind,
			   const procfs_stat *id, const procmem_options *opt)
{
	sample_state *st = dest;
	procmem_options o = *opt;
	procmem_sample s;
	history_entry *e;
	history_process *p;
	who			key = {.pid = pid};
	who		   *w;

	w = bsearch(&key, st->who, st->nwho, sizeof(who), who_cmp);
	/* no backend status (a child without a PGPROC, or one just started): its title */
	o.want_cmdline = (w == NULL && kind != MEMBER_POSTMASTER && kind != MEMBER_HIDDEN);
	if (!procmem_read_member(pid, kind, id, &o, &s))
		return false;
	e = new_entry(st, HISTORY_PROCESS, pid);
	p = &e->u.proc;
	p->overhead = s.overhead;
	p->private_anon = s.anon.exclusive;
	p->page_tables = s.status.vm_pte;
	p->rss = s.status.vm_rss;
	p->swap = s.status.vm_swap;
	p->oom_score = (s.unreadable & (1u << PROCMEM_FILE_OOM_SCORE)) || s.oom_score > PG_INT32_MAX ?
		HISTORY_NO_SCORE : (int32) s.oom_score;
	p->context_bytes = procmem_contexts_total_of(st->contexts, st->ncontexts, pid);

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
	sys->mem_total = mi.mem_total;
	sys->mem_available = mi.mem_available;
	sys->swap_used = mi.swap_total >= 0 && mi.swap_free >= 0 ? mi.swap_total - mi.swap_free : -1;
	sys->page_tables = mi.page_tables;
	sys->hugepages_total = mi.hugepages_total;
	sys->hugepages_free = mi.hugepages_free;
	sys->cgroup_usage = cg.usage;
	sys->cgroup_limit = cg.limit;
	sys->cgroup_oom_kills = cg.oom_kill;
	sys->connections = (int64) history_connections();
}

/* --- the file ------------------------------------------------------------ */

/*
 * A write failed: the history is kept in memory only. A full disk gets its
 * space back (the file is removed: it must never be what fills the disk),
 * and a rewrite is tried again a minute later at the earliest.
 */
static void
file_trouble(const char *what)
{
	int			save = errno;

	if (!file_failed)
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("pg_procmem: could not %s memory history file \"%s\": %m; the history is kept in memory only until a write succeeds (tried again every minute)",
						what, HISTORY_FILE)));
	file_failed = true;
	if (file_fd >= 0)
		close(file_fd);
	file_fd = -1;
	if (save == ENOSPC || save == EDQUOT)
		unlink(HISTORY_FILE);
	file_retry_at = GetCurrentTimestamp() + 60 * USECS_PER_SEC;
}

static bool
write_all(int fd, const void *a, size_t alen, const void *b, size_t blen)
{
	struct iovec iov[2] = {{(void *) a, alen}, {(void *) b, blen}};
	size_t		want = alen + blen;

	/* a short write to a regular file means the disk is full */
	errno = 0;
	if (writev(fd, iov, blen > 0 ? 2 : 1) != (ssize_t) want)
	{
		if (errno == 0)
			errno = ENOSPC;
		return false;
	}
	return true;
}

static bool
write_record(int fd, history_record_kind kind, uint32 count, const void *payload, size_t len)
{
	history_record r;

	history_record_init(&r, kind, count, payload, len);
	return write_all(fd, &r, sizeof(r), payload, len);
}

/*
 * Rewrites the file from the ring and the crashes: a temporary file,
 * renamed over the old one. It is left open for appending.
 */
static void
file_rewrite(void)
{
	history_file_header h;
	history_entry *e;
	history_crash *c;
	uint32		n, nc;
	int			fd;
	bool		ok;
	Size		size;
	struct stat st;

	if (file_fd >= 0)
		close(file_fd);
	file_fd = -1;
	/* a new file: whatever has the temporary name (a FIFO?) is not written into */
	unlink(HISTORY_FILE_TMP);
	fd = open(HISTORY_FILE_TMP, O_WRONLY | O_CREAT | O_EXCL | PG_BINARY, pg_file_create_mode);
	if (fd < 0)
	{
		file_trouble("create");
		return;
	}
	e = history_copy(&n, false, false);
	c = history_crashes(&nc, false);
	history_file_header_init(&h);
	ok = write_all(fd, &h, sizeof(h), NULL, 0);
	size = sizeof(h);
	for (uint32 i = 0; ok && i < nc; i++)
	{
		ok = write_record(fd, RECORD_CRASH, 1, &c[i], sizeof(history_crash));
		size += sizeof(history_record) + sizeof(history_crash);
	}
	for (uint32 i = 0; ok && i < n;)
	{
		uint32		j = i + 1;

		while (j < n && e[j].kind != HISTORY_SYSTEM)
			j++;
		ok = write_record(fd, RECORD_SAMPLE, j - i, &e[i], sizeof(history_entry) * (j - i));
		size += sizeof(history_record) + sizeof(history_entry) * (j - i);
		i = j;
	}
	pfree(e);
	pfree(c);
	/* an empty directory in the file's place (rename cannot replace one) */
	if (lstat(HISTORY_FILE, &st) == 0 && S_ISDIR(st.st_mode))
		(void) rmdir(HISTORY_FILE);
	if (!ok || rename(HISTORY_FILE_TMP, HISTORY_FILE) != 0)
	{
		int			save = errno;

		close(fd);
		unlink(HISTORY_FILE_TMP);	/* a full disk gets its space back */
		errno = save;
		file_trouble("write");
		return;
	}
	if (file_failed)
		ereport(LOG, (errmsg("pg_procmem: memory history file \"%s\" written again", HISTORY_FILE)));
	file_failed = false;
	file_fd = fd;
	file_size = size;
}

/* Appends one record, rewriting the file first when it is due */
static void
file_append(history_record_kind kind, uint32 count, const void *payload, size_t len)
{
	if (file_fd < 0 || file_size + sizeof(history_record) + len > history_ring_bytes() * 3 / 2)
	{
		if (file_fd < 0 && kind == RECORD_SAMPLE && GetCurrentTimestamp() < file_retry_at)
			return;
		file_rewrite();
		if (kind == RECORD_SAMPLE || file_fd < 0)
			return;				/* the ring had this sample already */
	}
	if (!write_record(file_fd, kind, count, payload, len))
	{
		/* a torn record would end the readable file: take it back */
		int			save = errno;

		if (ftruncate(file_fd, file_size) != 0)
			save = errno;
		errno = save;
		file_trouble("write");
		return;
	}
	file_size += sizeof(history_record) + len;
}

/* --- the worker ---------------------------------------------------------- */

static void
take_sample(MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	sample_state st;
	procmem_options opt = procmem_current_options(false);
	instr_time	start, end;
	procfs_stat self;
	static bool proc_hidden_said = false;

	INSTR_TIME_SET_CURRENT(start);
	memset(&st, 0, sizeof(st));
	st.at = GetCurrentTimestamp();
	st.cap = 256;
	st.e = palloc(sizeof(history_entry) * st.cap);
	new_entry(&st, HISTORY_SYSTEM, 0);
	read_who(&st);
	st.contexts = procmem_contexts_totals(&st.ncontexts);
	/* what procmem_check_proc_visible() would ERROR on: said once, not fatal */
	if (procfs_read_stat(0, &self) == PROCFS_OK && self.ppid == PostmasterPid)
		procmem_walk(sample_process, &st, &opt);
	else if (!proc_hidden_said)
	{
		ereport(LOG,
				(errmsg("pg_procmem sampler: /proc does not show this server's processes; sampling only the system figures")));
		proc_hidden_said = true;
	}
	sample_system(&st.e[0].u.sys);
	st.e[0].u.sys.processes = st.n - 1;
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	st.e[0].u.sys.sample_us = INSTR_TIME_GET_MICROSEC(end);

	history_append_sample(st.e, st.n);
	file_append(RECORD_SAMPLE, st.n, st.e, sizeof(history_entry) * st.n);
	MemoryContextSwitchTo(old);
	MemoryContextReset(cxt);
}

void
procmem_sampler_main(Datum arg)
{
	MemoryContext cxt;
	TimestampTz next = 0;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();
	/* no database: the names it needs are in shared catalogs */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("pg_procmem sampler");

	cxt = AllocSetContextCreate(TopMemoryContext, "pg_procmem sample", ALLOCSET_DEFAULT_SIZES);
	cgroup_known = sysmem_find_cgroup(&cgroup) == 0;
	file_rewrite();

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
			TimestampTz now = GetCurrentTimestamp();

			if (now >= next)
			{
				take_sample(cxt);
				/* on the interval's grid: a slow sample does not shift the next */
				next = (next == 0 ? now : next) + (int64) sample_interval_ms * 1000;
				if (next <= GetCurrentTimestamp())
					next = GetCurrentTimestamp() + (int64) sample_interval_ms * 1000;
			}
			timeout = Max((next - GetCurrentTimestamp()) / 1000, 1);
			events |= WL_TIMEOUT;
		}
		(void) WaitLatch(MyLatch, events, timeout, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		/* barriers (DROP DATABASE waits for every process to absorb one) */
		CHECK_FOR_INTERRUPTS();
	}
	/* a clean stop: the next start knows the server was not killed */
	file_append(RECORD_STOP, 0, NULL, 0);
	if (file_fd >= 0)
		close(file_fd);

	/*
	 * Exit code 1: the postmaster starts the sampler again unless it is
	 * shutting down (pg_terminate_backend() must not end the history). The
	 * new sampler rewrites the file from the ring, without this stop.
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
