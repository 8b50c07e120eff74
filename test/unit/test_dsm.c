/*
 * test_dsm.c
 *		Unit tests of DSM segments: which exist, which a process maps, and
 *		whose they are (TAP; run by `make unit`).
 *
 * The segments are real: files in a directory of /dev/shm (a tmpfs, as
 * PostgreSQL's posix segments), and a System V segment, mapped by this
 * process. The line of /proc/sysvipc/shm is as a 6.18 kernel prints it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/dsm.h"
#include "linux/pagemap.h"
#include "rules/dsm_groups.h"
#include "tap.h"

static void
test_sysv_line(void)
{
	const char *header = "       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid      atime      dtime      ctime                   rss                  swap";
	const char *line = "1534857828      98309   600              2097152  4242  4243      3   109   117   109   117 1764400000 1764400001 1764399999               1052672                 4096";
	const char *negative = "-559038737         17   600                 4096  1 1 1  0 0 0 0 0 0 0 4096 0";
	dsm_segment s;
	uint64_t	uid, cuid;

	ok(dsm_parse_sysv_line(header, strlen(header), &s, &uid, &cuid) != 0, "sysv: the header line is no segment");
	ok(dsm_parse_sysv_line(line, strlen(line), &s, &uid, &cuid) == 0 && s.id == 98309 && s.size == 2097152 &&
	   s.bytes == 1052672 && uid == 109 && cuid == 109 && s.handle == 1534857828u,
	   "sysv: a segment's shmid, size, resident bytes (rss), owner, creator and key");
	ok(dsm_parse_sysv_line(negative, strlen(negative), &s, &uid, &cuid) == 0 && s.id == 17 && s.bytes == 4096 &&
	   s.handle == 0xdeadbeefu, "sysv: a key printed negative is the same 32 bits as PostgreSQL's /SYSV%%08x name");
	ok(dsm_parse_sysv_line(line, 60, &s, &uid, &cuid) != 0, "sysv: a line cut short is none");
	ok(dsm_parse_sysv_line("1 2 600 4096 1 1 1 0 0 0 0 0 0 0 4096x 0", 40, &s, &uid, &cuid) != 0 &&
	   dsm_parse_sysv_line("1 2 600 4096 1 1 1 0 0 0 0 0 0 0 4096x 0", 41, &s, &uid, &cuid) != 0,
	   "sysv: a field that is not a number is none");
}

/* A file of len bytes, written whole (its blocks allocated) */
static void
make_file(const char *dir, const char *name, size_t len)
{
	char		path[512];
	char	   *buf = calloc(1, len ? len : 1);
	int			fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	memset(buf, 'x', len);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd < 0 || write(fd, buf, len) != (ssize_t) len)
		perror(path);
	close(fd);
	free(buf);
}

static int
find_handle(const dsm_table *t, uint32_t handle)
{
	for (int i = 0; i < t->n; i++)
		if (t->seg[i].handle == handle)
			return i;
	return -1;
}

