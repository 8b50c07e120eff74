-- pg_procmem_top: the compact psql view fits 80 columns, is sorted by
-- overhead, names every process of the server, and its sizes sort by value.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
CREATE EXTENSION IF NOT EXISTS dblink;
\ir ../pgtap-lib/helpers.sql
SELECT plan(22);

-- a session idle in a transaction, for the clipped state
SELECT dblink_connect('idle_tx', pg_temp.connstr());
SELECT dblink_exec('idle_tx', 'BEGIN');
SELECT dblink_exec('idle_tx', 'SET application_name = ''top_test''');
SELECT pg_stat_clear_snapshot();

CREATE TEMP TABLE t AS SELECT row_number() OVER () AS n, * FROM pg_procmem_top;

SELECT columns_are('pg_procmem_top',
	ARRAY['pid', 'process', 'state', 'overhead', 'pagetbl', 'rss', 'context'],
	'pg_procmem_top has its 7 columns');

-- psql's aligned width: each column as wide as its header or widest value,
-- " | " between them and a space at each end; pids counted as 7 digits
-- (pid_max can be 4194304).
SELECT cmp_ok((SELECT (GREATEST(7, max(length(pid::text)))
	+ GREATEST(length('process'), max(length(process)))
	+ GREATEST(length('state'), max(length(coalesce(state, ''))), length('idletx!'))
	+ GREATEST(length('overhead'), max(length(coalesce(overhead::text, ''))))
	+ GREATEST(length('pagetbl'), max(length(coalesce(pagetbl::text, ''))))
	+ GREATEST(length('rss'), max(length(coalesce(rss::text, ''))))
	+ GREATEST(length('context'), max(length(coalesce(context::text, ''))))
	+ 3 * 6 + 2)::integer FROM t), '<=', 80,
	'a row fits an 80-column terminal, even with 7-digit pids and the longest state');

SELECT is((SELECT count(*) FROM t t1 JOIN t t2 ON t2.n = t1.n + 1
	WHERE pg_size_bytes(t2.overhead::text) > pg_size_bytes(t1.overhead::text)), 0::bigint,
	'sorted by overhead, largest first');

-- ORDER BY a size orders by bytes, not as text (which put the
-- checkpointer's '983 kB' before a backend's '11 MB'): as the view's own
-- order, by the bytes of pg_procmem_backends.overhead (the sizes shown are
-- rounded, and rounding keeps the order: ties go in the view's order) ...
SELECT results_eq('SELECT pid FROM t ORDER BY overhead DESC NULLS LAST, n', 'SELECT pid FROM t ORDER BY n',
	'ORDER BY overhead DESC sorts as pg_procmem_backends.overhead does');
-- ... and in values made for it, of the column's own type
CREATE TEMP TABLE made AS SELECT * FROM pg_procmem_top LIMIT 0;
INSERT INTO made (pid, overhead) VALUES (1, '983 kB'), (2, '11 MB'), (3, '9.9 MB'), (4, '10 MB'), (5, '1023 kB');
SELECT results_eq('SELECT pid FROM made ORDER BY overhead DESC LIMIT 6', ARRAY[2, 4, 3, 5, 1],
	'11 MB > 10 MB > 9.9 MB > 1023 kB > 983 kB: sizes sort by value');

SELECT set_eq('SELECT pid FROM t', 'SELECT pid FROM pg_procmem_backends',
	'one row for every process of the server');

SELECT is((SELECT process FROM t WHERE pid = pg_backend_pid()),
	(SELECT CASE WHEN length(w) > 17 THEN left(w, 16) || '~' ELSE w END
	 FROM (SELECT current_user || '@' || current_database() AS w) AS x),
	'a client backend is named user@database');

SELECT is((SELECT process FROM t t JOIN pg_stat_activity a USING (pid) WHERE a.backend_type = 'checkpointer'),
	'checkpointer', 'other processes by backend type');

SELECT is((SELECT t.state FROM t t JOIN pg_stat_activity a USING (pid) WHERE a.application_name = 'top_test'),
	'idletx', 'idle in transaction is shortened to idletx');

SELECT is((SELECT count(*) FROM t WHERE overhead::text !~ '^\d+(\.\d)? (kB|MB|GB|TB|PB)$'
	OR rss::text !~ '^\d+(\.\d)? (kB|MB|GB|TB|PB)$'
	OR greatest(length(overhead::text), length(pagetbl::text), length(rss::text), length(context::text)) > 7), 0::bigint,
	'sizes are pretty-printed in at most 7 characters');

SELECT is((SELECT length(process) FROM t ORDER BY length(process) DESC LIMIT 1) <= 17, true,
	'long names are clipped to 17 characters');

SELECT dblink_disconnect('idle_tx');
-- pg_procmem_clip: one terminal line of at most n columns
SELECT is(pg_procmem_clip(E'SELECT\t1,\n\n  2', 40), 'SELECT 1, 2',
	'clip: tabs, newlines and runs of spaces become one space');
SELECT is(pg_procmem_clip(repeat('x', 30), 10), repeat('x', 9) || '~', 'clip: too long is cut to n with ~');
SELECT is(pg_procmem_clip(repeat('x', 10), 10), repeat('x', 10), 'clip: n fits as it is');
SELECT is(pg_procmem_clip(repeat(U&'\65E5', 30), 10), repeat(U&'\65E5', 4) || '~',
	'clip: wide characters count two columns (4 of them and ~ in 10)');
SELECT is(pg_procmem_clip(E'a\u0001b', 10), 'a b', 'clip: a control character is a space');
SELECT is(pg_procmem_clip(NULL, 10), NULL, 'clip: NULL is NULL');
SELECT is(pg_procmem_clip('abcdef', 0), '', 'clip: n = 0 is an empty line, not 6 columns');
SELECT is(pg_procmem_clip('abcdef', -5), '', 'clip: n < 0 is an empty line too');
SELECT is(pg_procmem_clip('abc', -2147483648), '', 'clip: the smallest integer n is an empty line, no overflow');
SELECT is(pg_procmem_clip(U&'\65E5\672C\8A9E', 1), '~', 'clip: a first character wider than n leaves only the ~');
SELECT is(pg_procmem_clip('ab', 1), '~', 'clip: n = 1 and two columns: the ~ alone');

SELECT * FROM finish();
ROLLBACK;
