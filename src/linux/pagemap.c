/*
 * pagemap.c
 *		A process's anonymous memory from /proc/<pid>/pagemap (no PostgreSQL
 *		headers).
 *
 * Two optional kernel interfaces make it cheaper, and each has a fallback:
 * PROCMAP_QUERY (Linux >= 6.11) lists mappings without formatting and
 * parsing /proc/<pid>/maps text; PAGEMAP_SCAN (Linux >= 6.7) returns only
 * the present anonymous ranges of a mapping, so holes and reserved regions
 * are skipped in the kernel instead of being read 8 bytes per page.
 */
#include "linux/pagemap.h"
#include "linux/pagemap_abi.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* pagemap entries read per pread: 32 kB, 16 MB of address space */
#define ENTRIES_PER_READ	4096
/* regions returned per PAGEMAP_SCAN call */
#define REGIONS_PER_SCAN	256
/*
 * Pages a PAGEMAP_SCAN call may return before it stops (its max_pages), as
 * a pread covers 4096 entries: the kernel holds the process's memory
 * (mmget) for a call's length, and a process it kills meanwhile (the OOM
 * killer) gives its memory back only when the call ends; until then the
 * OOM killer may take another process, the postmaster included. Under
 * memory pressure the sampler reads the process that is growing four
 * times a second. Stretches of address space with nothing in them cost a
 * call nothing: the bound is on pages, not on address space.
 */
#define SCAN_PAGES			4096
/*
 * A run of mappings this long (in pages) or shorter is read whole rather
 * than scanned: a scan and the read of what it found cost more than reading
 * 32 kB of entries (a library's data and bss, a small heap).
 */
#define SCAN_ABOVE			ENTRIES_PER_READ
/* regions this close (in pages) share one pread: 4 kB of entries costs less than a syscall */
#define COALESCE_GAP		512

int
pagemap_vma_wanted(const procfs_vma *vma, int have_scan)
{
	if (vma->shared)
		return 0;				/* shared_buffers, DSM: never walked */
	if (vma->start >> 63)
		return 0;				/* [vsyscall]: kernel address space */
	if (vma->inode != 0 && vma->executable && !vma->writable)
		return 0;				/* program text: page cache, no anon pages */
	if (!have_scan && !vma->readable && !vma->writable && !vma->executable)
		return 0;				/* PROT_NONE reservation: bound the cost */
	return 1;
}

void
pagemap_count_entries(const uint64_t *entries, size_t n, int64_t page_size,
					  int64_t *exclusive, int64_t *shared)
{
	for (size_t i = 0; i < n; i++)
	{
		uint64_t	e = entries[i];

		if (!(e & PM_ENTRY_PRESENT) || (e & PM_ENTRY_FILE))
			continue;
		if (e & PM_ENTRY_EXCLUSIVE)
			*exclusive += page_size;
		else
			*shared += page_size;
	}
}

/* Reading */

/* Reading, for this file's and pagetables.c's readers */

procfs_result
pagemap_open(pagemap_file *pf, pid_t pid)
{
	char		path[64];

	memset(pf, 0, sizeof(*pf));
	pf->res = PROCFS_OK;
	pf->page_size = sysconf(_SC_PAGESIZE);
	if (pf->page_size <= 0)
		pf->page_size = 4096;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int) pid);
	pf->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (pf->fd < 0)
		pagemap_fail(pf, procfs_errno_result(errno), 1);
	return pf->res;
}

void
pagemap_close(pagemap_file *pf)
{
	if (pf->fd >= 0)
		close(pf->fd);
	pf->fd = -1;
}

void
pagemap_fail(pagemap_file *pf, procfs_result res, int file)
{
	if (pf->res == PROCFS_OK && res != PROCFS_OK)
	{
		pf->res = res;
		pf->failed_file = file;
	}
}

