/*
 * history_format.h
 *		The memory history's entries and the format of its file (no
 *		PostgreSQL headers): the structs, the CRC, and a file read record by
 *		record into a ring.
 *
 * A *sample* is every process of the server at one time: a system entry,
 * then one entry per process. The ring in shared memory (history_ring.c)
 * holds entries in this form, and so does the file the history survives a
 * restart in (history_file.c):
 *
 *	header | record | record | ...
 *
 * where a record is a history_record followed by its payload (count entries
 * for a sample, one history_crash for a crash row, nothing for a clean
 * stop) and carries the CRC-32C of both. A record cut short (a process
 * killed mid-write) or damaged ends what can be read of the file.
 *
 * NB: these structs are the file format. A change of their sizes is a new
 * format that the loader refuses (docs/architecture.md, "A new history
 * field", says what to do instead); a new field takes space the union
 * leaves unused, where files already on disk hold zeros.
 */
#ifndef PROCMEM_HISTORY_FORMAT_H
#define PROCMEM_HISTORY_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define HISTORY_FILE_MAGIC		0x53484d50	/* "PMHS" */
#define HISTORY_FILE_VERSION	1

#define HISTORY_TYPE_LEN	32
#define HISTORY_NAME_LEN	64		/* NAMEDATALEN */
#define HISTORY_STATE_LEN	32
#define HISTORY_QUERY_LEN	256		/* the first bytes of the statement */

/* The segments a sample names (history_system.dsm_seen) */
#define HISTORY_DSM_SEEN	16
/* ... and the left over ones it names */
#define HISTORY_DSM_LEFTOVER	4

/* A figure that could not be read is negative, as everywhere */
#define HISTORY_NO_SCORE	INT32_MIN

/* The most entries a sample record may have (under 1 GB, even in 32 bits) */
#define HISTORY_MAX_SAMPLE	(1u << 20)

/*
 * The most a sample's number may pass the one before it in a file: more is
 * not a number this code wrote (a sample every millisecond for 30 years is
 * 2^40), and the loader numbers the sample itself.
 */
#define HISTORY_MAX_NUMBER_STEP	((int64_t) 1 << 40)

typedef enum history_kind
{
	HISTORY_SYSTEM = 1,			/* the first entry of every sample */
	HISTORY_PROCESS = 2
} history_kind;

/*
 * The memory settings a backend runs with, and where each was set. value:
 * bytes (work_mem, temp_buffers, maintenance_work_mem) or thousandths
 * (hash_mem_multiplier); source: a history_setting_source; 0 both: unknown.
 */
typedef enum history_setting
{
	SETTING_WORK_MEM = 0,
	SETTING_HASH_MEM_MULTIPLIER,
	SETTING_TEMP_BUFFERS,
	SETTING_MAINTENANCE_WORK_MEM,
	HISTORY_SETTINGS
} history_setting;

/*
 * Where a setting's value came from, as pg_settings.source names it
 * (history_setting_source_name()); the codes are the file's, whatever a
 * PostgreSQL version numbers its GucSource.
 */
typedef enum history_setting_source
{
	SOURCE_UNKNOWN = 0,
	SOURCE_DEFAULT,
	SOURCE_ENV_VAR,
	SOURCE_FILE,
	SOURCE_ARGV,
	SOURCE_GLOBAL,
	SOURCE_DATABASE,
	SOURCE_USER,
	SOURCE_DATABASE_USER,
	SOURCE_CLIENT,
	SOURCE_OVERRIDE,
	SOURCE_INTERACTIVE,
	SOURCE_TEST,
	SOURCE_SESSION,
	HISTORY_SOURCES
} history_setting_source;

typedef struct history_settings
{
	int64_t		value[HISTORY_SETTINGS];
	uint8_t		source[HISTORY_SETTINGS];
	/*
	 * Not a setting: in a process entry, its HISTORY_PROC_* flags (a
	 * process entry has no room elsewhere; files older builds wrote hold 0
	 * here); 0 everywhere else.
	 */
	uint8_t		entry_flags;
	uint8_t		pad[7 - HISTORY_SETTINGS];
} history_settings;

