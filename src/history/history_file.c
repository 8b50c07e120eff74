/*
 * history_file.c
 *		The memory history's file: loaded into the ring before the sampler's
 *		first sample, appended to after every sample, rewritten from the
 *		ring when it would outgrow its bound (shared_preload_libraries
 *		mode; only the sampler calls this file). The format is
 *		history_format.c's.
 *
 * The file is loaded by the sampler, never by the postmaster: a crash
 * restart costs the same whatever the file holds, and no file can stop a
 * start. The load reads record by record into the ring (history_load());
 * a rewrite writes the ring's slots as they are, a batch of records at a
 * time, into a temporary file renamed over the old one: neither holds a
 * copy of the ring.
 *
 * Nothing but a regular file is opened at either of its two names (never
 * through a symbolic link: O_NOFOLLOW), and nothing that is in their place
 * is followed. A write never leaves less free space on the file's
 * filesystem than a margin the server keeps for itself; a write that fails
 * is tried again a minute later at the earliest, by whichever sampler runs
 * then (the state is in shared memory). Appends need no fsync (the kernel
 * keeps what a killed process wrote), but the file is synced every 8 MB
 * written, so that a crash restart, whose startup process fsyncs the data
 * directory, never waits for much of it; a rewrite is synced before and
 * after its rename. A sampler whose postmaster died stops at once, even in
 * the middle of a load or a rewrite: it must not hold the server's shared
 * memory while a new postmaster tries to start.
 *
 * The crash rows and the guard's actions the file holds are kept in lists
 * of their own (crashes.c, guard_store.c), which this file does not include: the
 * sampler hands it their functions at the load (history_file_lists), and
 * the guard's new actions as it appends them.
 */
#include "server/compat.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/file_perm.h"
#include "portability/instr_time.h"
#include "postmaster/interrupt.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/pmsignal.h"
#include "storage/shmem.h"

#include "history/history_file.h"
#include "history/history_ring.h"
#include "server/clock.h"
#include "server/shmem.h"

/* The free space a write leaves: 5% of the filesystem, 256 MB to 1 GB */
#define MARGIN_MIN			((uint64) 256 << 20)
#define MARGIN_MAX			((uint64) 1 << 30)
#define MARGIN_PERCENT		5

/* After a write failed, the next try is a minute later at the earliest */
#define RETRY_US			(60 * USECS_PER_SEC)

/*
 * At most this much of the file is ever dirty in the page cache: after a
 * crash the startup process fsyncs every file of the data directory before
 * the server is ready, and it must not wait for the history's.
 */
#define SYNC_EVERY			((uint64) 8 << 20)

/* The file outgrows its bound past 1.5 times the ring, or the ring and this */
#define BOUND_SLACK			((uint64) 4 << 20)

/* A rewrite's batch: records gathered into one writev() */
#define BATCH_IOV			64
#define BATCH_BYTES			(256 * 1024)

/* The file's state, in shared memory: it outlives a sampler */
typedef struct file_shared
{
	bool		loaded;			/* the file was loaded into this ring */
	bool		tail_open;		/* ... and its last sample's run ended untold */
	bool		appendable;		/* the file (dev, ino) may be appended to */
	uint64		dev;
	uint64		ino;
	uint64		size;			/* its good length */
	uint64		unsynced;		/* bytes appended since its last sync */
	int64		retry_at;		/* monotonic us: no write before, after a failure */
	bool		said_failure;	/* logged until a write succeeds */
	bool		said_space;		/* logged until it is written again */
	bool		said_blocked;	/* logged until the name is free */
} file_shared;

static file_shared *state = NULL;

/*
 * The lists, as the sampler gave them at the load, for every rewrite after
 * it. Not parameters of the rewrites: an append rewrites the file by
 * itself (past its bound, or after a failed write), and taking the guard's
 * actions for one marks them as written, so the sampler could not hand
 * them over before each append.
 */
