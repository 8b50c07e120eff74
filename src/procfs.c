/*
 * procfs.c
 *		Parsers and readers for Linux /proc/<pid> files (no PostgreSQL headers).
 *
 * Every read can fail or come back short and every field can be missing or
 * garbage: the parsers only ever fill figures they could validate, and the
 * readers never write past their buffers.
 */
#include "procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROCFS_INVALID	(-2)	/* seen, but not a usable figure */

/* Line splitting */

void
procfs_lines_init(procfs_lines *lb, procfs_line_fn fn, void *arg)
{
	lb->fn = fn;
	lb->arg = arg;
	lb->carry_len = 0;
	lb->overlong = 0;
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

/* "Key:   value[ kB]" lines, shared by status, smaps and smaps_rollup */

typedef struct kv_field
{
	const char *key;
	size_t		offset;			/* of an int64_t in the target struct */
	int			kb;				/* value carries a " kB" unit */
} kv_field;

#define KV(type, key, member, kb) { key, offsetof(type, member), kb }

static const kv_field status_fields[] = {
	KV(procfs_status, "VmPeak", vm_peak, 1),
	KV(procfs_status, "VmHWM", vm_hwm, 1),
	KV(procfs_status, "VmRSS", vm_rss, 1),
	KV(procfs_status, "RssAnon", rss_anon, 1),
	KV(procfs_status, "RssFile", rss_file, 1),
	KV(procfs_status, "RssShmem", rss_shmem, 1),
	KV(procfs_status, "VmPTE", vm_pte, 1),
	KV(procfs_status, "VmSwap", vm_swap, 1),
	KV(procfs_status, "HugetlbPages", hugetlb, 1),
	KV(procfs_status, "PPid", ppid, 0),
};

static const kv_field smaps_fields[] = {
	KV(procfs_smaps, "Rss", rss, 1),
	KV(procfs_smaps, "Pss", pss, 1),
	KV(procfs_smaps, "Pss_Anon", pss_anon, 1),
	KV(procfs_smaps, "Pss_File", pss_file, 1),
	KV(procfs_smaps, "Pss_Shmem", pss_shmem, 1),
	KV(procfs_smaps, "Private_Clean", private_clean, 1),
	KV(procfs_smaps, "Private_Dirty", private_dirty, 1),
	KV(procfs_smaps, "Swap", swap, 1),
	KV(procfs_smaps, "SwapPss", swap_pss, 1),
};

#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Parses the value part of a key-value line: blanks, digits, and for kB
 * fields blanks plus "kB". Returns bytes (or the bare number), or
 * PROCFS_INVALID.
 */
static int64_t
kv_value(const char *p, const char *end, int kb)
{
	int64_t		v;

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

/*
 * Applies one line to a struct described by fields[]. With sum set, values
 * of repeated keys add up (smaps); else the first occurrence wins. A sum
 * with an invalid or overflowing part is invalid as a whole.
 */
static void
kv_line(void *target, const kv_field *fields, size_t nfields, int sum,
		const char *line, size_t len)
{
	const char *colon = memchr(line, ':', len);
	size_t		klen;

	if (colon == NULL)
		return;
	klen = (size_t) (colon - line);
	for (size_t i = 0; i < nfields; i++)
	{
		int64_t    *slot;
		int64_t		v;

		if (strlen(fields[i].key) != klen ||
			memcmp(fields[i].key, line, klen) != 0)
			continue;
		slot = (int64_t *) ((char *) target + fields[i].offset);
		v = kv_value(colon + 1, line + len, fields[i].kb);
		if (*slot == PROCFS_MISSING)
			*slot = v;
		else if (sum && *slot >= 0)
			*slot = (v < 0 || v > INT64_MAX - *slot) ? PROCFS_INVALID : *slot + v;
		return;
	}
}

static void
kv_init(void *target, const kv_field *fields, size_t nfields)
{
	for (size_t i = 0; i < nfields; i++)
		*(int64_t *) ((char *) target + fields[i].offset) = PROCFS_MISSING;
}

/* Counts fields holding a figure (negative values hold none). */
static int
kv_count(const void *target, const kv_field *fields, size_t nfields)
{
	int			n = 0;

	for (size_t i = 0; i < nfields; i++)
		if (*(const int64_t *) ((const char *) target + fields[i].offset) >= 0)
			n++;
	return n;
}

void
procfs_status_init(procfs_status *st)
{
	kv_init(st, status_fields, NFIELDS(status_fields));
}

void
procfs_status_line(void *st, const char *line, size_t len)
{
	kv_line(st, status_fields, NFIELDS(status_fields), 0, line, len);
}

int
procfs_status_count(const procfs_status *st)
{
	return kv_count(st, status_fields, NFIELDS(status_fields));
}

void
procfs_smaps_init(procfs_smaps *sm)
{
	kv_init(sm, smaps_fields, NFIELDS(smaps_fields));
}

void
procfs_smaps_line(void *sm, const char *line, size_t len)
{
	kv_line(sm, smaps_fields, NFIELDS(smaps_fields), 1, line, len);
}

int
procfs_smaps_count(const procfs_smaps *sm)
{
	return kv_count(sm, smaps_fields, NFIELDS(smaps_fields));
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
	for (;;)
	{
		while (p < end && *p == ' ')
			p++;
		if (p >= end || *p == '\n')
			return -1;
		if (field == 3)
		{
			out->state = *p;
			p++;
		}
		else if (field == 4 || field == 22)
		{
			if (parse_u63(&p, end, &v) != 0)
				return -1;
			if (field == 4)
				out->ppid = v;
			else
			{
				out->starttime = (uint64_t) v;
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

/* Process titles */

void
procfs_title_to_type(const char *cmdline, size_t len, const char *cluster_name,
					 char *out, size_t outsz)
{
	static const char prefix[] = "postgres: ";
	char		title[256];
	size_t		n = len < sizeof(title) - 1 ? len : sizeof(title) - 1;
	const char *t = title;
	size_t		cl = cluster_name ? strlen(cluster_name) : 0;

	if (outsz == 0)
		return;
	out[0] = '\0';
	/* argv strings are NUL-separated; the ps display pads with NULs */
	for (size_t i = 0; i < n; i++)
		title[i] = (cmdline[i] == '\0' || cmdline[i] == '\n') ? ' ' : cmdline[i];
	while (n > 0 && title[n - 1] == ' ')
		n--;
	title[n] = '\0';

	if (strncmp(t, prefix, sizeof(prefix) - 1) != 0)
		return;
	t += sizeof(prefix) - 1;
	if (cl > 0 && strncmp(t, cluster_name, cl) == 0 && t[cl] == ':' && t[cl + 1] == ' ')
		t += cl + 2;
	snprintf(out, outsz, "%s", t);
}

/* Readers */

static void
proc_path(char *path, size_t sz, pid_t pid, const char *name)
{
	if (pid == 0)
		snprintf(path, sz, "/proc/self/%s", name);
	else
		snprintf(path, sz, "/proc/%d/%s", (int) pid, name);
}

static procfs_result
errno_result(int err)
{
	return (err == ENOENT || err == ESRCH) ? PROCFS_GONE : PROCFS_UNREADABLE;
}

/*
 * Opens /proc/<pid>/<name>, reading chunks into buf until EOF; with lb set,
 * each chunk goes to the line splitter and buf is reused.
 */
static procfs_result
read_proc(pid_t pid, const char *name, char *buf, size_t cap, size_t *total,
		  procfs_lines *lb)
{
	char		path[64];
	int			fd;
	procfs_result res = PROCFS_OK;

	*total = 0;
	proc_path(path, sizeof(path), pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno_result(errno);
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
			res = errno_result(errno);
			break;
		}
		if (r == 0)
			break;
		*total += (size_t) r;
		if (lb)
			procfs_lines_feed(lb, buf, (size_t) r);
	}
	close(fd);
	if (res == PROCFS_OK && *total == 0)
		res = PROCFS_UNREADABLE;
	return res;
}

procfs_result
procfs_read_file(pid_t pid, const char *name, char *buf, size_t cap, size_t *len)
{
	procfs_result res;

	*len = 0;
	if (cap == 0)
		return PROCFS_UNREADABLE;
	res = read_proc(pid, name, buf, cap - 1, len, NULL);
	buf[*len] = '\0';
	return res;
}

procfs_result
procfs_exe_id(pid_t pid, uint64_t *dev, uint64_t *ino)
{
	char		path[64];
	struct stat st;

	proc_path(path, sizeof(path), pid, "exe");
	if (stat(path, &st) != 0)
		return errno_result(errno);
	*dev = (uint64_t) st.st_dev;
	*ino = (uint64_t) st.st_ino;
	return PROCFS_OK;
}

procfs_result
procfs_read_lines(pid_t pid, const char *name, procfs_line_fn fn, void *arg)
{
	char		buf[4096];
	size_t		total;
	procfs_lines lb;
	procfs_result res;

	procfs_lines_init(&lb, fn, arg);
	res = read_proc(pid, name, buf, sizeof(buf), &total, &lb);
	procfs_lines_finish(&lb);
	return res;
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
	proc_path(path, sizeof(path), pid, name);
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
		char		buf[1024];
		size_t		len;
		procfs_stat st;
		int64_t		child;

		if (procfs_parse_int(de->d_name, strlen(de->d_name), &child) != 0 ||
			child <= 0 || child > INT32_MAX)
			continue;
		if (procfs_read_file((pid_t) child, "stat", buf, sizeof(buf), &len) == PROCFS_OK &&
			procfs_parse_stat(buf, len, &st) == 0 && st.ppid == pid)
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
