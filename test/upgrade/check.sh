#!/bin/bash
# Every released version of pg_procmem, installed with the newest library,
# must answer through every view and function of its own version (the
# library serves every released SQL definition); brought up to date with
# ALTER EXTENSION pg_procmem UPDATE, it must have exactly the objects,
# signatures, view columns, definitions and grants of a fresh install of the
# newest version (TAP). Runs against the server in PGHOST/PGPORT as a
# superuser; creates and drops its own databases.
set -uo pipefail
cd "$(dirname "$0")/../.."
newest=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" pg_procmem.control)
older=$(ls pg_procmem--*.sql | sed -n 's/^pg_procmem--\([0-9.]*\)\.sql$/\1/p' | grep -vx "$newest" | sort -V)
n=0 bad=0
ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; bad=1; fi
}
sql() { psql -X -At -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }

# The extension's objects, one line each, with what must match: signatures,
# the C symbol or SQL body, columns (with their comments), view definitions,
# grants and comments.
describe() {
	sql "$1" "
	SELECT pg_describe_object(d.classid, d.objid, 0)
		|| CASE WHEN d.classid = 'pg_proc'::regclass THEN
			' (' || pg_get_function_arguments(d.objid) || ') returns ' || pg_get_function_result(d.objid)
			|| ' ' || p.provolatile::text || p.proisstrict::text || p.proparallel::text || ' acl ' || coalesce(p.proacl::text, '')
			-- the C symbol, or the SQL-standard body
			|| ' src ' || p.prosrc || ' body ' || coalesce(pg_get_function_sqlbody(d.objid), '')
		   ELSE '' END
		|| CASE WHEN d.classid = 'pg_class'::regclass THEN
			' columns ' || (SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod)
			                                  || ' comment ' || coalesce(col_description(attrelid, attnum), ''),
			                                  ', ' ORDER BY attnum)
			                FROM pg_attribute WHERE attrelid = d.objid AND attnum > 0)
			|| ' acl ' || coalesce(c.relacl::text, '') || ' def ' || coalesce(pg_get_viewdef(d.objid), '')
		   ELSE '' END
		|| ' comment ' || coalesce(obj_description(d.objid, d.classid::regclass::name), '')
	FROM pg_depend d
	LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
	LEFT JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid
	WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_procmem')
	ORDER BY 1" && psql -X -At -v ON_ERROR_STOP=1 -d "$1" -f test/upgrade/catalog.sql
}