static const history_file_lists *lists = NULL;

/* The file as this sampler has it open for appending */
static int	file_fd = -1;

/* pg_procmem.debug_stop_rewrite_after (tests only) */
static int	debug_stop_rewrite_after = 0;

/* What failed, for the one message each kind of failure has */
typedef enum failure
{
	FAILED_CREATE,
	FAILED_WRITE,
	FAILED_SYNC,
	FAILED_RENAME
} failure;

static Size
state_size(void)
{
	return sizeof(file_shared);
}

static void
state_init(void *part)
{
	memset(part, 0, sizeof(file_shared));
}

static void
state_attached(void *part, bool found)
{
	state = part;
}

static const procmem_shmem_part state_part = {
	"pg_procmem history file", state_size, 0, state_init, state_attached
};

void
procmem_history_file_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	DefineCustomIntVariable("pg_procmem.debug_stop_rewrite_after",
							"For tests: the sampler exits after this many writes of a rewrite of the history file.",
							"It leaves the temporary file as a killed sampler would. 0: never.",
							&debug_stop_rewrite_after, 0, 0, INT_MAX,
							PGC_SIGHUP, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	procmem_shmem_register(&state_part);
}

/*
 * The file's bound: once an append would pass it, the file is rewritten.
 * 1.5 times the ring, or the ring and BOUND_SLACK for a small ring (whose
 * every sample would otherwise be a rewrite).
 */
static uint64
file_bound(void)
{
	uint64		ring = history_ring_bytes();

	return Max(ring * 3 / 2, ring + BOUND_SLACK);
}

/* Exits at once when the postmaster is gone (see the header comment) */
static void
exit_if_orphan(void)
{
	if (!PostmasterIsAlive())
		proc_exit(1);
}

/* --- trouble -------------------------------------------------------------- */

/*
 * The free space to leave on the file's filesystem, and what is free there:
 * where the file shares a filesystem with the data directory or pg_wal, 5%
 * of it, at least 256 MB and at most 1 GB (the server's own writes need
 * it); on a filesystem of its own (a tmpfs for pg_stat_tmp), 5%. False when
 * it cannot be told.
 */
static bool
free_space(uint64 *avail, uint64 *margin)
{
	struct statvfs fs;
	struct stat dir, data, wal;
	uint64		total;
	bool		shared;

	if (statvfs(HISTORY_DIR, &fs) != 0 || stat(HISTORY_DIR, &dir) != 0)
		return false;
	total = (uint64) fs.f_blocks * fs.f_frsize;
	*avail = (uint64) fs.f_bavail * fs.f_frsize;
	shared = (stat(".", &data) == 0 && data.st_dev == dir.st_dev) ||
		(stat("pg_wal", &wal) == 0 && wal.st_dev == dir.st_dev);
	*margin = total / 100 * MARGIN_PERCENT;
	if (shared)
		*margin = Min(Max(*margin, MARGIN_MIN), MARGIN_MAX);
	return true;
}

/* Whether the file's filesystem has less than the margin free */
static bool
short_of_space(void)
{
	uint64		avail, margin;

	return free_space(&avail, &margin) && avail < margin;
}

/*
 * Whether len more bytes leave the margin free on the file's filesystem;
 * said once in the log when they would not.
 */
static bool
room_for(uint64 len)
{
	uint64		avail, margin;

	if (!free_space(&avail, &margin))
		return true;			/* not known: the write itself will tell */
	if (avail >= margin && avail - margin >= len)
		return true;
	if (!state->said_space)
		ereport(LOG,
				(errcode(ERRCODE_DISK_FULL),
				 errmsg("memory history file \"%s\" is not written: too little free space", HISTORY_FILE),
				 errdetail("%llu bytes are free where it is; the file leaves at least %llu free for the server.",
						   (unsigned long long) avail, (unsigned long long) margin),
				 errhint("The memory history is kept in shared memory only until there is room.")));
	state->said_space = true;
	return false;
}

