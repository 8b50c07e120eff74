/*
 * pagetables.c
 *		A process's page tables as they would be with the main shared memory
 *		segment in huge pages (no PostgreSQL headers); see pagetables.h.
 */
#include "linux/pagetables.h"

#include <string.h>
#include <unistd.h>

#include "linux/pagemap.h"
#include "linux/pagemap_abi.h"

/* populated ranges returned per PAGEMAP_SCAN call */
#define REGIONS_PER_SCAN	256

/* One level of the tables: how many of its pages are in use. */
typedef struct level
{
	int			shift;			/* the address range one page maps: 1 << shift */
	int64_t		pages;
	uint64_t	last;			/* the last range counted: ranges come in order */
	int			any;
} level;

typedef struct tables_reader
{
	pagemap_file pm;
	uint64_t	seg_start;
	uint64_t	seg_end;
	int64_t		seg_resident;
	level		pte;
	level		pmd;
	level		pud;
} tables_reader;

/* Counts the ranges of this level that [start, end) enters for the first time. */
static void
level_add(level *l, uint64_t start, uint64_t end)
{
	uint64_t	first = start >> l->shift;
	uint64_t	last = (end - 1) >> l->shift;

	if (l->any && first <= l->last)
		first = l->last + 1;
	if (first > last)
		return;
	l->pages += (int64_t) (last - first + 1);
	l->last = last;
	l->any = 1;
}

/* [start, end) holds pages; outside the segment they need PTE pages too. */
static void
in_use(tables_reader *r, uint64_t start, uint64_t end, int outside)
{
	if (end <= start)
		return;
	if (outside)
		level_add(&r->pte, start, end);
	level_add(&r->pmd, start, end);
	level_add(&r->pud, start, end);
}

/* Which part of the address space a batch belongs to: for the callbacks. */
typedef struct tables_batch
{
	tables_reader *r;
	int			outside;
} tables_batch;

/*
 * A file's huge page mapped whole by its PMD entry (a shared library's text
 * in the page cache's large folios, shmem, hugetlb) has no PTE page for its
 * range. An anonymous one has: the kernel keeps one deposited for the day
 * it splits the page, and VmPTE counts it. (A private anonymous hugetlb
 * page has none, but PAGEMAP_SCAN does not tell it from those: counted as
 * one, docs/limitations.md.)
 */
#define NO_PTE_PAGE (PM_PAGE_IS_HUGE | PM_PAGE_IS_FILE)

static int
regions_in_use(void *arg, const struct pm_page_region *regions, int n)
{
	tables_batch *b = arg;

	for (int i = 0; i < n; i++)
		in_use(b->r, regions[i].start, regions[i].end,
			   b->outside && (regions[i].categories & NO_PTE_PAGE) != NO_PTE_PAGE);
	return 0;
}

/*
 * PAGEMAP_SCAN over [start, end) for present or swapped pages. With
 * first_only, stops at the first page (is this range in use at all?).
 */
static void
scan(tables_reader *r, uint64_t start, uint64_t end, int first_only, int outside)
{
	struct pm_page_region regions[REGIONS_PER_SCAN];
	struct pm_scan_arg_abi arg;
	tables_batch b = {r, outside};

	pagemap_scan_init(&arg, start, end, regions, first_only ? 1 : REGIONS_PER_SCAN);
	arg.max_pages = first_only ? 1 : 0;
	arg.category_anyof_mask = PM_PAGE_IS_PRESENT | PM_PAGE_IS_SWAPPED;
	arg.return_mask = PM_PAGE_IS_PRESENT | PM_PAGE_IS_SWAPPED | NO_PTE_PAGE;
	pagemap_scan(&r->pm, &arg, regions_in_use, &b);
}

static int
entries_in_use(void *arg, uint64_t first_page, const uint64_t *entries, size_t n)
{
	tables_reader *r = arg;
	uint64_t	ps = (uint64_t) r->pm.page_size;

	for (size_t i = 0; i < n; i++)
	{
		uint64_t	addr = (first_page + i) * ps;
		uint64_t	next;

		if (!(entries[i] & (PM_ENTRY_PRESENT | PM_ENTRY_SWAPPED)))
			continue;
		in_use(r, addr, addr + ps, 1);
		/* the rest of this PTE page's range adds nothing */
		next = ((addr >> r->pte.shift) + 1) << r->pte.shift;
		i = (size_t) (next / ps - first_page) - 1;
	}
	return 0;
}

