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
 * The library exports PostgreSQL's entry points alone: the magic block,
 * _PG_init, the SQL-callable functions with their pg_finfo_ records, and
 * the background workers' main functions (test/build/exports.sh checks).
 * Every other symbol is hidden (-fvisibility=hidden: PGXS from 16, the
 * Makefile before). Before 16, PGDLLEXPORT is empty on Linux, and neither
 * PG_FUNCTION_INFO_V1 nor fmgr.h marks the function or _PG_init: marked
 * here as 16 marks them.
 */
#if PG_VERSION_NUM < 160000
#undef PGDLLEXPORT
#define PGDLLEXPORT __attribute__((visibility("default")))

#undef PG_FUNCTION_INFO_V1
#define PG_FUNCTION_INFO_V1(funcname) \
extern PGDLLEXPORT Datum funcname(PG_FUNCTION_ARGS); \
extern PGDLLEXPORT const Pg_finfo_record * CppConcat(pg_finfo_,funcname)(void); \
const Pg_finfo_record * \
CppConcat(pg_finfo_,funcname) (void) \
{ \
	static const Pg_finfo_record my_finfo = { 1 }; \
	return &my_finfo; \
} \
extern int no_such_variable

extern PGDLLEXPORT void _PG_init(void);
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

/*
 * strlcpy(): a server built against glibc 2.38 or later takes it from the C
 * library (HAVE_DECL_STRLCPY), so port.h no longer declares it, and an
 * older glibc's headers do not either (19 from Debian's sid, built here
 * against Debian 12's). That server's C library has it.
 */
#if defined(__GLIBC__)			/* __GLIBC_PREREQ is glibc's alone */
#if HAVE_DECL_STRLCPY && !__GLIBC_PREREQ(2, 38)
extern size_t strlcpy(char *dst, const char *src, size_t siz);
#endif
#endif

/*
 * A signal ignored or set back to its default by pqsignal(): 19's handlers
 * take a second argument, so SIG_IGN and SIG_DFL need its casts.
 */
#ifndef PG_SIG_IGN
#define PG_SIG_IGN SIG_IGN
#define PG_SIG_DFL SIG_DFL
#endif

/*
 * Logical replication's apply and tablesync workers have one backend type
 * (bgw_type), "logical replication worker", before 17 (16's parallel apply
 * workers have their own); their titles tell them apart. A worker typed
 * from its title is named as pg_stat_activity names it.
 */
#if PG_VERSION_NUM < 170000
#define PROCMEM_TITLE_FLAGS TITLES_ONE_LR_WORKER
#else
#define PROCMEM_TITLE_FLAGS 0
#endif

/* GUC prefix reservation: MarkGUCPrefixReserved (15+), older name before */
#if PG_VERSION_NUM < 150000
#define MarkGUCPrefixReserved(prefix) EmitWarningsOnPlaceholders(prefix)
#endif

/* This process's index in ProcGlobal->allProcs */
#if PG_VERSION_NUM >= 170000
#define procmem_my_procno() (MyProcNumber)
#else
#define procmem_my_procno() (MyProc->pgprocno)
#endif

/* The i-th (from 1) entry of this backend's snapshot of backend statuses */
#if PG_VERSION_NUM >= 160000
#define procmem_local_beentry(i) pgstat_get_local_beentry_by_index(i)
#else
#define procmem_local_beentry(i) pgstat_fetch_stat_local_beentry(i)
#endif

/* EnableQueryId(): in nodes/ from 16, in utils/ before */
#if PG_VERSION_NUM >= 160000
#define PROCMEM_QUERYJUMBLE_H "nodes/queryjumble.h"
#else
#define PROCMEM_QUERYJUMBLE_H "utils/queryjumble.h"
#endif

/*
 * planner_hook's parameters and the arguments passing them on: 19 adds the
 * EXPLAIN's state (NULL outside EXPLAIN). post_parse_analyze_hook's
 * JumbleState is const from 19.
 */
#if PG_VERSION_NUM >= 190000
#define PROCMEM_PLANNER_PARAMS \
	Query *parse, const char *query_string, int cursorOptions, ParamListInfo boundParams, ExplainState *es
#define PROCMEM_PLANNER_ARGS parse, query_string, cursorOptions, boundParams, es
#define PROCMEM_JUMBLE_CONST const
#else
#define PROCMEM_PLANNER_PARAMS \
	Query *parse, const char *query_string, int cursorOptions, ParamListInfo boundParams
#define PROCMEM_PLANNER_ARGS parse, query_string, cursorOptions, boundParams
#define PROCMEM_JUMBLE_CONST
#endif

/* The module magic block: with the extension's name and version on 18+ */
#ifdef PG_MODULE_MAGIC_EXT
#define PROCMEM_MODULE_MAGIC \
	PG_MODULE_MAGIC_EXT(.name = "pg_procmem", .version = PROCMEM_VERSION)
#else
#define PROCMEM_MODULE_MAGIC PG_MODULE_MAGIC
#endif

/*
 * MaxBackends, in _PG_init too: 14 computes it only after the preloaded
 * libraries are loaded, from the settings summed here (as contrib modules
 * did before 15); 15 and later know it by shmem_request_hook.
 */
#if PG_VERSION_NUM >= 150000
#define procmem_max_backends() (MaxBackends)
#else
#include "postmaster/autovacuum.h"
#include "replication/walsender.h"

static inline int
procmem_max_backends(void)
{
	return MaxConnections + autovacuum_max_workers + 1 + max_worker_processes +
		max_wal_senders;
}
#endif

/*
 * Asks for shared memory (and LWLocks) from _PG_init: request() calls
 * RequestAddinShmemSpace and the like. On 15+ it runs from
 * shmem_request_hook, the only place they are allowed, and must first call
 * *prev (the hook it replaced); 14 has no such hook: it runs at once, with
 * *prev NULL.
 */
#if PG_VERSION_NUM < 150000
typedef void (*shmem_request_hook_type) (void);
#endif

static inline void
procmem_request_shmem(shmem_request_hook_type request, shmem_request_hook_type *prev)
{
#if PG_VERSION_NUM >= 150000
	*prev = shmem_request_hook;
	shmem_request_hook = request;
#else
	*prev = NULL;
	request();
#endif
}

/*
 * A built-in setting's record, by name (its source and value), or NULL:
 * find_option() is exported from 16; before, a walk of get_guc_variables().
 */
#include "utils/guc_tables.h"

static inline struct config_generic *
procmem_find_setting(const char *name)
{
#if PG_VERSION_NUM >= 160000
	return find_option(name, false, true, DEBUG1);
#else
	struct config_generic **vars = get_guc_variables();
	int			n = GetNumConfigOptions();

	for (int i = 0; i < n; i++)
		if (vars[i] && strcmp(vars[i]->name, name) == 0)
			return vars[i];
	return NULL;
#endif
}

/*
 * Soft input errors (pg_input_is_valid(), an escontext in fcinfo->context)
 * exist from 16; before, ereturn() is a plain ERROR.
 */
#if PG_VERSION_NUM < 160000
#define ereturn(context, dummy_value, ...) \
	do { ereport(ERROR, __VA_ARGS__); return (dummy_value); } while (0)
#endif

#endif							/* PROCMEM_COMPAT_H */
