/*
 * crashes.c
 *		Crash restarts: which child's exit began each one, as the postmaster
 *		logged it, and the crash rows the memory history keeps
 *		(shared_preload_libraries mode).
 *
 * When a child of the postmaster crashes, the postmaster logs its exit
 * ("server process (PID n) was terminated by signal 9"), then "terminating
 * any other active server processes", kills every other child and builds new
 * shared memory. A callback in emit_log_hook (hooks.c) keeps the exit
 * message that came just before that line in postmaster-local statics,
 * with what the dead child said of itself in its slot (contexts.c: user,
 * database, application, memory settings) and its statement as the
 * postmaster reads it for its own message
 * (pgstat_get_crashed_backend_activity()): one bounded read of each,
 * before shared memory is initialized again. On 14 and 15 the postmaster
 * logs from its SIGCHLD handler, so the callback only compares and copies:
 * no allocation, no I/O, no ereport. When shared memory is initialized
 * again, the postmaster hands what it kept of its last crashes to it, a few
 * kB: it reads no file and builds no row, so a crash restart takes the same
 * time whatever the history holds.
 *
 * The sampler, once it has loaded the file into the ring (history_file.c),
 * turns each crash the file does not have yet into a row from the ring's
 * last samples of the run that ended (crashes_note()).
 */
#include "server/compat.h"

#include <signal.h>

#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/backend_status.h"
#include "utils/timestamp.h"

#include "history/crashes.h"
#include "history/history_ring.h"
#include "history/oom_clock.h"
#include "linux/sysmem.h"
#include "rules/exit_message.h"
#include "server/contexts.h"
#include "server/hooks.h"
#include "server/shmem.h"

/* A crash restart as the postmaster saw it */
typedef struct pm_crash
{
	TimestampTz crashed_at;		/* when the exit was logged; else restarted_at */
	TimestampTz restarted_at;	/* when shared memory was initialized again */
	TimestampTz run_started;	/* the run that ended */
	bool		logged;			/* the exit that began it was logged: */
	bool		by_signal;
	bool		slot_read;		/* who: its slot, copied at its exit */
	int32		pid;
	int32		number;			/* the signal, or the exit code */
	int32		query_flags;	/* CRASH_QUERY_*, CRASH_FOLDED_KNOWN */
	char		message[256];
	procmem_slot_who who;
	char		query[HISTORY_CRASH_QUERY_LEN];	/* as the postmaster reads it */
	bool		oom_read;		/* the sampler's reads of the OOM kill counter, */
	oom_reads	oom;			/* ... copied at the exit (oom_clock.c) */
} pm_crash;

typedef struct crashes_shared
{
	LWLock	   *lock;			/* the rows */
	int32		nhanded;		/* the postmaster's last crashes, oldest first */
	pm_crash	handed[MAX_CRASHES];
	bool		noted;			/* the sampler has made rows of them */
	int64		kills_before;	/* the cgroup's OOM kill counter then; -1: none */
	TimestampTz noted_at;
	uint32		nrows;			/* rows ever kept; the last MAX_CRASHES are */
	int32		last_number;	/* the highest history_crash.number */
	history_crash rows[MAX_CRASHES];
} crashes_shared;

static crashes_shared *crashes = NULL;

/* The most a crash row's number may pass the one before it in a file */
#define MAX_CRASH_NUMBER_STEP (1 << 20)

/*
 * Postmaster-local, surviving every re-initialization of shared memory:
 * the exit it logged last (exit_*), whether that was its previous message,
 * the exit that began the crash being handled (culprit), and its last
 * crashes.
 */
static volatile sig_atomic_t exit_was_last = 0;
static pm_crash exit_logged;
static volatile sig_atomic_t culprit_known = 0;
static pm_crash culprit;
static pm_crash pm_crashes[MAX_CRASHES];
static int	pm_ncrashes = 0;
static int	pm_inits = 0;
static TimestampTz pm_run_started = 0;

static Size
crashes_shmem_size(void)
{
	return sizeof(crashes_shared);
}

static void
crashes_shmem_init(void *part)
{
	crashes_shared *c = part;

	memset(c, 0, sizeof(*c));
	c->lock = &(GetNamedLWLockTranche("pg_procmem crashes"))->lock;
}

