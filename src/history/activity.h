/*
 * activity.h
 *		Who each process of the server is, as pg_stat_activity shows it,
 *		for one sample of the memory history (activity.c).
 */
#ifndef PROCMEM_ACTIVITY_H
#define PROCMEM_ACTIVITY_H

/* One process with a backend status (pid first: procmem_pid_cmp) */
typedef struct procmem_activity
{
	int32		pid;
	int32		leader_pid;		/* a parallel worker's leader; else 0 */
	int64		backend_start;
	int64		query_start;
	int64		query_id;
	const char *backend_type;
	const char *datname;
	const char *usename;
	const char *appname;
	const char *state;
	const char *query;			/* whatever the settings say: see activity.c */
} procmem_activity;

/*
 * Every process with a backend status, sorted by pid, *n of them (palloc'd
 * in the current memory context). Runs a short transaction: not inside one.
 */
extern procmem_activity *procmem_activity_read(int *n);

/* pid's, or NULL */
extern const procmem_activity *procmem_activity_find(const procmem_activity *all, int n,
													 int32 pid);

#endif							/* PROCMEM_ACTIVITY_H */
