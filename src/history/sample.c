/*
 * sample.c
 *		One sample of the memory history: the cheap figures of every process
 *		of the server (procmem_walk(), as pg_procmem_backends: never PSS)
 *		with who each one is (activity.c), and the machine's; appended to
 *		the ring in shared memory (history_ring.c) and to the file
 *		(history_file.c). The ring's lock is held only to copy the sample
 *		in; no backend ever waits for the sampler.
 *
 * A process that cannot have changed since its last read keeps that read's
 * figures (reuse_cache.c), its oom_score read again (another process can
 * set its adj), and its rss too where file pages moved.
 */
#include "server/compat.h"

#include <time.h>

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "history/activity.h"
#include "history/connections.h"
#include "history/history_file.h"
#include "history/history_ring.h"
#include "history/reuse_cache.h"
#include "history/sample.h"
#include "linux/psi.h"
#include "linux/sysmem.h"
#include "rules/dsm_groups.h"
#include "server/clock.h"
#include "server/contexts.h"
#include "server/dsm_segments.h"
#include "server/members.h"
#include "server/walk.h"

/* One sample being taken */
typedef struct sample_state
{
	procmem_activity *who;		/* procmem_activity_read() */
	int			nwho;
	procmem_context_total *contexts;	/* procmem_contexts_totals() */
	int			ncontexts;
	history_entry *e;
	uint32		n;
	uint32		cap;
	TimestampTz at;
	int64		at_ms;			/* monotonic */
	procmem_options walk_opt;	/* the walk's options, for a read again */
	procmem_reuse_pass reuse;	/* its arrays: one per entry, grown with them */
	dsm_table  *dsm;			/* the DSM segments there are (in sample_cxt) */
	bool		dsm_known;		/* ... were listed */
	dsm_mapped *mapped;			/* the segments each entry's process maps */
} sample_state;

static MemoryContext sample_cxt;
/* pg_procmem.dsm_leftover_after, in seconds */
static int	dsm_leftover_after_s = 60;
/* the segments seen mapped, for those left over (malloc'd: plain C) */
static dsm_leftover leftover;
static bool leftover_seeded = false;
static sysmem_cgroup cgroup;
static bool cgroup_known = false;
static int	last_method = -1;	/* the last sample's overhead method */

