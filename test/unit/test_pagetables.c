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
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/pagemap.h"
#include "linux/pagetables.h"
#include "procfile.h"
#include "tap.h"

#define MB(n) ((uint64_t) (n) * 1024 * 1024)
#define SEGMENT MB(3072)

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

/*
 * A stopped child with 4 MB in huge pages mapped whole, when the kernel
 * gives them: private anonymous memory (madvise), or with file, a file of
 * its own mapped read-only (the page cache's large folios, as a shared
 * library's text gets them on newer kernels). 2 MB aligned, touched whole.
 */
static pid_t
child_with_huge(const char *file)
{
	pid_t		child;
	int			fd = -1;

	if (file)
	{
		char	   *data = malloc(MB(4));

		fd = open(file, O_CREAT | O_TRUNC | O_RDWR, 0600);
		if (fd < 0 || data == NULL || (memset(data, 7, MB(4)), write(fd, data, MB(4))) != (ssize_t) MB(4))
		{
			printf("Bail out! could not write %s\n", file);
			exit(1);
		}
		free(data);
		unlink(file);
	}
	child = fork();
	if (child == 0)
	{
		char	   *map = mmap(NULL, MB(8), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char	   *at;
		volatile char sum = 0;

		if (map == MAP_FAILED)
			_exit(1);
		at = (char *) (((uintptr_t) map + MB(2) - 1) & ~(uintptr_t) (MB(2) - 1));
		at = fd >= 0 ? mmap(at, MB(4), PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0) :
			mmap(at, MB(4), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (at == MAP_FAILED)
			_exit(1);
		if (fd < 0)
		{
			madvise(at, MB(4), MADV_HUGEPAGE);
			memset(at, 1, MB(4));
		}
		for (uint64_t i = 0; i < MB(4); i += 4096)
			sum += at[i];
		raise(SIGSTOP);
		_exit(0);
	}
	if (fd >= 0)
		close(fd);
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
	procfs_result res[2] = {PROCFS_UNREADABLE, PROCFS_UNREADABLE};	/* not read */
	pid_t		child;
	int64_t		pte;
	/* the pread path (f = 1) too, but under ASan */
	unsigned	paths = pread_path_too_slow() ? 1 : 2;
	int64_t		huge;

	if (segment == MAP_FAILED)
	{
		printf("Bail out! mmap of the segment failed\n");
		exit(1);
	}

	/* untouched segment: no table of it, on either path */
	child = child_with(segment, 0);
	pte = proc_field(child, "status", "VmPTE");
	for (unsigned f = 0; f < paths; f++)
		res[f] = pagetables_read(child, f ? PAGEMAP_NO_SCAN : 0,
								 start, start + SEGMENT, 0, &t[f]);
	ok(res[0] == PROCFS_OK && (paths < 2 || res[1] == PROCFS_OK),
	   paths < 2 ? "untouched: read (PAGEMAP_SCAN alone under ASan)" : "untouched: read on both paths");
	ok(t[0].bytes > 0 && t[0].bytes == pte,
	   "untouched: the tables counted are VmPTE (%lld kB = %lld kB)",
	   (long long) t[0].bytes / 1024, (long long) pte / 1024);
	if (paths < 2)
		skip(1, ASAN_SKIPS_PREAD);
	else
		ok(t[1].bytes == t[0].bytes && !t[1].used_scan,
		   "untouched: without PAGEMAP_SCAN the same (%lld kB)", (long long) t[1].bytes / 1024);
	ok((uint64_t) (t[0].pte_pages * page) >= MB(6) / 512, "untouched: the 6 MB touched privately need PTE pages");
	end_child(child);

	/* 24 pages of the segment touched, 24 ranges of 2 MB, every 1 GB range */
	child = child_with(segment, 24);
	pte = proc_field(child, "status", "VmPTE");
	for (unsigned f = 0; f < paths; f++)
		res[f] = pagetables_read(child, f ? PAGEMAP_NO_SCAN : 0,
								 start, start + SEGMENT, 24 * page, &t[f]);
	ok(res[0] == PROCFS_OK && (paths < 2 || res[1] == PROCFS_OK),
	   paths < 2 ? "touched: read (PAGEMAP_SCAN alone under ASan)" : "touched: read on both paths");
	ok(t[0].bytes + 24 * page == pte,
	   "touched: VmPTE (%lld kB) = the tables counted (%lld kB) + the segment's 24 PTE pages",
	   (long long) pte / 1024, (long long) t[0].bytes / 1024);
	if (paths < 2)
		skip(1, ASAN_SKIPS_PREAD);
	else
		ok(t[1].bytes == t[0].bytes,
		   "touched: without PAGEMAP_SCAN the same, the segment's 1 GB ranges guessed from both ends");
	end_child(child);

	/*
	 * Huge pages mapped whole by their PMD entry: an anonymous one keeps a
	 * PTE page deposited, which VmPTE counts, on both paths; a file's has
	 * none, which PAGEMAP_SCAN tells (PAGE_IS_HUGE | PAGE_IS_FILE) and the
	 * plain pagemap read cannot: it counts one for each
	 * (docs/limitations.md).
	 */
	for (int file = 0; file < 2; file++)
	{
		char		path[64];
		const char *what = file ? "a file's huge pages" : "anonymous huge pages";
		int64_t		whole;

		snprintf(path, sizeof(path), "test_pagetables.%d", (int) getpid());
		child = child_with_huge(file ? path : NULL);
		huge = proc_field(child, "smaps_rollup", file ? "FilePmdMapped" : "AnonHugePages");
		pte = proc_field(child, "status", "VmPTE");
		for (unsigned f = 0; f < paths; f++)
			res[f] = pagetables_read(child, f ? PAGEMAP_NO_SCAN : 0,
									 start, start + SEGMENT, 0, &t[f]);
		whole = huge / (int64_t) MB(2);
		if (whole < 1)
			skip(2, file ? "no file page mapped by its PMD entry here (Linux < 6.x, or no large folios)" :
				 "no transparent huge page given here (THP never, or none free)");
		else
		{
			if (t[0].used_scan)
				ok(res[0] == PROCFS_OK && t[0].bytes == pte,
				   "%s (%lld): the tables counted are VmPTE (%lld kB = %lld kB)", what,
				   (long long) whole, (long long) t[0].bytes / 1024, (long long) pte / 1024);
			else
				skip(1, "no PAGEMAP_SCAN (Linux < 6.7)");
			if (paths < 2)
				skip(1, ASAN_SKIPS_PREAD);
			else
				ok(res[1] == PROCFS_OK && t[1].bytes == pte + (file ? whole * page : 0),
				   "%s: without PAGEMAP_SCAN VmPTE%s (%lld kB, VmPTE %lld kB)", what,
				   file ? " and a PTE page for each" : "", (long long) t[1].bytes / 1024, (long long) pte / 1024);
		}
		end_child(child);
	}

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
