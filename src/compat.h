/*
 * compat.h
 *		Every PostgreSQL-version difference pg_procmem depends on, in one place.
 *
 * Function bodies elsewhere carry no version guards: they call the names
 * defined here.
 */
#ifndef PROCMEM_COMPAT_H
#define PROCMEM_COMPAT_H

#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/tuplestore.h"

#if PG_VERSION_NUM < 140000
#error "pg_procmem requires PostgreSQL 14 or later"
#endif

/*
 * Materialized set-returning functions: InitMaterializedSRF (15.1+), named
 * SetSingleFuncCall in 15.0, written out by hand before 15.
 */
static inline void
procmem_init_srf(FunctionCallInfo fcinfo)
{
#if PG_VERSION_NUM >= 150001
	InitMaterializedSRF(fcinfo, 0);
#elif PG_VERSION_NUM >= 150000
	SetSingleFuncCall(fcinfo, 0);
#else
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TupleDesc	tupdesc;
	MemoryContext oldcontext;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set")));
	if (!(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("materialize mode required, but it is not allowed in this context")));
	oldcontext = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = tuplestore_begin_heap(true, false, work_mem);
	rsinfo->setDesc = CreateTupleDescCopy(tupdesc);
	MemoryContextSwitchTo(oldcontext);
#endif
}

/* GUC prefix reservation: MarkGUCPrefixReserved (15+), older name before */
#if PG_VERSION_NUM < 150000
#define MarkGUCPrefixReserved(prefix) EmitWarningsOnPlaceholders(prefix)
#endif

#endif							/* PROCMEM_COMPAT_H */
