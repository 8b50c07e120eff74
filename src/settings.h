/*
 * settings.h
 *		Settings that more than one file reads (defined in pg_procmem.c).
 */
#ifndef PROCMEM_SETTINGS_H
#define PROCMEM_SETTINGS_H

/*
 * pg_procmem.keep_statement_text: whether pg_procmem keeps any statement
 * text (memory-context idents, which can hold a session's older statements,
 * literals included). Superuser-only; on by default.
 */
extern bool procmem_keep_statement_text;

#endif							/* PROCMEM_SETTINGS_H */
