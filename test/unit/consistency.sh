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
# the majors supported, 14 to the newest scripts/test fetches, said alike
newest=$(sed -n 's/^PG_NEWEST=\([0-9]*\)$/\1/p' scripts/lib.sh)
check "scripts/lib.sh names the newest major ($newest)" '[ -n "$newest" ]'
check "README says PostgreSQL 14 to $newest" 'grep -q "^PostgreSQL 14 to $newest, on Linux.$" README.md'
check "META.json says PostgreSQL 14 to $newest" 'grep -q "\"description\": \"For PostgreSQL 14 to $newest, on Linux." META.json'
check "docs/install.md has a row for each of 14 to $newest" \
	'[ "$(grep -oE "^\| 1[4-9] \||^\| [2-9][0-9] \|" docs/install.md | tr -dc "0-9\n" | tr "\n" " ")" = "$(seq -s " " 14 "$newest") " ]'
check "docs/limitations.md says PostgreSQL 14 to $newest" 'grep -q "PostgreSQL 14 to $newest;" docs/limitations.md'
check ".ci/run runs 14 to $newest" '[ "$(grep -oE "^runs=\([0-9a-z -]+\)" .ci/run | tr -c "0-9" "\n" | grep -E "^[0-9]+$" | sort -nu | tr "\n" " ")" = "$(seq -s " " 14 "$newest") " ]'
check ".ci/run's lanes run every major, each in one lane" '[ "$(grep -oE "^\s+lane \"[^\"]+\" [0-9a-z -]+&" .ci/run | sed "s/-first//g" | tr -c "0-9\n" " " | tr " " "\n" | grep -E "^[0-9]+$" | sort -n | uniq | tr "\n" " ")" = "$(seq -s " " 14 "$newest") " ] && [ "$(grep -oE "^\s+lane \"[^\"]+\" [0-9a-z -]+&" .ci/run | sed "s/15-first//g" | tr -c "0-9" "\n" | grep -E "^[0-9]+$" | sort -n | uniq -d)" = "" ]'
# README is read in five minutes: the reference lives in docs/
check "README has at most 300 lines ($(wc -l <README.md))" '[ "$(wc -l <README.md)" -le 300 ]'
# every object an install script creates is described in README or docs/
docs="README.md $(ls docs/*.md 2>/dev/null)"
for obj in $(grep -ohE '^CREATE (FUNCTION|VIEW) [a-z_]+' pg_procmem--*.sql | awk '{print $3}' | sort -u); do
	# shellcheck disable=SC2086
	check "README or docs/ documents $obj" 'grep -qE "\`$obj[\`( ]" $docs'
done
# every column of every view has a comment (views/comments.sql), and
# docs/views.md lists exactly those columns, in a table whose header begins
# "| column |" under a heading that names the view
columns=$(python3 - "pg_procmem--$v.sql" <<'EOF'
import re, sys
script = open(sys.argv[1]).read()
views = re.findall(r'^CREATE VIEW (\w+)', script, re.M)
commented = {}
for view, col in re.findall(r'^COMMENT ON COLUMN @extschema@\.(\w+)\.(\w+) IS', open('views/comments.sql').read(), re.M):
    commented.setdefault(view, []).append(col)
documented, view, in_table, stray = {}, None, False, []
for line in open('docs/views.md'):
    if line.startswith('#'):
        named = [w for w in re.findall(r'`(\w+)`', line) if w in views]
        if len(named) == 1:
            view = named[0]
    if re.match(r'\| *column *\|', line):
        in_table = True
        if view is None:
            stray.append(line.strip())
        continue
    if in_table and line.startswith('|'):
        if not line.startswith('|-') and view is not None:
            documented.setdefault(view, []).extend(re.findall(r'`(\w+)`', line.split('|')[1]))
        continue
    in_table = False
def say(good, text):
    print('ok' if good else 'not', text)
say(len(views) >= 20, f'{sys.argv[1]} creates {len(views)} views')
say(not stray, 'every column table of docs/views.md is under a view\'s heading')
for v in views:
    c, d = commented.get(v, []), documented.get(v, [])
    say(c and len(c) == len(set(c)), f'views/comments.sql comments on the columns of {v}, each once')
    say(d and len(d) == len(set(d)), f'docs/views.md lists the columns of {v}, each once')
    say(set(c) == set(d), f'{v}: the same columns commented and documented'
        + (f' (comment only: {sorted(set(c) - set(d))}; docs only: {sorted(set(d) - set(c))})' if set(c) != set(d) else ''))
extra = sorted(set(commented) - set(views))
say(not extra, 'views/comments.sql names only views the install script creates' + (f': {extra}' if extra else ''))
EOF
)
parsed=$?
check "the views' columns were compared" '[ $parsed = 0 ] && [ -n "$columns" ]'
while read -r line; do
	check "${line#* }" "[ ${line%% *} = ok ]"