# Reads every view and calls every function of the installed version; prints
# those that failed, with the error.
read_everything() {
	local obj out bad=""
	for obj in $(sql "$1" "
		SELECT CASE WHEN d.classid = 'pg_class'::regclass THEN 'v:' || c.relname
		            ELSE 'f:' || p.proname END
		FROM pg_depend d
		LEFT JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid
		LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
		WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
		  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_procmem')
		  AND (c.relkind = 'v' OR p.oid IS NOT NULL)
		ORDER BY 1"); do
		case $obj in
		v:*) out=$(sql "$1" "SELECT count(*) FROM ${obj#v:}" 2>&1) ;;
		# pg_procmem_process needs a pid: the postmaster's
		f:pg_procmem_process) out=$(sql "$1" "SELECT count(*) FROM pg_procmem_process(pg_catalog.split_part(pg_catalog.pg_read_file('postmaster.pid'), E'\\n', 1)::integer)" 2>&1) ;;
		# the advice's checks take the row of facts the advice measures
		f:pg_procmem_advice_*) out=$(sql "$1" "SELECT count(*) FROM pg_procmem_advice_facts AS f, ${obj#f:}(f)" 2>&1) ;;
		# a text and the columns to fit it in
		f:pg_procmem_clip) out=$(sql "$1" "SELECT pg_procmem_clip(E'a\\tb', 2) = 'a~'" 2>&1) && [ "$out" = t ] ;;
		# the crash rows' words: settings a session gave itself, a group, whether the victim held little
		f:pg_procmem_settings_said) out=$(sql "$1" "SELECT pg_procmem_settings_said(8589934592, 'session', 2, 'default',
			8388608, 'user', 67108864, 'configuration file')
			= ARRAY['work_mem = 8GB (session)', 'temp_buffers = 8MB (user)']" 2>&1) && [ "$out" = t ] ;;
		f:pg_procmem_holder_text) out=$(sql "$1" "SELECT pg_procmem_holder_text('client backend', 'etl', 'loader', 11,
			941621248) = 'etl/loader: 11 sessions held 898 MB'" 2>&1) && [ "$out" = t ] ;;
		# an auxiliary victim; a lone hog; one of a pool whose others held little; one of sessions that held the room
		f:pg_procmem_held_elsewhere) out=$(sql "$1" "SELECT pg_procmem_held_elsewhere('checkpointer', 1048576, 8485, false,
			11, 9000, 941621248, NULL) AND NOT pg_procmem_held_elsewhere('client backend', NULL, 8485, false, 100, 9000,
			941621248, 734003200) AND NOT pg_procmem_held_elsewhere('client backend', NULL, 8485, true, 11, 9000,
			14680064, 1073741824) AND pg_procmem_held_elsewhere('client backend', NULL, 8485, true, 4, 9000,
			414187520, 314572800)" 2>&1) && [ "$out" = t ] ;;
		f:pg_procmem_set_where) out=$(sql "$1" "SELECT pg_procmem_set_where('user') = 'for its role'
			AND pg_procmem_set_where('session') = 'in its session'
			AND pg_procmem_set_where('configuration file') IS NULL" 2>&1) && [ "$out" = t ] ;;
		# an idle session sampled small whose query started after the sample: its size then does not count
		f:pg_procmem_crash_facts) out=$(sql "$1" "SELECT same_group AND running_overhead IS NULL AND room = 100
			FROM pg_procmem_crash_facts('client backend', 'a', 'b', 5, '2026-01-01 00:00', '2026-01-01 00:01',
			300, 200, 'client backend', 'a', 'b')" 2>&1) && [ "$out" = t ] ;;
		# when the kill was: between two reads; no rise across a signal 9; a server killed whole after a rise
		f:pg_procmem_crash_when) out=$(sql "$1" "SELECT pg_procmem_crash_when(true, '2026-01-01 00:00:01.2',
			'2026-01-01 00:00:01.4', '2026-01-01 00:00:03.4', 9, 'postmaster log', 1, NULL)
			= 'OOM kill 00:00:01.200-00:00:01.400, exit 2.0 s on'
			AND pg_procmem_crash_when(false, NULL, '2026-01-01 00:00:01', '2026-01-01 00:00:01', 9,
			'postmaster log', 0, NULL) = 'no OOM kill counted: cause unknown'
			AND pg_procmem_crash_when(true, NULL, '2026-01-01 00:05', NULL, NULL, 'unclean stop', 1,
			'2026-01-01 00:04:10') = 'OOM kill counter +1 since 00:04:10: killed whole?'" 2>&1) && [ "$out" = t ] ;;
		# what to change: idle in transaction with temp_buffers set; no sort or hash; a sort with work_mem set
		f:pg_procmem_crash_own_change) out=$(sql "$1" "SELECT pg_procmem_crash_own_change('idle in transaction',
			NULL, 'session', 'session') = 'to change: its temp_buffers, set in its session'
			AND pg_procmem_crash_own_change('active', 'none', NULL, 'session') = 'no sort or hash in it: see max_backend_memory'
			AND pg_procmem_crash_own_change('active', 'sort', NULL, 'user') = 'to change: its work_mem, set for its role'" 2>&1) && [ "$out" = t ] ;;
		f:pg_procmem_crash_own_advice) out=$(sql "$1" "SELECT pg_procmem_crash_own_advice('active', 'hash',
			ARRAY['work_mem = 8GB (session)'], NULL, 'session', 'a', 'b', 'SELECT 1') LIKE 'It ran with work_mem = 8GB, set in its session%'
			AND pg_procmem_crash_own_advice('active', 'none', ARRAY['work_mem = 8GB (session)'], NULL, 'session', 'a', 'b',
			'SELECT 1') LIKE 'Its statement had no sort or hash%'
			AND pg_procmem_crash_own_advice('idle', NULL, ARRAY['temp_buffers = 1GB (session)'], 'session', NULL, 'a', 'b',
			NULL) LIKE 'It was idle at its last sample%(temp_buffers = 1GB set in its session: local buffers it keeps until it ends)%'" 2>&1) && [ "$out" = t ] ;;
		# a sample 20 s old at the default interval stands for now; one 30 s old does not
		f:pg_procmem_sample_fresh) out=$(sql "$1" "SELECT pg_procmem_sample_fresh(now() - interval '20 s', '10s', now())
			AND NOT pg_procmem_sample_fresh(now() - interval '30 s', '10s', now())" 2>&1) && [ "$out" = t ] ;;
		# the size type's functions: sizes read, printed, sorted, compared and hashed
		f:pg_procmem_size*) out=$(sql "$1" "SELECT string_agg(s::text, ', ' ORDER BY s) = '983 kB, 11 MB, 11 MB'
			AND count(DISTINCT s) = 2 AND bool_and(s > '1 kB')
			FROM unnest(ARRAY['11 MB', '983 kB', '11534336']::pg_procmem_size[]) AS s" 2>&1) && [ "$out" = t ] ;;
		f:*) out=$(sql "$1" "SELECT count(*) FROM ${obj#f:}()" 2>&1) ;;
		esac
		[ $? -eq 0 ] || bad+="${obj#*:} (${out//$'\n'/ }) "
	done
	echo "$bad"
}

