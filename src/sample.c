/*
 * sample.c
 *		One process's memory figures, read from /proc (no PostgreSQL headers).
 */
#include "sample.h"

#include <string.h>

static const char *const file_names[PM_NFILES] = {
	[PM_FILE_STATUS] = "status",
	[PM_FILE_SMAPS_ROLLUP] = "smaps_rollup",
	[PM_FILE_SMAPS] = "smaps",
	[PM_FILE_OOM_SCORE] = "oom_score",
	[PM_FILE_OOM_SCORE_ADJ] = "oom_score_adj",
};

const char *
procmem_file_name(procmem_file f)
{
	return (f >= 0 && f < PM_NFILES) ? file_names[f] : "?";
}

procfs_result
procmem_read_stat(pid_t pid, procfs_stat *st)
{
	char		buf[1024];
	size_t		len;
	procfs_result res = procfs_read_file(pid, "stat", buf, sizeof(buf), &len);

	if (res == PROCFS_OK && procfs_parse_stat(buf, len, st) != 0)
		res = PROCFS_UNREADABLE;
	return res;
}

/* Reads a one-number file such as oom_score; failures mark it unreadable. */
static int64_t
read_number(pid_t pid, procmem_file f, unsigned *unreadable)
{
	char		buf[64];
	size_t		len;
	int64_t		v;

	if (procfs_read_file(pid, file_names[f], buf, sizeof(buf), &len) != PROCFS_OK ||
		procfs_parse_int(buf, len, &v) != 0)
	{
		*unreadable |= 1u << f;
		return PROCFS_MISSING;
	}
	return v;
}

/*
 * smaps_rollup (Linux >= 4.14) is one pre-summed block; older kernels only
 * have smaps, whose per-mapping blocks the same parser sums.
 */
static void
read_smaps(pid_t pid, procmem_sample *s)
{
	procfs_result res;

	procfs_smaps_init(&s->smaps);
	res = procfs_read_lines(pid, file_names[PM_FILE_SMAPS_ROLLUP],
							procfs_smaps_line, &s->smaps);
	if (res == PROCFS_OK)
		return;
	if (res == PROCFS_GONE)
	{
		/* no such file (old kernel), or no such process: smaps tells */
		procfs_smaps_init(&s->smaps);
		if (procfs_read_lines(pid, file_names[PM_FILE_SMAPS],
							  procfs_smaps_line, &s->smaps) == PROCFS_OK)
			return;
		s->unreadable |= 1u << PM_FILE_SMAPS;
	}
	else
		s->unreadable |= 1u << PM_FILE_SMAPS_ROLLUP;
	procfs_smaps_init(&s->smaps);
}

int64_t
procmem_overhead(const procmem_sample *s)
{
	int64_t		anon = s->smaps.pss_anon;
	int64_t		pte = s->status.vm_pte;

	if (anon < 0 || pte < 0 || anon > INT64_MAX - pte)
		return PROCFS_MISSING;
	return anon + pte;
}

procmem_sample_result
procmem_sample_read(pid_t pid, int64_t expected_ppid, procmem_sample *s)
{
	procfs_stat after;

	memset(s, 0, sizeof(*s));
	if (procmem_read_stat(pid, &s->stat) != PROCFS_OK || procfs_stat_dead(&s->stat))
		return SAMPLE_GONE;
	if (expected_ppid >= 0 && s->stat.ppid != expected_ppid)
		return SAMPLE_NOT_CHILD;

	procfs_status_init(&s->status);
	if (procfs_read_lines(pid, file_names[PM_FILE_STATUS],
						  procfs_status_line, &s->status) != PROCFS_OK)
	{
		s->unreadable |= 1u << PM_FILE_STATUS;
		procfs_status_init(&s->status);
	}
	read_smaps(pid, s);
	s->oom_score = read_number(pid, PM_FILE_OOM_SCORE, &s->unreadable);
	s->oom_score_adj = read_number(pid, PM_FILE_OOM_SCORE_ADJ, &s->unreadable);
	s->overhead = procmem_overhead(s);

	/* the same process, still alive, from start to end of the reads? */
	if (procmem_read_stat(pid, &after) != PROCFS_OK || procfs_stat_dead(&after) ||
		after.starttime != s->stat.starttime)
		return SAMPLE_GONE;
	return SAMPLE_OK;
}
