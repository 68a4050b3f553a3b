#!/usr/bin/env bash
# The end-to-end tier against the nats-server releases users run, beside the pinned one that
# `npm test` uses (NATS_SERVER_VERSION in scripts/test-deps.sh). Each version is installed once
# with `go install` into .cache/bin/nats-server-<version> (stamped like test-deps.sh's Go tools),
# then each file of E2E_FILES runs against it and the real wadm, one file at a time; a summary
# table follows. Exit 1 if any file fails on any version.
#
# Usage: scripts/nats-matrix.sh              the versions of MATRIX_VERSIONS
#        scripts/nats-matrix.sh --all        those and the pinned version
#        scripts/nats-matrix.sh VERSION...   only these, e.g. v2.15.2 (installed the same way)
#
# Needs what scripts/test-deps.sh --demo needs (Go, cargo, a C compiler) and node_modules.
set -euo pipefail

# The newest patch of each minor release line users run that `go install` builds with Go 1.26
# (`go list -m -versions github.com/nats-io/nats-server/v2`); 2.11 is the pinned version. 2.10
# stays while wadm's own CI runs it; 2.14 is patched alongside 2.15.
MATRIX_VERSIONS=(v2.10.27 v2.12.15 v2.14.10 v2.15.3)
NATS_SERVER_MODULE=github.com/nats-io/nats-server/v2

# The end-to-end files of test/lattice/ that between them use every part of NATS that the service
# and wadm use, chosen for coverage per second. Measured one by one with the pinned version on
# this project's 2-core machine under load 9-15: 9-58 s each, 2.7 minutes for the seven (1.7 at
# load 5), so four versions and their first builds (51-93 s each) stay within about 16 minutes.
#   e2e-wadm          wadm's API over request/reply, its JetStream KV store; no hosts
#   e2e-hosts         wadm driving simulated hosts: control-interface requests, lattice events
#   lattice           the wire details of every wadm call, no responders, lost replies, the
#                     status subscription (the real wadm behind a relay)
#   shared-wadm       many lattices in one wadm KV bucket, the service as its own process
#   nats-permissions  a NATS user limited as SECURITY.md says: permission errors, denied subjects
#   nats-security     every auth mode: token, user and password, nkey, JWT with creds, TLS, mTLS
#   faults            nats-server killed and restarted mid-stream: reconnects, JetStream recovery
#   request-mux       our own request/reply (replies, no responders, late replies, refused publish
#                     and inbox, close, drain, reconnect): what each server sends back, read by us
# Left out, as they use the same NATS calls: busy-lattice (2–3 minutes, most of it filling wadm),
# status-trust (36 s), integration (24 s), settled (20 s), lattices-e2e (11 s), host-sim (10 s),
# topology, cli-lattice, wadm-relay.
E2E_FILES=(
  test/lattice/e2e-wadm.test.ts
  test/lattice/e2e-hosts.test.ts
  test/lattice/lattice.test.ts
  test/lattice/shared-wadm.test.ts
  test/lattice/nats-permissions.test.ts
  test/lattice/nats-security.test.ts
  test/lattice/faults.test.ts
  test/lattice/request-mux.test.ts
)

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
CACHE_DIR=$ROOT/.cache
BIN_DIR=$CACHE_DIR/bin

usage() { sed -n '2,12s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }
# now_ms, elapsed, with_progress, go_install_as, go_tool_installed, go_tool_install.
# shellcheck source=lib/go-install.sh
. "$ROOT/scripts/lib/go-install.sh"
MATRIX=nats-matrix
# die, matrix_arguments, matrix_begin, matrix_run.
# shellcheck source=lib/matrix.sh
. "$ROOT/scripts/lib/matrix.sh"

matrix_arguments "$@"
matrix_begin

# The pinned nats-server and the real wadm, as the demo gets them; the pinned one heads the list.
deps_log=$(mktemp)
bash scripts/test-deps.sh --demo >"$deps_log" 2>&1 || { cat "$deps_log"; die "scripts/test-deps.sh --demo failed"; }
PINNED_BIN=$(sed -n 's/^NATS_SERVER_BIN=//p' "$deps_log")
WADM_BIN=$(sed -n 's/^WADM_BIN=//p' "$deps_log")
rm -f "$deps_log"
binary_version() { "$1" --version 2>/dev/null | sed -n 's/^nats-server: *//p'; }
pinned=$(binary_version "$PINNED_BIN")
if $include_pinned; then versions=("$pinned" "${versions[@]}"); fi

# nats-permissions runs the service from dist/, as production does: build it if it is stale.
node --import tsx --input-type=module \
  -e "const { buildService } = await import('./scripts/demo/prepare.ts'); await buildService(console.log, new AbortController().signal);"

server_bin() { # VERSION
  if [[ $1 == "$pinned" ]]; then echo "$PINNED_BIN"; else echo "$BIN_DIR/nats-server-$1"; fi
}

mkdir -p "$BIN_DIR"
exec 9>"$CACHE_DIR/test-deps.lock" # the lock of test-deps.sh: both write .cache/bin
command -v flock >/dev/null && flock 9
declare -A prepared
for version in "${versions[@]}"; do
  [[ $version == "$pinned" ]] && { prepared[$version]=pinned; continue; }
  start=$(now_ms)
  bin=$(server_bin "$version")
  go_tool_install "nats-server $version" "$bin" "$NATS_SERVER_MODULE" "$version" "1-2 minutes"
  [[ $(binary_version "$bin") == "$version" ]] ||
    die "$bin reports '$(binary_version "$bin")', not $version; remove it and run again"
  prepared[$version]=$(elapsed "$start")
done
flock -u 9 2>/dev/null || true

version_env() { # VERSION
  echo "NATS_SERVER_BIN=$(server_bin "$1")"
  echo "WADM_BIN=$WADM_BIN"
}
version_title() { echo "nats-matrix: nats-server $1 ($(server_bin "$1")), wadm $WADM_BIN"; }
echo "nats-matrix: the end-to-end tier (${#E2E_FILES[@]} files) against the real wadm, per nats-server version"
status=0
matrix_run install "${E2E_FILES[@]}" || status=$?
echo "total $(elapsed "$matrix_start")"
exit "$status"