void
procmem_sample_init(void)
{
	DefineCustomIntVariable("pg_procmem.dsm_leftover_after",
							"Time after which a dynamic shared memory segment this server mapped and nobody maps now is left over.",
							"Counted in pg_procmem_history_system.dsm_leftover and said by the advice.",
							&dsm_leftover_after_s, 60, 1, 86400,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
}

void
procmem_sample_start(void)
{
	sample_cxt = AllocSetContextCreate(TopMemoryContext, "pg_procmem sample", ALLOCSET_DEFAULT_SIZES);
	procmem_reuse_cache_start();
	cgroup_known = sysmem_find_cgroup(&cgroup) == 0;
}

static history_entry *
new_entry(sample_state *st, history_kind kind, int32 pid)
{
	history_entry *e;

	if (st->n == st->cap)
	{
		st->cap *= 2;
		st->e = repalloc_huge(st->e, sizeof(history_entry) * st->cap);
		st->reuse.reads = repalloc_huge(st->reuse.reads, sizeof(procmem_cached) * st->cap);
		st->reuse.kinds = repalloc_huge(st->reuse.kinds, sizeof(procmem_membership) * st->cap);
		st->mapped = repalloc_huge(st->mapped, sizeof(dsm_mapped) * st->cap);
	}
	st->mapped[st->n].n = -1;
	e = &st->e[st->n++];
	memset(e, 0, sizeof(*e));
	e->sampled_at = st->at;
	e->kind = kind;
	e->pid = pid;
	return e;
}

/* An entry's oom_score: HISTORY_NO_SCORE when unknown */
static int32
oom_score(const procmem_reading *s)
{
	return (s->unreadable & (1u << PROCMEM_FILE_OOM_SCORE)) || s->oom_score > PG_INT32_MAX ?
		HISTORY_NO_SCORE : (int32) s->oom_score;
}

/* The entry flags that say whether the OOM killer may take it (-1000: never) */
static uint8
oom_flags(const procmem_reading *s)
{
	return (s->unreadable & (1u << PROCMEM_FILE_OOM_SCORE_ADJ)) ? 0 :
		HISTORY_PROC_OOM_KNOWN | (s->oom_score_adj == -1000 ? HISTORY_PROC_OOM_PROTECTED : 0);
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
	p->oom_score = oom_score(s);
}

/*
 * The oom_score and oom_score_adj alone, for reused figures: another process
 * can set its adj; *flags: oom_flags(). False when the process has gone.
 */
static bool
read_oom_score(pid_t pid, history_process *p, uint8 *flags)
{
	procmem_reading s;

	s.unreadable = 0;
	if (procmem_read_oom(pid, &s) != READ_OK)
		return false;
	p->oom_score = oom_score(&s);
	*flags = oom_flags(&s);
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

	if (!st->reuse.reread_rss)
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
	const procmem_activity *w;
	const procmem_context_total *t;
	const procmem_cached *c = NULL;
	procmem_cached *this_read;
	reuse_mark	mark;
	bool		gone = false;
	uint8		oom = 0;		/* oom_flags() */
	char		title[HISTORY_TYPE_LEN] = "";

	w = procmem_activity_find(st->who, st->nwho, pid);
	/* no backend status (a child without a PGPROC, or one just started): its title */
	o.want_cmdline = (w == NULL && kind != MEMBER_POSTMASTER && kind != MEMBER_HIDDEN);
	st->walk_opt = *opt;
	memset(&mark, 0, sizeof(mark));
	if (kind != MEMBER_HIDDEN)
	{
		c = procmem_reuse_find(&st->reuse, pid, kind, id, &mark, &gone);
		if (gone)
			return false;
	}
	e = new_entry(st, HISTORY_PROCESS, pid);
	p = &e->u.proc;
	this_read = &st->reuse.reads[st->n - 1];
	if (c && !procmem_check_reuse)
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
	if (c && !procmem_check_reuse)
	{
		p->overhead = c->overhead;
		p->private_anon = c->private_anon;
		p->page_tables = c->page_tables;
		p->swap = c->swap;
		strlcpy(title, c->title, sizeof(title));
		procmem_reuse_mapped(c, &st->mapped[st->n - 1]);
		*this_read = *c;		/* the same read, its mark and its age */
		this_read->rss = p->rss;
	}
	else
	{
		if (!procmem_read_member(pid, kind, id, &o, &s))
		{
			st->n--;
			return false;
		}
		put_reading(p, &s);
		st->mapped[st->n - 1] = s.dsm;
		oom = oom_flags(&s);
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
			procmem_cached would = *c;

			if (reread_rss(st, pid, &would.rss) == PROCFS_OK)
				procmem_reuse_check_one(&st->reuse, pid, &would, p);
			*this_read = would;
		}
		else
		{
			this_read->pid = pid;
			this_read->mark = mark;
			this_read->read_ms = st->at_ms;
			procmem_reuse_remember(this_read, p, title, &s.dsm);
		}
	}
	st->reuse.kinds[st->n - 1] = kind;

	t = procmem_contexts_find(st->contexts, st->ncontexts, pid, w ? w->backend_start : 0);
	p->context_bytes = t ? t->bytes : -1;
	if (t)
		p->settings = t->settings;
	/* after the settings, which it shares room with */
	p->settings.entry_flags = (c && !procmem_check_reuse ? HISTORY_PROC_REUSED : 0) | oom;

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
		if (procmem_contexts_text_allowed(t))
			history_copy_cstr(p->query, sizeof(p->query), w->query);
	}
	else if (pid == PostmasterPid)
		history_copy_cstr(p->backend_type, sizeof(p->backend_type), "postmaster");
	else if (o.want_cmdline)
		history_copy_cstr(p->backend_type, sizeof(p->backend_type), title);
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
	procmem_cached *reads = st->reuse.reads;
	procmem_membership *kinds = st->reuse.kinds;
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
				id.starttime != reads[i].mark.starttime ||
				reuse_mark_take(e->pid, &id, &reads[i].mark) != PROCFS_OK ||
				!procmem_read_member(e->pid, kinds[i], &id, &o, &s))
				continue;
			put_reading(p, &s);
			st->mapped[i] = s.dsm;
			p->settings.entry_flags = oom_flags(&s);
			reads[i].read_ms = st->at_ms;
			procmem_reuse_remember(&reads[i], p, reads[i].title, &s.dsm);
		}
		st->mapped[kept] = st->mapped[i];
		st->e[kept] = *e;
		reads[kept] = reads[i];
		kinds[kept] = kinds[i];
		kept++;
	}
	st->n = kept;
}

