-- pg_procmem_accounting adds up only what it measured: an unknown part is
-- NULL in the sums and named in `unknown`; DSM segments count only if this
-- server's processes map them (another cluster of the same OS user has
-- files of the same names in /dev/shm).
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(8);

CREATE TEMP TABLE a AS SELECT * FROM pg_procmem_accounting;
SELECT ok((SELECT unknown IS NULL AND accounted IS NOT NULL AND cgroup_unexplained IS NOT NULL FROM a),
	'every part measured: nothing unknown, the sums are there');
SELECT ok((SELECT accounted = processes_overhead + cow_shared_with_postmaster + dsm_bytes + main_segment_resident
	       FROM a), 'accounted is the sum of its parts');

-- the DSM segments this server maps, read independently: the inodes of
-- /dev/shm/PostgreSQL.* lines in every server process's maps
CREATE FUNCTION pg_temp.mapped_dsm() RETURNS bigint LANGUAGE sql AS $$
	SELECT count(DISTINCT m[1]) FROM pg_procmem_processes() p,
		regexp_matches(coalesce(pg_read_file('/proc/' || p.pid || '/maps', 0, 10000000, true), ''),
		               ' (\d+) +/dev/shm/PostgreSQL\.\d+', 'g') AS m $$;
SELECT CASE WHEN current_setting('dynamic_shared_memory_type') <> 'posix'
	THEN skip('dynamic_shared_memory_type is not posix', 1)
	ELSE is((SELECT dsm_segments::bigint FROM pg_procmem_accounting), pg_temp.mapped_dsm(),
	        'dsm_segments: the segments the server''s processes map') END;

-- another cluster's segment: a file of the same pattern, owned by the same
-- OS user (server-side COPY writes it as that user), mapped by nobody here
COPY (SELECT repeat('x', 100000)) TO '/dev/shm/PostgreSQL.4242424242';
SELECT ok((pg_stat_file('/dev/shm/PostgreSQL.4242424242', true)).size > 0, 'a foreign segment file is there');
SELECT CASE WHEN current_setting('dynamic_shared_memory_type') <> 'posix'
	THEN skip('dynamic_shared_memory_type is not posix', 1)
	ELSE is((SELECT dsm_segments::bigint FROM pg_procmem_accounting), pg_temp.mapped_dsm(),
	        'it is not counted') END;
-- (the program reads its input: exiting unread would break COPY's pipe)
COPY (SELECT 1) TO PROGRAM 'cat >/dev/null; rm -f /dev/shm/PostgreSQL.4242424242';

-- a backend whose /proc this one may not read (non-dumpable, procmem_test):
-- a segment only it maps would be missed, so DSM is unknown, and so are the
-- sums; unknown says which part
SELECT pg_temp.nondumpable_connection('hidden');
CREATE TEMP TABLE h AS SELECT * FROM pg_procmem_accounting;
SELECT ok((SELECT dsm_bytes IS NULL AND dsm_segments IS NULL FROM h), 'DSM unknown: NULL, not 0');
SELECT ok((SELECT accounted IS NULL AND cgroup_unexplained IS NULL FROM h),
	'the sums it enters are NULL: an unknown part is not hidden in the remainder');
SELECT is((SELECT unknown FROM h), ARRAY['dsm_bytes'], 'unknown names it');
SELECT pg_temp.set_dumpable('hidden', true);
SELECT dblink_disconnect('hidden');

SELECT * FROM finish();
ROLLBACK;
