/*
 * processes.c
 *		The SQL-callable functions for the memory of this server's processes:
 *		pg_procmem_processes(), pg_procmem_process(), pg_procmem_page_tables().
 *
 * Thin glue: walk.c visits the processes (members.c decides which pids are
 * ours, reading.c reads /proc), and the SQL views join the rows with
 * pg_stat_activity.
 */
#include "server/compat.h"

#include "catalog/pg_type.h"
#include "storage/proc.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "linux/reading.h"
#include "linux/sysmem.h"
#include "rules/dsm_groups.h"
#include "server/dsm_segments.h"
#include "server/members.h"
#include "server/rows.h"
#include "server/walk.h"

PG_FUNCTION_INFO_V1(pg_procmem_processes);
PG_FUNCTION_INFO_V1(pg_procmem_process);
PG_FUNCTION_INFO_V1(pg_procmem_page_tables);

/*
 * Columns of pg_procmem_processes() and pg_procmem_process(), in every
 * released shape (new columns are only ever appended).
 */
#define PROCESSES_NCOLS_V1_0 23	/* 1.0.0 and 1.1.0 */
#define PROCESSES_NCOLS_V1_2 30	/* + kernel and the parts of private_anon */
#define PROCESSES_NCOLS_V1_3 33	/* + dsm, dsm_segments, group_dsm */
#define PROCESSES_NCOLS PROCESSES_NCOLS_V1_3
static const int processes_shapes[] = {PROCESSES_NCOLS_V1_0, PROCESSES_NCOLS_V1_2,
PROCESSES_NCOLS_V1_3};

/* Columns of pg_procmem_page_tables() (1.2.0) */
#define PAGE_TABLES_NCOLS_V1_2 5
static const int page_tables_shapes[] = {PAGE_TABLES_NCOLS_V1_2};

/* The names of the files that could not be read (a text[]), or NULL. */
static void
put_unreadable(Datum *values, bool *nulls, int i, unsigned mask)
{
	Datum		names[PROCMEM_NFILES];
	int			n = 0;

	nulls[i] = mask == 0;
	if (nulls[i])
		return;
	for (int f = 0; f < PROCMEM_NFILES; f++)
		if (mask & (1u << f))
			names[n++] = CStringGetTextDatum(procmem_file_name(f));
	values[i] = PointerGetDatum(construct_array(names, n, TEXTOID, -1, false, TYPALIGN_INT));
}

/* The columns of pg_procmem_processes() between pid and unreadable */
static int
put_process(Datum *values, bool *nulls, int i, pid_t pid, procmem_membership kind,
			const procmem_reading *s)
{
	const procfs_status *st = &s->status;
	const procfs_smaps *sm = &s->smaps;
	char		title[128];
	const char *method;

	if (pid == PostmasterPid)
		values[i++] = CStringGetTextDatum("postmaster");
	else if (kind != MEMBER_CHILD)
		nulls[i++] = true;		/* pg_stat_activity has its type */
	else
	{
		procmem_title_type(s->cmdline, s->cmdline_len, title, sizeof(title));
		values[i++] = CStringGetTextDatum(title);
	}
	put_int8(values, nulls, i++, s->overhead);
	method = procmem_method_name(s->overhead_method);
	values[i] = method ? CStringGetTextDatum(method) : (Datum) 0;
	nulls[i++] = method == NULL;
	put_int8(values, nulls, i++, s->anon.exclusive);
	put_int8(values, nulls, i++, s->anon.shared);
	put_int8(values, nulls, i++, st->vm_pte);
	put_int8(values, nulls, i++, st->vm_rss);
	put_int8(values, nulls, i++, st->rss_anon);
	put_int8(values, nulls, i++, st->rss_file);
	put_int8(values, nulls, i++, st->rss_shmem);
	put_int8(values, nulls, i++, sm->pss);
	put_int8(values, nulls, i++, sm->pss_anon);
	put_int8(values, nulls, i++, sm->pss_file);
	put_int8(values, nulls, i++, sm->pss_shmem);
	put_int8(values, nulls, i++, procfs_sum(sm->private_clean, sm->private_dirty));
	put_int8(values, nulls, i++, st->vm_swap);
	put_int8(values, nulls, i++, sm->swap_pss);
	put_int8(values, nulls, i++, st->hugetlb);
	put_int8(values, nulls, i++, st->vm_hwm);
	put_int4(values, nulls, i++, s->oom_score,
			 (s->unreadable & (1u << PROCMEM_FILE_OOM_SCORE)) != 0);
	put_int4(values, nulls, i++, s->oom_score_adj,
			 (s->unreadable & (1u << PROCMEM_FILE_OOM_SCORE_ADJ)) != 0);
	return i;
}

