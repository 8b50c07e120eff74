/*
 * test_pagetables.c
 *		Unit tests of the page-table reader (TAP; run by `make unit`).
 *
 * A child maps a 3 GB shared "segment" (as the postmaster maps
 * shared_buffers) and private memory, touches known pages, and stops. Its
 * VmPTE must be the reader's page tables plus one PTE page per 2 MB range of
 * the segment it touched: that is the kernel's own count of what huge pages
 * would remove. Both paths (PAGEMAP_SCAN and the plain pagemap read) are
 * compared.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pagemap.h"
#include "pagetables.h"
#include "tap.h"

#define MB(n) ((uint64_t) (n) * 1024 * 1024)
#define SEGMENT MB(3072)

static int64_t
vm_pte(pid_t pid)
{
	char		path[64];
	char		line[256];
	FILE	   *f;
	long long	v = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "VmPTE:", 6) == 0)
			v = atoll(line + 6);
	fclose(f);
	return v * 1024;
}

/* A stopped child that touched `touch` pages, each in its own 2 MB range. */
static pid_t
child_with(char *segment, int touch)
{
	pid_t		child = fork();

	if (child == 0)
	{
		char	   *own = mmap(NULL, MB(6), PROT_READ | PROT_WRITE,
							   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (own == MAP_FAILED)
			_exit(1);
		madvise(own, MB(6), MADV_NOHUGEPAGE);
		memset(own, 1, MB(6));
		/* spread over the three 1 GB ranges the segment spans */
		for (int i = 0; i < touch; i++)
			segment[(uint64_t) i * (SEGMENT / (uint64_t) touch)] = 1;
		raise(SIGSTOP);
		_exit(0);
	}
	waitpid(child, NULL, WUNTRACED);
	return child;
}

static void
end_child(pid_t child)
{
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

static void
test_live(void)
{
	/* aligned to 1 GB, so that the segment spans exactly three ranges */
	char	   *reserve = mmap(NULL, SEGMENT + MB(1024), PROT_NONE,
							   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint64_t	start = ((uint64_t) (uintptr_t) reserve + MB(1024) - 1) & ~(MB(1024) - 1);
	char	   *segment = reserve == MAP_FAILED ? MAP_FAILED :
		mmap((void *) (uintptr_t) start, SEGMENT, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	int64_t		page = sysconf(_SC_PAGESIZE);
	pagetables_estimate t[2];
	procfs_result res[2];
	pid_t		child;
	int64_t		pte;

	if (segment == MAP_FAILED)
	{
		printf("Bail out! mmap of the segment failed\n");
		exit(1);
	}

	/* untouched segment: no table of it, on either path */
	child = child_with(segment, 0);
	pte = vm_pte(child);
	for (unsigned f = 0; f < 2; f++)
		res[f] = pagetables_read(child, f ? PAGEMAP_NO_SCAN : 0,
								 start, start + SEGMENT, 0, &t[f]);
	ok(res[0] == PROCFS_OK && res[1] == PROCFS_OK, "untouched: read on both paths");
	ok(t[0].bytes > 0 && t[0].bytes == pte,
	   "untouched: the tables counted are VmPTE (%lld kB = %lld kB)",
	   (long long) t[0].bytes / 1024, (long long) pte / 1024);
	ok(t[1].bytes == t[0].bytes && !t[1].used_scan,
	   "untouched: without PAGEMAP_SCAN the same (%lld kB)", (long long) t[1].bytes / 1024);
	ok((uint64_t) (t[0].pte_pages * page) >= MB(6) / 512, "untouched: the 6 MB touched privately need PTE pages");
	end_child(child);

	/* 24 pages of the segment touched, 24 ranges of 2 MB, every 1 GB range */
	child = child_with(segment, 24);
	pte = vm_pte(child);
	for (unsigned f = 0; f < 2; f++)
		res[f] = pagetables_read(child, f ? PAGEMAP_NO_SCAN : 0,
								 start, start + SEGMENT, 24 * page, &t[f]);
	ok(res[0] == PROCFS_OK && res[1] == PROCFS_OK, "touched: read on both paths");
	ok(t[0].bytes + 24 * page == pte,
	   "touched: VmPTE (%lld kB) = the tables counted (%lld kB) + the segment's 24 PTE pages",
	   (long long) pte / 1024, (long long) t[0].bytes / 1024);
	ok(t[1].bytes == t[0].bytes,
	   "touched: without PAGEMAP_SCAN the same, the segment's 1 GB ranges guessed from both ends");
	end_child(child);

	/* a pid that is gone */
	child = fork();
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	is_i64(pagetables_read(child, 0, start, start + SEGMENT, 0, &t[0]), PROCFS_GONE,
		   "a reaped pid is gone");
	munmap(reserve, SEGMENT + MB(1024));
}

int
main(void)
{
	test_live();
	return tap_done();
}
