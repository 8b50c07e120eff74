/*
 * sample.h
 *		One process's memory figures, read from /proc (no PostgreSQL headers).
 *
 * A sample is taken between two reads of /proc/<pid>/stat: if the process
 * changed identity (start time), became a zombie or vanished in between, the
 * sample is GONE and the caller drops it rather than report a mix of two
 * processes or of a dying one.
 */
#ifndef PROCMEM_SAMPLE_H
#define PROCMEM_SAMPLE_H

#include "procfs.h"

/* The /proc files a sample reads; bit numbers of procmem_sample.unreadable */
typedef enum procmem_file
{
	PM_FILE_STATUS = 0,
	PM_FILE_SMAPS_ROLLUP,
	PM_FILE_SMAPS,				/* read only where smaps_rollup does not exist */
	PM_FILE_OOM_SCORE,
	PM_FILE_OOM_SCORE_ADJ,
	PM_NFILES
} procmem_file;

typedef enum procmem_sample_result
{
	SAMPLE_OK = 0,
	SAMPLE_GONE,				/* exited, zombie, or pid reused mid-read */
	SAMPLE_NOT_CHILD			/* alive, but not a child of the expected parent */
} procmem_sample_result;

typedef struct procmem_sample
{
	procfs_stat stat;			/* identity, from the first stat read */
	procfs_status status;
	procfs_smaps smaps;
	int64_t		oom_score;
	int64_t		oom_score_adj;
	int64_t		overhead;		/* see procmem_overhead() */
	unsigned	unreadable;		/* bit (1 << procmem_file) per failed file */
} procmem_sample;

/*
 * Reads every figure of one process. expected_ppid < 0 skips the parent
 * check (for the postmaster itself).
 */
extern procmem_sample_result procmem_sample_read(pid_t pid, int64_t expected_ppid,
												 procmem_sample *s);

/*
 * What the process costs beyond shared memory, or negative when it cannot
 * be told. Today: Pss_Anon + VmPTE, the accepted estimate. Kept in one place
 * so the method can change without touching callers.
 */
extern int64_t procmem_overhead(const procmem_sample *s);

extern const char *procmem_file_name(procmem_file f);

/* Reads /proc/<pid>/stat; 0 on success. */
extern procfs_result procmem_read_stat(pid_t pid, procfs_stat *st);

#endif							/* PROCMEM_SAMPLE_H */
