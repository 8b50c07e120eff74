/*
 * history.h
 *		The memory history's rows and its file (no PostgreSQL headers).
 *
 * The sampler (sampler.c) appends one sample at a time: a system entry,
 * then one entry per process of the server. The ring in shared memory
 * (history.c) holds them in this form, and so does the file the history
 * survives a crash restart in:
 *
 *	header | record | record | ...
 *
 * where a record is a history_record followed by its payload (count
 * entries for a sample, one history_crash for a crash, nothing for a clean
 * stop) and carries the CRC-32C of both. Records are appended after every
 * sample; once the file outgrows its bound it is rewritten from the ring
 * (write to a temporary file + rename). A record cut short by a process
 * killed mid-write, or any damage, ends the readable part of the file.
 */
#ifndef PROCMEM_HISTORY_H
#define PROCMEM_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#define HISTORY_FILE_MAGIC		0x53484d50	/* "PMHS" */
#define HISTORY_FILE_VERSION	1

#define HISTORY_TYPE_LEN	32
#define HISTORY_NAME_LEN	64		/* NAMEDATALEN */
#define HISTORY_STATE_LEN	32
#define HISTORY_QUERY_LEN	256		/* the first bytes of the statement */

/* A figure that could not be read is negative, as everywhere */
#define HISTORY_NO_SCORE	INT32_MIN

typedef enum history_kind
{
	HISTORY_SYSTEM = 1,			/* the first entry of every sample */
	HISTORY_PROCESS = 2
} history_kind;

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
	int64_t		sample_us;		/* what taking this sample cost */
	int32_t		processes;
	int32_t		pad;
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

/* A crash restart (or an unclean stop), and what the history knew before it */
typedef struct history_crash
{
	int64_t		crashed_at;
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
} history_crash;

typedef enum history_record_kind
{
	RECORD_SAMPLE = 1,			/* count entries, the system entry first */
	RECORD_CRASH = 2,			/* one history_crash */
	RECORD_STOP = 3				/* a clean stop: no payload */
} history_record_kind;

typedef struct history_file_header
{
	uint32_t	magic;
	uint32_t	version;
	uint32_t	entry_size;		/* sizeof(history_entry) */
	uint32_t	crash_size;		/* sizeof(history_crash) */
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
	HF_CORRUPT					/* a record that fails its CRC or is absurd */
} history_file_result;

extern uint32_t history_crc32c(uint32_t crc, const void *data, size_t len);

extern void history_file_header_init(history_file_header *h);
extern history_file_result history_file_check_header(const char *buf, size_t len);

/* The header of a record with its CRC, for the payload that follows it. */
extern void history_record_init(history_record *r, history_record_kind kind,
								uint32_t count, const void *payload, size_t len);

/* Payload bytes of a record of this kind and count; 0 when it cannot be. */
extern size_t history_record_payload(uint32_t kind, uint32_t count);

/*
 * The next record of a file read into buf, from *off (start after the
 * header): HF_OK with *rec and *payload set and *off moved past it, HF_END
 * at the end, or what is wrong with the rest of the file.
 */
extern history_file_result history_file_next(const char *buf, size_t len, size_t *off,
											 const history_record **rec,
											 const char **payload);

extern const char *history_file_result_text(history_file_result r);

/*
 * The pid and signal (or exit code) in the postmaster's message about a
 * child's exit, whatever language it is in: the integer after "PID", else
 * the first one, and the next. 0 when there is none.
 */
extern int	history_parse_exit(const char *message, int *pid, int *number);

/* Copies a string into a fixed field, cut at a UTF-8 character boundary. */
extern void history_copy_text(char *dst, size_t dstsz, const char *src, size_t srclen);

#endif							/* PROCMEM_HISTORY_H */
