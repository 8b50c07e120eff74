-- The checks of pg_procmem_advice, a function a family: each reads the one
-- row of pg_procmem_advice_facts it is given and returns a row a finding
-- (check_name, severity, summary, evidence, recommendation). summary is
-- the finding in at most 64 characters, worst-case figures included, so
-- that "SELECT severity, summary" fits an 80-column terminal. Thresholds
-- and the figures behind them are in docs/views.md. SQL-standard bodies: parsed once,
-- here, so the caller's search_path cannot change what they call.
-- (OPERATOR() syntax has no precedence: every mix is parenthesized.)

-- Huge pages: the page tables they would save, transparent huge pages.
CREATE FUNCTION pg_procmem_advice_huge_pages(f @extschema@.pg_procmem_advice_facts)
RETURNS TABLE (check_name text, severity text, summary text, evidence text, recommendation text)
LANGUAGE sql STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	SELECT 'huge_pages',
		   CASE WHEN f.page_tables OPERATOR(pg_catalog.>=) (f.mem_total OPERATOR(pg_catalog./) 10)
				THEN 'critical' ELSE 'warning' END,
		   pg_catalog.format('page tables %s; about %s with huge pages', pg_catalog.pg_size_pretty(f.page_tables),
							 pg_catalog.pg_size_pretty(f.page_tables_with_huge_pages)),
		   pg_catalog.format('huge_pages = %s, and shared memory is not on huge pages; the page tables of the '
							 'server''s processes take %s (%s%% of RAM), about %s with huge pages; '
							 'shared_memory_size %s; vm.nr_hugepages %s, %s free',
							 f.huge_pages, pg_catalog.pg_size_pretty(f.page_tables),
							 pg_catalog.round((f.page_tables OPERATOR(pg_catalog.*) 100.0) OPERATOR(pg_catalog./) f.mem_total, 1),
							 pg_catalog.pg_size_pretty(f.page_tables_with_huge_pages),
							 COALESCE(pg_catalog.pg_size_pretty(f.shared_memory_size), 'unknown'),
							 f.hugepages_total, f.hugepages_free),
		   f.huge_pages_recommendation OPERATOR(pg_catalog.||)
			   ' (page tables grow with shared memory touched x processes: one server reached 25 GB of them; with huge pages it had 61 MB)'
	WHERE NOT f.huge_pages_in_use
	  AND ((f.page_tables OPERATOR(pg_catalog.-) f.page_tables_with_huge_pages)
			   OPERATOR(pg_catalog.>=) (f.mem_total OPERATOR(pg_catalog./) 100)
		   OR COALESCE(f.shared_memory_size, 0) OPERATOR(pg_catalog.>=) 8589934592
		   OR (f.huge_pages OPERATOR(pg_catalog.=) 'try' AND f.hugepages_total OPERATOR(pg_catalog.>) 0))

	UNION ALL
	SELECT 'transparent_hugepage', 'warning',
		   pg_catalog.format('transparent huge pages always; %s on them', pg_catalog.pg_size_pretty(f.anon_hugepages)),
		   pg_catalog.format('transparent huge pages: enabled = always, defrag = %s; %s of anonymous memory on them now',
							 f.transparent_hugepage_defrag, pg_catalog.pg_size_pretty(f.anon_hugepages)),
		   'set /sys/kernel/mm/transparent_hugepage/enabled to madvise or never (and transparent_hugepage=madvise '
		   'on the kernel command line): with always, backends'' private memory is gathered into 2 MB pages, '
		   'which costs latency (compaction) and memory; PostgreSQL uses huge pages for shared memory through huge_pages'
	WHERE f.transparent_hugepage OPERATOR(pg_catalog.=) 'always';
END;

-- The OOM killer: is the postmaster protected, does it take an auxiliary
-- process before any client backend.
CREATE FUNCTION pg_procmem_advice_oom(f @extschema@.pg_procmem_advice_facts)
RETURNS TABLE (check_name text, severity text, summary text, evidence text, recommendation text)
LANGUAGE sql STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	SELECT 'oom_postmaster',
		   -- unprotected is a risk; it is critical when memory is short and
		   -- the killer would take the postmaster or an auxiliary process
		   -- first (on an idle server the postmaster's score is simply the
		   -- highest: that alone pages nobody)
		   CASE WHEN f.memory_short
					 AND (f.top_backend_type OPERATOR(pg_catalog.=) 'postmaster'
						  OR (f.top_own_type IS NULL
							  AND f.top_backend_type OPERATOR(pg_catalog.<>) ALL (ARRAY['client backend', 'parallel worker'])))
				THEN 'critical' ELSE 'warning' END,
		   pg_catalog.format('postmaster not protected from the OOM killer (adj %s)', f.postmaster_oom_score_adj),
		   pg_catalog.format('the postmaster (pid %s) has oom_score_adj %s and oom_score %s; the highest oom_score '
							 'among the server''s processes is %s (the %s, pid %s); memory left: %s%s',
							 f.postmaster_pid, f.postmaster_oom_score_adj, f.postmaster_oom_score, f.top_oom_score,
							 f.top_backend_type, f.top_pid,
							 COALESCE(pg_catalog.pg_size_pretty(f.available), 'unknown'),
							 CASE WHEN f.memory_short THEN ' (short)' ELSE '' END),
		   'protect it: start it with oom_score_adj = -1000 (systemd: OOMScoreAdjust=-1000) and with '
		   'PG_OOM_ADJUST_FILE=/proc/self/oom_score_adj and PG_OOM_ADJUST_VALUE=0 in its environment, so that its '
		   'children go back to 0; if the OOM killer takes the postmaster, the server stays down until something restarts it'
	WHERE f.postmaster_oom_score_adj OPERATOR(pg_catalog.>) -1000

	UNION ALL
	SELECT 'oom_auxiliary_first', 'warning',
		   pg_catalog.format('%s: above every client for the OOM killer',
							 @extschema@.pg_procmem_clip(f.aux_backend_type, 24)),
		   pg_catalog.format('the %s (pid %s) has oom_score %s, above every client backend (highest: %s): the OOM killer '
							 'would take it before any client backend, and killing any child of the postmaster ends every session (crash restart)',
							 f.aux_backend_type, f.aux_pid, f.aux_oom_score, f.client_max_oom_score),
		   'oom_score follows resident memory, and without huge pages that includes the shared memory a process touched: '
		   'the checkpointer and background writer touch most of shared_buffers. With huge_pages = on, shared memory '
		   'leaves RSS and the score follows each process''s own memory; and keep clear of the OOM killer (see headroom)'
	WHERE f.aux_oom_score OPERATOR(pg_catalog.>) f.client_max_oom_score;
END;

