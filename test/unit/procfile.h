/*
 * procfile.h
 *		A field of a /proc/PID file read plainly, for the unit tests to hold
 *		the parsers' figures against (no code of the parsers here).
 */
#ifndef PROCMEM_TEST_PROCFILE_H
#define PROCMEM_TEST_PROCFILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* "Key:  N kB" of /proc/PID/FILE, in bytes; -1 when not read */
static inline int64_t
proc_field(pid_t pid, const char *file, const char *key)
{
	char		path[64];
	char		line[256];
	FILE	   *f;
	long long	v = -1;
	size_t		n = strlen(key);

	snprintf(path, sizeof(path), "/proc/%d/%s", (int) pid, file);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, n) == 0 && line[n] == ':')
			v = atoll(line + n + 1);
	fclose(f);
	return v < 0 ? -1 : v * 1024;
}

#endif							/* PROCMEM_TEST_PROCFILE_H */
