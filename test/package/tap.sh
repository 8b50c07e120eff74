# shellcheck shell=bash
# test/package/tap.sh - the TAP helpers of the package tests (sourced).
n=0 failures=0
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}
# not_ok NAME [DIAGNOSTICS]
not_ok() {
	n=$((n + 1)) failures=$((failures + 1))
	echo "not ok $n - $1"
	[ $# -lt 2 ] || printf '%s\n' "$2" | sed 's/^/#   /'
}
# check NAME CMD...: passes when CMD succeeds
check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}
# is GOT WANT NAME
is() {
	if [ "$1" = "$2" ]; then ok "$3"; else not_ok "$3" "got '$1', expected '$2'"; fi
}
bail() {
	echo "Bail out! $*"
	exit 1
}
# the plan, and the exit status: 1 if any test failed
tap_done() {
	echo "1..$n"
	[ "$failures" -eq 0 ] || echo "# $failures of $n failed" >&2
	exit $((failures > 0))
}
