/*
 * histfile.c - makes and checks memory history files, with the extension's
 * own codec (src/rules/history_format.c), for the history tests and benchmarks.
 *
 *   histfile write FILE SAMPLES PROCESSES [START_US [RUN_US [POSTMASTER_US]]]
 *       A valid file: SAMPLES samples of PROCESSES processes each, a second
 *       apart from START_US (PostgreSQL microseconds; default 2026-01-01),
 *       of the run RUN_US of the postmaster POSTMASTER_US (defaults: 1, 1),
 *       numbered 1 to SAMPLES, ending with a clean stop. Each process's
 *       query says "histfile sample N " and 200 zeros.
 *   histfile stops FILE N
 *       A valid file of N clean-stop records and nothing else: 16 bytes
 *       a record, the most records a file of its size can hold.
 *   histfile craft FILE
 *       A file whose CRCs hold but whose values no build of pg_procmem
 *       writes: samples numbered 2^63 - 2 and then 5, a sample at a time
 *       out of any timestamp's range, a crash row numbered 2^31 - 1 with a
 *       last sample time out of range, a "how" of 77, signal -9 and pid -3;
 *       it ends with a sample (an unclean stop).
 *   histfile check FILE CAPACITY
 *       Loads FILE into a ring of CAPACITY entries as the sampler would and
 *       prints what it found, one "key value" a line: status, samples,
 *       dropped, crashes, tail_open, good_end, size, first, last (the
 *       loaded samples' first and last numbers), newest_at.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rules/history_format.h"

#define JAN_2026_US 820454400000000LL	/* 2026-01-01 in PostgreSQL microseconds */

static void
put_record(FILE *f, history_record_kind kind, uint32_t count, const void *payload, size_t len)
{
	history_record r;

	history_record_init(&r, kind, count, history_crc32c(0, payload, len));
	fwrite(&r, sizeof(r), 1, f);
	if (len > 0)
		fwrite(payload, len, 1, f);
}

static void
put_sample(FILE *f, int64_t at, int64_t number)
{
	history_entry e[3];

	memset(e, 0, sizeof(e));
	for (int i = 0; i < 3; i++)
		e[i].sampled_at = at;
	e[0].kind = HISTORY_SYSTEM;
	e[0].u.sys.sample = number;
	e[0].u.sys.processes = 2;
	e[0].u.sys.kept = 2;
	for (int i = 1; i < 3; i++)
	{
		e[i].kind = HISTORY_PROCESS;
		e[i].pid = 4000 + i;
		e[i].u.proc.overhead = 1 << 20;
		strcpy(e[i].u.proc.backend_type, "client backend");
		strcpy(e[i].u.proc.query, "crafted");
	}
	put_record(f, RECORD_SAMPLE, 3, e, sizeof(e));
}

/* A new file, its header written; NULL when it cannot be made */
static FILE *
new_file(const char *path)
{
	FILE	   *f = fopen(path, "wb");
	history_file_header h;

	if (f != NULL)
	{
		history_format_header_init(&h);
		fwrite(&h, sizeof(h), 1, f);
	}
	return f;
}

static int
write_file(const char *path, long samples, long processes, long long start,
		   long long run, long long postmaster)
{
	history_entry *e = calloc((size_t) processes + 1, sizeof(history_entry));
	FILE	   *f = e ? new_file(path) : NULL;

	if (f == NULL)
		return 1;
	for (long s = 0; s < samples; s++)
	{
		size_t		n = (size_t) processes + 1;

		memset(e, 0, n * sizeof(history_entry));
		for (size_t i = 0; i < n; i++)
			e[i].sampled_at = start + s * 1000000LL;
		e[0].kind = HISTORY_SYSTEM;
		e[0].u.sys.sample = s + 1;
		e[0].u.sys.run_started = run;
		e[0].u.sys.postmaster_started = postmaster;
		e[0].u.sys.processes = (int32_t) processes;
		e[0].u.sys.kept = (int32_t) processes;
		e[0].u.sys.mem_total = 1LL << 34;
		e[0].u.sys.mem_available = 1LL << 33;
		e[0].u.sys.cgroup_limit = -1;
		e[0].u.sys.sample_us = 1000;
		for (size_t i = 1; i < n; i++)
		{
			history_process *p = &e[i].u.proc;

			e[i].kind = HISTORY_PROCESS;
			e[i].pid = (int32_t) (1000 + i);
			p->overhead = (int64_t) (1 << 20) + (int64_t) i * 4096;
			p->private_anon = p->overhead / 2;
			p->page_tables = 65536;
			p->rss = p->overhead * 4;
			p->context_bytes = -1;
			p->oom_score = 1;
			strcpy(p->backend_type, "client backend");
			strcpy(p->state, "active");
			strcpy(p->datname, "postgres");
			strcpy(p->usename, "histfile");
			p->query_id = 42;
			/* a long text, as an application's queries are */
			snprintf(p->query, sizeof(p->query), "histfile sample %ld %0200d", s + 1, 0);
		}
		put_record(f, RECORD_SAMPLE, (uint32_t) n, e, n * sizeof(history_entry));
	}
	put_record(f, RECORD_STOP, 0, NULL, 0);
	free(e);
	return fclose(f) != 0;
}

