/*
 * dsm.c
 *		Dynamic shared memory segments: which exist, and which a process
 *		maps (dsm.h).
 */
#include "linux/dsm.h"
#include "linux/pagemap_abi.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static int	by_id(const void *a, const void *b);

static int
add_segment(dsm_table *t, const dsm_segment *s)
{
	if (t->n == t->cap)
	{
		int			cap = t->cap ? 2 * t->cap : 64;
		dsm_segment *grown;

		if (t->n >= DSM_TABLE_MAX)
		{
			t->truncated = 1;
			return -1;
		}
		grown = realloc(t->seg, (size_t) cap * sizeof(dsm_segment));
		if (grown == NULL)
		{
			t->truncated = 1;
			return -1;
		}
		t->seg = grown;
		t->cap = cap;
	}
	t->seg[t->n++] = *s;
	return 0;
}

/* Adds a segment where its id sorts (the table stays sorted); its index, or -1 */
static int
insert_segment(dsm_table *t, const dsm_segment *s)
{
	int			at;

	if (add_segment(t, s) != 0)
		return -1;
	for (at = t->n - 1; at > 0 && t->seg[at - 1].id > s->id; at--)
		t->seg[at] = t->seg[at - 1];
	t->seg[at] = *s;
	return at;
}

static int
by_id(const void *a, const void *b)
{
	uint64_t	x = ((const dsm_segment *) a)->id;
	uint64_t	y = ((const dsm_segment *) b)->id;

	return (x > y) - (x < y);
}

/* The handle a name ends in (PostgreSQL.<handle>, mmap.<handle>); 0 if none */
static uint32_t
name_handle(const char *s)
{
	char	   *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	return errno == 0 && *end == '\0' && v <= UINT32_MAX ? (uint32_t) v : 0;
}

static int	open_dir(dsm_table *t, const char *dir);

/* mmap: the files of dir, listed (the data directory's own pg_dynshmem) */
static int
read_dir(dsm_table *t, const char *dir, const char *prefix, uid_t uid)
{
	size_t		pl = strlen(prefix);
	DIR		   *d;
	struct dirent *de;

	if (open_dir(t, dir) != 0)
		return -1;
	if ((d = fdopendir(t->dirfd)) == NULL)
	{
		close(t->dirfd);
		t->dirfd = -1;
		return -1;
	}
	for (long seen = 0; (de = readdir(d)) != NULL; seen++)
	{
		struct stat st;
		dsm_segment s;

		if (seen == DSM_DIR_MAX)
		{
			t->truncated = 1;
			break;
		}
		if (strncmp(de->d_name, prefix, pl) != 0)
			continue;
		/* never through a symlink: another user's file must not count */
		if (fstatat(t->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
			!S_ISREG(st.st_mode) || st.st_uid != uid)
			continue;
		s.id = (uint64_t) st.st_ino;
		s.bytes = (int64_t) st.st_blocks * 512;
		s.size = (int64_t) st.st_size;
		s.handle = name_handle(de->d_name + pl);
		if (add_segment(t, &s) != 0)
			break;
	}
	closedir(d);				/* and its fd: the table learns nothing by name */
	t->dirfd = -1;
	return 0;
}

int
dsm_parse_sysv_line(const char *line, size_t len, dsm_segment *seg, uint64_t *uid, uint64_t *cuid)
{
	/* key shmid perms size cpid lpid nattch uid gid cuid cgid atime dtime ctime rss swap */
	int64_t		f[16];
	const char *p = line;
	const char *end = line + len;
	int			negative = 0;

	/* the key is a signed int (IPC_PRIVATE 0; a key can print negative) */
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p < end && *p == '-')
	{
		negative = 1;
		p++;
	}
	if (procfs_parse_numbers(p, (size_t) (end - p), f, 16) != 0 || f[0] > (int64_t) UINT32_MAX)
		return -1;
	seg->id = (uint64_t) f[1];
	seg->handle = negative ? (uint32_t) (0u - (uint32_t) f[0]) : (uint32_t) f[0];
	seg->size = f[3];
	seg->bytes = f[14];
	*uid = (uint64_t) f[7];
	*cuid = (uint64_t) f[9];
	return 0;
}

typedef struct sysv_reader
{
	dsm_table  *t;
	uid_t		uid;
	int64_t		not_key;
} sysv_reader;

static void
sysv_line(void *arg, const char *line, size_t len)
{
	sysv_reader *r = arg;
	dsm_segment s;
	uint64_t	uid, cuid;

	/*
	 * The header line does not parse. Owned and made by the server's user:
	 * a segment another user made and gave it is not one of its segments
	 */
	if (dsm_parse_sysv_line(line, len, &s, &uid, &cuid) != 0 || uid != (uint64_t) r->uid ||
		cuid != (uint64_t) r->uid || (r->not_key >= 0 && s.handle == (uint32_t) r->not_key))
		return;
	(void) add_segment(r->t, &s);
}

