/*
 * reading.c
 *		One process's memory figures, read from /proc (no PostgreSQL headers).
 */
#include "linux/keys.h"
#include "linux/reading.h"

#include <string.h>

static const char *const file_names[PROCMEM_NFILES] = {
	[PROCMEM_FILE_STAT] = "stat",
	[PROCMEM_FILE_STATUS] = "status",
	[PROCMEM_FILE_SMAPS_ROLLUP] = "smaps_rollup",
	[PROCMEM_FILE_SMAPS] = "smaps",
	[PROCMEM_FILE_MAPS] = "maps",
	[PROCMEM_FILE_PAGEMAP] = "pagemap",
	[PROCMEM_FILE_OOM_SCORE] = "oom_score",
	[PROCMEM_FILE_OOM_SCORE_ADJ] = "oom_score_adj",
	[PROCMEM_FILE_FD] = "fd",
};

const char *
procmem_file_name(procmem_file f)
{
	return (f >= 0 && f < PROCMEM_NFILES) ? file_names[f] : "?";
}

const char *
procmem_method_name(procmem_method m)
{
	switch (m)
	{
		case PROCMEM_METHOD_PAGEMAP:
			return "pagemap";
		case PROCMEM_METHOD_RSS_ANON:
			return "rss_anon";
		case PROCMEM_METHOD_PAGEMAP_KERNEL:
			return "pagemap+kernel";
		default:
			return NULL;
	}
}

/*
 * Reads a one-number file such as oom_score into *v; a failure marks it
 * unreadable (*v PROCFS_MISSING) and says what the read found.
 */
static procfs_result
read_number(pid_t pid, procmem_file f, int64_t *v, unsigned *unreadable)
{
	char		buf[64];
	size_t		len;
	procfs_result res = procfs_read_file(pid, file_names[f], buf, sizeof(buf), &len);

	if (res == PROCFS_OK && procfs_parse_int(buf, len, v) == 0)
		return PROCFS_OK;
	*v = PROCFS_MISSING;
	*unreadable |= 1u << f;
	return res == PROCFS_OK ? PROCFS_UNREADABLE : res;
}

procmem_read_result
procmem_read_oom(pid_t pid, procmem_reading *s)
{
	procfs_result score = read_number(pid, PROCMEM_FILE_OOM_SCORE, &s->oom_score, &s->unreadable);
	procfs_result adj = read_number(pid, PROCMEM_FILE_OOM_SCORE_ADJ, &s->oom_score_adj, &s->unreadable);

	return score == PROCFS_GONE || adj == PROCFS_GONE ? READ_GONE : READ_OK;
}

/* Marks file f unreadable; returns whether the process has gone. */
static int
failed(procmem_reading *s, procmem_file f, procfs_result res)
{
	if (res == PROCFS_GONE)
		return 1;
	s->unreadable |= 1u << f;
	return 0;
}

/*
 * smaps_rollup (Linux >= 4.14) is one pre-summed block; older kernels only
 * have smaps, whose per-mapping blocks the same parser sums.
 */
static int
read_smaps(pid_t pid, procmem_reading *s)
{
	procfs_fieldset fs = keys_fieldset(&keys_smaps, &s->smaps);
	procfs_result res;

	res = procfs_read_lines(pid, file_names[PROCMEM_FILE_SMAPS_ROLLUP],
							procfs_fields_line, &fs);
	if (res == PROCFS_OK)
		return 0;
	procfs_fields_init(&fs);
	if (res != PROCFS_GONE)
		return failed(s, PROCMEM_FILE_SMAPS_ROLLUP, res);

	/* no such file (Linux < 4.14), or no such process: smaps tells */
	res = procfs_read_lines(pid, file_names[PROCMEM_FILE_SMAPS],
							procfs_fields_line, &fs);
	if (res == PROCFS_OK)
		return 0;
	procfs_fields_init(&fs);
	return failed(s, PROCMEM_FILE_SMAPS, res);
}

