/*
 * procmem_test.c
 *		Test-only module (never installed by `make install` of pg_procmem):
 *		makes the calling backend non-dumpable, so that another process of
 *		the same user can no longer read its /proc/PID/{smaps_rollup, maps,
 *		pagemap, exe}, as happens with a hardened server.
 */
#include "postgres.h"

#include <sys/prctl.h>

#include "fmgr.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(procmem_test_set_dumpable);

Datum
procmem_test_set_dumpable(PG_FUNCTION_ARGS)
{
	if (prctl(PR_SET_DUMPABLE, PG_GETARG_BOOL(0) ? 1 : 0, 0, 0, 0) != 0)
		ereport(ERROR, (errmsg("prctl(PR_SET_DUMPABLE) failed: %m")));
	PG_RETURN_VOID();
}
