# scripts/lib.sh - shared by scripts/demo and scripts/test (sourced, bash).
#
# Installs what is missing (Debian 12, as root), builds and installs the
# extension, and runs a throwaway cluster as the postgres user in a temp
# directory, on a Unix socket only. Nothing outside that directory changes
# but the installed packages and the installed extension files.

set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

PG_MAJOR=${PG_MAJOR:-15}
PG_BIN=/usr/lib/postgresql/$PG_MAJOR/bin
export PG_CONFIG=$PG_BIN/pg_config
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

log() { printf '\n== %s\n' "$*" >&2; }

need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "run this as root (it installs packages and starts PostgreSQL as user postgres)" >&2
		exit 1
	fi
}

# apt-get install only what is not there yet.
ensure_packages() {
	local missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing ${missing[*]}"
	apt-get update -q
	apt-get install -y -q -o DPkg::Lock::Timeout=600 "${missing[@]}"
}

ensure_base_packages() {
	ensure_packages make gcc "postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR"
}

build_install() {
	log "building and installing pg_procmem for PostgreSQL $PG_MAJOR"
	make -C "$REPO" -s with_llvm=no
	make -C "$REPO" -s with_llvm=no install
}

# cluster_start [postgres -c settings...]: initdb + start; exports PGHOST,
# PGPORT, PGUSER, PGDATABASE for psql and pg_regress. Stopped on exit.
cluster_start() {
	CLUSTER_DIR=$(mktemp -d /tmp/pg_procmem.XXXXXX)
	chown postgres: "$CLUSTER_DIR"
	chmod 755 "$CLUSTER_DIR"
	export PGHOST=$CLUSTER_DIR PGPORT=${PGPORT:-5499} PGUSER=postgres PGDATABASE=postgres
	trap cluster_stop EXIT
	log "starting a throwaway cluster in $CLUSTER_DIR (port $PGPORT, socket only)"
	runuser -u postgres -- "$PG_BIN/initdb" -D "$CLUSTER_DIR/data" -U postgres \
		--auth=trust --no-sync -E UTF8 --locale=C >"$CLUSTER_DIR/initdb.log"
	local opts="-p $PGPORT -k $CLUSTER_DIR -c listen_addresses='' -c jit=off"
	for o in "$@"; do opts+=" -c $o"; done
	runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$CLUSTER_DIR/data" -l "$CLUSTER_DIR/server.log" \
		-w -t 60 start -o "$opts" >/dev/null
}

# The end of the server's log (with logging_collector, the files in log/).
server_log_tail() {
	echo "--- last lines of the server log" >&2
	tail -n 30 "$CLUSTER_DIR/server.log" "$CLUSTER_DIR"/data/log/* >&2 2>/dev/null || true
}

cluster_stop() {
	local rc=$?
	[ -n "${CLUSTER_DIR:-}" ] || return $rc
	jobs -p | xargs -r kill 2>/dev/null || true
	if [ -f "$CLUSTER_DIR/data/postmaster.pid" ]; then
		runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$CLUSTER_DIR/data" -m fast -w stop >/dev/null 2>&1 ||
			runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$CLUSTER_DIR/data" -m immediate stop >/dev/null 2>&1 || true
	fi
	[ $rc -eq 0 ] || server_log_tail
	rm -rf "$CLUSTER_DIR"
	CLUSTER_DIR=
	return $rc
}

psql_q() { "$PG_BIN/psql" -X -v ON_ERROR_STOP=1 -q "$@"; }
