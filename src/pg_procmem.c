/*
 * pg_procmem.c
 *		The module: its magic block and _PG_init, which has each part define
 *		its settings, claim its shared memory and install its hooks.
 *
 * The SQL-callable functions live in src/sql/, one file per concern, as the
 * views do in views/; docs/architecture.md draws the layers.
 */
#include "server/compat.h"

#include PROCMEM_QUERYJUMBLE_H

#include "guard/guard.h"
#include "history/connections.h"
#include "history/crashes.h"
#include "history/history_file.h"
#include "history/history_ring.h"
#include "history/oom_clock.h"
#include "history/sampler.h"
#include "server/contexts.h"
#include "server/hooks.h"
#include "server/settings.h"
#include "server/shmem.h"

PROCMEM_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	procmem_settings_init();
	procmem_contexts_init();
	procmem_connections_init();
	/* the memory history: the ring first (crashes.c reads its run's start) */
	procmem_history_ring_init();
	procmem_oom_clock_init();
	procmem_crashes_init();
	procmem_history_file_init();
	procmem_sampler_init();
	/* the memory guard, and each backend's own limit */
	procmem_guard_init();
	procmem_guard_backend_init();
	/* the shared memory and the hooks the files above registered, when preloaded */
	procmem_shmem_install();
	procmem_hooks_install();
	/* the history's query_id, on a server left at compute_query_id = auto */
	if (process_shared_preload_libraries_in_progress)
		EnableQueryId();
	MarkGUCPrefixReserved("pg_procmem");
}