/* Keeps this sample's reads for the next; counts the reused entries */
static int32
end_reuse(sample_state *st)
{
	int32		reused = 0;
	bool		held = procmem_reuse_held(&st->reuse, st->e, st->n);

	if (!held)
		read_reused_again(st);
	for (uint32 i = 1; i < st->n; i++)
		reused += (st->e[i].u.proc.settings.entry_flags & HISTORY_PROC_REUSED) != 0;
	procmem_reuse_end(&st->reuse, st->n, held);
	return reused;
}

/*
 * What the sampler before this one saw mapped (the ring's newest sample
 * that says: a crash restart's run before, or this run's if only the
 * sampler restarted): a segment a killed process left is one of them.
 */
static void
seed_leftover(void)
{
	const history_entry *newest = NULL;

	for (uint64 p = history_ring_first_sample(); p < history_ring_end(); p = history_ring_next_sample(p))
	{
		const history_entry *e = history_ring_entry(p);

		if (e->kind == HISTORY_SYSTEM && e->u.sys.dsm_known)
			newest = e;
	}
	if (newest)
		dsm_leftover_seed(&leftover, newest->u.sys.dsm_seen, newest->u.sys.dsm_seen_handle,
						  HISTORY_DSM_SEEN, procmem_monotonic_ms());
}

/*
 * Whose DSM segments are whose (dsm_groups.h): each process entry's, its
 * parallel group's, and the system entry's totals, those left over too.
 */
static void
sum_dsm(sample_state *st)
{
	history_system *sys = &st->e[0].u.sys;
	uint32		n = st->n - 1;
	dsm_member *m = palloc(sizeof(dsm_member) * Max(n, 1));
	int64	   *mapped = palloc(sizeof(int64) * Max(n, 1));
	int64	   *own = palloc(sizeof(int64) * Max(n, 1));
	uint8	   *in_use;
	dsm_totals	totals;
	int64		left_bytes;
	int32		left_segments;
	int			nleaders;
	/* as PGPROCs say now: a worker pg_stat_activity has no row for yet is its leader's */
	procmem_leader *leaders = procmem_leaders(&nleaders);

	for (uint32 i = 0; i < n; i++)
	{
		history_entry *e = &st->e[i + 1];

		m[i].group = e->u.proc.leader_pid > 0 ? e->u.proc.leader_pid :
			procmem_group_of(leaders, nleaders, e->pid);
		m[i].mapped = &st->mapped[i + 1];
		e->u.proc.dsm = e->u.proc.group_dsm = -1;
	}
	if (!st->dsm_known)
		return;
	/*
	 * The segments reused figures map, and those seen mapped before: a
	 * posix segment is learned from a mapping the walk met (dsm.h), and
	 * where every process mapping it was reused, none was met
	 */
	for (uint32 i = 0; i < n; i++)
		for (int k = 0; k < st->mapped[i + 1].n; k++)
			(void) dsm_table_recall(st->dsm, st->mapped[i + 1].id[k], st->mapped[i + 1].handle[k]);
	if (!leftover_seeded)
		seed_leftover();
	leftover_seeded = true;
	dsm_leftover_recall(&leftover, st->dsm);
	in_use = palloc(Max(st->dsm->n, 1));
	if (dsm_groups_sum(st->dsm, m, (int) n, (int64_t *) mapped, (int64_t *) own, &totals,
					   in_use) != 0)
		return;
	for (uint32 i = 0; i < n; i++)
	{
		st->e[i + 1].u.proc.dsm = mapped[i];
		st->e[i + 1].u.proc.group_dsm = own[i];
	}
	dsm_leftover_update(&leftover, st->dsm, in_use, st->at_ms, (int64) dsm_leftover_after_s * 1000,
						&left_bytes, &left_segments, sys->dsm_leftover_id, sys->dsm_leftover_handle,
						HISTORY_DSM_LEFTOVER);
	sys->dsm_known = 1;
	sys->dsm_segments = totals.segments;
	sys->dsm_mapped = totals.mapped;
	sys->dsm_shared = totals.shared;
	sys->dsm_shared_segments = totals.shared_segments;
	sys->dsm_leftover = left_bytes;
	sys->dsm_leftover_segments = left_segments;
	(void) dsm_largest_in_use(st->dsm, in_use, sys->dsm_seen, sys->dsm_seen_handle, HISTORY_DSM_SEEN);
	sys->dsm_kind = st->dsm->kind;
}

