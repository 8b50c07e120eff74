/*
 * test_kernel_truth.c
 *		The kernel's share (kernel.c) against what the kernel itself shows,
 *		as root (TAP; run by scripts/test, suite "kernel"):
 *
 *		- each object size the model uses against /proc/slabinfo's size of
 *		  that cache (a merged cache found through its /sys/kernel/slab
 *		  link), and the fallback table (what an unprivileged server uses)
 *		  within a factor of 1.5 of it;
 *		- a child alone in a fresh v1 memory cgroup, pinned to one CPU,
 *		  forks 64 processes, opens files, maps and splits mappings, writes
 *		  to them and starts threads, stopping after each step: what the
 *		  cgroup's kernel memory (memory.kmem.usage_in_bytes) grew by, less
 *		  the page tables (VmPTE) that grew with it, against what the model
 *		  gives for the counts before and after, read the way the server
 *		  reads them.
 *
 * The memcg charges kmem in whole pages and keeps the rest of a page in a
 * per-CPU stock, so a step's growth is off by a few pages either way: each
 * step is sized so that a few pages are small against what it measures, and
 * the allowance is a fixed 16 kB plus 0.5% of the slab objects (never of the
 * kernel stacks, which are whole pages and exact).
 *
 * Skipped, with the reason, where it cannot run: not root, no v1 memory
 * controller (a cgroup v2 host has no kmem counter), kmem accounting off
 * (cgroup.memory=nokmem).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include "linux/kernel.h"
#include "linux/keys.h"
#include "linux/pagemap.h"
#include "linux/sysmem.h"
#include "tap.h"

#define FORKS 64				/* processes forked in the fork step */
#define FILES 1000
#define SPLITS 500				/* read-write pages between read-only ones */
#define THREADS 256
#define CGROUP_ROOT "/sys/fs/cgroup/memory"

/* Each cache's names, as kernel.c looks them up */
static const char *const cache_names[KC_NCACHES][2] = {
	[KC_TASK] = {"task_struct"}, [KC_PID] = {"pid"}, [KC_MM] = {"mm_struct"},
	[KC_SIGNAL] = {"signal_cache"}, [KC_SIGHAND] = {"sighand_cache"},
	[KC_FILES] = {"files_cache"}, [KC_FS] = {"fs_cache"}, [KC_CRED] = {"cred", "cred_jar"},
	[KC_VMA] = {"vm_area_struct"}, [KC_ANON_VMA] = {"anon_vma"},
	[KC_ANON_VMA_CHAIN] = {"anon_vma_chain"}, [KC_FILP] = {"filp"},
};

/* Where /sys/kernel/slab/NAME leads (a merged cache's link, its target); 0 if nowhere */
static int
slab_dir(const char *name, char dir[PATH_MAX])
{
	char		path[256];

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s", name);
	return realpath(path, dir) != NULL;
}

/*
 * A cache's <objsize> in /proc/slabinfo (its slot: sysfs's slab_size), 0 if
 * not found. A merged cache is listed under the name of the cache it was
 * merged into (fs_cache under anon_vma_chain, say): the line whose name
 * leads to the same /sys/kernel/slab directory.
 */
static int64_t
slabinfo_size(const char *text, const char *name)
{
	char		dir[PATH_MAX], other[PATH_MAX];
	int			merged = slab_dir(name, dir);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
	{
		char		line_name[128];
		long long	active, num, size;

		if (sscanf(l, "%127s %lld %lld %lld", line_name, &active, &num, &size) == 4 &&
			(strcmp(line_name, name) == 0 ||
			 (merged && slab_dir(line_name, other) && strcmp(dir, other) == 0)))
			return size;
	}
	return 0;
}

