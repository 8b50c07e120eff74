/*
 * history.c
 *		The memory history in shared memory, its file, and the crash
 *		restarts it saw (shared_preload_libraries mode).
 *
 * The sampler (sampler.c) appends samples to a ring of history_entry
 * (history.h) and to a file in the data directory. When a child of the
 * postmaster crashes, the postmaster kills every other one and builds new
 * shared memory: the ring is gone, the file is not. shmem_startup_hook runs
 * in the postmaster then (and at the first start), before connections are
 * accepted: it loads the file into the new ring and, at a re-initialization,
 * writes down the crash with what the history knew just before it.
 *
 * Which child died the postmaster says in its log ("server process (PID n)
 * was terminated by signal 9"); an emit_log_hook copies that message into
 * postmaster-local statics, which survive the re-initialization. On 14 and
 * 15 the postmaster logs it from its SIGCHLD handler, so the hook does no
 * more than compare and copy: no shared memory, no I/O, no ereport.
 */
#include "compat.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "history.h"
#include "history_shmem.h"
#include "rows.h"
#include "settings.h"
#include "shmem.h"
#include "sysmem.h"

/*
 * libpq/auth.h's hook, declared here: that header pulls in libpq-be.h,
 * which needs the GSSAPI headers where the server was built with them.
 */
struct Port;
typedef void (*ClientAuthentication_hook_type) (struct Port *, int);
extern PGDLLIMPORT ClientAuthentication_hook_type ClientAuthentication_hook;

#define MAX_CRASHES 16

typedef struct history_shared
{
	LWLock	   *lock;			/* the ring and the crashes */
	TimestampTz run_started;
	pg_atomic_uint64 connections;
	uint64		written;		/* entries ever appended; the next goes at
								 * written % nentries */
	uint32		nentries;
	uint32		ncrashes;		/* recorded; the last MAX_CRASHES kept */
	int32		last_number;	/* the highest history_crash.number */
	history_crash crashes[MAX_CRASHES];
	history_entry ring[FLEXIBLE_ARRAY_MEMBER];
} history_shared;

static history_shared *hist = NULL;

/* pg_procmem.history_size, kB */
static int	history_size_kb = 32 * 1024;

static emit_log_hook_type prev_emit_log_hook = NULL;
static ClientAuthentication_hook_type prev_client_auth_hook = NULL;

/*
 * Postmaster-local: the last child exit the postmaster logged that makes it
 * restart the server (set by the log hook), and how many times shared
 * memory was initialized.
 */
static volatile sig_atomic_t exit_seen = 0;
static int	exit_pid;
static int	exit_number;
static bool exit_by_signal;
static time_t exit_time;
static char exit_message[256];
static int	shmem_inits = 0;
static TimestampTz pm_run_started = 0;	/* this run's, as the postmaster knows it */

PG_FUNCTION_INFO_V1(pg_procmem_history_processes);
PG_FUNCTION_INFO_V1(pg_procmem_history_system);
PG_FUNCTION_INFO_V1(pg_procmem_crash_log);

static uint32
ring_entries(void)
{
	return (uint32) Max(((int64) history_size_kb * 1024) / (int64) sizeof(history_entry), 16);
}

static Size
history_shmem_size(void)
{
	return add_size(offsetof(history_shared, ring),
					mul_size(ring_entries(), sizeof(history_entry)));
}

Size
history_ring_bytes(void)
{
	return (Size) ring_entries() * sizeof(history_entry);
}

/*
 * The sampler rewrites the file from the ring once it would outgrow 1.5
 * times the ring; a file beyond twice the ring (and its record headers and
 * crashes) is not one it wrote with this setting.
 */
static Size
history_file_bound(void)
{
	return sizeof(history_file_header) +
		2 * (history_ring_bytes() + (Size) ring_entries() * sizeof(history_record)) +
		MAX_CRASHES * (sizeof(history_record) + sizeof(history_crash));
}