fresh=$(mktemp) upgraded=$(mktemp)
sql postgres "DROP DATABASE IF EXISTS procmem_fresh" >/dev/null
sql postgres "CREATE DATABASE procmem_fresh" >/dev/null
sql procmem_fresh "CREATE EXTENSION pg_procmem" >/dev/null
describe procmem_fresh >"$fresh"
ok $? "describe reads a fresh install of $newest"
[ -s "$fresh" ]
ok $? "describe lists the objects of a fresh install of $newest"
# \d+ explains every column of every view
uncommented=$(sql procmem_fresh "
	SELECT string_agg(c.relname || '.' || a.attname, ' ' ORDER BY c.relname, a.attnum)
	FROM pg_depend d
	JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid AND c.relkind = 'v'
	JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
	WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_procmem')
	  AND coalesce(col_description(c.oid, a.attnum), '') = ''")
ok $? "the view columns' comments can be read"
[ -z "$uncommented" ]
ok $? "every column of every view of $newest has a comment${uncommented:+: none for $uncommented}"
objects=$(sql procmem_fresh "SELECT count(*) FROM pg_depend WHERE deptype = 'e'
	AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_procmem')")
[ "$objects" -ge 10 ]
ok $? "a fresh install of $newest has its $objects objects"
failed=$(read_everything procmem_fresh)
[ -z "$failed" ]
ok $? "every view and function of $newest answers${failed:+: $failed}"

# A hardened server, whose default privileges take EXECUTE and USAGE on
# types from PUBLIC: the size type and its functions are still PUBLIC's
# (granted, not defaulted), so a pg_monitor role keeps pg_procmem_top's
# sizes in a table of its own, compares and groups them.
sql postgres "DROP DATABASE IF EXISTS procmem_hardened" >/dev/null
sql postgres "DROP ROLE IF EXISTS procmem_hardened_monitor" >/dev/null
sql postgres "CREATE DATABASE procmem_hardened" >/dev/null
sql postgres "CREATE ROLE procmem_hardened_monitor IN ROLE pg_monitor" >/dev/null
sql procmem_hardened "ALTER DEFAULT PRIVILEGES REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC" >/dev/null
sql procmem_hardened "ALTER DEFAULT PRIVILEGES REVOKE USAGE ON TYPES FROM PUBLIC" >/dev/null
sql procmem_hardened "CREATE EXTENSION pg_procmem" >/dev/null
out=$(sql procmem_hardened "SET ROLE procmem_hardened_monitor;
	CREATE TEMP TABLE snapshot AS SELECT * FROM pg_procmem_top;
	SELECT count(*) FILTER (WHERE overhead > '1 kB') >= 0 AND count(DISTINCT overhead) >= 0 FROM snapshot" 2>&1)
[ "$(echo "$out" | tail -1)" = t ]
ok $? "with EXECUTE revoked from PUBLIC by default, a pg_monitor role keeps, compares and groups sizes (${out//$'\n'/ })"
sql postgres "DROP DATABASE procmem_hardened" >/dev/null
sql postgres "DROP ROLE procmem_hardened_monitor" >/dev/null

if [ -z "$older" ]; then
	ok 0 "no released version older than $newest: nothing to upgrade from yet"
fi
for v in $older; do
	db=procmem_from_${v//./_}
	sql postgres "DROP DATABASE IF EXISTS $db" >/dev/null
	sql postgres "CREATE DATABASE $db" >/dev/null
	sql "$db" "CREATE EXTENSION pg_procmem VERSION '$v'" >/dev/null
	ok $? "version $v installs"
	# the newest library serves that version's SQL definitions (their column
	# counts): every view and every function of it answers
	failed=$(read_everything "$db")
	[ -z "$failed" ]
	ok $? "every view and function of $v answers with the newest library${failed:+: $failed}"
	sql "$db" "ALTER EXTENSION pg_procmem UPDATE" >/dev/null
	[ "$(sql "$db" "SELECT extversion FROM pg_extension WHERE extname = 'pg_procmem'")" = "$newest" ]
	ok $? "ALTER EXTENSION UPDATE takes $v to $newest"
	describe "$db" >"$upgraded"
	ok $? "describe reads $v updated to $newest"
	[ -s "$upgraded" ]
	ok $? "describe lists the objects of $v updated to $newest"
	diff -u "$fresh" "$upgraded" | sed 's/^/# /'
	cmp -s "$fresh" "$upgraded"
	ok $? "$v updated to $newest has exactly the objects of a fresh $newest"
	sql postgres "DROP DATABASE $db" >/dev/null
done
sql postgres "DROP DATABASE procmem_fresh" >/dev/null
rm -f "$fresh" "$upgraded"
echo "1..$n"
exit $bad
