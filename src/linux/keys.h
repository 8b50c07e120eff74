/*
 * keys.h
 *		The kernel's names for what pg_procmem reads from its text files
 *		(keys.c): per file, each key, the member it fills and its unit.
 *		No PostgreSQL headers.
 */
#ifndef PROCMEM_KEYS_H
#define PROCMEM_KEYS_H

#include "linux/procfs.h"

/* A file's table of keys, and how its lines are written */
typedef struct procfs_keys
{
	const procfs_field *fields;
	size_t		n;
	char		sep;			/* ':' in /proc files, ' ' in cgroup files */
	int			sum;			/* repeated keys add up (smaps) */
} procfs_keys;

/*
 * The fieldset that parses a file's lines into target: procfs_fields_init()
 * it, feed it lines (procfs_fields_line), procfs_fields_count() it.
 */
extern procfs_fieldset keys_fieldset(const procfs_keys *keys, void *target);

extern const procfs_keys keys_status;	/* /proc/PID/status: procfs_status */
extern const procfs_keys keys_smaps;	/* smaps_rollup, smaps: procfs_smaps */
extern const procfs_keys keys_meminfo;	/* /proc/meminfo: sysmem_meminfo */

/* The memory cgroup (sysmem_cgmem): one-number files by name, then keyed ones */
extern const procfs_keys keys_cgroup_v2_files;
extern const procfs_keys keys_cgroup_v2_stat;	/* memory.stat */
extern const procfs_keys keys_cgroup_v2_events; /* memory.events */
extern const procfs_keys keys_cgroup_v1_files;
extern const procfs_keys keys_cgroup_v1_stat;	/* memory.stat */
extern const procfs_keys keys_cgroup_v1_oom;	/* memory.oom_control */
extern const procfs_keys keys_vmstat_oom;	/* /proc/vmstat's oom_kill, into sysmem_cgmem */

#endif							/* PROCMEM_KEYS_H */
