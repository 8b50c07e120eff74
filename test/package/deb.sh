#!/bin/bash
# test/package/deb.sh - the Debian package (packaging/deb.sh, debian/), as a
# DBA installs it (TAP; as root, from anywhere):
#
#   bash test/package/deb.sh                  builds the package in a temp dir
#   DEB=dist/postgresql-15-pg-procmem_1.2.0-1_amd64.deb bash test/package/deb.sh
#                                             checks that package instead
#
# - lintian reports no error on the .deb (and can: a copy without its
#   copyright file must fail);
# - its control fields: name, version (the control file's, revision -1),
#   architecture, source, Depends on postgresql-15;
# - what it holds: pg_procmem.so and its bitcode (one .bc per object of the
#   Makefile, and the index) under /usr/lib/postgresql/15/lib/, the control
#   file and exactly the committed SQL scripts under
#   /usr/share/postgresql/15/extension/, the docs under
#   /usr/share/doc/postgresql-15-pg-procmem/, and nothing else;
# - installed with dpkg -i on this machine's PostgreSQL 15, after the
#   pg_procmem files of an earlier make install are moved aside (so only the
#   package can provide the extension): the files on disk are the package's,
#   a throwaway cluster as user postgres runs CREATE EXTENSION and reads
#   pg_procmem_backends, pg_procmem_top and pg_procmem_advice, and
#   debian/tests/installcheck (the autopkgtest: make installcheck through
#   pg_buildext, on a cluster pg_virtualenv makes) passes against it;
# - dpkg -r removes every file the package listed, dpkg then says it is not
#   installed, and the running cluster no longer lists pg_procmem in
#   pg_available_extensions;
# - and the files moved aside are put back as they were (byte for byte),
#   or, if there were none, make with_llvm=no install from this checkout
#   installs it: other suites, and other people on this machine, rely on an
#   installed pg_procmem. A trap does it on any exit, failure included.
#
# The machine is shared: the files are missing only between moving them
# aside and dpkg -i, and between dpkg -r and putting them back (a second or
# two, once dpkg's lock is free); a lock file serializes runs of this test.
# It refuses to run when postgresql-15-pg-procmem is already installed
# (someone else's). Everything else lives in one temp dir under /tmp; the
# cluster listens on a Unix socket in its own dir only, pg_virtualenv's on
# a random free port.
# shellcheck disable=SC2016,SC2317 # check's eval strings expand when they
# run; functions called through check and trap are reached
set -euo pipefail
# One run at a time on this machine: the whole run holds the lock through
# flock(1), whose -o keeps it out of the run's children (a postmaster left
# by a run killed with -9 must not hold it for ever).
LOCK=/run/lock/pg_procmem-deb-test.lock
if [ -z "${PROCMEM_DEB_LOCKED:-}" ]; then
	PROCMEM_DEB_LOCKED=1 exec flock -o -w 1800 "$LOCK" bash "$0" "$@"
fi
PG_MAJOR=15
# what a run moved aside, kept where the next run finds it if this one is
# killed before it puts it back (a trap cannot catch SIGKILL)
STATE=/var/lib/pg_procmem-deb-test
WORK=$(mktemp -d /tmp/pg_procmem-debtest.XXXXXX)
chmod 755 "$WORK"
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/../../scripts/lib.sh"
need_root
cd "$REPO"
unset GIT_DIR GIT_WORK_TREE

# shellcheck source=test/package/tap.sh
source "$(dirname "$0")/tap.sh"

ensure_packages dpkg-dev lintian git make gcc postgresql-15 postgresql-server-dev-15 postgresql-server-dev-all iproute2
VERSION=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" pg_procmem.control)
PKG=postgresql-$PG_MAJOR-pg-procmem
ARCH=$(dpkg --print-architecture)
PKGLIB=$("$PG_CONFIG" --pkglibdir)
EXTDIR=$("$PG_CONFIG" --sharedir)/extension


