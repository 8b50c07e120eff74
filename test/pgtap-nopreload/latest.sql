-- pg_procmem_latest without shared_preload_libraries: no sample, so every
-- row is read live, as pg_procmem_backends reads it.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
SELECT plan(5);

CREATE TEMP TABLE l AS SELECT * FROM pg_procmem_latest;
CREATE TEMP TABLE b AS SELECT * FROM pg_procmem_backends;

SELECT is((SELECT count(*) FROM pg_procmem_history_latest(true)), 0::bigint,
	'pg_procmem_history_latest(true): no rows');
SELECT throws_ok('SELECT * FROM pg_procmem_history_latest()', '55000',
	'pg_procmem must be loaded via "shared_preload_libraries"',
	'pg_procmem_history_latest(): OBJECT_NOT_IN_PREREQUISITE_STATE');
SELECT is((SELECT array_agg(DISTINCT source) FROM l), ARRAY['live'], 'pg_procmem_latest reads live');
SELECT ok((SELECT count(DISTINCT read_at) = 1 AND min(read_at) >= now() FROM l)
		  AND pg_backend_pid() IN (SELECT pid FROM l), '... now, the caller among its processes');
-- autovacuum off: the same processes a moment apart
SELECT results_eq('SELECT pid, backend_type FROM l ORDER BY pid', 'SELECT pid, backend_type FROM b ORDER BY pid',
	'... the processes of pg_procmem_backends, named alike');

SELECT * FROM finish();
ROLLBACK;
