/*
 * plan_memory.h
 *		Which of a statement's plan nodes take memory that work_mem bounds
 *		(plan_memory.c): what a crash row's advice goes by.
 */
#ifndef PROCMEM_PLAN_MEMORY_H
#define PROCMEM_PLAN_MEMORY_H

#include "nodes/plannodes.h"

/* CRASH_PLAN_SORT | CRASH_PLAN_HASH (history_format.h) of a planned statement and its subplans */
extern int32 procmem_plan_memory(const PlannedStmt *stmt);

#endif							/* PROCMEM_PLAN_MEMORY_H */
