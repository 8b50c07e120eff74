-- pg_procmem.max_backend_memory from a statement's parse analysis and
-- planning on: a constant the planner folds (repeat('x', 1000000000)) is
-- checked while it is built. And what a client and a PL/pgSQL block see
-- when the limit cancels a statement.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(16);

-- Runs q (one text column) in a new session limited to 100 MB (a
-- superuser's SET), after setup: what the client saw (its SQLSTATE and
-- message, or 'no error' and the row), and the session's peak.
--
-- The peak is VmHWM in /proc/PID/status, read by this session once q has
-- ended: the kernel's high-water mark of the process's resident memory
-- over its whole life (a fresh session for each q). The kernel raises it
-- before it unmaps anything, so the folded constants that were freed when
-- the statement failed still count. It counts shared and file pages too,
-- never less than the anonymous memory the limit counts.
CREATE FUNCTION pg_temp.limited(q text, setup text DEFAULT NULL, lim text DEFAULT '100MB',
	OUT state text, OUT message text, OUT peak bigint, OUT pid integer)
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM dblink_connect('limited', pg_temp.connstr());
	SELECT p INTO pid FROM dblink('limited', 'SELECT pg_backend_pid()') AS t(p integer);
	PERFORM dblink_exec('limited', format('SET pg_procmem.max_backend_memory = %L', lim));
	IF setup IS NOT NULL THEN
		PERFORM dblink_exec('limited', setup);
	END IF;
	BEGIN
		SELECT r INTO message FROM dblink('limited', q) AS t(r text);
		state := 'no error';
	EXCEPTION WHEN others OR query_canceled THEN
		-- dblink raises the remote error with its SQLSTATE
		state := SQLSTATE;
		message := SQLERRM;
	END;
	-- NULL when the session ended: its process gone (the file missing), or
	-- reaped between the open and the read (ESRCH, "No such process")
	BEGIN
		peak := (regexp_match(pg_read_file('/proc/' || pid || '/status', 0, 100000, true), 'VmHWM:\s+(\d+) kB'))[1]::bigint * 1024;
	EXCEPTION WHEN others THEN
		peak := NULL;
	END;
	PERFORM dblink_disconnect('limited');
END $$;

-- "1.2 GB"
CREATE FUNCTION pg_temp.gb(b bigint) RETURNS text LANGUAGE sql AS $$
	SELECT round(b / 1e9, 2) || ' GB' $$;

-- One repeat, folded by the planner: canceled past the limit
CREATE TEMP TABLE one AS
SELECT * FROM pg_temp.limited($$SELECT length(repeat('x', 1000000000))::text$$);
SELECT diag('one repeat under a 100 MB limit: ' || state || ' ' || message || '; peak ' || pg_temp.gb(peak)) FROM one;
SELECT is((SELECT state FROM one), '53200', 'select length(repeat(''x'', 1000000000)) under a 100 MB limit ends with 53200');
SELECT matches((SELECT message FROM one),
	'^canceling statement because this backend held [0-9.]+ [kMG]B, over pg_procmem\.max_backend_memory \(100MB\)$',
	'its message names the figure and the limit');
SELECT ok((SELECT a.held > 100 * 1024 * 1024 AND a.held <= one.peak
	       FROM pg_procmem_guard_actions a JOIN one USING (pid)
	       WHERE a.action = 'cancel' AND a.reason = 'backend limit' AND a.acted_at >= now()),
	'its action is on record: held over the limit, at most the peak');

-- Three: each folded in turn, each one's result kept until the end. Checked
-- from the planning on, the statement ends during the first (or, where
-- repeat() has no interrupt check in its loop, right after it).
CREATE TEMP TABLE three AS
SELECT * FROM pg_temp.limited($$SELECT (length(repeat('x', 1000000000))::bigint + length(repeat('y', 1000000000))
	+ length(repeat('z', 1000000000)))::text$$);
SELECT diag('three repeats under a 100 MB limit: ' || state || '; peak ' || pg_temp.gb(peak)) FROM three;
SELECT is((SELECT state FROM three), '53200', 'three repeats in one statement end with 53200');
SELECT cmp_ok((SELECT peak FROM three), '<=', 100 * 1024 * 1024 + 1000000000::bigint,
	'and peak at most one repeat (1e9 bytes) above the limit');

-- The measure sees a folded constant: with no limit, one repeat peaks
-- above 1e9 bytes although the statement freed it
CREATE TEMP TABLE unlimited AS
SELECT * FROM pg_temp.limited($$SELECT length(repeat('x', 1000000000))::text$$, lim => '0');
SELECT diag('one repeat with no limit: ' || state || ' ' || message || '; peak ' || pg_temp.gb(peak)) FROM unlimited;
SELECT ok((SELECT state = 'no error' AND peak > 1000000000 FROM unlimited),
	'with no limit, the same repeat runs and its peak (VmHWM) is over 1e9 bytes');

