-- Who will the OOM killer take, and what happens then.
CREATE VIEW pg_procmem_oom AS
SELECT pg_catalog.rank() OVER (ORDER BY p.oom_score DESC) AS rank,
	   p.pid,
	   COALESCE(a.backend_type, p.backend_type) AS backend_type,
	   p.oom_score,
	   p.oom_score_adj,
	   -- Linux >= 5.9 shows (1000 + points * 1000 / totalpages) * 2 / 3 in
	   -- integers: a score s comes from 1000 + share (in 0.1%) of at most
	   -- (3s + 2) / 2, so 666 is a share of 0; before 5.9, share / 10
	   pg_catalog.round(CASE WHEN p.oom_score_adj OPERATOR(pg_catalog.=) -1000 THEN NULL
							 WHEN s.kernel_version_num OPERATOR(pg_catalog.>=) 50009
							 THEN ((((p.oom_score OPERATOR(pg_catalog.*) 3) OPERATOR(pg_catalog.+) 2)
									OPERATOR(pg_catalog./) 2) OPERATOR(pg_catalog.-) 1000) OPERATOR(pg_catalog./) 10.0
							 ELSE p.oom_score OPERATOR(pg_catalog./) 10.0 END, 1) AS badness_pct,
	   p.oom_score_adj OPERATOR(pg_catalog.=) -1000 AS protected,
	   p.rss, p.rss_shmem, p.swap, p.page_tables, p.overhead,
	   -- the postmaster restarts these alone; any other child killed by a
	   -- signal, with a PGPROC or not (a connection starting or exiting),
	   -- makes it reinitialize shared memory and end every session (a crash
	   -- restart). Short, so that the README's query fits 80 columns: the
	   -- server without its postmaster stays down until something restarts it.
	   CASE WHEN p.backend_type OPERATOR(pg_catalog.=) 'postmaster'
			THEN 'server stays down'
			WHEN p.backend_type OPERATOR(pg_catalog.=) ANY (ARRAY['logger', 'stats collector'])
			THEN 'restarted alone'
			WHEN pg_catalog.current_setting('restart_after_crash')::boolean
			THEN 'every session ends'
			ELSE 'server shuts down' END AS if_killed
FROM @extschema@.pg_procmem_processes() AS p
	 LEFT JOIN pg_catalog.pg_stat_activity AS a ON a.pid OPERATOR(pg_catalog.=) p.pid,
	 @extschema@.pg_procmem_system_info() AS s;

COMMENT ON VIEW pg_procmem_oom IS
'every server process ranked by oom_score, with what killing it would do';

REVOKE ALL ON pg_procmem_oom FROM PUBLIC;
GRANT SELECT ON pg_procmem_oom TO pg_read_all_stats;