done <<<"$columns"
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
body() { awk "/^$1\\(/,/^}/" src/server/contexts.c; }
check "context slot writes begin a critical section" 'body write_begin | grep -q START_CRIT_SECTION'
check "context slot writes end it" 'body write_end | grep -q END_CRIT_SECTION'
check "every change-counter increment is in write_begin or write_end" \
	'[ "$(grep -c "fetch_add_u32(&slot->changecount" src/server/contexts.c)" = 2 ] && [ "$( (body write_begin; body write_end) | grep -c "fetch_add_u32(&slot->changecount")" = 2 ]'
# a released script is never edited: changes go into pg_procmem--A--B.sql
while read -r sum file; do
	check "released $file is unchanged" '[ "$(sha256sum "$file" | cut -d" " -f1)" = "$sum" ]'
done <test/released-scripts.sha256
# tools.py keeps the released postgres_exporter names from a copy; where
# the tag is there, the copy is what was released
for dir in test/fixtures/released-v*/postgres_exporter; do
	tag=${dir#test/fixtures/released-}; tag=${tag%%/*}
	git rev-parse -q --verify "refs/tags/$tag" >/dev/null 2>&1 || continue
	for f in "$dir"/*; do
		check "$f is $tag's" 'git show "$tag:monitoring/postgres_exporter/${f##*/}" | cmp -s - "$f"'
	done
done
# the tree keeps its maps: every test folder in test/README.md, every
# PostgreSQL-version difference in compat.h
for dir in $(find test -mindepth 1 -maxdepth 1 -type d | sort); do
	check "test/README.md names $dir" 'grep -q "\`$dir" test/README.md'
done
check "no version test outside src/server/compat.h" \
	'[ -z "$(grep -rlE "PG_VERSION_NUM|PG_MODULE_MAGIC_EXT" src test bench --include=*.c --include=*.h | grep -vx src/server/compat.h)" ]'
