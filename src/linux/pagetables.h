/*
 * pagetables.h
 *		What a process's page tables would be with the main shared memory
 *		segment in huge pages (no PostgreSQL headers).
 *
 * Page tables are pages (4 kB on x86-64): a PTE page maps 2 MB in small
 * pages, a PMD page maps 1 GB (each entry a PTE page or one 2 MB huge page),
 * a PUD page 512 GB; VmPTE counts them all. With the segment in 2 MB huge
 * pages its PTE pages are gone and its PMD entries point at the huge pages,
 * in the same PMD pages. What stays is: a PTE page per 2 MB range outside
 * the segment with a page in it (present or swapped; not for a file's huge
 * page mapped whole, which PAGEMAP_SCAN tells apart), a PMD page per 1 GB
 * range with a page in it, the segment included, and a PUD page per 512 GB
 * range. Measured with huge pages on, that sum is VmPTE to the page.
 */
#ifndef PROCMEM_PAGETABLES_H
#define PROCMEM_PAGETABLES_H

#include "linux/procfs.h"

typedef struct pagetables_estimate
{
	int64_t		pte_pages;		/* 2 MB ranges outside the segment in use */
	int64_t		pmd_pages;		/* 1 GB ranges in use, the segment's too */
	int64_t		pud_pages;		/* 512 GB ranges in use */
	int64_t		bytes;			/* their sum, in bytes */
	int			used_scan;		/* PAGEMAP_SCAN: exact; else see below */
	int			failed_file;	/* on failure: 0 maps, 1 pagemap */
} pagetables_estimate;

/*
 * Reads them for one process whose main segment is [seg_start, seg_end)
 * (the same addresses in every child of the postmaster). With PAGEMAP_SCAN
 * (Linux >= 6.7) the kernel returns the populated ranges outside the segment
 * and answers "any page in this 1 GB?" inside it, so the cost does not grow
 * with the segment. Without it, every page outside the segment is read from
 * pagemap, and the segment is taken to use the 1 GB ranges its resident
 * part fills plus both ends (where PostgreSQL's own structures lie), never
 * more than it spans: seg_resident is the process's RssShmem.
 * flags: PAGEMAP_NO_SCAN (pagemap.h).
 */
extern procfs_result pagetables_read(pid_t pid, unsigned flags,
									 uint64_t seg_start, uint64_t seg_end,
									 int64_t seg_resident, pagetables_estimate *t);

#endif							/* PROCMEM_PAGETABLES_H */
