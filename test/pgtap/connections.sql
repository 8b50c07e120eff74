-- Connections come and go: opened ones are rows, closed ones vanish, and a
-- process of the same user that is not the server's is never shown.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(8);

CREATE TEMP TABLE conns(name text, pid integer);
INSERT INTO conns
SELECT 'c' || i, (SELECT p FROM dblink('c' || i, 'SELECT pg_backend_pid()') AS t(p integer))
FROM generate_series(1, 3) i, LATERAL dblink_connect('c' || i, pg_temp.connstr());

-- true once all three pids are client backend rows (want) or no pid is a
-- row at all (not want; a backend leaves pg_stat_activity before it exits,
-- so that case looks at processes, whatever their type); 5 s at most.
CREATE FUNCTION pg_temp.rows_are(want boolean) RETURNS boolean LANGUAGE sql AS $$
	SELECT pg_temp.eventually(CASE WHEN want
		THEN $q$SELECT count(*) = 3 FROM pg_procmem_backends b JOIN conns c USING (pid)
		        WHERE b.backend_type = 'client backend'$q$
		ELSE 'SELECT count(*) = 0 FROM pg_procmem_processes() p JOIN conns c USING (pid)' END)
$$;

SELECT ok(pg_temp.rows_are(true), 'three dblink connections are client backend rows');
SELECT is((SELECT count(*) FROM conns c, LATERAL pg_procmem_process(c.pid) p
	       WHERE p.overhead BETWEEN 256 * 1024 AND 256 * 1024 * 1024),
	3::bigint, 'pg_procmem_process() gives each a sane overhead');
SELECT ok((SELECT bool_and(b.rss > b.overhead) FROM pg_procmem_backends b JOIN conns USING (pid)),
	'their rss is larger than their overhead');

DO $$ BEGIN PERFORM dblink_disconnect(name) FROM conns; END $$;
SELECT ok(pg_temp.rows_are(false), 'closed connections vanish from pg_procmem_backends');
SELECT is((SELECT count(*) FROM pg_procmem_processes() p JOIN conns USING (pid)),
	0::bigint, 'and from pg_procmem_processes()');
SELECT throws_ok(format('SELECT * FROM pg_procmem_process(%s)', (SELECT pid FROM conns LIMIT 1)),
	'22023', format('PID %s is not a process of this PostgreSQL server', (SELECT pid FROM conns LIMIT 1)),
	'an exited backend''s pid is an error naming the pid');

-- A process of the same user (postgres) that is not the server's: a sleep
-- started through a shell that exits at once, so init adopts it.
CREATE TEMP TABLE stranger(pid integer);
COPY stranger FROM PROGRAM 'sleep 30 </dev/null >/dev/null 2>&1 & echo $!';
SELECT throws_ok(format('SELECT * FROM pg_procmem_process(%s)', (SELECT pid FROM stranger)),
	'22023', format('PID %s is not a process of this PostgreSQL server', (SELECT pid FROM stranger)),
	'a same-user process that is not the server''s is an error');
SELECT is((SELECT count(*) FROM pg_procmem_processes() JOIN stranger USING (pid)),
	0::bigint, 'and never a row');
DO $$ BEGIN
	EXECUTE format('COPY stranger FROM PROGRAM %L', 'kill ' || (SELECT pid FROM stranger));
END $$;

SELECT * FROM finish();
ROLLBACK;