/* The system entry: the machine and the server's cgroup */
static void
sample_system(history_system *sys, const pressure_watch *watch, const pressure_state *pressure)
{
	sysmem_meminfo mi;
	sysmem_cgmem cg;
	psi_server psi;
	/* the watch's, looked up again every 10 s: the server may have moved */
	const sysmem_cgroup *server_cgroup = watch->levels_found_ms != 0 ?
		(watch->cgroup_known ? &watch->cgroup : NULL) : (cgroup_known ? &cgroup : NULL);

	sysmem_read_meminfo(&mi);
	sysmem_cgmem_init(&cg);
	if (server_cgroup)
	{
		sysmem_read_cgmem(server_cgroup, &cg);
		sys->cgroup_id = (int64) sysmem_cgroup_id(server_cgroup);
	}
	psi_read_server(server_cgroup, &psi);
	sys->psi_read = 1;
	sys->psi_missing = psi.missing;
	sys->psi_some_avg10 = psi.machine.some_avg10;
	sys->psi_full_avg10 = psi.machine.full_avg10;
	sys->cgroup_psi_some_avg10 = psi.cgroup.some_avg10;
	sys->cgroup_psi_full_avg10 = psi.cgroup.full_avg10;
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

int64
procmem_take_sample(const pressure_watch *watch, const pressure_state *pressure)
{
	MemoryContext old = MemoryContextSwitchTo(sample_cxt);
	sample_state st;
	procmem_options opt = procmem_current_options(false);
	int64		cpu_us;
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
	st.reuse.reads = palloc0(sizeof(procmem_cached) * st.cap);
	st.reuse.kinds = palloc0(sizeof(procmem_membership) * st.cap);
	st.mapped = palloc(sizeof(dsm_mapped) * st.cap);
	new_entry(&st, HISTORY_SYSTEM, 0);
	st.who = procmem_activity_read(&st.nwho);
	st.contexts = procmem_contexts_totals(&st.ncontexts);
	/*
	 * At the critical level an OOM kill may be near: status figures only
	 * (overhead as RssAnon + VmPTE), no walk of a process's pages. A read
	 * holds the process's memory while it lasts, and a walk lasts; if the
	 * kernel kills the process meanwhile, its memory is freed only when the
	 * read ends, and the OOM killer, finding no victim left, takes another
	 * process: it has taken the postmaster so. The DSM segments a process
	 * maps are still asked for (the post-mortem needs them most then), as
	 * briefly as its status is read: with PROCMAP_QUERY a few calls that
	 * skip all but its shared file mappings (dsm.c).
	 */
	if (pressure && pressure->level == PRESSURE_CRITICAL)
		opt.method = PROCMEM_METHOD_RSS_ANON;
	/* figures read another way are not reused */
	if (opt.method != last_method)
		procmem_reuse_cache_forget();
	last_method = opt.method;
	procmem_reuse_begin(&st.reuse, st.at_ms);
	/* the segments there are, before any process is read: those it maps are among them */
	st.dsm = palloc(sizeof(dsm_table));
	st.dsm_known = procmem_dsm_table_read(st.dsm);
	opt.dsm = st.dsm_known ? st.dsm : NULL;
	/* where /proc hides the server, the system figures only: said once */
	if (procmem_check_proc_visible(hidden_said ? DEBUG1 : LOG))
	{
		procmem_walk(sample_process, &st, &opt);
		st.e[0].u.sys.reused = end_reuse(&st);
		sum_dsm(&st);
	}
	else
		hidden_said = true;
	sample_system(&st.e[0].u.sys, watch, pressure);
	st.e[0].u.sys.processes = (int32) (st.n - 1);
	fit_ring(&st);
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_end);
	/* its own CPU: the wall time also counts waiting for a busy machine */
	st.e[0].u.sys.sample_us = (int64) (cpu_end.tv_sec - cpu_start.tv_sec) * 1000000 +
		(cpu_end.tv_nsec - cpu_start.tv_nsec) / 1000;
	st.e[0].u.sys.sample_wall_us = INSTR_TIME_GET_MICROSEC(end);

	cpu_us = st.e[0].u.sys.sample_us;

	history_ring_append(st.e, st.n);
	history_file_append_sample(st.e, st.n);
	MemoryContextSwitchTo(old);
	MemoryContextReset(sample_cxt);
	return cpu_us;
}