/*
 * In the postmaster, at a start or a re-initialization after a crash: the
 * crash it just handled joins its last crashes, which all go to the new
 * shared memory.
 */
static void
crashes_shmem_attached(void *part, bool found)
{
	crashes = part;
	if (found || IsUnderPostmaster || !IsPostmasterEnvironment)
		return;
	if (++pm_inits > 1)
	{
		pm_crash	c;

		/* an exit logged for an earlier crash is no part of this one */
		if (culprit_known)
			c = culprit;
		else
			memset(&c, 0, sizeof(c));
		c.logged = culprit_known;
		c.restarted_at = GetCurrentTimestamp();
		if (!c.logged)
			c.crashed_at = c.restarted_at;
		c.run_started = pm_run_started;
		if (pm_ncrashes == MAX_CRASHES)
			memmove(&pm_crashes[0], &pm_crashes[1], sizeof(pm_crash) * (MAX_CRASHES - 1));
		else
			pm_ncrashes++;
		pm_crashes[pm_ncrashes - 1] = c;
		culprit_known = 0;
	}
	pm_run_started = history_run_started();
	crashes->nhanded = pm_ncrashes;
	memcpy(crashes->handed, pm_crashes, sizeof(pm_crash) * pm_ncrashes);
}

static const procmem_shmem_part crashes_part = {
	"pg_procmem crashes", crashes_shmem_size, 1, crashes_shmem_init, crashes_shmem_attached
};

/*
 * Whether the exited child's statement text may be kept: its own
 * keep_statement_text as its slot says it, the server's when it had a
 * PGPROC but never claimed a slot (a role's, database's or session's
 * setting would have). Fail closed: a slot torn by a write it was killed
 * in, or no PGPROC of the pid (its setting is unknown), keeps it back.
 */
static bool
text_allowed(const pm_crash *c, procmem_slot_found found)
{
	if (found == SLOT_READ)
		return c->who.keep_text >= 0 ? c->who.keep_text != 0 : procmem_keep_statement_text;
	return found == SLOT_NONE && procmem_keep_statement_text;
}

/*
 * The exited child's statement, as the postmaster reads it for its own
 * message (printable ASCII, the rest as '?', cut to
 * track_activity_query_size), unless text_allowed() keeps it back; and
 * whether it was cut or folded, as far as its slot tells.
 */
static void
read_query(pm_crash *c, procmem_slot_found found)
{
	int			cap = Min((int) sizeof(c->query), pgstat_track_activity_query_size);
	bool		keep = text_allowed(c, found);
	bool		same;
	int			len;

	c->query_flags = 0;
	if (pgstat_get_crashed_backend_activity(c->pid, c->query, sizeof(c->query)) == NULL)
	{
		c->query[0] = '\0';
		return;
	}
	if (!keep)
	{
		memset(c->query, 0, sizeof(c->query));
		c->query_flags = CRASH_QUERY_KEPT_BACK;
		return;
	}
	len = strnlen(c->query, sizeof(c->query));
	c->query_flags = CRASH_QUERY_LOGGED;
	/*
	 * Whether the slot speaks of this statement: a process killed between
	 * its statement's start and its first executor run (waiting for a lock
	 * in parse analysis, say) said nothing of it yet.
	 */
	same = c->slot_read && c->who.query_head[0] != '\0' &&
		strncmp(c->query, c->who.query_head, strlen(c->who.query_head)) == 0 &&
		(c->who.query_len == len || (c->who.query_len > len && len >= cap - 1));
	if (!same)
	{
		/* unknown: what the slot says is of its statement before */
		c->who.query_start = 0;
		c->who.plan_flags = 0;
	}
	if (same ? c->who.query_len > len : len >= cap - 1)
		c->query_flags |= CRASH_QUERY_CUT;
	if (memchr(c->query, '?', len) == NULL)
		c->query_flags |= CRASH_FOLDED_KNOWN;
	else if (same)
		c->query_flags |= CRASH_FOLDED_KNOWN | (c->who.query_folded ? CRASH_QUERY_FOLDED : 0);
}

