-- Installed into a schema full of look-alikes of what the install script
-- uses, the extension still resolves everything to pg_catalog and itself.
-- CREATE EXTENSION runs the script with search_path "<schema>, pg_temp" and
-- pg_catalog implicitly first, so an exact copy of a pg_catalog signature
-- always loses: the decoys that matter are those whose argument types match
-- *better* than pg_catalog's, which win wherever a script leaves a name or
-- an operator unqualified and relies on an implicit cast.
CREATE SCHEMA hostile;
CREATE FUNCTION hostile.pg_backend_pid() RETURNS integer LANGUAGE sql AS 'SELECT 1';
CREATE FUNCTION hostile.current_setting(text) RETURNS text LANGUAGE sql AS $$SELECT '0'$$;
CREATE FUNCTION hostile.current_setting(text, boolean) RETURNS text LANGUAGE sql AS $$SELECT '0'$$;
CREATE FUNCTION hostile.pg_size_bytes(text) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint';
CREATE FUNCTION hostile.always(integer, integer) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE OPERATOR hostile.= (leftarg = integer, rightarg = integer, function = hostile.always);
CREATE FUNCTION hostile.minus(bigint, bigint) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint';
CREATE OPERATOR hostile.- (leftarg = bigint, rightarg = bigint, function = hostile.minus);
CREATE AGGREGATE hostile.sum(bigint) (sfunc = int8pl, stype = bigint, initcond = '42');
CREATE VIEW hostile.pg_stat_activity AS SELECT * FROM pg_catalog.pg_stat_activity WHERE false;
-- better matches than pg_catalog's: every arithmetic and comparison
-- operator on the mixed numeric types the views compute with (pg_catalog
-- has none for these pairs: it casts to numeric or float8), and functions
-- taking the types a view would otherwise cast
DO $$
DECLARE
	t record;
	op text;
BEGIN
	FOR t IN SELECT * FROM (VALUES ('bigint', 'numeric'), ('numeric', 'bigint'), ('integer', 'numeric'),
			('numeric', 'integer'), ('bigint', 'float8'), ('float8', 'bigint'), ('integer', 'float8'),
			('float8', 'integer')) AS v(l, r) LOOP
		EXECUTE format('CREATE FUNCTION hostile.%I(%s, %s) RETURNS numeric LANGUAGE sql AS %L',
					   'calc_' || t.l || '_' || t.r, t.l, t.r, 'SELECT 42::numeric');
		EXECUTE format('CREATE FUNCTION hostile.%I(%s, %s) RETURNS boolean LANGUAGE sql AS %L',
					   'cmp_' || t.l || '_' || t.r, t.l, t.r, 'SELECT true');
		FOREACH op IN ARRAY ARRAY['+', '-', '*', '/'] LOOP
			EXECUTE format('CREATE OPERATOR hostile.%s (leftarg = %s, rightarg = %s, function = hostile.%I)',
						   op, t.l, t.r, 'calc_' || t.l || '_' || t.r);
		END LOOP;
		FOREACH op IN ARRAY ARRAY['=', '<>', '<', '>', '<=', '>='] LOOP
			EXECUTE format('CREATE OPERATOR hostile.%s (leftarg = %s, rightarg = %s, function = hostile.%I)',
						   op, t.l, t.r, 'cmp_' || t.l || '_' || t.r);
		END LOOP;
	END LOOP;
END $$;
CREATE FUNCTION hostile.round(bigint, integer) RETURNS numeric LANGUAGE sql AS 'SELECT 42::numeric';
CREATE FUNCTION hostile.round(float8, integer) RETURNS numeric LANGUAGE sql AS 'SELECT 42::numeric';
CREATE FUNCTION hostile.pg_size_pretty(integer) RETURNS text LANGUAGE sql AS $$SELECT 'decoy'$$;
CREATE FUNCTION hostile.pg_size_pretty(float8) RETURNS text LANGUAGE sql AS $$SELECT 'decoy'$$;
CREATE FUNCTION hostile.pg_size_bytes(name) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint';
CREATE FUNCTION hostile.sum_int(bigint, integer) RETURNS bigint LANGUAGE sql AS 'SELECT 42::bigint';
CREATE AGGREGATE hostile.sum(integer) (sfunc = hostile.sum_int, stype = bigint, initcond = '42');
CREATE AGGREGATE hostile.max(integer) (sfunc = int4larger, stype = integer, initcond = '42');