/* Appends entries to the ring; the caller holds the lock, or is alone. */
static void
ring_append(const history_entry *e, uint32 n)
{
	n = Min(n, hist->nentries);
	for (uint32 i = 0; i < n; i++)
		hist->ring[(hist->written + i) % hist->nentries] = e[i];
	hist->written += n;
}

void
history_append_sample(const history_entry *e, uint32 n)
{
	LWLockAcquire(hist->lock, LW_EXCLUSIVE);
	ring_append(e, n);
	LWLockRelease(hist->lock);
}

/* Keeps a crash: one from the file with its number, a new one numbered next */
static void
add_crash(const history_crash *c)
{
	history_crash *slot = &hist->crashes[hist->ncrashes % MAX_CRASHES];

	*slot = *c;
	if (slot->number <= 0)
		slot->number = hist->last_number + 1;
	hist->last_number = Max(hist->last_number, slot->number);
	hist->ncrashes++;
}

/*
 * The ring's entries, oldest first, from its oldest complete sample on
 * (palloc'd); *n of them, only the system entries if only_system. The
 * crashes too, when crashes is not NULL. With lock false the caller must be
 * the ring's only writer (the sampler) or alone (the postmaster).
 */
history_entry *
history_copy(uint32 *n, bool only_system, bool lock)
{
	history_entry *out;
	uint64		first;
	uint32		count;
	bool		whole = false;	/* past the oldest sample's torn start */

	if (lock)
		LWLockAcquire(hist->lock, LW_SHARED);
	count = (uint32) Min(hist->written, (uint64) hist->nentries);
	first = hist->written - count;
	out = MemoryContextAllocHuge(CurrentMemoryContext,
								 Max(count, 1) * sizeof(history_entry));
	*n = 0;
	for (uint32 i = 0; i < count; i++)
	{
		const history_entry *e = &hist->ring[(first + i) % hist->nentries];

		/* the oldest sample may have lost its first entries to the wrap */
		whole = whole || e->kind == HISTORY_SYSTEM;
		if (whole && (!only_system || e->kind == HISTORY_SYSTEM))
			out[(*n)++] = *e;
	}
	if (lock)
		LWLockRelease(hist->lock);
	return out;
}

/* The crashes kept, oldest first (palloc'd); *n of them. lock: as above. */
history_crash *
history_crashes(uint32 *n, bool lock)
{
	history_crash *out;

	if (lock)
		LWLockAcquire(hist->lock, LW_SHARED);
	*n = Min(hist->ncrashes, MAX_CRASHES);
	out = palloc(sizeof(history_crash) * Max(*n, 1));
	for (uint32 i = 0; i < *n; i++)
		out[i] = hist->crashes[(hist->ncrashes - *n + i) % MAX_CRASHES];
	if (lock)
		LWLockRelease(hist->lock);
	return out;
}

TimestampTz
history_run_started(void)
{
	return hist->run_started;
}

uint64
history_connections(void)
{
	return pg_atomic_read_u64(&hist->connections);
}

/* --- the postmaster: loading the file, noting crashes --------------------- */

/* Reads len bytes (one read() returns at most 2 GB); false when it cannot */
static bool
read_all(int fd, char *buf, Size len)
{
	Size		done = 0;

	while (done < len)
	{
		ssize_t		r = read(fd, buf + done, Min(len - done, (Size) 1 << 30));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
		{
			if (r == 0)
				errno = EIO;	/* shorter than fstat said */
			return false;
		}
		done += r;
	}
	return true;
}

/*
 * The postmaster, alone after a crash, appends the crash it noted: if the
 * server crashes again before the sampler has rewritten the file, the
 * file still has it. Failing costs this row only after a second crash.
 */