static procfs_result
read_entries(const pagemap_file *pf, uint64_t start, uint64_t end,
			 pagemap_entries_fn fn, void *arg)
{
	uint64_t	buf[ENTRIES_PER_READ];
	uint64_t	page = start / (uint64_t) pf->page_size;
	uint64_t	last = end / (uint64_t) pf->page_size;

	while (page < last)
	{
		uint64_t	want = last - page < ENTRIES_PER_READ ? last - page : ENTRIES_PER_READ;
		ssize_t		got = pread(pf->fd, buf, want * sizeof(uint64_t),
								(off_t) (page * sizeof(uint64_t)));
		size_t		n;

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return procfs_errno_result(errno);
		if (got < (ssize_t) sizeof(uint64_t))
			return PROCFS_GONE;	/* empty: the process has no mm */
		n = (size_t) got / sizeof(uint64_t);
		if (fn(arg, page, buf, n))
			break;
		page += n;
	}
	return PROCFS_OK;
}

void
pagemap_read_entries(pagemap_file *pf, uint64_t start, uint64_t end,
					 pagemap_entries_fn fn, void *arg)
{
	if (pf->res == PROCFS_OK)
		pagemap_fail(pf, read_entries(pf, start, end, fn, arg), 1);
}

static procfs_result
scan(const pagemap_file *pf, struct pm_scan_arg_abi *arg, pagemap_regions_fn fn, void *fn_arg)
{
	uint64_t	end = arg->end;
	uint64_t	wanted = arg->max_pages;	/* the caller's: 0 for all */
	procfs_result res = PROCFS_OK;

	while (arg->start < end)
	{
		int			n;

		if (wanted == 0)
			arg->max_pages = SCAN_PAGES;
		n = ioctl(pf->fd, PM_IOCTL_PAGEMAP_SCAN, arg);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
		{
			res = procfs_errno_result(errno);
			break;
		}
		if (n > (int) arg->vec_len)
			n = (int) arg->vec_len;
		if (fn(fn_arg, (const struct pm_page_region *) (uintptr_t) arg->vec, n))
			break;
		if ((wanted && n > 0) || arg->walk_end >= end)
			break;
		if (arg->walk_end <= arg->start)
		{
			res = PROCFS_UNREADABLE;	/* no progress: do not spin */
			break;
		}
		arg->start = arg->walk_end;
	}
	arg->max_pages = wanted;
	return res;
}

void
pagemap_scan(pagemap_file *pf, struct pm_scan_arg_abi *arg, pagemap_regions_fn fn, void *fn_arg)
{
	if (pf->res == PROCFS_OK)
		pagemap_fail(pf, scan(pf, arg, fn, fn_arg), 1);
}

void
pagemap_scan_init(struct pm_scan_arg_abi *arg, uint64_t start, uint64_t end,
				  struct pm_page_region *regions, size_t nregions)
{
	/* the kernel fills them; zeroed so memory checkers that do not know the
	 * ioctl (valgrind) see defined bytes */
	if (nregions > 0)
		memset(regions, 0, nregions * sizeof(*regions));
	memset(arg, 0, sizeof(*arg));
	arg->size = sizeof(*arg);
	arg->start = start;
	arg->end = end;
	arg->vec = (uint64_t) (uintptr_t) regions;
	arg->vec_len = nregions;
}

/* The anonymous memory reader */

/*
 * A private mapping the walk met, in address order, with the anonymous
 * pages counted in it. part is known when its name was (maps text), else
 * PART_UNNAMED until name_parts() looks.
 */
#define PART_UNNAMED (-1)

typedef struct vma_slot
{
	uint64_t	start;
	uint64_t	end;
	uint64_t	inode;
	uint64_t	dev;			/* with the inode, names a file */
	int64_t		exclusive;
	int64_t		shared;
	int			part;
} vma_slot;

typedef struct anon_reader
{
	pid_t		pid;
	pagemap_file pm;
	int			have_scan;
	int			maps_fd;		/* PROCMAP_QUERY's, kept open to ask names */
	uint64_t	run_start;		/* with PAGEMAP_SCAN: the mappings to scan next */
	uint64_t	run_end;
	procfs_vma	pending;		/* a read-only file mapping: RELRO or not? */
	int			pending_part;
	bool		have_pending;
	const pagemap_hints *hints;
	pagemap_anon *anon;
	vma_slot   *slots;			/* the private mappings, in address order */
	size_t		nslots;
	int64_t		lost_exclusive; /* counted outside every known mapping */
	int64_t		lost_shared;
} anon_reader;

