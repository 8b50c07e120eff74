/*
 * plan_memory.c
 *		Which of a statement's plan nodes take memory that work_mem bounds:
 *		sorts (work_mem each; an aggregate's ORDER BY or DISTINCT too),
 *		hash tables (work_mem times hash_mem_multiplier each), and
 *		tuplestores and TID bitmaps. A crash row says "lower its work_mem"
 *		unless its statement had none of them; a PL/pgSQL function growing
 *		an array, or a session's own memory between statements, is no
 *		work_mem's (docs/history.md). Erring, it errs towards work_mem: any
 *		aggregate may sort, any subplan may be hashed (a SubPlan is an
 *		expression, which the walk skips).
 *
 * Walked at each executor start of a backend's statement, and of the
 * queries its functions run until all kinds are seen: the plan tree's
 * nodes. A few nodes hold other plans beside their left and right trees.
 * A utility statement has no plan of its own: a DO block's or a CALL's
 * memory is its functions', an EXECUTE's or an EXPLAIN's its query's (said
 * as known, the queries they run adding theirs); any other's (a FETCH from
 * a cursor, CREATE INDEX, whose sort maintenance_work_mem bounds) is
 * unknown, and makes unknown a statement it runs in.
 */
#include "server/compat.h"

#include "miscadmin.h"
#include "nodes/nodes.h"
#include "nodes/parsenodes.h"
#include "nodes/plannodes.h"

#include "rules/history_format.h"
#include "server/plan_memory.h"

static int32 walk(const Plan *plan);

static int32
walk_list(const List *plans)
{
	const ListCell *lc;
	int32		flags = 0;

	foreach(lc, plans)
		flags |= walk((const Plan *) lfirst(lc));
	return flags;
}

static int32
node_memory(const Plan *plan)
{
	switch (nodeTag(plan))
	{
		case T_Sort:
		case T_IncrementalSort:
			return CRASH_PLAN_SORT;
		case T_Hash:
		case T_Memoize:
			return CRASH_PLAN_HASH;
		case T_RecursiveUnion:
			return CRASH_PLAN_HASH | CRASH_PLAN_STORE;
		case T_Agg:
			/* any aggregate's ORDER BY or DISTINCT sorts */
			switch (((const Agg *) plan)->aggstrategy)
			{
				case AGG_HASHED:
				case AGG_MIXED:
					return CRASH_PLAN_HASH | CRASH_PLAN_SORT;
				default:
					return CRASH_PLAN_SORT;
			}
		case T_SetOp:
			return ((const SetOp *) plan)->strategy == SETOP_HASHED ? CRASH_PLAN_HASH : CRASH_PLAN_SORT;
		case T_BitmapHeapScan:	/* its TID bitmap */
		case T_Material:
		case T_CteScan:
		case T_WorkTableScan:
		case T_FunctionScan:
		case T_TableFuncScan:
		case T_WindowAgg:
			return CRASH_PLAN_STORE;
		default:
			return 0;
	}
}

static int32
walk(const Plan *plan)
{
	int32		flags;

	if (plan == NULL)
		return 0;
	check_stack_depth();
	flags = node_memory(plan) | walk(plan->lefttree) | walk(plan->righttree);
	switch (nodeTag(plan))
	{
		case T_Append:
			flags |= walk_list(((const Append *) plan)->appendplans);
			break;
		case T_MergeAppend:
			flags |= walk_list(((const MergeAppend *) plan)->mergeplans);
			break;
		case T_BitmapAnd:
			flags |= walk_list(((const BitmapAnd *) plan)->bitmapplans);
			break;
		case T_BitmapOr:
			flags |= walk_list(((const BitmapOr *) plan)->bitmapplans);
			break;
		case T_SubqueryScan:
			flags |= walk(((const SubqueryScan *) plan)->subplan);
			break;
		case T_CustomScan:
			flags |= walk_list(((const CustomScan *) plan)->custom_plans);
			break;
		case T_Agg:
			/* grouping sets: the chain's aggregates and their sorts */
			flags |= walk_list(((const Agg *) plan)->chain);
			break;
		default:
			break;
	}
	return flags;
}

int32
procmem_plan_memory(const PlannedStmt *stmt)
{
	int32		flags;

	if (stmt == NULL)
		return 0;
	if (stmt->commandType == CMD_UTILITY)
		return stmt->utilityStmt &&
			(IsA(stmt->utilityStmt, DoStmt) || IsA(stmt->utilityStmt, CallStmt) ||
			 IsA(stmt->utilityStmt, ExecuteStmt) || IsA(stmt->utilityStmt, ExplainStmt)) ?
			CRASH_PLAN_KNOWN : 0;
	flags = walk(stmt->planTree) | walk_list(stmt->subplans);
	/* a subplan may be hashed: where it is is in an expression, not walked */
	if (stmt->subplans != NIL)
		flags |= CRASH_PLAN_HASH;
	return CRASH_PLAN_KNOWN | flags;
}