static void
append_crash(const history_crash *c)
{
	history_record r;
	int			fd = open(HISTORY_FILE, O_WRONLY | O_APPEND | O_NONBLOCK | PG_BINARY, 0);
	struct stat st;

	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= (off_t) sizeof(history_file_header))
	{
		history_record_init(&r, RECORD_CRASH, 1, c, sizeof(*c));
		if (write(fd, &r, sizeof(r)) != sizeof(r) || write(fd, c, sizeof(*c)) != sizeof(*c))
		{
			/* a torn record would end the readable file: take it back */
			if (ftruncate(fd, st.st_size) != 0)
				ereport(LOG,
						(errcode_for_file_access(),
						 errmsg("pg_procmem: could not truncate memory history file \"%s\": %m", HISTORY_FILE)));
		}
	}
	close(fd);
}

/* What loading the file found, for noting the restart after it */
typedef struct loaded
{
	bool		samples;		/* at least one */
	bool		stopped;		/* the last record says the server stopped cleanly */
} loaded;

/*
 * Reads the file into the ring. Anything wrong with it costs the file (one
 * LOG line), never the start: the sampler replaces it.
 */
static loaded
load_history_file(void)
{
	loaded		l = {false, false};
	int			fd;
	struct stat st;
	char	   *buf;
	size_t		off = sizeof(history_file_header);
	history_file_result r;
	Size		bound = history_file_bound();
	Size		crash_part = sizeof(history_file_header) +
		MAX_CRASHES * (sizeof(history_record) + sizeof(history_crash));
	Size		len;
	bool		too_large;
	int			records = 0;

	/* never wait on a FIFO or a device that has taken the file's name */
	fd = open(HISTORY_FILE, O_RDONLY | O_NONBLOCK | PG_BINARY, 0);
	if (fd < 0)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("pg_procmem: could not open memory history file \"%s\": %m", HISTORY_FILE)));
		return l;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
	{
		ereport(LOG,
				(errmsg("pg_procmem: ignored memory history file \"%s\": not a regular file; it will be replaced",
						HISTORY_FILE)));
		close(fd);
		return l;
	}
	/*
	 * Larger than this setting allows (history_size was lowered, or it is
	 * not our file): its samples are ignored, but the crashes, which a
	 * rewrite puts first, are kept.
	 */
	too_large = st.st_size > (off_t) bound;
	len = too_large ? Min((Size) st.st_size, crash_part) : (Size) st.st_size;
	buf = MemoryContextAllocHuge(CurrentMemoryContext, Max(len, 1));
	if (!read_all(fd, buf, len))
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("pg_procmem: could not read memory history file \"%s\": %m", HISTORY_FILE)));
		close(fd);
		pfree(buf);
		return l;
	}
	close(fd);

	r = history_file_check_header(buf, len);
	while (r == HF_OK)
	{
		const history_record *rec;
		const char *payload;
		size_t		at = off;

		r = history_file_next(buf, len, &off, &rec, &payload);
		if (r != HF_OK)
			break;
		if (too_large && rec->kind != RECORD_CRASH)
		{
			off = at;
			r = HF_END;
			break;
		}
		records++;
		if (rec->kind == RECORD_SAMPLE)
		{
			ring_append((const history_entry *) payload, rec->count);
			l.samples = true;
			l.stopped = false;
		}
		else if (rec->kind == RECORD_CRASH)
		{
			add_crash((const history_crash *) payload);
			/* appended by the postmaster: no sample since, nothing to say */
			l.samples = false;
		}
		else if (rec->kind == RECORD_STOP)
			l.stopped = true;
	}
	if (too_large)
	{
		ereport(LOG,
				(errmsg("pg_procmem: ignored the samples of memory history file \"%s\": %lld bytes, more than the %zu that pg_procmem.history_size allows; %d crash rows were kept, and the file will be replaced",
						HISTORY_FILE, (long long) st.st_size, bound, records)));
		/* nothing sampled is known: no unclean stop can be told either */
		l.samples = false;
	}
	else if (r != HF_END)
		ereport(LOG,
				(errmsg("pg_procmem: memory history file \"%s\" is %s%s; it will be replaced",
						HISTORY_FILE, history_file_result_text(r),
						records > 0 ? psprintf(" after %d good records, which were kept", records) : "")));
	pfree(buf);
	return l;
}

