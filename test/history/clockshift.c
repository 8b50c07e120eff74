/*
 * clockshift.c - a preloaded library (LD_PRELOAD) that moves the wall clock
 * of the processes it is loaded into by an offset the test sets while they
 * run: for test/history/clock.py, which must never touch the host's clock.
 *
 * CLOCKSHIFT_FILE names a file of 8 bytes, the offset in microseconds
 * (int64, the machine's byte order), mapped at start: a write to it is seen
 * by every process at once. gettimeofday(), time() and clock_gettime() of
 * the realtime clocks move; the monotonic clocks do not.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile const int64_t *offset_us;
static int	(*real_gettimeofday) (struct timeval *, void *);
static int	(*real_clock_gettime) (clockid_t, struct timespec *);

__attribute__((constructor))
static void
init(void)
{
	const char *path = getenv("CLOCKSHIFT_FILE");
	int			fd;
	void	   *p;

	real_gettimeofday = (int (*) (struct timeval *, void *)) dlsym(RTLD_NEXT, "gettimeofday");
	real_clock_gettime = (int (*) (clockid_t, struct timespec *)) dlsym(RTLD_NEXT, "clock_gettime");
	if (path == NULL || (fd = open(path, O_RDONLY)) < 0)
		return;
	p = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p != MAP_FAILED)
		offset_us = p;
}

/* sec and nsec moved by the offset */
static void
shift(time_t *sec, long *nsec)
{
	int64_t		ns;

	if (offset_us == NULL)
		return;
	ns = (int64_t) *sec * 1000000000 + *nsec + *offset_us * 1000;
	*sec = (time_t) (ns / 1000000000);
	*nsec = (long) (ns % 1000000000);
	if (*nsec < 0)
	{
		*nsec += 1000000000;
		(*sec)--;
	}
}

int
gettimeofday(struct timeval *tv, void *tz)
{
	int			r = real_gettimeofday(tv, tz);
	long		nsec;

	if (r == 0)
	{
		nsec = tv->tv_usec * 1000;
		shift(&tv->tv_sec, &nsec);
		tv->tv_usec = nsec / 1000;
	}
	return r;
}

int
clock_gettime(clockid_t id, struct timespec *ts)
{
	int			r = real_clock_gettime(id, ts);

	if (r == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
		shift(&ts->tv_sec, &ts->tv_nsec);
	return r;
}

time_t
time(time_t *t)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (t != NULL)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
