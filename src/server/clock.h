/*
 * clock.h
 *		The monotonic clock every interval is kept on: the sampler's grid,
 *		the guard's waits, the history file's retry. A step of the wall
 *		clock moves none of them.
 */
#ifndef PROCMEM_CLOCK_H
#define PROCMEM_CLOCK_H

#include "portability/instr_time.h"

static inline int64
procmem_monotonic_us(void)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	return (int64) INSTR_TIME_GET_MICROSEC(now);
}

static inline int64
procmem_monotonic_ms(void)
{
	return procmem_monotonic_us() / 1000;
}

#endif							/* PROCMEM_CLOCK_H */
