-- The DSM figures of the live view (src/rules/dsm_groups.h): every process
-- read whole has them, a parallel group's members agree on their group's,
-- and a group's own segments are among those its members map. What they
-- hold against the segments' files is test/history/dsm.py's, with a
-- parallel hash join running.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
SELECT plan(5);

CREATE TEMP TABLE b AS SELECT pid, leader_pid, dsm, group_dsm, unreadable FROM pg_procmem_backends;

SELECT is((SELECT count(*) FROM b WHERE unreadable IS NULL AND NOT (dsm >= 0 AND group_dsm >= 0)), 0::bigint,
	'every process read whole has its DSM figures');
SELECT ok((SELECT count(*) FROM b WHERE dsm IS NOT NULL) > 3, 'and there are such processes');
SELECT is((SELECT count(*) FROM (SELECT COALESCE(leader_pid, pid) FROM b GROUP BY 1
			HAVING count(DISTINCT group_dsm) > 1) AS x), 0::bigint,
	'every member of a group has its group''s figure');
SELECT is((SELECT count(*) FROM (SELECT COALESCE(leader_pid, pid) FROM b GROUP BY 1
			HAVING max(group_dsm) > sum(dsm)) AS x), 0::bigint,
	'a group''s own segments are among those its members map');
SELECT ok((SELECT dsm >= 0 AND group_dsm IS NULL FROM pg_procmem_process(pg_backend_pid())),
	'pg_procmem_process(): its DSM, and no group figure (that needs every process read)');

SELECT * FROM finish();
ROLLBACK;