/* The columns of pg_procmem_processes() after unreadable (1.2.0) */
static int
put_process_parts(Datum *values, bool *nulls, int i, const procmem_reading *s)
{
	put_int8(values, nulls, i++, s->kernel);
	for (int p = 0; p < PAGEMAP_NPARTS; p++)
		put_int8(values, nulls, i++, s->anon.exclusive >= 0 ? s->anon.part[p] : -1);
	return i;
}

/* The columns of pg_procmem_page_tables() between pid and unreadable */
static int
put_tables(Datum *values, bool *nulls, int i, pid_t pid, procmem_membership kind,
		   const procmem_reading *s)
{
	put_int8(values, nulls, i++, s->status.vm_pte);
	put_int8(values, nulls, i++, s->tables.bytes);
	values[i] = BoolGetDatum(s->tables.used_scan != 0);
	nulls[i++] = s->tables.bytes < 0;
	return i;
}

/* A row waiting for its group's DSM figure: every process must be read first */
typedef struct held_row
{
	Datum		values[PROCESSES_NCOLS];
	bool		nulls[PROCESSES_NCOLS];
	dsm_mapped	mapped;
	int32		group;
} held_row;

/* A function with a row per process, as emit_row() builds them */
typedef struct process_rows
{
	ReturnSetInfo *rsinfo;
	int			ncols;			/* in its newest shape */
	bool		want_title;		/* a child without a PGPROC is typed by its title */
	int			(*put) (Datum *values, bool *nulls, int i, pid_t pid,
						procmem_membership kind, const procmem_reading *s);
	/* the columns appended after unreadable, if any */
	int			(*put_tail) (Datum *values, bool *nulls, int i, const procmem_reading *s);
	/* the DSM columns: the segments there are; NULL for a shape without them */
	dsm_table  *dsm;
	bool		dsm_known;		/* ... could be read: else every DSM figure NULL */
	bool		hold;			/* rows wait for every process (group_dsm) */
	held_row   *held;
	int			nheld;
	int			capheld;
	procmem_leader *leaders;
	int			nleaders;
} process_rows;

/* A process's DSM figures: dsm, dsm_segments, and (-1 here) group_dsm */
static int
put_dsm(Datum *values, bool *nulls, int i, const dsm_table *t, const dsm_mapped *m)
{
	int			n;
	int64		bytes = dsm_mapped_bytes(t, m, &n);

	put_int8(values, nulls, i++, bytes);
	put_int4(values, nulls, i++, n, m->n < 0);
	put_int8(values, nulls, i++, -1);
	return i;
}

/* Appends the held rows, each with its group's own DSM */
static void
release_rows(process_rows *rows)
{
	dsm_member *m = palloc(sizeof(dsm_member) * Max(rows->nheld, 1));
	int64	   *mapped = palloc(sizeof(int64) * Max(rows->nheld, 1));
	int64	   *own = palloc(sizeof(int64) * Max(rows->nheld, 1));
	dsm_totals	totals;
	bool		summed;

	for (int i = 0; i < rows->nheld; i++)
	{
		m[i].group = rows->held[i].group;
		m[i].mapped = &rows->held[i].mapped;
	}
	summed = dsm_groups_sum(rows->dsm, m, rows->nheld, (int64_t *) mapped, (int64_t *) own,
							&totals, NULL) == 0;
	for (int i = 0; i < rows->nheld; i++)
	{
		held_row   *h = &rows->held[i];

		put_int8(h->values, h->nulls, PROCESSES_NCOLS - 1, summed ? own[i] : -1);
		tuplestore_putvalues(rows->rsinfo->setResult, rows->rsinfo->setDesc, h->values, h->nulls);
	}
}

/*
 * A procmem_visit_fn: reads one member (kind and id from procmem_member())
 * and appends its row: the pid, what put() puts, the files that could not
 * be read. Returns false, adding nothing, when it is gone or changed
 * meanwhile. A member /proc hides is a row all the same: who it is comes
 * from PostgreSQL, its memory is NULL, and unreadable names the files.
 */
