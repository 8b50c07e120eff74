-- A server process whose /proc files this backend cannot read (made
-- non-dumpable by the test-only module procmem_test): it is still a row,
-- the columns of the unreadable files are NULL and named in `unreadable`,
-- overhead falls back to rss_anon, and the query succeeds.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(8);

CREATE TEMP TABLE hidden AS SELECT pg_temp.nondumpable_connection('hidden') AS pid;

CREATE TEMP TABLE r AS SELECT * FROM pg_procmem_process((SELECT pid FROM hidden), true);
SELECT is((SELECT count(*) FROM r), 1::bigint, 'a non-dumpable backend is still a row (its PGPROC vouches for it)');
SELECT ok((SELECT unreadable @> ARRAY['pagemap', 'smaps_rollup'] FROM r),
	'pagemap and smaps_rollup are named in unreadable: ' || (SELECT unreadable::text FROM r));
SELECT ok((SELECT private_anon IS NULL AND cow_shared_anon IS NULL AND pss IS NULL AND pss_anon IS NULL FROM r),
	'their columns are NULL, not 0');
SELECT ok((SELECT overhead_method = 'rss_anon' AND overhead = rss_anon + page_tables FROM r),
	'overhead falls back to RssAnon + VmPTE, and says so');
SELECT ok((SELECT rss > 0 AND oom_score IS NOT NULL FROM r), 'status and oom_score, readable by all, are read');
SET pg_procmem.overhead_method = pagemap;
SELECT ok((SELECT overhead IS NULL AND overhead_method IS NULL FROM pg_procmem_process((SELECT pid FROM hidden))),
	'with the pagemap method forced: no overhead rather than a guess');
RESET pg_procmem.overhead_method;
SELECT ok((SELECT count(*) > 3 FROM pg_procmem_backends), 'the whole view still succeeds');
SELECT is((SELECT b.backend_type FROM pg_procmem_backends b JOIN hidden USING (pid)), 'client backend',
	'and shows that backend');

SELECT pg_temp.set_dumpable('hidden', true);
SELECT dblink_disconnect('hidden');
SELECT * FROM finish();
ROLLBACK;