/* The cgroup's OOM kill counter now, or -1 */
static int64
oom_kills_now(void)
{
	sysmem_cgroup cg;
	sysmem_cgmem m;

	if (sysmem_find_cgroup(&cg) != 0)
		return -1;
	sysmem_read_cgmem(&cg, &m);
	return m.oom_kill;
}

/*
 * Notes a crash restart (crash) or, at the first start, a previous run that
 * ended without a clean stop, with what the last sample of that run knew
 * (run: when its shared memory was initialized; 0 for the file's last run).
 */
static void
note_crash(bool crash, TimestampTz run)
{
	history_crash c;
	history_entry *e;
	uint32		n;
	int64		last = -1;		/* the run's last sample's system entry */
	int64		before = -1;	/* and the one before it */
	time_t		now = time(NULL);

	memset(&c, 0, sizeof(c));
	c.crashed_at = GetCurrentTimestamp();
	c.exit_code = -1;
	c.oom_kills_before = c.oom_kills_after = -1;
	e = history_copy(&n, false, false);
	for (uint32 i = 0; i < n; i++)
		if (e[i].kind == HISTORY_SYSTEM)
		{
			if (run == 0 || e[i].u.sys.run_started == run)
			{
				before = last;
				last = i;
			}
			else if (last >= 0)
				break;			/* a later run's samples are not this run's */
		}
	if (run == 0 && before >= 0 && e[before].u.sys.run_started != e[last].u.sys.run_started)
		before = -1;			/* the file's last run: its own samples only */
	if (last >= 0)
	{
		c.last_sample_at = e[last].sampled_at;
		/*
		 * The OOM kill counter over the run's last two samples: the kill
		 * counts before its victim has exited, and a sample between the two
		 * (freeing gigabytes takes a while) shows it alive and counted.
		 */
		c.oom_kills_before = e[before >= 0 ? before : last].u.sys.cgroup_oom_kills;
	}
	c.oom_kills_after = oom_kills_now();

	if (!crash)
		c.how = HOW_UNCLEAN_STOP;
	else if (exit_seen && now - exit_time >= 0 && now - exit_time < 10)
	{
		c.how = HOW_POSTMASTER_LOG;
		c.killed_pid = exit_pid;
		if (exit_by_signal)
			c.signal = exit_number;
		else
			c.exit_code = exit_number;
		strlcpy(c.logged, exit_message, sizeof(c.logged));
	}
	else
		c.how = HOW_GUESS_OOM_SCORE;

	/* the last sample: the largest overheads, and the highest oom_score */
	for (int i = 0; i < HISTORY_TOP; i++)
		c.top_overhead[i] = -1;
	if (last >= 0)
	{
		int32		best_score = HISTORY_NO_SCORE;
		int64		best_overhead = -1;

		for (uint32 i = last + 1; i < n && e[i].kind == HISTORY_PROCESS; i++)
		{
			history_process *p = &e[i].u.proc;
			int			k = HISTORY_TOP;

			/* the kernel's ranking; a tie to the one holding more */
			if (c.how == HOW_GUESS_OOM_SCORE && e[i].pid != PostmasterPid &&
				p->oom_score != HISTORY_NO_SCORE &&
				(p->oom_score > best_score ||
				 (p->oom_score == best_score && p->overhead > best_overhead)))
			{
				best_score = p->oom_score;
				best_overhead = p->overhead;
				c.killed_pid = e[i].pid;
			}
			while (k > 0 && c.top_overhead[k - 1] < p->overhead)
				k--;
			if (k == HISTORY_TOP)
				continue;
			memmove(&c.top_pid[k + 1], &c.top_pid[k], (HISTORY_TOP - 1 - k) * sizeof(c.top_pid[0]));
			memmove(&c.top_overhead[k + 1], &c.top_overhead[k], (HISTORY_TOP - 1 - k) * sizeof(c.top_overhead[0]));
			memmove(&c.top_type[k + 1], &c.top_type[k], (HISTORY_TOP - 1 - k) * sizeof(c.top_type[0]));
			c.top_pid[k] = e[i].pid;
			c.top_overhead[k] = p->overhead;
			memcpy(c.top_type[k], p->backend_type, HISTORY_TYPE_LEN);
		}
	}

	/*
	 * The killed process in the run's last two samples only (one killed
	 * while a sample was taken is missing from it): a pid seen earlier may
	 * have been another process's.
	 */
	for (int64 i = (before >= 0 ? before : last); c.killed_pid != 0 && i >= 0 && i < (int64) n; i++)
	{
		if (e[i].kind == HISTORY_SYSTEM)
		{
			if (i != before && i != last)
				break;
			continue;
		}
		/* a sample after this one may hold it too: keep the latest */
		if (e[i].kind == HISTORY_PROCESS && e[i].pid == c.killed_pid)
			c.killed = e[i];
	}
	/* an unclean stop with nothing sampled before it says nothing */
	if (crash || last >= 0)
	{
		add_crash(&c);
		append_crash(&hist->crashes[(hist->ncrashes - 1) % MAX_CRASHES]);
	}
	exit_seen = 0;
	pfree(e);
}

