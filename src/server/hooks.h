/*
 * hooks.h
 *		PostgreSQL's hooks pg_procmem acts in (post_parse_analyze_hook,
 *		planner_hook, ExecutorStart, ExecutorEnd, ProcessUtility,
 *		emit_log_hook), each installed once by hooks.c
 *		(shared_preload_libraries mode): the parts that act in them
 *		register their callbacks from _PG_init.
 */
#ifndef PROCMEM_HOOKS_H
#define PROCMEM_HOOKS_H

#include "executor/execdesc.h"

/*
 * What a part does in the hooks; NULL: nothing there. Parts nest as hooks
 * installed one after another would: the last registered runs first before
 * the hooks installed before pg_procmem's (or PostgreSQL's own function),
 * and last after them.
 */
typedef struct procmem_hooks_part
{
	/*
	 * at the end of each parse analysis and before each planning, nested
	 * ones too (a function's queries): a statement's work before it runs
	 * (the planner folds constants: it may run functions)
	 */
	void		(*statement_planning) (void);
	/* before each executor start and each utility command, nested ones too */
	void		(*statement_start) (const PlannedStmt *plan);	/* a utility's too */
	/* before ExecutorEnd frees the query's memory */
	void		(*executor_end) (QueryDesc *queryDesc);
	/* after a utility command ran (not after one that threw) */
	void		(*utility_done) (void);
	/*
	 * each message that reaches the server log, in every process: in the
	 * postmaster on 14 and 15 from its SIGCHLD handler, where a callback
	 * must only compare and copy (hooks.c)
	 */
	void		(*log_before) (ErrorData *edata);
	void		(*log_after) (ErrorData *edata);
} procmem_hooks_part;

/* From _PG_init: the registered parts, and then the hooks that call them */
extern void procmem_hooks_register(const procmem_hooks_part *part);
extern void procmem_hooks_install(void);

#endif							/* PROCMEM_HOOKS_H */
