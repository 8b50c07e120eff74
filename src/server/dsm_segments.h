/*
 * dsm_segments.h
 *		This server's DSM segments, and its processes' parallel groups
 *		(dsm_segments.c): what the SQL functions and the sampler need to say
 *		whose segments are whose (rules/dsm_groups.h).
 */
#ifndef PROCMEM_DSM_SEGMENTS_H
#define PROCMEM_DSM_SEGMENTS_H

#include "linux/dsm.h"

/*
 * Starts the table of the segments of the server's dynamic_shared_memory_type
 * (dsm.h: posix segments are learned as the walk meets them), freed when the
 * current memory context is reset or deleted (an ERROR too). False when
 * there are none to look for (the type is none) or they could not be read:
 * then the table is empty and every figure unknown. *t must live as long
 * as that context: palloc it there, never on the stack.
 */
extern bool procmem_dsm_table_read(dsm_table *t);

/* A process in a parallel query, and its leader */
typedef struct procmem_leader
{
	int32		pid;			/* first: procmem_pid_cmp */
	int32		leader;
} procmem_leader;

/*
 * Every process a PGPROC says is in a lock group led by another (a
 * parallel worker), sorted by pid, in one pass over ProcGlobal.
 */
extern procmem_leader *procmem_leaders(int *n);

/* The group a process is in: its leader's pid, else its own */
extern int32 procmem_group_of(const procmem_leader *l, int n, int32 pid);

#endif							/* PROCMEM_DSM_SEGMENTS_H */