/*
 * Without PAGEMAP_SCAN, the segment's 1 GB ranges in use are a guess (see
 * pagetables.h): asking each would read 2 MB of pagemap per GB untouched.
 */
static void
guess_segment(tables_reader *r, uint64_t start, uint64_t end)
{
	int			shift = r->pmd.shift;
	uint64_t	first = start >> shift;
	uint64_t	last = (end - 1) >> shift;
	uint64_t	filled;

	if (r->seg_resident <= 0)
		return;
	filled = (((uint64_t) r->seg_resident - 1) >> shift) + 1;
	if (filled + 2 >= last - first + 1)
		in_use(r, start, end, 0);
	else
	{
		in_use(r, start, (first + filled + 1) << shift, 0);
		in_use(r, last << shift, end, 0);
	}
}

static void
maps_vma(void *arg, const procfs_vma *vma)
{
	tables_reader *r = arg;

	if (r->pm.res != PROCFS_OK)
		return;
	if (vma->start >> 63)
		return;					/* [vsyscall]: kernel address space */
	if (vma->start < r->seg_end && vma->end > r->seg_start)
		guess_segment(r, vma->start > r->seg_start ? vma->start : r->seg_start,
					  vma->end < r->seg_end ? vma->end : r->seg_end);
	else
		/* every pagemap entry; PROT_NONE too: mprotect keeps pages */
		pagemap_read_entries(&r->pm, vma->start, vma->end, entries_in_use, r);
}

static int
log2_of(uint64_t v)
{
	int			n = 0;

	while (v > 1)
	{
		v >>= 1;
		n++;
	}
	return n;
}

procfs_result
pagetables_read(pid_t pid, unsigned flags, uint64_t seg_start, uint64_t seg_end,
				int64_t seg_resident, pagetables_estimate *t)
{
	tables_reader r;
	uint64_t	top = 0;
	int			bits;

	memset(t, 0, sizeof(*t));
	memset(&r, 0, sizeof(r));
	if (pagemap_open(&r.pm, pid) != PROCFS_OK)
	{
		t->failed_file = r.pm.failed_file;
		return r.pm.res;
	}
	r.seg_start = seg_start;
	r.seg_end = seg_end > seg_start ? seg_end : seg_start;
	r.seg_resident = seg_resident;
	/* a table is a page of 8-byte entries: 4 kB pages give 2 MB, 1 GB, 512 GB */
	bits = log2_of((uint64_t) r.pm.page_size / 8);
	r.pte.shift = log2_of((uint64_t) r.pm.page_size) + bits;
	r.pmd.shift = r.pte.shift + bits;
	r.pud.shift = r.pmd.shift + bits;

	if (!(flags & PAGEMAP_NO_SCAN))
		top = pagemap_scan_top(&r.pm);
	if (top != 0)
	{
		t->used_scan = 1;
		if (r.seg_end > r.seg_start && r.seg_end <= top)
		{
			scan(&r, 0, r.seg_start, 0, 1);
			for (uint64_t g = r.seg_start >> r.pmd.shift;
				 g <= (r.seg_end - 1) >> r.pmd.shift && r.pm.res == PROCFS_OK; g++)
			{
				uint64_t	lo = g << r.pmd.shift;
				uint64_t	hi = (g + 1) << r.pmd.shift;

				scan(&r, lo > r.seg_start ? lo : r.seg_start,
					 hi < r.seg_end ? hi : r.seg_end, 1, 0);
			}
			scan(&r, r.seg_end, top, 0, 1);
		}
		else
			pagemap_fail(&r.pm, PROCFS_UNREADABLE, 1);	/* no segment to leave out */
	}
	else
	{
		procfs_result res = procfs_read_maps(pid, maps_vma, &r);
		uint64_t	entry;

		if (res != PROCFS_OK)
			pagemap_fail(&r.pm, res, 0);
		/* a process whose memory is gone reads an empty maps file: not "none" */
		else if (pread(r.pm.fd, &entry, sizeof(entry), 0) < (ssize_t) sizeof(entry))
			pagemap_fail(&r.pm, PROCFS_GONE, 1);
	}
	pagemap_close(&r.pm);
	t->pte_pages = r.pte.pages;
	t->pmd_pages = r.pmd.pages;
	t->pud_pages = r.pud.pages;
	t->bytes = (t->pte_pages + t->pmd_pages + t->pud_pages) * r.pm.page_size;
	t->failed_file = r.pm.failed_file;
	return r.pm.res;
}
