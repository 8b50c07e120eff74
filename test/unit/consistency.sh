#!/bin/bash
# The version and object lists agree across the control file, META.json,
# the install scripts and README (TAP).
cd "$(dirname "$0")/../.."
n=0 bad=0
check() {
	n=$((n + 1))
	if eval "$2"; then echo "ok $n - $1"; else echo "not ok $n - $1"; bad=1; fi
}
v=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" pg_procmem.control)
meta=$(python3 -c 'import json; m = json.load(open("META.json")); print(m["version"], m["provides"]["pg_procmem"]["version"], m["provides"]["pg_procmem"]["file"])')
check "control file has a default_version ($v)" '[ -n "$v" ]'
check "META.json version is $v" '[ "$(echo $meta | cut -d" " -f1)" = "$v" ]'
check "META.json provides version is $v" '[ "$(echo $meta | cut -d" " -f2)" = "$v" ]'
check "META.json names the install script of $v" '[ "$(echo $meta | cut -d" " -f3)" = "pg_procmem--$v.sql" ]'
check "META.json names an install script that exists" '[ -f "$(echo $meta | cut -d" " -f3)" ]'
check "the install script for $v exists" '[ -f "pg_procmem--$v.sql" ]'
check "README names version $v" 'grep -q "version $v" README.md'
# every object the install script creates is described in README
for obj in $(grep -oE '^CREATE (FUNCTION|VIEW) [a-z_]+' pg_procmem--*.sql | awk '{print $3}' | sort -u); do
	check "README documents $obj" 'grep -qE "\`$obj[\`( ]" README.md'
done
check "no CREATE OR REPLACE in install scripts" '! grep -qi "create or replace" pg_procmem--*.sql'
# a released script is never edited: changes go into pg_procmem--A--B.sql
while read -r sum file; do
	check "released $file is unchanged" '[ "$(sha256sum "$file" | cut -d" " -f1)" = "$sum" ]'
done <test/released-scripts.sha256
echo "1..$n"
exit $bad