-- The kernel's overcommit and writeback, and memory settings set too high
-- for the memory left or for the CPU's cache.
CREATE FUNCTION pg_procmem_advice_memory_settings(f @extschema@.pg_procmem_advice_facts)
RETURNS TABLE (check_name text, severity text, summary text, evidence text, recommendation text)
LANGUAGE sql STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	SELECT 'overcommit',
		   CASE WHEN f.overcommit_memory OPERATOR(pg_catalog.=) 2
					 AND f.committed_as OPERATOR(pg_catalog.>=) ((f.commit_limit OPERATOR(pg_catalog.*) 98) OPERATOR(pg_catalog./) 100)
				THEN 'critical'
				WHEN f.overcommit_memory OPERATOR(pg_catalog.=) 1
					 OR (f.overcommit_memory OPERATOR(pg_catalog.=) 2
						 AND f.committed_as OPERATOR(pg_catalog.>=) ((f.commit_limit OPERATOR(pg_catalog.*) 9) OPERATOR(pg_catalog./) 10))
					 OR (f.overcommit_memory OPERATOR(pg_catalog.=) 0
						 AND f.committed_as OPERATOR(pg_catalog.>) (f.mem_total OPERATOR(pg_catalog.+) f.swap_total))
				THEN 'warning' ELSE 'info' END,
		   CASE f.overcommit_memory
				WHEN 2 THEN pg_catalog.format('strict overcommit: %s of %s committed', pg_catalog.pg_size_pretty(f.committed_as),
											  pg_catalog.pg_size_pretty(f.commit_limit))
				WHEN 1 THEN 'vm.overcommit_memory = 1: every allocation is granted'
				ELSE pg_catalog.format('heuristic overcommit: %s committed, RAM + swap %s',
									   pg_catalog.pg_size_pretty(f.committed_as),
									   pg_catalog.pg_size_pretty(f.mem_total OPERATOR(pg_catalog.+) f.swap_total)) END,
		   pg_catalog.format('vm.overcommit_memory = %s, vm.overcommit_ratio = %s; Committed_AS %s, CommitLimit %s, '
							 'RAM %s, swap %s', f.overcommit_memory, f.overcommit_ratio,
							 pg_catalog.pg_size_pretty(f.committed_as), pg_catalog.pg_size_pretty(f.commit_limit),
							 pg_catalog.pg_size_pretty(f.mem_total), pg_catalog.pg_size_pretty(f.swap_total)),
		   CASE WHEN f.overcommit_memory OPERATOR(pg_catalog.=) 2
				THEN 'strict overcommit: allocations past CommitLimit fail with "out of memory" errors instead of '
					 'waking the OOM killer; raise vm.overcommit_ratio or add memory before Committed_AS reaches it'
				WHEN f.overcommit_memory OPERATOR(pg_catalog.=) 1
				THEN 'the kernel grants every allocation, so the OOM killer is the only limit: on a dedicated database '
					 'server set vm.overcommit_memory = 2 (PostgreSQL''s documentation, "Linux Memory Overcommit"), with '
					 'vm.overcommit_ratio so that CommitLimit covers RAM less what the kernel needs'
				ELSE 'heuristic overcommit: only blatant over-allocations fail, and more is promised than can be kept '
					 'once Committed_AS passes RAM + swap; on a dedicated database server PostgreSQL''s documentation '
					 'advises vm.overcommit_memory = 2, so that a backend gets an error instead of the OOM killer ending every session'
		   END

	UNION ALL
	SELECT 'work_mem_exposure', 'warning',
		   pg_catalog.format('work_mem and temp_buffers could take %s; %s left',
							 pg_catalog.pg_size_pretty((e.connections OPERATOR(pg_catalog.+) e.autovacuum)
													   OPERATOR(pg_catalog.+) e.temp),
							 pg_catalog.pg_size_pretty(f.available)),
		   pg_catalog.format('max_connections %s x work_mem %s x hash_mem_multiplier %s = %s, plus autovacuum_max_workers %s x '
							 '%s = %s, plus max_connections x temp_buffers %s = %s (local buffers a session keeps '
							 'until it ends), against %s of memory left (the smaller of MemAvailable and the cgroup''s room)',
							 f.max_connections, pg_catalog.pg_size_pretty(f.work_mem), f.hash_mem_multiplier,
							 pg_catalog.pg_size_pretty(e.connections), f.autovacuum_max_workers,
							 pg_catalog.pg_size_pretty(f.autovacuum_work_mem), pg_catalog.pg_size_pretty(e.autovacuum),
							 pg_catalog.pg_size_pretty(f.temp_buffers), pg_catalog.pg_size_pretty(e.temp),
							 pg_catalog.pg_size_pretty(f.available)),
		   pg_catalog.format('work_mem is per sort or hash node and per backend: lower it globally (about %s fits) and '
							 'raise it per role or per query (SET LOCAL) where a benchmark shows a gain; keep '
							 'temp_buffers small where sessions use temporary tables; or lower '
							 'max_connections and put a pooler in front',
							 pg_catalog.pg_size_pretty(GREATEST(((f.available OPERATOR(pg_catalog.-) e.autovacuum) OPERATOR(pg_catalog.-) e.temp)
										OPERATOR(pg_catalog./) (f.max_connections OPERATOR(pg_catalog.*) f.hash_mem_multiplier), 65536)::bigint))
	FROM (SELECT ((f.max_connections OPERATOR(pg_catalog.*) f.work_mem) OPERATOR(pg_catalog.*) f.hash_mem_multiplier)::bigint
					 AS connections,
				 f.autovacuum_max_workers OPERATOR(pg_catalog.*) f.autovacuum_work_mem AS autovacuum,
				 f.max_connections OPERATOR(pg_catalog.*) f.temp_buffers AS temp) AS e
	WHERE ((e.connections OPERATOR(pg_catalog.+) e.autovacuum) OPERATOR(pg_catalog.+) e.temp) OPERATOR(pg_catalog.>) f.available

	UNION ALL
	SELECT w.setting OPERATOR(pg_catalog.||) '_above_cpu_cache', 'warning',
		   pg_catalog.format('%s %s, %s times the CPU''s cache', w.setting, pg_catalog.pg_size_pretty(w.bytes),
							 pg_catalog.round(w.bytes::numeric OPERATOR(pg_catalog./) f.cpu_cache_bytes)),
		   pg_catalog.format('%s = %s is %s times the CPU''s last-level cache (L%s, %s)', w.setting,
							 pg_catalog.pg_size_pretty(w.bytes),
							 pg_catalog.round(w.bytes::numeric OPERATOR(pg_catalog./) f.cpu_cache_bytes, 1),
							 f.cpu_cache_level, pg_catalog.pg_size_pretty(f.cpu_cache_bytes)),
		   'bigger is not faster: hash tables and sort runs that outgrow the cache wait on main memory (a 16 GB '
		   'maintenance_work_mem built a GIN index about 30% slower than 64 MB); use modest values (64 MB to 1 GB) '
		   'and raise them per session (SET) for the jobs where a benchmark on this machine shows a gain'
	FROM (VALUES ('work_mem', f.work_mem), ('maintenance_work_mem', f.maintenance_work_mem)) AS w(setting, bytes)
	WHERE f.cpu_cache_bytes OPERATOR(pg_catalog.>) 0
	  AND w.bytes OPERATOR(pg_catalog.>=) (16 OPERATOR(pg_catalog.*) f.cpu_cache_bytes)
	  AND w.bytes OPERATOR(pg_catalog.>=) 1073741824

	UNION ALL
	SELECT 'dirty_writeback',
		   CASE WHEN f.maintenance_work_mem OPERATOR(pg_catalog.>) f.dirty_limit THEN 'warning' ELSE 'info' END,
		   pg_catalog.format('maintenance_work_mem %s; writeback starts at %s', pg_catalog.pg_size_pretty(f.maintenance_work_mem),
							 pg_catalog.pg_size_pretty(f.dirty_background_limit)),
		   pg_catalog.format('maintenance_work_mem %s; the kernel starts writeback at %s of dirty pages and throttles '
							 'writers at %s (vm.dirty_background_%s, vm.dirty_%s)',
							 pg_catalog.pg_size_pretty(f.maintenance_work_mem),
							 pg_catalog.pg_size_pretty(f.dirty_background_limit), pg_catalog.pg_size_pretty(f.dirty_limit),
							 CASE WHEN f.dirty_background_bytes OPERATOR(pg_catalog.>) 0
								  THEN 'bytes = ' OPERATOR(pg_catalog.||) f.dirty_background_bytes
								  ELSE ('ratio = ' OPERATOR(pg_catalog.||) f.dirty_background_ratio) OPERATOR(pg_catalog.||) '%' END,
							 CASE WHEN f.dirty_bytes OPERATOR(pg_catalog.>) 0
								  THEN 'bytes = ' OPERATOR(pg_catalog.||) f.dirty_bytes
								  ELSE ('ratio = ' OPERATOR(pg_catalog.||) f.dirty_ratio) OPERATOR(pg_catalog.||) '%' END),
		   'a maintenance job this large writes its temporary files in batches past the dirty thresholds, and then '
		   'stalls while the kernel writes them back; keep maintenance_work_mem modest (64 MB to 1 GB), or set '
		   'vm.dirty_background_bytes (e.g. 256 MB) so that writeback starts early and runs smoothly'
	WHERE f.maintenance_work_mem OPERATOR(pg_catalog.>) f.dirty_background_limit;
