-- Every server process now, for tools that scrape every few seconds: as the
-- sampler's newest sample saw it where pg_procmem is preloaded (no /proc
-- read at all), else read live. The newest sample's rows come from the
-- history's ring without copying the rest of it.
CREATE FUNCTION pg_procmem_history_latest(
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
	OUT oom_score integer,
	OUT work_mem bigint,
	OUT work_mem_source text,
	OUT hash_mem_multiplier double precision,
	OUT hash_mem_multiplier_source text,
	OUT temp_buffers bigint,
	OUT temp_buffers_source text,
	OUT maintenance_work_mem bigint,
	OUT maintenance_work_mem_source text,
	OUT reused boolean,
	OUT oom_protected boolean,
	OUT dsm bigint,
	OUT group_dsm bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_history_latest'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_procmem_history_latest(boolean) IS
'the memory history''s newest sample, if this run of the server took it and it holds every process (not cut to fit the ring nor overwritten while read): its processes, as pg_procmem_history_processes shows them';

-- Whether a sample taken at sampled_at may stand for the processes at time
-- at: sampling is on (an interval above 0), and the sample is at most two
-- intervals and 5 s old (one sample late, and a slow one), and not from
-- more than 5 s ahead (the wall clock stepped back since: its age is not
-- known). No sample: false.
CREATE FUNCTION pg_procmem_sample_fresh(sampled_at timestamptz, sample_interval interval,
										at timestamptz)
RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
RETURN COALESCE(sample_interval OPERATOR(pg_catalog.>) '0'::interval
				AND sampled_at OPERATOR(pg_catalog.>=)
					(at OPERATOR(pg_catalog.-) ((2 OPERATOR(pg_catalog.*) sample_interval)
												OPERATOR(pg_catalog.+) '5 s'::interval))
				AND sampled_at OPERATOR(pg_catalog.<=) (at OPERATOR(pg_catalog.+) '5 s'::interval),
				false);

COMMENT ON FUNCTION pg_procmem_sample_fresh(timestamptz, interval, timestamptz) IS
'internal: whether a sample of the memory history is recent enough to stand for now (pg_procmem_latest)';

-- The sample's rows where it is fresh, else pg_procmem_backends' (one or
-- the other: each branch is gated by the same one-time test, so the live
-- read does not run when the sample serves, and the sample costs one
-- sample's copy). read_at: the sample's time, or the statement's.
CREATE VIEW pg_procmem_latest AS
WITH newest AS MATERIALIZED (
	SELECT * FROM @extschema@.pg_procmem_history_latest(true)
), fresh AS MATERIALIZED (
	-- after the scan: the setting is the library's own once it is loaded
	SELECT @extschema@.pg_procmem_sample_fresh(pg_catalog.max(n.sampled_at),
			   pg_catalog.current_setting('pg_procmem.sample_interval', true)::interval,
			   pg_catalog.statement_timestamp()) AS fresh
	FROM newest AS n
)
SELECT s.pid,
	   s.backend_type,
	   s.datname,
	   s.usename,
	   s.application_name,
	   s.state,
	   s.leader_pid,
	   s.overhead,
	   s.private_anon,
	   s.page_tables,
	   s.rss,
	   s.swap,
	   s.context_bytes,
	   s.oom_score,
	   s.oom_protected,
	   s.dsm,
	   s.group_dsm,
	   s.sampled_at AS read_at,
	   'sample'::text AS source
FROM newest AS s
WHERE (SELECT f.fresh FROM fresh AS f)
UNION ALL
SELECT b.pid,
	   b.backend_type,
	   -- name's collation is "C": the sample's, as every text's
	   b.datname::text COLLATE pg_catalog."default",
	   b.usename::text COLLATE pg_catalog."default",
	   b.application_name,
	   b.state,
	   b.leader_pid,
	   b.overhead,
	   b.private_anon,
	   b.page_tables,
	   b.rss,
	   b.swap,
	   b.context_bytes,
	   b.oom_score,
	   b.oom_score_adj OPERATOR(pg_catalog.=) -1000,
	   b.dsm,
	   b.group_dsm,
	   pg_catalog.statement_timestamp(),
	   'live'::text
FROM @extschema@.pg_procmem_backends AS b
WHERE NOT (SELECT f.fresh FROM fresh AS f);

COMMENT ON VIEW pg_procmem_latest IS
'every server process as the memory history''s newest sample saw it when that is recent, else read now: the cheap read for monitoring';

REVOKE ALL ON FUNCTION pg_procmem_history_latest(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_sample_fresh(timestamptz, interval, timestamptz) FROM PUBLIC;
REVOKE ALL ON pg_procmem_latest FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_procmem_history_latest(boolean),
	pg_procmem_sample_fresh(timestamptz, interval, timestamptz) TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_latest TO pg_read_all_stats;