# --- the installed state this test changes, and gives back
# the pg_procmem files an earlier make install left (the package's paths and
# any other pg_procmem* file: an older script, bitcode)
installed_files() {
	{
		find "$PKGLIB" -maxdepth 1 -name 'pg_procmem*' ! -type d
		[ ! -d "$PKGLIB/bitcode" ] || find "$PKGLIB/bitcode" -maxdepth 1 -name 'pg_procmem*' ! -type d
		[ ! -d "$PKGLIB/bitcode/pg_procmem" ] || find "$PKGLIB/bitcode/pg_procmem" ! -type d
		find "$EXTDIR" -maxdepth 1 -name 'pg_procmem*' ! -type d
	} | sort
}
SAVED=$STATE/saved
# TOUCHED: files were moved aside (restore must run); RESTORED: it ran
TOUCHED=no INSTALLED_BY_US=no RESTORED=no RESTORE_OK=no
# dpkg ACTION...: dpkg, waiting up to 10 minutes for its lock (others may run
# apt-get meanwhile) rather than failing at once
dpkg_locked() {
	lslocks -n -o PATH 2>/dev/null | grep -E '^/var/lib/dpkg/lock(-frontend)?$' >/dev/null
}
dpkg_wait() {
	for _ in $(seq 600); do
		dpkg_locked || return 0
		sleep 1
	done
	return 1
}
dpkg_retry() {
	local out
	for _ in $(seq 10); do
		dpkg_wait || true
		if out=$(dpkg "$@" 2>&1); then return 0; fi
		case $out in
		*"frontend lock"* | *"database is locked"* | *"/var/lib/dpkg/lock"*) sleep 2 ;;
		*)
			printf '%s\n' "$out" >&2
			return 1
			;;
		esac
	done
	printf '%s\n' "$out" >&2
	return 1
}
# restore: the package off (if this run installed it), then what make install
# had, byte for byte, each file written beside its place and renamed over it
# (a server loading the library meanwhile never sees half a file); with
# nothing saved, make install from this checkout. Prints what it did.
restore() {
	local f rc=0
	[ "$RESTORED" = no ] || return 0
	RESTORED=yes
	# installed, or half-installed by a dpkg -i that failed: off again
	if [ "$INSTALLED_BY_US" = yes ] && ! dpkg-query -W -f='${db:Status-Status}' "$PKG" 2>/dev/null |
		grep -xE 'not-installed|config-files' >/dev/null && dpkg-query -W "$PKG" >/dev/null 2>&1; then
		echo "# removing $PKG (installed by this run)"
		dpkg_retry -r "$PKG" >/dev/null || rc=1
	fi
	if [ -s "$SAVED.list" ]; then
		echo "# putting back the $(wc -l <"$SAVED.list") pg_procmem files moved aside"
		while read -r f; do
			mkdir -p "$(dirname "$f")" &&
				cp -a "$SAVED$f" "$f.restore.$$" && mv -f "$f.restore.$$" "$f" || rc=1
		done <"$SAVED.list"
	else
		echo "# no pg_procmem was installed before: make with_llvm=no install from $REPO"
		{ make -C "$REPO" -s with_llvm=no PG_CONFIG="$PG_CONFIG" &&
			make -C "$REPO" -s with_llvm=no PG_CONFIG="$PG_CONFIG" install; } >"$WORK/make-install.log" 2>&1 || {
			cat "$WORK/make-install.log" >&2
			rc=1
		}
	fi
	return $rc
}
cleanup() {
	local rc=$?
	cluster_stop "$rc" || true
	if [ "$TOUCHED" = yes ] && [ "$RESTORED" = no ]; then
		if restore; then RESTORE_OK=yes; else
			echo "Bail out! could not restore the installed pg_procmem: see above" >&2
			rc=1
		fi
		[ -f "$PKGLIB/pg_procmem.so" ] || { echo "# WARNING: $PKGLIB/pg_procmem.so is missing after the restore" >&2; rc=1; }
	fi
	# what was moved aside is kept until it is back (the next run puts it
	# back if this one could not)
	[ "$RESTORE_OK" = no ] || rm -rf "$STATE"
	rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# --- the package
if [ -n "${DEB:-}" ]; then
	DEBFILE=$(realpath "$DEB")
else
	DIST=$WORK/dist
	mkdir -p "$DIST"
	# as scripts/package does, into the temp dir
	# shellcheck source=packaging/deb.sh
	(source packaging/deb.sh) || bail "packaging/deb.sh failed"
	DEBFILE=$DIST/${PKG}_$VERSION-1_$ARCH.deb
fi
[ -f "$DEBFILE" ] || bail "no package at $DEBFILE"
is "$(basename "$DEBFILE")" "${PKG}_$VERSION-1_$ARCH.deb" "the package is named ${PKG}_$VERSION-1_$ARCH.deb"

# lintian as user nobody, on a copy it can read
mkdir "$WORK/lint"
cp "$DEBFILE" "$WORK/lint/"
chmod -R a+rX "$WORK/lint"
if out=$(runuser -u nobody -- lintian --fail-on error --display-info "$WORK/lint/$(basename "$DEBFILE")" 2>&1); then
	ok "lintian $(dpkg-query -W -f='${Version}' lintian) reports no error on the package"
	[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/# lintian: /'
else
	not_ok "lintian reports no error on the package" "$out"
fi
# lintian can say no: the same package without its copyright file
dpkg-deb -R "$DEBFILE" "$WORK/broken"
rm "$WORK/broken/usr/share/doc/$PKG/copyright"
sed -i "\| usr/share/doc/$PKG/copyright\$|d" "$WORK/broken/DEBIAN/md5sums"
dpkg-deb -b "$WORK/broken" "$WORK/lint/broken.deb" >/dev/null
chmod a+r "$WORK/lint/broken.deb"
out=$(runuser -u nobody -- lintian --fail-on error "$WORK/lint/broken.deb" 2>&1) && rc=0 || rc=$?
check "lintian fails a copy without the copyright file (E: no-copyright-file)" \
	eval '[ "$rc" -ne 0 ] && grep -q "^E: .*no-copyright-file" <<<"$out"'

# --- its control fields
field() { dpkg-deb -f "$DEBFILE" "$1"; }
is "$(field Package)" "$PKG" "Package: $PKG"
is "$(field Version)" "$VERSION-1" "Version: $VERSION-1 (the control file's default_version)"
is "$(field Architecture)" "$ARCH" "Architecture: $ARCH"
is "$(field Source)" pg-procmem "Source: pg-procmem"
is "$(field Section)" database "Section: database"
check "Depends on postgresql-$PG_MAJOR ($(field Depends))" \
	eval 'field Depends | tr "," "\n" | grep -E "^ *postgresql-$PG_MAJOR( \(|$)" >/dev/null'
check "Depends on nothing built for another major" \
	eval '! field Depends | tr "," "\n" | grep -E "postgresql-[0-9]+" | grep -vE "postgresql-$PG_MAJOR( |-jit-llvm|$)" >/dev/null'
check "Maintainer is set ($(field Maintainer))" eval 'field Maintainer | grep -E "^[^<]+ <[^@ ]+@[^> ]+>$" >/dev/null'

# --- what it holds
dpkg-deb -c "$DEBFILE" | awk '{print $NF}' | sed 's|^\./|/|' >"$WORK/entries"
grep -v '/$' "$WORK/entries" | sort >"$WORK/files"
has() { grep -qxF "$1" "$WORK/files"; }
LIB=/usr/lib/postgresql/$PG_MAJOR/lib
EXT=/usr/share/postgresql/$PG_MAJOR/extension
DOC=/usr/share/doc/$PKG
check "it holds $LIB/pg_procmem.so" has "$LIB/pg_procmem.so"
check "it holds $EXT/pg_procmem.control" has "$EXT/pg_procmem.control"
for f in $(git ls-files 'pg_procmem--*.sql'); do
	check "it holds $EXT/$f" has "$EXT/$f"
done
is "$(grep "^$EXT/" "$WORK/files" | tr '\n' ' ')" \
	"$( (echo pg_procmem.control && git ls-files 'pg_procmem--*.sql') | sed "s|^|$EXT/|" | sort | tr '\n' ' ')" \
	"its extension folder holds exactly the control file and the committed SQL scripts"
# the JIT's bitcode: one .bc per object the Makefile builds, and the index
# (OBJS as make expands it: the Makefile lists src/'s folders by wildcard)
read -ra objs <<<"$(make -s --no-print-directory -f Makefile -f <(echo 'print-objs: ; @echo $(OBJS)') print-objs)"
is "$(grep "^$LIB/bitcode/" "$WORK/files" | tr '\n' ' ')" \
	"$( (printf '%s\n' "${objs[@]/%.o/.bc}" | sed "s|^|$LIB/bitcode/pg_procmem/|" && echo "$LIB/bitcode/pg_procmem.index.bc") | sort | tr '\n' ' ')" \
	"its bitcode is one .bc per object of the Makefile (${#objs[@]}) and pg_procmem.index.bc"
for f in copyright changelog.Debian.gz changelog.gz README.md.gz docs/install.md.gz docs/views.md.gz examples/grafana/pg_procmem.json \
	examples/postgres_exporter/pg_procmem.yaml; do
	check "it holds $DOC/$f" has "$DOC/$f"
done
unexpected=$(grep -vxE "$LIB/pg_procmem\.so|$LIB/bitcode/pg_procmem(\.index\.bc|/src/([a-z]+/)?[a-z_]+\.bc)|$EXT/pg_procmem(\.control|--[0-9.]+(--[0-9.]+)?\.sql)|$DOC/.+" "$WORK/files" || true)
check "it holds nothing else (no file outside those three places)" test -z "$unexpected"
[ -z "$unexpected" ] || printf '%s\n' "$unexpected" | sed 's/^/#   unexpected: /'
dpkg-deb -x "$DEBFILE" "$WORK/x"
# the copyright file says what LICENSE says: the same holder, the same
# licence text (words compared, DEP-5's indentation and " ." lines aside)
words() { tr -s '[:space:]' '\n' | grep -vx '\.' | grep -v '^$'; }
copyright=$WORK/x$DOC/copyright
is "$(sed -n 's/^Copyright: *//p' "$copyright")" "$(sed -n 's/^Copyright (c) \([0-9]*\), /\1 /p' LICENSE)" \
	"the copyright file names LICENSE's holder and year"
is "$(sed -n '/^ Permission/,$p' "$copyright" | words | tr '\n' ' ')" \
	"$(sed -n '/^Permission/,$p' LICENSE | words | tr '\n' ' ')" \
	"the copyright file's PostgreSQL Licence text is LICENSE's"
check "its pg_procmem.so is a shared object with PostgreSQL's module magic block" \
	eval 'readelf -h "$WORK/x$LIB/pg_procmem.so" | grep "Type: *DYN" >/dev/null && nm -D "$WORK/x$LIB/pg_procmem.so" | grep -w Pg_magic_func >/dev/null'
check "every .bc in it is LLVM bitcode (starts BC C0 DE)" eval '(
	for f in $(grep "\.bc\$" "$WORK/files"); do
		[ "$(head -c4 "$WORK/x$f" | od -An -tx1 | tr -d " ")" = 4243c0de ] || exit 1
	done)'
check "its pg_procmem.so is stripped (the debug symbols are in the -dbgsym package)" \
	eval '[ -z "$(readelf -S "$WORK/x$LIB/pg_procmem.so" | grep "\.debug_info")" ]'

# --- installed with dpkg -i, alone
# a run killed before it put things back: its state first
if [ -f "$SAVED.list" ]; then
	echo "# a run of this test was killed before it put pg_procmem back: doing it now"
	INSTALLED_BY_US=yes
	restore || bail "could not put back what a killed run moved aside (in $STATE)"
	rm -rf "$STATE"
	RESTORED=no INSTALLED_BY_US=no
fi
if dpkg-query -W -f='${db:Status-Status}' "$PKG" 2>/dev/null | grep -x installed >/dev/null; then
	bail "$PKG is installed already (not by this test): it would be removed; dpkg -r $PKG first"
fi
# the files a make install left, moved aside (never a file a package owns)
mkdir -p "$STATE"
installed_files >"$SAVED.list"
while read -r f; do
	! dpkg -S "$f" >/dev/null 2>&1 || bail "$f belongs to $(dpkg -S "$f" 2>/dev/null | cut -d: -f1), not to a make install"
done <"$SAVED.list"
echo "# $(wc -l <"$SAVED.list") pg_procmem files of an earlier make install to move aside:" \
	"$(grep -c '\.so$' "$SAVED.list" || true) library, $(grep -c '\.bc$' "$SAVED.list" || true) bitcode, $(grep -cE '\.(sql|control)$' "$SAVED.list" || true) extension files"
# nothing to move aside: what restore installs instead is built now, so
# that the window after dpkg -r is only make install's copying
if [ ! -s "$SAVED.list" ]; then
	echo "# no pg_procmem is installed: building it in $REPO for the restore"
	fresh_objects
	make -C "$REPO" -s with_llvm=no PG_CONFIG="$PG_CONFIG" >"$WORK/make.log" 2>&1 || bail "make failed: $(tail -n 20 "$WORK/make.log")"
fi
mkdir -p "$SAVED"
while read -r f; do
	mkdir -p "$SAVED$(dirname "$f")"
	cp -a "$f" "$SAVED$f"
done <"$SAVED.list"
# the window without pg_procmem starts: wait for dpkg's lock first
dpkg_wait || bail "dpkg's lock stayed taken for 10 minutes"
TOUCHED=yes
t0=$(date +%s%N)
while read -r f; do rm -f "$f"; done <"$SAVED.list"
[ ! -d "$PKGLIB/bitcode/pg_procmem" ] || find "$PKGLIB/bitcode/pg_procmem" -depth -type d -empty -delete
left=$(installed_files)
INSTALLED_BY_US=yes
dpkg_retry -i "$DEBFILE" >"$WORK/dpkg-i.log" 2>&1 && installed=yes || installed=no
t1=$(date +%s%N)
is "$left" "" "every pg_procmem file of the earlier make install was gone before dpkg -i"
check "dpkg -i $(basename "$DEBFILE") installs it" test "$installed" = yes
[ "$installed" = yes ] || bail "the package did not install: $(cat "$WORK/dpkg-i.log")"
[ ! -s "$SAVED.list" ] || echo "# pg_procmem was missing for $(((t1 - t0) / 1000000)) ms"
is "$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$PKG")" "installed $VERSION-1" "dpkg says $PKG $VERSION-1 is installed"
check "every file on disk is the package's (dpkg --verify)" eval '[ -z "$(dpkg --verify "$PKG")" ]'
check "the installed pg_procmem.so is byte for byte the package's" cmp -s "$WORK/x$LIB/pg_procmem.so" "$PKGLIB/pg_procmem.so"
is "$(installed_files | tr '\n' ' ')" "$(grep -E "^($LIB|$EXT)/" "$WORK/files" | tr '\n' ' ')" \
	"the installed pg_procmem files are exactly the package's"