END;

-- Connections: how many may come, how many sit idle, how fast they come.
CREATE FUNCTION pg_procmem_advice_connections(f @extschema@.pg_procmem_advice_facts)
RETURNS TABLE (check_name text, severity text, summary text, evidence text, recommendation text)
LANGUAGE sql STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	SELECT 'max_connections',
		   CASE WHEN f.clients OPERATOR(pg_catalog.>) (10 OPERATOR(pg_catalog.*) f.cpus) THEN 'warning' ELSE 'info' END,
		   pg_catalog.format('max_connections %s is %s times the %s CPUs', f.max_connections,
							 pg_catalog.round(f.max_connections::numeric OPERATOR(pg_catalog./) f.cpus, 1), f.cpus),
		   pg_catalog.format('max_connections %s is %s times the %s CPUs this server may use; %s now',
							 f.max_connections, pg_catalog.round(f.max_connections::numeric OPERATOR(pg_catalog./) f.cpus, 1),
							 f.cpus, CASE f.clients WHEN 1 THEN '1 client backend'
										ELSE f.clients OPERATOR(pg_catalog.||) ' client backends' END),
		   'more connections than about 10 times the cores rarely add throughput, and each one costs memory; '
		   'cap them and put a pooler (PgBouncer) in front: with one connection per transaction, a pooler '
		   'served about 8 times more transactions than direct connections'
	WHERE f.max_connections OPERATOR(pg_catalog.>) (10 OPERATOR(pg_catalog.*) f.cpus)

	UNION ALL
	SELECT 'idle_connections', 'warning',
		   pg_catalog.format('%s idle connections hold %s', f.idle, pg_catalog.pg_size_pretty(f.idle_overhead)),
		   pg_catalog.format('%s idle client backends (%s CPUs) hold %s, %s each on average; %s of them idle for over 10 minutes',
							 f.idle, f.cpus, pg_catalog.pg_size_pretty(f.idle_overhead),
							 pg_catalog.pg_size_pretty(f.idle_overhead OPERATOR(pg_catalog./) f.idle), f.idle_10min),
		   'a transaction pooler (PgBouncer, pool_mode = transaction) serves them with a few server connections; '
		   'idle_session_timeout closes the forgotten ones'
	WHERE f.idle OPERATOR(pg_catalog.>=) GREATEST(10, 10 OPERATOR(pg_catalog.*) f.cpus)

	UNION ALL
	SELECT 'connection_rate',
		   CASE WHEN f.connection_rate OPERATOR(pg_catalog.>=) 10 THEN 'warning' ELSE 'info' END,
		   pg_catalog.format('%s new connections per second', pg_catalog.round(f.connection_rate::numeric, 1)),
		   pg_catalog.format('%s new client connections per second over the last %s seconds (counted by '
							 'the memory history: %s)', pg_catalog.round(f.connection_rate::numeric, 1),
							 pg_catalog.round(f.connection_seconds::numeric), f.new_connections),
		   'above about 10 per second, a pooler pays off: every connection is a new process, and with one '
		   'connection per transaction a pooler served about 8 times more transactions'
	WHERE f.connection_seconds OPERATOR(pg_catalog.>) 0

	UNION ALL
	SELECT 'connection_rate', 'info',
		   'new connections per second: unknown (no history yet)',
		   -- without the history no window the sessions counter covers can be told
		   pg_catalog.format('new sessions per second: unknown (the memory history has no minute of this run '
							 'in its last 5 minutes: pg_procmem is not in shared_preload_libraries, the server '
							 'just started, or pg_procmem.sample_interval is 0 or above 4 minutes); '
							 'pg_stat_database counts %s sessions, which may include sessions of runs before '
							 'this one (started %s)',
							 f.sessions, pg_catalog.to_char(pg_catalog.pg_postmaster_start_time(), 'YYYY-MM-DD HH24:MI:SS TZ')),
		   'measure it: SELECT sum(sessions) FROM pg_stat_database twice, the difference divided by the seconds '
		   'between; above about 10 per second, a pooler pays off (every connection is a new process, and with one '
		   'connection per transaction a pooler served about 8 times more transactions)'
	WHERE f.sessions OPERATOR(pg_catalog.>=) 1000
	  AND NOT COALESCE(f.connection_seconds OPERATOR(pg_catalog.>) 0, false);
END;

