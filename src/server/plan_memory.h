/*
 * plan_memory.h
 *		Which of a statement's plan nodes take memory that work_mem bounds
 *		(plan_memory.c): what a crash row's advice goes by.
 */
#ifndef PROCMEM_PLAN_MEMORY_H
#define PROCMEM_PLAN_MEMORY_H

#include "nodes/plannodes.h"

/*
 * CRASH_PLAN_* (history_format.h) of a statement about to run: KNOWN with
 * the kinds its plans have; a DO block or a CALL, KNOWN alone (the queries
 * its functions run add theirs); another utility, 0 (unknown).
 */
extern int32 procmem_plan_memory(const PlannedStmt *stmt);

#endif							/* PROCMEM_PLAN_MEMORY_H */
