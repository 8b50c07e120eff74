-- Every backend's memory-context totals, as the backends published them
-- (needs pg_procmem in shared_preload_libraries; with missing_ok, no rows
-- without it instead of an ERROR).
CREATE FUNCTION pg_procmem_backend_contexts(
	IN missing_ok boolean DEFAULT false,
	OUT pid integer,
	OUT backend_start timestamptz,
	OUT published_at timestamptz,
	OUT publications integer,
	OUT context_bytes bigint,
	OUT context_free_bytes bigint,
	OUT context_used_bytes bigint,
	OUT contexts integer,
	OUT context_peak_bytes bigint,
	OUT peak_at timestamptz,
	OUT largest_contexts text[],
	OUT largest_idents text[],
	OUT largest_bytes bigint[],
	OUT peak_largest_contexts text[],
	OUT peak_largest_bytes bigint[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_backend_contexts'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 100;

-- The caller's own memory-context totals, live (the sum
-- pg_backend_memory_contexts shows, which is superuser-only before 15).
CREATE FUNCTION pg_procmem_own_contexts(
	OUT context_bytes bigint,
	OUT context_free_bytes bigint,
	OUT contexts integer)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_procmem_own_contexts'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

-- Every backend's memory contexts: totals, peak, largest contexts, and
-- how old the figures are.
CREATE VIEW pg_procmem_contexts AS
SELECT c.pid,
	   a.backend_type,
	   a.datname,
	   a.usename,
	   a.application_name,
	   a.state,
	   c.context_bytes,
	   c.context_free_bytes,
	   c.context_used_bytes,
	   c.contexts,
	   c.context_peak_bytes,
	   c.peak_at,
	   c.peak_largest_contexts,
	   c.peak_largest_bytes,
	   c.largest_contexts,
	   c.largest_idents,
	   c.largest_bytes,
	   c.published_at,
	   pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) c.published_at AS age,
	   c.publications,
	   c.backend_start
FROM @extschema@.pg_procmem_backend_contexts(false) AS c
	 LEFT JOIN pg_catalog.pg_stat_activity AS a
	 ON a.pid OPERATOR(pg_catalog.=) c.pid;

COMMENT ON VIEW pg_procmem_contexts IS
'every backend''s memory-context totals and peak, as last published (needs shared_preload_libraries)';

REVOKE ALL ON FUNCTION pg_procmem_backend_contexts(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_own_contexts() FROM PUBLIC;
REVOKE ALL ON pg_procmem_contexts FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_procmem_backend_contexts(boolean) TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_own_contexts() TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_contexts TO pg_read_all_stats;
