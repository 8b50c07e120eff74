-- 10,000 calls in one session: the calling backend's own memory stays flat.
-- (Run with the soak, on the main version only: it takes ~20 s.)
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
SELECT plan(3);

CREATE TEMP TABLE mem(at text, private_anon bigint, context_bytes bigint);
-- warm up caches (catalog, plans) first, so growth means a leak
DO $$ BEGIN FOR i IN 1..100 LOOP
	PERFORM count(*) FROM pg_procmem_processes();
	PERFORM count(*) FROM pg_procmem_backends;
END LOOP; END $$;
INSERT INTO mem SELECT 'before', p.private_anon, o.context_bytes
FROM pg_procmem_process(pg_backend_pid()) p, pg_procmem_own_contexts() o;
DO $$ BEGIN FOR i IN 1..5000 LOOP
	PERFORM count(*) FROM pg_procmem_processes();
	PERFORM count(*) FROM pg_procmem_backends;
END LOOP; END $$;
INSERT INTO mem SELECT 'after', p.private_anon, o.context_bytes
FROM pg_procmem_process(pg_backend_pid()) p, pg_procmem_own_contexts() o;

SELECT diag(format('own private memory before %s kB, after 10,000 calls %s kB; memory contexts %s kB, %s kB',
	b.private_anon / 1024, a.private_anon / 1024, b.context_bytes / 1024, a.context_bytes / 1024))
FROM mem b, mem a WHERE b.at = 'before' AND a.at = 'after';
SELECT ok((SELECT a.private_anon - b.private_anon < 1048576 FROM mem b, mem a WHERE b.at = 'before' AND a.at = 'after'),
	'private anonymous memory grew by less than 1 MB over 10,000 calls');
SELECT ok((SELECT a.context_bytes - b.context_bytes < 262144 FROM mem b, mem a WHERE b.at = 'before' AND a.at = 'after'),
	'memory contexts grew by less than 256 kB over 10,000 calls');
SELECT ok((SELECT count(*) = 2 FROM mem WHERE private_anon > 0 AND context_bytes > 0), 'both measured');

SELECT * FROM finish();
ROLLBACK;
