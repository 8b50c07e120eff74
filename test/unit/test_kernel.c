/*
 * test_kernel.c
 *		Unit tests of the kernel's share (kernel.c), the open-file count it
 *		needs (procfs.c) and the parts of anonymous memory (pagemap.c), on
 *		this process and children it forks (TAP; run by `make unit`).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/kernel.h"
#include "linux/pagemap.h"
#include "tap.h"

#define KB(n) ((int64_t) (n) * 1024)
#define MB(n) ((int64_t) (n) * 1024 * 1024)

static void
test_thread_stack(void)
{
	is_i64(kernel_thread_stack(16472 * 125, 125), 16384,
		   "stack: KernelStack / threads 16.1 kB is a 16 kB THREAD_SIZE");
	is_i64(kernel_thread_stack(8300 * 10, 10), 8192, "stack: 8.1 kB is 8 kB");
	is_i64(kernel_thread_stack(33000 * 10, 10), 32768, "stack: 32.2 kB (KASAN) is 32 kB");
	is_i64(kernel_thread_stack(0, 10), 0, "stack: no KernelStack, no figure");
	is_i64(kernel_thread_stack(16384, 0), 0, "stack: no threads, no figure");
	is_i64(kernel_thread_stack(19200 * 1024, 25), 0,
		   "stack: 768 kB a thread (loadavg virtualised, meminfo not) is no THREAD_SIZE");
	is_i64(kernel_thread_stack(2000 * 100, 100), 0, "stack: 2 kB a thread is none either");
}

static void
test_model(void)
{
	kernel_sizes ks;
	/* an idle backend's counts, of the order bench/run kernel finds (fixed here) */
	kernel_counts c = {.threads = 1, .mappings = 247, .anon_mappings = 101,
	.ancestors = 1, .files = 4};
	int64_t		one, more;

	kernel_sizes_fallback(&ks);
	is_i64(ks.object[KC_VMA], 192 + 8, "sizes: a mapping costs its slab slot and the memcg's pointer");
	one = kernel_memory(&ks, &c);
	/* 22,480 thread + 9,968 process + 49,400 mappings + 25,856 anon + 800 files */
	is_i64(one, 108504, "model: an idle backend (247 mappings, 101 anonymous, 4 files), its socket aside: 106.0 kB");
	c.mappings += 10;
	more = kernel_memory(&ks, &c);
	is_i64(more - one, 10 * (192 + 8), "model: 10 more mappings: 10 VMAs (maple nodes are not charged)");
	c.threads = 2;
	ok(kernel_memory(&ks, &c) - more == 16384 + 5888 + 8 + 192 + 8,
	   "model: a thread more: a stack, a task and a pid");
	c.threads = 0;
	is_i64(kernel_memory(&ks, &c), -1, "model: no thread count, no figure");
	c.threads = 1;
	c.files = -1;
	is_i64(kernel_memory(&ks, &c), -1, "model: files unknown, no figure");

	kernel_sizes_read(&ks);
	ok(ks.thread_stack >= 8192 && ks.thread_stack <= 65536 && ks.stack_from_kernel,
	   "sizes: THREAD_SIZE found on this machine (%lld)", (long long) ks.thread_stack);
	ok(ks.pgd == 4096 || ks.pgd == 8192, "sizes: a 4 or 8 kB PGD");
	for (int k = 0; k < KC_NCACHES; k++)
		if (ks.object[k] <= 8 || ks.object[k] > 65536)
		{
			ok(0, "sizes: cache %d has a sane size (%lld)", k, (long long) ks.object[k]);
			return;
		}
	ok(1, "sizes: every cache's object between 8 bytes and 64 kB (%s)",
	   ks.from_kernel ? "read from /sys/kernel/slab" : "the fallback table");
}