/*
 * The postmaster's messages: a child's exit (kept), and the line that says
 * a crash restart begins, which makes the exit logged just before it the
 * culprit. Matched on the untranslated message, parsed for the numbers;
 * after the log hooks installed before pg_procmem's (hooks.c).
 */
static void
crashes_emit_log(ErrorData *edata)
{
	const char *id = edata->message_id;
	bool		by_signal;
	procmem_slot_found found;

	if (IsUnderPostmaster || !IsPostmasterEnvironment || id == NULL || edata->message == NULL)
		return;
	if ((by_signal = strcmp(id, "%s (PID %d) was terminated by signal %d: %s") == 0) ||
		strcmp(id, "%s (PID %d) exited with exit code %d") == 0 ||
		strcmp(id, "%s (PID %d) exited with unrecognized status %d") == 0)
	{
		exit_was_last = 0;
		if (!exit_message_parse(edata->message, &exit_logged.pid, &exit_logged.number))
			return;
		exit_logged.by_signal = by_signal;
		exit_logged.crashed_at = GetCurrentTimestamp();
		strlcpy(exit_logged.message, edata->message, sizeof(exit_logged.message));
		/* who it was and what it ran: before anything is re-initialized */
		found = procmem_contexts_dead(exit_logged.pid, &exit_logged.who);
		exit_logged.slot_read = found == SLOT_READ;
		read_query(&exit_logged, found);
		/* when the OOM killer's counter last moved, as the sampler saw it */
		exit_logged.oom_read = oom_clock_copy(&exit_logged.oom);
		exit_was_last = 1;
		return;
	}
	if (strcmp(id, "terminating any other active server processes") == 0 && exit_was_last &&
		!culprit_known)
	{
		culprit = exit_logged;
		culprit_known = 1;
	}
	exit_was_last = 0;
}

static const procmem_hooks_part crashes_hooks = {
	.log_after = crashes_emit_log
};

void
procmem_crashes_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	procmem_shmem_register(&crashes_part);
	procmem_hooks_register(&crashes_hooks);
}

/* --- the sampler ---------------------------------------------------------- */

void
crashes_clear(void)
{
	LWLockAcquire(crashes->lock, LW_EXCLUSIVE);
	crashes->nrows = 0;
	crashes->last_number = 0;
	LWLockRelease(crashes->lock);
}

/*
 * Keeps a row: one from the file with its number, a new one (or one whose
 * number is not one this code wrote) numbered next
 */
static void
keep_row(history_crash *c)
{
	LWLockAcquire(crashes->lock, LW_EXCLUSIVE);
	if (c->number <= crashes->last_number ||
		(int64) c->number > (int64) crashes->last_number + MAX_CRASH_NUMBER_STEP)
		c->number = crashes->last_number + 1;
	crashes->last_number = Max(crashes->last_number, c->number);
	crashes->rows[crashes->nrows++ % MAX_CRASHES] = *c;
	LWLockRelease(crashes->lock);
}

void
crashes_add(const history_crash *c)
{
	history_crash copy = *c;

	keep_row(&copy);
}

/* Whether a row for the crash at this time is kept (the file had it) */
static bool
row_kept(TimestampTz crashed_at)
{
	for (uint32 i = 0; i < Min(crashes->nrows, MAX_CRASHES); i++)
		if (crashes->rows[i].crashed_at == crashed_at)
			return true;
	return false;
}

/*
 * The server's cgroup now: its OOM kill counter and effective limit (-1:
 * unknown, none); and the counter the sampler reads between samples
 * (oom_clock.c: the cgroup's, else the machine's), and which.
 */
typedef struct cgroup_now
{
	int64		oom_kills;
	int64		limit;
	int64		id;				/* sysmem_cgroup_id(); 0: unknown */
	int64		clock_kills;
	int			clock_machine;
} cgroup_now;