/* dir opened (never through a symlink), its device noted */
static int
open_dir(dsm_table *t, const char *dir)
{
	struct stat dst;

	t->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (t->dirfd < 0)
		return -1;
	if (fstat(t->dirfd, &dst) != 0)
	{
		close(t->dirfd);
		t->dirfd = -1;
		return -1;
	}
	t->dev = ((uint64_t) major(dst.st_dev) << 32) | minor(dst.st_dev);
	return 0;
}

int
dsm_table_read(dsm_table *t, dsm_kind kind, const char *dir, const char *prefix, uid_t uid,
			   int64_t not_key)
{
	int			rc = -1;

	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->dirfd = -1;
	t->dir = dir;
	t->prefix = prefix;
	t->uid = uid;
	if (kind == DSM_KIND_POSIX)
		rc = open_dir(t, dir);
	else if (kind == DSM_KIND_MMAP)
		rc = read_dir(t, dir, prefix, uid);
	else if (kind == DSM_KIND_SYSV)
	{
		sysv_reader r = {t, uid, not_key};

		rc = procfs_read_path_lines("/proc/sysvipc/shm", sysv_line, &r) == PROCFS_OK ? 0 : -1;
	}
	if (rc != 0 || t->truncated)
	{
		t->n = 0;
		rc = -1;
	}
	else if (t->n > 1)
	{
		int			w = 0;

		qsort(t->seg, (size_t) t->n, sizeof(dsm_segment), by_id);
		/* two names of one file (a hard link) are one segment: the first name's */
		for (int i = 1; i < t->n; i++)
			if (t->seg[i].id != t->seg[w].id)
				t->seg[++w] = t->seg[i];
		t->n = w + 1;
	}
	return rc;
}

void
dsm_table_free(dsm_table *t)
{
	if (t->dirfd >= 0)
		close(t->dirfd);
	free(t->seg);
	memset(t, 0, sizeof(*t));
	t->dirfd = -1;
}

