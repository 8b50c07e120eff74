/*
 * memory_settings.h
 *		The memory settings this backend runs with, and where each was set
 *		(memory_settings.c): what a crash row and the history say a backend
 *		ran with.
 */
#ifndef PROCMEM_MEMORY_SETTINGS_H
#define PROCMEM_MEMORY_SETTINGS_H

#include "rules/history_format.h"

/*
 * work_mem, hash_mem_multiplier, temp_buffers and maintenance_work_mem as
 * this process has them now: values as history_settings holds them,
 * sources as pg_settings.source names them. Cheap: reads the settings'
 * variables and records, found once per process.
 */
extern void procmem_memory_settings(history_settings *out);

/*
 * At a top-level transaction's commit or abort: what they will be once it
 * has ended (a SET LOCAL goes back; a SET stays on commit); false when none
 * of the four was set within it, which is what they are now.
 */
extern bool procmem_memory_settings_after_xact(history_settings *out, bool commit);

#endif							/* PROCMEM_MEMORY_SETTINGS_H */