static cgroup_now
read_cgroup_now(void)
{
	sysmem_cgroup cg;
	sysmem_cgmem m;
	cgroup_now now = {-1, -1, 0, -1, 0};

	now.clock_kills = oom_clock_read_now(&now.clock_machine);
	if (sysmem_find_cgroup(&cg) != 0)
		return now;
	sysmem_read_cgmem(&cg, &m);
	now.oom_kills = m.oom_kill;
	now.limit = m.effective_limit;
	now.id = (int64) sysmem_cgroup_id(&cg);
	return now;
}

/* The process entries that follow the system entry at p */
static uint32
sample_processes(uint64 p)
{
	uint64		end = history_ring_end();
	uint32		n = 0;

	while (p + 1 + n < end && history_ring_entry(p + 1 + n)->kind == HISTORY_PROCESS)
		n++;
	return n;
}

/* When a sample ended (sample_wall_us: 0 in files older builds wrote) */
static TimestampTz
sample_end(uint64 p)
{
	const history_entry *e = history_ring_entry(p);

	return e->sampled_at + Max(e->u.sys.sample_wall_us, 0);
}

/* Keeps the HISTORY_TOP largest overheads of a sample, largest first */
static void
consider_top(history_crash *c, const history_entry *e)
{
	int			k = HISTORY_TOP;

	while (k > 0 && c->top_overhead[k - 1] < e->u.proc.overhead)
		k--;
	if (k == HISTORY_TOP)
		return;
	memmove(&c->top_pid[k + 1], &c->top_pid[k], (HISTORY_TOP - 1 - k) * sizeof(c->top_pid[0]));
	memmove(&c->top_overhead[k + 1], &c->top_overhead[k], (HISTORY_TOP - 1 - k) * sizeof(c->top_overhead[0]));
	memmove(&c->top_type[k + 1], &c->top_type[k], (HISTORY_TOP - 1 - k) * sizeof(c->top_type[0]));
	c->top_pid[k] = e->pid;
	c->top_overhead[k] = e->u.proc.overhead;
	memcpy(c->top_type[k], e->u.proc.backend_type, HISTORY_TYPE_LEN);
}

/* The killed process's identity from what the postmaster copied at its exit */
static void
from_exit(history_crash *c, const pm_crash *seen)
{
	c->restarted_at = seen->restarted_at;
	if (seen->slot_read)
	{
		const procmem_slot_who *w = &seen->who;

		c->flags |= CRASH_SLOT_READ;
		c->backend_start = w->backend_start;
		c->query_start = w->query_start;
		history_copy_text(c->backend_type, sizeof(c->backend_type), w->backend_type,
						  strnlen(w->backend_type, sizeof(w->backend_type)));
		history_copy_text(c->usename, sizeof(c->usename), w->usename, strnlen(w->usename, sizeof(w->usename)));
		history_copy_text(c->datname, sizeof(c->datname), w->datname, strnlen(w->datname, sizeof(w->datname)));
		history_copy_text(c->application_name, sizeof(c->application_name), w->appname,
						  strnlen(w->appname, sizeof(w->appname)));
		c->settings = w->settings;
		c->plan = w->plan_flags;
	}
	c->flags |= seen->query_flags;
	if (seen->query_flags & CRASH_QUERY_LOGGED)
		history_copy_text(c->query, sizeof(c->query), seen->query, strnlen(seen->query, sizeof(seen->query)));
}

/* What its slot did not say, from the killed process's last sample */
static void
from_sample(history_crash *c)
{
	const history_process *p = &c->killed.u.proc;

	if (c->killed.kind != HISTORY_PROCESS)
		return;
	if (!(c->flags & CRASH_SLOT_READ))
	{
		c->backend_start = p->backend_start;
		c->query_start = p->query_start;
		memcpy(c->usename, p->usename, sizeof(c->usename));
		memcpy(c->datname, p->datname, sizeof(c->datname));
		memcpy(c->application_name, p->application_name, sizeof(c->application_name));
		c->settings = p->settings;
		c->settings.entry_flags = 0;	/* a process entry's own flags */
	}
	if (c->backend_type[0] == '\0')
		memcpy(c->backend_type, p->backend_type, sizeof(c->backend_type));
	if (!(c->flags & (CRASH_QUERY_LOGGED | CRASH_QUERY_KEPT_BACK)))
		history_copy_text(c->query, sizeof(c->query), p->query, strnlen(p->query, sizeof(p->query)));
}

