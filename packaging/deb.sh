# shellcheck shell=bash
# packaging/deb.sh - the Debian packages, $DIST/postgresql-NN-pg-procmem_
# $VERSION-1_ARCH.deb, one per PostgreSQL major whose server headers
# (postgresql-server-dev-NN) are installed and that debian/pgversions allows
# (14 and later): the way the PostgreSQL Debian packagers build extensions,
# with pg_buildext and dh's pgxs_loop sequence (debian/rules), as committed
# at HEAD.
#
# Sourced by scripts/package, with VERSION, DIST, REPO and scripts/lib.sh's
# functions set; it can be sourced the same way with another DIST
# (test/package/deb.sh builds into a temp dir).
#
# In a temp dir under /tmp, never in the checkout (dpkg-buildpackage writes
# into the parent directory and leaves build products in the tree):
#   pg-procmem_VERSION.orig.tar.gz    HEAD without debian/ (git archive): the
#                                     upstream tarball of format 3.0 (quilt),
#                                     which a -1 revision needs
#   pg-procmem-VERSION/               that tarball unpacked, plus HEAD's
#                                     debian/
# There: debian/control is generated again from debian/control.in for the
# majors installed here (PG_SUPPORTED_VERSIONS=installed: the committed one
# is Debian 12's, 15 only), then dpkg-buildpackage -us -uc builds the source
# and binary packages. Its test step (dh_pgxs_test) runs make installcheck
# against each package's files on a throwaway cluster (pg_virtualenv, as
# user postgres, on a free port picked here); DEB_BUILD_OPTIONS=nocheck
# skips it. lintian then checks the result and fails the build on any
# error. Only the .deb files go to $DIST; the source package, the -dbgsym
# packages and the build log stay in the temp dir, which is removed after a
# good build and kept (its path printed) after a failed one.


# Every command's status is checked: a caller may source this where set -e
# is off (in a subshell followed by ||).
deb_build() {
	local work src changelog_version debversion dirty port pkgs=() lintian_out deb
	ensure_packages build-essential dpkg-dev debhelper git lintian iproute2 \
		postgresql-common postgresql-server-dev-all postgresql-all || return 1
	# the package is HEAD's: its changelog must name the control file's version
	changelog_version=$(git -C "$REPO" show HEAD:debian/changelog | dpkg-parsechangelog -l - -S Version)
	if [ "${changelog_version%-*}" != "$VERSION" ]; then
		echo "packaging/deb.sh: debian/changelog at HEAD is for $changelog_version, the control file says $VERSION" >&2
		echo "  (add an entry for $VERSION-1 at the top of debian/changelog, e.g. dch -v $VERSION-1, and commit it)" >&2
		return 1
	fi
	debversion=$changelog_version
	dirty=$(git -C "$REPO" status --porcelain --untracked-files=no)
	if [ -n "$dirty" ]; then
		echo "packaging/deb.sh: these changes are not committed, and the package (HEAD) leaves them out:" >&2
		echo "$dirty" >&2
	fi

	work=$(mktemp -d /tmp/pg_procmem-deb.XXXXXX) || return 1
	# user postgres runs the build-time test's server over the package's files
	chmod 755 "$work" || return 1
	src=$work/pg-procmem-$VERSION
	git -C "$REPO" archive --format=tar --prefix="pg-procmem-$VERSION/" HEAD -- . ':(exclude)debian' |
		gzip -n -9 >"$work/pg-procmem_$VERSION.orig.tar.gz" || return 1
	tar -xzf "$work/pg-procmem_$VERSION.orig.tar.gz" -C "$work" || return 1
	git -C "$REPO" archive --format=tar --prefix="pg-procmem-$VERSION/" HEAD -- debian | tar -x -C "$work" || return 1

	# every pg_buildext call of the build (the loop, checkcontrol,
	# installcheck) must see the same majors: those installed here
	local -x PG_SUPPORTED_VERSIONS=installed
	if [ -z "$(cd "$src" && pg_buildext supported-versions)" ]; then
		echo "packaging/deb.sh: no PostgreSQL major to build for (debian/pgversions: $(tr '\n' ' ' <"$src/debian/pgversions");" \
			"postgresql-server-dev-NN installed: $(/usr/share/postgresql-common/supported-versions | tr '\n' ' '))" >&2
		return 1
	fi
	(cd "$src" && pg_buildext updatecontrol) || return 1
	mapfile -t pkgs < <(sed -n 's/^Package: //p' "$src/debian/control")
	echo "packaging/deb.sh: building ${pkgs[*]} $debversion in $work" >&2

	port=$(free_port) || { echo "packaging/deb.sh: no free port for the build-time test" >&2; return 1; }
	if ! (cd "$src" && PGPORT=$port CI=true dpkg-buildpackage -us -uc </dev/null) >"$work/build.log" 2>&1; then
		echo "packaging/deb.sh: dpkg-buildpackage failed (the build is kept in $work); the end of its log:" >&2
		tail -n 60 "$work/build.log" >&2
		return 1
	fi
	grep -E '^(### (PostgreSQL|End) [0-9]+ |# All [0-9]+ tests passed| *All [0-9]+ tests passed|dpkg-deb: building package)' \
		"$work/build.log" >&2 || true

	chmod -R a+rX "$work"
	log "lintian $(dpkg-query -W -f='${Version}' lintian) on the source and binary packages (as user nobody)"
	# --fail-on error: warnings and infos are shown, only errors fail
	if ! lintian_out=$(runuser -u nobody -- lintian --fail-on error --display-info --tag-display-limit 0 \
		"$work/pg-procmem_${debversion}_$(dpkg --print-architecture).changes" 2>&1); then
		printf '%s\n' "$lintian_out" >&2
		echo "packaging/deb.sh: lintian found errors (the build is in $work)" >&2
		return 1
	fi
	printf '%s\n' "${lintian_out:-(lintian: no tags)}" >&2

	for p in "${pkgs[@]}"; do
		deb=$(echo "$work/${p}_${debversion}_"*.deb)
		[ -f "$deb" ] || { echo "packaging/deb.sh: $p was not built ($deb)" >&2; return 1; }
		cp "$deb" "$DIST/" || return 1
		echo "packaging/deb.sh: $DIST/$(basename "$deb") ($(git -C "$REPO" rev-parse --short HEAD))" >&2
	done
	rm -rf "$work"
}

deb_build
