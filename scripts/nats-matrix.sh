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
# Left out, as they use the same NATS calls: busy-lattice (5 minutes filling wadm's KV),
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
)

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
CACHE_DIR=$ROOT/.cache
BIN_DIR=$CACHE_DIR/bin

usage() { sed -n '2,12s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }
die() { echo "nats-matrix: $*" >&2; exit 1; }
# now_ms, elapsed, with_progress, go_install_as, go_tool_installed, go_tool_install.
# shellcheck source=lib/go-install.sh
. "$ROOT/scripts/lib/go-install.sh"

include_pinned=false
versions=("${MATRIX_VERSIONS[@]}")
case "${1:-}" in
  --all) include_pinned=true ;;
  -h | --help) usage; exit 0 ;;
  v*) versions=("$@") ;;
  "") ;;
  *) echo "nats-matrix: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
esac
cd "$ROOT"
[[ -d node_modules ]] || die "node_modules is missing; run: npm ci"
if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then PATH=$PATH:/usr/local/go/bin; fi
matrix_start=$(now_ms)

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
declare -A install_time
for version in "${versions[@]}"; do
  [[ $version == "$pinned" ]] && { install_time[$version]=pinned; continue; }
  start=$(now_ms)
  bin=$(server_bin "$version")
  go_tool_install "nats-server $version" "$bin" "$NATS_SERVER_MODULE" "$version" "1-2 minutes"
  [[ $(binary_version "$bin") == "$version" ]] ||
    die "$bin reports '$(binary_version "$bin")', not $version; remove it and run again"
  install_time[$version]=$(elapsed "$start")
done
flock -u 9 2>/dev/null || true

# One file against one version: its spec output to a log, a line here; the log on failure.
LOG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/nats-matrix.XXXXXX")
run_file() { # VERSION FILE -> sets tests_passed, tests_failed; fails if the file fails
  local version=$1 file=$2 log start status=0
  log=$LOG_DIR/$version-$(basename "$file" .test.ts).log
  start=$(now_ms)
  NATS_SERVER_BIN=$(server_bin "$version") WADM_BIN=$WADM_BIN \
    node --import tsx --test --test-concurrency=1 --test-timeout=1200000 --test-force-exit \
    --test-reporter=spec "$file" >"$log" 2>&1 || status=$?
  tests_passed=$(sed -n 's/^ℹ pass //p' "$log")
  tests_failed=$(sed -n 's/^ℹ fail //p' "$log")
  if ((status == 0)); then
    echo "  ok    $file (${tests_passed:-?} tests, $(elapsed "$start"))"
  else
    echo "  FAIL  $file (exit $status, ${tests_failed:-?} of $((${tests_passed:-0} + ${tests_failed:-0})) tests failed, $(elapsed "$start")); its log:"
    sed 's/^/    | /' "$log"
  fi
  return "$status"
}

rows=()
files_passed_total=0
files_failed_total=0
for version in "${versions[@]}"; do
  echo "nats-matrix: nats-server $version ($(server_bin "$version")), wadm $WADM_BIN"
  start=$(now_ms)
  files_passed=0 files_failed=0 tests=0 failed_tests=0
  for file in "${E2E_FILES[@]}"; do
    if run_file "$version" "$file"; then files_passed=$((files_passed + 1)); else files_failed=$((files_failed + 1)); fi
    tests=$((tests + ${tests_passed:-0} + ${tests_failed:-0}))
    failed_tests=$((failed_tests + ${tests_failed:-0}))
  done
  rows+=("$(printf '%-10s %-13s %-13s %-15s %-8s %s' "$version" "$files_passed/${#E2E_FILES[@]}" "$files_failed" \
    "$((tests - failed_tests))/$tests" "${install_time[$version]}" "$(elapsed "$start")")")
  files_passed_total=$((files_passed_total + files_passed))
  files_failed_total=$((files_failed_total + files_failed))
done

echo
echo "nats-matrix: the end-to-end tier (${#E2E_FILES[@]} files) against the real wadm, per nats-server version"
printf '%-10s %-13s %-13s %-15s %-8s %s\n' version "files passed" "files failed" "tests passed" install run
printf '%s\n' "${rows[@]}"
echo "total $(elapsed "$matrix_start"); logs in $LOG_DIR"
echo "nats-matrix: $files_passed_total passed, $files_failed_total failed"
((files_failed_total == 0))