static void
test_posix_files(void)
{
	char		dir[] = "/dev/shm/procmem-dsm-XXXXXX";
	char		path[600], target[600];
	dsm_table	t = {0};
	dsm_mapped	m;
	pagemap_anon anon;
	pagemap_hints hints = {0};
	struct stat st;
	void	   *shared, *private, *other;
	int			fd, i;

	if (mkdtemp(dir) == NULL)
	{
		skip(12, "no /dev/shm");
		return;
	}
	make_file(dir, "PostgreSQL.1234", 1 << 20);
	make_file(dir, "PostgreSQL.77", 4096);
	make_file(dir, "other.5", 8192);
	/* a symlink with the prefix: never followed */
	snprintf(target, sizeof(target), "%s/other.5", dir);
	snprintf(path, sizeof(path), "%s/PostgreSQL.99", dir);
	if (symlink(target, path) != 0)
		perror(path);
	ok(dsm_table_read(&t, DSM_KIND_POSIX, dir, "PostgreSQL.", getuid(), -1) == 0 && t.n == 0 && t.dirfd >= 0,
	   "posix: nothing listed: segments are learned from the mappings met");
	dsm_table_free(&t);
	ok(dsm_table_read(&t, DSM_KIND_POSIX, "/nonexistent", "PostgreSQL.", getuid(), -1) != 0 && t.n == 0 &&
	   t.dirfd < 0, "posix: no directory: unknown, an empty table");
	dsm_table_free(&t);
	dsm_table_read(&t, DSM_KIND_POSIX, dir, "PostgreSQL.", getuid(), -1);

	/* this process maps one segment shared, another privately, and the symlink's target shared */
	snprintf(path, sizeof(path), "%s/PostgreSQL.1234", dir);
	stat(path, &st);
	fd = open(path, O_RDWR);
	shared = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/PostgreSQL.99", dir);
	fd = open(path, O_RDWR);
	other = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/PostgreSQL.77", dir);
	fd = open(path, O_RDWR);
	private = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	ok(shared != MAP_FAILED && private != MAP_FAILED && other != MAP_FAILED &&
	   dsm_read_mapped(0, &t, &m, 1) == PROCFS_OK && m.n == 1 && t.n == 1 && find_handle(&t, 1234) == 0 &&
	   m.id[0] == t.seg[0].id && !m.more,
	   "mapped: a shared mapping of a segment is found and learned; a private one is not, nor a file "
	   "mapped through a symlink of the segments' names (its mapping names the target)");
	ok(t.seg[0].id == (uint64_t) st.st_ino && t.seg[0].bytes == (int64_t) st.st_blocks * 512 &&
	   t.seg[0].bytes >= (1 << 20) && t.seg[0].size == (1 << 20),
	   "posix: a segment's inode, allocated bytes and size");
	dsm_table_free(&t);
	dsm_table_read(&t, DSM_KIND_POSIX, dir, "PostgreSQL.", getuid(), -1);
	ok(dsm_read_mapped(0, &t, &m, 0) == PROCFS_OK && m.n == 1 && t.n == 1 && m.id[0] == (uint64_t) st.st_ino,
	   "mapped: the same from the maps text (no PROCMAP_QUERY)");
	dsm_table_free(&t);
	dsm_table_read(&t, DSM_KIND_POSIX, dir, "PostgreSQL.", getuid(), -1);
	memset(&m, 0, sizeof(m));
	hints.dsm = &t;
	hints.dsm_mapped = &m;
	ok(pagemap_read_anon(getpid(), 0, &hints, &anon) == PROCFS_OK && m.n == 1 && t.n == 1 &&
	   m.id[0] == t.seg[find_handle(&t, 1234)].id,
	   "mapped: the pagemap walk finds and learns the same in its pass over the mappings");
	dsm_table_free(&t);
	dsm_table_read(&t, DSM_KIND_POSIX, dir, "PostgreSQL.", getuid(), -1);
	memset(&m, 0, sizeof(m));
	ok(pagemap_read_anon(getpid(), PAGEMAP_NO_PROCMAP_QUERY, &hints, &anon) == PROCFS_OK &&
	   m.n == 1 && t.n == 1, "mapped: and so does its reading of the maps text");
	ok(dsm_read_mapped(999999999, &t, &m, 1) == PROCFS_GONE && m.n == -1,
	   "mapped: no such process: gone, its segments unknown");
	snprintf(path, sizeof(path), "%s/PostgreSQL.77", dir);
	stat(path, &st);
	i = dsm_table_recall(&t, (uint64_t) st.st_ino, 77);
	ok(i >= 0 && t.n == 2 && t.seg[i].handle == 77 && dsm_table_recall(&t, (uint64_t) st.st_ino, 77) == i &&
	   dsm_table_recall(&t, (uint64_t) st.st_ino, 78) < 0 && dsm_table_recall(&t, (uint64_t) st.st_ino + 1, 76) < 0,
	   "recall: a segment seen before, by its handle and inode, mapped or not; not by another handle or inode");
	snprintf(path, sizeof(path), "%s/other.5", dir);
	stat(path, &st);
	ok(dsm_table_recall(&t, (uint64_t) st.st_ino, 99) < 0 && t.n == 2,
	   "recall: never through a symlink of a segment's name");
	dsm_table_free(&t);
	dsm_table_read(&t, DSM_KIND_POSIX, dir, "PostgreSQL.", getuid() + 1, -1);
	ok(dsm_read_mapped(0, &t, &m, 1) == PROCFS_OK && m.n == 0 && t.n == 0,
	   "posix: another user's files are not the server's");
	dsm_table_free(&t);
	dsm_table_read(&t, DSM_KIND_POSIX, dir, "PostgreSQL.", getuid(), -1);
	t.dev ^= 1;
	ok(dsm_read_mapped(0, &t, &m, 1) == PROCFS_OK && m.n == 0,
	   "mapped: a file of that inode on another device is not a segment");
	munmap(other, 8192);
	munmap(shared, 1 << 20);
	munmap(private, 4096);
	dsm_table_free(&t);
	snprintf(path, sizeof(path), "%s/PostgreSQL.77", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/PostgreSQL.1234", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/PostgreSQL.99", dir);
	unlink(path);
	unlink(target);
	rmdir(dir);
}

