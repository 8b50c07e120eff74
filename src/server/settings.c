/*
 * settings.c
 *		How a process is read: the settings walk.c turns into
 *		procmem_options for every caller. The other settings live with the
 *		file that owns what they govern.
 */
#include "server/compat.h"

#include "linux/reading.h"
#include "server/settings.h"

int			procmem_overhead_method = PROCMEM_METHOD_AUTO;
bool		procmem_pagemap_ioctls = true;

static const struct config_enum_entry method_options[] = {
	{"auto", PROCMEM_METHOD_AUTO, false},
	{"pagemap", PROCMEM_METHOD_PAGEMAP, false},
	{"rss_anon", PROCMEM_METHOD_RSS_ANON, false},
	{NULL, 0, false}
};

void
procmem_settings_init(void)
{
	DefineCustomEnumVariable("pg_procmem.overhead_method",
							 "How the overhead column is measured.",
							 "auto: pagemap where /proc/PID/pagemap can be read, else rss_anon. "
							 "pagemap: exclusive anonymous pages + page tables + the kernel's "
							 "memory for the process, where its open files can be read (exact). "
							 "rss_anon: RssAnon + page tables (over-counts pages shared "
							 "copy-on-write with the postmaster).",
							 &procmem_overhead_method, PROCMEM_METHOD_AUTO, method_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("pg_procmem.pagemap_ioctls",
							 "Uses the PAGEMAP_SCAN and PROCMAP_QUERY ioctls where the kernel has them.",
							 "Turn off only if a kernel misbehaves: the pagemap method then reads "
							 "/proc/PID/maps as text and every page of each private mapping.",
							 &procmem_pagemap_ioctls, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
}