/*
 * A write failed: the history is kept in shared memory only until one
 * succeeds, tried again a minute later. A full disk gets the file's space
 * back: it must never be what fills the disk.
 */
static void
write_failed(failure what, const char *path)
{
	int			save = errno;
	/* bytes could not be written for want of space (not an inode, say) */
	bool		full = (save == ENOSPC || save == EDQUOT) && what == FAILED_WRITE && short_of_space();

	if (!state->said_failure)
	{
		const char *detail = full ?
			"The memory history is kept in shared memory only, and its file was removed to give its space back." :
			"The memory history is kept in shared memory only until a write of its file succeeds.";

		errno = save;
		/* a whole message each, as PostgreSQL's style has them (translatable) */
		switch (what)
		{
			case FAILED_CREATE:
				ereport(LOG, (errcode_for_file_access(),
							  errmsg("could not create memory history file \"%s\": %m", path),
							  errdetail_internal("%s", detail),
							  errhint("The next try is in a minute.")));
				break;
			case FAILED_WRITE:
				ereport(LOG, (errcode_for_file_access(),
							  errmsg("could not write memory history file \"%s\": %m", path),
							  errdetail_internal("%s", detail),
							  errhint("The next try is in a minute.")));
				break;
			case FAILED_SYNC:
				ereport(LOG, (errcode_for_file_access(),
							  errmsg("could not fsync memory history file \"%s\": %m", path),
							  errdetail_internal("%s", detail),
							  errhint("The next try is in a minute.")));
				break;
			case FAILED_RENAME:
				ereport(LOG, (errcode_for_file_access(),
							  errmsg("could not rename memory history file \"%s\" to \"%s\": %m",
									 path, HISTORY_FILE),
							  errdetail_internal("%s", detail),
							  errhint("The next try is in a minute.")));
				break;
		}
	}
	state->said_failure = true;
	if (full)
		(void) unlink(HISTORY_FILE);
	state->appendable = false;
	state->retry_at = procmem_monotonic_us() + RETRY_US;
}

/*
 * Makes a name free for a regular file of ours: a regular file stays (the
 * caller replaces or removes it); anything else is removed (an empty
 * directory too), never followed, and said once in the log. False, said
 * once, when the name stays taken (a directory that is not empty).
 */
static bool
name_free(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0 || S_ISREG(st.st_mode))
		return true;
	if (S_ISDIR(st.st_mode) ? rmdir(path) == 0 : unlink(path) == 0)
	{
		ereport(LOG,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("removed \"%s\", which was not a regular file", path),
				 errdetail("The memory history file is written in its place.")));
		return true;
	}
	if (!state->said_blocked)
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("could not remove \"%s\", which is in the way of the memory history file: %m", path),
				 errdetail("The memory history is kept in shared memory only."),
				 errhint("Remove \"%s\".", path)));
	state->said_blocked = true;
	return false;
}

/*
 * Opens path only if it is a regular file, and never through a link: what
 * lstat() saw is what was opened (a FIFO would not be waited on). -1 with
 * errno ENOENT when there is no regular file there.
 */
static int
open_regular(const char *path, int flags, struct stat *st, bool transient)
{
	struct stat before;
	int			fd;

	if (lstat(path, &before) != 0)
		return -1;
	if (!S_ISREG(before.st_mode))
	{
		errno = ENOENT;
		return -1;
	}
	flags |= O_NOFOLLOW | O_NONBLOCK | PG_BINARY;
	fd = transient ? OpenTransientFile(path, flags) : BasicOpenFile(path, flags);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode) || st->st_dev != before.st_dev ||
		st->st_ino != before.st_ino)
	{
		if (transient)
			CloseTransientFile(fd);
		else
			close(fd);
		errno = ENOENT;
		return -1;
	}
	return fd;
}

