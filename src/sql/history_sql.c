/*
 * history_sql.c
 *		The memory history's SQL-callable functions: every process at every
 *		sample, every sample's system entry, the crash rows.
 *
 * Each reads the ring a chunk at a time (history_ring.h) straight into its
 * result set: what a read costs is what it returns (and a tuplestore
 * spills past work_mem), whatever the ring's size. All the reads of one
 * transaction stop at the same sample, so that joining the processes with
 * the system entries finds the newest sample in both.
 */
#include "server/compat.h"

#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "storage/dsm_impl.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "history/crashes.h"
#include "history/history_ring.h"
#include "linux/dsm.h"
#include "linux/psi.h"
#include "rules/pressure.h"
#include "server/contexts.h"
#include "server/rows.h"
#include "server/shmem.h"

PG_FUNCTION_INFO_V1(pg_procmem_history_processes);
PG_FUNCTION_INFO_V1(pg_procmem_history_latest);
PG_FUNCTION_INFO_V1(pg_procmem_history_system);
PG_FUNCTION_INFO_V1(pg_procmem_crash_log);
PG_FUNCTION_INFO_V1(pg_procmem_crash_groups);
PG_FUNCTION_INFO_V1(pg_procmem_oom_kills_baseline);

/* The columns of the memory settings (put_settings()) */
#define SETTINGS_NCOLS (2 * HISTORY_SETTINGS)

/* Result columns, in every released shape (see rows.h) */
#define HISTORY_PROCESSES_NCOLS_V1_2 (20 + SETTINGS_NCOLS)
#define HISTORY_PROCESSES_NCOLS_V1_3 (HISTORY_PROCESSES_NCOLS_V1_2 + 4)	/* reused .. group_dsm */
static const int history_processes_shapes[] = {HISTORY_PROCESSES_NCOLS_V1_2, HISTORY_PROCESSES_NCOLS_V1_3};
#define HISTORY_SYSTEM_NCOLS_V1_2 16
#define HISTORY_SYSTEM_NCOLS_V1_3 (HISTORY_SYSTEM_NCOLS_V1_2 + 17)	/* pressure .. psi_unavailable */
static const int history_system_shapes[] = {HISTORY_SYSTEM_NCOLS_V1_2, HISTORY_SYSTEM_NCOLS_V1_3};
#define CRASH_LOG_NCOLS_V1_2 (33 + SETTINGS_NCOLS)
#define CRASH_LOG_NCOLS_V1_3 (CRASH_LOG_NCOLS_V1_2 + 8)	/* exited_at .. parallel_dsm */
static const int crash_log_shapes[] = {CRASH_LOG_NCOLS_V1_2, CRASH_LOG_NCOLS_V1_3};
#define CRASH_HOLDERS_NCOLS_V1_2 (9 + SETTINGS_NCOLS)
#define CRASH_HOLDERS_NCOLS_V1_3 (CRASH_HOLDERS_NCOLS_V1_2 + 4)	/* parallel_workers .. dsm */
static const int crash_holders_shapes[] = {CRASH_HOLDERS_NCOLS_V1_2, CRASH_HOLDERS_NCOLS_V1_3};
#define OOM_KILLS_NCOLS_V1_2 2
static const int oom_kills_shapes[] = {OOM_KILLS_NCOLS_V1_2};

/* The most columns of a row-per-entry function */
#define ENTRY_MAX_NCOLS Max(HISTORY_PROCESSES_NCOLS_V1_3, HISTORY_SYSTEM_NCOLS_V1_3)

/* Entries copied out of the ring at a time */
#define CHUNK 64

/*
 * Starts one of the history's set-returning functions: the result set of a
 * known shape, or NULL when there is no history and missing_ok (no rows);
 * without the history and not missing_ok, the ERROR saying how to get it.
 */
static ReturnSetInfo *
history_srf(FunctionCallInfo fcinfo, const int *shapes, int nshapes)
{
	ReturnSetInfo *rsinfo = start_result_set(fcinfo, shapes, nshapes);

	if (history_ring_exists())
		return rsinfo;
	if (!PG_GETARG_BOOL(0))
		procmem_shmem_missing();
	return NULL;
}

#define FIELD(values, nulls, i, f) put_field(values, nulls, i, f, sizeof(f))

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