/*
 * The slots, kept from one process to the next: a backend has a few hundred
 * mappings, and this is plain C with no memory context to allocate from.
 */
static vma_slot *slot_buf;
static size_t slot_cap;

static int
add_slot(anon_reader *r, const procfs_vma *vma, int part)
{
	vma_slot   *v;

	if (r->nslots == slot_cap)
	{
		size_t		cap = slot_cap ? 2 * slot_cap : 512;
		vma_slot   *grown = realloc(slot_buf, cap * sizeof(vma_slot));

		if (grown == NULL)
		{
			pagemap_fail(&r->pm, PROCFS_UNREADABLE, 0);
			return -1;
		}
		slot_buf = grown;
		slot_cap = cap;
	}
	r->slots = slot_buf;
	v = &r->slots[r->nslots++];
	v->start = vma->start;
	v->end = vma->end;
	v->inode = vma->inode;
	v->dev = vma->dev;
	v->exclusive = v->shared = 0;
	v->part = part;
	return 0;
}

/* The first slot ending above addr, or nslots */
static size_t
slot_at(const anon_reader *r, uint64_t addr)
{
	size_t		lo = 0, hi = r->nslots;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (r->slots[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Counts n entries from page first_page on into the mappings they fall in
 * (a PAGEMAP_SCAN region can span adjacent mappings); pages outside every
 * mapping the walk met (one created meanwhile) still count, as mmap.
 */
static void
count_into_slots(anon_reader *r, uint64_t first_page, const uint64_t *entries, size_t n)
{
	uint64_t	ps = (uint64_t) r->pm.page_size;
	uint64_t	addr = first_page * ps;

	while (n > 0)
	{
		size_t		k = slot_at(r, addr);
		uint64_t	limit = UINT64_MAX;
		size_t		take;
		int64_t    *excl, *shared;

		if (k < r->nslots && r->slots[k].start <= addr)
		{
			limit = r->slots[k].end;
			excl = &r->slots[k].exclusive;
			shared = &r->slots[k].shared;
		}
		else
		{
			if (k < r->nslots)
				limit = r->slots[k].start;
			excl = &r->lost_exclusive;
			shared = &r->lost_shared;
		}
		take = (limit - addr) / ps < n ? (size_t) ((limit - addr) / ps) : n;
		if (take == 0)
			take = 1;
		pagemap_count_entries(entries, take, r->pm.page_size, excl, shared);
		entries += take;
		n -= take;
		addr += take * ps;
	}
}

static int
count_entries(void *arg, uint64_t first_page, const uint64_t *entries, size_t n)
{
	count_into_slots(arg, first_page, entries, n);
	return 0;
}

/* Reads the pagemap entries of [start, end) and counts them. */
static void
count_range(anon_reader *r, uint64_t start, uint64_t end)
{
	pagemap_read_entries(&r->pm, start, end, count_entries, r);
}

/*
 * Counts the pagemap entries of regions[0..n), reading spans that cover
 * several nearby regions with one pread but counting only inside regions
 * (the gaps hold zero-page mappings the scan left out on purpose).
 */
static int
count_regions(void *arg, const struct pm_page_region *regions, int n)
{
	anon_reader *r = arg;
	uint64_t	buf[ENTRIES_PER_READ];
	uint64_t	ps = (uint64_t) r->pm.page_size;
	int			i = 0;

	while (i < n && r->pm.res == PROCFS_OK)
	{
		uint64_t	first = regions[i].start / ps;
		uint64_t	last;
		int			j = i;
		ssize_t		got;

		/* extend the span while the next region starts close by and fits */
		while (j + 1 < n && regions[j + 1].start / ps - regions[j].end / ps <= COALESCE_GAP &&
			   regions[j + 1].end / ps - first <= ENTRIES_PER_READ)
			j++;
		last = regions[j].end / ps;
		if (last - first > ENTRIES_PER_READ)
		{
			/* one large region: the plain reader splits it */
			count_range(r, regions[i].start, regions[i].end);
			i++;
			continue;
		}
		got = pread(r->pm.fd, buf, (last - first) * sizeof(uint64_t),
					(off_t) (first * sizeof(uint64_t)));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < (ssize_t) ((last - first) * sizeof(uint64_t)))
		{
			/* short or failed: the careful reader decides what it means */
			for (; i <= j; i++)
				count_range(r, regions[i].start, regions[i].end);
			continue;
		}
		for (; i <= j; i++)
			count_into_slots(r, regions[i].start / ps, buf + (regions[i].start / ps - first),
							 (regions[i].end - regions[i].start) / ps);
	}
	return r->pm.res != PROCFS_OK;
}

/*
 * PAGEMAP_SCAN over [start, end): the kernel returns the ranges of present,
 * anonymous, non-zero-page pages (skipping unmapped holes, file pages and
 * the zero page itself); only those are read for bit 56. The range must hold
 * no shared mapping: walking shared_buffers' page tables is the cost avoided.
 */
static void
scan_range(anon_reader *r, uint64_t start, uint64_t end)
{
	struct pm_page_region regions[REGIONS_PER_SCAN];
	struct pm_scan_arg_abi arg;

	pagemap_scan_init(&arg, start, end, regions, REGIONS_PER_SCAN);
	arg.category_inverted = PM_PAGE_IS_FILE | PM_PAGE_IS_PFNZERO;
	arg.category_mask = PM_PAGE_IS_PRESENT | PM_PAGE_IS_FILE | PM_PAGE_IS_PFNZERO;
	arg.return_mask = PM_PAGE_IS_PRESENT;
	pagemap_scan(&r->pm, &arg, count_regions, r);
}

/* Whether a file is the executable the hints name */
static bool
is_exe(const pagemap_hints *h, uint64_t inode, uint64_t dev)
{
	return h && h->exe_ino && inode == h->exe_ino && dev == h->exe_dev;
}

/* What a mapping's name says it holds; PART_UNNAMED for an anonymous one */
static int
part_of_path(const char *path, size_t len, uint64_t inode, uint64_t dev,
			 const pagemap_hints *h)
{
	if (len == 6 && memcmp(path, "[heap]", 6) == 0)
		return PAGEMAP_HEAP;
	if (len >= 6 && memcmp(path, "[stack", 6) == 0)
		return PAGEMAP_STACK;
	if (inode == 0 || len == 0 || path[0] != '/')
		return PART_UNNAMED;
	if (is_exe(h, inode, dev))
		return PAGEMAP_POSTGRES;
	if (memmem(path, len, "libLLVM", 7) || memmem(path, len, "/llvmjit.so", 11))
		return PAGEMAP_JIT;
	return PAGEMAP_LIBRARIES;
}

/*
 * With PAGEMAP_SCAN, one scan covers a run of mappings that can hold
 * anonymous pages, unmapped holes between them included (the kernel skips
 * those): a run ends at a mapping that cannot, so that neither program text
 * (thousands of file pages) nor shared memory has its page tables walked.
 */
static void
end_run(anon_reader *r)
{
	uint64_t	pages = (r->run_end - r->run_start) / (uint64_t) r->pm.page_size;

	if (r->run_end <= r->run_start || r->pm.res != PROCFS_OK)
		;
	else if (pages <= SCAN_ABOVE)
		count_range(r, r->run_start, r->run_end);	/* cheaper than scan + read */
	else
		scan_range(r, r->run_start, r->run_end);
	r->run_start = r->run_end = 0;
}

/* A mapping's pages are read: now, or with PAGEMAP_SCAN when its run ends */
static void
read_vma(anon_reader *r, const procfs_vma *vma, int part)
{
	if (add_slot(r, vma, part) != 0)
		return;
	if (!r->have_scan)
		count_range(r, vma->start, vma->end);
	else
	{
		if (r->run_end == 0)
			r->run_start = vma->start;
		r->run_end = vma->end;
	}
}

/*
 * A read-only private mapping of a file holds anonymous pages only where
 * the loader wrote before making it read-only: a library's RELRO segment,
 * which is followed at once by its writable data (or, in a library without
 * a data segment, its bss). Its other read-only mappings (rodata:
 * megabytes of file pages) are not worth walking.
 */
static bool
is_relro(const procfs_vma *ro, const procfs_vma *next)
{
	return next && next->start == ro->end && next->writable && !next->shared &&
		((next->inode == ro->inode && next->dev == ro->dev) || next->inode == 0);
}

static bool
read_only_file(const procfs_vma *vma)
{
	return vma->inode != 0 && !vma->shared && !vma->writable && !vma->executable &&
		vma->readable;
}

static int	query_vma(int fd, uint64_t addr, struct procmap_query_abi *q, char *name, size_t name_size);

/*
 * A shared mapping: the DSM segment it maps, if any; a segment not yet
 * learned is learned by the name the maps text gave, or PROCMAP_QUERY gives
 * when asked (once a walk for each segment: dsm.h)
 */
static void
meet_dsm(anon_reader *r, const procfs_vma *vma)
{
	dsm_table  *t = r->hints->dsm;

	if (dsm_table_wants_name(t, vma))
	{
		struct procmap_query_abi q;
		char		name[256];

		if (vma->path_len > 0)
			dsm_table_learn(t, vma, vma->path, vma->path_len);
		else if (r->maps_fd >= 0 && query_vma(r->maps_fd, vma->start, &q, name, sizeof(name)) == 0 &&
				 q.vma_start == vma->start && q.inode == vma->inode && q.vma_name_size > 0)
			dsm_table_learn(t, vma, name, strnlen(name, sizeof(name)));
	}
	dsm_mapped_meet(r->hints->dsm_mapped, t, vma);
}

/*
 * Meets one mapping, in address order (NULL: the end): every one is
 * counted; a private one that can hold anonymous pages has them read. A
 * read-only file mapping waits for the next one to say if it is a RELRO.
 */
static void
meet_vma(anon_reader *r, const procfs_vma *vma, int part)
{
	if (r->pm.res != PROCFS_OK || (vma && (vma->start >> 63)))
		return;					/* [vsyscall]: kernel address space */
	if (r->have_pending)
	{
		r->have_pending = false;
		if (is_relro(&r->pending, vma))
			read_vma(r, &r->pending, r->pending_part);
		else
			end_run(r);
	}
	if (vma == NULL)
	{
		end_run(r);
		return;
	}
	r->anon->mappings++;
	if (vma->shared && r->hints && r->hints->dsm)
		meet_dsm(r, vma);
	if (read_only_file(vma))
	{
		r->pending = *vma;
		r->pending.path = NULL;	/* its part is known already, if at all */
		r->pending.path_len = 0;
		r->pending_part = part;
		r->have_pending = true;
	}
	else if (vma->shared || !pagemap_vma_wanted(vma, r->have_scan))
		end_run(r);
	else
		read_vma(r, vma, part);
}

/* The end of user address space, found once: PAGEMAP_SCAN refuses more. */
static uint64_t
user_space_end(int pagemap_fd, int64_t page_size)
{
	static uint64_t known;
	static const int bits[] = {57, 56, 52, 48, 47, 39};

	if (known)
		return known;
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
	{
		struct pm_scan_arg_abi arg;
		uint64_t	top = (UINT64_C(1) << bits[i]) - (uint64_t) page_size;

		pagemap_scan_init(&arg, top - (uint64_t) page_size, top, NULL, 0);
		arg.category_mask = PM_PAGE_IS_PRESENT;
		arg.return_mask = PM_PAGE_IS_PRESENT;
		if (ioctl(pagemap_fd, PM_IOCTL_PAGEMAP_SCAN, &arg) >= 0)
			return known = top;
	}
	return 0;
}

uint64_t
pagemap_scan_top(const pagemap_file *pf)
{
	static uint64_t answered;	/* the kernel has answered once: it has it */
	struct pm_page_region region;
	struct pm_scan_arg_abi arg;

	if (answered)
		return answered;
	/* does this kernel answer PAGEMAP_SCAN? ask about the empty page 0 */
	pagemap_scan_init(&arg, 0, (uint64_t) pf->page_size, &region, 1);
	arg.category_mask = PM_PAGE_IS_PRESENT;
	arg.return_mask = PM_PAGE_IS_PRESENT;
	if (ioctl(pf->fd, PM_IOCTL_PAGEMAP_SCAN, &arg) < 0)
		return 0;
	return answered = user_space_end(pf->fd, pf->page_size);
}

/* One PROCMAP_QUERY: the mapping covering addr or the next one; errno on failure */
static int
query_vma(int fd, uint64_t addr, struct procmap_query_abi *q, char *name, size_t name_size)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->query_flags = PM_QUERY_COVERING_OR_NEXT_VMA;
	q->query_addr = addr;
	if (name)
	{
		/* the kernel fills it; zeroed so that valgrind sees defined bytes */
		memset(name, 0, name_size);
		q->vma_name_addr = (uint64_t) (uintptr_t) name;
		q->vma_name_size = (uint32_t) name_size;
	}
	while (ioctl(fd, PM_IOCTL_PROCMAP_QUERY, q) < 0)
		if (errno != EINTR)
			return errno;
	return 0;
}

/*
 * Lists every mapping with PROCMAP_QUERY (without formatting the maps
 * text). Returns 0 when done (or failed: see r->pm.res), -1 when the kernel
 * does not have the ioctl. Leaves r->maps_fd open for name_parts().
 */
static int
query_vmas(anon_reader *r)
{
	char		path[64];
	struct procmap_query_abi q;
	uint64_t	addr = 0;
	int			first = 1;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int) r->pid);
	r->maps_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->maps_fd < 0)
	{
		pagemap_fail(&r->pm, procfs_errno_result(errno), 0);
		return 0;
	}
	for (;;)
	{
		procfs_vma	vma;
		int			err = query_vma(r->maps_fd, addr, &q, NULL, 0);

		if (err)
		{
			if (first && (err == ENOTTY || err == EINVAL || err == EOPNOTSUPP))
			{
				close(r->maps_fd);
				r->maps_fd = -1;
				return -1;		/* not this kernel: parse the text */
			}
			if (err != ENOENT)	/* ENOENT: no mapping past addr */
				pagemap_fail(&r->pm, procfs_errno_result(err), 0);
			else
				meet_vma(r, NULL, PART_UNNAMED);
			return 0;
		}
		first = 0;
		if (q.vma_end <= addr)
		{
			pagemap_fail(&r->pm, PROCFS_UNREADABLE, 0);	/* no progress: do not spin */
			return 0;
		}
		memset(&vma, 0, sizeof(vma));
		vma.start = q.vma_start;
		vma.end = q.vma_end;
		vma.readable = (q.vma_flags & PM_QUERY_VMA_READABLE) != 0;
		vma.writable = (q.vma_flags & PM_QUERY_VMA_WRITABLE) != 0;
		vma.executable = (q.vma_flags & PM_QUERY_VMA_EXECUTABLE) != 0;
		vma.shared = (q.vma_flags & PM_QUERY_VMA_SHARED) != 0;
		vma.inode = q.inode;
		vma.dev = ((uint64_t) q.dev_major << 32) | q.dev_minor;
		meet_vma(r, &vma, PART_UNNAMED);
		addr = q.vma_end;
		if (r->pm.res != PROCFS_OK)
			return 0;
	}
}