/* mmap: the data directory's pg_dynshmem is listed; a hard link is the same segment */
static void
test_mmap_files(void)
{
	char		dir[] = "/tmp/procmem-dsm-XXXXXX";
	char		a[600], b[600];
	dsm_table	t = {0};

	if (mkdtemp(dir) == NULL)
	{
		skip(1, "no temporary directory");
		return;
	}
	make_file(dir, "mmap.5", 8192);
	snprintf(a, sizeof(a), "%s/mmap.5", dir);
	snprintf(b, sizeof(b), "%s/mmap.6", dir);
	if (link(a, b) != 0)
		perror(b);
	ok(dsm_table_read(&t, DSM_KIND_MMAP, dir, "mmap.", getuid(), -1) == 0 && t.n == 1 && t.seg[0].size == 8192,
	   "mmap: the files listed; two names of one file are one segment");
	dsm_table_free(&t);
	unlink(a);
	unlink(b);
	rmdir(dir);
}

static void
test_sysv_segment(void)
{
	/* the main segment's stand-in has a key (PostgreSQL's: the data directory's inode) */
	key_t		main_key = (key_t) (0x5eed0000 + (getpid() & 0xffff));
	int			id = shmget(IPC_PRIVATE, 1 << 20, IPC_CREAT | 0600);
	int			other = shmget(main_key, 1 << 16, IPC_CREAT | IPC_EXCL | 0600);
	char	   *p, *q;
	dsm_table	t = {0};
	dsm_mapped	m;
	int			i;

	if (id < 0 || other < 0)
	{
		skip(3, "no System V shared memory here");
		return;
	}
	p = shmat(id, NULL, 0);
	q = shmat(other, NULL, 0);
	if (p != (void *) -1)
		memset(p, 1, 256 << 10);
	if (q != (void *) -1)
		memset(q, 1, 4096);
	ok(dsm_table_read(&t, DSM_KIND_SYSV, NULL, NULL, getuid(), (int64_t) (uint32_t) main_key) == 0 &&
	   (i = dsm_table_find(&t, (uint64_t) id)) >= 0 && t.seg[i].size == (1 << 20) &&
	   t.seg[i].bytes >= (256 << 10) && t.seg[i].bytes <= (1 << 20) &&
	   dsm_table_find(&t, (uint64_t) other) < 0,
	   "sysv: a segment's resident bytes; the one of the key left out (the main segment's) is not there");
	ok(dsm_read_mapped(0, &t, &m, 1) == PROCFS_OK && m.n == 1 && m.id[0] == (uint64_t) id &&
	   dsm_read_mapped(0, &t, &m, 0) == PROCFS_OK && m.n == 1 && m.id[0] == (uint64_t) id,
	   "sysv: this process maps it (the mapping's inode is its shmid), asked or from the maps text");
	t.seg[dsm_table_find(&t, (uint64_t) id)].size = 4096;
	ok(dsm_read_mapped(0, &t, &m, 1) == PROCFS_OK && m.n == 0,
	   "sysv: a mapping much longer than the segment is not it (an inode equal by chance)");
	shmdt(p);
	shmdt(q);
	shmctl(id, IPC_RMID, NULL);
	shmctl(other, IPC_RMID, NULL);
	dsm_table_free(&t);
}