/*
 * The memory settings, from i on: work_mem, its source, hash_mem_multiplier,
 * its source, temp_buffers, its source, maintenance_work_mem, its source
 * (NULL: not said); returns the next column.
 */
static int
put_settings(Datum *values, bool *nulls, int i, const history_settings *s)
{
	for (int k = 0; k < HISTORY_SETTINGS; k++)
	{
		const char *source = history_setting_source_name(s->source[k]);

		if (k == SETTING_HASH_MEM_MULTIPLIER)
			values[i] = Float8GetDatum(s->value[k] / 1000.0);
		else
			values[i] = Int64GetDatum(s->value[k]);
		/* a value without its source is one nobody said */
		nulls[i++] = source == NULL || s->value[k] < 0;
		put_text(values, nulls, i++, source);
	}
	return i;
}

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
	i = put_settings(values, nulls, i, &p->settings);
	/* reused: files of older builds hold 0 (false) */
	values[i++] = BoolGetDatum((p->settings.entry_flags & HISTORY_PROC_REUSED) != 0);
	/* oom_protected: NULL where oom_score_adj was not read (and in older files) */
	values[i] = BoolGetDatum((p->settings.entry_flags & HISTORY_PROC_OOM_PROTECTED) != 0);
	nulls[i++] = (p->settings.entry_flags & HISTORY_PROC_OOM_KNOWN) == 0;
	/* dsm, group_dsm: -1 where unknown (1.2.0's entries load so) */
	put_int8(values, nulls, i++, p->dsm);
	put_int8(values, nulls, i++, p->group_dsm);
	return i;
}

/*
 * The names of the largest DSM segments left over (a text[]: where to look
 * for them), NULL when none
 */
static void
put_leftover_names(Datum *values, bool *nulls, int i, const history_system *s)
{
	Datum		names[HISTORY_DSM_LEFTOVER];
	int			n = 0;

	for (int k = 0; k < HISTORY_DSM_LEFTOVER && s->dsm_known; k++)
	{
		if (s->dsm_leftover_id[k] == 0)
			continue;
		if (s->dsm_kind == DSM_KIND_POSIX)
			names[n++] = CStringGetTextDatum(psprintf("/dev/shm/PostgreSQL.%u", s->dsm_leftover_handle[k]));
		else if (s->dsm_kind == DSM_KIND_MMAP)
			names[n++] = CStringGetTextDatum(psprintf("%s/%s%u", PG_DYNSHMEM_DIR, PG_DYNSHMEM_MMAP_FILE_PREFIX,
													  s->dsm_leftover_handle[k]));
		else if (s->dsm_kind == DSM_KIND_SYSV)
			names[n++] = CStringGetTextDatum(psprintf("System V shmid %llu",
													  (unsigned long long) s->dsm_leftover_id[k]));
	}
	nulls[i] = n == 0;
	values[i] = n == 0 ? (Datum) 0 : build_array(names, n, TEXTOID);
}

/* A stall figure in percent (hundredths kept), NULL where not read */
static void
put_stall(Datum *values, bool *nulls, int i, const history_system *s, int32 hundredths)
{
	nulls[i] = !s->psi_read || hundredths < 0;
	values[i] = nulls[i] ? (Datum) 0 : Float8GetDatum(hundredths / 100.0);
}