DROP EXTENSION pg_procmem;
SET search_path = hostile, public;
CREATE EXTENSION pg_procmem SCHEMA hostile;
-- A control, created as the install script's objects are: an unqualified
-- expression that needs an implicit cast binds to a decoy. (This is what
-- would happen to a view of the extension written that way.)
CREATE VIEW hostile.control AS
SELECT 1::bigint / 2.0 AS ratio, round(7::bigint, 1) AS rounded, pg_size_pretty(1) AS pretty;
RESET search_path;
SELECT * FROM hostile.control;

-- What every view of the extension binds to: no function, operator or type
-- of the schema but the extension's own (the control's bindings counted
-- beside them, to show the check sees decoys).
CREATE FUNCTION pg_temp.decoy_bindings(view_oid oid) RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*) FROM pg_catalog.pg_rewrite r
	JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::regclass AND d.objid = r.oid
	LEFT JOIN pg_catalog.pg_proc p ON d.refclassid = 'pg_catalog.pg_proc'::regclass AND p.oid = d.refobjid
	LEFT JOIN pg_catalog.pg_operator o ON d.refclassid = 'pg_catalog.pg_operator'::regclass AND o.oid = d.refobjid
	LEFT JOIN pg_catalog.pg_type t ON d.refclassid = 'pg_catalog.pg_type'::regclass AND t.oid = d.refobjid
	WHERE r.ev_class = view_oid
	  AND coalesce(p.pronamespace, o.oprnamespace, t.typnamespace) = 'hostile'::regnamespace
	  AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend e
					  WHERE e.classid = d.refclassid AND e.objid = d.refobjid AND e.deptype = 'e') $$;
SELECT pg_temp.decoy_bindings('hostile.control'::regclass) AS control_binds_decoys;
CREATE FUNCTION pg_temp.extension_decoy_bindings() RETURNS TABLE (view_name name, decoys bigint)
LANGUAGE sql AS $$
	SELECT c.relname, pg_temp.decoy_bindings(c.oid) FROM pg_catalog.pg_class c
	JOIN pg_catalog.pg_depend e ON e.classid = 'pg_catalog.pg_class'::regclass AND e.objid = c.oid AND e.deptype = 'e'
	JOIN pg_catalog.pg_extension x ON x.oid = e.refobjid AND x.extname = 'pg_procmem'
	WHERE c.relkind = 'v' $$;
SELECT count(*) AS views, sum(decoys) AS decoy_bindings FROM pg_temp.extension_decoy_bindings();
-- the check fails on a view of the extension that relies on a cast
ALTER EXTENSION pg_procmem ADD VIEW hostile.control;
SELECT view_name, decoys FROM pg_temp.extension_decoy_bindings() WHERE decoys > 0;
ALTER EXTENSION pg_procmem DROP VIEW hostile.control;

-- The same for the functions with a SQL-standard body (the advice's checks):
-- their bodies are bound at CREATE time too, and must bind to nothing of the
-- schema but the extension's own.
CREATE FUNCTION pg_temp.function_decoy_bindings() RETURNS TABLE (function_name name, decoys bigint)
LANGUAGE sql AS $$
	SELECT p.proname, count(*) FILTER (WHERE coalesce(q.pronamespace, o.oprnamespace, t.typnamespace) = 'hostile'::regnamespace
										-- a view's row type belongs to the view
										AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend m
														WHERE m.deptype = 'e'
														  AND ((m.classid = d.refclassid AND m.objid = d.refobjid)
															   OR (m.classid = 'pg_catalog.pg_class'::regclass
																   AND m.objid = t.typrelid))))
	FROM pg_catalog.pg_proc p
	JOIN pg_catalog.pg_depend e ON e.classid = 'pg_catalog.pg_proc'::regclass AND e.objid = p.oid AND e.deptype = 'e'
	JOIN pg_catalog.pg_extension x ON x.oid = e.refobjid AND x.extname = 'pg_procmem'
	LEFT JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'n'
	LEFT JOIN pg_catalog.pg_proc q ON d.refclassid = 'pg_catalog.pg_proc'::regclass AND q.oid = d.refobjid
	LEFT JOIN pg_catalog.pg_operator o ON d.refclassid = 'pg_catalog.pg_operator'::regclass AND o.oid = d.refobjid
	LEFT JOIN pg_catalog.pg_type t ON d.refclassid = 'pg_catalog.pg_type'::regclass AND t.oid = d.refobjid
	WHERE p.prosqlbody IS NOT NULL
	GROUP BY p.proname $$;