static void
maps_vma(void *arg, const procfs_vma *vma)
{
	anon_reader *r = arg;

	meet_vma(r, vma, part_of_path(vma->path, vma->path_len, vma->inode, vma->dev, r->hints));
}

/*
 * The parts of the files named so far, by device and inode: every process
 * of the server maps the same libraries, so a walk asks each name once.
 * (A file deleted and its inode reused by another library while the server
 * runs could be misnamed: only the part it counts under would be wrong.)
 */
#define NAMED_FILES 128

static struct
{
	uint64_t	dev;
	uint64_t	inode;
	int			part;
} named[NAMED_FILES];
static int	nnamed;

/*
 * The part of a file mapping PROCMAP_QUERY listed without its name: the
 * executable by its inode, else by its name, asked once per file and only
 * for files holding exclusive pages.
 */
static int
file_part(anon_reader *r, const vma_slot *v)
{
	struct procmap_query_abi q;
	char		name[4096];
	int			part = PAGEMAP_LIBRARIES;

	if (is_exe(r->hints, v->inode, v->dev))
		return PAGEMAP_POSTGRES;
	for (int i = 0; i < nnamed; i++)
		if (named[i].inode == v->inode && named[i].dev == v->dev)
			return named[i].part;
	if (r->maps_fd < 0 || query_vma(r->maps_fd, v->start, &q, name, sizeof(name)) != 0 ||
		q.vma_start != v->start || q.inode != v->inode || q.vma_name_size == 0)
		return PAGEMAP_LIBRARIES;	/* changed meanwhile: not remembered */
	part = part_of_path(name, strnlen(name, sizeof(name)), v->inode, v->dev, r->hints);
	if (part == PART_UNNAMED)
		part = PAGEMAP_LIBRARIES;
	if (nnamed < NAMED_FILES)
	{
		named[nnamed].dev = v->dev;
		named[nnamed].inode = v->inode;
		named[nnamed].part = part;
		nnamed++;
	}
	return part;
}

