/*
 * pg_procmem.c
 *		SQL-callable functions: the memory of this server's processes.
 *
 * Thin glue: members.c decides which pids are ours, sample.c reads /proc,
 * and the SQL views join the rows with pg_stat_activity.
 */
#include "compat.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "members.h"
#include "sample.h"

#ifdef PG_MODULE_MAGIC_EXT
PG_MODULE_MAGIC_EXT(.name = "pg_procmem", .version = PROCMEM_VERSION);
#else
PG_MODULE_MAGIC;
#endif

PG_FUNCTION_INFO_V1(pg_procmem_processes);
PG_FUNCTION_INFO_V1(pg_procmem_process);

/* Columns of pg_procmem_processes() and pg_procmem_process() */
#define PROCMEM_NCOLS 20

static void
check_platform(void)
{
#ifndef __linux__
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("pg_procmem is not supported on this platform"),
			 errdetail("pg_procmem reads the Linux /proc file system.")));
#endif
}

/* A byte figure, or NULL when the kernel gave none. */
static void
put_int8(Datum *values, bool *nulls, int i, int64 v)
{
	values[i] = Int64GetDatum(v);
	nulls[i] = v < 0;
}

static void
put_int4(Datum *values, bool *nulls, int i, int64 v)
{
	nulls[i] = v < PG_INT32_MIN || v > PG_INT32_MAX || v == PROCFS_MISSING;
	values[i] = Int32GetDatum(nulls[i] ? 0 : (int32) v);
}

/* The names of the files that could not be read, or NULL. */
static Datum
unreadable_array(unsigned mask)
{
	Datum		names[PM_NFILES];
	int			n = 0;

	for (int f = 0; f < PM_NFILES; f++)
		if (mask & (1u << f))
			names[n++] = CStringGetTextDatum(procmem_file_name(f));
	return PointerGetDatum(construct_array(names, n, TEXTOID, -1, false, TYPALIGN_INT));
}

/*
 * Reads one candidate and appends its row. Returns false, adding nothing,
 * when the process is gone or is not ours.
 */
static bool
emit_process(ReturnSetInfo *rsinfo, pid_t pid)
{
	Datum		values[PROCMEM_NCOLS];
	bool		nulls[PROCMEM_NCOLS];
	procmem_sample s;
	const procfs_status *st = &s.status;
	const procfs_smaps *sm = &s.smaps;
	bool		postmaster = (pid == PostmasterPid);
	char		title[128];
	int			i = 0;

	if (procmem_sample_read(pid, postmaster ? -1 : PostmasterPid, &s) != SAMPLE_OK)
		return false;

	memset(nulls, 0, sizeof(nulls));
	values[i++] = Int32GetDatum((int32) pid);
	if (postmaster)
		values[i++] = CStringGetTextDatum("postmaster");
	else if (procmem_has_pgproc(pid))
		nulls[i++] = true;		/* pg_stat_activity has its type */
	else
	{
		procmem_title_type(pid, title, sizeof(title));
		values[i++] = CStringGetTextDatum(title);
	}
	put_int8(values, nulls, i++, s.overhead);
	put_int8(values, nulls, i++, st->vm_rss);
	put_int8(values, nulls, i++, st->rss_anon);
	put_int8(values, nulls, i++, st->rss_file);
	put_int8(values, nulls, i++, st->rss_shmem);
	put_int8(values, nulls, i++, sm->pss);
	put_int8(values, nulls, i++, sm->pss_anon);
	put_int8(values, nulls, i++, sm->pss_file);
	put_int8(values, nulls, i++, sm->pss_shmem);
	put_int8(values, nulls, i++,
			 (sm->private_clean < 0 || sm->private_dirty < 0) ? -1 :
			 sm->private_clean + sm->private_dirty);
	put_int8(values, nulls, i++, st->vm_swap);
	put_int8(values, nulls, i++, sm->swap_pss);
	put_int8(values, nulls, i++, st->vm_pte);
	put_int8(values, nulls, i++, st->hugetlb);
	put_int8(values, nulls, i++, st->vm_hwm);
	put_int4(values, nulls, i++, s.oom_score);
	put_int4(values, nulls, i++, s.oom_score_adj);
	if (s.unreadable)
		values[i++] = unreadable_array(s.unreadable);
	else
		nulls[i++] = true;
	Assert(i == PROCMEM_NCOLS);

	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return true;
}

/*
 * pg_procmem_processes() - every live process of this server: the
 * postmaster, every process with a PGPROC, and the postmaster's other
 * children. A process that exits while being read is left out.
 */
Datum
pg_procmem_processes(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo;
	pid_t	   *pids;
	int			n;
	int			skipped = 0;

	check_platform();
	procmem_init_srf(fcinfo);
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	procmem_check_proc_visible();

	pids = procmem_candidates(&n);
	for (int i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		if (!emit_process(rsinfo, pids[i]))
			skipped++;
	}
	elog(DEBUG1, "pg_procmem: %d candidate pids, %d not live or not ours",
		 n, skipped);
	pfree(pids);
	return (Datum) 0;
}

/*
 * pg_procmem_process(pid) - the same for one process. A pid that is not a
 * live process of this server is an ERROR; one that exits while being read
 * gives no row.
 */
Datum
pg_procmem_process(PG_FUNCTION_ARGS)
{
	int32		pid = PG_GETARG_INT32(0);
	ReturnSetInfo *rsinfo;

	check_platform();
	procmem_init_srf(fcinfo);
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	procmem_check_proc_visible();

	if (!procmem_is_member(pid))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("PID %d is not a process of this PostgreSQL server", pid)));

	emit_process(rsinfo, pid);
	return (Datum) 0;
}