-- Memory running out: swap in use, a cgroup near its limit, OOM kills seen.
CREATE FUNCTION pg_procmem_advice_pressure(f @extschema@.pg_procmem_advice_facts)
RETURNS TABLE (check_name text, severity text, summary text, evidence text, recommendation text)
LANGUAGE sql STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	SELECT 'swap', 'warning',
		   pg_catalog.format('%s swapped out, by %s', pg_catalog.pg_size_pretty(f.swap),
							 CASE f.swapping WHEN 1 THEN '1 process' ELSE f.swapping OPERATOR(pg_catalog.||) ' processes' END),
		   pg_catalog.format('%s of the server''s processes %s %s swapped out; the largest: the %s (pid %s), %s',
							 f.swapping, CASE f.swapping WHEN 1 THEN 'has' ELSE 'have' END,
							 pg_catalog.pg_size_pretty(f.swap), f.swap_backend_type, f.swap_pid,
							 pg_catalog.pg_size_pretty(f.swap_bytes)),
		   'memory is short: a backend whose memory was swapped out stalls on page faults when it next runs; '
		   'make room (see pg_procmem_headroom: work_mem, max_connections, shared_buffers) or add memory'
	WHERE f.swap OPERATOR(pg_catalog.>) 0

	UNION ALL
	SELECT 'cgroup_limit',
		   CASE WHEN (f.cgroup_tightest_room OPERATOR(pg_catalog.*) 100)
					 OPERATOR(pg_catalog.<) (f.cgroup_tightest_limit OPERATOR(pg_catalog.*) 3)
				THEN 'critical' ELSE 'warning' END,
		   pg_catalog.format('memory cgroup: %s left of a %s limit', pg_catalog.pg_size_pretty(f.cgroup_tightest_room),
							 pg_catalog.pg_size_pretty(f.cgroup_tightest_limit)),
		   pg_catalog.format('memory cgroup %s (or an ancestor): %s left of a %s limit (%s%%), page cache and '
							 'reclaimable slab not counted; usage of the server''s cgroup %s, of which %s page cache',
							 f.cgroup_path, pg_catalog.pg_size_pretty(f.cgroup_tightest_room),
							 pg_catalog.pg_size_pretty(f.cgroup_tightest_limit),
							 pg_catalog.round((f.cgroup_tightest_room OPERATOR(pg_catalog.*) 100.0)
											  OPERATOR(pg_catalog./) f.cgroup_tightest_limit, 1),
							 pg_catalog.pg_size_pretty(f.cgroup_usage),
							 pg_catalog.pg_size_pretty(f.cgroup_file OPERATOR(pg_catalog.-) f.cgroup_shmem)),
		   'at the limit the kernel OOM-kills inside the cgroup, and a killed backend means a crash restart: raise the '
		   'container''s memory limit, or lower what the server can take (work_mem, max_connections, shared_buffers)'
	WHERE f.cgroup_tightest_limit OPERATOR(pg_catalog.>) 0
	  AND (f.cgroup_tightest_room OPERATOR(pg_catalog.*) 10) OPERATOR(pg_catalog.<) f.cgroup_tightest_limit

	UNION ALL
	-- counted since the server started or last restarted after a crash (a
	-- crash row counts the kills before it): without the memory history,
	-- only the cgroup's lifetime count, which may be old news
	SELECT 'dsm_leftover',
		   -- never critical: it is memory held, not a process about to take more
		   CASE WHEN (f.dsm_leftover OPERATOR(pg_catalog.*) 10) OPERATOR(pg_catalog.>=)
					 COALESCE(NULLIF(f.cgroup_tightest_limit, 0), f.mem_total) THEN 'warning' ELSE 'info' END,
		   pg_catalog.format('%s of shared memory (DSM) left over', pg_catalog.pg_size_pretty(f.dsm_leftover)),
		   pg_catalog.format('dynamic shared memory segments this server mapped: %s, holding %s, not mapped by any of '
							 'its processes for pg_procmem.dsm_leftover_after (%s); in the cgroup''s usage, in no process''s; '
							 'the largest: %s',
							 f.dsm_leftover_segments, pg_catalog.pg_size_pretty(f.dsm_leftover),
							 pg_catalog.current_setting('pg_procmem.dsm_leftover_after', true),
							 pg_catalog.array_to_string(f.dsm_leftover_names, ', ')),
		   'a process killed before it removed its segments leaves them behind (a parallel query''s hash table); '
		   'pg_procmem_history_system.dsm_leftover_names says where they are. PostgreSQL removes those its control '
		   'segment lists at its next start; one it no longer lists stays until removed by hand: first make sure no '
		   'process maps it (lsof, or grep its name in /proc/*/maps), then rm the file (posix, mmap) or ipcrm -m the '
		   'shmid (System V)'
	WHERE f.dsm_leftover OPERATOR(pg_catalog.>) 0

	UNION ALL
	SELECT 'cgroup_oom_kills', CASE WHEN k.lately THEN 'critical' ELSE 'warning' END,
		   pg_catalog.format('%s in the server''s memory cgroup %s',
							 CASE k.kills WHEN 1 THEN '1 OOM kill' ELSE k.kills OPERATOR(pg_catalog.||) ' OOM kills' END,
							 CASE WHEN k.lately THEN 'since ' OPERATOR(pg_catalog.||)
									   pg_catalog.to_char(f.oom_kills_since, 'YYYY-MM-DD HH24:MI')
								  ELSE 'since it was made' END),
		   pg_catalog.format('the memory cgroup %s counted %s OOM kills %s; %s since it was made (%s times at its limit)',
							 f.cgroup_path, k.kills,
							 CASE WHEN k.lately THEN 'since ' OPERATOR(pg_catalog.||) f.oom_kills_since
										OPERATOR(pg_catalog.||) ', when the server started or last restarted after a crash'
								  ELSE 'in its life (without the memory history the server''s share is unknown)' END,
							 f.cgroup_oom_kills, COALESCE(f.cgroup_oom_events::text, 'unknown')),
		   'the kernel killed processes in the server''s cgroup for memory, and a killed backend ends every '
		   'session; pg_procmem_crashes names what was killed and pg_procmem_crash_holders who held the memory '
		   '(with pg_procmem in shared_preload_libraries); raise the limit or lower what the server can take '
		   '(work_mem, temp_buffers, max_connections, shared_buffers)'
	FROM (SELECT f.oom_kills_lately IS NOT NULL AS lately,
				 COALESCE(f.oom_kills_lately, f.cgroup_oom_kills) AS kills) AS k
	WHERE k.kills OPERATOR(pg_catalog.>) 0

	UNION ALL
	SELECT 'jit_memory',
		   CASE WHEN (f.jit_bytes OPERATOR(pg_catalog.*) 4) OPERATOR(pg_catalog.>=) f.overhead THEN 'warning' ELSE 'info' END,
		   pg_catalog.format('JIT libraries hold %s, %s%% of all overhead', pg_catalog.pg_size_pretty(f.jit_bytes),
							 pg_catalog.round((100 OPERATOR(pg_catalog.*) f.jit_bytes)::numeric OPERATOR(pg_catalog./) f.overhead)),
		   pg_catalog.format('%s hold %s in the JIT libraries (LLVM''s data, relocated when a backend first '
							 'JIT-compiles), %s%% of all processes'' overhead; jit = %s, jit_above_cost = %s',
							 CASE f.jit_processes WHEN 1 THEN '1 process'
								  ELSE f.jit_processes OPERATOR(pg_catalog.||) ' processes' END,
							 pg_catalog.pg_size_pretty(f.jit_bytes),
							 pg_catalog.round((100 OPERATOR(pg_catalog.*) f.jit_bytes)::numeric OPERATOR(pg_catalog./) f.overhead),
							 f.jit, f.jit_above_cost),
		   pg_catalog.format('a backend keeps the JIT libraries until it exits: jit = off (in postgresql.conf and for every role '
							 'or database that sets it) would save at least %s now (see '
							 'pg_procmem_breakdown.jit: LLVM''s own data; what compiling grew the heap by comes on top); '
							 'or raise jit_above_cost (%s) so that only long analytic queries '
							 'compile, and let a pooler recycle server connections (server_lifetime)',
							 pg_catalog.pg_size_pretty(f.jit_bytes), f.jit_above_cost)
	WHERE f.jit_bytes OPERATOR(pg_catalog.>=) 33554432
	  AND (f.jit_bytes OPERATOR(pg_catalog.*) 10) OPERATOR(pg_catalog.>=) f.overhead;
