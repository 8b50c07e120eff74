/*
 * connections.h
 *		Client connections since this shared memory was initialized
 *		(connections.c): the memory history's system entry carries the
 *		count, and the advice's connection rate comes from it.
 */
#ifndef PROCMEM_CONNECTIONS_H
#define PROCMEM_CONNECTIONS_H

/* The counter in shared memory and the hook that counts; from _PG_init. */
extern void procmem_connections_init(void);

/* Connections so far; -1 without the shared memory. */
extern int64 procmem_connections(void);

#endif							/* PROCMEM_CONNECTIONS_H */
