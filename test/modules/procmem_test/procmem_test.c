/*
 * procmem_test.c
 *		Test-only module (never installed by `make install` of pg_procmem):
 *		makes the calling backend non-dumpable, so that another process of
 *		the same user can no longer read its /proc/PID/{smaps_rollup, maps,
 *		pagemap, exe}, as happens with a hardened server; and makes it
 *		linger after it has left its PGPROC and pg_stat_activity on exit,
 *		as every exiting backend does for a moment; acts on the processes
 *		pg_procmem reads, through its test-only hook (walk.h), between a
 *		process's membership check and its read: delays each read, or stops
 *		the process; and starts processes that are not the server's although
 *		they pass one of its membership checks; and gives the backend type
 *		pg_procmem makes of any process's title. Preloaded after
 *		pg_procmem, procmem_test.unreadable_slots = on makes every
 *		process's slot of pg_procmem's shared memory one that cannot be
 *		read (its other test-only hook, contexts.h), in the sampler, the
 *		guard and the postmaster alike.
 */
#include "postgres.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "server/compat.h"		/* PG_SIG_IGN, PG_SIG_DFL before 19 */
#include "linux/procfs.h"
#include "linux/titles.h"
#include "server/contexts.h"
#include "server/walk.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

PG_FUNCTION_INFO_V1(procmem_test_set_dumpable);
PG_FUNCTION_INFO_V1(procmem_test_linger_on_exit);
PG_FUNCTION_INFO_V1(procmem_test_delay_reads);
PG_FUNCTION_INFO_V1(procmem_test_reads);
PG_FUNCTION_INFO_V1(procmem_test_stop_before_read);
PG_FUNCTION_INFO_V1(procmem_test_stop_after_reads);
PG_FUNCTION_INFO_V1(procmem_test_exec_child);
PG_FUNCTION_INFO_V1(procmem_test_fork_child);
PG_FUNCTION_INFO_V1(procmem_test_stop);
PG_FUNCTION_INFO_V1(procmem_test_title_type);

PGDLLEXPORT void procmem_test_exec_main(Datum arg);

Datum
procmem_test_set_dumpable(PG_FUNCTION_ARGS)
{
	if (prctl(PR_SET_DUMPABLE, PG_GETARG_BOOL(0) ? 1 : 0, 0, 0, 0) != 0)
		ereport(ERROR, (errmsg("prctl(PR_SET_DUMPABLE) failed: %m")));
	PG_RETURN_VOID();
}

/* on_proc_exit callbacks run after ProcKill has given the PGPROC back */
static void
linger(int code, Datum arg)
{
	pg_usleep((long) DatumGetInt32(arg) * 1000L);
}

Datum
procmem_test_linger_on_exit(PG_FUNCTION_ARGS)
{
	on_proc_exit(linger, Int32GetDatum(PG_GETARG_INT32(0)));
	PG_RETURN_VOID();
}

/* What the hook does in this backend: reads seen, delay, pid to stop and when */
static int64 reads_seen;
static int	read_delay_ms;
static pid_t stop_pid;
static procmem_read_phase stop_phase;

/*
 * Waits until pid is no process at all (reaped), 30 s at most (a machine
 * running three lanes of tests and a guest under emulation on two cores
 * once took more than 10 s).
 */
static bool
wait_gone(pid_t pid)
{
	for (int i = 0; i < 3000; i++)
	{
		int			status;

		/* our own child is reaped here; another's by its parent */
		if (waitpid(pid, &status, WNOHANG) == pid)
			return true;
		if (kill(pid, 0) != 0 && errno == ESRCH)
			return true;
		pg_usleep(10000L);
	}
	return false;
}

/* The hook: no CHECK_FOR_INTERRUPTS here, the walk's own are tested */
static void
read_hook(pid_t pid, procmem_read_phase phase)
{
	if (phase == PROCMEM_BEFORE_READ)
	{
		reads_seen++;
		if (read_delay_ms > 0)
			pg_usleep((long) read_delay_ms * 1000L);
	}
	if (pid == stop_pid && phase == stop_phase)
	{
		stop_pid = 0;
		if (kill(pid, SIGTERM) != 0 || !wait_gone(pid))
			elog(WARNING, "procmem_test: process %d did not exit", (int) pid);
	}
}

