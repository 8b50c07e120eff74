/*
 * settings.h
 *		The settings more than one file reads (settings.c).
 */
#ifndef PROCMEM_SETTINGS_H
#define PROCMEM_SETTINGS_H

/* pg_procmem.overhead_method: a procmem_method (sample.h) */
extern int	procmem_overhead_method;

/* pg_procmem.pagemap_ioctls: PAGEMAP_SCAN and PROCMAP_QUERY where the kernel has them */
extern bool procmem_pagemap_ioctls;

/*
 * pg_procmem.keep_statement_text: whether pg_procmem keeps any statement
 * text (memory-context idents, which can hold a session's older statements,
 * literals included). Superuser-only; on by default.
 */
extern bool procmem_keep_statement_text;

/* Defines them; from _PG_init. */
extern void procmem_settings_init(void);

#endif							/* PROCMEM_SETTINGS_H */
