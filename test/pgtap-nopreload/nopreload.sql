-- Without shared_preload_libraries: every view works but the one that needs
-- the shared memory, which says what to do; other backends' context columns
-- are NULL, the caller's are its own.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
SELECT plan(16);

SELECT throws_ok('SELECT * FROM pg_procmem_contexts', '55000',
	'pg_procmem must be loaded via "shared_preload_libraries"',
	'pg_procmem_contexts: OBJECT_NOT_IN_PREREQUISITE_STATE');
SELECT is((SELECT count(*) FROM pg_procmem_backend_contexts(true)), 0::bigint,
	'with missing_ok, no rows instead');
SELECT ok((SELECT count(*) > 3 FROM pg_procmem_backends), 'pg_procmem_backends works');
SELECT is((SELECT count(*) FROM pg_procmem_backends WHERE pid <> pg_backend_pid()
	       AND (context_bytes IS NOT NULL OR context_peak_bytes IS NOT NULL)),
	0::bigint, 'other backends'' context columns are NULL');
SELECT ok((SELECT context_bytes > 0 AND context_peak_bytes IS NULL FROM pg_procmem_backends
	       WHERE pid = pg_backend_pid()),
	'the caller''s context_bytes are its own; no peak is known');
SELECT lives_ok('SELECT * FROM pg_procmem_system, pg_procmem_summary, pg_procmem_accounting,
	pg_procmem_hugepages, pg_procmem_oom, pg_procmem_headroom, pg_procmem_backends_pss',
	'every other view works');

-- the memory history needs the sampler and its shared memory
SELECT throws_ok('SELECT * FROM ' || v, '55000',
	'pg_procmem must be loaded via "shared_preload_libraries"',
	v || ': OBJECT_NOT_IN_PREREQUISITE_STATE')
FROM unnest(ARRAY['pg_procmem_history', 'pg_procmem_history_system', 'pg_procmem_crashes',
	'pg_procmem_query_memory']) AS v;
SELECT is((SELECT count(*) FROM pg_procmem_history_processes(true)) +
	(SELECT count(*) FROM pg_procmem_history_system_samples(true)) +
	(SELECT count(*) FROM pg_procmem_crash_log(true)), 0::bigint,
	'with missing_ok, no history rows instead');
SELECT is((SELECT severity || ': ' || left(evidence, 40) FROM pg_procmem_advice WHERE check_name = 'connection_rate'),
	NULL, 'the advice works; without the history no connection rate (and fewer than 1000 sessions: no row)');
SELECT is((SELECT count(*) FROM pg_settings WHERE name IN ('pg_procmem.sample_interval', 'pg_procmem.history_size',
		'pg_procmem.debug_stop_rewrite_after')),
	1::bigint, 'pg_procmem.history_size and the history''s test-only setting are defined only at server start, the interval always');

-- the guard's settings can be set, but nothing acts on them: the advice says so
SELECT is((SELECT count(*) FROM pg_procmem_advice WHERE check_name = 'memory_guard'), 0::bigint,
	'no memory_guard finding while the guard is off and no limit is set');
SET pg_procmem.max_backend_memory = '64MB';
SELECT is((SELECT severity || ': ' || summary FROM pg_procmem_advice WHERE check_name = 'memory_guard'),
	'warning: memory guard set, but pg_procmem is not preloaded',
	'a backend limit set without preloading: the advice warns that nothing acts on it');
RESET pg_procmem.max_backend_memory;
-- a role's limit, which the session asking does not see (ALTER ROLE in
-- the test's transaction, rolled back with it)
CREATE ROLE procmem_nopreload_limited;
ALTER ROLE procmem_nopreload_limited SET pg_procmem.max_backend_memory = '100MB';
-- a limit of 0 (no limit), however written, is not one
CREATE ROLE procmem_nopreload_unlimited;
ALTER ROLE procmem_nopreload_unlimited SET pg_procmem.max_backend_memory = '0MB';
SELECT is((SELECT severity || ': ' || summary || ' / ' || evidence FROM pg_procmem_advice WHERE check_name = 'memory_guard'),
	'warning: memory guard set, but pg_procmem is not preloaded / pg_procmem.guard = off, pg_procmem.max_backend_memory = 0 (here), '
	'and set for role procmem_nopreload_limited (pg_procmem.max_backend_memory=100MB); pg_procmem is not in shared_preload_libraries',
	'a role''s backend limit (ALTER ROLE ... SET) without preloading: the advice names the role');

SELECT * FROM finish();
ROLLBACK;
