-- The system views against independent reads (pg_read_file) of the same
-- files. Figures that move between two reads get a stated tolerance.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(21);

-- This backend's memory cgroup line: v1's memory controller if there is one.
CREATE FUNCTION pg_temp.cgroup_line() RETURNS text[] LANGUAGE sql AS $$
	SELECT coalesce((SELECT ARRAY['1', m[1]] FROM regexp_match(c, '(?:^|\n)\d+:[^:\n]*\mmemory\M[^:\n]*:([^\n]*)') m),
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
SELECT is((SELECT transparent_hugepage FROM sys),
	(regexp_match(pg_read_file('/sys/kernel/mm/transparent_hugepage/enabled'), '\[(\w+)\]'))[1],
	'transparent huge page mode');

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
SELECT ok((SELECT in_use OR current_setting('huge_pages') <> 'on' FROM pg_procmem_hugepages),
	'huge_pages = on means in use');
SELECT ok((SELECT recommendation LIKE '%vm.nr_hugepages >= ' ||
	           coalesce(shared_memory_size_in_huge_pages, vm_peak_huge_pages) || ' %' OR in_use
	       FROM pg_procmem_hugepages),
	'the advice names shared_memory_size_in_huge_pages (before 15: the VmPeak recipe) when not in use');

-- the main segment: resident is at least what any one process has touched of it
SELECT ok((SELECT main_segment_resident >= (SELECT max(rss_shmem) - 16777216 FROM pg_procmem_processes())
	       FROM pg_procmem_accounting),
	'the main segment''s resident part covers what any process touched (less DSM, 16 MB)');

-- headroom, with idle connections to take the average from
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT dblink_connect('idle' || i, pg_temp.connstr()) FROM generate_series(1, 3) i;
CREATE FUNCTION pg_temp.headroom() RETURNS SETOF pg_procmem_headroom LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1..50 LOOP
		PERFORM pg_stat_clear_snapshot();
		IF (SELECT idle_client_backends >= 3 FROM pg_procmem_headroom) THEN
			RETURN QUERY SELECT * FROM pg_procmem_headroom;
			RETURN;
		END IF;
		PERFORM pg_sleep(0.1);
	END LOOP;
END $$;
CREATE TEMP TABLE h AS SELECT * FROM pg_temp.headroom();
SELECT ok((SELECT idle_client_backends >= 3 AND avg_idle_overhead BETWEEN 262144 AND 67108864 FROM h),
	'three idle connections: an average idle overhead between 256 kB and 64 MB');
SELECT ok((SELECT more_idle_connections_fit = GREATEST(div(available, avg_idle_overhead), 0)
	       AND more_idle_connections_fit > 0 FROM h),
	'more_idle_connections_fit = available / avg_idle_overhead');
SELECT ok((SELECT available = LEAST(mem_available, cgroup_room)
	       AND available <= pg_temp.meminfo('MemAvailable') + 67108864 FROM h),
	'available is the tighter of MemAvailable and the cgroup''s room');
-- slots left for an ordinary role: neither the superusers' reserve nor, on
-- 16 and later, reserved_connections (scripts/test sets it there)
SELECT is((SELECT connection_slots_left FROM h),
	(SELECT GREATEST(current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int
	                 - coalesce(current_setting('reserved_connections', true)::int, 0) - client_backends, 0)
	 FROM h)::bigint,
	format('connection_slots_left leaves out superuser_reserved_connections (%s) and reserved_connections (%s)',
	       current_setting('superuser_reserved_connections'), current_setting('reserved_connections', true)));
SELECT dblink_disconnect('idle' || i) FROM generate_series(1, 3) i;

SELECT * FROM finish();
ROLLBACK;
