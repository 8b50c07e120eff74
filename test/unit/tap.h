/*
 * tap.h
 *		A minimal TAP producer for the C unit tests (run with prove).
 */
#ifndef PROCMEM_TAP_H
#define PROCMEM_TAP_H

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>

static int	tap_n;
static int	tap_failed;

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_i64(got, want, ...) do { \
	long long g_ = (long long) (got), w_ = (long long) (want); \
	if (!ok(g_ == w_, __VA_ARGS__)) \
		printf("#   got %lld, want %lld\n", g_, w_); \
} while (0)

static int
tap_ok(int pass, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#include <stdarg.h>

static int
tap_ok(int pass, const char *file, int line, const char *fmt, ...)
{
	va_list		ap;

	printf("%s %d - ", pass ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!pass)
	{
		printf("#   failed at %s:%d\n", file, line);
		tap_failed++;
	}
	fflush(stdout);
	return pass;
}

/*
 * Under AddressSanitizer (make unit-asan) a process maps terabytes of
 * shadow memory, which the pagemap pread path (no PAGEMAP_SCAN) reads
 * entry by entry: minutes a read. Those reads of live processes are left to
 * the plain and valgrind runs.
 */
#define ASAN_SKIPS_PREAD "the pread path reads ASan's terabytes of shadow (the plain run reads it)"
static inline int
pread_path_too_slow(void)
{
	return getenv("PROCMEM_UNDER_ASAN") != NULL;
}

/* Passes n tests as skipped, with the reason. */
static inline void
skip(int n, const char *why)
{
	for (int i = 0; i < n; i++)
		printf("ok %d # skip %s\n", ++tap_n, why);
}

static int
tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif							/* PROCMEM_TAP_H */
