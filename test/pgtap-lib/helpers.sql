-- Helpers the pgTAP files share (\ir from each, inside its transaction).

-- A libpq connection string to this server, for dblink.
CREATE FUNCTION pg_temp.connstr() RETURNS text LANGUAGE sql AS $$
	SELECT format('host=%s port=%s dbname=%s user=%s',
		split_part(current_setting('unix_socket_directories'), ',', 1),
		current_setting('port'), current_database(), current_user) $$;

-- a within tolerance of b: a fraction of b plus a floor in bytes.
CREATE FUNCTION pg_temp.near(a bigint, b bigint, frac float8, floor_bytes bigint)
RETURNS boolean LANGUAGE sql AS $$ SELECT abs(a - b) <= frac * b + floor_bytes $$;

-- A /proc/meminfo field, read independently: bytes for "kB" fields, else the count.
CREATE FUNCTION pg_temp.meminfo(k text) RETURNS bigint LANGUAGE sql AS $$
	SELECT m[1]::bigint * CASE WHEN m[2] IS NULL THEN 1 ELSE 1024 END
	FROM regexp_match(pg_read_file('/proc/meminfo'), '(?:^|\n)' || k || ':\s+(\d+)( kB)?') AS m $$;

-- A dblink connection `conn` to this server that, once closed, lingers for
-- ms after it has given back its PGPROC and left pg_stat_activity, as every
-- exiting backend does for a moment (procmem_test); closes it and returns
-- its pid. (plpgsql: the callers create dblink first.)
CREATE FUNCTION pg_temp.leaving_connection(conn text, ms integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE p integer;
BEGIN
	PERFORM dblink_connect(conn, pg_temp.connstr());
	PERFORM dblink_exec(conn, $q$CREATE FUNCTION pg_temp.linger(integer) RETURNS void
		AS '$libdir/procmem_test', 'procmem_test_linger_on_exit' LANGUAGE C STRICT$q$);
	SELECT t.p INTO p FROM dblink(conn, 'SELECT pg_backend_pid()') AS t(p integer);
	PERFORM dblink_exec(conn, format('DO $d$ BEGIN PERFORM pg_temp.linger(%s); END $d$', ms));
	PERFORM dblink_disconnect(conn);
	RETURN p;
END $$;

-- A dblink connection `conn` to this server made non-dumpable
-- (procmem_test), as a hardened server's processes can be: another process
-- of the same user may no longer read its /proc/PID/{smaps_rollup, maps,
-- pagemap, exe}, nor see it at all under hidepid. Returns its pid.
CREATE FUNCTION pg_temp.nondumpable_connection(conn text) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE p integer;
BEGIN
	PERFORM dblink_connect(conn, pg_temp.connstr());
	PERFORM dblink_exec(conn, $q$CREATE FUNCTION pg_temp.set_dumpable(boolean) RETURNS void
		AS '$libdir/procmem_test', 'procmem_test_set_dumpable' LANGUAGE C STRICT$q$);
	SELECT t.p INTO p FROM dblink(conn, 'SELECT pg_backend_pid()') AS t(p integer);
	PERFORM pg_temp.set_dumpable(conn, false);
	RETURN p;
END $$;

CREATE FUNCTION pg_temp.set_dumpable(conn text, on_off boolean) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	PERFORM dblink_exec(conn, format('DO $d$ BEGIN PERFORM pg_temp.set_dumpable(%L); END $d$', on_off));
END $$;

-- The test-only module's hold on pg_procmem's reads (its hook, walk.h),
-- in this session: every read waits ms first (0: no more); the reads seen
-- since; terminate pid once it has passed its membership check, before it
-- is read, and wait until it has exited.
CREATE FUNCTION pg_temp.delay_reads(ms integer) RETURNS void
	AS '$libdir/procmem_test', 'procmem_test_delay_reads' LANGUAGE C STRICT;
CREATE FUNCTION pg_temp.reads_seen() RETURNS bigint
	AS '$libdir/procmem_test', 'procmem_test_reads' LANGUAGE C STRICT;
CREATE FUNCTION pg_temp.stop_before_read(pid integer) RETURNS void
	AS '$libdir/procmem_test', 'procmem_test_stop_before_read' LANGUAGE C STRICT;
CREATE FUNCTION pg_temp.stop_after_reads(pid integer) RETURNS void
	AS '$libdir/procmem_test', 'procmem_test_stop_after_reads' LANGUAGE C STRICT;

-- Processes of the server's user that pass one membership check only: a
-- child of the postmaster that runs /bin/sh (a background worker that
-- exec'd), and a child of this backend running the server's executable
-- (forked, never exec'd). Each returns its pid; stop_process(pid) ends one
-- and waits until it has exited.
CREATE FUNCTION pg_temp.exec_child() RETURNS integer
	AS '$libdir/procmem_test', 'procmem_test_exec_child' LANGUAGE C STRICT;
CREATE FUNCTION pg_temp.fork_child() RETURNS integer
	AS '$libdir/procmem_test', 'procmem_test_fork_child' LANGUAGE C STRICT;
CREATE FUNCTION pg_temp.stop_process(pid integer) RETURNS boolean
	AS '$libdir/procmem_test', 'procmem_test_stop' LANGUAGE C STRICT;

-- A process's executable as stat() sees it through /proc/PID/exe: size and
-- modification time, enough to tell postgres from /bin/sh.
CREATE FUNCTION pg_temp.exe(p integer) RETURNS text LANGUAGE sql AS $$
	SELECT s.size || ' bytes, ' || s.modification FROM pg_stat_file('/proc/' || p || '/exe') s $$;

-- What a query gave: its row count ("N rows"), or its error.
CREATE FUNCTION pg_temp.rows_or_error(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM (%s) q', q) INTO n;
	RETURN n || ' rows';
EXCEPTION WHEN OTHERS THEN
	RETURN 'ERROR: ' || SQLERRM;
END $$;

-- Whether the boolean query cond holds within seconds: tried every 0.1 s,
-- each time with fresh statistics (pg_stat_activity).
CREATE FUNCTION pg_temp.eventually(cond text, seconds numeric DEFAULT 5) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE holds boolean;
BEGIN
	FOR i IN 1..greatest(1, (seconds * 10)::integer) LOOP
		PERFORM pg_stat_clear_snapshot();
		EXECUTE cond INTO holds;
		IF holds THEN RETURN true; END IF;
		PERFORM pg_sleep(0.1);
	END LOOP;
	RETURN false;
END $$;

-- Waits (up to 10 s) until no connection of an earlier test is still
-- exiting: one that has given back its PGPROC is still a process of the
-- walk (a client backend by its title), but no longer in pg_stat_activity.
-- Tests that compare the walk with pg_stat_activity, or one walk's count
-- with a later one, take their figures after it. True once none is left.
CREATE FUNCTION pg_temp.no_exiting_connection() RETURNS boolean LANGUAGE sql AS $$
	SELECT pg_temp.eventually($q$SELECT NOT EXISTS (SELECT FROM pg_procmem_backends b
		WHERE b.backend_type = 'client backend' AND b.pid NOT IN (SELECT pid FROM pg_stat_activity))$q$, 10)
$$;

-- A view's derived figures against the raw figures they come from, read
-- just before and just after it: raw (a query, one row) into r0, view (a
-- query, one row) into v, raw again into r1, the three under one fresh
-- statistics snapshot. checks holds one row per test: {description, the
-- view's figure (an expression over v), the recomputed one (an expression
-- over r and v, evaluated with r0 and with r1), slack (the same, with
-- r0)}. A check passes in a window where the two recomputed figures agree
-- within the slack and the view's lies between them, give or take the
-- slack. Memory shared with the whole machine (a cgroup's usage,
-- MemAvailable) moves within a window, at times by more than a wrong term
-- would: such a window proves nothing either way, and the triple is taken
-- again, up to tries times, until every check has passed in one. One TAP
-- line per check, with the figures of its last window when it did not
-- pass. r0, v, r1 (the last window's) stay for the caller.
CREATE FUNCTION pg_temp.around_reads(raw text, view text, checks text[], tries integer DEFAULT 50)
RETURNS SETOF text LANGUAGE plpgsql SET client_min_messages = warning AS $$
DECLARE
	n integer := array_length(checks, 1);
	passed boolean[] := array_fill(false, ARRAY[n]);
	calm integer[] := array_fill(0, ARRAY[n]);
	figures text[] := array_fill(''::text, ARRAY[n]);
	g numeric; a numeric; b numeric; sl numeric;
	tried integer := 0;
BEGIN
	WHILE tried < tries AND false = ANY (passed) LOOP
		tried := tried + 1;
		DROP TABLE IF EXISTS pg_temp.r0, pg_temp.v, pg_temp.r1;
		PERFORM pg_stat_clear_snapshot();
		EXECUTE 'CREATE TEMP TABLE r0 AS ' || raw;
		EXECUTE 'CREATE TEMP TABLE v AS ' || view;
		EXECUTE 'CREATE TEMP TABLE r1 AS ' || raw;
		FOR i IN 1..n LOOP
			CONTINUE WHEN passed[i];
			EXECUTE format('SELECT (SELECT (%1$s)::numeric FROM v), (SELECT (%2$s)::numeric FROM r0 r, v),
			                       (SELECT (%2$s)::numeric FROM r1 r, v), (SELECT (%3$s)::numeric FROM r0 r, v)',
			               checks[i][2], checks[i][3], checks[i][4])
				INTO g, a, b, sl;
			IF abs(a - b) <= sl THEN
				calm[i] := calm[i] + 1;
				passed[i] := coalesce(g BETWEEN least(a, b) - sl AND greatest(a, b) + sl, false);
			END IF;
			figures[i] := format('view: %s; recomputed before: %s, after: %s; slack %s', g, a, b, sl);
		END LOOP;
	END LOOP;
	FOR i IN 1..n LOOP
		RETURN NEXT ok(passed[i], checks[i][1])
			|| CASE WHEN passed[i] THEN '' ELSE E'\n' || diag(format(
			       '%s (the last of %s windows; %s of them with the two reads within the slack)',
			       figures[i], tried, calm[i])) END;
	END LOOP;
END $$;