/*
 * Names the slots' parts and adds them up. An anonymous mapping right after
 * a file's is that file's bss, right after the heap's more heap; the heap
 * and stack are where /proc/<pid>/stat says (their names, when read from
 * the maps text).
 */
static void
name_parts(anon_reader *r)
{
	pagemap_anon *a = r->anon;
	int			prev_part = PART_UNNAMED;
	uint64_t	prev_end = 0;

	for (size_t k = 0; k < r->nslots; k++)
	{
		vma_slot   *v = &r->slots[k];
		int			part = v->part;

		if (v->exclusive + v->shared > 0)
			a->anon_mappings++;
		if (part == PART_UNNAMED && v->inode != 0 &&
			(v->exclusive > 0 ||
			 (k + 1 < r->nslots && v[1].inode == 0 && v[1].start == v->end && v[1].exclusive > 0)))
			part = file_part(r, v);
		else if (part == PART_UNNAMED && v->inode == 0)
		{
			const pagemap_hints *h = r->hints;

			if (h && h->start_brk && v->start <= h->start_brk && h->start_brk < v->end)
				part = PAGEMAP_HEAP;
			else if (h && h->start_stack && v->start <= h->start_stack && h->start_stack < v->end)
				part = PAGEMAP_STACK;
			else if (v->start == prev_end && prev_part != PART_UNNAMED)
				part = prev_part;	/* a file's bss, or the heap grown since fork */
			else
				part = PAGEMAP_MMAP;
		}
		if (part == PART_UNNAMED)
			part = v->inode ? PAGEMAP_LIBRARIES : PAGEMAP_MMAP;
		a->part[part] += v->exclusive;
		a->exclusive += v->exclusive;
		a->shared += v->shared;
		/*
		 * A file's mapping passes its part on to the bss right after it, the
		 * heap to the rest of the heap (what a child adds to the brk area
		 * after fork is a mapping of its own).
		 */
		prev_part = (v->inode || part == PAGEMAP_HEAP) ? part : PART_UNNAMED;
		prev_end = v->end;
	}
	a->part[PAGEMAP_MMAP] += r->lost_exclusive;
	a->exclusive += r->lost_exclusive;
	a->shared += r->lost_shared;
}

