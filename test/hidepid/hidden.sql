-- /proc mounted with hidepid=invisible (test/hidepid/run.sh): a
-- non-dumpable process's /proc entry turns root's, so this backend cannot
-- even see that it exists. A process that holds a PGPROC is ours whatever
-- /proc allows: still a row, who it is from PostgreSQL, its memory NULL,
-- and unreadable naming what was hidden.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(11);

CREATE TEMP TABLE hidden AS SELECT pg_temp.nondumpable_connection('hidden') AS pid;

SELECT ok((SELECT pg_stat_file('/proc/' || pid, true) IS NULL FROM hidden),
	'the backend''s /proc entry is hidden from this one');

CREATE TEMP TABLE r AS SELECT p.* FROM pg_procmem_processes() p JOIN hidden USING (pid);
SELECT is((SELECT count(*) FROM r), 1::bigint, 'it is still a row of pg_procmem_processes()');
SELECT ok((SELECT backend_type IS NULL FROM r), '... typed by pg_stat_activity (it holds a PGPROC)');
SELECT ok((SELECT overhead IS NULL AND overhead_method IS NULL AND rss IS NULL AND page_tables IS NULL
	       AND oom_score IS NULL FROM r), '... its memory NULL, not 0');
SELECT ok((SELECT unreadable @> ARRAY['stat', 'status', 'oom_score', 'oom_score_adj'] FROM r),
	'... and unreadable names what was hidden: ' || (SELECT unreadable::text FROM r));
SELECT is((SELECT count(*) FROM pg_procmem_process((SELECT pid FROM hidden))), 1::bigint,
	'pg_procmem_process(pid) gives its row, no error');
SELECT is((SELECT backend_type || ' ' || usename FROM pg_procmem_backends JOIN hidden USING (pid)),
	'client backend ' || current_user, 'pg_procmem_backends says who it is');
SELECT is((SELECT count(*) FROM pg_procmem_oom JOIN hidden USING (pid)), 1::bigint, 'pg_procmem_oom lists it');
SELECT ok((SELECT page_tables IS NULL AND page_tables_with_huge_pages IS NULL AND exact IS NULL
	       AND unreadable @> ARRAY['status', 'pagemap']
	       FROM pg_procmem_page_tables() JOIN hidden USING (pid)),
	'pg_procmem_page_tables(): a row, its tables NULL, status and pagemap named unreadable');
SELECT ok((SELECT count(*) >= 4 FROM pg_procmem_processes() WHERE overhead > 0),
	'the other processes are read as usual');

SELECT pg_temp.set_dumpable('hidden', true);
SELECT ok((SELECT overhead > 0 FROM pg_procmem_process((SELECT pid FROM hidden))),
	'dumpable again: its memory is read');
SELECT dblink_disconnect('hidden');
SELECT * FROM finish();
ROLLBACK;
