-- The memory history's pressure, reused, oom_protected and DSM columns: appended to the views,
-- and consistent with the process rows they count. A sample reuses the
-- figures of a process that slept since the one before when no process of
-- the server started or exited in between and no page moved on the machine
-- (src/rules/reuse.h): the test waits, connected, for two samples of a quiet
-- server (up to 25 s at the default interval of 10 s), and skips what needs
-- reused figures when a busy machine gave none.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(17);

-- the trailing columns of a view, after its first n
CREATE FUNCTION pg_temp.columns_after(v regclass, n integer) RETURNS text LANGUAGE sql AS $$
	SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum)
	FROM pg_attribute WHERE attrelid = v AND attnum > n AND NOT attisdropped $$;

SELECT is(pg_temp.columns_after('pg_procmem_history', 28),
	'reused boolean, oom_protected boolean, dsm bigint, group_dsm bigint',
	'pg_procmem_history ends with reused, oom_protected and the DSM figures');
SELECT is(pg_temp.columns_after('pg_procmem_history_system', 16),
	'pressure text, pressure_source text, pressure_used bigint, pressure_limit bigint, reused integer, '
	'dsm_segments integer, dsm_mapped bigint, dsm_shared_segments integer, dsm_shared bigint, '
	'dsm_leftover_segments integer, dsm_leftover bigint, dsm_leftover_names text[], '
	'psi_some_avg10 double precision, psi_full_avg10 double precision, '
	'cgroup_psi_some_avg10 double precision, cgroup_psi_full_avg10 double precision, psi_unavailable text',
	'pg_procmem_history_system ends with the pressure columns, reused, the DSM figures and the stall');

-- Waits, from another session (this transaction's reads of the history all
-- stop at its first, and its CREATE EXTENSION is not seen there), for a
-- sample that reused figures and whose previous sample is in the ring; its
-- number, or NULL after timeout_s.
CREATE FUNCTION pg_temp.sample_with_reuse(timeout_s integer) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	s bigint;
	cols text := (SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum)
				  FROM pg_attribute WHERE attrelid = 'pg_procmem_history_system'::regclass AND attnum > 0);
BEGIN
	PERFORM dblink_connect('watcher', pg_temp.connstr());
	PERFORM dblink_exec('watcher', $q$CREATE FUNCTION pg_temp.samples(boolean) RETURNS SETOF record
		AS '$libdir/pg_procmem', 'pg_procmem_history_system' LANGUAGE C STRICT$q$);
	FOR i IN 1..timeout_s * 2 LOOP
		SELECT t.s INTO s FROM dblink('watcher', format(
			'SELECT max(sample) FROM pg_temp.samples(false) AS h(%1$s)
			 WHERE reused > 0 AND sample > (SELECT min(sample) FROM pg_temp.samples(false) AS h(%1$s))',
			cols)) AS t(s bigint);
		EXIT WHEN s IS NOT NULL;
		PERFORM pg_sleep(0.5);
	END LOOP;
	PERFORM dblink_disconnect('watcher');
	RETURN s;
END $$;
CREATE TEMP TABLE reuse AS SELECT pg_temp.sample_with_reuse(25) AS sample;

-- one read of the ring for the rest: the samples whose process rows are all kept
CREATE TEMP TABLE s AS SELECT * FROM pg_procmem_history_system;
CREATE TEMP TABLE h AS SELECT * FROM pg_procmem_history;
CREATE TEMP TABLE whole AS
SELECT s.sample, s.processes, s.reused, count(h.pid) AS rows, count(h.pid) FILTER (WHERE h.reused) AS reused_rows
FROM s LEFT JOIN h USING (sample)
GROUP BY s.sample, s.processes, s.reused
HAVING count(h.pid) = s.processes;

SELECT ok((SELECT count(*) FROM whole) > 0, 'the history holds whole samples');
SELECT is((SELECT count(*) FROM whole WHERE reused IS DISTINCT FROM reused_rows), 0::bigint,
	'each sample''s reused counts its process rows that were reused');
SELECT is((SELECT count(*) FROM s WHERE pressure IS NOT NULL AND pressure_source IS NULL), 0::bigint,
	'a sample under pressure names its source');
