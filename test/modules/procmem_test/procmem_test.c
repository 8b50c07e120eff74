/*
 * procmem_test.c
 *		Test-only module (never installed by `make install` of pg_procmem):
 *		makes the calling backend non-dumpable, so that another process of
 *		the same user can no longer read its /proc/PID/{smaps_rollup, maps,
 *		pagemap, exe}, as happens with a hardened server; and makes it
 *		linger after it has left its PGPROC and pg_stat_activity on exit,
 *		as every exiting backend does for a moment.
 */
#include "postgres.h"

#include <sys/prctl.h>

#include "fmgr.h"
#include "storage/ipc.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(procmem_test_set_dumpable);
PG_FUNCTION_INFO_V1(procmem_test_linger_on_exit);

Datum
procmem_test_set_dumpable(PG_FUNCTION_ARGS)
{
	if (prctl(PR_SET_DUMPABLE, PG_GETARG_BOOL(0) ? 1 : 0, 0, 0, 0) != 0)
		ereport(ERROR, (errmsg("prctl(PR_SET_DUMPABLE) failed: %m")));
	PG_RETURN_VOID();
}

/* on_proc_exit callbacks run after ProcKill has given the PGPROC back */
static void
linger(int code, Datum arg)
{
	pg_usleep((long) DatumGetInt32(arg) * 1000L);
}

Datum
procmem_test_linger_on_exit(PG_FUNCTION_ARGS)
{
	on_proc_exit(linger, Int32GetDatum(PG_GETARG_INT32(0)));
	PG_RETURN_VOID();
}