# a throwaway cluster (its socket in its own dir, no TCP)
PGPORT=$(free_port) || bail "no free port"
export PGPORT
cluster_init
trap cleanup EXIT
cluster_run autovacuum=off >/dev/null 2>&1 || bail "the PostgreSQL $PG_MAJOR cluster did not start"
is "$(psql_q -At -c "SELECT default_version FROM pg_available_extensions WHERE name = 'pg_procmem'")" "$VERSION" \
	"pg_available_extensions lists pg_procmem $VERSION"
if out=$(psql_q -At -c 'CREATE EXTENSION pg_procmem' 2>&1); then ok "CREATE EXTENSION pg_procmem"; else not_ok "CREATE EXTENSION pg_procmem" "$out"; fi
is "$(psql_q -At -c "SELECT extversion FROM pg_extension WHERE extname = 'pg_procmem'")" "$VERSION" "the extension is version $VERSION"
for v in pg_procmem_backends pg_procmem_top pg_procmem_advice; do
	rows=$(psql_q -At -c "SELECT count(*) FROM $v" 2>&1) || true
	check "$v has rows ($rows)" eval '[[ "$rows" =~ ^[0-9]+$ ]] && [ "$rows" -gt 0 ]'
done
check "the session's own row in pg_procmem_backends has an overhead" \
	eval '[ "$(psql_q -At -c "SELECT overhead > 0 FROM pg_procmem_backends WHERE pid = pg_backend_pid()")" = t ]'