static void
test_sizes(void)
{
	static char text[1 << 17];
	size_t		len = 0;
	FILE	   *f = fopen("/proc/slabinfo", "r");
	kernel_sizes ks, fb;
	int			listed = 0, same = 1, near = 1;

	if (f == NULL)
	{
		skip(2, "/proc/slabinfo unreadable (root only)");
		return;
	}
	len = fread(text, 1, sizeof(text) - 1, f);
	text[len] = '\0';
	fclose(f);
	if (access("/sys/kernel/slab", R_OK) != 0)
	{
		/* the SLAB allocator (Linux < 6.8) or no sysfs: the model uses its fallback table */
		skip(2, "no /sys/kernel/slab: the model cannot read this kernel's sizes");
		return;
	}
	kernel_sizes_read(&ks);
	kernel_sizes_fallback(&fb);
	for (int c = 0; c < KC_NCACHES; c++)
	{
		int64_t		truth = 0;

		for (int i = 0; i < 2 && cache_names[c][i] && !truth; i++)
			truth = slabinfo_size(text, cache_names[c][i]);
		if (truth == 0)
		{
			printf("# %s: not in /proc/slabinfo, under its name or a merged one's\n", cache_names[c][0]);
			continue;
		}
		listed++;
		printf("# %s: slabinfo %lld, model %lld, fallback %lld\n", cache_names[c][0],
			   (long long) truth, (long long) ks.object[c], (long long) fb.object[c]);
		if (ks.object[c] != truth + 8)
		{
			same = 0;
			printf("#   the model's %s is not slabinfo's size + 8\n", cache_names[c][0]);
		}
		if (fb.object[c] * 2 > (truth + 8) * 3 || fb.object[c] * 3 < (truth + 8) * 2)
		{
			near = 0;
			printf("#   the fallback's %s is not within 1.5x of this kernel's\n", cache_names[c][0]);
		}
	}
	ok(same && listed == KC_NCACHES,
	   "sizes: each object the model uses (read as root) is slabinfo's size + 8 (%d of %d caches found)",
	   listed, KC_NCACHES);
	ok(near && listed == KC_NCACHES, "sizes: the fallback table is within 1.5x of this kernel's, cache by cache");
}

/* A child's counts, read the way the server reads them, and its VmPTE */
typedef struct snapshot
{
	kernel_counts c;
	int64_t		vm_pte;
	int64_t		kmem;
} snapshot;

static int
take(pid_t child, const char *kmem_path, snapshot *s)
{
	procfs_status st;
	procfs_fieldset fs = keys_fieldset(&keys_status, &st);
	procfs_stat ps;
	pagemap_hints h = {0};
	pagemap_anon a;

	memset(s, 0, sizeof(*s));
	procfs_fields_init(&fs);
	if (procfs_read_lines(child, "status", procfs_fields_line, &fs) != PROCFS_OK ||
		procfs_read_stat(child, &ps) != PROCFS_OK)
		return -1;
	h.start_brk = ps.start_brk;
	h.start_stack = ps.start_stack;
	if (pagemap_read_anon(child, 0, &h, &a) != PROCFS_OK ||
		procfs_count_fds(child, NULL, 0, &s->c.files) != PROCFS_OK)
		return -1;
	s->c.threads = st.threads;
	s->c.mappings = a.mappings;
	s->c.anon_mappings = a.anon_mappings;
	s->c.ancestors = 0;			/* the mappings the steps add are the child's own */
	s->vm_pte = st.vm_pte;
	s->kmem = sysmem_read_int(kmem_path);
	return s->kmem < 0 ? -1 : 0;
}

static void *
idle_thread(void *arg)
{
	(void) arg;
	for (;;)
		pause();
	return NULL;
}

/*
 * The child, a fresh program (exec'd, as pg_ctl starts the postmaster): one
 * step after each SIGCONT. Its first step forks grandchildren, as the
 * postmaster forks backends.
 */