/* The figures are those of an earlier sample's read (reuse.h): nothing can have changed them */
#define HISTORY_PROC_REUSED		0x01
/* Its oom_score_adj was read (older files: never set), and was -1000 */
#define HISTORY_PROC_OOM_KNOWN		0x02
#define HISTORY_PROC_OOM_PROTECTED	0x04

/* One process at one sample; times are PostgreSQL timestamps (us since 2000) */
typedef struct history_process
{
	int64_t		backend_start;	/* 0: unknown */
	int64_t		query_start;	/* 0: unknown */
	int64_t		query_id;		/* 0: none */
	int64_t		overhead;		/* as pg_procmem_backends */
	int64_t		private_anon;	/* exclusive anonymous memory (pagemap) */
	int64_t		page_tables;	/* VmPTE */
	int64_t		rss;
	int64_t		swap;
	int64_t		context_bytes;	/* published memory-context total */
	int32_t		leader_pid;		/* 0: none */
	int32_t		oom_score;		/* HISTORY_NO_SCORE: unreadable */
	char		backend_type[HISTORY_TYPE_LEN];
	char		datname[HISTORY_NAME_LEN];
	char		usename[HISTORY_NAME_LEN];
	char		application_name[HISTORY_NAME_LEN];
	char		state[HISTORY_STATE_LEN];
	char		query[HISTORY_QUERY_LEN];
	history_settings settings;	/* as its slot said (contexts.c); 0: unknown */
	/*
	 * New in 1.3.0, which makes the entry HISTORY_ENTRY_SIZE_1_2 + 16
	 * bytes: 1.2.0's entries load with both -1 (dsm_groups.h)
	 */
	int64_t		dsm;			/* its DSM segments' bytes; -1: unknown */
	int64_t		group_dsm;		/* its parallel group's own segments' */
} history_process;

/* The machine and the server's cgroup at one sample (bytes, but counts) */
typedef struct history_system
{
	int64_t		run_started;	/* when shared memory was (re)initialized */
	int64_t		mem_total;
	int64_t		mem_available;
	int64_t		swap_used;
	int64_t		page_tables;	/* the machine's, /proc/meminfo */
	int64_t		hugepages_total;	/* pages */
	int64_t		hugepages_free; /* pages */
	int64_t		cgroup_usage;
	int64_t		cgroup_limit;	/* -1: none */
	int64_t		cgroup_oom_kills;
	int64_t		connections;	/* client connections since run_started */
	int64_t		sample_us;		/* the sampler's CPU time for this sample */
	int32_t		processes;		/* processes sampled */
	int32_t		kept;			/* process entries that follow (fewer than
								 * processes when the sample outgrew the
								 * ring); set by whoever stores the sample */
	/* new in the same format version: 0 in files older builds wrote */
	int64_t		sample;			/* 1, 2, ...: the order samples were taken in */
	int64_t		postmaster_started; /* PgStartTime: which postmaster's run */
	int64_t		sample_wall_us; /* the wall time it took */
	/* new in 1.3.0, the same format version: 0 in files older builds wrote */
	int32_t		pressure;		/* the pressure watch's level (pressure.h) */
	int32_t		pressure_source;	/* ... and what raised it */
	int64_t		pressure_used;	/* the tightest source's use the kernel cannot
								 * reclaim, and its limit; 0: unknown */
	int64_t		pressure_limit;
	int32_t		reused;			/* process entries whose figures were reused */
	int32_t		pad;
	/* new in 1.3.0 too: which cgroup the counters are of (a cgroup made again is another) */
	int64_t		cgroup_id;		/* its directory's inode; 0: unknown */
	/* new in 1.3.0 too: the DSM segments (dsm_groups.h), each counted once */
	int32_t		dsm_known;		/* 1: the figures below were read */
	int32_t		dsm_segments;	/* segments some process of the server maps */
	int64_t		dsm_mapped;		/* ... their bytes */
	int64_t		dsm_shared;		/* ... of those mapped by several groups */
	int64_t		dsm_leftover;	/* segments nobody has mapped for a while */
	int32_t		dsm_leftover_segments;
	int32_t		dsm_shared_segments;
	/*
	 * the largest segments mapped, for the next run's sampler to tell those
	 * left over by a crash restart (dsm_groups.h): id and handle, 0: none
	 */
	uint64_t	dsm_seen[HISTORY_DSM_SEEN];
	uint32_t	dsm_seen_handle[HISTORY_DSM_SEEN];
	/* the largest of those left over, to name them: id and handle, 0: none */
	uint64_t	dsm_leftover_id[HISTORY_DSM_LEFTOVER];
	uint32_t	dsm_leftover_handle[HISTORY_DSM_LEFTOVER];
	int32_t		dsm_kind;		/* dsm_kind (dsm.h): how they are named */
	int32_t		pad2;
	/*
	 * new in 1.3.0 too: memory pressure stall (linux/psi.h), avg10 in
	 * hundredths of a percent, -1 where not read; psi_read 0 (older files):
	 * none of it known
	 */
	int32_t		psi_read;		/* 1: read, psi_missing says what was not */
	int32_t		psi_missing;	/* PSI_MISSING_* */
	int32_t		psi_some_avg10; /* the machine's */
	int32_t		psi_full_avg10;
	int32_t		cgroup_psi_some_avg10;	/* the server's own cgroup's (v2) */
	int32_t		cgroup_psi_full_avg10;
} history_system;