/* --- loading -------------------------------------------------------------- */

static long
read_at(void *arg, void *buf, size_t len, uint64_t off)
{
	int			fd = *(int *) arg;
	size_t		done = 0;

	while (done < len)
	{
		ssize_t		r = pg_pread(fd, (char *) buf + done, Min(len - done, (size_t) 1 << 30),
								 (off_t) (off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		done += r;
	}
	return (long) done;
}

static void
sink_reserve(void *arg, uint32_t count, history_entry **a, uint32_t *na, history_entry **b)
{
	history_ring_reserve(count, a, na, b);
}

static void
sink_commit(void *arg, uint32_t count)
{
	history_ring_commit(count);
}

static void
sink_crash(void *arg, const history_crash *c)
{
	lists->load_crash(c);
}

static void
sink_guard(void *arg, const history_guard_action *a)
{
	lists->load_action(a);
}

static void
sink_check(void *arg)
{
	/* a shutdown does not wait for the load; the file is as it was */
	if (ShutdownRequestPending)
		proc_exit(1);
	exit_if_orphan();
	CHECK_FOR_INTERRUPTS();
}

/* Says what a load found, when it was not all good */
static void
report_load(const history_load_result *r, uint64 size)
{
	switch (r->status)
	{
		case HF_END:
			if (size > file_bound() + sizeof(history_file_header) +
				(uint64) lists->max_crashes * (sizeof(history_record) + sizeof(history_crash)))
				ereport(LOG,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("memory history file \"%s\" holds more than pg_procmem.history_size", HISTORY_FILE),
						 errdetail("Its newest %u samples were loaded and %u older ones left out; it will be written anew.",
								   r->samples_loaded, r->samples_dropped),
						 errhint("Raise pg_procmem.history_size to keep more.")));
			break;
		case HF_NOT_OURS:
			ereport(LOG,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("\"%s\" is not a memory history file", HISTORY_FILE),
					 errdetail("It will be replaced.")));
			break;
		case HF_FOREIGN:
			ereport(LOG,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("memory history file \"%s\" was written by another version of pg_procmem", HISTORY_FILE),
					 errdetail("It will be replaced.")));
			break;
		case HF_SHORT:
			ereport(LOG,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("memory history file \"%s\" is cut short", HISTORY_FILE),
					 errdetail("%u samples and %u crash rows before that were loaded; it will be written anew.",
							   r->samples_loaded, r->crashes)));
			break;
		case HF_CORRUPT:
			ereport(LOG,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("memory history file \"%s\" is damaged", HISTORY_FILE),
					 errdetail("%u samples and %u crash rows before that were loaded; it will be written anew.",
							   r->samples_loaded, r->crashes)));
			break;
		case HF_READ_ERROR:
			errno = r->read_errno;
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not read memory history file \"%s\": %m", HISTORY_FILE),
					 errdetail("%u samples and %u crash rows before that were loaded; it will be written anew.",
							   r->samples_loaded, r->crashes)));
			break;
		case HF_OK:
			break;
	}
}