static void
child_main(void)
{
	long		ps = sysconf(_SC_PAGESIZE);
	char	   *region;
	pid_t		grandchild;
	int			status;
	struct rlimit fds;

	/* room for FILES + 64 descriptors where the soft limit is 1024 (a fresh Debian's) */
	if (getrlimit(RLIMIT_NOFILE, &fds) != 0)
		_exit(8);
	if (fds.rlim_cur != RLIM_INFINITY && fds.rlim_cur < FILES + 128)
	{
		fds.rlim_cur = FILES + 128;
		if (fds.rlim_max != RLIM_INFINITY && fds.rlim_max < fds.rlim_cur)
			fds.rlim_max = fds.rlim_cur;	/* root may raise it */
		if (setrlimit(RLIMIT_NOFILE, &fds) != 0)
		{
			printf("# the child could not raise its open files limit to %d: %s\n", FILES + 128, strerror(errno));
			fflush(stdout);
			_exit(8);
		}
	}
	raise(SIGSTOP);
	/* 1: FORKS processes forked (each stops itself: no pipe's pages in the way) */
	for (int i = 0; i < FORKS; i++)
	{
		grandchild = fork();
		if (grandchild == 0)
		{
			/* killed with the child, stopped or not */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			raise(SIGSTOP);
			for (;;)
				pause();
		}
		if (grandchild < 0 || waitpid(grandchild, &status, WUNTRACED) != grandchild)
			_exit(2);
	}
	raise(SIGSTOP);
	/* (not measured) the fd table grown and the region mapped, so that the steps add objects only */
	if (dup2(0, FILES + 64) < 0)
		_exit(3);
	close(FILES + 64);
	region = mmap(NULL, 2 * SPLITS * ps, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		_exit(4);
	raise(SIGSTOP);
	/* 2: FILES struct files */
	for (int i = 0; i < FILES; i++)
		if (open("/dev/null", O_RDONLY) < 0)
			_exit(5);
	raise(SIGSTOP);
	/* 3: every other page made writable: 2 * SPLITS mappings where there was one */
	for (int i = 0; i < SPLITS; i++)
		if (mprotect(region + 2 * i * ps, ps, PROT_READ | PROT_WRITE) != 0)
			_exit(6);
	raise(SIGSTOP);
	/* 4: each writable one written: an anon_vma and its chain each */
	for (int i = 0; i < SPLITS; i++)
		region[2 * i * ps] = 1;
	raise(SIGSTOP);
	/* 5: THREADS threads (each with its stack and guard mappings) */
	for (int i = 0; i < THREADS; i++)
	{
		pthread_t	t;

		if (pthread_create(&t, NULL, idle_thread, NULL) != 0)
			_exit(7);
	}
	raise(SIGSTOP);
	for (;;)
		pause();
}

/* A process's children, from /proc/PID/task/PID/children: how many (at most max) */
static int
children(pid_t pid, pid_t *out, int max)
{
	char		path[64], buf[4096], *p, *end;
	size_t		len;
	int			n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int) pid, (int) pid);
	if (procfs_read_path(path, buf, sizeof(buf), &len) != PROCFS_OK)
		return 0;
	for (p = buf; n < max; p = end)
	{
		long		v = strtol(p, &end, 10);

		if (end == p || v <= 0)
			break;
		out[n++] = (pid_t) v;
	}
	return n;
}

static int
stopped(pid_t child)
{
	int			status;

	if (waitpid(child, &status, WUNTRACED) != child)
		return 0;
	if (WIFEXITED(status))
		printf("# the child exited with status %d\n", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		printf("# the child was killed by signal %d\n", WTERMSIG(status));
	return WIFSTOPPED(status);
}

#define STOPS 7

/* The cgroups of earlier runs that were killed before they could remove theirs */
static void
remove_stale_cgroups(void)
{
	DIR		   *d = opendir(CGROUP_ROOT);
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL)
	{
		int			pid;
		char		path[512];

		if (sscanf(e->d_name, "pg_procmem_kernel_truth.%d", &pid) == 1 && pid > 0 &&
			kill(pid, 0) != 0 && errno == ESRCH)
		{
			snprintf(path, sizeof(path), CGROUP_ROOT "/%s", e->d_name);
			(void) rmdir(path);
		}
	}
	if (d)
		closedir(d);
}