static void
test_fds(void)
{
	int64_t		files, files2;
	int			sv[2];
	uint64_t	bits[PROCFS_FD_BITS / 64];
	procfs_result res;

	res = procfs_count_fds(0, NULL, 0, &files);
	ok(res == PROCFS_OK && files >= 3,
	   "fds: this process has stdin, stdout, stderr at least (%lld)", (long long) files);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
	{
		printf("Bail out! socketpair failed\n");
		exit(1);
	}
	res = procfs_count_fds(0, NULL, 0, &files2);
	is_i64(files2 - files, 2, "fds: a socket pair adds two files");
	ok(procfs_fd_bitmap(0, bits, PROCFS_FD_BITS) == PROCFS_OK &&
	   (bits[sv[0] / 64] >> (sv[0] % 64) & 1) && (bits[0] & 7) == 7,
	   "fds: the bitmap has 0, 1, 2 and the socket");
	res = procfs_count_fds(0, bits, PROCFS_FD_BITS, &files2);
	if (getenv("PROCMEM_UNDER_VALGRIND"))
		skip(1, "valgrind opens files of its own meanwhile");
	else
		ok(res == PROCFS_OK && files2 == 0, "fds: none left once every fd is inherited");
	close(sv[0]);
	close(sv[1]);
	res = procfs_count_fds(999999999, NULL, 0, &files);
	ok(res == PROCFS_GONE && files < 0, "fds: no such process is gone, no figure");
}

static void
test_parts(void)
{
	pid_t		child;
	pagemap_anon a;
	pagemap_anon b;
	procfs_stat st;
	pagemap_hints h = {0};
	int64_t		sum = 0;
	int			ok_a = 0;

	child = fork();
	if (child == 0)
	{
		char	   *big = mmap(NULL, MB(4), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char	   *small = sbrk(KB(64));	/* the heap (malloc may not use it: ASan) */

		madvise(big, MB(4), MADV_NOHUGEPAGE);
		memset(big, 1, MB(4));
		memset(small, 1, KB(64));
		raise(SIGSTOP);
		_exit(0);
	}
	waitpid(child, NULL, WUNTRACED);
	ok(procfs_read_stat(child, &st) == PROCFS_OK && st.start_brk > 0 && st.start_stack > 0,
	   "parts: stat gives where the heap and the stack start");
	h.start_brk = st.start_brk;
	h.start_stack = st.start_stack;
	h.exe_ino = 0;
	h.exe_dev = 0;
	/*
	 * Each page this process writes that it still shares with the stopped
	 * child becomes the child's alone: a first round through both paths
	 * makes those writes, the second holds still.
	 */
	for (int round = 0; round < 2; round++)
		ok_a = pagemap_read_anon(child, 0, &h, &a) == PROCFS_OK &&
			(pread_path_too_slow() ||
			 pagemap_read_anon(child, PAGEMAP_NO_SCAN | PAGEMAP_NO_PROCMAP_QUERY, &h, &b) == PROCFS_OK);
	ok(ok_a, "parts: read by both paths");
	for (int p = 0; p < PAGEMAP_NPARTS; p++)
		sum += a.part[p];
	is_i64(sum, a.exclusive, "parts: add up to the exclusive pages");
	if (getenv("PROCMEM_UNDER_VALGRIND"))
	{
		/* valgrind's own stack and allocations move the child's memory */
		skip(6, "the parts under valgrind");
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return;
	}
	ok(a.part[PAGEMAP_MMAP] >= MB(4) && a.part[PAGEMAP_MMAP] <= MB(4) + KB(512),
	   "parts: the 4 MB anonymous mapping is mmap (%lld kB)", (long long) a.part[PAGEMAP_MMAP] / 1024);
	ok(a.part[PAGEMAP_HEAP] >= KB(64), "parts: the 64 kB sbrk is heap (%lld kB)",
	   (long long) a.part[PAGEMAP_HEAP] / 1024);
	ok(a.part[PAGEMAP_STACK] > 0, "parts: the stack is stack");
	ok(a.part[PAGEMAP_LIBRARIES] > 0, "parts: libc's data is libraries");
	ok(a.mappings > 10 && a.anon_mappings > 3 && a.anon_mappings < a.mappings,
	   "parts: mappings counted (%lld, %lld with anonymous pages)",
	   (long long) a.mappings, (long long) a.anon_mappings);
	if (pread_path_too_slow())
		skip(1, ASAN_SKIPS_PREAD);
	else
		ok(memcmp(a.part, b.part, sizeof(a.part)) == 0 && a.mappings == b.mappings &&
		   a.anon_mappings == b.anon_mappings,
		   "parts: the maps text (names) and the ioctls (stat, inodes) agree on every part");
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

int
main(void)
{
	test_thread_stack();
	test_model();
	test_fds();
	test_parts();
	return tap_done();
}
