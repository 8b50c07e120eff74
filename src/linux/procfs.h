/*
 * procfs.h
 *		Parsers and readers for Linux /proc/<pid> files.
 *
 * Plain C, no PostgreSQL headers: unit-tested on fixture files and fuzzed.
 * Every reader and parser copes with short reads, missing fields, unknown
 * fields, garbage and absurd values; nothing here allocates or aborts.
 *
 * A figure the kernel did not provide is PROCFS_MISSING (-1), one that was
 * present but garbage or out of range is negative too: negative means "no
 * figure", never 0.
 */
#ifndef PROCMEM_PROCFS_H
#define PROCMEM_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROCFS_MISSING	(-1)
#define PROCFS_INVALID	(-2)	/* seen, but not a usable figure */

/* Outcome of reading one /proc file. */
typedef enum procfs_result
{
	PROCFS_OK = 0,				/* read to the end */
	PROCFS_GONE,				/* ENOENT/ESRCH: no such process (any more) */
	PROCFS_UNREADABLE			/* any other failure, or an empty file */
} procfs_result;

/*
 * Splits a byte stream into lines, handing each complete line (without its
 * '\n') to a callback. A line longer than the carry buffer is dropped whole:
 * only smaps mapping headers with long paths get that long, and they carry
 * no figure we use.
 */
typedef void (*procfs_line_fn) (void *arg, const char *line, size_t len);

typedef struct procfs_lines
{
	procfs_line_fn fn;
	void	   *arg;
	size_t		carry_len;
	int			overlong;		/* inside a line being dropped */
	char		carry[512];
} procfs_lines;

/* The next line of a buffer held whole, from *p up to end, without its '\n'
 * (len); moves *p past it. NULL at the end. */
extern const char *procfs_next_line(const char **p, const char *end, size_t *len);
extern void procfs_lines_init(procfs_lines *lb, procfs_line_fn fn, void *arg);
extern void procfs_lines_feed(procfs_lines *lb, const char *buf, size_t len);
extern void procfs_lines_finish(procfs_lines *lb);

/*
 * A table of fields for "Key:  value [kB]" lines (sep ':', /proc files) or
 * "key value" lines (sep ' ', cgroup files), each parsed into an int64_t
 * member of target (bytes for kB fields). procfs_fields_line is a
 * procfs_line_fn taking the fieldset as its argument.
 */
typedef struct procfs_field
{
	const char *key;
	size_t		offset;			/* of the int64_t in the target struct */
	int			kb;				/* the value carries a " kB" unit; or
								 * PROCFS_SIGKILL_MASK */
} procfs_field;

/* A field that is a signal mask in hex: 1 when SIGKILL is in it, else 0 */
#define PROCFS_SIGKILL_MASK 2

#define PROCFS_FIELD(type, key, member, kb) {key, offsetof(type, member), kb}
#define PROCFS_NFIELDS(table) (sizeof(table) / sizeof((table)[0]))

typedef struct procfs_fieldset
{
	const procfs_field *fields;
	size_t		n;
	char		sep;
	int			sum;			/* repeated keys add up (smaps), else first wins */
	void	   *target;
} procfs_fieldset;

/* The fieldset of a file's table of keys: keys_fieldset() (keys.h) */

/* a + b, or PROCFS_MISSING when either is no figure or the sum overflows */
extern int64_t procfs_sum(int64_t a, int64_t b);

extern void procfs_fields_init(const procfs_fieldset *fs);
extern void procfs_fields_line(void *fs, const char *line, size_t len);
extern int	procfs_fields_count(const procfs_fieldset *fs);

