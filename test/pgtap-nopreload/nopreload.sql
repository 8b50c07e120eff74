-- Without shared_preload_libraries: every view works but the one that needs
-- the shared memory, which says what to do; other backends' context columns
-- are NULL, the caller's are its own.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
SELECT plan(6);

SELECT throws_ok('SELECT * FROM pg_procmem_contexts', '55000',
	'other backends'' memory contexts need pg_procmem in shared_preload_libraries',
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

SELECT * FROM finish();
ROLLBACK;