/*
 * A sample's process entry, and whose group it counts in: its own, or a
 * parallel worker's leader's (a parallel query is one holder)
 */
typedef struct grouped
{
	const history_entry *e;
	const history_process *key;
} grouped;

static int
entry_pid_cmp(const void *a, const void *b)
{
	int32		x = (*(const history_entry *const *) a)->pid;
	int32		y = (*(const history_entry *const *) b)->pid;

	return (x > y) - (x < y);
}

/* Orders entries by their group's user, application and backend type */
static int
group_cmp(const void *a, const void *b)
{
	const history_process *x = ((const grouped *) a)->key;
	const history_process *y = ((const grouped *) b)->key;
	int			r;

	if ((r = strncmp(x->usename, y->usename, sizeof(x->usename))) != 0 ||
		(r = strncmp(x->application_name, y->application_name, sizeof(x->application_name))) != 0)
		return r;
	return strncmp(x->backend_type, y->backend_type, sizeof(x->backend_type));
}

/* A group being summed: what history_group holds, and what the row keeps beside it */
typedef struct holder
{
	history_group g;
	int32		workers;
	int64		dsm;			/* its parallel groups' own DSM, each once; -1: unknown */
	const history_process *largest;
} holder;

/* What a holder held: its overhead and its parallel queries' DSM */
static int64
holder_held(const holder *h)
{
	return h->g.total + Max(h->dsm, 0);
}

/* Keeps a group if it is among the HISTORY_GROUPS largest, largest first */
static void
consider_group(holder *top, const holder *h)
{
	int			k = HISTORY_GROUPS;

	while (k > 0 && (top[k - 1].g.processes == 0 || holder_held(&top[k - 1]) < holder_held(h)))
		k--;
	if (k == HISTORY_GROUPS)
		return;
	memmove(&top[k + 1], &top[k], (HISTORY_GROUPS - 1 - k) * sizeof(holder));
	top[k] = *h;
}

/*
 * Who held the memory at the sample whose n process entries start at
 * first: its processes grouped by user, application and backend type (a
 * parallel worker with its leader), the HISTORY_GROUPS largest by total
 * overhead and their parallel queries' own DSM, with their largest one's
 * state and statement.
 */
static void
find_groups(history_crash *c, uint64 first, uint32 n)
{
	const history_entry **by_pid;
	grouped    *e;
	holder		top[HISTORY_GROUPS + 1];
	holder		h;

	if (n == 0)
		return;
	by_pid = palloc(sizeof(history_entry *) * n);
	e = palloc(sizeof(grouped) * n);
	for (uint32 i = 0; i < n; i++)
		by_pid[i] = history_ring_entry(first + i);
	qsort(by_pid, n, sizeof(by_pid[0]), entry_pid_cmp);
	for (uint32 i = 0; i < n; i++)
	{
		history_entry key;
		const history_entry *k = &key, **leader = NULL;

		e[i].e = history_ring_entry(first + i);
		key.pid = e[i].e->u.proc.leader_pid;
		if (key.pid != 0)
			leader = bsearch(&k, by_pid, n, sizeof(by_pid[0]), entry_pid_cmp);
		e[i].key = leader ? &(*leader)->u.proc : &e[i].e->u.proc;
	}
	qsort(e, n, sizeof(e[0]), group_cmp);
	memset(top, 0, sizeof(top));
	memset(&h, 0, sizeof(h));
	h.dsm = -1;
	for (uint32 i = 0; i < n; i++)
	{
		const history_process *p = &e[i].e->u.proc;

		if (h.g.processes > 0 && group_cmp(&e[i], &e[i - 1]) != 0)
		{
			consider_group(top, &h);
			memset(&h, 0, sizeof(h));
			h.dsm = -1;
		}
		if (h.g.processes++ == 0)
		{
			memcpy(h.g.usename, e[i].key->usename, sizeof(h.g.usename));
			memcpy(h.g.application_name, e[i].key->application_name, sizeof(h.g.application_name));
			memcpy(h.g.backend_type, e[i].key->backend_type, sizeof(h.g.backend_type));
		}
		if (e[i].key != p)
			h.workers++;
		else if (p->group_dsm >= 0)	/* a leader, or in no parallel query: its group once */
			h.dsm = Max(h.dsm, 0) + p->group_dsm;
		h.g.total += Max(p->overhead, 0);
		if (h.g.largest_pid == 0 || p->overhead > h.g.largest)
		{
			h.g.largest = p->overhead;
			h.g.largest_pid = e[i].e->pid;
			h.g.settings = p->settings;
			h.g.settings.entry_flags = 0;
			h.largest = p;
		}
	}
	consider_group(top, &h);
	for (int k = 0; k < HISTORY_GROUPS && top[k].g.processes > 0; k++)
	{
		c->groups[k] = top[k].g;
		c->group_workers[k] = top[k].workers;
		c->group_dsm[k] = top[k].dsm;
		memcpy(c->group_state[k], top[k].largest->state, sizeof(c->group_state[k]));
		memcpy(c->group_query[k], top[k].largest->query, sizeof(c->group_query[k]));
	}
	pfree(e);
	pfree(by_pid);
}

