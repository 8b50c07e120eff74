# shellcheck shell=bash
# packaging/pgxn.sh - the PGXN release, $DIST/pg_procmem-$VERSION.zip: one
# top folder, pg_procmem-$VERSION/, holding what a PGXN user needs to build,
# install and test the extension (make, make install, make installcheck:
# what pgxn install and pgxn check run), as committed at HEAD.
#
# Sourced by scripts/package, with VERSION, DIST, REPO and scripts/lib.sh's
# functions set; it can be sourced the same way with another DIST
# (test/package/pgxn.sh builds into a temp dir).
#
# In the zip:
#   Makefile META.json pg_procmem.control   the PGXS build and its metadata
#   pg_procmem--*.sql                       every version's install and
#                                           upgrade scripts
#   src/                                    the module's C sources
#   views/                                  what the 1.2.0 scripts are
#                                           assembled from (make scripts,
#                                           make scripts-check)
#   sql/ expected/                          make installcheck (pg_regress)
#   README.md LICENSE docs/                 README is META.json's docfile and
#                                           links into docs/
#   CHANGELOG.md                            what each version changed
#   monitoring/                             the exporter queries and Grafana
#                                           dashboard docs/monitoring.md has
#                                           users load
# Left out: the project's own harness, which a user building the extension
# does not run and which does not work outside a checkout: scripts/ (demo,
# test, packaging), test/ (its suites need scripts/lib.sh, a test-only
# module and root), bench/, packaging/, debian/, .ci/ and the dotfiles.
# `make unit` and `make pgtap` are the developers' targets: they need a
# checkout.

PGXN_PATHS=(Makefile META.json pg_procmem.control 'pg_procmem--*.sql' src views sql expected
	README.md CHANGELOG.md LICENSE docs monitoring)

pgxn_build() {
	local zip=$DIST/pg_procmem-$VERSION.zip meta_version dirty
	# the zip is HEAD's: it must say the version the control file says
	meta_version=$(git -C "$REPO" show HEAD:META.json |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
	if [ "$meta_version" != "$VERSION" ]; then
		echo "packaging/pgxn.sh: META.json at HEAD says version $meta_version, the control file $VERSION" >&2
		return 1
	fi
	dirty=$(git -C "$REPO" status --porcelain -- "${PGXN_PATHS[@]}")
	if [ -n "$dirty" ]; then
		echo "packaging/pgxn.sh: these changes are not committed, and the zip (HEAD) leaves them out:" >&2
		echo "$dirty" >&2
	fi
	rm -f "$zip"
	git -C "$REPO" archive --format=zip --prefix="pg_procmem-$VERSION/" -o "$zip" HEAD -- "${PGXN_PATHS[@]}"
	echo "packaging/pgxn.sh: $zip ($(git -C "$REPO" rev-parse --short HEAD))" >&2
}

pgxn_build
