-- Who is a row: exactly the server's processes, no more, no less.
-- pg_stat_activity is snapshotted once per transaction, so every comparison
-- clears the snapshot and polls with a bound (the cluster runs with
-- autovacuum off, so no worker comes and goes).
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(24);

CREATE FUNCTION pg_temp.postmaster_pid() RETURNS integer LANGUAGE sql AS
$$ SELECT split_part(pg_read_file('postmaster.pid'), E'\n', 1)::integer $$;

-- The parent pid of a process, read from /proc/PID/stat independently.
CREATE FUNCTION pg_temp.ppid(p integer) RETURNS integer LANGUAGE sql AS $$
	SELECT split_part(regexp_replace(pg_read_file('/proc/' || p || '/stat'), '^.*\) ', ''),
	                  ' ', 2)::integer $$;

-- The postmaster's children that have no PGPROC, by backend type: the
-- logger when logging_collector is on; before 15, the stats collector.
CREATE FUNCTION pg_temp.children_without_pgproc() RETURNS text[] LANGUAGE sql AS $$
	SELECT ARRAY(SELECT t FROM unnest(ARRAY[
		CASE WHEN current_setting('logging_collector')::bool THEN 'logger' END,
		CASE WHEN current_setting('server_version_num')::int < 150000 THEN 'stats collector' END]) t
	WHERE t IS NOT NULL ORDER BY t) $$;

-- Pids in pg_procmem but not in pg_stat_activity + postmaster, and the
-- reverse, once they agree or after 5 s.
CREATE FUNCTION pg_temp.diff(OUT extra integer[], OUT missing integer[]) LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1..50 LOOP
		PERFORM pg_stat_clear_snapshot();
		SELECT array_agg(pid ORDER BY pid) INTO extra FROM (
			SELECT pid FROM pg_procmem_processes()
			EXCEPT SELECT pid FROM pg_stat_activity
			EXCEPT SELECT pg_temp.postmaster_pid()) s;
		SELECT array_agg(pid ORDER BY pid) INTO missing FROM (
			SELECT pid FROM pg_stat_activity
			UNION SELECT pg_temp.postmaster_pid()
			EXCEPT SELECT pid FROM pg_procmem_processes()) s;
		EXIT WHEN missing IS NULL AND
			coalesce(array_length(extra, 1), 0) = cardinality(pg_temp.children_without_pgproc());
		PERFORM pg_sleep(0.1);
	END LOOP;
END $$;

SELECT is((SELECT missing FROM pg_temp.diff()), NULL,
	'every pg_stat_activity process and the postmaster are rows');
SELECT is((SELECT coalesce(array_length(extra, 1), 0) FROM pg_temp.diff()),
	cardinality(pg_temp.children_without_pgproc()),
	'the only other rows are the children without a PGPROC');
SELECT is((SELECT coalesce(array_agg(backend_type ORDER BY backend_type), '{}') FROM pg_procmem_processes()
	       WHERE pid = ANY ((SELECT extra FROM pg_temp.diff())::integer[])),
	pg_temp.children_without_pgproc(),
	'they are typed from their titles: logger (and stats collector before 15)');

SELECT is((SELECT backend_type FROM pg_procmem_processes() WHERE pid = pg_temp.postmaster_pid()),
	'postmaster', 'the postmaster (pid from postmaster.pid) is a row');
SELECT ok((SELECT count(*) = 1 FROM pg_procmem_backends WHERE backend_type = 'checkpointer'),
	'the checkpointer is a row');
SELECT ok((SELECT count(*) = 1 FROM pg_procmem_backends WHERE backend_type = 'background writer'),
	'the background writer is a row');
SELECT ok((SELECT count(*) = 1 FROM pg_procmem_backends WHERE backend_type = 'walwriter'),
	'the walwriter is a row');

SELECT is((SELECT count(*) FROM pg_procmem_processes()
	       WHERE pid <> pg_temp.postmaster_pid() AND pg_temp.ppid(pid) <> pg_temp.postmaster_pid()),
	0::bigint, 'every other row is a child of the postmaster (checked in /proc/PID/stat)');

-- pg_procmem_processes() leaves backend_type NULL exactly for processes with
-- a PGPROC, which pg_stat_activity lists; it names the others itself.
SELECT is((SELECT count(*) FROM pg_procmem_processes() p
	       WHERE (p.backend_type IS NULL) <> EXISTS (SELECT FROM pg_stat_activity a WHERE a.pid = p.pid)),
	0::bigint, 'backend_type is NULL exactly for the processes pg_stat_activity lists');

