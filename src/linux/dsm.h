/*
 * dsm.h
 *		Dynamic shared memory segments: which exist, what each holds as the
 *		kernel counts it, and which a process maps (no PostgreSQL headers).
 *
 * A parallel query's hash tables and sorts live in DSM segments, not in
 * any process's private memory: a segment is shared mapped memory, freed
 * only when the last process unmaps it and its file or id is removed. So a
 * segment is never in a process's overhead; it is a figure of its own, per
 * process (what it maps) and per parallel group (docs/overhead.md, "Dynamic
 * shared memory").
 *
 * Per dynamic_shared_memory_type, a segment is
 *	- posix: a file /dev/shm/PostgreSQL.<handle> (tmpfs): its allocated
 *	  blocks (st_blocks) are its pages, resident or swapped;
 *	- mmap: a file <data directory>/pg_dynshmem/mmap.<handle>: likewise;
 *	- sysv: a System V segment: its resident pages (/proc/sysvipc/shm's rss).
 * A mapping is the segment's when its device and inode are the file's
 * (posix, mmap), or its inode is the segment's shmid and it is no longer
 * than the segment (sysv: the kernel names the mapping by the shmid).
 *
 * /dev/shm is every user's: listing it would cost what anyone makes it
 * cost (a million files, a second a sample). So posix segments are learned
 * from the mappings met: a shared mapping of a file on /dev/shm's device
 * not yet in the table is looked up by the name the mapping gives, once a
 * walk (dsm_table_learn()); and a segment seen before by its handle
 * (dsm_table_recall()). The cost follows the segments the server maps.
 * pg_dynshmem is the data directory's own, and System V segments are few
 * (kernel.shmmni): those are listed.
 */
#ifndef PROCMEM_DSM_H
#define PROCMEM_DSM_H

#include <stdint.h>
#include <sys/types.h>

#include "linux/procfs.h"

typedef enum dsm_kind
{
	DSM_KIND_NONE = 0,
	DSM_KIND_POSIX,
	DSM_KIND_SYSV,
	DSM_KIND_MMAP
} dsm_kind;

typedef struct dsm_segment
{
	uint64_t	id;				/* inode (posix, mmap), shmid (sysv) */
	int64_t		bytes;			/* as the kernel holds it (see above) */
	int64_t		size;			/* its length */
	uint32_t	handle;			/* from its name (posix, mmap) or key (sysv) */
} dsm_segment;

/* The segments at one moment, sorted by id (malloc'd: dsm_table_free) */
typedef struct dsm_table
{
	dsm_kind	kind;
	uint64_t	dev;			/* posix, mmap: the directory's device, as
								 * procfs_vma.dev */
	dsm_segment *seg;
	int			n;
	int			cap;
	int			truncated;		/* more than DSM_TABLE_MAX: the rest unknown */
	int			dirfd;			/* posix: /dev/shm, to learn segments by name; -1 */
	const char *dir;			/* ... its path ("/dev/shm") */
	const char *prefix;			/* ... the names' ("PostgreSQL.") */
	uid_t		uid;			/* ... their owner */
} dsm_table;

/* The most segments a table holds: PostgreSQL allows 64 + 5 per backend */
#define DSM_TABLE_MAX	65536
/*
 * The most directory entries a listing (pg_dynshmem) looks at: a sample
 * must not take the time a directory of millions takes to list
 */
#define DSM_DIR_MAX		(1 << 20)

/*
 * Starts a table of the segments: mmap, the files in dir (the data
 * directory's pg_dynshmem) whose names start with prefix, that uid owns and
 * that are regular files (never a symlink followed); sysv, the System V
 * segments uid made and owns, but the one of key not_key (the main
 * segment's, UsedShmemSegID; -1: none); posix, none yet:
 * dir ("/dev/shm") opened to learn them by name. 0, or -1 when the
 * directory or file could not be read (the table is then empty, and
 * learns nothing). Whatever *t held is not freed: dsm_table_free() it first.
 */
extern int	dsm_table_read(dsm_table *t, dsm_kind kind, const char *dir, const char *prefix,
						   uid_t uid, int64_t not_key);
/* (A table that would pass DSM_TABLE_MAX or DSM_DIR_MAX is -1 too: unknown, not short.) */
extern void dsm_table_free(dsm_table *t);

/* Parses one line of /proc/sysvipc/shm into *seg (its key the handle; uid its owner, cuid its creator); 0 on success */
extern int	dsm_parse_sysv_line(const char *line, size_t len, dsm_segment *seg, uint64_t *uid,
								uint64_t *cuid);

/* The index of the segment with this id, or -1 */
extern int	dsm_table_find(const dsm_table *t, uint64_t id);

/* The index of the segment a mapping maps, or -1 */
extern int	dsm_table_match(const dsm_table *t, const procfs_vma *vma);

/*
 * posix: whether a mapping may be a segment the table has not learned (a
 * shared mapping of a file on dir's device, not in the table): then its
 * name is wanted for dsm_table_learn().
 */
extern int	dsm_table_wants_name(const dsm_table *t, const procfs_vma *vma);

/*
 * posix: adds the segment a mapping named name (as /proc/PID/maps prints
 * it: "<dir>/<prefix><handle>") maps, when that file is a regular file uid
 * owns with the mapping's inode (looked up without following a symlink).
 */
extern void dsm_table_learn(dsm_table *t, const procfs_vma *vma, const char *name, size_t len);

/*
 * Adds a segment known by its id and handle (seen before), if it still
 * exists so: posix, the file <prefix><handle> with that inode; else a
 * listed one. The index of the segment, or -1.
 */
extern int	dsm_table_recall(dsm_table *t, uint64_t id, uint32_t handle);

/* The segments one process maps, by id (the table's order is not kept) */
#define DSM_MAX_MAPPED	64

typedef struct dsm_mapped
{
	int			n;				/* -1: its mappings could not be read */
	int			more;			/* it maps more than DSM_MAX_MAPPED: its own figure unknown */
	uint64_t	id[DSM_MAX_MAPPED];
	uint32_t	handle[DSM_MAX_MAPPED];	/* for dsm_table_recall() from a kept reading */
} dsm_mapped;

/*
 * Adds the segment a mapping maps, if it maps one of the table's (after
 * dsm_table_learn(), where dsm_table_wants_name() said)
 */
extern void dsm_mapped_meet(dsm_mapped *m, const dsm_table *t, const procfs_vma *vma);

/*
 * The segments of the table a process maps, for where no pagemap walk met
 * its mappings already: its shared file mappings alone, asked of the kernel
 * (PROCMAP_QUERY, Linux >= 6.11: a few calls, its other mappings skipped),
 * else from its maps text (which names each mapping: posix segments are
 * learned there; always where use_query is 0: pg_procmem.pagemap_ioctls).
 * pid 0 is this process.
 */
extern procfs_result dsm_read_mapped(pid_t pid, dsm_table *t, dsm_mapped *m, int use_query);

#endif							/* PROCMEM_DSM_H */