/* Segments 1..4 of 100, 200, 400 and 800 bytes */
static dsm_table
four_segments(dsm_segment *seg)
{
	dsm_table	t = {.kind = DSM_KIND_MMAP, .seg = seg, .n = 4, .cap = 4, .dirfd = -1};

	for (int i = 0; i < 4; i++)
	{
		seg[i].id = (uint64_t) i + 1;
		seg[i].bytes = 100 << i;
		seg[i].size = seg[i].bytes;
		seg[i].handle = 1000 + (uint32_t) i;
	}
	return t;
}

static dsm_mapped
mapping(int n, const uint64_t *ids)
{
	dsm_mapped	m;

	memset(&m, 0, sizeof(m));
	m.n = n;
	for (int k = 0; k < n; k++)
		m.id[k] = ids[k];
	return m;
}

static void
test_groups(void)
{
	dsm_segment seg[4];
	dsm_table	t = four_segments(seg);
	const uint64_t leader_ids[] = {1, 2, 3}, worker_ids[] = {3, 2, 99}, lone_ids[] = {1};
	dsm_mapped	leader = mapping(3, leader_ids), worker = mapping(3, worker_ids),
				lone = mapping(1, lone_ids), unknown = mapping(-1, NULL), alone = mapping(-1, NULL);
	/* leader 10 and its worker; 20 in no parallel query; 30 and 40 unread */
	dsm_member	m[] = {{10, &leader}, {10, &worker}, {20, &lone}, {30, &unknown}, {10, &alone}};
	int64_t		mapped[5], own[5];
	uint8_t		in_use[4];
	dsm_totals	tot;

	ok(dsm_groups_sum(&t, m, 4, mapped, own, &tot, in_use) == 0 &&
	   mapped[0] == 700 && mapped[1] == 600 && mapped[2] == 100 && mapped[3] == -1,
	   "groups: what each process maps (a segment not in the table counts nothing)");
	ok(own[0] == 600 && own[1] == 600 && own[2] == 0 && own[3] == -1,
	   "groups: a group's own segments once, the same on each member; shared ones in none; unread: unknown");
	ok(tot.mapped == 700 && tot.segments == 3 && tot.shared == 100 && tot.shared_segments == 1 &&
	   tot.unmapped == 800 && tot.unmapped_segments == 1 &&
	   in_use[0] && in_use[1] && in_use[2] && !in_use[3],
	   "groups: the totals, each segment once: mapped, shared, nobody's");
	ok(dsm_groups_sum(&t, m, 5, mapped, own, &tot, NULL) == 0 && mapped[4] == -1 && own[4] == 600,
	   "groups: a member whose mappings are unknown has its group's figure from the others");
	ok(dsm_groups_sum(&t, m, 0, mapped, own, &tot, in_use) == 0 && tot.unmapped == 1500 && tot.segments == 0,
	   "groups: no process: every segment nobody's");
	worker.more = 1;
	ok(dsm_groups_sum(&t, m, 4, mapped, own, &tot, in_use) == 0 && mapped[1] == -1 && own[1] == 600 &&
	   mapped[0] == 700, "groups: a process that maps more than it could keep: its own figure unknown, its group's not");
	worker.more = 0;

	/* the shared ids, and a reader that passes them back as a group of its own */
	{
		uint64_t	ids[4];
		dsm_mapped	known;
		dsm_member	part[] = {{10, &leader}, {10, &worker}, {-2, &known}};

		ok(dsm_shared_ids(m, 4, ids, 4) == 1 && ids[0] == 1,
		   "shared ids: segment 1, mapped by groups 10 and 20, is shared; 2 and 3 are group 10's alone");
		ok(dsm_shared_ids(m, 2, ids, 4) == 0, "shared ids: one group's segments are none");
		ok(dsm_shared_ids(m, 0, ids, 4) == 0, "shared ids: no member, none");
		known = mapping(1, ids);
		ids[0] = 1;
		ok(dsm_groups_sum(&t, part, 2, mapped, own, &tot, NULL) == 0 && own[0] == 700,
		   "shared ids: group 10 read alone would own segment 1 too");
		ok(dsm_groups_sum(&t, part, 3, mapped, own, &tot, NULL) == 0 && own[0] == 600,
		   "shared ids: read back as a group of their own, segment 1 stays shared with group 10 alone read");
	}
}

