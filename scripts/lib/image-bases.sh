# Sourced after scripts/lib/docker-engine.sh by scripts/image-test.sh and scripts/image-engine.sh:
# the stand-in base images the Dockerfile is built on where no registry is reachable, and the tag
# under which the product image built from this tree is kept between runs.
#   - Bases: Debian trixie (debootstrap minbase) with Node.js and npm from the npm registry for the
#     build stages, and a shell-less runtime with /nodejs/bin/node, the libraries it links and user
#     65532 (nonroot), laid out like the distroless image; passed as the Dockerfile's NODE_IMAGE and
#     RUNTIME_IMAGE. The host's CA bundle (package registries are reached through an intercepting
#     proxy) is added in a per-run layer on the build base only: it never enters a cached base or
#     the product image.
#   - The product: PRODUCT_CACHE names the image built from the build context's files (the
#     .dockerignore's list) on these bases; whichever tier builds it first keeps it, the others
#     take it instead of building the same image again.
# The caller sets ROOT and WORK and has started the engine; bases_up builds what is missing and
# sets NODE_BASE, RUNTIME_BASE, BUILD_BASE, PRODUCT_CACHE and keep_images.
# shellcheck shell=bash

# The build base's Node.js and npm (NODE_VERSION; NPM_VERSION, NPM_INTEGRITY; node itself: scripts/image-node.sh).
# shellcheck source=scripts/image-node.env
. "$ROOT/scripts/image-node.env"
DEBIAN_SUITE=trixie # Debian 13, as both upstream bases
# Node.js 26's official linux build links libatomic.so.1, which minbase lacks: any base that runs
# that binary carries the library, so the stand-ins do too (the runtime copies it via ldd).
DEBIAN_PACKAGES=libatomic1
DEBIAN_IMAGE=image-test/debian:$DEBIAN_SUITE-minbase-${DEBIAN_PACKAGES//,/-}
BUILD_CA=/etc/image-test/host-ca.crt # where the build stages find the host's CA bundle

# Each base is tagged after what it is made of (see bases_up), so a changed recipe builds a new
# one and the old tag, no longer kept, is removed at exit.
image_exists() { docker image inspect "$1" >/dev/null 2>&1; }
recipe_tag() { sha256sum | cut -c1-12; }
# Builds a context dir prepared in $WORK/context; the log shows on failure.
build_image() {
  local tag=$1 log=$WORK/build-${1//[\/:]/-}.log
  shift
  docker build --network host -t "$tag" "$@" "$WORK/context" >"$log" 2>&1 || { tail_log "$log" 40; die "building $tag failed"; }
  rm -rf "$WORK/context"
}

# The Debian mirror apt already uses (host networking reaches only package registries).
debian_mirror() {
  local codename mirror
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Created-By: Packages' 2>/dev/null |
    awk -v c="$codename" '$2 == c { print $1; exit }')
  echo "${mirror:-http://deb.debian.org/debian/}"
}

make_debian_base() {
  image_exists "$DEBIAN_IMAGE" && return 0
  local rootfs=$WORK/rootfs mirror start
  mirror=$(debian_mirror)
  start=$(now_ms)
  say "debootstrap --variant=minbase --include=$DEBIAN_PACKAGES $DEBIAN_SUITE from $mirror..."
  unmount_under "$rootfs"
  rm -rf --one-file-system "$rootfs"
  "$DEBOOTSTRAP" --variant=minbase --include="$DEBIAN_PACKAGES" "$DEBIAN_SUITE" "$rootfs" "$mirror" >"$WORK/debootstrap.log" 2>&1 ||
    { tail_log "$WORK/debootstrap.log"; die "debootstrap failed"; }
  unmount_under "$rootfs"
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin
  tar -C "$rootfs" --numeric-owner -c . | docker import --change 'CMD ["/bin/bash"]' - "$DEBIAN_IMAGE" >/dev/null
  rm -rf --one-file-system "$rootfs"
  say "made $DEBIAN_IMAGE ($(elapsed "$start"))"
}

# npm pack checks a tarball against the registry's integrity; we also hold it to the pinned one.
fetch_package() {
  local spec=$1 integrity=$2 file=$WORK/downloads/${1/@/-}.tgz
  mkdir -p "$WORK/downloads"
  if [[ ! -f $file ]]; then
    (cd "$WORK/downloads" && npm pack "$spec" --silent >/dev/null) || die "npm pack $spec failed"
  fi
  local actual
  actual=$(node -e "const hash = require('crypto').createHash('sha512').update(require('fs').readFileSync(process.argv[1]));
    process.stdout.write('sha512-' + hash.digest('base64'))" "$file")
  [[ $actual == "$integrity" ]] || { rm -f "$file"; die "$spec: integrity $actual, expected $integrity"; }
  echo "$file"
}

node_base_dockerfile() {
  cat <<DOCKERFILE
FROM $DEBIAN_IMAGE
COPY node/bin/node /usr/local/bin/node
COPY npm/ /usr/local/lib/node_modules/npm/
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && test "\$(node -p 'process.release.name + " " + process.version')" = "node v$NODE_VERSION" \\
 && test "\$(npm --version)" = "$NPM_VERSION"
CMD ["node"]
DOCKERFILE
}

make_node_base() {
  image_exists "$NODE_BASE" && return 0
  local start node npm_tgz
  start=$(now_ms)
  # The node binary as the bench uses it (fetched and integrity-checked once, into .cache/node).
  node=$(bash "$ROOT/scripts/image-node.sh")
  npm_tgz=$(fetch_package "npm@$NPM_VERSION" "$NPM_INTEGRITY")
  rm -rf "$WORK/context" && mkdir -p "$WORK/context/node/bin" "$WORK/context/npm"
  cp "$node" "$WORK/context/node/bin/node"
  tar -xzf "$npm_tgz" -C "$WORK/context/npm" --strip-components 1
  node_base_dockerfile >"$WORK/context/Dockerfile"
  build_image "$NODE_BASE"
  rm -rf "$WORK/downloads" # in the cached image now
  say "made $NODE_BASE ($(elapsed "$start"))"
}

# distroless' layout: node at /nodejs/bin/node, no shell, /etc/passwd with nonroot (65532),
# /tmp and /home/nonroot; the libraries are the ones this node links, from the same Debian.
runtime_base_dockerfile() {
  cat <<DOCKERFILE
FROM $NODE_BASE AS collect
RUN mkdir -p /out/nodejs/bin /out/etc /out/tmp /out/home/nonroot \\
 && cp /usr/local/bin/node /out/nodejs/bin/node \\
 && for lib in \$(ldd /usr/local/bin/node | grep -o '/[^ ]*'); do cp -L --parents "\$lib" /out; done \\
 && printf '%s\\n' root:x:0:0:root:/root:/sbin/nologin nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin \\
      nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin >/out/etc/passwd \\
 && printf '%s\\n' root:x:0: nobody:x:65534: nonroot:x:65532: >/out/etc/group \\
 && chmod 1777 /out/tmp && chown 65532:65532 /out/home/nonroot && chmod 700 /out/home/nonroot
FROM scratch
COPY --from=collect /out/ /
USER 65532:65532
WORKDIR /home/nonroot
ENTRYPOINT ["/nodejs/bin/node"]
DOCKERFILE
}

make_runtime_base() {
  image_exists "$RUNTIME_BASE" && return 0
  local start
  start=$(now_ms)
  rm -rf "$WORK/context" && mkdir -p "$WORK/context"
  runtime_base_dockerfile >"$WORK/context/Dockerfile"
  build_image "$RUNTIME_BASE"
  [[ $(docker run --rm --network none "$RUNTIME_BASE" --version) == "v$NODE_VERSION" ]] ||
    die "$RUNTIME_BASE does not run node v$NODE_VERSION"
  say "made $RUNTIME_BASE ($(elapsed "$start"))"
}

# The build base as this run uses it: the cached one plus the host's CA bundle for npm ci.
make_build_base() {
  BUILD_BASE=$NODE_BASE
  local ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
  [[ -f $ca ]] || return 0
  BUILD_BASE=image-test/node-build:host-ca
  rm -rf "$WORK/context" && mkdir -p "$WORK/context"
  cp "$ca" "$WORK/context/host-ca.crt"
  printf 'FROM %s\nCOPY host-ca.crt %s\nENV NODE_EXTRA_CA_CERTS=%s\n' "$NODE_BASE" "$BUILD_CA" "$BUILD_CA" >"$WORK/context/Dockerfile"
  build_image "$BUILD_BASE"
}

# What the product image is made of: the bases' tags and every file of the build context (the
# Dockerfile, .dockerignore and the files it lets in). The CA bundle is left out: only the build
# stages see it.
product_key() {
  local allowed
  mapfile -t allowed < <(sed -n 's/^!//p' "$ROOT/.dockerignore")
  {
    printf '%s\n' "$NODE_BASE" "$RUNTIME_BASE"
    (cd "$ROOT" && find Dockerfile .dockerignore "${allowed[@]}" -type f -print0 | sort -z | xargs -0 sha256sum)
  } | sha256sum | cut -c1-16
}

bases_up() {
  NODE_BASE=image-test/node:$NODE_VERSION-$DEBIAN_SUITE-$(node_base_dockerfile | recipe_tag)
  RUNTIME_BASE=image-test/nodejs:$NODE_VERSION-$DEBIAN_SUITE-nonroot-$(runtime_base_dockerfile | recipe_tag)
  PRODUCT_CACHE=image-test/wasmcloud-metacontroller:tree-$(product_key)
  keep_images=("$DEBIAN_IMAGE" "$NODE_BASE" "$RUNTIME_BASE" "$PRODUCT_CACHE")
  local start
  start=$(now_ms)
  make_debian_base
  make_node_base
  make_runtime_base
  make_build_base
  say "bases ready ($(elapsed "$start"))"
}