-- What a PL/pgSQL block catches when the limit cancels its statement. The
-- cancel is raised as PostgreSQL's own 57014; pg_procmem's emit_log_hook
-- makes it 53200 only when the error is reported (to the server log and
-- the client), which a caught error never is.
CREATE TEMP TABLE plpgsql_cases (n integer, handler text, log_min_messages text);
INSERT INTO plpgsql_cases VALUES
	(1, 'query_canceled', 'warning'), (2, 'query_canceled', 'panic'),
	(3, 'others', 'warning'), (4, 'others', 'panic');
CREATE TEMP TABLE plpgsql_seen AS
SELECT c.*, l.*
FROM plpgsql_cases c, LATERAL pg_temp.limited('SELECT pg_temp.hog()', format($s$
	SET log_min_messages = %s;
	CREATE FUNCTION pg_temp.hog() RETURNS text LANGUAGE plpgsql AS $f$
	BEGIN
		PERFORM length(repeat('x', 1000000000));
		RETURN 'not canceled';
	EXCEPTION WHEN %s THEN
		RETURN 'caught ' || SQLSTATE || ': ' || SQLERRM;
	END $f$$s$, c.log_min_messages, c.handler)) AS l
ORDER BY c.n;
SELECT diag(format('EXCEPTION WHEN %s, log_min_messages = %s: %s %s', handler, log_min_messages, state, message))
FROM plpgsql_seen ORDER BY n;
SELECT is((SELECT state || ' ' || message FROM plpgsql_seen WHERE n = 1),
	'no error caught 57014: canceling statement due to user request',
	'EXCEPTION WHEN query_canceled catches 57014, "canceling statement due to user request"; the statement goes on');
SELECT is((SELECT state || ' ' || message FROM plpgsql_seen WHERE n = 2),
	'no error caught 57014: canceling statement due to user request',
	'the same with log_min_messages = panic: what a handler catches does not depend on the server log');
SELECT is((SELECT state FROM plpgsql_seen WHERE n = 3), '53200',
	'EXCEPTION WHEN others does not catch the cancel: the client gets 53200');
SELECT matches((SELECT message FROM plpgsql_seen WHERE n = 3),
	'^canceling statement because this backend held .*, over pg_procmem\.max_backend_memory \(100MB\)$',
	'with the limit''s message');
SELECT is((SELECT state || ' ' || message FROM plpgsql_seen WHERE n = 4),
	'57014 canceling statement due to user request',
	'with log_min_messages = panic the hook does not run: the client gets 57014');
SELECT is((SELECT count(*) FROM pg_procmem_guard_actions a JOIN plpgsql_seen s USING (pid)
	       WHERE s.n IN (1, 2, 4) AND a.acted_at >= now()),
	0::bigint, 'a cancel caught in PL/pgSQL, or not reported, is not on record');
SELECT is((SELECT count(*) FROM pg_procmem_guard_actions a JOIN plpgsql_seen s USING (pid)
	       WHERE s.n = 3 AND a.reason = 'backend limit' AND a.acted_at >= now()),
	1::bigint, 'the reported one is');

-- A statement that catches each cancel and grows on: after 20 checks in a
-- row over the limit (a second), its session is ended. A cancel can land
-- between two of the loop's blocks, outside every handler (about 1 run in
-- 100 here): that statement did not defy its cancels, it ended with 53200,
-- and it is run again, at most 3 times in all.
CREATE FUNCTION pg_temp.defied(q text, setup text, OUT state text, OUT message text, OUT pid integer, OUT tries integer)
LANGUAGE plpgsql AS $$
BEGIN
	FOR t IN 1..3 LOOP
		tries := t;
		SELECT l.state, l.message, l.pid INTO state, message, pid FROM pg_temp.limited(q, setup) l;
		EXIT WHEN state <> '53200';
	END LOOP;
END $$;
CREATE TEMP TABLE defied AS
SELECT * FROM pg_temp.defied('SELECT pg_temp.defy()', $s$
	CREATE FUNCTION pg_temp.defy() RETURNS text LANGUAGE plpgsql AS $f$
	DECLARE a text[] := '{}'; caught int := 0;
	BEGIN
		FOR i IN 1..600 LOOP
			BEGIN
				a := a || repeat('x', 1000000);
				PERFORM pg_sleep(0.01);
			EXCEPTION WHEN query_canceled THEN caught := caught + 1;
			END;
		END LOOP;
		RETURN 'ran on, ' || caught || ' cancels caught';
	END $f$$s$);
SELECT diag('a statement catching its cancels: ' || state || ' ' || message || ' (try ' || tries || ')') FROM defied;
-- dblink reports the session's end as a lost connection (08006), with the
-- server's FATAL message (53200 for a client that reads it, psql)
SELECT is((SELECT state FROM defied), '08006', 'a statement that catches its cancels and grows on loses its session');
SELECT matches((SELECT message FROM defied),
	'^FATAL:  terminating connection because this backend held [0-9.]+ [kMG]B, over pg_procmem\.max_backend_memory \(100MB\), through 19 cancels its statement caught',
	'its session is ended, and the message says why');
SELECT is((SELECT count(*) FROM pg_procmem_guard_actions a JOIN defied USING (pid)
	       WHERE a.action = 'terminate' AND a.reason = 'backend limit' AND a.acted_at >= now()),
	1::bigint, 'the end is on record');

SELECT * FROM finish();
ROLLBACK;
