-- The memory history (needs pg_procmem in shared_preload_libraries): what
-- the sampler saw at every sample, oldest first, kept in shared memory and
-- across restarts in a file in the data directory. sample numbers the
-- samples in the order they were taken (sampled_at is the wall clock's,
-- which can step back). All the reads of one transaction stop at the same
-- sample. missing_ok: no rows, instead of an ERROR, when the library was
-- not preloaded.
CREATE FUNCTION pg_procmem_history_processes(
	IN missing_ok boolean DEFAULT false,
	OUT sample bigint,
	OUT sampled_at timestamptz,
	OUT pid integer,
	OUT backend_type text,
	OUT datname text,
	OUT usename text,
	OUT application_name text,
	OUT state text,
	OUT query_id bigint,
	OUT query text,
	OUT leader_pid integer,
	OUT backend_start timestamptz,
	OUT query_start timestamptz,
	OUT overhead bigint,
	OUT private_anon bigint,
	OUT page_tables bigint,
	OUT rss bigint,
	OUT swap bigint,
	OUT context_bytes bigint,
	OUT oom_score integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_history_processes'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_procmem_history_processes(boolean) IS
'the memory history: every process at every sample (what pg_procmem_history shows)';

CREATE FUNCTION pg_procmem_history_system_samples(
	IN missing_ok boolean DEFAULT false,
	OUT sample bigint,
	OUT sampled_at timestamptz,
	OUT run_started timestamptz,
	OUT processes integer,
	OUT mem_total bigint,
	OUT mem_available bigint,
	OUT swap_used bigint,
	OUT page_tables bigint,
	OUT hugepages_total bigint,
	OUT hugepages_free bigint,
	OUT cgroup_usage bigint,
	OUT cgroup_limit bigint,
	OUT cgroup_oom_kills bigint,
	OUT connections bigint,
	OUT sample_ms double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_history_system'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_procmem_history_system_samples(boolean) IS
'the memory history: the machine and the cgroup at every sample (what pg_procmem_history_system shows)';

CREATE FUNCTION pg_procmem_crash_log(
	IN missing_ok boolean DEFAULT false,
	OUT number integer,
	OUT crashed_at timestamptz,
	OUT how_known text,
	OUT killed_pid integer,
	OUT guessed_pid integer,
	OUT signal integer,
	OUT exit_code integer,
	OUT logged text,
	OUT cgroup_oom_kills bigint,
	OUT last_sample_at timestamptz,
	OUT seconds_since_sample double precision,
	OUT last_seen_at timestamptz,
	OUT backend_type text,
	OUT query text,
	OUT query_id bigint,
	OUT query_start timestamptz,
	OUT overhead bigint,
	OUT context_bytes bigint,
	OUT page_tables bigint,
	OUT oom_score integer,
	OUT top_pids integer[],
	OUT top_backend_types text[],
	OUT top_overheads bigint[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_crash_log'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_procmem_crash_log(boolean) IS
'the memory history: every crash restart it saw (what pg_procmem_crashes shows)';

-- One row per process per sample: who it was, what it ran, what it cost.
CREATE VIEW pg_procmem_history AS
SELECT * FROM @extschema@.pg_procmem_history_processes(false);

COMMENT ON VIEW pg_procmem_history IS
'every server process at every sample of the memory history: who, which query, what it cost';

-- One row per sample: the machine and the server's cgroup.
CREATE VIEW pg_procmem_history_system AS
SELECT * FROM @extschema@.pg_procmem_history_system_samples(false);

COMMENT ON VIEW pg_procmem_history_system IS
'the machine and the server''s memory cgroup at every sample of the memory history';

-- One row per crash restart the history saw (and per run that ended
-- without a clean stop): who was killed, how that is known, and what the
-- last sample before it showed. killed_pid is set only when the postmaster
-- logged it; guessed_pid (the highest oom_score at the last sample) is a
-- guess and says so. backend_type .. oom_score describe that process at its
-- last sample (last_seen_at). number counts the rows since the history
-- file was created (for a counter: the highest is how many there were).
-- summary is the row in one terminal line (at most 56 columns): who,
-- what it cost and the start of its query.
CREATE VIEW pg_procmem_crashes AS
SELECT c.*, @extschema@.pg_procmem_clip(t.line, 56) AS summary
FROM @extschema@.pg_procmem_crash_log(false) AS c,
	 LATERAL (SELECT CASE WHEN c.killed_pid IS NULL AND c.guessed_pid IS NULL
						  THEN c.how_known
						  ELSE pg_catalog.concat_ws(', ',
								   CASE WHEN c.killed_pid IS NULL THEN 'guess: pid ' ELSE 'pid ' END
									   OPERATOR(pg_catalog.||) COALESCE(c.killed_pid, c.guessed_pid),
								   c.backend_type, pg_catalog.pg_size_pretty(c.overhead))
							   OPERATOR(pg_catalog.||)
							   COALESCE(': ' OPERATOR(pg_catalog.||) c.query, '') END AS line) AS t;

COMMENT ON VIEW pg_procmem_crashes IS
'crash restarts seen by the memory history: the killed process, how that is known, and the memory before it';

-- Memory by query, by sampling: what the backends running each query_id
-- held while they ran it (active samples only), largest first. first_seen
-- and last_seen are the times of its first and last samples, and query the
-- text of the last (by sample number, not by a clock that may have stepped).
-- Its memory is work_mem's, whatever the history holds: the rows are read
-- once into a CTE (a tuplestore), and the first and last of each query_id
-- found by sorts (DISTINCT ON), which spill past work_mem, not by arrays.
CREATE VIEW pg_procmem_query_memory AS
WITH h AS MATERIALIZED (
	SELECT h.query_id, h.sample, h.sampled_at, h.pid, h.overhead, h.context_bytes, h.query
	FROM @extschema@.pg_procmem_history AS h
	WHERE h.state OPERATOR(pg_catalog.=) 'active' AND h.query_id IS NOT NULL),
a AS (
	SELECT h.query_id,
		   pg_catalog.count(*) AS samples,
		   pg_catalog.count(DISTINCT h.pid) AS backends,
		   pg_catalog.max(h.overhead) AS max_overhead,
		   pg_catalog.avg(h.overhead)::bigint AS mean_overhead,
		   pg_catalog.max(h.context_bytes) AS max_context_bytes,
		   pg_catalog.avg(h.context_bytes)::bigint AS mean_context_bytes
	FROM h
	GROUP BY h.query_id),
f AS (
	SELECT DISTINCT ON (h.query_id) h.query_id, h.sampled_at
	FROM h
	ORDER BY h.query_id, h.sample),
l AS (
	SELECT DISTINCT ON (h.query_id) h.query_id, h.sampled_at, h.query
	FROM h
	ORDER BY h.query_id, h.sample DESC)
SELECT a.query_id, a.samples, a.backends, a.max_overhead, a.mean_overhead, a.max_context_bytes,
	   a.mean_context_bytes, f.sampled_at AS first_seen, l.sampled_at AS last_seen, l.query
FROM a
	 JOIN f ON f.query_id OPERATOR(pg_catalog.=) a.query_id
	 JOIN l ON l.query_id OPERATOR(pg_catalog.=) a.query_id
ORDER BY a.max_overhead DESC NULLS LAST, a.query_id;

COMMENT ON VIEW pg_procmem_query_memory IS
'memory by query_id, from the history''s samples of the backends running it';

REVOKE ALL ON FUNCTION pg_procmem_history_processes(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_history_system_samples(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_crash_log(boolean) FROM PUBLIC;
REVOKE ALL ON pg_procmem_history FROM PUBLIC;
REVOKE ALL ON pg_procmem_history_system FROM PUBLIC;
REVOKE ALL ON pg_procmem_crashes FROM PUBLIC;
REVOKE ALL ON pg_procmem_query_memory FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_procmem_history_processes(boolean) TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_history_system_samples(boolean) TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_crash_log(boolean) TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_history, pg_procmem_history_system, pg_procmem_crashes,
	pg_procmem_query_memory TO pg_read_all_stats;