/*
 * The killed process's parallel query at the sample whose n process entries
 * start at first: its leader and workers (leader_pid), their overhead.
 */
static void
find_killed_group(history_crash *c, uint64 first, uint32 n)
{
	const history_process *p = &c->killed.u.proc;
	int32		leader = p->leader_pid != 0 ? p->leader_pid : c->killed.pid;
	int32		processes = 0;
	int64		total = 0;

	for (uint32 i = 0; i < n; i++)
	{
		const history_entry *e = history_ring_entry(first + i);

		if (e->pid == leader || e->u.proc.leader_pid == leader)
		{
			processes++;
			total += Max(e->u.proc.overhead, 0);
			/* the same on every member: its segments, each counted once */
			if (e->u.proc.group_dsm >= 0)
				c->killed_group_dsm = e->u.proc.group_dsm;
		}
	}
	if (processes > 1)
	{
		c->killed_group_processes = processes;
		c->killed_group_overhead = total;
	}
}

/*
 * Whether the killed process's state at its sample may not be its state at
 * the kill: it ran a statement that started after the one that sample saw
 * (the slot says a later start), or one the slot does not speak of (killed
 * before its statement reached the executor) whose text is not the
 * sample's.
 */
static bool
state_stale(const history_crash *c)
{
	const history_process *p = &c->killed.u.proc;

	if (c->query_start != 0 && p->query_start != 0 && c->query_start > p->query_start)
		return true;
	if ((c->flags & CRASH_QUERY_LOGGED) &&
		(c->query_start == 0 || (p->query[0] != '\0' && strncmp(c->query, p->query, strnlen(p->query, sizeof(p->query))) != 0)))
		return true;
	return false;
}

/*
 * Where the kill was: the OOM kill counter's reads the postmaster copied at
 * the exit, against the counter now. Only an exit the postmaster logged has
 * them, and only the same counter (the cgroup's, or the machine's) compares.
 */
static oom_window
place_kill(history_how how, const pm_crash *seen, cgroup_now now)
{
	oom_reads	none;

	/* an OOM kill is a SIGKILL: another signal or an exit code was no OOM kill */
	if (how == HOW_POSTMASTER_LOG && seen->by_signal && seen->number == SIGKILL && seen->oom_read &&
		seen->oom.machine == now.clock_machine)
		return oom_window_place(&seen->oom, seen->crashed_at, now.clock_kills);
	oom_reads_init(&none, now.clock_machine);
	return oom_window_place(&none, 0, -1);
}

/*
 * The killed process's entry: its latest in the run's samples from the one
 * at from up to the one at last (a sample after the kill skips it: its
 * SIGKILL is pending), the same process as far as its start tells (a pid
 * seen earlier in the run may have been another process's).
 */