static void
set_hook(void)
{
	void	  **slot = find_rendezvous_variable(PROCMEM_READ_HOOK);

	*slot = (read_delay_ms > 0 || stop_pid > 0) ? (void *) read_hook : NULL;
}

/* procmem_test_delay_reads(ms): every read waits ms first (0: none); counts from 0 */
Datum
procmem_test_delay_reads(PG_FUNCTION_ARGS)
{
	read_delay_ms = PG_GETARG_INT32(0);
	reads_seen = 0;
	set_hook();
	PG_RETURN_VOID();
}

/* procmem_test_reads(): the reads the hook saw since it was set */
Datum
procmem_test_reads(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(reads_seen);
}

/*
 * procmem_test_stop_before_read(pid): once pid has passed the membership
 * check and before it is read, terminate it (SIGTERM) and wait until it
 * has exited and been reaped; once only.
 */
static void
stop_at(pid_t pid, procmem_read_phase phase)
{
	stop_pid = pid;
	stop_phase = phase;
	reads_seen = 0;
	set_hook();
}

Datum
procmem_test_stop_before_read(PG_FUNCTION_ARGS)
{
	stop_at(PG_GETARG_INT32(0), PROCMEM_BEFORE_READ);
	PG_RETURN_VOID();
}

/*
 * procmem_test_stop_after_reads(pid): the same once pid's files have all
 * been read, before the reader checks it is still the same process.
 */
Datum
procmem_test_stop_after_reads(PG_FUNCTION_ARGS)
{
	stop_at(PG_GETARG_INT32(0), PROCMEM_AFTER_READS);
	PG_RETURN_VOID();
}

/*
 * The background worker of procmem_test_exec_child(): gives back its
 * PGPROC and the rest of its shared state, as an exiting process does,
 * then runs a shell: a child of the postmaster running another program.
 * The shell's trap makes SIGTERM an exit with status 0, taking its sleep
 * with it: killed by the signal instead (as before the trap is set), it
 * would be a crash to the postmaster, which then restarts every process
 * (as it would for any exit status but 0 and 1).
 */
void
procmem_test_exec_main(Datum arg)
{
	sigset_t	none;

	shmem_exit(0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execl("/bin/sh", "sh", "-c", "trap 'kill $! 2>/dev/null; exit 0' TERM; sleep 600 & wait",
		  (char *) NULL);
	_exit(1);
}

/*
 * Where the shell of procmem_test_exec_main() is: 1 once it runs another
 * executable than this backend's and catches SIGTERM (its trap is set:
 * SigCgt in /proc/PID/status; before the exec, the worker's own handler
 * catches it too), 0 before, -1 if pid is gone.
 */
static int
shell_ready(pid_t pid)
{
	char		path[64], mine[MAXPGPATH], theirs[MAXPGPATH], line[256];
	ssize_t		a, b;
	FILE	   *f;
	int			ready = 0;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int) pid);
	a = readlink("/proc/self/exe", mine, sizeof(mine));
	b = readlink(path, theirs, sizeof(theirs));
	if (a <= 0)
		elog(ERROR, "procmem_test: readlink(/proc/self/exe) failed: %m");
	if (b <= 0)
		return -1;
	if (b == a && memcmp(mine, theirs, a) == 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
	{
		unsigned long long caught;

		if (sscanf(line, "SigCgt: %llx", &caught) == 1)
			ready = (caught >> (SIGTERM - 1)) & 1;
	}
	fclose(f);
	return ready;
}

/*
 * procmem_test_exec_child(): a child of the postmaster (a background
 * worker) that now runs /bin/sh, of the server's user; its pid once the
 * shell has set its trap, so that SIGTERM ends it with status 0.
 */