# history lives in CHANGELOG.md: no reference page narrates a version (a
# line may opt out with <!-- version-history-ok -->); pages read as one line,
# since a sentence wraps
NARR='[0-9]+\.[0-9]+\.[0-9]+(.s)? (used|said|added|adds|also|shortened|had|was|were|did|took|printed|answered|shipped|made|estimate|development|fixed|changed)\b|\b[Ii]n [0-9]+\.[0-9]+\.[0-9]+\b|\b[Bb]efore [0-9]+\.[0-9]+\.[0-9]+\b'
narrated() {
	for f in README.md docs/*.md; do
		grep -v -- '<!-- version-history-ok -->' "$f" | tr '\n' ' ' | grep -oE "$NARR" | sed "s|^|$f: |"
	done
}
check "no reference page narrates a version ($(narrated | head -3 | tr '\n' ';'))" '[ -z "$(narrated)" ]'
readme_install=$(sed -n '/^## Install on your own server/,/^## /p' README.md)
check "README's install section says what make install does to an installed .deb" \
	'echo "$readme_install" | grep -q "make install" && echo "$readme_install" | grep -q "postgresql-15-pg-procmem" && echo "$readme_install" | grep -qi "remove the package"'
# a newcomer's run: where the trees and the cache go, and the ports tests take
ports=$(sed -n 's/^\t\tport=\$((\([0-9]*\) + RANDOM % \([0-9]*\)))$/\1 \2/p' scripts/lib.sh)
check "README names PG_TREES and the TCP ports free_port draws from (${ports:-none found})" \
	'[ -n "$ports" ] && grep -q "PG_TREES" README.md && grep -q "${ports% *}-$(( ${ports% *} + ${ports#* } - 1 ))" README.md'
# what a new user missed: why the guard acted, and which statement a row is
check "README's guard question shows the action's reason" \
	'sed -n "/^## One query per question/,/^## /p" README.md | grep -E "FROM pg_procmem_guard_actions" | grep -qE "[ ,]reason,"'
check "README's query-memory question shows query_id (statements alike in their first characters are told apart)" \
	'sed -n "/^## One query per question/,/^## /p" README.md | grep -E "FROM pg_procmem_query_memory" | grep -qE "[ ,]query_id,"'
check "README's question table has the 'right now' question" \
	'sed -n "/^## One query per question/,/^## /p" README.md | grep -qE "^\| who holds the most memory right now[,?].* \| \`SELECT .* ORDER BY overhead DESC"'
# released or not, said the same way everywhere: pinned scripts (RELEASING.md
# step 2) go with a dated CHANGELOG entry, META's stable and README's plain
# "version X"; until then "unreleased" in all three
vre=$(echo "$v" | sed 's/\./\\./g')
status=$(python3 -c 'import json; print(json.load(open("META.json")).get("release_status", "stable"))')
if grep -q " pg_procmem--$v.sql\$" test/released-scripts.sha256; then
	check "$v is pinned: CHANGELOG.md dates it" 'grep -qE "^## $vre - [0-9]{4}-[0-9]{2}-[0-9]{2}\$" CHANGELOG.md'
	check "$v is pinned: META.json says stable ($status)" '[ "$status" = stable ]'
	check "$v is pinned: README's status line says so" 'grep -qE "^Status: version $vre\.( |\$)" README.md'
	check "$v is pinned: its debian/changelog entry is released" '! head -1 debian/changelog | grep -q UNRELEASED'
else
	check "$v is not pinned: CHANGELOG.md says unreleased" 'grep -qx "## $vre - unreleased" CHANGELOG.md'
	check "$v is not pinned: META.json is not stable ($status)" '[ "$status" != stable ]'
	check "$v is not pinned: README's status line says unreleased" 'grep -qE "^Status: version $vre \(unreleased" README.md'
fi
# every released version before the newest: a dated CHANGELOG.md entry
# that names its release commit (which the release commit itself cannot:
# the next version's opening adds it, RELEASING.md step 7), which is its
# tag's when the tag is here
for r in $(sed -n 's/.* pg_procmem--\([0-9.]*\)\.sql$/\1/p' test/released-scripts.sha256 | grep -vx "$v"); do
	entry=$(awk -v h="## $r - " 'index($0, h) == 1 {on = 1; print; next} /^## / {on = 0} on' CHANGELOG.md)
	commit=$(echo "$entry" | sed -n 's/^Released from commit \([0-9a-f]\{7,40\}\).*/\1/p')
	check "CHANGELOG.md dates $r and names its release commit ($commit)" \
		'echo "$entry" | head -1 | grep -qE "^## .* - [0-9]{4}-[0-9]{2}-[0-9]{2}\$" && [ -n "$commit" ]'
	if git rev-parse -q --verify "refs/tags/v$r" >/dev/null 2>&1; then
		check "tag v$r is on the release commit CHANGELOG.md names" \
			'[ "$(git rev-parse "v$r^{commit}")" = "$(git rev-parse "$commit^{commit}" 2>/dev/null)" ]'
	fi
done
check "debian/changelog's top entry is for $v" 'head -1 debian/changelog | grep -q "($vre-[0-9]*)"'
echo "1..$n"
exit $bad
