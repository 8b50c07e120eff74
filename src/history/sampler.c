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
 *
 * Between samples it ticks the pressure watch (pressure.h) every
 * pg_procmem.pressure_watch_interval; while the watch's level is raised it
 * samples every pg_procmem.pressure_sample_interval, and at the critical
 * level four times as often. A process that cannot have changed since its
 * last read (reuse.h) keeps that read's figures at a fraction of its cost.
 */
#include "server/compat.h"

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

#include "guard/guard.h"
#include "history/connections.h"
#include "history/crashes.h"
#include "history/history_file.h"
#include "history/history_ring.h"
#include "history/sampler.h"
#include "linux/sysmem.h"
#include "rules/pressure.h"
#include "rules/reuse.h"
#include "server/clock.h"
#include "server/contexts.h"
#include "server/members.h"
#include "server/walk.h"

PGDLLEXPORT void procmem_sampler_main(Datum arg);

/* pg_procmem.sample_interval, ms; 0: no sampling */
static int	sample_interval_ms = 10000;

/* the pressure watch's settings (docs/history.md, "Sampling under pressure") */
static int	watch_interval_ms = 100;
static int	pressure_sample_interval_ms = 1000;
static pressure_thresholds thresholds = {75, 90};

/* pg_procmem.sample_reuse; pg_procmem.check_reuse, for the tests */
static bool sample_reuse = true;
static bool check_reuse = false;

/*
 * What a process's last fresh read found, to reuse while nothing can have
 * changed it (reuse.h); the last sample's, sorted by pid.
 */
typedef struct cached
{
	int32		pid;			/* first: procmem_pid_cmp */
	reuse_mark	mark;			/* taken just before the read */
	int64		read_ms;		/* monotonic */
	int64		overhead;
	int64		private_anon;
	int64		page_tables;
	int64		rss;
	int64		swap;
	char		title[HISTORY_TYPE_LEN];	/* from its cmdline, when read */
} cached;

typedef struct reuse_state
{
	MemoryContext cxt;			/* lives as long as the sampler */
	cached	   *last;			/* the last sample's reads */
	int			nlast;
	bool		valid;			/* last may serve the next sample */
	reuse_postmaster pm;		/* the postmaster, at the last sample */
	reuse_moved moved;			/* the machine's counters, likewise */
} reuse_state;

static reuse_state reuse;

/* What pg_procmem.check_reuse compares, over one sample */
typedef struct reuse_check
{
	int			checked;
	int			over_8k;
	int			over_64k;
	int64		largest;
	int32		largest_pid;
	const char *largest_field;
} reuse_check;

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
	int64		at_ms;			/* monotonic */
	/* reuse: whether the server's and the machine's conditions hold */
	bool		may_reuse;
	bool		reread_rss;		/* ... but file pages moved: rss is read again */
	procmem_options walk_opt;	/* the walk's options, for a read again */
	cached	   *reads;			/* this sample's, for the next: one per process entry */
	procmem_membership *kinds;	/* ... and how each is a member */
	reuse_check check;
} sample_state;


static sysmem_cgroup cgroup;
static bool cgroup_known = false;
static pressure_watch watch;
static int	last_method = -1;	/* the last sample's overhead method */

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

