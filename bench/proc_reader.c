/*
 * proc_reader.c - the baselines pg_procmem is measured against: read one
 * /proc/PID/<file> for each given pid, whole, as fast as plain C can, and
 * print the median time of REPS passes in seconds.
 *
 *   proc_reader status 5 PID...        the lower bound: O(1) counters
 *   proc_reader smaps_rollup 5 PID...  what PSS-based tools pay
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
cmp(const void *a, const void *b)
{
	double		x = *(const double *) a, y = *(const double *) b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	static char buf[1 << 16];
	int			reps;
	double	   *t;

	if (argc < 4)
	{
		fprintf(stderr, "usage: proc_reader FILE REPS PID...\n");
		return 2;
	}
	reps = atoi(argv[2]);
	t = calloc(reps, sizeof(double));
	for (int r = 0; r < reps; r++)
	{
		double		t0 = now();

		for (int i = 3; i < argc; i++)
		{
			char		path[64];
			int			fd;

			snprintf(path, sizeof(path), "/proc/%s/%s", argv[i], argv[1]);
			if ((fd = open(path, O_RDONLY)) < 0)
				continue;
			while (read(fd, buf, sizeof(buf)) > 0)
				;
			close(fd);
		}
		t[r] = now() - t0;
	}
	qsort(t, reps, sizeof(double), cmp);
	printf("%.6f\n", t[reps / 2]);
	return 0;
}
