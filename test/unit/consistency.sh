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
# README is read in five minutes: the reference lives in docs/
check "README has at most 300 lines ($(wc -l <README.md))" '[ "$(wc -l <README.md)" -le 300 ]'
# every object an install script creates is described in README or docs/
docs="README.md $(ls docs/*.md 2>/dev/null)"
for obj in $(grep -ohE '^CREATE (FUNCTION|VIEW) [a-z_]+' pg_procmem--*.sql | awk '{print $3}' | sort -u); do
	# shellcheck disable=SC2086
	check "README or docs/ documents $obj" 'grep -qE "\`$obj[\`( ]" $docs'
done
# a full install script creates everything afresh; upgrade scripts replace
# objects with DROP and CREATE (or CREATE OR REPLACE where that suffices)
full=$(ls pg_procmem--*.sql | grep -vE -- '--[0-9.]+--[0-9.]+\.sql$')
# shellcheck disable=SC2086
check "no CREATE OR REPLACE in full install scripts" '! grep -qi "create or replace" $full'
# a change never goes unannounced: the newest version is what upgrades lead to
check "an upgrade script leads to $v" '[ -n "$(ls pg_procmem--*--"$v".sql 2>/dev/null)" ]'
# a context slot's change counter is odd while it is written: an ERROR
# between write_begin() and write_end() must be a PANIC (a critical
# section), never a counter left odd with readers retrying forever
body() { awk "/^$1\\(/,/^}/" src/contexts.c; }
check "context slot writes begin a critical section" 'body write_begin | grep -q START_CRIT_SECTION'
check "context slot writes end it" 'body write_end | grep -q END_CRIT_SECTION'
check "every change-counter increment is in write_begin or write_end" \
	'[ "$(grep -c "fetch_add_u32(&slot->changecount" src/contexts.c)" = 2 ] && [ "$( (body write_begin; body write_end) | grep -c "fetch_add_u32(&slot->changecount")" = 2 ]'
# a released script is never edited: changes go into pg_procmem--A--B.sql
while read -r sum file; do
	check "released $file is unchanged" '[ "$(sha256sum "$file" | cut -d" " -f1)" = "$sum" ]'
done <test/released-scripts.sha256
# the tree keeps its maps: every test folder in test/README.md, every
# PostgreSQL-version difference in compat.h
for dir in $(find test -mindepth 1 -maxdepth 1 -type d | sort); do
	check "test/README.md names $dir" 'grep -q "\`$dir" test/README.md'
done
check "no version test outside src/compat.h" \
	'[ -z "$(grep -rlE "PG_VERSION_NUM|PG_MODULE_MAGIC_EXT" src test bench --include=*.c --include=*.h | grep -vx src/compat.h)" ]'
echo "1..$n"
exit $bad
