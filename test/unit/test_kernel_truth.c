/*
 * test_kernel_truth.c
 *		The kernel's share (kernel.c) against what the kernel itself shows,
 *		as root (TAP; run by scripts/test, suite "kernel"):
 *
 *		- each object size the model uses against /proc/slabinfo's size of
 *		  that cache, and the fallback table (what an unprivileged server
 *		  uses) within a factor of 1.5 of it;
 *		- a child alone in a fresh v1 memory cgroup forks, opens files, maps
 *		  and splits mappings, writes to them and starts threads, stopping
 *		  after each step: what the cgroup's kernel memory (memory.kmem.usage_in_bytes)
 *		  grew by, less the page tables (VmPTE) that grew with it, against
 *		  what the model gives for the child's counts before and after, read
 *		  the way the server reads them.
 *
 * Skipped, with the reason, where it cannot run: not root, no v1 memory
 * controller with kmem accounting.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

#include "kernel.h"
#include "keys.h"
#include "pagemap.h"
#include "tap.h"

#define FILES 1000
#define SPLITS 500				/* read-write pages between read-only ones */
#define THREADS 128
#define CGROUP_ROOT "/sys/fs/cgroup/memory"

/* Each cache's names, as kernel.c looks them up */
static const char *const cache_names[KC_NCACHES][2] = {
	[KC_TASK] = {"task_struct"}, [KC_PID] = {"pid"}, [KC_MM] = {"mm_struct"},
	[KC_SIGNAL] = {"signal_cache"}, [KC_SIGHAND] = {"sighand_cache"},
	[KC_FILES] = {"files_cache"}, [KC_FS] = {"fs_cache"}, [KC_CRED] = {"cred", "cred_jar"},
	[KC_VMA] = {"vm_area_struct"}, [KC_ANON_VMA] = {"anon_vma"},
	[KC_ANON_VMA_CHAIN] = {"anon_vma_chain"}, [KC_FILP] = {"filp"},
};