static int
stops_file(const char *path, long n)
{
	FILE	   *f = new_file(path);
	history_record r;

	if (f == NULL)
		return 1;
	history_record_init(&r, RECORD_STOP, 0, history_crc32c(0, NULL, 0));
	for (long i = 0; i < n; i++)
		fwrite(&r, sizeof(r), 1, f);
	return fclose(f) != 0;
}

static int
craft_file(const char *path)
{
	FILE	   *f = new_file(path);
	history_crash c;

	if (f == NULL)
		return 1;
	put_sample(f, JAN_2026_US, INT64_MAX - 1);
	put_sample(f, JAN_2026_US + 1000000, 5);
	put_sample(f, INT64_MIN + 5, 6);
	memset(&c, 0, sizeof(c));
	c.crashed_at = JAN_2026_US + 2000000;
	c.last_sample_at = INT64_MIN + 5;
	c.how = 77;
	c.signal = -9;
	c.exit_code = -1;
	c.killed_pid = -3;
	c.number = INT32_MAX;
	put_record(f, RECORD_CRASH, 1, &c, sizeof(c));
	put_sample(f, JAN_2026_US + 3000000, 7);
	return fclose(f) != 0;
}

typedef struct ring
{
	history_entry *slots;
	uint32_t	capacity;
	uint64_t	end;
} ring;

static long
read_at(void *arg, void *buf, size_t len, uint64_t off)
{
	ssize_t		r = pread(*(int *) arg, buf, len, (off_t) off);

	return (long) r;
}

static void
reserve(void *arg, uint32_t count, history_entry **a, uint32_t *na, history_entry **b)
{
	ring	   *r = arg;
	uint32_t	at = (uint32_t) (r->end % r->capacity);

	*a = &r->slots[at];
	*na = count < r->capacity - at ? count : r->capacity - at;
	*b = *na < count ? r->slots : NULL;
}

static void
commit(void *arg, uint32_t count)
{
	((ring *) arg)->end += count;
}

static void
crash(void *arg, const history_crash *c)
{
	(void) arg;
	(void) c;
}

static void
check(void *arg)
{
	(void) arg;
}

static int
check_file(const char *path, long capacity)
{
	int			fd = open(path, O_RDONLY | O_NOFOLLOW);
	struct stat st;
	ring		r = {calloc((size_t) capacity, sizeof(history_entry)), (uint32_t) capacity, 0};
	history_source src = {read_at, &fd, 0};
	history_sink sink = {(uint32_t) capacity, reserve, commit, crash, check, &r};
	char	   *buf = malloc(HISTORY_LOAD_BUFFER);
	history_load_result res;
	long long	first = 0, last = 0, newest_at = 0;

	if (fd < 0 || fstat(fd, &st) != 0 || r.slots == NULL)
	{
		printf("status error %s\n", strerror(errno));
		return 1;
	}
	src.size = (uint64_t) st.st_size;
	res = history_load(&src, &sink, buf);
	for (uint64_t p = r.end > r.capacity ? r.end - r.capacity : 0; p < r.end; p++)
	{
		const history_entry *e = &r.slots[p % r.capacity];

		if (e->kind != HISTORY_SYSTEM)
			continue;
		if (first == 0)
			first = e->u.sys.sample;
		last = e->u.sys.sample;
		newest_at = e->sampled_at;
	}
	printf("status %s\nsamples %u\ndropped %u\ncrashes %u\ntail_open %d\ngood_end %llu\nsize %lld\n"
		   "first %lld\nlast %lld\nnewest_at %lld\n",
		   history_format_result_text(res.status), res.samples_loaded, res.samples_dropped, res.crashes,
		   res.tail_open, (unsigned long long) res.good_end, (long long) st.st_size, first, last, newest_at);
	close(fd);
	free(buf);
	free(r.slots);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc >= 5 && strcmp(argv[1], "write") == 0)
		return write_file(argv[2], atol(argv[3]), atol(argv[4]),
						  argc > 5 ? atoll(argv[5]) : JAN_2026_US,
						  argc > 6 ? atoll(argv[6]) : 1, argc > 7 ? atoll(argv[7]) : 1);
	if (argc == 4 && strcmp(argv[1], "check") == 0)
		return check_file(argv[2], atol(argv[3]));
	if (argc == 3 && strcmp(argv[1], "craft") == 0)
		return craft_file(argv[2]);
	if (argc == 4 && strcmp(argv[1], "stops") == 0)
		return stops_file(argv[2], atol(argv[3]));
	fprintf(stderr, "usage: histfile write FILE SAMPLES PROCESSES [START_US [RUN_US [POSTMASTER_US]]]\n"
			"       histfile check FILE CAPACITY\n"
			"       histfile craft FILE\n"
			"       histfile stops FILE N\n");
	return 2;
}
