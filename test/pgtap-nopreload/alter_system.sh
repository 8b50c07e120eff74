#!/bin/bash
# test/pgtap-nopreload/alter_system.sh - docs/guard.md's recipe for the
# guard's settings, run as it is printed, on a cluster that has not
# preloaded pg_procmem (the nopreload suite's; the libpq environment names
# it): it works on every major, and what it says of ALTER SYSTEM without
# LOAD holds (fails on 14 to 16, works from 17). Puts the settings back.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
n=0 bad=0
is_ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; bad=1; fi; }
q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

major=$(q -At -c "SELECT current_setting('server_version_num')::int / 10000")
# the recipe: the sql block of docs/guard.md that LOADs the library, with a role of this test's
recipe=$(awk '/^```sql$/ {b = ""; inb = 1; next} inb && /^```$/ {if (b ~ /LOAD .pg_procmem./) {printf "%s", b; exit} inb = 0; next} inb {b = b $0 "\n"}' \
	"$REPO/docs/guard.md")
[ -n "$recipe" ] || { echo "Bail out! no sql block with LOAD 'pg_procmem' in docs/guard.md"; exit 1; }
q -c "DROP ROLE IF EXISTS reporting" -c "CREATE ROLE reporting" >/dev/null

# a session that loaded nothing: ALTER SYSTEM of a pg_procmem setting
out=$(q -c "ALTER SYSTEM SET pg_procmem.guard = 'dry_run'" 2>&1)
rc=$?
if [ "$major" -lt 17 ]; then
	[ $rc -ne 0 ] && grep -q 'unrecognized configuration parameter "pg_procmem.guard"' <<<"$out"
	is_ok $? "PostgreSQL $major: ALTER SYSTEM SET pg_procmem.guard without LOAD fails, as docs/guard.md says ($out)"
else
	[ $rc -eq 0 ]
	is_ok $? "PostgreSQL $major: ALTER SYSTEM SET pg_procmem.guard without LOAD works, as docs/guard.md says ($out)"
fi
q -c "ALTER SYSTEM RESET pg_procmem.guard" >/dev/null 2>&1

out=$(q <<<"$recipe" 2>&1 >/dev/null)
is_ok $? "docs/guard.md's recipe (LOAD, ALTER SYSTEM, reload, ALTER ROLE) runs as printed on PostgreSQL $major${out:+: $out}"
[ "$(q -At -c "SELECT count(*) FROM pg_file_settings WHERE name = 'pg_procmem.guard' AND setting = 'dry_run'")" = 1 ]
is_ok $? "... and postgresql.auto.conf holds pg_procmem.guard = dry_run"

q -c "ALTER SYSTEM RESET pg_procmem.guard" -c "SELECT pg_reload_conf()" -c "DROP ROLE reporting" >/dev/null
echo "1..$n"
exit $bad