typedef struct history_entry
{
	int64_t		sampled_at;
	int32_t		kind;			/* history_kind */
	int32_t		pid;			/* 0 for the system entry */
	union
	{
		history_process proc;
		history_system sys;
	}			u;
} history_entry;

/* How a crash row knows which process was killed */
typedef enum history_how
{
	HOW_POSTMASTER_LOG = 1,		/* the postmaster's own message about the child */
	HOW_GUESS_OOM_SCORE = 2,	/* only the highest oom_score: a guess */
	HOW_UNCLEAN_STOP = 3		/* the server stopped without a clean shutdown */
} history_how;

#define HISTORY_TOP 3
#define HISTORY_GROUPS 3
#define HISTORY_CRASH_QUERY_LEN 1024	/* what the postmaster logs of it */

/*
 * The processes of one user, application and backend type at a sample, as
 * a crash row keeps the largest groups: who held the memory.
 */
typedef struct history_group
{
	char		usename[HISTORY_NAME_LEN];
	char		application_name[HISTORY_NAME_LEN];
	char		backend_type[HISTORY_TYPE_LEN];
	int32_t		processes;
	int32_t		largest_pid;
	int64_t		total;			/* overhead */
	int64_t		largest;
	history_settings settings;	/* the largest one's */
} history_group;

/* What a crash row knows about the killed process's identity and query */
#define CRASH_SLOT_READ		0x01	/* its slot was read at its exit */
#define CRASH_QUERY_LOGGED	0x02	/* query: what the postmaster read at its exit */
#define CRASH_QUERY_CUT		0x04	/* ... cut to what it keeps */
#define CRASH_QUERY_FOLDED	0x08	/* ... with non-ASCII bytes shown as '?' */
#define CRASH_QUERY_KEPT_BACK	0x10	/* ... not kept: keep_statement_text was off */
#define CRASH_FOLDED_KNOWN	0x20	/* whether it was folded is known */

