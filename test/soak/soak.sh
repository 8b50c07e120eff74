#!/bin/bash
# test/soak/soak.sh [SECONDS] - connection churn soak (TAP), against the
# server in PGHOST/PGPORT (superuser; loopback socket only; bounded in time).
# While pgbench -C opens and closes connections as fast as it can and a
# second pgbench runs a read-write load, four sessions query every view of
# pg_procmem in a loop. Passes with no query error, no crashed process in the
# server log (SERVER_LOG), and no row for a process that is not the server's
# or that had exited when it was read.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
secs=${1:-60}
work=$(mktemp -d)
n=0 bad=0
ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; bad=1; fi
}
q() { psql -X -At -v ON_ERROR_STOP=1 -d soak "$@"; }
# seconds since the start, to tenths (where the time goes: set-up, churn)
t0=${EPOCHREALTIME/[.,]/}
elapsed() { local t=${EPOCHREALTIME/[.,]/}; echo "$(((t - t0) / 1000000)).$(((t - t0) / 100000 % 10))"; }

psql -X -q -c "DROP DATABASE IF EXISTS soak" -c "CREATE DATABASE soak" postgres
q -q <<'SQL'
CREATE EXTENSION pg_procmem;
-- Pids in the list whose /proc/PID/stat names another parent although the
-- process started before this query did: a row for a process that is not
-- this server's. (A pid can be reused between the scan and this check: a
-- process that started after the query began is that, not a wrong row.
-- Reading the stat of a process that is exiting can fail: it is gone.)
-- And every pid in unread, the rows without their figures (rss, overhead or
-- oom_score NULL): here every process's files are readable (same user,
-- dumpable, no hidepid), so such a row was read from a process that had
-- exited, whether or not its pid is gone by now. (A row with all its
-- figures was read from a live process: the reading ends by checking that
-- its process is still there.)
CREATE FUNCTION foreign_pids(pids integer[], unread integer[]) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
	pm integer := split_part(pg_read_file('postmaster.pid'), E'\n', 1)::integer;
	btime float8 := (regexp_match(pg_read_file('/proc/stat'), 'btime (\d+)'))[1]::float8;
	s text;
	f text[];
	started timestamptz;
	n integer := 0;
	p integer;
BEGIN
	FOREACH p IN ARRAY coalesce(unread, '{}') LOOP
		BEGIN
			s := pg_read_file('/proc/' || p || '/stat', 0, 1024, true);
		EXCEPTION WHEN OTHERS THEN
			s := NULL;
		END;
		RAISE WARNING 'foreign row: pid % lacks figures: read from an exited process (now %)', p,
			coalesce(s, 'gone');
		n := n + 1;
	END LOOP;
	FOREACH p IN ARRAY coalesce(pids, '{}') LOOP
		CONTINUE WHEN p = pm;
		BEGIN
			s := pg_read_file('/proc/' || p || '/stat', 0, 1024, true);
		EXCEPTION WHEN OTHERS THEN
			s := NULL;
		END;
		CONTINUE WHEN s IS NULL;
		f := string_to_array(regexp_replace(s, '^.*\) ', ''), ' ');
		CONTINUE WHEN f[2]::integer = pm;
		-- a zombie's parent can read 0 while it is reaped: it has exited
		CONTINUE WHEN f[1] IN ('Z', 'X');
		-- field 22 (starttime, USER_HZ = 100 ticks since boot) is f[20]
		started := to_timestamp(btime + f[20]::float8 / 100);
		CONTINUE WHEN started > statement_timestamp() - interval '10 ms';
		RAISE WARNING 'foreign row: pid % ppid % started % (query %): %', p, f[2], started,
			statement_timestamp(), s;
		n := n + 1;
	END LOOP;
	RETURN n;
END $$;
SQL
pgbench -q -i -s 2 soak >/dev/null 2>&1
# the churning connections log in with a long role name: with a postmaster
# started on a short command line (scripts/test) their titles are cut
# before the client address, and backend_type must not become "role db"
churner=app_user_with_a_rather_long_role_name_to_cut_titles
q -q -c "CREATE ROLE $churner LOGIN" -c "GRANT SELECT ON ALL TABLES IN SCHEMA public TO $churner"

