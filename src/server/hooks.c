/*
 * hooks.c
 *		post_parse_analyze_hook, planner_hook, ExecutorStart, ExecutorEnd,
 *		ProcessUtility and emit_log_hook, each installed once
 *		(shared_preload_libraries mode), calling what the parts registered:
 *		contexts.c, crashes.c and guard_backend.c.
 *
 * Each hook saves the one it replaces and calls it (or PostgreSQL's own
 * function) once, as pg_stat_statements does. The parts nest around that
 * call as hooks installed one after another would: the last registered
 * acts first before it and last after it, so the order of _PG_init is the
 * order of a chain of hooks. Nothing catches an ERROR: one thrown by the
 * call or by a callback skips what was to follow, as in a chain.
 *
 * emit_log_hook runs in the postmaster too, which on 14 and 15 logs a
 * child's exit from its SIGCHLD handler. So the parts are a fixed array,
 * filled in _PG_init before any child exists; the hook only walks it (no
 * allocation, no I/O, no ereport), and a callback that acts in the
 * postmaster keeps to that too (crashes.c).
 */
#include "server/compat.h"

#include "executor/executor.h"
#include "optimizer/planner.h"
#include "parser/analyze.h"
#include "tcop/utility.h"

#include "server/hooks.h"

/* contexts.c, crashes.c, guard_backend.c */
#define MAX_PARTS 3

static const procmem_hooks_part *parts[MAX_PARTS];
static int	nparts = 0;

static post_parse_analyze_hook_type prev_post_parse_analyze = NULL;
static planner_hook_type prev_planner = NULL;
static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;
static emit_log_hook_type prev_emit_log_hook = NULL;

/* After a parse analysis, before a planning: the last registered first */
static void
statement_planning(void)
{
	for (int i = nparts - 1; i >= 0; i--)
		if (parts[i]->statement_planning)
			parts[i]->statement_planning();
}

static void
procmem_post_parse_analyze(ParseState *pstate, Query *query, PROCMEM_JUMBLE_CONST JumbleState *jstate)
{
	statement_planning();
	if (prev_post_parse_analyze)
		prev_post_parse_analyze(pstate, query, jstate);
}

static PlannedStmt *
procmem_planner(PROCMEM_PLANNER_PARAMS)
{
	statement_planning();
	if (prev_planner)
		return prev_planner(PROCMEM_PLANNER_ARGS);
	return standard_planner(PROCMEM_PLANNER_ARGS);
}

/* Before an executor start or a utility command: the last registered first */
static void
statement_start(const PlannedStmt *plan)
{
	for (int i = nparts - 1; i >= 0; i--)
		if (parts[i]->statement_start)
			parts[i]->statement_start(plan);
}

static void
procmem_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	statement_start(queryDesc->plannedstmt);
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

static void
procmem_ExecutorEnd(QueryDesc *queryDesc)
{
	for (int i = nparts - 1; i >= 0; i--)
		if (parts[i]->executor_end)
			parts[i]->executor_end(queryDesc);
	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

static void
procmem_ProcessUtility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
					   ProcessUtilityContext context, ParamListInfo params,
					   QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	statement_start(pstmt);
	if (prev_ProcessUtility)
		prev_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
							queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);
	for (int i = 0; i < nparts; i++)
		if (parts[i]->utility_done)
			parts[i]->utility_done();
}

/* In every process, the postmaster's SIGCHLD handler included: see above */
static void
procmem_emit_log(ErrorData *edata)
{
	for (int i = nparts - 1; i >= 0; i--)
		if (parts[i]->log_before)
			parts[i]->log_before(edata);
	if (prev_emit_log_hook)
		prev_emit_log_hook(edata);
	for (int i = 0; i < nparts; i++)
		if (parts[i]->log_after)
			parts[i]->log_after(edata);
}

void
procmem_hooks_register(const procmem_hooks_part *part)
{
	if (nparts >= MAX_PARTS)
		elog(ERROR, "more hook parts than MAX_PARTS");
	parts[nparts++] = part;
}

void
procmem_hooks_install(void)
{
	if (nparts == 0)
		return;					/* not preloaded: no part acts in a hook */
	prev_post_parse_analyze = post_parse_analyze_hook;
	post_parse_analyze_hook = procmem_post_parse_analyze;
	prev_planner = planner_hook;
	planner_hook = procmem_planner;
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = procmem_ExecutorStart;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = procmem_ExecutorEnd;
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = procmem_ProcessUtility;
	prev_emit_log_hook = emit_log_hook;
	emit_log_hook = procmem_emit_log;
}
