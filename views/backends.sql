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
	   p.kernel,
	   p.rss,
	   p.rss_anon,
	   p.rss_file,
	   p.rss_shmem,
	   p.swap,
	   p.hugetlb,
	   p.peak_rss,
	   p.oom_score,
	   p.oom_score_adj,
	   COALESCE(own.context_bytes, pub.context_bytes) AS context_bytes,
	   COALESCE(own.context_free_bytes, pub.context_free_bytes) AS context_free_bytes,
	   pub.context_peak_bytes,
	   p.unreadable,
	   a.backend_start,
	   a.state_change,
	   a.wait_event_type,
	   a.wait_event,
	   a.query_start,
	   a.leader_pid,
	   a.query_id,
	   a.query,
	   p.dsm,
	   p.group_dsm
FROM @extschema@.pg_procmem_processes(false) AS p
	 LEFT JOIN pg_catalog.pg_stat_activity AS a
	 ON a.pid OPERATOR(pg_catalog.=) p.pid
	 LEFT JOIN (SELECT pg_catalog.pg_backend_pid() AS pid, o.*
				FROM @extschema@.pg_procmem_own_contexts() AS o) AS own
	 ON own.pid OPERATOR(pg_catalog.=) p.pid
	 LEFT JOIN @extschema@.pg_procmem_backend_contexts(true) AS pub
	 ON pub.pid OPERATOR(pg_catalog.=) p.pid;

COMMENT ON VIEW pg_procmem_backends IS
'every live process of this server: who it is, and what it really costs in memory';

-- What overhead is made of, for every process: its exclusive anonymous
-- memory by the mapping that holds it, its page tables and the kernel's
-- own memory for it. heap .. libraries add up to private_anon, and with
-- page_tables and kernel to overhead (by the pagemap+kernel method). The
-- same walk as pg_procmem_backends: no extra pass over the mappings.
CREATE VIEW pg_procmem_breakdown AS
SELECT p.pid,
	   COALESCE(a.backend_type, p.backend_type) AS backend_type,
	   a.datname,
	   a.usename,
	   a.application_name,
	   a.state,
	   p.overhead,
	   p.overhead_method,
	   p.heap,
	   p.mmap,
	   p.stack,
	   p.postgres_data,
	   p.jit,
	   p.libraries,
	   p.page_tables,
	   p.kernel,
	   p.private_anon,
	   p.unreadable
FROM @extschema@.pg_procmem_processes(false) AS p
	 LEFT JOIN pg_catalog.pg_stat_activity AS a
	 ON a.pid OPERATOR(pg_catalog.=) p.pid;

COMMENT ON VIEW pg_procmem_breakdown IS
'what each process''s overhead is made of: heap, other anonymous mappings, stack, copies of the executable''s data, JIT libraries, other libraries, page tables, kernel';

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

-- Totals per backend type, database, user and application.
CREATE VIEW pg_procmem_summary AS
SELECT CASE WHEN GROUPING(b.backend_type) OPERATOR(pg_catalog.=) 0 THEN 'backend_type'
			WHEN GROUPING(b.datname) OPERATOR(pg_catalog.=) 0 THEN 'database'
			WHEN GROUPING(b.usename) OPERATOR(pg_catalog.=) 0 THEN 'user'
			ELSE 'application' END AS grouped_by,
	   CASE WHEN GROUPING(b.backend_type) OPERATOR(pg_catalog.=) 0 THEN b.backend_type
			WHEN GROUPING(b.datname) OPERATOR(pg_catalog.=) 0 THEN b.datname::text
			WHEN GROUPING(b.usename) OPERATOR(pg_catalog.=) 0 THEN b.usename::text
			ELSE b.application_name END AS name,
	   pg_catalog.count(*) AS processes,
	   pg_catalog.sum(b.overhead)::bigint AS total_overhead,
	   pg_catalog.avg(b.overhead)::bigint AS avg_overhead,
	   pg_catalog.sum(b.page_tables)::bigint AS total_page_tables,
	   pg_catalog.sum(b.rss)::bigint AS total_rss,
	   pg_catalog.count(*) FILTER (WHERE b.state OPERATOR(pg_catalog.=) 'idle') AS idle,
	   pg_catalog.sum(b.overhead) FILTER (WHERE b.state OPERATOR(pg_catalog.=) 'idle')::bigint
		   AS idle_overhead,
	   pg_catalog.count(*) FILTER (WHERE b.state OPERATOR(pg_catalog.~~) 'idle in transaction%')
		   AS idle_in_transaction,
	   pg_catalog.sum(b.overhead) FILTER (WHERE b.state OPERATOR(pg_catalog.~~) 'idle in transaction%')::bigint
		   AS idle_in_transaction_overhead
FROM (SELECT backend_type, datname, usename, overhead, page_tables, rss, state,
			 NULLIF(application_name, '') AS application_name	-- background processes have ''
	  FROM @extschema@.pg_procmem_backends) AS b
GROUP BY GROUPING SETS ((b.backend_type), (b.datname), (b.usename), (b.application_name));

COMMENT ON VIEW pg_procmem_summary IS
'overhead, page tables and rss totals per backend type, database, user and application';

REVOKE ALL ON pg_procmem_backends FROM PUBLIC;
REVOKE ALL ON pg_procmem_backends_pss FROM PUBLIC;
REVOKE ALL ON pg_procmem_summary FROM PUBLIC;
REVOKE ALL ON pg_procmem_breakdown FROM PUBLIC;
GRANT SELECT ON pg_procmem_backends, pg_procmem_backends_pss, pg_procmem_summary, pg_procmem_breakdown
	TO pg_read_all_stats;
