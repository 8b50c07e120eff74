/*
 * pagemap.h
 *		A process's anonymous memory, page by page, from /proc/<pid>/pagemap
 *		(no PostgreSQL headers).
 *
 * Only private mappings are looked at: shared_buffers and DSM segments are
 * shared mappings, so their page tables (the costly part of smaps_rollup,
 * which grows with shared_buffers) are never walked. In the private
 * mappings we count present anonymous pages (heap, stack, copy-on-write
 * copies of .data/.bss, JIT code) and, among them, those mapped by this
 * process only (pagemap bit 56). Those exclusive pages are exactly what the
 * kernel frees when the process exits, page tables aside.
 */
#ifndef PROCMEM_PAGEMAP_H
#define PROCMEM_PAGEMAP_H

#include "linux/dsm.h"
#include "linux/procfs.h"

/* pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst) */
#define PM_ENTRY_PRESENT	(UINT64_C(1) << 63)
#define PM_ENTRY_SWAPPED	(UINT64_C(1) << 62)
#define PM_ENTRY_FILE		(UINT64_C(1) << 61)	/* file page or shared anon */
#define PM_ENTRY_EXCLUSIVE	(UINT64_C(1) << 56)	/* mapped by this process only */

/*
 * Whether a mapping can hold anonymous pages worth reading: private,
 * user-space, and not file-backed program text. PROT_NONE reservations are
 * skipped too unless a PAGEMAP_SCAN will skip their holes cheaply.
 */
extern int	pagemap_vma_wanted(const procfs_vma *vma, int have_scan);

/*
 * What holds a process's exclusive anonymous pages, by the mapping they are
 * in: the parts add up to pagemap_anon.exclusive.
 */
typedef enum pagemap_part
{
	PAGEMAP_HEAP = 0,			/* [heap]: malloc's main arena (palloc'd memory) */
	PAGEMAP_MMAP,				/* other anonymous mappings: large allocations,
								 * JIT-compiled code, and pages whose mapping
								 * changed while being read */
	PAGEMAP_STACK,				/* [stack] */
	PAGEMAP_POSTGRES,			/* the postgres executable's data and bss:
								 * copies of the postmaster's pages */
	PAGEMAP_JIT,				/* libLLVM and llvmjit.so: their data and bss,
								 * relocated when JIT was first used */
	PAGEMAP_LIBRARIES,			/* every other library's data and bss */
	PAGEMAP_NPARTS
} pagemap_part;

/* Where a process's heap, stack and executable are, to name its parts */
typedef struct pagemap_hints
{
	uint64_t	start_brk;		/* /proc/<pid>/stat; 0 if unknown */
	uint64_t	start_stack;
	uint64_t	exe_ino;		/* the executable's inode; 0 if unknown */
	uint64_t	exe_dev;		/* and its device, as procfs_vma.dev */
	/* the DSM segments there are (learned as met): those it maps go into *dsm_mapped */
	dsm_table  *dsm;			/* NULL: not looked for */
	dsm_mapped *dsm_mapped;
} pagemap_hints;

/* Anonymous memory of one process, in bytes. */
typedef struct pagemap_anon
{
	int64_t		exclusive;		/* present, anonymous, mapped here only */
	int64_t		shared;			/* present, anonymous, also mapped elsewhere */
	int64_t		part[PAGEMAP_NPARTS];	/* exclusive, by what holds it */
	int64_t		mappings;		/* every mapping, shared ones included */
	int64_t		anon_mappings;	/* private mappings holding anonymous pages */
	int			used_scan;		/* PAGEMAP_SCAN found the present ranges */
	int			used_query;		/* PROCMAP_QUERY listed the mappings */
	int			failed_file;	/* on failure: 0 maps, 1 pagemap */
} pagemap_anon;

/* Adds the anonymous pages among n pagemap entries to *exclusive and *shared. */
extern void pagemap_count_entries(const uint64_t *entries, size_t n, int64_t page_size,
								  int64_t *exclusive, int64_t *shared);

/* Flags for pagemap_read_anon(): turn off a kernel interface (tests, bugs). */
#define PAGEMAP_NO_SCAN				0x01	/* Linux >= 6.7 */
#define PAGEMAP_NO_PROCMAP_QUERY	0x02	/* Linux >= 6.11 */

/*
 * A process's open pagemap file and the first failure met while reading its
 * memory, for the readers (pagemap.c, pagetables.c): once one read failed,
 * the others are skipped and the reader returns that failure.
 */
typedef struct pagemap_file
{
	int			fd;
	int64_t		page_size;
	procfs_result res;			/* PROCFS_OK until the first failure */
	int			failed_file;	/* on failure: 0 maps, 1 pagemap */
} pagemap_file;

/* Opens /proc/<pid>/pagemap; returns pf->res (a failure of file 1). */
extern procfs_result pagemap_open(pagemap_file *pf, pid_t pid);
extern void pagemap_close(pagemap_file *pf);

/* Notes a failure of file (0 maps, 1 pagemap), unless one came first. */
extern void pagemap_fail(pagemap_file *pf, procfs_result res, int file);

/*
 * The end of user address space when the kernel answers PAGEMAP_SCAN on
 * this open pagemap file (Linux >= 6.7), else 0.
 */
extern uint64_t pagemap_scan_top(const pagemap_file *pf);

/*
 * The two ways of reading a pagemap file, shared by the readers: every
 * entry of [start, end), passed to fn in chunks (first_page is the page
 * number of entries[0]); or PAGEMAP_SCAN with arg as pagemap_scan_init()
 * and the caller set it up, each batch of regions passed to fn, until the
 * range is walked (or, with arg->max_pages, until pages were found). fn
 * returns nonzero to stop. Nothing is read after a failure; a failure is
 * noted (PROCFS_GONE when the process has no memory any more).
 */
struct pm_scan_arg_abi;
struct pm_page_region;
typedef int (*pagemap_entries_fn) (void *arg, uint64_t first_page,
								   const uint64_t *entries, size_t n);
typedef int (*pagemap_regions_fn) (void *arg, const struct pm_page_region *regions, int n);
extern void pagemap_read_entries(pagemap_file *pf, uint64_t start, uint64_t end,
								 pagemap_entries_fn fn, void *arg);
extern void pagemap_scan(pagemap_file *pf, struct pm_scan_arg_abi *arg,
						 pagemap_regions_fn fn, void *fn_arg);

/* A PAGEMAP_SCAN of [start, end) answering in regions[0..nregions); no filter yet */
extern void pagemap_scan_init(struct pm_scan_arg_abi *arg, uint64_t start, uint64_t end,
							  struct pm_page_region *regions, size_t nregions);

/*
 * Reads a process's anonymous memory, in one pass over its mappings: the
 * pages, what holds the exclusive ones (hints may be NULL: then heap and
 * stack count as mmap, the executable as a library), and the mappings'
 * counts. On PROCFS_UNREADABLE, failed_file says which file could not be
 * read. A process that exits while being read gives PROCFS_GONE (pagemap
 * reads come back empty).
 */
extern procfs_result pagemap_read_anon(pid_t pid, unsigned flags, const pagemap_hints *hints,
									   pagemap_anon *anon);

#endif							/* PROCMEM_PAGEMAP_H */