procfs_result
pagemap_read_anon(pid_t pid, unsigned flags, const pagemap_hints *hints, pagemap_anon *anon)
{
	anon_reader r;

	memset(anon, 0, sizeof(*anon));
	memset(&r, 0, sizeof(r));
	r.pid = pid;
	r.anon = anon;
	r.hints = hints;
	r.maps_fd = -1;
	if (pagemap_open(&r.pm, pid) != PROCFS_OK)
	{
		anon->failed_file = r.pm.failed_file;
		return r.pm.res;
	}
	r.have_scan = !(flags & PAGEMAP_NO_SCAN) && pagemap_scan_top(&r.pm) != 0;
	anon->used_scan = r.have_scan;

	if ((flags & PAGEMAP_NO_PROCMAP_QUERY) || query_vmas(&r) < 0)
	{
		procfs_result res = procfs_read_maps(pid, maps_vma, &r);

		if (res != PROCFS_OK)
			pagemap_fail(&r.pm, res, 0);
		else
			meet_vma(&r, NULL, PART_UNNAMED);
	}
	else
		anon->used_query = 1;
	if (r.pm.res == PROCFS_OK)
		name_parts(&r);
	if (r.maps_fd >= 0)
		close(r.maps_fd);
	pagemap_close(&r.pm);
	anon->failed_file = r.pm.failed_file;
	return r.pm.res;
}
