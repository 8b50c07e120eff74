-- pg_procmem_accounting's cgroup make-up against the cgroup's own files
-- (pg_read_file) and against the server's processes: the cgroup's parts
-- add up to its usage, and what the processes explain of its anonymous and
-- shared memory fits in them. The cluster shares its memory cgroup with
-- whatever else runs there (the test runner, other clients): relations that
-- such neighbours cannot break are asserted, with stated tolerances for
-- what moves between two reads (and for v1's batched usage figure).
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(12);

-- This backend's memory cgroup: its version, and the directory of its files
-- (a regexp_match in FROM is one row, NULL, where nothing matches: on v2,
-- found by scripts/vm's guest)
CREATE FUNCTION pg_temp.cgroup_dir() RETURNS text[] LANGUAGE sql AS $$
	SELECT coalesce((SELECT ARRAY['1', '/sys/fs/cgroup/memory' || m[1]]
	                 FROM regexp_match(c, '(?:^|\n)\d+:[^:\n]*\mmemory\M[^:\n]*:([^\n]*)') m
	                 WHERE m IS NOT NULL),
	                (SELECT ARRAY['2', '/sys/fs/cgroup' || m[1]] FROM regexp_match(c, '(?:^|\n)0::([^\n]*)') m))
	FROM pg_read_file('/proc/self/cgroup') c $$;
-- one file of it, or NULL where it has none
CREATE FUNCTION pg_temp.cg(f text) RETURNS text LANGUAGE sql AS $$
	SELECT pg_read_file((pg_temp.cgroup_dir())[2] || '/' || f, 0, 1000000, true) $$;
-- a limit as the file says it: no limit ("max", v1's near 2^63) is NULL
CREATE FUNCTION pg_temp.cg_limit(f text) RETURNS bigint LANGUAGE sql AS $$
	SELECT CASE WHEN v = 'max' OR v::numeric >= 2 ^ 62 THEN NULL ELSE v::bigint END
	FROM trim(E' \n' FROM pg_temp.cg(f)) v $$;
-- a key's figure in a keyed file (memory.events, memory.oom_control)
CREATE FUNCTION pg_temp.cg_key(f text, k text) RETURNS bigint LANGUAGE sql AS $$
	SELECT (regexp_match(pg_temp.cg(f), '(?:^|\n)' || k || ' (\d+)'))[1]::bigint $$;

CREATE TEMP TABLE a AS SELECT * FROM pg_procmem_accounting;
CREATE TEMP TABLE v AS
	SELECT (pg_temp.cgroup_dir())[1]::integer AS version,
	       (SELECT cgroup_usage IS NULL FROM a) AS none;
-- (\gset: whether to skip, and why, is known before the tests are written)
SELECT CASE WHEN none THEN 'the server is not in a memory cgroup with the memory controller' ELSE '' END AS no_cgroup,
       CASE WHEN none THEN 'no memory cgroup'
            WHEN (SELECT cgroup_effective_limit IS NULL FROM a) THEN 'the server''s memory cgroup has no limit'
            ELSE '' END AS no_limit
FROM v \gset

SELECT CASE WHEN :'no_cgroup' <> '' THEN skip(:'no_cgroup', 9) END;
SELECT ok((SELECT pg_temp.near(cgroup_usage,
	                           trim(pg_temp.cg(CASE (SELECT version FROM v) WHEN 1 THEN 'memory.usage_in_bytes'
	                                                ELSE 'memory.current' END))::bigint, 0.1, 67108864) FROM a),
	'cgroup_usage agrees with the cgroup''s own file, within 10% + 64 MB')
WHERE :'no_cgroup' = '';
SELECT ok((SELECT cgroup_anon >= 0 AND cgroup_shmem >= 0 AND cgroup_page_cache >= 0 AND cgroup_kernel >= 0
	              AND cgroup_page_cache_dirty BETWEEN 0 AND cgroup_page_cache + cgroup_shmem
	              AND processes_kernel BETWEEN 0 AND processes_overhead FROM a),
	'the parts are figures, none negative; dirty pages are page cache; processes_kernel is part of the overhead')
WHERE :'no_cgroup' = '';
SELECT ok((SELECT pg_temp.near(cgroup_usage, cgroup_anon + cgroup_page_cache + cgroup_shmem + cgroup_kernel,
	                           0.05, 16777216) FROM a),
	'the cgroup''s parts (anon, page cache, shmem, kernel) add up to its usage, within 5% + 16 MB')
WHERE :'no_cgroup' = '';
SELECT ok((SELECT (processes_overhead - processes_kernel) + cow_shared_with_postmaster
	              <= cgroup_anon + 16777216 + cgroup_anon / 20 FROM a),
	'the processes'' anonymous memory fits in the cgroup''s, within 5% + 16 MB')
WHERE :'no_cgroup' = '';
SELECT ok((SELECT CASE WHEN main_segment_hugetlb THEN 0 ELSE main_segment_resident END + dsm_bytes
	              <= cgroup_shmem + 16777216 + cgroup_shmem / 20 FROM a),
	'the main segment''s resident part and the DSM segments fit in the cgroup''s shmem, within 5% + 16 MB')
WHERE :'no_cgroup' = '';
SELECT ok((SELECT unexplained >= -(16777216 + cgroup_usage / 20) FROM a),
	'nothing counted twice: unexplained is not below -(5% of usage + 16 MB)')
WHERE :'no_cgroup' = '';
SELECT ok((SELECT cgroup_peak >= cgroup_usage
	              AND cgroup_peak <= trim(pg_temp.cg(CASE (SELECT version FROM v) WHEN 1 THEN 'memory.max_usage_in_bytes'
	                                                      ELSE 'memory.peak' END))::bigint FROM a),
	'cgroup_peak: at least the usage read before it, at most the peak file read after')
WHERE :'no_cgroup' = '';
SELECT is((SELECT ARRAY[cgroup_limit, cgroup_oom_kills, cgroup_max_events] FROM a),
	CASE (SELECT version FROM v)
		WHEN 1 THEN ARRAY[pg_temp.cg_limit('memory.limit_in_bytes'), pg_temp.cg_key('memory.oom_control', 'oom_kill'),
		                  trim(pg_temp.cg('memory.failcnt'))::bigint]
		ELSE ARRAY[pg_temp.cg_limit('memory.max'), pg_temp.cg_key('memory.events', 'oom_kill'),
		           pg_temp.cg_key('memory.events', 'max')] END,
	'cgroup_limit, cgroup_oom_kills, cgroup_max_events as the cgroup''s files say (v1: failcnt)')
WHERE :'no_cgroup' = '';
SELECT ok((SELECT CASE (SELECT version FROM v)
	                  WHEN 1 THEN cgroup_high IS NULL AND cgroup_high_events IS NULL AND cgroup_oom_events IS NULL
	                              AND cgroup_oom_group IS NULL
	                  ELSE cgroup_high_events IS NOT NULL AND cgroup_oom_events IS NOT NULL END FROM a),
	'v1 has no memory.high, memory.events or memory.oom.group: NULL, not 0; v2 has its events')
WHERE :'no_cgroup' = '';

-- the limit that OOM-kills: above the usage, and the smallest on the way up
SELECT CASE WHEN :'no_limit' <> '' THEN skip(:'no_limit', 2) END;
SELECT ok((SELECT cgroup_usage <= cgroup_effective_limit FROM a), 'the usage is within the effective limit')
WHERE :'no_limit' = '';
SELECT ok((SELECT cgroup_effective_limit <= coalesce(cgroup_limit, cgroup_effective_limit) FROM a),
	'the effective limit is at most the cgroup''s own')
WHERE :'no_limit' = '';

-- outside a cgroup every cgroup figure is NULL, and unknown says why
SELECT CASE WHEN :'no_cgroup' = '' THEN
	ok((SELECT unknown IS NULL AND unexplained IS NOT NULL FROM a), 'in a cgroup: every part known, unexplained shown')
	ELSE ok((SELECT unexplained IS NULL AND 'cgroup_kernel' = ANY (unknown) FROM a),
	        'outside a cgroup: unexplained is NULL and unknown names the cgroup''s parts') END;

SELECT * FROM finish();
ROLLBACK;
