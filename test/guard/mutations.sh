#!/bin/bash
# test/guard/mutations.sh - the ways the guard was once found broken, each
# applied to a copy of the tree as a mutation: a test must fail for each
# (TAP, one line a mutation). A mutation that no longer applies (its code
# moved) fails too: update it with the code.
#
# Each mutation names the check that must catch it:
#   unit  test/unit/test_guard, built from the mutated copy (seconds)
#   live  the mutated copy built and installed, a cluster in a memory
#         cgroup, and test/guard/guard.py's quick part (GUARD_QUICK=1: the
#         per-backend limit and one hog; about a minute); the tree's own
#         build is installed again at the end
#
# Run by scripts/test (the mutations suite, PostgreSQL 15) as root; by hand:
#   PG_MAJOR=15 PGPORT=5897 bash test/guard/mutations.sh
# (MUTATION_CHECKS=unit: the unit ones alone)
set -uo pipefail
source "$(dirname "$0")/../../scripts/lib.sh"
set +e
set_pg_bin
TREE=$REPO
WORK=$(mktemp -d /var/tmp/pg_procmem_mutations.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# name | file | what is replaced | by what | check   (\n and \t in the texts)
MUTATIONS='settle wait removed|src/rules/guard_rules.c|if (fallen_of(f) * 2 >= frees)|if (1)|unit
1/8 rule removed|src/rules/guard_policy.c|if (!s->critical && largest / GUARD_SMALLER > d->worth)|if (0)|unit
autovacuum made a candidate|src/rules/guard_policy.c|return kind == GUARD_KIND_CLIENT \|\| kind == GUARD_KIND_PARALLEL;|return kind == GUARD_KIND_CLIENT \|\| kind == GUARD_KIND_PARALLEL \|\| kind == GUARD_KIND_AUTOVACUUM;|unit
a stale request relabels a later cancel|src/rules/guard_rules.c|return asked_at >= stmt_start && now - asked_at <= max_age;|return now - asked_at <= max_age;|unit
> for >= at the threshold (guard_over)|src/rules/guard_rules.c|if ((double) r->used[i] * 100.0 >= (double) threshold_pct|if ((double) r->used[i] * 100.0 > (double) threshold_pct|unit
> for >= at the threshold (guard_decide)|src/rules/guard_policy.c|if (s->limit <= 0 \|\| s->used < threshold)|if (s->limit <= 0 \|\| s->used <= threshold)|unit
the wrong pid signalled|src/guard/guard_worker.c|(kill(-a->pid, sig) != 0 && kill(a->pid, sig) != 0)|kill(MyProcPid, sig) != 0|live
the timer never re-armed|src/guard/guard_backend.c|\t\t\tover_checks = 0;\n\t}\n\tenable_timeout_after(check_timeout, armed_interval_ms);|\t\t\tover_checks = 0;\n\t}|live'

# copy: a fresh copy of the tree's files in $WORK/tree, with its objects
# (times kept: a live check rebuilds only what its mutation touched)
copy() {
	rm -rf "$WORK/tree" && mkdir -p "$WORK/tree"
	(cd "$TREE" && { git ls-files -co --exclude-standard 2>/dev/null ||
			find . -type f -not -path './.git/*' -not -path './.cache/*' -not -name '*.o' -not -name '*.bc'
		find src -name '*.o' -o -name '*.bc'
		ls pg_procmem.so .cache/built-for 2>/dev/null; } | tar -cf - -T -) | tar -xf - -C "$WORK/tree"
}

# mutate FILE OLD NEW: the one place OLD is, replaced (\| is a literal |)
mutate() {
	python3 - "$WORK/tree/$1" "$2" "$3" <<'EOF'
import sys
path, old, new = sys.argv[1:]
unescape = lambda t: t.replace("\\|", "|").replace("\\n", "\n").replace("\\t", "\t")
old, new = unescape(old), unescape(new)
text = open(path).read()
if text.count(old) != 1:
    sys.exit("%s: the text to mutate is there %d times, not once" % (path, text.count(old)))
open(path, "w").write(text.replace(old, new))
EOF
}

unit_check() {
	make -s -C "$WORK/tree" test/unit/test_guard PG_CONFIG="$PG_CONFIG" >"$WORK/out" 2>&1 || return 2
	"$WORK/tree/test/unit/test_guard" "$WORK/tree/test/fixtures" >"$WORK/out" 2>&1
}

live_check() {
	local cg rc=0
	(
		REPO=$WORK/tree
		build_install >/dev/null 2>&1 || exit 2
		cg=$(make_memory_cgroup pg_procmem_mutation) || exit 2
		cluster_init
		# shellcheck disable=SC2086
		( echo $BASHPID >"$cg/cgroup.procs"
		  cluster_run autovacuum=off shared_preload_libraries=pg_procmem max_connections=150 shared_buffers=256MB ) >/dev/null
		psql_q -c "CREATE EXTENSION pg_procmem"
		PG_BIN=$PG_BIN PG_LIBPATH=$PG_LIBPATH CLUSTER_DIR=$CLUSTER_DIR GUARD_CGROUP=$cg GUARD_QUICK=1 \
			timeout 600 python3 "$TREE/test/guard/guard.py" || rc=$?
		cluster_stop
		remove_cgroup "$cg"
		exit $rc
	) >"$WORK/out" 2>&1
}

n=$(grep -c . <<<"$MUTATIONS")
echo "1..$((n + 2))"
i=0 live=0 failed=0
# first the tree itself: each check passes on it (else a mutation's failing test proves nothing)
for check in unit live; do
	i=$((i + 1))
	if [ -n "${MUTATION_CHECKS:-}" ] && [[ ",$MUTATION_CHECKS," != *",$check,"* ]]; then
		echo "ok $i - the tree itself # SKIP not a $MUTATION_CHECKS check"
		continue
	fi
	copy
	rc=0
	if [ "$check" = unit ]; then unit_check || rc=$?; else live=1; live_check || rc=$?; fi
	if [ "$rc" -eq 0 ]; then
		echo "ok $i - the tree itself passes the $check check"
	else
		echo "not ok $i - the tree itself fails the $check check (exit $rc): no mutation can be judged by it"
		sed 's/^/# /' "$WORK/out" | tail -20
		failed=$((failed + 1))
	fi
done
while IFS=$'\x1f' read -r name file old new check; do
	i=$((i + 1))
	if [ -n "${MUTATION_CHECKS:-}" ] && [[ ",$MUTATION_CHECKS," != *",$check,"* ]]; then
		echo "ok $i - $name # SKIP not a $MUTATION_CHECKS check"
		continue
	fi
	copy
	if ! mutate "$file" "$old" "$new" 2>"$WORK/out"; then
		echo "not ok $i - $name: the mutation no longer applies ($(cat "$WORK/out"))"
		failed=$((failed + 1))
		continue
	fi
	rc=0
	if [ "$check" = unit ]; then unit_check || rc=$?; else live=1; live_check || rc=$?; fi
	if [ "$rc" -eq 1 ] || { [ "$check" = live ] && [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ]; }; then
		echo "ok $i - $name: $check tests fail ($(grep -m1 '^not ok' "$WORK/out" || echo "exit $rc"))"
	else
		echo "not ok $i - $name: no $check test failed (exit $rc)"
		sed 's/^/# /' "$WORK/out" | tail -20
		failed=$((failed + 1))
	fi
done < <(python3 -c '
import re, sys
for line in sys.stdin.read().splitlines():
    print("\x1f".join(re.split(r"(?<!\\)\|", line)))' <<<"$MUTATIONS")

# the tree's own build back in place of the last mutated one
if [ "$live" = 1 ]; then
	REPO=$TREE build_install >/dev/null 2>&1 || { echo "# could not install the tree's own build again"; failed=$((failed + 1)); }
fi
[ "$failed" -eq 0 ]
