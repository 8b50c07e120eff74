#!/bin/bash
# test/fuzz/run.sh [SECONDS] - builds the libFuzzer targets (clang-14, with
# AddressSanitizer + UndefinedBehaviorSanitizer) and runs each for SECONDS
# (default 20; a release gets a longer run, e.g. 3600), seeded with the
# fixtures. TAP: one test per target. A crash leaves its input in
# test/fuzz/crashes/: add it to test/fixtures/handmade and to a unit test.
# FUZZ_JOBS targets (default: one a core) run at once, each for SECONDS.
set -uo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-${FUZZ_SECONDS:-20}}
jobs=${FUZZ_JOBS:-$(nproc)}
work=$(mktemp -d)
mkdir -p test/fuzz/crashes
targets="fuzz_lines fuzz_fields fuzz_cgroup fuzz_history fuzz_pressure"

# fuzz_one N TARGET: builds and runs one target, its TAP line in $work/N.tap;
# exit status 1 if it did not build or crashed
fuzz_one() {
	local n=$1 t=$2
	exec >"$work/$n.tap"
	clang-14 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-D_GNU_SOURCE -iquote src -o "$work/$t" "test/fuzz/$t.c" src/linux/*.c src/rules/*.c 2>"$work/$t.build" ||
		{ echo "not ok $n - $t builds"; sed 's/^/# /' "$work/$t.build"; return 1; }
	mkdir -p "$work/corpus-$t" "$work/seeds-$t"
	case $t in
	fuzz_cgroup)
		for c in test/fixtures/cgroup/cgroup-*; do
			for m in test/fixtures/cgroup/mountinfo-*; do
				{ cat "$c"; printf '\0'; cat "$m"; } >"$work/seeds-$t/$(basename "$c")-$(basename "$m")"
			done
		done ;;
	*)
		find test/fixtures -maxdepth 2 -type f -size -64k -exec cp {} "$work/seeds-$t/" \; 2>/dev/null
		for f in "$work/seeds-$t"/*; do mv "$f" "$f.$(basename "$(dirname "$f")")" 2>/dev/null; done ;;
	esac
	"$work/$t" -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix=test/fuzz/crashes/"$t"- "$work/corpus-$t" "$work/seeds-$t" >"$work/$t.log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log")
	if [ $rc -eq 0 ]; then
		echo "ok $n - $t: ${runs:-?} inputs in ${secs}s, no crash"
	else
		echo "not ok $n - $t crashed (input kept in test/fuzz/crashes)"
		tail -n 25 "$work/$t.log" | sed 's/^/# /'
		return 1
	fi
}

n=0 bad=0 pids=()
echo "1..$(echo $targets | wc -w)"
for t in $targets; do
	n=$((n + 1))
	# at most $jobs at once: wait for the oldest
	if [ ${#pids[@]} -ge "$jobs" ]; then
		wait "${pids[0]}" || bad=1
		pids=("${pids[@]:1}")
	fi
	fuzz_one "$n" "$t" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || bad=1; done
for i in $(seq 1 $n); do cat "$work/$i.tap"; done
rm -rf "$work"
exit $bad
