/*
 * procfile.h
 *		Files read plainly for the unit tests: a fixture whole, and a field of
 *		a /proc/PID file to hold the parsers' figures against (no code of the
 *		parsers here).
 */
#ifndef PROCMEM_TEST_PROCFILE_H
#define PROCMEM_TEST_PROCFILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* The fixtures' folder: main() sets it from argv[1] (make unit: test/fixtures) */
static const char *fixtures __attribute__((unused));

/*
 * A fixture file (a path under fixtures) whole, in a malloc'd buffer ending
 * in a NUL byte past its *len bytes; bails out of the test if it cannot be
 * opened.
 */
static inline char *
slurp(const char *rel, size_t *len)
{
	char		path[1024];
	FILE	   *f;
	char	   *buf;
	long		sz;

	snprintf(path, sizeof(path), "%s/%s", fixtures, rel);
	f = fopen(path, "rb");
	if (f == NULL)
	{
		printf("Bail out! cannot open fixture %s\n", path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(sz + 1);
	*len = fread(buf, 1, sz, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

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
