-- pg_procmem_latest on a preloaded server: the rows of the history's newest
-- sample while it is fresh, the same as pg_procmem_history_latest() and
-- the newest sample of pg_procmem_history, without running the live read;
-- then, with this transaction's reads still held at that sample (every read
-- of one transaction stops at the same one) and 26 s later, stale at the
-- default interval of 10 s (two intervals and 5 s), a live read instead.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
SELECT plan(19);

-- How many times the plan of a query over pg_procmem_latest ran the
-- function fn (EXPLAIN ANALYZE: a node never executed ran 0 times).
CREATE FUNCTION pg_temp.loops(query text, fn text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE plan jsonb;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || query INTO plan;
	RETURN (SELECT sum((n ->> 'Actual Loops')::bigint)
			FROM jsonb_path_query(plan, 'strict $.**') AS n
			WHERE jsonb_typeof(n) = 'object' AND n ->> 'Function Name' = fn);
END $$;

-- one read of each, all held at the same sample
CREATE TEMP TABLE l AS SELECT * FROM pg_procmem_latest;
CREATE TEMP TABLE hl AS SELECT * FROM pg_procmem_history_latest();
CREATE TEMP TABLE newest AS
SELECT * FROM pg_procmem_history WHERE sample = (SELECT max(sample) FROM pg_procmem_history_system);
CREATE TEMP TABLE run AS
SELECT sample, run_started FROM pg_procmem_history_system ORDER BY sample DESC LIMIT 1;
CREATE TEMP TABLE live AS SELECT * FROM pg_procmem_backends;

SELECT is(current_setting('pg_procmem.sample_interval'), '10s', 'the default sample interval');
SELECT ok((SELECT count(*) > 3 FROM l), 'pg_procmem_latest has rows');
SELECT is((SELECT array_agg(DISTINCT source) FROM l), ARRAY['sample'],
	'on a preloaded server, from the sample');
SELECT ok((SELECT pg_procmem_sample_fresh(max(read_at), '10s', statement_timestamp()) FROM l),
	'... which is fresh');
SELECT is((SELECT count(*) FROM l WHERE read_at IS DISTINCT FROM (SELECT max(sampled_at) FROM newest)),
	0::bigint, '... read_at is the newest sample''s time');
SELECT is((SELECT array_agg(DISTINCT sample) FROM hl), ARRAY[(SELECT sample FROM run)],
	'pg_procmem_history_latest() holds the newest sample of pg_procmem_history_system');
SELECT ok((SELECT run.run_started = max(h.run_started) FROM run, pg_procmem_history_system AS h GROUP BY run.run_started),
	'... of this run of the server');
SELECT set_eq('SELECT pid FROM l', 'SELECT pid FROM newest',
	'the same processes as the newest sample of pg_procmem_history');
SELECT results_eq(
	'SELECT pid, backend_type, datname, usename, application_name, state, leader_pid, overhead, private_anon,
	        page_tables, rss, swap, context_bytes, oom_score, oom_protected, read_at FROM l ORDER BY pid',
	'SELECT pid, backend_type, datname, usename, application_name, state, leader_pid, overhead, private_anon,
	        page_tables, rss, swap, context_bytes, oom_score, oom_protected, sampled_at FROM newest ORDER BY pid',
	'... with the same figures');
SELECT results_eq('SELECT * FROM hl ORDER BY pid', 'SELECT * FROM newest ORDER BY pid',
	'pg_procmem_history_latest() is the newest sample''s rows of pg_procmem_history, every column');
SELECT is((SELECT count(*) FROM l WHERE overhead IS NULL OR rss IS NULL OR oom_protected IS NULL), 0::bigint,
	'every process''s overhead, rss and oom_protected were read');

-- the server's processes: every one still alive is the live read's, of the
-- same backend type and protection from the OOM killer; the others exited
SELECT is((SELECT count(*) FROM l LEFT JOIN live USING (pid)
		   WHERE live.pid IS NULL AND pg_stat_file('/proc/' || l.pid, true) IS NOT NULL),
	0::bigint, 'its pids are the server''s processes (or exited since the sample)');
SELECT is((SELECT count(*) FROM l JOIN live USING (pid)
		   WHERE l.backend_type IS DISTINCT FROM live.backend_type
			  OR l.oom_protected IS DISTINCT FROM (live.oom_score_adj = -1000)),
	0::bigint, '... named as pg_procmem_backends names them, protected alike');
SELECT ok((SELECT pg_catalog.pg_postmaster_start_time() IS NOT NULL
		   AND bool_and(b.pid IN (SELECT pid FROM l)) FROM live AS b
		   WHERE b.backend_type NOT IN ('client backend', 'autovacuum worker', 'parallel worker')
		     AND b.backend_start < (SELECT min(read_at) FROM l)),
	'the server''s own processes started before the sample are all in it');

-- the sample served: the live read never ran
SELECT is(pg_temp.loops('SELECT * FROM pg_procmem_latest', 'pg_procmem_processes'), 0::bigint,
	'with a fresh sample, the live read (pg_procmem_processes) never runs');

-- stale: this transaction still holds the sample read above
SELECT pg_sleep(26);
CREATE TEMP TABLE stale AS SELECT * FROM pg_procmem_latest;
SELECT is((SELECT array_agg(DISTINCT source) FROM stale), ARRAY['live'],
	'26 s later, the same sample is stale: a live read instead');
SELECT ok((SELECT count(DISTINCT read_at) = 1 AND min(read_at) >= now() + '26 s'::interval
				  AND pg_backend_pid() IN (SELECT pid FROM stale) FROM stale),
	'... read at its statement''s start, the caller among its processes');
SELECT is(pg_temp.loops('SELECT * FROM pg_procmem_latest', 'pg_procmem_processes'), 1::bigint,
	'... which runs pg_procmem_processes once');

-- the rule: two intervals and 5 s, not from ahead, sampling on
SELECT is(ARRAY[pg_procmem_sample_fresh(t - interval '25 s', '10s', t), pg_procmem_sample_fresh(t - interval '25.001 s', '10s', t),
				pg_procmem_sample_fresh(t + interval '5 s', '10s', t), pg_procmem_sample_fresh(t + interval '5.001 s', '10s', t),
				pg_procmem_sample_fresh(t, '0', t), pg_procmem_sample_fresh(NULL, '10s', t),
				pg_procmem_sample_fresh(t - interval '125 s', '1min', t), pg_procmem_sample_fresh(t - interval '126 s', '1min', t)],
	ARRAY[true, false, true, false, false, false, true, false],
	'pg_procmem_sample_fresh: at most two intervals and 5 s old, at most 5 s ahead, sampling on')
FROM (VALUES (statement_timestamp())) AS v(t);

SELECT * FROM finish();
ROLLBACK;
