#!/usr/bin/env bash
# A Docker engine for a test file of `npm test` (test/image/readme-install.test.ts, which runs
# README.md's install from source): the image tier's engine (scripts/lib/docker-engine.sh: its own
# data root and socket, host networking on loopback only) with the stand-in bases
# (scripts/lib/image-bases.sh), and a registry on loopback (`crane registry serve`, as the release
# tier's). Prints its settings as IMAGE_TEST_*=VALUE lines, then `ready`, and runs until its
# standard input closes; then it stops the registry, removes its containers and every image but the
# cached bases and PRODUCT_CACHE, and stops the engine.
#
# Usage: scripts/image-engine.sh              (work dir: .cache/image-test, or IMAGE_TEST_DIR)
#        scripts/image-engine.sh --can-run    exits 0 with nothing printed where an engine can run,
#                                             else prints the one "skipped: ..." line
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
WORK=${IMAGE_TEST_DIR:-$ROOT/.cache/image-test}
NAME=image-engine
# shellcheck source=scripts/lib/docker-engine.sh
. "$ROOT/scripts/lib/docker-engine.sh"
engine_can_run
[[ ${1:-} != --can-run ]] || exit 0
# shellcheck source=scripts/lib/image-bases.sh
. "$ROOT/scripts/lib/image-bases.sh"
CACHE_DIR=$ROOT/.cache BIN_DIR=$ROOT/.cache/bin
# shellcheck source=scripts/lib/go-install.sh
. "$ROOT/scripts/lib/go-install.sh"

mkdir -p "$WORK" "$BIN_DIR"
go_tool_install crane "$BIN_DIR/crane" "$CRANE_MODULE" "$CRANE_VERSION" "$CRANE_FIRST_INSTALL" >"$WORK.crane.log" 2>&1 ||
  { tail_log "$WORK.crane.log"; die "go install crane failed"; }

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/image-engine.XXXXXX")
registry_pid=
finish() {
  local status=$?
  [[ -z $registry_pid ]] || kill "$registry_pid" 2>/dev/null || true
  rm -rf "$SCRATCH"
  engine_cleanup "$status"
}
ENGINE_ON_EXIT=finish engine_up
bases_up

CRANE_BIN=$BIN_DIR/crane registry_up "$SCRATCH"

printf 'IMAGE_TEST_%s\n' "DOCKER=$DOCKER" "SOCKET=$SOCKET" "CLIENT_CONFIG=$WORK/client" "REGISTRY=$REGISTRY_ADDRESS" \
  "BUILD_BASE=$BUILD_BASE" "RUNTIME_BASE=$RUNTIME_BASE" "PRODUCT_CACHE=$PRODUCT_CACHE"
echo ready
cat >/dev/null || true