int
dsm_table_find(const dsm_table *t, uint64_t id)
{
	int			lo = 0, hi = t->n;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (t->seg[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n && t->seg[lo].id == id ? lo : -1;
}

int
dsm_table_match(const dsm_table *t, const procfs_vma *vma)
{
	int			i;

	if (t == NULL || t->n == 0 || !vma->shared || vma->inode == 0)
		return -1;
	if (t->kind != DSM_KIND_SYSV && vma->dev != t->dev)
		return -1;
	i = dsm_table_find(t, vma->inode);
	/* sysv: an anonymous shared mapping's inode is not a shmid, but could equal one */
	if (i >= 0 && t->kind == DSM_KIND_SYSV && vma->end - vma->start > (uint64_t) t->seg[i].size + 65536)
		return -1;
	return i;
}

int
dsm_table_wants_name(const dsm_table *t, const procfs_vma *vma)
{
	return t != NULL && t->kind == DSM_KIND_POSIX && t->dirfd >= 0 && !t->truncated &&
		vma->shared && vma->inode != 0 && vma->dev == t->dev &&
		dsm_table_find(t, vma->inode) < 0;
}

/*
 * Adds the file name (in dir) as a segment if it is a regular file uid owns
 * with inode id; its index, or -1
 */
static int
learn_file(dsm_table *t, const char *name, uint64_t id)
{
	struct stat st;
	dsm_segment s;

	if (fstatat(t->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
		st.st_uid != t->uid || (uint64_t) st.st_ino != id)
		return -1;
	s.id = id;
	s.bytes = (int64_t) st.st_blocks * 512;
	s.size = (int64_t) st.st_size;
	s.handle = name_handle(name + strlen(t->prefix));
	return insert_segment(t, &s);
}

/* Whether name is a prefix followed by digits alone */
static int
segment_name(const char *name, size_t len, const char *prefix)
{
	size_t		pl = strlen(prefix);

	if (len <= pl || len > pl + 10 || strncmp(name, prefix, pl) != 0)
		return 0;
	for (size_t i = pl; i < len; i++)
		if (name[i] < '0' || name[i] > '9')
			return 0;
	return 1;
}

void
dsm_table_learn(dsm_table *t, const procfs_vma *vma, const char *name, size_t len)
{
	size_t		dl;
	char		base[64];

	if (!dsm_table_wants_name(t, vma))
		return;
	/* "<dir>/<prefix><digits>" exactly: a " (deleted)" one can no longer be looked up */
	dl = strlen(t->dir);
	if (len <= dl + 1 || strncmp(name, t->dir, dl) != 0 || name[dl] != '/' ||
		!segment_name(name + dl + 1, len - dl - 1, t->prefix) || len - dl - 1 >= sizeof(base))
		return;
	memcpy(base, name + dl + 1, len - dl - 1);
	base[len - dl - 1] = '\0';
	(void) learn_file(t, base, vma->inode);
}

int
dsm_table_recall(dsm_table *t, uint64_t id, uint32_t handle)
{
	int			i = dsm_table_find(t, id);
	char		base[64];

	if (i >= 0)
		return t->seg[i].handle == handle ? i : -1;
	if (t->kind != DSM_KIND_POSIX || t->dirfd < 0 || t->truncated)
		return -1;
	snprintf(base, sizeof(base), "%s%u", t->prefix, (unsigned) handle);
	return learn_file(t, base, id);
}

void
dsm_mapped_meet(dsm_mapped *m, const dsm_table *t, const procfs_vma *vma)
{
	int			i = dsm_table_match(t, vma);

	if (i < 0 || m->n < 0)
		return;
	/* a segment mapped twice (or in two pieces) counts once */
	for (int k = 0; k < m->n; k++)
		if (m->id[k] == t->seg[i].id)
			return;
	if (m->n == DSM_MAX_MAPPED)
		m->more = 1;
	else
	{
		m->id[m->n] = t->seg[i].id;
		m->handle[m->n++] = t->seg[i].handle;
	}
}

typedef struct maps_reader
{
	dsm_table  *t;
	dsm_mapped *m;
} maps_reader;

static void
maps_line(void *arg, const procfs_vma *vma)
{
	maps_reader *r = arg;

	if (vma->path_len > 0)
		dsm_table_learn(r->t, vma, vma->path, vma->path_len);
	dsm_mapped_meet(r->m, r->t, vma);
}

/* One PROCMAP_QUERY: the next shared file mapping from addr; errno on failure */
static int
query_shared(int fd, uint64_t addr, struct procmap_query_abi *q, char *name, size_t name_size)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->query_flags = PM_QUERY_COVERING_OR_NEXT_VMA | PM_QUERY_VMA_SHARED | PM_QUERY_FILE_BACKED_VMA;
	q->query_addr = addr;
	if (name)
	{
		memset(name, 0, name_size);
		q->vma_name_addr = (uint64_t) (uintptr_t) name;
		q->vma_name_size = (uint32_t) name_size;
	}
	while (ioctl(fd, PM_IOCTL_PROCMAP_QUERY, q) < 0)
		if (errno != EINTR)
			return errno;
	return 0;
}

/*
 * The shared file mappings alone, asked of the kernel (PROCMAP_QUERY, Linux
 * >= 6.11, skips the others): a handful of calls for a backend's ~250
 * mappings. PROCFS_OK when done, else what failed; *unsupported when the
 * kernel has no such query (the maps text then).
 */
static procfs_result
query_mapped(pid_t pid, dsm_table *t, dsm_mapped *m, int *unsupported)
{
	char		path[64];
	struct procmap_query_abi q;
	uint64_t	addr = 0;
	int			fd;
	procfs_result res = PROCFS_OK;

	*unsupported = 0;
	procfs_path(path, sizeof(path), pid, "maps");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return procfs_errno_result(errno);
	for (int first = 1;; first = 0)
	{
		procfs_vma	vma;
		int			err = query_shared(fd, addr, &q, NULL, 0);

		if (err)
		{
			if (first && (err == ENOTTY || err == EINVAL || err == EOPNOTSUPP))
				*unsupported = 1;
			else if (err != ENOENT) /* ENOENT: no more */
				res = procfs_errno_result(err);
			break;
		}
		if (q.vma_end <= addr)
		{
			res = PROCFS_UNREADABLE;	/* no progress: do not spin */
			break;
		}
		memset(&vma, 0, sizeof(vma));
		vma.start = q.vma_start;
		vma.end = q.vma_end;
		vma.shared = 1;
		vma.inode = q.inode;
		vma.dev = ((uint64_t) q.dev_major << 32) | q.dev_minor;
		if (dsm_table_wants_name(t, &vma))
		{
			char		name[256];

			if (query_shared(fd, vma.start, &q, name, sizeof(name)) == 0 && q.vma_start == vma.start &&
				q.inode == vma.inode && q.vma_name_size > 0)
				dsm_table_learn(t, &vma, name, strnlen(name, sizeof(name)));
		}
		dsm_mapped_meet(m, t, &vma);
		addr = vma.end;
	}
	close(fd);
	return res;
}

procfs_result
dsm_read_mapped(pid_t pid, dsm_table *t, dsm_mapped *m, int use_query)
{
	maps_reader r = {t, m};
	procfs_result res = PROCFS_OK;
	int			unsupported = 1;

	m->n = 0;
	m->more = 0;
	if (use_query)
		res = query_mapped(pid, t, m, &unsupported);
	if (unsupported)
	{
		m->n = 0;
		m->more = 0;
		res = procfs_read_maps(pid, maps_line, &r);
	}
	if (res != PROCFS_OK)
		m->n = -1;
	return res;
}
