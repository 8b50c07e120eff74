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
 * The file's records that are not samples: the crash rows (crashes.h) and
 * the guard's actions (guard.h), kept in lists the sampler has and this
 * file does not.
 */
typedef struct history_file_lists
{
	/* a load: the crash list emptied, then each row or action the file holds */
	void		(*clear_crashes) (void);
	void		(*load_crash) (const history_crash *c);
	void		(*load_action) (const history_guard_action *a);
	/* a rewrite: every crash row kept, oldest first (palloc'd, *n of them) */
	history_crash *(*copy_crashes) (uint32 *n);
	/* ... and every action kept, at most max, each marked as written */
	int			(*all_actions) (history_guard_action *out, int max);
	int			max_crashes;	/* the most each list keeps */
	int			max_actions;
} history_file_lists;

/*
 * Loads the file into the ring and its other records into the lists,
 * once per shared memory (again only if a sampler died while loading);
 * returns whether the file's last sample is followed by neither a clean
 * stop nor a crash row. Every rewrite of this process takes the crash
 * rows and the actions from the lists.
 */
extern bool history_file_load(const history_file_lists *lists);

/* Makes ready to append: the loaded file if it can be, else a new one. */
extern void history_file_start(void);

/*
 * Writes the file anew from the ring and the lists, now: where new crash
 * rows must be, first in the file, out of reach of a torn tail.
 */
extern void history_file_rewrite(void);

/*
 * Appends a record, first rewriting the file from the ring and the lists
 * when it would outgrow its bound or could not be written before (a sample
 * already in the ring is then in it).
 */
extern void history_file_append_sample(const history_entry *e, uint32 n);
/* Guard actions, as guard_take_unwritten() gives those the file needs (guard.h) */
extern void history_file_append_actions(const history_guard_action *a, int n);
extern void history_file_append_stop(void);

extern void history_file_close(void);

#endif							/* PROCMEM_HISTORY_FILE_H */