SELECT CASE WHEN current_setting('pg_procmem.pressure_watch_interval') = '0'
	THEN skip('the pressure watch is off', 1)
	ELSE is((SELECT count(*) FROM s WHERE sampled_at >= pg_postmaster_start_time()
			 AND (pressure_used IS NULL OR pressure_limit IS NULL)), 0::bigint,
			'every sample of this run has the tightest source''s use and limit') END;

-- reused figures are the previous sample's, to the byte
SELECT CASE WHEN (SELECT sample FROM reuse) IS NULL
	THEN skip('no sample reused figures within 25 s (a busy server, or pages moved on the machine)', 3)
	ELSE collect_tap(
		ok((SELECT reused > 0 FROM whole WHERE sample = (SELECT sample FROM reuse)),
		   'a sample of a quiet server reused figures'),
		is((SELECT count(*) FROM h JOIN reuse USING (sample) WHERE h.reused),
		   (SELECT reused::bigint FROM s JOIN reuse USING (sample)),
		   '... and its process rows say which'),
		is((SELECT count(*) FROM h JOIN reuse USING (sample)
			WHERE h.reused AND NOT EXISTS (
				SELECT FROM h AS b
				WHERE b.sample = h.sample - 1 AND b.pid = h.pid
				  AND (b.overhead, b.private_anon, b.page_tables, b.swap)
					  IS NOT DISTINCT FROM (h.overhead, h.private_anon, h.page_tables, h.swap))),
		   0::bigint, '... each with the figures of the same process at the sample before (but rss, read again where page cache was reclaimed)')) END;

-- whom a crash row names (pg_procmem_held_elsewhere: true names the group):
-- backend_type, the victim's overhead, pid, same group, the group's
-- processes, largest pid, overhead, the cgroup's room
SELECT is(pg_procmem_held_elsewhere('client backend', 345 << 20, 7, true, 101, 7, 698::bigint << 20, NULL),
	false, 'crash row: a pool''s connection running a hog among 100 small ones is named, though they held as much');
SELECT is(pg_procmem_held_elsewhere('client backend', 95 << 20, 7, true, 7, 8, 627::bigint << 20, NULL),
	true, 'crash row: one of 7 sessions like it that held the memory together: the group');
SELECT is(pg_procmem_held_elsewhere('client backend', 500 << 20, 7, true, 101, 7, 698::bigint << 20, NULL),
	false, 'crash row: a victim that held more than the others together is named');
SELECT is(pg_procmem_held_elsewhere('checkpointer', 3 << 20, 7, false, 7, 8, 627::bigint << 20, NULL),
	true, 'crash row: an auxiliary process held little of its own: the group');

-- The DSM figures (src/rules/dsm_groups.h): each segment counted once, a
-- group's own and the shared ones apart, within what the processes map.
SELECT is((SELECT count(*) FROM s WHERE dsm_segments IS NULL OR NOT (dsm_mapped >= dsm_shared AND dsm_shared >= 0
			AND dsm_leftover >= 0 AND dsm_segments >= dsm_shared_segments)), 0::bigint,
	'every sample has its DSM totals, the shared ones among those mapped');
SELECT is((SELECT count(*) FROM (SELECT sample, COALESCE(leader_pid, pid) FROM h GROUP BY 1, 2
			HAVING count(DISTINCT group_dsm) > 1 OR bool_or(group_dsm IS NULL)) AS x), 0::bigint,
	'every member of a parallel group has its group''s DSM figure');
SELECT is((SELECT count(*) FROM s JOIN (SELECT sample, max(dsm) AS most FROM h GROUP BY sample) AS m USING (sample)
			WHERE m.most > s.dsm_mapped), 0::bigint,
	'no process maps more DSM than the server''s processes map together');
SELECT is((SELECT count(*) FROM s JOIN (SELECT sample, sum(group_dsm) AS own
			FROM (SELECT DISTINCT sample, COALESCE(leader_pid, pid), group_dsm FROM h) AS g GROUP BY sample) AS o
			USING (sample) JOIN whole USING (sample)
			WHERE o.own + s.dsm_shared > s.dsm_mapped), 0::bigint,
	'the groups'' own DSM and the shared DSM are apart: together within what is mapped');

SELECT * FROM finish();
ROLLBACK;