/* Figures from /proc/<pid>/status; bytes unless noted. */
typedef struct procfs_status
{
	int64_t		vm_peak;		/* VmPeak */
	int64_t		vm_hwm;			/* VmHWM: peak RSS */
	int64_t		vm_rss;			/* VmRSS */
	int64_t		rss_anon;		/* RssAnon (>= 4.5) */
	int64_t		rss_file;		/* RssFile (>= 4.5) */
	int64_t		rss_shmem;		/* RssShmem (>= 4.5) */
	int64_t		vm_pte;			/* VmPTE: page tables */
	int64_t		vm_swap;		/* VmSwap */
	int64_t		hugetlb;		/* HugetlbPages (>= 4.4) */
	int64_t		ppid;			/* PPid (a pid, not bytes) */
	int64_t		threads;		/* Threads (a count) */
	int64_t		kill_pending;	/* 1: SIGKILL pending (SigPnd): being killed */
	int64_t		kill_pending_shared;	/* ... or in ShdPnd */
} procfs_status;

/* Figures from /proc/<pid>/smaps_rollup, or summed over /proc/<pid>/smaps. */
typedef struct procfs_smaps
{
	int64_t		pss;			/* Pss */
	int64_t		pss_anon;		/* Pss_Anon (>= 5.3) */
	int64_t		pss_file;		/* Pss_File (>= 5.3) */
	int64_t		pss_shmem;		/* Pss_Shmem (>= 5.3) */
	int64_t		private_clean;	/* Private_Clean */
	int64_t		private_dirty;	/* Private_Dirty */
	int64_t		swap_pss;		/* SwapPss (>= 4.3) */
} procfs_smaps;

/*
 * What a process's reaped children left it, in /proc/<pid>/stat: each
 * grows when it reaps (wait()) a child that faulted or ran.
 */
typedef struct procfs_reaped
{
	uint64_t	cminflt;		/* field 11: their minor page faults */
	uint64_t	cutime;			/* field 16: their time in user mode, clock ticks */
	uint64_t	cstime;			/* field 17: ... in the kernel */
} procfs_reaped;

/* Fields of /proc/<pid>/stat that identify a process. */
typedef struct procfs_stat
{
	char		state;			/* R, S, D, Z, X, ... */
	int64_t		ppid;
	int64_t		threads;		/* field 20 */
	uint64_t	faults;			/* minflt + majflt (fields 10, 12): page faults */
	procfs_reaped reaped;		/* fields 11, 16, 17 */
	uint64_t	starttime;		/* clock ticks after boot */
	/* where the stack and the heap begin: 0 when the kernel hides them */
	uint64_t	start_stack;	/* field 28 */
	uint64_t	start_brk;		/* field 47 (Linux >= 3.3) */
} procfs_stat;

/* Parsers: fill *out from the text; return the number of fields found. */

extern int	procfs_parse_stat(const char *buf, size_t len, procfs_stat *out);
/* Reads and parses /proc/<pid>/stat; PROCFS_UNREADABLE when it does not parse. */
extern procfs_result procfs_read_stat(pid_t pid, procfs_stat *st);
extern int	procfs_stat_dead(const procfs_stat *st);	/* zombie or dead */

/*
 * /proc/<pid>/schedstat: the main thread's time on a CPU (ns, exact: not
 * the clock ticks of stat's utime and stime) and how many times it was
 * put on one (0 where the kernel keeps no sched_info).
 */
typedef struct procfs_schedstat
{
	uint64_t	runtime_ns;
	uint64_t	timeslices;
} procfs_schedstat;

extern int	procfs_parse_schedstat(const char *buf, size_t len, procfs_schedstat *out);
extern procfs_result procfs_read_schedstat(pid_t pid, procfs_schedstat *out);

/*
 * /proc/<pid>/statm's resident pages and those of them backed by a file or
 * shared memory, in bytes: VmRSS, and VmRSS - RssAnon, from one short line
 */
typedef struct procfs_statm
{
	int64_t		resident;
	int64_t		shared;
} procfs_statm;

extern int	procfs_parse_statm(const char *buf, size_t len, procfs_statm *out);
/* ... with pages of page bytes: no libc call at all (a signal handler's) */
extern int	procfs_parse_statm_pages(const char *buf, size_t len, long page, procfs_statm *out);
extern procfs_result procfs_read_statm(pid_t pid, procfs_statm *out);
extern int	procfs_parse_int(const char *buf, size_t len, int64_t *out);
/* The first n numbers of a line of blank-separated unsigned ones (each at most INT64_MAX): 0 when all are there */
extern int	procfs_parse_numbers(const char *buf, size_t len, int64_t *v, int n);

