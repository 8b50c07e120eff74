-- New client connections per second over the last five minutes of this run,
-- once the history covers a minute of it (a start's own burst is no rate);
-- no row otherwise. The history counts client connections since shared
-- memory was initialized (pg_stat_database's sessions survive restarts and
-- resets). An internal view of pg_procmem_advice.
CREATE VIEW pg_procmem_connection_rate AS
SELECT pg_catalog.max(y.connections) OPERATOR(pg_catalog.-) pg_catalog.min(y.connections) AS connections,
	   pg_catalog.date_part('epoch', pg_catalog.max(y.sampled_at) OPERATOR(pg_catalog.-) pg_catalog.min(y.sampled_at)) AS seconds,
	   (pg_catalog.max(y.connections) OPERATOR(pg_catalog.-) pg_catalog.min(y.connections))::float8
		   OPERATOR(pg_catalog./) GREATEST(pg_catalog.date_part('epoch', pg_catalog.max(y.sampled_at)
		   OPERATOR(pg_catalog.-) pg_catalog.min(y.sampled_at)), 0.001) AS rate
FROM (SELECT x.*, pg_catalog.max(x.run_started) OVER () AS latest
	  FROM @extschema@.pg_procmem_history_system_samples(true) AS x) AS y
WHERE y.run_started OPERATOR(pg_catalog.=) y.latest
  AND y.sampled_at OPERATOR(pg_catalog.>=) (pg_catalog.now() OPERATOR(pg_catalog.-) '5 minutes'::interval)
HAVING pg_catalog.date_part('epoch', pg_catalog.max(y.sampled_at) OPERATOR(pg_catalog.-)
		   pg_catalog.min(y.sampled_at)) OPERATOR(pg_catalog.>=) 60;

COMMENT ON VIEW pg_procmem_connection_rate IS
'internal: new client connections per second over the last five minutes, from the memory history';

-- Everything pg_procmem_advice weighs, measured once, in one row: each check
-- (advice_checks.sql) is a function of this row alone. Reads status and
-- oom_score, never smaps_rollup.
CREATE VIEW pg_procmem_advice_facts AS
WITH p AS (
	-- own_type is set only for the postmaster and children without a PGPROC
	SELECT pr.pid, COALESCE(a.backend_type, pr.backend_type) AS backend_type, pr.backend_type AS own_type,
		   a.state, a.state_change, pr.overhead, pr.swap, pr.oom_score, pr.oom_score_adj, pr.jit
	FROM @extschema@.pg_procmem_processes(false) AS pr
		 LEFT JOIN pg_catalog.pg_stat_activity AS a ON a.pid OPERATOR(pg_catalog.=) pr.pid
), c AS (
	SELECT pg_catalog.count(*) FILTER (WHERE p.backend_type OPERATOR(pg_catalog.=) 'client backend') AS clients,
		   pg_catalog.count(*) FILTER (WHERE p.backend_type OPERATOR(pg_catalog.=) 'client backend'
									   AND p.state OPERATOR(pg_catalog.=) 'idle') AS idle,
		   pg_catalog.count(*) FILTER (WHERE p.backend_type OPERATOR(pg_catalog.=) 'client backend'
									   AND p.state OPERATOR(pg_catalog.=) 'idle'
									   AND p.state_change OPERATOR(pg_catalog.<)
										   (pg_catalog.now() OPERATOR(pg_catalog.-) '10 min'::interval)) AS idle_10min,
		   pg_catalog.sum(p.overhead) FILTER (WHERE p.backend_type OPERATOR(pg_catalog.=) 'client backend'
											  AND p.state OPERATOR(pg_catalog.=) 'idle')::bigint AS idle_overhead,
		   pg_catalog.max(p.oom_score) FILTER (WHERE p.backend_type OPERATOR(pg_catalog.=) 'client backend')
			   AS client_max_oom_score,
		   pg_catalog.count(*) FILTER (WHERE p.swap OPERATOR(pg_catalog.>) 0) AS swapping,
		   pg_catalog.sum(p.swap)::bigint AS swap,
		   pg_catalog.sum(p.overhead)::bigint AS overhead,
		   pg_catalog.sum(p.jit)::bigint AS jit_bytes,
		   pg_catalog.count(*) FILTER (WHERE p.jit OPERATOR(pg_catalog.>) 0) AS jit_processes
	FROM p
)
SELECT s.mem_total, s.mem_available, s.swap_total, s.committed_as, s.commit_limit, s.overcommit_memory,
	   s.transparent_hugepage, s.anon_hugepages, s.cgroup_path, s.cgroup_usage, s.cgroup_file, s.cgroup_shmem,
	   s.cgroup_oom_events, s.cgroup_oom_kills,
	   k.cpus, k.cpu_cache_bytes, k.cpu_cache_level, k.dirty_ratio, k.dirty_background_ratio, k.dirty_bytes,
	   k.dirty_background_bytes, k.overcommit_ratio, k.transparent_hugepage_defrag,
	   k.cgroup_tightest_limit, k.cgroup_tightest_room,
	   h.huge_pages, h.in_use AS huge_pages_in_use, h.page_tables, h.page_tables_with_huge_pages,
	   h.shared_memory_size, h.hugepages_total, h.hugepages_free, h.recommendation AS huge_pages_recommendation,
	   g.max_connections, g.work_mem, g.hash_mem_multiplier, g.maintenance_work_mem, g.autovacuum_work_mem,
	   g.autovacuum_max_workers, g.temp_buffers,
	   -- the cgroup's OOM kills since the server started or last restarted
	   -- after a crash (NULL without the memory history)
	   GREATEST(s.cgroup_oom_kills OPERATOR(pg_catalog.-) ok.cgroup_oom_kills, 0) AS oom_kills_lately,
	   ok.since AS oom_kills_since,
	   -- memory left: the smaller of MemAvailable and the cgroup's room; short
	   -- under 10% of RAM, or of a cgroup level's limit
	   LEAST(s.mem_available, s.cgroup_room) AS available,
	   ((s.mem_available OPERATOR(pg_catalog.*) 10) OPERATOR(pg_catalog.<) s.mem_total)
		   OR (k.cgroup_tightest_limit OPERATOR(pg_catalog.>) 0
			   AND (k.cgroup_tightest_room OPERATOR(pg_catalog.*) 10) OPERATOR(pg_catalog.<) k.cgroup_tightest_limit)
		   AS memory_short,
	   -- the kernel's dirty-page thresholds, in bytes (ratios are of
	   -- dirtyable memory, which MemAvailable approximates)
	   CASE WHEN k.dirty_bytes OPERATOR(pg_catalog.>) 0 THEN k.dirty_bytes
			ELSE (k.dirty_ratio OPERATOR(pg_catalog.*) s.mem_available) OPERATOR(pg_catalog./) 100 END
		   AS dirty_limit,
	   CASE WHEN k.dirty_background_bytes OPERATOR(pg_catalog.>) 0 THEN k.dirty_background_bytes
			ELSE (k.dirty_background_ratio OPERATOR(pg_catalog.*) s.mem_available) OPERATOR(pg_catalog./) 100 END
		   AS dirty_background_limit,
	   c.clients, c.idle, c.idle_10min, c.idle_overhead, c.client_max_oom_score, c.swapping, c.swap,
	   c.overhead, c.jit_bytes, c.jit_processes,
	   pg_catalog.current_setting('jit') AS jit, pg_catalog.current_setting('jit_above_cost') AS jit_above_cost,
	   pm.pid AS postmaster_pid, pm.oom_score AS postmaster_oom_score, pm.oom_score_adj AS postmaster_oom_score_adj,
	   x.pid AS top_pid, x.backend_type AS top_backend_type, x.own_type AS top_own_type, x.oom_score AS top_oom_score,
	   -- children without a PGPROC (the logger) are restarted alone: not these
	   y.pid AS aux_pid, y.backend_type AS aux_backend_type, y.oom_score AS aux_oom_score,
	   z.pid AS swap_pid, z.backend_type AS swap_backend_type, z.swap AS swap_bytes,
	   cr.connections AS new_connections, cr.seconds AS connection_seconds, cr.rate AS connection_rate,
	   dl.dsm_leftover, dl.dsm_leftover_segments, dl.dsm_leftover_names,
	   (SELECT pg_catalog.sum(d.sessions)::bigint FROM pg_catalog.pg_stat_database AS d) AS sessions
