/*
 * settings.h
 *		How a process is read: the settings walk.c reads (settings.c).
 */
#ifndef PROCMEM_SETTINGS_H
#define PROCMEM_SETTINGS_H

/* pg_procmem.overhead_method: a procmem_method (reading.h) */
extern int	procmem_overhead_method;

/* pg_procmem.pagemap_ioctls: PAGEMAP_SCAN and PROCMAP_QUERY where the kernel has them */
extern bool procmem_pagemap_ioctls;

/* Defines them; from _PG_init. */
extern void procmem_settings_init(void);

#endif							/* PROCMEM_SETTINGS_H */
