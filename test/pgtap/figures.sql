-- The figures: sane relations, and agreement with an independent read of
-- the same /proc files through pg_read_file.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(22);

-- A "Key:   N kB" field of /proc/PID/<file>, in bytes.
CREATE FUNCTION pg_temp.kb(p integer, f text, k text) RETURNS bigint LANGUAGE sql AS $$
	SELECT (regexp_match(pg_read_file('/proc/' || p || '/' || f), '(?:^|\n)' || k || ':\s+(\d+) kB'))[1]::bigint * 1024 $$;

CREATE TEMP TABLE me AS SELECT * FROM pg_procmem_process(pg_backend_pid(), true);
CREATE TEMP TABLE pm AS SELECT * FROM pg_procmem_processes(true) WHERE backend_type = 'postmaster';
CREATE TEMP TABLE every AS SELECT * FROM pg_procmem_processes(true);

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
-- The exclusive anonymous memory, recomputed from another file: in each
-- private mapping of /proc/PID/smaps, the pages that are mapped by this
-- process only and dirty (Private_Dirty), but no more than its anonymous
-- pages (a freshly written executable's page cache is dirty too).
CREATE FUNCTION pg_temp.private_dirty_of_private_mappings(p integer) RETURNS bigint
LANGUAGE sql AS $$
	SELECT sum(LEAST((regexp_match(m, E'\nPrivate_Dirty:\\s+(\\d+) kB'))[1]::bigint,
	                 (regexp_match(m, E'\nAnonymous:\\s+(\\d+) kB'))[1]::bigint)) * 1024
	FROM regexp_split_to_table(pg_read_file('/proc/' || p || '/smaps'),
	                           E'\n(?=[0-9a-f]+-[0-9a-f]+ )') AS m
	WHERE m ~ '^[0-9a-f]+-[0-9a-f]+ ...p ' $$;
SELECT ok((SELECT pg_temp.near(private_anon, pg_temp.private_dirty_of_private_mappings(pid),
			0.02, 65536) FROM pm),
	'postmaster: private_anon = its private mappings'' Private_Dirty (anonymous at most) in /proc/PID/smaps');
SELECT ok((SELECT pg_temp.near(overhead - kernel,
			pg_temp.private_dirty_of_private_mappings(pid) + pg_temp.kb(pid, 'status', 'VmPTE'),
			0.02, 65536) FROM pm),
	'postmaster: overhead = that + VmPTE + kernel, recomputed from the files');
SELECT is((SELECT hugetlb FROM pm), (SELECT pg_temp.kb(pid, 'status', 'HugetlbPages') FROM pm),
	'postmaster: hugetlb equals HugetlbPages');
SELECT is((SELECT oom_score_adj FROM pm),
	(SELECT trim(pg_read_file('/proc/' || pid || '/oom_score_adj'))::integer FROM pm),
	'postmaster: oom_score_adj equals /proc/PID/oom_score_adj');

-- Relations that hold within one read of one file, for every process.
SELECT is((SELECT count(*) FROM every WHERE rss_anon + rss_file + rss_shmem <> rss),
	0::bigint, 'every process: rss_anon + rss_file + rss_shmem = rss (one status read)');
SELECT is((SELECT count(*) FROM every
	       WHERE NOT pss_anon + pss_file + pss_shmem BETWEEN pss - 3072 AND pss),
	0::bigint, 'every process: pss_anon + pss_file + pss_shmem = pss, within kB rounding');
SELECT is((SELECT count(*) FROM every
	       WHERE overhead IS NULL OR rss IS NULL OR pss IS NULL OR page_tables IS NULL
	          OR oom_score IS NULL OR oom_score_adj IS NULL OR private_anon IS NULL),
	0::bigint, 'every process: no figure missing on this kernel');

-- The pagemap method against smaps_rollup, for the same processes, in the
-- same read (pagemap is read just before smaps_rollup). Pss_Anon counts an
-- exclusive page whole and a shared one in part, so
--   private_anon <= pss_anon <= private_anon + cow_shared_anon
-- exactly, at one instant; the 64 kB slack covers what a process may
-- allocate between the two reads (the cluster is idle but for this one).
SELECT is((SELECT array_agg(backend_type) FROM every
	       WHERE private_anon > pss_anon + 65536),
	NULL, 'every process: private_anon <= Pss_Anon');
SELECT is((SELECT array_agg(backend_type) FROM every
	       WHERE pss_anon > private_anon + cow_shared_anon + 65536),
	NULL, 'every process: Pss_Anon <= private_anon + cow_shared_anon');
-- status RssAnon counts the same anonymous pages from a counter: the two
-- agree up to the zero page (mapped, not anonymous) and the 64 kB slack.
SELECT is((SELECT array_agg(backend_type) FROM every
	       WHERE NOT pg_temp.near(private_anon + cow_shared_anon, rss_anon, 0.02, 65536)),
	NULL, 'every process: private_anon + cow_shared_anon = RssAnon, within 2% + 64 kB');
SELECT is((SELECT array_agg(backend_type) FROM every
	       WHERE overhead - kernel > pss_anon + page_tables + 65536),
	NULL, 'every process: the exact overhead, the kernel''s share aside, is at most the Pss_Anon + VmPTE estimate');
SELECT ok((SELECT overhead_method = 'pagemap+kernel' AND overhead = private_anon + page_tables + kernel FROM me),
	'own backend: overhead = private_anon + page_tables + kernel, by pagemap+kernel');
SELECT ok((SELECT cow_shared_anon > 0 FROM me),
	'own backend: some anonymous memory is still shared copy-on-write with the postmaster');
SELECT ok((SELECT rss_anon + page_tables + kernel - overhead >= cow_shared_anon - 65536 FROM me),
	'own backend: RssAnon + VmPTE over-counts by the copy-on-write shared pages');

SELECT * FROM finish();
ROLLBACK;