FROM @extschema@.pg_procmem_system_info() AS s,
	 @extschema@.pg_procmem_machine_info() AS k,
	 @extschema@.pg_procmem_hugepages AS h,
	 @extschema@.pg_procmem_memory_settings AS g,
	 @extschema@.pg_procmem_oom_kills_baseline() AS ok,
	 c
	 LEFT JOIN LATERAL (SELECT * FROM p WHERE p.backend_type OPERATOR(pg_catalog.=) 'postmaster'
						ORDER BY p.pid LIMIT 1) AS pm ON true
	 LEFT JOIN LATERAL (SELECT * FROM p ORDER BY p.oom_score DESC NULLS LAST, p.pid LIMIT 1) AS x ON true
	 LEFT JOIN LATERAL (SELECT * FROM p
						WHERE p.own_type IS NULL
						  AND p.backend_type OPERATOR(pg_catalog.<>) ALL (ARRAY['client backend', 'parallel worker'])
						ORDER BY p.oom_score DESC NULLS LAST, p.pid LIMIT 1) AS y ON true
	 LEFT JOIN LATERAL (SELECT * FROM p ORDER BY p.swap DESC NULLS LAST, p.pid LIMIT 1) AS z ON true
	 LEFT JOIN @extschema@.pg_procmem_connection_rate AS cr ON true
	 -- the newest sample's DSM segments left over (NULL without the history)
	 LEFT JOIN LATERAL (SELECT x.dsm_leftover, x.dsm_leftover_segments, x.dsm_leftover_names
						FROM @extschema@.pg_procmem_history_system_samples(true) AS x
						ORDER BY x.sample DESC LIMIT 1) AS dl ON true;

COMMENT ON VIEW pg_procmem_advice_facts IS
'internal: everything pg_procmem_advice weighs, measured once, in one row';

REVOKE ALL ON pg_procmem_connection_rate FROM PUBLIC;
REVOKE ALL ON pg_procmem_advice_facts FROM PUBLIC;
GRANT SELECT ON pg_procmem_connection_rate, pg_procmem_advice_facts TO pg_read_all_stats;