END;

-- What to change about a crash's victim that held the memory itself, for
-- the advice: a session not running a statement held it between
-- statements (its temp_buffers, where set; no work_mem); a statement whose
-- plans had no sort or hash held its own memory (max_backend_memory bounds
-- it, no work_mem); else its work_mem, where it was set (said: what it ran
-- with, work_mem first when it said it).
CREATE FUNCTION pg_procmem_crash_own_advice(state text, plan_memory text, said text[], temp_buffers_source text,
											work_mem_source text, usename text, datname text, query text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN state IN ('idle', 'idle in transaction', 'idle in transaction (aborted)')
			THEN pg_catalog.format('It was %s at its last sample: it held the memory between statements, '
								   'which no work_mem bounds (%s). End such sessions sooner '
								   '(idle_in_transaction_session_timeout, idle_session_timeout), and '
								   'pg_procmem.max_backend_memory bounds what one may hold.', state,
								   COALESCE(pg_catalog.split_part((SELECT x FROM pg_catalog.unnest(said) AS x
																   WHERE x LIKE 'temp_buffers =%'), ' (', 1)
											OPERATOR(pg_catalog.||) ' set '
											OPERATOR(pg_catalog.||) @extschema@.pg_procmem_set_where(temp_buffers_source)
											OPERATOR(pg_catalog.||) ': local buffers it keeps until it ends',
											'a temporary table''s buffers, its caches, what a function kept'))
			WHEN plan_memory OPERATOR(pg_catalog.=) 'none'
			THEN 'Its statement had no sort or hash, whose memory work_mem bounds: what grew was its own '
				 '(a function''s variables, an array or a value it built, an aggregate''s state), which no '
				 'work_mem bounds; pg_procmem.max_backend_memory does. Find what grows (EXPLAIN ANALYZE, '
				 'the function''s code) on a copy.'
			WHEN @extschema@.pg_procmem_set_where(work_mem_source) IS NOT NULL
			THEN pg_catalog.format('It ran with %s, set %s: each sort or hash of a query may take '
								   'work_mem (times hash_mem_multiplier for a hash); lower it there%s.',
								   pg_catalog.split_part(said[1], ' (', 1),
								   @extschema@.pg_procmem_set_where(work_mem_source) OPERATOR(pg_catalog.||)
									   CASE work_mem_source WHEN 'session' THEN ' (the application''s SET)'
											WHEN 'client' THEN ' (PGOPTIONS)' ELSE '' END,
								   CASE work_mem_source
										WHEN 'user' THEN pg_catalog.format(' (ALTER ROLE %I RESET work_mem)', usename)
										WHEN 'database' THEN pg_catalog.format(' (ALTER DATABASE %I RESET work_mem)', datname)
										WHEN 'database user' THEN pg_catalog.format(' (ALTER ROLE %I IN DATABASE %I RESET work_mem)',
																					 usename, datname)
										ELSE '' END)
			WHEN query IS NOT NULL
			THEN 'Find what in this query grows (EXPLAIN ANALYZE it on a copy) and lower work_mem for it.' END;

COMMENT ON FUNCTION pg_procmem_crash_own_advice(text, text, text[], text, text, text, text, text) IS
'internal: what to change about a crash''s victim that held the memory itself, for the advice';

-- Kills for memory of the last day, from the memory history (none without
-- pg_procmem in shared_preload_libraries): a crash restart begun by a
-- signal 9 with the cgroup's OOM kill counter rising (or unknown). What was
-- killed, who it was, what it ran and with which settings (what its
-- session, role or database gave it: said, work_mem first when it did; the
-- largest group's: holder_said), who held the memory, what to change. The
-- summary gives the time of day (the evidence has the date).
CREATE FUNCTION pg_procmem_advice_crashes(f @extschema@.pg_procmem_advice_facts)
RETURNS TABLE (check_name text, severity text, summary text, evidence text, recommendation text)
LANGUAGE sql STABLE STRICT PARALLEL RESTRICTED
BEGIN ATOMIC
	SELECT 'crash_restart', 'critical',
		   @extschema@.pg_procmem_clip(pg_catalog.format('crash at %s: %s', v.at,
				CASE WHEN v.elsewhere THEN v.holders
					 ELSE pg_catalog.concat_ws(' ', CASE WHEN c.killed_pid IS NULL THEN 'guess: pid ' ELSE 'pid ' END
												   OPERATOR(pg_catalog.||) v.pid, v.who,
											   pg_catalog.pg_size_pretty(c.overhead))
						  OPERATOR(pg_catalog.||) COALESCE(': ' OPERATOR(pg_catalog.||) c.query, '') END), 64),
		   pg_catalog.concat_ws('; ',
				pg_catalog.format('at %s %s', pg_catalog.to_char(COALESCE(c.exited_at, c.crashed_at), 'YYYY-MM-DD HH24:MI:SS.MS'),
								  COALESCE('the postmaster logged: ' OPERATOR(pg_catalog.||) c.logged,
										   'the postmaster logged nothing: ' OPERATOR(pg_catalog.||) c.how_known)),
				CASE WHEN c.oom_killed AND c.killed_after IS NOT NULL
					 THEN pg_catalog.format('the OOM killer killed it between %s and %s (its kill counter rose by %s); '
											'it exited at %s', pg_catalog.to_char(c.killed_after, 'HH24:MI:SS.MS'),
											pg_catalog.to_char(c.crashed_at, 'HH24:MI:SS.MS'), c.cgroup_oom_kills,
											pg_catalog.to_char(c.exited_at, 'HH24:MI:SS.MS')) END,
				NULLIF(pg_catalog.concat_ws(', ', 'user ' OPERATOR(pg_catalog.||) c.usename,
						   'application ' OPERATOR(pg_catalog.||) c.application_name,
						   'database ' OPERATOR(pg_catalog.||) c.datname), ''),
				'its query: ' OPERATOR(pg_catalog.||) pg_catalog.rtrim(@extschema@.pg_procmem_clip(c.query, 300), '; '),
				CASE WHEN c.overhead IS NOT NULL
					 THEN pg_catalog.format('it held %s at its last sample', pg_catalog.pg_size_pretty(c.overhead))
					 WHEN v.pid IS NOT NULL
					 THEN 'no sample saw it (it grew within one sample interval' OPERATOR(pg_catalog.||)
						  COALESCE(pg_catalog.format('; the cgroup had %s of room at the last sample',
							  pg_catalog.pg_size_pretty(NULLIF(GREATEST(c.cgroup_limit OPERATOR(pg_catalog.-)
																		 c.cgroup_usage_at_sample, 0), 0))), '')
						  OPERATOR(pg_catalog.||) ')' END,
				'it ran with ' OPERATOR(pg_catalog.||) COALESCE(v.settings, 'the server''s memory settings'),
				CASE WHEN v.elsewhere
					 THEN pg_catalog.format('at the last sample %s (the largest %s)%s', v.holders,
											COALESCE(pg_catalog.pg_size_pretty(h.largest), 'unknown'),
											COALESCE(', with ' OPERATOR(pg_catalog.||) v.holder_settings, '')) END,
				CASE WHEN c.cgroup_oom_kills OPERATOR(pg_catalog.>) 1
					 THEN pg_catalog.format('the cgroup counted %s OOM kills: others were killed too', c.cgroup_oom_kills) END),
		   pg_catalog.concat_ws(' ',
				CASE WHEN v.elsewhere AND @extschema@.pg_procmem_set_where(h.temp_buffers_source) IS NOT NULL
					 THEN pg_catalog.format('%s: each may keep %s of local buffers until it ends (set %s): '
											'lower it, or end such sessions sooner (idle_session_timeout, a pooler).',
											v.holders, (SELECT pg_catalog.split_part(x, ' (', 1)
														FROM pg_catalog.unnest(v.holder_said) AS x
														WHERE x LIKE 'temp_buffers =%'), @extschema@.pg_procmem_set_where(h.temp_buffers_source))
					 WHEN v.elsewhere
					 THEN pg_catalog.format('%s: lower what these processes can take (work_mem, temp_buffers) or how '
											'many run at once (a pooler).', v.holders) END,
				CASE WHEN NOT v.elsewhere
					 THEN @extschema@.pg_procmem_crash_own_advice(c.state, c.plan_memory, v.said, c.temp_buffers_source,
							  c.work_mem_source, c.usename, c.datname, c.query) END,
				CASE WHEN c.backend_type OPERATOR(pg_catalog.<>) ALL (ARRAY['client backend', 'parallel worker'])
					 THEN pg_catalog.format('The kernel killed the %s, which held little of its own (see the '
											'oom_auxiliary_first check).', c.backend_type) END,
				'Keep what the server can take within its memory limit (pg_procmem_headroom); '
				'pg_procmem_crashes and pg_procmem_crash_holders have the details.')
	FROM @extschema@.pg_procmem_crash_log(true) AS c
		 LEFT JOIN @extschema@.pg_procmem_crash_groups(true) AS h
			ON h.number OPERATOR(pg_catalog.=) c.number AND h.rank OPERATOR(pg_catalog.=) 1,
		 LATERAL (SELECT @extschema@.pg_procmem_settings_said(c.work_mem, c.work_mem_source, c.hash_mem_multiplier,
						 c.hash_mem_multiplier_source, c.temp_buffers, c.temp_buffers_source,
						 c.maintenance_work_mem, c.maintenance_work_mem_source) AS said,
						 @extschema@.pg_procmem_settings_said(h.work_mem, h.work_mem_source, h.hash_mem_multiplier,
						 h.hash_mem_multiplier_source, h.temp_buffers, h.temp_buffers_source,
						 h.maintenance_work_mem, h.maintenance_work_mem_source) AS holder_said) AS s,
		 @extschema@.pg_procmem_crash_facts(c.backend_type, c.usename, c.application_name,
			 COALESCE(c.parallel_overhead, c.overhead), c.last_seen_at, c.query_start, c.cgroup_limit, c.cgroup_usage_at_sample, h.backend_type, h.usename,
			 h.application_name) AS g,
		 LATERAL (SELECT COALESCE(c.killed_pid, c.guessed_pid) AS pid,
						 CASE WHEN c.backend_type OPERATOR(pg_catalog.=) 'client backend'
							  THEN NULLIF(pg_catalog.concat_ws('/', c.usename, c.application_name), '')
							  ELSE c.backend_type END AS who,
						 @extschema@.pg_procmem_held_elsewhere(c.backend_type, g.running_overhead,
							 COALESCE(c.killed_pid, c.guessed_pid), g.same_group,
							 h.processes, h.largest_pid, h.overhead, g.room) AS elsewhere,
						 @extschema@.pg_procmem_holder_text(h.backend_type, h.usename, h.application_name,
							 h.processes, h.overhead, false, h.parallel_workers) AS holders,
						 NULLIF(pg_catalog.array_to_string(s.said, ', '), '') AS settings, s.said,
						 NULLIF(pg_catalog.array_to_string(s.holder_said, ', '), '') AS holder_settings,
						 s.holder_said,
						 pg_catalog.to_char(c.crashed_at, 'HH24:MI:SS') AS at) AS v
	WHERE c.crashed_at OPERATOR(pg_catalog.>) (pg_catalog.now() OPERATOR(pg_catalog.-) '1 day'::interval)
	  AND c.how_known OPERATOR(pg_catalog.<>) 'unclean stop'
	  AND COALESCE(c.signal, 9) OPERATOR(pg_catalog.=) 9 AND c.exit_code IS NULL
	  AND COALESCE(c.cgroup_oom_kills, 1) OPERATOR(pg_catalog.>) 0;
END;

-- The other crash restarts of the last day (a crash, or a kill -9 the
-- cgroup did not count as an OOM kill), and runs that ended without a clean
-- stop: no memory advice for them.
CREATE FUNCTION pg_procmem_advice_restarts(f @extschema@.pg_procmem_advice_facts)
RETURNS TABLE (check_name text, severity text, summary text, evidence text, recommendation text)
LANGUAGE sql STABLE STRICT PARALLEL RESTRICTED
BEGIN ATOMIC
	SELECT CASE WHEN c.how_known OPERATOR(pg_catalog.=) 'unclean stop' THEN 'unclean_stop' ELSE 'crash_restart' END,
		   CASE WHEN c.how_known OPERATOR(pg_catalog.=) 'unclean stop' THEN 'warning' ELSE 'critical' END,
		   @extschema@.pg_procmem_clip(CASE WHEN c.how_known OPERATOR(pg_catalog.=) 'unclean stop'
				THEN pg_catalog.format('unclean stop before the start at %s', pg_catalog.to_char(c.crashed_at, 'HH24:MI:SS'))
				ELSE pg_catalog.format('crash at %s: pid %s %s, %s', pg_catalog.to_char(c.crashed_at, 'HH24:MI:SS'),
									   COALESCE(c.killed_pid, c.guessed_pid), COALESCE(c.backend_type, '?'), v.how) END, 64),
		   pg_catalog.concat_ws('; ',
				CASE WHEN c.how_known OPERATOR(pg_catalog.=) 'unclean stop'
					 THEN pg_catalog.format('the server started at %s after a run that ended without a clean stop; '
											'its last sample at %s', pg_catalog.to_char(c.crashed_at, 'YYYY-MM-DD HH24:MI:SS'),
											COALESCE(pg_catalog.to_char(c.last_sample_at, 'YYYY-MM-DD HH24:MI:SS'), 'none'))
					 ELSE pg_catalog.format('at %s the postmaster logged: %s', pg_catalog.to_char(c.crashed_at,
											'YYYY-MM-DD HH24:MI:SS.MS'), c.logged) END,
				NULLIF(pg_catalog.concat_ws(', ', 'user ' OPERATOR(pg_catalog.||) c.usename,
						   'application ' OPERATOR(pg_catalog.||) c.application_name), ''),
				'its query: ' OPERATOR(pg_catalog.||) pg_catalog.rtrim(@extschema@.pg_procmem_clip(c.query, 300), '; '),
				CASE WHEN c.cgroup_oom_kills OPERATOR(pg_catalog.=) 0
					 THEN 'the OOM kill counter, read before and after it, did not rise' END),
		   CASE WHEN c.how_known OPERATOR(pg_catalog.=) 'unclean stop' AND c.oom_killed
				THEN pg_catalog.format('The OOM kill counter rose by %s after its last sample: the OOM killer took the '
									   'postmaster, or every process at once (a container''s memory.oom.group = 1, as '
									   'Kubernetes sets it). pg_procmem_crash_holders has who held the memory at the '
									   'last sample; keep what the server can take within its limit (pg_procmem_headroom).',
									   c.cgroup_oom_kills)
				WHEN c.how_known OPERATOR(pg_catalog.=) 'unclean stop'
				THEN 'If nobody stopped it with pg_ctl stop -m immediate, the postmaster was killed (protect it: the '
					 'oom_postmaster check) or the machine went down; pg_procmem_history shows its last samples.'
				WHEN c.signal OPERATOR(pg_catalog.=) 9
				THEN 'Killed by signal 9, cause unknown: no OOM kill was counted across it. An operator''s kill -9, '
					 'or a supervisor (a liveness probe, a watchdog)? A killed server process restarts every session: '
					 'end one session with pg_terminate_backend() instead.'
				ELSE pg_catalog.format('It ended with %s: a crash, not a kill for memory (a bug in PostgreSQL or in an '
									   'extension); every session was restarted. Report it with its query and '
									   'version (SELECT version()).', v.how) END
	FROM @extschema@.pg_procmem_crash_log(true) AS c,
		 LATERAL (SELECT CASE WHEN c.signal IS NOT NULL THEN 'signal ' OPERATOR(pg_catalog.||) c.signal
							  WHEN c.exit_code IS NOT NULL THEN 'exit code ' OPERATOR(pg_catalog.||) c.exit_code
							  ELSE 'no message' END AS how) AS v
	WHERE c.crashed_at OPERATOR(pg_catalog.>) (pg_catalog.now() OPERATOR(pg_catalog.-) '1 day'::interval)
	  AND (c.how_known OPERATOR(pg_catalog.=) 'unclean stop'
		   OR NOT (COALESCE(c.signal, 9) OPERATOR(pg_catalog.=) 9 AND c.exit_code IS NULL
				   AND COALESCE(c.cgroup_oom_kills, 1) OPERATOR(pg_catalog.>) 0));
END;

-- The memory guard's actions of the last day (guard.md): what it canceled
-- or ended, or in dry_run would have, and the largest of them.
CREATE FUNCTION pg_procmem_advice_guard(f @extschema@.pg_procmem_advice_facts)
RETURNS TABLE (check_name text, severity text, summary text, evidence text, recommendation text)
LANGUAGE sql STABLE STRICT PARALLEL RESTRICTED
BEGIN ATOMIC
	SELECT 'memory_guard',
		   CASE WHEN s.server OPERATOR(pg_catalog.>) 0 THEN 'warning' ELSE 'info' END,
		   @extschema@.pg_procmem_clip(CASE
				WHEN s.done OPERATOR(pg_catalog.>) 0
				THEN pg_catalog.format('memory guard: %s canceled, %s ended in the last day', s.canceled, s.ended)
				ELSE pg_catalog.format('memory guard (dry_run): %s said in the last day', s.said) END, 64),
		   pg_catalog.concat_ws('; ',
				pg_catalog.format('in the last day: canceled for the server''s limit %s, for a backend''s own %s; '
								  'sessions ended %s; said in dry_run %s',
								  s.canceled OPERATOR(pg_catalog.-) s.own, s.own, s.ended, s.said),
				pg_catalog.format('the largest: %s of pid %s at %s (%s), which held %s%s', l.action, l.pid,
								  pg_catalog.to_char(l.acted_at, 'YYYY-MM-DD HH24:MI:SS'),
								  pg_catalog.concat_ws(', ', 'user ' OPERATOR(pg_catalog.||) l.usename,
													   'application ' OPERATOR(pg_catalog.||) l.application_name),
								  pg_catalog.pg_size_pretty(l.held),
								  CASE WHEN l.reason OPERATOR(pg_catalog.=) 'server limit'
									   THEN pg_catalog.format(' when the %s''s memory reached %s of its %s limit', l.source,
															  pg_catalog.pg_size_pretty(l.used),
															  pg_catalog.pg_size_pretty(l.limit_bytes))
									   ELSE pg_catalog.format(', over its own limit of %s',
															  pg_catalog.pg_size_pretty(l.limit_bytes)) END),
				'its query: ' OPERATOR(pg_catalog.||) pg_catalog.rtrim(@extschema@.pg_procmem_clip(l.query, 300), '; ')),
		   CASE WHEN s.done OPERATOR(pg_catalog.>) 0
				THEN 'The guard kept the server up by canceling statements (pg_procmem_guard_actions lists them): '
					 'find what grew (the largest above), lower its work_mem or hash_mem_multiplier, give its role '
					 'a pg_procmem.max_backend_memory, or give the server more memory.'
				ELSE 'In dry_run the guard only says what it would do: review the statements it names in '
					 'pg_procmem_guard_actions, then set pg_procmem.guard = on.' END
	FROM (SELECT pg_catalog.count(*) FILTER (WHERE a.action OPERATOR(pg_catalog.=) 'cancel') AS canceled,
				 pg_catalog.count(*) FILTER (WHERE a.action OPERATOR(pg_catalog.=) 'terminate') AS ended,
				 pg_catalog.count(*) FILTER (WHERE a.action OPERATOR(pg_catalog.=) 'cancel'
											   AND a.reason OPERATOR(pg_catalog.=) 'backend limit') AS own,
				 pg_catalog.count(*) FILTER (WHERE a.action OPERATOR(pg_catalog.~~) 'would %') AS said,
				 pg_catalog.count(*) FILTER (WHERE a.action OPERATOR(pg_catalog.!~~) 'would %') AS done,
				 pg_catalog.count(*) FILTER (WHERE a.action OPERATOR(pg_catalog.!~~) 'would %'
											   AND a.reason OPERATOR(pg_catalog.=) 'server limit') AS server
		  FROM @extschema@.pg_procmem_guard_log(true) AS a
		  WHERE a.acted_at OPERATOR(pg_catalog.>) (pg_catalog.now() OPERATOR(pg_catalog.-) '1 day'::interval)) AS s,
		 LATERAL (SELECT a.* FROM @extschema@.pg_procmem_guard_log(true) AS a
				  WHERE a.acted_at OPERATOR(pg_catalog.>) (pg_catalog.now() OPERATOR(pg_catalog.-) '1 day'::interval)
					AND (a.action OPERATOR(pg_catalog.~~) 'would %') OPERATOR(pg_catalog.=) (s.done OPERATOR(pg_catalog.=) 0)
				  ORDER BY a.held DESC, a.acted_at DESC LIMIT 1) AS l
	WHERE s.done OPERATOR(pg_catalog.+) s.said OPERATOR(pg_catalog.>) 0
	UNION ALL
	-- set, where nothing acts on it: in this session (postgresql.conf, SET),
	-- or a backend limit for a role or a database (ALTER ROLE / DATABASE ...
	-- SET), which this session does not see (the guard itself is set for the
	-- server only: reload, not per role)
	SELECT 'memory_guard', 'warning', 'memory guard set, but pg_procmem is not preloaded',
		   pg_catalog.format('pg_procmem.guard = %s, pg_procmem.max_backend_memory = %s%s; pg_procmem is not in '
							 'shared_preload_libraries', COALESCE(g.guard, 'off'), COALESCE(g.own, '0'),
							 CASE WHEN r.set_for IS NOT NULL
								  THEN ' (here), and set for ' OPERATOR(pg_catalog.||) r.set_for ELSE '' END),
		   'Add pg_procmem to shared_preload_libraries and restart the server: until then no guard runs and no '
		   'backend checks its limit.'
	-- (pg_procmem.history_size is defined only where it is preloaded; shared_preload_libraries
	-- itself only a superuser or pg_read_all_settings may read)
	FROM (SELECT pg_catalog.current_setting('pg_procmem.guard', true) AS guard,
				 pg_catalog.current_setting('pg_procmem.max_backend_memory', true) AS own,
				 pg_catalog.current_setting('pg_procmem.history_size', true) AS preloaded) AS g,
		 (SELECT pg_catalog.string_agg(pg_catalog.concat_ws(' in ', COALESCE('role ' OPERATOR(pg_catalog.||) ro.rolname, 'every role'),
															'database ' OPERATOR(pg_catalog.||) d.datname)
									   OPERATOR(pg_catalog.||) ' (' OPERATOR(pg_catalog.||) c.setting OPERATOR(pg_catalog.||) ')',
									   ', ' ORDER BY ro.rolname, d.datname, c.setting) AS set_for
		  FROM pg_catalog.pg_db_role_setting AS s
			   LEFT JOIN pg_catalog.pg_roles AS ro ON ro.oid OPERATOR(pg_catalog.=) s.setrole
			   LEFT JOIN pg_catalog.pg_database AS d ON d.oid OPERATOR(pg_catalog.=) s.setdatabase,
			   LATERAL pg_catalog.unnest(s.setconfig) AS c(setting)
		  WHERE c.setting OPERATOR(pg_catalog.~*) '^pg_procmem\.max_backend_memory='
			AND c.setting OPERATOR(pg_catalog.!~*) '^pg_procmem\.max_backend_memory=0+ *([kmgt]?b)?$') AS r
	WHERE (COALESCE(g.guard, 'off') OPERATOR(pg_catalog.<>) 'off' OR COALESCE(g.own, '0') OPERATOR(pg_catalog.<>) '0'
		   OR r.set_for IS NOT NULL)
	  AND g.preloaded IS NULL;
END;

COMMENT ON FUNCTION pg_procmem_advice_crashes(pg_procmem_advice_facts) IS
'internal: the crash_restart check of pg_procmem_advice for kills for memory (the memory history''s crash rows of the last day)';
COMMENT ON FUNCTION pg_procmem_advice_guard(pg_procmem_advice_facts) IS
'internal: the memory_guard check of pg_procmem_advice (the guard''s actions of the last day)';
COMMENT ON FUNCTION pg_procmem_advice_restarts(pg_procmem_advice_facts) IS
'internal: the crash_restart check for the other crashes, and the unclean_stop check, of pg_procmem_advice';

COMMENT ON FUNCTION pg_procmem_advice_huge_pages(pg_procmem_advice_facts) IS
'internal: the huge_pages and transparent_hugepage checks of pg_procmem_advice';
COMMENT ON FUNCTION pg_procmem_advice_oom(pg_procmem_advice_facts) IS
'internal: the oom_postmaster and oom_auxiliary_first checks of pg_procmem_advice';
COMMENT ON FUNCTION pg_procmem_advice_memory_settings(pg_procmem_advice_facts) IS
'internal: the overcommit, work_mem, CPU cache and writeback checks of pg_procmem_advice';
COMMENT ON FUNCTION pg_procmem_advice_connections(pg_procmem_advice_facts) IS
'internal: the max_connections, idle_connections and connection_rate checks of pg_procmem_advice';
COMMENT ON FUNCTION pg_procmem_advice_pressure(pg_procmem_advice_facts) IS
'internal: the swap, cgroup_limit, cgroup_oom_kills and jit_memory checks of pg_procmem_advice';

REVOKE ALL ON FUNCTION pg_procmem_advice_huge_pages(pg_procmem_advice_facts) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_advice_oom(pg_procmem_advice_facts) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_advice_memory_settings(pg_procmem_advice_facts) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_advice_connections(pg_procmem_advice_facts) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_advice_pressure(pg_procmem_advice_facts) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_advice_crashes(pg_procmem_advice_facts) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_crash_own_advice(text, text, text[], text, text, text, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_advice_restarts(pg_procmem_advice_facts) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_advice_guard(pg_procmem_advice_facts) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_procmem_advice_huge_pages(pg_procmem_advice_facts),
	pg_procmem_advice_oom(pg_procmem_advice_facts), pg_procmem_advice_memory_settings(pg_procmem_advice_facts),
	pg_procmem_advice_connections(pg_procmem_advice_facts), pg_procmem_advice_pressure(pg_procmem_advice_facts),
	pg_procmem_advice_crashes(pg_procmem_advice_facts), pg_procmem_advice_restarts(pg_procmem_advice_facts),
	pg_procmem_advice_guard(pg_procmem_advice_facts),
	pg_procmem_crash_own_advice(text, text, text[], text, text, text, text, text)
	TO pg_read_all_stats;