# which file the library came from: the backend's own /proc/self/maps, read
# by the backend after a call into it
backend_so=$(psql_q -At -c 'SELECT count(*) FROM pg_procmem_top' \
	-c "SELECT string_agg(DISTINCT substring(l FROM '(/\\S*pg_procmem\\.so)\$'), ' ')
	    FROM regexp_split_to_table(pg_read_file('/proc/self/maps'), E'\\n') AS l WHERE l ~ 'pg_procmem\\.so\$'" 2>&1 | tail -n1)
is "$backend_so" "$PKGLIB/pg_procmem.so" "a backend maps the package's library ($PKGLIB/pg_procmem.so)"

# the autopkgtest, as autopkgtest runs it: from the source tree, against the
# installed package
mkdir "$WORK/src"
git archive HEAD | tar -x -C "$WORK/src"
chmod -R a+rX "$WORK/src"
if (cd "$WORK/src" && PGPORT=$(free_port) debian/tests/installcheck) >"$WORK/autopkgtest.log" 2>&1; then
	ok "debian/tests/installcheck passes against the installed package ($(grep -oE 'All [0-9]+ tests passed' "$WORK/autopkgtest.log" | head -n1))"
else
	not_ok "debian/tests/installcheck passes against the installed package" "$(tail -n 40 "$WORK/autopkgtest.log")"
fi

# --- dpkg -r, then what make install had, back at once
dpkg_wait || true
t0=$(date +%s%N)
dpkg_retry -r "$PKG" >"$WORK/dpkg-r.log" && removed=yes || removed=no
still=$(grep -E "^($LIB|$EXT)/" "$WORK/files" | while read -r f; do [ ! -e "$f" ] || echo "$f"; done)
status=$(dpkg-query -W -f='${db:Status-Status}' "$PKG" 2>/dev/null || echo not-installed)
available=$(psql_q -At -c "SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_procmem'" 2>&1 || true)
restore >"$WORK/restore.log" 2>&1 && restored=yes || restored=no
RESTORE_OK=$restored
t1=$(date +%s%N)
check "dpkg -r $PKG succeeds" test "$removed" = yes
is "$still" "" "dpkg -r removed every library and extension file the package listed"
check "its doc folder is gone too" test ! -e "$DOC"
is "$status" not-installed "dpkg says $PKG is not installed"
is "$available" 0 "the running cluster's pg_available_extensions no longer lists pg_procmem"
echo "# pg_procmem was missing for $(((t1 - t0) / 1000000)) ms"
sed 's/^# //; s/^/# /' "$WORK/restore.log"
check "the earlier install is back (restore succeeded)" test "$restored" = yes
check "$PKGLIB/pg_procmem.so is back" test -f "$PKGLIB/pg_procmem.so"
if [ -s "$SAVED.list" ]; then
	check "every file moved aside is back, byte for byte" eval '(
		while read -r f; do cmp -s "$SAVED$f" "$f" || { echo "#   differs: $f"; exit 1; }; done <"$SAVED.list")'
	is "$(installed_files | tr '\n' ' ')" "$(tr '\n' ' ' <"$SAVED.list")" "no pg_procmem file is there that was not before"
fi
is "$(psql_q -At -c "SELECT default_version FROM pg_available_extensions WHERE name = 'pg_procmem'")" "$VERSION" \
	"the running cluster lists pg_procmem $VERSION again"
cluster_stop

tap_done
