#!/usr/bin/env bash
# The image tier (`npm run test:image`; .ci/run runs it after `npm test`): builds the product's
# Dockerfile and runs the image as manifests/deployment.yaml does, with no container registry.
#   - Engine: Debian's docker.io, started here with its own data root, state dir, socket and an
#     empty daemon.json; no bridge, no iptables, no forwarding or masquerading. Builds and
#     containers use host networking on loopback only, so the host's network is left untouched.
#   - Bases: no registry is reachable, so both FROM images are local stand-ins passed as the
#     Dockerfile's NODE_IMAGE and RUNTIME_IMAGE arguments, cached between runs
#     (scripts/lib/image-bases.sh). The product image is kept too, tagged after the build context's
#     files: an image built from the same tree (by this tier, or by `npm test`'s README install,
#     test/image/readme-install.test.ts) is checked again, not built again.
#   - Checks (test/image/image-checks.ts, under node:test): see that file.
# Skips with one line and exit 0 where it cannot run: not root, no overlay filesystem in the
# kernel, or no apt-get to install the engine. On any exit it removes its containers and every
# image but the cached bases, and stops its engine.
#
# Usage: scripts/image-test.sh                  (work dir: .cache/image-test, or IMAGE_TEST_DIR)
#        scripts/image-test.sh --save FILE      then writes the image that passed to FILE, as
#                                               `docker save` does, for scripts/release.sh
set -euo pipefail

save_to=
case "${1:-}" in
  "") ;;
  --save) save_to=$(realpath -m -- "${2:?--save needs a file}") ;;
  *) echo "image-test: unknown argument '$1'" >&2; exit 2 ;;
esac

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
WORK=${IMAGE_TEST_DIR:-$ROOT/.cache/image-test}

PRODUCT_IMAGE=image-test/wasmcloud-metacontroller:under-test

NAME=image-test
# shellcheck source=scripts/lib/docker-engine.sh
. "$ROOT/scripts/lib/docker-engine.sh"
# shellcheck source=scripts/lib/image-bases.sh
. "$ROOT/scripts/lib/image-bases.sh"
engine_up
bases_up

# --- the product image -------------------------------------------------------------------------
start=$(now_ms)
if image_exists "$PRODUCT_CACHE"; then
  # Built from these very files and bases by an earlier run (npm test's README install builds it).
  docker tag "$PRODUCT_CACHE" "$PRODUCT_IMAGE"
  say "took $PRODUCT_CACHE, built from this tree by an earlier run ($(elapsed "$start"))"
else
  docker build --network host -f "$ROOT/Dockerfile" -t "$PRODUCT_IMAGE" \
    --build-arg "NODE_IMAGE=$BUILD_BASE" --build-arg "RUNTIME_IMAGE=$RUNTIME_BASE" "$ROOT" >"$WORK/build-product.log" 2>&1 ||
    { tail_log "$WORK/build-product.log" 40; die "docker build of the Dockerfile failed"; }
  say "built $PRODUCT_IMAGE ($(elapsed "$start"))"
fi
size=$(docker image inspect -f '{{.Size}}' "$PRODUCT_IMAGE")
runtime_size=$(docker image inspect -f '{{.Size}}' "$RUNTIME_BASE")
say "$PRODUCT_IMAGE: $((size / 1000000)) MB, of which the runtime base $((runtime_size / 1000000)) MB"

# --- the checks --------------------------------------------------------------------------------
# nats-server and wadm are the pinned ones of scripts/test-deps.sh (cached after `npm test`).
bash "$ROOT/scripts/test-deps.sh" --demo >"$WORK/test-deps.log" 2>&1 ||
  { tail_log "$WORK/test-deps.log"; die "scripts/test-deps.sh --demo failed"; }
eval "$(tail -n 2 "$WORK/test-deps.log")" # NATS_SERVER_BIN=... WADM_BIN=...
export NATS_SERVER_BIN WADM_BIN IMAGE_TEST_DOCKER=$DOCKER IMAGE_TEST_SOCKET=$SOCKET IMAGE_TEST_IMAGE=$PRODUCT_IMAGE \
  IMAGE_TEST_BUILD_CA=$BUILD_CA DOCKER_CONFIG=$WORK/client
cd "$ROOT"
node --import tsx --test --test-reporter=spec test/image/image-checks.ts
docker tag "$PRODUCT_IMAGE" "$PRODUCT_CACHE" # checked: kept for the next run on this tree
if [[ -n $save_to ]]; then
  start=$(now_ms)
  docker save -o "$save_to" "$PRODUCT_IMAGE"
  say "saved the image to $save_to ($(elapsed "$start"))"
fi