bool
history_file_load(const history_file_lists *from)
{
	int			fd;
	struct stat st;
	history_source src;
	history_sink sink;
	history_load_result r;
	char	   *buf;

	lists = from;
	if (state->loaded)
		return state->tail_open;
	/* a sampler that died while loading: from the start again */
	history_ring_clear();
	lists->clear_crashes();
	state->appendable = false;

	/* a regular file only: anything else in its place the first write removes */
	fd = open_regular(HISTORY_FILE, O_RDONLY, &st, true);
	if (fd < 0)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not open memory history file \"%s\": %m", HISTORY_FILE),
					 errdetail("The history starts empty; the file will be replaced.")));
		state->loaded = true;
		return false;
	}

	src.read = read_at;
	src.arg = &fd;
	src.size = (uint64) st.st_size;
	sink.capacity = history_ring_capacity();
	sink.reserve = sink_reserve;
	sink.commit = sink_commit;
	sink.crash = sink_crash;
	sink.check = sink_check;
	sink.arg = NULL;
	sink.guard = sink_guard;
	buf = palloc(HISTORY_LOAD_BUFFER);
	r = history_load(&src, &sink, buf);
	pfree(buf);
	CloseTransientFile(fd);
	report_load(&r, src.size);

	/*
	 * appended to as it is, if it is whole and within its bound, and its
	 * crash rows are this build's size (1.2.0's file is rewritten)
	 */
	state->appendable = r.status == HF_END && src.size <= file_bound() &&
		r.crash_size == sizeof(history_crash);
	state->dev = (uint64) st.st_dev;
	state->ino = (uint64) st.st_ino;
	state->size = src.size;
	state->tail_open = r.tail_open;
	state->loaded = true;
	return state->tail_open;
}

/* --- writing -------------------------------------------------------------- */

/* Writes every byte of the iovecs, or fails with errno (a short write: ENOSPC) */
static bool
write_iov(int fd, struct iovec *iov, int n)
{
	size_t		want = 0;

	for (int i = 0; i < n; i++)
		want += iov[i].iov_len;
	errno = 0;
	if (writev(fd, iov, n) != (ssize_t) want)
	{
		if (errno == 0)
			errno = ENOSPC;
		return false;
	}
	return true;
}

static void
close_file(void)
{
	if (file_fd < 0)
		return;
	close(file_fd);
	ReleaseExternalFD();
	file_fd = -1;
}

/* A rewrite's records, gathered into batches */
typedef struct batch
{
	int			fd;
	struct iovec iov[BATCH_IOV];
	history_record rec[BATCH_IOV];	/* the headers the iovecs point at */
	int			niov;
	int			nrec;
	size_t		bytes;
	uint64		written;		/* by the batches so far */
	uint64		unsynced;		/* of it, since the last sync */
	int			writes;
} batch;

static bool
batch_flush(batch *bt)
{
	if (bt->niov == 0)
		return true;
	exit_if_orphan();
	if (!write_iov(bt->fd, bt->iov, bt->niov))
		return false;
	bt->written += bt->bytes;
	bt->unsynced += bt->bytes;
	bt->niov = bt->nrec = 0;
	bt->bytes = 0;
	if (bt->unsynced >= SYNC_EVERY)
	{
		if (pg_fdatasync(bt->fd) != 0)
			return false;
		bt->unsynced = 0;
	}
	if (debug_stop_rewrite_after > 0 && ++bt->writes == debug_stop_rewrite_after)
	{
		ereport(LOG,
				(errcode(ERRCODE_SUCCESSFUL_COMPLETION),
				 errmsg("memory history sampler stopping in the middle of a rewrite"),
				 errdetail("pg_procmem.debug_stop_rewrite_after is %d.", debug_stop_rewrite_after)));
		proc_exit(1);
	}
	return true;
}

/* Adds one record (its payload in one or two pieces) to the batch */
static bool
batch_add(batch *bt, history_record_kind kind, uint32 count,
		  const void *a, size_t alen, const void *b, size_t blen)
{
	uint32		crc = history_crc32c(0, a, alen);

	if ((bt->niov + 3 > BATCH_IOV || bt->bytes >= BATCH_BYTES) && !batch_flush(bt))
		return false;
	if (b != NULL)
		crc = history_crc32c(crc, b, blen);
	history_record_init(&bt->rec[bt->nrec], kind, count, crc);
	bt->iov[bt->niov++] = (struct iovec) {&bt->rec[bt->nrec++], sizeof(history_record)};
	if (alen > 0)
		bt->iov[bt->niov++] = (struct iovec) {(void *) a, alen};
	if (b != NULL && blen > 0)
		bt->iov[bt->niov++] = (struct iovec) {(void *) b, blen};
	bt->bytes += sizeof(history_record) + alen + blen;
	return true;
}

