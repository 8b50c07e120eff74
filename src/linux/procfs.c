/*
 * procfs.c
 *		Parsers and readers for Linux /proc/<pid> files (no PostgreSQL headers).
 *
 * Every read can fail or come back short and every field can be missing or
 * garbage: the parsers only ever fill figures they could validate, and the
 * readers never write past their buffers.
 */
#include "linux/procfs.h"

#include <dirent.h>
#include <stdbool.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* Line splitting */

void
procfs_lines_init(procfs_lines *lb, procfs_line_fn fn, void *arg)
{
	lb->fn = fn;
	lb->arg = arg;
	lb->carry_len = 0;
	lb->overlong = 0;
}

const char *
procfs_next_line(const char **p, const char *end, size_t *len)
{
	const char *line = *p;
	const char *nl;

	if (line >= end)
		return NULL;
	nl = memchr(line, '\n', (size_t) (end - line));
	*len = (size_t) ((nl ? nl : end) - line);
	*p = nl ? nl + 1 : end;
	return line;
}

void
procfs_lines_feed(procfs_lines *lb, const char *buf, size_t len)
{
	while (len > 0)
	{
		const char *nl = memchr(buf, '\n', len);
		size_t		part = nl ? (size_t) (nl - buf) : len;

		if (!lb->overlong)
		{
			if (lb->carry_len == 0 && nl)
				lb->fn(lb->arg, buf, part); /* whole line in this chunk */
			else if (lb->carry_len + part <= sizeof(lb->carry))
			{
				memcpy(lb->carry + lb->carry_len, buf, part);
				lb->carry_len += part;
				if (nl)
				{
					lb->fn(lb->arg, lb->carry, lb->carry_len);
					lb->carry_len = 0;
				}
			}
			else
			{
				lb->overlong = 1;
				lb->carry_len = 0;
			}
		}
		if (nl)
		{
			lb->overlong = 0;
			part++;
		}
		buf += part;
		len -= part;
	}
}

/* A last line without '\n' still counts (a truncated file ends that way). */
void
procfs_lines_finish(procfs_lines *lb)
{
	if (!lb->overlong && lb->carry_len > 0)
		lb->fn(lb->arg, lb->carry, lb->carry_len);
	lb->carry_len = 0;
	lb->overlong = 0;
}

/* Number parsing */

static int
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * Parses an unsigned decimal at *p (after blanks), advancing *p. Returns 0
 * on success, -1 on no digits or a value above INT64_MAX.
 */