/* A crash restart (or an unclean stop), and what the history knew before it */
typedef struct history_crash
{
	int64_t		crashed_at;		/* when the postmaster logged the exit that
								 * began it (else restarted_at); also what
								 * tells two crash rows apart */
	int64_t		last_sample_at; /* 0: no sample before it */
	int32_t		how;			/* history_how */
	int32_t		killed_pid;		/* from the log, or the guess (how says); 0: none */
	int32_t		signal;			/* from the log; 0: none, or unknown */
	int32_t		exit_code;		/* from the log; -1: none, or unknown */
	int64_t		oom_kills_before;	/* the cgroup's counter; -1: unknown */
	int64_t		oom_kills_after;
	char		logged[256];	/* the postmaster's message, as logged */
	history_entry killed;		/* its last sample; kind 0: none */
	int32_t		top_pid[HISTORY_TOP];	/* the largest overheads at the last sample */
	int32_t		number;			/* 1 for the first the history saw, and so on */
	int64_t		top_overhead[HISTORY_TOP];
	char		top_type[HISTORY_TOP][HISTORY_TYPE_LEN];
	/* the killed process, as the postmaster read it at its exit */
	int64_t		restarted_at;	/* when shared memory was initialized again */
	int32_t		flags;			/* CRASH_* */
	int32_t		pad;
	int64_t		backend_start;	/* 0: unknown */
	int64_t		query_start;	/* 0: unknown */
	char		backend_type[HISTORY_TYPE_LEN];
	char		datname[HISTORY_NAME_LEN];
	char		usename[HISTORY_NAME_LEN];
	char		application_name[HISTORY_NAME_LEN];
	history_settings settings;
	char		query[HISTORY_CRASH_QUERY_LEN];
	/* who held the memory at the last sample: the largest groups, largest first */
	history_group groups[HISTORY_GROUPS];
	/* what a victim no sample saw can have grown by: from this to the limit */
	int64_t		cgroup_usage_before;	/* the cgroup's usage at the last sample; -1: unknown */
	int64_t		cgroup_limit_after; /* its effective limit when the row was made; -1: none */
	/*
	 * New in 1.3.0: 1.2.0 wrote rows of HISTORY_CRASH_SIZE_1_2 bytes, which
	 * load with these 0. When the kill happened, where the OOM kill counter
	 * (the cgroup's, else the machine's) placed it between two of the
	 * sampler's reads of it (crashed_at stays the exit's time, which names
	 * the row): the figures above come from the last sample before it.
	 */
	int64_t		killed_after;	/* the last read before the counter rose; 0: not placed */
	int64_t		killed_by;		/* the first read after it (or the exit) */
	int32_t		oom;			/* crash_oom */
	/* the killed process's parallel query at its sample: leader and workers */
	int32_t		killed_group_processes; /* 0: it ran none */
	int64_t		killed_group_overhead;
	/* the groups' more (groups[] keeps 1.2.0's layout): a parallel worker counts in its leader's group */
	int32_t		group_workers[HISTORY_GROUPS];	/* parallel workers among its processes */
	int32_t		plan;			/* CRASH_PLAN_*: its statement's plans, as its slot said */
	char		group_state[HISTORY_GROUPS][HISTORY_STATE_LEN]; /* the largest one's state */
	char		group_query[HISTORY_GROUPS][HISTORY_QUERY_LEN]; /* ... and its statement */
	/* the killed process's parallel group's own DSM segments (dsm_groups.h); -1: unknown */
	int64_t		killed_group_dsm;
	int64_t		group_dsm[HISTORY_GROUPS];	/* the groups' parallel queries' own DSM; -1: unknown */
} history_crash;

/* What the OOM kill counter says of a crash row's kill */
typedef enum crash_oom
{
	CRASH_OOM_UNKNOWN = 0,		/* no counter, or a 1.2.0 row */
	CRASH_OOM_COUNTED,			/* it rose across the kill: the OOM killer */
	CRASH_OOM_NOT_COUNTED		/* it was read before and after, and did not rise */
} crash_oom;

/* What a crash row's statement's plans had that work_mem bounds (plan_memory.c) */
#define CRASH_PLAN_KNOWN	0x01	/* said: the bits below hold */
#define CRASH_PLAN_SORT		0x02	/* a sort: work_mem */
#define CRASH_PLAN_HASH		0x04	/* a hash table: work_mem x hash_mem_multiplier */
#define CRASH_PLAN_STORE	0x08	/* a tuplestore (a materialized result): work_mem */
#define CRASH_PLAN_MEMORY	(CRASH_PLAN_SORT | CRASH_PLAN_HASH | CRASH_PLAN_STORE)

/* sizeof(history_crash) in 1.2.0, whose files load (their rows' new fields 0) */
#define HISTORY_CRASH_SIZE_1_2	3096
/* sizeof(history_entry) in 1.2.0: its entries load, made the new size (history_format_widen_*) */
#define HISTORY_ENTRY_SIZE_1_2	648

/* What the memory guard did (guard_worker.c), or a backend past its own limit (guard_backend.c) */
typedef enum history_guard_what
{
	GUARD_CANCEL = 1,			/* canceled the statement */
	GUARD_TERMINATE = 2,		/* ended the session */
	GUARD_WOULD_CANCEL = 3,		/* pg_procmem.guard = dry_run: only said so */
	GUARD_WOULD_TERMINATE = 4
} history_guard_what;

