-- pg_procmem_advice and pg_procmem_machine_info on any server: the shape
-- of the findings, and the machine figures against independent reads.
-- (Each check provoked and quiet: test/advice/advice.py.)
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(11);

CREATE TEMP TABLE a AS SELECT row_number() OVER () AS n, * FROM pg_procmem_advice;
CREATE TEMP TABLE k AS SELECT * FROM pg_procmem_machine_info();

SELECT columns_are('pg_procmem_advice', ARRAY['check_name', 'severity', 'summary', 'evidence', 'recommendation'],
	'pg_procmem_advice has its 5 columns');
SELECT is((SELECT count(*) FROM a WHERE severity NOT IN ('info', 'warning', 'critical')
	OR summary IS NULL OR evidence IS NULL OR recommendation IS NULL), 0::bigint,
	'every finding has a severity, a summary, evidence and a recommendation');
SELECT is((SELECT count(*) FROM a WHERE check_name NOT IN ('huge_pages', 'transparent_hugepage',
	'oom_postmaster', 'oom_auxiliary_first', 'overcommit', 'work_mem_exposure', 'work_mem_above_cpu_cache',
	'maintenance_work_mem_above_cpu_cache', 'dirty_writeback', 'max_connections', 'idle_connections',
	'connection_rate', 'swap', 'cgroup_limit', 'cgroup_oom_kills')), 0::bigint,
	'every check name is one of the documented ones');
SELECT is((SELECT count(*) FROM a WHERE check_name = 'overcommit'), 1::bigint,
	'the overcommit check always says something (info at least)');
SELECT is((SELECT count(*) FROM a a1 JOIN a a2 ON a2.n = a1.n + 1
	WHERE array_position(ARRAY['critical', 'warning', 'info'], a2.severity)
	    < array_position(ARRAY['critical', 'warning', 'info'], a1.severity)), 0::bigint,
	'critical first, then warning, then info');

-- the CPUs this backend may use, counted from Cpus_allowed_list ("0-3,8")
SELECT is((SELECT cpus FROM k), (SELECT sum(CASE WHEN r LIKE '%-%'
		THEN split_part(r, '-', 2)::int - split_part(r, '-', 1)::int + 1 ELSE 1 END)::integer
	FROM regexp_split_to_table((regexp_match(pg_read_file('/proc/self/status'),
		'Cpus_allowed_list:\s*(\S+)'))[1], ',') AS r),
	'cpus agrees with Cpus_allowed_list of /proc/self/status');
SELECT is((SELECT dirty_ratio FROM k), trim(pg_read_file('/proc/sys/vm/dirty_ratio'))::integer, 'vm.dirty_ratio');
SELECT is((SELECT dirty_background_bytes FROM k), trim(pg_read_file('/proc/sys/vm/dirty_background_bytes'))::bigint,
	'vm.dirty_background_bytes');
SELECT is((SELECT overcommit_ratio FROM k), trim(pg_read_file('/proc/sys/vm/overcommit_ratio'))::integer,
	'vm.overcommit_ratio');
-- The last-level cache against sysfs read independently: the largest data
-- or unified cache of cpu0 at the deepest level it describes. Where sysfs
-- describes caches, the figure must be there (NULL fails).
CREATE FUNCTION pg_temp.cache(i integer, f text) RETURNS text LANGUAGE sql AS $$
	SELECT btrim(pg_read_file(format('/sys/devices/system/cpu/cpu0/cache/index%s/%s', i, f), 0, 64, true), E' \n') $$;
CREATE TEMP TABLE sysfs_cache AS
	SELECT pg_temp.cache(i, 'level')::int AS level,
	       pg_size_bytes(regexp_replace(pg_temp.cache(i, 'size'), '([KMG])$', ' \1B')) AS bytes
	FROM generate_series(0, 31) AS i
	WHERE pg_temp.cache(i, 'level') IS NOT NULL AND pg_temp.cache(i, 'type') <> 'Instruction';
SELECT CASE WHEN NOT EXISTS (SELECT FROM sysfs_cache)
	THEN skip('sysfs describes no data cache of cpu0 here', 1)
	ELSE is((SELECT ARRAY[cpu_cache_level::bigint, cpu_cache_bytes] FROM k),
	        (SELECT ARRAY[level::bigint, max(bytes)] FROM sysfs_cache
	         WHERE level = (SELECT max(level) FROM sysfs_cache) GROUP BY level),
	        'the last-level cache''s level and size agree with sysfs') END;
SELECT CASE WHEN NOT EXISTS (SELECT FROM sysfs_cache)
	THEN skip('sysfs describes no data cache of cpu0 here', 1)
	ELSE ok((SELECT cpu_cache_bytes >= 65536 AND cpu_cache_level BETWEEN 1 AND 4 FROM k),
	        'the last-level cache is at least 64 kB, at level 1 to 4') END;

SELECT * FROM finish();
ROLLBACK;
