/*
 * reuse_cost.c - what the sampler spends on one process whose figures it
 * reuses (src/rules/reuse.h), against a plain read of /proc/PID/status and against
 * a fresh read: the /proc layer's own readers (src/, no PostgreSQL), CPU
 * time per process, median of REPS passes over every pid. Printed as
 * "name<TAB>microseconds" lines.
 *
 *   reuse_cost REPS PID...      the given processes (a server's, say)
 *   reuse_cost REPS -N MB       N sleeping children of its own, each with MB
 *                               of anonymous memory touched and 100 small
 *                               mappings (as a backend has a few hundred)
 *
 * What the sampler does per process (sample.c, reuse_cache.c, walk.c, members.c):
 *   reused: the membership check (stat, and a stat(2) of exe), schedstat
 *           and the children file (procmem_reuse_find(): reuse_mark_take()),
 *           oom_score (procmem_read_oom());
 *   fresh:  the same membership check, schedstat and children file, then the
 *           whole reading (procmem_read_member(): procmem_read_process()).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "linux/reading.h"

#define NPARTS 3
static const char *const names[NPARTS] = {
	"status, a plain read (the floor)",
	"reused (stat + exe + schedstat + children + oom_score)",
	"fresh (stat + exe + schedstat + children + procmem_read_process)",
};

static double
cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int
cmp(const void *a, const void *b)
{
	double		x = *(const double *) a, y = *(const double *) b;

	return (x > y) - (x < y);
}

static void
plain_status(pid_t pid)
{
	static char buf[1 << 16];
	char		path[64];
	int			fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
	if ((fd = open(path, O_RDONLY)) < 0)
		return;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

/* The membership check, and the schedstat and children file every process gets */
static int
identify(pid_t pid, procfs_stat *id)
{
	uint64_t	dev, ino;
	procfs_schedstat sched;
	int			has;

	if (procfs_read_stat(pid, id) != PROCFS_OK)
		return 0;
	procfs_exe_id(pid, &dev, &ino);
	procfs_read_schedstat(pid, &sched);
	procfs_has_child(pid, &has);
	return 1;
}

static void
one(int part, pid_t pid)
{
	procfs_stat id;
	char		buf[32];
	size_t		len;
	procmem_options opt;
	procmem_reading s;

	switch (part)
	{
		case 0:
			plain_status(pid);
			break;
		case 1:
			if (identify(pid, &id))
				procfs_read_file(pid, "oom_score", buf, sizeof(buf), &len);
			break;
		case 2:
			memset(&opt, 0, sizeof(opt));
			opt.child = true;
			if (identify(pid, &id))
				procmem_read_process(pid, id.ppid, &id, &opt, &s);
			break;
	}
}

/* A sleeping child: mb MB touched, 100 small mappings, until killed */
static pid_t
child(int mb)
{
	pid_t		pid = fork();

	if (pid != 0)
		return pid;
	{
		char	   *p = malloc((size_t) mb << 20);

		memset(p, 1, (size_t) mb << 20);
		for (int i = 0; i < 100; i++)
		{
			/* alternate protections: the kernel cannot merge them */
			char	   *m = mmap(NULL, 8192, i % 2 ? PROT_READ : PROT_READ | PROT_WRITE,
								 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (m != MAP_FAILED && i % 2 == 0)
				m[0] = 1;
		}
		for (;;)
			pause();
	}
}

int
main(int argc, char **argv)
{
	int			reps, n;
	pid_t	   *pids;
	int			own = 0;
	double	   *t[NPARTS];

	if (argc < 3)
	{
		fprintf(stderr, "usage: reuse_cost REPS PID... | reuse_cost REPS -N MB\n");
		return 2;
	}
	reps = atoi(argv[1]);
	if (argv[2][0] == '-')
	{
		n = atoi(argv[2] + 1);
		own = 1;
		pids = calloc(n, sizeof(pid_t));
		for (int i = 0; i < n; i++)
			pids[i] = child(argc > 3 ? atoi(argv[3]) : 8);
		sleep(1);				/* they touch their memory, then sleep */
	}
	else
	{
		n = argc - 2;
		pids = calloc(n, sizeof(pid_t));
		for (int i = 0; i < n; i++)
			pids[i] = atoi(argv[i + 2]);
	}
	/* the parts interleaved, pass by pass: the machine's noise falls on all */
	for (int part = 0; part < NPARTS; part++)
		t[part] = calloc(reps, sizeof(double));
	for (int r = 0; r < reps; r++)
		for (int part = 0; part < NPARTS; part++)
		{
			double		t0 = cpu_us();

			for (int i = 0; i < n; i++)
				one(part, pids[i]);
			t[part][r] = (cpu_us() - t0) / n;
		}
	for (int part = 0; part < NPARTS; part++)
	{
		qsort(t[part], reps, sizeof(double), cmp);
		printf("%s\t%.2f\n", names[part], t[part][reps / 2]);
	}
	if (own)
		for (int i = 0; i < n; i++)
		{
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
		}
	return 0;
}
