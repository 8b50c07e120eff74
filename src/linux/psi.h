/*
 * psi.h
 *		Memory pressure stall information (PSI): how much of the last ten
 *		seconds tasks stalled waiting for memory, the machine's
 *		(/proc/pressure/memory) and the server's own cgroup's (cgroup v2
 *		memory.pressure). No PostgreSQL headers.
 *
 * "some" is the share of the time at least one task stalled, "full" the
 * share all non-idle tasks did at once (nothing ran: reclaim, refaults,
 * swap-in); the kernel's avg10 is over ten seconds. Figures are kept in
 * hundredths of a percent (the kernel prints two decimals): 0..10000, or
 * -1 where not read; what was not read is said by a PSI_MISSING_* bit.
 */
#ifndef PROCMEM_PSI_H
#define PROCMEM_PSI_H

#include <stddef.h>
#include <stdint.h>

#include "linux/sysmem.h"

#define PSI_MACHINE_PATH	"/proc/pressure/memory"

/* Why a figure is missing (psi_server.missing, a history sample's bits) */
#define PSI_MISSING_MACHINE_OFF		0x01	/* no /proc/pressure: PSI off (psi=0, or not built) */
#define PSI_MISSING_MACHINE_UNREADABLE	0x02
#define PSI_MISSING_CGROUP_NONE		0x04	/* the server is in no memory cgroup found */
#define PSI_MISSING_CGROUP_V1		0x08	/* cgroup v1 keeps no pressure per cgroup */
#define PSI_MISSING_CGROUP_OFF		0x10	/* no memory.pressure: PSI off, or its cgroup.pressure 0 */
#define PSI_MISSING_CGROUP_UNREADABLE	0x20
#define PSI_MISSING_ALL				0x3f

typedef struct psi_memory
{
	int32_t		some_avg10;		/* hundredths of a percent; -1: unknown */
	int32_t		full_avg10;
} psi_memory;

typedef struct psi_server
{
	psi_memory	machine;
	psi_memory	cgroup;			/* the server's own cgroup (v2) */
	int32_t		missing;		/* PSI_MISSING_* */
} psi_server;

/*
 * The avg10 figures of a pressure file's text ("some avg10=1.16 avg60=...
 * total=..." then "full ..."). Returns 0 when both lines gave one; a
 * figure not found, or out of 0..100.00, stays -1.
 */
extern int	psi_parse(const char *buf, size_t len, psi_memory *out);

/*
 * Reads the machine's file and, cgroup v2, the cgroup's memory.pressure
 * (cg NULL or of version 0: none found). Two small reads.
 */
extern void psi_read_server(const sysmem_cgroup *cg, psi_server *out);

/*
 * The cgroup's memory.pressure alone (v2; the pressure watch's read):
 * 0, or the PSI_MISSING_CGROUP_* bit of why not.
 */
extern int	psi_read_cgroup(const sysmem_cgroup *cg, psi_memory *out);

/* What one PSI_MISSING_* bit says, for a reader */
extern const char *psi_missing_reason(int bit);

#endif							/* PROCMEM_PSI_H */