/* Why stall figures are NULL: each PSI_MISSING_* reason, "; " between; NULL when all were read */
static void
put_psi_unavailable(Datum *values, bool *nulls, int i, const history_system *s)
{
	StringInfoData why;

	if (!s->psi_read)
	{
		put_text(values, nulls, i, "not recorded: an older pg_procmem took this sample");
		return;
	}
	initStringInfo(&why);
	for (int bit = 1; bit <= PSI_MISSING_ALL; bit <<= 1)
		if ((s->psi_missing & bit) && psi_missing_reason(bit))
			appendStringInfo(&why, "%s%s", why.len ? "; " : "", psi_missing_reason(bit));
	put_text(values, nulls, i, why.len ? why.data : NULL);
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
	values[i] = Float8GetDatum(s->sample_wall_us / 1000.0);
	nulls[i++] = s->sample_wall_us <= 0;	/* files of older builds: 0 */
	/* the pressure watch: NULLs for none, and in files of older builds (0s) */
	put_text(values, nulls, i++, pressure_level_name((pressure_level) s->pressure));
	put_text(values, nulls, i++, pressure_source_name((pressure_source_kind) s->pressure_source));
	values[i] = Int64GetDatum(s->pressure_used);
	nulls[i++] = s->pressure_used < 0 || s->pressure_limit <= 0;	/* older files: 0, 0 */
	values[i] = Int64GetDatum(s->pressure_limit);
	nulls[i++] = s->pressure_limit <= 0;
	put_int4(values, nulls, i++, s->reused, s->reused < 0);
	/* the DSM segments: NULLs where not read (and in older files) */
	put_int4(values, nulls, i++, s->dsm_segments, !s->dsm_known);
	put_int8(values, nulls, i++, s->dsm_known ? s->dsm_mapped : -1);
	put_int4(values, nulls, i++, s->dsm_shared_segments, !s->dsm_known);
	put_int8(values, nulls, i++, s->dsm_known ? s->dsm_shared : -1);
	put_int4(values, nulls, i++, s->dsm_leftover_segments, !s->dsm_known);
	put_int8(values, nulls, i++, s->dsm_known ? s->dsm_leftover : -1);
	put_leftover_names(values, nulls, i++, s);
	/* memory pressure stall: the machine's, the server's cgroup's, and why one is NULL */
	put_stall(values, nulls, i++, s, s->psi_some_avg10);
	put_stall(values, nulls, i++, s, s->psi_full_avg10);
	put_stall(values, nulls, i++, s, s->cgroup_psi_some_avg10);
	put_stall(values, nulls, i++, s, s->cgroup_psi_full_avg10);
	put_psi_unavailable(values, nulls, i++, s);
	return i;
}

/*
 * The rows of one of the history's functions: one per entry of the kind,
 * oldest first: its sample's number and time, then what put() puts (ncols
 * columns in all). newest: of the newest sample alone, and only if this run
 * of the server took it whole: none for a sample cut to fit the ring or
 * overwritten while it was read.
 */
static Datum
history_rows(FunctionCallInfo fcinfo, const int *shapes, int nshapes, int ncols,
			 history_kind kind, int (*put) (Datum *, bool *, int, const history_entry *),
			 bool newest)
{
	ReturnSetInfo *rsinfo;
	history_cursor cursor;
	history_entry *chunk;
	uint32		n;
	int64		sample = 0;		/* the number of the sample being read */
	int64		expected = -1;	/* newest: the process entries its sample kept */
	int64		returned = 0;	/* ... and those put in the result set */
	MemoryContext rows_cxt, old_cxt;

	Assert(ncols <= ENTRY_MAX_NCOLS);
	if ((rsinfo = history_srf(fcinfo, shapes, nshapes)) == NULL)
		return (Datum) 0;
	chunk = palloc(sizeof(history_entry) * CHUNK);
	/* a chunk's texts, freed once its rows are in the result set */
	rows_cxt = AllocSetContextCreate(CurrentMemoryContext, "pg_procmem history rows",
									 ALLOCSET_DEFAULT_SIZES);
	old_cxt = MemoryContextSwitchTo(rows_cxt);
	if (newest)
		history_cursor_open_newest(&cursor);
	else
		history_cursor_open(&cursor);
	while ((n = history_cursor_read(&cursor, chunk, CHUNK, kind == HISTORY_SYSTEM)) > 0)
	{
		if (newest && expected < 0 && chunk[0].kind == HISTORY_SYSTEM)
		{
			const history_system *sys = &chunk[0].u.sys;

			/*
			 * None of a sample loaded from the file (another run's
			 * processes), or of one cut to fit the ring (some processes only)
			 */
			if (sys->run_started != history_run_started() || sys->kept < sys->processes)
				break;
			expected = sys->kept;
		}
		for (uint32 k = 0; k < n; k++)
		{
			Datum		values[ENTRY_MAX_NCOLS];
			bool		nulls[ENTRY_MAX_NCOLS];
			int			i = 0;

			if (chunk[k].kind == HISTORY_SYSTEM)
				sample = chunk[k].u.sys.sample;
			if (chunk[k].kind != kind)
				continue;
			memset(nulls, 0, sizeof(nulls));
			values[i++] = Int64GetDatum(sample);
			put_time(values, nulls, i++, chunk[k].sampled_at);
			i = put(values, nulls, i, &chunk[k]);
			Assert(i == ncols);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			returned++;
		}
		MemoryContextReset(rows_cxt);
		CHECK_FOR_INTERRUPTS();
	}
	/*
	 * The newest sample overwritten while it was being read (a ring little
	 * larger than one sample): its first rows alone would pass for every
	 * process. None instead.
	 */
	if (newest && returned != expected && expected >= 0)
		tuplestore_clear(rsinfo->setResult);
	MemoryContextSwitchTo(old_cxt);
	MemoryContextDelete(rows_cxt);
	pfree(chunk);
	return (Datum) 0;
}

