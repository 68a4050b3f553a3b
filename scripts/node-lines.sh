#!/usr/bin/env bash
# `npm run test:node-lines` (.ci/run runs it after `npm test`): on each supported Node.js line
# (scripts/node-lines.env), with its pinned official binary (scripts/node-binary.sh), the
# production build (`node scripts/build.mjs`, as `npm run build`; it type-checks src/ with tsc),
# the unit tier (test/unit/, under node:test with tsx, as scripts/test.sh runs it) and the built
# bundle's `--version`. The build machines' own Node runs everything else (`npm test`).
# node_modules is the one `npm ci` installed with the machine's Node: nothing in it is built for
# one Node (no native addon; esbuild's binary is per platform), so every line runs it as it is.
# Prints one summary row per line; exits 1 if anything failed on any line.
#
# Usage: scripts/node-lines.sh [LINE…]     (default: every line of NODE_LINES)
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$ROOT"
# shellcheck source=scripts/node-lines.env
. scripts/node-lines.env
[[ -d node_modules ]] || { echo "node-lines: node_modules is missing; run: npm ci" >&2; exit 1; }
EXPECTED_VERSION=$(node -p 'require("./package.json").version')

now_ms() { date +%s%3N; }
seconds_since() { local ms=$(($(now_ms) - $1)); printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)); }
say() { echo "node-lines: $*"; }
# Why a step failed: its log's last lines (the spec reporter ends with the failing tests).
show_failure() { say "$1 failed; last lines of its output:" >&2; tail -n 60 "$2" >&2; }

# The bundle goes to a directory of its own inside the checkout (so that it finds node_modules),
# not to dist/: a test run in this checkout may be using dist/main.js meanwhile.
WORK=$(mktemp -d "$ROOT/.cache/node-lines.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# Runs one line; sets ROW (its summary) and returns non-zero if a step failed.
test_line() {
  local line=$1 start node bin_dir log=$WORK/$1.log out=$WORK/$1/main.js
  local fetch_s build='-' unit='-' smoke='-' status=0
  start=$(now_ms)
  node=$(bash scripts/node-binary.sh "$line") || { ROW="$line - fetch failed"; return 1; }
  fetch_s=$(seconds_since "$start")
  bin_dir=$(dirname "$node")
  # The line's node first on PATH, for the children that start `node` by name.
  local -x PATH=$bin_dir:$PATH

  local step_start
  step_start=$(now_ms)
  if node scripts/build.mjs "$out" >"$log" 2>&1; then
    build="ok $(seconds_since "$step_start")s"
  else
    build=FAILED status=1
    show_failure "Node $line: the build" "$log"
  fi

  step_start=$(now_ms)
  local passed failed
  node --import tsx --test --test-concurrency=1 --test-timeout=1200000 --test-force-exit --test-reporter=spec \
    test/unit/*.test.ts >"$log" 2>&1 || status=1
  passed=$(sed -n 's/^ℹ pass \([0-9]*\)$/\1/p' "$log")
  failed=$(sed -n 's/^ℹ fail \([0-9]*\)$/\1/p' "$log")
  unit="${passed:-?} pass, ${failed:-?} fail $(seconds_since "$step_start")s"
  [[ $status == 0 && $failed == 0 ]] || { status=1; show_failure "Node $line: the unit tier" "$log"; }

  if [[ $build == ok* ]]; then
    local printed
    printed=$(node "$out" --version 2>&1) || true
    if [[ $printed == "$EXPECTED_VERSION" ]]; then smoke=ok; else smoke="FAILED ($printed)" status=1; fi
  fi
  ROW=$(printf '%-4s %-9s %-7s %-10s %-28s %-10s %s' "$line" "$(node --version)" "${fetch_s}s" "$build" "$unit" "$smoke" "$(seconds_since "$start")")
  return "$status"
}

lines=("$@")
[[ ${#lines[@]} -gt 0 ]] || read -r -a lines <<<"$NODE_LINES"
rows=() failures=0
for line in "${lines[@]}"; do
  say "Node $line: build, unit tier, --version"
  test_line "$line" || failures=$((failures + 1))
  rows+=("$ROW")
done

say "$(printf '%-4s %-9s %-7s %-10s %-28s %-10s %s' line version fetch build unit --version seconds)"
for row in "${rows[@]}"; do say "$row"; done
[[ $failures == 0 ]] || { say "$failures of ${#lines[@]} lines failed" >&2; exit 1; }
