/*
 * reading.h
 *		One process's memory figures, read from /proc (no PostgreSQL headers).
 *
 * A reading is taken between two reads of /proc/<pid>/stat: if the process
 * changed identity (start time), became a zombie or vanished in between, the
 * reading is GONE and the caller drops it rather than report a mix of two
 * processes or of a dying one.
 */
#ifndef PROCMEM_READING_H
#define PROCMEM_READING_H

#include <stdbool.h>

#include "linux/kernel.h"
#include "linux/pagemap.h"
#include "linux/pagetables.h"
#include "linux/procfs.h"

/* The /proc files a sample reads; bit numbers of procmem_reading.unreadable */
typedef enum procmem_file
{
	PROCMEM_FILE_STAT = 0,		/* unreadable only when /proc hides the process */
	PROCMEM_FILE_STATUS,
	PROCMEM_FILE_SMAPS_ROLLUP,
	PROCMEM_FILE_SMAPS,			/* read only where smaps_rollup does not exist */
	PROCMEM_FILE_MAPS,
	PROCMEM_FILE_PAGEMAP,
	PROCMEM_FILE_OOM_SCORE,
	PROCMEM_FILE_OOM_SCORE_ADJ,
	PROCMEM_FILE_FD,			/* the open files, for the kernel's share */
	PROCMEM_NFILES
} procmem_file;

typedef enum procmem_read_result
{
	READ_OK = 0,
	READ_GONE,				/* exited, zombie, or pid reused mid-read */
	READ_NOT_CHILD			/* alive, but not a child of the expected parent */
} procmem_read_result;

/* How overhead is measured (the pg_procmem.overhead_method setting). */
typedef enum procmem_method
{
	PROCMEM_METHOD_AUTO = 0,	/* pagemap, else rss_anon */
	PROCMEM_METHOD_PAGEMAP,		/* exclusive anonymous pages + page tables */
	PROCMEM_METHOD_RSS_ANON,	/* RssAnon + page tables: over-counts COW pages */
	PROCMEM_METHOD_PAGEMAP_KERNEL	/* a result only: pagemap + kernel memory */
} procmem_method;

typedef struct procmem_options
{
	bool		want_pss;		/* read smaps_rollup: costly, see docs/overhead.md */
	procmem_method method;
	unsigned	pagemap_flags;	/* PAGEMAP_NO_SCAN, ... */
	bool		want_cmdline;	/* read the process title too */
	bool		want_tables;	/* page tables with the segment in huge pages */
	uint64_t	seg_start;		/* ... the main segment, for want_tables */
	uint64_t	seg_end;
	/* for the kernel's share and the parts of anonymous memory (pagemap) */
	uint64_t	exe_ino;		/* the postmaster's executable; 0 unknown */
	uint64_t	exe_dev;		/* its device, as procfs_vma.dev */
	bool		child;			/* a child of the postmaster, not itself */
	bool		know_inherited;	/* inherited_fds was read */
	uint64_t	inherited_fds[PROCFS_FD_BITS / 64];	/* the postmaster's fds */
	/* the DSM segments there are, to find those it maps; NULL: not looked for */
	dsm_table  *dsm;
	/* test-only (walk.h): called after the reads, before the identity check */
	void		(*after_reads) (pid_t pid);
} procmem_options;

typedef struct procmem_reading
{
	procfs_stat stat;			/* identity, from the first stat read */
	procfs_status status;
	procfs_smaps smaps;			/* all missing unless want_pss */
	pagemap_anon anon;			/* negative unless read by the pagemap method */
	pagetables_estimate tables; /* bytes negative unless want_tables */
	kernel_counts kcounts;		/* what kernel is counted from */
	int64_t		kernel;			/* the kernel's own memory; negative unless
								 * read by the pagemap method */
	dsm_mapped	dsm;			/* the segments of opt->dsm it maps; n -1:
								 * unknown (not looked for, or unreadable) */
	int64_t		oom_score;		/* valid unless its file is unreadable */
	int64_t		oom_score_adj;	/* likewise: -1 is a legal value */
	char		cmdline[256];	/* when want_cmdline; not NUL-terminated */
	size_t		cmdline_len;
	int64_t		overhead;		/* see procmem_overhead() */
	procmem_method overhead_method; /* PAGEMAP or RSS_ANON; AUTO: none */
	unsigned	unreadable;		/* bit (1 << procmem_file) per failed file */
} procmem_reading;

/*
 * Reads every figure of one process. expected_ppid < 0 skips the parent
 * check (for the postmaster itself). identity, if not NULL, is a stat the
 * caller has just read (its membership check): it serves as the first of
 * the two identity reads instead of reading the file again.
 */
extern procmem_read_result procmem_read_process(pid_t pid, int64_t expected_ppid,
												 const procfs_stat *identity,
												 const procmem_options *opt,
												 procmem_reading *s);

/*
 * The oom_score and oom_score_adj alone, into s as procmem_read_process()
 * reads them (their bits of s->unreadable, which the caller clears, set
 * when unreadable): for figures kept from an earlier reading, since another
 * process can set the adj. READ_GONE when either file says the process has
 * gone.
 */
extern procmem_read_result procmem_read_oom(pid_t pid, procmem_reading *s);

/*
 * The reading of a process /proc hides from us (procmem_member() said it is
 * ours): every figure missing, and every file the same options would have
 * read marked unreadable.
 */
extern void procmem_reading_hidden(const procmem_options *opt, procmem_reading *s);

/*
 * What the process costs beyond shared memory: by the pagemap method its
 * exclusive anonymous pages + page tables + the kernel's own memory for it
 * (kernel.h), which is what the kernel frees when it exits (the method
 * pagemap+kernel; pagemap alone when its files could not be read); by the
 * rss_anon method RssAnon + page tables. Sets *method to the one used;
 * negative when neither could be read.
 */
extern int64_t procmem_overhead(const procmem_reading *s, procmem_method wanted,
								procmem_method *method);

extern const char *procmem_method_name(procmem_method m);

extern const char *procmem_file_name(procmem_file f);

#endif							/* PROCMEM_READING_H */