static int
parse_u63(const char **p, const char *end, int64_t *out)
{
	const char *s = *p;
	int64_t		v = 0;

	while (s < end && is_blank(*s))
		s++;
	if (s >= end || *s < '0' || *s > '9')
		return -1;
	while (s < end && *s >= '0' && *s <= '9')
	{
		int			d = *s - '0';

		if (v > (INT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
		s++;
	}
	*p = s;
	*out = v;
	return 0;
}

int
procfs_parse_int(const char *buf, size_t len, int64_t *out)
{
	const char *p = buf;
	const char *end = buf + len;
	int			neg = 0;
	int64_t		v;

	while (p < end && (is_blank(*p) || *p == '\n'))
		p++;
	if (p < end && *p == '-')
	{
		neg = 1;
		p++;
	}
	if (parse_u63(&p, end, &v) != 0)
		return -1;
	while (p < end && (is_blank(*p) || *p == '\n'))
		p++;
	if (p != end)
		return -1;
	*out = neg ? -v : v;
	return 0;
}

/* "Key:   value[ kB]" and "key value" lines, into tables of fields */



/*
 * Parses the value part of a line: blanks, digits, and for kB fields blanks
 * plus "kB". Returns bytes (or the bare number), or PROCFS_INVALID.
 */
/* A signal mask ("0000000000000100"): whether SIGKILL (9, bit 8) is in it */
static int64_t
sigkill_in_mask(const char *p, const char *end)
{
	uint64_t	mask = 0;
	int			digits = 0;

	while (p < end && is_blank(*p))
		p++;
	for (; p < end && isxdigit((unsigned char) *p); p++, digits++)
	{
		if (digits == 16)
			return PROCFS_INVALID;
		mask = (mask << 4) | (uint64_t) (isdigit((unsigned char) *p) ? *p - '0' :
										 (tolower((unsigned char) *p) - 'a' + 10));
	}
	while (p < end && (is_blank(*p) || *p == '\r'))
		p++;
	if (digits == 0 || p != end)
		return PROCFS_INVALID;
	return (mask >> 8) & 1;
}

static int64_t
field_value(const char *p, const char *end, int kb)
{
	int64_t		v;

	if (kb == PROCFS_SIGKILL_MASK)
		return sigkill_in_mask(p, end);
	if (parse_u63(&p, end, &v) != 0)
		return PROCFS_INVALID;
	while (p < end && is_blank(*p))
		p++;
	if (kb)
	{
		if (end - p < 2 || p[0] != 'k' || p[1] != 'B')
			return PROCFS_INVALID;
		p += 2;
		if (v > INT64_MAX / 1024)
			return PROCFS_INVALID;
		v *= 1024;
	}
	while (p < end && (is_blank(*p) || *p == '\r'))
		p++;
	return p == end ? v : PROCFS_INVALID;
}

int64_t
procfs_sum(int64_t a, int64_t b)
{
	if (a < 0 || b < 0 || a > INT64_MAX - b)
		return PROCFS_MISSING;
	return a + b;
}

void
procfs_fields_init(const procfs_fieldset *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		*(int64_t *) ((char *) fs->target + fs->fields[i].offset) = PROCFS_MISSING;
}

/*
 * Applies one line to the fieldset's target. With sum set, values of
 * repeated keys add up (smaps); else the first occurrence wins. A sum with
 * an invalid or overflowing part is invalid as a whole.
 */
void
procfs_fields_line(void *arg, const char *line, size_t len)
{
	const procfs_fieldset *fs = arg;
	const char *sep = memchr(line, fs->sep, len);
	size_t		klen;

	if (sep == NULL)
		return;
	klen = (size_t) (sep - line);
	for (size_t i = 0; i < fs->n; i++)
	{
		int64_t    *slot;
		int64_t		v;

		if (strlen(fs->fields[i].key) != klen ||
			memcmp(fs->fields[i].key, line, klen) != 0)
			continue;
		slot = (int64_t *) ((char *) fs->target + fs->fields[i].offset);
		v = field_value(sep + 1, line + len, fs->fields[i].kb);
		if (*slot == PROCFS_MISSING)
			*slot = v;
		else if (fs->sum && *slot >= 0)
			*slot = (v < 0 || v > INT64_MAX - *slot) ? PROCFS_INVALID : *slot + v;
		return;
	}
}

/* Counts fields holding a figure (negative values hold none). */
int
procfs_fields_count(const procfs_fieldset *fs)
{
	int			n = 0;

	for (size_t i = 0; i < fs->n; i++)
		if (*(const int64_t *) ((const char *) fs->target + fs->fields[i].offset) >= 0)
			n++;
	return n;
}

/*
 * /proc/<pid>/stat: "pid (comm) state ppid ... starttime ...". comm may hold
 * spaces and parentheses, so the fields start after the *last* ')'.
 * Returns 0 when state, ppid and starttime (field 22) were all found.
 */
int
procfs_parse_stat(const char *buf, size_t len, procfs_stat *out)
{
	const char *p = NULL;
	const char *end = buf + len;
	int			field = 3;		/* the first field after ')' */
	int64_t		v;

	for (const char *q = buf; q < end; q++)
		if (*q == ')')
			p = q + 1;
	if (p == NULL)
		return -1;
	out->state = 0;
	out->ppid = PROCFS_MISSING;
	out->threads = PROCFS_MISSING;
	out->faults = 0;
	memset(&out->reaped, 0, sizeof(out->reaped));
	out->start_stack = out->start_brk = 0;
	for (;;)
	{
		while (p < end && *p == ' ')
			p++;
		if (p >= end || *p == '\n')
			return field > 22 ? 0 : -1;	/* the addresses are optional */
		if (field == 3)
		{
			out->state = *p;
			p++;
		}
		else if (field == 4 || (field >= 10 && field <= 12) || field == 16 || field == 17 ||
				 field == 20 || field == 22)
		{
			if (parse_u63(&p, end, &v) != 0)
				return -1;
			if (field == 4)
				out->ppid = v;
			else if (field == 10 || field == 12)
				out->faults += (uint64_t) v;	/* compared for equality only */
			else if (field == 11)
				out->reaped.cminflt = (uint64_t) v;
			else if (field == 16)
				out->reaped.cutime = (uint64_t) v;
			else if (field == 17)
				out->reaped.cstime = (uint64_t) v;
			else if (field == 20)
				out->threads = v;
			else
				out->starttime = (uint64_t) v;
		}
		else if (field == 28 || field == 47)
		{
			if (parse_u63(&p, end, &v) != 0)
				return 0;
			if (field == 28)
				out->start_stack = (uint64_t) v;
			else
			{
				out->start_brk = (uint64_t) v;
				return 0;
			}
		}
		if (p < end && *p != ' ')
		{
			/* skip the rest of a field we do not need */
			while (p < end && *p != ' ' && *p != '\n')
				p++;
		}
		field++;
	}
}

int
procfs_stat_dead(const procfs_stat *st)
{
	return st->state == 'Z' || st->state == 'X' || st->state == 'x';
}

/* /proc/<pid>/maps lines */

static int
parse_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t	v = 0;
	int			n = 0;

	for (; s < end; s++, n++)
	{
		int			d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (v >> 60)
			return -1;			/* more than 64 bits */
		v = (v << 4) | (uint64_t) d;
	}
	if (n == 0)
		return -1;
	*p = s;
	*out = v;
	return 0;
}

static int
expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return -1;
	(*p)++;
	return 0;
}