static void
test_leftover(void)
{
	dsm_segment seg[4];
	dsm_table	t = four_segments(seg);
	dsm_leftover l = {0};
	uint64_t	lids[2];
	uint32_t	lhandles[2];
	uint8_t		in_use[4] = {1, 1, 0, 0};
	uint8_t		none[4] = {0, 0, 0, 0};
	int64_t		bytes;
	int32_t		n;

	dsm_leftover_update(&l, &t, in_use, 1000, 60000, &bytes, &n, lids, lhandles, 2);
	ok(bytes == 0 && n == 0 && l.n == 2, "leftover: segments mapped now are remembered, none left over");
	dsm_leftover_update(&l, &t, none, 60999, 60000, &bytes, &n, lids, lhandles, 2);
	ok(bytes == 0 && n == 0, "leftover: nobody maps them, but not for long enough yet");
	seg[1].handle = 5;			/* segment 2's inode is another file's now */
	dsm_leftover_update(&l, &t, none, 61000, 60000, &bytes, &n, lids, lhandles, 2);
	ok(bytes == 100 && n == 1 && l.n == 1 && lids[0] == 1 && lhandles[0] == 1000 && lids[1] == 0,
	   "leftover: unmapped for the whole time: left over, and named; an inode reused by another file forgotten; never-mapped ones never count");
	t.n = 0;
	dsm_leftover_update(&l, &t, none, 62000, 60000, &bytes, &n, lids, lhandles, 2);
	ok(bytes == 0 && n == 0 && l.n == 0, "leftover: removed segments are forgotten");
	dsm_leftover_free(&l);
}

/* What a sample names for the next run, and what that run's sampler makes of it */
static void
test_seen_across_restart(void)
{
	dsm_segment seg[4];
	dsm_table	t = four_segments(seg);
	uint8_t		in_use[4] = {1, 0, 1, 1};
	uint8_t		none[4] = {0, 0, 0, 0};
	uint64_t	ids[2], lids[2];
	uint32_t	handles[2], lhandles[2];
	dsm_leftover l = {0};
	int64_t		bytes;
	int32_t		n;

	ok(dsm_largest_in_use(&t, in_use, ids, handles, 2) == 2 && ids[0] == 4 && ids[1] == 3 &&
	   handles[0] == 1003 && handles[1] == 1002,
	   "seen: a sample names the largest segments mapped, largest first");
	/* the next run: segment 4 was left by the killed process, 3 was removed */
	t.n = 2;
	seg[1] = seg[3];
	dsm_leftover_seed(&l, ids, handles, 2, 5000);
	dsm_leftover_update(&l, &t, none, 64999, 60000, &bytes, &n, lids, lhandles, 2);
	ok(bytes == 0 && n == 0 && l.n == 1, "seen: after a restart, what the last run mapped is remembered");
	dsm_leftover_update(&l, &t, none, 65000, 60000, &bytes, &n, lids, lhandles, 2);
	ok(bytes == 800 && n == 1 && lids[0] == 4 && lhandles[0] == 1003,
	   "seen: and left over once nobody has mapped it for the setting's time, named");
	dsm_leftover_free(&l);
}

int
main(int argc, char **argv)
{
	(void) argc;
	(void) argv;
	test_sysv_line();
	test_posix_files();
	test_mmap_files();
	test_sysv_segment();
	test_groups();
	test_leftover();
	test_seen_across_restart();
	return tap_done();
}