SELECT count(*) AS sql_functions, sum(decoys) AS decoy_bindings FROM pg_temp.function_decoy_bindings();
-- the check fails on a function of the extension whose body relies on a cast
SET search_path = hostile, public;
CREATE FUNCTION hostile.control_function() RETURNS numeric LANGUAGE sql
BEGIN ATOMIC SELECT 1::bigint / 2.0; END;
RESET search_path;
ALTER EXTENSION pg_procmem ADD FUNCTION hostile.control_function();
SELECT function_name, decoys FROM pg_temp.function_decoy_bindings() WHERE decoys > 0;
ALTER EXTENSION pg_procmem DROP FUNCTION hostile.control_function();

SELECT count(*) AS rows_for_me, min(backend_type) AS backend_type
FROM hostile.pg_procmem_backends WHERE pid = pg_catalog.pg_backend_pid();
SELECT count(*) = count(DISTINCT pid) AS no_join_blowup FROM hostile.pg_procmem_backends;
SELECT max_connections = current_setting('max_connections')::int AS real_setting,
       work_mem = pg_size_bytes(current_setting('work_mem')) AS real_work_mem
FROM hostile.pg_procmem_headroom;
SELECT mem_used = mem_total - mem_available AS real_minus FROM hostile.pg_procmem_system;
SELECT sum(processes) = (SELECT count(*) FROM hostile.pg_procmem_processes()) AS real_sum
FROM hostile.pg_procmem_summary WHERE grouped_by = 'backend_type';
SELECT count(*) AS decoy_findings FROM hostile.pg_procmem_advice WHERE evidence LIKE '%decoy%';

-- The same through the upgrade path: the first release installed into the
-- hostile schema, then ALTER EXTENSION UPDATE through every upgrade script;
-- the views they create bind to nothing of the schema either.
DROP EXTENSION pg_procmem;
SET search_path = hostile, public;
CREATE EXTENSION pg_procmem VERSION '1.0.0' SCHEMA hostile;
ALTER EXTENSION pg_procmem UPDATE;
RESET search_path;
SELECT count(*) AS views, sum(decoys) AS decoy_bindings FROM pg_temp.extension_decoy_bindings();
SELECT count(*) AS sql_functions, sum(decoys) AS decoy_bindings FROM pg_temp.function_decoy_bindings();

DROP EXTENSION pg_procmem;
SET client_min_messages = warning;
DROP SCHEMA hostile CASCADE;
RESET client_min_messages;
CREATE EXTENSION pg_procmem;

-- A scan over many processes stops on statement_timeout (every process read
-- is preceded by CHECK_FOR_INTERRUPTS; the latency is in bench/).
SET statement_timeout = '300ms';
SELECT count(*) FROM generate_series(1, 100000000) g, LATERAL pg_procmem_processes(g > 0) p;
RESET statement_timeout;
SELECT count(*) > 0 AS still_fine FROM pg_procmem_processes();

-- ... and pg_cancel_backend, from another session.
CREATE EXTENSION dblink;
SELECT dblink_connect('scanner', format('host=%s port=%s dbname=%s user=%s',
	split_part(current_setting('unix_socket_directories'), ',', 1),
	current_setting('port'), current_database(), current_user));
CREATE TEMP TABLE scanner AS SELECT p AS pid FROM dblink('scanner', 'SELECT pg_backend_pid()') AS t(p integer);
SELECT dblink_send_query('scanner',
	'SELECT count(*) FROM generate_series(1, 100000000) g, LATERAL pg_procmem_processes(g > 0) p');
SELECT pg_sleep(0.5);
SELECT pg_cancel_backend(pid) FROM scanner;
SELECT * FROM dblink_get_result('scanner') AS t(n bigint);
SELECT dblink_disconnect('scanner');
DROP EXTENSION dblink;