# one round over every view: a line "R|rows|foreign" per query, and "T|n|types"
# for backend types that are not a known type's name; rounds repeated more
# often than a run can get through (printf is a builtin: no process each)
round=$(cat <<'SQL'
SELECT 'R', count(*), foreign_pids(array_agg(pid), array_agg(pid) FILTER (WHERE rss IS NULL OR overhead IS NULL OR oom_score IS NULL)) FROM pg_procmem_backends;
SELECT 'R', count(*), foreign_pids(array_agg(pid), array_agg(pid) FILTER (WHERE rss IS NULL OR overhead IS NULL OR oom_score IS NULL)) FROM pg_procmem_processes();
SELECT 'R', count(*), foreign_pids(array_agg(pid), array_agg(pid) FILTER (WHERE rss IS NULL OR overhead IS NULL OR oom_score IS NULL)) FROM pg_procmem_oom;
SELECT 'R', count(*), foreign_pids(array_agg(pid), NULL) FROM pg_procmem_contexts;
SELECT 'R', count(*), 0 FROM pg_procmem_summary;
SELECT 'T', count(*), string_agg(DISTINCT backend_type, ',') FROM pg_procmem_processes()
WHERE backend_type NOT IN ('postmaster', 'logger', 'stats collector', 'client backend', 'postmaster child',
	'archiver', 'autovacuum launcher', 'autovacuum worker', 'background writer', 'checkpointer', 'io worker',
	'logical replication apply worker', 'logical replication launcher', 'logical replication parallel apply worker',
	'logical replication tablesync worker', 'logical replication worker', 'parallel worker', 'slotsync worker',
	'startup', 'walreceiver', 'walsender', 'walsummarizer', 'walwriter');
SELECT 'R', count(*), 0 FROM pg_procmem_accounting, pg_procmem_hugepages, pg_procmem_headroom, pg_procmem_system;
SQL
)
{
	echo "SET client_min_messages = debug1;"
	for _ in $(seq 20000); do printf '%s\n' "$round"; done
} >"$work/loop.sql"
echo "# set-up done at $(elapsed) s (database, pgbench -i, role, loop file)"

pgbench -n -C -c 4 -j 2 -S -T "$secs" -U "$churner" soak >"$work/churn.log" 2>&1 &
pgbench -n -c 2 -j 1 -T "$secs" soak >"$work/rw.log" 2>&1 &
for s in 1 2 3 4; do
	timeout "$secs" psql -X -At -d soak -f "$work/loop.sql" >"$work/q$s.out" 2>"$work/q$s.err" &
done
wait
echo "# churn done at $(elapsed) s"

queries=$(cat "$work"/q*.out | grep -c '^R|')
rows=$(cat "$work"/q*.out | awk -F'|' '/^R\|/ {s += $2} END {print s + 0}')
foreign=$(cat "$work"/q*.out | awk -F'|' '/^R\|/ {s += $3} END {print s + 0}')
free_text=$(cat "$work"/q*.out | awk -F'|' '/^T\|/ {s += $2} END {print s + 0}')
polls=$(cat "$work"/q*.out | grep -c '^T|')
errors=$(cat "$work"/q*.err | grep -c 'ERROR' || true)
skipped=$(cat "$work"/q*.err | sed -n 's/.*candidate pids, \([0-9]*\) not live or not ours.*/\1/p' |
	awk '{s += $1} END {print s + 0}')
connections=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/churn.log")
rw=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/rw.log")

echo "# ${secs}s: $queries queries, $rows rows, $skipped candidate pids skipped (exited mid-scan, or"
echo "# a stale PGPROC pid), ${connections:-0} connections opened and closed, ${rw:-0} read-write transactions"
[ "$queries" -gt 100 ] && [ "${connections:-0}" -gt 100 ]
ok $? "the views were queried ($queries times) while ${connections:-0} connections came and went"
[ "$errors" -eq 0 ]
ok $? "no query failed ($errors errors)"
grep -h 'ERROR' "$work"/q*.err | sort | uniq -c | head -5 | sed 's/^/# /'
grep -h 'foreign row' "$work"/q*.err | head -5 | sed 's/^/# /'
[ "$foreign" -eq 0 ]
ok $? "no row for a process that is not the server's or had exited when read ($foreign)"
cat "$work"/q*.out | awk -F'|' '/^T\|/ && $2 > 0 {print $3}' | tr ',' '\n' | sort | uniq -c | head -5 | sed 's/^/# /'
[ "$free_text" -eq 0 ] && [ "$polls" -gt 10 ]
ok $? "backend_type is only ever a known type ($polls polls under churn by a long role name; $free_text other values)"
crashes=$(grep -cE 'terminated by signal|was terminated by|server process .* exited with exit code [^01]' "${SERVER_LOG:-/dev/null}" || true)
[ "$crashes" -eq 0 ]
ok $? "no server process crashed (server log: $crashes)"
psql -X -q -c "DROP DATABASE soak WITH (FORCE)" postgres 2>/dev/null || psql -X -q -c "DROP DATABASE soak" postgres
psql -X -q -c "DROP ROLE $churner" postgres
rm -rf "$work"
echo "# soak.sh took $(elapsed) s in all"
echo "1..$n"
exit $bad
