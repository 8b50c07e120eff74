/* pg_procmem--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION pg_procmem" to load this file. \quit

-- Every reference below is schema-qualified: objects are resolved at
-- CREATE EXTENSION time, and the schema being installed into may hold
-- look-alike objects.

-- with_pss also reads /proc/PID/smaps_rollup (the pss* and private columns
-- are NULL without it): that walks every page-table entry of the process,
-- shared_buffers included, so it costs milliseconds per backend that has
-- touched a large buffer pool without huge pages.
CREATE FUNCTION pg_procmem_processes(
	IN with_pss boolean DEFAULT false,
	OUT pid integer,
	OUT backend_type text,
	OUT overhead bigint,
	OUT overhead_method text,
	OUT private_anon bigint,
	OUT cow_shared_anon bigint,
	OUT page_tables bigint,
	OUT rss bigint,
	OUT rss_anon bigint,
	OUT rss_file bigint,
	OUT rss_shmem bigint,
	OUT pss bigint,
	OUT pss_anon bigint,
	OUT pss_file bigint,
	OUT pss_shmem bigint,
	OUT private bigint,
	OUT swap bigint,
	OUT swap_pss bigint,
	OUT hugetlb bigint,
	OUT peak_rss bigint,
	OUT oom_score integer,
	OUT oom_score_adj integer,
	OUT unreadable text[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_processes'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 100;

COMMENT ON FUNCTION pg_procmem_processes(boolean) IS
'memory of every live process of this server, read from /proc';

CREATE FUNCTION pg_procmem_process(
	IN pid integer,
	IN with_pss boolean DEFAULT false,
	OUT pid integer,
	OUT backend_type text,
	OUT overhead bigint,
	OUT overhead_method text,
	OUT private_anon bigint,
	OUT cow_shared_anon bigint,
	OUT page_tables bigint,
	OUT rss bigint,
	OUT rss_anon bigint,
	OUT rss_file bigint,
	OUT rss_shmem bigint,
	OUT pss bigint,
	OUT pss_anon bigint,
	OUT pss_file bigint,
	OUT pss_shmem bigint,
	OUT private bigint,
	OUT swap bigint,
	OUT swap_pss bigint,
	OUT hugetlb bigint,
	OUT peak_rss bigint,
	OUT oom_score integer,
	OUT oom_score_adj integer,
	OUT unreadable text[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_process'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 1;

COMMENT ON FUNCTION pg_procmem_process(integer, boolean) IS
'memory of one process of this server; ERROR for a pid that is not one';

-- The headline: one row per live server process, with who it is from
-- pg_stat_activity (LEFT JOIN: the postmaster and the logger have no row
-- there) and, for the calling backend, PostgreSQL's own allocation totals.
-- Cheap whatever shared_buffers is: it never reads smaps_rollup.
CREATE VIEW pg_procmem_backends AS
SELECT p.pid,
	   COALESCE(a.backend_type, p.backend_type) AS backend_type,
	   a.datname,
	   a.usename,
	   a.application_name,
	   a.client_addr,
	   a.state,
	   p.overhead,
	   p.overhead_method,
	   p.private_anon,
	   p.cow_shared_anon,
	   p.page_tables,
	   p.rss,
	   p.rss_anon,
	   p.rss_file,
	   p.rss_shmem,
	   p.swap,
	   p.hugetlb,
	   p.peak_rss,
	   p.oom_score,
	   p.oom_score_adj,
	   c.context_bytes,
	   c.context_free_bytes,
	   p.unreadable,
	   a.backend_start,
	   a.state_change,
	   a.wait_event_type,
	   a.wait_event,
	   a.query_start,
	   a.leader_pid,
	   a.query_id,
	   a.query
FROM @extschema@.pg_procmem_processes(false) AS p
	 LEFT JOIN pg_catalog.pg_stat_activity AS a
	 ON a.pid OPERATOR(pg_catalog.=) p.pid
	 LEFT JOIN (SELECT pg_catalog.pg_backend_pid() AS pid,
					   pg_catalog.sum(m.total_bytes)::bigint AS context_bytes,
					   pg_catalog.sum(m.free_bytes)::bigint AS context_free_bytes
				FROM pg_catalog.pg_backend_memory_contexts AS m) AS c
	 ON c.pid OPERATOR(pg_catalog.=) p.pid;

COMMENT ON VIEW pg_procmem_backends IS
'every live process of this server: who it is, and what it really costs in memory';

-- Opt-in: the PSS figures, and the classic Pss_Anon + VmPTE estimate beside
-- the exact overhead. Expensive with huge_pages=off and a large, touched
-- shared_buffers (see pg_procmem_processes above).
CREATE VIEW pg_procmem_backends_pss AS
SELECT p.pid,
	   COALESCE(a.backend_type, p.backend_type) AS backend_type,
	   a.datname,
	   a.usename,
	   a.application_name,
	   a.state,
	   p.overhead,
	   p.overhead_method,
	   p.pss_anon OPERATOR(pg_catalog.+) p.page_tables AS pss_overhead,
	   p.rss,
	   p.pss,
	   p.pss_anon,
	   p.pss_file,
	   p.pss_shmem,
	   p.private,
	   p.swap_pss,
	   p.page_tables,
	   p.unreadable
FROM @extschema@.pg_procmem_processes(true) AS p
	 LEFT JOIN pg_catalog.pg_stat_activity AS a
	 ON a.pid OPERATOR(pg_catalog.=) p.pid;

COMMENT ON VIEW pg_procmem_backends_pss IS
'PSS figures of every live process of this server (expensive without huge pages)';

-- Nothing is readable by PUBLIC: process lists and queries are sensitive.
REVOKE ALL ON FUNCTION pg_procmem_processes(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_process(integer, boolean) FROM PUBLIC;
REVOKE ALL ON pg_procmem_backends FROM PUBLIC;
REVOKE ALL ON pg_procmem_backends_pss FROM PUBLIC;

GRANT EXECUTE ON FUNCTION pg_procmem_processes(boolean) TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_process(integer, boolean) TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_backends TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_backends_pss TO pg_read_all_stats;
