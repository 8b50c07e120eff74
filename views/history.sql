-- The memory history (needs pg_procmem in shared_preload_libraries): what
-- the sampler saw at every sample, oldest first, kept in shared memory and
-- across restarts in a file in the data directory. sample numbers the
-- samples in the order they were taken (sampled_at is the wall clock's,
-- which can step back). All the reads of one transaction stop at the same
-- sample. missing_ok: no rows, instead of an ERROR, when the library was
-- not preloaded.
CREATE FUNCTION pg_procmem_history_processes(
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
AS 'MODULE_PATHNAME', 'pg_procmem_history_processes'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_procmem_history_processes(boolean) IS
'the memory history: every process at every sample (what pg_procmem_history shows)';

CREATE FUNCTION pg_procmem_history_system_samples(
	IN missing_ok boolean DEFAULT false,
	OUT sample bigint,
	OUT sampled_at timestamptz,
	OUT run_started timestamptz,
	OUT processes integer,
	OUT mem_total bigint,
	OUT mem_available bigint,
	OUT swap_used bigint,
	OUT page_tables bigint,
	OUT hugepages_total bigint,
	OUT hugepages_free bigint,
	OUT cgroup_usage bigint,
	OUT cgroup_limit bigint,
	OUT cgroup_oom_kills bigint,
	OUT connections bigint,
	OUT sample_ms double precision,
	OUT sample_wall_ms double precision,
	OUT pressure text,
	OUT pressure_source text,
	OUT pressure_used bigint,
	OUT pressure_limit bigint,
	OUT reused integer,
	OUT dsm_segments integer,
	OUT dsm_mapped bigint,
	OUT dsm_shared_segments integer,
	OUT dsm_shared bigint,
	OUT dsm_leftover_segments integer,
	OUT dsm_leftover bigint,
	OUT dsm_leftover_names text[],
	OUT psi_some_avg10 double precision,
	OUT psi_full_avg10 double precision,
	OUT cgroup_psi_some_avg10 double precision,
	OUT cgroup_psi_full_avg10 double precision,
	OUT psi_unavailable text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_history_system'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_procmem_history_system_samples(boolean) IS
'the memory history: the machine and the cgroup at every sample (what pg_procmem_history_system shows)';

CREATE FUNCTION pg_procmem_crash_log(
	IN missing_ok boolean DEFAULT false,
	OUT number integer,
	OUT crashed_at timestamptz,
	OUT how_known text,
	OUT killed_pid integer,
	OUT guessed_pid integer,
	OUT signal integer,
	OUT exit_code integer,
	OUT logged text,
	OUT restarted_at timestamptz,
	OUT cgroup_oom_kills bigint,
	OUT cgroup_usage_at_sample bigint,
	OUT cgroup_limit bigint,
	OUT last_sample_at timestamptz,
	OUT seconds_since_sample double precision,
	OUT last_seen_at timestamptz,
	OUT query_id bigint,
	OUT overhead bigint,
	OUT context_bytes bigint,
	OUT page_tables bigint,
	OUT oom_score integer,
	OUT backend_type text,
	OUT usename text,
	OUT datname text,
	OUT application_name text,
	OUT backend_start timestamptz,
	OUT query_start timestamptz,
	OUT query text,
	OUT query_from text,
	OUT query_cut boolean,
	OUT query_folded boolean,
	OUT top_pids integer[],
	OUT top_backend_types text[],
	OUT top_overheads bigint[],
	OUT work_mem bigint,
	OUT work_mem_source text,
	OUT hash_mem_multiplier double precision,
	OUT hash_mem_multiplier_source text,
	OUT temp_buffers bigint,
	OUT temp_buffers_source text,
	OUT maintenance_work_mem bigint,
	OUT maintenance_work_mem_source text,
	OUT exited_at timestamptz,
	OUT killed_after timestamptz,
	OUT oom_killed boolean,
	OUT state text,
	OUT parallel_processes integer,
	OUT parallel_overhead bigint,
	OUT plan_memory text,
	OUT parallel_dsm bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_crash_log'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_procmem_crash_log(boolean) IS
'the memory history: every crash restart it saw (what pg_procmem_crashes shows)';

CREATE FUNCTION pg_procmem_crash_groups(
	IN missing_ok boolean DEFAULT false,
	OUT number integer,
	OUT rank integer,
	OUT usename text,
	OUT application_name text,
	OUT backend_type text,
	OUT processes integer,
	OUT overhead bigint,
	OUT largest bigint,
	OUT largest_pid integer,
	OUT work_mem bigint,
	OUT work_mem_source text,
	OUT hash_mem_multiplier double precision,
	OUT hash_mem_multiplier_source text,
	OUT temp_buffers bigint,
	OUT temp_buffers_source text,
	OUT maintenance_work_mem bigint,
	OUT maintenance_work_mem_source text,
	OUT parallel_workers integer,
	OUT largest_state text,
	OUT largest_query text,
	OUT dsm bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_crash_groups'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_procmem_crash_groups(boolean) IS
'the memory history: who held the memory at each crash row''s last sample (what pg_procmem_crash_holders shows)';

-- The server's memory cgroup's OOM kill counter when the sampler first ran
-- in this shared memory (the server's start, or its last crash restart,
-- whose crash row counts the kills before it), and when: the kills since
-- are pg_procmem_system_info().cgroup_oom_kills less it. NULLs when unknown.
CREATE FUNCTION pg_procmem_oom_kills_baseline(
	OUT cgroup_oom_kills bigint,
	OUT since timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_procmem_oom_kills_baseline'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_procmem_oom_kills_baseline() IS
'the server''s memory cgroup''s OOM kill counter when the server started or last restarted after a crash';

-- Where a backend's setting was set, in words: 'in its session' for
-- pg_settings' 'session', 'for its role' for 'user', and so on; NULL for
-- what the server itself sets (its default, its files, its command line),
-- which is no backend's own.
CREATE FUNCTION pg_procmem_set_where(source text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE source WHEN 'session' THEN 'in its session'
				   WHEN 'user' THEN 'for its role'
				   WHEN 'database' THEN 'for its database'
				   WHEN 'database user' THEN 'for its role in its database'
				   WHEN 'client' THEN 'by its client at connection'
				   WHEN 'global' THEN 'for all roles'
				   WHEN 'default' THEN NULL
				   WHEN 'configuration file' THEN NULL
				   WHEN 'command line' THEN NULL
				   WHEN 'environment variable' THEN NULL
				   WHEN 'override' THEN NULL
				   ELSE 'as ' OPERATOR(pg_catalog.||) source END;

-- The memory settings a backend ran with that its session, role or
-- database gave it (not the server's own), each as "work_mem = 8GB
-- (session)"; an empty array when none.
CREATE FUNCTION pg_procmem_settings_said(
	work_mem bigint, work_mem_source text, hash_mem_multiplier double precision,
	hash_mem_multiplier_source text, temp_buffers bigint, temp_buffers_source text,
	maintenance_work_mem bigint, maintenance_work_mem_source text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ARRAY(SELECT pg_catalog.format('%s = %s (%s)', s.name,
					   -- as SET writes it; numeric: a file's figures may be any bigint
					   CASE WHEN s.name OPERATOR(pg_catalog.=) 'hash_mem_multiplier' THEN hash_mem_multiplier::text
							WHEN s.value OPERATOR(pg_catalog.%) 1073741824 OPERATOR(pg_catalog.=) 0
							THEN pg_catalog.div(s.value, 1073741824) OPERATOR(pg_catalog.||) 'GB'
							WHEN s.value OPERATOR(pg_catalog.%) 1048576 OPERATOR(pg_catalog.=) 0
							THEN pg_catalog.div(s.value, 1048576) OPERATOR(pg_catalog.||) 'MB'
							WHEN s.value OPERATOR(pg_catalog.%) 1024 OPERATOR(pg_catalog.=) 0
							THEN pg_catalog.div(s.value, 1024) OPERATOR(pg_catalog.||) 'kB'
							ELSE s.value OPERATOR(pg_catalog.||) 'B' END,
					   s.source)
			 FROM (VALUES (1, 'work_mem', work_mem::numeric, work_mem_source),
						  (2, 'hash_mem_multiplier', hash_mem_multiplier::numeric, hash_mem_multiplier_source),
						  (3, 'temp_buffers', temp_buffers::numeric, temp_buffers_source),
						  (4, 'maintenance_work_mem', maintenance_work_mem::numeric, maintenance_work_mem_source))
				  AS s(i, name, value, source)
			 WHERE s.value IS NOT NULL AND @extschema@.pg_procmem_set_where(s.source) IS NOT NULL
			 ORDER BY s.i);

COMMENT ON FUNCTION pg_procmem_set_where(text) IS
'internal: where a backend''s setting was set, in words';

COMMENT ON FUNCTION pg_procmem_settings_said(bigint, text, double precision, text, bigint, text, bigint, text) IS
'internal: the memory settings a backend''s session, role or database gave it, in words';

-- How the crash rows name a group of processes (pg_procmem_crash_holders):
-- "alice/etl: 11 sessions held 898 MB", "checkpointer: 1 process held 1 MB";
-- terse, "11 alice/etl had 898 MB".
CREATE FUNCTION pg_procmem_holder_text(backend_type text, usename text, application_name text,
									   processes integer, overhead bigint, terse boolean DEFAULT false,
									   workers integer DEFAULT 0)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.format(CASE WHEN terse THEN '%2$s %1$s%5$s had %4$s' ELSE '%1$s: %2$s%3$s%5$s held %4$s' END,
		   CASE WHEN backend_type OPERATOR(pg_catalog.=) 'client backend'
				THEN COALESCE(NULLIF(pg_catalog.concat_ws('/', usename, application_name), ''), '?')
				ELSE backend_type END,
		   processes OPERATOR(pg_catalog.-) COALESCE(workers, 0),
		   CASE WHEN backend_type OPERATOR(pg_catalog.<>) 'client backend'
				THEN CASE processes OPERATOR(pg_catalog.-) COALESCE(workers, 0) WHEN 1 THEN ' process' ELSE ' processes' END
				WHEN processes OPERATOR(pg_catalog.-) COALESCE(workers, 0) OPERATOR(pg_catalog.=) 1 THEN ' session'
				ELSE ' sessions' END,
		   pg_catalog.pg_size_pretty(overhead),
		   -- a parallel query's workers count with their leader's group
		   CASE WHEN workers OPERATOR(pg_catalog.>) 0
				THEN pg_catalog.format(' +%s workers', workers)
				ELSE '' END);

-- Whether a crash's victim held a small part of the memory, so that the
-- largest group at the last sample (its processes, the largest one's pid,
-- their overhead) is the one to name. The OOM killer takes the process with
-- the largest RSS: an auxiliary process is taken for the shared memory it
-- touched, and the memory was elsewhere; a client backend held the most of
-- any one process, and is the culprit unless it is one of a group of
-- sessions like it (same_group) that together held the memory: the others
-- held at least what it held at the last sample, and each of them, on
-- average, at least a quarter of it (overhead: NULL when no sample saw its
-- query running; a pool's connection running a hog among a hundred idle
-- ones is no session like them), or, when none saw it, half the room the
-- cgroup had left then (room: NULL when unknown, and the victim is named).
CREATE FUNCTION pg_procmem_held_elsewhere(backend_type text, overhead bigint, pid integer, same_group boolean,
										  group_processes integer, group_largest_pid integer,
										  group_overhead bigint, room bigint)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN group_processes IS NOT NULL
	   AND NOT (group_processes OPERATOR(pg_catalog.=) 1 AND group_largest_pid OPERATOR(pg_catalog.=) pid)
	   AND COALESCE(backend_type OPERATOR(pg_catalog.<>) ALL (ARRAY['client backend', 'parallel worker'])
					OR (same_group AND group_processes OPERATOR(pg_catalog.>) 1
						-- halves, not doubles: figures from a file may be near the top of bigint
						AND CASE WHEN overhead IS NOT NULL
								 THEN (group_overhead OPERATOR(pg_catalog./) 2) OPERATOR(pg_catalog.>=) overhead
									  AND ((group_overhead OPERATOR(pg_catalog.-) overhead) OPERATOR(pg_catalog./)
										   NULLIF(group_processes OPERATOR(pg_catalog.-) 1, 0))
										  OPERATOR(pg_catalog.>=) (overhead OPERATOR(pg_catalog./) 4)
								 ELSE group_overhead OPERATOR(pg_catalog.>=) (room OPERATOR(pg_catalog./) 2) END),
					false);

-- When a crash's kill happened, in one line of its report: between the
-- two reads of the OOM kill counter on either side of it (and the exit,
-- when it came later), or that the counter did not rise across it; for a
-- server killed whole, the counter's rise since its last sample.
CREATE FUNCTION pg_procmem_crash_when(oom_killed boolean, killed_after timestamptz, crashed_at timestamptz,
									  exited_at timestamptz, signal integer, how_known text, oom_kills bigint,
									  last_sample_at timestamptz)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN oom_killed AND killed_after IS NOT NULL
			THEN pg_catalog.format('OOM kill %s-%s%s', pg_catalog.to_char(killed_after, 'HH24:MI:SS.MS'),
					 pg_catalog.to_char(crashed_at, 'HH24:MI:SS.MS'),
					 CASE WHEN exited_at OPERATOR(pg_catalog.-) crashed_at OPERATOR(pg_catalog.>=) '0.05 s'::interval
						  THEN pg_catalog.format(', exit %s s on', pg_catalog.round(pg_catalog.date_part('epoch',
								   exited_at OPERATOR(pg_catalog.-) crashed_at)::numeric, 1))
						  ELSE ' (its exit)' END)
			-- killed whole: no exit was logged; the counter since its last sample
			WHEN how_known OPERATOR(pg_catalog.=) 'unclean stop'
			THEN CASE WHEN oom_killed THEN pg_catalog.format('OOM kill counter +%s since %s: killed whole?', oom_kills,
															  pg_catalog.to_char(last_sample_at, 'HH24:MI:SS'))
					  WHEN NOT oom_killed THEN pg_catalog.format('no OOM kill counted since %s: cause unknown',
																 pg_catalog.to_char(last_sample_at, 'HH24:MI:SS'))
					  ELSE 'cause unknown; last sample ' OPERATOR(pg_catalog.||)
						   COALESCE(pg_catalog.to_char(last_sample_at, 'HH24:MI:SS'), 'none') END
			WHEN NOT oom_killed AND signal OPERATOR(pg_catalog.=) 9
			THEN 'no OOM kill counted: cause unknown' END;

-- What to change about a crash's victim that held the memory itself, in
-- one line of its report: idle (state: at its last sample, when its
-- statement had started by then; else NULL), its temp_buffers or
-- max_backend_memory (no work_mem of one held it); a statement whose plans
-- had no sort or hash, max_backend_memory; else its work_mem, where set.
CREATE FUNCTION pg_procmem_crash_own_change(state text, plan_memory text, temp_buffers_source text,
											work_mem_source text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN state IN ('idle', 'idle in transaction', 'idle in transaction (aborted)')
			THEN COALESCE('to change: its temp_buffers, set ' OPERATOR(pg_catalog.||)
						  @extschema@.pg_procmem_set_where(temp_buffers_source),
						  'held between statements: see max_backend_memory')
			WHEN plan_memory OPERATOR(pg_catalog.=) 'none'
			THEN 'no sort or hash in it: see max_backend_memory'
			ELSE 'to change: its work_mem, set ' OPERATOR(pg_catalog.||)
				 @extschema@.pg_procmem_set_where(work_mem_source) END;

COMMENT ON FUNCTION pg_procmem_crash_when(boolean, timestamptz, timestamptz, timestamptz, integer, text, bigint,
										   timestamptz) IS
'internal: when a crash''s kill happened, in a line of its report';
COMMENT ON FUNCTION pg_procmem_crash_own_change(text, text, text, text) IS
'internal: what to change about a crash''s victim that held the memory itself, in a line of its report';

-- What the crash rows' words go by: whether the victim is of the largest
-- group's user, application and type; its overhead when a sample saw its
-- query running (an idle session sampled small may have started the query
-- that grew since); the room the cgroup had at the last sample.
CREATE FUNCTION pg_procmem_crash_facts(backend_type text, usename text, application_name text, overhead bigint,
									   last_seen_at timestamptz, query_start timestamptz, cgroup_limit bigint,
									   cgroup_usage_at_sample bigint, group_backend_type text, group_usename text,
									   group_application_name text,
									   OUT same_group boolean, OUT running_overhead bigint, OUT room bigint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
	SELECT (usename, application_name, backend_type) IS NOT DISTINCT FROM
			   (group_usename, group_application_name, group_backend_type),
		   CASE WHEN query_start IS NULL OR query_start OPERATOR(pg_catalog.<=) last_seen_at THEN overhead END,
		   NULLIF(GREATEST(cgroup_limit OPERATOR(pg_catalog.-) cgroup_usage_at_sample, 0), 0);
END;

COMMENT ON FUNCTION pg_procmem_crash_facts(text, text, text, bigint, timestamptz, timestamptz, bigint, bigint, text,
										   text, text) IS
'internal: what the crash rows'' words go by: the victim''s group, its overhead while running, the cgroup''s room';

COMMENT ON FUNCTION pg_procmem_holder_text(text, text, text, integer, bigint, boolean, integer) IS
'internal: a group of processes of a crash row, in words';
COMMENT ON FUNCTION pg_procmem_held_elsewhere(text, bigint, integer, boolean, integer, integer, bigint, bigint) IS
'internal: whether a crash''s victim held a small part of the memory';

-- One row per process per sample: who it was, what it ran, what it cost.
CREATE VIEW pg_procmem_history AS
SELECT * FROM @extschema@.pg_procmem_history_processes(false);

COMMENT ON VIEW pg_procmem_history IS
'every server process at every sample of the memory history: who, which query, what it cost';

-- One row per sample: the machine and the server's cgroup.
CREATE VIEW pg_procmem_history_system AS
SELECT * FROM @extschema@.pg_procmem_history_system_samples(false);

COMMENT ON VIEW pg_procmem_history_system IS
'the machine and the server''s memory cgroup at every sample of the memory history';

-- One row per crash restart the history saw (and per run that ended
-- without a clean stop): who was killed, how that is known, who it was and
-- what it ran, and what the last sample before it showed. killed_pid is set
-- only when the postmaster logged it; guessed_pid (the highest oom_score at
-- the last sample) is a guess and says so. crashed_at is when it was
-- killed: where the OOM kill counter (the cgroup's, else the machine's)
-- rose, the first of the sampler's reads of it that saw the rise (the kill
-- came after killed_after, by crashed_at), else when the postmaster logged
-- the exit (exited_at; restarted_at when it logged none). The victim dies
-- seconds after an OOM kill under load, and samples taken meanwhile skip
-- it: the figures come from the last sample that ended before the kill,
-- and cgroup_oom_kills is the counter's rise across it. usename ..
-- query and the memory settings are what the process said of itself,
-- copied by the postmaster at its exit, else its last sample; query_from
-- says which. query_id .. oom_score describe it at its last sample
-- (last_seen_at). number counts the rows since the history file was
-- created (for a counter: the highest is how many there were). summary is
-- the row in one terminal line (at most 56 columns); report, in lines of
-- at most 56: who, what it ran and with which settings, what it held, and,
-- when it held a small part of the memory, who held the rest
-- (pg_procmem_crash_holders).
CREATE VIEW pg_procmem_crashes AS
SELECT c.*, @extschema@.pg_procmem_clip(t.line, 56) AS summary, r.report
FROM @extschema@.pg_procmem_crash_log(false) AS c
	 LEFT JOIN LATERAL (SELECT h.*,
							   @extschema@.pg_procmem_holder_text(h.backend_type, h.usename, h.application_name,
									h.processes, h.held, false, h.parallel_workers) AS line,
							   @extschema@.pg_procmem_holder_text(h.backend_type, h.usename, h.application_name,
									h.processes, h.held, true, h.parallel_workers) AS terse
						FROM (SELECT g.*, g.overhead OPERATOR(pg_catalog.+) COALESCE(g.dsm, 0) AS held FROM @extschema@.pg_procmem_crash_groups(false) AS g) AS h
						WHERE h.number OPERATOR(pg_catalog.=) c.number
						ORDER BY h.rank) AS h ON h.rank OPERATOR(pg_catalog.=) 1,
	 LATERAL (SELECT COALESCE(c.killed_pid, c.guessed_pid) AS pid,
					 CASE WHEN c.backend_type OPERATOR(pg_catalog.=) 'client backend'
						  THEN NULLIF(pg_catalog.concat_ws('/', c.usename, c.application_name), '')
						  ELSE c.backend_type END AS who,
					 COALESCE(pg_catalog.pg_size_pretty(c.overhead), 'unsampled') AS held,
					 @extschema@.pg_procmem_held_elsewhere(c.backend_type, g.running_overhead,
						 COALESCE(c.killed_pid, c.guessed_pid), g.same_group,
						 h.processes, h.largest_pid, h.held, g.room) AS elsewhere,
					 g.same_group
			  FROM @extschema@.pg_procmem_crash_facts(c.backend_type, c.usename, c.application_name,
						 COALESCE(c.parallel_overhead, c.overhead) OPERATOR(pg_catalog.+) COALESCE(c.parallel_dsm, 0), c.last_seen_at, c.query_start, c.cgroup_limit,
						 c.cgroup_usage_at_sample, h.backend_type, h.usename, h.application_name) AS g) AS v,
	 LATERAL (SELECT CASE WHEN v.pid IS NULL THEN c.how_known
						  -- one of a group of sessions like it: the group, then which
						  WHEN v.elsewhere AND v.same_group
						  THEN pg_catalog.format('%s; pid %s killed', h.terse, v.pid)
						  WHEN v.elsewhere
						  THEN pg_catalog.format('killed %s %s; %s', COALESCE(v.who, 'pid ' OPERATOR(pg_catalog.||) v.pid),
												 v.held, h.terse)
						  ELSE pg_catalog.concat_ws(', ',
								   CASE WHEN c.killed_pid IS NULL THEN 'guess: pid ' ELSE 'pid ' END
									   OPERATOR(pg_catalog.||) v.pid,
								   v.who, v.held)
							   OPERATOR(pg_catalog.||) COALESCE(': ' OPERATOR(pg_catalog.||) c.query, '') END AS line) AS t,
	 LATERAL (SELECT pg_catalog.string_agg(@extschema@.pg_procmem_clip(l.line, 56), E'\n' ORDER BY l.i) AS report
			  FROM (VALUES
				(1, CASE WHEN v.pid IS NULL THEN c.how_known
						 ELSE pg_catalog.format('%s: pid %s, %s%s',
								  CASE WHEN c.killed_pid IS NULL THEN 'guess' ELSE 'killed' END, v.pid,
								  COALESCE(c.backend_type, 'unknown type'),
								  COALESCE(', signal ' OPERATOR(pg_catalog.||) c.signal,
										   ', exit code ' OPERATOR(pg_catalog.||) c.exit_code, '')) END),
				(1.5, @extschema@.pg_procmem_crash_when(c.oom_killed, c.killed_after, c.crashed_at, c.exited_at,
						  c.signal, c.how_known, c.cgroup_oom_kills, c.last_sample_at)),
				(2, NULLIF(pg_catalog.concat_ws(', ', 'user ' OPERATOR(pg_catalog.||) c.usename,
							 'app ' OPERATOR(pg_catalog.||) c.application_name,
							 'db ' OPERATOR(pg_catalog.||) c.datname), '')),
				(3, 'query: ' OPERATOR(pg_catalog.||) c.query),
				(4, NULLIF(pg_catalog.concat_ws(', ', CASE WHEN c.query_cut THEN 'query cut short' END, CASE WHEN c.query_folded THEN 'non-ASCII shown as ?' END), '')),
				(5, CASE WHEN v.pid IS NULL THEN NULL
						 WHEN c.overhead IS NOT NULL
						 THEN pg_catalog.format('held %s at its last sample, %s s before', v.held,
								  pg_catalog.round(pg_catalog.date_part('epoch', c.crashed_at OPERATOR(pg_catalog.-)
																		c.last_seen_at)::numeric, 1))
						 ELSE 'no sample saw it' OPERATOR(pg_catalog.||)
							  COALESCE(' (query started ' OPERATOR(pg_catalog.||) pg_catalog.round(pg_catalog.date_part(
								  'epoch', c.crashed_at OPERATOR(pg_catalog.-) c.query_start)::numeric, 1)
								  OPERATOR(pg_catalog.||) ' s before)', '') END),
				-- not running a statement; a parallel query (leader and workers: one holder); its DSM, from an eighth of that
				(5.1, CASE WHEN c.state IN ('idle', 'idle in transaction', 'idle in transaction (aborted)') THEN 'it was ' OPERATOR(pg_catalog.||) c.state OPERATOR(pg_catalog.||) ' then' END),
				(5.2, 'its parallel query: ' OPERATOR(pg_catalog.||) c.parallel_processes OPERATOR(pg_catalog.||)
					  ' processes held ' OPERATOR(pg_catalog.||) pg_catalog.pg_size_pretty(c.parallel_overhead)),
				(5.3, CASE WHEN (c.parallel_dsm OPERATOR(pg_catalog.*) 8) OPERATOR(pg_catalog.>=) COALESCE(c.parallel_overhead, c.overhead, 0) THEN 'and ' OPERATOR(pg_catalog.||) pg_catalog.pg_size_pretty(NULLIF(c.parallel_dsm, 0)) OPERATOR(pg_catalog.||) ' of shared memory (DSM) of its own' END),
				-- about what one no sample saw grew by: the room it grew into
				(5.5, CASE WHEN c.overhead IS NULL AND v.pid IS NOT NULL
						   AND c.cgroup_limit OPERATOR(pg_catalog.>) c.cgroup_usage_at_sample
						   THEN pg_catalog.format('the cgroup had %s of room at the last sample',
								pg_catalog.pg_size_pretty(c.cgroup_limit OPERATOR(pg_catalog.-) c.cgroup_usage_at_sample)) END),
				-- the largest group at the last sample, when it held the memory: sessions
				-- like it, or others when it held little (then the culprit, beside the victim)
				(7, CASE WHEN v.elsewhere AND NOT v.same_group
						 THEN 'culprit: ' OPERATOR(pg_catalog.||) h.line
						 WHEN v.pid IS NULL OR v.elsewhere OR (v.same_group AND h.processes OPERATOR(pg_catalog.>) 1)
						 THEN 'last sample: ' OPERATOR(pg_catalog.||) h.line END),
				-- what to change, where it was set (pg_procmem_advice says more)
				(8.9, CASE WHEN c.signal IS DISTINCT FROM 9 THEN NULL
						   WHEN v.elsewhere AND @extschema@.pg_procmem_set_where(h.temp_buffers_source) IS NOT NULL
						   THEN 'to change: their temp_buffers (' OPERATOR(pg_catalog.||) h.temp_buffers_source OPERATOR(pg_catalog.||) ')'
						   WHEN NOT v.elsewhere
						   THEN @extschema@.pg_procmem_crash_own_change(c.state, c.plan_memory, c.temp_buffers_source,
																	   c.work_mem_source) END),
				(9, CASE WHEN c.cgroup_oom_kills OPERATOR(pg_catalog.>) 1
						 THEN c.cgroup_oom_kills OPERATOR(pg_catalog.||) ' OOM kills: the kernel killed others too' END)
				UNION ALL
				-- what it ran with, a line each; and the largest holder's
				SELECT 6 OPERATOR(pg_catalog.+) (k::float8 OPERATOR(pg_catalog./) 10),
					   CASE k WHEN 1 THEN 'ran with ' ELSE 'and ' END OPERATOR(pg_catalog.||) x
				FROM pg_catalog.unnest(@extschema@.pg_procmem_settings_said(c.work_mem, c.work_mem_source,
						 c.hash_mem_multiplier, c.hash_mem_multiplier_source, c.temp_buffers, c.temp_buffers_source,
						 c.maintenance_work_mem, c.maintenance_work_mem_source)) WITH ORDINALITY AS s(x, k)
				UNION ALL
				SELECT 8 OPERATOR(pg_catalog.+) (k::float8 OPERATOR(pg_catalog./) 10),
					   CASE k WHEN 1 THEN 'its largest ran with ' ELSE 'and ' END OPERATOR(pg_catalog.||) x
				FROM pg_catalog.unnest(@extschema@.pg_procmem_settings_said(h.work_mem, h.work_mem_source,
						 h.hash_mem_multiplier, h.hash_mem_multiplier_source, h.temp_buffers, h.temp_buffers_source,
						 h.maintenance_work_mem, h.maintenance_work_mem_source)) WITH ORDINALITY AS s(x, k)
				WHERE v.elsewhere)
				   AS l(i, line)
			  WHERE l.line IS NOT NULL) AS r;

COMMENT ON VIEW pg_procmem_crashes IS
'crash restarts seen by the memory history: the killed process, who it was, what it ran, and who held the memory';

-- Who held the memory at each crash row's last sample: the processes
-- grouped by user, application and backend type (a parallel worker in its
-- leader's group), the 3 largest groups by total overhead (rank 1 first),
-- with the largest one's memory settings, state and statement.
CREATE VIEW pg_procmem_crash_holders AS
SELECT * FROM @extschema@.pg_procmem_crash_groups(false);

COMMENT ON VIEW pg_procmem_crash_holders IS
'who held the memory before each crash restart: the largest groups of processes by user, application and type';

-- Memory by query, by sampling: what the backends running each query_id
-- held while they ran it (active samples only), largest first; a parallel
-- query's leader and workers together, once a sample, with the DSM
-- segments only they map (max_dsm: a parallel hash join's hash table is
-- there, in no process's overhead; max_held adds both). first_seen
-- and last_seen are the times of its first and last samples, and query the
-- text of the last (by sample number, not by a clock that may have stepped).
-- Its memory is work_mem's, whatever the history holds: the rows are read
-- once into a CTE (a tuplestore), and the first and last of each query_id
-- found by sorts (DISTINCT ON), which spill past work_mem, not by arrays.
CREATE VIEW pg_procmem_query_memory AS
WITH h AS MATERIALIZED (
	SELECT h.query_id, h.sample, h.sampled_at, h.pid, COALESCE(h.leader_pid, h.pid) AS leader, h.overhead,
		   h.context_bytes, h.group_dsm, h.query
	FROM @extschema@.pg_procmem_history AS h
	WHERE h.state OPERATOR(pg_catalog.=) 'active' AND h.query_id IS NOT NULL),
-- each run of it at each sample: a leader and its workers together
e AS (
	SELECT h.query_id, pg_catalog.sum(h.overhead)::bigint AS overhead,
		   pg_catalog.sum(h.context_bytes)::bigint AS context_bytes,
		   -- the same on each of them: the group's segments, once
		   pg_catalog.max(h.group_dsm) AS dsm
	FROM h
	GROUP BY h.query_id, h.sample, h.leader),
a AS (
	SELECT e.query_id,
		   pg_catalog.count(*) AS samples,
		   pg_catalog.max(e.overhead) AS max_overhead,
		   pg_catalog.avg(e.overhead)::bigint AS mean_overhead,
		   pg_catalog.max(e.context_bytes) AS max_context_bytes,
		   pg_catalog.avg(e.context_bytes)::bigint AS mean_context_bytes,
		   pg_catalog.max(e.dsm) AS max_dsm,
		   pg_catalog.max(e.overhead OPERATOR(pg_catalog.+) COALESCE(e.dsm, 0)) AS max_held
	FROM e
	GROUP BY e.query_id),
b AS (
	SELECT h.query_id, pg_catalog.count(DISTINCT h.pid) AS backends
	FROM h
	GROUP BY h.query_id),
f AS (
	SELECT DISTINCT ON (h.query_id) h.query_id, h.sampled_at
	FROM h
	ORDER BY h.query_id, h.sample),
l AS (
	SELECT DISTINCT ON (h.query_id) h.query_id, h.sampled_at, h.query
	FROM h
	ORDER BY h.query_id, h.sample DESC)
SELECT a.query_id, a.samples, b.backends, a.max_overhead, a.mean_overhead, a.max_context_bytes,
	   a.mean_context_bytes, f.sampled_at AS first_seen, l.sampled_at AS last_seen, l.query, a.max_dsm,
	   a.max_held
FROM a
	 JOIN b ON b.query_id OPERATOR(pg_catalog.=) a.query_id
	 JOIN f ON f.query_id OPERATOR(pg_catalog.=) a.query_id
	 JOIN l ON l.query_id OPERATOR(pg_catalog.=) a.query_id
ORDER BY a.max_held DESC NULLS LAST, a.query_id;

COMMENT ON VIEW pg_procmem_query_memory IS
'memory by query_id, from the history''s samples of the backends running it';

REVOKE ALL ON FUNCTION pg_procmem_history_processes(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_history_system_samples(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_crash_log(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_crash_groups(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_oom_kills_baseline() FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_settings_said(bigint, text, double precision, text, bigint, text, bigint, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_holder_text(text, text, text, integer, bigint, boolean, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_set_where(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_held_elsewhere(text, bigint, integer, boolean, integer, integer, bigint, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_crash_facts(text, text, text, bigint, timestamptz, timestamptz, bigint, bigint, text, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_crash_when(boolean, timestamptz, timestamptz, timestamptz, integer, text, bigint,
											   timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_crash_own_change(text, text, text, text) FROM PUBLIC;
REVOKE ALL ON pg_procmem_crash_holders FROM PUBLIC;
REVOKE ALL ON pg_procmem_history FROM PUBLIC;
REVOKE ALL ON pg_procmem_history_system FROM PUBLIC;
REVOKE ALL ON pg_procmem_crashes FROM PUBLIC;
REVOKE ALL ON pg_procmem_query_memory FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_procmem_history_processes(boolean) TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_history_system_samples(boolean) TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_crash_log(boolean) TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_crash_groups(boolean), pg_procmem_oom_kills_baseline(),
	pg_procmem_settings_said(bigint, text, double precision, text, bigint, text, bigint, text),
	pg_procmem_holder_text(text, text, text, integer, bigint, boolean, integer), pg_procmem_set_where(text),
	pg_procmem_held_elsewhere(text, bigint, integer, boolean, integer, integer, bigint, bigint),
	pg_procmem_crash_facts(text, text, text, bigint, timestamptz, timestamptz, bigint, bigint, text, text, text),
	pg_procmem_crash_when(boolean, timestamptz, timestamptz, timestamptz, integer, text, bigint, timestamptz),
	pg_procmem_crash_own_change(text, text, text, text) TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_crash_holders TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_history, pg_procmem_history_system, pg_procmem_crashes,
	pg_procmem_query_memory TO pg_read_all_stats;
