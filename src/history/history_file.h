/*
 * history_file.h
 *		The memory history's file (history_file.c), in both directions:
 *		loaded into the ring, appended to after every sample, rewritten
 *		from the ring. Only the sampler calls these.
 */
#ifndef PROCMEM_HISTORY_FILE_H
#define PROCMEM_HISTORY_FILE_H

#include "rules/history_format.h"

/*
 * In the data directory's pg_stat_tmp: pg_basebackup and pg_rewind leave
 * that directory's files out, so a standby made from a base backup does not
 * take the primary's history (and an "unclean stop") for its own.
 */
#define HISTORY_DIR			"pg_stat_tmp"
#define HISTORY_FILE		HISTORY_DIR "/pg_procmem.history"
#define HISTORY_FILE_TMP	HISTORY_FILE ".tmp"

/* Its state in shared memory and its test-only setting; from _PG_init. */
extern void procmem_history_file_init(void);

/*
 * Loads the file into the ring and its crash rows into the crash list,
 * once per shared memory (again only if a sampler died while loading);
 * returns whether the file's last sample is followed by neither a clean
 * stop nor a crash row.
 */
extern bool history_file_load(void);

/* Makes ready to append: the loaded file if it can be, else a new one. */
extern void history_file_start(void);

/*
 * Writes the file anew from the ring and the crash list, now: where new
 * crash rows must be, first in the file, out of reach of a torn tail.
 */
extern void history_file_rewrite(void);

/*
 * Appends a record, first rewriting the file from the ring and the crash
 * list when it would outgrow its bound or could not be written before (a
 * sample already in the ring is then in it).
 */
extern void history_file_append_sample(const history_entry *e, uint32 n);
/* The guard's actions the file does not have yet, or not as measured (guard.h) */
extern void history_file_append_guard(void);
extern void history_file_append_stop(void);

extern void history_file_close(void);

#endif							/* PROCMEM_HISTORY_FILE_H */
