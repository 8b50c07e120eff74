/*
 * walk.h
 *		Visiting every process of this server (walk.c): what the
 *		SQL-callable functions and the sampler share.
 */
#ifndef PROCMEM_WALK_H
#define PROCMEM_WALK_H

#include "linux/reading.h"
#include "server/members.h"

/* Reads one member and keeps what it wants; false: gone, or not kept. */
typedef bool (*procmem_visit_fn) (void *dest, pid_t pid, procmem_membership kind,
								  const procfs_stat *id, const procmem_options *opt);

extern void procmem_walk(procmem_visit_fn visit, void *dest, const procmem_options *opt);

/*
 * Test-only: test/modules/procmem_test sets the rendezvous variable of this
 * name (find_rendezvous_variable()) to a procmem_read_hook_fn to act on a
 * process between its membership check and its read (delay the read, stop
 * the process), and between its reads and the check that it is still the
 * same process. NULL otherwise; no setting or SQL function reaches it.
 */
#define PROCMEM_READ_HOOK "pg_procmem_read_hook"
typedef enum procmem_read_phase
{
	PROCMEM_BEFORE_READ,
	PROCMEM_AFTER_READS
} procmem_read_phase;
typedef void (*procmem_read_hook_fn) (pid_t pid, procmem_read_phase phase);

/* Reads one member as its kind says (a hidden one: figures unknown). */
extern bool procmem_read_member(pid_t pid, procmem_membership kind, const procfs_stat *id,
								const procmem_options *opt, procmem_reading *s);

/*
 * What reading this server's processes needs to know about the postmaster:
 * its executable and its open files (read once per walk).
 */
extern void procmem_options_for_server(procmem_options *opt, const procmem_members *m);

/* The options the settings ask for; with_pss also reads smaps_rollup. */
extern procmem_options procmem_current_options(bool with_pss);

#endif							/* PROCMEM_WALK_H */