SELECT is((SELECT count(*) FROM pg_procmem_processes() p
	       WHERE NOT EXISTS (SELECT FROM pg_procmem_process(p.pid) q WHERE q.pid = p.pid)),
	0::bigint, 'pg_procmem_process(pid) finds every process pg_procmem_processes() lists');

SELECT is((SELECT count(*) FROM pg_procmem_processes() WHERE unreadable IS NOT NULL),
	0::bigint, 'every /proc file of every process was readable');

-- A connection on its way out has given back its PGPROC and left
-- pg_stat_activity, but it is still a process that holds memory: still a
-- row, typed from its title ("postgres postgres [local] idle") without the
-- user and database names. procmem_test makes the moment last 3 s.
CREATE TEMP TABLE leaving AS SELECT pg_temp.leaving_connection('leaving', 3000) AS pid;
-- until its PGPROC is gone (backend_type set by pg_procmem itself), 2 s at most
CREATE FUNCTION pg_temp.own_type(p integer) RETURNS text LANGUAGE plpgsql AS $$
DECLARE t text;
BEGIN
	FOR i IN 1..40 LOOP
		SELECT backend_type INTO t FROM pg_procmem_processes() WHERE pid = p;
		EXIT WHEN t IS NOT NULL;
		PERFORM pg_sleep(0.05);
	END LOOP;
	RETURN t;
END $$;
SELECT is(pg_temp.own_type((SELECT pid FROM leaving)), 'client backend',
	'an exiting connection without its PGPROC is a client backend');
SELECT pg_stat_clear_snapshot();
SELECT ok(NOT EXISTS (SELECT FROM pg_stat_activity WHERE pid = (SELECT pid FROM leaving)),
	'... which pg_stat_activity no longer lists');
SELECT ok((SELECT overhead > 0 AND rss > overhead FROM pg_procmem_backends WHERE pid = (SELECT pid FROM leaving)),
	'... and pg_procmem_backends shows it, with its overhead');
SELECT is((SELECT process FROM pg_procmem_top WHERE pid = (SELECT pid FROM leaving)), 'client backend',
	'... as does pg_procmem_top');
-- and it must be gone before the next test file counts processes
SELECT ok(pg_temp.eventually('SELECT NOT EXISTS (SELECT FROM pg_procmem_processes() JOIN leaving USING (pid))'),
	'... until it has exited');

-- Each membership check on its own (members.c), with a process of the
-- server's user that passes the other: a child of the postmaster running
-- another program (a background worker that exec'd /bin/sh, as a PID-1
-- postmaster's adopted orphans are), and a process running the server's
-- executable whose parent is a backend (forked, never exec'd). Each is an
-- ERROR naming its pid. The walk lists the postmaster's children and the
-- PGPROC holders only: the first is listed there and is no row (the
-- executable check again); the second is never listed, so the walk cannot
-- test the parent check.
CREATE TEMP TABLE outsider AS SELECT pg_temp.exec_child() AS exec_pid, pg_temp.fork_child() AS fork_pid;
SELECT is(pg_temp.ppid((SELECT exec_pid FROM outsider)), pg_temp.postmaster_pid(),
	'a background worker that exec''d /bin/sh is a child of the postmaster');
SELECT isnt(pg_temp.exe((SELECT exec_pid FROM outsider)), pg_temp.exe(pg_temp.postmaster_pid()),
	'... running another executable: ' || pg_temp.exe((SELECT exec_pid FROM outsider)));
SELECT throws_ok(format('SELECT * FROM pg_procmem_process(%s)', exec_pid), '22023',
	format('PID %s is not a process of this PostgreSQL server', exec_pid),
	'... refused by the executable check') FROM outsider;
SELECT is((SELECT count(*) FROM pg_procmem_processes() WHERE pid = (SELECT exec_pid FROM outsider)),
	0::bigint, '... and not a row of the walk, which lists the postmaster''s children');
SELECT is(pg_temp.ppid((SELECT fork_pid FROM outsider)), pg_backend_pid(),
	'a process forked by this backend is a child of the backend');
SELECT is(pg_temp.exe((SELECT fork_pid FROM outsider)), pg_temp.exe(pg_temp.postmaster_pid()),
	'... running the server''s executable');
SELECT throws_ok(format('SELECT * FROM pg_procmem_process(%s)', fork_pid), '22023',
	format('PID %s is not a process of this PostgreSQL server', fork_pid),
	'... refused by the parent check') FROM outsider;
SELECT ok((SELECT pg_temp.stop_process(exec_pid) AND pg_temp.stop_process(fork_pid) FROM outsider),
	'both have exited');

SELECT * FROM finish();
ROLLBACK;