/*
 * The bytes a rewrite writes: the header, the crash rows, the guard's
 * actions, and every whole sample of the ring with its record's header.
 */
static uint64
rewrite_size(int ncrashes, int nactions)
{
	uint64		bytes = sizeof(history_file_header) +
		(uint64) ncrashes * (sizeof(history_record) + sizeof(history_crash)) +
		(uint64) nactions * (sizeof(history_record) + sizeof(history_guard_action));
	uint64		end = history_ring_end();

	for (uint64 p = history_ring_first_sample(); p < end; p = history_ring_next_sample(p))
		bytes += sizeof(history_record) + (history_ring_next_sample(p) - p) * sizeof(history_entry);
	return bytes;
}

/*
 * Rewrites the file from the ring and the crash list: a temporary file,
 * fsync'ed and renamed over the old one, then left open for appending.
 * The ring's slots are written as they are (the sampler, its only writer,
 * is this process): no copy of it is made.
 */
static void
rewrite(void)
{
	history_file_header h;
	history_crash *c;
	uint32		nc;
	history_guard_action *ga;
	int			ng;
	uint64		end = history_ring_end();
	uint64		size;
	batch	   *bt;
	struct stat st;
	bool		ok;
	int			failed;

	Assert(lists != NULL);
	close_file();
	state->appendable = false;
	if (procmem_monotonic_us() < state->retry_at)
		return;
	if (!name_free(HISTORY_FILE) || !name_free(HISTORY_FILE_TMP))
		return;
	c = lists->copy_crashes(&nc);
	ga = palloc(sizeof(history_guard_action) * lists->max_actions);
	ng = lists->all_actions(ga, lists->max_actions);
	size = rewrite_size(nc, ng);
	if (!room_for(size))
	{
		pfree(c);
		pfree(ga);
		return;
	}

	/* whatever has the temporary name (a leftover of a stopped rewrite) goes */
	(void) unlink(HISTORY_FILE_TMP);
	bt = palloc0(sizeof(batch));
	bt->fd = BasicOpenFilePerm(HISTORY_FILE_TMP, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | PG_BINARY,
							   pg_file_create_mode);
	if (bt->fd < 0)
	{
		write_failed(FAILED_CREATE, HISTORY_FILE_TMP);
		pfree(c);
		pfree(ga);
		pfree(bt);
		return;
	}
	ReserveExternalFD();

	history_format_header_init(&h);
	bt->iov[bt->niov++] = (struct iovec) {&h, sizeof(h)};
	bt->bytes = sizeof(h);
	ok = true;
	for (uint32 i = 0; ok && i < nc; i++)
		ok = batch_add(bt, RECORD_CRASH, 1, &c[i], sizeof(history_crash), NULL, 0);
	for (int i = 0; ok && i < ng; i++)
		ok = batch_add(bt, RECORD_GUARD, 1, &ga[i], sizeof(history_guard_action), NULL, 0);
	for (uint64 p = history_ring_first_sample(); ok && p < end; p = history_ring_next_sample(p))
	{
		uint32		n = (uint32) (history_ring_next_sample(p) - p);
		uint32		first = Min(n, history_ring_capacity() - (uint32) (p % history_ring_capacity()));

		/* a sample that wraps round the ring's end is two pieces */
		ok = batch_add(bt, RECORD_SAMPLE, n, history_ring_entry(p), first * sizeof(history_entry),
					   first < n ? history_ring_entry(p + first) : NULL,
					   (n - first) * sizeof(history_entry));
	}
	failed = !(ok && batch_flush(bt)) ? FAILED_WRITE :
		pg_fsync(bt->fd) != 0 ? FAILED_SYNC :
		rename(HISTORY_FILE_TMP, HISTORY_FILE) != 0 ? FAILED_RENAME : -1;
	if (failed >= 0)
	{
		int			save = errno;

		/* the temporary file goes first: its space counts for nothing now */
		close(bt->fd);
		ReleaseExternalFD();
		(void) unlink(HISTORY_FILE_TMP);
		errno = save;
		write_failed((failure) failed, HISTORY_FILE_TMP);
	}
	else
	{
		/* the rename, durable (not durable_rename(): it opens the target by name) */
		(void) fsync_fname_ext(HISTORY_DIR, true, false, LOG);
		file_fd = bt->fd;
		if (fstat(file_fd, &st) == 0)
		{
			state->dev = (uint64) st.st_dev;
			state->ino = (uint64) st.st_ino;
		}
		state->size = bt->written;
		state->unsynced = 0;
		state->appendable = true;
		if (state->said_failure || state->said_space || state->said_blocked)
			ereport(LOG,
					(errcode(ERRCODE_SUCCESSFUL_COMPLETION),
					 errmsg("memory history file \"%s\" written again", HISTORY_FILE)));
		state->said_failure = state->said_space = state->said_blocked = false;
	}
	pfree(c);
	pfree(ga);
	pfree(bt);
}

