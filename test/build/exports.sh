#!/bin/bash
# test/build/exports.sh [LIBRARY] - the built library exports PostgreSQL's
# entry points and nothing else (TAP): the magic block, _PG_init, each
# SQL-callable function with its pg_finfo_ record (those the install and
# upgrade scripts name), and the background workers' main functions (those
# src/ registers by name). Anything more would be seen by every library a
# server process loads after ours (src/server/compat.h). LIBRARY defaults
# to the pg_procmem.so a make has built.
cd "$(dirname "$0")/../.."
lib=${1:-pg_procmem.so}
n=0 bad=0
check() {
	n=$((n + 1))
	if eval "$2"; then echo "ok $n - $1"; else echo "not ok $n - $1"; bad=1; fi
}
# says which names broke a check; none: true
none() {
	[ -z "$1" ] || echo "# $(echo $1)"
	[ -z "$1" ]
}

check "$lib is built" '[ -f "$lib" ]'
# the linker's own (_init, _fini, __bss_start, _edata, _end) are no entry points
exported=$(nm -D --defined-only "$lib" 2>/dev/null | awk 'NF == 3 {print $3}' |
	grep -vxE '_init|_fini|__bss_start__?|_edata|_end|__end__|_bss_end__' | sort -u)
check "nm reads its dynamic symbols" '[ -n "$exported" ]'

sql=$(grep -ohE "'MODULE_PATHNAME', *'[A-Za-z0-9_]+'" pg_procmem--*.sql | sed -E "s/.*'([A-Za-z0-9_]+)'\$/\1/" | sort -u)
workers=$(grep -rohE 'bgw_function_name, *"[A-Za-z0-9_]+"' src | sed -E 's/.*"([A-Za-z0-9_]+)"$/\1/' | sort -u)
check "the scripts name C functions, src/ registers workers" '[ -n "$sql" ] && [ -n "$workers" ]'

finfo=$(echo "$exported" | sed -n 's/^pg_finfo_//p')
functions=$(echo "$exported" | grep -vxE 'Pg_magic_func|_PG_init|pg_finfo_.*' | grep -vxF "$workers")
for sym in Pg_magic_func _PG_init $workers; do
	check "$sym is exported" 'echo "$exported" | grep -qxF "$sym"'
done
check "every pg_finfo_X exported has its X" 'none "$(comm -23 <(echo "$finfo") <(echo "$functions"))"'
check "every other function exported has its pg_finfo_ record" 'none "$(comm -13 <(echo "$finfo") <(echo "$functions"))"'
check "every C function the scripts name is exported" 'none "$(comm -23 <(echo "$sql") <(echo "$functions"))"'
check "nothing else is exported" 'none "$(comm -13 <(echo "$sql") <(echo "$functions"))"'
echo "# $(echo "$exported" | wc -l) symbols exported"
echo "1..$n"
exit $bad