/* A new struct: an empty ring, a new run */
static void
history_shmem_init(void *part)
{
	history_shared *h = part;

	memset(h, 0, offsetof(history_shared, ring));
	h->lock = &(GetNamedLWLockTranche("pg_procmem history"))->lock;
	h->run_started = GetCurrentTimestamp();
	pg_atomic_init_u64(&h->connections, 0);
	h->nentries = ring_entries();
}

static void
history_shmem_attached(void *part, bool found)
{
	hist = part;
	/* the postmaster, at a start or a crash re-initialization */
	if (!found && !IsUnderPostmaster && IsPostmasterEnvironment)
	{
		loaded		l = load_history_file();
		TimestampTz crashed_run = pm_run_started;

		pm_run_started = hist->run_started;
		shmem_inits++;
		if (shmem_inits > 1)
			note_crash(true, crashed_run);
		else if (l.samples && !l.stopped)
			note_crash(false, 0);
	}
}

static const procmem_shmem_part history_part = {
	"pg_procmem history", history_shmem_size, 1, history_shmem_init, history_shmem_attached
};

/*
 * The postmaster's messages about a child's exit that make it restart the
 * server: by a signal other than SIGQUIT (which it sends itself), or with an
 * exit code other than 0 or 1. Matched on the untranslated message.
 */
static void
history_emit_log(ErrorData *edata)
{
	bool		by_signal;
	int			pid, number;

	if (prev_emit_log_hook)
		prev_emit_log_hook(edata);
	/*
	 * The first message of a crash wins (others may follow it within
	 * moments); one older than 5 s (a logger that exited and was simply
	 * restarted) does not hold back a new one.
	 */
	if (IsUnderPostmaster || !IsPostmasterEnvironment || edata->message_id == NULL ||
		edata->message == NULL || (exit_seen && time(NULL) - exit_time < 5))
		return;
	if (strcmp(edata->message_id, "%s (PID %d) was terminated by signal %d: %s") == 0)
		by_signal = true;
	else if (strcmp(edata->message_id, "%s (PID %d) exited with exit code %d") == 0 ||
			 strcmp(edata->message_id, "%s (PID %d) exited with unrecognized status %d") == 0)
		by_signal = false;
	else
		return;
	if (!history_parse_exit(edata->message, &pid, &number) ||
		(by_signal && number == SIGQUIT) || (!by_signal && (number == 0 || number == 1)))
		return;
	exit_pid = pid;
	exit_number = number;
	exit_by_signal = by_signal;
	exit_time = time(NULL);
	strlcpy(exit_message, edata->message, sizeof(exit_message));
	exit_seen = 1;
}

