-- Installed into a schema full of look-alikes of what the install script
-- uses, the extension still resolves everything to pg_catalog and itself.
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

DROP EXTENSION pg_procmem;
SET search_path = hostile, public;
CREATE EXTENSION pg_procmem SCHEMA hostile;
RESET search_path;

SELECT count(*) AS rows_for_me, min(backend_type) AS backend_type
FROM hostile.pg_procmem_backends WHERE pid = pg_catalog.pg_backend_pid();
SELECT count(*) = count(DISTINCT pid) AS no_join_blowup FROM hostile.pg_procmem_backends;
SELECT max_connections = current_setting('max_connections')::int AS real_setting,
       work_mem = pg_size_bytes(current_setting('work_mem')) AS real_work_mem
FROM hostile.pg_procmem_headroom;
SELECT mem_used = mem_total - mem_available AS real_minus FROM hostile.pg_procmem_system;
SELECT sum(processes) = (SELECT count(*) FROM hostile.pg_procmem_processes()) AS real_sum
FROM hostile.pg_procmem_summary WHERE grouped_by = 'backend_type';

DROP EXTENSION pg_procmem;
DROP SCHEMA hostile CASCADE;
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