/* "start-end perms offset major:minor inode [path]" */
int
procfs_parse_maps_line(const char *line, size_t len, procfs_vma *vma)
{
	const char *p = line;
	const char *end = line + len;
	uint64_t	ignored;
	uint64_t	major, minor;

	if (parse_hex(&p, end, &vma->start) || expect(&p, end, '-') ||
		parse_hex(&p, end, &vma->end) || expect(&p, end, ' ') ||
		end - p < 5)
		return -1;
	vma->readable = p[0] == 'r';
	vma->writable = p[1] == 'w';
	vma->executable = p[2] == 'x';
	if (p[3] != 's' && p[3] != 'p')
		return -1;
	vma->shared = p[3] == 's';
	p += 4;
	if (expect(&p, end, ' ') || parse_hex(&p, end, &ignored) ||
		expect(&p, end, ' ') || parse_hex(&p, end, &major) ||
		expect(&p, end, ':') || parse_hex(&p, end, &minor) ||
		expect(&p, end, ' ') || major > UINT32_MAX || minor > UINT32_MAX)
		return -1;
	vma->dev = (major << 32) | minor;
	vma->inode = 0;
	if (p >= end || *p < '0' || *p > '9')
		return -1;
	for (; p < end && *p >= '0' && *p <= '9'; p++)
	{
		if (vma->inode > (UINT64_MAX - 9) / 10)
			return -1;
		vma->inode = vma->inode * 10 + (uint64_t) (*p - '0');
	}
	if (p < end && *p != ' ')
		return -1;
	while (p < end && *p == ' ')
		p++;
	vma->path = p;
	vma->path_len = (size_t) (end - p);
	return vma->start < vma->end ? 0 : -1;
}

typedef struct maps_reader
{
	procfs_vma_fn fn;
	void	   *arg;
} maps_reader;

static void
maps_line(void *arg, const char *line, size_t len)
{
	maps_reader *r = arg;
	procfs_vma	vma;

	if (procfs_parse_maps_line(line, len, &vma) == 0)
		r->fn(r->arg, &vma);
}

