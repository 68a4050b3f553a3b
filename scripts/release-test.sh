#!/usr/bin/env bash
# The release tier (`npm run test:release`; .ci/run runs it after `npm test`): a release made by
# scripts/release.sh exactly as a maintainer makes one, into a registry on loopback, then checked
# as a user would take it (test/release/release-checks.ts, under node:test: see that file).
#   - the registry: `crane registry serve` on a free loopback port, its blobs in a temp dir
#   - the keys: a cosign key pair made for this run (the workflow signs keyless instead)
#   - the release: scripts/release.sh, which builds the image through the image tier
#     (scripts/image-test.sh --save), so this tier includes the image tier's checks; then a second
#     one of the same image given as an OCI layout, as the workflow gives buildx's
#   - the checks: a Docker engine of our own again (scripts/lib/docker-engine.sh) to pull and run
#     the released image, and the real kube-apiserver of the test dependencies
# Skips with one line and exit 0 where no engine can run (not root, ...), like the image tier.
#
# Usage: scripts/release-test.sh      (work dir: .cache/image-test, shared with the image tier)
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
WORK=${IMAGE_TEST_DIR:-$ROOT/.cache/image-test}
NAME=release-test
# shellcheck source=scripts/lib/docker-engine.sh
. "$ROOT/scripts/lib/docker-engine.sh"
engine_can_run
cd "$ROOT"
total_start=$(now_ms)

# --- tools --------------------------------------------------------------------------------------
start=$(now_ms)
bash scripts/test-deps.sh >"$WORK.test-deps.log" 2>&1 || { tail_log "$WORK.test-deps.log"; die "scripts/test-deps.sh failed"; }
bash scripts/release-tools.sh >"$WORK.release-tools.log" 2>&1 || { tail_log "$WORK.release-tools.log"; die "scripts/release-tools.sh failed"; }
set -a
# shellcheck source=/dev/null
. .cache/test-deps.env
# shellcheck source=/dev/null
. .cache/release-tools.env
set +a
say "tools ready ($(elapsed "$start"))"

# --- a registry and keys of this run --------------------------------------------------------------
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/release-test.XXXXXX")
registry_pid=
# On exit: the registry, the scratch dir, then the engine if it was started.
finish() {
  local status=$?
  [[ -z $registry_pid ]] || kill "$registry_pid" 2>/dev/null || true
  rm -rf "$SCRATCH"
  [[ -n ${SOCKET:-} ]] || exit "$status"
  engine_cleanup "$status"
}
trap finish EXIT
registry_up "$SCRATCH"
REGISTRY=$REGISTRY_ADDRESS/wasmcloud-metacontroller
export COSIGN_PASSWORD=''
(cd "$SCRATCH" && "$COSIGN_BIN" generate-key-pair --output-key-prefix cosign >/dev/null 2>&1) || die "cosign generate-key-pair failed"
say "registry on $REGISTRY_ADDRESS, a key pair of this run"

# --- the release ------------------------------------------------------------------------------------
version=$(node -p "require('./package.json').version")
dirty=()
[[ -z $(git status --porcelain --untracked-files=no) ]] || dirty=(--allow-dirty) # a working tree, not CI's checkout
start=$(now_ms)
bash scripts/release.sh "$version" --registry "$REGISTRY" --out "$SCRATCH/release" --key "$SCRATCH/cosign.key" \
  --plain-http "${dirty[@]}"
release_seconds=$((($(now_ms) - start) / 1000))
# The workflow's path: a release of an image given as an OCI layout (here, the first release's).
mkdir "$SCRATCH/layout"
tar -xf "$SCRATCH/release/wasmcloud-metacontroller-$version-image.oci.tar" -C "$SCRATCH/layout"
bash scripts/release.sh "$version" --registry "$REGISTRY_ADDRESS/from-layout" --out "$SCRATCH/release-from-layout" \
  --key "$SCRATCH/cosign.key" --image "$SCRATCH/layout" --plain-http "${dirty[@]}"

# --- the checks, on an engine of our own ----------------------------------------------------------
# Docker pulls over plain HTTP from a registry on loopback without being told to.
ENGINE_ON_EXIT=finish engine_up
# What this session pulls goes at exit; the image tier's cached bases stay.
mapfile -t keep_images < <(docker images --format '{{.Repository}}:{{.Tag}}' | grep -v '<none>')
KUBERNETES_VERSION=$(sed -n 's/^KUBERNETES_VERSION=//p' scripts/test-deps.sh)
export RELEASE_DIR=$SCRATCH/release RELEASE_FROM_LAYOUT_DIR=$SCRATCH/release-from-layout KUBERNETES_VERSION RELEASE_REGISTRY=$REGISTRY RELEASE_SECONDS=$release_seconds \
  COSIGN_PUB=$SCRATCH/cosign.pub IMAGE_TEST_DOCKER=$DOCKER IMAGE_TEST_SOCKET=$SOCKET DOCKER_CONFIG=$WORK/client
# Then the upgrade tests (also in `npm test`, on a release built from the tree) on this release's
# install.yaml and chart.
node --import tsx --test --test-concurrency=1 --test-reporter=spec test/release/release-checks.ts test/kube/upgrade.test.ts