/* Counts client connections, for the connection rate */
static void
history_client_auth(struct Port *port, int status)
{
	if (prev_client_auth_hook)
		prev_client_auth_hook(port, status);
	if (status == STATUS_OK && hist != NULL)
		pg_atomic_fetch_add_u64(&hist->connections, 1);
}

void
procmem_history_init(void)
{
	/* a PGC_POSTMASTER setting can only be defined at server start */
	if (!process_shared_preload_libraries_in_progress)
		return;
	DefineCustomIntVariable("pg_procmem.history_size",
							"Memory for the memory history in shared memory.",
							"The file that keeps it across restarts holds up to 1.5 times as much.",
							&history_size_kb, 32 * 1024, 64, INT_MAX / 2,
							PGC_POSTMASTER, GUC_UNIT_KB, NULL, NULL, NULL);
	procmem_shmem_register(&history_part);
	prev_emit_log_hook = emit_log_hook;
	emit_log_hook = history_emit_log;
	prev_client_auth_hook = ClientAuthentication_hook;
	ClientAuthentication_hook = history_client_auth;
}

/* --- SQL ---------------------------------------------------------------- */

/*
 * Starts one of the history's set-returning functions: the result set of a
 * known shape, or NULL when there is no history and missing_ok (no rows);
 * without the history and not missing_ok, an ERROR saying how to get it.
 */
static ReturnSetInfo *
history_srf(FunctionCallInfo fcinfo, const int *shapes, int nshapes)
{
	ReturnSetInfo *rsinfo = start_result_set(fcinfo, shapes, nshapes);

	if (hist != NULL)
		return rsinfo;
	if (PG_GETARG_BOOL(0))
		return NULL;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("the memory history needs pg_procmem in shared_preload_libraries"),
			 errhint("Add pg_procmem to shared_preload_libraries and restart the server.")));
}

/* A fixed text field, NULL when empty; cut to what is valid in this database */
static void
put_field(Datum *values, bool *nulls, int i, const char *s, size_t sz)
{
	size_t		len = strnlen(s, sz);

	len = pg_encoding_verifymbstr(GetDatabaseEncoding(), s, len);
	nulls[i] = len == 0;
	values[i] = nulls[i] ? (Datum) 0 : PointerGetDatum(cstring_to_text_with_len(s, len));
}

#define FIELD(values, nulls, i, f) put_field(values, nulls, i, f, sizeof(f))

static void
put_time(Datum *values, bool *nulls, int i, int64 t)
{
	values[i] = TimestampTzGetDatum((TimestampTz) t);
	nulls[i] = t == 0;
}

/* A process's statement: its query_id (NULL: none), its text (NULL unless kept) */
static void
put_query_id(Datum *values, bool *nulls, int i, const history_process *p)
{
	values[i] = Int64GetDatum(p->query_id);
	nulls[i] = p->query_id == 0;
}

static void
put_query(Datum *values, bool *nulls, int i, const history_process *p)
{
	if (procmem_keep_statement_text)
		FIELD(values, nulls, i, p->query);
	else
		nulls[i] = true;
}

/* Result columns, in every released shape (see rows.h) */
#define PROC_NCOLS 19
static const int proc_shapes[] = {PROC_NCOLS};	/* 1.2.0 */
#define SYS_NCOLS 14
static const int sys_shapes[] = {SYS_NCOLS};	/* 1.2.0 */
#define CRASH_NCOLS 23
static const int crash_shapes[] = {CRASH_NCOLS};	/* 1.2.0 */
#define HISTORY_MAX_NCOLS PROC_NCOLS	/* of the row-per-entry functions */