procfs_result
procfs_read_maps(pid_t pid, procfs_vma_fn fn, void *arg)
{
	maps_reader r = {fn, arg};

	return pid == 0 ? procfs_read_path_lines("/proc/self/maps", maps_line, &r) :
		procfs_read_lines(pid, "maps", maps_line, &r);
}

/* Readers */

void
procfs_path(char *path, size_t sz, pid_t pid, const char *name)
{
	if (pid == 0)
		snprintf(path, sz, "/proc/self/%s", name);
	else
		snprintf(path, sz, "/proc/%d/%s", (int) pid, name);
}

procfs_result
procfs_errno_result(int err)
{
	return (err == ENOENT || err == ESRCH) ? PROCFS_GONE : PROCFS_UNREADABLE;
}

/*
 * Opens /proc/<pid>/<name>, reading chunks into buf until EOF; with lb set,
 * each chunk goes to the line splitter and buf is reused.
 */
static procfs_result
read_path(const char *path, char *buf, size_t cap, size_t *total, procfs_lines *lb,
		  bool single)
{
	int			fd;
	procfs_result res = PROCFS_OK;

	*total = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return procfs_errno_result(errno);
	for (;;)
	{
		size_t		off = lb ? 0 : *total;
		ssize_t		r;

		if (off >= cap)
			break;
		r = read(fd, buf + off, cap - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
		{
			res = procfs_errno_result(errno);
			break;
		}
		if (r == 0)
			break;
		*total += (size_t) r;
		if (lb)
			procfs_lines_feed(lb, buf, (size_t) r);
		if (single && (size_t) r < cap - off)
			break;				/* all of a one-record file: no read for EOF */
	}
	close(fd);
	if (res == PROCFS_OK && *total == 0)
		res = PROCFS_UNREADABLE;
	return res;
}

/* A whole file into buf, NUL-terminated (cap counts the terminator) */
static procfs_result
read_whole(const char *path, char *buf, size_t cap, size_t *len, bool single)
{
	procfs_result res;

	*len = 0;
	if (cap == 0)
		return PROCFS_UNREADABLE;
	res = read_path(path, buf, cap - 1, len, NULL, single);
	buf[*len] = '\0';
	return res;
}

/* A file line by line */
static procfs_result
read_lines(const char *path, procfs_line_fn fn, void *arg, bool single)
{
	char		buf[4096];
	size_t		total;
	procfs_lines lb;
	procfs_result res;

	procfs_lines_init(&lb, fn, arg);
	res = read_path(path, buf, sizeof(buf), &total, &lb, single);
	procfs_lines_finish(&lb);
	return res;
}

procfs_result
procfs_read_path(const char *path, char *buf, size_t cap, size_t *len)
{
	return read_whole(path, buf, cap, len, false);
}

procfs_result
procfs_read_path_lines(const char *path, procfs_line_fn fn, void *arg)
{
	return read_lines(path, fn, arg, false);
}

/*
 * Whether /proc/<pid>/name is shown as one record (the kernel's
 * single_open()): then a read that returns less than was asked for has
 * returned all of it, and no second read is needed to see the end.
 */
static bool
single_record(const char *name)
{
	return strcmp(name, "stat") == 0 || strcmp(name, "status") == 0 ||
		strcmp(name, "oom_score") == 0 || strcmp(name, "oom_score_adj") == 0 ||
		strcmp(name, "schedstat") == 0 || strcmp(name, "statm") == 0;
}

procfs_result
procfs_read_file(pid_t pid, const char *name, char *buf, size_t cap, size_t *len)
{
	char		path[96];

	procfs_path(path, sizeof(path), pid, name);
	return read_whole(path, buf, cap, len, single_record(name));
}

/*
 * The readers of the one-record files a parser turns into a struct (stat,
 * schedstat, statm): the file whole into a buffer of cap bytes, then
 * PROCFS_UNREADABLE when it does not parse. One body for the three.
 */
#define PARSED_READER(reader, name, cap, parser, type) \
procfs_result \
reader(pid_t pid, type *out) \
{ \
	char		buf[cap]; \
	size_t		len; \
	procfs_result res = procfs_read_file(pid, name, buf, sizeof(buf), &len); \
\
	if (res == PROCFS_OK && parser(buf, len, out) != 0) \
		res = PROCFS_UNREADABLE; \
	return res; \
}

PARSED_READER(procfs_read_stat, "stat", 1024, procfs_parse_stat, procfs_stat)

int
procfs_parse_numbers(const char *buf, size_t len, int64_t *v, int n)
{
	const char *p = buf;

	for (int i = 0; i < n; i++)
		if (parse_u63(&p, buf + len, &v[i]) != 0)
			return -1;
	return 0;
}

int
procfs_parse_schedstat(const char *buf, size_t len, procfs_schedstat *out)
{
	int64_t		v[3];

	if (procfs_parse_numbers(buf, len, v, 3) != 0)
		return -1;
	out->runtime_ns = (uint64_t) v[0];
	out->timeslices = (uint64_t) v[2];
	return 0;
}

PARSED_READER(procfs_read_schedstat, "schedstat", 128, procfs_parse_schedstat, procfs_schedstat)

int
procfs_parse_statm(const char *buf, size_t len, procfs_statm *out)
{
	return procfs_parse_statm_pages(buf, len, sysconf(_SC_PAGESIZE), out);
}

/* "size resident shared ...", in pages */
int
procfs_parse_statm_pages(const char *buf, size_t len, long page, procfs_statm *out)
{
	int64_t		v[3];

	if (procfs_parse_numbers(buf, len, v, 3) != 0 || page <= 0 ||
		v[1] > INT64_MAX / page || v[2] > v[1])
		return -1;
	out->resident = v[1] * page;
	out->shared = v[2] * page;
	return 0;
}

PARSED_READER(procfs_read_statm, "statm", 128, procfs_parse_statm, procfs_statm)

procfs_result
procfs_exe_id(pid_t pid, uint64_t *dev, uint64_t *ino)
{
	char		path[64];
	struct stat st;

	procfs_path(path, sizeof(path), pid, "exe");
	if (stat(path, &st) != 0)
		return procfs_errno_result(errno);
	*dev = (uint64_t) st.st_dev;
	*ino = (uint64_t) st.st_ino;
	return PROCFS_OK;
}

procfs_result
procfs_read_lines(pid_t pid, const char *name, procfs_line_fn fn, void *arg)
{
	char		path[96];

	procfs_path(path, sizeof(path), pid, name);
	return read_lines(path, fn, arg, single_record(name));
}

/* Children */

/* Parses space-separated pids from a chunk; a number may span chunks. */
typedef struct pid_list
{
	pid_t	   *out;
	int			cap;
	int			n;
	int64_t		cur;
	int			in_num;
} pid_list;

static void
pid_list_feed(pid_list *pl, const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
	{
		if (buf[i] >= '0' && buf[i] <= '9')
		{
			/* past INT32_MAX it is no pid: stays invalid until the blank */
			if (pl->cur >= 0)
				pl->cur = pl->cur * 10 + (buf[i] - '0');
			if (pl->cur > INT32_MAX)
				pl->cur = -1;
			pl->in_num = 1;
		}
		else if (pl->in_num)
		{
			if (pl->n < pl->cap && pl->cur > 0)
				pl->out[pl->n++] = (pid_t) pl->cur;
			pl->cur = 0;
			pl->in_num = 0;
		}
	}
}

static int
children_file(pid_t pid, pid_t *out, int cap)
{
	char		name[64];
	char		buf[4096];
	char		path[96];
	pid_list	pl = {out, cap, 0, 0, 0};
	int			fd;
	ssize_t		r;

	snprintf(name, sizeof(name), "task/%d/children", (int) pid);
	procfs_path(path, sizeof(path), pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((r = read(fd, buf, sizeof(buf))) != 0)
	{
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
		{
			close(fd);
			return -1;
		}
		pid_list_feed(&pl, buf, (size_t) r);
	}
	close(fd);
	pid_list_feed(&pl, " ", 1);
	return pl.n;
}

int
procfs_children_scan(pid_t pid, pid_t *out, int cap)
{
	DIR		   *dir = opendir("/proc");
	struct dirent *de;
	int			n = 0;

	if (dir == NULL)
		return -1;
	while ((de = readdir(dir)) != NULL && n < cap)
	{
		procfs_stat st;
		int64_t		child;

		if (procfs_parse_int(de->d_name, strlen(de->d_name), &child) != 0 ||
			child <= 0 || child > INT32_MAX)
			continue;
		if (procfs_read_stat((pid_t) child, &st) == PROCFS_OK && st.ppid == pid)
			out[n++] = (pid_t) child;
	}
	closedir(dir);
	return n;
}

int
procfs_children(pid_t pid, pid_t *out, int cap)
{
	int			n = children_file(pid, out, cap);

	return n >= 0 ? n : procfs_children_scan(pid, out, cap);
}

procfs_result
procfs_has_child(pid_t pid, int *has)
{
	char		name[64];
	char		path[96];
	char		buf[32];
	ssize_t		r;
	int			fd;

	*has = 0;
	/* pid 0: /proc/self, whose main thread is getpid()'s */
	snprintf(name, sizeof(name), "task/%d/children", (int) (pid != 0 ? pid : getpid()));
	procfs_path(path, sizeof(path), pid, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return procfs_errno_result(errno);
	/* "pid pid ... ", or nothing: the first bytes say which */
	while ((r = read(fd, buf, sizeof(buf))) < 0 && errno == EINTR)
		;
	close(fd);
	if (r < 0)
		return PROCFS_UNREADABLE;
	for (ssize_t i = 0; i < r && !*has; i++)
		*has = buf[i] >= '1' && buf[i] <= '9';
	return PROCFS_OK;
}

/* /proc/<pid>/fd */

typedef void (*fd_fn) (void *arg, int fd);

/* Calls fn for every open fd of the process */
static procfs_result
each_fd(pid_t pid, fd_fn fn, void *arg)
{
	char		path[64];
	char		buf[4096];
	int			dirfd;
	procfs_result res = PROCFS_OK;

	procfs_path(path, sizeof(path), pid, "fd");
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return procfs_errno_result(errno);
	for (;;)
	{
		ssize_t		n = getdents64(dirfd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
		{
			res = procfs_errno_result(errno);
			break;
		}
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n;)
		{
			struct dirent64 *d = (struct dirent64 *) (buf + off);
			char	   *e;
			long		fd = strtol(d->d_name, &e, 10);

			off += d->d_reclen;
			if (e == d->d_name || *e != '\0' || fd < 0 || fd > INT32_MAX)
				continue;		/* . and .. */
			fn(arg, (int) fd);
		}
	}
	close(dirfd);
	return res;
}

typedef struct fd_bits
{
	uint64_t   *bits;
	size_t		nbits;
} fd_bits;

static void
fd_set_bit(void *arg, int fd)
{
	fd_bits    *b = arg;

	if ((size_t) fd < b->nbits)
		b->bits[fd / 64] |= UINT64_C(1) << (fd % 64);
}

procfs_result
procfs_fd_bitmap(pid_t pid, uint64_t *bits, size_t nbits)
{
	fd_bits		b = {bits, nbits};

	memset(bits, 0, (nbits + 63) / 64 * sizeof(uint64_t));
	return each_fd(pid, fd_set_bit, &b);
}

typedef struct fd_count
{
	const uint64_t *inherited;
	size_t		nbits;
	int64_t		files;
} fd_count;

static void
fd_count_one(void *arg, int fd)
{
	fd_count   *c = arg;

	if (!(c->inherited && (size_t) fd < c->nbits &&
		  (c->inherited[fd / 64] & (UINT64_C(1) << (fd % 64)))))
		c->files++;
}

procfs_result
procfs_count_fds(pid_t pid, const uint64_t *inherited, size_t nbits, int64_t *files)
{
	fd_count	c = {inherited, nbits, 0};
	procfs_result res = each_fd(pid, fd_count_one, &c);

	*files = res == PROCFS_OK ? c.files : PROCFS_MISSING;
	return res;
}
