#!/bin/bash
# test/hidepid/run.sh - run by scripts/test inside a private mount namespace
# (unshare -m): mounts a new /proc with hidepid=invisible there (a new
# mount, never a remount: since Linux 5.8 the options belong to the mount's
# own superblock, so the host's /proc is untouched), starts a throwaway
# cluster that sees only that /proc, and runs test/hidepid/*.sql.
# Exits 77 where the mount is not allowed.
source "$(dirname "$0")/../../scripts/lib.sh"
set +e
if ! mount -t proc -o hidepid=invisible proc /proc 2>/dev/null; then
	planned=$(grep -ho 'plan([0-9]*)' "$REPO"/test/hidepid/*.sql | tr -dc '0-9\n' | awk '{s += $1} END {print s + 0}')
	echo "SKIPPED $planned tests: mounting /proc with hidepid=invisible is not allowed here"
	exit 77
fi
grep -q 'hidepid=invisible\|hidepid=2' /proc/self/mountinfo || { echo "Bail out! /proc is not hidepid"; exit 1; }
cluster_start autovacuum=off shared_preload_libraries=pg_procmem
pg_prove -v "$REPO"/test/hidepid/*.sql
rc=$?
[ $rc -eq 0 ] || server_log_tail
cluster_stop
exit $rc