Datum
procmem_test_exec_child(PG_FUNCTION_ARGS)
{
	BackgroundWorker w;
	BackgroundWorkerHandle *h;
	pid_t		pid;
	int			ready;

	memset(&w, 0, sizeof(w));
	w.bgw_flags = BGWORKER_SHMEM_ACCESS;
	w.bgw_start_time = BgWorkerStart_ConsistentState;
	w.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(w.bgw_library_name, BGW_MAXLEN, "procmem_test");
	snprintf(w.bgw_function_name, BGW_MAXLEN, "procmem_test_exec_main");
	snprintf(w.bgw_name, BGW_MAXLEN, "procmem_test exec");
	snprintf(w.bgw_type, BGW_MAXLEN, "procmem_test exec");
	w.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&w, &h))
		elog(ERROR, "procmem_test: could not register a background worker");
	if (WaitForBackgroundWorkerStartup(h, &pid) != BGWH_STARTED)
		elog(ERROR, "procmem_test: the background worker did not start");
	for (int i = 0; (ready = shell_ready(pid)) == 0; i++)
	{
		if (i == 1000)
			elog(ERROR, "procmem_test: process %d did not run its shell's trap", (int) pid);
		pg_usleep(10000L);
	}
	if (ready < 0)
		elog(ERROR, "procmem_test: process %d exited before its shell was ready", (int) pid);
	PG_RETURN_INT32(pid);
}

/*
 * procmem_test_fork_child(): a child of this backend, never exec'd (the
 * server's executable, another parent), that waits until it is stopped
 * or this backend exits; its pid.
 */
Datum
procmem_test_fork_child(PG_FUNCTION_ARGS)
{
	pid_t		parent = getpid();
	pid_t		pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		elog(ERROR, "procmem_test: fork failed: %m");
	if (pid == 0)
	{
		sigset_t	none;

		/* no handler of the backend's may run here */
		pqsignal(SIGTERM, PG_SIG_DFL);
		pqsignal(SIGINT, PG_SIG_DFL);
		pqsignal(SIGQUIT, PG_SIG_DFL);
		pqsignal(SIGUSR1, PG_SIG_IGN);
		pqsignal(SIGUSR2, PG_SIG_IGN);
		pqsignal(SIGHUP, PG_SIG_IGN);
		pqsignal(SIGALRM, PG_SIG_IGN);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != parent)
			_exit(0);
		for (;;)
			pause();
	}
	PG_RETURN_INT32(pid);
}

/* procmem_test_stop(pid): SIGTERM, then until it has exited (30 s at most) */
Datum
procmem_test_stop(PG_FUNCTION_ARGS)
{
	pid_t		pid = PG_GETARG_INT32(0);

	if (kill(pid, SIGTERM) != 0)
		elog(ERROR, "procmem_test: could not signal process %d: %m", (int) pid);
	PG_RETURN_BOOL(wait_gone(pid));
}

/*
 * procmem_test_title_type(pid): the backend type pg_procmem gives pid from
 * its title alone, as it does for a child that has no PGPROC (yet, or any
 * more): procfs.c and titles.c, built into this module, read
 * /proc/PID/cmdline and type it as reading.c and members.c do (256 bytes,
 * this server's cluster_name). NULL when the title cannot be read.
 */
Datum
procmem_test_title_type(PG_FUNCTION_ARGS)
{
	char		cmdline[256];	/* reading.h's procmem_reading.cmdline */
	char		type[128];
	size_t		len;

	if (procfs_read_file(PG_GETARG_INT32(0), "cmdline", cmdline, sizeof(cmdline), &len) != PROCFS_OK || len == 0)
		PG_RETURN_NULL();
	titles_to_type(cmdline, len, cluster_name, PROCMEM_TITLE_FLAGS, type, sizeof(type));
	PG_RETURN_TEXT_P(cstring_to_text(type));
}

/* procmem_test.unreadable_slots: every slot unreadable (contexts.h's test-only hook) */
static bool unreadable_slots = false;

static bool
slot_unreadable(int32 pid)
{
	return unreadable_slots;
}

void
_PG_init(void)
{
	DefineCustomBoolVariable("procmem_test.unreadable_slots",
							 "Makes every slot of pg_procmem's shared memory one that cannot be read.",
							 NULL, &unreadable_slots, false, PGC_SIGHUP, 0, NULL, NULL, NULL);
	*find_rendezvous_variable(PROCMEM_SLOT_HOOK) = (void *) slot_unreadable;
}
