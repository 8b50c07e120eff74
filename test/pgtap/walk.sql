-- The walk over this server's processes (src/server/walk.c), held by the test-only
-- module's hook between each process's membership check and its read: a
-- cancel takes effect between two processes, inside one call; a process
-- that exits after it was listed and before it is read, or after its reads
-- and before the reader checks it is still the same process, is no row and
-- no error.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(12);

-- A process's start time (clock ticks after boot) from /proc/PID/stat while
-- it lives (not a zombie): NULL once it has exited. Pid and start time
-- together name one process even if its pid is taken again.
CREATE FUNCTION pg_temp.started(p integer) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE f text[];
BEGIN
	f := string_to_array(regexp_replace(pg_read_file('/proc/' || p || '/stat', 0, 4096, true),
	                                    '^.*\) ', ''), ' ');
	RETURN CASE WHEN f[1] NOT IN ('Z', 'X') THEN f[20]::bigint END;
EXCEPTION WHEN OTHERS THEN
	RETURN NULL;				-- it exited while its stat was read
END $$;

-- A walk with many processes to read: eight more connections, and more
-- while the walk has fewer than 16 processes. A connection of an earlier
-- test file still exiting would be in this walk and gone from later ones:
-- none is left first.
SELECT pg_temp.no_exiting_connection();
CREATE TEMP TABLE extra (c integer, pid integer);
CREATE FUNCTION pg_temp.connect_until(processes bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE c integer := 0;
BEGIN
	WHILE c < 8 OR ((SELECT count(*) FROM pg_procmem_processes()) < processes AND c < 40) LOOP
		c := c + 1;
		PERFORM dblink_connect('extra' || c, pg_temp.connstr());
		INSERT INTO extra SELECT c, p FROM dblink('extra' || c, 'SELECT pg_backend_pid()') AS t(p integer);
	END LOOP;
END $$;
SELECT pg_temp.connect_until(16);
CREATE TEMP TABLE walk AS SELECT pid, pg_temp.started(pid) AS started FROM pg_procmem_processes();
SELECT is(ARRAY(SELECT pid FROM extra EXCEPT SELECT pid FROM walk), '{}',
	format('the walk lists each of the %s extra connections (%s processes)',
		(SELECT count(*) FROM extra), (SELECT count(*) FROM walk)));

-- The processes of the first walk that a later walk q left out although
-- they lived through it (checked after q: a process gone by then is not
-- missed, one still alive with its start time was alive during q).
CREATE FUNCTION pg_temp.missed_by(q text) RETURNS integer[] LANGUAGE plpgsql AS $$
DECLARE later integer[];
BEGIN
	EXECUTE format('SELECT array_agg(pid) FROM (%s) w', q) INTO later;
	RETURN ARRAY(SELECT pid FROM walk WHERE pid <> ALL (coalesce(later, '{}'))
	             AND pg_temp.started(pid) = started ORDER BY pid);
END $$;

-- Cancel: each read made 100 ms slow, statement_timeout 300 ms. The call
-- that lists every process returns them all at once (a materialized set),
-- so the executor's own check between rows comes only after the walk:
-- only the walk's CHECK_FOR_INTERRUPTS before each process stops it after
-- about 3 reads rather than all of them (a second and a half). At least
-- one read: a timeout that fired before the walk began proves nothing.
-- (pgTAP's throws_ok cannot catch a cancel: WHEN OTHERS leaves it out.)
CREATE FUNCTION pg_temp.canceled(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE q;
	RETURN 'not canceled';
EXCEPTION WHEN query_canceled THEN
	RETURN SQLERRM;
END $$;
SELECT pg_temp.delay_reads(100);
SET statement_timeout = '300ms';
SELECT is(pg_temp.canceled('SELECT count(*) FROM pg_procmem_processes()'),
	'canceling statement due to statement timeout', 'a slow walk is stopped by statement_timeout');
RESET statement_timeout;
SELECT ok(pg_temp.reads_seen() BETWEEN 1 AND (SELECT count(*) / 2 FROM walk),
	format('... between two processes, after at least one read: %s of %s read',
		pg_temp.reads_seen(), (SELECT count(*) FROM walk)));
SELECT pg_temp.delay_reads(0);
SELECT is(pg_temp.missed_by('SELECT pid FROM pg_procmem_processes()'), '{}',
	'the next walk reads every process of the first one still alive');

-- A connection that exits once it has passed the membership check, before
-- its read (the hook terminates it and waits until it has been reaped).
CREATE TEMP TABLE leaving AS SELECT pid FROM extra WHERE c = 1;
SELECT is(pg_temp.rows_or_error(format('SELECT * FROM pg_procmem_process(%s)', pid)), '1 rows',
	'pg_procmem_process(pid) of a live connection: its row') FROM leaving;
SELECT pg_temp.stop_before_read(pid) FROM leaving;
SELECT is(pg_temp.rows_or_error(format('SELECT * FROM pg_procmem_process(%s)', pid)), '0 rows',
	'the same connection exiting between its membership check and its read: no row, no error')
FROM leaving;
SELECT ok(pg_temp.reads_seen() = 1 AND pg_stat_file('/proc/' || pid, true) IS NULL,
	'... it had been listed, and has exited') FROM leaving;

-- One that exits once its files were all read, before the reader checks
-- it is still the same process: its figures were read, but no row.
TRUNCATE leaving;
INSERT INTO leaving SELECT pid FROM extra WHERE c = 3;
SELECT pg_temp.stop_after_reads(pid) FROM leaving;
SELECT is(pg_temp.rows_or_error(format('SELECT * FROM pg_procmem_process(%s)', pid)), '0 rows',
	'a connection exiting after its reads, before the identity check: no row, no error')
FROM leaving;
SELECT ok(pg_temp.reads_seen() = 1 AND pg_stat_file('/proc/' || pid, true) IS NULL,
	'... it had been listed, and has exited') FROM leaving;

-- The same in the walk over every process.
TRUNCATE leaving;
INSERT INTO leaving SELECT pid FROM extra WHERE c = 2;
SELECT pg_temp.stop_before_read(pid) FROM leaving;
SELECT is(pg_temp.rows_or_error(format('SELECT * FROM pg_procmem_processes() WHERE pid = %s', pid)),
	'0 rows', 'a connection exiting before its read in the walk: no row, no error') FROM leaving;
SELECT ok(pg_temp.reads_seen() >= 1 AND pg_stat_file('/proc/' || pid, true) IS NULL,
	'... it had been listed, and has exited') FROM leaving;
SELECT is(pg_temp.missed_by('SELECT pid FROM pg_procmem_processes()'), '{}',
	'the walk still has every other process of the first one still alive');

SELECT dblink_disconnect('extra' || c) FROM extra;
SELECT * FROM finish();
ROLLBACK;
