/*
 * contexts.h
 *		Every backend's memory-context totals in shared memory
 *		(shared_preload_libraries mode), and the walk that makes them.
 */
#ifndef PROCMEM_CONTEXTS_H
#define PROCMEM_CONTEXTS_H

#include "datatype/timestamp.h"
#include "port/atomics.h"

#include "rules/history_format.h"

/*
 * pg_procmem.keep_statement_text: whether pg_procmem keeps any statement
 * text (memory-context idents, which can hold a session's older statements,
 * literals included, and the history's queries). Superuser-only; on by
 * default; each backend's own value is published for the sampler.
 */
extern bool procmem_keep_statement_text;

/* GUCs always; hooks and shared memory when preloaded. From _PG_init. */
extern void procmem_contexts_init(void);

/* One of the largest memory contexts, by the bytes it holds */
#define TOP_CONTEXTS 3
#define CONTEXT_IDENT_LEN 64

typedef struct context_entry
{
	char		name[NAMEDATALEN];
	char		ident[CONTEXT_IDENT_LEN];
	int64		bytes;
} context_entry;

/*
 * This process's totals, walked now, and the TOP_CONTEXTS largest, largest
 * first: what pg_procmem_own_contexts() shows (preloaded or not).
 */
extern void procmem_contexts_measure(int64 *total, int64 *freebytes, int32 *count,
									 context_entry *top);

/* Publishes this process's totals now (its own row is then current). */
extern void procmem_contexts_publish(void);

/*
 * What a live process published, for the sampler and the guard (pid first:
 * procmem_pid_cmp). Every process with a PGPROC at the read has one: one
 * that never claimed its slot said nothing (keep_text -1, bytes -1).
 */
typedef struct procmem_context_total
{
	int32		pid;
	int32		keep_text;		/* its keep_statement_text; -1: never said */
	TimestampTz backend_start;	/* its slot's; 0: never said */
	bool		exited;			/* its slot's owner is exiting (or left it) */
	int64		bytes;			/* its memory-context total; -1: not published */
	history_settings settings;	/* its memory settings; 0: not said */
} procmem_context_total;

/* Every live process's, sorted by pid (palloc'd; NULL without the shared memory), and a lookup. */
extern procmem_context_total *procmem_contexts_totals(int *n);
/*
 * The entry of pid; backend_start (0: unknown) tells a slot an earlier
 * process with the same pid left, which counts as never said.
 */
extern const procmem_context_total *procmem_contexts_find(const procmem_context_total *totals,
														  int n, int32 pid, TimestampTz backend_start);

/*
 * Whether the statement text of the process t found may be kept: its own
 * keep_statement_text where it said one, the server's where it never said
 * any (no role, database or session setting: that would have claimed its
 * slot). Fail closed: no t (a process pg_stat_activity showed but whose
 * slot could not be read: it exited, or its PGPROC went to another process
 * in between) keeps the text back.
 */
extern bool procmem_contexts_text_allowed(const procmem_context_total *t);

/*
 * Test-only: test/modules/procmem_test sets the rendezvous variable of
 * this name (in the postmaster, from its _PG_init: every process inherits
 * it) to a procmem_slot_hook_fn that says a pid's slot cannot be read.
 * NULL otherwise; no setting or SQL function reaches it.
 */
#define PROCMEM_SLOT_HOOK "pg_procmem_slot_hook"
typedef bool (*procmem_slot_hook_fn) (int32 pid);

/* Who a backend is and what it runs with, as it said in its slot */
typedef struct procmem_slot_who
{
	TimestampTz backend_start;
	TimestampTz query_start;	/* its statement's start; 0: none said */
	int32		query_len;		/* the statement's bytes */
	bool		query_folded;	/* bytes the postmaster's copy shows as '?' */
	char		query_head[32]; /* its first bytes as that copy shows them */
	int32		keep_text;		/* its keep_statement_text; -1: not said */
	int32		plan_flags;		/* CRASH_PLAN_*: its statement's plans (plan_memory.c) */
	char		backend_type[HISTORY_TYPE_LEN];
	char		usename[NAMEDATALEN];
	char		datname[NAMEDATALEN];
	char		appname[NAMEDATALEN];
	history_settings settings;
} procmem_slot_who;

/* A process's slot, by its PGPROC's number: contexts.c writes it, others read copies */
typedef struct context_slot
{
	pg_atomic_uint32 changecount;	/* odd while being written */
	int32		pid;			/* 0: nothing published */
	TimestampTz backend_start;
	TimestampTz published_at;
	int64		total_bytes;
	int64		free_bytes;
	int64		peak_bytes;
	int32		contexts;
	int32		publications;	/* 0: no totals yet */
	int32		keep_text;		/* its pg_procmem.keep_statement_text; -1: not said */
	bool		exited;			/* it is exiting: no figures, but still who it was */
	context_entry top[TOP_CONTEXTS]; /* largest first; bytes 0: unused */
	TimestampTz peak_at;
	context_entry peak_top[TOP_CONTEXTS];	/* the largest at the peak */
	procmem_slot_who who;		/* said by say_who() */
} context_slot;

/*
 * The slots (-1 without the shared memory), and a copy of slot i: false
 * when no live process owns it (pg_procmem_backend_contexts()).
 */
extern int	procmem_contexts_slots(void);
extern bool procmem_contexts_read(int i, context_slot *copy);

/* What procmem_contexts_dead() found */
typedef enum procmem_slot_found
{
	SLOT_NONE = 0,				/* its PGPROC, but no slot: it said nothing */
	SLOT_READ,
	SLOT_TORN,					/* it was killed while writing it (or a test says unreadable) */
	SLOT_GONE					/* no PGPROC of that pid: nothing known */
} procmem_slot_found;

/*
 * In the postmaster: the slot of a child that exited abnormally, copied
 * once, without retrying. Only SLOT_READ and SLOT_NONE tell its
 * keep_statement_text (SLOT_NONE: the server's).
 */
extern procmem_slot_found procmem_contexts_dead(int32 pid, procmem_slot_who *out);

/* This backend's user and database names, as its slot says them ("" unknown) */
extern void procmem_contexts_my_names(const char **usename, const char **datname);

#endif							/* PROCMEM_CONTEXTS_H */