static void
find_killed(history_crash *c, TimestampTz run_started, uint64 from, uint64 last)
{
	uint64		end = history_ring_end();
	uint64		sample = end, seen_in = end;
	bool		in_run = false;

	for (uint64 p = history_ring_first_sample(); p < end; p++)
	{
		const history_entry *e = history_ring_entry(p);

		if (e->kind == HISTORY_SYSTEM)
		{
			if (p > last)
				break;
			in_run = e->u.sys.run_started == run_started && p >= from;
			sample = p;
		}
		else if (in_run && e->pid == c->killed_pid &&
				 (c->backend_start == 0 || e->u.proc.backend_start == 0 ||
				  e->u.proc.backend_start == c->backend_start))
		{
			c->killed = *e;
			seen_in = sample;
		}
	}
	if (seen_in != end)
		find_killed_group(c, seen_in + 1, sample_processes(seen_in));
}

/*
 * A row for the run that began at run_started, from its samples in the
 * ring (read in place: the sampler is the ring's only writer). The pid is
 * the postmaster's (how = HOW_POSTMASTER_LOG), or the highest oom_score at
 * the last sample (HOW_GUESS_OOM_SCORE), or none. Who it was and what it
 * ran: what the postmaster copied at its exit, else its last sample.
 *
 * Where the OOM kill counter placed the kill, "the last sample" is the last
 * that ended before it: the victim takes a while to die (seconds under
 * load), and the samples taken meanwhile skip it and count what it gives
 * back as room. Its figures, the largest processes, the groups and the room
 * come from there, and the counter's rise is the one across the kill.
 */
static void
make_row(history_crash *c, history_how how, TimestampTz crashed_at, TimestampTz run_started,
		 const pm_crash *seen, cgroup_now now)
{
	uint64		end = history_ring_end();
	uint64		last = end, before = end;
	int32		best_score = HISTORY_NO_SCORE;
	int64		best_overhead = -1;
	uint32		nprocesses = 0;
	oom_window	w = place_kill(how, seen, now);
	/* samples that ended by then are from before the kill */
	TimestampTz until = w.oom == CRASH_OOM_COUNTED ? w.after :
		how == HOW_POSTMASTER_LOG ? crashed_at : PG_INT64_MAX;

	memset(c, 0, sizeof(*c));
	c->crashed_at = crashed_at;
	c->restarted_at = crashed_at;
	c->how = how;
	c->exit_code = -1;
	c->killed_group_dsm = -1;
	for (int k = 0; k < HISTORY_GROUPS; k++)
		c->group_dsm[k] = -1;
	c->oom_kills_before = -1;
	c->oom_kills_after = now.oom_kills;
	c->cgroup_usage_before = -1;
	c->cgroup_limit_after = now.limit;
	c->oom = w.oom;
	if (w.oom == CRASH_OOM_COUNTED)
	{
		c->killed_after = w.after;
		c->killed_by = w.by;
	}
	for (int i = 0; i < HISTORY_TOP; i++)
		c->top_overhead[i] = -1;
	if (how == HOW_POSTMASTER_LOG)
	{
		c->killed_pid = seen->pid;
		if (seen->by_signal)
			c->signal = seen->number;
		else
			c->exit_code = seen->number;
		strlcpy(c->logged, seen->message, sizeof(c->logged));
		from_exit(c, seen);
	}

	for (uint64 p = history_ring_first_sample(); p < end; p = history_ring_next_sample(p))
		if (history_ring_entry(p)->u.sys.run_started == run_started && sample_end(p) <= until)
		{
			before = last;
			last = p;
		}
	if (w.oom != CRASH_OOM_UNKNOWN)
	{
		c->oom_kills_before = w.kills_before;
		c->oom_kills_after = w.kills_after;
	}
	if (last == end)
		return;					/* the run took no sample before it */
	c->last_sample_at = history_ring_entry(last)->sampled_at;
	c->cgroup_usage_before = history_ring_entry(last)->u.sys.cgroup_usage;
	/*
	 * Without the counter's reads: the cgroup's counter over the run's last
	 * two samples (the kill counts before its victim has exited, and a
	 * sample between the two shows it alive and counted).
	 */
	if (w.oom == CRASH_OOM_UNKNOWN)
		c->oom_kills_before = history_ring_entry(before != end ? before : last)->u.sys.cgroup_oom_kills;
	/*
	 * A server killed whole (the postmaster too: a container's OOM kill with
	 * memory.oom.group = 1) left no reads: the cgroup's counter at its last
	 * samples against now. A cgroup made again starts at 0: unknown then.
	 */
	if (how == HOW_UNCLEAN_STOP)
	{
		int64		was = history_ring_entry(last)->u.sys.cgroup_id;

		/* another cgroup's counter (a container started again) compares with nothing */
		if (was == 0 || was != now.id)
			c->oom_kills_before = -1;
		else if (c->oom_kills_before >= 0 && c->oom_kills_after >= c->oom_kills_before)
			c->oom = c->oom_kills_after > c->oom_kills_before ? CRASH_OOM_COUNTED : CRASH_OOM_NOT_COUNTED;
	}

	/* the last sample: the largest overheads, and the highest oom_score */
	for (uint64 p = last + 1; p < end && history_ring_entry(p)->kind == HISTORY_PROCESS; p++)
	{
		const history_entry *e = history_ring_entry(p);

		/* the kernel's ranking; a tie to the one holding more */
		if (how == HOW_GUESS_OOM_SCORE && e->pid != PostmasterPid &&
			e->u.proc.oom_score != HISTORY_NO_SCORE &&
			(e->u.proc.oom_score > best_score ||
			 (e->u.proc.oom_score == best_score && e->u.proc.overhead > best_overhead)))
		{
			best_score = e->u.proc.oom_score;
			best_overhead = e->u.proc.overhead;
			c->killed_pid = e->pid;
		}
		consider_top(c, e);
		nprocesses++;
	}
	find_groups(c, last + 1, nprocesses);
	/* a process its start does not tell: in the last two samples before the kill only */
	if (c->killed_pid != 0)
		find_killed(c, run_started, c->backend_start != 0 || before == end ? 0 : before, last);
	from_sample(c);
	if (c->killed.kind == HISTORY_PROCESS && state_stale(c))
		memset(c->killed.u.proc.state, 0, sizeof(c->killed.u.proc.state));
}

