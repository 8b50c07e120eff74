/*
 * oom_window.c
 *		When an OOM kill happened, from the sampler's reads of the OOM kill
 *		counter (oom_window.h). No PostgreSQL headers.
 */
#include <string.h>

#include "rules/history_format.h"
#include "rules/oom_window.h"

void
oom_reads_init(oom_reads *r, int machine)
{
	memset(r, 0, sizeof(*r));
	r->kills = -1;
	r->kills_before = -1;
	r->machine = machine;
}

void
oom_reads_note(oom_reads *r, int64_t kills, int64_t at)
{
	if (kills < 0)
		return;
	if (r->kills >= 0 && kills > r->kills)
	{
		/*
		 * One rise soon after another (two victims, the first still dying)
		 * widens the window from the first: whichever exits first, its kill
		 * is in it
		 */
		if (r->kills_before < 0 || at - r->first_rose_at > OOM_EXIT_WITHIN_US)
		{
			r->kills_before = r->kills;
			r->before_at = r->at;
			r->first_rose_at = at;
		}
		r->rose_at = at;
	}
	else if (r->kills >= 0 && kills < r->kills)
	{
		/* another counter (the cgroup made again): its past says nothing */
		r->kills_before = -1;
		r->before_at = r->rose_at = r->first_rose_at = 0;
	}
	r->kills = kills;
	r->at = at;
}

oom_window
oom_window_place(const oom_reads *r, int64_t exited_at, int64_t kills_now)
{
	oom_window	w;

	memset(&w, 0, sizeof(w));
	w.oom = CRASH_OOM_UNKNOWN;
	w.kills_before = w.kills_after = -1;
	if (r->kills < 0)
		return w;
	if (kills_now > r->kills)
	{
		/*
		 * after the last read: the exit came next (a kill after it is no
		 * cause of it); a rise seen shortly before opens the window earlier
		 */
		bool		recent = r->kills_before >= 0 && r->rose_at <= exited_at &&
			exited_at - r->rose_at <= OOM_EXIT_WITHIN_US;

		w.oom = CRASH_OOM_COUNTED;
		w.after = recent ? r->before_at : r->at;
		w.by = exited_at > r->at ? exited_at : r->at;
		w.kills_before = recent ? r->kills_before : r->kills;
		w.kills_after = kills_now;
	}
	else if (r->kills_before >= 0 && r->rose_at <= exited_at &&
			 exited_at - r->rose_at <= OOM_EXIT_WITHIN_US)
	{
		w.oom = CRASH_OOM_COUNTED;
		w.after = r->before_at;
		w.by = r->rose_at;
		w.kills_before = r->kills_before;
		w.kills_after = r->kills;
	}
	else if (kills_now == r->kills)
	{
		w.oom = CRASH_OOM_NOT_COUNTED;
		w.kills_before = w.kills_after = r->kills;
	}
	return w;
}
