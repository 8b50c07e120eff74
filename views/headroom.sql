-- The memory settings the headroom and the advice weigh, in bytes, one row
-- (an internal view: the two read the same figures).
CREATE VIEW pg_procmem_memory_settings AS
SELECT pg_catalog.current_setting('max_connections')::integer AS max_connections,
	   pg_catalog.current_setting('superuser_reserved_connections')::integer AS superuser_reserved_connections,
	   -- slots for roles with pg_use_reserved_connections (PostgreSQL 16+)
	   COALESCE(pg_catalog.current_setting('reserved_connections', true)::integer, 0) AS reserved_connections,
	   pg_catalog.pg_size_bytes(pg_catalog.current_setting('work_mem')) AS work_mem,
	   pg_catalog.current_setting('hash_mem_multiplier')::float8 AS hash_mem_multiplier,
	   pg_catalog.pg_size_bytes(pg_catalog.current_setting('maintenance_work_mem')) AS maintenance_work_mem,
	   CASE WHEN pg_catalog.current_setting('autovacuum_work_mem') OPERATOR(pg_catalog.=) '-1'
			THEN pg_catalog.pg_size_bytes(pg_catalog.current_setting('maintenance_work_mem'))
			ELSE pg_catalog.pg_size_bytes(pg_catalog.current_setting('autovacuum_work_mem')) END
		   AS autovacuum_work_mem,
	   pg_catalog.current_setting('autovacuum_max_workers')::integer AS autovacuum_max_workers,
	   -- local buffers for temporary tables: a backend keeps those it filled
	   -- until it exits
	   pg_catalog.pg_size_bytes(pg_catalog.current_setting('temp_buffers')) AS temp_buffers;

COMMENT ON VIEW pg_procmem_memory_settings IS
'internal: the memory settings pg_procmem_headroom and pg_procmem_advice weigh, in bytes';

-- How many more connections fit, and how much work_mem could be asked for.
CREATE VIEW pg_procmem_headroom AS
WITH b AS (
	SELECT pg_catalog.count(*) FILTER (WHERE backend_type OPERATOR(pg_catalog.=) 'client backend') AS client_backends,
		   pg_catalog.count(*) FILTER (WHERE backend_type OPERATOR(pg_catalog.=) 'client backend'
									   AND state OPERATOR(pg_catalog.=) 'idle') AS idle_client_backends,
		   pg_catalog.avg(overhead) FILTER (WHERE backend_type OPERATOR(pg_catalog.=) 'client backend'
											AND state OPERATOR(pg_catalog.=) 'idle')::bigint AS avg_idle_overhead,
		   -- with no idle connection to go by (a fresh server: only the
		   -- caller's, running this query), the smallest client backend: an
		   -- upper bound for an idle one, so the answer errs low
		   pg_catalog.min(overhead) FILTER (WHERE backend_type OPERATOR(pg_catalog.=) 'client backend')
			   AS min_client_overhead
	FROM @extschema@.pg_procmem_backends
), r AS (
	SELECT s.mem_available,
		   s.cgroup_effective_limit,
		   s.cgroup_usage,
		   s.cgroup_file OPERATOR(pg_catalog.-) s.cgroup_shmem AS cgroup_page_cache,
		   s.cgroup_room
	FROM @extschema@.pg_procmem_system_info() AS s
)
SELECT r.mem_available,
	   r.cgroup_effective_limit,
	   r.cgroup_usage,
	   r.cgroup_page_cache,
	   r.cgroup_room,
	   LEAST(r.mem_available, r.cgroup_room) AS available,
	   b.idle_client_backends,
	   b.avg_idle_overhead,
	   GREATEST(LEAST(r.mem_available, r.cgroup_room)
				OPERATOR(pg_catalog./) NULLIF(COALESCE(b.avg_idle_overhead, b.min_client_overhead), 0), 0)::bigint
		   AS more_idle_connections_fit,
	   g.max_connections,
	   b.client_backends,
	   GREATEST(((g.max_connections OPERATOR(pg_catalog.-) g.superuser_reserved_connections)
				 OPERATOR(pg_catalog.-) g.reserved_connections)
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
		   AS work_mem_exposure_ratio,
	   g.superuser_reserved_connections,
	   g.reserved_connections,
	   COALESCE(b.avg_idle_overhead, b.min_client_overhead) AS per_connection,
	   CASE WHEN b.avg_idle_overhead IS NOT NULL THEN 'the average idle client backend'
			WHEN b.min_client_overhead IS NOT NULL THEN 'the smallest client backend (none is idle)' END
		   AS per_connection_from,
	   g.temp_buffers,
	   (g.max_connections OPERATOR(pg_catalog.*) g.temp_buffers) AS temp_buffers_exposure
FROM b, r, @extschema@.pg_procmem_memory_settings AS g;

COMMENT ON VIEW pg_procmem_headroom IS
'how many more connections fit in the memory that is left, and the work_mem exposure';

REVOKE ALL ON pg_procmem_memory_settings FROM PUBLIC;
REVOKE ALL ON pg_procmem_headroom FROM PUBLIC;
GRANT SELECT ON pg_procmem_memory_settings, pg_procmem_headroom TO pg_read_all_stats;
