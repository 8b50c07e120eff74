/*
 * sampler.c
 *		The background worker that keeps the memory history: its settings,
 *		its loop, and what it hands the history's file.
 *
 * At its start it loads the history's file into the ring (history_file.c),
 * once per shared memory, and writes down the crash restarts the
 * postmaster handed over (crashes.c). Then, every
 * pg_procmem.sample_interval, it takes a sample (sample.c) and writes
 * nothing else but the guard's actions, which it passes from the guard to
 * the file; it starts the guard's worker while pg_procmem.guard is on.
 *
 * The interval is kept on the monotonic clock: a step of the wall clock,
 * back or forth, neither stops nor hurries sampling, and samples are
 * numbered in the order they were taken whatever their times say.
 *
 * Between samples it ticks the pressure watch (pressure.h) every
 * pg_procmem.pressure_watch_interval; while the watch's level is raised it
 * samples every pg_procmem.pressure_sample_interval, and at the critical
 * level four times as often.
 */
#include "server/compat.h"

#include <signal.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/wait_event.h"

#include "guard/guard.h"
#include "history/crashes.h"
#include "history/history_file.h"
#include "history/oom_clock.h"
#include "history/reuse_cache.h"
#include "history/sample.h"
#include "history/sampler.h"
#include "rules/pressure.h"
#include "server/clock.h"
#include "server/walk.h"

PGDLLEXPORT void procmem_sampler_main(Datum arg);

/* pg_procmem.sample_interval, ms; 0: no sampling */
static int	sample_interval_ms = 10000;

/* the pressure watch's settings (docs/history.md, "Sampling under pressure") */
static int	watch_interval_ms = 100;
static int	pressure_sample_interval_ms = 1000;
static pressure_thresholds thresholds = {75, 90, 1};

static pressure_watch watch;

/* The SIGTERM that ends the loop came from the postmaster: it shuts down */
static volatile sig_atomic_t stopped_by_postmaster = false;

/* Every guard action kept, for a rewrite of the file: each marked as written */
static int
all_guard_actions(history_guard_action *out, int max)
{
	return guard_take_unwritten(out, max, true);
}

/*
 * The crash rows and the guard's actions, which the file holds and this
 * sampler keeps in their own lists (crashes.c, guard_store.c): the file gets
 * them from here, and includes neither.
 */
static const history_file_lists file_lists = {
	.clear_crashes = crashes_clear,
	.load_crash = crashes_add,
	.load_action = guard_load_action,
	.copy_crashes = crashes_copy,
	.all_actions = all_guard_actions,
	.max_crashes = MAX_CRASHES,
	.max_actions = GUARD_ACTIONS_KEPT
};

/* The guard's actions the file does not have yet, or not as measured */
static void
write_guard_actions(void)
{
	history_guard_action a[8];
	int			n;

	while ((n = guard_take_unwritten(a, lengthof(a), false)) > 0)
		history_file_append_actions(a, n);
}

/*
 * Loads the file and writes down the crashes, before the first sample. New
 * crash rows get a rewrite, which puts the crash rows first in the file: a
 * record torn at its end (a machine crash) must not take them along.
 */
static void
start_history(void)
{
	if (crashes_note(history_file_load(&file_lists)) > 0)
		history_file_rewrite();
	else
		history_file_start();
}

/*
 * When the next sample is due: on the interval's grid, or sooner under
 * pressure, as pressure_sample_due() says (every
 * pg_procmem.pressure_sample_interval, four times as often at the critical
 * level, but never sooner than the last sample's end plus three times its
 * CPU time: not its wall time, which a busy machine stretches).
 */
static int64
sample_due(int64 now, int64 next, const pressure_last_sample *last, const pressure_state *pressure)
{
	return pressure_sample_due(now, next, last, pressure ? pressure->level : PRESSURE_NONE,
							   pressure_sample_interval_ms);
}

/*
 * SIGTERM, as SignalHandlerForShutdownRequest, noting who sent it: the
 * postmaster when the server shuts down, a backend for
 * pg_terminate_backend() (after which the sampler starts again, and the
 * run goes on).
 */