static int
read_anon(pid_t pid, const procmem_options *opt, procmem_reading *s)
{
	pagemap_hints hints = {s->stat.start_brk, s->stat.start_stack, opt->exe_ino, opt->exe_dev,
	opt->dsm, &s->dsm};
	procfs_result res;

	s->dsm.n = 0;
	res = pagemap_read_anon(pid, opt->pagemap_flags, &hints, &s->anon);
	if (res == PROCFS_OK)
		return 0;
	s->dsm.n = -1;				/* the walk ended early: read again below */
	s->anon.exclusive = s->anon.shared = PROCFS_MISSING;
	return failed(s, s->anon.failed_file ? PROCMEM_FILE_PAGEMAP : PROCMEM_FILE_MAPS, res);
}

/*
 * The kernel's own memory for the process (kernel.h), from its threads,
 * its mappings as the pagemap walk counted them, and its open files.
 */
static int
read_kernel(pid_t pid, const procmem_options *opt, procmem_reading *s)
{
	kernel_counts *c = &s->kcounts;
	procfs_result res;

	c->threads = s->status.threads;
	c->mappings = s->anon.mappings;
	c->anon_mappings = s->anon.anon_mappings;
	c->ancestors = opt->child ? 1 : 0;
	res = procfs_count_fds(pid, opt->child && opt->know_inherited ? opt->inherited_fds : NULL,
						   PROCFS_FD_BITS, &c->files);
	if (res != PROCFS_OK && failed(s, PROCMEM_FILE_FD, res))
		return 1;
	s->kernel = res == PROCFS_OK ? kernel_memory(kernel_sizes_get(), c) : PROCFS_MISSING;
	return 0;
}

static int
read_tables(pid_t pid, const procmem_options *opt, procmem_reading *s)
{
	/* the segment's resident part: RssShmem, or HugetlbPages if it is hugetlb */
	int64_t		resident = s->status.rss_shmem > s->status.hugetlb ?
		s->status.rss_shmem : s->status.hugetlb;
	procfs_result res = pagetables_read(pid, opt->pagemap_flags, opt->seg_start, opt->seg_end,
										resident, &s->tables);

	if (res == PROCFS_OK)
		return 0;
	s->tables.bytes = PROCFS_MISSING;
	return failed(s, s->tables.failed_file ? PROCMEM_FILE_PAGEMAP : PROCMEM_FILE_MAPS, res);
}

int64_t
procmem_overhead(const procmem_reading *s, procmem_method wanted, procmem_method *method)
{
	int64_t		v;

	*method = PROCMEM_METHOD_AUTO;
	if (wanted != PROCMEM_METHOD_RSS_ANON)
	{
		v = procfs_sum(s->anon.exclusive, s->status.vm_pte);
		if (v >= 0 || wanted == PROCMEM_METHOD_PAGEMAP)
		{
			if (v >= 0 && s->kernel >= 0)
			{
				*method = PROCMEM_METHOD_PAGEMAP_KERNEL;
				return procfs_sum(v, s->kernel);
			}
			if (v >= 0)
				*method = PROCMEM_METHOD_PAGEMAP;
			return v;
		}
	}
	v = procfs_sum(s->status.rss_anon, s->status.vm_pte);
	if (v >= 0)
		*method = PROCMEM_METHOD_RSS_ANON;
	return v;
}

/* Every figure missing, as procmem_read_process() starts. */
static void
reading_init(procmem_reading *s)
{
	procfs_fieldset status = keys_fieldset(&keys_status, &s->status);
	procfs_fieldset smaps = keys_fieldset(&keys_smaps, &s->smaps);

	memset(s, 0, sizeof(*s));
	procfs_fields_init(&status);
	procfs_fields_init(&smaps);
	s->anon.exclusive = s->anon.shared = PROCFS_MISSING;
	s->tables.bytes = PROCFS_MISSING;
	s->kernel = PROCFS_MISSING;
	s->oom_score = s->oom_score_adj = PROCFS_MISSING;
	s->overhead = PROCFS_MISSING;
	s->overhead_method = PROCMEM_METHOD_AUTO;
	s->dsm.n = -1;
}