/* The columns of one process entry, from i on; returns the next column */
static int
put_process(Datum *values, bool *nulls, int i, const history_entry *e)
{
	const history_process *p = &e->u.proc;
	/* the bigint columns, in order */
	const int64 bytes[] = {p->overhead, p->private_anon, p->page_tables, p->rss, p->swap,
		p->context_bytes};

	values[i++] = Int32GetDatum(e->pid);
	FIELD(values, nulls, i++, p->backend_type);
	FIELD(values, nulls, i++, p->datname);
	FIELD(values, nulls, i++, p->usename);
	FIELD(values, nulls, i++, p->application_name);
	FIELD(values, nulls, i++, p->state);
	put_query_id(values, nulls, i++, p);
	put_query(values, nulls, i++, p);
	values[i] = Int32GetDatum(p->leader_pid);
	nulls[i++] = p->leader_pid == 0;
	put_time(values, nulls, i++, p->backend_start);
	put_time(values, nulls, i++, p->query_start);
	for (int k = 0; k < lengthof(bytes); k++)
		put_int8(values, nulls, i++, bytes[k]);
	put_int4(values, nulls, i++, p->oom_score, p->oom_score == HISTORY_NO_SCORE);
	return i;
}

/* The columns of one system entry, from i on; returns the next column */
static int
put_system(Datum *values, bool *nulls, int i, const history_entry *e)
{
	const history_system *s = &e->u.sys;
	/* the bigint columns, in order */
	const int64 figures[] = {s->mem_total, s->mem_available, s->swap_used, s->page_tables,
		s->hugepages_total, s->hugepages_free, s->cgroup_usage, s->cgroup_limit,
		s->cgroup_oom_kills, s->connections};

	put_time(values, nulls, i++, s->run_started);
	values[i++] = Int32GetDatum(s->processes);
	for (int k = 0; k < lengthof(figures); k++)
		put_int8(values, nulls, i++, figures[k]);
	values[i++] = Float8GetDatum(s->sample_us / 1000.0);
	return i;
}

/*
 * The rows of one of the history's functions: one per entry of the kind,
 * oldest first, its sample's time and then what put() puts (ncols columns
 * in all). Without the shared memory: no rows if missing_ok, else an ERROR
 * saying how to get it.
 */
