/*
 * walk.c
 *		Visiting every process of this server, for the SQL-callable functions
 *		(sql/processes.c) and the sampler (sample.c) alike.
 */
#include "server/compat.h"

#include <sys/sysmacros.h>

#include "fmgr.h"

#include "linux/reading.h"
#include "server/members.h"
#include "server/settings.h"
#include "server/walk.h"

/* The options the settings ask for; with_pss also reads smaps_rollup. */
procmem_options
procmem_current_options(bool with_pss)
{
	procmem_options opt;

	memset(&opt, 0, sizeof(opt));
	opt.want_pss = with_pss;
	opt.method = (procmem_method) procmem_overhead_method;
	opt.pagemap_flags = procmem_pagemap_ioctls ? 0 :
		PAGEMAP_NO_SCAN | PAGEMAP_NO_PROCMAP_QUERY;
	return opt;
}

/*
 * The test-only hook's slot (walk.h), looked up at this process's first
 * read: find_rendezvous_variable() allocates (in TopMemoryContext) then
 * only; every later read, the sampler's included, tests one pointer.
 */
static void **read_hook_slot;

static void
hook_after_reads(pid_t pid)
{
	((procmem_read_hook_fn) *read_hook_slot) (pid, PROCMEM_AFTER_READS);
}

/*
 * Reads one member, as procmem_member() classed it; false when it is gone
 * or changed meanwhile. A member /proc hides is a reading all the same: who
 * it is comes from PostgreSQL, its memory is unknown (procmem_reading_hidden).
 */
bool
procmem_read_member(pid_t pid, procmem_membership kind, const procfs_stat *id,
					const procmem_options *opt, procmem_reading *s)
{
	procmem_options o;

	if (kind == MEMBER_HIDDEN)
	{
		procmem_reading_hidden(opt, s);
		return true;
	}
	if (kind != MEMBER_POSTMASTER && kind != MEMBER_PGPROC && kind != MEMBER_CHILD)
		return false;
	if (read_hook_slot == NULL)
		read_hook_slot = find_rendezvous_variable(PROCMEM_READ_HOOK);
	if (*read_hook_slot != NULL)
		((procmem_read_hook_fn) *read_hook_slot) (pid, PROCMEM_BEFORE_READ);
	o = *opt;
	o.child = kind != MEMBER_POSTMASTER;
	o.after_reads = *read_hook_slot != NULL ? hook_after_reads : NULL;
	/* the membership check's stat is the identity the reading keeps to */
	return procmem_read_process(pid, o.child ? PostmasterPid : -1, id, &o, s) == READ_OK;
}

void
procmem_options_for_server(procmem_options *opt, const procmem_members *m)
{
	opt->exe_ino = m->pm_exe_known ? m->pm_ino : 0;
	opt->exe_dev = ((uint64_t) major(m->pm_dev) << 32) | minor(m->pm_dev);
	/* the files children share with the postmaster are not freed with them */
	opt->know_inherited = opt->method != PROCMEM_METHOD_RSS_ANON &&
		procfs_fd_bitmap(PostmasterPid, opt->inherited_fds, PROCFS_FD_BITS) == PROCFS_OK;
}

/*
 * Visits every live process of this server: the postmaster, every process
 * with a PGPROC, and the postmaster's other children. A process that exits
 * while being read is left out.
 */
void
procmem_walk(procmem_visit_fn visit, void *dest, const procmem_options *opt)
{
	procmem_members m;
	procmem_options o = *opt;
	pid_t	   *pids;
	int			n;
	int			skipped = 0;

	(void) procmem_check_proc_visible(ERROR);
	procmem_members_begin(&m);
	procmem_options_for_server(&o, &m);
	pids = procmem_candidates(&n);
	for (int i = 0; i < n; i++)
	{
		procfs_stat id;
		procmem_membership kind;

		CHECK_FOR_INTERRUPTS();
		kind = procmem_member(&m, pids[i], &id);
		if (kind == MEMBER_NO || kind == MEMBER_GONE ||
			!visit(dest, pids[i], kind, &id, &o))
			skipped++;
	}
	elog(DEBUG1, "%d candidate pids, %d not live or not ours",
		 n, skipped);
	procmem_members_end(&m);
	pfree(pids);
}