void
procmem_reading_hidden(const procmem_options *opt, procmem_reading *s)
{
	reading_init(s);
	s->unreadable = (1u << PROCMEM_FILE_STAT) | (1u << PROCMEM_FILE_STATUS) |
		(1u << PROCMEM_FILE_OOM_SCORE) | (1u << PROCMEM_FILE_OOM_SCORE_ADJ);
	if (opt->method != PROCMEM_METHOD_RSS_ANON || opt->want_tables)
		s->unreadable |= 1u << PROCMEM_FILE_PAGEMAP;
	if (opt->want_pss)
		s->unreadable |= 1u << PROCMEM_FILE_SMAPS_ROLLUP;
}

procmem_read_result
procmem_read_process(pid_t pid, int64_t expected_ppid, const procfs_stat *identity,
					const procmem_options *opt, procmem_reading *s)
{
	procfs_stat after;
	procfs_fieldset status;
	procfs_result res;

	reading_init(s);
	if (identity)
		s->stat = *identity;
	else if (procfs_read_stat(pid, &s->stat) != PROCFS_OK)
		return READ_GONE;
	if (procfs_stat_dead(&s->stat))
		return READ_GONE;
	if (expected_ppid >= 0 && s->stat.ppid != expected_ppid)
		return READ_NOT_CHILD;

	status = keys_fieldset(&keys_status, &s->status);
	res = procfs_read_lines(pid, file_names[PROCMEM_FILE_STATUS],
							procfs_fields_line, &status);
	if (res != PROCFS_OK)
	{
		procfs_fields_init(&status);
		if (failed(s, PROCMEM_FILE_STATUS, res))
			return READ_GONE;
	}
	else if (s->status.vm_rss < 0)
		return READ_GONE;		/* no Vm* lines: it has released its memory */
	/*
	 * Being killed (the OOM killer's SIGKILL): no more reads. Each holds its
	 * memory for a moment, and if it exits meanwhile, its memory is freed
	 * only when the read ends, and the OOM killer, seeing no victim left,
	 * takes another process: the postmaster.
	 */
	else if (s->status.kill_pending == 1 || s->status.kill_pending_shared == 1)
		return READ_GONE;

	if (opt->method != PROCMEM_METHOD_RSS_ANON &&
		(read_anon(pid, opt, s) || (s->anon.exclusive >= 0 && read_kernel(pid, opt, s))))
		return READ_GONE;
	/* where no pagemap walk met its mappings: one read of them */
	if (opt->dsm && s->dsm.n < 0)
	{
		res = dsm_read_mapped(pid, opt->dsm, &s->dsm, !(opt->pagemap_flags & PAGEMAP_NO_PROCMAP_QUERY));
		if (res != PROCFS_OK && failed(s, PROCMEM_FILE_MAPS, res))
			return READ_GONE;
	}
	if (opt->want_tables && read_tables(pid, opt, s))
		return READ_GONE;
	if (opt->want_pss && read_smaps(pid, s))
		return READ_GONE;
	/* a process gone meanwhile: the identity check below tells */
	(void) procmem_read_oom(pid, s);
	if (opt->want_cmdline &&
		procfs_read_file(pid, "cmdline", s->cmdline, sizeof(s->cmdline),
						 &s->cmdline_len) != PROCFS_OK)
		s->cmdline_len = 0;
	s->overhead = procmem_overhead(s, opt->method, &s->overhead_method);

	/* the same process, still alive, from start to end of the reads? */
	if (opt->after_reads)
		opt->after_reads(pid);
	if (procfs_read_stat(pid, &after) != PROCFS_OK || procfs_stat_dead(&after) ||
		after.starttime != s->stat.starttime)
		return READ_GONE;
	return READ_OK;
}