/* One mapping, from a /proc/<pid>/maps line or a PROCMAP_QUERY answer. */
typedef struct procfs_vma
{
	uint64_t	start;
	uint64_t	end;
	int			readable;
	int			writable;
	int			executable;
	int			shared;
	uint64_t	inode;			/* 0 for anonymous and special mappings */
	uint64_t	dev;			/* major << 32 | minor */
	const char *path;			/* in the line: a file, "[heap]", or "" */
	size_t		path_len;
} procfs_vma;

/* Parses one /proc/<pid>/maps line; 0 on success. */
extern int	procfs_parse_maps_line(const char *line, size_t len, procfs_vma *vma);

/*
 * Hands every mapping of /proc/<pid>/maps (pid 0: /proc/self/maps) to fn,
 * parsed; a line that does not parse is passed over. vma->path points into
 * a buffer that is gone when fn returns.
 */
typedef void (*procfs_vma_fn) (void *arg, const procfs_vma *vma);
extern procfs_result procfs_read_maps(pid_t pid, procfs_vma_fn fn, void *arg);

/*
 * Readers for /proc/<pid>/<name>. "pid" 0 means /proc/self. The whole-file
 * reader NUL-terminates buf (cap includes the terminator); *len gets the
 * byte count. A file larger than buf is read only in part (fine for stat,
 * oom_score and cmdline, which we bound).
 */
/* PROCFS_GONE for ENOENT/ESRCH (no such process), else PROCFS_UNREADABLE */
extern procfs_result procfs_errno_result(int err);

extern procfs_result procfs_read_file(pid_t pid, const char *name,
									  char *buf, size_t cap, size_t *len);
extern procfs_result procfs_read_lines(pid_t pid, const char *name,
									   procfs_line_fn fn, void *arg);

/* The same for any path (sysfs, cgroup files), and the /proc path itself. */
extern procfs_result procfs_read_path(const char *path, char *buf, size_t cap, size_t *len);
extern procfs_result procfs_read_path_lines(const char *path, procfs_line_fn fn, void *arg);
extern void procfs_path(char *path, size_t sz, pid_t pid, const char *name);

/*
 * The executable a process runs, as (device, inode) of /proc/<pid>/exe.
 * Processes forked from the postmaster without exec share its executable;
 * an unrelated program adopted by the postmaster (when it is PID 1 or a
 * child subreaper) does not.
 */
extern procfs_result procfs_exe_id(pid_t pid, uint64_t *dev, uint64_t *ino);

/*
 * The open files of a process, from /proc/<pid>/fd (one directory read):
 * their numbers as a bitmap of nbits; and how many are not among inherited
 * (a bitmap of nbits, or NULL: none). Telling which are sockets, or whether
 * a number the postmaster also has open is still the postmaster's file,
 * would cost a readlink per file: a number is taken for its file.
 */
#define PROCFS_FD_BITS		1024
extern procfs_result procfs_fd_bitmap(pid_t pid, uint64_t *bits, size_t nbits);
extern procfs_result procfs_count_fds(pid_t pid, const uint64_t *inherited, size_t nbits,
									  int64_t *files);

/*
 * Children of a process, from /proc/<pid>/task/<pid>/children when the
 * kernel has it (CONFIG_PROC_CHILDREN), else by scanning every /proc/<n>/stat
 * for PPid. Returns the number found (at most cap), or -1 when neither works.
 */
extern int	procfs_children(pid_t pid, pid_t *out, int cap);
extern int	procfs_children_scan(pid_t pid, pid_t *out, int cap);	/* the fallback */

/*
 * Whether the main thread of a process has a child, alive or exited and not
 * yet reaped (a zombie): *has 1 or 0, from one short read of
 * /proc/<pid>/task/<pid>/children. Not PROCFS_OK where the process has gone
 * or the kernel has no such file (built without CONFIG_PROC_CHILDREN).
 */
extern procfs_result procfs_has_child(pid_t pid, int *has);

#endif							/* PROCMEM_PROCFS_H */
