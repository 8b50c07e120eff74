-- The system views against independent reads (pg_read_file) of the same
-- files. Figures that move between two reads get a stated tolerance.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(27);

-- This backend's memory cgroup line: v1's memory controller if there is one.
-- (a regexp_match in FROM is one row, NULL, where nothing matches: on v2,
-- found by scripts/vm's guest)
CREATE FUNCTION pg_temp.cgroup_line() RETURNS text[] LANGUAGE sql AS $$
	SELECT coalesce((SELECT ARRAY['1', m[1]] FROM regexp_match(c, '(?:^|\n)\d+:[^:\n]*\mmemory\M[^:\n]*:([^\n]*)') m
	                 WHERE m IS NOT NULL),
	                (SELECT ARRAY['2', m[1]] FROM regexp_match(c, '(?:^|\n)0::([^\n]*)') m))
	FROM pg_read_file('/proc/self/cgroup') c $$;

CREATE TEMP TABLE sys AS SELECT * FROM pg_procmem_system;

SELECT is((SELECT mem_total FROM sys), pg_temp.meminfo('MemTotal'), 'MemTotal');
SELECT ok((SELECT pg_temp.near(mem_available, pg_temp.meminfo('MemAvailable'), 0.05, 67108864) FROM sys),
	'MemAvailable, within 5% + 64 MB');
SELECT ok((SELECT pg_temp.near(page_tables, pg_temp.meminfo('PageTables'), 0.2, 4194304) FROM sys),
	'PageTables, within 20% + 4 MB');
SELECT is((SELECT hugepages_total FROM sys), pg_temp.meminfo('HugePages_Total'), 'HugePages_Total (a count)');
SELECT is((SELECT hugepage_size FROM sys), pg_temp.meminfo('Hugepagesize'), 'Hugepagesize');
SELECT is((SELECT swap_total FROM sys), pg_temp.meminfo('SwapTotal'), 'SwapTotal');
SELECT is((SELECT commit_limit FROM sys), pg_temp.meminfo('CommitLimit'), 'CommitLimit');
SELECT is((SELECT overcommit_memory FROM sys),
	trim(pg_read_file('/proc/sys/vm/overcommit_memory'))::integer, 'vm.overcommit_memory');
-- (a mode that could not be read is NULL: it fails, whatever the file says;
-- the defrag file names its mode the same way: where both name the same
-- one, a read of the wrong file would pass here, and the diag says so:
-- test/advice/advice.py sets enabled alone and expects the finding)
SELECT CASE WHEN pg_stat_file('/sys/kernel/mm/transparent_hugepage/enabled', true) IS NULL
	THEN skip('no transparent huge pages on this kernel', 1)
	ELSE is((SELECT coalesce(transparent_hugepage, '(not read)') FROM sys),
	        (regexp_match(pg_read_file('/sys/kernel/mm/transparent_hugepage/enabled'), '\[(\w+)\]'))[1],
	        'transparent huge page mode') END;
SELECT diag(format('THP enabled [%s], defrag [%s]%s', e, d,
	CASE WHEN e = d THEN ': the same mode, so this test alone does not tell the two files apart' ELSE '' END))
FROM (SELECT (regexp_match(pg_read_file('/sys/kernel/mm/transparent_hugepage/enabled', 0, 200, true), '\[([\w+]+)\]'))[1] e,
             (regexp_match(pg_read_file('/sys/kernel/mm/transparent_hugepage/defrag', 0, 200, true), '\[([\w+]+)\]'))[1] d) x
WHERE e IS NOT NULL;

SELECT is((SELECT ARRAY[cgroup_version::text, cgroup_path] FROM sys), pg_temp.cgroup_line(),
	'the memory cgroup named in /proc/self/cgroup');
-- its usage, read from the usual mount point when the file is there
SELECT CASE WHEN pg_stat_file(f, true) IS NULL THEN skip('no ' || f, 1)
	ELSE ok((SELECT pg_temp.near(cgroup_usage, trim(pg_read_file(f))::bigint, 0.1, 67108864) FROM sys),
	        'the cgroup usage agrees with ' || f || ', within 10% + 64 MB') END
FROM (SELECT CASE l[1] WHEN '1' THEN '/sys/fs/cgroup/memory' || l[2] || '/memory.usage_in_bytes'
	                   ELSE '/sys/fs/cgroup' || l[2] || '/memory.current' END AS f
	  FROM pg_temp.cgroup_line() l) x;

-- oom_score of every process, against the file (scores move a little)
SELECT is((SELECT count(*) FROM pg_procmem_oom o
	       WHERE abs(o.oom_score - trim(pg_read_file('/proc/' || o.pid || '/oom_score', 0, 64, true))::integer) > 2),
	0::bigint, 'oom_score of every process agrees with /proc/PID/oom_score, within 2');
SELECT ok((SELECT array_agg(pid ORDER BY rank, pid) = array_agg(pid ORDER BY oom_score DESC, pid)
	       FROM pg_procmem_oom),
	'ranked by oom_score, highest first (one scan)');

-- huge pages: whether the segment is in hugetlb, seen two ways
SELECT is((SELECT in_use FROM pg_procmem_hugepages),
	(SELECT hugetlb > 0 FROM pg_procmem_processes() WHERE backend_type = 'postmaster'),
	'in_use (the segment''s mapping) agrees with the postmaster''s HugetlbPages');
-- and against what the server says it got: huge_pages = on: in use (or it
-- would not have started); off: not; try: huge_pages_status (17 and
-- later), before 17 the postmaster's HugetlbPages read here
SELECT is((SELECT in_use FROM pg_procmem_hugepages),
	CASE current_setting('huge_pages_status', true) WHEN 'on' THEN true WHEN 'off' THEN false ELSE
	CASE current_setting('huge_pages') WHEN 'on' THEN true WHEN 'off' THEN false ELSE
		(regexp_match(pg_read_file('/proc/' || split_part(pg_read_file('postmaster.pid'), E'\n', 1) || '/status'),
		              '\nHugetlbPages:\s+(\d+) kB'))[1]::bigint > 0 END END,
	format('in_use is what the server got (huge_pages = %s, huge_pages_status = %s)',
	       current_setting('huge_pages'), coalesce(current_setting('huge_pages_status', true), 'before 17')));
SELECT ok((SELECT recommendation LIKE '%vm.nr_hugepages >= ' ||
	           coalesce(shared_memory_size_in_huge_pages, vm_peak_huge_pages) || ' %' OR in_use
	       FROM pg_procmem_hugepages),
	'the advice names shared_memory_size_in_huge_pages (before 15: the VmPeak recipe) when not in use');

-- the main segment: resident is at least what any one process has touched of it
SELECT ok((SELECT main_segment_resident >= (SELECT max(rss_shmem) - 16777216 FROM pg_procmem_processes())
	       FROM pg_procmem_accounting),
	'the main segment''s resident part covers what any process touched (less DSM, 16 MB)');

-- headroom, with idle connections to take the average from, once no
-- connection of an earlier test is still exiting (one that has given back
-- its PGPROC is a client backend here, but no longer in pg_stat_activity).
-- One of them keeps 16 MB of local buffers (temp_buffers, filled by a
-- temporary table) while idle: their average is then well above the
-- smallest client backend, the figure used when none is idle.
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('idle' || i, pg_temp.connstr()) FROM generate_series(1, 3) i;
SELECT dblink_exec('idle1', $q$SET temp_buffers = '16MB'; CREATE TEMP TABLE big AS
	SELECT g, repeat('x', 150) AS pad FROM generate_series(1, 150000) g$q$);
CREATE FUNCTION pg_temp.headroom() RETURNS SETOF pg_procmem_headroom LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1..100 LOOP
		PERFORM pg_stat_clear_snapshot();
		IF (SELECT idle_client_backends >= 3 FROM pg_procmem_headroom)
		   AND pg_temp.no_exiting_connection() THEN
			RETURN QUERY SELECT * FROM pg_procmem_headroom;
			RETURN;
		END IF;
		PERFORM pg_sleep(0.1);
	END LOOP;
END $$;
CREATE TEMP TABLE h AS SELECT * FROM pg_temp.headroom();
SELECT ok((SELECT idle_client_backends >= 3 AND avg_idle_overhead BETWEEN 262144 AND 67108864 FROM h),
	'three idle connections: an average idle overhead between 256 kB and 64 MB');
SELECT ok((SELECT avg_idle_overhead > 2 * (SELECT min(overhead) FROM pg_procmem_backends
	                                       WHERE backend_type = 'client backend') FROM h),
	'the one holding 16 MB of local buffers lifts their average above twice the smallest client backend''s');
-- The derived columns against the raw figures, recomputed here as
-- docs/views.md defines them: the idle client backends (pg_stat_activity)
-- and their private_anon + VmPTE + kernel (pg_procmem_processes(), VmPTE
-- from /proc/PID/status), MemAvailable from /proc/meminfo and the cgroup's
-- room (pg_procmem_system_info()), read just before and just after the
-- view. Its figures must lie between the two reads' (MemAvailable: 32 MB
-- more either way), in a window where the two agree within that
-- (pg_temp.around_reads: MemAvailable is the whole machine's).
CREATE FUNCTION pg_temp.raw_headroom(OUT idle_avg bigint, OUT available bigint, OUT clients bigint)
LANGUAGE sql AS $$
	SELECT (SELECT avg(p.private_anon + (regexp_match(pg_read_file('/proc/' || p.pid || '/status', 0, 100000, true),
	                                                  '\nVmPTE:\s+(\d+) kB'))[1]::bigint * 1024 + p.kernel)
	        FROM pg_procmem_processes() p JOIN pg_stat_activity a USING (pid)
	        WHERE a.backend_type = 'client backend' AND a.state = 'idle')::bigint,
	       (SELECT LEAST(pg_temp.meminfo('MemAvailable'), cgroup_room) FROM pg_procmem_system_info()),
	       (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend') $$;
SELECT pg_temp.around_reads('SELECT * FROM pg_temp.raw_headroom()', 'SELECT * FROM pg_procmem_headroom', ARRAY[
	ARRAY['avg_idle_overhead: the idle client backends'' private_anon + VmPTE + kernel, averaged',
	      'v.avg_idle_overhead', 'r.idle_avg', '131072'],
	ARRAY['per_connection: that average (there are idle client backends)',
	      'v.per_connection', 'r.idle_avg', '131072'],
	ARRAY['available: the tighter of MemAvailable (/proc/meminfo) and the cgroup''s room',
	      'v.available', 'r.available', '33554432'],
	ARRAY['more_idle_connections_fit: that divided by the idle backends'' average, within 10%',
	      'v.more_idle_connections_fit', 'r.available / r.idle_avg', '0.1 * r.available / r.idle_avg'],
	ARRAY['client_backends: the client backends of pg_stat_activity',
	      'v.client_backends', 'r.clients', '0']]);
SELECT is((SELECT per_connection_from FROM v), 'the average idle client backend', 'per_connection_from says so');
-- slots left for an ordinary role: neither the superusers' reserve nor, on
-- 16 and later, reserved_connections (scripts/test sets it there)
SELECT is((SELECT connection_slots_left FROM v),
	(SELECT GREATEST(current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int
	                 - coalesce(current_setting('reserved_connections', true)::int, 0) - clients, 0)
	 FROM r0)::bigint,
	format('connection_slots_left leaves out superuser_reserved_connections (%s) and reserved_connections (%s)',
	       current_setting('superuser_reserved_connections'), current_setting('reserved_connections', true)));
SELECT dblink_disconnect('idle' || i) FROM generate_series(1, 3) i;

-- the exposures, from the settings (not at their defaults, so that each
-- factor counts; temp_buffers is fixed once temporary tables were used).
-- Autovacuum workers take autovacuum_work_mem, maintenance_work_mem where
-- it is -1 (a server setting: whichever this server has).
SET LOCAL work_mem = '3MB';
SET LOCAL hash_mem_multiplier = 3;
SET LOCAL maintenance_work_mem = '70MB';
SELECT is((SELECT ARRAY[work_mem_exposure, autovacuum_exposure, temp_buffers_exposure] FROM pg_procmem_headroom),
	ARRAY[current_setting('max_connections')::bigint * 3 * 1048576 * 3,
	      current_setting('autovacuum_max_workers')::bigint
	          * CASE current_setting('autovacuum_work_mem') WHEN '-1' THEN 70 * 1048576
	                 ELSE pg_size_bytes(current_setting('autovacuum_work_mem')) END,
	      current_setting('max_connections')::bigint * pg_size_bytes(current_setting('temp_buffers'))],
	format('work_mem_exposure = max_connections x work_mem x hash_mem_multiplier; autovacuum_exposure = '
	       'autovacuum_max_workers x %s; temp_buffers_exposure = max_connections x temp_buffers',
	       CASE current_setting('autovacuum_work_mem') WHEN '-1' THEN 'maintenance_work_mem (autovacuum_work_mem -1)'
	            ELSE 'autovacuum_work_mem (' || current_setting('autovacuum_work_mem') || ')' END));

SELECT * FROM finish();
ROLLBACK;
