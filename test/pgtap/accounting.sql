-- pg_procmem_accounting adds up only what it measured: an unknown part is
-- NULL in the sums and named in `unknown`; DSM segments count only if this
-- server's processes map them (another cluster of the same OS user has
-- files of the same names in /dev/shm).
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(13);

CREATE TEMP TABLE a AS SELECT * FROM pg_procmem_accounting;
SELECT ok((SELECT unknown IS NULL AND accounted IS NOT NULL AND cgroup_unexplained IS NOT NULL FROM a),
	'every part measured: nothing unknown, the sums are there');

-- The derived columns against the raw figures they come from, added up
-- here as docs/views.md defines them (not by the view's expressions): the
-- processes' from pg_procmem_processes() with VmPTE read from
-- /proc/PID/status, the DSM segments' from /dev/shm, the cgroup's from
-- pg_procmem_cgroup_memory(), read just before and just after the view.
-- The view's figure lies between the two, give or take 256 kB (what this
-- backend allocates between the reads) and, for the cgroup's page cache,
-- 1 MB, in a window where the two reads agree within that
-- (pg_temp.around_reads).
CREATE FUNCTION pg_temp.vmpte(p integer) RETURNS bigint LANGUAGE sql AS $$
	SELECT (regexp_match(pg_read_file('/proc/' || p || '/status', 0, 100000, true),
	                     '\nVmPTE:\s+(\d+) kB'))[1]::bigint * 1024 $$;
-- the sizes of the /dev/shm/PostgreSQL.* files the server's processes map
CREATE FUNCTION pg_temp.dsm_files_bytes() RETURNS bigint LANGUAGE sql AS $$
	SELECT coalesce(sum((pg_stat_file('/dev/shm/' || f, true)).size), 0)::bigint
	FROM (SELECT DISTINCT m[1] AS f FROM pg_procmem_processes() p,
	          regexp_matches(coalesce(pg_read_file('/proc/' || p.pid || '/maps', 0, 10000000, true), ''),
	                         '/dev/shm/(PostgreSQL\.\d+)', 'g') AS m) x $$;
CREATE FUNCTION pg_temp.raw(OUT overhead bigint, OUT processes_kernel bigint, OUT cow_shared bigint,
	OUT dsm bigint, OUT resident bigint, OUT charged bigint, OUT page_cache bigint) LANGUAGE sql AS $$
	WITH p AS (SELECT backend_type, private_anon, pg_temp.vmpte(pid) AS vmpte, kernel, cow_shared_anon
	           FROM pg_procmem_processes())
	SELECT (SELECT sum(private_anon + vmpte + kernel) FROM p)::bigint,
	       (SELECT sum(vmpte + kernel) FROM p)::bigint,
	       (SELECT cow_shared_anon FROM p WHERE backend_type = 'postmaster'),
	       pg_temp.dsm_files_bytes(),
	       m.main_segment_resident,
	       CASE WHEN m.main_segment_hugetlb THEN 0 ELSE m.main_segment_resident END,
	       c.file - c.shmem
	FROM pg_procmem_shared_memory(true) m, pg_procmem_cgroup_memory() c $$;
SELECT pg_temp.around_reads('SELECT * FROM pg_temp.raw()', 'SELECT * FROM pg_procmem_accounting', ARRAY[
	ARRAY['processes_overhead: every process''s private_anon + VmPTE + kernel, added up',
	      'v.processes_overhead', 'r.overhead', '262144'],
	ARRAY['processes_kernel: every process''s VmPTE + kernel, added up',
	      'v.processes_kernel', 'r.processes_kernel', '262144'],
	ARRAY['cow_shared_with_postmaster: the postmaster''s cow_shared_anon, once',
	      'v.cow_shared_with_postmaster', 'r.cow_shared', '262144'],
	ARRAY['accounted: those, the mapped /dev/shm segments'' sizes and the main segment''s resident part',
	      'v.accounted', 'r.overhead + r.cow_shared + r.dsm + r.resident', '524288'],
	ARRAY['cgroup_page_cache: the cgroup''s file pages less shmem',
	      'v.cgroup_page_cache', 'r.page_cache', '1048576'],
	-- (the cgroup's usage and kernel memory as the view read them, in the
	-- same row: the whole cgroup's, they move by tens of MB within a window)
	ARRAY['unexplained: usage less page cache, the processes, shared memory charged and the cgroup''s other kernel memory',
	      'v.unexplained',
	      'v.cgroup_usage - v.cgroup_page_cache - (r.overhead + r.cow_shared + r.dsm + r.charged)'
	      ' - (v.cgroup_kernel - r.processes_kernel)',
	      '524288']]);

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