typedef enum history_guard_why
{
	GUARD_SERVER_LIMIT = 1,		/* the server's memory passed pg_procmem.guard_threshold */
	GUARD_BACKEND_LIMIT = 2		/* the backend passed pg_procmem.max_backend_memory */
} history_guard_why;

/* One action of the guard (bytes; times are PostgreSQL timestamps) */
typedef struct history_guard_action
{
	int64_t		at;				/* with pid, what tells two actions apart */
	int64_t		number;			/* 1, 2, ...: the order they were taken in
								 * since the history began */
	int32_t		pid;
	int32_t		what;			/* history_guard_what */
	int32_t		why;			/* history_guard_why */
	int32_t		processes;		/* a parallel query's leader and workers */
	int64_t		held;			/* what they held (RssAnon, guard_rules.h) */
	int64_t		limit;			/* the limit passed: the source's, or the backend's */
	int64_t		used;			/* the source's use at the time; -1: a backend limit */
	int64_t		given_back;		/* how far what they held fell after it; -1: unknown */
	int32_t		threshold_pct;	/* pg_procmem.guard_threshold; 0: a backend limit */
	int32_t		source;			/* pressure_source_kind; 0: a backend limit */
	int64_t		backend_start;	/* 0: unknown */
	int64_t		query_start;	/* 0: unknown */
	char		usename[HISTORY_NAME_LEN];
	char		datname[HISTORY_NAME_LEN];
	char		application_name[HISTORY_NAME_LEN];
	char		query[HISTORY_QUERY_LEN];	/* empty: not kept */
} history_guard_action;

typedef enum history_record_kind
{
	RECORD_SAMPLE = 1,			/* count entries, the system entry first */
	RECORD_CRASH = 2,			/* one history_crash */
	RECORD_STOP = 3,			/* a clean stop: no payload */
	RECORD_GUARD = 4			/* one history_guard_action; written again once
								 * what it gave back is known (pid and at name
								 * it: the later record counts) */
} history_record_kind;

typedef struct history_file_header
{
	uint32_t	magic;
	uint32_t	version;
	uint32_t	entry_size;		/* sizeof(history_entry) */
	uint32_t	crash_size;		/* sizeof(history_crash); HISTORY_CRASH_SIZE_1_2 in 1.2.0's files */
} history_file_header;

typedef struct history_record
{
	uint32_t	kind;			/* history_record_kind */
	uint32_t	count;
	uint32_t	crc;			/* CRC-32C of the payload, then of kind and count */
	uint32_t	pad;
} history_record;

/* What reading a file found */
typedef enum history_file_result
{
	HF_OK = 0,
	HF_END,						/* no more records */
	HF_SHORT,					/* a header or record cut short */
	HF_NOT_OURS,				/* not a history file */
	HF_FOREIGN,					/* another version's or build's history file */
	HF_CORRUPT,					/* a record that fails its CRC or is absurd */
	HF_READ_ERROR				/* the file could not be read (errno) */
} history_file_result;

/*
 * CRC-32C, chained: history_crc32c(history_crc32c(0, a, n), b, m) is the CRC
 * of a then b. With the CPU's crc32 instruction where it has one (x86-64
 * with SSE 4.2), else eight bytes a step from tables; history_crc32c_sw()
 * is always the tables (the unit tests compare the two).
 */
extern uint32_t history_crc32c(uint32_t crc, const void *data, size_t len);
extern uint32_t history_crc32c_sw(uint32_t crc, const void *data, size_t len);

extern void history_format_header_init(history_file_header *h);
extern history_file_result history_format_check_header(const char *buf, size_t len);
/* The size of the crash rows of the file whose header is at buf (checked; else the current one) */
extern uint32_t history_format_crash_size(const char *buf, size_t len);
/* ... and of its entries */
extern uint32_t history_format_entry_size(const char *buf, size_t len);

/*
 * An older build's entry (old_size bytes, HISTORY_ENTRY_SIZE_1_2) or crash
 * row (old_size bytes holding an entry of old_entry_size) as this build's:
 * the fields it lacks 0, or -1 where 0 would be a figure (dsm, group_dsm).
 */
extern void history_format_widen_entry(const void *old, uint32_t old_size, history_entry *e);
extern void history_format_widen_crash(const void *old, uint32_t old_size,
									   uint32_t old_entry_size, history_crash *c);