/*
 * The file the load left, or a previous sampler wrote, opened to append to:
 * the same file (not a link, not replaced since), cut back to its good
 * length (a record a dying sampler left half-written goes).
 */
static bool
reopen(void)
{
	struct stat st;
	int			fd;

	if (!state->appendable)
		return false;
	fd = open_regular(HISTORY_FILE, O_WRONLY | O_APPEND, &st, false);
	if (fd < 0)
		return false;
	if ((uint64) st.st_dev != state->dev ||
		(uint64) st.st_ino != state->ino || (uint64) st.st_size < state->size ||
		((uint64) st.st_size > state->size && ftruncate(fd, (off_t) state->size) != 0))
	{
		close(fd);
		return false;
	}
	ReserveExternalFD();
	file_fd = fd;
	return true;
}

void
history_file_start(void)
{
	close_file();
	if (!reopen())
		rewrite();
}

void
history_file_rewrite(void)
{
	rewrite();
}

/* Appends one record (see history_file.h) */
static void
append(history_record_kind kind, uint32 count, const void *payload, size_t len)
{
	history_record r;
	struct iovec iov[2];

	if (file_fd < 0 || state->size + sizeof(r) + len > file_bound())
	{
		rewrite();
		if (kind != RECORD_STOP || file_fd < 0)
			return;				/* the ring had it */
	}
	if (!room_for(sizeof(r) + len))
	{
		close_file();
		state->appendable = false;
		return;
	}
	history_record_init(&r, kind, count, history_crc32c(0, payload, len));
	iov[0] = (struct iovec) {&r, sizeof(r)};
	iov[1] = (struct iovec) {(void *) payload, len};
	if (!write_iov(file_fd, iov, len > 0 ? 2 : 1))
	{
		int			save = errno;

		/* a torn record would end the readable file: take it back */
		if (ftruncate(file_fd, (off_t) state->size) != 0)
			save = errno;
		close_file();
		errno = save;
		write_failed(FAILED_WRITE, HISTORY_FILE);
		return;
	}
	state->size += sizeof(r) + len;
	state->unsynced += sizeof(r) + len;
	if (state->unsynced >= SYNC_EVERY && pg_fdatasync(file_fd) == 0)
		state->unsynced = 0;
}

void
history_file_append_sample(const history_entry *e, uint32 n)
{
	append(RECORD_SAMPLE, n, e, sizeof(history_entry) * n);
}

void
history_file_append_actions(const history_guard_action *a, int n)
{
	for (int i = 0; i < n; i++)
		append(RECORD_GUARD, 1, &a[i], sizeof(a[i]));
}

void
history_file_append_stop(void)
{
	append(RECORD_STOP, 0, NULL, 0);
}

void
history_file_close(void)
{
	close_file();
}