static history_entry *
new_entry(sample_state *st, history_kind kind, int32 pid)
{
	history_entry *e;

	if (st->n == st->cap)
	{
		st->cap *= 2;
		st->e = repalloc_huge(st->e, sizeof(history_entry) * st->cap);
		st->reads = repalloc_huge(st->reads, sizeof(cached) * st->cap);
		st->kinds = repalloc_huge(st->kinds, sizeof(procmem_membership) * st->cap);
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

/* The figures of a process entry from a fresh read */
static void
put_reading(history_process *p, const procmem_reading *s)
{
	p->overhead = s->overhead;
	p->private_anon = s->anon.exclusive;
	p->page_tables = s->status.vm_pte;
	p->rss = s->status.vm_rss;
	p->swap = s->status.vm_swap;
	p->oom_score = (s->unreadable & (1u << PROCMEM_FILE_OOM_SCORE)) || s->oom_score > PG_INT32_MAX ?
		HISTORY_NO_SCORE : (int32) s->oom_score;
}

/* The entry flags that say whether the OOM killer may take it (-1000: never) */
static uint8
oom_flags(bool adj_read, int64 adj)
{
	return !adj_read ? 0 :
		HISTORY_PROC_OOM_KNOWN | (adj == -1000 ? HISTORY_PROC_OOM_PROTECTED : 0);
}

static uint8
reading_oom_flags(const procmem_reading *s)
{
	return oom_flags(!(s->unreadable & (1u << PROCMEM_FILE_OOM_SCORE_ADJ)), s->oom_score_adj);
}

static void
remember(cached *c, const history_process *p, const char *title)
{
	c->overhead = p->overhead;
	c->private_anon = p->private_anon;
	c->page_tables = p->page_tables;
	c->rss = p->rss;
	c->swap = p->swap;
	strlcpy(c->title, title ? title : "", sizeof(c->title));
}

/* pg_procmem.check_reuse: how far the reused figures were from fresh ones */
static void
check_one(reuse_check *k, int32 pid, const cached *c, const history_process *p)
{
	const int64 was[] = {c->overhead, c->private_anon, c->page_tables, c->rss, c->swap};
	const int64 is[] = {p->overhead, p->private_anon, p->page_tables, p->rss, p->swap};
	static const char *const names[] = {"overhead", "private_anon", "page_tables", "rss", "swap"};
	int64		worst = 0;
	int			w = 0;

	for (int i = 0; i < lengthof(was); i++)
	{
		int64		d = was[i] > is[i] ? was[i] - is[i] : is[i] - was[i];

		if (d > worst)
		{
			worst = d;
			w = i;
		}
	}
	k->checked++;
	k->over_8k += worst > 8192;
	k->over_64k += worst > 65536;
	if (worst > k->largest)
	{
		k->largest = worst;
		k->largest_pid = pid;
		k->largest_field = names[w];
	}
}

/*
 * The last sample's read of pid, where it is still the process's figures
 * (reuse.h); its mark is left in *mark either way, for a fresh read to keep.
 */
static const cached *
reusable(sample_state *st, pid_t pid, procmem_membership kind, const procfs_stat *id,
		 reuse_mark *mark, bool *gone)
{
	cached		key = {.pid = pid};
	const cached *c;
	procfs_result res;

	*gone = false;
	mark->starttime = id->starttime;
	mark->threads = id->threads;
	memset(&mark->sched, 0, sizeof(mark->sched));
	if (!sample_reuse)
		return NULL;
	/* taken before a fresh read: a run during it shows at the next sample */
	res = procfs_read_schedstat(pid, &mark->sched);
	if (res == PROCFS_GONE)
		*gone = true;
	/*
	 * Never the postmaster: a child writing a page only it and the
	 * postmaster still share leaves the postmaster's copy exclusive, and
	 * children run all the time.
	 */
	if (res != PROCFS_OK || !st->may_reuse || kind == MEMBER_POSTMASTER)
		return NULL;
	c = bsearch(&key, reuse.last, reuse.nlast, sizeof(cached), procmem_pid_cmp);
	if (c == NULL || !reuse_process_unchanged(&c->mark, c->read_ms, id, &mark->sched, st->at_ms))
		return NULL;
	return c;
}

/* One number of /proc/PID/name into *v: PROCFS_UNREADABLE when it is not one */
static procfs_result
read_int(pid_t pid, const char *name, int64 *v)
{
	char		buf[32];
	size_t		len;
	procfs_result res = procfs_read_file(pid, name, buf, sizeof(buf), &len);

	return res == PROCFS_OK && procfs_parse_int(buf, len, v) != 0 ? PROCFS_UNREADABLE : res;
}

/*
 * The oom_score and oom_score_adj alone, for reused figures: another process
 * can set its adj; *flags: oom_flags()
 */
static bool
read_oom_score(pid_t pid, history_process *p, uint8 *flags)
{
	int64		score = 0,
				adj = 0;
	procfs_result res_score = read_int(pid, "oom_score", &score);
	procfs_result res_adj = read_int(pid, "oom_score_adj", &adj);

	if (res_score == PROCFS_GONE || res_adj == PROCFS_GONE)
		return false;
	p->oom_score = res_score == PROCFS_OK && score <= PG_INT32_MAX ? (int32) score : HISTORY_NO_SCORE;
	*flags = oom_flags(res_adj == PROCFS_OK, adj);
	return true;
}

/*
 * Where file pages moved since the last sample, a reused process's rss
 * read again (/proc/PID/statm) into *rss; PROCFS_OK (also when it need not
 * be), else what the read found.
 */
static procfs_result
reread_rss(const sample_state *st, pid_t pid, int64 *rss)
{
	procfs_statm m;
	procfs_result res;

	if (!st->reread_rss)
		return PROCFS_OK;
	res = procfs_read_statm(pid, &m);
	if (res == PROCFS_OK)
		*rss = m.resident;
	return res;
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
	const cached *c = NULL;
	reuse_mark	mark;
	bool		gone = false;
	uint8		oom = 0;		/* oom_flags() */
	char		title[HISTORY_TYPE_LEN] = "";

	w = bsearch(&key, st->who, st->nwho, sizeof(who), procmem_pid_cmp);
	/* no backend status (a child without a PGPROC, or one just started): its title */
	o.want_cmdline = (w == NULL && kind != MEMBER_POSTMASTER && kind != MEMBER_HIDDEN);
	st->walk_opt = *opt;
	memset(&mark, 0, sizeof(mark));
	if (kind != MEMBER_HIDDEN)
	{
		c = reusable(st, pid, kind, id, &mark, &gone);
		if (gone)
			return false;
	}
	e = new_entry(st, HISTORY_PROCESS, pid);
	p = &e->u.proc;
	if (c && !check_reuse)
	{
		procfs_result res;

		p->rss = c->rss;
		res = reread_rss(st, pid, &p->rss);
		if (res == PROCFS_GONE || !read_oom_score(pid, p, &oom))
		{
			st->n--;
			return false;
		}
		if (res != PROCFS_OK)
			c = NULL;			/* rss unknown: a fresh read instead */
	}
	if (c && !check_reuse)
	{
		p->overhead = c->overhead;
		p->private_anon = c->private_anon;
		p->page_tables = c->page_tables;
		p->swap = c->swap;
		strlcpy(title, c->title, sizeof(title));
		st->reads[st->n - 1] = *c;	/* the same read, its mark and its age */
		st->reads[st->n - 1].rss = p->rss;
	}
	else
	{
		if (!procmem_read_member(pid, kind, id, &o, &s))
		{
			st->n--;
			return false;
		}
		put_reading(p, &s);
		oom = reading_oom_flags(&s);
		if (o.want_cmdline)
			procmem_title_type(s.cmdline, s.cmdline_len, title, sizeof(title));
		if (c)
		{
			/*
			 * What reuse would have given: the last read's, rss read
			 * again. The next sample checks against it too, as reuse
			 * would have kept it (up to REUSE_MAX_AGE_MS old), not
			 * against this sample's read: what drifts over many
			 * intervals shows.
			 */
			cached		would = *c;

			if (reread_rss(st, pid, &would.rss) == PROCFS_OK)
				check_one(&st->check, pid, &would, p);
			st->reads[st->n - 1] = would;
		}
		else
		{
			st->reads[st->n - 1].pid = pid;
			st->reads[st->n - 1].mark = mark;
			st->reads[st->n - 1].read_ms = st->at_ms;
			remember(&st->reads[st->n - 1], p, title);
		}
	}
	st->kinds[st->n - 1] = kind;

	t = procmem_contexts_find(st->contexts, st->ncontexts, pid);
	p->context_bytes = t ? t->bytes : -1;
	if (t)
		p->settings = t->settings;
	/* after the settings, which it shares room with */
	p->settings.entry_flags = (c && !check_reuse ? HISTORY_PROC_REUSED : 0) | oom;

	if (w)
	{
		p->backend_start = w->backend_start;
		p->query_start = w->query_start;
		p->query_id = w->query_id;
		p->leader_pid = w->leader_pid;
		history_copy_cstr(p->backend_type, sizeof(p->backend_type), w->backend_type);
		history_copy_cstr(p->datname, sizeof(p->datname), w->datname);
		history_copy_cstr(p->usename, sizeof(p->usename), w->usename);
		history_copy_cstr(p->application_name, sizeof(p->application_name), w->appname);
		history_copy_cstr(p->state, sizeof(p->state), w->state);
		if (text_allowed(t))
			history_copy_cstr(p->query, sizeof(p->query), w->query);
	}
	else if (pid == PostmasterPid)
		history_copy_cstr(p->backend_type, sizeof(p->backend_type), "postmaster");
	else if (o.want_cmdline)
		history_copy_cstr(p->backend_type, sizeof(p->backend_type), title);
	return true;
}

/* The system entry: the machine and the server's cgroup */
static void
sample_system(history_system *sys, const pressure_state *pressure)
{
	sysmem_meminfo mi;
	sysmem_cgmem cg;

	sysmem_read_meminfo(&mi);
	sysmem_cgmem_init(&cg);
	/* the watch's, looked up again every 10 s: the server may have moved */
	if (watch.levels_found_ms != 0 ? watch.cgroup_known : cgroup_known)
		sysmem_read_cgmem(watch.levels_found_ms != 0 ? &watch.cgroup : &cgroup, &cg);
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
	sys->pressure = pressure ? pressure->level : PRESSURE_NONE;
	sys->pressure_source = pressure ? pressure->source : PRESSURE_FROM_NONE;
	sys->pressure_used = pressure && pressure->used >= 0 ? pressure->used : -1;
	sys->pressure_limit = pressure && pressure->limit > 0 ? pressure->limit : -1;
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


/*
 * Whether the server's and the machine's conditions for reuse hold since
 * the last sample: the postmaster did not touch its memory, no anonymous
 * page moved;
 * *reread_rss: file pages moved (reclaim of page cache), so rss is read
 * again. What it read is what the next sample compares with.
 */
static bool
begin_reuse(bool *reread_rss)
{
	reuse_postmaster pm;
	reuse_moved moved;
	bool		read = reuse_read_postmaster(PostmasterPid, &pm) == PROCFS_OK &&
		reuse_read_moved(&moved) == PROCFS_OK;
	bool		ok = read && sample_reuse && reuse.valid &&
		reuse_postmaster_still(&reuse.pm, &pm) && reuse_anon_unmoved(&moved, &reuse.moved);

	*reread_rss = ok && !reuse_moved_equal(&moved, &reuse.moved);
	reuse.valid = false;		/* until this sample is kept for the next */
	if (read)
	{
		reuse.pm = pm;
		reuse.moved = moved;
	}
	return ok;
}

/* The same processes as the last sample, none started or exited (pid and start time) */
static bool
same_members(const sample_state *st)
{
	if (st->n - 1 != (uint32) reuse.nlast)
		return false;
	for (uint32 i = 1; i < st->n; i++)
		if (st->reads[i].pid != reuse.last[i - 1].pid ||
			st->reads[i].mark.starttime != reuse.last[i - 1].mark.starttime)
			return false;
	return true;
}

/*
 * A process started or exited while the last sample's figures were being
 * reused (the postmaster had not run yet): read those processes again; one
 * that has gone since is left out.
 */
static void
read_reused_again(sample_state *st)
{
	uint32		kept = 1;

	for (uint32 i = 1; i < st->n; i++)
	{
		history_entry *e = &st->e[i];
		history_process *p = &e->u.proc;

		if (p->settings.entry_flags & HISTORY_PROC_REUSED)
		{
			procmem_options o = st->walk_opt;
			procfs_stat id;
			procmem_reading s;

			o.want_cmdline = false;	/* the title: it did not run */
			if (procfs_read_stat(e->pid, &id) != PROCFS_OK ||
				id.starttime != st->reads[i].mark.starttime ||
				procfs_read_schedstat(e->pid, &st->reads[i].mark.sched) != PROCFS_OK ||
				!procmem_read_member(e->pid, st->kinds[i], &id, &o, &s))
				continue;
			put_reading(p, &s);
			p->settings.entry_flags = reading_oom_flags(&s);
			st->reads[i].read_ms = st->at_ms;
			remember(&st->reads[i], p, st->reads[i].title);
		}
		st->e[kept] = *e;
		st->reads[kept] = st->reads[i];
		st->kinds[kept] = st->kinds[i];
		kept++;
	}
	st->n = kept;
}

/*
 * Whether the server's and the machine's conditions still hold at the
 * walk's end as at its start: the postmaster and the counters as
 * begin_reuse() read them, and every process visited still the
 * postmaster's child (one that exited after its visit may have left a page
 * to a sibling visited later).
 */
static bool
held_through_walk(const sample_state *st)
{
	reuse_postmaster pm;
	reuse_moved moved;
	pid_t	   *children;
	int			n;
	bool		held;

	if (reuse_read_postmaster(PostmasterPid, &pm) != PROCFS_OK ||
		reuse_read_moved(&moved) != PROCFS_OK ||
		!reuse_postmaster_still(&reuse.pm, &pm) || !reuse_anon_unmoved(&moved, &reuse.moved))
		return false;
	children = palloc(sizeof(pid_t) * (st->n + 64));
	n = procfs_children(PostmasterPid, children, (int) st->n + 64);
	held = n >= 0;
	if (held)
		qsort(children, n, sizeof(pid_t), procmem_pid_cmp);
	for (uint32 i = 1; held && i < st->n; i++)
		held = st->e[i].pid == PostmasterPid || st->kinds[i] == MEMBER_HIDDEN ||
			bsearch(&st->e[i].pid, children, n, sizeof(pid_t), procmem_pid_cmp) != NULL;
	pfree(children);
	return held;
}

/* Keeps this sample's reads for the next; counts the reused entries */
static int32
end_reuse(sample_state *st, bool conditions_held)
{
	int32		reused = 0;
	bool		members_kept = !conditions_held || (same_members(st) && held_through_walk(st));

	if (!members_kept)
		read_reused_again(st);
	for (uint32 i = 1; i < st->n; i++)
		reused += (st->e[i].u.proc.settings.entry_flags & HISTORY_PROC_REUSED) != 0;
	if (check_reuse && st->check.checked > 0 && members_kept)
		ereport(LOG,
				(errmsg("pg_procmem reuse check: %d reusable, %d more than 8 kB off, %d more than 64 kB off, largest %lld bytes (pid %d, %s)",
						st->check.checked, st->check.over_8k, st->check.over_64k,
						(long long) st->check.largest, st->check.largest_pid,
						st->check.largest_field ? st->check.largest_field : "-")));
	if (reuse.last)
		pfree(reuse.last);
	reuse.nlast = (int) st->n - 1;
	reuse.last = MemoryContextAlloc(reuse.cxt, sizeof(cached) * Max(reuse.nlast, 1));
	memcpy(reuse.last, st->reads + 1, sizeof(cached) * reuse.nlast);
	/* checking, the reads kept are not those read again: the next reads all */
	reuse.valid = members_kept || !check_reuse;
	return reused;
}

static void
take_sample(MemoryContext cxt, const pressure_state *pressure)
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
	st.at_ms = procmem_monotonic_ms();
	st.cap = 256;
	st.e = palloc(sizeof(history_entry) * st.cap);
	st.reads = palloc0(sizeof(cached) * st.cap);
	st.kinds = palloc0(sizeof(procmem_membership) * st.cap);
	new_entry(&st, HISTORY_SYSTEM, 0);
	read_who(&st);
	st.contexts = procmem_contexts_totals(&st.ncontexts);
	/*
	 * At the critical level an OOM kill may be near: status figures only
	 * (overhead as RssAnon + VmPTE), no walk of a process's pages. A read
	 * holds the process's memory while it lasts, and a walk lasts; if the
	 * kernel kills the process meanwhile, its memory is freed only when the
	 * read ends, and the OOM killer, finding no victim left, takes another
	 * process: it has taken the postmaster so.
	 */
	if (pressure && pressure->level == PRESSURE_CRITICAL)
		opt.method = PROCMEM_METHOD_RSS_ANON;
	/* figures read another way are not reused */
	if (opt.method != last_method)
		reuse.valid = false;
	last_method = opt.method;
	st.may_reuse = begin_reuse(&st.reread_rss);
	/* where /proc hides the server, the system figures only: said once */
	if (procmem_check_proc_visible(hidden_said ? DEBUG1 : LOG))
	{
		procmem_walk(sample_process, &st, &opt);
		st.e[0].u.sys.reused = end_reuse(&st, st.may_reuse);
	}
	else
		hidden_said = true;
	sample_system(&st.e[0].u.sys, pressure);
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

/*
 * When the next sample is due: on the interval's grid, or sooner under
 * pressure (every pg_procmem.pressure_sample_interval, four times as often
 * at the critical level, but never sooner than three times what the last
 * sample took), counted from the last sample's start.
 */
static int64
sample_due(int64 now, int64 next, int64 last, int64 took, const pressure_state *pressure)
{
	int64		due = next == 0 ? now : next;

	if (pressure && pressure->level != PRESSURE_NONE && last != 0)
	{
		int64		every = pressure->level == PRESSURE_CRITICAL ?
			Max(pressure_sample_interval_ms / 4, 1) : pressure_sample_interval_ms;

		/* sampling takes at most a third of the time: a slow sample spaces the next */
		due = Max(Min(due, last + every), last + 3 * took);
	}
	return due;
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
	int64		next = 0;		/* the interval's grid, monotonic ms */
	int64		last = 0;		/* when the last sample was taken */
	int64		took = 0;		/* ... and how long it took (wall ms) */
	int			last_interval = sample_interval_ms;
	int			last_watch = watch_interval_ms;
	procmem_options read_as = procmem_current_options(false);
	int64		next_watch = 0;
	struct sigaction term;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	memset(&term, 0, sizeof(term));
	term.sa_sigaction = sampler_sigterm;
	term.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&term.sa_mask);
	sigaction(SIGTERM, &term, NULL);
	/* pg_cancel_backend() cancels nothing here: it must not end the history */
	pqsignal(SIGINT, PG_SIG_IGN);
	BackgroundWorkerUnblockSignals();
	/* no database: the names it needs are in shared catalogs */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("pg_procmem sampler");

	cxt = AllocSetContextCreate(TopMemoryContext, "pg_procmem sample", ALLOCSET_DEFAULT_SIZES);
	reuse.cxt = AllocSetContextCreate(TopMemoryContext, "pg_procmem reused figures", ALLOCSET_DEFAULT_SIZES);
	cgroup_known = sysmem_find_cgroup(&cgroup) == 0;
	pressure_watch_init(&watch);
	start_history();

	while (!ShutdownRequestPending)
	{
		long		timeout = -1;
		int			events = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;

		if (ConfigReloadPending)
		{
			procmem_options now_as;

			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			/* a new interval counts from now; a reload alone changes nothing */
			if (sample_interval_ms != last_interval)
				next = 0;
			last_interval = sample_interval_ms;
			if (watch_interval_ms != last_watch)
				next_watch = 0;
			last_watch = watch_interval_ms;
			/* figures read another way are not reused */
			now_as = procmem_current_options(false);
			if (now_as.method != read_as.method || now_as.pagemap_flags != read_as.pagemap_flags)
				reuse.valid = false;
			read_as = now_as;
		}
		/* the guard's worker runs while pg_procmem.guard is on; its actions go to the file */
		procmem_guard_ensure_worker();
		history_file_append_guard();
		if (sample_interval_ms > 0)
		{
			int64		now = procmem_monotonic_ms();
			const pressure_state *pressure = NULL;
			int64		due;

			if (watch_interval_ms > 0 && now >= next_watch)
			{
				pressure = pressure_watch_tick(&watch, now, &thresholds);
				/* at least 10 ms: the growth needs readings 200 ms apart among the last 32 */
				next_watch = now + Max(watch_interval_ms, 10);
			}
			else if (watch_interval_ms > 0)
				pressure = &watch.state;
			due = sample_due(now, next, last, took, pressure);
			if (now >= due)
			{
				take_sample(cxt, pressure);
				last = now;
				took = procmem_monotonic_ms() - now;
				/* on the interval's grid: a slow sample does not shift the next */
				if (now >= next)
				{
					next = (next == 0 ? now : next) + sample_interval_ms;
					if (next <= procmem_monotonic_ms())
						next = procmem_monotonic_ms() + sample_interval_ms;
				}
				due = sample_due(now, next, last, took, pressure);
			}
			if (watch_interval_ms > 0)
				due = Min(due, next_watch);
			timeout = (long) Max(due - procmem_monotonic_ms(), 1);
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
	history_file_append_guard();
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
	DefineCustomIntVariable("pg_procmem.pressure_watch_interval",
							"Time between two looks at how close memory is to its limit.",
							"Under pressure the sampler samples every pg_procmem.pressure_sample_interval. 0 turns the watch off.",
							&watch_interval_ms, 100, 0, 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_procmem.pressure_sample_interval",
							"Time between two samples while memory runs short.",
							"At the critical level, a quarter of it.",
							&pressure_sample_interval_ms, 1000, 100, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_procmem.pressure_threshold",
							"Percentage of its limit the memory that cannot be reclaimed may use before sampling speeds up.",
							"Also when at its growth it would reach the limit within 10 seconds.",
							&thresholds.high_pct, 75, 1, 100,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_procmem.pressure_critical",
							"Percentage of its limit at which sampling speeds up four times more.",
							"Also when at its growth it would reach the limit within 2 seconds.",
							&thresholds.critical_pct, 90, 1, 100,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("pg_procmem.sample_reuse",
							 "Reuses a process's figures from the last sample when nothing can have changed them.",
							 NULL,
							 &sample_reuse, true,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("pg_procmem.check_reuse",
							 "Reads every reusable process afresh too, and logs how far the two differ (for the tests).",
							 NULL,
							 &check_reuse, false,
							 PGC_SIGHUP, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL, NULL, NULL, NULL);
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