static void
sampler_sigterm(int signo, siginfo_t *info, void *context)
{
	int			save_errno = errno;

	if (info != NULL && info->si_pid == PostmasterPid)
		stopped_by_postmaster = true;
	ShutdownRequestPending = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

void
procmem_sampler_main(Datum arg)
{
	int64		next = 0;		/* the interval's grid, monotonic ms */
	pressure_last_sample last = {0};	/* its start, end and CPU time */
	int			last_interval = sample_interval_ms;
	int			last_watch = watch_interval_ms;
	procmem_options read_as = procmem_current_options(false);
	int64		next_watch = 0;
	struct sigaction term;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	memset(&term, 0, sizeof(term));
	term.sa_sigaction = sampler_sigterm;
	term.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&term.sa_mask);
	sigaction(SIGTERM, &term, NULL);
	/* pg_cancel_backend() cancels nothing here: it must not end the history */
	pqsignal(SIGINT, PG_SIG_IGN);
	BackgroundWorkerUnblockSignals();
	/* no database: the names it needs are in shared catalogs */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("pg_procmem sampler");

	procmem_sample_start();
	pressure_watch_init(&watch);
	oom_clock_start();
	start_history();

	while (!ShutdownRequestPending)
	{
		long		timeout = -1;
		int			events = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;

		if (ConfigReloadPending)
		{
			procmem_options now_as;

			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			/* a new interval counts from now; a reload alone changes nothing */
			if (sample_interval_ms != last_interval)
				next = 0;
			last_interval = sample_interval_ms;
			if (watch_interval_ms != last_watch)
				next_watch = 0;
			last_watch = watch_interval_ms;
			/* figures read another way are not reused */
			now_as = procmem_current_options(false);
			if (now_as.method != read_as.method || now_as.pagemap_flags != read_as.pagemap_flags)
				procmem_reuse_cache_forget();
			read_as = now_as;
		}
		/* the guard's worker runs while pg_procmem.guard is on; its actions go to the file */
		procmem_guard_ensure_worker();
		write_guard_actions();
		if (sample_interval_ms > 0)
		{
			int64		now = procmem_monotonic_ms();
			const pressure_state *pressure = NULL;
			bool		counter_read = false;	/* the OOM kill counter, this time round */
			int64		due;

			if (watch_interval_ms > 0 && now >= next_watch)
			{
				pressure = pressure_watch_tick(&watch, now, &thresholds);
				oom_clock_tick();
				counter_read = true;
				/* at least 10 ms: the growth needs readings 200 ms apart among the last 32 */
				next_watch = now + Max(watch_interval_ms, 10);
			}
			else if (watch_interval_ms > 0)
				pressure = &watch.state;
			due = sample_due(now, next, &last, pressure);
			if (now >= due)
			{
				/* read before (unless the watch just did) and after the sample */
				if (!counter_read)
					oom_clock_tick();
				last.cpu_us = procmem_take_sample(&watch, pressure);
				oom_clock_tick();
				last.start_ms = now;
				last.end_ms = procmem_monotonic_ms();
				/* on the interval's grid: a slow sample does not shift the next */
				if (now >= next)
				{
					next = (next == 0 ? now : next) + sample_interval_ms;
					if (next <= procmem_monotonic_ms())
						next = procmem_monotonic_ms() + sample_interval_ms;
				}
				due = sample_due(now, next, &last, pressure);
			}
			if (watch_interval_ms > 0)
				due = Min(due, next_watch);
			timeout = (long) Max(due - procmem_monotonic_ms(), 1);
			events |= WL_TIMEOUT;
		}
		(void) WaitLatch(MyLatch, events, timeout, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		/* barriers (DROP DATABASE waits for every process to absorb one) */
		CHECK_FOR_INTERRUPTS();
	}
	/*
	 * A clean stop, when the server shuts down: the next start knows it was
	 * not killed. Ended by pg_terminate_backend(), the run goes on: no stop.
	 */
	write_guard_actions();
	if (stopped_by_postmaster)
		history_file_append_stop();
	history_file_close();

	/*
	 * Exit code 1: the postmaster starts the sampler again unless it is
	 * shutting down (pg_terminate_backend() must not end the history). The
	 * new sampler goes on with the ring and the file as they are.
	 */
	proc_exit(1);
}

void
procmem_sampler_init(void)
{
	BackgroundWorker w;

	DefineCustomIntVariable("pg_procmem.sample_interval",
							"Time between two samples of the memory history.",
							"0 turns sampling off.",
							&sample_interval_ms, 10000, 0, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_procmem.pressure_watch_interval",
							"Time between two looks at how close memory is to its limit.",
							"Under pressure the sampler samples every pg_procmem.pressure_sample_interval. 0 turns the watch off.",
							&watch_interval_ms, 100, 0, 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_procmem.pressure_sample_interval",
							"Time between two samples while memory runs short.",
							"At the critical level, a quarter of it.",
							&pressure_sample_interval_ms, 1000, 100, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_procmem.pressure_threshold",
							"Percentage of its limit the memory that cannot be reclaimed may use before sampling speeds up.",
							"Also when at its growth it would reach the limit within 10 seconds.",
							&thresholds.high_pct, 75, 1, 100,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_procmem.pressure_critical",
							"Percentage of its limit at which sampling speeds up four times more.",
							"Also when at its growth it would reach the limit within 2 seconds.",
							&thresholds.critical_pct, 90, 1, 100,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	/* pg_procmem.sample_reuse and pg_procmem.check_reuse: the cache's own */
	procmem_reuse_cache_init();
	/* pg_procmem.dsm_leftover_after: the sample's own */
	procmem_sample_init();
	if (!process_shared_preload_libraries_in_progress)
		return;
	memset(&w, 0, sizeof(w));
	w.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	w.bgw_start_time = BgWorkerStart_ConsistentState;
	w.bgw_restart_time = 5;
	strlcpy(w.bgw_library_name, "pg_procmem", sizeof(w.bgw_library_name));
	strlcpy(w.bgw_function_name, "procmem_sampler_main", sizeof(w.bgw_function_name));
	strlcpy(w.bgw_name, "pg_procmem sampler", sizeof(w.bgw_name));
	strlcpy(w.bgw_type, "pg_procmem sampler", sizeof(w.bgw_type));
	RegisterBackgroundWorker(&w);
}