/* Why the cgroup test cannot run here; NULL if it can */
static const char *
cgroup_unavailable(void)
{
	if (geteuid() != 0)
		return "needs root (it makes a memory cgroup)";
	if (access(CGROUP_ROOT "/memory.kmem.usage_in_bytes", R_OK) == 0)
		return NULL;
	if (access("/sys/fs/cgroup/cgroup.controllers", R_OK) == 0)
		return "a cgroup v2 host: v2 has no kmem counter (the test needs a v1 memory controller)";
	return "no v1 memory controller with kmem accounting at " CGROUP_ROOT;
}

/*
 * Closes every descriptor but 0 to 2: one inherited from the caller (a
 * shell's 255, a harness's pipe) would size the fd table of each process
 * the child forks past the 64 slots a files_struct holds, which the model
 * (a postmaster with a few descriptors) does not count.
 */
static void
close_inherited_files(void)
{
	DIR		   *d = opendir("/proc/self/fd");
	struct dirent *e;
	int			fds[256], n = 0;

	while (d && (e = readdir(d)) != NULL && n < 256)
	{
		int			fd = atoi(e->d_name);

		if (fd > 2 && fd != dirfd(d))
			fds[n++] = fd;
	}
	if (d)
		closedir(d);
	for (int i = 0; i < n; i++)
		close(fds[i]);
}

/* Pins the calling process (and what it starts) to the CPU it is on: one per-CPU stock */
static void
pin_to_this_cpu(void)
{
	cpu_set_t	set;
	int			cpu = sched_getcpu();

	CPU_ZERO(&set);
	if (cpu >= 0)
		CPU_SET(cpu, &set);
	if (cpu < 0 || sched_setaffinity(0, sizeof(set), &set) != 0)
		printf("# the child could not be pinned to a CPU (%s): more per-CPU stock noise\n", strerror(errno));
	fflush(stdout);
}

