/*
 * cost.c - what reading one process costs, file by file: the /proc layer's
 * own readers (src/, no PostgreSQL) timed on the given pids, CPU time per
 * process, median of REPS passes. Printed as "name microseconds" lines.
 *
 *   cost REPS PID...
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "linux/keys.h"
#include "linux/pagemap_abi.h"
#include "linux/reading.h"

#define NPARTS 8
static const char *const names[NPARTS] = {
	"stat (read twice a reading)", "status", "oom_score + oom_score_adj",
	"fd (open files)", "mappings listed (PROCMAP_QUERY, every one)",
	"pagemap walk (listing + reading the pages)", "a whole sample (procmem_read_process)",
	"status, a plain read (the floor)"
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

/* Lists every mapping with PROCMAP_QUERY, as the pagemap walk does */
static void
list_mappings(pid_t pid)
{
	char		path[64];
	struct procmap_query_abi q;
	uint64_t	addr = 0;
	int			fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int) pid);
	if ((fd = open(path, O_RDONLY)) < 0)
		return;
	for (;;)
	{
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.query_flags = PM_QUERY_COVERING_OR_NEXT_VMA;
		q.query_addr = addr;
		if (ioctl(fd, PM_IOCTL_PROCMAP_QUERY, &q) < 0)
			break;
		addr = q.vma_end;
	}
	close(fd);
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

static void
one(int part, pid_t pid)
{
	procfs_stat st;
	procfs_status s;
	procfs_fieldset fs = keys_fieldset(&keys_status, &s);
	char		buf[64];
	size_t		len;
	int64_t		files;
	pagemap_anon a;
	procmem_options opt;
	procmem_reading sample;

	switch (part)
	{
		case 0:
			procfs_read_stat(pid, &st);
			procfs_read_stat(pid, &st);
			break;
		case 1:
			procfs_fields_init(&fs);
			procfs_read_lines(pid, "status", procfs_fields_line, &fs);
			break;
		case 2:
			procfs_read_file(pid, "oom_score", buf, sizeof(buf), &len);
			procfs_read_file(pid, "oom_score_adj", buf, sizeof(buf), &len);
			break;
		case 3:
			procfs_count_fds(pid, NULL, 0, &files);
			break;
		case 4:
			list_mappings(pid);
			break;
		case 5:
			pagemap_read_anon(pid, 0, NULL, &a);
			break;
		case 6:
			memset(&opt, 0, sizeof(opt));
			procmem_read_process(pid, -1, NULL, &opt, &sample);
			break;
		case 7:
			plain_status(pid);
			break;
	}
}

int
main(int argc, char **argv)
{
	int			reps;
	int			n = argc - 2;
	double	   *t;

	if (argc < 3)
	{
		fprintf(stderr, "usage: cost REPS PID...\n");
		return 2;
	}
	reps = atoi(argv[1]);
	t = calloc(reps, sizeof(double));
	for (int part = 0; part < NPARTS; part++)
	{
		for (int r = 0; r < reps; r++)
		{
			double		t0 = cpu_us();

			for (int i = 2; i < argc; i++)
				one(part, atoi(argv[i]));
			t[r] = (cpu_us() - t0) / n;
		}
		qsort(t, reps, sizeof(double), cmp);
		printf("%s\t%.2f\n", names[part], t[reps / 2]);
	}
	return 0;
}
