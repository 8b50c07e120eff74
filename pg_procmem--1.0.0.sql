/* pg_procmem--1.0.0.sql */

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
	   a.query
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

-- The machine and the server's memory cgroup, one row. Bytes, but the
-- hugepages_* counts; NULL where a file is missing or a limit is "max".
CREATE FUNCTION pg_procmem_system_info(
	OUT mem_total bigint,
	OUT mem_available bigint,
	OUT page_tables bigint,
	OUT kernel_stack bigint,
	OUT shmem bigint,
	OUT committed_as bigint,
	OUT commit_limit bigint,
	OUT swap_total bigint,
	OUT swap_free bigint,
	OUT hugepages_total bigint,
	OUT hugepages_free bigint,
	OUT hugepages_rsvd bigint,
	OUT hugepages_surp bigint,
	OUT hugepage_size bigint,
	OUT anon_hugepages bigint,
	OUT overcommit_memory integer,
	OUT transparent_hugepage text,
	OUT kernel_release text,
	OUT kernel_version_num integer,
	OUT cgroup_version integer,
	OUT cgroup_path text,
	OUT cgroup_usage bigint,
	OUT cgroup_limit bigint,
	OUT cgroup_effective_limit bigint,
	OUT cgroup_room bigint,
	OUT cgroup_high bigint,
	OUT cgroup_swap_usage bigint,
	OUT cgroup_anon bigint,
	OUT cgroup_file bigint,
	OUT cgroup_shmem bigint,
	OUT cgroup_pagetables bigint,
	OUT cgroup_kernel_stack bigint,
	OUT cgroup_kernel bigint,
	OUT cgroup_sock bigint,
	OUT cgroup_oom_events bigint,
	OUT cgroup_oom_kills bigint,
	OUT cgroup_failcnt bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_procmem_system_info'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

-- The main shared memory segment (resident part, whoever touched it), the
-- DSM segments in /dev/shm, and the postmaster's VmPeak.
CREATE FUNCTION pg_procmem_shared_memory(
	OUT main_segment_size bigint,
	OUT main_segment_resident bigint,
	OUT main_segment_hugetlb boolean,
	OUT dsm_segments integer,
	OUT dsm_bytes bigint,
	OUT postmaster_vm_peak bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_procmem_shared_memory'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE VIEW pg_procmem_system AS
SELECT s.*,
	   s.mem_total OPERATOR(pg_catalog.-) s.mem_available AS mem_used,
	   s.swap_total OPERATOR(pg_catalog.-) s.swap_free AS swap_used
FROM @extschema@.pg_procmem_system_info() AS s;

COMMENT ON VIEW pg_procmem_system IS
'the machine''s memory, huge pages, overcommit and THP settings, and the server''s memory cgroup';

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

-- Where did the memory go: the server's memory added up, beside what the
-- cgroup and the system say, with the remainder shown.
CREATE VIEW pg_procmem_accounting AS
WITH p AS (
	SELECT pg_catalog.count(*) AS processes,
		   pg_catalog.sum(overhead)::bigint AS overhead,
		   pg_catalog.sum(cow_shared_anon) FILTER (WHERE backend_type OPERATOR(pg_catalog.=) 'postmaster')::bigint
			   AS cow_shared
	FROM @extschema@.pg_procmem_processes()
), m AS (
	SELECT * FROM @extschema@.pg_procmem_shared_memory()
), s AS (
	SELECT * FROM @extschema@.pg_procmem_system_info()
), a AS (
	SELECT p.processes, p.overhead, p.cow_shared,
		   m.main_segment_size, m.main_segment_resident, m.main_segment_hugetlb,
		   m.dsm_segments, m.dsm_bytes,
		   -- hugetlb pages are not charged to a memory cgroup
		   ((COALESCE(p.overhead, 0) OPERATOR(pg_catalog.+) COALESCE(p.cow_shared, 0))
			   OPERATOR(pg_catalog.+) COALESCE(m.dsm_bytes, 0))
			   OPERATOR(pg_catalog.+) CASE WHEN m.main_segment_hugetlb THEN 0
										   ELSE COALESCE(m.main_segment_resident, 0) END
			   AS charged,
		   s.cgroup_usage,
		   s.cgroup_file OPERATOR(pg_catalog.-) s.cgroup_shmem AS cgroup_page_cache,
		   s.mem_total OPERATOR(pg_catalog.-) s.mem_available AS system_used
	FROM p, m, s
)
SELECT a.processes,
	   a.overhead AS processes_overhead,
	   a.cow_shared AS cow_shared_with_postmaster,
	   a.main_segment_size,
	   a.main_segment_resident,
	   a.main_segment_hugetlb,
	   a.dsm_segments,
	   a.dsm_bytes,
	   a.charged OPERATOR(pg_catalog.+) CASE WHEN a.main_segment_hugetlb THEN a.main_segment_resident ELSE 0 END
		   AS accounted,
	   a.cgroup_usage,
	   a.cgroup_page_cache,
	   (a.cgroup_usage OPERATOR(pg_catalog.-) a.cgroup_page_cache) OPERATOR(pg_catalog.-) a.charged
		   AS cgroup_unexplained,
	   a.system_used
FROM a;

COMMENT ON VIEW pg_procmem_accounting IS
'the server''s memory added up (processes, shared memory, DSM, copy-on-write) beside the cgroup''s usage, remainder shown';

-- Do I need huge pages? What is reserved, what the page tables cost now,
-- what they would cost with huge pages, and what to do.
CREATE VIEW pg_procmem_hugepages AS
WITH s AS (
	SELECT * FROM @extschema@.pg_procmem_system_info()
), p AS (
	SELECT pg_catalog.sum(pr.page_tables)::bigint AS page_tables,
		   -- each touched 4 kB shared page costs an 8-byte PTE (rss_shmem / 512);
		   -- a huge page costs one 8-byte entry (rss_shmem * 8 / hugepage_size)
		   -- (OPERATOR() syntax has no precedence: every mix is parenthesized)
		   pg_catalog.sum(GREATEST(pr.page_tables OPERATOR(pg_catalog.-) (pr.rss_shmem OPERATOR(pg_catalog./) 512), 0)
						  OPERATOR(pg_catalog.+) ((pr.rss_shmem OPERATOR(pg_catalog.*) 8)
												  OPERATOR(pg_catalog./) s.hugepage_size))::bigint
			   AS page_tables_with_huge_pages
	FROM @extschema@.pg_procmem_processes() AS pr, s
), m AS (
	SELECT * FROM @extschema@.pg_procmem_shared_memory()
), h AS (
	SELECT pg_catalog.current_setting('huge_pages') AS huge_pages,
		   pg_catalog.current_setting('huge_page_size') AS huge_page_size,
		   -- both are computed by PostgreSQL 15 and later; NULL before
		   pg_catalog.pg_size_bytes(pg_catalog.current_setting('shared_memory_size', true)) AS shared_memory_size,
		   NULLIF(pg_catalog.current_setting('shared_memory_size_in_huge_pages', true)::bigint, -1)
			   AS shared_memory_size_in_huge_pages,
		   m.postmaster_vm_peak,
		   ((m.postmaster_vm_peak OPERATOR(pg_catalog.+) s.hugepage_size) OPERATOR(pg_catalog.-) 1)
			   OPERATOR(pg_catalog./) s.hugepage_size AS vm_peak_huge_pages,
		   s.hugepage_size, s.hugepages_total, s.hugepages_free, s.hugepages_rsvd, s.hugepages_surp,
		   m.main_segment_hugetlb AS in_use,
		   p.page_tables, p.page_tables_with_huge_pages,
		   s.mem_total
	FROM p, s, m
)
SELECT h.huge_pages, h.huge_page_size, h.shared_memory_size, h.shared_memory_size_in_huge_pages,
	   h.postmaster_vm_peak, h.vm_peak_huge_pages,
	   h.hugepage_size, h.hugepages_total, h.hugepages_free, h.hugepages_rsvd, h.hugepages_surp,
	   h.in_use,
	   h.page_tables,
	   CASE WHEN h.in_use THEN h.page_tables ELSE h.page_tables_with_huge_pages END
		   AS page_tables_with_huge_pages,
	   CASE
		   WHEN h.in_use AND h.huge_pages OPERATOR(pg_catalog.=) 'try' THEN
			   'huge pages are in use; set huge_pages = on so that a restart without enough reserved pages fails instead of silently running without them'
		   WHEN h.in_use THEN
			   'huge pages are in use; nothing to do'
		   WHEN h.huge_pages OPERATOR(pg_catalog.<>) 'off'
				AND (h.hugepages_free OPERATOR(pg_catalog.-) h.hugepages_rsvd) OPERATOR(pg_catalog.>=)
				COALESCE(h.shared_memory_size_in_huge_pages, h.vm_peak_huge_pages) THEN
			   'enough huge pages are free but the server does not use them: restart it'
		   WHEN (h.page_tables OPERATOR(pg_catalog.-) h.page_tables_with_huge_pages)
				OPERATOR(pg_catalog.<) (h.mem_total OPERATOR(pg_catalog./) 100)
				AND COALESCE(h.shared_memory_size, 0) OPERATOR(pg_catalog.<) 8589934592 THEN
			   pg_catalog.format('optional: the page tables of the server''s processes would shrink only from %s to about %s now '
								 '(less than 1%% of RAM); with a larger shared_buffers, set vm.nr_hugepages >= %s and huge_pages = on',
								 pg_catalog.pg_size_pretty(h.page_tables),
								 pg_catalog.pg_size_pretty(h.page_tables_with_huge_pages),
								 COALESCE(h.shared_memory_size_in_huge_pages, h.vm_peak_huge_pages))
		   ELSE
			   pg_catalog.format('set vm.nr_hugepages >= %s (now %s) and huge_pages = on, then restart: '
								 'the page tables of the server''s processes would shrink from %s to about %s',
								 COALESCE(h.shared_memory_size_in_huge_pages, h.vm_peak_huge_pages),
								 h.hugepages_total,
								 pg_catalog.pg_size_pretty(h.page_tables),
								 pg_catalog.pg_size_pretty(h.page_tables_with_huge_pages))
	   END AS recommendation
FROM h;

COMMENT ON VIEW pg_procmem_hugepages IS
'huge page settings, reservations, page-table cost now and with huge pages, and what to do';

-- Who will the OOM killer take, and what happens then.
CREATE VIEW pg_procmem_oom AS
SELECT pg_catalog.rank() OVER (ORDER BY p.oom_score DESC) AS rank,
	   p.pid,
	   COALESCE(a.backend_type, p.backend_type) AS backend_type,
	   p.oom_score,
	   p.oom_score_adj,
	   -- Linux >= 5.9 shows (1000 + points * 1000 / totalpages) * 2 / 3, so
	   -- 666 is a share of 0; before, points * 1000 / totalpages
	   pg_catalog.round(CASE WHEN p.oom_score_adj OPERATOR(pg_catalog.=) -1000 THEN NULL
							 WHEN s.kernel_version_num OPERATOR(pg_catalog.>=) 50009
							 THEN ((p.oom_score OPERATOR(pg_catalog.*) 1.5) OPERATOR(pg_catalog.-) 1000) OPERATOR(pg_catalog./) 10
							 ELSE p.oom_score OPERATOR(pg_catalog./) 10.0 END, 1) AS badness_pct,
	   p.oom_score_adj OPERATOR(pg_catalog.=) -1000 AS protected,
	   p.rss, p.rss_shmem, p.swap, p.page_tables, p.overhead,
	   CASE WHEN p.backend_type OPERATOR(pg_catalog.=) 'postmaster'
			THEN 'the server goes down and stays down until something restarts it'
			WHEN p.backend_type OPERATOR(pg_catalog.=) 'logger'
			THEN 'the postmaster starts a new logger; sessions go on'
			-- p.backend_type is set only for children without a PGPROC
			WHEN p.backend_type IS NOT NULL
			THEN 'no crash restart (it has no PGPROC); sessions go on'
			WHEN pg_catalog.current_setting('restart_after_crash')::boolean
			THEN 'the postmaster runs a crash restart: every session ends'
			ELSE 'the server shuts down (restart_after_crash = off)' END AS if_killed
FROM @extschema@.pg_procmem_processes() AS p
	 LEFT JOIN pg_catalog.pg_stat_activity AS a ON a.pid OPERATOR(pg_catalog.=) p.pid,
	 @extschema@.pg_procmem_system_info() AS s;

COMMENT ON VIEW pg_procmem_oom IS
'every server process ranked by oom_score, with what killing it would do';

-- How many more connections fit, and how much work_mem could be asked for.
CREATE VIEW pg_procmem_headroom AS
WITH b AS (
	SELECT pg_catalog.count(*) FILTER (WHERE backend_type OPERATOR(pg_catalog.=) 'client backend') AS client_backends,
		   pg_catalog.count(*) FILTER (WHERE backend_type OPERATOR(pg_catalog.=) 'client backend'
									   AND state OPERATOR(pg_catalog.=) 'idle') AS idle_client_backends,
		   pg_catalog.avg(overhead) FILTER (WHERE backend_type OPERATOR(pg_catalog.=) 'client backend'
											AND state OPERATOR(pg_catalog.=) 'idle')::bigint AS avg_idle_overhead
	FROM @extschema@.pg_procmem_backends
), s AS (
	SELECT * FROM @extschema@.pg_procmem_system_info()
), g AS (
	SELECT pg_catalog.current_setting('max_connections')::integer AS max_connections,
		   pg_catalog.current_setting('superuser_reserved_connections')::integer AS superuser_reserved_connections,
		   pg_catalog.pg_size_bytes(pg_catalog.current_setting('work_mem')) AS work_mem,
		   pg_catalog.current_setting('hash_mem_multiplier')::float8 AS hash_mem_multiplier,
		   pg_catalog.pg_size_bytes(pg_catalog.current_setting('maintenance_work_mem')) AS maintenance_work_mem,
		   CASE WHEN pg_catalog.current_setting('autovacuum_work_mem') OPERATOR(pg_catalog.=) '-1'
				THEN pg_catalog.pg_size_bytes(pg_catalog.current_setting('maintenance_work_mem'))
				ELSE pg_catalog.pg_size_bytes(pg_catalog.current_setting('autovacuum_work_mem')) END
			   AS autovacuum_work_mem,
		   pg_catalog.current_setting('autovacuum_max_workers')::integer AS autovacuum_max_workers
), r AS (
	SELECT s.mem_available,
		   s.cgroup_effective_limit,
		   s.cgroup_usage,
		   s.cgroup_file OPERATOR(pg_catalog.-) s.cgroup_shmem AS cgroup_page_cache,
		   s.cgroup_room
	FROM s
)
SELECT r.mem_available,
	   r.cgroup_effective_limit,
	   r.cgroup_usage,
	   r.cgroup_page_cache,
	   r.cgroup_room,
	   LEAST(r.mem_available, r.cgroup_room) AS available,
	   b.idle_client_backends,
	   b.avg_idle_overhead,
	   (LEAST(r.mem_available, r.cgroup_room) OPERATOR(pg_catalog./) NULLIF(b.avg_idle_overhead, 0))::bigint
		   AS more_idle_connections_fit,
	   g.max_connections,
	   b.client_backends,
	   GREATEST((g.max_connections OPERATOR(pg_catalog.-) g.superuser_reserved_connections)
				OPERATOR(pg_catalog.-) b.client_backends, 0) AS connection_slots_left,
	   g.work_mem,
	   g.hash_mem_multiplier,
	   ((g.max_connections OPERATOR(pg_catalog.*) g.work_mem) OPERATOR(pg_catalog.*) g.hash_mem_multiplier)::bigint
		   AS work_mem_exposure,
	   g.maintenance_work_mem,
	   g.autovacuum_work_mem,
	   g.autovacuum_max_workers,
	   (g.autovacuum_max_workers OPERATOR(pg_catalog.*) g.autovacuum_work_mem)::bigint AS autovacuum_exposure,
	   pg_catalog.round((((g.max_connections OPERATOR(pg_catalog.*) g.work_mem) OPERATOR(pg_catalog.*) g.hash_mem_multiplier)
				OPERATOR(pg_catalog./) NULLIF(LEAST(r.mem_available, r.cgroup_room), 0))::numeric, 2)
		   AS work_mem_exposure_ratio
FROM b, r, g;

COMMENT ON VIEW pg_procmem_headroom IS
'how many more connections fit in the memory that is left, and the work_mem exposure';

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

-- Nothing is readable by PUBLIC: process lists and queries are sensitive.
REVOKE ALL ON FUNCTION pg_procmem_processes(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_process(integer, boolean) FROM PUBLIC;
REVOKE ALL ON pg_procmem_backends FROM PUBLIC;
REVOKE ALL ON pg_procmem_backends_pss FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_system_info() FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_shared_memory() FROM PUBLIC;
REVOKE ALL ON pg_procmem_system FROM PUBLIC;
REVOKE ALL ON pg_procmem_summary FROM PUBLIC;
REVOKE ALL ON pg_procmem_accounting FROM PUBLIC;
REVOKE ALL ON pg_procmem_hugepages FROM PUBLIC;
REVOKE ALL ON pg_procmem_oom FROM PUBLIC;
REVOKE ALL ON pg_procmem_headroom FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_backend_contexts(boolean) FROM PUBLIC;
REVOKE ALL ON pg_procmem_contexts FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_own_contexts() FROM PUBLIC;

GRANT EXECUTE ON FUNCTION pg_procmem_processes(boolean) TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_process(integer, boolean) TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_backends TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_backends_pss TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_system_info() TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_shared_memory() TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_system, pg_procmem_summary, pg_procmem_accounting,
	pg_procmem_hugepages, pg_procmem_oom, pg_procmem_headroom TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_backend_contexts(boolean) TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_contexts TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_own_contexts() TO pg_read_all_stats;