static void
test_cgroup(void)
{
	/* the measured steps: from stop[i - 1] to stop[i], but the unmeasured 1 to 2 */
	static const char *const steps[STOPS] = {
		[1] = "fork: 64 processes", [3] = "files: 1000 opened", [4] = "mappings: 1000 split off",
		[5] = "anon: 500 written", [6] = "threads: 256 started"
	};
	const char *why = cgroup_unavailable();
	char		dir[256], procs[300], kmem[300];
	kernel_sizes ks;
	snapshot	s[STOPS], gs[FORKS];
	pid_t		child, grandchild[FORKS];
	int			n = 0, forked = 0;

	if (why != NULL)
	{
		skip(5, why);
		return;
	}
	snprintf(dir, sizeof(dir), CGROUP_ROOT "/pg_procmem_kernel_truth.%d", (int) getpid());
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	snprintf(kmem, sizeof(kmem), "%s/memory.kmem.usage_in_bytes", dir);
	remove_stale_cgroups();
	if (mkdir(dir, 0755) != 0)
	{
		ok(0, "cgroup: %s made (%s)", dir, strerror(errno));
		return;
	}
	kernel_sizes_read(&ks);
	/* the grandchildren, orphaned when the child is killed, are ours to reap */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	child = fork();
	if (child == 0)
	{
		int			fd = open(procs, O_WRONLY);
		char		pid[32];

		/* a stopped child outlives a killed test unless told otherwise (kept across exec) */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() == 1)
			_exit(2);
		snprintf(pid, sizeof(pid), "%d\n", (int) getpid());
		if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
			_exit(2);
		close(fd);
		close_inherited_files();
		pin_to_this_cpu();
		execl("/proc/self/exe", "test_kernel_truth", "--child", (char *) NULL);
		_exit(2);
	}
	for (n = 0; n < STOPS; n++)
	{
		if (!stopped(child) || take(child, kmem, &s[n]) != 0)
			break;
		if (n == 1)
		{
			int			i;

			forked = children(child, grandchild, FORKS);
			for (i = 0; i < forked; i++)
				if (take(grandchild[i], kmem, &gs[i]) != 0)
					break;
			if (forked < FORKS || i < forked)
				break;
		}
		kill(child, SIGCONT);
	}
	for (int i = 0; i < forked; i++)
		kill(grandchild[i], SIGKILL);
	kill(child, SIGKILL);
	/*
	 * Reaped here, not left to init (which may take seconds): until then
	 * each counts in loadavg's threads without a stack in KernelStack,
	 * which halves the THREAD_SIZE a server (or the next run) finds.
	 */
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	for (int i = 0; i < 100 && rmdir(dir) != 0 && errno == EBUSY; i++)
		usleep(10000);
	if (n < STOPS)
	{
		ok(0, "cgroup: the child stopped after each step and was read (%d of %d, %d of %d processes forked)",
		   n, STOPS, forked, FORKS);
		return;
	}
	if (s[1].kmem == s[0].kmem)
	{
		skip(5, "kmem accounting off (cgroup.memory=nokmem?): 64 forks left memory.kmem.usage_in_bytes unmoved");
		return;
	}
	for (int i = 1; i < STOPS; i++)
	{
		int64_t		model, stacks, pte, truth, slack;
		kernel_counts d;

		if (steps[i] == NULL)
			continue;
		model = kernel_memory(&ks, &s[i].c) - kernel_memory(&ks, &s[i - 1].c);
		pte = s[i].vm_pte - s[i - 1].vm_pte;
		d.threads = s[i].c.threads - s[i - 1].c.threads;
		d.mappings = s[i].c.mappings - s[i - 1].c.mappings;
		d.anon_mappings = s[i].c.anon_mappings - s[i - 1].c.anon_mappings;
		d.files = s[i].c.files - s[i - 1].c.files;
		/* the kernel stacks and PGDs: whole pages, charged exactly */
		stacks = d.threads * ks.thread_stack;
		if (i == 1)
		{
			/* each a backend's counts: files not inherited, one ancestor's anon_vmas */
			for (int g = 0; g < FORKS; g++)
			{
				gs[g].c.files = 0;
				gs[g].c.ancestors = 1;
				model += kernel_memory(&ks, &gs[g].c);
				pte += gs[g].vm_pte;
				stacks += gs[g].c.threads * ks.thread_stack + ks.pgd;
				d.threads += gs[g].c.threads;
				d.mappings += gs[g].c.mappings;
				d.anon_mappings += gs[g].c.anon_mappings;
			}
		}
		truth = s[i].kmem - s[i - 1].kmem - pte;
		/* a few pages of per-CPU stock either way, and 0.5% of the slab objects */
		slack = 16384 + (model - stacks) / 200;
		printf("# %s: +%lld threads, +%lld mappings, +%lld anon, +%lld files; "
			   "kmem +%lld less page tables %lld = %lld, model %lld (%+lld, %+.1f%%; allowed %lld)\n",
			   steps[i], (long long) d.threads, (long long) d.mappings, (long long) d.anon_mappings,
			   (long long) d.files, (long long) (s[i].kmem - s[i - 1].kmem), (long long) pte,
			   (long long) truth, (long long) model, (long long) (model - truth),
			   truth ? 100.0 * (model - truth) / truth : 0.0, (long long) slack);
		if (i == 1)
			printf("#   a process: kmem %lld, model %lld\n", (long long) (truth / FORKS),
				   (long long) (model / FORKS));
		ok(model > 0 && llabs(model - truth) <= slack,
		   "%s: the model's growth is the cgroup's kernel memory growth, within 16 kB + 0.5%% of its slab part",
		   steps[i]);
	}
}

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--child") == 0)
		child_main();
	test_sizes();
	test_cgroup();
	return tap_done();
}
