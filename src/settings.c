/*
 * settings.c
 *		The settings more than one file reads: how a process is read (walk.c
 *		turns them into procmem_options) and whether statement text is kept
 *		(contexts.c, history.c, sampler.c). The other settings live with the
 *		one file that reads them.
 */
#include "compat.h"

#include "sample.h"
#include "settings.h"

int			procmem_overhead_method = PROCMEM_METHOD_AUTO;
bool		procmem_pagemap_ioctls = true;
bool		procmem_keep_statement_text = true;

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
	DefineCustomBoolVariable("pg_procmem.keep_statement_text",
							 "Keeps statement text where pg_procmem would show it.",
							 "The identifiers of the largest memory contexts (a prepared statement's or a "
							 "cached plan's text, from earlier statements too, literals included). "
							 "Off: they are neither published nor shown.",
							 &procmem_keep_statement_text, true,
							 PGC_SUSET, 0, NULL, NULL, NULL);
}
