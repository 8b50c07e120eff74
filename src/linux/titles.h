/*
 * titles.h
 *		The backend type a PostgreSQL process's title names (titles.c).
 *		No PostgreSQL headers.
 */
#ifndef PROCMEM_TITLES_H
#define PROCMEM_TITLES_H

#include <stddef.h>

/*
 * Turns a process title read from /proc/<pid>/cmdline ("postgres: [cluster:]
 * logger") into a backend type ("logger"): a known type's name, "client
 * backend" for a connection's title, else TITLES_UNKNOWN_CHILD (a title cut
 * short, a background worker's own name, or a child that was just forked
 * and still carries the postmaster's command line). Never text of the title
 * itself: it can hold user and database names. cluster_name may be NULL.
 */
#define TITLES_UNKNOWN_CHILD "postmaster child"

/*
 * flags: TITLES_ONE_LR_WORKER names logical replication's apply and
 * tablesync workers "logical replication worker", as pg_stat_activity does
 * before PostgreSQL 17 (compat.h).
 */
#define TITLES_ONE_LR_WORKER 0x01

extern void titles_to_type(const char *cmdline, size_t len,
						   const char *cluster_name, unsigned flags,
						   char *out, size_t outsz);

#endif							/* PROCMEM_TITLES_H */
