/* pg_procmem--1.0.0--1.1.0.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION pg_procmem UPDATE TO '1.1.0'" to load this file. \quit

-- The headline in 80 columns, for people at a psql prompt: every process,
-- most expensive first, sizes pretty-printed. Client backends are named
-- user@database, the others by backend type (autovacuum, logical
-- replication and background shortened); long names and states are clipped so that a row
-- stays under 80 characters even with 7-digit pids.
CREATE VIEW pg_procmem_top AS
SELECT b.pid,
	   CASE WHEN pg_catalog.length(b.who) OPERATOR(pg_catalog.>) 17
			THEN pg_catalog.left(b.who, 16) OPERATOR(pg_catalog.||) '~'
			ELSE b.who END AS process,
	   CASE b.state WHEN 'idle in transaction' THEN 'idletx'
					WHEN 'idle in transaction (aborted)' THEN 'idletx!'
					WHEN 'fastpath function call' THEN 'fastpth'
					WHEN 'disabled' THEN 'disabld'
					ELSE b.state END AS state,
	   pg_catalog.pg_size_pretty(b.overhead) AS overhead,
	   pg_catalog.pg_size_pretty(b.page_tables) AS pagetbl,
	   pg_catalog.pg_size_pretty(b.rss) AS rss,
	   pg_catalog.pg_size_pretty(b.context_bytes) AS context
FROM (SELECT bk.*,
			 CASE WHEN bk.backend_type OPERATOR(pg_catalog.=) 'client backend'
					   AND bk.usename IS NOT NULL
				  THEN (bk.usename::text OPERATOR(pg_catalog.||) '@') OPERATOR(pg_catalog.||) bk.datname::text
				  ELSE pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(bk.backend_type,
						  'autovacuum ', 'autovac '), 'logical replication ', 'logical '),
						  'background ', 'bg ') END AS who
	  FROM @extschema@.pg_procmem_backends AS bk) AS b
ORDER BY b.overhead DESC NULLS LAST, b.pid;

COMMENT ON VIEW pg_procmem_top IS
'every server process, most expensive first, pretty-printed to fit an 80-column terminal';

REVOKE ALL ON pg_procmem_top FROM PUBLIC;
GRANT SELECT ON pg_procmem_top TO pg_read_all_stats;

-- CPUs, the last-level cache, the kernel's writeback, overcommit and swap
-- settings, and the memory cgroup level (the server's or an ancestor) whose
-- room is the smallest share of its limit: what pg_procmem_advice needs
-- beyond pg_procmem_system_info.
CREATE FUNCTION pg_procmem_machine_info(
	OUT cpus integer,
	OUT cpu_cache_bytes bigint,
	OUT cpu_cache_level integer,
	OUT dirty_ratio integer,
	OUT dirty_background_ratio integer,
	OUT dirty_bytes bigint,
	OUT dirty_background_bytes bigint,
	OUT overcommit_ratio integer,
	OUT swappiness integer,
	OUT transparent_hugepage_defrag text,
	OUT cgroup_tightest_limit bigint,
	OUT cgroup_tightest_room bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_procmem_machine_info'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

-- Every memory finding as a row: a stable check name, how bad, the measured
-- evidence and what to do. Reads status and oom_score (never smaps_rollup),
-- so it is cheap enough to poll every minute. Thresholds and the figures
-- behind them are in README.
-- (OPERATOR() syntax has no precedence: every mix is parenthesized.)
CREATE VIEW pg_procmem_advice AS
WITH s AS (
	SELECT * FROM @extschema@.pg_procmem_system_info()
), k AS (
	SELECT * FROM @extschema@.pg_procmem_machine_info()
), h AS (
	SELECT * FROM @extschema@.pg_procmem_hugepages
), p AS (
	-- own_type is set only for the postmaster and children without a PGPROC
	SELECT pr.pid, COALESCE(a.backend_type, pr.backend_type) AS backend_type, pr.backend_type AS own_type,
		   a.state, a.state_change, pr.overhead, pr.swap, pr.oom_score, pr.oom_score_adj
	FROM @extschema@.pg_procmem_processes(false) AS pr
		 LEFT JOIN pg_catalog.pg_stat_activity AS a ON a.pid OPERATOR(pg_catalog.=) pr.pid
), g AS (
	SELECT pg_catalog.current_setting('max_connections')::bigint AS max_connections,
		   pg_catalog.pg_size_bytes(pg_catalog.current_setting('work_mem')) AS work_mem,
		   pg_catalog.current_setting('hash_mem_multiplier')::float8 AS hash_mem_multiplier,
		   pg_catalog.pg_size_bytes(pg_catalog.current_setting('maintenance_work_mem')) AS maintenance_work_mem,
		   CASE WHEN pg_catalog.current_setting('autovacuum_work_mem') OPERATOR(pg_catalog.=) '-1'
				THEN pg_catalog.pg_size_bytes(pg_catalog.current_setting('maintenance_work_mem'))
				ELSE pg_catalog.pg_size_bytes(pg_catalog.current_setting('autovacuum_work_mem')) END
			   AS autovacuum_work_mem,
		   pg_catalog.current_setting('autovacuum_max_workers')::bigint AS autovacuum_max_workers
), m AS (
	-- memory left: the smaller of MemAvailable and the cgroup's room
	SELECT LEAST(s.mem_available, s.cgroup_room) AS available,
		   -- the kernel's dirty-page thresholds, in bytes (ratios are of
		   -- dirtyable memory, which MemAvailable approximates)
		   CASE WHEN k.dirty_bytes OPERATOR(pg_catalog.>) 0 THEN k.dirty_bytes
				ELSE (k.dirty_ratio OPERATOR(pg_catalog.*) s.mem_available) OPERATOR(pg_catalog./) 100 END
			   AS dirty_limit,
		   CASE WHEN k.dirty_background_bytes OPERATOR(pg_catalog.>) 0 THEN k.dirty_background_bytes
				ELSE (k.dirty_background_ratio OPERATOR(pg_catalog.*) s.mem_available) OPERATOR(pg_catalog./) 100 END
			   AS dirty_background_limit
	FROM s, k
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
		   pg_catalog.max(p.oom_score) AS max_oom_score,
		   pg_catalog.count(*) FILTER (WHERE p.swap OPERATOR(pg_catalog.>) 0) AS swapping,
		   pg_catalog.sum(p.swap)::bigint AS swap
	FROM p
), f AS (
	SELECT 'huge_pages' AS check_name,
		   CASE WHEN h.page_tables OPERATOR(pg_catalog.>=) (s.mem_total OPERATOR(pg_catalog./) 10)
				THEN 'critical' ELSE 'warning' END AS severity,
		   pg_catalog.format('huge_pages = %s, and shared memory is not on huge pages; the page tables of the '
							 'server''s processes take %s (%s%% of RAM), about %s with huge pages; '
							 'shared_memory_size %s; vm.nr_hugepages %s, %s free',
							 h.huge_pages, pg_catalog.pg_size_pretty(h.page_tables),
							 pg_catalog.round((h.page_tables OPERATOR(pg_catalog.*) 100.0) OPERATOR(pg_catalog./) s.mem_total, 1),
							 pg_catalog.pg_size_pretty(h.page_tables_with_huge_pages),
							 COALESCE(pg_catalog.pg_size_pretty(h.shared_memory_size), 'unknown'),
							 h.hugepages_total, h.hugepages_free) AS evidence,
		   h.recommendation OPERATOR(pg_catalog.||)
			   ' (page tables grow with shared memory touched x processes: one server reached 25 GB of them; with huge pages it had 61 MB)'
			   AS recommendation
	FROM h, s
	WHERE NOT h.in_use
	  AND ((h.page_tables OPERATOR(pg_catalog.-) h.page_tables_with_huge_pages)
			   OPERATOR(pg_catalog.>=) (s.mem_total OPERATOR(pg_catalog./) 100)
		   OR COALESCE(h.shared_memory_size, 0) OPERATOR(pg_catalog.>=) 8589934592
		   OR (h.huge_pages OPERATOR(pg_catalog.=) 'try' AND h.hugepages_total OPERATOR(pg_catalog.>) 0))

	UNION ALL
	SELECT 'transparent_hugepage', 'warning',
		   pg_catalog.format('transparent huge pages: enabled = always, defrag = %s; %s of anonymous memory on them now',
							 k.transparent_hugepage_defrag, pg_catalog.pg_size_pretty(s.anon_hugepages)),
		   'set /sys/kernel/mm/transparent_hugepage/enabled to madvise or never (and transparent_hugepage=madvise '
		   'on the kernel command line): with always, backends'' private memory is gathered into 2 MB pages, '
		   'which costs latency (compaction) and memory; PostgreSQL uses huge pages for shared memory through huge_pages'
	FROM s, k
	WHERE s.transparent_hugepage OPERATOR(pg_catalog.=) 'always'

	UNION ALL
	SELECT 'oom_postmaster',
		   CASE WHEN pm.oom_score OPERATOR(pg_catalog.>=) c.max_oom_score THEN 'critical' ELSE 'warning' END,
		   pg_catalog.format('the postmaster (pid %s) has oom_score_adj %s and oom_score %s; the highest oom_score '
							 'among the server''s processes is %s', pm.pid, pm.oom_score_adj, pm.oom_score, c.max_oom_score),
		   'protect it: start it with oom_score_adj = -1000 (systemd: OOMScoreAdjust=-1000) and with '
		   'PG_OOM_ADJUST_FILE=/proc/self/oom_score_adj and PG_OOM_ADJUST_VALUE=0 in its environment, so that its '
		   'children go back to 0; if the OOM killer takes the postmaster, the server stays down until something restarts it'
	FROM p AS pm, c
	WHERE pm.backend_type OPERATOR(pg_catalog.=) 'postmaster'
	  AND pm.oom_score_adj OPERATOR(pg_catalog.>) -1000

	UNION ALL
	SELECT 'oom_auxiliary_first', 'warning',
		   pg_catalog.format('the %s (pid %s) has oom_score %s, above every client backend (highest: %s): the OOM killer '
							 'takes it first, and killing any child of the postmaster ends every session (crash restart)',
							 x.backend_type, x.pid, x.oom_score, c.client_max_oom_score),
		   'oom_score follows resident memory, and without huge pages that includes the shared memory a process touched: '
		   'the checkpointer and background writer touch most of shared_buffers. With huge_pages = on, shared memory '
		   'leaves RSS and the score follows each process''s own memory; and keep clear of the OOM killer (see headroom)'
	FROM c,
		 -- children without a PGPROC (the logger) are restarted alone: not these
		 LATERAL (SELECT * FROM p
				  WHERE p.own_type IS NULL
					AND p.backend_type OPERATOR(pg_catalog.<>) ALL (ARRAY['client backend', 'parallel worker'])
				  ORDER BY p.oom_score DESC NULLS LAST, p.pid LIMIT 1) AS x
	WHERE x.oom_score OPERATOR(pg_catalog.>) c.client_max_oom_score

	UNION ALL
	SELECT 'overcommit',
		   CASE WHEN s.overcommit_memory OPERATOR(pg_catalog.=) 2
					 AND s.committed_as OPERATOR(pg_catalog.>=) ((s.commit_limit OPERATOR(pg_catalog.*) 98) OPERATOR(pg_catalog./) 100)
				THEN 'critical'
				WHEN s.overcommit_memory OPERATOR(pg_catalog.=) 1
					 OR (s.overcommit_memory OPERATOR(pg_catalog.=) 2
						 AND s.committed_as OPERATOR(pg_catalog.>=) ((s.commit_limit OPERATOR(pg_catalog.*) 9) OPERATOR(pg_catalog./) 10))
					 OR (s.overcommit_memory OPERATOR(pg_catalog.=) 0
						 AND s.committed_as OPERATOR(pg_catalog.>) (s.mem_total OPERATOR(pg_catalog.+) s.swap_total))
				THEN 'warning' ELSE 'info' END,
		   pg_catalog.format('vm.overcommit_memory = %s, vm.overcommit_ratio = %s; Committed_AS %s, CommitLimit %s, '
							 'RAM %s, swap %s', s.overcommit_memory, k.overcommit_ratio,
							 pg_catalog.pg_size_pretty(s.committed_as), pg_catalog.pg_size_pretty(s.commit_limit),
							 pg_catalog.pg_size_pretty(s.mem_total), pg_catalog.pg_size_pretty(s.swap_total)),
		   CASE WHEN s.overcommit_memory OPERATOR(pg_catalog.=) 2
				THEN 'strict overcommit: allocations past CommitLimit fail with "out of memory" errors instead of '
					 'waking the OOM killer; raise vm.overcommit_ratio or add memory before Committed_AS reaches it'
				WHEN s.overcommit_memory OPERATOR(pg_catalog.=) 1
				THEN 'the kernel grants every allocation, so the OOM killer is the only limit: on a dedicated database '
					 'server set vm.overcommit_memory = 2 (PostgreSQL''s documentation, "Linux Memory Overcommit"), with '
					 'vm.overcommit_ratio so that CommitLimit covers RAM less what the kernel needs'
				ELSE 'heuristic overcommit: only blatant over-allocations fail, and more is promised than can be kept '
					 'once Committed_AS passes RAM + swap; on a dedicated database server PostgreSQL''s documentation '
					 'advises vm.overcommit_memory = 2, so that a backend gets an error instead of the OOM killer ending every session'
		   END
	FROM s, k

	UNION ALL
	SELECT 'work_mem_exposure', 'warning',
		   pg_catalog.format('max_connections %s x work_mem %s x hash_mem_multiplier %s = %s, plus autovacuum_max_workers %s x '
							 '%s = %s, against %s of memory left (the smaller of MemAvailable and the cgroup''s room)',
							 g.max_connections, pg_catalog.pg_size_pretty(g.work_mem), g.hash_mem_multiplier,
							 pg_catalog.pg_size_pretty(e.connections), g.autovacuum_max_workers,
							 pg_catalog.pg_size_pretty(g.autovacuum_work_mem), pg_catalog.pg_size_pretty(e.autovacuum),
							 pg_catalog.pg_size_pretty(m.available)),
		   pg_catalog.format('work_mem is per sort or hash node and per backend: lower it globally (about %s fits) and '
							 'raise it per role or per query (SET LOCAL) where a benchmark shows a gain; or lower '
							 'max_connections and put a pooler in front',
							 pg_catalog.pg_size_pretty(GREATEST((m.available OPERATOR(pg_catalog.-) e.autovacuum)
										OPERATOR(pg_catalog./) (g.max_connections OPERATOR(pg_catalog.*) g.hash_mem_multiplier), 65536)::bigint))
	FROM g, m,
		 LATERAL (SELECT ((g.max_connections OPERATOR(pg_catalog.*) g.work_mem) OPERATOR(pg_catalog.*) g.hash_mem_multiplier)::bigint
							 AS connections,
						 g.autovacuum_max_workers OPERATOR(pg_catalog.*) g.autovacuum_work_mem AS autovacuum) AS e
	WHERE (e.connections OPERATOR(pg_catalog.+) e.autovacuum) OPERATOR(pg_catalog.>) m.available

	UNION ALL
	SELECT w.setting OPERATOR(pg_catalog.||) '_above_cpu_cache', 'warning',
		   pg_catalog.format('%s = %s is %s times the CPU''s last-level cache (L%s, %s)', w.setting,
							 pg_catalog.pg_size_pretty(w.bytes),
							 pg_catalog.round(w.bytes::numeric OPERATOR(pg_catalog./) k.cpu_cache_bytes, 1),
							 k.cpu_cache_level, pg_catalog.pg_size_pretty(k.cpu_cache_bytes)),
		   'bigger is not faster: hash tables and sort runs that outgrow the cache wait on main memory (a 16 GB '
		   'maintenance_work_mem built a GIN index about 30% slower than 64 MB); use modest values (64 MB to 1 GB) '
		   'and raise them per session (SET) for the jobs where a benchmark on this machine shows a gain'
	FROM g, k,
		 LATERAL (VALUES ('work_mem', g.work_mem), ('maintenance_work_mem', g.maintenance_work_mem)) AS w(setting, bytes)
	WHERE k.cpu_cache_bytes OPERATOR(pg_catalog.>) 0
	  AND w.bytes OPERATOR(pg_catalog.>=) (16 OPERATOR(pg_catalog.*) k.cpu_cache_bytes)
	  AND w.bytes OPERATOR(pg_catalog.>=) 1073741824

	UNION ALL
	SELECT 'dirty_writeback',
		   CASE WHEN g.maintenance_work_mem OPERATOR(pg_catalog.>) m.dirty_limit THEN 'warning' ELSE 'info' END,
		   pg_catalog.format('maintenance_work_mem %s; the kernel starts writeback at %s of dirty pages and throttles '
							 'writers at %s (vm.dirty_background_%s, vm.dirty_%s)',
							 pg_catalog.pg_size_pretty(g.maintenance_work_mem),
							 pg_catalog.pg_size_pretty(m.dirty_background_limit), pg_catalog.pg_size_pretty(m.dirty_limit),
							 CASE WHEN k.dirty_background_bytes OPERATOR(pg_catalog.>) 0
								  THEN 'bytes = ' OPERATOR(pg_catalog.||) k.dirty_background_bytes
								  ELSE ('ratio = ' OPERATOR(pg_catalog.||) k.dirty_background_ratio) OPERATOR(pg_catalog.||) '%' END,
							 CASE WHEN k.dirty_bytes OPERATOR(pg_catalog.>) 0
								  THEN 'bytes = ' OPERATOR(pg_catalog.||) k.dirty_bytes
								  ELSE ('ratio = ' OPERATOR(pg_catalog.||) k.dirty_ratio) OPERATOR(pg_catalog.||) '%' END),
		   'a maintenance job this large writes its temporary files in batches past the dirty thresholds, and then '
		   'stalls while the kernel writes them back; keep maintenance_work_mem modest (64 MB to 1 GB), or set '
		   'vm.dirty_background_bytes (e.g. 256 MB) so that writeback starts early and runs smoothly'
	FROM g, k, m
	WHERE g.maintenance_work_mem OPERATOR(pg_catalog.>) m.dirty_background_limit

	UNION ALL
	SELECT 'max_connections',
		   CASE WHEN c.clients OPERATOR(pg_catalog.>) (10 OPERATOR(pg_catalog.*) k.cpus) THEN 'warning' ELSE 'info' END,
		   pg_catalog.format('max_connections %s is %s times the %s CPUs this server may use; %s client backends now',
							 g.max_connections, pg_catalog.round(g.max_connections::numeric OPERATOR(pg_catalog./) k.cpus, 1),
							 k.cpus, c.clients),
		   'more connections than about 10 times the cores rarely add throughput, and each one costs memory; '
		   'cap them and put a pooler (PgBouncer) in front: with one connection per transaction, a pooler '
		   'served about 8 times more transactions than direct connections'
	FROM g, k, c
	WHERE g.max_connections OPERATOR(pg_catalog.>) (10 OPERATOR(pg_catalog.*) k.cpus)

	UNION ALL
	SELECT 'idle_connections', 'warning',
		   pg_catalog.format('%s idle client backends (%s CPUs) hold %s, %s each on average; %s of them idle for over 10 minutes',
							 c.idle, k.cpus, pg_catalog.pg_size_pretty(c.idle_overhead),
							 pg_catalog.pg_size_pretty(c.idle_overhead OPERATOR(pg_catalog./) c.idle), c.idle_10min),
		   'a transaction pooler (PgBouncer, pool_mode = transaction) serves them with a few server connections; '
		   'idle_session_timeout closes the forgotten ones'
	FROM c, k
	WHERE c.idle OPERATOR(pg_catalog.>=) GREATEST(10, 10 OPERATOR(pg_catalog.*) k.cpus)

	UNION ALL
	SELECT 'connection_rate',
		   -- a rate since stats_reset is measured; since the server started it
		   -- is an upper bound (the counters survive a clean restart)
		   CASE WHEN r.unknown_since OPERATOR(pg_catalog.=) 0 THEN 'warning' ELSE 'info' END,
		   pg_catalog.format('%s new sessions per second on average: %s sessions in pg_stat_database since %s',
							 pg_catalog.round(r.rate::numeric, 1), r.sessions,
							 CASE WHEN r.unknown_since OPERATOR(pg_catalog.=) 0 THEN 'its statistics were reset'
								  ELSE 'the server started (an upper bound: the counters may be older; '
									   'pg_stat_reset() starts a measured window)' END),
		   'every connection is a new process: forking it and warming its caches costs more than most queries; '
		   'a pooler keeps the server connections open (with one connection per transaction, one served about 8 '
		   'times more transactions)'
	FROM (SELECT pg_catalog.sum(d.sessions)::bigint AS sessions,
				 pg_catalog.sum(d.sessions OPERATOR(pg_catalog./)
								GREATEST(EXTRACT(epoch FROM pg_catalog.now() OPERATOR(pg_catalog.-)
												 COALESCE(d.stats_reset, pg_catalog.pg_postmaster_start_time())), 1)) AS rate,
				 pg_catalog.count(*) FILTER (WHERE d.stats_reset IS NULL
											 AND d.sessions OPERATOR(pg_catalog.>) 0) AS unknown_since
		  FROM pg_catalog.pg_stat_database AS d) AS r
	WHERE r.sessions OPERATOR(pg_catalog.>=) 1000 AND r.rate OPERATOR(pg_catalog.>=) 10

	UNION ALL
	SELECT 'swap', 'warning',
		   pg_catalog.format('%s of the server''s processes have %s swapped out; the largest: the %s (pid %s), %s',
							 c.swapping, pg_catalog.pg_size_pretty(c.swap), x.backend_type, x.pid, pg_catalog.pg_size_pretty(x.swap)),
		   'memory is short: a backend whose memory was swapped out stalls on page faults when it next runs; '
		   'make room (see pg_procmem_headroom: work_mem, max_connections, shared_buffers) or add memory'
	FROM c, LATERAL (SELECT * FROM p ORDER BY p.swap DESC NULLS LAST, p.pid LIMIT 1) AS x
	WHERE c.swap OPERATOR(pg_catalog.>) 0

	UNION ALL
	SELECT 'cgroup_limit',
		   CASE WHEN (k.cgroup_tightest_room OPERATOR(pg_catalog.*) 100)
					 OPERATOR(pg_catalog.<) (k.cgroup_tightest_limit OPERATOR(pg_catalog.*) 3)
				THEN 'critical' ELSE 'warning' END,
		   pg_catalog.format('memory cgroup %s (or an ancestor): %s left of a %s limit (%s%%), page cache not '
							 'counted; usage of the server''s cgroup %s, of which %s page cache',
							 s.cgroup_path, pg_catalog.pg_size_pretty(k.cgroup_tightest_room),
							 pg_catalog.pg_size_pretty(k.cgroup_tightest_limit),
							 pg_catalog.round((k.cgroup_tightest_room OPERATOR(pg_catalog.*) 100.0)
											  OPERATOR(pg_catalog./) k.cgroup_tightest_limit, 1),
							 pg_catalog.pg_size_pretty(s.cgroup_usage),
							 pg_catalog.pg_size_pretty(s.cgroup_file OPERATOR(pg_catalog.-) s.cgroup_shmem)),
		   'at the limit the kernel OOM-kills inside the cgroup, and a killed backend means a crash restart: raise the '
		   'container''s memory limit, or lower what the server can take (work_mem, max_connections, shared_buffers)'
	FROM s, k
	WHERE k.cgroup_tightest_limit OPERATOR(pg_catalog.>) 0
	  AND (k.cgroup_tightest_room OPERATOR(pg_catalog.*) 10) OPERATOR(pg_catalog.<) k.cgroup_tightest_limit

	UNION ALL
	SELECT 'cgroup_oom_kills', 'critical',
		   pg_catalog.format('the memory cgroup %s has recorded %s OOM kills (%s times at its limit)',
							 s.cgroup_path, s.cgroup_oom_kills, COALESCE(s.cgroup_oom_events::text, 'unknown')),
		   'processes in the server''s cgroup were killed for memory: look for "terminated by signal 9" in the '
		   'server log; if a backend was killed, every session ended in a crash restart. Raise the limit or lower '
		   'what the server can take (work_mem, max_connections, shared_buffers)'
	FROM s
	WHERE s.cgroup_oom_kills OPERATOR(pg_catalog.>) 0
)
SELECT f.check_name, f.severity, f.evidence, f.recommendation
FROM f
ORDER BY CASE f.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, f.check_name;

COMMENT ON VIEW pg_procmem_advice IS
'every memory finding as a row: check, severity, the measured evidence, and what to do';

REVOKE ALL ON FUNCTION pg_procmem_machine_info() FROM PUBLIC;
REVOKE ALL ON pg_procmem_advice FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_procmem_machine_info() TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_advice TO pg_read_all_stats;
