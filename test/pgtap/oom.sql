-- pg_procmem_oom: what the kernel's oom_score means, and what killing a
-- process does; the oom_postmaster advice on a server with memory to spare.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(5);

-- Linux >= 5.9: oom_score = (1000 + share * 1000 / totalpages) * 2 / 3 in
-- integers; the share (per mille) of a score s is at most (3s + 2) / 2 - 1000
CREATE TEMP TABLE o AS SELECT o.*, s.kernel_version_num FROM pg_procmem_oom o, pg_procmem_system s;
SELECT is((SELECT count(*) FROM o WHERE kernel_version_num >= 50009 AND oom_score_adj >= 0 AND badness_pct < 0),
	0::bigint, 'no process at oom_score_adj >= 0 has a negative badness_pct');
SELECT CASE WHEN NOT EXISTS (SELECT FROM o WHERE oom_score = 666 AND kernel_version_num >= 50009)
	THEN skip('no process with oom_score 666 here', 1)
	ELSE is((SELECT DISTINCT badness_pct FROM o WHERE oom_score = 666), 0.0,
	        'a process with oom_score 666 has badness_pct 0.0') END;

-- a connection on its way out has no PGPROC, but a signal that kills it
-- still makes the postmaster reinitialize (procmem_test makes it linger)
CREATE TEMP TABLE leaving AS SELECT pg_temp.leaving_connection('leaving', 3000) AS pid;
CREATE FUNCTION pg_temp.if_killed_unpgproc(p integer) RETURNS text LANGUAGE plpgsql AS $$
DECLARE t text;
BEGIN
	FOR i IN 1..40 LOOP
		SELECT o.if_killed INTO t FROM pg_procmem_oom o JOIN pg_procmem_processes() pr USING (pid)
		WHERE o.pid = p AND pr.backend_type IS NOT NULL;
		EXIT WHEN t IS NOT NULL;
		PERFORM pg_sleep(0.05);
	END LOOP;
	RETURN t;
END $$;
SELECT is(pg_temp.if_killed_unpgproc((SELECT pid FROM leaving)),
	'every session ends',
	'an exiting connection without its PGPROC: killing it is a crash restart');
SELECT is((SELECT if_killed FROM pg_procmem_oom WHERE backend_type = 'logger'),
	'restarted alone', 'the logger is restarted alone');

-- memory to spare: an unprotected postmaster is a risk (warning), not an
-- emergency, even where its oom_score is the highest; one protected
-- (oom_score_adj -1000, read here from /proc) has no finding
CREATE TEMP TABLE pm_adj AS
	SELECT trim(pg_read_file('/proc/' || split_part(pg_read_file('postmaster.pid'), E'\n', 1) || '/oom_score_adj'))::integer
		AS adj;
SELECT CASE WHEN (SELECT mem_available * 10 < mem_total FROM pg_procmem_system)
	         OR (SELECT cgroup_tightest_limit > 0 AND cgroup_tightest_room * 10 < cgroup_tightest_limit
	             FROM pg_procmem_machine_info())
	THEN skip('memory is short on this machine now', 1)
	ELSE is((SELECT array_agg(severity) FROM pg_procmem_advice WHERE check_name = 'oom_postmaster'),
	        CASE WHEN adj > -1000 THEN ARRAY['warning'] END,
	        format('oom_postmaster, memory to spare, the postmaster at oom_score_adj %s: %s', adj,
	               CASE WHEN adj > -1000 THEN 'one finding, a warning' ELSE 'none' END)) END
FROM pm_adj;

SELECT * FROM finish();
ROLLBACK;