/* Payload bytes of a record of this kind and count; 0 when it cannot be. */
extern size_t history_record_payload(uint32_t kind, uint32_t count);

/*
 * A record's header for a payload whose CRC-32C (history_crc32c() from 0,
 * over its pieces in order) is payload_crc.
 */
extern void history_record_init(history_record *r, history_record_kind kind,
								uint32_t count, uint32_t payload_crc);

/*
 * The next record of a file held whole in buf, from *off (start after the
 * header): HF_OK with *rec and *payload set and *off moved past it, HF_END
 * at the end, or what is wrong with the rest of the file.
 */
extern history_file_result history_format_next(const char *buf, size_t len, size_t *off,
											 const history_record **rec,
											 const char **payload);

extern const char *history_format_result_text(history_file_result r);

/* pg_settings.source's name for a history_setting_source; NULL: unknown */
extern const char *history_setting_source_name(int source);

/* Copies a string into a fixed field, cut at a UTF-8 character boundary. */
extern void history_copy_text(char *dst, size_t dstsz, const char *src, size_t srclen);
/* ... of a C string; NULL: empty */
extern void history_copy_cstr(char *dst, size_t dstsz, const char *src);

/* --- loading a file into a ring, record by record ------------------------ */

/* Where a file is read from (pread-like: the codec does no I/O of its own) */
typedef struct history_source
{
	/* len bytes at off into buf: how many were read (fewer at the end), or -1 */
	long		(*read) (void *arg, void *buf, size_t len, uint64_t off);
	void	   *arg;
	uint64_t	size;			/* the file's size when it was opened */
} history_source;

/*
 * Where the records go: a ring of capacity entries. reserve() gives the
 * slots the next count entries go to, one piece or two where the ring wraps
 * (*b NULL when one), which nobody may read until commit(); the loader
 * fills them straight from the file and commits them once their CRC holds.
 * crash() takes each crash row (CRC checked). Any of them may stop the load
 * by not returning (an interrupt): the loader holds nothing to release.
 */
typedef struct history_sink
{
	uint32_t	capacity;
	void		(*reserve) (void *arg, uint32_t count, history_entry **a, uint32_t *na,
							history_entry **b);
	void		(*commit) (void *arg, uint32_t count);
	void		(*crash) (void *arg, const history_crash *c);
	void		(*check) (void *arg);	/* once a record: may stop the load */
	void	   *arg;
	/* each guard action (CRC checked, text fields ended); NULL: skipped */
	void		(*guard) (void *arg, const history_guard_action *a);
} history_sink;

/* What a load found */
typedef struct history_load_result
{
	history_file_result status; /* HF_END: every record was good */
	int			read_errno;		/* for HF_READ_ERROR */
	uint64_t	good_end;		/* where the good records end */
	uint32_t	records;		/* good records */
	uint32_t	samples_loaded;
	uint32_t	samples_dropped;	/* older than what the ring holds, or larger */
	uint32_t	crashes;
	uint32_t	guard_actions;	/* RECORD_GUARD records, rewritten ones included */
	uint64_t	bytes_read;
	uint32_t	crash_size;		/* its crash rows' size: HISTORY_CRASH_SIZE_1_2 in 1.2.0's */
	/*
	 * The file, read to its end, ends with a sample: neither a clean stop
	 * nor a crash row followed its run, which ended in a way the file does
	 * not tell. Never set when the file could not be read to its end.
	 */
	int			tail_open;
} history_load_result;

/* The buffer the loader reads headers and crash rows into */
#define HISTORY_LOAD_BUFFER 65536

/*
 * Reads the file into the ring: its header, then every record's header
 * (crash rows are checked and handed to crash() on the way), then the
 * newest samples that fit the ring, each straight into its slots. A sample
 * larger than the ring is dropped. Each sample's system entry gets its kept
 * from its record, and a number higher than the one before it (its own if
 * it has one: files older builds wrote hold 0). Its only memory is buf
 * (HISTORY_LOAD_BUFFER bytes); it reads the file about twice where records
 * are small (through buf), about once where they are large.
 */
extern history_load_result history_load(const history_source *src, const history_sink *sink,
										char *buf);

#endif							/* PROCMEM_HISTORY_FORMAT_H */
