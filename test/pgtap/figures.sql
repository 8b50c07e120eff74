-- The figures: sane relations, and agreement with an independent read of
-- the same /proc files through pg_read_file.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
SELECT plan(14);

-- A "Key:   N kB" field of /proc/PID/<file>, in bytes.
CREATE FUNCTION pg_temp.kb(p integer, f text, k text) RETURNS bigint LANGUAGE sql AS $$
	SELECT (regexp_match(pg_read_file('/proc/' || p || '/' || f), '(?:^|\n)' || k || ':\s+(\d+) kB'))[1]::bigint * 1024 $$;

-- a within tol of b: tol is a fraction of b plus a floor in bytes.
CREATE FUNCTION pg_temp.near(a bigint, b bigint, frac float8, floor_bytes bigint)
RETURNS boolean LANGUAGE sql AS $$ SELECT abs(a - b) <= frac * b + floor_bytes $$;

CREATE TEMP TABLE me AS SELECT * FROM pg_procmem_process(pg_backend_pid());
CREATE TEMP TABLE pm AS SELECT * FROM pg_procmem_processes() WHERE backend_type = 'postmaster';

SELECT ok((SELECT pss <= rss FROM me), 'own backend: pss <= rss');
SELECT ok((SELECT private <= rss FROM me), 'own backend: private <= rss');
SELECT ok((SELECT overhead BETWEEN 256 * 1024 AND 256 * 1024 * 1024 FROM me),
	'own backend: overhead between 256 kB and 256 MB');
SELECT ok((SELECT overhead < rss FROM me), 'own backend: overhead below rss');

-- Independent reads of the idle postmaster's files, moments later: equal
-- within 5% + 64 kB (its memory barely moves; the tolerance covers a fork).
SELECT ok((SELECT pg_temp.near(rss, pg_temp.kb(pid, 'status', 'VmRSS'), 0.05, 65536) FROM pm),
	'postmaster: rss agrees with VmRSS in /proc/PID/status');
SELECT ok((SELECT pg_temp.near(rss_anon, pg_temp.kb(pid, 'status', 'RssAnon'), 0.05, 65536) FROM pm),
	'postmaster: rss_anon agrees with RssAnon');
SELECT ok((SELECT pg_temp.near(page_tables, pg_temp.kb(pid, 'status', 'VmPTE'), 0.05, 65536) FROM pm),
	'postmaster: page_tables agrees with VmPTE');
SELECT ok((SELECT pg_temp.near(pss_anon, pg_temp.kb(pid, 'smaps_rollup', 'Pss_Anon'), 0.05, 65536) FROM pm),
	'postmaster: pss_anon agrees with Pss_Anon in /proc/PID/smaps_rollup');
SELECT ok((SELECT pg_temp.near(overhead,
			pg_temp.kb(pid, 'smaps_rollup', 'Pss_Anon') + pg_temp.kb(pid, 'status', 'VmPTE'),
			0.05, 65536) FROM pm),
	'postmaster: overhead = Pss_Anon + VmPTE, recomputed from the files');
SELECT is((SELECT hugetlb FROM pm), (SELECT pg_temp.kb(pid, 'status', 'HugetlbPages') FROM pm),
	'postmaster: hugetlb equals HugetlbPages');
SELECT is((SELECT oom_score_adj FROM pm),
	(SELECT trim(pg_read_file('/proc/' || pid || '/oom_score_adj'))::integer FROM pm),
	'postmaster: oom_score_adj equals /proc/PID/oom_score_adj');

-- Relations that hold within one read of one file, for every process.
SELECT is((SELECT count(*) FROM pg_procmem_processes() WHERE rss_anon + rss_file + rss_shmem <> rss),
	0::bigint, 'every process: rss_anon + rss_file + rss_shmem = rss (one status read)');
SELECT is((SELECT count(*) FROM pg_procmem_processes()
	       WHERE NOT pss_anon + pss_file + pss_shmem BETWEEN pss - 3072 AND pss),
	0::bigint, 'every process: pss_anon + pss_file + pss_shmem = pss, within kB rounding');
SELECT is((SELECT count(*) FROM pg_procmem_processes()
	       WHERE overhead IS NULL OR rss IS NULL OR pss IS NULL OR page_tables IS NULL
	          OR oom_score IS NULL OR oom_score_adj IS NULL),
	0::bigint, 'every process: no figure missing on this kernel');

SELECT * FROM finish();
ROLLBACK;
