/*
 * sysmem.c
 *		The machine's memory and the server's memory cgroup (no PostgreSQL
 *		headers).
 */
#include "linux/keys.h"
#include "linux/sysmem.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* /proc/meminfo */

procfs_result
sysmem_read_meminfo(sysmem_meminfo *mi)
{
	procfs_fieldset fs = keys_fieldset(&keys_meminfo, mi);
	procfs_result res;

	procfs_fields_init(&fs);
	res = procfs_read_path_lines("/proc/meminfo", procfs_fields_line, &fs);
	if (res != PROCFS_OK)
		procfs_fields_init(&fs);
	return res;
}

/* Finding the cgroup */

/* Copies a mountinfo field, undoing its octal escapes (\040 for a blank). */
static void
unescape(const char *s, size_t len, char *out, size_t outsz)
{
	size_t		o = 0;

	for (size_t i = 0; i < len && o + 1 < outsz; i++)
	{
		if (s[i] == '\\' && i + 3 < len && s[i + 1] >= '0' && s[i + 1] <= '3' &&
			s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7')
		{
			out[o++] = (char) ((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		}
		else
			out[o++] = s[i];
	}
	out[o] = '\0';
}

/* Whether the comma-separated list holds word. */
static int
has_word(const char *list, size_t len, const char *word)
{
	size_t		wl = strlen(word);
	size_t		i = 0;

	while (i < len)
	{
		size_t		j = i;

		while (j < len && list[j] != ',')
			j++;
		if (j - i == wl && memcmp(list + i, word, wl) == 0)
			return 1;
		i = j + 1;
	}
	return 0;
}

/* Splits line into blank-separated fields; returns how many (at most max). */
static int
split_fields(const char *line, size_t len, const char **f, size_t *fl, int max)
{
	int			n = 0;
	size_t		i = 0;

	while (i < len && n < max)
	{
		size_t		j;

		while (i < len && line[i] == ' ')
			i++;
		if (i >= len)
			break;
		j = i;
		while (j < len && line[j] != ' ')
			j++;
		f[n] = line + i;
		fl[n++] = j - i;
		i = j;
	}
	return n;
}

/*
 * One mountinfo line: "id parent maj:min root mountpoint opts [tags] - fstype
 * source superopts". True when it is the mount of the memory hierarchy (v1)
 * or of cgroup2 that holds path: then cg's mount and dir are set.
 */
static int
mountinfo_match(const char *line, size_t len, int want_v1, const char *path, sysmem_cgroup *cg)
{
	const char *f[32];
	size_t		fl[32];
	int			n = split_fields(line, len, f, fl, 32);
	int			dash = -1;
	char		root[512];
	size_t		rl;
	const char *rel;

	for (int i = 6; i < n; i++)
		if (fl[i] == 1 && f[i][0] == '-')
		{
			dash = i;
			break;
		}
	if (dash < 0 || dash + 1 >= n)
		return 0;
	if (want_v1)
	{
		if (!(fl[dash + 1] == 6 && memcmp(f[dash + 1], "cgroup", 6) == 0) ||
			dash + 3 >= n || !has_word(f[dash + 3], fl[dash + 3], "memory"))
			return 0;
	}
	else if (!(fl[dash + 1] == 7 && memcmp(f[dash + 1], "cgroup2", 7) == 0))
		return 0;

	unescape(f[3], fl[3], root, sizeof(root));
	unescape(f[4], fl[4], cg->mount, sizeof(cg->mount));
	rl = strlen(root);
	/* the cgroup path is relative to the hierarchy's root; the mount may show a subtree */
	if (strcmp(root, "/") == 0)
		rel = path;
	else if (strncmp(path, root, rl) == 0 && (path[rl] == '/' || path[rl] == '\0'))
		rel = path + rl;
	else
		return 0;			/* not under this mount: cannot be resolved */
	if (strstr(rel, "/..") != NULL)
		return 0;			/* outside the namespace root: not ours to read */
	snprintf(cg->dir, sizeof(cg->dir), "%s%s%s", cg->mount,
			 (rel[0] == '/' || rel[0] == '\0') ? "" : "/", strcmp(rel, "/") == 0 ? "" : rel);
	return 1;
}

/*
 * One /proc/self/cgroup line: "id:controllers:path" ("0::path" for v2).
 * Keeps the memory hierarchy's path in paths[1] (v1), cgroup2's in paths[0].
 */
static void
cgroup_line(const char *line, size_t len, char paths[2][512])
{
	const char *c1 = memchr(line, ':', len);
	const char *c2;
	size_t		plen;
	int			v1;

	if (c1 == NULL || (c2 = memchr(c1 + 1, ':', len - (size_t) (c1 + 1 - line))) == NULL)
		return;
	plen = len - (size_t) (c2 + 1 - line);
	if (plen == 0 || plen >= sizeof(paths[0]))
		return;
	if (c2 == c1 + 1 && c1 - line == 1 && line[0] == '0')
		v1 = 0;
	else if (has_word(c1 + 1, (size_t) (c2 - c1 - 1), "memory"))
		v1 = 1;
	else
		return;
	memcpy(paths[v1], c2 + 1, plen);
	paths[v1][plen] = '\0';
}

int
sysmem_parse_cgroup(const char *cgroup, size_t clen, const char *mountinfo, size_t mlen,
					sysmem_cgroup *cg)
{
	char		paths[2][512] = {"", ""};	/* a kept path is never empty */
	const char *p;
	const char *line;
	size_t		len;

	memset(cg, 0, sizeof(*cg));
	for (p = cgroup; (line = procfs_next_line(&p, cgroup + clen, &len)) != NULL;)
		cgroup_line(line, len, paths);

	for (int v1 = 1; v1 >= 0; v1--)
	{
		if (paths[v1][0] == '\0')
			continue;
		for (p = mountinfo; (line = procfs_next_line(&p, mountinfo + mlen, &len)) != NULL;)
			if (mountinfo_match(line, len, v1, paths[v1], cg))
			{
				cg->version = v1 ? 1 : 2;
				snprintf(cg->path, sizeof(cg->path), "%s", paths[v1]);
				return 0;
			}
		if (v1)
			break;				/* memory is accounted in v1, which is not mounted */
	}
	memset(cg, 0, sizeof(*cg));
	return -1;
}

/* Reads a whole file into a malloc'd buffer (mountinfo can be long). */
static char *
slurp(const char *path, size_t *len)
{
	size_t		cap = 1 << 16;
	char	   *buf = malloc(cap);

	while (buf)
	{
		procfs_result res = procfs_read_path(path, buf, cap, len);

		if (res != PROCFS_OK)
			break;
		if (*len + 1 < cap)
			return buf;
		if (cap >= (1 << 24))
			break;
		cap *= 4;
		free(buf);
		buf = malloc(cap);
	}
	free(buf);
	return NULL;
}

int
sysmem_find_cgroup(sysmem_cgroup *cg)
{
	size_t		clen, mlen;
	char	   *c = slurp("/proc/self/cgroup", &clen);
	char	   *m = slurp("/proc/self/mountinfo", &mlen);
	int			rc = -1;

	if (c && m)
		rc = sysmem_parse_cgroup(c, clen, m, mlen, cg);
	else
		memset(cg, 0, sizeof(*cg));
	free(c);
	free(m);
	return rc;
}

int
sysmem_cgroup_parent(const sysmem_cgroup *cg, char *dir)
{
	size_t		mlen = strlen(cg->mount);
	char	   *slash;

	if (strlen(dir) <= mlen)
		return 0;
	slash = strrchr(dir, '/');
	if (slash == NULL || (size_t) (slash - dir) < mlen)
		return 0;
	*slash = '\0';
	return 1;
}

/* The cgroup's files */

/* The length of a sysfs or cgroup value without its trailing newline and blanks */
static size_t
trimmed_len(const char *buf, size_t len)
{
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	return len;
}

/* v1 writes "no limit" as LONG_MAX rounded down to a page */
static int64_t
no_limit_as_missing(int64_t v)
{
	return v > INT64_MAX - (INT64_C(1) << 24) ? PROCFS_MISSING : v;
}

int64_t
sysmem_parse_limit(const char *buf, size_t len)
{
	int64_t		v;

	len = trimmed_len(buf, len);
	if (len == 3 && memcmp(buf, "max", 3) == 0)
		return PROCFS_MISSING;
	if (procfs_parse_int(buf, len, &v) != 0 || v < 0)
		return PROCFS_INVALID;
	return no_limit_as_missing(v);
}

int64_t
sysmem_read_limit(const char *dir, const char *name)
{
	char		path[1280];
	char		buf[64];
	size_t		len;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (procfs_read_path(path, buf, sizeof(buf), &len) != PROCFS_OK)
		return PROCFS_MISSING;
	return sysmem_parse_limit(buf, len);
}

static void
read_keyed(const char *dir, const char *name, const procfs_keys *keys, void *target)
{
	char		path[1280];
	procfs_fieldset fs = keys_fieldset(keys, target);

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* a missing file leaves the fields as the caller initialized them */
	(void) procfs_read_path_lines(path, procfs_fields_line, &fs);
}

/* One-number files, each into its member of target (the key is the file) */
static void
read_files(const char *dir, const procfs_keys *files, void *target)
{
	for (size_t i = 0; i < files->n; i++)
		*(int64_t *) ((char *) target + files->fields[i].offset) = sysmem_read_limit(dir, files->fields[i].key);
}

/* v1 keeps the hierarchical limit in memory.stat; parsed on its own */
typedef struct v1_hier
{
	int64_t		limit;
} v1_hier;

static const procfs_field v1_hier_field[] = {
	PROCFS_FIELD(v1_hier, "hierarchical_memory_limit", limit, 0),
};
static const procfs_keys v1_hier_key = {v1_hier_field, 1, ' ', 0};

/*
 * The memory a cgroup level uses that the kernel cannot reclaim: one
 * definition, here, for the pressure watch (src/rules/pressure.c), the
 * guard that acts on it, and the room of pg_procmem_system,
 * pg_procmem_headroom and the advice (walk_limits() below).
 *
 * At its limit a cgroup's next charge makes the kernel reclaim from that
 * cgroup (try_to_free_mem_cgroup_pages(): its LRU lists, and the
 * memcg-aware slab shrinkers for it), and it OOM-kills only when retries
 * of that free too little. So what that reclaim takes back is not used:
 *
 * - Page cache, active or inactive alike (a table read twice is on the
 *   active list): the active list is aged onto the inactive one as reclaim
 *   runs short, so the split changes how soon, not whether. memory.stat's file counts
 *   shmem too (tmpfs, shared anonymous memory, System V and POSIX shared
 *   memory: shared_buffers and the DSM segments), which lives on the anon
 *   LRU and is swap-backed: without swap it cannot be reclaimed at all, and
 *   with swap it is swapped out like anonymous memory. So file - shmem, the
 *   file LRU (active_file + inactive_file, give or take the pages isolated
 *   or unevictable at a moment), is reclaimable, shmem is used.
 *
 * - Reclaimable slab: dentries and inodes (a server with many relations
 *   has one of each per segment file), charged to the cgroup (v2 counts
 *   kernel memory in memory.current) and shrunk for the cgroup in that
 *   same reclaim before any OOM kill. Not every object of it can be freed
 *   (an open file's dentry stays), as not every page of the page cache
 *   can; MemAvailable, the machine's figure (used: MemTotal -
 *   MemAvailable), counts it as available as well (SReclaimable, less the
 *   smaller of half of it and the low watermark, as it does the file
 *   LRU), so with it subtracted a cgroup level and the machine mean the
 *   same. Until 1.3.0 the room (walk_limits()) kept it in while the
 *   pressure watch took it out: a cgroup holding 500 MB of dentries had
 *   500 MB less room in pg_procmem_headroom than the watch saw.
 *
 * v1's memory.stat has no slab figure: nothing is subtracted there, and
 * its figure is higher than the kernel's by the cgroup's reclaimable slab
 * (it errs toward pressure). Its fields are the total_* ones: usage counts
 * the charges of the cgroup's children, and so must what is taken from it.
 * Left counted as reclaimable: dirty and writeback page cache (reclaimable
 * once written back, which reclaim starts and throttles on), and mlocked
 * file pages (the "unevictable" list; PostgreSQL itself mlocks nothing).
 */
int64_t
sysmem_cgroup_unreclaimable(int64_t usage, int64_t file, int64_t shmem, int64_t slab_reclaimable)
{
	int64_t		reclaimable;

	if (usage < 0 || file < 0 || shmem < 0 || shmem > file)
		return PROCFS_MISSING;
	reclaimable = file - shmem;
	/* each term at most usage: no overflow, and never below 0 */
	if (reclaimable >= usage)
		return 0;
	usage -= reclaimable;
	if (slab_reclaimable > 0)
		usage = slab_reclaimable >= usage ? 0 : usage - slab_reclaimable;
	return usage;
}

/*
 * Walks from the cgroup up to the mount point. At each level with a limit,
 * that limit minus what that level uses that the kernel cannot reclaim
 * (sysmem_cgroup_unreclaimable()) is room left; an ancestor's limit covers its other children too.
 * Sets the smallest limit, the smallest room, and the limit and room of
 * the level whose room is the smallest share of its limit (a 100 GB parent
 * 91% full is tighter than a 1 GB child 10% full, though it has more room).
 */
static void
walk_limits(const sysmem_cgroup *cg, const char *limit_file, const char *usage_file,
			const procfs_keys *stat_keys, int64_t *limit, int64_t *room,
			int64_t *tight_limit, int64_t *tight_room)
{
	char		dir[1024];

	*limit = *room = *tight_limit = *tight_room = PROCFS_MISSING;
	snprintf(dir, sizeof(dir), "%s", cg->dir);
	do
	{
		int64_t		l = sysmem_read_limit(dir, limit_file);

		if (l >= 0)
		{
			int64_t		u = sysmem_read_limit(dir, usage_file);
			int64_t		used;
			sysmem_cgmem level;

			sysmem_cgmem_init(&level);
			read_keyed(dir, "memory.stat", stat_keys, &level);
			if (*limit < 0 || l < *limit)
				*limit = l;
			used = sysmem_cgroup_unreclaimable(u, level.file, level.shmem, level.slab_reclaimable);
			if (used >= 0)
			{
				int64_t		r = used >= l ? 0 : l - used;

				if (*room < 0 || r < *room)
					*room = r;
				/* r / l < tight_room / tight_limit, in doubles: the products overflow */
				if (l > 0 && (*tight_limit < 0 ||
							  (double) r * (double) *tight_limit < (double) *tight_room * (double) l))
				{
					*tight_limit = l;
					*tight_room = r;
				}
			}
		}
	} while (sysmem_cgroup_parent(cg, dir));
}

void
sysmem_cgmem_init(sysmem_cgmem *m)
{
#define SYSMEM_CGMEM_MISSING(name) m->name = PROCFS_MISSING;
	SYSMEM_CGMEM_FIELDS(SYSMEM_CGMEM_MISSING)
#undef SYSMEM_CGMEM_MISSING
}

void
sysmem_read_cgmem(const sysmem_cgroup *cg, sysmem_cgmem *m)
{
	int64_t		walked_limit;

	sysmem_cgmem_init(m);
	if (cg->version == 2)
	{
		read_files(cg->dir, &keys_cgroup_v2_files, m);
		read_keyed(cg->dir, "memory.stat", &keys_cgroup_v2_stat, m);
		read_keyed(cg->dir, "memory.events", &keys_cgroup_v2_events, m);
		walk_limits(cg, "memory.max", "memory.current", &keys_cgroup_v2_stat,
					&m->effective_limit, &m->room, &m->tight_limit, &m->tight_room);
	}
	else if (cg->version == 1)
	{
		v1_hier		h = {PROCFS_MISSING};

		read_files(cg->dir, &keys_cgroup_v1_files, m);
		read_keyed(cg->dir, "memory.stat", &keys_cgroup_v1_stat, m);
		read_keyed(cg->dir, "memory.oom_control", &keys_cgroup_v1_oom, m);
		read_keyed(cg->dir, "memory.stat", &v1_hier_key, &h);
		walk_limits(cg, "memory.limit_in_bytes", "memory.usage_in_bytes", &keys_cgroup_v1_stat,
					&walked_limit, &m->room, &m->tight_limit, &m->tight_room);
		/* the kernel's hierarchical figure also sees ancestors above the mount */
		m->effective_limit = h.limit < 0 ? walked_limit : no_limit_as_missing(h.limit);
	}
	/* a limit set where we cannot see its usage: count our own against it */
	if (m->room < 0 && m->effective_limit >= 0)
	{
		int64_t		used = sysmem_cgroup_unreclaimable(m->usage, m->file, m->shmem, m->slab_reclaimable);

		if (used >= 0)
		{
			m->room = m->tight_room = used >= m->effective_limit ? 0 : m->effective_limit - used;
			m->tight_limit = m->effective_limit;
		}
	}
}

void
sysmem_read_cgmem_events(const sysmem_cgroup *cg, sysmem_cgmem *m)
{
	if (cg->version == 2)
	{
		int64_t		group = sysmem_read_limit(cg->dir, "memory.oom.group");

		m->peak = sysmem_read_limit(cg->dir, "memory.peak");
		/* a flag, 0 or 1: anything else is not a figure */
		m->oom_group = group == 0 || group == 1 ? group : PROCFS_MISSING;
	}
	else if (cg->version == 1)
		m->peak = sysmem_read_limit(cg->dir, "memory.max_usage_in_bytes");
}

int64_t
sysmem_read_oom_kills(const sysmem_cgroup *cg, int *machine)
{
	sysmem_cgmem m;

	sysmem_cgmem_init(&m);
	*machine = cg == NULL || (cg->version != 1 && cg->version != 2);
	if (*machine)
		read_keyed("/proc", "vmstat", &keys_vmstat_oom, &m);
	else
		read_keyed(cg->dir, cg->version == 2 ? "memory.events" : "memory.oom_control",
				   cg->version == 2 ? &keys_cgroup_v2_events : &keys_cgroup_v1_oom, &m);
	return m.oom_kill;
}

uint64_t
sysmem_cgroup_id(const sysmem_cgroup *cg)
{
	struct stat st;

	if (cg == NULL || cg->version == 0 || stat(cg->dir, &st) != 0)
		return 0;
	return (uint64_t) st.st_ino;
}

/* a + b (procfs_sum()); b may be missing when optional */
static int64_t
add_figure(int64_t a, int64_t b, int optional)
{
	return optional && b < 0 ? a : procfs_sum(a, b);
}

int64_t
sysmem_cgmem_kernel(const sysmem_cgroup *cg, const sysmem_cgmem *m)
{
	int64_t		k;

	if (cg->version == 1)
		return m->kernel;
	if (cg->version != 2)
		return PROCFS_MISSING;
	if (m->kernel >= 0)
		k = m->kernel;
	else
	{
		/* before 5.18: slab, kernel_stack and pagetables are there since 5.4 */
		k = add_figure(m->slab, m->kernel_stack, 0);
		k = add_figure(k, m->pagetables, 0);
		k = add_figure(k, m->percpu, 1);
		k = add_figure(k, m->vmalloc, 1);
	}
	return add_figure(k, m->sock, 1);
}

/* Small files of /proc/sys and /sys */

int64_t
sysmem_read_int(const char *path)
{
	char		buf[64];
	size_t		len;
	int64_t		v;

	if (procfs_read_path(path, buf, sizeof(buf), &len) != PROCFS_OK ||
		procfs_parse_int(buf, len, &v) != 0)
		return PROCFS_MISSING;
	return v;
}

int64_t
sysmem_parse_size(const char *buf, size_t len)
{
	int64_t		v;
	int			shift = 0;

	len = trimmed_len(buf, len);
	if (len > 0)
	{
		switch (buf[len - 1])
		{
			case 'K': shift = 10; break;
			case 'M': shift = 20; break;
			case 'G': shift = 30; break;
		}
		if (shift)
			len--;
	}
	if (procfs_parse_int(buf, len, &v) != 0 || v < 0 || v > (INT64_MAX >> shift))
		return PROCFS_MISSING;
	return v << shift;
}

int64_t
sysmem_read_llc(const char *cache_dir, int *level)
{
	int64_t		best = PROCFS_MISSING;

	*level = -1;
	for (int i = 0; i < 32; i++)
	{
		char		path[1024], buf[64];
		size_t		len;
		int64_t		lvl, size;

		snprintf(path, sizeof(path), "%s/index%d/type", cache_dir, i);
		if (procfs_read_path(path, buf, sizeof(buf), &len) != PROCFS_OK)
			continue;			/* the indexes need not be contiguous */
		if (len >= 11 && strncmp(buf, "Instruction", 11) == 0)
			continue;
		snprintf(path, sizeof(path), "%s/index%d/level", cache_dir, i);
		lvl = sysmem_read_int(path);
		snprintf(path, sizeof(path), "%s/index%d/size", cache_dir, i);
		if (procfs_read_path(path, buf, sizeof(buf), &len) != PROCFS_OK ||
			(size = sysmem_parse_size(buf, len)) < 0 || lvl < 0)
			continue;
		if (lvl > *level || (lvl == *level && size > best))
		{
			*level = (int) lvl;
			best = size;
		}
	}
	return best;
}

int
sysmem_read_mode(const char *path, char *out, size_t outsz)
{
	char		buf[256];
	size_t		len;
	char	   *open, *close;

	if (outsz == 0)
		return -1;
	out[0] = '\0';
	if (procfs_read_path(path, buf, sizeof(buf), &len) != PROCFS_OK ||
		(open = strchr(buf, '[')) == NULL || (close = strchr(open, ']')) == NULL)
		return -1;
	*close = '\0';
	snprintf(out, outsz, "%s", open + 1);
	return 0;
}

/* Residency and /dev/shm */

typedef struct mapping_search
{
	uint64_t	addr;
	uint64_t	start;
	uint64_t	end;
	int			hugetlb;
	int			found;
} mapping_search;

static void
self_vma(void *arg, const procfs_vma *vma)
{
	mapping_search *m = arg;

	if (m->found || m->addr < vma->start || m->addr >= vma->end)
		return;
	m->start = vma->start;
	m->end = vma->end;
	m->hugetlb = memmem(vma->path, vma->path_len, "anon_hugepage", 13) != NULL;
	m->found = 1;
}

int
sysmem_self_mapping(const void *addr, uint64_t *start, uint64_t *end, int *hugetlb)
{
	mapping_search m = {(uint64_t) (uintptr_t) addr, 0, 0, 0, 0};

	if (procfs_read_maps(0, self_vma, &m) != PROCFS_OK ||
		!m.found)
		return -1;
	*start = m.start;
	*end = m.end;
	*hugetlb = m.hugetlb;
	return 0;
}

int64_t
sysmem_resident(void *addr, size_t len)
{
	long		ps = sysconf(_SC_PAGESIZE);
	unsigned char vec[4096];
	uintptr_t	start, end;
	int64_t		resident = 0;

	if (ps <= 0 || addr == NULL)
		return PROCFS_MISSING;
	start = (uintptr_t) addr & ~((uintptr_t) ps - 1);
	end = (uintptr_t) addr + len;
	while (start < end)
	{
		size_t		pages = (end - start + (size_t) ps - 1) / (size_t) ps;

		if (pages > sizeof(vec))
			pages = sizeof(vec);
		if (mincore((void *) start, pages * (size_t) ps, vec) != 0)
			return PROCFS_MISSING;
		for (size_t i = 0; i < pages; i++)
			resident += (vec[i] & 1) ? ps : 0;
		start += pages * (size_t) ps;
	}
	return resident;
}

/* A fixed pseudo-random number for stratum i (splitmix64's finalizer). */
static uint64_t
stratum_hash(uint64_t i)
{
	uint64_t	z = i + UINT64_C(0x9e3779b97f4a7c15);

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

int64_t
sysmem_resident_estimate(void *addr, size_t len, int *exact)
{
	long		ps = sysconf(_SC_PAGESIZE);
	uintptr_t	start;
	size_t		pages, run;
	double		resident = 0;

	*exact = 1;
	if (ps <= 0 || addr == NULL)
		return PROCFS_MISSING;
	start = (uintptr_t) addr & ~((uintptr_t) ps - 1);
	pages = ((uintptr_t) addr + len - start + (size_t) ps - 1) / (size_t) ps;
	if (pages <= SYSMEM_RESIDENT_PAGES)
		return sysmem_resident((void *) start, pages * (size_t) ps);

	*exact = 0;
	run = SYSMEM_RESIDENT_PAGES / SYSMEM_RESIDENT_STRATA;
	for (size_t i = 0; i < SYSMEM_RESIDENT_STRATA; i++)
	{
		/* pages < 2^52: the products fit */
		size_t		lo = (size_t) ((uint64_t) pages * i / SYSMEM_RESIDENT_STRATA);
		size_t		hi = (size_t) ((uint64_t) pages * (i + 1) / SYSMEM_RESIDENT_STRATA);
		size_t		at = lo + (size_t) (stratum_hash(i) % (hi - lo - run + 1));
		int64_t		r = sysmem_resident((void *) (start + at * (size_t) ps), run * (size_t) ps);

		if (r < 0)
			return PROCFS_MISSING;
		resident += (double) r * (double) (hi - lo) / (double) run;
	}
	return (int64_t) resident;
}
