-- The memory guard's actions (pg_procmem.guard, pg_procmem.max_backend_memory;
-- docs/guard.md), the last 128, oldest first; the history file keeps them
-- through restarts.
-- missing_ok: no rows, instead of an ERROR, when the library was not
-- preloaded.
CREATE FUNCTION pg_procmem_guard_log(
	IN missing_ok boolean DEFAULT false,
	OUT acted_at timestamptz,
	OUT action_number bigint,
	OUT pid integer,
	OUT action text,
	OUT reason text,
	OUT processes integer,
	OUT held bigint,
	OUT limit_bytes bigint,
	OUT used bigint,
	OUT threshold_pct integer,
	OUT source text,
	OUT given_back bigint,
	OUT backend_start timestamptz,
	OUT query_start timestamptz,
	OUT usename text,
	OUT datname text,
	OUT application_name text,
	OUT query text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_guard_log'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_procmem_guard_log(boolean) IS
'the memory guard''s actions (what pg_procmem_guard_actions shows)';

-- One row per action of the guard: whom it canceled or ended, and why.
CREATE VIEW pg_procmem_guard_actions AS
SELECT * FROM @extschema@.pg_procmem_guard_log(false);

COMMENT ON VIEW pg_procmem_guard_actions IS
'the memory guard''s actions: the statements it canceled and the sessions it ended (or would have, in dry_run), the last 128, kept through restarts';

REVOKE ALL ON FUNCTION pg_procmem_guard_log(boolean) FROM PUBLIC;
REVOKE ALL ON pg_procmem_guard_actions FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_procmem_guard_log(boolean) TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_guard_actions TO pg_read_all_stats;