/* A cache's <objsize> in /proc/slabinfo (its slot: sysfs's slab_size); 0 if not listed */
static int64_t
slabinfo_size(const char *text, const char *name)
{
	size_t		n = strlen(name);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
	{
		long long	active, num, size;

		if (strncmp(l, name, n) == 0 && l[n] == ' ' &&
			sscanf(l + n, "%lld %lld %lld", &active, &num, &size) == 3)
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
	kernel_sizes_read(&ks);
	kernel_sizes_fallback(&fb);
	for (int c = 0; c < KC_NCACHES; c++)
	{
		int64_t		truth = 0;

		for (int i = 0; i < 2 && cache_names[c][i] && !truth; i++)
			truth = slabinfo_size(text, cache_names[c][i]);
		if (truth == 0)
		{
			/* merged into another cache (fs_cache, cred): slabinfo lists it under that name */
			printf("# %s: not in /proc/slabinfo (merged); model %lld\n", cache_names[c][0],
				   (long long) ks.object[c]);
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
	ok(same && listed >= 8, "sizes: each object the model uses (read as root) is slabinfo's size + 8 (%d caches listed)",
	   listed);
	ok(near && listed >= 8, "sizes: the fallback table is within 1.5x of this kernel's, cache by cache");
}

/* A child's counts, read the way the server reads them, and its VmPTE */
typedef struct snapshot
{
	kernel_counts c;
	int64_t		vm_pte;
	int64_t		kmem;
} snapshot;

static int64_t
read_i64(const char *path)
{
	char		buf[64];
	size_t		len;
	int64_t		v;

	if (procfs_read_path(path, buf, sizeof(buf), &len) != PROCFS_OK ||
		procfs_parse_int(buf, len, &v) != 0)
		return -1;
	return v;
}

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
	s->kmem = read_i64(kmem_path);
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
 * step after each SIGCONT. Its first step forks a grandchild, as the
 * postmaster forks a backend.
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
	/* 1: a process forked (it stops itself: no pipe's pages in the way) */
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

/* A process's one child, from /proc/PID/task/PID/children */
static pid_t
only_child(pid_t pid)
{
	char		path[64];
	int64_t		v;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int) pid, (int) pid);
	v = read_i64(path);
	return v > 0 ? (pid_t) v : 0;
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

static void
test_cgroup(void)
{
	/* the measured steps: from stop[i - 1] to stop[i], but the unmeasured 1 to 2 */
	static const char *const steps[STOPS] = {
		[1] = "fork: a process", [3] = "files: 1000 opened", [4] = "mappings: 1000 split off",
		[5] = "anon: 500 written", [6] = "threads: 128 started"
	};
	char		dir[256], procs[300], kmem[300];
	kernel_sizes ks;
	snapshot	s[STOPS], gs;
	pid_t		child, grandchild = 0;
	int			n = 0;

	snprintf(dir, sizeof(dir), CGROUP_ROOT "/pg_procmem_kernel_truth.%d", (int) getpid());
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	snprintf(kmem, sizeof(kmem), "%s/memory.kmem.usage_in_bytes", dir);
	if (geteuid() != 0 || access(CGROUP_ROOT "/memory.kmem.usage_in_bytes", R_OK) != 0)
	{
		skip(5, "needs root and a v1 memory controller with kmem accounting");
		return;
	}
	remove_stale_cgroups();
	if (mkdir(dir, 0755) != 0)
	{
		ok(0, "cgroup: %s made (%s)", dir, strerror(errno));
		return;
	}
	kernel_sizes_read(&ks);
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
		execl("/proc/self/exe", "test_kernel_truth", "--child", (char *) NULL);
		_exit(2);
	}
	for (n = 0; n < STOPS; n++)
	{
		if (!stopped(child) || take(child, kmem, &s[n]) != 0)
			break;
		if (n == 1 && ((grandchild = only_child(child)) <= 0 || take(grandchild, kmem, &gs) != 0))
			break;
		kill(child, SIGCONT);
	}
	if (grandchild > 0)
		kill(grandchild, SIGKILL);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* the grandchild, the init's to reap now, may take a moment to leave */
	for (int i = 0; i < 100 && rmdir(dir) != 0 && errno == EBUSY; i++)
		usleep(10000);
	if (n < STOPS)
	{
		ok(0, "cgroup: the child stopped after each step and was read (%d of %d)", n, STOPS);
		return;
	}
	for (int i = 1; i < STOPS; i++)
	{
		int64_t		model, pte, truth, slack;

		if (steps[i] == NULL)
			continue;
		if (i == 1)
		{
			/* a backend's counts: files not inherited, one ancestor's anon_vmas */
			gs.c.files = 0;
			gs.c.ancestors = 1;
			model = kernel_memory(&ks, &gs.c);
			pte = gs.vm_pte + s[i].vm_pte - s[i - 1].vm_pte;
		}
		else
		{
			model = kernel_memory(&ks, &s[i].c) - kernel_memory(&ks, &s[i - 1].c);
			pte = s[i].vm_pte - s[i - 1].vm_pte;
		}
		truth = s[i].kmem - s[i - 1].kmem - pte;
		/* the memcg charges whole pages, bytes of one left in stock per CPU */
		slack = model / 100 + 16384;
		printf("# %s: +%lld threads, +%lld mappings, +%lld anon, +%lld files; "
			   "kmem +%lld less page tables %lld = %lld, model %lld (%+.1f%%)\n", steps[i],
			   (long long) (i == 1 ? gs.c.threads : s[i].c.threads - s[i - 1].c.threads),
			   (long long) (i == 1 ? gs.c.mappings : s[i].c.mappings - s[i - 1].c.mappings),
			   (long long) (i == 1 ? gs.c.anon_mappings : s[i].c.anon_mappings - s[i - 1].c.anon_mappings),
			   (long long) (i == 1 ? gs.c.files : s[i].c.files - s[i - 1].c.files),
			   (long long) (s[i].kmem - s[i - 1].kmem), (long long) pte, (long long) truth,
			   (long long) model, truth ? 100.0 * (model - truth) / truth : 0.0);
		ok(model > 0 && llabs(model - truth) <= slack,
		   "%s: the model's growth is the cgroup's kernel memory growth, within 1%% + 16 kB", steps[i]);
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