static Datum
history_rows(FunctionCallInfo fcinfo, const int *shapes, int nshapes, int ncols,
			 history_kind kind, int (*put) (Datum *, bool *, int, const history_entry *))
{
	ReturnSetInfo *rsinfo;
	history_entry *e;
	uint32		n;

	Assert(ncols <= HISTORY_MAX_NCOLS);
	if ((rsinfo = history_srf(fcinfo, shapes, nshapes)) == NULL)
		return (Datum) 0;
	e = history_copy(&n, kind == HISTORY_SYSTEM, true);
	for (uint32 k = 0; k < n; k++)
	{
		Datum		values[HISTORY_MAX_NCOLS];
		bool		nulls[HISTORY_MAX_NCOLS];
		int			i = 0;

		CHECK_FOR_INTERRUPTS();
		if (e[k].kind != kind)
			continue;
		memset(nulls, 0, sizeof(nulls));
		values[i++] = TimestampTzGetDatum(e[k].sampled_at);
		i = put(values, nulls, i, &e[k]);
		Assert(i == ncols);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(e);
	return (Datum) 0;
}

/* pg_procmem_history_processes(missing_ok) - every process at every sample */
Datum
pg_procmem_history_processes(PG_FUNCTION_ARGS)
{
	return history_rows(fcinfo, proc_shapes, lengthof(proc_shapes), PROC_NCOLS,
						HISTORY_PROCESS, put_process);
}

/* pg_procmem_history_system(missing_ok) - the system entry of every sample */
Datum
pg_procmem_history_system(PG_FUNCTION_ARGS)
{
	return history_rows(fcinfo, sys_shapes, lengthof(sys_shapes), SYS_NCOLS,
						HISTORY_SYSTEM, put_system);
}

static const char *
how_text(int how)
{
	switch (how)
	{
		case HOW_POSTMASTER_LOG:
			return "postmaster log";
		case HOW_GUESS_OOM_SCORE:
			return "guess: highest oom_score at the last sample";
		case HOW_UNCLEAN_STOP:
			return "unclean stop";
	}
	return "unknown";
}

/* An array of the top processes' pids (0), types (1) or overheads (2) */
static Datum
top_array(const history_crash *c, int what)
{
	Datum		d[HISTORY_TOP];
	int			n = 0;

	for (int i = 0; i < HISTORY_TOP && c->top_pid[i] != 0; i++)
	{
		bool		null;

		if (what == 1)
		{
			/* a fixed field, as put_field reads it: NUL or not, valid text only */
			put_field(&d[n], &null, 0, c->top_type[i], sizeof(c->top_type[i]));
			if (null)
				d[n] = CStringGetTextDatum("");
			n++;
		}
		else
			d[n++] = what == 0 ? Int32GetDatum(c->top_pid[i]) : Int64GetDatum(c->top_overhead[i]);
	}
	if (what == 0)
		return PointerGetDatum(construct_array(d, n, INT4OID, 4, true, TYPALIGN_INT));
	if (what == 1)
		return PointerGetDatum(construct_array(d, n, TEXTOID, -1, false, TYPALIGN_INT));
	return PointerGetDatum(construct_array(d, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* pg_procmem_crash_log(missing_ok) - the crash restarts the history saw */
Datum
pg_procmem_crash_log(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo;
	history_crash *c;
	uint32		nc;

	if ((rsinfo = history_srf(fcinfo, crash_shapes, lengthof(crash_shapes))) == NULL)
		return (Datum) 0;
	c = history_crashes(&nc, true);
	for (uint32 k = 0; k < nc; k++)
	{
		Datum		values[CRASH_NCOLS];
		bool		nulls[CRASH_NCOLS];
		int			i = 0;

		memset(nulls, 0, sizeof(nulls));
		values[i++] = Int32GetDatum(c[k].number);
		values[i++] = TimestampTzGetDatum(c[k].crashed_at);
		values[i++] = CStringGetTextDatum(how_text(c[k].how));
		/* a guess is never given as the killed process */
		values[i] = Int32GetDatum(c[k].killed_pid);
		nulls[i++] = c[k].killed_pid == 0 || c[k].how != HOW_POSTMASTER_LOG;
		values[i] = Int32GetDatum(c[k].killed_pid);
		nulls[i++] = c[k].killed_pid == 0 || c[k].how != HOW_GUESS_OOM_SCORE;
		values[i] = Int32GetDatum(c[k].signal);
		nulls[i++] = c[k].signal == 0;
		values[i] = Int32GetDatum(c[k].exit_code);
		nulls[i++] = c[k].exit_code < 0;
		FIELD(values, nulls, i++, c[k].logged);
		values[i] = Int64GetDatum(c[k].oom_kills_after - c[k].oom_kills_before);
		nulls[i++] = c[k].oom_kills_before < 0 || c[k].oom_kills_after < c[k].oom_kills_before;
		put_time(values, nulls, i++, c[k].last_sample_at);
		values[i] = Float8GetDatum((c[k].crashed_at - c[k].last_sample_at) / 1000000.0);
		nulls[i++] = c[k].last_sample_at == 0;
		if (c[k].killed.kind == HISTORY_PROCESS)
		{
			/* the killed process at its last sample */
			const history_process *p = &c[k].killed.u.proc;

			values[i++] = TimestampTzGetDatum(c[k].killed.sampled_at);
			FIELD(values, nulls, i++, p->backend_type);
			put_query(values, nulls, i++, p);
			put_query_id(values, nulls, i++, p);
			put_time(values, nulls, i++, p->query_start);
			put_int8(values, nulls, i++, p->overhead);
			put_int8(values, nulls, i++, p->context_bytes);
			put_int8(values, nulls, i++, p->page_tables);
			put_int4(values, nulls, i++, p->oom_score, p->oom_score == HISTORY_NO_SCORE);
		}
		else
			for (int j = 0; j < 9; j++)
				nulls[i++] = true;
		values[i++] = top_array(&c[k], 0);
		values[i++] = top_array(&c[k], 1);
		values[i++] = top_array(&c[k], 2);
		Assert(i == CRASH_NCOLS);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(c);
	return (Datum) 0;
}
