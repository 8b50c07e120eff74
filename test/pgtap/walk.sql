-- The walk over this server's processes (src/walk.c), held by the test-only
-- module's hook between each process's membership check and its read: a
-- cancel takes effect between two processes, inside one call; a process
-- that exits after it was listed and before it is read is no row and no
-- error.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(10);

-- Eight more connections: a walk with many processes to read.
CREATE TEMP TABLE extra AS
SELECT c, dblink_connect('extra' || c, pg_temp.connstr()) AS connected FROM generate_series(1, 8) c;
CREATE TEMP TABLE extra_pid AS
SELECT c, p AS pid FROM extra, LATERAL dblink('extra' || c, 'SELECT pg_backend_pid()') AS t(p integer);
CREATE TEMP TABLE walk AS SELECT count(*) AS n FROM pg_procmem_processes();
SELECT cmp_ok((SELECT n FROM walk), '>=', 16::bigint, 'the walk reads at least 16 processes');

-- Cancel: each read made 100 ms slow, statement_timeout 300 ms. The call
-- that lists every process returns them all at once (a materialized set),
-- so the executor's own check between rows comes only after the walk:
-- only the walk's CHECK_FOR_INTERRUPTS before each process stops it after
-- about 3 reads rather than all of them (a second and a half).
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
SELECT cmp_ok(pg_temp.reads_seen(), '<=', (SELECT n / 2 FROM walk),
	format('... between two processes: %s of %s read', pg_temp.reads_seen(), (SELECT n FROM walk)));
SELECT pg_temp.delay_reads(0);
SELECT is((SELECT count(*) FROM pg_procmem_processes()), (SELECT n FROM walk),
	'the next walk reads every process again');

-- A connection that exits once it has passed the membership check, before
-- its read (the hook terminates it and waits until it has been reaped).
CREATE TEMP TABLE leaving AS SELECT pid FROM extra_pid WHERE c = 1;
SELECT is(pg_temp.rows_or_error(format('SELECT * FROM pg_procmem_process(%s)', pid)), '1 rows',
	'pg_procmem_process(pid) of a live connection: its row') FROM leaving;
SELECT pg_temp.stop_before_read(pid) FROM leaving;
SELECT is(pg_temp.rows_or_error(format('SELECT * FROM pg_procmem_process(%s)', pid)), '0 rows',
	'the same connection exiting between its membership check and its read: no row, no error')
FROM leaving;
SELECT ok(pg_temp.reads_seen() = 1 AND pg_stat_file('/proc/' || pid, true) IS NULL,
	'... it had been listed, and has exited') FROM leaving;

-- The same in the walk over every process.
TRUNCATE leaving;
INSERT INTO leaving SELECT pid FROM extra_pid WHERE c = 2;
SELECT pg_temp.stop_before_read(pid) FROM leaving;
SELECT is(pg_temp.rows_or_error(format('SELECT * FROM pg_procmem_processes() WHERE pid = %s', pid)),
	'0 rows', 'a connection exiting before its read in the walk: no row, no error') FROM leaving;
SELECT ok(pg_temp.reads_seen() >= 1 AND pg_stat_file('/proc/' || pid, true) IS NULL,
	'... it had been listed, and has exited') FROM leaving;
SELECT is((SELECT count(*) FROM pg_procmem_processes()), (SELECT n - 2 FROM walk),
	'the walk still has every other process');

SELECT dblink_disconnect('extra' || c) FROM extra;
SELECT * FROM finish();
ROLLBACK;