static bool
emit_row(void *dest, pid_t pid, procmem_membership kind,
		 const procfs_stat *id, const procmem_options *opt)
{
	process_rows *rows = dest;
	Datum		values[PROCESSES_NCOLS];
	bool		nulls[PROCESSES_NCOLS];
	procmem_options o = *opt;
	procmem_reading s;
	int			i = 0;

	Assert(rows->ncols <= PROCESSES_NCOLS);
	o.want_cmdline = rows->want_title && kind == MEMBER_CHILD;
	o.dsm = rows->dsm_known ? rows->dsm : NULL;
	if (!procmem_read_member(pid, kind, id, &o, &s))
		return false;

	memset(nulls, 0, sizeof(nulls));
	values[i++] = Int32GetDatum((int32) pid);
	i = rows->put(values, nulls, i, pid, kind, &s);
	put_unreadable(values, nulls, i++, s.unreadable);
	if (rows->put_tail)
		i = rows->put_tail(values, nulls, i, &s);
	if (rows->dsm)
		i = put_dsm(values, nulls, i, rows->dsm, &s.dsm);
	Assert(i == rows->ncols);
	if (rows->hold)
	{
		held_row   *h;

		if (rows->nheld == rows->capheld)
		{
			rows->capheld = rows->capheld ? 2 * rows->capheld : 64;
			rows->held = rows->held ? repalloc_huge(rows->held, sizeof(held_row) * rows->capheld) :
				palloc(sizeof(held_row) * rows->capheld);
		}
		h = &rows->held[rows->nheld++];
		memcpy(h->values, values, sizeof(values));
		memcpy(h->nulls, nulls, sizeof(nulls));
		h->mapped = s.dsm;
		h->group = procmem_group_of(rows->leaders, rows->nleaders, pid);
		return true;
	}
	/* an older definition has fewer columns: the tuple takes the first */
	tuplestore_putvalues(rows->rsinfo->setResult, rows->rsinfo->setDesc, values, nulls);
	return true;
}

/*
 * The rows of pg_procmem_processes() and pg_procmem_process(); hold: the
 * rows wait for every process to be read, for their groups' DSM.
 */
static process_rows
processes_start(FunctionCallInfo fcinfo, bool hold)
{
	process_rows rows;

	memset(&rows, 0, sizeof(rows));
	rows.ncols = PROCESSES_NCOLS;
	rows.want_title = true;
	rows.put = put_process;
	rows.put_tail = put_process_parts;
	rows.rsinfo = start_result_set(fcinfo, processes_shapes, lengthof(processes_shapes));
	/* an older definition has no DSM columns: nothing to look for */
	if (rows.rsinfo->setDesc->natts >= PROCESSES_NCOLS_V1_3)
	{
		rows.dsm = palloc(sizeof(dsm_table));
		rows.dsm_known = procmem_dsm_table_read(rows.dsm);
		rows.hold = hold;
		if (hold)
			rows.leaders = procmem_leaders(&rows.nleaders);
	}
	else
		rows.ncols = PROCESSES_NCOLS_V1_2;
	return rows;
}

/*
 * pg_procmem_processes(with_pss) - every live process of this server (see
 * procmem_walk()). with_pss also reads smaps_rollup, which walks shared
 * memory's page tables.
 */
Datum
pg_procmem_processes(PG_FUNCTION_ARGS)
{
	procmem_options opt = procmem_current_options(PG_GETARG_BOOL(0));
	process_rows rows = processes_start(fcinfo, true);

	procmem_walk(emit_row, &rows, &opt);
	if (rows.hold)
		release_rows(&rows);
	return (Datum) 0;
}

/*
 * pg_procmem_process(pid, with_pss) - the same for one process. A pid that
 * is not a live process of this server is an ERROR; one that exits while
 * being read gives no row.
 */
Datum
pg_procmem_process(PG_FUNCTION_ARGS)
{
	int32		pid = PG_GETARG_INT32(0);
	procmem_options opt = procmem_current_options(PG_GETARG_BOOL(1));
	/* its group's DSM would need every process read: NULL */
	process_rows rows = processes_start(fcinfo, false);
	procmem_members m;
	procmem_membership kind;
	procfs_stat id;

	(void) procmem_check_proc_visible(ERROR);
	procmem_members_begin(&m);
	procmem_options_for_server(&opt, &m);

	kind = procmem_member(&m, pid, &id);
	if (kind == MEMBER_NO || kind == MEMBER_GONE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("PID %d is not a process of this PostgreSQL server", pid)));

	emit_row(&rows, pid, kind, &id, &opt);
	procmem_members_end(&m);
	return (Datum) 0;
}

/*
 * pg_procmem_page_tables() - every live process of this server: its page
 * tables now (VmPTE) and as they would be with the main shared memory
 * segment in huge pages (pagetables.h), and whether that figure is exact.
 */
Datum
pg_procmem_page_tables(PG_FUNCTION_ARGS)
{
	procmem_options opt = procmem_current_options(false);
	process_rows rows;
	int			hugetlb;

	memset(&rows, 0, sizeof(rows));
	rows.ncols = PAGE_TABLES_NCOLS_V1_2;
	rows.put = put_tables;
	rows.rsinfo = start_result_set(fcinfo, page_tables_shapes, lengthof(page_tables_shapes));
	/* no overhead walk: only the tables are wanted */
	opt.method = PROCMEM_METHOD_RSS_ANON;
	opt.want_tables = true;
	/* ProcGlobal lives in the main segment, at the same address in every child */
	if (sysmem_self_mapping(ProcGlobal, &opt.seg_start, &opt.seg_end, &hugetlb) != 0)
		opt.want_tables = false;	/* no segment to leave out: the figure is NULL */
	procmem_walk(emit_row, &rows, &opt);
	return (Datum) 0;
}