/* pg_procmem_history_processes(missing_ok) - every process at every sample */
Datum
pg_procmem_history_processes(PG_FUNCTION_ARGS)
{
	return history_rows(fcinfo, history_processes_shapes, lengthof(history_processes_shapes),
						HISTORY_PROCESSES_NCOLS_V1_3, HISTORY_PROCESS, put_process, false);
}

/*
 * pg_procmem_history_latest(missing_ok) - every process at the newest
 * sample, if this run of the server took it and it holds them all (see
 * history_rows): what a scrape reads instead of /proc
 */
Datum
pg_procmem_history_latest(PG_FUNCTION_ARGS)
{
	return history_rows(fcinfo, history_processes_shapes, lengthof(history_processes_shapes),
						HISTORY_PROCESSES_NCOLS_V1_3, HISTORY_PROCESS, put_process, true);
}

/* pg_procmem_history_system(missing_ok) - the system entry of every sample */
Datum
pg_procmem_history_system(PG_FUNCTION_ARGS)
{
	return history_rows(fcinfo, history_system_shapes, lengthof(history_system_shapes),
						HISTORY_SYSTEM_NCOLS_V1_3, HISTORY_SYSTEM, put_system, false);
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

/* The arrays of the largest overheads at the last sample: pids, types, bytes */
static void
put_top(Datum *values, bool *nulls, int i, const history_crash *c)
{
	Datum		pids[HISTORY_TOP], types[HISTORY_TOP], bytes[HISTORY_TOP];
	int			n = 0;

	for (; n < HISTORY_TOP && c->top_pid[n] != 0; n++)
	{
		bool		null;

		pids[n] = Int32GetDatum(c->top_pid[n]);
		/* a fixed field, as put_field reads it: NUL or not, valid text only */
		put_field(&types[n], &null, 0, c->top_type[n], sizeof(c->top_type[n]));
		if (null)
			types[n] = CStringGetTextDatum("");
		bytes[n] = Int64GetDatum(c->top_overhead[n]);
	}
	values[i] = build_array(pids, n, INT4OID);
	values[i + 1] = build_array(types, n, TEXTOID);
	values[i + 2] = build_array(bytes, n, INT8OID);
}

/*
 * Who the killed process was and what it ran, from i on: backend_type,
 * usename, datname, application_name, backend_start, query_start, query,
 * query_from ('exit': as the postmaster read it when the process exited;
 * 'last sample'), query_cut, query_folded (NULL: unknown); the next column.
 */
static int
put_who(Datum *values, bool *nulls, int i, const history_crash *c)
{
	bool		logged = (c->flags & CRASH_QUERY_LOGGED) != 0;
	bool		no_query;

	FIELD(values, nulls, i++, c->backend_type);
	FIELD(values, nulls, i++, c->usename);
	FIELD(values, nulls, i++, c->datname);
	FIELD(values, nulls, i++, c->application_name);
	put_time(values, nulls, i++, c->backend_start);
	put_time(values, nulls, i++, c->query_start);
	if (procmem_keep_statement_text)
		FIELD(values, nulls, i, c->query);
	else
		nulls[i] = true;
	no_query = nulls[i++];
	put_text(values, nulls, i++, no_query ? NULL : logged ? "exit" : "last sample");
	values[i] = BoolGetDatum((c->flags & CRASH_QUERY_CUT) != 0);
	nulls[i++] = !logged || no_query;
	values[i] = BoolGetDatum((c->flags & CRASH_QUERY_FOLDED) != 0);
	nulls[i++] = !logged || no_query || !(c->flags & CRASH_FOLDED_KNOWN);
	return i;
}

/* What its statement's plans had that work_mem bounds ("sort, hash"); NULL: not said */
static const char *
plan_memory_text(int32 plan)
{
	static const char *const kinds[] = {"sort", "hash", "tuplestore"};
	static const int32 bits[] = {CRASH_PLAN_SORT, CRASH_PLAN_HASH, CRASH_PLAN_STORE};
	StringInfoData s;

	if (!(plan & CRASH_PLAN_KNOWN))
		return NULL;
	if (!(plan & CRASH_PLAN_MEMORY))
		return "none";
	initStringInfo(&s);
	for (int k = 0; k < lengthof(kinds); k++)
		if (plan & bits[k])
			appendStringInfo(&s, "%s%s", s.len > 0 ? ", " : "", kinds[k]);
	return s.data;
}

/* pg_procmem_crash_log(missing_ok) - the crash restarts the history saw */
Datum
pg_procmem_crash_log(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo;
	history_crash *c;
	uint32		nc;

	if ((rsinfo = history_srf(fcinfo, crash_log_shapes, lengthof(crash_log_shapes))) == NULL)
		return (Datum) 0;
	c = crashes_copy(&nc);
	for (uint32 k = 0; k < nc; k++)
	{
		Datum		values[CRASH_LOG_NCOLS_V1_3];
		bool		nulls[CRASH_LOG_NCOLS_V1_3];
		int			i = 0;
		bool		placed = c[k].oom == CRASH_OOM_COUNTED && c[k].killed_by != 0;

		memset(nulls, 0, sizeof(nulls));
		values[i++] = Int32GetDatum(c[k].number);
		/* crashed_at: the kill, where the OOM kill counter placed it; else the exit */
		put_time(values, nulls, i++, placed ? c[k].killed_by : c[k].crashed_at);
		values[i++] = CStringGetTextDatum(how_text(c[k].how));
		/* a guess is never given as the killed process */
		values[i] = Int32GetDatum(c[k].killed_pid);
		nulls[i++] = c[k].killed_pid <= 0 || c[k].how != HOW_POSTMASTER_LOG;
		values[i] = Int32GetDatum(c[k].killed_pid);
		nulls[i++] = c[k].killed_pid <= 0 || c[k].how != HOW_GUESS_OOM_SCORE;
		values[i] = Int32GetDatum(c[k].signal);
		nulls[i++] = c[k].signal <= 0;
		values[i] = Int32GetDatum(c[k].exit_code);
		nulls[i++] = c[k].exit_code < 0;
		FIELD(values, nulls, i++, c[k].logged);
		put_time(values, nulls, i++, c[k].restarted_at);
		values[i] = Int64GetDatum(c[k].oom_kills_after - c[k].oom_kills_before);
		nulls[i++] = c[k].oom_kills_before < 0 || c[k].oom_kills_after < c[k].oom_kills_before;
		put_int8(values, nulls, i++, c[k].cgroup_usage_before);
		put_int8(values, nulls, i++, c[k].cgroup_limit_after);
		put_time(values, nulls, i++, c[k].last_sample_at);
		/* seconds_since_sample: both times known (crashed_at is column 1) */
		values[i] = Float8GetDatum(((double) (placed ? c[k].killed_by : c[k].crashed_at) -
									(double) c[k].last_sample_at) / 1000000.0);
		nulls[i] = nulls[i - 1] || nulls[1];
		i++;
		if (c[k].killed.kind == HISTORY_PROCESS)
		{
			/* the killed process at its last sample */
			const history_process *p = &c[k].killed.u.proc;

			put_time(values, nulls, i++, c[k].killed.sampled_at);
			put_query_id(values, nulls, i++, p);
			put_int8(values, nulls, i++, p->overhead);
			put_int8(values, nulls, i++, p->context_bytes);
			put_int8(values, nulls, i++, p->page_tables);
			put_int4(values, nulls, i++, p->oom_score, p->oom_score == HISTORY_NO_SCORE);
		}
		else
			for (int j = 0; j < 6; j++)
				nulls[i++] = true;
		i = put_who(values, nulls, i, &c[k]);
		put_top(values, nulls, i, &c[k]);
		i += 3;
		i = put_settings(values, nulls, i, &c[k].settings);
		/* exited_at: when the postmaster logged the exit */
		put_time(values, nulls, i, c[k].crashed_at);
		nulls[i++] |= c[k].how != HOW_POSTMASTER_LOG;
		/* killed_after: the counter's last read before it rose */
		put_time(values, nulls, i, c[k].killed_after);
		nulls[i++] |= !placed;
		values[i] = BoolGetDatum(c[k].oom == CRASH_OOM_COUNTED);
		nulls[i++] = c[k].oom == CRASH_OOM_UNKNOWN;
		/* state, and its parallel query, at its last sample */
		if (c[k].killed.kind == HISTORY_PROCESS)
			FIELD(values, nulls, i, c[k].killed.u.proc.state);
		else
			nulls[i] = true;
		i++;
		values[i] = Int32GetDatum(c[k].killed_group_processes);
		nulls[i++] = c[k].killed_group_processes <= 1;
		values[i] = Int64GetDatum(c[k].killed_group_overhead);
		nulls[i++] = c[k].killed_group_processes <= 1;
		put_text(values, nulls, i++, plan_memory_text(c[k].plan));
		/* its parallel group's own DSM: -1 unknown (older rows load so) */
		put_int8(values, nulls, i++, c[k].killed_group_dsm);
		Assert(i == CRASH_LOG_NCOLS_V1_3);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(c);
	return (Datum) 0;
}

/*
 * pg_procmem_crash_groups(missing_ok) - who held the memory at each crash
 * row's last sample: its processes grouped by user, application and
 * backend type, the largest groups first.
 */
Datum
pg_procmem_crash_groups(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo;
	history_crash *c;
	uint32		nc;

	if ((rsinfo = history_srf(fcinfo, crash_holders_shapes, lengthof(crash_holders_shapes))) == NULL)
		return (Datum) 0;
	c = crashes_copy(&nc);
	for (uint32 k = 0; k < nc; k++)
		for (int r = 0; r < HISTORY_GROUPS && c[k].groups[r].processes > 0; r++)
		{
			const history_group *g = &c[k].groups[r];
			Datum		values[CRASH_HOLDERS_NCOLS_V1_3];
			bool		nulls[CRASH_HOLDERS_NCOLS_V1_3];
			int			i = 0;

			memset(nulls, 0, sizeof(nulls));
			values[i++] = Int32GetDatum(c[k].number);
			values[i++] = Int32GetDatum(r + 1);
			FIELD(values, nulls, i++, g->usename);
			FIELD(values, nulls, i++, g->application_name);
			FIELD(values, nulls, i++, g->backend_type);
			values[i++] = Int32GetDatum(g->processes);
			put_int8(values, nulls, i++, g->total);
			put_int8(values, nulls, i++, g->largest);
			values[i++] = Int32GetDatum(g->largest_pid);
			i = put_settings(values, nulls, i, &g->settings);
			values[i++] = Int32GetDatum(c[k].group_workers[r]);
			FIELD(values, nulls, i++, c[k].group_state[r]);
			if (procmem_keep_statement_text)
				FIELD(values, nulls, i, c[k].group_query[r]);
			else
				nulls[i] = true;
			i++;
			put_int8(values, nulls, i++, c[k].group_dsm[r]);
			Assert(i == CRASH_HOLDERS_NCOLS_V1_3);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	pfree(c);
	return (Datum) 0;
}

/*
 * pg_procmem_oom_kills_baseline() - the server's memory cgroup's OOM kill
 * counter when the server started or last restarted after a crash (a crash
 * row counts the kills before it), and when; NULLs when unknown (not
 * preloaded, no cgroup counter, no sampler yet).
 */
Datum
pg_procmem_oom_kills_baseline(PG_FUNCTION_ARGS)
{
	Datum		values[OOM_KILLS_NCOLS_V1_2];
	bool		nulls[OOM_KILLS_NCOLS_V1_2] = {true, true};
	int64		kills;
	TimestampTz since;

	if (history_ring_exists() && crashes_kills_baseline(&kills, &since))
	{
		values[0] = Int64GetDatum(kills);
		values[1] = TimestampTzGetDatum(since);
		nulls[0] = nulls[1] = false;
	}
	PG_RETURN_DATUM(one_row(fcinfo, oom_kills_shapes, lengthof(oom_kills_shapes), values, nulls));
}