int
crashes_note(bool tail_open)
{
	int			n = 0;
	cgroup_now now;
	history_crash c;

	if (crashes->noted)
		return 0;
	now = read_cgroup_now();
	crashes->kills_before = now.oom_kills;
	crashes->noted_at = GetCurrentTimestamp();

	/* a previous server's last run, which ended without a clean stop */
	if (tail_open)
	{
		uint64		end = history_ring_end();
		uint64		last = end;

		for (uint64 p = history_ring_first_sample(); p < end; p = history_ring_next_sample(p))
			last = p;
		if (last != end && history_ring_entry(last)->u.sys.postmaster_started != PgStartTime)
		{
			make_row(&c, HOW_UNCLEAN_STOP, PgStartTime,
					 history_ring_entry(last)->u.sys.run_started, NULL, now);
			keep_row(&c);
			n++;
		}
	}

	/* this server's crash restarts, unless the file has their rows */
	for (int i = 0; i < crashes->nhanded; i++)
	{
		const pm_crash *seen = &crashes->handed[i];

		if (row_kept(seen->crashed_at))
			continue;
		make_row(&c, seen->logged ? HOW_POSTMASTER_LOG : HOW_GUESS_OOM_SCORE,
				 seen->crashed_at, seen->run_started, seen, now);
		keep_row(&c);
		n++;
	}
	crashes->noted = true;
	return n;
}

/* --- readers -------------------------------------------------------------- */

bool
crashes_kills_baseline(int64 *kills, TimestampTz *since)
{
	if (!crashes->noted || crashes->kills_before < 0)
		return false;
	*kills = crashes->kills_before;
	*since = crashes->noted_at;
	return true;
}

history_crash *
crashes_copy(uint32 *n)
{
	history_crash *out;

	LWLockAcquire(crashes->lock, LW_SHARED);
	*n = Min(crashes->nrows, MAX_CRASHES);
	out = palloc(sizeof(history_crash) * Max(*n, 1));
	for (uint32 i = 0; i < *n; i++)
		out[i] = crashes->rows[(crashes->nrows - *n + i) % MAX_CRASHES];
	LWLockRelease(crashes->lock);
	return out;
}
